/* Codec auto: the stream it makes is one of its candidates' streams, byte
 * for byte; it round-trips exactly (lossless) or within the bound (lossy);
 * it picks the codec the data favours, on the whole array and on samples;
 * the choice does not depend on threads or on the API (memory, file);
 * bad parameters are refused. Run all groups, or one: test_auto GROUP. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test_util.h"

static unsigned cases_run;

/* Above this many values auto samples boxes instead of the whole array. */
#define WHOLE_VALUES ((size_t)1 << 20)

static fz_params auto_params(fz_dtype dtype, uint32_t ndims,
                             const uint64_t *dims, fz_mode mode, double bound) {
    fz_params p;
    CHECK_OK(fz_params_init(&p, dtype, 0));
    CHECK_OK(fz_params_set_shape(&p, ndims, dims));
    p.codec = FZ_CODEC_AUTO;
    p.mode = mode;
    p.bound = bound;
    return p;
}

static size_t count_of(const fz_params *p) {
    uint64_t n = 0;
    CHECK_OK(fz_params_count(p, &n, NULL));
    return (size_t)n;
}

static fz_codec stream_codec(const uint8_t *s, size_t size) {
    fz_info info;
    CHECK_OK(fz_inspect(s, size, &info));
    return info.params.codec;
}

/* Compress with auto and check what every auto stream must satisfy: it is
 * within fz_compress_bound, names a candidate of the mode, equals that
 * codec's own stream with the options auto reports, and decodes to the
 * input (bitwise) or within the bound. Returns the stream. */
static uint8_t *check_auto(const fz_params *p, const void *src, size_t *size) {
    const size_t n = count_of(p), bytes = n * tu_dtype_size(p->dtype);
    size_t bound = 0;
    CHECK_OK(fz_compress_bound(p, &bound));
    uint8_t *s = tu_compress(p, src, size);
    CHECK(*size <= bound);
    fz_info info;
    CHECK_OK(fz_inspect(s, *size, &info));
    const fz_codec c = info.params.codec;
    if (p->mode == FZ_MODE_LOSSLESS)
        CHECK(c == FZ_CODEC_SLEEK || c == FZ_CODEC_GFC || c == FZ_CODEC_FALCON);
    else
        CHECK(c == FZ_CODEC_SLEEK || c == FZ_CODEC_LORENZO);
    CHECK(info.params.mode == p->mode);
    CHECK(tu_dbits(info.params.bound) == tu_dbits(p->bound));

    /* the same bytes as the chosen codec makes, and as fz_auto_choose says */
    fz_params chosen;
    CHECK_OK(fz_auto_choose(p, src, bytes, &chosen));
    CHECK(chosen.codec == c);
    CHECK(chosen.mode == p->mode && chosen.threads == p->threads);
    size_t direct_size = 0;
    uint8_t *direct = tu_compress(&chosen, src, &direct_size);
    CHECK_EQ_U64(direct_size, *size);
    CHECK(memcmp(direct, s, *size) == 0);
    free(direct);

    uint8_t *out = (uint8_t *)tu_xmalloc(bytes);
    fz_decode_options o = tu_decode_opts(0, 0);
    size_t got = 0;
    CHECK_OK(fz_decompress(s, *size, out, bytes, &o, &got));
    CHECK_EQ_U64(got, bytes);
    if (p->mode == FZ_MODE_LOSSLESS) {
        CHECK(memcmp(out, src, bytes) == 0);
    } else {
        double lo = INFINITY, hi = -INFINITY;
        for (size_t i = 0; i < n; i++) {
            const double v = tu_value_at(p->dtype, src, i);
            if (isfinite(v)) {
                lo = v < lo ? v : lo;
                hi = v > hi ? v : hi;
            }
        }
        const double eb =
            p->mode == FZ_MODE_ABS ? p->bound : p->bound * (hi - lo);
        for (size_t i = 0; i < n; i++) {
            const double a = tu_value_at(p->dtype, src, i);
            const double b = tu_value_at(p->dtype, out, i);
            if (isfinite(a))
                CHECK(fabs(a - b) <= eb);
            else
                CHECK(tu_bits_at(p->dtype, src, i) ==
                      tu_bits_at(p->dtype, out, i));
        }
    }
    free(out);
    cases_run++;
    return s;
}

/* --------------------------------------------------------------- data */

static void fill_decimal(fz_dtype dtype, void *dst, size_t n, uint64_t seed) {
    tu_fill_decimal(dtype, dst, n, 123456, seed);
}

/* A smooth 3-D field (x fastest), Lorenzo's favourite. */
static void fill_field3(fz_dtype dtype, void *dst, const uint64_t *d) {
    size_t i = 0;
    for (uint64_t z = 0; z < d[2]; z++)
        for (uint64_t y = 0; y < d[1]; y++)
            for (uint64_t x = 0; x < d[0]; x++, i++)
                tu_set_value(dtype, dst, i,
                             100.0 + sin(x / 19.0) * cos(y / 23.0) +
                                 0.5 * sin(z / 29.0 + x / 41.0));
}

/* ------------------------------------------------------------- groups */

/* Every generator, both types, sizes on both sides of the whole-array
 * limit, 1-D and 3-D: lossless, exact. */
static void group_roundtrip(void) {
    const fz_dtype types[2] = {FZ_F32, FZ_F64};
    const uint64_t sizes[] = {0, 1, 33, 4097, 70001, WHOLE_VALUES + 4099};
    for (int t = 0; t < 2; t++)
        for (int g = 0; g < TU_GEN_COUNT; g++)
            for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
                const size_t n = (size_t)sizes[k];
                tu_context("%s %s n=%zu", tu_dtype_name(types[t]),
                           tu_gen_name((tu_gen)g), n);
                void *src = tu_xmalloc(n * tu_dtype_size(types[t]));
                tu_fill((tu_gen)g, types[t], src, n, 7 + k);
                fz_params p =
                    auto_params(types[t], 1, &sizes[k], FZ_MODE_LOSSLESS, 0.0);
                size_t size = 0;
                free(check_auto(&p, src, &size));
                if (n > 4096) { /* the same values as a 3-D array */
                    const uint64_t d3[3] = {16, 16, n / 256};
                    fz_params q =
                        auto_params(types[t], 3, d3, FZ_MODE_LOSSLESS, 0.0);
                    free(check_auto(&q, src, &size));
                }
                free(src);
            }
}

/* Special values only and mixed in: every bit back, whatever is chosen. */
static void group_special(void) {
    const uint32_t *s32;
    const uint64_t *s64;
    const size_t n32 = tu_special32(&s32), n64 = tu_special64(&s64);
    const uint64_t n = 3000;
    uint32_t *a = (uint32_t *)tu_xmalloc(n * 4);
    uint64_t *b = (uint64_t *)tu_xmalloc(n * 8);
    fill_decimal(FZ_F32, a, n, 3);
    fill_decimal(FZ_F64, b, n, 3);
    for (size_t i = 0; i < n; i += 7) {
        a[i] = s32[i % n32];
        b[i] = s64[i % n64];
    }
    for (int m = 0; m < 3; m++) {
        tu_context("special mode %d", m);
        const fz_mode mode = (fz_mode)m;
        const double eb = m == 0 ? 0.0 : 0.01;
        fz_params p = auto_params(FZ_F32, 1, &n, mode, eb);
        fz_params q = auto_params(FZ_F64, 1, &n, mode, eb);
        size_t size = 0;
        free(check_auto(&p, a, &size));
        free(check_auto(&q, b, &size));
    }
    free(a);
    free(b);
}

/* The codec the data favours, on the whole array and on a sample. */
static void group_choice(void) {
    const uint64_t sizes[2] = {200000, 3 * WHOLE_VALUES + 5};
    for (int k = 0; k < 2; k++) {
        const uint64_t n = sizes[k];
        tu_context("decimal series n=%llu", (unsigned long long)n);
        double *dec = (double *)tu_xmalloc((size_t)n * 8);
        fill_decimal(FZ_F64, dec, (size_t)n, 11);
        fz_params p = auto_params(FZ_F64, 1, &n, FZ_MODE_LOSSLESS, 0.0);
        size_t size = 0;
        uint8_t *s = check_auto(&p, dec, &size);
        CHECK(stream_codec(s, size) == FZ_CODEC_FALCON);
        free(s);
        free(dec);

        tu_context("random bits n=%llu", (unsigned long long)n);
        uint32_t *bits = (uint32_t *)tu_xmalloc((size_t)n * 4);
        tu_fill(TU_GEN_RANDOM_BITS, FZ_F32, bits, (size_t)n, 5);
        p = auto_params(FZ_F32, 1, &n, FZ_MODE_LOSSLESS, 0.0);
        s = check_auto(&p, bits, &size); /* nothing 2% smaller than sleek */
        CHECK(stream_codec(s, size) == FZ_CODEC_SLEEK);
        free(s);
        free(bits);
    }
    const uint64_t fields[2][3] = {{64, 64, 64}, {256, 96, 80}};
    for (int k = 0; k < 2; k++) {
        const uint64_t *d = fields[k];
        tu_context("3-D field %llux%llux%llu", (unsigned long long)d[0],
                   (unsigned long long)d[1], (unsigned long long)d[2]);
        const size_t n = (size_t)(d[0] * d[1] * d[2]);
        float *f = (float *)tu_xmalloc(n * 4);
        fill_field3(FZ_F32, f, d);
        fz_params p = auto_params(FZ_F32, 3, d, FZ_MODE_REL, 1e-3);
        size_t size = 0;
        uint8_t *s = check_auto(&p, f, &size);
        CHECK(stream_codec(s, size) == FZ_CODEC_LORENZO);
        free(s);
        p.mode = FZ_MODE_ABS; /* the absolute bound REL 1e-3 means here */
        p.bound = 1e-3 * 3.0;
        s = check_auto(&p, f, &size);
        CHECK(stream_codec(s, size) == FZ_CODEC_LORENZO);
        free(s);
        free(f);
    }
}

/* FZ_AUTO_SMALLEST on whole arrays: exactly the smallest candidate. */
static void group_smallest(void) {
    const fz_codec lossless[3] = {FZ_CODEC_SLEEK, FZ_CODEC_GFC,
                                  FZ_CODEC_FALCON};
    const uint64_t n = 50000;
    for (int g = 0; g < TU_GEN_COUNT; g++) {
        tu_context("smallest %s", tu_gen_name((tu_gen)g));
        double *a = (double *)tu_xmalloc((size_t)n * 8);
        tu_fill((tu_gen)g, FZ_F64, a, (size_t)n, 21);
        fz_params p = auto_params(FZ_F64, 1, &n, FZ_MODE_LOSSLESS, 0.0);
        p.codec_options[0] = FZ_AUTO_SMALLEST;
        size_t size = 0, least = SIZE_MAX;
        free(check_auto(&p, a, &size));
        for (int c = 0; c < 3; c++) {
            fz_params q = tu_params(FZ_F64, n, 0);
            q.codec = lossless[c];
            size_t cs = 0;
            free(tu_compress(&q, a, &cs));
            least = cs < least ? cs : least;
        }
        CHECK_EQ_U64(size, least);
        /* balanced: a candidate passed over is never 2% smaller than the
         * best so far, which only shrinks */
        p.codec_options[0] = FZ_AUTO_BALANCED;
        size_t balanced = 0;
        free(check_auto(&p, a, &balanced));
        CHECK((double)balanced * 0.98 <= (double)least);
        free(a);
    }
}

/* Same streams with 1 and 3 threads, for whole arrays and samples, in
 * each mode (the choice must not depend on threads). */
static void group_threads(void) {
    const uint64_t n = WHOLE_VALUES + 77777;
    float *a = (float *)tu_xmalloc((size_t)n * 4);
    tu_fill(TU_GEN_WAVE, FZ_F32, a, (size_t)n, 9);
    for (int m = 0; m < 3; m++) {
        tu_context("threads mode %d", m);
        fz_params p =
            auto_params(FZ_F32, 1, &n, (fz_mode)m, m == 0 ? 0.0 : 1e-4);
        p.threads = 1;
        size_t s1 = 0, s3 = 0;
        uint8_t *one = check_auto(&p, a, &s1);
        p.threads = 3;
        uint8_t *three = check_auto(&p, a, &s3);
        CHECK_EQ_U64(s1, s3);
        CHECK(memcmp(one, three, s1) == 0);
        free(one);
        free(three);
    }
    free(a);
}

/* fz_compress_file with auto: the same bytes as fz_compress. */
static void group_file(void) {
    char dir[64], in[96], out[96];
    snprintf(dir, sizeof dir, "test_auto_XXXXXX");
    CHECK(mkdtemp(dir) != NULL);
    snprintf(in, sizeof in, "%s/in.raw", dir);
    snprintf(out, sizeof out, "%s/out.fz", dir);
    const uint64_t shapes[3][3] = {
        {5000, 1, 1}, {WHOLE_VALUES + 999, 1, 1}, {300, 70, 60}};
    for (int k = 0; k < 3; k++)
        for (int m = 0; m < 3; m++) {
            tu_context("file shape %d mode %d", k, m);
            const uint32_t nd = k == 2 ? 3 : 1;
            fz_params p = auto_params(FZ_F64, nd, shapes[k], (fz_mode)m,
                                      m == 0 ? 0.0 : 1e-3);
            const size_t n = count_of(&p);
            double *a = (double *)tu_xmalloc(n * 8);
            if (k == 2)
                fill_field3(FZ_F64, a, shapes[k]);
            else
                fill_decimal(FZ_F64, a, n, 31 + k);
            FILE *f = fopen(in, "wb");
            CHECK(f && fwrite(a, 8, n, f) == n && fclose(f) == 0);
            size_t size = 0;
            uint8_t *mem = check_auto(&p, a, &size);
            uint64_t fsize = 0;
            CHECK_OK(fz_compress_file(&p, in, out, NULL, NULL, &fsize));
            CHECK_EQ_U64(fsize, size);
            f = fopen(out, "rb");
            uint8_t *back = (uint8_t *)tu_xmalloc(size);
            CHECK(f && fread(back, 1, size, f) == size && fgetc(f) == EOF);
            fclose(f);
            CHECK(memcmp(back, mem, size) == 0);
            free(back);
            free(mem);
            free(a);
            /* a file shorter than the shape: refused, nothing written */
            CHECK(remove(out) == 0);
            f = fopen(in, "wb");
            CHECK(f && fwrite(&size, 1, 8, f) == 8 && fclose(f) == 0);
            CHECK_STATUS(fz_compress_file(&p, in, out, NULL, NULL, &fsize),
                         FZ_ERR_SIZE_MISMATCH);
            CHECK(access(out, F_OK) != 0);
            cases_run++;
        }
    remove(in);
    rmdir(dir);
}

/* Refusals with a clear status; names; bounds. */
static void group_invalid(void) {
    fz_codec c = FZ_CODEC_SLEEK;
    CHECK_OK(fz_codec_from_name("auto", &c));
    CHECK(c == FZ_CODEC_AUTO);
    CHECK(strcmp(fz_codec_name(FZ_CODEC_AUTO), "auto") == 0);

    const uint64_t n = 1000;
    float a[1000];
    tu_fill(TU_GEN_SMOOTH, FZ_F32, a, n, 1);
    uint8_t dst[16384];
    size_t size = 0;
    fz_params chosen;
    fz_params p = auto_params(FZ_F32, 1, &n, FZ_MODE_LOSSLESS, 0.0);
    p.codec_options[0] = 2; /* no such goal */
    CHECK_STATUS(fz_compress(&p, a, sizeof a, dst, sizeof dst, &size),
                 FZ_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(fz_compress_bound(&p, &size), FZ_ERR_INVALID_ARGUMENT);
    p.codec_options[0] = 0;
    p.codec_options[1] = 1; /* options belong to the chosen codec */
    CHECK_STATUS(fz_compress(&p, a, sizeof a, dst, sizeof dst, &size),
                 FZ_ERR_INVALID_ARGUMENT);
    p.codec_options[1] = 0;
    p.bound = 0.5; /* lossless takes no bound */
    CHECK_STATUS(fz_auto_choose(&p, a, sizeof a, &chosen),
                 FZ_ERR_INVALID_ARGUMENT);
    p.mode = FZ_MODE_ABS;
    p.bound = -1.0;
    CHECK_STATUS(fz_compress(&p, a, sizeof a, dst, sizeof dst, &size),
                 FZ_ERR_INVALID_ARGUMENT);
    p.bound = NAN;
    CHECK_STATUS(fz_compress(&p, a, sizeof a, dst, sizeof dst, &size),
                 FZ_ERR_INVALID_ARGUMENT);
    p.bound = 0.01;
    CHECK_STATUS(fz_compress(&p, a, sizeof a - 4, dst, sizeof dst, &size),
                 FZ_ERR_SIZE_MISMATCH);
    CHECK_STATUS(fz_auto_choose(&p, a, sizeof a + 4, &chosen),
                 FZ_ERR_SIZE_MISMATCH);
    CHECK_STATUS(fz_auto_choose(&p, NULL, sizeof a, &chosen),
                 FZ_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(fz_auto_choose(NULL, a, sizeof a, &chosen),
                 FZ_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(fz_auto_choose(&p, a, sizeof a, NULL),
                 FZ_ERR_INVALID_ARGUMENT);
    /* too small an output: refused, nothing past the capacity written */
    tu_buf small = tu_buf_alloc(64);
    CHECK_STATUS(
        fz_compress(&p, a, sizeof a, small.data, small.capacity, &size),
        FZ_ERR_DST_TOO_SMALL);
    CHECK(tu_guard_intact(&small));
    tu_buf_free(&small);

    /* the bound is the largest candidate's */
    const fz_codec lossy[2] = {FZ_CODEC_SLEEK, FZ_CODEC_LORENZO};
    size_t bound = 0;
    CHECK_OK(fz_compress_bound(&p, &bound));
    for (int k = 0; k < 2; k++) {
        fz_params q = p;
        q.codec = lossy[k];
        size_t b = 0;
        CHECK_OK(fz_compress_bound(&q, &b));
        CHECK(b <= bound);
    }
    uint64_t values = 0, bytes = 0;
    CHECK_OK(fz_params_count(&p, &values, &bytes));
    CHECK_EQ_U64(values, n);
    CHECK_EQ_U64(bytes, sizeof a);

    /* the device API cannot sample: unsupported (or no CUDA at all) */
    size_t scratch = 0;
    const fz_status ds = fz_device_scratch_size(&p, &scratch);
    CHECK(ds == FZ_ERR_UNSUPPORTED || ds == FZ_ERR_NO_CUDA);
    cases_run++;
}

static const tu_group groups[] = {
    {"roundtrip", group_roundtrip}, {"special", group_special},
    {"choice", group_choice},       {"smallest", group_smallest},
    {"threads", group_threads},     {"file", group_file},
    {"invalid", group_invalid},
};

int main(int argc, char **argv) {
    return tu_run_groups(argc, argv, "test_auto", groups,
                         sizeof groups / sizeof groups[0], &cases_run, NULL);
}
