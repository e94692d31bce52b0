/* GFC codec, CPU backend: bitwise round trips (every generator, special
 * values, odd sizes), dimensionality 1..32, chunk counts 1..10000 through
 * the chunk-size option, thread-count independence, the byte layout
 * against an independent reference encoder (docs/GFC.md), per-chunk
 * random access, corrupted and non-canonical streams, invalid options.
 * One group per command-line argument (ctest runs them side by side);
 * no argument runs them all. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../src/codecs/fz_codec.h"
#include "gfc_test_ref.h"
#include "test_util.h"

static unsigned cases_run;

static fz_params gfc_params(fz_dtype dtype, uint64_t n, uint32_t flags,
                            int32_t dim, int32_t chunk_values) {
    fz_params p = tu_params(dtype, n, flags);
    p.codec = FZ_CODEC_GFC;
    p.codec_options[0] = dim;
    p.codec_options[1] = chunk_values;
    return p;
}

/* Decode into a guarded buffer of exactly `bytes`; compare on success. */
static fz_status decode_cmp(const uint8_t *stream, size_t size, const void *src,
                            size_t bytes, int32_t threads, uint32_t flags) {
    tu_buf out = tu_buf_alloc(bytes);
    fz_decode_options o = tu_decode_opts(threads, flags);
    size_t got = 0;
    fz_status st = fz_decompress(stream, size, out.data, bytes, &o, &got);
    CHECK(tu_guard_intact(&out));
    if (st == FZ_OK) {
        CHECK_EQ_U64(got, bytes);
        CHECK(memcmp(out.data, src, bytes) == 0);
    }
    tu_buf_free(&out);
    return st;
}

/* Compress, check the stream (inspect, bound, reference layout), decode
 * with and without checksums. Returns the stream size; *stream_out gets
 * the stream if not NULL (else it is freed). */
static size_t roundtrip(const fz_params *p, const void *src,
                        uint8_t **stream_out) {
    uint64_t values = 0, bytes = 0;
    CHECK_OK(fz_params_count(p, &values, &bytes));
    size_t bound = 0, size = 0;
    CHECK_OK(fz_compress_bound(p, &bound));
    uint8_t *stream = tu_compress(p, src, &size);
    CHECK(size <= bound);
    fz_info info;
    CHECK_OK(fz_inspect(stream, size, &info));
    CHECK(info.params.codec == FZ_CODEC_GFC);
    CHECK_EQ_U64(info.codec_version, 1);
    CHECK_EQ_U64(info.params.codec_options[0],
                 p->codec_options[0] ? p->codec_options[0] : 1);
    if (p->codec_options[1])
        CHECK_EQ_U64(info.params.codec_options[1], p->codec_options[1]);
    CHECK_EQ_U64(info.chunk_bytes, (uint64_t)info.params.codec_options[1] *
                                       tu_dtype_size(p->dtype));
    CHECK_EQ_U64(info.original_bytes, bytes);
    CHECK_EQ_U64(info.compressed_bytes, size);
    /* the reported params reproduce the stream */
    fz_params again = info.params;
    size_t size2 = 0;
    uint8_t *stream2 = tu_compress(&again, src, &size2);
    CHECK_EQ_U64(size2, size);
    CHECK(memcmp(stream, stream2, size) == 0);
    free(stream2);
    gfc_ref_check_stream(stream, size, src);
    CHECK_OK(decode_cmp(stream, size, src, (size_t)bytes, 0, 0));
    CHECK_OK(decode_cmp(stream, size, src, (size_t)bytes, 1,
                        FZ_DECODE_SKIP_CHECKSUM));
    if (stream_out)
        *stream_out = stream;
    else
        free(stream);
    cases_run++;
    return size;
}

/* ------------------------------------------------------------ round trips */
static void test_roundtrip(void) {
    const fz_dtype dtypes[] = {FZ_F32, FZ_F64};
    const size_t sizes[] = {0,    1,    2,    3,    4,     5,     7,    31,
                            32,   33,   63,   64,   65,    100,   1023, 2047,
                            2048, 2049, 4097, 8191, 33333, 100003};
    const uint32_t flags[] = {0, FZ_FLAG_NO_CHECKSUM};
    for (int t = 0; t < 2; t++)
        for (int g = 0; g < TU_GEN_COUNT; g++)
            for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
                const size_t n = sizes[i];
                tu_context("roundtrip %s %s n=%zu", tu_dtype_name(dtypes[t]),
                           tu_gen_name((tu_gen)g), n);
                void *src = tu_xmalloc(n * tu_dtype_size(dtypes[t]));
                tu_fill((tu_gen)g, dtypes[t], src, n, 77 + n);
                fz_params p = gfc_params(dtypes[t], n, flags[i % 2], 0, 0);
                const size_t size = roundtrip(&p, src, NULL);
                /* constants are predicted exactly: codes only */
                if (n >= 4096 && (g == TU_GEN_CONSTANT || g == TU_GEN_ZEROS))
                    CHECK(size < n * tu_dtype_size(dtypes[t]) / 5);
                free(src);
            }
    /* multi-dimensional shapes are just a value count to the codec */
    const uint64_t dims[3] = {17, 9, 5};
    float v[17 * 9 * 5];
    tu_fill(TU_GEN_WAVE, FZ_F32, v, 17 * 9 * 5, 3);
    fz_params p = gfc_params(FZ_F32, 1, 0, 3, 64);
    CHECK_OK(fz_params_set_shape(&p, 3, dims));
    tu_context("roundtrip 3-D shape");
    roundtrip(&p, v, NULL);
}

/* Special values, alone and next to each other: every residual width, the
 * residual 2^63 (-0.0 after +0.0), NaN payloads, infinities, subnormals. */
static void test_special(void) {
    const uint64_t *s64;
    const uint32_t *s32;
    const size_t k64 = tu_special64(&s64), k32 = tu_special32(&s32);
    const size_t n = 3000;
    uint64_t *d = (uint64_t *)tu_xmalloc(n * 8);
    uint32_t *f = (uint32_t *)tu_xmalloc(n * 4);
    tu_rng r = tu_rng_make(5);
    for (int pattern = 0; pattern < 6; pattern++) {
        for (size_t i = 0; i < n; i++) {
            switch (pattern) {
            case 0: /* every special next to every other */
                d[i] = s64[(i + i / k64) % k64];
                f[i] = s32[(i + i / k32) % k32];
                break;
            case 1: /* +0 / -0 alternating: residuals +-2^63, 2^31 */
                d[i] = (uint64_t)(i & 1) << 63;
                f[i] = (uint32_t)(i & 1) << 31;
                break;
            case 2: { /* residuals of every byte length and sign */
                const uint64_t r64 =
                    i % 9 == 8 ? 0 : tu_next(&r) >> (8 * (i % 9));
                const uint32_t r32 =
                    i % 5 == 4 ? 0 : tu_next32(&r) >> (8 * (i % 5));
                d[i] = 0x3FF0000000000000ull + ((i & 64) ? 0 - r64 : r64);
                f[i] = 0x3F800000u + ((i & 64) ? 0u - r32 : r32);
                break;
            }
            case 3: /* |r| with exactly 6 leading zero bytes (coded as 5) */
                d[i] = (i / 32) % 2 ? 256 + tu_below(&r, 65536 - 256) : 0;
                f[i] = (i / 32) % 2 ? 256 + (uint32_t)tu_below(&r, 65280) : 0;
                break;
            case 4: /* NaNs with random payloads, both signs */
                d[i] = 0x7FF0000000000001ull |
                       (tu_next(&r) & 0x800FFFFFFFFFFFFFull);
                f[i] = 0x7F800001u | (tu_next32(&r) & 0x807FFFFFu);
                break;
            default: /* subnormals and infinities */
                d[i] = i % 7 ? tu_next(&r) & 0x800FFFFFFFFFFFFFull
                             : 0x7FF0000000000000ull | (uint64_t)(i & 8) << 60;
                f[i] = i % 7 ? tu_next32(&r) & 0x807FFFFFu
                             : 0x7F800000u | (uint32_t)(i & 8) << 28;
                break;
            }
        }
        const size_t lens[] = {1, 2, 31, 32, 33, 97, n};
        for (size_t j = 0; j < sizeof lens / sizeof lens[0]; j++)
            for (int32_t dim = 1; dim <= 32; dim += 31) {
                tu_context("special pattern %d n=%zu dim=%d", pattern, lens[j],
                           dim);
                fz_params p = gfc_params(FZ_F64, lens[j], 0, dim, 0);
                roundtrip(&p, d, NULL);
                p = gfc_params(FZ_F32, lens[j], 0, dim, 256);
                roundtrip(&p, f, NULL);
            }
    }
    free(d);
    free(f);
}

/* ---------------------------------------------------------- dimensionality */
static void test_dims(void) {
    const fz_dtype dtypes[] = {FZ_F32, FZ_F64};
    const size_t n = 5003;
    for (int t = 0; t < 2; t++) {
        const size_t es = tu_dtype_size(dtypes[t]);
        void *src = tu_xmalloc(n * es);
        for (int32_t data_dim = 1; data_dim <= 32; data_dim++) {
            gfc_fill_interleaved(dtypes[t], src, n, (uint32_t)data_dim,
                                 (uint64_t)data_dim);
            size_t size_at[33] = {0};
            for (int32_t dim = 1; dim <= 32; dim++) {
                /* every dimensionality on a few data sets, the matching
                 * one and 1 on all */
                if (dim != 1 && dim != data_dim && data_dim % 8 != 3)
                    continue;
                tu_context("dims %s data dim %d, codec dim %d",
                           tu_dtype_name(dtypes[t]), data_dim, dim);
                fz_params p = gfc_params(dtypes[t], n, 0, dim, 0);
                size_at[dim] = roundtrip(&p, src, NULL);
            }
            /* interleaved components of different magnitudes: predicting
             * from the same component wins */
            if (data_dim > 1 && data_dim % 4 == 3)
                CHECK(size_at[data_dim] < size_at[1]);
        }
        free(src);
    }
}

/* ----------------------------------------------------------- chunk counts */
/* n values cut into exactly `count` chunks of `cv` values. */
static void chunk_count_case(fz_dtype dtype, const void *src, size_t count,
                             int32_t cv, size_t n) {
    tu_context("chunks %s count=%zu chunk_values=%d n=%zu",
               tu_dtype_name(dtype), count, cv, n);
    fz_params p = gfc_params(dtype, n, count % 3 == 1 ? FZ_FLAG_NO_CHECKSUM : 0,
                             (int32_t)(count % 5) + 1, cv);
    uint8_t *stream = NULL;
    const size_t size = roundtrip(&p, src, &stream);
    fz_info info;
    CHECK_OK(fz_inspect(stream, size, &info));
    CHECK_EQ_U64(info.chunk_count, count);
    free(stream);
}

static void test_chunks(void) {
    const fz_dtype dtypes[] = {FZ_F32, FZ_F64};
    const size_t max_n = 10000 * 64;
    for (int t = 0; t < 2; t++) {
        const size_t es = tu_dtype_size(dtypes[t]);
        void *src = tu_xmalloc(max_n * es);
        tu_fill(TU_GEN_MIXED, dtypes[t], src, max_n, 99);
        /* 1..64 chunks of 32..2048 values, then a sweep up to 10000 */
        for (size_t count = 1; count <= 64; count++) {
            const int32_t cv = (int32_t)(32 * (1 + count % 64));
            const size_t n = (size_t)cv * (count - 1) + 1 + count % (size_t)cv;
            chunk_count_case(dtypes[t], src, count, cv, n);
        }
        const size_t big[] = {100, 257, 1000, 3001, 9999, 10000};
        for (size_t i = 0; i < sizeof big / sizeof big[0]; i++) {
            const int32_t cv = big[i] % 2 ? 64 : 32;
            const size_t n = (size_t)cv * (big[i] - 1) + 7 + (size_t)t;
            chunk_count_case(dtypes[t], src, big[i], cv, n);
        }
        /* one chunk holding everything: the largest chunk size */
        chunk_count_case(dtypes[t], src, 1, 1 << 22, max_n);
        free(src);
    }
}

/* The default chunk size: the documented function of the value count. */
static uint64_t default_chunk_values(uint64_t n) {
    uint64_t v = (n + 4095) / 4096;
    v = v < 2048 ? 2048 : v > 8192 ? 8192 : v;
    uint64_t k = (n + v - 1) / v;
    k = k ? k : 1;
    v = ((n + k - 1) / k + 31) / 32 * 32;
    return v ? v : 32;
}

static void test_defaults(void) {
    const uint64_t ns[] = {0,
                           1,
                           31,
                           32,
                           33,
                           2048,
                           2049,
                           4096 * 2048,
                           4096 * 2048 + 1,
                           10000000,
                           134217728,
                           134217729,
                           (uint64_t)1 << 40};
    for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++) {
        for (int t = 1; t <= 2; t++) {
            tu_context("default chunk size n=%llu", (unsigned long long)ns[i]);
            fz_params p = gfc_params((fz_dtype)t, ns[i], 0, 0, 0);
            /* an empty stream of n values has the header only: build the
             * header through a tiny compress when small, else check the
             * values per chunk through the scratch-free count path */
            const uint64_t v = default_chunk_values(ns[i]);
            CHECK(v % 32 == 0 && v >= 32 && v <= 8192);
            if (ns[i] > 2048)
                CHECK(v >= 2048 / 2);
            if (ns[i] <= 200000) {
                void *src = tu_xmalloc((size_t)ns[i] * (size_t)t * 4);
                tu_fill(TU_GEN_SMOOTH, (fz_dtype)t, src, (size_t)ns[i], 1);
                size_t size = 0;
                uint8_t *s = tu_compress(&p, src, &size);
                fz_info info;
                CHECK_OK(fz_inspect(s, size, &info));
                CHECK_EQ_U64(info.params.codec_options[1], v);
                free(s);
                free(src);
            }
            size_t bound = 0;
            CHECK_OK(fz_compress_bound(&p, &bound));
        }
    }
    /* the default gives about 4096 chunks of 2 Ki..8 Ki values, more
     * chunks of 8 Ki values for large arrays */
    CHECK_EQ_U64(default_chunk_values(134217728), 8192);
    CHECK_EQ_U64(default_chunk_values(10000000), 2464);
    CHECK_EQ_U64(default_chunk_values(100000), 2048);
    CHECK_EQ_U64(default_chunk_values(5000), 1696);
    CHECK_EQ_U64(default_chunk_values(100), 128);
    cases_run++;
}

/* ------------------------------------------------------------ threads */
static void test_threads(void) {
    const fz_dtype dtypes[] = {FZ_F32, FZ_F64};
    const size_t n = 200003;
    for (int t = 0; t < 2; t++) {
        const size_t es = tu_dtype_size(dtypes[t]);
        void *src = tu_xmalloc(n * es);
        tu_fill(TU_GEN_PATCHWORK, dtypes[t], src, n, 11);
        fz_params p = gfc_params(dtypes[t], n, 0, 2, 1024);
        p.threads = 1;
        size_t ref_size = 0;
        uint8_t *ref = tu_compress(&p, src, &ref_size);
        const int32_t threads[] = {2, 3, 4, 7, 16, 0};
        for (size_t i = 0; i < sizeof threads / sizeof threads[0]; i++) {
            tu_context("threads %s %d", tu_dtype_name(dtypes[t]), threads[i]);
            p.threads = threads[i];
            size_t size = 0;
            uint8_t *s = tu_compress(&p, src, &size);
            CHECK_EQ_U64(size, ref_size);
            CHECK(memcmp(s, ref, size) == 0);
            free(s);
            CHECK_OK(decode_cmp(ref, ref_size, src, n * es, threads[i], 0));
            cases_run++;
        }
        free(ref);
        free(src);
    }
}

/* ------------------------------------------------- layout, random access */
/* A small f32 stream written out byte for byte (docs/GFC.md, section
 * "Worked example"): 40 values whose bit patterns are 3i. */
static void test_worked_example(void) {
    uint32_t v[40];
    for (uint32_t i = 0; i < 40; i++)
        v[i] = 3 * i;
    fz_params p = gfc_params(FZ_F32, 40, 0, 0, 0);
    size_t size = 0;
    uint8_t *s = tu_compress(&p, v, &size);
    tu_context("worked example");
    static const uint8_t want[72] = {
        /* subchunk 0 codes: lane 0 code 4 (r = 0), lanes 1..31 code 3 */
        0x34, 0x33, 0x33, 0x33, 0x33, 0x33, 0x33, 0x33, 0x33, 0x33, 0x33, 0x33,
        0x33, 0x33, 0x33, 0x33,
        /* subchunk 1 codes: lanes 0..7 code 3, padding lanes code 4 */
        0x33, 0x33, 0x33, 0x33, 0x44, 0x44, 0x44, 0x44, 0x44, 0x44, 0x44, 0x44,
        0x44, 0x44, 0x44, 0x44,
        /* residuals 3, 6, ..., 93 of subchunk 0 */
        0x03, 0x06, 0x09, 0x0C, 0x0F, 0x12, 0x15, 0x18, 0x1B, 0x1E, 0x21, 0x24,
        0x27, 0x2A, 0x2D, 0x30, 0x33, 0x36, 0x39, 0x3C, 0x3F, 0x42, 0x45, 0x48,
        0x4B, 0x4E, 0x51, 0x54, 0x57, 0x5A, 0x5D,
        /* subchunk 1: 3i - 93 for i = 32..39 */
        0x03, 0x06, 0x09, 0x0C, 0x0F, 0x12, 0x15, 0x18,
        /* alignment */
        0x00};
    fz_info info;
    CHECK_OK(fz_inspect(s, size, &info));
    CHECK_EQ_U64(info.chunk_count, 1);
    CHECK_EQ_U64(size, info.payload_offset + sizeof want);
    CHECK(memcmp(s + info.payload_offset, want, sizeof want) == 0);
    CHECK_EQ_U64(fz_load32(s + FZ_HEADER_BYTES), sizeof want);
    printf("worked example stream (%zu bytes):\n", size);
    for (size_t i = 0; i < size; i++)
        printf("%02x%s", s[i], i % 16 == 15 || i + 1 == size ? "\n" : " ");
    free(s);
    cases_run++;
}

/* Every chunk decodes on its own from the table's sizes. */
static void test_random_access(void) {
    const fz_codec_cpu *codec = fz_codec_cpu_find(FZ_CODEC_GFC);
    CHECK(codec != NULL);
    const size_t n = 70001;
    double *src = (double *)tu_xmalloc(n * 8);
    tu_fill(TU_GEN_SMOOTH, FZ_F64, src, n, 4);
    /* chunks 2 and 5 incompressible: stored verbatim */
    tu_fill(TU_GEN_RANDOM_BITS, FZ_F64, src + 2 * 4096, 4096, 5);
    tu_fill(TU_GEN_RANDOM_BITS, FZ_F64, src + 5 * 4096, 4096, 6);
    fz_params p = gfc_params(FZ_F64, n, 0, 3, 4096);
    size_t size = 0;
    uint8_t *s = tu_compress(&p, src, &size);
    fz_header h;
    memset(&h, 0, sizeof h);
    CHECK_EQ_U64(fz_header_parse(s, size, &h), FZS_OK);
    double *chunk = (double *)tu_xmalloc(4096 * 8);
    uint64_t off = fz_payload_offset(&h);
    int encoded = 0, verbatim = 0;
    for (uint64_t c = 0; c < h.chunk_count; c++) {
        tu_context("random access chunk %llu", (unsigned long long)c);
        const uint32_t csize = fz_load32(s + FZ_HDR_BYTES + 8 * c);
        const uint64_t raw = fz_chunk_raw_bytes(&h, c);
        if (csize < raw) {
            CHECK_EQ_U64(
                codec->decode_chunk(&h, s + off, csize, chunk, raw / 8),
                FZS_OK);
            encoded++;
        } else {
            memcpy(chunk, s + off, (size_t)raw);
            verbatim++;
        }
        CHECK(memcmp(chunk, src + c * 4096, (size_t)raw) == 0);
        CHECK_EQ_U64(fz_hash_bytes((const uint8_t *)chunk, raw),
                     fz_load32(s + FZ_HDR_BYTES + 8 * c + 4));
        off += csize;
    }
    CHECK(encoded > 0 && verbatim > 0);
    CHECK_EQ_U64(off, size);
    free(chunk);
    free(s);
    free(src);
    cases_run++;
}

/* ------------------------------------------------------------ corruption */
static void corruption_case(fz_dtype dtype, tu_gen g, size_t n, int32_t dim,
                            int32_t cv) {
    tu_context("corruption %s %s n=%zu dim=%d chunk=%d", tu_dtype_name(dtype),
               tu_gen_name(g), n, dim, cv);
    const size_t bytes = n * tu_dtype_size(dtype);
    void *src = tu_xmalloc(bytes);
    tu_fill(g, dtype, src, n, 123 + n);
    fz_params p = gfc_params(dtype, n, 0, dim, cv);
    size_t size = 0;
    uint8_t *s = tu_compress(&p, src, &size);
    CHECK_OK(decode_cmp(s, size, src, bytes, 1, 0));
    for (size_t len = 0; len < size; len++) {
        uint8_t *part = (uint8_t *)tu_xmalloc(len);
        memcpy(part, s, len);
        fz_status st = decode_cmp(part, len, src, bytes, 1, 0);
        CHECK_ERROR(st);
        CHECK(st != FZ_ERR_OUT_OF_MEMORY);
        free(part);
    }
    const uint8_t masks[] = {0x01, 0x80, 0xFF, 0x10, 0x08, 0x5A};
    unsigned benign = 0;
    for (size_t pos = 0; pos < size; pos++)
        for (size_t m = 0; m < sizeof masks; m++) {
            s[pos] ^= masks[m];
            /* never accepted with different data (decode_cmp compares) */
            fz_status st = decode_cmp(s, size, src, bytes, 1, 0);
            s[pos] ^= masks[m];
            CHECK(st != FZ_ERR_OUT_OF_MEMORY);
            benign += st == FZ_OK;
        }
    /* canonical decoding: every byte of a stream matters */
    CHECK_EQ_U64(benign, 0);
    free(s);
    free(src);
    cases_run++;
}

static void test_corruption(void) {
    const fz_dtype dtypes[] = {FZ_F32, FZ_F64};
    for (int t = 0; t < 2; t++) {
        corruption_case(dtypes[t], TU_GEN_SMOOTH, 0, 0, 0);
        corruption_case(dtypes[t], TU_GEN_SMOOTH, 1, 0, 0);
        corruption_case(dtypes[t], TU_GEN_SMOOTH, 33, 0, 0);
        corruption_case(dtypes[t], TU_GEN_SMOOTH, 300, 3, 0);
        corruption_case(dtypes[t], TU_GEN_WAVE, 300, 1, 64);
        corruption_case(dtypes[t], TU_GEN_SPECIAL, 200, 32, 96);
        corruption_case(dtypes[t], TU_GEN_PATCHWORK, 500, 2, 128);
        corruption_case(dtypes[t], TU_GEN_CONSTANT, 1000, 1, 0);
    }
}

/* Non-canonical chunks that decode to the right data (valid checksums). */
static void test_forgeries(void) {
    gfc_forgery f[32];
    const size_t count = gfc_forgeries(f);
    for (size_t i = 0; i < count; i++) {
        tu_context("forgery: %s", f[i].what);
        const size_t bytes = f[i].n * tu_dtype_size(f[i].dtype);
        uint8_t data[320];
        gfc_forgery_data(&f[i], data);
        fz_params p = gfc_params(f[i].dtype, f[i].n, 0, 0, 0);
        size_t size = 0, fsize = 0;
        uint8_t *s = tu_compress(&p, data, &size);
        uint8_t *forged =
            gfc_splice_payload(s, size, f[i].payload, f[i].psize, &fsize);
        const int canonical = strncmp(f[i].what, "canonical", 9) == 0;
        if (canonical) { /* the library writes exactly this */
            CHECK_EQ_U64(fsize, size);
            CHECK(memcmp(forged, s, size) == 0);
        }
        fz_status st = decode_cmp(forged, fsize, data, bytes, 1, 0);
        CHECK_STATUS(st, canonical ? FZ_OK : FZ_ERR_CORRUPT_CHUNK);
        st = decode_cmp(forged, fsize, data, bytes, 1, FZ_DECODE_SKIP_CHECKSUM);
        CHECK_STATUS(st, canonical ? FZ_OK : FZ_ERR_CORRUPT_CHUNK);
        free(forged);
        free(s);
        cases_run++;
    }
}

/* ------------------------------------------------------------ options */
static void check_header_rejected(const uint8_t *s, size_t size,
                                  const fz_header *h, const char *what) {
    tu_context("invalid gfc header: %s", what);
    uint8_t *copy = (uint8_t *)tu_xmalloc(size);
    memcpy(copy, s, size);
    fz_header_write(h, copy);
    fz_info info;
    CHECK_STATUS(fz_inspect(copy, size, &info), FZ_ERR_CORRUPT_HEADER);
    uint8_t out[4096];
    size_t got = 0;
    CHECK_STATUS(fz_decompress(copy, size, out, sizeof out, NULL, &got),
                 FZ_ERR_CORRUPT_HEADER);
    free(copy);
    cases_run++;
}

static void test_options(void) {
    double v[100];
    tu_fill(TU_GEN_SMOOTH, FZ_F64, v, 100, 8);
    size_t bound = 0;
    const struct {
        int32_t opt[4];
        fz_status want;
    } cases[] = {
        {{0, 0, 0, 0}, FZ_OK},
        {{1, 32, 0, 0}, FZ_OK},
        {{32, 1 << 22, 0, 0}, FZ_OK},
        {{33, 0, 0, 0}, FZ_ERR_INVALID_ARGUMENT},
        {{-1, 0, 0, 0}, FZ_ERR_INVALID_ARGUMENT},
        {{1000, 0, 0, 0}, FZ_ERR_INVALID_ARGUMENT},
        {{0, 33, 0, 0}, FZ_ERR_INVALID_ARGUMENT},
        {{0, 16, 0, 0}, FZ_ERR_INVALID_ARGUMENT},
        {{0, -32, 0, 0}, FZ_ERR_INVALID_ARGUMENT},
        {{0, (1 << 22) + 32, 0, 0}, FZ_ERR_INVALID_ARGUMENT},
        {{0, 0x7FFFFFE0, 0, 0}, FZ_ERR_INVALID_ARGUMENT},
        {{0, 0, 1, 0}, FZ_ERR_INVALID_ARGUMENT},
        {{0, 0, 0, -1}, FZ_ERR_INVALID_ARGUMENT},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tu_context("options %d %d %d %d", cases[i].opt[0], cases[i].opt[1],
                   cases[i].opt[2], cases[i].opt[3]);
        fz_params p = gfc_params(FZ_F64, 100, 0, 0, 0);
        memcpy(p.codec_options, cases[i].opt, sizeof p.codec_options);
        CHECK_STATUS(fz_compress_bound(&p, &bound), cases[i].want);
        uint8_t out[2048];
        size_t size = 0;
        CHECK_STATUS(fz_compress(&p, v, sizeof v, out, sizeof out, &size),
                     cases[i].want);
        cases_run++;
    }
    /* 0 means the default: the same stream as the explicit values */
    fz_params p0 = gfc_params(FZ_F64, 100, 0, 0, 0);
    fz_params p1 = gfc_params(FZ_F64, 100, 0, 1, 128);
    size_t s0 = 0, s1 = 0;
    uint8_t *a = tu_compress(&p0, v, &s0), *b = tu_compress(&p1, v, &s1);
    tu_context("options: defaults");
    CHECK_EQ_U64(s0, s1);
    CHECK(memcmp(a, b, s0) == 0);
    /* sleek still takes no options */
    fz_params ps = tu_params(FZ_F64, 100, 0);
    ps.codec_options[0] = 1;
    CHECK_STATUS(fz_compress_bound(&ps, &bound), FZ_ERR_INVALID_ARGUMENT);
    /* lossless only */
    const fz_mode modes[] = {FZ_MODE_ABS, FZ_MODE_REL};
    for (int m = 0; m < 2; m++) {
        fz_params pl = gfc_params(FZ_F64, 100, 0, 0, 0);
        pl.mode = modes[m];
        pl.bound = 1e-3;
        CHECK_STATUS(fz_compress_bound(&pl, &bound), FZ_ERR_UNSUPPORTED);
        pl.bound = 0.0;
        CHECK_STATUS(fz_compress_bound(&pl, &bound), FZ_ERR_UNSUPPORTED);
    }
    fz_codec c;
    CHECK_OK(fz_codec_from_name("gfc", &c));
    CHECK(c == FZ_CODEC_GFC);
    CHECK(strcmp(fz_codec_name(FZ_CODEC_GFC), "gfc") == 0);

    /* headers a gfc encoder never writes */
    fz_header base, h;
    memset(&base, 0, sizeof base);
    CHECK_EQ_U64(fz_header_parse(a, s0, &base), FZS_OK);
    h = base, h.codec_params[0] = 0;
    check_header_rejected(a, s0, &h, "dimensionality 0");
    h = base, h.codec_params[0] = 33;
    check_header_rejected(a, s0, &h, "dimensionality 33");
    h = base, h.codec_params[1] = 96;
    check_header_rejected(a, s0, &h, "chunk values != chunk_bytes / 8");
    h = base, h.codec_params[1] = 100, h.chunk_bytes = 800;
    check_header_rejected(a, s0, &h, "chunk values not a multiple of 32");
    h = base, h.codec_params[1] = 1u << 23, h.chunk_bytes = 1u << 26;
    check_header_rejected(a, s0, &h, "chunk values above the maximum");
    h = base, h.codec_params[2] = 1;
    check_header_rejected(a, s0, &h, "codec_params[2]");
    h = base, h.codec_params[3] = 1;
    check_header_rejected(a, s0, &h, "codec_params[3]");
    h = base, h.codec_version = 2;
    check_header_rejected(a, s0, &h, "codec version 2");
    h = base, h.mode = 1, h.bound_bits = 0x3F50000000000000ull;
    check_header_rejected(a, s0, &h, "lossy mode");
    free(a);
    free(b);
}

/* ------------------------------------------------------------ main */
typedef struct group {
    const char *name;
    void (*run)(void);
} group;

static const group groups[] = {
    {"roundtrip", test_roundtrip},
    {"special", test_special},
    {"dims", test_dims},
    {"chunks", test_chunks},
    {"defaults", test_defaults},
    {"threads", test_threads},
    {"layout", test_worked_example},
    {"access", test_random_access},
    {"corruption", test_corruption},
    {"forgeries", test_forgeries},
    {"options", test_options},
};

int main(int argc, char **argv) {
    const size_t ngroups = sizeof groups / sizeof groups[0];
    for (size_t g = 0; g < ngroups; g++) {
        int wanted = argc < 2;
        for (int a = 1; a < argc; a++)
            wanted |= strcmp(argv[a], groups[g].name) == 0;
        if (wanted)
            groups[g].run();
    }
    for (int a = 1; a < argc; a++) {
        int known = 0;
        for (size_t g = 0; g < ngroups; g++)
            known |= strcmp(argv[a], groups[g].name) == 0;
        if (!known) {
            fprintf(stderr, "unknown group '%s'\n", argv[a]);
            return 2;
        }
    }
    printf("test_gfc: %u cases passed\n", cases_run);
    return 0;
}
