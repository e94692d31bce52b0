/* The ranges the random-access tests decode (test_range on the CPU,
 * test_gpu_range on the device), so that both cover the same cases. */
#ifndef RANGE_CASES_H
#define RANGE_CASES_H

#include "test_util.h"

/* Called with a range [first, first + count) and its ordinal (0, 1, ...,
 * for callers that vary something else, such as the thread count). */
typedef void (*rc_visit)(void *ctx, uint64_t first, uint64_t count, int k);

/* Ranges of an array of n values in chunks of cv values: the whole array,
 * empty ones at both ends, the last value; ranges starting on, just
 * before and just after every chunk boundary with counts of 1, about a
 * chunk, two chunks and the rest; then `randoms` random ones (seed). */
static inline void rc_for_each_range(uint64_t n, uint64_t cv, uint64_t seed,
                                     int randoms, rc_visit visit, void *ctx) {
    int k = 0;
    visit(ctx, 0, n, k++);
    visit(ctx, 0, 0, k++);
    visit(ctx, n, 0, k++);
    if (n > 0)
        visit(ctx, n - 1, 1, k++);
    for (uint64_t b = 0; b <= n; b += cv) {
        const uint64_t starts[] = {b, b ? b - 1 : 0, b + 1};
        for (int s = 0; s < 3; s++) {
            const uint64_t f = starts[s];
            if (f >= n)
                continue;
            const uint64_t left = n - f;
            const uint64_t counts[] = {1, cv - 1, cv, cv + 1, 2 * cv, left};
            for (int j = 0; j < 6; j++)
                if (counts[j] >= 1 && counts[j] <= left)
                    visit(ctx, f, counts[j], k++);
        }
    }
    tu_rng r = tu_rng_make(seed);
    for (int i = 0; i < randoms && n > 0; i++) {
        const uint64_t f = tu_below(&r, n);
        visit(ctx, f, 1 + tu_below(&r, n - f), k++);
    }
}

#endif /* RANGE_CASES_H */
