/* Falcon codec, CPU backend:
 *  1. decimal place and decimal significand: exact cases, the paper's
 *     examples, and random decimals of 1..17 significant digits (plus
 *     random bit patterns and one-ulp neighbours) against a slow exact
 *     reference (printf "%.*f" with increasing precision, read back with
 *     strtod/strtof);
 *  2. bitwise round trips: the shared generators, decimal generators,
 *     specials, sizes 0/1/odd/several chunks, the chunk-size option,
 *     checksums on and off;
 *  3. the same bytes for every thread count;
 *  4. options, inspect, unsupported lossy modes;
 *  5. damaged streams: every truncation and a byte-flip sweep of small
 *     streams are rejected (or decode exactly); without checksums, every
 *     accepted corruption is canonical (re-encoding its output gives the
 *     same bytes); chunk-level mutation fuzzing of the decoder.
 * Run with a group name to run one group (ctest does). */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../src/codecs/falcon/falcon_chunk.h"
#include "../src/codecs/fz_codec.h"
#include "falcon_data.h"
#include "test_util.h"

static unsigned cases_run;

/* ---------------------------------------------------------------------
 * 1. Decimal place: the reference. The nearest a-place decimal to v is
 * printf("%.*f", a, v) (glibc rounds exactly); v has decimal place a iff
 * that text reads back as v. Below the limits (|w| < 10^D) at most one
 * a-place decimal reads back as v, so this is exact. */
static int ref_digits_of(const char *text, uint64_t *w) {
    uint64_t m = 0;
    *w = 0;
    int digits = 0, started = 0;
    for (const char *c = text; *c; c++) {
        if (*c < '0' || *c > '9')
            continue;
        if (!started && *c == '0')
            continue;
        started = 1;
        if (++digits > 19)
            return -1;
        m = m * 10 + (uint64_t)(*c - '0');
    }
    *w = m;
    return digits;
}

static int ref_dp64(double v, uint64_t *w) {
    uint64_t bits;
    memcpy(&bits, &v, 8);
    *w = 0;
    if (bits == 0)
        return 0;
    if (!isfinite(v) || fabs(v) < DBL_MIN || fabs(v) >= 1e15)
        return -1; /* also -0.0 */
    char text[128];
    for (int a = 0; a <= 22; a++) {
        snprintf(text, sizeof text, "%.*f", a, fabs(v));
        if (strtod(text, NULL) == fabs(v)) {
            int d = ref_digits_of(text, w);
            return d < 0 || *w >= 1000000000000000ull ? -1 : a;
        }
    }
    return -1;
}

static int ref_dp32(float v, uint32_t *w) {
    uint32_t bits;
    memcpy(&bits, &v, 4);
    *w = 0;
    if (bits == 0)
        return 0;
    if (!isfinite(v) || fabsf(v) < FLT_MIN || fabsf(v) >= 1e6f)
        return -1;
    char text[128];
    for (int a = 0; a <= 10; a++) {
        snprintf(text, sizeof text, "%.*f", a, (double)fabsf(v));
        if (strtof(text, NULL) == fabsf(v)) {
            uint64_t m = 0;
            int d = ref_digits_of(text, &m);
            *w = (uint32_t)m;
            return d < 0 || m >= 1000000u ? -1 : a;
        }
    }
    return -1;
}

/* Shortest round-trip significant digits (printf "%.*e"). */
static int shortest_digits64(double v) {
    char text[64];
    for (int p = 1; p <= 17; p++) {
        snprintf(text, sizeof text, "%.*e", p - 1, v);
        if (strtod(text, NULL) == v)
            return p;
    }
    return 17;
}

static unsigned dp_checked;

/* falcon_fits* at every A against the search's (alpha, w): fits at A iff
 * the value has a decimal place alpha <= A with w * 10^(A - alpha) < 10^D,
 * and then its integer is exactly that (the shortcut at falcon_scan). */
static void check_fits(uint64_t bits, int is64, int alpha, uint64_t w) {
    const int amax = is64 ? FALCON_AMAX64 : FALCON_AMAX32;
    const uint64_t limit = is64 ? FALCON_LIMIT64 : FALCON_LIMIT32;
    for (int A = 0; A <= amax; A++) {
        const double p = falcon_pow10(A);
        uint64_t r = 0;
        int fits;
        if (is64) {
            uint64_t rg = 0;
            fits = falcon_fits64(bits, p, &r);
            /* the GPU's form: read-back without a division */
            CHECK(falcon_fits64_gpu(bits, p, &rg) == fits && rg == r);
        } else {
            uint32_t r32 = 0, ry = 0;
            fits = falcon_fits32((uint32_t)bits, p, &r32);
            r = r32;
            /* the GPU's form: division-free read-back, no distance test */
            CHECK(falcon_fits32_by((uint32_t)bits, (float)p, 1.0f / (float)p,
                                   &ry) == fits &&
                  ry == r32);
        }
        uint64_t scaled = w;
        int small = alpha >= 0 && alpha <= A;
        for (int k = alpha; small && k < A; k++) {
            scaled *= 10u;
            small = scaled < limit;
        }
        if (fits != small || (fits && r != scaled)) {
            fprintf(stderr,
                    "fits%d(0x%016llx, A=%d) = %d r %llu; search alpha %d "
                    "w %llu\n",
                    is64 ? 64 : 32, (unsigned long long)bits, A, fits,
                    (unsigned long long)r, alpha, (unsigned long long)w);
            tu_fail(__FILE__, __LINE__, "check_fits", "shortcut mismatch");
        }
    }
}

static void check_dp64(double v) {
    uint64_t bits, w = 0, ref_w = 0;
    memcpy(&bits, &v, 8);
    const int a = falcon_dp64(bits, &w);
    const int ref = ref_dp64(v, &ref_w);
    if (a != ref || (a >= 0 && w != ref_w)) {
        fprintf(stderr,
                "dp64(%.17g = 0x%016llx): alpha %d w %llu, reference "
                "alpha %d w %llu\n",
                v, (unsigned long long)bits, a, (unsigned long long)w, ref,
                (unsigned long long)ref_w);
        tu_fail(__FILE__, __LINE__, "check_dp64", "decimal place mismatch");
    }
    if (a > 0) /* beta: the shortest representation's significant digits */
        CHECK(falcon_digits(w) == shortest_digits64(fabs(v)));
    check_fits(bits, 1, a, w);
    dp_checked++;
}

static void check_dp32(float v) {
    uint32_t bits, w = 0, ref_w = 0;
    memcpy(&bits, &v, 4);
    const int a = falcon_dp32(bits, &w);
    const int ref = ref_dp32(v, &ref_w);
    if (a != ref || (a >= 0 && w != ref_w)) {
        fprintf(stderr,
                "dp32(%.9g = 0x%08x): alpha %d w %u, reference "
                "alpha %d w %u\n",
                (double)v, bits, a, w, ref, ref_w);
        tu_fail(__FILE__, __LINE__, "check_dp32", "decimal place mismatch");
    }
    check_fits(bits, 0, a, w);
    dp_checked++;
}

static void expect_dp64(const char *text, int alpha, uint64_t w) {
    tu_context("dp64 %s", text);
    const double v = strtod(text, NULL);
    uint64_t bits, got_w = 0;
    memcpy(&bits, &v, 8);
    CHECK_EQ_U64((uint64_t)(int64_t)falcon_dp64(bits, &got_w),
                 (uint64_t)(int64_t)alpha);
    if (alpha >= 0)
        CHECK_EQ_U64(got_w, w);
    check_dp64(v);
}

static void expect_dp32(const char *text, int alpha, uint32_t w) {
    tu_context("dp32 %s", text);
    const float v = strtof(text, NULL);
    uint32_t bits, got_w = 0;
    memcpy(&bits, &v, 4);
    CHECK_EQ_U64((uint64_t)(int64_t)falcon_dp32(bits, &got_w),
                 (uint64_t)(int64_t)alpha);
    if (alpha >= 0)
        CHECK_EQ_U64(got_w, w);
    check_dp32(v);
}

static void test_decimal_exact(void) {
    /* the paper: 1.02 -> 102; 1.11 has two decimals although
     * 1.11 * 100 = 111.00000000000001 in binary64 */
    CHECK(1.11 * 100.0 != 111.0); /* the trap the search must avoid */
    expect_dp64("1.11", 2, 111);
    expect_dp64("1.02", 2, 102);
    expect_dp64("0.0314", 4, 314);
    expect_dp64("3.14", 2, 314);
    expect_dp64("314", 0, 314);
    expect_dp64("1200", 0, 1200);
    expect_dp64("-120", 0, 120);
    expect_dp64("7.15", 2, 715);
    expect_dp64("0", 0, 0);
    expect_dp64("1", 0, 1);
    expect_dp64("0.1", 1, 1);
    expect_dp64("0.3", 1, 3);
    expect_dp64("-2.5", 1, 25);
    expect_dp64("1e-22", 22, 1);
    expect_dp64("1.5e-21", 22, 15);
    expect_dp64("999999999999999", 0, 999999999999999ull);
    expect_dp64("99999999999999.9", 1, 999999999999999ull);
    expect_dp64("0.999999999999999", 15, 999999999999999ull);
    expect_dp64("123456789.123456", 6, 123456789123456ull);
    /* exceptions: 16+ digits (the paper's counterexample), past 10^-22,
     * integers from 10^15, specials */
    expect_dp64("9.110900773177071", -1, 0);
    expect_dp64("0.30000000000000004", -1, 0);
    expect_dp64("1e-23", -1, 0);
    expect_dp64("1e15", -1, 0);
    expect_dp64("1234567890123456", -1, 0);
    expect_dp64("-0.0", -1, 0);
    expect_dp64("inf", -1, 0);
    expect_dp64("-inf", -1, 0);
    expect_dp64("nan", -1, 0);
    expect_dp64("4.9e-324", -1, 0);
    expect_dp64("2.2250738585072014e-308", -1, 0);
    expect_dp64("1.7976931348623157e308", -1, 0);
    /* the paper's counterexample to Theorem 2 when beta > 15: scaling by
     * 10^15 does not give the decimal significand 9110900773177071 */
    CHECK(9.110900773177071 * 1e15 == 9110900773177072.0);

    expect_dp32("1.11", 2, 111);
    expect_dp32("1.02", 2, 102);
    expect_dp32("0.1", 1, 1);
    expect_dp32("123456", 0, 123456);
    expect_dp32("12345.6", 1, 123456);
    expect_dp32("0.999999", 6, 999999);
    expect_dp32("1e-10", 10, 1);
    expect_dp32("0", 0, 0);
    expect_dp32("1234567", -1, 0);   /* 7 digits */
    expect_dp32("88.51872", -1, 0);  /* 7 digits */
    expect_dp32("1e-11", -1, 0);     /* past 10^-10 */
    expect_dp32("0.30000001", 1, 3); /* = 0.3f: shortest is "0.3" */
    expect_dp32("-0.0", -1, 0);
    expect_dp32("1e-45", -1, 0);
    expect_dp32("inf", -1, 0);
    expect_dp32("nan", -1, 0);
    cases_run++;
}

/* Random decimals of 1..17 significant digits and exponents across the
 * limits, their one-ulp neighbours, and random bit patterns. */
static void test_decimal_random(void) {
    const int count = tu_under_sanitizer() ? 20000 : 150000;
    tu_rng r = tu_rng_make(42);
    char text[64];
    for (int i = 0; i < count; i++) {
        const int digits = 1 + (int)tu_below(&r, 17);
        uint64_t m = 1 + tu_below(&r, 9);
        for (int d = 1; d < digits; d++)
            m = m * 10 + tu_below(&r, 10);
        const int e = (int)tu_below(&r, 45) - 35; /* m * 10^e */
        snprintf(text, sizeof text, "%s%llue%d", tu_below(&r, 2) ? "-" : "",
                 (unsigned long long)m, e);
        tu_context("random decimal %s", text);
        const double v = strtod(text, NULL);
        check_dp64(v);
        uint64_t b;
        memcpy(&b, &v, 8);
        double nb;
        b += tu_below(&r, 2) ? 1 : (uint64_t)-1;
        memcpy(&nb, &b, 8);
        check_dp64(nb);
        if (digits <= 9) {
            const float f = strtof(text, NULL);
            check_dp32(f);
            uint32_t fb;
            memcpy(&fb, &f, 4);
            fb += tu_below(&r, 2) ? 1u : 0xFFFFFFFFu;
            float nf;
            memcpy(&nf, &fb, 4);
            check_dp32(nf);
        }
        if (i % 8 == 0) {
            uint64_t rb = tu_next(&r);
            double rv;
            memcpy(&rv, &rb, 8);
            check_dp64(rv);
            uint32_t rf = tu_next32(&r);
            float fv;
            memcpy(&fv, &rf, 4);
            check_dp32(fv);
        }
    }
    printf("  decimal places checked against the reference: %u\n", dp_checked);
    cases_run++;
}

/* The GPU's binary32 read-back without a division (falcon_divf_pow10)
 * against the correctly rounded division on its whole domain: every
 * integer r < 10^6 at every scale a <= AMAX32. This exhaustive check is
 * what makes the substitution exact. */
static void test_readback32(void) {
    unsigned long long mismatches = 0;
    for (int a = 0; a <= FALCON_AMAX32; a++) {
        const float p = (float)falcon_pow10(a);
        const float y = 1.0f / p;
        for (uint32_t r = 0; r < FALCON_LIMIT32; r++) {
            const float want = (float)r / p;
            const float got = falcon_divf_pow10((float)r, p, y);
            if (memcmp(&want, &got, sizeof want) != 0 && mismatches++ < 5)
                fprintf(stderr, "readback32 a=%d r=%u: %.9g, division %.9g\n",
                        a, r, (double)got, (double)want);
        }
    }
    CHECK(mismatches == 0);
    /* and the entry points that take y agree with those that divide */
    uint64_t rng = 0x5EED5EEDull;
    for (int k = 0; k < 1000000; k++) {
        rng = rng * 6364136223846793005ull + 1442695040888963407ull;
        const uint32_t bits = (uint32_t)(rng >> 32);
        const int a = (int)((rng >> 8) % (FALCON_AMAX32 + 1));
        const double p = falcon_pow10(a);
        uint32_t m0 = 0, m1 = 0;
        CHECK(falcon_fits32(bits, p, &m0) ==
              falcon_fits32_by(bits, (float)p, 1.0f / (float)p, &m1));
        CHECK(m0 == m1);
        const uint32_t s = (uint32_t)(rng >> 40) % FALCON_LIMIT32;
        CHECK(falcon_inv32(s, (uint32_t)a, p) ==
              falcon_inv32_by(s, (uint32_t)a, (float)p, 1.0f / (float)p));
    }
}

/* The GPU's binary64 read-back test (falcon_reads_back64) against the
 * division: for random integers r < 10^15 at every scale, the quotient
 * and its neighbours two ulps either way (only the quotient reads back),
 * with r drawn near p times a power of two half of the time. */
static double next_toward(double x, int up) {
    uint64_t b;
    memcpy(&b, &x, 8);
    b = up ? b + 1 : b - 1; /* x > 0 normal */
    memcpy(&x, &b, 8);
    return x;
}

static void test_readback64(void) {
    const int rounds = tu_under_sanitizer() ? 20000 : 400000;
    uint64_t rng = 0xB16B00B5ull;
    unsigned long long wrong = 0, cases = 0;
    for (int k = 0; k < rounds; k++) {
        for (int a = 0; a <= FALCON_AMAX64; a++) {
            rng = rng * 6364136223846793005ull + 1442695040888963407ull;
            const double p = falcon_pow10(a);
            uint64_t r = (rng >> 11) % FALCON_LIMIT64;
            if (k & 1) { /* r / p near a power of two */
                const int e = (int)((rng >> 3) % 50) - (int)(3.33 * a);
                const double near2 = ldexp(p, e);
                if (near2 >= 1 && near2 < 1e15)
                    r = (uint64_t)near2 + (rng & 7) - 3;
            }
            if (r == 0 || r >= FALCON_LIMIT64)
                continue;
            const double rd = (double)r, q = rd / p;
            double v = next_toward(next_toward(q, 0), 0);
            for (int j = -2; j <= 2; j++, v = next_toward(v, 1)) {
                uint64_t vb;
                memcpy(&vb, &v, 8);
                wrong += falcon_reads_back64(rd, p, v, vb) != (j == 0);
                cases++;
            }
        }
    }
    printf("  readback64: %llu cases\n", cases);
    CHECK(wrong == 0);
}

/* The GPU's all-binary32 step (falcon_accept32, reached through
 * falcon_fits32_by) against the binary64 reference step at
 * every scale, for every float32 of the binades where t = v 10^a crosses
 * the 10^6 limit (the widest spacing of t that can still be accepted)
 * and 2^23 (where the fused rounding leaves the integer grid), of the
 * binades near 1, of the smallest normals, of the subnormals and of
 * inf/NaN, both signs: the same answer and the same integer. The full
 * binades only in the unsanitized run. */
static void test_fits32_gpu(void) {
    const uint32_t stride = tu_under_sanitizer() ? 97u : 1u;
    unsigned long long checked = 0, accepted = 0, mismatches = 0;
    for (int a = 0; a <= FALCON_AMAX32; a++) {
        const double p = falcon_pow10(a);
        const float y = 1.0f / (float)p;
        /* binade exponents: t near 10^6 (2^19.9), near 2^23, v near 1,
         * the smallest normals, subnormals (-127) and inf/NaN (128) */
        const int e6 = (int)floor(log2(1e6 / p));
        const int exps[] = {e6, e6 + 1, e6 + 3, e6 + 4, 0, -126, -127, 128};
        for (size_t k = 0; k < sizeof exps / sizeof exps[0]; k++) {
            const uint32_t base = (uint32_t)(exps[k] + 127) << 23;
            for (uint32_t m = 0; m < (1u << 24); m += stride) {
                /* bit 23 of m: the sign */
                const uint32_t bits = base | (m & 0x7FFFFFu) | (m >> 23) << 31;
                uint32_t want = 0, got = 0;
                const int ok = falcon_fits32(bits, p, &want);
                const int gpu = falcon_fits32_by(bits, (float)p, y, &got);
                checked++;
                accepted += (unsigned)ok;
                if ((ok != gpu || want != got) && mismatches++ < 5)
                    fprintf(stderr,
                            "fits32 a=%d 0x%08x: reference %d (%u), "
                            "binary32 %d (%u)\n",
                            a, bits, ok, want, gpu, got);
            }
        }
    }
    printf("  fits32_gpu: %llu checked, %llu accepted\n", checked, accepted);
    CHECK(mismatches == 0);
    CHECK(accepted > 0);
}

/* Every float32 of a few binades near 1 and near the limits, exhaustive
 * (only with the full run). */
static void test_decimal_f32_sweep(void) {
    if (tu_under_sanitizer())
        return;
    const uint32_t starts[] = {0x3F800000u, 0x41200000u, 0x49742400u - 2048};
    for (size_t s = 0; s < 3; s++)
        for (uint32_t b = starts[s]; b < starts[s] + 40000; b += 3) {
            float f;
            memcpy(&f, &b, 4);
            tu_context("f32 sweep 0x%08x", b);
            check_dp32(f);
        }
    printf("  f32 sweep: %u values checked\n", dp_checked);
    cases_run++;
}

/* The chunk decision by its definition (docs/FALCON.md, section 3): every
 * value's search from a = 0, then Case 2 iff an exception or
 * max(digits(w_i) - alpha_i) + max alpha_i > D. */
static uint32_t ref_choose(const uint64_t *bits, uint32_t n, int is64) {
    const int dmax = is64 ? FALCON_DMAX64 : FALCON_DMAX32;
    int amax = 0, qmax = -64;
    for (uint32_t i = 0; i < n; i++) {
        uint64_t w = 0;
        int a;
        if (is64) {
            a = falcon_dp64(bits[i], &w);
        } else {
            uint32_t w32 = 0;
            a = falcon_dp32((uint32_t)bits[i], &w32);
            w = w32;
        }
        if (a < 0)
            return FALCON_CASE2;
        amax = a > amax ? a : amax;
        if (w && falcon_digits(w) - a > qmax)
            qmax = falcon_digits(w) - a;
    }
    return qmax + amax > dmax ? FALCON_CASE2 : (uint32_t)amax;
}

/* The scan as the GPU runs it: 32 interleaved parts, merged. */
static uint32_t merged_choose(const uint64_t *bits, uint32_t n, int is64) {
    const uint64_t limit = is64 ? FALCON_LIMIT64 : FALCON_LIMIT32;
    falcon_scan part[32];
    int amax = 0;
    for (int l = 0; l < 32; l++) {
        part[l] = falcon_scan_init();
        for (uint32_t i = (uint32_t)l; i < n; i += 32) {
            if (is64)
                falcon_scan_add64(&part[l], bits[i]);
            else
                falcon_scan_add32(&part[l], (uint32_t)bits[i]);
        }
        amax = part[l].amax > amax ? part[l].amax : amax;
    }
    int case2 = 0;
    for (int l = 0; l < 32; l++) {
        falcon_scan_raise(&part[l], amax, limit);
        case2 |= part[l].case2;
    }
    return case2 ? FALCON_CASE2 : (uint32_t)amax;
}

/* A random decimal of `digits` significant digits and `alpha` decimals
 * (sometimes a special, a zero or a one-ulp neighbour). */
static uint64_t random_decimal_bits(tu_rng *r, int is64, int alpha,
                                    int digits) {
    const uint32_t kind = (uint32_t)tu_below(r, 64);
    if (kind == 0)
        return is64 ? 0x8000000000000000ull : 0x80000000u; /* -0.0 */
    if (kind == 1)
        return 0; /* +0.0 */
    uint64_t m = 1 + tu_below(r, 9);
    for (int d = 1; d < digits; d++)
        m = m * 10 + (kind == 2 ? 0 : tu_below(r, 10));
    char text[64];
    snprintf(text, sizeof text, "%s%llue-%d", tu_below(r, 2) ? "-" : "",
             (unsigned long long)m, alpha);
    if (is64) {
        const double v = strtod(text, NULL);
        uint64_t b;
        memcpy(&b, &v, 8);
        return kind == 3 ? b + 1 : b;
    }
    const float f = strtof(text, NULL);
    uint32_t b;
    memcpy(&b, &f, 4);
    return kind == 3 ? b + 1u : b;
}

/* How often check_walk_down saw each answer. */
typedef struct walk_counts {
    unsigned exact, capped;
} walk_counts;

/* The GPU's walk down (falcon_walk_down of the least falcon_dec_zeros) at
 * every A where the whole chunk fits, against the scale `want` from the
 * definition: the scale itself, or a bound at the cap. */
static void check_walk_down(const uint64_t *bits, uint32_t n, int is64,
                            uint32_t want, walk_counts *counts) {
    const int amax = is64 ? FALCON_AMAX64 : FALCON_AMAX32;
    for (int A = 0; A <= amax; A++) {
        const double p = falcon_pow10(A);
        uint32_t z = FALCON_DOWN_MAX;
        int all = 1;
        for (uint32_t i = 0; i < n && all; i++) {
            uint64_t r = 0;
            uint32_t r32 = 0;
            all = is64 ? falcon_fits64(bits[i], p, &r)
                       : falcon_fits32((uint32_t)bits[i], p, &r32);
            r = is64 ? r : r32;
            const uint32_t zi = falcon_dec_zeros(r);
            z = zi < z ? zi : z;
        }
        if (!all)
            continue;
        tu_context("walk down f%d n %u A %d z %u", is64 ? 64 : 32, n, A, z);
        CHECK(want != FALCON_CASE2);
        const int scale = falcon_walk_down(A, z);
        if (scale >= 0) {
            CHECK_EQ_U64(want, (uint32_t)scale);
            counts->exact += z > 0;
        } else {
            CHECK((int)want <= A - (int)FALCON_DOWN_MAX);
            counts->capped++;
        }
    }
}

/* The resumed-search scan (falcon_choose*, and merged as on the GPU)
 * against the definition, on chunks whose values mix decimal places and
 * digit counts around the Case 1 limit, in random orders; the walk down
 * on a part of them. */
static void test_scan(void) {
    const int count = tu_under_sanitizer() ? 4000 : 40000;
    tu_rng r = tu_rng_make(7);
    uint64_t bits[300];
    uint64_t b64[300];
    uint32_t b32[300];
    unsigned case1 = 0, case2 = 0;
    walk_counts walks = {0, 0};
    for (int c = 0; c < count; c++) {
        const int is64 = c & 1;
        const int amaxd = is64 ? FALCON_AMAX64 : FALCON_AMAX32;
        const int dmax = is64 ? FALCON_DMAX64 : FALCON_DMAX32;
        const int lo = (int)tu_below(&r, (uint64_t)amaxd + 1);
        const int hi = lo + (int)tu_below(&r, 4) > amaxd
                           ? amaxd
                           : lo + (int)tu_below(&r, 4);
        const int dlo = 1 + (int)tu_below(&r, (uint64_t)dmax);
        const uint32_t n = 1 + (uint32_t)tu_below(&r, c % 3 ? 64 : 300);
        for (uint32_t i = 0; i < n; i++) {
            const int alpha = lo + (int)tu_below(&r, (uint64_t)(hi - lo + 1));
            int digits = dlo + (int)tu_below(&r, 3);
            digits = digits > dmax + 1 ? dmax + 1 : digits;
            bits[i] = random_decimal_bits(&r, is64, alpha, digits);
            b64[i] = bits[i];
            b32[i] = (uint32_t)bits[i];
        }
        const uint32_t want = ref_choose(bits, n, is64);
        const uint32_t got =
            is64 ? falcon_choose64(b64, n) : falcon_choose32(b32, n);
        tu_context("scan chunk %d (f%d, n %u, alpha %d..%d, digits %d+)", c,
                   is64 ? 64 : 32, n, lo, hi, dlo);
        CHECK_EQ_U64(got, want);
        CHECK_EQ_U64(merged_choose(bits, n, is64), want);
        if (c % 8 == 0)
            check_walk_down(bits, n, is64, want, &walks);
        if (want == FALCON_CASE2)
            case2++;
        else
            case1++;
    }
    printf("  scan: %u Case 1 and %u Case 2 chunks agree\n", case1, case2);
    CHECK(case1 > (unsigned)count / 8 && case2 > (unsigned)count / 8);
    cases_run++;
}

/* The walk down on chunks of few digits, which fit far above their scale
 * (every A from the scale to AMAX), besides the scan's chunks. */
static void test_walk_down(void) {
    const int count = tu_under_sanitizer() ? 4000 : 20000;
    tu_rng r = tu_rng_make(11);
    uint64_t bits[200];
    walk_counts walks = {0, 0};
    for (int c = 0; c < count; c++) {
        const int is64 = c & 1;
        const int amaxd = is64 ? FALCON_AMAX64 : FALCON_AMAX32;
        const int lo = (int)tu_below(&r, (uint64_t)amaxd + 1);
        const int spread = (int)tu_below(&r, 4);
        const int hi = lo + spread > amaxd ? amaxd : lo + spread;
        const int digits = 1 + (int)tu_below(&r, is64 ? 8 : 3);
        const uint32_t n = 1 + (uint32_t)tu_below(&r, 200);
        for (uint32_t i = 0; i < n; i++) {
            const int alpha = lo + (int)tu_below(&r, (uint64_t)(hi - lo + 1));
            bits[i] = random_decimal_bits(&r, is64, alpha, digits);
        }
        tu_context("walk down chunk %d (f%d, n %u, alpha %d..%d, digits %d)", c,
                   is64 ? 64 : 32, n, lo, hi, digits);
        check_walk_down(bits, n, is64, ref_choose(bits, n, is64), &walks);
    }
    printf("  walk down: %u exact jumps, %u capped\n", walks.exact,
           walks.capped);
    CHECK(walks.exact > (unsigned)count / 4 &&
          walks.capped > (unsigned)count / 4);
    cases_run++;
}

/* ---------------------------------------------------------------------
 * 2. Round trips. */
static void roundtrip(const fz_params *p, const void *src, size_t bytes,
                      int must_shrink) {
    size_t size = 0;
    uint8_t *stream = tu_compress(p, src, &size);
    if (must_shrink && size >= bytes) {
        fprintf(stderr, "stream %zu bytes for %zu original\n", size, bytes);
        tu_fail(__FILE__, __LINE__, "must_shrink", "did not compress");
    }
    fz_info info;
    CHECK_OK(fz_inspect(stream, size, &info));
    CHECK(info.params.codec == FZ_CODEC_FALCON);
    CHECK_EQ_U64(info.params.codec_options[0],
                 p->codec_options[0] ? p->codec_options[0] : 1025);
    CHECK_EQ_U64(info.chunk_bytes, (uint64_t)info.params.codec_options[0] *
                                       tu_dtype_size(p->dtype));
    CHECK_EQ_U64(info.compressed_bytes, size);
    const uint32_t flags[] = {0, FZ_DECODE_SKIP_CHECKSUM};
    for (int f = 0; f < 2; f++) {
        tu_buf out = tu_buf_alloc(bytes);
        fz_decode_options o = tu_decode_opts(f ? 1 : 0, flags[f]);
        size_t got = 0;
        CHECK_OK(fz_decompress(stream, size, out.data, bytes, &o, &got));
        CHECK_EQ_U64(got, bytes);
        CHECK(memcmp(out.data, src, bytes) == 0);
        CHECK(tu_guard_intact(&out));
        tu_buf_free(&out);
    }
    free(stream);
    cases_run++;
}

static const size_t sizes[] = {0,  1,   2,    3,    7,    31,   32,
                               33, 100, 1024, 1025, 1026, 2049, 3 * 1025 + 7};

static void test_roundtrip_generators(void) {
    const fz_dtype dtypes[] = {FZ_F32, FZ_F64};
    for (int t = 0; t < 2; t++)
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
            const size_t n = sizes[s], bytes = n * tu_dtype_size(dtypes[t]);
            void *src = tu_xmalloc(bytes);
            for (int g = 0; g < TU_GEN_COUNT; g++) {
                tu_context("shared gen %s %s n=%zu", tu_dtype_name(dtypes[t]),
                           tu_gen_name((tu_gen)g), n);
                tu_fill((tu_gen)g, dtypes[t], src, n, 77 + n);
                fz_params p = fd_params(dtypes[t], n, 0, 0);
                roundtrip(&p, src, bytes, 0);
            }
            for (int g = 0; g < FD_COUNT; g++) {
                tu_context("falcon gen %s %s n=%zu", tu_dtype_name(dtypes[t]),
                           fd_gen_name((fd_gen)g), n);
                fd_fill((fd_gen)g, dtypes[t], src, n, 5 + n);
                const int shrink =
                    n >= 100 && (g == FD_DECIMAL_WALK || g == FD_PLATEAU);
                fz_params p = fd_params(dtypes[t], n, 0, 0);
                roundtrip(&p, src, bytes, shrink);
                p.flags = FZ_FLAG_NO_CHECKSUM;
                roundtrip(&p, src, bytes, shrink);
            }
            free(src);
        }
}

static void test_roundtrip_chunk_sizes(void) {
    const int32_t chunks[] = {1, 2, 3, 8, 9, 33, 100, 513, 1024, 1025};
    const fz_dtype dtypes[] = {FZ_F32, FZ_F64};
    const size_t n = 3000;
    for (int t = 0; t < 2; t++) {
        const size_t bytes = n * tu_dtype_size(dtypes[t]);
        void *src = tu_xmalloc(bytes);
        for (size_t c = 0; c < sizeof chunks / sizeof chunks[0]; c++)
            for (int g = 0; g < FD_COUNT; g++) {
                tu_context("chunk %d %s %s", chunks[c],
                           tu_dtype_name(dtypes[t]), fd_gen_name((fd_gen)g));
                fd_fill((fd_gen)g, dtypes[t], src, n, 11 + (uint64_t)c);
                fz_params p = fd_params(dtypes[t], n, 0, chunks[c]);
                roundtrip(&p, src, bytes, 0);
            }
        for (size_t c = 0; c < sizeof chunks / sizeof chunks[0]; c++)
            for (int g = 0; g < TU_GEN_COUNT; g++) {
                tu_context("chunk %d %s shared %s", chunks[c],
                           tu_dtype_name(dtypes[t]), tu_gen_name((tu_gen)g));
                tu_fill((tu_gen)g, dtypes[t], src, n, 3 + (uint64_t)c);
                fz_params p = fd_params(dtypes[t], n, 0, chunks[c]);
                roundtrip(&p, src, bytes, 0);
            }
        free(src);
    }
}

/* Every special bit pattern, alone and inside decimal data. */
static void test_roundtrip_specials(void) {
    const uint64_t *s64;
    const uint32_t *s32;
    const size_t n64 = tu_special64(&s64), n32 = tu_special32(&s32);
    for (int t = 0; t < 2; t++) {
        const fz_dtype dt = t ? FZ_F64 : FZ_F32;
        const size_t ns = t ? n64 : n32, n = 2100;
        void *src = tu_xmalloc(n * 8);
        for (size_t k = 0; k < ns; k++) {
            tu_context("special %zu %s", k, tu_dtype_name(dt));
            fd_fill(FD_DECIMAL_WALK, dt, src, n, k);
            for (size_t i = k % 7; i < n; i += 97)
                fd_store_bits(dt, src, i, t ? s64[k] : s32[k]);
            fz_params p = fd_params(dt, n, 0, 0);
            roundtrip(&p, src, n * tu_dtype_size(dt), 0);
            for (size_t i = 0; i < n; i++) /* a chunk of one special */
                fd_store_bits(dt, src, i, t ? s64[k] : s32[k]);
            roundtrip(&p, src, n * tu_dtype_size(dt), 0);
        }
        free(src);
    }
}

/* Multi-megabyte arrays (several thousand chunks). */
static void test_roundtrip_large(void) {
    const size_t n = tu_under_sanitizer() ? 100000 : 700000;
    for (int t = 0; t < 2; t++) {
        const fz_dtype dt = t ? FZ_F64 : FZ_F32;
        void *src = tu_xmalloc(n * 8);
        const fd_gen gens[] = {FD_DECIMAL_WALK, FD_DEC_SPECIAL, FD_LONG};
        for (int g = 0; g < 3; g++) {
            tu_context("large %s %s", tu_dtype_name(dt), fd_gen_name(gens[g]));
            fd_fill(gens[g], dt, src, n, 99);
            fz_params p = fd_params(dt, n, 0, 0);
            roundtrip(&p, src, n * tu_dtype_size(dt), g == 0);
        }
        free(src);
    }
}

/* ---------------------------------------------------------------------
 * 3. The same bytes for every thread count. */
static void test_threads(void) {
    const size_t n = 40 * 1025 + 3;
    for (int t = 0; t < 2; t++) {
        const fz_dtype dt = t ? FZ_F64 : FZ_F32;
        const size_t bytes = n * tu_dtype_size(dt);
        void *src = tu_xmalloc(bytes);
        fd_fill(FD_DEC_SPECIAL, dt, src, n, 3);
        for (size_t i = 0; i < n; i += 5000) /* some Case 2 chunks */
            fd_fill(FD_LONG, dt, (uint8_t *)src + i * tu_dtype_size(dt),
                    n - i < 700 ? n - i : 700, i);
        fz_params p = fd_params(dt, n, 0, 0);
        p.threads = 1;
        size_t size1 = 0;
        uint8_t *ref = tu_compress(&p, src, &size1);
        const int32_t threads[] = {2, 3, 4, 8, 0};
        for (int k = 0; k < 5; k++) {
            tu_context("threads %d %s", threads[k], tu_dtype_name(dt));
            p.threads = threads[k];
            size_t size = 0;
            uint8_t *s = tu_compress(&p, src, &size);
            CHECK_EQ_U64(size, size1);
            CHECK(memcmp(s, ref, size) == 0);
            free(s);
            tu_buf out = tu_buf_alloc(bytes);
            fz_decode_options o = tu_decode_opts(threads[k], 0);
            size_t got = 0;
            CHECK_OK(fz_decompress(ref, size1, out.data, bytes, &o, &got));
            CHECK(memcmp(out.data, src, bytes) == 0);
            tu_buf_free(&out);
        }
        free(ref);
        free(src);
        cases_run++;
    }
}

/* ---------------------------------------------------------------------
 * 4. Options and API. */
static void test_options(void) {
    tu_context("options");
    fz_codec c;
    CHECK_OK(fz_codec_from_name("falcon", &c));
    CHECK(c == FZ_CODEC_FALCON);
    CHECK(strcmp(fz_codec_name(FZ_CODEC_FALCON), "falcon") == 0);
    double v[4] = {1.5, 2.5, 3.25, 4.0};
    size_t bound = 0;
    fz_params p = fd_params(FZ_F64, 4, 0, 0);
    const int32_t bad[] = {-1, 1026, 1 << 20};
    for (int i = 0; i < 3; i++) {
        p.codec_options[0] = bad[i];
        CHECK_STATUS(fz_compress_bound(&p, &bound), FZ_ERR_INVALID_ARGUMENT);
    }
    p.codec_options[0] = 0;
    p.codec_options[2] = 1;
    CHECK_STATUS(fz_compress_bound(&p, &bound), FZ_ERR_INVALID_ARGUMENT);
    p.codec_options[2] = 0;
    p.mode = FZ_MODE_ABS;
    p.bound = 1e-3;
    CHECK_STATUS(fz_compress_bound(&p, &bound), FZ_ERR_UNSUPPORTED);
    p.mode = FZ_MODE_REL;
    CHECK_STATUS(fz_compress_bound(&p, &bound), FZ_ERR_UNSUPPORTED);
    p = fd_params(FZ_F64, 4, 0, 0);
    size_t size = 0;
    uint8_t *s = tu_compress(&p, v, &size);
    fz_info info;
    CHECK_OK(fz_inspect(s, size, &info));
    CHECK_EQ_U64(info.params.codec_options[0], 1025);
    CHECK_EQ_U64(info.chunk_bytes, 1025 * 8);
    CHECK_EQ_U64(info.codec_version, FALCON_CODEC_VERSION);
    /* the parameters fz_inspect reports compress to the same stream */
    size_t size2 = 0;
    uint8_t *s2 = tu_compress(&info.params, v, &size2);
    CHECK_EQ_U64(size2, size);
    CHECK(memcmp(s, s2, size) == 0);
    CHECK(size < 128 + 16 + 32); /* encoded, not verbatim */
    free(s);
    free(s2);
    cases_run++;
}

/* The worked examples of docs/FALCON.md, byte for byte. */
static void check_vector(const double *v, size_t n, const uint8_t *want,
                         size_t want_size) {
    fz_params p = fd_params(FZ_F64, n, 0, 0);
    size_t size = 0;
    uint8_t *s = tu_compress(&p, v, &size);
    const size_t pay = 144; /* 128 + one 8-byte entry, aligned to 16 */
    CHECK_EQ_U64(size, pay + want_size);
    CHECK_EQ_U64(fz_load32(s + 128), want_size);
    CHECK(memcmp(s + pay, want, want_size) == 0);
    free(s);
}

static void test_vectors(void) {
    tu_context("vectors");
    const double a[] = {1.5, 2.25, 2.0, 3.75};
    const uint8_t wa[] = {0x02, 0x09, 0x02, 0x2c, 0x01, 0x00, 0x00, 0x04,
                          0x01, 0x04, 0x02, 0x07, 0x04, 0x05, 0x05, 0x02};
    check_vector(a, 4, wa, sizeof wa);
    const double b[] = {-0.0, 0.0};
    const uint8_t wb[] = {0xff, 0x02, 0x08, 0xff, 0xff, 0xff, 0xff,
                          0xff, 0xff, 0xff, 0xff, 0x00, 0x01, 0x00};
    check_vector(b, 2, wb, sizeof wb);
    cases_run++;
}

/* ---------------------------------------------------------------------
 * 5. Damaged streams. */
typedef struct stream {
    fz_params p;
    void *original;
    size_t bytes;
    uint8_t *data;
    size_t size;
} stream;

static stream make_stream(fz_dtype dt, int gen, int shared, size_t n,
                          uint32_t flags, int32_t chunk) {
    stream s;
    s.p = fd_params(dt, n, flags, chunk);
    s.p.threads = 1;
    s.bytes = n * tu_dtype_size(dt);
    s.original = tu_xmalloc(s.bytes);
    if (shared)
        tu_fill((tu_gen)gen, dt, s.original, n, 500 + n);
    else
        fd_fill((fd_gen)gen, dt, s.original, n, 500 + n);
    s.data = tu_compress(&s.p, s.original, &s.size);
    return s;
}

static void free_stream(stream *s) {
    free(s->original);
    free(s->data);
}

static fz_status decode_into(const stream *s, const uint8_t *bytes, size_t size,
                             tu_buf *out, uint32_t flags) {
    fz_decode_options o = tu_decode_opts(1, flags);
    size_t got = 0;
    fz_status st = fz_decompress(bytes, size, out->data, s->bytes, &o, &got);
    CHECK(tu_guard_intact(out));
    CHECK(st != FZ_ERR_OUT_OF_MEMORY);
    return st;
}

static int status_fits_region(fz_status st, size_t pos, size_t table_end,
                              size_t payload_off) {
    if (pos < FZ_HEADER_BYTES)
        return st == FZ_ERR_BAD_MAGIC || st == FZ_ERR_HEADER_CHECKSUM ||
               st == FZ_ERR_FORMAT_VERSION || st == FZ_ERR_CORRUPT_HEADER;
    if (pos < table_end)
        return st == FZ_ERR_TABLE_CHECKSUM || st == FZ_ERR_CORRUPT_HEADER ||
               st == FZ_ERR_CORRUPT_CHUNK;
    if (pos < payload_off)
        return st == FZ_ERR_CORRUPT_HEADER;
    return st == FZ_ERR_CORRUPT_CHUNK || st == FZ_ERR_DATA_CHECKSUM;
}

/* Whether byte pos lies in a verbatim chunk's payload. */
static int in_verbatim_chunk(const stream *s, const uint8_t *bytes,
                             size_t pos) {
    fz_info info;
    CHECK_OK(fz_inspect(s->data, s->size, &info));
    const size_t entry = info.has_checksums ? 8 : 4;
    size_t at = (size_t)info.payload_offset;
    for (uint64_t c = 0; c < info.chunk_count; c++) {
        uint64_t raw = info.original_bytes - c * info.chunk_bytes;
        raw = raw < info.chunk_bytes ? raw : info.chunk_bytes;
        const uint32_t size = fz_load32(bytes + FZ_HEADER_BYTES + c * entry);
        if (pos >= at && pos < at + size)
            return size == raw;
        at += size;
    }
    return 0;
}

/* With checksums: every truncation fails; every flip fails with a status
 * fitting its region or decodes to exactly the original. Without: every
 * flip that decodes is canonical: its output compresses to the very same
 * bytes (outside verbatim chunks, which decoders accept as they are). */
static void damage_case(stream *s) {
    tu_buf out = tu_buf_alloc(s->bytes);
    CHECK_OK(decode_into(s, s->data, s->size, &out, 0));
    CHECK(memcmp(out.data, s->original, s->bytes) == 0);
    for (size_t len = 0; len < s->size; len++) {
        uint8_t *part = (uint8_t *)tu_xmalloc(len);
        memcpy(part, s->data, len);
        CHECK_ERROR(decode_into(s, part, len, &out, 0));
        free(part);
    }
    fz_info info;
    CHECK_OK(fz_inspect(s->data, s->size, &info));
    const size_t table_end = FZ_HEADER_BYTES + (size_t)info.chunk_count *
                                                   (info.has_checksums ? 8 : 4);
    const uint8_t masks[] = {0x01, 0x02, 0x10, 0x80, 0xFF, 0x5A};
    uint8_t *copy = (uint8_t *)tu_xmalloc(s->size);
    memcpy(copy, s->data, s->size);
    unsigned accepted = 0;
    for (size_t pos = 0; pos < s->size; pos++)
        for (size_t m = 0; m < sizeof masks; m++) {
            copy[pos] ^= masks[m];
            const fz_status st = decode_into(s, copy, s->size, &out, 0);
            if (st != FZ_OK) {
                if (!status_fits_region(st, pos, table_end,
                                        (size_t)info.payload_offset)) {
                    fprintf(stderr, "byte %zu ^ 0x%02X -> %s\n", pos, masks[m],
                            fz_status_string(st));
                    tu_fail(__FILE__, __LINE__, "status_fits_region",
                            "unexpected status for the region");
                }
            } else if (info.has_checksums) {
                CHECK(memcmp(out.data, s->original, s->bytes) == 0);
            } else if (!in_verbatim_chunk(s, copy, pos)) {
                accepted++;
                size_t size2 = 0;
                uint8_t *again = tu_compress(&s->p, out.data, &size2);
                if (size2 != s->size || memcmp(again, copy, size2) != 0) {
                    fprintf(stderr,
                            "byte %zu ^ 0x%02X accepted but not "
                            "canonical\n",
                            pos, masks[m]);
                    tu_fail(__FILE__, __LINE__, "canonical",
                            "decoded stream re-encodes differently");
                }
                free(again);
            }
            copy[pos] ^= masks[m];
        }
    if (accepted)
        printf("  %zu-byte stream: %u corruptions decoded (canonical)\n",
               s->size, accepted);
    free(copy);
    tu_buf_free(&out);
    cases_run++;
}

static void test_damage(void) {
    const fz_dtype dtypes[] = {FZ_F32, FZ_F64};
    const struct {
        int gen, shared;
        size_t n;
        int32_t chunk;
    } cases[] = {
        {FD_DECIMAL_WALK, 0, 1, 0},    {FD_DECIMAL_WALK, 0, 3, 0},
        {FD_DECIMAL_WALK, 0, 70, 0},   {FD_DECIMAL_WALK, 0, 90, 33},
        {FD_DEC_SPECIAL, 0, 300, 0},   {FD_LONG, 0, 60, 0},
        {FD_PLATEAU, 0, 1100, 0},      {FD_DECIMAL_PLACES, 0, 40, 0},
        {TU_GEN_RANDOM_BITS, 1, 9, 0}, {TU_GEN_PATCHWORK, 1, 80, 20},
        {TU_GEN_SMOOTH, 1, 50, 0},     {TU_GEN_ZEROS, 1, 40, 0},
    };
    for (int t = 0; t < 2; t++)
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
            for (int f = 0; f < 2; f++) {
                tu_context("damage %s %s n=%zu chunk=%d flags=%d",
                           tu_dtype_name(dtypes[t]),
                           cases[c].shared ? tu_gen_name((tu_gen)cases[c].gen)
                                           : fd_gen_name((fd_gen)cases[c].gen),
                           cases[c].n, cases[c].chunk, f);
                stream s = make_stream(dtypes[t], cases[c].gen, cases[c].shared,
                                       cases[c].n, f ? FZ_FLAG_NO_CHECKSUM : 0,
                                       cases[c].chunk);
                damage_case(&s);
                free_stream(&s);
            }
}

/* Streams of codec version 1 (data checksums by fz_hash) still decode,
 * and each version's checksums are checked as its own: version 2's read
 * as version 1's (and the reverse) are data checksum errors. */
static void test_versions(void) {
    const fz_dtype dtypes[] = {FZ_F32, FZ_F64};
    const int gens[] = {FD_DECIMAL_WALK, FD_DEC_SPECIAL, FD_LONG};
    const fz_decode_options o = tu_decode_opts(2, 0);
    const fz_decode_options skip = tu_decode_opts(2, FZ_DECODE_SKIP_CHECKSUM);
    for (int t = 0; t < 2; t++)
        for (int g = 0; g < 3; g++) {
            tu_context("versions %s %s", tu_dtype_name(dtypes[t]),
                       fd_gen_name((fd_gen)gens[g]));
            stream s = make_stream(dtypes[t], gens[g], 0, 3000, 0, 0);
            fz_info info;
            CHECK_OK(fz_inspect(s.data, s.size, &info));
            CHECK_EQ_U64(info.codec_version, 2);
            tu_buf out = tu_buf_alloc(s.bytes);
            size_t got = 0;
            uint8_t *v = (uint8_t *)tu_xmalloc(s.size);
            /* version 1 with its own checksums decodes */
            memcpy(v, s.data, s.size);
            tu_restamp_version(v, s.size, s.original, 1, FZ_SUM_MIX);
            CHECK_OK(fz_decompress(v, s.size, out.data, s.bytes, &o, &got));
            CHECK(got == s.bytes && memcmp(out.data, s.original, s.bytes) == 0);
            /* version 2's checksums read as version 1's, and the reverse */
            const fz_sum_kind kinds[] = {FZ_SUM_SQUARE, FZ_SUM_MIX};
            for (int k = 0; k < 2; k++) {
                memcpy(v, s.data, s.size);
                tu_restamp_version(v, s.size, s.original, 2 - (uint32_t)k,
                                   kinds[k]);
                CHECK_OK(fz_decompress(v, s.size, out.data, s.bytes, &o, &got));
                tu_restamp_version(v, s.size, s.original, 1 + (uint32_t)k,
                                   kinds[k]);
                CHECK_STATUS(
                    fz_decompress(v, s.size, out.data, s.bytes, &o, &got),
                    FZ_ERR_DATA_CHECKSUM);
                CHECK_OK(
                    fz_decompress(v, s.size, out.data, s.bytes, &skip, &got));
                CHECK(memcmp(out.data, s.original, s.bytes) == 0);
            }
            /* a version this build does not know */
            memcpy(v, s.data, s.size);
            tu_restamp_version(v, s.size, s.original, 3, FZ_SUM_SQUARE);
            CHECK(fz_decompress(v, s.size, out.data, s.bytes, &o, &got) !=
                  FZ_OK);
            free(v);
            tu_buf_free(&out);
            free_stream(&s);
        }
    cases_run++;
}

/* Chunk-level fuzzing through the codec table: mutated encodings are
 * rejected, or decode to values that encode back to the same bytes. */
static void test_chunk_fuzz(void) {
    const fz_codec_cpu *codec = fz_codec_cpu_find(FZ_CODEC_FALCON);
    CHECK(codec != NULL);
    const int rounds = tu_under_sanitizer() ? 20000 : 200000;
    tu_rng r = tu_rng_make(9);
    unsigned accepted = 0;
    for (int t = 0; t < 2; t++) {
        const fz_dtype dt = t ? FZ_F64 : FZ_F32;
        const uint32_t es = (uint32_t)tu_dtype_size(dt);
        for (int round = 0; round < rounds; round++) {
            const uint32_t n = 1 + (uint32_t)tu_below(&r, 70);
            fz_header h;
            memset(&h, 0, sizeof h);
            h.dtype = (uint32_t)dt;
            h.codec_params[0] = n;
            uint64_t src[80], back[80];
            fd_fill((fd_gen)tu_below(&r, FD_COUNT), dt, src, n,
                    (uint64_t)round);
            uint8_t enc[1200], enc2[1200];
            uint32_t sum;
            size_t size = codec->encode_chunk(&h, src, n, enc, &sum);
            if (size >= (size_t)n * es)
                continue; /* verbatim */
            /* mutate: flip bits, change a byte, cut, or extend */
            const int kind = (int)tu_below(&r, 4);
            if (kind == 0)
                enc[tu_below(&r, size)] ^= (uint8_t)(1u << tu_below(&r, 8));
            else if (kind == 1)
                enc[tu_below(&r, size)] = (uint8_t)tu_next32(&r);
            else if (kind == 2)
                size = tu_below(&r, size);
            else
                enc[size++] = (uint8_t)tu_next32(&r);
            if (size >= (size_t)n * es)
                continue;
            uint8_t *exact = (uint8_t *)tu_xmalloc(size); /* ASan bounds */
            memcpy(exact, enc, size);
            int st = codec->decode_chunk(&h, exact, size, back, n);
            free(exact);
            if (st != 0)
                continue;
            accepted++;
            tu_context("chunk fuzz %s round %d", tu_dtype_name(dt), round);
            size_t size2 = codec->encode_chunk(&h, back, n, enc2, &sum);
            CHECK_EQ_U64(size2, size);
            CHECK(memcmp(enc, enc2, size) == 0);
        }
    }
    printf("  chunk fuzz: %u mutations accepted, all canonical\n", accepted);
    cases_run++;
}

/* The chunk coder's plane helpers against their bit-by-bit definition:
 * falcon_planes8 puts bit 8c + r of delta 1 + 8k + j at bit j of byte k of
 * plane r (0 past n), and falcon_unplanes8 ORs such planes back into byte
 * c of the deltas. Every byte c of both word types, chunk sizes around
 * multiples of 8, random deltas with sparse and dense bits. */
static uint64_t next64(tu_rng *r) {
    const uint64_t hi = tu_next32(r);
    return hi << 32 | tu_next32(r);
}

static void test_planes(void) {
    tu_rng r = tu_rng_make(48);
    static const uint32_t counts[] = {1, 2, 8, 9, 10, 16, 17, 100, 1024, 1025};
    uint8_t plane[FALCON_PLANE_WORK_BYTES];
    uint64_t e64[FALCON_MAX_VALUES], back64[FALCON_MAX_VALUES];
    uint32_t e32[FALCON_MAX_VALUES], back32[FALCON_MAX_VALUES];
    for (size_t si = 0; si < sizeof counts / sizeof counts[0]; si++) {
        const uint32_t n = counts[si], B = falcon_plane_bytes(n);
        for (int round = 0; round < 20; round++) {
            tu_context("planes n %u round %d", n, round);
            const uint64_t keep = round % 3 ? next64(&r) : ~0ull;
            for (uint32_t i = 0; i < n; i++) {
                e64[i] = next64(&r) & keep;
                e32[i] = (uint32_t)(next64(&r) & keep);
            }
            memset(back64, 0, sizeof back64);
            memset(back32, 0, sizeof back32);
            for (uint32_t c = 0; c < 8; c++) {
                falcon_planes8_64(e64, n, B, c, plane);
                for (uint32_t q = 0; q < 8; q++)
                    for (uint32_t k = 0; k < B; k++) {
                        uint32_t want = 0;
                        for (uint32_t j = 0; j < 8 && 1 + 8 * k + j < n; j++)
                            want |=
                                (uint32_t)((e64[1 + 8 * k + j] >> (8 * c + q)) &
                                           1u)
                                << j;
                        CHECK_EQ_U64(plane[q * B + k], want);
                    }
                falcon_unplanes8_64(plane, B, c, back64, n);
                if (c >= 4)
                    continue;
                falcon_planes8_32(e32, n, B, c, plane);
                for (uint32_t q = 0; q < 8; q++)
                    for (uint32_t k = 0; k < B; k++) {
                        uint32_t want = 0;
                        for (uint32_t j = 0; j < 8 && 1 + 8 * k + j < n; j++)
                            want |= ((e32[1 + 8 * k + j] >> (8 * c + q)) & 1u)
                                    << j;
                        CHECK_EQ_U64(plane[q * B + k], want);
                    }
                falcon_unplanes8_32(plane, B, c, back32, n);
            }
            /* delta 0 is not in the planes: the first value is stored apart */
            CHECK(back64[0] == 0 && back32[0] == 0);
            CHECK(memcmp(back64 + 1, e64 + 1, (n - 1) * sizeof *e64) == 0);
            CHECK(memcmp(back32 + 1, e32 + 1, (n - 1) * sizeof *e32) == 0);
            cases_run++;
        }
    }
}

static const tu_group groups[] = {
    {"decimal_exact", test_decimal_exact},
    {"decimal_random", test_decimal_random},
    {"decimal_f32_sweep", test_decimal_f32_sweep},
    {"readback32", test_readback32},
    {"fits32_gpu", test_fits32_gpu},
    {"readback64", test_readback64},
    {"scan", test_scan},
    {"walk_down", test_walk_down},
    {"roundtrip", test_roundtrip_generators},
    {"chunk_sizes", test_roundtrip_chunk_sizes},
    {"specials", test_roundtrip_specials},
    {"large", test_roundtrip_large},
    {"threads", test_threads},
    {"options", test_options},
    {"vectors", test_vectors},
    {"damage", test_damage},
    {"versions", test_versions},
    {"chunk_fuzz", test_chunk_fuzz},
    {"planes", test_planes},
};

int main(int argc, char **argv) {
    return tu_run_groups(argc, argv, "test_falcon", groups,
                         sizeof groups / sizeof groups[0], &cases_run, NULL);
}
