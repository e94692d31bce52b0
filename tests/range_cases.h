/* The ranges the random-access tests decode (test_range on the CPU,
 * test_gpu_range on the device), so that both cover the same cases. */
#ifndef RANGE_CASES_H
#define RANGE_CASES_H

#include "pipeline_cases.h"
#include "test_util.h"

/* The streams the range tests cut: every pipeline configuration at about
 * five and a third chunks plus one value (a partial last chunk), then
 * lorenzo 3-D REL 1e-3 in f32 and f64 (a 64 x 64 x 300 field: several
 * slabs). Each has several chunks. */
#define RC_CASE_COUNT (PC_CONFIG_COUNT + 2)
typedef struct rc_case {
    const char *name;
    fz_params p;
    tu_gen gen;
    uint64_t n;
} rc_case;

static inline rc_case rc_case_at(size_t k) {
    rc_case c;
    if (k < PC_CONFIG_COUNT) {
        const pc_config *pc = &pc_configs[k];
        /* a default chunk size may grow with n (gfc): n again from the
         * chunk size at n until that n holds several chunks */
        c.n = 1;
        for (int i = 0; i < 8; i++) {
            const fz_params at = pc_params(pc, c.n);
            const uint64_t cv = pc_chunk_bytes(&at) / tu_dtype_size(pc->dtype);
            if (2 * cv < c.n)
                break;
            c.n = 5 * cv + cv / 3 + 1;
        }
        c.name = pc->name;
        c.p = pc_params(pc, c.n);
        c.gen = pc->gen;
        return c;
    }
    const fz_dtype dt = k == PC_CONFIG_COUNT ? FZ_F32 : FZ_F64;
    c.name = dt == FZ_F32 ? "lorenzo 3-D f32" : "lorenzo 3-D f64";
    c.p = tu_params(dt, 1, 0);
    CHECK_OK(fz_params_set_shape(&c.p, 3, (const uint64_t[]){64, 64, 300}));
    c.p.codec = FZ_CODEC_LORENZO;
    c.p.mode = FZ_MODE_REL;
    c.p.bound = 1e-3;
    c.n = 0;
    CHECK_OK(fz_params_count(&c.p, &c.n, NULL));
    c.gen = TU_GEN_SMOOTH;
    return c;
}

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
