/* GPU backend tests through the public API only (plus the CUDA runtime to
 * manage device buffers for the device API):
 *  1. host API with exec = FZ_EXEC_GPU round-trips bit for bit;
 *  2. the GPU stream is byte-identical to the CPU stream;
 *  3. GPU streams decode on the CPU and CPU streams on the GPU;
 *  4. the device API on device-resident data matches the CPU;
 *  5. corrupted and truncated streams are rejected by GPU decoding;
 *  6. lossy modes (ABS, REL): the same bytes as the CPU, the same decoded
 *     values on both backends, every value within the bound;
 *  7. REL where the GPU's sampled bound misses: still the CPU's bytes;
 *  8. codec version 1 and 2 streams (older checksums) decode.
 * Exits 77 (ctest: skipped) when no CUDA GPU is usable. */
#include <cuda_runtime.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rel_sample_test.h"
#include "gpu_test_util.h"
#include "test_util.h"

static unsigned cases_run;

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

typedef struct gpu_case {
    fz_params params;
    void *src;
    size_t bytes;
    uint8_t *cpu_stream;
    size_t cpu_size;
    void *expect; /* the CPU's decode of cpu_stream (src when lossless) */
} gpu_case;

/* Lossy: every finite value within the requested absolute bound (REL:
 * bound x (max - min) of the finite values) and the effective bound; NaN,
 * infinities and subnormals bit for bit. */
static void check_within_bound(const gpu_case *c) {
    const fz_dtype t = c->params.dtype;
    const size_t es = tu_dtype_size(t), n = c->bytes / es;
    fz_info info;
    CHECK_OK(fz_inspect(c->cpu_stream, c->cpu_size, &info));
    double lo = INFINITY, hi = -INFINITY;
    for (size_t i = 0; i < n; i++) {
        double v = tu_value_at(t, c->src, i);
        if (isfinite(v)) {
            lo = v < lo ? v : lo;
            hi = v > hi ? v : hi;
        }
    }
    double abs_bound = c->params.bound;
    if (c->params.mode == FZ_MODE_REL)
        abs_bound = !(hi >= lo) ? 0.0
                    : isinf(hi - lo)
                        ? 2.0 * (c->params.bound * (0.5 * hi - 0.5 * lo))
                        : c->params.bound * (hi - lo);
    CHECK(info.bound_effective <= abs_bound);
    for (size_t i = 0; i < n; i++) {
        const double o = tu_value_at(t, c->src, i);
        const double d = tu_value_at(t, c->expect, i);
        const int subnormal =
            o != 0 && fabs(o) < (t == FZ_F32 ? FLT_MIN : DBL_MIN);
        if (!isfinite(o) || subnormal) {
            CHECK(memcmp((const uint8_t *)c->src + i * es,
                         (const uint8_t *)c->expect + i * es, es) == 0);
            continue;
        }
        CHECK(fabs(d - o) <= abs_bound);
        CHECK(fabs(d - o) <= info.bound_effective);
    }
}

/* A case over `src` (n values, taken over by the case). */
static gpu_case make_case_of(fz_dtype dtype, void *src, size_t n,
                             uint32_t flags, fz_mode mode, double bound) {
    gpu_case c;
    c.bytes = n * tu_dtype_size(dtype);
    c.src = src;
    c.params = tu_params(dtype, n, flags);
    c.params.mode = mode;
    c.params.bound = bound;
    c.cpu_stream = tu_compress(&c.params, c.src, &c.cpu_size);
    c.expect = tu_xmalloc(c.bytes);
    fz_decode_options o = tu_decode_opts(0, 0);
    size_t got = 0;
    CHECK_OK(
        fz_decompress(c.cpu_stream, c.cpu_size, c.expect, c.bytes, &o, &got));
    CHECK_EQ_U64(got, c.bytes);
    if (mode == FZ_MODE_LOSSLESS)
        CHECK(memcmp(c.expect, c.src, c.bytes) == 0);
    else
        check_within_bound(&c);
    return c;
}

static gpu_case make_lossy_case(fz_dtype dtype, tu_gen g, size_t n,
                                uint32_t flags, fz_mode mode, double bound) {
    void *src = tu_xmalloc(n * tu_dtype_size(dtype));
    tu_fill(g, dtype, src, n, 1000 + n);
    return make_case_of(dtype, src, n, flags, mode, bound);
}

static gpu_case make_case(fz_dtype dtype, tu_gen g, size_t n, uint32_t flags) {
    return make_lossy_case(dtype, g, n, flags, FZ_MODE_LOSSLESS, 0.0);
}

static void free_case(gpu_case *c) {
    free(c->src);
    free(c->cpu_stream);
    free(c->expect);
}

/* Decode on backend `exec`; compare with the case's expected output. */
static fz_status decode_case_on(fz_exec exec, const uint8_t *stream,
                                size_t size, const gpu_case *c,
                                uint32_t flags) {
    return decode_on(exec, stream, size, c->expect, c->bytes, flags);
}

/* 1-3: host API on the GPU. */
static void check_host_api(const gpu_case *c) {
    fz_params p = c->params;
    p.exec = FZ_EXEC_GPU;
    size_t bound = 0, size = 0;
    CHECK_OK(fz_compress_bound(&p, &bound));
    tu_buf dst = tu_buf_alloc(bound);
    CHECK_OK(fz_compress(&p, c->src, c->bytes, dst.data, bound, &size));
    CHECK(tu_guard_intact(&dst));
    CHECK_EQ_U64(size, c->cpu_size);
    CHECK(memcmp(dst.data, c->cpu_stream, size) == 0);
    CHECK_OK(decode_case_on(FZ_EXEC_GPU, dst.data, size, c, 0));
    CHECK_OK(decode_case_on(FZ_EXEC_GPU, dst.data, size, c,
                            FZ_DECODE_SKIP_CHECKSUM));
    CHECK_OK(decode_case_on(FZ_EXEC_CPU, dst.data, size, c, 0));
    CHECK_OK(decode_case_on(FZ_EXEC_GPU, c->cpu_stream, c->cpu_size, c, 0));
    tu_buf_free(&dst);
}

/* ------------------------------------------------------------ device API */
/* Compress from src + 4 bytes: device pointers must be 16-byte aligned. */
static fz_status device_compress_unaligned(const fz_params *p,
                                           const device_buffers *d) {
    memset(d->h_result, 0xFF, sizeof *d->h_result);
    fz_status s = fz_device_compress(
        p, (const uint8_t *)d->src + 4, d->dst, d->dst_capacity, d->scratch,
        d->scratch_bytes, d->d_result, d->h_result, d->stream);
    return device_outcome(s, d);
}

/* 4: device API, compared with the CPU stream, and decoded back. */
static void check_device_api(const gpu_case *c) {
    device_buffers d = device_setup(&c->params, c->src, c->bytes);
    check_device_roundtrip(&c->params, &d, c->cpu_stream, c->cpu_size,
                           c->expect, c->bytes);
    CHECK_OK(device_decompress(&c->params, &d, c->cpu_size, d.out_capacity,
                               FZ_DECODE_SKIP_CHECKSUM));
    check_device_output(&d, c->expect, c->bytes);
    /* src_size may exceed the stream: it ends where its header says */
    CHECK_OK(
        device_decompress(&c->params, &d, d.dst_capacity, d.out_capacity, 0));
    check_device_output(&d, c->expect, c->bytes);
    device_teardown(&d);
}

/* The same stream from `times` device compressions in a row (passes that
 * end in a reset of the call's state are timing-sensitive). */
static void check_repeated_compress(const gpu_case *c, int times) {
    device_buffers d = device_setup(&c->params, c->src, c->bytes);
    for (int r = 0; r < times; r++) {
        CHECK_OK(device_compress(&c->params, &d, d.dst_capacity));
        CHECK_EQ_U64(d.h_result->size, c->cpu_size);
        check_device_bytes(d.dst, c->cpu_stream, c->cpu_size);
    }
    device_teardown(&d);
}

/* Decode params that disagree with the stream (scratch permitting). */
static void check_params_mismatch(const fz_params *other, device_buffers *d,
                                  size_t size) {
    size_t scratch = 0;
    CHECK_OK(fz_device_scratch_size(other, &scratch));
    if (scratch <= d->scratch_bytes)
        CHECK_STATUS(device_decompress(other, d, size, d->out_capacity, 0),
                     FZ_ERR_PARAMS_MISMATCH);
}

/* Decode options the host API refuses are refused by the device API too
 * (it uses only the flags, but takes no nonsense). */
static void check_device_decode_options(const fz_params *p, device_buffers *d,
                                        size_t size) {
    fz_decode_options bad[3];
    for (int i = 0; i < 3; i++)
        bad[i] = tu_decode_opts(0, 0);
    bad[0].reserved[0] = 1;
    bad[1].exec = (fz_exec)9;
    bad[2].gpu_streams = FZ_MAX_GPU_STREAMS + 1;
    for (int i = 0; i < 3; i++) {
        memset(d->h_result, 0xFF, sizeof *d->h_result);
        const fz_status s = fz_device_decompress(
            p, d->dst, size, d->out, d->out_capacity, d->scratch,
            d->scratch_bytes, &bad[i], d->d_result, d->h_result, d->stream);
        CHECK_STATUS(device_outcome(s, d), FZ_ERR_INVALID_ARGUMENT);
    }
}

/* A byte of the device stream flipped: the device decoder reports it. */
static void check_device_flip(const gpu_case *c, device_buffers *d,
                              size_t pos) {
    uint8_t byte = c->cpu_stream[pos] ^ 0x10;
    uint8_t *at = (uint8_t *)d->dst + pos;
    CUDA_CHECK(cudaMemcpy(at, &byte, 1, cudaMemcpyHostToDevice));
    fz_status st =
        device_decompress(&c->params, d, c->cpu_size, d->out_capacity, 0);
    CHECK_ERROR(st);
    CHECK(st != FZ_ERR_CUDA);
    CUDA_CHECK(cudaMemcpy(at, c->cpu_stream + pos, 1, cudaMemcpyHostToDevice));
}

/* Device API misuse and damaged device streams. */
static void check_device_errors(const gpu_case *c) {
    device_buffers d = device_setup(&c->params, c->src, c->bytes);
    const size_t scratch = d.scratch_bytes;
    if (scratch >= 16) {
        d.scratch_bytes = scratch - 16;
        CHECK_STATUS(device_compress(&c->params, &d, d.dst_capacity),
                     FZ_ERR_SCRATCH_TOO_SMALL);
        d.scratch_bytes = scratch;
    }
    if (c->cpu_size > FZ_HEADER_BYTES)
        CHECK_STATUS(device_compress(&c->params, &d, c->cpu_size - 1),
                     FZ_ERR_DST_TOO_SMALL);
    if (c->bytes > 0)
        CHECK_STATUS(device_compress_unaligned(&c->params, &d),
                     FZ_ERR_INVALID_ARGUMENT);
    CHECK_OK(device_compress(&c->params, &d, d.dst_capacity));
    fz_params other = c->params;
    other.ndims = 2; /* same values, another shape */
    check_params_mismatch(&other, &d, c->cpu_size);
    other = c->params; /* the same bytes read as the other dtype */
    other.dtype = c->params.dtype == FZ_F32 ? FZ_F64 : FZ_F32;
    other.dims[0] = c->params.dtype == FZ_F32 ? c->params.dims[0] / 2
                                              : c->params.dims[0] * 2;
    check_params_mismatch(&other, &d, c->cpu_size);
    other = c->params; /* lossless params for a lossy stream, or lossy */
    other.mode =
        c->params.mode == FZ_MODE_LOSSLESS ? FZ_MODE_ABS : FZ_MODE_LOSSLESS;
    other.bound = other.mode == FZ_MODE_LOSSLESS ? 0.0 : 1e-3;
    check_params_mismatch(&other, &d, c->cpu_size);
    other = c->params; /* the other checksum setting: another table entry
                        * size, so another payload offset */
    other.flags ^= FZ_FLAG_NO_CHECKSUM;
    size_t other_scratch = 0;
    CHECK_OK(fz_device_scratch_size(&other, &other_scratch));
    CHECK(other_scratch <= d.scratch_bytes); /* so the next check runs */
    check_params_mismatch(&other, &d, c->cpu_size);
    check_device_decode_options(&c->params, &d, c->cpu_size);
    check_device_flip(c, &d, 20);              /* header */
    check_device_flip(c, &d, c->cpu_size - 1); /* last payload byte */
    if (c->cpu_size > FZ_HEADER_BYTES)
        CHECK_ERROR(device_decompress(&c->params, &d, c->cpu_size - 1,
                                      d.out_capacity, 0));
    CHECK_OK(device_decompress(&c->params, &d, c->cpu_size, d.out_capacity, 0));
    check_device_output(&d, c->expect, c->bytes);
    device_teardown(&d);
}

/* 5: truncations and byte flips are rejected by the GPU decoder. */
static void check_corruption(const gpu_case *c) {
    const size_t size = c->cpu_size;
    uint8_t *copy = (uint8_t *)tu_xmalloc(size);
    const size_t cuts[] = {
        0, 1, 4, FZ_HEADER_BYTES - 1, FZ_HEADER_BYTES, size / 2, size - 1};
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
        if (cuts[i] >= size)
            continue;
        memcpy(copy, c->cpu_stream, cuts[i]);
        CHECK_ERROR(decode_case_on(FZ_EXEC_GPU, copy, cuts[i], c, 0));
    }
    const size_t step = size / 97 + 1;
    const uint8_t masks[] = {0x01, 0x80, 0xFF};
    memcpy(copy, c->cpu_stream, size);
    for (size_t pos = 0; pos < size; pos += step) {
        for (size_t m = 0; m < sizeof masks; m++) {
            copy[pos] ^= masks[m];
            fz_status st = decode_case_on(FZ_EXEC_GPU, copy, size, c, 0);
            copy[pos] ^= masks[m];
            CHECK(st != FZ_ERR_CUDA && st != FZ_ERR_OUT_OF_MEMORY);
            /* FZ_OK only where the flip hit ignored bits: decode_on then
             * checked that the output is exactly the original */
        }
    }
    free(copy);
}

static void run_case(fz_dtype dtype, tu_gen g, size_t n, uint32_t flags) {
    tu_context("gpu %s %s n=%zu flags=%u", tu_dtype_name(dtype), tu_gen_name(g),
               n, flags);
    gpu_case c = make_case(dtype, g, n, flags);
    check_host_api(&c);
    check_device_api(&c);
    free_case(&c);
    cases_run++;
}

static void test_all_cases(void) {
    const fz_dtype dtypes[] = {FZ_F32, FZ_F64};
    const uint32_t flags[] = {0, FZ_FLAG_NO_CHECKSUM};
    size_t sizes[16];
    for (int t = 0; t < 2; t++) {
        size_t count = case_sizes(dtypes[t], sizes);
        for (int g = 0; g < TU_GEN_COUNT; g++)
            for (int f = 0; f < 2; f++)
                for (size_t i = 0; i < count; i++)
                    run_case(dtypes[t], (tu_gen)g, sizes[i], flags[f]);
    }
}

/* 6: lossy modes, host and device API, against the CPU. */
static void test_lossy_cases(void) {
    const fz_dtype dtypes[] = {FZ_F32, FZ_F64};
    const tu_gen gens[] = {TU_GEN_WAVE, TU_GEN_MIXED, TU_GEN_SPECIAL,
                           TU_GEN_RANDOM_BITS, TU_GEN_CONSTANT};
    const struct {
        fz_mode mode;
        double bound;
    } lossy[] = {{FZ_MODE_ABS, 1e-3}, {FZ_MODE_ABS, 0.0},   {FZ_MODE_ABS, 1e30},
                 {FZ_MODE_REL, 1e-4}, {FZ_MODE_REL, 1e-12}, {FZ_MODE_REL, 0.0}};
    size_t sizes[16];
    for (int t = 0; t < 2; t++) {
        const size_t count = case_sizes(dtypes[t], sizes);
        for (size_t l = 0; l < sizeof lossy / sizeof lossy[0]; l++)
            for (size_t g = 0; g < sizeof gens / sizeof gens[0]; g++)
                for (size_t i = 0; i < count; i++) {
                    /* every size for one generator, a few for the rest */
                    if (g > 0 && i % 4 != 1 && i + 1 != count)
                        continue;
                    const uint32_t flags = i % 2 ? FZ_FLAG_NO_CHECKSUM : 0;
                    tu_context("gpu lossy %s %s %s bound %g n=%zu flags=%u",
                               tu_dtype_name(dtypes[t]),
                               lossy[l].mode == FZ_MODE_ABS ? "ABS" : "REL",
                               tu_gen_name(gens[g]), lossy[l].bound, sizes[i],
                               flags);
                    gpu_case c =
                        make_lossy_case(dtypes[t], gens[g], sizes[i], flags,
                                        lossy[l].mode, lossy[l].bound);
                    check_host_api(&c);
                    check_device_api(&c);
                    free_case(&c);
                    cases_run++;
                }
    }
    for (int t = 0; t < 2; t++) {
        for (int m = 0; m < 2; m++) {
            tu_context("gpu lossy corruption %s %s", tu_dtype_name(dtypes[t]),
                       m ? "REL" : "ABS");
            gpu_case c =
                make_lossy_case(dtypes[t], TU_GEN_PATCHWORK, 5000, 0,
                                m ? FZ_MODE_REL : FZ_MODE_ABS, m ? 1e-6 : 1e-3);
            check_device_errors(&c);
            check_corruption(&c);
            free_case(&c);
            cases_run++;
        }
    }
}

/* 7: REL on the GPU takes its bound from a sample of the values
 * (sleek_sample_index) and checks it against the whole input's range after
 * compressing. Extremes the sample skips that move the bound's power of
 * two make the check miss, infinities make it take the exact pass, and
 * the result must still be the CPU's bytes; so must data the sample does
 * represent (a 3-D field with power-of-two extents). */
static void test_rel_sample_misses(void) {
    const fz_dtype dtypes[] = {FZ_F32, FZ_F64};
    const size_t n = 300001; /* the last chunk is partial */
    enum { FIELD, SPIKE_UP, SPIKE_DOWN, ONLY_UNSAMPLED, TAIL, INF, INF_SPIKE };
    for (int t = 0; t < 2; t++)
        for (int kind = FIELD; kind <= INF_SPIKE; kind++) {
            tu_context("gpu REL sample %s kind %d", tu_dtype_name(dtypes[t]),
                       kind);
            const fz_dtype dt = dtypes[t];
            void *src = tu_xmalloc(n * tu_dtype_size(dt));
            for (size_t i = 0; i < n; i++) /* 64 x 64 x ~73, smooth */
                tu_set_value(dt, src, i,
                             sin((i % 64) * 0.1) * cos((i / 64 % 64) * 0.07) +
                                 (i / 4096) * 1e-3);
            const size_t a = unsampled_at_or_after(1, n);
            const size_t b = unsampled_at_or_after(a + 1, n);
            if (kind == SPIKE_UP)
                tu_set_value(dt, src, a, 1000.0);
            if (kind == SPIKE_DOWN)
                tu_set_value(dt, src, a, -3.0e5);
            if (kind == ONLY_UNSAMPLED) /* the sample sees no finite value */
                for (size_t i = 0; i < n; i++)
                    tu_set_value(dt, src, i,
                                 i == a   ? -2.0
                                 : i == b ? 7.0
                                          : NAN);
            if (kind == TAIL)
                tu_set_value(dt, src, unsampled_at_or_after(n - 300, n), 9.0e4);
            if (kind >= INF) { /* the exact pass; a spike it finds */
                tu_set_value(dt, src, 5, INFINITY);
                tu_set_value(dt, src, 77, -INFINITY);
                if (kind == INF_SPIKE)
                    tu_set_value(dt, src, a, 500.0);
            }
            gpu_case c = make_case_of(dt, src, n, 0, FZ_MODE_REL, 1e-3);
            check_host_api(&c);
            check_device_api(&c);
            if (kind != FIELD && kind != INF) /* a redo follows */
                check_repeated_compress(&c, 16);
            free_case(&c);
            cases_run++;
        }
}

/* 8: `sleek` streams of the older codec versions (version 1 hashes the
 * decoded bytes, version 2 the payloads; version 3 square-sums the
 * payloads): same values on the GPU; a checksum made from other values is
 * caught. */
static void test_old_version_streams(void) {
    const fz_dtype dtypes[] = {FZ_F32, FZ_F64};
    const fz_mode modes[] = {FZ_MODE_LOSSLESS, FZ_MODE_ABS, FZ_MODE_REL};
    const double bounds[] = {0.0, 1e-3, 1e-4};
    for (int t = 0; t < 2; t++)
        for (int m = 0; m < 3; m++) {
            const size_t n = 2 * tu_chunk_values(dtypes[t]) + 777;
            gpu_case c = make_lossy_case(dtypes[t], TU_GEN_WAVE, n, 0, modes[m],
                                         bounds[m]);
            uint8_t *old = (uint8_t *)tu_xmalloc(c.cpu_size);
            /* other values: chunk 1's last value changed (version 1), or
             * a payload byte of chunk 1 (version 2) */
            uint8_t *other = (uint8_t *)tu_xmalloc(c.bytes);
            memcpy(other, c.expect, c.bytes);
            other[2 * 16384 - 1] ^= 0x01;
            for (uint32_t v = 1; v <= 2; v++) {
                tu_context("gpu version %u %s mode %d", v,
                           tu_dtype_name(dtypes[t]), (int)modes[m]);
                memcpy(old, c.cpu_stream, c.cpu_size);
                tu_sleek_to_version(old, c.cpu_size, c.expect, v);
                CHECK_OK(decode_case_on(FZ_EXEC_GPU, old, c.cpu_size, &c, 0));
                memcpy(old, c.cpu_stream, c.cpu_size);
                if (v == 1) {
                    tu_sleek_to_version(old, c.cpu_size, other, 1);
                } else {
                    old[c.cpu_size - 1] ^= 0x01; /* hashed as changed */
                    tu_sleek_to_version(old, c.cpu_size, NULL, 2);
                    old[c.cpu_size - 1] ^= 0x01;
                }
                CHECK_STATUS(
                    decode_case_on(FZ_EXEC_GPU, old, c.cpu_size, &c, 0),
                    FZ_ERR_DATA_CHECKSUM);
                CHECK_OK(decode_case_on(FZ_EXEC_GPU, old, c.cpu_size, &c,
                                        FZ_DECODE_SKIP_CHECKSUM));
                cases_run++;
            }
            free(other);
            free(old);
            free_case(&c);
        }
}

static void test_errors_and_corruption(void) {
    const fz_dtype dtypes[] = {FZ_F32, FZ_F64};
    const size_t sizes[] = {0, 33, 5000};
    for (int t = 0; t < 2; t++) {
        for (size_t i = 0; i < 3; i++) {
            tu_context("gpu corruption %s n=%zu", tu_dtype_name(dtypes[t]),
                       sizes[i]);
            gpu_case c = make_case(dtypes[t], TU_GEN_PATCHWORK, sizes[i], 0);
            check_device_errors(&c);
            check_corruption(&c);
            free_case(&c);
            cases_run++;
        }
    }
}

static const tu_group groups[] = {
    {"cases", test_all_cases},
    {"errors", test_errors_and_corruption},
    {"lossy", test_lossy_cases},
    {"rel-sample", test_rel_sample_misses},
    {"old-versions", test_old_version_streams},
};

int main(int argc, char **argv) {
    if (fz_gpu_count() == 0) {
        printf("SKIP: no CUDA GPU available (fz_gpu_count() == 0)\n");
        return 77;
    }
    return tu_run_groups(argc, argv, "test_gpu", groups,
                         sizeof groups / sizeof groups[0], &cases_run, NULL);
}
