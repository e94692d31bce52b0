/* Lorenzo codec, CPU-only prequantization: the same decisions and the
 * same IEEE operations as lz_prequant32 / lz_prequant64 (lorenzo_xform.h),
 * with round() done on the integer part so no libm call stalls the loop.
 * Results are identical value for value (tests/test_lorenzo.c, group
 * "quant", compares them). */
#ifndef LORENZO_QUANT_CPU_H
#define LORENZO_QUANT_CPU_H

#include "lorenzo_xform.h"

/* round(x), half away from zero, for |x| < 2^27: the conversion truncates
 * and x - trunc(x) is exact (it only drops the integer bits). */
static inline int32_t lz_round_cpu(double x) {
    const int32_t t = (int32_t)x;
    const double frac = x - (double)t;
    return t + (frac >= 0.5) - (frac <= -0.5);
}

/* lz_prequant64 with lz_round_cpu. */
static inline int lz_prequant64_cpu(uint64_t bits, double eb, double ebx2,
                                    int32_t *q) {
    const uint64_t ex = (bits >> 52) & 0x7FF;
    if (ex == 0x7FF || (ex == 0 && (bits << 1) != 0) ||
        bits == 0x8000000000000000ull)
        return 0;
    double d;
    memcpy(&d, &bits, sizeof d);
    const double x = d / ebx2;
    if (!(x < LZ_Q_LIMIT && x > -LZ_Q_LIMIT))
        return 0;
    const int32_t qi = lz_round_cpu(x);
    if (!lz_within(lz_recon64(qi, ebx2), d, eb))
        return 0;
    *q = qi;
    return 1;
}

/* lz_prequant32 with lz_round_cpu. */
static inline int lz_prequant32_cpu(uint32_t bits, double eb, double ebx2,
                                    int32_t *q) {
    const uint32_t ex = (bits >> 23) & 0xFF;
    if (ex == 0xFF || (ex == 0 && (bits << 1) != 0) || bits == 0x80000000u)
        return 0;
    float f;
    memcpy(&f, &bits, sizeof f);
    const double d = (double)f;
    const double x = d / ebx2;
    if (!(x < LZ_Q_LIMIT && x > -LZ_Q_LIMIT))
        return 0;
    const int32_t qi = lz_round_cpu(x);
    const float r = lz_recon32(qi, ebx2);
    if (!lz_within((double)r, d, eb))
        return 0;
    *q = qi;
    return 1;
}

#endif /* LORENZO_QUANT_CPU_H */
