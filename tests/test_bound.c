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

/* Codec settings the size checks below run: every codec, lossless and
 * lossy, with options that change the chunking. */
typedef struct codec_case {
    fz_codec codec;
    fz_mode mode;
    int32_t options[2];
} codec_case;

static const codec_case every_codec[] = {
    {FZ_CODEC_SLEEK, FZ_MODE_LOSSLESS, {0, 0}},
    {FZ_CODEC_SLEEK, FZ_MODE_REL, {0, 0}},
    {FZ_CODEC_GFC, FZ_MODE_LOSSLESS, {0, 0}},
    {FZ_CODEC_GFC, FZ_MODE_LOSSLESS, {3, 32}},
    {FZ_CODEC_FALCON, FZ_MODE_LOSSLESS, {1, 0}},
    {FZ_CODEC_LORENZO, FZ_MODE_ABS, {0, 0}},
    {FZ_CODEC_LORENZO, FZ_MODE_REL, {2, 1}},
    {FZ_CODEC_AUTO, FZ_MODE_LOSSLESS, {0, 0}},
    {FZ_CODEC_AUTO, FZ_MODE_ABS, {FZ_AUTO_SMALLEST, 0}},
};

static fz_params codec_params(const codec_case *c, fz_dtype dtype,
                              uint32_t ndims, const uint64_t *dims) {
    fz_params p = tu_params(dtype, 1, 0);
    CHECK_OK(fz_params_set_shape(&p, ndims, dims));
    p.codec = c->codec;
    p.mode = c->mode;
    p.bound = c->mode == FZ_MODE_LOSSLESS ? 0.0 : 1e-3;
    p.codec_options[0] = c->options[0];
    p.codec_options[1] = c->options[1];
    return p;
}

/* Shapes of up to 2^62 bytes whose extents are near 2^60: every codec
 * sizes them (lorenzo's slab of 16 x 2^60 values wrapped to 0 and
 * fz_compress_bound divided by zero), and the bound covers the data. */
static void test_bound_huge_shapes_every_codec(void) {
    const struct {
        fz_dtype dtype;
        uint32_t ndims;
        uint64_t dims[4];
    } shapes[] = {
        {FZ_F32, 2, {(uint64_t)1 << 60, 1}},
        {FZ_F32, 2, {(uint64_t)1 << 59, 2}},
        {FZ_F32, 3, {(uint64_t)1 << 30, (uint64_t)1 << 30, 1}},
        {FZ_F64, 3, {(uint64_t)1 << 29, (uint64_t)1 << 29, 2}},
        {FZ_F64, 4, {(uint64_t)1 << 28, (uint64_t)1 << 28, 1, 7}},
        {FZ_F32, 1, {(uint64_t)1 << 60}},
    };
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (size_t c = 0; c < sizeof every_codec / sizeof every_codec[0];
             c++) {
            tu_context("bound huge shape %zu, codec case %zu", s, c);
            fz_params p = codec_params(&every_codec[c], shapes[s].dtype,
                                       shapes[s].ndims, shapes[s].dims);
            uint64_t bytes = 0;
            size_t bound = 0;
            CHECK_OK(fz_params_count(&p, NULL, &bytes));
            CHECK_OK(fz_compress_bound(&p, &bound));
            CHECK((uint64_t)bound >= bytes + FZ_HEADER_BYTES);
            cases_run++;
        }
}

/* An extent of 0 makes an empty array whatever the other extents are
 * (docs/API.md): {2^61, 0} was refused as too large while {0, 2^61} was
 * not. Every codec compresses it to a header that decodes to nothing. */
static void test_empty_shapes(void) {
    const uint64_t shapes[][4] = {
        {(uint64_t)1 << 61, 0, 1, 1},
        {0, (uint64_t)1 << 61, 1, 1},
        {UINT64_MAX, 0, UINT64_MAX, 3},
        {5, 7, UINT64_MAX, 0},
    };
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (size_t c = 0; c < sizeof every_codec / sizeof every_codec[0];
             c++) {
            tu_context("empty shape %zu, codec case %zu", s, c);
            fz_params p = codec_params(&every_codec[c], FZ_F64, 4, shapes[s]);
            uint64_t values = 1;
            size_t bound = 0, size = 0, got = 1;
            CHECK_OK(fz_params_count(&p, &values, NULL));
            CHECK_EQ_U64(values, 0);
            CHECK_OK(fz_compress_bound(&p, &bound));
            tu_buf dst = tu_buf_alloc(bound);
            CHECK_OK(fz_compress(&p, NULL, 0, dst.data, bound, &size));
            CHECK(tu_guard_intact(&dst));
            fz_info info;
            CHECK_OK(fz_inspect(dst.data, size, &info));
            for (int d = 0; d < FZ_MAX_DIMS; d++)
                CHECK_EQ_U64(info.params.dims[d], shapes[s][d]);
            CHECK_EQ_U64(info.original_bytes, 0);
            CHECK_OK(fz_decompress(dst.data, size, NULL, 0, NULL, &got));
            CHECK_EQ_U64(got, 0);
            tu_buf_free(&dst);
            cases_run++;
        }
}

int main(void) {
    test_bound_never_exceeded();
    test_bound_monotonic();
    test_bound_large_shapes();
    test_bound_huge_shapes_every_codec();
    test_empty_shapes();
    printf("test_bound: %u cases passed\n", cases_run);
    return 0;
}
