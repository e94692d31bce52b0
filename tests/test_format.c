/* Header inspection, version and status strings, parameter validation and
 * output-capacity handling of the public API. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

static unsigned checks_run;

/* ------------------------------------------------------------ inspection */
static void inspect_case(fz_dtype dtype, uint32_t ndims, const uint64_t *dims,
                         uint32_t flags) {
    fz_params p = tu_params(dtype, 1, flags);
    CHECK_OK(fz_params_set_shape(&p, ndims, dims));
    uint64_t n = 0, bytes = 0;
    CHECK_OK(fz_params_count(&p, &n, &bytes));
    tu_context("inspect %s ndims=%u n=%llu flags=%u", tu_dtype_name(dtype),
               ndims, (unsigned long long)n, flags);
    void *src = tu_xmalloc((size_t)bytes);
    tu_fill(TU_GEN_SMOOTH, dtype, src, (size_t)n, 1);
    size_t size = 0;
    uint8_t *stream = tu_compress(&p, src, &size);

    fz_info info;
    CHECK_OK(fz_inspect(stream, size, &info));
    CHECK(info.params.dtype == dtype);
    CHECK_EQ_U64(info.params.ndims, ndims);
    for (uint32_t d = 0; d < FZ_MAX_DIMS; d++)
        CHECK_EQ_U64(info.params.dims[d], d < ndims ? dims[d] : 1);
    CHECK(info.params.codec == FZ_CODEC_SLEEK);
    CHECK(info.params.mode == FZ_MODE_LOSSLESS);
    CHECK(info.params.bound == 0.0 && info.bound_effective == 0.0);
    CHECK_EQ_U64(info.params.flags, flags);
    CHECK_EQ_U64(info.has_checksums, !(flags & FZ_FLAG_NO_CHECKSUM));
    CHECK_EQ_U64(info.format_version, FZ_FORMAT_VERSION);
    CHECK_EQ_U64(info.codec_version, 3); /* sleek: payload square sums */
    CHECK_EQ_U64(info.original_bytes, bytes);
    CHECK_EQ_U64(info.compressed_bytes, size);
    CHECK_EQ_U64(info.chunk_bytes, 16384);
    CHECK_EQ_U64(info.chunk_count, (bytes + 16383) / 16384);
    const uint64_t entry = (flags & FZ_FLAG_NO_CHECKSUM) ? 4 : 8;
    const uint64_t table_end = FZ_HEADER_BYTES + info.chunk_count * entry;
    CHECK_EQ_U64(info.payload_offset, (table_end + 15) / 16 * 16);
    CHECK(info.payload_offset <= size);

    /* The fixed header alone is enough. */
    fz_info head;
    CHECK_OK(fz_inspect(stream, FZ_HEADER_BYTES, &head));
    CHECK(memcmp(&head, &info, sizeof head) == 0);
    free(stream);
    free(src);
    checks_run++;
}

static void test_inspect_fields(void) {
    const uint64_t d1[] = {10000}, d2[] = {16, 17}, d3[] = {3, 5, 7};
    const uint64_t d4[] = {2, 3, 4, 5}, big[] = {100, 100, 7}, zero[] = {0};
    const fz_dtype dtypes[] = {FZ_F32, FZ_F64};
    const uint32_t flags[] = {0, FZ_FLAG_NO_CHECKSUM};
    for (int t = 0; t < 2; t++) {
        for (int f = 0; f < 2; f++) {
            inspect_case(dtypes[t], 1, d1, flags[f]);
            inspect_case(dtypes[t], 2, d2, flags[f]);
            inspect_case(dtypes[t], 3, d3, flags[f]);
            inspect_case(dtypes[t], 4, d4, flags[f]);
            inspect_case(dtypes[t], 3, big, flags[f]);
            inspect_case(dtypes[t], 1, zero, flags[f]);
        }
    }
}

/* A valid stream of 100 f32 values. */
static uint8_t *small_stream(size_t *size) {
    float v[100];
    tu_fill(TU_GEN_SMOOTH, FZ_F32, v, 100, 2);
    fz_params p = tu_params(FZ_F32, 100, 0);
    return tu_compress(&p, v, size);
}

static void test_inspect_errors(void) {
    size_t size = 0, got = 0;
    uint8_t *stream = small_stream(&size);
    fz_info info;
    tu_context("inspect errors");
    for (size_t len = 0; len < FZ_HEADER_BYTES; len++)
        CHECK_STATUS(fz_inspect(stream, len, &info), FZ_ERR_TRUNCATED);
    CHECK_STATUS(fz_inspect(NULL, size, &info), FZ_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(fz_inspect(stream, size, NULL), FZ_ERR_INVALID_ARGUMENT);

    uint8_t *copy = (uint8_t *)tu_xmalloc(size);
    for (int byte = 0; byte < 4; byte++) {
        memcpy(copy, stream, size);
        copy[byte] ^= 0x20;
        CHECK_STATUS(fz_inspect(copy, size, &info), FZ_ERR_BAD_MAGIC);
        CHECK_STATUS(fz_decompress(copy, size, NULL, 0, NULL, &got),
                     FZ_ERR_BAD_MAGIC);
    }
    memcpy(copy, stream, size);
    copy[40] ^= 1; /* inside dims[3] */
    CHECK_STATUS(fz_inspect(copy, size, &info), FZ_ERR_HEADER_CHECKSUM);
    free(copy);
    free(stream);
    checks_run++;
}

/* ------------------------------------------------- version and strings */
static void test_version(void) {
    char want[32];
    snprintf(want, sizeof want, "%d.%d.%d", FZ_VERSION_MAJOR, FZ_VERSION_MINOR,
             FZ_VERSION_PATCH);
    tu_context("version");
    CHECK_EQ_U64(fz_version_number(), FZ_VERSION_NUMBER);
    CHECK(fz_version_string() != NULL);
    CHECK(strcmp(fz_version_string(), want) == 0);
    CHECK_EQ_U64(FZ_VERSION_NUMBER, FZ_VERSION_MAJOR * 10000 +
                                        FZ_VERSION_MINOR * 100 +
                                        FZ_VERSION_PATCH);
    checks_run++;
}

static void test_status_strings(void) {
    const fz_status all[] = {FZ_OK,
                             FZ_ERR_INVALID_ARGUMENT,
                             FZ_ERR_UNSUPPORTED,
                             FZ_ERR_DST_TOO_SMALL,
                             FZ_ERR_SIZE_MISMATCH,
                             FZ_ERR_OUT_OF_MEMORY,
                             FZ_ERR_SCRATCH_TOO_SMALL,
                             FZ_ERR_PARAMS_MISMATCH,
                             FZ_ERR_BAD_MAGIC,
                             FZ_ERR_FORMAT_VERSION,
                             FZ_ERR_HEADER_CHECKSUM,
                             FZ_ERR_CORRUPT_HEADER,
                             FZ_ERR_TRUNCATED,
                             FZ_ERR_TABLE_CHECKSUM,
                             FZ_ERR_CORRUPT_CHUNK,
                             FZ_ERR_DATA_CHECKSUM,
                             FZ_ERR_NO_CUDA,
                             FZ_ERR_NO_GPU,
                             FZ_ERR_CUDA,
                             FZ_ERR_IO};
    const size_t n = sizeof all / sizeof all[0];
    tu_context("status strings");
    for (size_t i = 0; i < n; i++) {
        const char *s = fz_status_string(all[i]);
        CHECK(s != NULL && s[0] != '\0');
        for (size_t j = 0; j < i; j++)
            CHECK(strcmp(s, fz_status_string(all[j])) != 0);
    }
    CHECK(fz_status_string((fz_status)9999) != NULL);
    CHECK(fz_status_string((fz_status)-1) != NULL);
    checks_run++;
}

static void test_codec_names(void) {
    fz_codec c = (fz_codec)0;
    tu_context("codec names");
    CHECK(fz_codec_name(FZ_CODEC_SLEEK) != NULL);
    CHECK(strcmp(fz_codec_name(FZ_CODEC_SLEEK), "sleek") == 0);
    CHECK(fz_codec_name((fz_codec)0) == NULL);
    CHECK(fz_codec_name((fz_codec)200) == NULL);
    CHECK_OK(fz_codec_from_name("sleek", &c));
    CHECK(c == FZ_CODEC_SLEEK);
    CHECK_ERROR(fz_codec_from_name("no-such-codec", &c));
    CHECK_ERROR(fz_codec_from_name("", &c));
    CHECK_STATUS(fz_codec_from_name(NULL, &c), FZ_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(fz_codec_from_name("sleek", NULL), FZ_ERR_INVALID_ARGUMENT);
    checks_run++;
}

/* ------------------------------------------------------------ parameters */
static void test_params_helpers(void) {
    fz_params p;
    uint64_t n = 0, bytes = 0;
    const uint64_t dims[] = {16, 17, 1, 1};
    tu_context("params helpers");
    CHECK_STATUS(fz_params_init(NULL, FZ_F32, 1), FZ_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(fz_params_init(&p, (fz_dtype)0, 1), FZ_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(fz_params_init(&p, (fz_dtype)3, 1), FZ_ERR_INVALID_ARGUMENT);
    CHECK_OK(fz_params_init(&p, FZ_F64, 12));
    CHECK(p.codec == FZ_CODEC_SLEEK && p.mode == FZ_MODE_LOSSLESS);
    CHECK(p.exec == FZ_EXEC_CPU && p.flags == 0 && p.threads == 0);
    CHECK_EQ_U64(p.ndims, 1);
    CHECK_OK(fz_params_count(&p, &n, &bytes));
    CHECK_EQ_U64(n, 12);
    CHECK_EQ_U64(bytes, 96);
    CHECK_STATUS(fz_params_set_shape(&p, 0, dims), FZ_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(fz_params_set_shape(&p, 5, dims), FZ_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(fz_params_set_shape(&p, 2, NULL), FZ_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(fz_params_set_shape(NULL, 2, dims), FZ_ERR_INVALID_ARGUMENT);
    CHECK_OK(fz_params_set_shape(&p, 2, dims));
    CHECK_EQ_U64(p.ndims, 2);
    CHECK(p.dims[2] == 1 && p.dims[3] == 1);
    CHECK_OK(fz_params_count(&p, &n, &bytes));
    CHECK_EQ_U64(n, 272);
    CHECK_EQ_U64(bytes, 272 * 8);
    CHECK_STATUS(fz_params_count(NULL, &n, &bytes), FZ_ERR_INVALID_ARGUMENT);
    checks_run++;
}

/* Run every entry point that takes params on p and expect `want`. */
static void expect_params_status(const fz_params *p, fz_status want) {
    float src[64] = {0};
    uint8_t dst[1024];
    size_t size = 0, bound = 0;
    uint64_t bytes = 0;
    CHECK_STATUS(fz_compress(p, src, sizeof src, dst, sizeof dst, &size), want);
    CHECK_STATUS(fz_compress_bound(p, &bound), want);
    CHECK_STATUS(fz_params_count(p, NULL, &bytes), want);
    checks_run++;
}

/* Variant k of valid params p made invalid in one field; its name. */
static const char *make_invalid(fz_params *p, int k) {
    switch (k) {
    case 0: p->dtype = (fz_dtype)0; return "dtype 0";
    case 1: p->dtype = (fz_dtype)3; return "dtype 3";
    case 2: p->ndims = 0; return "ndims 0";
    case 3: p->ndims = 5; return "ndims 5";
    case 4: p->dims[3] = 2; return "unused dim 2";
    case 5: p->dims[1] = 0; return "unused dim 0";
    case 6: p->flags = 0x80; return "unknown flag";
    case 7: p->exec = (fz_exec)7; return "exec 7";
    case 8: p->codec = (fz_codec)0; return "codec 0";
    case 9: p->codec = (fz_codec)99; return "codec 99";
    case 10: p->mode = (fz_mode)9; return "mode 9";
    case 11: p->bound = 0.5; return "lossless with a bound";
    case 12: p->codec_options[2] = 1; return "codec option";
    case 13:
        p->ndims = 2;
        p->dims[0] = p->dims[1] = (uint64_t)1 << 40;
        return "dims product overflows";
    }
    return NULL;
}

static void test_invalid_params(void) {
    fz_params p = tu_params(FZ_F32, 64, 0);
    for (int k = 0; make_invalid(&p, k) != NULL; k++) {
        p = tu_params(FZ_F32, 64, 0);
        tu_context("invalid params: %s", make_invalid(&p, k));
        expect_params_status(&p, FZ_ERR_INVALID_ARGUMENT);
    }
    for (int k = 0; k < 6; k++) {
        tu_context("reserved[%d] != 0", k);
        p = tu_params(FZ_F32, 64, 0);
        p.reserved[k] = 1;
        expect_params_status(&p, FZ_ERR_INVALID_ARGUMENT);
    }
    tu_context("NULL params");
    expect_params_status(NULL, FZ_ERR_INVALID_ARGUMENT);
}

/* Lossy modes take a finite bound >= 0 (0 and -0.0 included); negative,
 * NaN and infinite bounds are invalid arguments. */
static void test_lossy_params(void) {
    const fz_mode modes[] = {FZ_MODE_ABS, FZ_MODE_REL};
    const double good[] = {0.0, -0.0, 1e-3, 1.0, DBL_TRUE_MIN, DBL_MAX};
    const double bad[] = {-1.0,      -DBL_TRUE_MIN, -DBL_MAX, INFINITY,
                          -INFINITY, NAN,           -NAN};
    for (int i = 0; i < 2; i++) {
        for (size_t k = 0; k < sizeof good / sizeof good[0]; k++) {
            tu_context("lossy mode %d bound %g", (int)modes[i], good[k]);
            fz_params p = tu_params(FZ_F32, 64, 0);
            p.mode = modes[i];
            p.bound = good[k];
            expect_params_status(&p, FZ_OK);
        }
        for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
            tu_context("lossy mode %d bound %g", (int)modes[i], bad[k]);
            fz_params p = tu_params(FZ_F64, 64, 0);
            p.mode = modes[i];
            p.bound = bad[k];
            expect_params_status(&p, FZ_ERR_INVALID_ARGUMENT);
        }
    }
}

static void test_compress_argument_errors(void) {
    float src[64] = {0};
    uint8_t dst[1024];
    size_t size = 0;
    fz_params p = tu_params(FZ_F32, 64, 0);
    tu_context("compress argument errors");
    CHECK_STATUS(fz_compress(&p, src, sizeof src, NULL, sizeof dst, &size),
                 FZ_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(fz_compress(&p, src, sizeof src, dst, sizeof dst, NULL),
                 FZ_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(fz_compress(&p, NULL, sizeof src, dst, sizeof dst, &size),
                 FZ_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(fz_compress_bound(&p, NULL), FZ_ERR_INVALID_ARGUMENT);
    const size_t wrong[] = {0, 4, sizeof src - 4, sizeof src + 4,
                            sizeof src - 1};
    for (size_t i = 0; i < sizeof wrong / sizeof wrong[0]; i++)
        CHECK_STATUS(fz_compress(&p, src, wrong[i], dst, sizeof dst, &size),
                     FZ_ERR_SIZE_MISMATCH);
    checks_run++;
}

static void test_decompress_argument_errors(void) {
    size_t size = 0, got = 0;
    uint8_t *stream = small_stream(&size);
    float out[100];
    tu_context("decompress argument errors");
    CHECK_STATUS(fz_decompress(NULL, size, out, sizeof out, NULL, &got),
                 FZ_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(fz_decompress(stream, size, out, sizeof out, NULL, NULL),
                 FZ_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(fz_decompress(stream, size, NULL, sizeof out, NULL, &got),
                 FZ_ERR_INVALID_ARGUMENT);
    fz_decode_options o = tu_decode_opts(0, 0x40);
    CHECK_STATUS(fz_decompress(stream, size, out, sizeof out, &o, &got),
                 FZ_ERR_INVALID_ARGUMENT);
    o = tu_decode_opts(0, 0);
    o.exec = (fz_exec)5;
    CHECK_STATUS(fz_decompress(stream, size, out, sizeof out, &o, &got),
                 FZ_ERR_INVALID_ARGUMENT);
    for (int k = 0; k < 3; k++) {
        o = tu_decode_opts(0, 0);
        o.reserved[k] = 1;
        CHECK_STATUS(fz_decompress(stream, size, out, sizeof out, &o, &got),
                     FZ_ERR_INVALID_ARGUMENT);
    }
    free(stream);
    checks_run++;
}

/* ----------------------------------------------------- output capacity */
/* Capacities to try: dense near 0 and near `need`, ~64 strided between. */
static size_t next_capacity(size_t cap, size_t need) {
    if (cap < 256 || cap + 256 >= need)
        return cap + 1;
    size_t step = need / 64 > 97 ? need / 64 : 97;
    return cap + step < need - 256 ? cap + step : need - 256;
}

/* Every capacity below the stream size fails with DST_TOO_SMALL and leaves
 * the bytes past the capacity alone; the exact size works. Two threads make
 * batches of 32 chunks, so large inputs take several batches. */
static void compress_capacity_case(fz_dtype dtype, tu_gen g, size_t n,
                                   fz_mode mode) {
    const size_t bytes = n * tu_dtype_size(dtype);
    tu_context("compress capacity %s %s n=%zu mode %d", tu_dtype_name(dtype),
               tu_gen_name(g), n, (int)mode);
    void *src = tu_xmalloc(bytes);
    tu_fill(g, dtype, src, n, 8);
    fz_params p = tu_params(dtype, n, 0);
    p.mode = mode;
    p.bound = mode == FZ_MODE_LOSSLESS ? 0.0 : 1e-3;
    p.threads = 2;
    size_t need = 0, size = 0;
    free(tu_compress(&p, src, &need));
    for (size_t cap = 0; cap <= need; cap = next_capacity(cap, need)) {
        tu_buf dst = tu_buf_alloc(cap);
        fz_status s = fz_compress(&p, src, bytes, dst.data, cap, &size);
        CHECK_STATUS(s, cap < need ? FZ_ERR_DST_TOO_SMALL : FZ_OK);
        CHECK(tu_guard_intact(&dst));
        tu_buf_free(&dst);
    }
    free(src);
    checks_run++;
}

static void decompress_capacity_case(fz_dtype dtype, size_t n) {
    const size_t bytes = n * tu_dtype_size(dtype);
    tu_context("decompress capacity %s n=%zu", tu_dtype_name(dtype), n);
    void *src = tu_xmalloc(bytes);
    tu_fill(TU_GEN_MIXED, dtype, src, n, 9);
    fz_params p = tu_params(dtype, n, 0);
    size_t size = 0, got = 0;
    uint8_t *stream = tu_compress(&p, src, &size);
    const size_t caps[] = {0, 1, bytes / 2, bytes - 1};
    for (size_t i = 0; i < 4; i++) {
        if (caps[i] >= bytes)
            continue;
        tu_buf dst = tu_buf_alloc(caps[i]);
        CHECK_STATUS(fz_decompress(stream, size, dst.data, caps[i], NULL, &got),
                     FZ_ERR_DST_TOO_SMALL);
        CHECK(tu_guard_intact(&dst));
        tu_buf_free(&dst);
    }
    free(stream);
    free(src);
    checks_run++;
}

static void test_capacity(void) {
    const fz_dtype dtypes[] = {FZ_F32, FZ_F64};
    for (int t = 0; t < 2; t++) {
        const size_t c = tu_chunk_values(dtypes[t]);
        compress_capacity_case(dtypes[t], TU_GEN_SMOOTH, 0, FZ_MODE_LOSSLESS);
        compress_capacity_case(dtypes[t], TU_GEN_SMOOTH, 33, FZ_MODE_LOSSLESS);
        compress_capacity_case(dtypes[t], TU_GEN_SMOOTH, 3 * c + 5,
                               FZ_MODE_LOSSLESS);
        compress_capacity_case(dtypes[t], TU_GEN_PATCHWORK, 3 * c + 5,
                               FZ_MODE_LOSSLESS);
        compress_capacity_case(dtypes[t], TU_GEN_RANDOM_BITS, 40 * c + 1,
                               FZ_MODE_LOSSLESS);
        /* lossy: REL reads the data's range before writing anything */
        compress_capacity_case(dtypes[t], TU_GEN_PATCHWORK, 3 * c + 5,
                               FZ_MODE_ABS);
        compress_capacity_case(dtypes[t], TU_GEN_WAVE, 2 * c + 1, FZ_MODE_REL);
        decompress_capacity_case(dtypes[t], 1);
        decompress_capacity_case(dtypes[t], 2 * c + 3);
    }
}

/* ------------------------------------------------------------ no GPU */
/* Without a usable GPU, asking for the GPU backend fails cleanly. */
static void test_gpu_exec_without_gpu(void) {
    if (fz_gpu_count() != 0)
        return;
    float src[64] = {0}, out[64];
    uint8_t dst[1024];
    size_t size = 0, got = 0;
    tu_context("GPU exec without GPU");
    fz_params p = tu_params(FZ_F32, 64, 0);
    p.exec = FZ_EXEC_GPU;
    fz_status s = fz_compress(&p, src, sizeof src, dst, sizeof dst, &size);
    CHECK(s == FZ_ERR_NO_CUDA || s == FZ_ERR_NO_GPU);
    p.exec = FZ_EXEC_CPU;
    CHECK_OK(fz_compress(&p, src, sizeof src, dst, sizeof dst, &size));
    fz_decode_options o = tu_decode_opts(0, 0);
    o.exec = FZ_EXEC_GPU;
    s = fz_decompress(dst, size, out, sizeof out, &o, &got);
    CHECK(s == FZ_ERR_NO_CUDA || s == FZ_ERR_NO_GPU);
    /* the device API: refused before anything touches the (host) pointers */
    size_t scratch = 0;
    s = fz_device_range_scratch_size(&p, 3, 5, &scratch);
    CHECK(s == FZ_OK || s == FZ_ERR_NO_CUDA);
    _Alignas(16) uint8_t fake[4096];
    fz_device_result r;
    s = fz_device_decompress_range(&p, fake, size, 3, 5, fake, 20, fake,
                                   sizeof fake, NULL, &r, NULL, NULL);
    CHECK(s == FZ_ERR_NO_CUDA || s == FZ_ERR_NO_GPU ||
          (s == FZ_ERR_SCRATCH_TOO_SMALL && scratch > sizeof fake));
    checks_run++;
}

/* ------------------------------------------- the documented streams */
/* The example streams of docs/FORMAT.md section 9, byte for byte: a change
 * of the format (or of what an encoder writes) shows here and in the
 * document together. */
static void expect_stream_hex(const char *what, const void *src, size_t bytes,
                              const fz_params *p, const char *hex) {
    tu_context("FORMAT.md %s", what);
    uint8_t stream[512];
    size_t size = 0;
    CHECK_OK(fz_compress(p, src, bytes, stream, sizeof stream, &size));
    CHECK_EQ_U64(size, strlen(hex) / 2);
    for (size_t i = 0; i < size && 2 * i + 1 < strlen(hex); i++) {
        unsigned byte = 0;
        CHECK(sscanf(hex + 2 * i, "%2x", &byte) == 1);
        if (stream[i] != byte)
            tu_context("FORMAT.md %s: byte 0x%zx", what, i);
        CHECK_EQ_U64(stream[i], byte);
    }
}

static void test_documented_streams(void) {
    const float three[3] = {1.0f, -2.5f, 0.0f};
    fz_params p = tu_params(FZ_F32, 3, 0);
    expect_stream_hex("9.1", three, sizeof three, &p,
                      "464c545a010080000103010001010000"
                      "03000000000000000100000000000000"
                      "01000000000000000100000000000000"
                      "00000000000000000000000000000000"
                      "00000000000000000000000000000000"
                      "00400000000000000100000000000000"
                      "0c000000000000000c00000000000000"
                      "023e1986000000000000000033224436"
                      "0c00000084c144f90000000000000000"
                      "0000803f000020c000000000");
    /* 9.2: +0.0, -0.0 and the smallest subnormals by their codes t */
    const uint32_t by_t[4] = {0x00000000u, 0x80000000u, 0x00000001u,
                              0x80000001u};
    const int t[24] = {0, 6, 4, 2, 2, 0, 6, 4, 4, 2, 0, 6,
                       6, 4, 2, 0, 0, 6, 4, 2, 2, 0, 6, 4};
    uint32_t tiny[24];
    for (int i = 0; i < 24; i++)
        tiny[i] = by_t[t[i] / 2];
    p = tu_params(FZ_F32, 24, 0);
    expect_stream_hex("9.2", tiny, sizeof tiny, &p,
                      "464c545a010080000103010001010000"
                      "18000000000000000100000000000000"
                      "01000000000000000100000000000000"
                      "00000000000000000000000000000000"
                      "00000000000000000000000000000000"
                      "00400000000000000100000000000000"
                      "50000000000000006000000000000000"
                      "bd8cc42300000000000000008ff85ed6"
                      "5000000063a7a9720000000000000000"
                      "03000000000000000000000000000000"
                      "00000000000000000000000000000000"
                      "302598146c0a30259800000000000000"
                      "00000000000000000000000000000000"
                      "00000000000000000000000000000000");
    const float lossy[3] = {3.14159274f, -0.0f, 1e-4f};
    p = tu_params(FZ_F32, 3, 0);
    p.mode = FZ_MODE_ABS;
    p.bound = 0.001;
    expect_stream_hex("9.3", lossy, sizeof lossy, &p,
                      "464c545a010080000103010101010000"
                      "03000000000000000100000000000000"
                      "01000000000000000100000000000000"
                      "fca9f1d24d62503f000000000000503f"
                      "00000000000000000000000000000000"
                      "00400000000000000100000000000000"
                      "0c000000000000000c00000000000000"
                      "f9a692a900000000000000006cd2e349"
                      "0c00000085eb83fe0000000000000000"
                      "000049400000000000000000");
    checks_run++;
}

int main(void) {
    test_inspect_fields();
    test_inspect_errors();
    test_version();
    test_status_strings();
    test_codec_names();
    test_params_helpers();
    test_invalid_params();
    test_lossy_params();
    test_compress_argument_errors();
    test_decompress_argument_errors();
    test_capacity();
    test_gpu_exec_without_gpu();
    test_documented_streams();
    printf("test_format: %u groups of checks passed\n", checks_run);
    return 0;
}
