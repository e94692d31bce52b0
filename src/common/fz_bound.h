/* Value-range-relative bounds: one definition for both backends, so a
 * stream's effective bound does not depend on where it was compressed. */
#ifndef FZ_BOUND_H
#define FZ_BOUND_H

#include <string.h>

#include "fz_portable.h"

static FZ_HD uint64_t fz_double_bits(double d) {
    uint64_t b;
    memcpy(&b, &d, sizeof b);
    return b;
}

/* Absolute bound (binary64 bits) for a relative bound and the value range
 * (max - min of the finite values, computed in double). The product is
 * rounded to nearest, so two ulps are taken off: the result never exceeds
 * rel * range as real numbers. 0 means lossless (range 0 or none). */
static FZ_HD uint64_t fz_rel_abs_bound_bits(double rel, double range) {
    if (!(range > 0) || !(rel > 0))
        return 0;
    uint64_t b = fz_double_bits(rel * range);
    if ((b >> 52) == 0x7FF)        /* overflow: the largest finite double */
        b = 0x7FF0000000000000ull; /* minus the two ulps below */
    return b > 2 ? b - 2 : 0;
}

#endif /* FZ_BOUND_H */
