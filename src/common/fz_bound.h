/* Value-range-relative bounds: one definition for both backends, so a
 * stream's effective bound does not depend on where it was compressed. */
#ifndef FZ_BOUND_H
#define FZ_BOUND_H

#include "fz_portable.h"

/* Absolute bound (binary64 bits) for a relative bound rel and the finite
 * values' minimum lo and maximum hi. The result never exceeds
 * rel * (hi - lo) as real numbers: each round-to-nearest operation errs by
 * at most half an ulp, so taking as many ulps off as there were operations
 * (plus one) stays below the exact value. When hi - lo overflows, it is
 * computed as rel * hi - rel * lo instead. Subnormal results are fine: an
 * ulp there is the fixed spacing 2^-1074 and each operation still errs by
 * at most half of it. */
static FZ_HD uint64_t fz_rel_abs_bound_bits(double rel, double lo, double hi) {
    const double max_double = 1.7976931348623157e308;
    if (!(hi > lo) || !(rel > 0))
        return 0; /* no finite values, a constant, or rel 0 */
    const double range = hi - lo;
    uint64_t b, ulps;
    if (range <= max_double) {
        b = fz_f64_bits(rel * range);
        ulps = 3;
    } else {
        b = fz_f64_bits(rel * hi - rel * lo);
        ulps = 4;
    }
    if ((b >> 52) >= 0x7FF) /* beyond the largest double: clamp */
        b = fz_f64_bits(max_double);
    return b > ulps ? b - ulps : 0;
}

#endif /* FZ_BOUND_H */
