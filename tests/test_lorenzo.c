/* Lorenzo codec (CPU) through the public API, plus unit tests of its
 * Huffman stage through the shared header. Every round trip checks, value
 * by value in double precision:
 *  - a finite, normal, non-negative-zero original decodes within the
 *    requested absolute bound (ABS: the bound; REL: bound x (max - min) of
 *    the finite values, computed here) and within the effective bound;
 *  - NaN (any payload), infinities, subnormals and -0.0 decode bit for bit;
 *  - skipping the checksums decodes the same bytes.
 * Inputs: generators and adversarial values (half-way points of the
 * quantizer, huge and tiny magnitudes, extreme bounds) in 1-D/2-D/3-D/4-D
 * shapes that are not multiples of the tiles. Also CPU determinism over
 * thread counts, corrupted and truncated streams, invalid parameters.
 * Run all groups, or one: test_lorenzo GROUP. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../src/codecs/lorenzo/lorenzo_huff.h"
#include "lorenzo_v1_streams.h"
#include "test_util.h"

static unsigned cases_run;

/* NaN, infinity, subnormal or -0.0: must come back bit for bit. */
static int exact_kind(fz_dtype t, uint64_t b) {
    if (t == FZ_F32)
        return (b & 0x7F800000u) == 0x7F800000u ||
               ((b & 0x7F800000u) == 0 && (b & 0x007FFFFFu) != 0) ||
               b == 0x80000000u;
    return (b & 0x7FF0000000000000ull) == 0x7FF0000000000000ull ||
           ((b & 0x7FF0000000000000ull) == 0 &&
            (b & 0x000FFFFFFFFFFFFFull) != 0) ||
           b == 0x8000000000000000ull;
}

/* REL: bound x (max - min) of the finite values, as the library defines
 * it (0 without finite values); ABS: the bound. */
static double requested_abs(const fz_params *p, const void *src, size_t n) {
    if (p->mode == FZ_MODE_ABS)
        return p->bound;
    double lo = INFINITY, hi = -INFINITY;
    for (size_t i = 0; i < n; i++) {
        double v = tu_value_at(p->dtype, src, i);
        if (isfinite(v)) {
            lo = v < lo ? v : lo;
            hi = v > hi ? v : hi;
        }
    }
    if (!(hi >= lo))
        return 0.0;
    double range = hi - lo;
    if (isinf(range))
        return 2.0 * (p->bound * (0.5 * hi - 0.5 * lo));
    return p->bound * range;
}

static void check_values(fz_dtype t, const void *src, const void *out, size_t n,
                         double abs_b, double eff) {
    for (size_t i = 0; i < n; i++) {
        const uint64_t a = tu_bits_at(t, src, i), b = tu_bits_at(t, out, i);
        const double o = tu_value_at(t, src, i), d = tu_value_at(t, out, i);
        char detail[300];
        snprintf(detail, sizeof detail,
                 "value %zu: original %.17g (0x%llx) decoded %.17g (0x%llx), "
                 "bound %.17g, effective %.17g",
                 i, o, (unsigned long long)a, d, (unsigned long long)b, abs_b,
                 eff);
        if (exact_kind(t, a)) {
            if (a != b)
                tu_fail(__FILE__, __LINE__, "special value kept bit for bit",
                        detail);
            continue;
        }
        const double err = fabs(d - o);
        if (!isfinite(d) || !(err <= abs_b) || !(err <= eff))
            tu_fail(__FILE__, __LINE__, "|decoded - original| <= bound",
                    detail);
    }
}

/* Compress, inspect, decode (both checksum settings), check every value.
 * Returns the stream (free it) and its size. */
static uint8_t *round_trip(const fz_params *p, const void *src, size_t *size) {
    uint64_t n = 0, bytes = 0;
    size_t cap = 0, got = 0;
    CHECK_OK(fz_params_count(p, &n, &bytes));
    CHECK_OK(fz_compress_bound(p, &cap));
    tu_buf s = tu_buf_alloc(cap);
    CHECK_OK(fz_compress(p, src, (size_t)bytes, s.data, cap, size));
    CHECK(tu_guard_intact(&s));
    fz_info info;
    CHECK_OK(fz_inspect(s.data, *size, &info));
    CHECK(info.params.codec == FZ_CODEC_LORENZO);
    CHECK_EQ_U64(info.params.codec_options[0],
                 p->codec_options[0] ? p->codec_options[0] : 512);
    CHECK_EQ_U64(info.params.codec_options[1], p->codec_options[1]);
    CHECK_EQ_U64(info.compressed_bytes, *size);
    const double abs_b = requested_abs(p, src, (size_t)n);
    if (p->mode == FZ_MODE_ABS)
        CHECK_EQ_U64(tu_dbits(info.bound_effective), tu_dbits(p->bound));
    CHECK(info.bound_effective <= abs_b);
    tu_buf out = tu_buf_alloc((size_t)bytes);
    CHECK_OK(fz_decompress(s.data, *size, out.data, (size_t)bytes, NULL, &got));
    CHECK_EQ_U64(got, bytes);
    CHECK(tu_guard_intact(&out));
    check_values(p->dtype, src, out.data, (size_t)n, abs_b,
                 info.bound_effective);
    tu_buf again = tu_buf_alloc((size_t)bytes);
    fz_decode_options o = tu_decode_opts(3, FZ_DECODE_SKIP_CHECKSUM);
    CHECK_OK(fz_decompress(s.data, *size, again.data, (size_t)bytes, &o, &got));
    CHECK(memcmp(again.data, out.data, (size_t)bytes) == 0);
    tu_buf_free(&again);
    tu_buf_free(&out);
    uint8_t *stream = (uint8_t *)tu_xmalloc(*size);
    memcpy(stream, s.data, *size);
    tu_buf_free(&s);
    cases_run++;
    return stream;
}

static fz_params lz_params(fz_dtype t, uint32_t ndims, const uint64_t *dims,
                           fz_mode mode, double bound) {
    fz_params p = tu_params(t, 1, 0);
    CHECK_OK(fz_params_set_shape(&p, ndims, dims));
    p.codec = FZ_CODEC_LORENZO;
    p.mode = mode;
    p.bound = bound;
    return p;
}

static double case_ratio(const fz_params *p, const void *src) {
    size_t size = 0;
    uint64_t bytes = 0;
    free(round_trip(p, src, &size));
    CHECK_OK(fz_params_count(p, NULL, &bytes));
    return size ? (double)bytes / (double)size : 0;
}

static const fz_dtype dtypes[] = {FZ_F32, FZ_F64};

/* Shapes: not multiples of the tiles, degenerate extents, 4-D. */
typedef struct shape {
    uint32_t nd;
    uint64_t d[4];
} shape;
static const shape shapes[] = {
    {1, {1, 1, 1, 1}},    {1, {0, 1, 1, 1}},     {1, {7, 1, 1, 1}},
    {1, {257, 1, 1, 1}},  {1, {70001, 1, 1, 1}}, {2, {16, 17, 1, 1}},
    {2, {1, 1, 1, 1}},    {2, {1, 300, 1, 1}},   {2, {300, 1, 1, 1}},
    {2, {129, 65, 1, 1}}, {3, {1, 1, 1, 1}},     {3, {33, 9, 17, 1}},
    {3, {32, 8, 8, 1}},   {3, {2, 3, 100, 1}},   {3, {65, 40, 21, 1}},
    {4, {9, 10, 11, 3}},  {3, {0, 5, 5, 1}},
};

static uint64_t shape_count(const shape *s) {
    return s->d[0] * s->d[1] * s->d[2] * s->d[3];
}

/* ---------------------------------------------------------- groups */
static void group_generators(void) {
    const double bounds[] = {1e-1, 1e-3, 1e-5};
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++)
        for (int ti = 0; ti < 2; ti++)
            for (int g = 0; g < TU_GEN_COUNT; g++)
                for (int m = 1; m <= 2; m++)
                    for (int bi = 0; bi < 3; bi++) {
                        const shape *s = &shapes[si];
                        const size_t n = (size_t)shape_count(s);
                        const fz_dtype t = dtypes[ti];
                        void *src = tu_xmalloc(n * tu_dtype_size(t));
                        tu_fill((tu_gen)g, t, src, n, 11 + si);
                        tu_context("shape %zu (%ud) %s %s mode %d bound %g", si,
                                   s->nd, tu_dtype_name(t),
                                   tu_gen_name((tu_gen)g), m, bounds[bi]);
                        fz_params p =
                            lz_params(t, s->nd, s->d, (fz_mode)m, bounds[bi]);
                        case_ratio(&p, src);
                        free(src);
                    }
}

/* Values exactly half-way between quantizer steps, and their
 * neighbours, where round(d / 2eb) x 2eb can miss the bound by rounding. */
static void group_adversarial(void) {
    const double ebs[] = {1e-3, 0.1, 3.0, 1e-30, 7.7e-7, 1e10};
    for (int ti = 0; ti < 2; ti++)
        for (size_t bi = 0; bi < sizeof ebs / sizeof ebs[0]; bi++) {
            const fz_dtype t = dtypes[ti];
            const double eb = ebs[bi];
            const size_t n = 6000;
            void *src = tu_xmalloc(n * tu_dtype_size(t));
            tu_rng r = tu_rng_make(bi * 7 + (uint64_t)ti);
            for (size_t i = 0; i < n; i++) {
                double k = (double)((int64_t)tu_below(&r, 2000000) - 1000000);
                double v = (k + 0.5) * 2 * eb;
                if (i % 3 == 1)
                    v = nextafter(v, INFINITY);
                if (i % 3 == 2)
                    v = nextafter(v, -INFINITY);
                if (i % 17 == 0)
                    v = (double)(int64_t)tu_below(&r, 1000) * 2 * eb;
                tu_set_value(t, src, i, v);
            }
            const uint64_t dims2[2] = {100, 60}, dims3[3] = {10, 20, 30},
                           dims1[1] = {n};
            tu_context("half-way values %s eb %g", tu_dtype_name(t), eb);
            fz_params p = lz_params(t, 1, dims1, FZ_MODE_ABS, eb);
            case_ratio(&p, src);
            p = lz_params(t, 2, dims2, FZ_MODE_ABS, eb);
            case_ratio(&p, src);
            p = lz_params(t, 3, dims3, FZ_MODE_ABS, eb);
            case_ratio(&p, src);
            p = lz_params(t, 3, dims3, FZ_MODE_REL, 1e-4);
            case_ratio(&p, src);
            free(src);
        }
}

/* Magnitudes from the smallest normals to the largest finite values,
 * bounds from the smallest subnormal to the largest double. */
static void group_extremes(void) {
    const double bounds[] = {4.9e-324, 1e-310, 1e-200, 1e-40,
                             1e-3,     1e30,   1e300,  DBL_MAX};
    for (int ti = 0; ti < 2; ti++) {
        const fz_dtype t = dtypes[ti];
        const size_t n = 4000;
        void *src = tu_xmalloc(n * tu_dtype_size(t));
        tu_rng r = tu_rng_make(99 + (uint64_t)ti);
        const int emax = t == FZ_F32 ? 127 : 1023;
        const int emin = t == FZ_F32 ? -126 : -1022;
        for (size_t i = 0; i < n; i++) {
            double m = 1.0 + (double)tu_below(&r, 1u << 20) / (1u << 20);
            int e = emin + (int)tu_below(&r, (uint64_t)(emax - emin));
            double v = ldexp(m, e);
            if (!isfinite(v) || (t == FZ_F32 && !isfinite((float)v)))
                v = t == FZ_F32 ? FLT_MAX : DBL_MAX;
            tu_set_value(t, src, i, i & 1 ? -v : v);
        }
        tu_set_value(t, src, 5, t == FZ_F32 ? FLT_MAX : DBL_MAX);
        tu_set_value(t, src, 6, t == FZ_F32 ? -FLT_MAX : -DBL_MAX);
        tu_set_value(t, src, 7, t == FZ_F32 ? FLT_MIN : DBL_MIN);
        for (size_t bi = 0; bi < sizeof bounds / sizeof bounds[0]; bi++) {
            const uint64_t dims[2] = {50, 80};
            tu_context("wide magnitudes %s ABS %g", tu_dtype_name(t),
                       bounds[bi]);
            fz_params p = lz_params(t, 2, dims, FZ_MODE_ABS, bounds[bi]);
            case_ratio(&p, src);
            p.mode = FZ_MODE_REL;
            p.bound = bounds[bi] < 1 ? bounds[bi] : 0.5;
            case_ratio(&p, src);
        }
        free(src);
    }
}

/* Every special value, alone, in runs and among smooth data. */
static void group_special(void) {
    for (int ti = 0; ti < 2; ti++) {
        const fz_dtype t = dtypes[ti];
        const uint32_t *s32;
        const uint64_t *s64;
        const size_t ns = t == FZ_F32 ? tu_special32(&s32) : tu_special64(&s64);
        const size_t n = 3000;
        void *src = tu_xmalloc(n * tu_dtype_size(t));
        tu_fill(TU_GEN_SMOOTH, t, src, n, 5);
        for (size_t i = 0; i < n; i += 7) {
            const size_t k = (i / 7) % ns;
            tu_set_bits(t, src, i, t == FZ_F32 ? s32[k] : s64[k]);
        }
        tu_set_bits(t, src, 1,
                    t == FZ_F32 ? 0x80000000u : 0x8000000000000000ull);
        const uint64_t dims[3] = {15, 10, 20};
        for (int m = 1; m <= 2; m++) {
            tu_context("specials among smooth data %s mode %d",
                       tu_dtype_name(t), m);
            fz_params p = lz_params(t, 3, dims, (fz_mode)m, 1e-3);
            case_ratio(&p, src);
        }
        /* only specials */
        for (size_t i = 0; i < n; i++) {
            const size_t k = i % ns;
            tu_set_bits(t, src, i, t == FZ_F32 ? s32[k] : s64[k]);
        }
        tu_context("only specials %s", tu_dtype_name(t));
        fz_params p = lz_params(t, 3, dims, FZ_MODE_ABS, 1e-3);
        case_ratio(&p, src);
        p.mode = FZ_MODE_REL;
        case_ratio(&p, src);
        free(src);
    }
}

/* A linear ramp over 64 x 64 planes: the 3-D Lorenzo residual is 0
 * inside tiles. */
static void fill_ramp(fz_dtype t, void *src, size_t n) {
    for (size_t i = 0; i < n; i++)
        tu_set_value(t, src, i,
                     0.5 * (double)(i % 64) + (double)((i / 64) % 64) +
                         2.0 * (double)(i / 4096));
}

/* Constant and smooth data compress (RLE and Huffman paths); REL of a
 * constant has bound 0 and is stored exactly. */
static void group_constant(void) {
    for (int ti = 0; ti < 2; ti++) {
        const fz_dtype t = dtypes[ti];
        const uint64_t dims[3] = {64, 64, 64};
        const size_t n = 64 * 64 * 64;
        void *src = tu_xmalloc(n * tu_dtype_size(t));
        tu_fill(TU_GEN_CONSTANT, t, src, n, 1);
        tu_context("constant %s", tu_dtype_name(t));
        fz_params p = lz_params(t, 3, dims, FZ_MODE_ABS, 1e-3);
        CHECK(case_ratio(&p, src) > 100);
        p.mode = FZ_MODE_REL;
        case_ratio(&p, src);
        tu_fill(TU_GEN_ZEROS, t, src, n, 1);
        p.mode = FZ_MODE_ABS;
        CHECK(case_ratio(&p, src) > 100);
        fill_ramp(t, src, n);
        tu_context("ramp %s", tu_dtype_name(t));
        CHECK(case_ratio(&p, src) > 20);
        tu_fill(TU_GEN_SMOOTH, t, src, n, 3);
        tu_context("smooth %s", tu_dtype_name(t));
        p.mode = FZ_MODE_REL;
        p.bound = 1e-2;
        CHECK(case_ratio(&p, src) > 4);
        free(src);
    }
}

/* The radius option at its limits. */
static void group_radius(void) {
    const int32_t radii[] = {2, 3, 100, 32768};
    for (int ti = 0; ti < 2; ti++)
        for (size_t ri = 0; ri < 4; ri++)
            for (int g = 0; g < TU_GEN_COUNT; g++) {
                const fz_dtype t = dtypes[ti];
                const uint64_t dims[2] = {100, 77};
                const size_t n = 7700;
                void *src = tu_xmalloc(n * tu_dtype_size(t));
                tu_fill((tu_gen)g, t, src, n, 21);
                tu_context("radius %d %s %s", radii[ri], tu_dtype_name(t),
                           tu_gen_name((tu_gen)g));
                fz_params p = lz_params(t, 2, dims, FZ_MODE_REL, 1e-4);
                p.codec_options[0] = radii[ri];
                case_ratio(&p, src);
                free(src);
            }
}

/* Several chunks (2 MiB each) in every dimensionality, bytes independent
 * of the thread count. */
static void group_threads(void) {
    const shape big[] = {{1, {1200000, 1, 1, 1}},
                         {2, {1000, 1100, 1, 1}},
                         {3, {90, 70, 160, 1}}};
    for (int ti = 0; ti < 2; ti++)
        for (int si = 0; si < 3; si++) {
            const fz_dtype t = dtypes[ti];
            const size_t n = (size_t)shape_count(&big[si]);
            void *src = tu_xmalloc(n * tu_dtype_size(t));
            tu_fill(TU_GEN_MIXED, t, src, n, 8);
            tu_context("threads %s shape %d", tu_dtype_name(t), si);
            fz_params p =
                lz_params(t, big[si].nd, big[si].d, FZ_MODE_REL, 1e-3);
            size_t size1 = 0, size;
            p.threads = 1;
            uint8_t *one = round_trip(&p, src, &size1);
            fz_info info;
            CHECK_OK(fz_inspect(one, size1, &info));
            CHECK(info.chunk_count >= 2);
            const int32_t counts[] = {2, 7, 16};
            for (int k = 0; k < 3; k++) {
                p.threads = counts[k];
                uint8_t *other = round_trip(&p, src, &size);
                CHECK_EQ_U64(size, size1);
                CHECK(memcmp(one, other, size) == 0);
                free(other);
            }
            free(one);
            free(src);
        }
}

/* A decode of a damaged stream: an error status, or (checksums on) the
 * very bytes of the undamaged decode. Never a crash (the ASan build
 * runs this too). */
static void damaged_case(const uint8_t *stream, size_t size, const void *want,
                         size_t bytes, int checksums) {
    uint8_t *out = (uint8_t *)tu_xmalloc(bytes);
    size_t got = 0;
    fz_status s = fz_decompress(stream, size, out, bytes, NULL, &got);
    if (s == FZ_OK && checksums)
        CHECK(memcmp(out, want, bytes) == 0);
    free(out);
}

static void group_corruption(void) {
    for (int ti = 0; ti < 2; ti++)
        for (int g = 0; g < TU_GEN_COUNT; g++)
            for (int checksums = 0; checksums < 4; checksums++) {
                const fz_dtype t = dtypes[ti];
                const uint64_t dims[2] = {40, 33};
                const size_t n = 40 * 33, bytes = n * tu_dtype_size(t);
                void *src = tu_xmalloc(bytes);
                tu_fill((tu_gen)g, t, src, n, 4);
                fz_params p = lz_params(t, 2, dims, FZ_MODE_ABS, 1e-2);
                p.flags = checksums & 1 ? 0 : FZ_FLAG_NO_CHECKSUM;
                p.codec_options[1] = checksums >> 1; /* zero runs */
                tu_context("corruption %s %s checksums %d zero runs %d",
                           tu_dtype_name(t), tu_gen_name((tu_gen)g),
                           checksums & 1, checksums >> 1);
                size_t size = 0, got = 0;
                uint8_t *stream = round_trip(&p, src, &size);
                uint8_t *want = (uint8_t *)tu_xmalloc(bytes);
                CHECK_OK(fz_decompress(stream, size, want, bytes, NULL, &got));
                for (size_t cut = 0; cut < size; cut++) {
                    uint8_t *o = (uint8_t *)tu_xmalloc(bytes);
                    CHECK_ERROR(
                        fz_decompress(stream, cut, o, bytes, NULL, &got));
                    free(o);
                }
                tu_rng r = tu_rng_make((uint64_t)g);
                for (size_t pos = 0; pos < size; pos++) {
                    const uint8_t keep = stream[pos];
                    stream[pos] ^= (uint8_t)(1u << tu_below(&r, 8));
                    damaged_case(stream, size, want, bytes, checksums & 1);
                    stream[pos] = (uint8_t)tu_below(&r, 256);
                    damaged_case(stream, size, want, bytes, checksums & 1);
                    stream[pos] = keep;
                }
                free(want);
                free(stream);
                free(src);
            }
}

static void group_invalid(void) {
    float src[64] = {0};
    uint8_t dst[4096];
    size_t size = 0;
    const uint64_t dims[1] = {64};
    tu_context("lossless mode");
    fz_params p = lz_params(FZ_F32, 1, dims, FZ_MODE_LOSSLESS, 0);
    CHECK_STATUS(fz_compress(&p, src, sizeof src, dst, sizeof dst, &size),
                 FZ_ERR_UNSUPPORTED);
    tu_context("bound 0: every chunk verbatim, exact");
    for (int i = 0; i < 64; i++)
        src[i] = 1.0f + (float)i / 3.0f;
    const fz_mode zero_modes[2] = {FZ_MODE_ABS, FZ_MODE_REL};
    for (int m = 0; m < 2; m++) {
        p = lz_params(FZ_F32, 1, dims, zero_modes[m], m ? -0.0 : 0.0);
        CHECK_OK(fz_compress(&p, src, sizeof src, dst, sizeof dst, &size));
        CHECK_EQ_U64(size, FZ_HEADER_BYTES + 8 + 8 + sizeof src);
        float back[64];
        size_t got = 0;
        CHECK_OK(fz_decompress(dst, size, back, sizeof back, NULL, &got));
        CHECK(got == sizeof src && memcmp(back, src, sizeof src) == 0);
    }
    tu_context("NaN bound");
    p = lz_params(FZ_F32, 1, dims, FZ_MODE_ABS, NAN);
    CHECK_STATUS(fz_compress(&p, src, sizeof src, dst, sizeof dst, &size),
                 FZ_ERR_INVALID_ARGUMENT);
    tu_context("radius out of range, unused options");
    const int32_t bad[][4] = {{1, 0, 0, 0}, {-5, 0, 0, 0}, {32769, 0, 0, 0},
                              {0, 2, 0, 0}, {0, -1, 0, 0}, {32753, 1, 0, 0},
                              {0, 0, 1, 0}, {0, 0, 0, 7}};
    for (int k = 0; k < 8; k++) {
        p = lz_params(FZ_F32, 1, dims, FZ_MODE_ABS, 1e-3);
        memcpy(p.codec_options, bad[k], sizeof p.codec_options);
        CHECK_STATUS(fz_compress(&p, src, sizeof src, dst, sizeof dst, &size),
                     FZ_ERR_INVALID_ARGUMENT);
    }
    tu_context("zero runs: both backends (where there is a GPU backend)");
    p = lz_params(FZ_F32, 1, dims, FZ_MODE_ABS, 1e-3);
    p.codec_options[1] = (int32_t)LZ_OPT_ZERO_RUNS;
    CHECK_OK(fz_compress(&p, src, sizeof src, dst, sizeof dst, &size));
    fz_params plain = p;
    plain.codec_options[1] = 0;
    CHECK(fz_gpu_supports(&p) == fz_gpu_supports(&plain));
    fz_codec c;
    CHECK_OK(fz_codec_from_name("lorenzo", &c));
    CHECK(c == FZ_CODEC_LORENZO);
    CHECK(strcmp(fz_codec_name(FZ_CODEC_LORENZO), "lorenzo") == 0);
    cases_run++;
}

/* ------------------------------------------------- Huffman unit tests */
typedef struct huff_fixture {
    lz_huff hf;
    uint8_t *len;
    uint32_t *syms;
} huff_fixture;

/* Sub-block bit counts that do not fit their sub-block are rejected: none,
 * fewer bits than codes, more than LZ_HUFF_MAXLEN per code, the u16 limit,
 * and 8 bits moved between neighbours (the same total bytes). */
static void huff_bad_sizes(uint8_t *buf, uint64_t size, uint16_t *back,
                           uint64_t n, huff_fixture *f, uint32_t nsym) {
    const uint32_t lo = fz_load16(buf), hi = fz_load16(buf + 2);
    uint8_t *sizes = buf + lz_table_bytes(0, lz_table_entries(lo, hi, 0));
    const uint64_t nsub = lz_sub_count(n);
    for (uint64_t b = 0; b < nsub && b < 6; b++) {
        const uint64_t count =
            b + 1 < nsub ? LZ_SUB_SYMBOLS : n - b * LZ_SUB_SYMBOLS;
        const uint32_t bits = fz_load16(sizes + LZ_SUB_SIZE * b);
        const uint32_t bad[] = {0,
                                (uint32_t)count - 1,
                                LZ_HUFF_MAXLEN * (uint32_t)count + 1,
                                65535,
                                bits + 8,
                                bits - 8};
        for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
            if (bad[k] == bits || bad[k] > 65535 ||
                (k >= 4 && (b + 1 >= nsub || bits < 8)))
                continue;
            fz_store16(sizes + LZ_SUB_SIZE * b, (uint16_t)bad[k]);
            uint32_t next = 0;
            if (k >= 4) { /* the neighbour gives or takes the 8 bits */
                next = fz_load16(sizes + LZ_SUB_SIZE * (b + 1));
                const uint32_t moved = k == 4 ? next - 8 : next + 8;
                if (next < 8 || moved > 65535) {
                    fz_store16(sizes + LZ_SUB_SIZE * b, (uint16_t)bits);
                    continue;
                }
                fz_store16(sizes + LZ_SUB_SIZE * (b + 1), (uint16_t)moved);
            }
            CHECK(lz_huff_read(buf, (size_t)size, back, n, nsym, f->len,
                               f->syms) == FZS_CORRUPT_CHUNK);
            fz_store16(sizes + LZ_SUB_SIZE * b, (uint16_t)bits);
            if (k >= 4)
                fz_store16(sizes + LZ_SUB_SIZE * (b + 1), (uint16_t)next);
        }
    }
    CHECK(lz_huff_read(buf, (size_t)size, back, n, nsym, f->len, f->syms) ==
          FZS_OK);
}

/* The reference reader: lz_huff_read's checks with one canonical search
 * per code (lz_huff_next) instead of the look-up table. */
static int huff_read_serial(const uint8_t *p, size_t size, uint16_t *codes,
                            uint64_t n, uint32_t nsym, uint8_t *len,
                            uint32_t *syms) {
    lz_huff_table t;
    const uint32_t at = lz_huff_parse_table(p, size, n, nsym, len, &t, syms);
    if (!at)
        return FZS_CORRUPT_CHUNK;
    const uint64_t nsub = lz_sub_count(n);
    const uint8_t *data = p + at + LZ_SUB_SIZE * nsub;
    uint64_t left = size - at - LZ_SUB_SIZE * nsub;
    for (uint64_t b = 0; b < nsub; b++) {
        const uint32_t bits = fz_load16(p + at + LZ_SUB_SIZE * b);
        const uint64_t bytes = ((uint64_t)bits + 7) / 8;
        const uint64_t end =
            (b + 1) * LZ_SUB_SYMBOLS < n ? (b + 1) * LZ_SUB_SYMBOLS : n;
        if (bytes > left || !lz_sub_bits_ok(bits, end - b * LZ_SUB_SYMBOLS))
            return FZS_CORRUPT_CHUNK;
        uint64_t pos = 0;
        for (uint64_t i = b * LZ_SUB_SYMBOLS; i < end; i++) {
            const int32_t sym = lz_huff_next(&t, syms, data, bits, &pos);
            if (sym < 0)
                return FZS_CORRUPT_CHUNK;
            codes[i] = (uint16_t)sym;
        }
        if (pos != bits ||
            (bits & 7 && data[bytes - 1] & (0xFFu >> (bits & 7))))
            return FZS_CORRUPT_CHUNK;
        data += bytes;
        left -= bytes;
    }
    return left == 0 ? FZS_OK : FZS_CORRUPT_CHUNK;
}

/* Lengths <= 20 with a complete code (or one symbol of length 1), plan
 * size equal to the written size, decode equal to the input. */
static void huff_round_trip(const uint16_t *codes, uint64_t n, uint32_t nsym) {
    huff_fixture f;
    CHECK(lz_huff_alloc(&f.hf, n, nsym));
    f.len = (uint8_t *)tu_xmalloc(nsym);
    f.syms = (uint32_t *)tu_xmalloc(nsym * sizeof(uint32_t));
    const uint64_t size = lz_huff_plan(&f.hf, codes, n);
    uint32_t count[LZ_HUFF_MAXLEN + 1], first[LZ_HUFF_MAXLEN + 1],
        base[LZ_HUFF_MAXLEN + 1], used = 0;
    for (uint32_t s = 0; s < nsym; s++) {
        CHECK(f.hf.len[s] <= LZ_HUFF_MAXLEN);
        CHECK((f.hf.len[s] != 0) == (f.hf.freq[s] != 0));
        used += f.hf.len[s] != 0;
    }
    const uint64_t kraft = lz_canonical(f.hf.len, nsym, count, first, base);
    CHECK_EQ_U64(kraft,
                 used == 1 ? 1u << (LZ_HUFF_MAXLEN - 1) : 1u << LZ_HUFF_MAXLEN);
    uint8_t *buf = (uint8_t *)tu_xmalloc((size_t)size + 8);
    memset(buf, 0xAB, (size_t)size + 8);
    lz_huff_write(&f.hf, codes, n, buf);
    for (int k = 0; k < 8; k++) /* wrote exactly the planned size */
        CHECK(buf[size + (size_t)k] == 0xAB);
    uint16_t *back = (uint16_t *)tu_xmalloc((size_t)n * 2);
    uint16_t *ref = (uint16_t *)tu_xmalloc((size_t)n * 2);
    CHECK(lz_huff_read(buf, (size_t)size, back, n, nsym, f.len, f.syms) ==
          FZS_OK);
    CHECK(memcmp(back, codes, (size_t)n * 2) == 0);
    /* one byte short or long, and every single bit flip: rejected or a
     * valid decode of other codes, never out of bounds */
    CHECK(lz_huff_read(buf, (size_t)size - 1, back, n, nsym, f.len, f.syms) !=
          FZS_OK);
    CHECK(lz_huff_read(buf, (size_t)size + 1, back, n, nsym, f.len, f.syms) !=
          FZS_OK);
    for (uint64_t bit = 0; n <= 20000 && bit < 8 * size && bit < 20000; bit++) {
        buf[bit / 8] ^= (uint8_t)(1u << (bit % 8));
        int s = lz_huff_read(buf, (size_t)size, back, n, nsym, f.len, f.syms);
        CHECK(s == FZS_OK || s == FZS_CORRUPT_CHUNK);
        /* the table reader accepts exactly what the serial one does */
        const int s_ref =
            huff_read_serial(buf, (size_t)size, ref, n, nsym, f.len, f.syms);
        CHECK(s == s_ref);
        CHECK(s != FZS_OK || memcmp(back, ref, (size_t)n * 2) == 0);
        buf[bit / 8] ^= (uint8_t)(1u << (bit % 8));
    }
    huff_bad_sizes(buf, size, back, n, &f, nsym);
    free(ref);
    free(back);
    free(buf);
    free(f.len);
    free(f.syms);
    lz_huff_free(&f.hf);
    cases_run++;
}

static void group_huffman(void) {
    const uint32_t nsym = 1024;
    const uint64_t n = 12 * LZ_SUB_SYMBOLS + 123;
    uint16_t *codes = (uint16_t *)tu_xmalloc((size_t)n * 2);
    tu_context("single symbol");
    for (uint64_t i = 0; i < n; i++)
        codes[i] = 512;
    huff_round_trip(codes, n, nsym);
    huff_round_trip(codes, 1, nsym);
    tu_context("two symbols");
    codes[77] = 1023;
    huff_round_trip(codes, n, nsym);
    tu_context("uniform over 256 symbols: all lengths 8");
    for (uint64_t i = 0; i < n; i++)
        codes[i] = (uint16_t)(i % 256);
    huff_round_trip(codes, n, nsym);
    {
        lz_huff hf;
        CHECK(lz_huff_alloc(&hf, 256 * 16, nsym));
        lz_huff_plan(&hf, codes, 256 * 16);
        for (uint32_t s = 0; s < 256; s++)
            CHECK_EQ_U64(hf.len[s], 8);
        lz_huff_free(&hf);
    }
    tu_context("uniform over all 1024 symbols");
    for (uint64_t i = 0; i < n; i++)
        codes[i] = (uint16_t)(i % 1024);
    huff_round_trip(codes, n, nsym);
    tu_context("skewed: geometric frequencies (length limit active)");
    {
        const uint64_t m = 3000000;
        uint16_t *big = (uint16_t *)tu_xmalloc((size_t)m * 2);
        uint64_t at = 0;
        for (uint32_t s = 0; s < 40 && at < m; s++) {
            uint64_t f = m >> (s + 1);
            if (f == 0)
                f = 1;
            for (uint64_t k = 0; k < f && at < m; k++)
                big[at++] = (uint16_t)s;
        }
        while (at < m)
            big[at++] = 100;
        huff_round_trip(big, m, nsym);
        lz_huff hf;
        CHECK(lz_huff_alloc(&hf, m, nsym));
        lz_huff_plan(&hf, big, m);
        uint32_t longest = 0;
        for (uint32_t s = 0; s < nsym; s++)
            longest = hf.len[s] > longest ? hf.len[s] : longest;
        CHECK(longest >= 16 && longest <= LZ_HUFF_MAXLEN);
        lz_huff_free(&hf);
        free(big);
    }
    tu_context("random skewed");
    tu_rng r = tu_rng_make(3);
    for (uint64_t i = 0; i < n; i++) {
        uint64_t x = tu_next(&r);
        codes[i] = (uint16_t)(512 + (int)(x % 7) -
                              (int)((x >> 8) % 5) * (int)((x >> 16) % 3));
    }
    huff_round_trip(codes, n, nsym);
    free(codes);
}

/* ------------------------------------- package-merge code lengths */
/* sum f * len and the Kraft sum scaled by 2^limit of lengths len[0..n). */
static uint64_t pm_cost(const uint32_t *f, const uint8_t *len, uint32_t n) {
    uint64_t c = 0;
    for (uint32_t i = 0; i < n; i++)
        c += (uint64_t)f[i] * len[i];
    return c;
}

static uint64_t pm_kraft(const uint8_t *len, uint32_t n, uint32_t limit) {
    uint64_t k = 0;
    for (uint32_t i = 0; i < n; i++)
        if (len[i])
            k += 1ull << (limit - len[i]);
    return k;
}

/* Unlimited Huffman cost and depth of the used frequencies (plain
 * O(n^2) two-smallest merging with depths carried per node). */
static uint64_t huffman_cost(const uint32_t *f, uint32_t n, uint32_t *depth) {
    uint64_t w[64], cost = 0;
    uint32_t d[64], m = 0;
    for (uint32_t i = 0; i < n; i++)
        if (f[i]) {
            w[m] = f[i];
            d[m++] = 0;
        }
    *depth = m == 1 ? 1 : 0;
    while (m > 1) {
        for (int pass = 0; pass < 2; pass++) { /* two smallest to the end */
            uint32_t best = 0;
            for (uint32_t k = 1; k < m - (uint32_t)pass; k++)
                if (w[k] < w[best])
                    best = k;
            const uint32_t last = m - 1 - (uint32_t)pass;
            uint64_t tw = w[best];
            uint32_t td = d[best];
            w[best] = w[last];
            d[best] = d[last];
            w[last] = tw;
            d[last] = td;
        }
        w[m - 2] += w[m - 1];
        d[m - 2] = (d[m - 2] > d[m - 1] ? d[m - 2] : d[m - 1]) + 1;
        cost += w[m - 2];
        m--;
    }
    if (m == 1 && d[0] > *depth)
        *depth = d[0];
    return cost;
}

/* Optimal cost of lengths <= limit by brute force: frequencies sorted
 * ascending, lengths non-increasing (an optimal code has such lengths),
 * every sequence with a Kraft sum <= 1 tried. */
static uint64_t brute_best;
static void brute(const uint32_t *fs, uint32_t n, uint32_t limit, uint32_t i,
                  uint32_t maxlen, uint64_t kraft, uint64_t cost) {
    if (i == n) {
        if (kraft <= 1ull << limit && cost < brute_best)
            brute_best = cost;
        return;
    }
    for (uint32_t l = 1; l <= maxlen; l++) {
        if (kraft + (1ull << (limit - l)) > 1ull << limit)
            continue;
        brute(fs, n, limit, i + 1, l, kraft + (1ull << (limit - l)),
              cost + (uint64_t)fs[i] * l);
    }
}

static uint64_t brute_optimum(const uint32_t *f, uint32_t n, uint32_t limit) {
    uint32_t fs[16];
    for (uint32_t i = 0; i < n; i++) { /* insertion sort, ascending */
        uint32_t k = i;
        for (; k > 0 && fs[k - 1] > f[i]; k--)
            fs[k] = fs[k - 1];
        fs[k] = f[i];
    }
    brute_best = UINT64_MAX;
    brute(fs, n, limit, 0, limit, 0, 0);
    return brute_best;
}

/* Lengths of freq[0..nsym) with `limit`: valid (0 exactly for unused,
 * 1..limit, Kraft sum 1, or one symbol of length 1); returns the cost. */
static uint64_t pm_check(const uint32_t *freq, uint32_t nsym, uint32_t limit,
                         uint8_t *len) {
    lz_huff hf;
    CHECK(lz_huff_alloc(&hf, 1, nsym));
    CHECK(lz_huff_lengths_limit(freq, nsym, limit, len, hf.s));
    uint32_t used = 0;
    for (uint32_t s = 0; s < nsym; s++) {
        CHECK((len[s] != 0) == (freq[s] != 0));
        CHECK(len[s] <= limit);
        used += freq[s] != 0;
    }
    CHECK_EQ_U64(pm_kraft(len, nsym, limit),
                 used == 1 ? 1ull << (limit - 1) : 1ull << limit);
    lz_huff_free(&hf);
    cases_run++;
    return pm_cost(freq, len, nsym);
}

/* Merging a level from any word-aligned output position, or finding one
 * item alone, gives the same list and flags as one merge from the start
 * (the GPU's ways). */
static void pm_cut_merges(tu_rng *r) {
    enum { N = 300, B = 500 };
    uint64_t leaves[N], below[B], whole[N + B / 2], cut[N + B / 2];
    uint32_t bits_whole[(N + B / 2 + 31) / 32], bits_cut[(N + B / 2 + 31) / 32];
    for (int trial = 0; trial < 200; trial++) {
        const uint32_t n = 1 + (uint32_t)tu_below(r, N);
        const uint32_t nb = (uint32_t)tu_below(r, B + 1);
        const uint64_t range = 1 + tu_below(r, trial % 2 ? 8 : 100000);
        uint64_t acc = 0;
        for (uint32_t i = 0; i < n; i++) {
            acc += tu_below(r, range);
            leaves[i] = lz_pm_key((uint32_t)acc, i);
        }
        acc = 0;
        for (uint32_t i = 0; i < nb; i++) {
            acc += tu_below(r, range);
            below[i] = acc;
        }
        const uint32_t size = n + nb / 2;
        lz_pm_merge(leaves, n, below, nb, 0, size, whole, bits_whole);
        const uint32_t span = 32 * (1 + (uint32_t)tu_below(r, 3));
        for (uint32_t d0 = 0; d0 < size; d0 += span)
            lz_pm_merge(leaves, n, below, nb, d0,
                        size - d0 < span ? size : d0 + span, cut, bits_cut);
        CHECK(memcmp(whole, cut, size * sizeof(uint64_t)) == 0);
        CHECK(memcmp(bits_whole, bits_cut, (size + 31) / 32 * 4) == 0);
        for (uint32_t d = 0; d < size; d++) { /* each item on its own */
            uint32_t is_leaf = 2;
            CHECK(lz_pm_item(leaves, n, below, nb, d, &is_leaf) == whole[d]);
            CHECK(is_leaf == (bits_whole[d / 32] >> (d % 32) & 1));
        }
        uint32_t leaves_seen = 0; /* stable: leaves in order, leaf first */
        for (uint32_t d = 0; d < size; d++)
            if (bits_whole[d / 32] >> (d % 32) & 1)
                CHECK(whole[d] == lz_pm_weight(leaves[leaves_seen++]));
        CHECK_EQ_U64(leaves_seen, n);
    }
    cases_run++;
}

static void group_lengths(void) {
    uint32_t freq[1024];
    uint8_t len[1024];
    tu_context("one used symbol, two used symbols");
    memset(freq, 0, sizeof freq);
    freq[700] = 5;
    pm_check(freq, 1024, LZ_HUFF_MAXLEN, len);
    CHECK_EQ_U64(len[700], 1);
    freq[3] = 1000000;
    pm_check(freq, 1024, LZ_HUFF_MAXLEN, len);
    CHECK(len[3] == 1 && len[700] == 1);
    tu_context("uniform over 256 symbols: all of length 8");
    for (uint32_t s = 0; s < 1024; s++)
        freq[s] = s < 256 ? 9 : 0;
    pm_check(freq, 1024, LZ_HUFF_MAXLEN, len);
    for (uint32_t s = 0; s < 256; s++)
        CHECK_EQ_U64(len[s], 8);
    tu_context("Fibonacci frequencies: the 20-bit limit binds");
    {
        uint32_t fib[40];
        fib[0] = fib[1] = 1;
        for (int k = 2; k < 40; k++)
            fib[k] = fib[k - 1] + fib[k - 2];
        memset(freq, 0, sizeof freq);
        for (int k = 0; k < 32; k++) /* Huffman depth 31 */
            freq[100 + 7 * k] = fib[k];
        uint32_t depth;
        const uint64_t unlimited = huffman_cost(freq + 100, 7 * 32, &depth);
        CHECK(depth > LZ_HUFF_MAXLEN);
        const uint64_t c = pm_check(freq, 1024, LZ_HUFF_MAXLEN, len);
        uint32_t longest = 0;
        for (uint32_t s = 0; s < 1024; s++)
            longest = len[s] > longest ? len[s] : longest;
        CHECK_EQ_U64(longest, LZ_HUFF_MAXLEN);
        CHECK(c > unlimited);
        /* lengths never shrink with the frequency */
        for (int k = 1; k < 32; k++)
            CHECK(len[100 + 7 * k] <= len[100 + 7 * (k - 1)]);
    }
    tu_rng r = tu_rng_make(23);
    tu_context("random histograms: optimal (brute force), Huffman if free");
    for (int trial = 0; trial < 300; trial++) {
        const uint32_t nsym = 2 + (uint32_t)tu_below(&r, 15), kinds = 3;
        uint32_t used = 0;
        for (uint32_t s = 0; s < nsym; s++) {
            const uint64_t k = tu_below(&r, kinds);
            freq[s] = k == 0 && trial % 4 ? 0
                      : k == 1            ? 1 + (uint32_t)tu_below(&r, 4)
                                          : 1 + (uint32_t)tu_below(&r, 1000);
            used += freq[s] != 0;
        }
        if (used > 12 || used < 2)
            continue;
        uint32_t need = 1;
        while ((1u << need) < used)
            need++;
        uint32_t f[16], m = 0, depth;
        for (uint32_t s = 0; s < nsym; s++)
            if (freq[s])
                f[m++] = freq[s];
        const uint64_t unlimited = huffman_cost(f, m, &depth);
        for (uint32_t limit = need; limit <= need + 3; limit++) {
            tu_context("random histogram %d, %u used, limit %u", trial, used,
                       limit);
            const uint64_t c = pm_check(freq, nsym, limit, len);
            CHECK_EQ_U64(c, brute_optimum(f, m, limit));
            CHECK(c >= unlimited);
            if (depth <= limit)
                CHECK_EQ_U64(c, unlimited);
        }
    }
    tu_context("large alphabet, all 65536 symbols used");
    {
        const uint32_t nsym = 65536;
        uint32_t *big = (uint32_t *)tu_xmalloc(nsym * sizeof(uint32_t));
        uint8_t *blen = (uint8_t *)tu_xmalloc(nsym);
        for (uint32_t s = 0; s < nsym; s++)
            big[s] = 1 + (uint32_t)tu_below(&r, s < 100 ? 1u << 24 : 50);
        pm_check(big, nsym, LZ_HUFF_MAXLEN, blen);
        free(big);
        free(blen);
    }
    tu_context("too many symbols for the limit");
    {
        lz_huff hf;
        CHECK(lz_huff_alloc(&hf, 1, 16));
        for (uint32_t s = 0; s < 16; s++)
            freq[s] = 1;
        CHECK(!lz_huff_lengths_limit(freq, 16, 3, len, hf.s));
        CHECK(lz_huff_lengths_limit(freq, 16, 4, len, hf.s));
        lz_huff_free(&hf);
    }
    tu_context("package-merge levels cut anywhere");
    pm_cut_merges(&r);
}

/* The quantizer's lz_round (no libm) is round() (half away from zero) for
 * every |x| < 2^27 it is given: on the products d x (1 / 2eb) (and the
 * quotients d / 2eb) of random bit patterns, of half-way points
 * (m + 1/2) 2eb and of their neighbours, and on the exact half-way points
 * near zero. */
static void check_round(double x) {
    if (x < LZ_Q_LIMIT && x > -LZ_Q_LIMIT)
        CHECK(lz_round(x) == (int32_t)round(x));
}

static void group_quant(void) {
    const double ebs[] = {1e-3, 0.5, 3.0, 1e-30, 7.7e-7, 1e10, 0x1p-20};
    tu_rng r = tu_rng_make(17);
    for (size_t bi = 0; bi < sizeof ebs / sizeof ebs[0]; bi++) {
        const double eb = ebs[bi], ebx2 = lz_ebx2(eb);
        tu_context("prequantization eb %g", eb);
        for (int k = 0; k < 200000; k++) {
            double v;
            const uint64_t pick = tu_below(&r, 4);
            if (pick == 0) { /* any bits */
                const uint64_t b = tu_next(&r);
                memcpy(&v, &b, 8);
            } else { /* (m + 1/2) 2eb, up to the 2^27 limit, and neighbours */
                const double m =
                    (double)((int64_t)tu_below(&r, 1u << 28) - (1 << 27));
                v = (m + 0.5) * ebx2;
                if (pick == 2)
                    v = nextafter(v, INFINITY);
                if (pick == 3)
                    v = nextafter(v, -INFINITY);
            }
            check_round(v / ebx2);
            check_round((double)(float)v / ebx2);
            check_round(v * lz_inv_ebx2(ebx2));
            check_round((double)(float)v * lz_inv_ebx2(ebx2));
        }
        cases_run++;
    }
    for (int32_t t = -3; t <= 3; t++) /* exact half-way points */
        for (int s = -1; s <= 1; s += 2) {
            const double x = (double)t + 0.5 * s;
            check_round(x);
            check_round(nextafter(x, 0));
            check_round(nextafter(x, 2 * x));
        }
}

/* lz_prequant64/32 on one value: accepted values have q = round(d x
 * inv), |q| < 2^27 and the returned reconstruction, within eb; rejected
 * ones q = 0 and their own bits. Returns whether it was accepted. */
static int prequant_checked(double v, const lz_quant *z, int f32) {
    int32_t q = 7;
    int ok;
    double r;
    if (f32) {
        if (!(fabs(v) <= FLT_MAX) && !isnan(v)) /* no out-of-range casts */
            v = v > 0 ? INFINITY : -INFINITY;
        const float f = (float)v;
        uint32_t b, rb = 0;
        memcpy(&b, &f, 4);
        ok = lz_prequant32(b, z, &q, &rb);
        float rf;
        memcpy(&rf, &rb, 4);
        r = (double)rf;
        v = (double)f;
        CHECK(ok ? rf == lz_recon32(q, z->ebx2) : rb == b);
    } else {
        uint64_t b, rb = 0;
        memcpy(&b, &v, 8);
        ok = lz_prequant64(b, z, &q, &rb);
        memcpy(&r, &rb, 8);
        CHECK(ok ? r == lz_recon64(q, z->ebx2) : rb == b);
    }
    /* a q whenever x is usable: finite, normal or +0.0, |x| < 2^27 */
    const double x = v * z->inv, tiny = f32 ? FLT_MIN : DBL_MIN;
    const int usable =
        (v == 0.0 ? !signbit(v) : fabs(v) >= tiny) && fabs(x) < 0x1p27;
    if (ok) {
        CHECK(usable);
        CHECK(q == (int32_t)round(x));
        CHECK(q < (1 << 27) && q > -(1 << 27));
        CHECK(fabs(r - v) <= z->eb);
    } else {
        CHECK(q == (usable ? (int32_t)round(x) : 0));
    }
    return ok;
}

/* The multiplication by 1 / 2eb at the extremes of eb: a subnormal 2eb
 * (1 / 2eb overflows: clamped, +0.0 still quantizes to 0, the rest is
 * checked), the largest eb (2eb clamped), and special values. */
static void group_prequant(void) {
    const double ebs[] = {0x1p-1074, 0x1p-1060, 0x1p-1023, 1e-300,
                          1e-3,      1.0,       1e300,     DBL_MAX};
    tu_rng r = tu_rng_make(23);
    for (size_t bi = 0; bi < sizeof ebs / sizeof ebs[0]; bi++) {
        const lz_quant z = lz_quant_of(ebs[bi]);
        tu_context("prequant eb %g", ebs[bi]);
        CHECK(z.inv > 0 && z.inv <= DBL_MAX);
        for (int f32 = 0; f32 < 2; f32++) {
            CHECK(prequant_checked(0.0, &z, f32)); /* +0.0: q = 0 */
            CHECK(!prequant_checked(-0.0, &z, f32));
            CHECK(!prequant_checked(INFINITY, &z, f32));
            CHECK(!prequant_checked(-INFINITY, &z, f32));
            CHECK(!prequant_checked(NAN, &z, f32));
            CHECK(!prequant_checked(f32 ? 1e-40 : 1e-310, &z, f32));
            for (int k = 0; k < 20000; k++) {
                uint64_t b = tu_next(&r);
                double v;
                memcpy(&v, &b, 8);
                if (k & 1) /* near the bound's scale */
                    v = ldexp((double)(int64_t)(b >> 11) * 0x1p-53,
                              (int)tu_below(&r, 60)) *
                        z.ebx2;
                prequant_checked(v, &z, f32);
            }
        }
        cases_run++;
    }
    tu_context("prequant tiny 2eb");
    const lz_quant tiny = lz_quant_of(0x1p-1074);
    CHECK(tiny.inv == DBL_MAX);
    CHECK(!prequant_checked(1.0, &tiny, 0)); /* q off by far: an exception */
    const lz_quant big = lz_quant_of(DBL_MAX);
    CHECK(big.ebx2 == DBL_MAX);
    CHECK(prequant_checked(1e308, &big, 0)); /* q = 0, |d| <= eb */
}

/* ------------------------------------------------ RLE code streams */
/* An RLE stream of `runs` runs: the codes, then `lens` (nlens bytes). */
static size_t rle_stream(uint8_t *p, uint32_t runs, const uint16_t *codes,
                         const uint8_t *lens, size_t nlens) {
    fz_store32(p, runs);
    for (uint32_t r = 0; r < runs; r++)
        fz_store16(p + 4 + 2 * r, codes[r]);
    memcpy(p + 4 + 2 * (size_t)runs, lens, nlens);
    return 4 + 2 * (size_t)runs + nlens;
}

static int rle_decodes(uint32_t runs, const uint16_t *codes,
                       const uint8_t *lens, size_t nlens, uint64_t n,
                       uint16_t *out) {
    uint8_t buf[64];
    const size_t size = rle_stream(buf, runs, codes, lens, nlens);
    return lz_rle_read(buf, buf + size, out, n, 1024) == FZS_OK;
}

/* The layout (codes, then lengths) and every rule of the RLE reader. */
static void group_rle(void) {
    uint16_t out[300];
    const uint16_t two[2] = {5, 7};
    const uint8_t ok[3] = {3, 0xC8, 0x01}; /* 3, then 200 */
    tu_context("valid");
    CHECK(rle_decodes(2, two, ok, 3, 203, out));
    CHECK(out[0] == 5 && out[2] == 5 && out[3] == 7 && out[202] == 7);
    tu_context("sum differs from n");
    CHECK(!rle_decodes(2, two, ok, 3, 204, out));
    CHECK(!rle_decodes(2, two, ok, 3, 202, out));
    tu_context("length 0");
    const uint8_t zero[3] = {0, 0xC8, 0x01};
    CHECK(!rle_decodes(2, two, zero, 3, 200, out));
    tu_context("not minimal");
    const uint8_t padded[4] = {0x83, 0x00, 0xC8, 0x01};
    CHECK(!rle_decodes(2, two, padded, 4, 203, out));
    tu_context("more than 5 bytes");
    const uint8_t six[7] = {0x83, 0x80, 0x80, 0x80, 0x80, 0x00, 1};
    CHECK(!rle_decodes(2, two, six, 7, 4, out));
    tu_context("5 bytes, more than n");
    const uint8_t five[6] = {0x83, 0x80, 0x80, 0x80, 0x01, 1};
    CHECK(!rle_decodes(2, two, five, 6, 300, out));
    tu_context("equal neighbours, code out of range");
    const uint16_t same[2] = {5, 5}, big[2] = {5, 1024};
    CHECK(!rle_decodes(2, same, ok, 3, 203, out));
    CHECK(!rle_decodes(2, big, ok, 3, 203, out));
    tu_context("bytes left over, lengths cut short, runs over the end");
    const uint8_t extra[4] = {3, 0xC8, 0x01, 1};
    CHECK(!rle_decodes(2, two, extra, 4, 203, out));
    CHECK(!rle_decodes(2, two, ok, 2, 203, out));
    uint8_t buf[8];
    fz_store32(buf, 3);
    fz_store16(buf + 4, 5);
    buf[6] = 1;
    CHECK(lz_rle_read(buf, buf + 7, out, 1, 1024) != FZS_OK);
    cases_run++;
}

/* ------------------------------------------------- pinned stream bytes */
/* FNV-1a 64 of a byte range. */
static uint64_t fnv64(const uint8_t *p, size_t n) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

/* Smooth integer-derived field plus LCG noise, with special values every
 * so often: built from integers and exact conversions only, so the input
 * is the same on every host. */
static void pinned_fill(fz_dtype t, void *a, size_t n, uint64_t seed,
                        int specials) {
    tu_rng r = tu_rng_make(seed);
    for (size_t i = 0; i < n; i++) {
        const int64_t x = (int64_t)(i % 97), y = (int64_t)((i / 97) % 61);
        const int64_t base = x * x - 3 * x * y + 40 * y - 2000;
        const int64_t noise = (int64_t)tu_below(&r, 64) - 32;
        tu_set_value(t, a, i, (double)(base * 64 + noise) * 0x1p-10);
        if (specials && i % 211 == 5)
            tu_set_bits(t, a, i,
                        t == FZ_F32 ? 0x7FC00001u : 0x7FF0000000000123ull);
        if (specials && i % 307 == 9)
            tu_set_bits(t, a, i,
                        t == FZ_F32 ? 0x80000000u : 0x8000000000000000ull);
        if (specials && i % 401 == 3)
            tu_set_bits(t, a, i, 1);
        if (specials && i % 503 == 7)
            tu_set_value(t, a, i, (i & 1) ? INFINITY : -INFINITY);
    }
}

typedef struct pinned_case {
    fz_dtype t;
    uint32_t nd;
    uint64_t d[4];
    fz_mode mode;
    double bound;
    int32_t radius;
    int specials, runs; /* runs: long constant runs (RLE wins) */
    int zero_runs;      /* codec_options[1]: the zero-run workflow */
} pinned_case;

static const pinned_case pinned[] = {
    {FZ_F32, 3, {70, 40, 33, 1}, FZ_MODE_ABS, 1e-2, 0, 0, 0, 0},
    {FZ_F32, 3, {256, 64, 40, 1}, FZ_MODE_REL, 1e-3, 0, 1, 0, 0},
    {FZ_F64, 2, {300, 251, 1, 1}, FZ_MODE_REL, 1e-4, 0, 1, 0, 0},
    {FZ_F64, 1, {300001, 1, 1, 1}, FZ_MODE_ABS, 0.5, 0, 0, 0, 0},
    {FZ_F32, 1, {100000, 1, 1, 1}, FZ_MODE_ABS, 1e-3, 0, 0, 1, 0},
    {FZ_F32, 2, {129, 65, 1, 1}, FZ_MODE_ABS, 1e-4, 8, 1, 0, 0},
    {FZ_F64, 3, {33, 9, 17, 1}, FZ_MODE_ABS, 3e-3, 32768, 0, 0, 0},
    /* zero runs: chunks of that workflow (7, 8); none, the exact bound
     * rules it out before its bits are summed (9) */
    {FZ_F32, 3, {70, 40, 33, 1}, FZ_MODE_ABS, 0.5, 0, 1, 0, 1},
    {FZ_F64, 1, {300001, 1, 1, 1}, FZ_MODE_ABS, 2.0, 0, 0, 0, 1},
    {FZ_F32, 2, {300, 251, 1, 1}, FZ_MODE_REL, 1e-2, 8, 1, 0, 1},
};

/* Size and FNV-1a 64 of the stream of each pinned case. */
static const struct {
    size_t size;
    uint64_t hash;
} pinned_want[] = {
    {253769, 0x97c8273ee8c15151ull}, {447660, 0xa535a000b0602103ull},
    {80355, 0xbfd9ca7bec8763e9ull},  {171184, 0xb1df376949e1f7f5ull},
    {1478, 0x819412213b4304e7ull},   {33684, 0x8a5c9559afd8c215ull},
    {15832, 0x9be66a966c173594ull},  {73546, 0xbc20b63b695c66cdull},
    {95653, 0x1dfcaa8e513243d2ull},  {50919, 0x29d5bc56b9a66c1eull},
};

/* The exact bytes of a few streams, so that no rewrite of the coder can
 * change the format silently (2 threads: several chunks in flight). */
static void group_bytes(void) {
    int report = getenv("FZ_PIN_REPORT") != NULL;
    for (size_t k = 0; k < sizeof pinned / sizeof pinned[0]; k++) {
        const pinned_case *c = &pinned[k];
        const size_t n = (size_t)(c->d[0] * c->d[1] * c->d[2] * c->d[3]);
        void *src = tu_xmalloc(n * tu_dtype_size(c->t));
        pinned_fill(c->t, src, n, 100 + k, c->specials);
        if (c->runs)
            for (size_t i = 0; i < n; i++)
                tu_set_value(c->t, src, i, (double)((i / 1000) % 5) * 0.25);
        tu_context("pinned case %zu", k);
        fz_params p = lz_params(c->t, c->nd, c->d, c->mode, c->bound);
        p.codec_options[0] = c->radius;
        p.codec_options[1] = c->zero_runs ? (int32_t)LZ_OPT_ZERO_RUNS : 0;
        p.threads = 2;
        size_t size = 0;
        uint8_t *s = round_trip(&p, src, &size);
        const uint64_t h = fnv64(s, size);
        if (report)
            printf("case %zu: size %zu hash 0x%016llxull\n", k, size,
                   (unsigned long long)h);
        else {
            CHECK_EQ_U64(size, pinned_want[k].size);
            CHECK_EQ_U64(h, pinned_want[k].hash);
        }
        free(s);
        free(src);
    }
    /* the Huffman coder alone, with lengths up to the limit */
    const uint64_t m = 300000;
    uint16_t *codes = (uint16_t *)tu_xmalloc((size_t)m * 2);
    tu_rng r = tu_rng_make(9);
    for (uint64_t i = 0; i < m; i++) {
        const uint64_t x = tu_next(&r);
        uint32_t z = 0; /* trailing zeros: geometric frequencies */
        while (z < 63 && !((x >> z) & 1))
            z++;
        codes[i] = (uint16_t)(i % 5 == 0 ? (x >> 40) % 1024 : 512 + z);
    }
    lz_huff hf;
    CHECK(lz_huff_alloc(&hf, m, 1024));
    const uint64_t size = lz_huff_plan(&hf, codes, m);
    uint8_t *buf = (uint8_t *)tu_xmalloc((size_t)size);
    lz_huff_write(&hf, codes, m, buf);
    const uint64_t h = fnv64(buf, (size_t)size);
    tu_context("pinned Huffman stream");
    if (report)
        printf("huffman: size %llu hash 0x%016llxull\n",
               (unsigned long long)size, (unsigned long long)h);
    else {
        CHECK_EQ_U64(size, 165325);
        CHECK_EQ_U64(h, 0x60f522c92dc097a6ull);
    }
    lz_huff_free(&hf);
    free(buf);
    free(codes);
    cases_run++;
}

/* ----------------------------------------------------- version 1 */
static uint8_t *from_hex(const char *hex, size_t *size) {
    *size = strlen(hex) / 2;
    uint8_t *b = (uint8_t *)tu_xmalloc(*size);
    for (size_t i = 0; i < *size; i++) {
        unsigned v = 0;
        CHECK(sscanf(hex + 2 * i, "%2x", &v) == 1);
        b[i] = (uint8_t)v;
    }
    return b;
}

/* Version 1 streams decode to the bytes the version 1 decoder returned;
 * versions 0 and 4 are refused as corrupt headers. */
static void group_v1(void) {
    const size_t count =
        sizeof lorenzo_v1_streams / sizeof lorenzo_v1_streams[0];
    for (size_t k = 0; k < count; k++) {
        tu_context("version 1 stream %s", lorenzo_v1_streams[k].name);
        size_t size = 0, got = 0;
        uint8_t *s = from_hex(lorenzo_v1_streams[k].hex, &size);
        CHECK_EQ_U64(s[FZ_OFF_CODEC_VERSION], 1);
        const size_t bytes = (size_t)lorenzo_v1_streams[k].decoded_bytes;
        uint8_t *out = (uint8_t *)tu_xmalloc(bytes);
        for (int threads = 1; threads <= 2; threads++) {
            fz_decode_options o = tu_decode_opts(threads, 0);
            memset(out, 0, bytes);
            CHECK_OK(fz_decompress(s, size, out, bytes, &o, &got));
            CHECK_EQ_U64(got, bytes);
            CHECK_EQ_U64(fnv64(out, bytes), lorenzo_v1_streams[k].decoded_fnv);
        }
        const uint8_t bad_versions[] = {0, LZ_CODEC_VERSION + 1};
        for (size_t b = 0; b < sizeof bad_versions; b++) {
            s[FZ_OFF_CODEC_VERSION] = bad_versions[b];
            fz_store32(s + FZ_OFF_HEADER_HASH, fz_header_hash(s));
            CHECK_EQ_U64(fz_decompress(s, size, out, bytes, NULL, &got),
                         FZ_ERR_CORRUPT_HEADER);
        }
        free(out);
        free(s);
        cases_run++;
    }
}

/* ------------------------------------------------------- zero runs */
/* Size of the stream of p with and without the zero-run workflow; both
 * round trips checked. Allowing a workflow never makes a chunk larger. */
static void zero_run_sizes(fz_params *p, const void *src, size_t *plain,
                           size_t *zr) {
    p->codec_options[1] = 0;
    free(round_trip(p, src, plain));
    p->codec_options[1] = (int32_t)LZ_OPT_ZERO_RUNS;
    free(round_trip(p, src, zr));
    CHECK(*zr <= *plain);
}

static void group_zeroruns(void) {
    const double bounds[] = {1e-1, 1e-2, 1e-4};
    size_t plain = 0, zr = 0;
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++)
        for (int ti = 0; ti < 2; ti++)
            for (int g = 0; g < TU_GEN_COUNT; g++)
                for (int bi = 0; bi < 3; bi++) {
                    const shape *sh = &shapes[si];
                    const size_t n = (size_t)shape_count(sh);
                    const fz_dtype t = dtypes[ti];
                    void *src = tu_xmalloc(n * tu_dtype_size(t));
                    tu_fill((tu_gen)g, t, src, n, 31 + si);
                    tu_context("zero runs: shape %zu %s %s REL %g", si,
                               tu_dtype_name(t), tu_gen_name((tu_gen)g),
                               bounds[bi]);
                    fz_params p =
                        lz_params(t, sh->nd, sh->d, FZ_MODE_REL, bounds[bi]);
                    zero_run_sizes(&p, src, &plain, &zr);
                    free(src);
                }
    for (int ti = 0; ti < 2; ti++) {
        const fz_dtype t = dtypes[ti];
        const uint64_t dims[3] = {64, 64, 40};
        const size_t n = 64 * 64 * 40;
        void *src = tu_xmalloc(n * tu_dtype_size(t));
        /* zeros: every code is the zero residual; one RLE run wins */
        tu_fill(TU_GEN_ZEROS, t, src, n, 1);
        tu_context("zero runs: zeros %s", tu_dtype_name(t));
        fz_params p = lz_params(t, 3, dims, FZ_MODE_ABS, 1e-3);
        zero_run_sizes(&p, src, &plain, &zr);
        CHECK(zr == plain);
        /* a ramp: zero residuals inside tiles, others at tile borders */
        fill_ramp(t, src, n);
        tu_context("zero runs: ramp %s", tu_dtype_name(t));
        zero_run_sizes(&p, src, &plain, &zr);
        CHECK(zr < plain);
        /* smooth data at a coarse bound: long runs of zero residuals
         * between other codes */
        for (size_t i = 0; i < n; i++)
            tu_set_value(t, src, i,
                         sin((double)(i % 64) / 9.0) +
                             cos((double)((i / 64) % 64) / 7.0) +
                             0.5 * sin((double)(i / 4096) / 5.0));
        tu_context("zero runs: smooth %s", tu_dtype_name(t));
        p = lz_params(t, 3, dims, FZ_MODE_REL, 1e-2);
        zero_run_sizes(&p, src, &plain, &zr);
        CHECK(zr < plain);
        /* the largest radius that allows zero runs */
        p.codec_options[0] = (int32_t)LZ_ZRUN_RADIUS_MAX;
        zero_run_sizes(&p, src, &plain, &zr);
        CHECK(zr < plain);
        /* version 2 is version 3 without zero runs: such a stream with a
         * version 2 header decodes the same; a zero-run one is refused */
        const size_t bytes = n * tu_dtype_size(t);
        uint8_t *want = (uint8_t *)tu_xmalloc(bytes);
        uint8_t *out = (uint8_t *)tu_xmalloc(bytes);
        size_t got = 0;
        for (int32_t opt = 0; opt <= 1; opt++) {
            p.codec_options[1] = opt;
            uint8_t *s = round_trip(&p, src, &zr);
            CHECK_OK(fz_decompress(s, zr, want, bytes, NULL, &got));
            s[FZ_OFF_CODEC_VERSION] = 2;
            fz_store32(s + FZ_OFF_HEADER_HASH, fz_header_hash(s));
            memset(out, 0, bytes);
            const fz_status st = fz_decompress(s, zr, out, bytes, NULL, &got);
            if (opt)
                CHECK_EQ_U64(st, FZ_ERR_CORRUPT_HEADER);
            else
                CHECK(st == FZ_OK && memcmp(out, want, bytes) == 0);
            free(s);
        }
        free(want);
        free(out);
        free(src);
    }
}

static const tu_group groups[] = {
    {"generators", group_generators},
    {"adversarial", group_adversarial},
    {"extremes", group_extremes},
    {"special", group_special},
    {"constant", group_constant},
    {"radius", group_radius},
    {"threads", group_threads},
    {"corruption", group_corruption},
    {"invalid", group_invalid},
    {"huffman", group_huffman},
    {"bytes", group_bytes},
    {"quant", group_quant},
    {"prequant", group_prequant},
    {"lengths", group_lengths},
    {"rle", group_rle},
    {"v1", group_v1},
    {"zeroruns", group_zeroruns},
};

int main(int argc, char **argv) {
    return tu_run_groups(argc, argv, "test_lorenzo", groups,
                         sizeof groups / sizeof groups[0], &cases_run, NULL);
}
