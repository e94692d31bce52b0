/* Bitwise round trips through the public API: every generator, sizes around
 * subchunk and chunk boundaries up to a few MB, with and without checksums,
 * multi-dimensional shapes, thread counts, unaligned buffers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

static unsigned cases_run;

/* Sizes (in values) exercised for every generator. */
static size_t case_sizes(fz_dtype dtype, size_t out[16]) {
    const size_t c = tu_chunk_values(dtype);
    const size_t fixed[] = {0, 1, 2, 31, 32, 33, 127, 128, 129};
    size_t n = 0;
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
        out[n++] = fixed[i];
    out[n++] = c - 1;
    out[n++] = c;
    out[n++] = c + 1;
    out[n++] = 2 * c + 1;
    out[n++] = ((size_t)3 << 20) / tu_dtype_size(dtype) + 7; /* ~3 MB */
    return n;
}

static void check_inspect(const uint8_t *stream, size_t size,
                          const fz_params *p, uint64_t bytes) {
    fz_info info;
    CHECK_OK(fz_inspect(stream, size, &info));
    CHECK(info.params.dtype == p->dtype);
    CHECK_EQ_U64(info.params.ndims, p->ndims);
    for (int d = 0; d < FZ_MAX_DIMS; d++)
        CHECK_EQ_U64(info.params.dims[d], p->dims[d]);
    CHECK_EQ_U64(info.params.flags, p->flags);
    CHECK_EQ_U64(info.original_bytes, bytes);
    CHECK_EQ_U64(info.compressed_bytes, size);
}

/* Decode into a buffer of exactly `bytes` and compare with src. */
static void check_decode(const uint8_t *stream, size_t size, const void *src,
                         size_t bytes, const fz_decode_options *opts) {
    tu_buf out = tu_buf_alloc(bytes);
    size_t got = 0;
    CHECK_OK(fz_decompress(stream, size, out.data, bytes, opts, &got));
    CHECK_EQ_U64(got, bytes);
    CHECK(memcmp(out.data, src, bytes) == 0);
    CHECK(tu_guard_intact(&out));
    tu_buf_free(&out);
}

static void check_roundtrip(const fz_params *p, const void *src, size_t bytes,
                            int must_shrink) {
    size_t size = 0;
    uint8_t *stream = tu_compress(p, src, &size);
    if (must_shrink)
        CHECK(size < bytes);
    check_inspect(stream, size, p, bytes);
    check_decode(stream, size, src, bytes, NULL);
    fz_decode_options skip = tu_decode_opts(1, FZ_DECODE_SKIP_CHECKSUM);
    check_decode(stream, size, src, bytes, &skip);
    free(stream);
    cases_run++;
}

static void roundtrip_generator(fz_dtype dtype, tu_gen g, uint32_t flags) {
    size_t sizes[16];
    size_t count = case_sizes(dtype, sizes);
    for (size_t i = 0; i < count; i++) {
        size_t n = sizes[i], bytes = n * tu_dtype_size(dtype);
        tu_context("%s %s n=%zu flags=%u", tu_dtype_name(dtype), tu_gen_name(g),
                   n, flags);
        void *src = tu_xmalloc(bytes);
        tu_fill(g, dtype, src, n, 1000 + i);
        fz_params p = tu_params(dtype, n, flags);
        int shrink = tu_gen_compressible(g) && n >= tu_chunk_values(dtype);
        check_roundtrip(&p, src, bytes, shrink);
        free(src);
    }
}

static void test_generators_and_sizes(void) {
    const fz_dtype dtypes[] = {FZ_F32, FZ_F64};
    const uint32_t flags[] = {0, FZ_FLAG_NO_CHECKSUM};
    for (int d = 0; d < 2; d++)
        for (int g = 0; g < TU_GEN_COUNT; g++)
            for (int f = 0; f < 2; f++)
                roundtrip_generator(dtypes[d], (tu_gen)g, flags[f]);
}

/* A shaped stream equals the 1-D stream of the same values except in the
 * header (the shape lives there; SLEEK encodes the values in memory order). */
static void check_shape(fz_dtype dtype, uint32_t ndims, const uint64_t *dims) {
    uint64_t n = 1;
    for (uint32_t d = 0; d < ndims; d++)
        n *= dims[d];
    size_t bytes = (size_t)n * tu_dtype_size(dtype);
    tu_context("%s shape ndims=%u n=%llu", tu_dtype_name(dtype), ndims,
               (unsigned long long)n);
    void *src = tu_xmalloc(bytes);
    tu_fill(TU_GEN_MIXED, dtype, src, (size_t)n, 77 + ndims);
    fz_params shaped = tu_params(dtype, n, 0);
    CHECK_OK(fz_params_set_shape(&shaped, ndims, dims));
    fz_params flat = tu_params(dtype, n, 0);
    check_roundtrip(&shaped, src, bytes, 0);

    size_t s_size = 0, f_size = 0;
    uint8_t *s_stream = tu_compress(&shaped, src, &s_size);
    uint8_t *f_stream = tu_compress(&flat, src, &f_size);
    CHECK_EQ_U64(s_size, f_size);
    CHECK(memcmp(s_stream + FZ_HEADER_BYTES, f_stream + FZ_HEADER_BYTES,
                 s_size - FZ_HEADER_BYTES) == 0);
    free(s_stream);
    free(f_stream);
    free(src);
}

static void test_shapes(void) {
    const uint64_t s2[] = {16, 17}, s3[] = {3, 5, 7}, s4[] = {2, 3, 4, 5};
    const uint64_t big3[] = {64, 64, 3}, ones[] = {4099, 1};
    const uint64_t with_zero[] = {5, 0, 3};
    const fz_dtype dtypes[] = {FZ_F32, FZ_F64};
    for (int d = 0; d < 2; d++) {
        check_shape(dtypes[d], 2, s2);
        check_shape(dtypes[d], 3, s3);
        check_shape(dtypes[d], 4, s4);
        check_shape(dtypes[d], 3, big3);
        check_shape(dtypes[d], 2, ones);
        check_shape(dtypes[d], 3, with_zero);
    }
}

/* The bytes never depend on the thread count, for compression (several
 * batches of chunks) and decompression. */
static void check_threads(fz_dtype dtype, tu_gen g) {
    const size_t n = ((size_t)5 << 19) / tu_dtype_size(dtype) + 3; /* 2.5MB */
    const size_t bytes = n * tu_dtype_size(dtype);
    tu_context("threads %s %s", tu_dtype_name(dtype), tu_gen_name(g));
    void *src = tu_xmalloc(bytes);
    tu_fill(g, dtype, src, n, 4242);
    fz_params p = tu_params(dtype, n, 0);
    p.threads = 1;
    size_t ref_size = 0;
    uint8_t *ref = tu_compress(&p, src, &ref_size);
    const int32_t counts[] = {2, 3, 0, 7};
    for (int i = 0; i < 4; i++) {
        p.threads = counts[i];
        size_t size = 0;
        uint8_t *stream = tu_compress(&p, src, &size);
        CHECK_EQ_U64(size, ref_size);
        CHECK(memcmp(stream, ref, size) == 0);
        free(stream);
        fz_decode_options o = tu_decode_opts(counts[i], 0);
        check_decode(ref, ref_size, src, bytes, &o);
    }
    free(ref);
    free(src);
    cases_run++;
}

static void test_thread_independence(void) {
    check_threads(FZ_F32, TU_GEN_PATCHWORK);
    check_threads(FZ_F64, TU_GEN_PATCHWORK);
    check_threads(FZ_F32, TU_GEN_MIXED);
}

/* User buffers need no alignment. */
static void test_unaligned_buffers(void) {
    const fz_dtype dtypes[] = {FZ_F32, FZ_F64};
    for (int d = 0; d < 2; d++) {
        const size_t n = 3 * tu_chunk_values(dtypes[d]) + 5;
        const size_t bytes = n * tu_dtype_size(dtypes[d]);
        tu_context("unaligned %s", tu_dtype_name(dtypes[d]));
        uint8_t *src = (uint8_t *)tu_xmalloc(bytes + 1);
        tu_fill(TU_GEN_PATCHWORK, dtypes[d], src + 1, n, 9);
        fz_params p = tu_params(dtypes[d], n, 0);
        size_t bound = 0, size = 0, got = 0;
        CHECK_OK(fz_compress_bound(&p, &bound));
        uint8_t *stream = (uint8_t *)tu_xmalloc(bound + 3);
        CHECK_OK(fz_compress(&p, src + 1, bytes, stream + 3, bound, &size));
        uint8_t *out = (uint8_t *)tu_xmalloc(bytes + 5);
        CHECK_OK(fz_decompress(stream + 3, size, out + 5, bytes, NULL, &got));
        CHECK(memcmp(out + 5, src + 1, bytes) == 0);
        free(out);
        free(stream);
        free(src);
        cases_run++;
    }
}

/* The params fz_inspect reports reproduce the stream byte for byte. */
static void test_recompress_from_inspect(void) {
    const uint64_t dims[] = {33, 7, 19};
    const size_t n = 33 * 7 * 19, bytes = n * 8;
    tu_context("recompress from inspect");
    void *src = tu_xmalloc(bytes);
    tu_fill(TU_GEN_MIXED, FZ_F64, src, n, 5);
    fz_params p = tu_params(FZ_F64, n, FZ_FLAG_NO_CHECKSUM);
    CHECK_OK(fz_params_set_shape(&p, 3, dims));
    size_t size = 0, size2 = 0;
    uint8_t *stream = tu_compress(&p, src, &size);
    fz_info info;
    CHECK_OK(fz_inspect(stream, size, &info));
    uint8_t *again = tu_compress(&info.params, src, &size2);
    CHECK_EQ_U64(size2, size);
    CHECK(memcmp(again, stream, size) == 0);
    free(again);
    free(stream);
    free(src);
    cases_run++;
}

/* Zero values: NULL source and NULL destination are fine. */
static void test_empty_with_null_buffers(void) {
    tu_context("empty with NULL buffers");
    fz_params p = tu_params(FZ_F32, 0, 0);
    uint8_t stream[FZ_HEADER_BYTES + 64];
    size_t size = 0, got = 1;
    CHECK_OK(fz_compress(&p, NULL, 0, stream, sizeof stream, &size));
    CHECK(size >= FZ_HEADER_BYTES && size <= sizeof stream);
    CHECK_OK(fz_decompress(stream, size, NULL, 0, NULL, &got));
    CHECK_EQ_U64(got, 0);
    cases_run++;
}

/* A destination larger than needed: only the decoded bytes are written. */
static void test_oversized_destination(void) {
    const size_t n = 5000, bytes = n * 4, extra = 1000;
    tu_context("oversized destination");
    void *src = tu_xmalloc(bytes);
    tu_fill(TU_GEN_SMOOTH, FZ_F32, src, n, 3);
    fz_params p = tu_params(FZ_F32, n, 0);
    size_t size = 0, got = 0;
    uint8_t *stream = tu_compress(&p, src, &size);
    tu_buf out = tu_buf_alloc(bytes + extra);
    CHECK_OK(fz_decompress(stream, size, out.data, out.capacity, NULL, &got));
    CHECK_EQ_U64(got, bytes);
    CHECK(memcmp(out.data, src, bytes) == 0);
    for (size_t i = bytes; i < bytes + extra; i++)
        CHECK(out.data[i] == 0xCD); /* tu_buf_alloc's fill */
    tu_buf_free(&out);
    free(stream);
    free(src);
    cases_run++;
}

/* One caller's work: compress its data (must equal its reference stream)
 * and decode the shared stream. Returns the number of failures. */
static int caller_work(const fz_params *p, const void *src, size_t bytes,
                       const uint8_t *ref, size_t ref_size,
                       const uint8_t *shared, size_t shared_size,
                       const void *shared_src) {
    size_t bound = 0, size = 0, got = 0;
    int failures = fz_compress_bound(p, &bound) != FZ_OK;
    uint8_t *stream = (uint8_t *)tu_xmalloc(bound);
    uint8_t *out = (uint8_t *)tu_xmalloc(bytes);
    failures += fz_compress(p, src, bytes, stream, bound, &size) != FZ_OK;
    failures += size != ref_size || memcmp(stream, ref, ref_size) != 0;
    failures +=
        fz_decompress(shared, shared_size, out, bytes, NULL, &got) != FZ_OK;
    failures += memcmp(out, shared_src, bytes) != 0;
    free(out);
    free(stream);
    return failures;
}

/* The library is reentrant: application threads may compress and
 * decompress at the same time, the same stream included (docs/API.md). */
static void test_concurrent_calls(void) {
    enum { CALLERS = 4 };
    const size_t n = 3 * 4096 + 11, bytes = n * 4;
    void *src[CALLERS];
    uint8_t *ref[CALLERS];
    size_t ref_size[CALLERS];
    fz_params p = tu_params(FZ_F32, n, 0);
    tu_context("concurrent calls");
    for (int k = 0; k < CALLERS; k++) {
        src[k] = tu_xmalloc(bytes);
        tu_fill((tu_gen)(k % TU_GEN_COUNT), FZ_F32, src[k], n, 60 + k);
        ref[k] = tu_compress(&p, src[k], &ref_size[k]);
    }
    int failures = 0;
#pragma omp parallel for num_threads(CALLERS) reduction(+ : failures)
    for (int k = 0; k < CALLERS; k++)
        for (int rep = 0; rep < 8; rep++)
            failures += caller_work(&p, src[k], bytes, ref[k], ref_size[k],
                                    ref[0], ref_size[0], src[0]);
    CHECK_EQ_U64(failures, 0);
    for (int k = 0; k < CALLERS; k++) {
        free(ref[k]);
        free(src[k]);
    }
    cases_run++;
}

int main(void) {
    test_generators_and_sizes();
    test_shapes();
    test_thread_independence();
    test_unaligned_buffers();
    test_recompress_from_inspect();
    test_empty_with_null_buffers();
    test_oversized_destination();
    test_concurrent_calls();
    printf("test_roundtrip: %u cases passed\n", cases_run);
    return 0;
}
