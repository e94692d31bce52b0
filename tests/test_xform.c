/* Unit tests of the SLEEK value transform (sleek_xform.h) and the floatz
 * checksum (fz_hash.h), both internal headers shared by CPU and GPU. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../src/codecs/sleek/sleek_xform.h"
#include "../src/common/fz_hash.h"
#include "../src/format/fz_container.h"
#include "test_util.h"

static unsigned cases_run;

static uint32_t f32_bits(float f) {
    uint32_t b;
    memcpy(&b, &f, 4);
    return b;
}

static uint64_t f64_bits(double d) {
    uint64_t b;
    memcpy(&b, &d, 8);
    return b;
}

/* -------------------------------------------------------- f32 transform */
/* Failures among the 2^16 patterns hi:lo with lo = 0, step, 2*step, ...:
 * inverse of forward is the identity, and the sign lives in bit 1 of the
 * output. */
static uint32_t block_failures32(uint32_t hi, uint32_t step) {
    uint32_t bad = 0;
    for (uint32_t lo = 0; lo < 65536; lo += step) {
        const uint32_t x = hi << 16 | lo, t = sleek_fwd32(x);
        const int inverse_ok = sleek_inv32(t) == x;
        const int sign_ok = (sleek_fwd32(x ^ 0x80000000u) ^ t) == 2u;
        bad += !(inverse_ok && sign_ok);
    }
    return bad;
}

/* Every pattern of block hi: inverse of forward only (branch-free, so it
 * vectorizes). On all 2^32 inputs this makes the forward a bijection. */
static uint32_t block_inverse_failures32(uint32_t hi) {
    uint32_t bad = 0;
    for (uint32_t lo = 0; lo < 65536; lo++) {
        const uint32_t x = hi << 16 | lo;
        bad += sleek_inv32(sleek_fwd32(x)) != x;
    }
    return bad;
}

/* Total failures over all blocks; *first_block gets the lowest failing
 * block (65536 if none). step 0 = exhaustive inverse check. */
static uint64_t scan_patterns32(uint32_t step, uint32_t *first_block) {
    uint64_t bad = 0;
    uint32_t first = 65536;
#pragma omp parallel for reduction(+ : bad) reduction(min : first)          \
    schedule(static)
    for (int32_t hi = 0; hi < 65536; hi++) {
        uint32_t b = step == 0 ? block_inverse_failures32((uint32_t)hi)
                               : block_failures32((uint32_t)hi, step);
        bad += b;
        if (b && (uint32_t)hi < first)
            first = (uint32_t)hi;
    }
    *first_block = first;
    return bad;
}

static void report_first_failure32(uint32_t block) {
    for (uint32_t lo = 0; block < 65536 && lo < 65536; lo++) {
        const uint32_t x = block << 16 | lo, t = sleek_fwd32(x);
        if (sleek_inv32(t) != x || (sleek_fwd32(x ^ 0x80000000u) ^ t) != 2u) {
            fprintf(stderr, "f32 transform fails for 0x%08X\n", (unsigned)x);
            return;
        }
    }
}

static void check_scan32(uint32_t step) {
    uint32_t first = 0;
    tu_context("sleek f32 transform, 2^32 patterns, step %u (0: all)", step);
    uint64_t bad = scan_patterns32(step, &first);
    if (bad)
        report_first_failure32(first);
    CHECK_EQ_U64(bad, 0);
    cases_run++;
}

/* Every pattern normally; under sanitizers (slow) a prime stride through
 * every block instead, which still meets every sign and exponent. */
static void test_xform32_all_patterns(void) {
    check_scan32(61);
    if (!tu_under_sanitizer())
        check_scan32(0);
}

/* -------------------------------------------------------- f64 transform */
static int xform64_ok(uint64_t x) {
    const uint64_t t = sleek_fwd64(x), sign = (uint64_t)1 << 63;
    return sleek_inv64(t) == x && sleek_fwd64(sleek_inv64(x)) == x &&
           (sleek_fwd64(x ^ sign) ^ t) == 2u;
}

static void check64(uint64_t x) {
    if (!xform64_ok(x)) {
        fprintf(stderr, "failing f64 pattern 0x%016llX\n",
                (unsigned long long)x);
        CHECK(xform64_ok(x));
    }
}

static void test_xform64_patterns(void) {
    tu_context("sleek f64 transform");
    const uint64_t *special;
    size_t ns = tu_special64(&special);
    for (size_t i = 0; i < ns; i++)
        check64(special[i]);
    /* every exponent and sign, with edge and random mantissas */
    tu_rng r = tu_rng_make(64);
    const uint64_t mant = ((uint64_t)1 << 52) - 1;
    for (uint64_t top = 0; top < 4096; top++) {
        const uint64_t mants[] = {0, 1, mant, mant - 1, tu_next(&r) & mant};
        for (int k = 0; k < 5; k++)
            check64(top << 52 | mants[k]);
    }
    const int64_t count = tu_under_sanitizer() ? 1 << 22 : 1 << 25;
    for (int64_t i = 0; i < count; i++)
        check64(tu_next(&r));
    /* the image side too: small transformed values */
    for (uint64_t t = 0; t < (1u << 20); t++)
        check64(sleek_inv64(t));
    cases_run++;
}

/* ------------------------------------------------ transform properties */
static void test_specific_values(void) {
    tu_context("specific transform values");
    CHECK_EQ_U64(sleek_fwd32(0), 0); /* +0.0 pads partial chunks */
    CHECK_EQ_U64(sleek_fwd64(0), 0);
    CHECK_EQ_U64(sleek_inv32(0), 0);
    CHECK_EQ_U64(sleek_inv64(0), 0);
    CHECK(sleek_fwd32(0x80000000u) < 4); /* -0.0: sign only, tiny */
    CHECK(sleek_fwd64((uint64_t)1 << 63) < 4);
    /* exponents near 0 get many leading zeros, far ones few */
    CHECK(fz_clz32(sleek_fwd32(f32_bits(1e30f))) <
          fz_clz32(sleek_fwd32(f32_bits(1.5f))));
    CHECK(fz_clz32(sleek_fwd32(f32_bits(1e-30f))) <
          fz_clz32(sleek_fwd32(f32_bits(0.75f))));
    CHECK(fz_clz64(sleek_fwd64(f64_bits(1e300))) <
          fz_clz64(sleek_fwd64(f64_bits(1.5))));
    CHECK(fz_clz32(sleek_fwd32(f32_bits(1.0f))) > fz_clz32(f32_bits(1.0f)));
    CHECK(fz_clz64(sleek_fwd64(f64_bits(1.0))) > fz_clz64(f64_bits(1.0)));
    cases_run++;
}

/* Values with |x| in [0.25, 16) (binary exponent -2..3): the remapped
 * exponent is small, so f32 outputs have >= 5 and f64 >= 8 leading zeros. */
static void test_leading_zeros_near_one(void) {
    tu_context("leading zeros near 1.0");
    tu_rng r = tu_rng_make(7);
    for (int i = 0; i < 100000; i++) {
        double u = (double)(tu_next(&r) >> 11) * 0x1p-53; /* [0, 1) */
        double x = 0.25 * (1.0 + u * 63.0);               /* [0.25, 16) */
        if (i & 1)
            x = -x;
        CHECK(fz_clz32(sleek_fwd32(f32_bits((float)x))) >= 5);
        CHECK(fz_clz64(sleek_fwd64(f64_bits(x))) >= 8);
    }
    cases_run++;
}

static void test_widths(void) {
    tu_context("widths and packed sizes");
    CHECK_EQ_U64(sleek_width32(0), 0);
    CHECK_EQ_U64(sleek_width32(1), 1);
    CHECK_EQ_U64(sleek_width32(2), 2);
    CHECK_EQ_U64(sleek_width32(0x7FFFFFFFu), 31);
    CHECK_EQ_U64(sleek_width32(0x80000000u), 32);
    CHECK_EQ_U64(sleek_width64(0), 0);
    CHECK_EQ_U64(sleek_width64(1), 1);
    CHECK_EQ_U64(sleek_width64((uint64_t)1 << 40), 41);
    CHECK_EQ_U64(sleek_width64(UINT64_MAX), 64);
    CHECK_EQ_U64(sleek_sub_values(4), 128);
    CHECK_EQ_U64(sleek_sub_values(8), 64);
    CHECK_EQ_U64(sleek_sub_packed_bytes(4, 32), SLEEK_SUB_BYTES);
    CHECK_EQ_U64(sleek_sub_packed_bytes(8, 64), SLEEK_SUB_BYTES);
    CHECK_EQ_U64(sleek_sub_packed_bytes(4, 1), 16);
    CHECK_EQ_U64(sleek_sub_packed_bytes(8, 1), 8);
    CHECK_EQ_U64(sleek_sub_packed_bytes(4, 0), 0);
    CHECK_EQ_U64(SLEEK_SUBS, 32);
    cases_run++;
}

/* -------------------------------------------------------------- checksum */
/* Both data checksums (fz_hash.h): the mixed terms of fz_hash and the
 * square sum of fz_qsum. */
typedef uint32_t (*hash_fn)(const uint8_t *p, uint64_t nbytes);
static const struct {
    const char *name;
    hash_fn fn;
} kHashes[] = {{"fz_hash", fz_hash_bytes}, {"fz_qsum", fz_qsum_bytes}};
enum { kHashCount = sizeof kHashes / sizeof kHashes[0] };

/* How many single-bit flips of buf leave hash(buf) as it was; hash may
 * return 64 bits (fz_qsum's sum before its fold). */
typedef uint64_t (*sum_fn)(const uint8_t *p, uint64_t nbytes);
static uint64_t undetected_bit_flips(const uint8_t *buf, size_t bytes,
                                     sum_fn hash) {
    const uint64_t ref = hash(buf, bytes);
    uint64_t missed = 0;
    const int64_t bits = (int64_t)bytes * 8;
#pragma omp parallel reduction(+ : missed)
    {
        uint8_t *copy = (uint8_t *)tu_xmalloc(bytes);
        memcpy(copy, buf, bytes);
#pragma omp for schedule(static)
        for (int64_t b = 0; b < bits; b++) {
            copy[b / 8] ^= (uint8_t)(1u << (b % 8));
            missed += hash(copy, bytes) == ref;
            copy[b / 8] ^= (uint8_t)(1u << (b % 8));
        }
        free(copy);
    }
    return missed;
}
static uint64_t hash64(const uint8_t *p, uint64_t n) {
    return fz_hash_bytes(p, n);
}
static uint64_t qsum64(const uint8_t *p, uint64_t n) {
    return fz_qsum_bytes(p, n);
}
static uint64_t qsum_unfolded(const uint8_t *p, uint64_t n) {
    return fz_qsum_sum_bytes(p, n, 0);
}

/* Every single-bit flip of 16 KiB changes both checksums (fz_qsum's fold
 * to 32 bits could in principle hide a change of its sum, with
 * probability about 2^-32 each; for these bytes it hides none). */
static void test_hash_single_bit_flips(void) {
    const size_t bytes = 16384;
    uint8_t *buf = (uint8_t *)tu_xmalloc(bytes);
    tu_rng r = tu_rng_make(16);
    tu_fill_bytes(&r, buf, bytes);
    tu_context("fz_hash: every single-bit flip of 16 KiB");
    CHECK_EQ_U64(undetected_bit_flips(buf, bytes, hash64), 0);
    tu_context("fz_qsum: every single-bit flip of 16 KiB");
    CHECK_EQ_U64(undetected_bit_flips(buf, bytes, qsum64), 0);
    tu_context("fz_qsum: every single-bit flip changes the 64-bit sum");
    CHECK_EQ_U64(undetected_bit_flips(buf, bytes, qsum_unfolded), 0);
    free(buf);
    cases_run++;
}

static void test_hash_word_swaps(void) {
    enum { N = 4096 };
    uint32_t w[N];
    tu_rng r = tu_rng_make(17);
    tu_fill_bytes(&r, w, sizeof w);
    for (int h = 0; h < kHashCount; h++) {
        const uint32_t ref = kHashes[h].fn((const uint8_t *)w, sizeof w);
        tu_context("%s: swapped words", kHashes[h].name);
        for (int k = 0; k < 20000; k++) {
            size_t i = (size_t)tu_below(&r, N), j = (size_t)tu_below(&r, N);
            if (w[i] == w[j])
                continue;
            uint32_t t = w[i];
            w[i] = w[j], w[j] = t;
            CHECK(kHashes[h].fn((const uint8_t *)w, sizeof w) != ref);
            w[j] = w[i], w[i] = t;
        }
    }
    cases_run++;
}

/* The same bit flipped in two different words (a two-bit error): the two
 * term changes must not cancel in the sum. */
static void test_hash_double_bit_flips(void) {
    enum { N = 4096 };
    uint32_t w[N];
    tu_rng r = tu_rng_make(20);
    tu_fill_bytes(&r, w, sizeof w);
    for (int h = 0; h < kHashCount; h++) {
        const uint32_t ref = kHashes[h].fn((const uint8_t *)w, sizeof w);
        for (uint32_t bit = 0; bit < 32; bit++) {
            tu_context("%s: bit %u flipped in two words", kHashes[h].name, bit);
            for (int k = 0; k < 1000; k++) {
                size_t i = (size_t)tu_below(&r, N);
                size_t j = (size_t)tu_below(&r, N);
                if (i == j)
                    continue;
                w[i] ^= 1u << bit, w[j] ^= 1u << bit;
                CHECK(kHashes[h].fn((const uint8_t *)w, sizeof w) != ref);
                w[i] ^= 1u << bit, w[j] ^= 1u << bit;
            }
        }
    }
    cases_run++;
}

/* Changes to two words that cancel in any position-weighted linear sum
 * (w[i] + d (2j + 1), w[j] - d (2i + 1) for weights 2i + 1): the square
 * sum is not linear, so they change it. */
static void test_qsum_linear_blind_spots(void) {
    enum { N = 1025 };
    uint32_t w[N];
    tu_rng r = tu_rng_make(21);
    tu_fill_bytes(&r, w, sizeof w);
    const uint64_t ref = fz_qsum_sum_bytes((const uint8_t *)w, sizeof w, 0);
    tu_context("fz_qsum: changes that cancel in a weighted linear sum");
    for (int k = 0; k < 20000; k++) {
        const uint32_t i = (uint32_t)tu_below(&r, N);
        const uint32_t j = (uint32_t)tu_below(&r, N);
        const uint32_t d = 1u + (uint32_t)tu_below(&r, 64);
        if (i == j)
            continue;
        const uint32_t wi = w[i], wj = w[j];
        w[i] = wi + d * (2 * j + 1);
        w[j] = wj - d * (2 * i + 1);
        CHECK(fz_qsum_sum_bytes((const uint8_t *)w, sizeof w, 0) != ref);
        w[i] = wi, w[j] = wj;
    }
    cases_run++;
}

/* Partial sums over n words of w, the first at position first. */
static uint32_t part_sum(const uint32_t *w, uint64_t n, uint64_t first) {
    return fz_hash_sum_bytes((const uint8_t *)w, 4 * n, first);
}
static uint64_t qpart_sum(const uint32_t *w, uint64_t n, uint64_t first) {
    return fz_qsum_sum_bytes((const uint8_t *)w, 4 * n, first);
}

/* Partial sums over parts, each with its first position, add up to the
 * whole; the final of the whole sum (by the definition, term by term) is
 * the checksum of the bytes (little-endian). */
static void test_hash_split_sums(void) {
    enum { N = 4096 };
    uint32_t w[N];
    tu_rng r = tu_rng_make(18);
    tu_fill_bytes(&r, w, sizeof w);
    uint32_t whole = 0;
    uint64_t qwhole = 0;
    for (uint64_t i = 0; i < N; i++) {
        whole += fz_hash_term(w[i], i);
        const uint32_t x = w[i] ^ (uint32_t)(i * 0x9E3779B1u + 0x7F4A7C15u);
        qwhole += (uint64_t)x * x;
    }
    tu_context("hash: split sums");
    CHECK_EQ_U64(fz_hash_final(whole, N),
                 fz_hash_bytes((const uint8_t *)w, sizeof w));
    CHECK_EQ_U64(fz_qsum_final(qwhole, N),
                 fz_qsum_bytes((const uint8_t *)w, sizeof w));
    const uint64_t splits[] = {0, 1, 7, 31, 2048, 4095, 4096};
    for (size_t i = 0; i < sizeof splits / sizeof splits[0]; i++) {
        uint64_t k = splits[i];
        uint32_t sum = part_sum(w + k, N - k, k) + part_sum(w, k, 0);
        CHECK_EQ_U64(sum, whole);
        CHECK_EQ_U64(qpart_sum(w + k, N - k, k) + qpart_sum(w, k, 0), qwhole);
    }
    /* three parts added in another order */
    uint32_t s3 = part_sum(w + 3000, N - 3000, 3000) + part_sum(w, 1000, 0) +
                  part_sum(w + 1000, 2000, 1000);
    CHECK_EQ_U64(s3, whole);
    CHECK_EQ_U64(qpart_sum(w + 3000, N - 3000, 3000) + qpart_sum(w, 1000, 0) +
                     qpart_sum(w + 1000, 2000, 1000),
                 qwhole);
    /* values: a float64 is its two words at positions 2 idx, 2 idx + 1 */
    uint64_t v64 = 0;
    for (uint64_t i = 0; i < N / 2; i++)
        v64 += fz_qsum_value64((uint64_t)w[2 * i + 1] << 32 | w[2 * i], i);
    CHECK_EQ_U64(v64, qwhole);
    /* the position matters: a part hashed at the wrong position differs */
    CHECK(part_sum(w + 100, 50, 101) != part_sum(w + 100, 50, 100));
    CHECK(qpart_sum(w + 100, 50, 101) != qpart_sum(w + 100, 50, 100));
    cases_run++;
}

/* The test vectors of docs/FORMAT.md section 6. */
static void test_hash_vectors(void) {
    const uint8_t three[12] = {0x00, 0x00, 0x80, 0x3F, 0x00, 0x00,
                               0x20, 0xC0, 0x00, 0x00, 0x00, 0x00};
    const uint8_t zero[4] = {0, 0, 0, 0};
    tu_context("checksum test vectors");
    CHECK_EQ_U64(fz_hash_bytes(three, 12), 0x5B765DA7u);
    CHECK_EQ_U64(fz_hash_bytes(zero, 4), 0xE00828B2u);
    CHECK_EQ_U64(fz_hash_bytes(zero, 0), 0);
    CHECK_EQ_U64(fz_qsum_bytes(three, 12), 0xF944C184u);
    CHECK_EQ_U64(fz_qsum_bytes(zero, 4), 0x02CF0CE8u);
    CHECK_EQ_U64(fz_qsum_bytes(zero, 0), 0);
    cases_run++;
}

static void test_header_hash_bit_flips(void) {
    uint8_t hdr[FZ_HDR_BYTES];
    tu_rng r = tu_rng_make(19);
    tu_fill_bytes(&r, hdr, sizeof hdr);
    const uint32_t ref = fz_header_hash(hdr);
    tu_context("header hash: single-bit flips");
    for (int b = 0; b < FZ_OFF_HEADER_HASH * 8; b++) {
        hdr[b / 8] ^= (uint8_t)(1u << (b % 8));
        CHECK(fz_header_hash(hdr) != ref);
        hdr[b / 8] ^= (uint8_t)(1u << (b % 8));
    }
    /* the stored hash itself is not hashed */
    hdr[FZ_OFF_HEADER_HASH] ^= 1;
    CHECK_EQ_U64(fz_header_hash(hdr), ref);
    cases_run++;
}

/* ---------------------------------------------- f32 quantizer vs. reference */
/* The quantizer as Algorithm 2 states it, with branches: the branch-free
 * sleek_quant32 (the GPU's per-value code) must give the same codes, and
 * quantizing a reconstruction again must give it back (a fixed point). */
static uint32_t reference_quant32(uint32_t bits, sleek_q32 q) {
    const uint32_t B = 1u << 23, abs = bits & 0x7FFFFFFFu, e = abs >> 23;
    uint32_t mag;
    if (abs >= q.threshold) {
        mag = abs - q.threshold + B;
    } else if (e == 0) {
        mag = abs ? q.lmax + abs : 0;
    } else {
        const uint32_t shift = q.thr_e - e;
        const uint32_t mant = (abs & (B - 1)) | B;
        mag = shift >= 26 ? 0 : (mant + (1u << (shift - 1))) >> shift;
    }
    if (mag == 0)
        return 0;
    return bits >> 31 ? 2 * mag - 1 : 2 * mag;
}

/* Also the CPU encoder's binary64 form (sleek_quant32_host). */
static uint32_t quant32_mismatches(uint32_t bits, sleek_q32 q) {
    const uint32_t code = sleek_quant32(bits, q);
    return (code != reference_quant32(bits, q)) +
           (sleek_quant32_host(bits, q, sleek_host_scale(q.k1)) != code) +
           (sleek_dequant32(sleek_quant32(sleek_dequant32(code, q), q), q) !=
            sleek_dequant32(code, q));
}

/* Every k, every exponent and sign, the mantissas around each rounding
 * point and a few random ones; then random patterns. */
static void test_quant32_reference(void) {
    tu_rng r = tu_rng_make(23);
    for (int32_t k = SLEEK_Q32_KMIN; k <= SLEEK_Q32_KMAX; k++) {
        const sleek_q32 q = sleek_q32_make(k);
        tu_context("f32 quantizer vs reference, k = %d", (int)k);
        uint64_t bad = 0;
        for (uint32_t e = 0; e < 256; e++) {
            for (uint32_t sign = 0; sign < 2; sign++) {
                const uint32_t top = sign << 31 | e << 23;
                for (uint32_t m = 0; m < 8; m++) {
                    bad += quant32_mismatches(top | m, q);
                    bad += quant32_mismatches(top | (0x7FFFFFu - m), q);
                    bad += quant32_mismatches(top | (tu_next32(&r) >> 9), q);
                }
                for (uint32_t b = 0; b < 23; b++) /* half a bin, +-1 */
                    for (uint32_t d = 0; d < 3; d++)
                        bad += quant32_mismatches(
                            top | (((1u << b) + d - 1) & 0x7FFFFFu), q);
            }
        }
        for (int i = 0; i < 4096; i++)
            bad += quant32_mismatches(tu_next32(&r), q);
        CHECK_EQ_U64(bad, 0);
    }
    cases_run++;
}

/* The same for binary64, on a spread of k (all of them would take long). */
static uint64_t reference_quant64(uint64_t bits, sleek_q64 q) {
    const uint64_t B = (uint64_t)1 << 52, abs = bits & 0x7FFFFFFFFFFFFFFFull;
    const uint32_t e = (uint32_t)(abs >> 52);
    uint64_t mag;
    if (abs >= q.threshold) {
        mag = abs - q.threshold + B;
    } else if (e == 0) {
        mag = abs ? q.lmax + abs : 0;
    } else {
        const uint32_t shift = q.thr_e - e;
        const uint64_t mant = (abs & (B - 1)) | B;
        mag = shift >= 55 ? 0 : (mant + ((uint64_t)1 << (shift - 1))) >> shift;
    }
    if (mag == 0)
        return 0;
    return bits >> 63 ? 2 * mag - 1 : 2 * mag;
}

static uint32_t quant64_mismatches(uint64_t bits, sleek_q64 q) {
    const uint64_t code = sleek_quant64(bits, q);
    return (code != reference_quant64(bits, q)) +
           (sleek_dequant64(sleek_quant64(sleek_dequant64(code, q), q), q) !=
            sleek_dequant64(code, q));
}

static void test_quant64_reference(void) {
    tu_rng r = tu_rng_make(29);
    const int32_t ks[] = {SLEEK_Q64_KMIN,
                          SLEEK_Q64_KMIN + 1,
                          -1023,
                          -1022,
                          -1021,
                          -600,
                          -60,
                          -30,
                          -1,
                          0,
                          1,
                          52,
                          500,
                          SLEEK_Q64_KMAX - 1,
                          SLEEK_Q64_KMAX};
    for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++) {
        const sleek_q64 q = sleek_q64_make(ks[i]);
        tu_context("f64 quantizer vs reference, k = %d", (int)ks[i]);
        uint64_t bad = 0;
        for (uint64_t e = 0; e < 2048; e++) {
            for (uint64_t sign = 0; sign < 2; sign++) {
                const uint64_t top = sign << 63 | e << 52;
                const uint64_t m_all = ((uint64_t)1 << 52) - 1;
                for (uint64_t m = 0; m < 4; m++) {
                    bad += quant64_mismatches(top | m, q);
                    bad += quant64_mismatches(top | (m_all - m), q);
                    bad += quant64_mismatches(top | (tu_next(&r) >> 12), q);
                }
                for (uint32_t b = 0; b < 52; b++) /* half a bin, +-1 */
                    for (uint64_t d = 0; d < 3; d++)
                        bad += quant64_mismatches(
                            top | ((((uint64_t)1 << b) + d - 1) & m_all), q);
            }
        }
        for (int j = 0; j < 4096; j++)
            bad += quant64_mismatches(tu_next(&r), q);
        CHECK_EQ_U64(bad, 0);
    }
    cases_run++;
}

/* The decoders' canonical-code check inside the dequantizer flags exactly
 * the codes sleek_code_valid rejects, and dequantizes like the plain one:
 * codes around every magnitude boundary (0, lmax, the last subnormal, the
 * first magnitude past it, the largest code) and random ones, both signs,
 * at every f32 k and a spread of f64 k. */
static uint64_t checked_mismatches32(uint32_t code, sleek_q32 q) {
    uint32_t invalid = 0;
    const uint32_t v = sleek_dequant32_checked(code, q, &invalid);
    return (invalid != (uint32_t)!sleek_code_valid32(code, q)) +
           (!invalid && v != sleek_dequant32(code, q));
}
static uint64_t checked_mismatches64(uint64_t code, sleek_q64 q) {
    uint32_t invalid = 0;
    const uint64_t v = sleek_dequant64_checked(code, q, &invalid);
    return (invalid != (uint32_t)!sleek_code_valid64(code, q)) +
           (!invalid && v != sleek_dequant64(code, q));
}

static void test_dequant_checked(void) {
    tu_rng r = tu_rng_make(31);
    uint64_t bad = 0, invalid_seen = 0;
    for (int32_t k = SLEEK_Q32_KMIN; k <= SLEEK_Q32_KMAX; k++) {
        const sleek_q32 q = sleek_q32_make(k);
        const uint32_t B = 1u << 23;
        const uint32_t mags[] = {0,           1,
                                 B,           B + 1,
                                 q.lmax - 1,  q.lmax,
                                 q.lmax + 1,  q.lmax + B - 1,
                                 q.lmax + B,  q.lmax + B + 1,
                                 0x7FFFFFFFu, 0x80000000u};
        for (size_t i = 0; i < sizeof mags / sizeof mags[0]; i++)
            for (uint32_t neg = 0; neg < 2; neg++) {
                /* code = 2 mag (positive) or 2 mag - 1 (negative) */
                const uint32_t code = 2 * mags[i] - (neg && mags[i]);
                bad += checked_mismatches32(code, q);
                invalid_seen += !sleek_code_valid32(code, q);
            }
        for (int j = 0; j < 256; j++)
            bad += checked_mismatches32(tu_next32(&r), q);
    }
    const int32_t ks[] = {SLEEK_Q64_KMIN, -1022, -60, -1, 0, 52,
                          SLEEK_Q64_KMAX};
    for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++) {
        const sleek_q64 q = sleek_q64_make(ks[i]);
        const uint64_t B = (uint64_t)1 << 52;
        const uint64_t mags[] = {0,
                                 1,
                                 B,
                                 q.lmax,
                                 q.lmax + 1,
                                 q.lmax + B - 1,
                                 q.lmax + B,
                                 0x7FFFFFFFFFFFFFFFull,
                                 0x8000000000000000ull};
        for (size_t m = 0; m < sizeof mags / sizeof mags[0]; m++)
            for (uint64_t neg = 0; neg < 2; neg++) {
                const uint64_t code = 2 * mags[m] - (neg && mags[m]);
                bad += checked_mismatches64(code, q);
                invalid_seen += !sleek_code_valid64(code, q);
            }
        for (int j = 0; j < 256; j++)
            bad += checked_mismatches64(tu_next(&r), q);
    }
    tu_context("dequantizer with the canonical-code check");
    CHECK_EQ_U64(bad, 0);
    CHECK(invalid_seen > 0); /* the invalid codes were reached */
    cases_run++;
}

/* The decoders' branch-free path for bin codes (sleek_dequant32_bin) must
 * equal the general dequantizer wherever they use it: every code below
 * SLEEK_BIN_CODES32 at the extreme and some middle exponents, boundary and
 * random codes at every exponent with sleek_bins_direct (an off-by-one in
 * that test reaches a subnormal scale and fails here). */
static uint64_t bin_mismatches32(uint32_t code, sleek_q32 q) {
    return sleek_dequant32_bin(code, sleek_bin_scale32(q)) !=
           sleek_dequant32(code, q);
}
static uint64_t bin_mismatches64(uint64_t code, sleek_q64 q) {
    return sleek_dequant64_bin(code, sleek_bin_scale64(q)) !=
           sleek_dequant64(code, q);
}

/* The CPU encoder's sleek_quant32_host against sleek_quant32 on a strided
 * scan of all bit patterns at the extreme and some middle exponents (the
 * reference test above covers every exponent at the rounding points). */
static void test_quant32_host_scan(void) {
    const int32_t ks[] = {SLEEK_Q32_KMIN, -127, -126, -30, 0, SLEEK_Q32_KMAX};
    uint64_t bad = 0;
    for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++) {
        const sleek_q32 q = sleek_q32_make(ks[i]);
        const double scale = sleek_host_scale(q.k1);
        for (uint64_t b = ks[i] & 0xFF; b < ((uint64_t)1 << 32); b += 251)
            bad += sleek_quant32_host((uint32_t)b, q, scale) !=
                   sleek_quant32((uint32_t)b, q);
    }
    tu_context("binary64 form of the f32 quantizer, strided scan");
    CHECK_EQ_U64(bad, 0);
    cases_run++;
}

static void test_dequant_bin(void) {
    tu_rng r = tu_rng_make(37);
    uint64_t bad = 0, direct32 = 0, direct64 = 0;
    const int32_t all32[] = {-127, -100, -1, 0, 20, SLEEK_Q32_KMAX};
    for (size_t i = 0; i < sizeof all32 / sizeof all32[0]; i++) {
        const sleek_q32 q = sleek_q32_make(all32[i]);
        for (uint32_t code = 0; code < SLEEK_BIN_CODES32; code++)
            bad += bin_mismatches32(code, q);
    }
    for (int32_t k = SLEEK_Q32_KMIN; k <= SLEEK_Q32_KMAX; k++) {
        const sleek_q32 q = sleek_q32_make(k);
        if (!sleek_bins_direct32(q))
            continue;
        direct32++;
        const uint32_t edges[] = {
            0, 1, 2, 3, SLEEK_BIN_CODES32 - 2, SLEEK_BIN_CODES32 - 1};
        for (size_t e = 0; e < sizeof edges / sizeof edges[0]; e++)
            bad += bin_mismatches32(edges[e], q);
        for (int j = 0; j < 1024; j++)
            bad += bin_mismatches32(tu_next32(&r) % SLEEK_BIN_CODES32, q);
    }
    const int32_t ks64[] = {-1023, -1000, -60, -1, 0, 52, SLEEK_Q64_KMAX};
    for (size_t i = 0; i < sizeof ks64 / sizeof ks64[0]; i++) {
        const sleek_q64 q = sleek_q64_make(ks64[i]);
        for (uint64_t code = 0; code < (1u << 20); code++)
            bad += bin_mismatches64(code, q);
        for (uint64_t code = SLEEK_BIN_CODES64 - (1u << 20);
             code < SLEEK_BIN_CODES64; code++)
            bad += bin_mismatches64(code, q);
    }
    for (int32_t k = SLEEK_Q64_KMIN; k <= SLEEK_Q64_KMAX; k++) {
        const sleek_q64 q = sleek_q64_make(k);
        if (!sleek_bins_direct64(q))
            continue;
        direct64++;
        for (int j = 0; j < 256; j++)
            bad += bin_mismatches64(tu_next(&r) % SLEEK_BIN_CODES64, q);
        bad += bin_mismatches64(SLEEK_BIN_CODES64 - 1, q);
    }
    tu_context("branch-free dequantizer of bin codes");
    CHECK_EQ_U64(bad, 0);
    /* every exponent whose 2^(k+1) is normal takes the direct path */
    CHECK_EQ_U64(direct32, SLEEK_Q32_KMAX - (-127) + 1);
    CHECK_EQ_U64(direct64, SLEEK_Q64_KMAX - (-1023) + 1);
    cases_run++;
}

int main(void) {
    test_specific_values();
    test_leading_zeros_near_one();
    test_widths();
    test_xform64_patterns();
    test_xform32_all_patterns();
    test_quant32_reference();
    test_quant64_reference();
    test_dequant_checked();
    test_dequant_bin();
    test_quant32_host_scan();
    test_hash_single_bit_flips();
    test_hash_double_bit_flips();
    test_hash_word_swaps();
    test_qsum_linear_blind_spots();
    test_hash_split_sums();
    test_hash_vectors();
    test_header_hash_bit_flips();
    printf("test_xform: %u cases passed\n", cases_run);
    return 0;
}
