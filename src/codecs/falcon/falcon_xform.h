/* Falcon (Spatio-Temporal-Lab, "Falcon: GPU-Based Floating-point Adaptive
 * Lossless Compression"): the decimal-place computation, the per-value
 * integer transforms and the chunk layout rules, as FZ_HD functions that
 * the CPU and GPU backends both include. Every decision the encoder makes is
 * taken here, with integer arithmetic or with floating-point operations
 * whose results are exact or correctly rounded (one IEEE-754 operation at a
 * time, no contraction: the CUDA build uses -fmad=false and the intrinsics
 * below), so both backends write the same bytes.
 *
 * Decimal place (docs/FALCON.md, section 2). For a finite nonzero normal
 * value v, alpha(v) is the smallest a in [0, AMAX] such that some integer w
 * with |w| < 10^D satisfies fl(w / 10^a) = v (the decimal w * 10^-a reads
 * back as v); w is then unique and beta = digits(w) is the decimal
 * significand. f64: AMAX = 22 (10^22 is the largest exact power of ten),
 * D = 15; f32: AMAX = 10, D = 6 (computed in binary64, checked with binary32
 * division). +0.0 has alpha = 0, w = 0. Everything else (-0.0, subnormals,
 * infinities, NaNs, values with no such decimal) is an exception.
 *
 * The search (Algorithm 2 of the paper, made exact): for a = 0, 1, ...:
 * t = |v| * 10^a (one rounded multiplication), r = nearest integer to t,
 * d = |t - r| (exact). Theorem 4 (rebuilt in docs/FALCON.md): if an a-place
 * decimal w of fewer than D digits reads back as v, then r = w and
 * d < t * 2^-51 (f64) or t * 2^-23 (f32). So a is skipped when d is at least
 * that bound, and otherwise accepted iff r / 10^a (one correctly rounded
 * division, the decoder's own operation) gives v back. Once t >= 10^D no
 * larger a can work. */
#ifndef FALCON_XFORM_H
#define FALCON_XFORM_H

#include <math.h>

#include "../../common/fz_hash.h"
#include "../../common/fz_portable.h"

#define FALCON_CODEC_ID 3u
/* Version 2: data checksums are square sums (fz_qsum, FORMAT.md 6.2);
 * version 1 (still decoded) used fz_hash. The chunk layout is the same. */
#define FALCON_CODEC_VERSION 2u
#define FALCON_CODEC_VERSION_MIN 1u

/* The data checksum of a stream of codec version `version`. */
static FZ_HD fz_sum_kind falcon_sum_kind(uint32_t version) {
    return version >= 2 ? FZ_SUM_SQUARE : FZ_SUM_MIX;
}
#define FALCON_DEFAULT_VALUES 1025u /* first value + 1024 deltas */
#define FALCON_MAX_VALUES 1025u     /* at most 32 deltas per GPU lane */
#define FALCON_CASE2 0xFFu          /* scale byte of a Case 2 chunk */
#define FALCON_HEAD_BYTES 3u        /* scale, width, first_len */

#define FALCON_AMAX64 22
#define FALCON_DMAX64 15
#define FALCON_AMAX32 10
#define FALCON_DMAX32 6
#define FALCON_LIMIT64 1000000000000000ull /* 10^15 */
#define FALCON_LIMIT32 1000000u            /* 10^6 */

/* ------------------------------------------------ exact IEEE operations */
static FZ_HD double falcon_mul(double a, double b) {
#if defined(__CUDA_ARCH__)
    return __dmul_rn(a, b);
#else
    return a * b;
#endif
}
static FZ_HD double falcon_add(double a, double b) {
#if defined(__CUDA_ARCH__)
    return __dadd_rn(a, b);
#else
    return a + b;
#endif
}
static FZ_HD double falcon_div(double a, double b) {
#if defined(__CUDA_ARCH__)
    return __ddiv_rn(a, b);
#else
    return a / b;
#endif
}
static FZ_HD float falcon_divf(float a, float b) {
#if defined(__CUDA_ARCH__)
    return __fdiv_rn(a, b);
#else
    return a / b;
#endif
}
static FZ_HD double falcon_fma(double a, double b, double c) {
#if defined(__CUDA_ARCH__)
    return __fma_rn(a, b, c);
#else
    return fma(a, b, c);
#endif
}

/* fl32(r / p) for p = 10^a, 0 <= a <= AMAX32 (exact in binary32), and an
 * integer 0 <= r < 10^6 (exact), from y = fl32(1 / p) by one product and
 * two fused multiply-adds (Markstein's correction step): the remainder
 * r - q0 p is exact and q0 + rem y rounds to the quotient. It equals the
 * correctly rounded division for every such r and a, which
 * tests/test_falcon.c (`readback32`) checks exhaustively (11 M cases);
 * the GPU uses it for the binary32 read-back, where a division is a
 * reciprocal approximation, refinements and a range check with a slow
 * path per value. */
static FZ_HD float falcon_divf_pow10(float r, float p, float y) {
#if defined(__CUDA_ARCH__)
    const float q0 = __fmul_rn(r, y);
    return __fmaf_rn(__fmaf_rn(-q0, p, r), y, q0);
#else
    const float q0 = r * y;
    return fmaf(fmaf(-q0, p, r), y, q0);
#endif
}

/* 2^23 + m as a binary32 (exact for m < 2^23) and back: the integer to
 * float conversions of the GPU's binary32 forms without a conversion
 * instruction (F2F / I2F / F2I run at a quarter of the FMA rate). */
#define FALCON_F32_2P23 0x4B000000u /* the bits of 2^23 */

static FZ_HD float falcon_u32_to_float(uint32_t m) {
    return fz_f32_from_bits(FALCON_F32_2P23 | m) - 0x1p23f;
}

/* 10^a as a binary64, exact for 0 <= a <= 22 (every partial product is a
 * power of ten below 10^22, hence exact). */
static FZ_HD double falcon_pow10(int a) {
    double p = 1.0;
    for (int k = 0; k < a; k++)
        p = falcon_mul(p, 10.0);
    return p;
}

/* Nearest integer to t, 0 <= t < 2^52 (ties to even): two exact-rounding
 * additions, the same on every IEEE-754 machine. */
static FZ_HD double falcon_round(double t) {
    const double big = 4503599627370496.0; /* 2^52 */
    return falcon_add(falcon_add(t, big), -big);
}

static FZ_HD uint32_t falcon_popc32(uint32_t x) {
#if defined(__CUDA_ARCH__)
    return (uint32_t)__popc(x);
#else
    return (uint32_t)__builtin_popcount(x);
#endif
}

/* Number of decimal digits of m (0 for m = 0). */
static FZ_HD int falcon_digits(uint64_t m) {
    int d = 0;
    for (uint64_t p = 1; d < 20 && m >= p; d++)
        p *= 10u;
    return d;
}

/* -------------------------------------------------------- decimal place */
/* One step of the search at p = 10^a (exact): 1 when a is accepted (the
 * integer in *mag), 0 when it is not, -1 when t >= 10^D (then no a' >= a
 * is accepted either: t grows with a). */
static FZ_HD int falcon_step64(double v, double p, uint64_t *mag) {
    const double limit = (double)FALCON_LIMIT64;
    const double t = falcon_mul(v, p);
    if (t >= limit)
        return -1;
    const double r = falcon_round(t);
    const double d = t >= r ? falcon_add(t, -r) : falcon_add(r, -t);
    if (d < falcon_mul(t, 0x1p-51) && r < limit && falcon_div(r, p) == v) {
        *mag = (uint64_t)r;
        return 1;
    }
    return 0;
}

/* Whether fl64(r / p) == v, without a division, for an integer
 * 1 <= r < 10^15, p = 10^a (a <= 22) and a normal v >= 2^-900 (bits:
 * its bits). Exact, by this argument. Write v = m 2^e (2^52 <= m < 2^53)
 * and h = 2^(e-1), half an ulp of v. fl64(r / p) == v iff
 * -h' < r / p - v < h, where h' = h except when v is a power of two
 * (h' = h / 2: its lower neighbour is closer); equality (a tie) would
 * make r = (2m + 1) 5^a 2^(e+a-1) or (2m - 1) ... an odd number above
 * 2^53 times a power of two, never an integer below 10^15. Nor does r / p
 * ever fall in [v - h, v - h / 2) for v = 2^(e+52): r = 5^a 2^(a+e+52) -
 * p delta with 0 < delta < h needs p delta 2^-(a+e+52) to be a positive
 * integer (or p delta one, if a+e+52 >= 0, then r > 2^53), so delta >=
 * 2^(e+52) / 5^a > 2^e > h. So the test is |r / p - v| < h, i.e.
 * |d| < h p with d = r - v p and h p exact. The fused d = fl64(r - v p)
 * is exact whenever |r - v p| <= 2 h p = 5^a 2^(e+a): it is then a
 * multiple of 2^(e+a), at most 5^a < 2^52 times it (or, for e + a >= 0, an
 * integer of magnitude below 2 h p < 1/4, i.e. 0); a larger |r - v p|
 * rounds to |d| >= 2 h p (rounding is monotone, 2 h p is a float), and is
 * rejected as it should be. tests/test_falcon.c (`readback64`) checks it
 * against the division. */
static FZ_HD int falcon_reads_back64(double r, double p, double v,
                                     uint64_t bits) {
    const double h = fz_f64_from_bits((bits & 0x7FF0000000000000ull) -
                                      (53ull << 52)); /* ulp(v) / 2 */
    const double d = falcon_fma(-v, p, r);
    return fabs(d) < falcon_mul(h, p);
}

/* The GPU's binary64 step (for falcon_fits64_gpu): falcon_step64's answer
 * and integer with the read-back by falcon_reads_back64. The distance test
 * goes too: a read-back that gives v implies it (|r - t| <= |r - v p| +
 * |v p - t| < 2^-53 v p + 2^-53 t). r = 0 (t < 1/2) never reads back
 * as a normal v, and r >= 1 puts v above 2^-900. */
static FZ_HD int falcon_accept64(double v, uint64_t bits, double p,
                                 uint64_t *mag) {
    const double r = falcon_round(falcon_mul(v, p));
    if (r >= 1.0 && r < (double)FALCON_LIMIT64 &&
        falcon_reads_back64(r, p, v, bits)) {
        *mag = (uint64_t)r;
        return 1;
    }
    return 0;
}

/* The binary32 step: t in binary64 (exact conversion, one rounded
 * multiplication), acceptance by binary32 division. */
static FZ_HD int falcon_step32(float vf, double p, uint32_t *mag) {
    const double limit = (double)FALCON_LIMIT32;
    const double t = falcon_mul((double)vf, p);
    if (t >= limit)
        return -1;
    const double r = falcon_round(t);
    const double d = t >= r ? falcon_add(t, -r) : falcon_add(r, -t);
    if (d < falcon_mul(t, 0x1p-23) && r < limit &&
        falcon_divf((float)r, (float)p) == vf) {
        *mag = (uint32_t)r;
        return 1;
    }
    return 0;
}

/* The GPU's binary32 step, all in binary32, the same answer and integer
 * as falcon_step32 (y = fl32(1 / pf), pf = 10^a exact in binary32 as
 * 5^a < 2^24). t = v 10^a is exact in binary64 (24 + 24 bits), so the
 * fused s = fl32(t + 2^23) is 2^23 + r with r the integer nearest t,
 * ties to even, as falcon_round gives it, whenever t < 2^23; for larger
 * t the bits of s give r >= 2^23, rejected like t >= 10^6. The read-back
 * falcon_divf_pow10 equals the division (test `readback32`), and a
 * read-back that gives v implies the distance test (|r - t| <= 10^a
 * ulp(v) / 2 <= t 2^-24), so it goes without. `fits32_gpu` in
 * tests/test_falcon.c checks it against falcon_step32. */
static FZ_HD int falcon_accept32(float vf, float pf, float y, uint32_t *mag) {
#if defined(__CUDA_ARCH__)
    const float s = __fmaf_rn(vf, pf, 0x1p23f);
#else
    const float s = fmaf(vf, pf, 0x1p23f);
#endif
    const uint32_t r = fz_f32_bits(s) - FALCON_F32_2P23;
    if (r < FALCON_LIMIT32 && falcon_divf_pow10(s - 0x1p23f, pf, y) == vf) {
        *mag = r;
        return 1;
    }
    return 0;
}

/* The search from a = a0 (p0 = 10^a0, exact; a0 <= AMAX) on: the first
 * accepted a >= a0 with |w| in *mag, -1 when none is (+0.0: a0, *mag = 0).
 * From a0 = 0 it is alpha (or -1 for an exception); from a larger a0 see
 * falcon_scan. */
static FZ_HD int falcon_dp64_from(uint64_t bits, int a0, double p0,
                                  uint64_t *mag) {
    *mag = 0;
    if (bits == 0)
        return a0;
    const uint64_t abs = bits & 0x7FFFFFFFFFFFFFFFull;
    const uint32_t e = (uint32_t)(abs >> 52);
    if (e == 0 || e == 0x7FF) /* -0.0, subnormal, inf, NaN */
        return -1;
    const double v = fz_f64_from_bits(abs);
    double p = p0;
    for (int a = a0; a <= FALCON_AMAX64; a++) {
        const int step = falcon_step64(v, p, mag);
        if (step)
            return step > 0 ? a : -1;
        p = falcon_mul(p, 10.0);
    }
    return -1;
}

static FZ_HD int falcon_dp32_from(uint32_t bits, int a0, double p0,
                                  uint32_t *mag) {
    *mag = 0;
    if (bits == 0)
        return a0;
    const uint32_t abs = bits & 0x7FFFFFFFu;
    const uint32_t e = abs >> 23;
    if (e == 0 || e == 0xFF)
        return -1;
    const float vf = fz_f32_from_bits(abs);
    double p = p0;
    for (int a = a0; a <= FALCON_AMAX32; a++) {
        const int step = falcon_step32(vf, p, mag);
        if (step)
            return step > 0 ? a : -1;
        p = falcon_mul(p, 10.0);
    }
    return -1;
}

/* alpha of a binary64 bit pattern, |w| in *mag; -1 for an exception. */
static FZ_HD int falcon_dp64(uint64_t bits, uint64_t *mag) {
    return falcon_dp64_from(bits, 0, 1.0, mag);
}

/* alpha of a binary32 bit pattern. */
static FZ_HD int falcon_dp32(uint32_t bits, uint32_t *mag) {
    return falcon_dp32_from(bits, 0, 1.0, mag);
}

/* What a value is without a search step: 1 for +0.0 (it fits at every A,
 * with the integer 0), 0 for -0.0, subnormals, infinities and NaNs (they
 * never fit), -1 for a normal value (the step decides). */
static FZ_HD int falcon_trivial64(uint64_t bits) {
    if (bits == 0)
        return 1;
    const uint32_t e = (uint32_t)((bits >> 52) & 0x7FFu);
    return e == 0 || e == 0x7FF ? 0 : -1;
}

/* Whether the search accepts the value at a = A, p = 10^A, A <= AMAX
 * (+0.0: yes, *mag = 0; exceptions: no): one step instead of the search.
 * See falcon_scan for what it tells about the chunk. */
static FZ_HD int falcon_fits64(uint64_t bits, double p, uint64_t *mag) {
    *mag = 0;
    const int trivial = falcon_trivial64(bits);
    if (trivial >= 0)
        return trivial;
    return falcon_step64(fz_f64_from_bits(bits & 0x7FFFFFFFFFFFFFFFull), p,
                         mag) > 0;
}
/* The GPU's form: the same answer and integer (falcon_accept64). */
static FZ_HD int falcon_fits64_gpu(uint64_t bits, double p, uint64_t *mag) {
    *mag = 0;
    const int trivial = falcon_trivial64(bits);
    if (trivial >= 0)
        return trivial;
    const uint64_t abs = bits & 0x7FFFFFFFFFFFFFFFull;
    return falcon_accept64(fz_f64_from_bits(abs), abs, p, mag);
}

/* The reference (falcon_step32, used by the CPU) and the GPU's form
 * (falcon_accept32, y = fl32(1 / p)): the same answer and integer. */
static FZ_HD int falcon_fits32(uint32_t bits, double p, uint32_t *mag) {
    *mag = 0;
    if (bits == 0)
        return 1;
    const uint32_t abs = bits & 0x7FFFFFFFu;
    const uint32_t e = abs >> 23;
    if (e == 0 || e == 0xFF)
        return 0;
    return falcon_step32(fz_f32_from_bits(abs), p, mag) > 0;
}
static FZ_HD int falcon_fits32_by(uint32_t bits, float p, float y,
                                  uint32_t *mag) {
    *mag = 0;
    if (bits == 0)
        return 1;
    const uint32_t abs = bits & 0x7FFFFFFFu;
    if (abs < 0x00800000u) /* -0.0 and subnormals */
        return 0;
    /* inf and NaN need no test: s is inf or NaN, whose bits give r >= 2^23
     * (falcon_accept32), rejected with the limit */
    return falcon_accept32(fz_f32_from_bits(abs), p, y, mag);
}

/* ------------------------------------------------------- chunk decision */
/* Case 1 needs every value to have a decimal place and, at the chunk's
 * alpha* = max alpha_i, every W_i = |w_i| * 10^(alpha* - alpha_i) < 10^D
 * (i.e. digits(w_i) - alpha_i + alpha* <= D for w_i != 0). A scan keeps
 * amax = the max alpha_i so far, p = 10^amax and top = max W_i at amax; it
 * sets case2 once the answer is provably Case 2 (adding values can only
 * confirm it). Values can be added in any order, and scans of parts of the
 * chunk merge (falcon_scan_raise to the largest amax, then any case2).
 *
 * Lemma (different decimals). Two different decimals x = r / 10^a,
 * y = s / 10^b (integers 0 < r, s < 10^D) never round to the same normal
 * float v: with 10^k <= x < y, both are multiples of 10^(k+1-D), so
 * y - x >= 10^(k+1-D), while both within half an ulp of v gives
 * y - x <= ulp(v) < 10^(k+1) * 2^-52 (f64; f32: 2^-23) (1 + tiny)
 * < 10^(k+1-D) as 2^-52 < 10^-15 and 2^-23 < 10^-6.
 *
 * Resumed search (falcon_scan_add64/32): each value's search starts at the
 * running amax A instead of 0, and the value adds its integer at
 * max(alpha, A) to top. Proof that the state stays exact (amax = max
 * alpha_i, top = max W_i at amax) or case2 is right:
 *  - an exception: no a is accepted (an accepted a is a decimal place), so
 *    the search returns -1: case2, as the chunk is Case 2;
 *  - alpha >= A: a in [A, alpha) is not accepted (alpha is the smallest)
 *    and t < 10^D there (t grows with a, and at alpha t is within 1/2 of
 *    |w| <= 10^D - 1), so the search returns (alpha, w) as from 0;
 *  - alpha < A: W = |w| 10^(A - alpha) is the same rational at A; if
 *    W < 10^D it is an A-place decimal of v, Theorem 4 at A gives r = W
 *    and the step accepts (the division is correctly rounded: fl(W/10^A)
 *    = v). If W >= 10^D, no a >= A is accepted: an accepted (a, r) is a
 *    decimal of v with r < 10^D, equal to w / 10^alpha by the lemma, so
 *    r = w 10^(a - alpha) >= W >= 10^D. The search returns -1: case2,
 *    and rightly so: digits(w) - alpha + alpha* >= digits(W) > D.
 * Raising amax from A to a multiplies top by 10^(a - A); once that reaches
 * 10^D some W_i at the final alpha* >= a is >= 10^D: case2. At the end,
 * case2 unset means every W_i < 10^D at amax = alpha*: the scale is amax.
 * (tests/test_falcon.c compares it with the search from 0 and digit
 * counts, on whole chunks and on 32 interleaved parts merged.)
 *
 * Shortcut (the GPU's guess, e.g. the previous chunk's scale): if every
 * value fits at one A (falcon_fits*) and A = 0 or some value's integer r_i
 * at A is not a multiple of 10, the scale is A. Proof. (1) No exception
 * and alpha_i <= A: the search cannot stop early (t grows with a and is
 * < 10^D at A) and accepts at A at the latest. (2) r_i = w_i *
 * 10^(A - alpha_i): both read back as v_i (w_i is what the search
 * accepted, r_i what fits accepted), both < 10^D: equal by the lemma. So
 * every W_i at A is r_i < 10^D, and a value with r_i not a multiple of 10
 * has alpha_i = A. Hence alpha* = A (A = 0: by (1)), no exception, every
 * W_i < 10^D: the scale is A. Otherwise the full scan decides
 * (tests/test_falcon.c checks fits against the search for every A on its
 * decimal-place test set). */
typedef struct falcon_scan {
    int case2;    /* the chunk is Case 2 */
    int amax;     /* max alpha_i */
    double p;     /* 10^amax */
    uint64_t top; /* max |w_i| * 10^(amax - alpha_i), < limit unless case2 */
} falcon_scan;

static FZ_HD falcon_scan falcon_scan_init(void) {
    falcon_scan s;
    s.case2 = 0;
    s.amax = 0;
    s.p = 1.0;
    s.top = 0;
    return s;
}

/* amax := a (>= amax), top scaled along; limit = 10^D. */
static FZ_HD void falcon_scan_raise(falcon_scan *s, int a, uint64_t limit) {
    for (; s->amax < a && !s->case2; s->amax++) {
        s->p = falcon_mul(s->p, 10.0);
        s->top *= 10u; /* top < 10^D: no overflow */
        s->case2 = s->top >= limit;
    }
}

static FZ_HD void falcon_scan_take(falcon_scan *s, int a, uint64_t mag,
                                   uint64_t limit) {
    if (a < 0) {
        s->case2 = 1;
        return;
    }
    falcon_scan_raise(s, a, limit);
    if (mag > s->top)
        s->top = mag;
}

static FZ_HD void falcon_scan_add64(falcon_scan *s, uint64_t bits) {
    if (s->case2)
        return;
    uint64_t mag;
    const int a = falcon_dp64_from(bits, s->amax, s->p, &mag);
    falcon_scan_take(s, a, mag, FALCON_LIMIT64);
}

static FZ_HD void falcon_scan_add32(falcon_scan *s, uint32_t bits) {
    if (s->case2)
        return;
    uint32_t mag;
    const int a = falcon_dp32_from(bits, s->amax, s->p, &mag);
    falcon_scan_take(s, a, mag, FALCON_LIMIT32);
}

/* The walk down (the GPU's guess too high). If every value fits at A and
 * z is the least number of trailing decimal zeros of the integers r_i at
 * A (r_i = 0 counting as any number), the scale is max(A - z, 0), found in
 * one try instead of one per place. Proof. As in the shortcut, alpha_i <=
 * A and r_i = w_i 10^(A - alpha_i). For alpha_i > 0, w_i is not a multiple
 * of 10: else w_i / 10 at alpha_i - 1 would be a decimal of v_i below
 * 10^D, which Theorem 4 accepts there, against alpha_i being the least.
 * So r_i != 0 has exactly A - alpha_i trailing zeros when alpha_i > 0 and
 * at least A when alpha_i = 0. Hence z = A - alpha* when alpha* > 0 and z
 * >= A when alpha* = 0. Case 1 holds at alpha* as in the shortcut (every
 * W_i = r_i / 10^(A - alpha*) < 10^D). falcon_dec_zeros counts up to
 * FALCON_DOWN_MAX: at the cap the scale is only known to be at most
 * A - FALCON_DOWN_MAX. (tests/test_falcon.c checks the rule against the
 * scan for every A on its chunks.) */
#define FALCON_DOWN_MAX 4u

/* min(trailing decimal zeros of r, FALCON_DOWN_MAX); the cap for r = 0.
 * One 64-bit remainder, as the plain multiple-of-10 test takes. */
static FZ_HD uint32_t falcon_dec_zeros(uint64_t r) {
    const uint32_t low = (uint32_t)(r % 10000u);
    return (uint32_t)(low % 10u == 0) + (uint32_t)(low % 100u == 0) +
           (uint32_t)(low % 1000u == 0) + (uint32_t)(low == 0);
}

/* The walk down's answer after a try at A where every value fits and z is
 * the least falcon_dec_zeros of the integers: the scale, or -1 when z is
 * at the cap and A > cap (the scale is at most A - FALCON_DOWN_MAX: try
 * there). z = 0 (a witness) gives A, the shortcut's answer. */
static FZ_HD int falcon_walk_down(int A, uint32_t z) {
    if (z < FALCON_DOWN_MAX || A <= (int)z)
        return A > (int)z ? A - (int)z : 0;
    return -1;
}

/* The chunk's scale byte: alpha* (Case 1) or FALCON_CASE2. */
static FZ_HD uint32_t falcon_scale_of(const falcon_scan *s) {
    return s->case2 ? FALCON_CASE2 : (uint32_t)s->amax;
}

/* ----------------------------------------------------- value <-> integer
 * Case 1: s = round(v * 10^alpha*) (signed). With the chunk condition this
 * is exactly w_i * 10^(alpha* - alpha_i) (Theorem 5), and the decoder's
 * s / 10^alpha* (one correctly rounded division) gives v back.
 * Case 2: s = zigzag of the bit pattern read as a signed integer.
 * p is falcon_pow10(alpha*). */
static FZ_HD uint64_t falcon_zz64(uint64_t x) {
    return (x << 1) ^ ((uint64_t)0 - (x >> 63));
}
static FZ_HD uint64_t falcon_unzz64(uint64_t z) {
    return (z >> 1) ^ ((uint64_t)0 - (z & 1u));
}
static FZ_HD uint32_t falcon_zz32(uint32_t x) {
    return (x << 1) ^ (0u - (x >> 31));
}
static FZ_HD uint32_t falcon_unzz32(uint32_t z) {
    return (z >> 1) ^ (0u - (z & 1u));
}

/* Case 1: the value's integer at p = 10^scale. */
static FZ_HD uint64_t falcon_fwd64_case1(uint64_t bits, double p) {
    const uint64_t mag = (uint64_t)falcon_round(
        falcon_mul(fz_f64_from_bits(bits & 0x7FFFFFFFFFFFFFFFull), p));
    return (bits >> 63) ? (uint64_t)0 - mag : mag;
}

static FZ_HD uint32_t falcon_fwd32_case1(uint32_t bits, double p) {
    const uint32_t mag = (uint32_t)falcon_round(
        falcon_mul((double)fz_f32_from_bits(bits & 0x7FFFFFFFu), p));
    return (bits >> 31) ? 0u - mag : mag;
}

static FZ_HD uint64_t falcon_fwd64(uint64_t bits, uint32_t scale, double p) {
    return scale == FALCON_CASE2 ? falcon_zz64(bits)
                                 : falcon_fwd64_case1(bits, p);
}

static FZ_HD uint32_t falcon_fwd32(uint32_t bits, uint32_t scale, double p) {
    return scale == FALCON_CASE2 ? falcon_zz32(bits)
                                 : falcon_fwd32_case1(bits, p);
}

/* Case 1 integer back to bits; s must satisfy falcon_valid_case1*. */
static FZ_HD uint64_t falcon_inv64(uint64_t s, uint32_t scale, double p) {
    if (scale == FALCON_CASE2)
        return falcon_unzz64(s);
    const int neg = (int64_t)s < 0;
    const uint64_t mag = neg ? (uint64_t)0 - s : s;
    const uint64_t abs = fz_f64_bits(falcon_div((double)mag, p));
    return mag ? abs | (uint64_t)neg << 63 : 0;
}
/* Case 1 integer back to bits by the division (the CPU) or, with y =
 * fl32(1 / p), by falcon_divf_pow10 (the GPU; equal, test `readback32`);
 * the result is only meaningful for valid integers
 * (falcon_valid_case1_32). */
static FZ_HD uint32_t falcon_inv32(uint32_t s, uint32_t scale, double p) {
    if (scale == FALCON_CASE2)
        return falcon_unzz32(s);
    const int neg = (int32_t)s < 0;
    const uint32_t mag = neg ? 0u - s : s;
    const uint32_t abs = fz_f32_bits(falcon_divf((float)mag, (float)p));
    return mag ? abs | (uint32_t)neg << 31 : 0;
}
static FZ_HD uint32_t falcon_inv32_by(uint32_t s, uint32_t scale, float p,
                                      float y) {
    if (scale == FALCON_CASE2)
        return falcon_unzz32(s);
    const int neg = (int32_t)s < 0;
    const uint32_t mag = neg ? 0u - s : s;
    const uint32_t abs =
        fz_f32_bits(falcon_divf_pow10(falcon_u32_to_float(mag), p, y));
    return mag ? abs | (uint32_t)neg << 31 : 0;
}

/* Decoder checks of a Case 1 integer: the encoder only writes |s| < 10^D.
 * Its canonical chunk also has some s_i not divisible by 10 when
 * alpha* > 0 (otherwise alpha* was not the max): see falcon_tz_ok. */
static FZ_HD int falcon_valid_case1_64(uint64_t s) {
    const uint64_t mag = (int64_t)s < 0 ? (uint64_t)0 - s : s;
    return mag < FALCON_LIMIT64;
}
static FZ_HD int falcon_valid_case1_32(uint32_t s) {
    const uint32_t mag = (int32_t)s < 0 ? 0u - s : s;
    return mag < FALCON_LIMIT32;
}
/* Whether s (a valid Case 1 integer) is not a multiple of 10. */
static FZ_HD int falcon_not_mult10_64(uint64_t s) {
    const uint64_t mag = (int64_t)s < 0 ? (uint64_t)0 - s : s;
    return mag % 10u != 0;
}
static FZ_HD int falcon_not_mult10_32(uint32_t s) {
    const uint32_t mag = (int32_t)s < 0 ? 0u - s : s;
    return mag % 10u != 0;
}

/* ------------------------------------------------------------- layout
 * A chunk of n values has m = n - 1 deltas; a bit-plane holds one bit of
 * each delta, LSB-first in B = ceil(m / 8) bytes; a sparse plane is a
 * bitmap of M = ceil(B / 8) bytes (bit k: byte k is nonzero) followed by
 * the nonzero bytes. Sparse iff strictly smaller than dense. */
static FZ_HD uint32_t falcon_plane_bytes(uint32_t nvalues) {
    return nvalues ? (nvalues - 1 + 7) / 8 : 0;
}
static FZ_HD uint32_t falcon_bitmap_bytes(uint32_t plane_bytes) {
    return (plane_bytes + 7) / 8;
}
static FZ_HD int falcon_sparse(uint32_t plane_bytes, uint32_t nonzero) {
    return falcon_bitmap_bytes(plane_bytes) + nonzero < plane_bytes;
}
static FZ_HD uint32_t falcon_plane_cost(uint32_t plane_bytes,
                                        uint32_t nonzero) {
    return falcon_sparse(plane_bytes, nonzero)
               ? falcon_bitmap_bytes(plane_bytes) + nonzero
               : plane_bytes;
}

/* Bytes of the first value's field: minimal little-endian length. */
static FZ_HD uint32_t falcon_first_len(uint64_t u0) {
    return (uint32_t)(64 - fz_clz64(u0) + 7) / 8;
}

/* Largest encoded chunk (before the verbatim fallback). */
static FZ_HD uint32_t falcon_max_encoded(uint32_t esize, uint32_t nvalues) {
    return FALCON_HEAD_BYTES + esize + esize +
           8 * esize * falcon_plane_bytes(nvalues);
}

#endif /* FALCON_XFORM_H */
