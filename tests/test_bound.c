/* fz_compress_bound is a true worst case: compressing any data into exactly
 * that many bytes succeeds and never writes past it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

static unsigned cases_run;

static void bound_case(fz_dtype dtype, tu_gen g, size_t n, uint32_t flags) {
    const size_t bytes = n * tu_dtype_size(dtype);
    tu_context("bound %s %s n=%zu flags=%u", tu_dtype_name(dtype),
               tu_gen_name(g), n, flags);
    void *src = tu_xmalloc(bytes);
    tu_fill(g, dtype, src, n, 31 + n);
    fz_params p = tu_params(dtype, n, flags);
    p.threads = 2; /* batches of 32 chunks: large n takes several */
    size_t bound = 0, size = 0;
    CHECK_OK(fz_compress_bound(&p, &bound));
    CHECK(bound >= FZ_HEADER_BYTES);
    tu_buf dst = tu_buf_alloc(bound);
    CHECK_OK(fz_compress(&p, src, bytes, dst.data, bound, &size));
    CHECK(size <= bound);
    CHECK(size >= FZ_HEADER_BYTES);
    CHECK(tu_guard_intact(&dst));

    size_t got = 0;
    tu_buf out = tu_buf_alloc(bytes);
    CHECK_OK(fz_decompress(dst.data, size, out.data, bytes, NULL, &got));
    CHECK(memcmp(out.data, src, bytes) == 0);
    tu_buf_free(&out);
    tu_buf_free(&dst);
    free(src);
    cases_run++;
}

static size_t bound_sizes(fz_dtype dtype, size_t out[24]) {
    const size_t c = tu_chunk_values(dtype);
    const size_t list[] = {
        0,   1,     2, 3,     31,        32,    33,        127,        128,
        129, c - 1, c, c + 1, 2 * c - 1, 2 * c, 2 * c + 1, 33 * c + 7, 65 * c};
    const size_t n = sizeof list / sizeof list[0];
    memcpy(out, list, sizeof list);
    return n;
}

static void test_bound_never_exceeded(void) {
    const fz_dtype dtypes[] = {FZ_F32, FZ_F64};
    const tu_gen gens[] = {TU_GEN_RANDOM_BITS, TU_GEN_SPECIAL, TU_GEN_MIXED,
                           TU_GEN_ZEROS, TU_GEN_PATCHWORK};
    const uint32_t flags[] = {0, FZ_FLAG_NO_CHECKSUM};
    size_t sizes[24];
    for (int t = 0; t < 2; t++) {
        size_t count = bound_sizes(dtypes[t], sizes);
        for (int g = 0; g < 5; g++)
            for (int f = 0; f < 2; f++)
                for (size_t i = 0; i < count; i++)
                    bound_case(dtypes[t], gens[g], sizes[i], flags[f]);
    }
}

/* The bound depends only on the parameters and never shrinks as n grows. */
static void test_bound_monotonic(void) {
    const fz_dtype dtypes[] = {FZ_F32, FZ_F64};
    for (int t = 0; t < 2; t++) {
        size_t prev = 0;
        tu_context("bound monotonic %s", tu_dtype_name(dtypes[t]));
        for (uint64_t n = 0; n < 3 * tu_chunk_values(dtypes[t]); n++) {
            fz_params p = tu_params(dtypes[t], n, 0);
            size_t bound = 0;
            CHECK_OK(fz_compress_bound(&p, &bound));
            CHECK(bound >= prev);
            CHECK(bound >= n * tu_dtype_size(dtypes[t]) + FZ_HEADER_BYTES);
            prev = bound;
        }
        cases_run++;
    }
}

/* Shapes with many values (nothing is compressed) still get a bound that
 * covers the raw bytes and the header. */
static void test_bound_large_shapes(void) {
    const uint64_t dims[] = {1u << 12, 1u << 12, 1u << 10};
    fz_params p = tu_params(FZ_F64, 1, 0);
    size_t bound = 0;
    tu_context("bound large shape");
    CHECK_OK(fz_params_set_shape(&p, 3, dims));
    CHECK_OK(fz_compress_bound(&p, &bound));
    CHECK((uint64_t)bound >= ((uint64_t)1 << 34) * 8 + FZ_HEADER_BYTES);
    cases_run++;
}

int main(void) {
    test_bound_never_exceeded();
    test_bound_monotonic();
    test_bound_large_shapes();
    printf("test_bound: %u cases passed\n", cases_run);
    return 0;
}
