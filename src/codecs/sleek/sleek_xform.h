/* SLEEK lossless transform (Algorithm 1 of the SLEEK paper) and the chunk
 * layout. Integer-only, but for float operations proven exact (the bin
 * dequantizer, and the GPU encoders' form of the quantizer, each tested
 * equal to its integer definition), and FZ_HD: the CPU and GPU backends
 * include this one definition, which is what makes their streams
 * byte-identical.
 *
 * Chunk layout (docs/FORMAT.md): a chunk is 16 KiB of original data split
 * into 32 subchunks of 512 bytes (128 f32 or 64 f64 values). Encoded:
 *   32 bytes   bit width n_s of each subchunk (0..32 or 0..64)
 *   then, per subchunk, its V values' low n_s bits packed LSB-first:
 *   value i of the subchunk occupies stream bits [i*n_s, (i+1)*n_s), bit p
 *   being bit (p % 8) of byte p / 8. A subchunk takes n_s * V / 8 bytes.
 * A last, partial chunk is encoded as if padded with +0.0 values, which
 * transform to 0 and must decode to 0. */
#ifndef SLEEK_XFORM_H
#define SLEEK_XFORM_H

#include "../../common/fz_hash.h"
#include "../../common/fz_portable.h"

#define SLEEK_CODEC_ID 1u
/* The versions differ only in a chunk's data checksum; chunks are
 * identical. Version 3 (written): the square sum (FORMAT.md 6.2) of the
 * stored payload; version 2: the mixed hash (6.1) of the stored payload
 * (verified before decoding, and cheap where the payload is small: lossy);
 * version 1: the mixed hash of the bytes the chunk decodes to. */
#define SLEEK_CODEC_VERSION 3u
#define SLEEK_CODEC_VERSION_MIN 1u

/* Whether a version's data checksums cover the stored payload (else the
 * decoded bytes), and which checksum they are. */
static FZ_HD int sleek_payload_sums(uint32_t version) {
    return version >= 2;
}
static FZ_HD fz_sum_kind sleek_sum_kind(uint32_t version) {
    return version >= 3 ? FZ_SUM_SQUARE : FZ_SUM_MIX;
}
#define SLEEK_CHUNK_BYTES 16384u
#define SLEEK_SUB_BYTES 512u
#define SLEEK_SUBS (SLEEK_CHUNK_BYTES / SLEEK_SUB_BYTES) /* 32 */
#define SLEEK_WIDTHS_BYTES SLEEK_SUBS                    /* one byte each */

/* Rotate the sign into the LSB, remap the biased exponent so that exponents
 * near 0 get many leading zeros (0 stays 0, E>128 -> E-128, E<=128 ->
 * E-129 as a signed field), then two's complement -> magnitude-sign. */
static FZ_HD uint32_t sleek_fwd32(uint32_t bits) {
    const uint32_t msb = 0x80000000u, exp_mask = 0xFF000000u;
    uint32_t v = (bits << 1) | (bits >> 31);
    if (v & exp_mask) {
        v -= msb;
        if ((v & exp_mask) == 0 || v >= msb)
            v -= 0x01000000u;
    }
    return (v << 1) ^ (0u - (v >> 31));
}

static FZ_HD uint32_t sleek_inv32(uint32_t t) {
    const uint32_t msb = 0x80000000u, exp_mask = 0xFF000000u;
    uint32_t v = (t >> 1) ^ (0u - (t & 1u));
    if (v & exp_mask) {
        if (v >= msb)
            v += 0x01000000u;
        v += msb;
    }
    return (v >> 1) | (v << 31);
}

static FZ_HD uint64_t sleek_fwd64(uint64_t bits) {
    const uint64_t msb = (uint64_t)1 << 63, exp_mask = (uint64_t)0x7FF << 53;
    uint64_t v = (bits << 1) | (bits >> 63);
    if (v & exp_mask) {
        v -= msb;
        if ((v & exp_mask) == 0 || v >= msb)
            v -= (uint64_t)1 << 53;
    }
    return (v << 1) ^ ((uint64_t)0 - (v >> 63));
}

static FZ_HD uint64_t sleek_inv64(uint64_t t) {
    const uint64_t msb = (uint64_t)1 << 63, exp_mask = (uint64_t)0x7FF << 53;
    uint64_t v = (t >> 1) ^ ((uint64_t)0 - (t & 1u));
    if (v & exp_mask) {
        if (v >= msb)
            v += (uint64_t)1 << 53;
        v += msb;
    }
    return (v >> 1) | (v << 63);
}

/* Bits needed for the largest transformed value of a subchunk. */
static FZ_HD uint32_t sleek_width32(uint32_t max_val) {
    return 32u - (uint32_t)fz_clz32(max_val);
}
static FZ_HD uint32_t sleek_width64(uint64_t max_val) {
    return 64u - (uint32_t)fz_clz64(max_val);
}

/* Values per subchunk and encoded bytes of a subchunk of width n. */
static FZ_HD uint32_t sleek_sub_values(uint32_t esize) {
    return SLEEK_SUB_BYTES / esize;
}
static FZ_HD uint32_t sleek_sub_packed_bytes(uint32_t esize, uint32_t n) {
    return n * (SLEEK_SUB_BYTES / esize) / 8u;
}

/* ------------------------------------------------------------------------
 * Lossy mode: SLEEK's power-of-two quantizer (Algorithm 2), integer-only.
 *
 * The effective bound is eps = 2^k <= the requested bound. A value v is
 *  - quantized if it is zero or normal and |v| < T = 2 eps * 2^m (m the
 *    mantissa bits): bin = round(|v| / (2 eps)), computed by shifting the
 *    significand; it decodes to bin * 2 eps, exact because 2 eps is a power
 *    of two, so |decoded - v| <= eps with no exception;
 *  - kept bit-exact otherwise: |v| >= T (including inf and NaN) maps to
 *    abs_bits - bits(T) + 2^m (SLEEK's offset mapping, which packs tightly
 *    above the bins), and subnormals map above that range.
 * The magnitude then gets the sign in its LSB with -0 folded onto +0:
 * positive -> 2 mag, negative -> 2 mag - 1. k is clamped so that T stays
 * finite (k <= kmax); a bound below the smallest subnormal (k < kmin) is
 * stored lossless (effective bound 0).
 * ---------------------------------------------------------------------- */
#define SLEEK_Q32_KMIN (-149)
#define SLEEK_Q32_KMAX 103
#define SLEEK_Q64_KMIN (-1074)
#define SLEEK_Q64_KMAX 970

typedef struct sleek_q32 {
    int32_t k1;         /* k + 1: 2 eps = 2^k1 */
    uint32_t thr_e;     /* biased exponent of T */
    uint32_t threshold; /* bits of T */
    uint32_t lmax;      /* largest magnitude of the lossless range */
} sleek_q32;

typedef struct sleek_q64 {
    int32_t k1;
    uint32_t thr_e;
    uint64_t threshold;
    uint64_t lmax;
} sleek_q64;

static FZ_HD sleek_q32 sleek_q32_make(int32_t k) {
    sleek_q32 q;
    q.k1 = k + 1;
    q.thr_e = (uint32_t)(k + 1 + 23 + 127);
    q.threshold = q.thr_e << 23;
    q.lmax = 0x7FFFFFFFu - q.threshold + (1u << 23);
    return q;
}

static FZ_HD sleek_q64 sleek_q64_make(int32_t k) {
    sleek_q64 q;
    q.k1 = k + 1;
    q.thr_e = (uint32_t)(k + 1 + 52 + 1023);
    q.threshold = (uint64_t)q.thr_e << 52;
    q.lmax = 0x7FFFFFFFFFFFFFFFull - q.threshold + ((uint64_t)1 << 52);
    return q;
}

/* Shifts by s that give 0 for s >= the word size, as the device's clamping
 * shifts do (the host spells the test out). */
static FZ_HD uint32_t sleek_shr32_sat(uint32_t x, uint32_t s) {
#if defined(__CUDA_ARCH__)
    return __funnelshift_rc(x, 0u, s);
#else
    return s < 32 ? x >> s : 0;
#endif
}
static FZ_HD uint32_t sleek_shl32_sat(uint32_t x, uint32_t s) {
#if defined(__CUDA_ARCH__)
    return __funnelshift_lc(0u, x, s);
#else
    return s < 32 ? x << s : 0;
#endif
}

/* Sign into the LSB with -0 folded onto +0: 2 mag, or 2 mag - 1 for a
 * negative nonzero magnitude (the unsigned min turns 0 - 1 back into 0;
 * mag < 2^31 so 2 mag does not wrap). */
static FZ_HD uint32_t sleek_fold32(uint32_t mag, uint32_t sign) {
    const uint32_t twice = mag << 1, signed_code = twice - sign;
    return signed_code < twice ? signed_code : twice;
}
static FZ_HD uint64_t sleek_fold64(uint64_t mag, uint64_t sign) {
    const uint64_t twice = mag << 1, signed_code = twice - sign;
    return signed_code < twice ? signed_code : twice;
}

/* A quantizer's code from its bin: the bin where |v| < T and v is normal
 * or zero (the caller's bin is 0 for zero), the offset mapping at or
 * above T (inf and NaN too), subnormals above the lossless range; then the
 * sign. Every form of the quantizer (integer, and the float forms below)
 * ends here, so they differ only in how they compute the bin. */
static FZ_HD uint32_t sleek_code32(uint32_t bits, uint32_t bin, sleek_q32 q) {
    const uint32_t B = 1u << 23, abs = bits & 0x7FFFFFFFu;
    uint32_t mag = abs >= q.threshold ? abs - q.threshold + B : bin;
    if (abs < B) /* zero, or a subnormal kept exact */
        mag = abs ? q.lmax + abs : 0;
    return sleek_fold32(mag, bits >> 31);
}
static FZ_HD uint64_t sleek_code64(uint64_t bits, uint64_t bin, sleek_q64 q) {
    const uint64_t B = (uint64_t)1 << 52, abs = bits & 0x7FFFFFFFFFFFFFFFull;
    uint64_t mag = abs >= q.threshold ? abs - q.threshold + B : bin;
    if (abs < B)
        mag = abs ? q.lmax + abs : 0;
    return sleek_fold64(mag, bits >> 63);
}

/* Branch-free, as the GPU runs it per value. Below T, with shift = thr_e - e
 * >= 1: round(mant / 2^shift) = ((mant >> (shift - 1)) + 1) >> 1, which is
 * 0 for every shift >= 25 once the shift saturates; at or above T the
 * shift count wraps and the bin is not used. */
static FZ_HD uint32_t sleek_quant32(uint32_t bits, sleek_q32 q) {
    const uint32_t B = 1u << 23, abs = bits & 0x7FFFFFFFu;
    const uint32_t half_shift = q.thr_e - 1 - (abs >> 23);
    const uint32_t halves =
        sleek_shr32_sat((abs & (B - 1)) | B, half_shift) + 1;
    return sleek_code32(bits, halves >> 1, q);
}

static FZ_HD uint64_t sleek_shr64_sat(uint64_t x, uint32_t s) {
#if defined(__CUDA_ARCH__)
    uint64_t r; /* PTX clamps shift counts above 64 to 64 */
    asm("shr.b64 %0, %1, %2;" : "=l"(r) : "l"(x), "r"(s));
    return r;
#else
    return s < 64 ? x >> s : 0;
#endif
}
static FZ_HD uint64_t sleek_shl64_sat(uint64_t x, uint32_t s) {
#if defined(__CUDA_ARCH__)
    uint64_t r;
    asm("shl.b64 %0, %1, %2;" : "=l"(r) : "l"(x), "r"(s));
    return r;
#else
    return s < 64 ? x << s : 0;
#endif
}

/* sleek_quant32 for binary64 (bins are 0 for every shift >= 54). */
static FZ_HD uint64_t sleek_quant64(uint64_t bits, sleek_q64 q) {
    const uint64_t B = (uint64_t)1 << 52, abs = bits & 0x7FFFFFFFFFFFFFFFull;
    const uint32_t half_shift = q.thr_e - 1 - (uint32_t)(abs >> 52);
    const uint64_t halves =
        sleek_shr64_sat((abs & (B - 1)) | B, half_shift) + 1;
    return sleek_code64(bits, halves >> 1, q);
}

#if !defined(__CUDACC__)
/* 2^-k1 as a double (k1 = k + 1 within [-1073, 971]: a normal double). */
static inline double sleek_host_scale(int32_t k1) {
    return fz_f64_from_bits((uint64_t)(1023 - k1) << 52);
}

/* sleek_quant32 with the bin computed in binary64, which the compiler
 * vectorizes (the integer form needs a shift count per lane): for a
 * normal |v| < T, x = |v| * 2^-k1 is exact in binary64 (|v| >= 2^-126 and
 * 2^-k1 >= 2^-104 keep it normal), x < 2^24, so x + 0.5 is exact too and
 * the truncating conversion gives floor(x + 1/2), the integer form's
 * rounding. Values at or above T (inf and NaN too) take 0 instead, so that
 * the conversion stays defined (their bin is not used) with no float
 * compare, which would keep the compiler from vectorizing. The CPU encoder's
 * form; test_xform holds it equal to sleek_quant32. */
static inline uint32_t sleek_quant32_host(uint32_t bits, sleek_q32 q,
                                          double scale) {
    const uint32_t abs = bits & 0x7FFFFFFFu;
    const uint32_t below = abs < q.threshold ? abs : 0; /* x < 2^24 */
    const double x = (double)fz_f32_from_bits(below) * scale;
    const uint32_t bin = (uint32_t)(int32_t)(x + 0.5);
    return sleek_code32(bits, bin, q);
}
#endif

#if defined(__CUDACC__)
/* sleek_quant32 / 64 as the GPU encoders run it: the bin from the float
 * pipes instead of shifts (the integer unit was the encoder's busiest
 * pipe, run s182). For a normal |v| < T, x = |v| / 2^k1 comes from two
 * products by powers of two, 2^a and 2^b (a + b = -k1, each a normal
 * number for every k): a product is exact unless it underflows, and an
 * underflow leaves x < 2^-52 (f32) / 2^-485 (f64), whose bin is 0 either
 * way. Then bin = floor(x + 1/2) = the integer quantizer's rounding: the
 * add rounds down, which keeps the floor because every integer below
 * 2^24 / 2^53 is representable, and the conversion truncates. The other
 * cases select their own mapping, as in sleek_quant32. test_gpu_quant checks
 * it against sleek_quant32 on every f32 pattern at the extreme and middle
 * exponents. */
typedef struct sleek_fscale32 {
    float a, b;
} sleek_fscale32;
typedef struct sleek_fscale64 {
    double a, b;
} sleek_fscale64;

static __device__ __forceinline__ sleek_fscale32
sleek_fscale32_make(sleek_q32 q) {
    const int32_t a = -q.k1 / 2, b = -q.k1 - a; /* within [-52, 74] */
    sleek_fscale32 s;
    s.a = fz_f32_from_bits((uint32_t)(a + 127) << 23);
    s.b = fz_f32_from_bits((uint32_t)(b + 127) << 23);
    return s;
}
static __device__ __forceinline__ sleek_fscale64
sleek_fscale64_make(sleek_q64 q) {
    const int32_t a = -q.k1 / 2, b = -q.k1 - a; /* within [-486, 537] */
    sleek_fscale64 s;
    s.a = fz_f64_from_bits((uint64_t)(a + 1023) << 52);
    s.b = fz_f64_from_bits((uint64_t)(b + 1023) << 52);
    return s;
}

static __device__ __forceinline__ uint32_t sleek_quant32_fp(uint32_t bits,
                                                            sleek_q32 q,
                                                            sleek_fscale32 s) {
    const uint32_t abs = bits & 0x7FFFFFFFu;
    const float x = __fmul_rn(__fmul_rn(__uint_as_float(abs), s.a), s.b);
    const uint32_t bin = __float2uint_rz(__fadd_rd(x, 0.5f));
    return sleek_code32(bits, bin, q);
}

static __device__ __forceinline__ uint64_t sleek_quant64_fp(uint64_t bits,
                                                            sleek_q64 q,
                                                            sleek_fscale64 s) {
    const uint64_t abs = bits & 0x7FFFFFFFFFFFFFFFull;
    const double x =
        __dmul_rn(__dmul_rn(__longlong_as_double((long long)abs), s.a), s.b);
    const uint64_t bin = __double2ull_rz(__dadd_rd(x, 0.5));
    return sleek_code64(bits, bin, q);
}
#endif

/* Whether a code is one the quantizer can produce (canonical streams): only
 * magnitudes past the subnormal range are not. The decoders test this
 * inside the dequantizer (sleek_dequant32_checked); test_xform holds the
 * two equal. */
static FZ_HD int sleek_code_valid32(uint32_t enc, sleek_q32 q) {
    return (enc >> 1) + (enc & 1u) <= q.lmax + ((1u << 23) - 1);
}
static FZ_HD int sleek_code_valid64(uint64_t enc, sleek_q64 q) {
    return (enc >> 1) + (enc & 1u) <= q.lmax + (((uint64_t)1 << 52) - 1);
}

/* sleek_dequant32 that also ORs 1 into *invalid when the code is not one
 * the quantizer produces (!sleek_code_valid32): only a magnitude past the
 * subnormals' can be, and only the subnormal case reaches it (every other
 * case has mag <= lmax), so decoders check canonical codes at no cost on
 * the common path. */
static FZ_HD uint32_t sleek_dequant32_checked(uint32_t enc, sleek_q32 q,
                                              uint32_t *invalid) {
    const uint32_t B = 1u << 23;
    const uint32_t sign = enc & 1u, mag = (enc >> 1) + sign;
    uint32_t abs;
    if (mag > q.lmax) {
        abs = mag - q.lmax; /* subnormal */
        *invalid |= abs >= B;
    } else if (mag > B) {
        abs = mag - B + q.threshold;
    } else if (mag == 0) {
        abs = 0;
    } else { /* bin * 2^k1, built from the integer bin */
        const int32_t p = 31 - fz_clz32(mag);
        const int32_t biased = p + q.k1 + 127;
        abs = biased >= 1
                  ? (uint32_t)biased << 23 | ((mag << (23 - p)) & (B - 1))
                  : mag << (q.k1 + 149);
    }
    return abs | sign << 31;
}

/* sleek_dequant32_checked for binary64. */
static FZ_HD uint64_t sleek_dequant64_checked(uint64_t enc, sleek_q64 q,
                                              uint32_t *invalid) {
    const uint64_t B = (uint64_t)1 << 52;
    const uint64_t sign = enc & 1u, mag = (enc >> 1) + sign;
    uint64_t abs;
    if (mag > q.lmax) {
        abs = mag - q.lmax; /* subnormal */
        *invalid |= abs >= B;
    } else if (mag > B) {
        abs = mag - B + q.threshold;
    } else if (mag == 0) {
        abs = 0;
    } else {
        const int32_t p = 63 - fz_clz64(mag);
        const int32_t biased = p + q.k1 + 1023;
        abs = biased >= 1
                  ? (uint64_t)biased << 52 | ((mag << (52 - p)) & (B - 1))
                  : mag << (q.k1 + 1074);
    }
    return abs | sign << 63;
}

/* Codes below SLEEK_BIN_CODES are bins or zero (mag <= 2^m), the common
 * case of smooth data, and always valid. Where 2 eps = 2^k1 is a normal
 * number (sleek_bins_direct), such a code dequantizes without a branch as
 * (float)bin * 2^k1: the conversion is exact (bin <= 2^m) and so is the
 * product, a normal number (bin >= 1, and bin * 2^k1 <= T, finite) or 0.
 * The decoders use it for whole groups of such codes; test_xform checks it
 * against sleek_dequant32 / 64 on every bin code at the extreme exponents. */
#define SLEEK_BIN_CODES32 (1u << 24)
#define SLEEK_BIN_CODES64 ((uint64_t)1 << 53)
static FZ_HD int sleek_bins_direct32(sleek_q32 q) {
    return q.k1 >= -126;
}
static FZ_HD int sleek_bins_direct64(sleek_q64 q) {
    return q.k1 >= -1022;
}
/* 2^k1, for sleek_bins_direct mappings */
static FZ_HD float sleek_bin_scale32(sleek_q32 q) {
    return fz_f32_from_bits((uint32_t)(q.k1 + 127) << 23);
}
static FZ_HD double sleek_bin_scale64(sleek_q64 q) {
    return fz_f64_from_bits((uint64_t)(q.k1 + 1023) << 52);
}
static FZ_HD uint32_t sleek_dequant32_bin(uint32_t enc, float scale) {
    const uint32_t sign = enc & 1u, mag = (enc >> 1) + sign;
    return fz_f32_bits((float)mag * scale) | sign << 31;
}
static FZ_HD uint64_t sleek_dequant64_bin(uint64_t enc, double scale) {
    const uint64_t sign = enc & 1u, mag = (enc >> 1) + sign;
    return fz_f64_bits((double)mag * scale) | sign << 63;
}

/* Dequantization of a code the caller knows to be valid. */
static FZ_HD uint32_t sleek_dequant32(uint32_t enc, sleek_q32 q) {
    uint32_t invalid = 0;
    return sleek_dequant32_checked(enc, q, &invalid);
}
static FZ_HD uint64_t sleek_dequant64(uint64_t enc, sleek_q64 q) {
    uint32_t invalid = 0;
    return sleek_dequant64_checked(enc, q, &invalid);
}

/* floor(log2(bound)) for a finite bound > 0, from its binary64 bits. */
static FZ_HD int32_t sleek_floor_log2(uint64_t bits) {
    const uint32_t e = (uint32_t)(bits >> 52) & 0x7FF;
    const uint64_t m = bits & (((uint64_t)1 << 52) - 1);
    return e ? (int32_t)e - 1023 : (63 - fz_clz64(m)) - 1074;
}

/* Effective bound exponent for a dtype (4 or 8 bytes) and an absolute bound
 * (binary64 bits, finite, >= 0). Returns 0 and sets *k, or returns 1 when
 * the data must be stored lossless (bound 0 or below the finest spacing). */
static FZ_HD int sleek_bound_exponent(uint32_t esize, uint64_t bound_bits,
                                      int32_t *k) {
    if ((bound_bits & 0x7FFFFFFFFFFFFFFFull) == 0)
        return 1;
    int32_t e = sleek_floor_log2(bound_bits);
    const int32_t kmin = esize == 4 ? SLEEK_Q32_KMIN : SLEEK_Q64_KMIN;
    const int32_t kmax = esize == 4 ? SLEEK_Q32_KMAX : SLEEK_Q64_KMAX;
    if (e < kmin)
        return 1;
    *k = e > kmax ? kmax : e;
    return 0;
}

/* binary64 bits of 2^k (k within the binary64 normal/subnormal range). */
static FZ_HD uint64_t sleek_pow2_bits(int32_t k) {
    return k >= -1022 ? (uint64_t)(k + 1023) << 52 : (uint64_t)1 << (k + 1074);
}

/* REL on the GPU (LOSSY.md 5.1) resolves its bound first from a sample of
 * SLEEK_SAMPLE values (all of them when there are fewer): position k of m
 * lies in the k-th of m equal strata of the n values, at an offset mixed
 * from k, so that the sample does not alias with array extents that are
 * powers of two (a plain stride would read one column of a 3-D field). */
#define SLEEK_SAMPLE 65536u
static FZ_HD uint64_t sleek_sample_index(uint64_t k, uint64_t n, uint64_t m) {
    const uint64_t q = n / m, r = n % m;
    const uint64_t lo = k * q + k * r / m;
    const uint64_t hi = (k + 1) * q + (k + 1) * r / m;
    uint32_t h = (uint32_t)k * 0x9E3779B1u;
    h ^= h >> 15;
    h *= 0x85EBCA77u;
    h ^= h >> 13;
    return lo + h % (hi - lo);
}

/* Which mapping a stream's chunks use, from its effective bound (binary64
 * bits): 0 -> lossless; else eps = 2^k, which must be an exact power of two
 * inside [KMIN, KMAX] for the element size. Returns 0, or 1 if invalid. */
static FZ_HD int sleek_mapping_of(uint32_t esize, uint64_t bound_eff_bits,
                                  int *lossless, int32_t *k) {
    *lossless = 1;
    *k = 0;
    if (bound_eff_bits == 0)
        return 0;
    const int32_t e = sleek_floor_log2(bound_eff_bits);
    if ((bound_eff_bits >> 63) || ((bound_eff_bits >> 52) & 0x7FF) == 0x7FF ||
        sleek_pow2_bits(e) != bound_eff_bits ||
        e < (esize == 4 ? SLEEK_Q32_KMIN : SLEEK_Q64_KMIN) ||
        e > (esize == 4 ? SLEEK_Q32_KMAX : SLEEK_Q64_KMAX))
        return 1;
    *lossless = 0;
    *k = e;
    return 0;
}

#endif /* SLEEK_XFORM_H */
