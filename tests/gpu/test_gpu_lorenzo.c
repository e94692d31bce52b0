/* Lorenzo on the GPU, through the public API and the device API:
 *  1. GPU streams are byte-identical to CPU streams over 1-D/2-D/3-D/4-D
 *     shapes, f32/f64, ABS and REL, every generator (smooth, noisy,
 *     constant, special values), radius options, Huffman-, RLE- and
 *     verbatim-chosen chunks, a few MB;
 *  2. cross decoding (GPU streams on the CPU, CPU streams on the GPU),
 *     with and without checksum verification, and the bound checked;
 *  3. damaged small streams (every truncation, byte flips) are rejected
 *     on the GPU or decode to exactly the CPU's output;
 *  4. the code book at its edges: one and two used codes, alphabets of
 *     thousands to 65536 codes;
 *  5. RLE chunks of over 10^5 runs, and one run of a 4-byte length;
 *  6. exceptions in some chunks of a stream and not in others, and
 *     damaged exception indices (decoded as the CPU decodes them);
 *  7. shapes whose predictor drops a dimension (a slab over 64 MiB).
 *  8. 20-bit codes with large alphabets (shared and global code books in
 *     the write kernels) and a partial last tile.
 *  9. version 1 streams (tile corners coded as q) decode on the GPU to the
 *     CPU's bytes; codec version 3 streams are what both encoders write.
 * 10. the zero-run workflow: GPU streams equal the CPU's (zero-run, RLE
 *     and Huffman chunks in one stream, 1-D to 3-D, f32 and f64, every
 *     shape and generator of 1., runs of up to 2^22 zero residuals) and
 *     cross-decode; damaged ones are accepted on the GPU exactly where the
 *     CPU accepts them.
 * Exits 77 (ctest: skipped) when no CUDA GPU is usable. */
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/api/fz_internal.h"
#include "../../src/codecs/lorenzo/lorenzo_xform.h"
#include "../../src/codecs/lorenzo/lorenzo_huff.h"
#include "../lorenzo_v1_streams.h"
#include "gpu_test_util.h"
#include "test_util.h"

static unsigned cases_run;

/* Finite values within the effective bound; the rest bit for bit. */
static void check_bound(fz_dtype t, const void *src, const void *out, size_t n,
                        double eff) {
    const size_t es = tu_dtype_size(t);
    for (size_t i = 0; i < n; i++) {
        const double o = tu_value_at(t, src, i), d = tu_value_at(t, out, i);
        if (fabs(d - o) <= eff && isfinite(d))
            continue;
        if (memcmp((const uint8_t *)src + i * es, (const uint8_t *)out + i * es,
                   es) == 0)
            continue;
        char detail[200];
        snprintf(detail, sizeof detail, "value %zu: %.17g decoded %.17g eb %g",
                 i, o, d, eff);
        tu_fail(__FILE__, __LINE__, "bound kept", detail);
    }
}

/* Device API: compress, compare with the CPU stream, decode; on the legacy
 * default stream, as an application without streams calls it. */
static void check_device_api(const fz_params *p, const void *src, size_t bytes,
                             const uint8_t *cpu, size_t cpu_size,
                             const void *cpu_out) {
    device_buffers d = device_setup(p, src, bytes);
    check_default_stream_compress(p, &d, cpu, cpu_size);
    fz_device_result res = default_stream_decompress(p, &d, cpu_size, bytes);
    CHECK_OK((fz_status)res.status);
    CHECK_EQ_U64(res.size, bytes);
    check_device_output(&d, cpu_out, bytes);
    device_teardown(&d);
}

/* CPU stream == GPU stream, every cross decoding, the bound. */
static void run_case(const fz_params *p, const void *src) {
    uint64_t values = 0, bytes = 0;
    CHECK_OK(fz_params_count(p, &values, &bytes));
    size_t cpu_size = 0, got = 0;
    uint8_t *cpu = tu_compress(p, src, &cpu_size);
    tu_buf ref = tu_buf_alloc((size_t)bytes);
    CHECK_OK(fz_decompress(cpu, cpu_size, ref.data, (size_t)bytes, NULL, &got));
    fz_info info;
    CHECK_OK(fz_inspect(cpu, cpu_size, &info));
    check_bound(p->dtype, src, ref.data, (size_t)values, info.bound_effective);
    fz_params g = *p;
    g.exec = FZ_EXEC_GPU;
    size_t bound = 0, size = 0;
    CHECK_OK(fz_compress_bound(&g, &bound));
    tu_buf dst = tu_buf_alloc(bound);
    CHECK_OK(fz_compress(&g, src, (size_t)bytes, dst.data, bound, &size));
    CHECK(tu_guard_intact(&dst));
    CHECK_EQ_U64(size, cpu_size);
    CHECK(memcmp(dst.data, cpu, size) == 0);
    CHECK_OK(
        decode_on(FZ_EXEC_GPU, dst.data, size, ref.data, (size_t)bytes, 0));
    CHECK_OK(decode_on(FZ_EXEC_GPU, dst.data, size, ref.data, (size_t)bytes,
                       FZ_DECODE_SKIP_CHECKSUM));
    CHECK_OK(
        decode_on(FZ_EXEC_CPU, dst.data, size, ref.data, (size_t)bytes, 0));
    CHECK_OK(decode_on(FZ_EXEC_GPU, cpu, cpu_size, ref.data, (size_t)bytes, 0));
    check_device_api(p, src, (size_t)bytes, cpu, cpu_size, ref.data);
    tu_buf_free(&dst);
    tu_buf_free(&ref);
    free(cpu);
    cases_run++;
}

static fz_params lz_params(fz_dtype t, uint32_t nd, const uint64_t *dims,
                           fz_mode mode, double bound, uint32_t flags) {
    fz_params p = tu_params(t, 1, flags);
    CHECK_OK(fz_params_set_shape(&p, nd, dims));
    p.codec = FZ_CODEC_LORENZO;
    p.mode = mode;
    p.bound = bound;
    return p;
}

typedef struct shape {
    uint32_t nd;
    uint64_t d[4];
} shape;
static const shape shapes[] = {
    {1, {1, 1, 1, 1}},   {1, {0, 1, 1, 1}},     {1, {7, 1, 1, 1}},
    {1, {257, 1, 1, 1}}, {1, {70001, 1, 1, 1}}, {2, {16, 17, 1, 1}},
    {2, {1, 300, 1, 1}}, {2, {300, 1, 1, 1}},   {2, {129, 65, 1, 1}},
    {3, {1, 1, 1, 1}},   {3, {33, 9, 17, 1}},   {3, {32, 8, 8, 1}},
    {3, {2, 3, 100, 1}}, {3, {65, 40, 21, 1}},  {4, {9, 10, 11, 3}},
    {3, {0, 5, 5, 1}},   {3, {70, 14, 19, 1}},  {2, {300, 37, 1, 1}},
};

static uint64_t count_of(const shape *s) {
    uint64_t n = 1;
    for (uint32_t d = 0; d < s->nd; d++)
        n *= s->d[d];
    return n;
}

/* each(shape, dtype, k, values) for every shape of the table, f32 and
 * f64, and the k-th generator of a set (seeded from seed). */
typedef void (*shape_case)(const shape *sh, fz_dtype t, size_t k,
                           const void *src);
static void each_shape(uint64_t seed, shape_case each) {
    const fz_dtype dtypes[] = {FZ_F32, FZ_F64};
    const tu_gen gens[] = {TU_GEN_SMOOTH, TU_GEN_WAVE, TU_GEN_RANDOM_BITS,
                           TU_GEN_CONSTANT, TU_GEN_MIXED};
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++)
        for (int t = 0; t < 2; t++)
            for (size_t k = 0; k < sizeof gens / sizeof *gens; k++) {
                const uint64_t n = count_of(&shapes[s]);
                const size_t es = tu_dtype_size(dtypes[t]);
                void *src = tu_xmalloc(n ? n * es : 1);
                tu_fill(gens[k], dtypes[t], src, (size_t)n, seed + s * 7 + k);
                tu_context("shape %zu dtype %s gen %s", s,
                           tu_dtype_name(dtypes[t]), tu_gen_name(gens[k]));
                each(&shapes[s], dtypes[t], k, src);
                free(src);
            }
}

/* ABS 1e-3 and REL 1e-4, checksums off for odd generators. */
static void shape_modes(const shape *sh, fz_dtype t, size_t k,
                        const void *src) {
    const fz_mode modes[] = {FZ_MODE_ABS, FZ_MODE_REL};
    const double bounds[] = {1e-3, 1e-4};
    for (int m = 0; m < 2; m++) {
        fz_params p = lz_params(t, sh->nd, sh->d, modes[m], bounds[m],
                                k & 1 ? FZ_FLAG_NO_CHECKSUM : 0);
        run_case(&p, src);
    }
}

static void group_shapes(void) {
    each_shape(11, shape_modes);
}

/* Every generator, large enough for several chunks; radius options. */
static void group_options(void) {
    const fz_dtype dtypes[] = {FZ_F32, FZ_F64};
    const uint64_t dims3[3] = {100, 90, 80}; /* 720000 values */
    const int32_t radii[] = {0, 2, 3, 64, 4096, 32768};
    for (int t = 0; t < 2; t++)
        for (int g = 0; g < TU_GEN_COUNT; g++) {
            const size_t n = 720000, es = tu_dtype_size(dtypes[t]);
            void *src = tu_xmalloc(n * es);
            tu_fill((tu_gen)g, dtypes[t], src, n, 5 + g);
            for (size_t r = 0; r < sizeof radii / sizeof *radii; r++) {
                if (r > 1 && g != TU_GEN_SMOOTH && g != TU_GEN_WAVE)
                    continue;
                tu_context("options dtype %s gen %s radius %d",
                           tu_dtype_name(dtypes[t]), tu_gen_name((tu_gen)g),
                           radii[r]);
                fz_params p =
                    lz_params(dtypes[t], 3, dims3, FZ_MODE_REL, 1e-3, 0);
                p.codec_options[0] = radii[r];
                run_case(&p, src);
                const uint64_t flat[1] = {n};
                fz_params q =
                    lz_params(dtypes[t], 1, flat, FZ_MODE_ABS, 1e-2, 0);
                q.codec_options[0] = radii[r];
                run_case(&q, src);
            }
            free(src);
        }
}

/* A few MB, 2-D and 3-D, through the host pipeline in several batches. */
static void group_large(void) {
    const uint64_t d3[3] = {512, 256, 40}; /* 5 Mi values */
    const uint64_t d2[2] = {2000, 1500};
    const fz_dtype dtypes[] = {FZ_F32, FZ_F64};
    for (int t = 0; t < 2; t++) {
        const size_t n = 512 * 256 * 40, es = tu_dtype_size(dtypes[t]);
        void *src = tu_xmalloc(n * es);
        tu_fill(TU_GEN_SMOOTH, dtypes[t], src, n, 77);
        tu_context("large 3-D %s", tu_dtype_name(dtypes[t]));
        fz_params p = lz_params(dtypes[t], 3, d3, FZ_MODE_REL, 1e-4, 0);
        run_case(&p, src);
        p.batch_kib = 4096; /* several pipeline batches */
        run_case(&p, src);
        tu_context("large 2-D %s", tu_dtype_name(dtypes[t]));
        fz_params q = lz_params(dtypes[t], 2, d2, FZ_MODE_ABS, 1e-5, 0);
        q.batch_kib = 4096;
        run_case(&q, src);
        free(src);
    }
}

/* The code book builder at its edges: one and two used codes, and
 * alphabets of thousands of used codes (book scratch in shared memory,
 * in global memory with per-item and per-range merges). */
static void group_book(void) {
    const size_t n = 1200000; /* 3 chunks of f32 */
    const uint64_t flat[1] = {n}, cube[3] = {100, 100, 120};
    const fz_dtype dtypes[] = {FZ_F32, FZ_F64};
    for (int t = 0; t < 2; t++) {
        const size_t es = tu_dtype_size(dtypes[t]);
        void *src = tu_xmalloc(n * es);
        tu_context("book: one used code (zeros) %s", tu_dtype_name(dtypes[t]));
        tu_fill(TU_GEN_ZEROS, dtypes[t], src, n, 1);
        fz_params p = lz_params(dtypes[t], 1, flat, FZ_MODE_ABS, 0.5, 0);
        run_case(&p, src);
        fz_params q = lz_params(dtypes[t], 3, cube, FZ_MODE_ABS, 0.5, 0);
        run_case(&q, src);
        /* q alternating 3, 0: residuals +3 and -3 only (a tile starts on an
         * even index); Huffman, 1 bit per value, beats RLE */
        tu_context("book: two used codes %s", tu_dtype_name(dtypes[t]));
        for (size_t i = 0; i < n; i++)
            tu_set_value(dtypes[t], src, i, i % 2 ? 0.0 : 3.0);
        run_case(&p, src);
        const int32_t radii[] = {1024, 4096, 32768};
        tu_rng r = tu_rng_make(41);
        for (size_t k = 0; k < sizeof radii / sizeof *radii; k++) {
            /* uniform noise on [0, 1) with 2eb = 1 / (0.9 radius): nearly
             * every residual code in use, none an outlier */
            tu_context("book: noise, radius %d %s", radii[k],
                       tu_dtype_name(dtypes[t]));
            for (size_t i = 0; i < n; i++)
                tu_set_value(dtypes[t], src, i,
                             (double)tu_below(&r, 1u << 24) * 0x1p-24);
            fz_params z = lz_params(dtypes[t], 1, flat, FZ_MODE_ABS,
                                    0.5 / (0.9 * radii[k]), 0);
            z.codec_options[0] = radii[k];
            run_case(&z, src);
        }
        free(src);
    }
}

/* q from Lorenzo residuals: the tile prefix sums along x, y, z of one
 * 3-D slab (X x Y x 8, tiles 32 x 8 x 8), as the decoder computes them. */
static void tile_prefix_sums(int32_t *q, uint64_t X, uint64_t Y) {
    for (uint64_t i = 0; i < X * Y * 8; i++)
        if (i % X % 32)
            q[i] += q[i - 1];
    for (uint64_t i = 0; i < X * Y * 8; i++)
        if ((i / X) % Y % 8)
            q[i] += q[i - X];
    for (uint64_t i = X * Y; i < X * Y * 8; i++)
        q[i] += q[i - X * Y];
}

/* RLE-coded chunks: one slab of 4 Mi values whose residuals are runs of 1
 * to 60 values of -1, 0 or 1, neighbours different (about 1.4e5 runs:
 * RLE's ~3 bytes per run beat Huffman's ~1.6 bits per value), and one of zeros
 * (a single run of 2^22 values: a 4-byte LEB128 length; 5 bytes need 2^28
 * values, more than a chunk holds). Values q * 2eb are exact, so the quantizer
 * returns q. */
static void group_rle(void) {
    const uint64_t X = 1024, Y = 512, n = X * Y * 8;
    const uint64_t dims[3] = {X, Y, 8};
    const double eb = 0x1p-10;
    int32_t *q = (int32_t *)tu_xmalloc(n * sizeof *q);
    float *src = (float *)tu_xmalloc(n * sizeof *src);
    tu_rng r = tu_rng_make(123);
    for (int k = 0; k < 2; k++) {
        int32_t d = 0;
        for (uint64_t i = 0; i < n;) { /* neighbouring runs differ */
            const uint64_t len = 1 + tu_below(&r, 60);
            d = k == 0 ? (d + 2 + (int32_t)tu_below(&r, 2)) % 3 - 1 : 0;
            for (uint64_t j = 0; j < len && i < n; j++)
                q[i++] = d;
        }
        tile_prefix_sums(q, X, Y);
        for (uint64_t i = 0; i < n; i++)
            src[i] = (float)((double)q[i] * 2 * eb);
        tu_context("rle case %d", k);
        fz_params p = lz_params(FZ_F32, 3, dims, FZ_MODE_ABS, eb, 0);
        size_t size = 0;
        uint8_t *s = tu_compress(&p, src, &size);
        CHECK(size < n / 4); /* coded, not verbatim */
        free(s);
        run_case(&p, src);
    }
    free(src);
    free(q);
}

/* Special values (exceptions) every 7th value of [lo, hi), among smooth
 * data. */
static void put_specials(fz_dtype t, void *src, size_t lo, size_t hi) {
    const uint32_t *s32;
    const uint64_t *s64;
    const size_t ns = t == FZ_F32 ? tu_special32(&s32) : tu_special64(&s64);
    for (size_t i = lo; i < hi; i += 7) {
        const size_t k = (i / 7) % ns;
        tu_set_bits(t, src, i, t == FZ_F32 ? s32[k] : s64[k]);
    }
}

/* Exceptions in some chunks only: decoding keeps q for the exception
 * check of those chunks alone. 100 x 90 x 80: f32 chunks of 56 and 24
 * planes, f64 of 24, 24, 24 and 8; boxes partial in x (100 = 64 + 36) and
 * y (90 = 11 x 8 + 2), and in z in the last chunk of f64. */
static void group_exceptions(void) {
    const uint64_t dims[3] = {100, 90, 80};
    const size_t n = 100 * 90 * 80, plane = 100 * 90;
    const fz_dtype dtypes[] = {FZ_F32, FZ_F64};
    for (int t = 0; t < 2; t++) {
        const size_t es = tu_dtype_size(dtypes[t]);
        void *src = tu_xmalloc(n * es);
        /* planes 0..23: in chunk 0 only; planes 56..79: f32 chunk 1, f64
         * chunks 2 and 3 */
        const size_t lo[2] = {0, 56 * plane}, hi[2] = {24 * plane, n};
        for (int part = 0; part < 2; part++) {
            tu_fill(TU_GEN_SMOOTH, dtypes[t], src, n, 31);
            put_specials(dtypes[t], src, lo[part], hi[part]);
            tu_context("exceptions in part %d %s", part,
                       tu_dtype_name(dtypes[t]));
            fz_params p = lz_params(dtypes[t], 3, dims, FZ_MODE_ABS, 1e-3, 0);
            run_case(&p, src);
        }
        free(src);
    }
}

/* Damaged exception indices of a one-chunk stream without checksums: an
 * index moved onto a value whose q is not 0, past the end, or onto the
 * previous index is rejected by both backends; one moved onto a +0.0 (q 0)
 * decodes, on the GPU to exactly the CPU's bytes. Smooth values in
 * [5.5, 14.5] with eb 1 have q in 3..7 (no outliers), specials every 7th
 * value and +0.0 3 after each. */
static void group_exception_damage(void) {
    const uint64_t dims[3] = {33, 9, 17};
    const size_t n = 33 * 9 * 17;
    const fz_dtype dtypes[] = {FZ_F32, FZ_F64};
    for (int t = 0; t < 2; t++) {
        const fz_dtype dt = dtypes[t];
        const size_t es = tu_dtype_size(dt), bytes = n * es;
        void *src = tu_xmalloc(bytes);
        tu_fill(TU_GEN_SMOOTH, dt, src, n, 8);
        put_specials(dt, src, 0, n);
        for (size_t i = 3; i < n; i += 7)
            tu_set_value(dt, src, i, 0.0);
        fz_params p =
            lz_params(dt, 3, dims, FZ_MODE_ABS, 1.0, FZ_FLAG_NO_CHECKSUM);
        size_t size = 0, got = 0;
        uint8_t *s = tu_compress(&p, src, &size);
        fz_info info;
        CHECK_OK(fz_inspect(s, size, &info));
        CHECK_EQ_U64(info.chunk_count, 1);
        CHECK(size < info.payload_offset + bytes); /* coded, not verbatim */
        const uint8_t *chunk = s + info.payload_offset;
        const uint32_t nout = fz_load32(chunk + 4), nexc = fz_load32(chunk + 8);
        CHECK(nexc > 100);
        const size_t exc = info.payload_offset + LZ_CHUNK_HEAD +
                           (size_t)nout * LZ_OUTLIER_BYTES;
        uint8_t *want = (uint8_t *)tu_xmalloc(bytes);
        CHECK_OK(fz_decompress(s, size, want, bytes, NULL, &got));
        uint8_t *bad = (uint8_t *)tu_xmalloc(size);
        for (uint32_t k = 0; k < nexc; k++) {
            if (k > 16 && k % 13 && k + 4 < nexc)
                continue;
            tu_context("exception damage %s, exception %u", tu_dtype_name(dt),
                       k);
            uint8_t *at = bad + exc + (size_t)k * (4 + es);
            const uint32_t idx = fz_load32(s + exc + (size_t)k * (4 + es));
            CHECK(idx % 7 == 0);
            const uint32_t prev =
                k ? fz_load32(s + exc + (size_t)(k - 1) * (4 + es))
                  : UINT32_MAX;
            const uint32_t moved[3] = {idx + 1, (uint32_t)n, prev};
            for (int m = 0; m < 3; m++) {
                memcpy(bad, s, size);
                fz_store32(at, moved[m]);
                CHECK(decode_on(FZ_EXEC_CPU, bad, size, want, bytes, 0) !=
                      FZ_OK);
                CHECK(decode_on(FZ_EXEC_GPU, bad, size, want, bytes, 0) !=
                      FZ_OK);
                cases_run++;
            }
            if (idx + 3 < n) { /* onto the +0.0: valid, other bytes */
                memcpy(bad, s, size);
                fz_store32(at, idx + 3);
                uint8_t *cpu = (uint8_t *)tu_xmalloc(bytes);
                CHECK_OK(fz_decompress(bad, size, cpu, bytes, NULL, &got));
                CHECK(memcmp(cpu, want, bytes) != 0);
                CHECK_OK(decode_on(FZ_EXEC_GPU, bad, size, cpu, bytes, 0));
                free(cpu);
                cases_run++;
            }
        }
        free(bad);
        free(want);
        free(s);
        free(src);
    }
}

/* Shapes whose 8-plane (or 16-row) slab exceeds 64 MiB: the predictor
 * drops a dimension (3-D -> 2-D with y and z merged, 2-D -> 1-D, or
 * both), as the header alone decides; tens of MB each. */
static void group_dropped(void) {
    static const struct {
        fz_dtype t;
        uint32_t nd, pd;
        uint64_t d[3];
    } cases[] = {
        {FZ_F32, 3, 2, {2048, 1025, 2}}, /* 8 x 2048 x 1025 x 4 B */
        {FZ_F32, 3, 2, {2049, 1025, 2}}, /* partial boxes along x too */
        {FZ_F32, 2, 1, {1100000, 2, 1}}, /* 16 x 1.1e6 x 4 B */
        {FZ_F64, 2, 1, {600000, 3, 1}},  /* 16 x 6e5 x 8 B */
        {FZ_F64, 3, 1, {600000, 2, 2}},  /* both */
        {FZ_F64, 3, 2, {1030, 1025, 3}}, /* 8 x 1030 x 1025 x 8 B */
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        const fz_dtype t = cases[c].t;
        const uint64_t n = cases[c].d[0] * cases[c].d[1] * cases[c].d[2];
        fz_params p =
            lz_params(t, cases[c].nd, cases[c].d, FZ_MODE_REL, 1e-4, 0);
        fz_header h;
        CHECK_OK(fz_header_from_params(&p, &h));
        CHECK_EQ_U64(lz_geometry(&h).pd, cases[c].pd);
        void *src = tu_xmalloc((size_t)n * tu_dtype_size(t));
        for (int g = 0; g < 2; g++) {
            const tu_gen gen = g ? TU_GEN_MIXED : TU_GEN_SMOOTH;
            tu_fill(gen, t, src, (size_t)n, 50 + c);
            tu_context("dropped dimension case %zu gen %s", c,
                       tu_gen_name(gen));
            run_case(&p, src);
        }
        free(src);
    }
}

/* Residuals of m values (a chunk) whose optimal prefix code is deeper
 * than LZ_HUFF_MAXLEN: 1000 uniform in (-R, R) (nearly all distinct, a
 * balanced subtree of depth ~10 and weight < 1024), then 0, 1, -1, 2, ...
 * with counts 1024 F_j (Fibonacci): all the lighter symbols together
 * weigh 1024 (F_{j+2} - 1) + 1000, between the next two counts, so
 * Huffman chains them (~13 levels more) and the length limit binds.
 * Shuffled. */
static void deep_code_residuals(int32_t *d, uint64_t m, int32_t R, tu_rng *r) {
    uint64_t i = 0, f0 = 1, f1 = 1;
    for (; i < 1000 && i < m; i++)
        d[i] = (int32_t)tu_below(r, 2 * (uint64_t)R - 1) - (R - 1);
    for (int32_t j = 0; i < m; j++) {
        const int32_t v = j % 2 ? (j + 1) / 2 : -(j / 2);
        for (uint64_t c = 0; c < 1024 * f0 && i < m; c++)
            d[i++] = v;
        const uint64_t f = f0 + f1;
        f0 = f1;
        f1 = f;
    }
    for (uint64_t k = m - 1; k > 0; k--) {
        const uint64_t o = tu_below(r, k + 1);
        const int32_t t = d[k];
        d[k] = d[o];
        d[o] = t;
    }
}

/* Long codes, large alphabets and partial tiles: 1-D f32 values q * 2eb
 * (exact, so the quantizer returns q) with the residuals above per 2 MiB
 * chunk, so the book has 20-bit codes (checked on the first chunk with
 * the CPU's builder) and the used range spans the alphabet. Radius 2048
 * (4096 symbols) is the largest alphabet whose book the bits and write
 * kernels keep in shared memory; 8192 and 32768 use the global book. n
 * leaves a partial last tile (2275 values) whose last thread has 3
 * codes. */
static void group_long(void) {
    const uint64_t n = 1100003, chunk = 524288, flat[1] = {n};
    const double eb = 0x1p-10;
    const int32_t radii[] = {2048, 8192, 32768};
    int32_t *d = (int32_t *)tu_xmalloc(n * sizeof *d);
    float *src = (float *)tu_xmalloc(n * sizeof *src);
    uint16_t *codes = (uint16_t *)tu_xmalloc(chunk * sizeof *codes);
    for (size_t k = 0; k < sizeof radii / sizeof *radii; k++) {
        const int32_t R = radii[k];
        tu_rng r = tu_rng_make(31 + k);
        for (uint64_t c0 = 0; c0 < n; c0 += chunk)
            deep_code_residuals(d + c0, n - c0 < chunk ? n - c0 : chunk, R, &r);
        int32_t q = 0;
        for (uint64_t i = 0; i < n; i++) {
            q = (i % LZ_TILE1 ? q : 0) + d[i]; /* |q| < 256 R <= 2^23 */
            src[i] = (float)((double)q * 2 * eb);
        }
        for (uint64_t i = 0; i < chunk; i++)
            codes[i] = (uint16_t)(d[i] + R);
        lz_huff hf;
        CHECK(lz_huff_alloc(&hf, chunk, 2 * (uint32_t)R));
        lz_huff_plan(&hf, codes, chunk);
        uint32_t longest = 0;
        for (uint32_t s = 0; s < 2 * (uint32_t)R; s++)
            longest = hf.len[s] > longest ? hf.len[s] : longest;
        lz_huff_free(&hf);
        CHECK_EQ_U64(longest, LZ_HUFF_MAXLEN);
        tu_context("long codes, radius %d", R);
        fz_params p = lz_params(FZ_F32, 1, flat, FZ_MODE_ABS, eb, 0);
        p.codec_options[0] = R;
        size_t size = 0;
        uint8_t *s = tu_compress(&p, src, &size);
        CHECK(size < n); /* Huffman-coded, not verbatim */
        free(s);
        run_case(&p, src);
    }
    free(codes);
    free(src);
    free(d);
}

/* Damaged small streams: a status, or exactly the CPU's output. */
static void damaged(const uint8_t *stream, size_t size, const void *want,
                    size_t bytes) {
    fz_status st = decode_on(FZ_EXEC_GPU, stream, size, want, bytes, 0);
    (void)st;
    cases_run++;
}

/* Sampled sweep positions of group_damage. */
static int damage_position(size_t i, size_t size) {
    return i < 160 || i + 64 >= size || i % 7 == 0;
}

static void group_damage(void) {
    const uint64_t dims[3] = {33, 9, 17};
    const size_t n = 33 * 9 * 17;
    const tu_gen gens[] = {TU_GEN_SMOOTH, TU_GEN_MIXED, TU_GEN_CONSTANT};
    for (size_t k = 0; k < 3; k++) {
        float src[33 * 9 * 17];
        tu_fill(gens[k], FZ_F32, src, n, 3 + k);
        fz_params p = lz_params(FZ_F32, 3, dims, FZ_MODE_ABS, 1e-3, 0);
        size_t size = 0, got = 0;
        uint8_t *s = tu_compress(&p, src, &size);
        float ref[33 * 9 * 17];
        CHECK_OK(fz_decompress(s, size, ref, sizeof ref, NULL, &got));
        tu_context("damage gen %s", tu_gen_name(gens[k]));
        /* Every GPU decode costs a few launches, so the sweeps sample:
         * every cut and byte of the header, table and chunk heads (the
         * first 160 bytes) and the last 64 bytes, every 7th elsewhere;
         * one bit per byte, rotating through the eight. */
        for (size_t cut = 0; cut < size; cut++)
            if (damage_position(cut, size))
                CHECK(decode_on(FZ_EXEC_GPU, s, cut, ref, sizeof ref, 0) !=
                      FZ_OK);
        uint8_t *bad = (uint8_t *)tu_xmalloc(size);
        for (size_t i = 0; i < size; i++)
            if (damage_position(i, size)) {
                const int bit = (int)(i % 8);
                memcpy(bad, s, size);
                bad[i] ^= (uint8_t)(1u << bit);
                damaged(bad, size, ref, sizeof ref);
                /* without checksums the chunk rules alone must hold */
                tu_buf out = tu_buf_alloc(sizeof ref);
                fz_decode_options o =
                    tu_decode_opts(0, FZ_DECODE_SKIP_CHECKSUM);
                o.exec = FZ_EXEC_GPU;
                fz_status st =
                    fz_decompress(bad, size, out.data, sizeof ref, &o, &got);
                CHECK(st != FZ_ERR_CUDA);
                CHECK(tu_guard_intact(&out));
                tu_buf_free(&out);
            }
        free(bad);
        free(s);
    }
}

/* Version 1 streams on the GPU: exactly the CPU's decode. */
static void group_v1(void) {
    const size_t count =
        sizeof lorenzo_v1_streams / sizeof lorenzo_v1_streams[0];
    for (size_t k = 0; k < count; k++) {
        tu_context("version 1 stream %s", lorenzo_v1_streams[k].name);
        const char *hex = lorenzo_v1_streams[k].hex;
        const size_t size = strlen(hex) / 2;
        uint8_t *s = (uint8_t *)tu_xmalloc(size);
        for (size_t i = 0; i < size; i++) {
            unsigned v = 0;
            CHECK(sscanf(hex + 2 * i, "%2x", &v) == 1);
            s[i] = (uint8_t)v;
        }
        const size_t bytes = (size_t)lorenzo_v1_streams[k].decoded_bytes;
        uint8_t *want = (uint8_t *)tu_xmalloc(bytes);
        size_t got = 0;
        CHECK_OK(fz_decompress(s, size, want, bytes, NULL, &got));
        CHECK_OK(decode_on(FZ_EXEC_GPU, s, size, want, bytes, 0));
        free(want);
        free(s);
    }
}

/* Zero runs ------------------------------------------------------ */
/* p with the zero-run option (set here): the stream is smaller than the
 * one without the option (so some chunk took the zero-run workflow), and
 * run_case holds (GPU stream == CPU stream, every cross decoding). */
static void zero_run_case(fz_params *p, const void *src) {
    size_t size = 0, plain = 0;
    p->codec_options[1] = 0;
    free(tu_compress(p, src, &plain));
    p->codec_options[1] = (int32_t)LZ_OPT_ZERO_RUNS;
    free(tu_compress(p, src, &size));
    CHECK(size < plain);
    run_case(p, src);
}

/* Residuals of a slab whose codes make the zero-run workflow win: runs of
 * the zero residual of 1 to 2^17 values (Z_k of every k to 16), between
 * them +-1 or an outlier (|d| > R). */
static void zero_run_residuals(int32_t *q, uint64_t n, tu_rng *r) {
    for (uint64_t i = 0; i < n;) {
        const uint64_t len = 1 + tu_below(r, 1u << tu_below(r, 18));
        for (uint64_t j = 0; j < len && i < n; j++)
            q[i++] = 0;
        if (i < n)
            q[i++] =
                tu_below(r, 50) == 0 ? 700 : 1 - 2 * (int32_t)tu_below(r, 2);
    }
}

/* Chunks per workflow of a stream: Huffman, RLE, zero runs, verbatim. */
static void chunk_flows(const uint8_t *s, size_t size, unsigned counts[4]) {
    fz_header h;
    memset(counts, 0, 4 * sizeof counts[0]);
    CHECK_OK(fz_header_read(s, size, &h));
    const uint32_t entry = fz_table_entry_bytes(h.flags);
    uint64_t at = fz_payload_offset(&h);
    for (uint64_t c = 0; c < h.chunk_count; c++) {
        const uint32_t bytes = fz_load32(s + FZ_HDR_BYTES + c * entry);
        counts[bytes == fz_chunk_raw_bytes(&h, c) ? 3 : s[at] & 3]++;
        at += bytes;
    }
}

/* One stream of three 4 Mi-value chunks, one per workflow: zero runs, RLE
 * (runs of 1 to 60 values of -1, 0, 1, neighbours different), Huffman
 * (residuals -3..3 but 0). */
static void zero_runs_mixed(void) {
    const uint64_t X = 1024, Y = 512, slab = X * Y * 8, n = 3 * slab;
    const uint64_t dims[3] = {X, Y, 24};
    const double eb = 0x1p-10;
    int32_t *q = (int32_t *)tu_xmalloc(n * sizeof *q);
    float *src = (float *)tu_xmalloc(n * sizeof *src);
    tu_rng r = tu_rng_make(77);
    zero_run_residuals(q, slab, &r);
    int32_t d = 0;
    for (uint64_t i = slab; i < 2 * slab;) {
        const uint64_t len = 1 + tu_below(&r, 60);
        d = (d + 2 + (int32_t)tu_below(&r, 2)) % 3 - 1;
        for (uint64_t j = 0; j < len && i < 2 * slab; j++)
            q[i++] = d;
    }
    for (uint64_t i = 2 * slab; i < n; i++) { /* no zeros: no Z_1 to gain */
        q[i] = (int32_t)tu_below(&r, 6) - 3;
        q[i] += q[i] >= 0;
    }
    for (uint64_t k = 0; k < 3; k++)
        tile_prefix_sums(q + k * slab, X, Y);
    for (uint64_t i = 0; i < n; i++)
        src[i] = (float)((double)q[i] * 2 * eb);
    tu_context("zero runs: mixed workflows");
    fz_params p = lz_params(FZ_F32, 3, dims, FZ_MODE_ABS, eb, 0);
    p.codec_options[1] = (int32_t)LZ_OPT_ZERO_RUNS;
    size_t size = 0;
    uint8_t *s = tu_compress(&p, src, &size);
    unsigned flows[4];
    chunk_flows(s, size, flows);
    CHECK(flows[LZ_FLOW_HUFFMAN] == 1 && flows[LZ_FLOW_RLE] == 1 &&
          flows[LZ_FLOW_ZRUNS] == 1);
    free(s);
    zero_run_case(&p, src);
    free(src);
    free(q);
}

/* Smooth fields at a coarse bound (long runs of the zero residual between
 * other codes), 1-D to 3-D, f32 and f64, the default and the largest
 * radius. */
static void zero_runs_smooth(void) {
    const uint64_t dims[3][3] = {{300000, 1, 1}, {700, 300, 1}, {96, 80, 40}};
    for (int ti = 0; ti < 2; ti++)
        for (uint32_t nd = 1; nd <= 3; nd++) {
            const fz_dtype t = ti ? FZ_F64 : FZ_F32;
            const uint64_t *dm = dims[nd - 1];
            const size_t n = (size_t)(dm[0] * dm[1] * dm[2]);
            void *src = tu_xmalloc(n * tu_dtype_size(t));
            for (size_t i = 0; i < n; i++)
                tu_set_value(t, src, i,
                             sin((double)(i % dm[0]) / 900.0) +
                                 cos((double)(i / dm[0] % dm[1]) / 70.0) +
                                 0.5 *
                                     sin((double)(i / (dm[0] * dm[1])) / 15.0));
            for (int big = 0; big < 2; big++) {
                tu_context("zero runs: smooth %s %u-D radius %s",
                           tu_dtype_name(t), nd, big ? "max" : "default");
                fz_params p = lz_params(t, nd, dm, FZ_MODE_REL, 1e-2, 0);
                p.codec_options[0] = big ? (int32_t)LZ_ZRUN_RADIUS_MAX : 0;
                zero_run_case(&p, src);
            }
            free(src);
        }
}

/* Damaged zero-run streams: with checksums skipped, the GPU accepts
 * exactly what the CPU accepts, and decodes it to the same bytes. */
static void zero_runs_damage(void) {
    const uint64_t dims[3] = {64, 40, 16};
    const size_t n = 64 * 40 * 16;
    float src[64 * 40 * 16], cpu[64 * 40 * 16];
    for (size_t i = 0; i < n; i++)
        src[i] = (float)(sin((double)(i % 64) / 30.0) +
                         cos((double)(i / 64 % 40) / 20.0));
    fz_params p = lz_params(FZ_F32, 3, dims, FZ_MODE_REL, 1e-2, 0);
    p.codec_options[1] = (int32_t)LZ_OPT_ZERO_RUNS;
    size_t size = 0, got = 0;
    uint8_t *s = tu_compress(&p, src, &size);
    fz_header h;
    CHECK_OK(fz_header_read(s, size, &h));
    uint8_t *bad = (uint8_t *)tu_xmalloc(size);
    unsigned accepted = 0;
    for (size_t i = (size_t)fz_payload_offset(&h); i < size; i++)
        for (int bit = 0; bit < 8; bit += 3) {
            memcpy(bad, s, size);
            bad[i] ^= (uint8_t)(1u << bit);
            tu_context("zero runs: damage byte %zu bit %d", i, bit);
            fz_decode_options o = tu_decode_opts(0, FZ_DECODE_SKIP_CHECKSUM);
            const fz_status cs =
                fz_decompress(bad, size, cpu, sizeof cpu, &o, &got);
            const fz_status gs = decode_on(FZ_EXEC_GPU, bad, size, cpu,
                                           sizeof cpu, FZ_DECODE_SKIP_CHECKSUM);
            CHECK((cs == FZ_OK) == (gs == FZ_OK));
            accepted += cs == FZ_OK;
            cases_run++;
        }
    printf("zero-run damage: %u of the flips decode (both backends)\n",
           accepted);
    free(bad);
    free(s);
}

/* REL or ABS 1e-2 with the option (zero runs win on smooth data). */
static void shape_zero_runs(const shape *sh, fz_dtype t, size_t k,
                            const void *src) {
    fz_params p =
        lz_params(t, sh->nd, sh->d, k & 1 ? FZ_MODE_ABS : FZ_MODE_REL, 1e-2, 0);
    p.codec_options[1] = (int32_t)LZ_OPT_ZERO_RUNS;
    CHECK(fz_gpu_supports(&p));
    run_case(&p, src);
}

/* Every shape and generator of group_shapes with the option, at coarse
 * bounds (where zero runs win on smooth data), and edges of the
 * workflow's choice: a chunk of zero residuals only (never zero runs),
 * none at all, one run of 2^22 (Z_22) with a code after it. */
static void zero_runs_edges(void) {
    each_shape(17, shape_zero_runs);
    const size_t n = (1u << 22) + 1000;
    const uint64_t flat[1] = {n};
    float *src = (float *)tu_xmalloc(n * sizeof *src);
    for (int k = 0; k < 3; k++) {
        /* k = 0: zeros; 1: 0, 3 alternating; 2: a step after 2^22 */
        for (size_t i = 0; i < n; i++)
            src[i] = k == 0   ? 0.0f
                     : k == 1 ? (i % 2 ? 0.0f : 3.0f)
                              : (i < (1u << 22) ? 1.0f : 2.0f);
        tu_context("zero runs: edge %d", k);
        fz_params p = lz_params(FZ_F32, 1, flat, FZ_MODE_ABS, 0.25, 0);
        p.codec_options[1] = (int32_t)LZ_OPT_ZERO_RUNS;
        run_case(&p, src);
    }
    free(src);
}

static void group_zeroruns(void) {
    zero_runs_edges();
    zero_runs_smooth();
    zero_runs_mixed();
    zero_runs_damage();
}

static void group_all_exceptions(void) {
    group_exceptions();
    group_exception_damage();
}

static const tu_group groups[] = {
    {"shapes", group_shapes},
    {"options", group_options},
    {"large", group_large},
    {"book", group_book},
    {"damage", group_damage},
    {"rle", group_rle},
    {"v1", group_v1},
    {"exceptions", group_all_exceptions},
    {"dropped", group_dropped},
    {"long", group_long},
    {"zeroruns", group_zeroruns},
};

int main(int argc, char **argv) {
    if (fz_gpu_count() == 0) {
        printf("SKIP: no CUDA GPU available (fz_gpu_count() == 0)\n");
        return 77;
    }
    if (argc > 1 && strcmp(argv[1], "zeroruns-smooth") == 0) {
        zero_runs_smooth(); /* a part of zeroruns small enough for racecheck */
        printf("test_gpu_lorenzo zeroruns-smooth: %u cases passed\n",
               cases_run);
        return 0;
    }
    return tu_run_groups(argc, argv, "test_gpu_lorenzo", groups,
                         sizeof groups / sizeof groups[0], &cases_run, NULL);
}
