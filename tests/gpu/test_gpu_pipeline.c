/* The GPU pipeline (host API with exec = FZ_EXEC_GPU) through the public
 * API, plus the CUDA runtime for pinned host buffers:
 *  - the pipelined stream equals fz_compress's CPU bytes for every codec
 *    and mode at sizes around batch boundaries (batches of two chunks),
 *    with 1..16 streams, pageable and pinned source and destination;
 *  - GPU decoding returns what CPU decoding returns, with the same
 *    buffer and stream variations;
 *  - corrupt and truncated streams, a too small destination and device
 *    pointers get the same clear statuses as on the CPU;
 *  - the file streaming API on the GPU makes the CPU's bytes;
 *  - REL ranges reduced on the device (resident batches), on the host, or
 *    split between them give the CPU's bound and bytes; so does sleek's
 *    bound guessed from a sample, whether it is right or not.
 * Run all groups, or one: test_gpu_pipeline GROUP. Exits 77 (ctest:
 * skipped) when no CUDA GPU is usable. */
#define _POSIX_C_SOURCE 200112L /* setenv */
#include <cuda_runtime.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/common/fz_bound.h"
#include "pipeline_cases.h"
#include "rel_sample_test.h"
#include "gpu_test_util.h"
#include "test_util.h"

static unsigned cases_run;

/* Host memory, pinned or pageable. */
static void *host_alloc(size_t n, int pinned) {
    void *p = NULL;
    if (pinned)
        CUDA_CHECK(cudaMallocHost(&p, n ? n : 1));
    else
        p = tu_xmalloc(n);
    return p;
}

static void host_free(void *p, int pinned) {
    if (pinned)
        CUDA_CHECK(cudaFreeHost(p));
    else
        free(p);
}

/* Compress on the GPU into a buffer of `capacity`; the result must equal
 * ref. Then decode it on the GPU and compare with want. */
static void check_pipeline(const fz_params *p0, const void *data, size_t bytes,
                           const uint8_t *ref, size_t ref_size,
                           const void *want, uint32_t streams, int pinned_src,
                           int pinned_dst) {
    fz_params p = *p0;
    p.exec = FZ_EXEC_GPU;
    p.gpu_streams = streams;
    void *src = host_alloc(bytes, pinned_src);
    memcpy(src, data, bytes);
    size_t bound = 0, size = 0;
    CHECK_OK(fz_compress_bound(&p, &bound));
    uint8_t *dst = (uint8_t *)host_alloc(bound, pinned_dst);
    CHECK_OK(fz_compress(&p, src, bytes, dst, bound, &size));
    CHECK_EQ_U64(size, ref_size);
    CHECK(memcmp(dst, ref, ref_size) == 0);
    /* exactly the stream size is enough: no over-sized output needed */
    CHECK_OK(fz_compress(&p, src, bytes, dst, ref_size, &size));
    CHECK(memcmp(dst, ref, ref_size) == 0);
    if (ref_size > FZ_HEADER_BYTES + 16)
        CHECK_STATUS(fz_compress(&p, src, bytes, dst, ref_size - 1, &size),
                     FZ_ERR_DST_TOO_SMALL);

    /* decode the stream (in the source's kind of memory) on the GPU */
    uint8_t *zs = (uint8_t *)host_alloc(ref_size, pinned_src);
    memcpy(zs, ref, ref_size);
    void *out = host_alloc(bytes, pinned_dst);
    fz_decode_options o = tu_decode_opts(0, 0);
    o.exec = FZ_EXEC_GPU;
    o.gpu_streams = streams;
    o.batch_kib = p.batch_kib;
    size_t got = 0;
    CHECK_OK(fz_decompress(zs, ref_size, out, bytes, &o, &got));
    CHECK_EQ_U64(got, bytes);
    CHECK(memcmp(out, want, bytes) == 0);
    host_free(src, pinned_src);
    host_free(dst, pinned_dst);
    host_free(zs, pinned_src);
    host_free(out, pinned_dst);
    cases_run++;
}

static void boundary_case(const pc_config *c, uint64_t n, unsigned variant) {
    static const uint32_t streams[] = {1, 2, 3, 4, 7, 8, 16};
    fz_params p = pc_params(c, n);
    uint64_t chunks = 0;
    p.batch_kib = pc_batch_kib(pc_chunk_bytes(&p), &chunks);
    const uint32_t s = streams[variant % 7];
    const int pinned_src = (variant >> 1) & 1, pinned_dst = variant & 1;
    tu_context("%s n=%llu streams=%u pinned src=%d dst=%d", c->name,
               (unsigned long long)n, s, pinned_src, pinned_dst);
    const size_t bytes = (size_t)n * tu_dtype_size(c->dtype);
    void *data = tu_xmalloc(bytes);
    tu_fill(c->gen, c->dtype, data, (size_t)n, n * 17 + 3);
    size_t ref_size = 0, got = 0;
    uint8_t *ref = tu_compress(&p, data, &ref_size);
    void *want = tu_xmalloc(bytes);
    CHECK_OK(fz_decompress(ref, ref_size, want, bytes, NULL, &got));
    check_pipeline(&p, data, bytes, ref, ref_size, want, s, pinned_src,
                   pinned_dst);
    free(data);
    free(ref);
    free(want);
}

static void group_boundaries(void) {
    unsigned variant = 0;
    for (size_t i = 0; i < PC_CONFIG_COUNT; i++) {
        const pc_config *c = &pc_configs[i];
        fz_params p = pc_params(c, 1 << 16);
        const uint64_t cb = pc_chunk_bytes(&p);
        uint64_t chunks = 0, sizes[16];
        pc_batch_kib(cb, &chunks);
        const size_t k = pc_sizes(cb / tu_dtype_size(c->dtype), chunks, sizes);
        for (size_t j = 0; j < k; j++)
            boundary_case(c, sizes[j], variant++);
    }
}

/* Every stream count 1..16 on one array of many batches, all four buffer
 * combinations, small and default batches. */
static void group_streams(void) {
    const size_t n = 3 * 1000 * 1000 + 5, bytes = n * 4;
    float *data = (float *)tu_xmalloc(bytes);
    tu_fill(TU_GEN_MIXED, FZ_F32, data, n, 77);
    for (uint32_t kib = 0; kib <= 256; kib += 256) {
        fz_params p = tu_params(FZ_F32, n, 0);
        p.batch_kib = kib;
        size_t ref_size = 0;
        uint8_t *ref = tu_compress(&p, data, &ref_size);
        for (uint32_t s = 1; s <= 16; s++) {
            tu_context("streams %u batch_kib %u", s, kib);
            check_pipeline(&p, data, bytes, ref, ref_size, data, s, s & 1,
                           (s >> 1) & 1);
        }
        free(ref);
    }
    free(data);
}

/* Statuses for bad streams equal the CPU decoder's. */
static void group_errors(void) {
    const size_t n = 10 * 4096 + 100, bytes = n * 4;
    float *data = (float *)tu_xmalloc(bytes);
    tu_fill(TU_GEN_SMOOTH, FZ_F32, data, n, 4);
    fz_params p = tu_params(FZ_F32, n, 0);
    size_t size = 0, got = 0;
    uint8_t *s = tu_compress(&p, data, &size);
    uint8_t *bad = (uint8_t *)tu_xmalloc(size);
    float *out = (float *)tu_xmalloc(bytes);
    fz_decode_options cpu = tu_decode_opts(0, 0), gpu = cpu;
    gpu.exec = FZ_EXEC_GPU;
    gpu.batch_kib = 32;
    gpu.gpu_streams = 3;
    fz_info info;
    CHECK_OK(fz_inspect(s, size, &info));
    const size_t flips[] = {0, 40, FZ_HEADER_BYTES + 8 * 5, size - 300,
                            size / 2};
    for (size_t i = 0; i < sizeof flips / sizeof flips[0]; i++) {
        tu_context("flipped byte %zu", flips[i]);
        memcpy(bad, s, size);
        bad[flips[i]] ^= 0x24;
        const fz_status want = fz_decompress(bad, size, out, bytes, &cpu, &got);
        const fz_status have = fz_decompress(bad, size, out, bytes, &gpu, &got);
        CHECK(want != FZ_OK);
        if (flips[i] < info.payload_offset) /* checked on the host */
            CHECK_STATUS(have, want);
        else /* found by a kernel: a payload error either way */
            CHECK(have == FZ_ERR_DATA_CHECKSUM || have == FZ_ERR_CORRUPT_CHUNK);
        cases_run++;
    }
    const size_t cuts[] = {0, 64, FZ_HEADER_BYTES + 8, size - 1};
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
        tu_context("cut at %zu", cuts[i]);
        CHECK_STATUS(fz_decompress(s, cuts[i], out, bytes, &gpu, &got),
                     FZ_ERR_TRUNCATED);
        cases_run++;
    }
    tu_context("small destination");
    CHECK_STATUS(fz_decompress(s, size, out, bytes - 4, &gpu, &got),
                 FZ_ERR_DST_TOO_SMALL);
    tu_context("device pointers in the host API");
    void *d = NULL;
    CUDA_CHECK(cudaMalloc(&d, bytes));
    p.exec = FZ_EXEC_GPU;
    CHECK_STATUS(fz_compress(&p, d, bytes, bad, size, &got),
                 FZ_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(fz_decompress(s, size, d, bytes, &gpu, &got),
                 FZ_ERR_INVALID_ARGUMENT);
    CUDA_CHECK(cudaFree(d));
    cases_run++;
    free(data);
    free(s);
    free(bad);
    free(out);
}

/* File streaming with the GPU backend makes the CPU's bytes. */
static void group_files(void) {
    const size_t n = 5 * 1000 * 1000 + 11, bytes = n * 8;
    double *data = (double *)tu_xmalloc(bytes);
    tu_fill(TU_GEN_SMOOTH, FZ_F64, data, n, 8);
    const char *in = "test_gpu_pipeline_in.raw", *z = "test_gpu_pipeline.fz",
               *outp = "test_gpu_pipeline_out.raw";
    FILE *f = fopen(in, "wb");
    CHECK(f && fwrite(data, 1, bytes, f) == bytes && fclose(f) == 0);
    for (size_t i = 0; i < PC_CONFIG_COUNT; i++) {
        const pc_config *c = &pc_configs[i];
        if (c->dtype != FZ_F64)
            continue;
        tu_context("file %s", c->name);
        fz_params p = pc_params(c, n);
        p.exec = FZ_EXEC_GPU;
        p.batch_kib = 8 << 10; /* 8 MiB file batches */
        uint64_t zsize = 0, dsize = 0;
        CHECK_OK(fz_compress_file(&p, in, z, NULL, NULL, &zsize));
        p.exec = FZ_EXEC_CPU;
        size_t ref_size = 0;
        uint8_t *ref = tu_compress(&p, data, &ref_size);
        uint8_t *got = (uint8_t *)tu_xmalloc(ref_size);
        f = fopen(z, "rb");
        CHECK(f && fread(got, 1, ref_size, f) == ref_size && fclose(f) == 0);
        CHECK_EQ_U64(zsize, ref_size);
        CHECK(memcmp(got, ref, ref_size) == 0);
        fz_decode_options o = tu_decode_opts(0, 0);
        o.exec = FZ_EXEC_GPU;
        CHECK_OK(fz_decompress_file(z, outp, &o, NULL, NULL, &dsize));
        CHECK_EQ_U64(dsize, bytes);
        double *want = (double *)tu_xmalloc(bytes), *back = tu_xmalloc(bytes);
        size_t w = 0;
        CHECK_OK(fz_decompress(ref, ref_size, want, bytes, NULL, &w));
        f = fopen(outp, "rb");
        CHECK(f && fread(back, 1, bytes, f) == bytes && fclose(f) == 0);
        CHECK(memcmp(back, want, bytes) == 0);
        free(ref);
        free(got);
        free(want);
        free(back);
        cases_run++;
    }
    remove(in);
    remove(z);
    remove(outp);
    free(data);
}

/* Default options on an array of many default batches (~600 MB). */
static void group_large(void) {
    const size_t n = ((size_t)600 << 20) / 4 + 3, bytes = n * 4;
    float *data = (float *)host_alloc(bytes, 1);
    tu_fill(TU_GEN_SMOOTH, FZ_F32, data, n, 6);
    for (int mode = 0; mode < 2; mode++) {
        tu_context("large, %s", mode ? "REL" : "lossless");
        fz_params p = tu_params(FZ_F32, n, 0);
        p.mode = mode ? FZ_MODE_REL : FZ_MODE_LOSSLESS;
        p.bound = mode ? 1e-3 : 0.0;
        size_t ref_size = 0, got = 0;
        uint8_t *ref = tu_compress(&p, data, &ref_size);
        float *want = (float *)tu_xmalloc(bytes);
        CHECK_OK(fz_decompress(ref, ref_size, want, bytes, NULL, &got));
        check_pipeline(&p, data, bytes, ref, ref_size, want, 0, 1, 1);
        check_pipeline(&p, data, bytes, ref, ref_size, want, 0, 0, 0);
        free(ref);
        free(want);
    }
    host_free(data, 1);
}

/* One GPU compress + decompress from a thread; ok when both match. */
typedef struct cache_job {
    const fz_params *p;
    const float *data;
    size_t bytes;
    const uint8_t *ref;
    size_t ref_size;
    uint32_t streams;
    int ok;
} cache_job;

static void *cache_job_run(void *arg) {
    cache_job *j = (cache_job *)arg;
    fz_params p = *j->p;
    p.exec = FZ_EXEC_GPU;
    p.gpu_streams = j->streams;
    size_t bound = 0, size = 0, got = 0;
    j->ok = fz_compress_bound(&p, &bound) == FZ_OK;
    uint8_t *dst = (uint8_t *)malloc(bound);
    float *out = (float *)malloc(j->bytes);
    fz_decode_options o = tu_decode_opts(0, 0);
    o.exec = FZ_EXEC_GPU;
    o.gpu_streams = j->streams;
    o.batch_kib = p.batch_kib;
    for (int rep = 0; j->ok && dst && out && rep < 3; rep++) {
        j->ok =
            fz_compress(&p, j->data, j->bytes, dst, bound, &size) == FZ_OK &&
            size == j->ref_size && memcmp(dst, j->ref, size) == 0 &&
            fz_decompress(dst, size, out, j->bytes, &o, &got) == FZ_OK &&
            got == j->bytes && memcmp(out, j->data, j->bytes) == 0;
    }
    j->ok &= dst && out;
    free(dst);
    free(out);
    return NULL;
}

/* The cached pipeline buffers: reuse with more and fewer streams and
 * larger batches, after an explicit release, with pageable buffers staged
 * or page-locked (FZ_GPU_PAGEABLE), and from concurrent threads. */
static void group_cache(void) {
    const size_t n = 2 * 1000 * 1000 + 3, bytes = n * 4;
    float *data = (float *)tu_xmalloc(bytes);
    tu_fill(TU_GEN_MIXED, FZ_F32, data, n, 91);
    for (int reg = 0; reg <= 1; reg++) {
        CHECK(setenv("FZ_GPU_PAGEABLE", reg ? "register" : "stage", 1) == 0);
        for (uint32_t kib = 256; kib <= 4096; kib *= 16) {
            fz_params p = tu_params(FZ_F32, n, 0);
            p.batch_kib = kib;
            size_t ref_size = 0;
            uint8_t *ref = tu_compress(&p, data, &ref_size);
            const uint32_t streams[] = {3, 1, 6, 2};
            for (unsigned i = 0; i < 4; i++) {
                tu_context("register %d batch_kib %u streams %u", reg, kib,
                           streams[i]);
                check_pipeline(&p, data, bytes, ref, ref_size, data, streams[i],
                               0, 0);
                check_pipeline(&p, data, bytes, ref, ref_size, data, streams[i],
                               1, 0);
                if (i == 1)
                    fz_gpu_release_cache();
            }
            free(ref);
        }
    }
    CHECK(unsetenv("FZ_GPU_PAGEABLE") == 0);
    fz_params p = tu_params(FZ_F32, n, 0);
    p.batch_kib = 512;
    size_t ref_size = 0;
    uint8_t *ref = tu_compress(&p, data, &ref_size);
    enum { kThreads = 4 };
    cache_job jobs[kThreads];
    pthread_t tids[kThreads];
    for (unsigned t = 0; t < kThreads; t++) {
        cache_job j = {&p, data, bytes, ref, ref_size, 1 + t, 0};
        jobs[t] = j;
        CHECK(pthread_create(&tids[t], NULL, cache_job_run, &jobs[t]) == 0);
    }
    for (unsigned t = 0; t < kThreads; t++) {
        CHECK(pthread_join(tids[t], NULL) == 0);
        tu_context("thread %u", t);
        CHECK(jobs[t].ok);
        cases_run++;
    }
    fz_gpu_release_cache();
    fz_gpu_release_cache(); /* nothing cached: a no-op */
    free(ref);
    free(data);
}

/* One REL array through the pipeline with every resident split: all
 * batches resident (default), some (FZ_GPU_RESIDENT_MIB=1: four batches of
 * 256 KiB; the rest scanned on the host, or for sleek uploaded again on a
 * miss) and none (0). Each compression is also run into a dst of exactly
 * the stream's size (a guess that needs more must still succeed). */
static void rel_case(const char *name, const fz_params *p0, const void *data,
                     size_t bytes) {
    static const char *const splits[] = {NULL, "1", "0"};
    fz_params p = *p0;
    p.batch_kib = 256;
    size_t ref_size = 0, got = 0;
    uint8_t *ref = tu_compress(&p, data, &ref_size);
    void *want = tu_xmalloc(bytes);
    CHECK_OK(fz_decompress(ref, ref_size, want, bytes, NULL, &got));
    for (unsigned k = 0; k < 3; k++) {
        if (splits[k])
            CHECK(setenv("FZ_GPU_RESIDENT_MIB", splits[k], 1) == 0);
        else
            CHECK(unsetenv("FZ_GPU_RESIDENT_MIB") == 0);
        for (uint32_t streams = 1; streams <= 3; streams++) {
            const int pinned = (int)((k + streams) & 1);
            tu_context("REL %s resident MiB %s streams %u pinned %d", name,
                       splits[k] ? splits[k] : "default", streams, pinned);
            check_pipeline(&p, data, bytes, ref, ref_size, want, streams,
                           pinned, !pinned);
        }
    }
    CHECK(unsetenv("FZ_GPU_RESIDENT_MIB") == 0);
    free(ref);
    free(want);
}

/* sleek's effective REL bound (binary64 bits, 0: lossless) from the finite
 * range of the sampled values or of all of them. */
static uint64_t sleek_rel_bound(fz_dtype t, const void *data, size_t n,
                                double rel, int sampled) {
    const uint64_t m = !sampled ? n : n < SLEEK_SAMPLE ? n : SLEEK_SAMPLE;
    double lo = INFINITY, hi = -INFINITY;
    for (uint64_t k = 0; k < m; k++) {
        const double v =
            tu_value_at(t, data, sampled ? sleek_sample_index(k, n, m) : k);
        if (isfinite(v)) {
            lo = v < lo ? v : lo;
            hi = v > hi ? v : hi;
        }
    }
    int32_t e;
    const uint64_t abs_bits = fz_rel_abs_bound_bits(rel, lo, hi);
    if (sleek_bound_exponent((uint32_t)tu_dtype_size(t), abs_bits, &e))
        return 0;
    return sleek_pow2_bits(e);
}

/* sleek REL guesses the bound from a sample of the input and compresses
 * at once; the whole input's range, reduced on the device meanwhile,
 * confirms it or the batches are compressed again. The bytes are the
 * CPU's either way: a smooth field the sample represents (hit); extremes
 * only at positions the sample cannot see, in the first batch, the last
 * one and with specials around (miss); finite values only where the
 * sample does not look (it guesses lossless). */
static void group_rel_guess(void) {
    const size_t n = 700 * 1000 + 3;
    enum { HIT, SPIKE_FIRST, SPIKE_LAST, SPECIALS, ONLY_UNSAMPLED, KINDS };
    static const char *const names[] = {
        "hit", "spike in the first batch", "spike in the last batch",
        "specials and spikes", "only unsampled"};
    const size_t a = unsampled_at_or_after(3, n);
    const size_t z = unsampled_at_or_after(n - 400, n);
    for (int f64 = 0; f64 <= 1; f64++) {
        const fz_dtype t = f64 ? FZ_F64 : FZ_F32;
        const size_t bytes = n * tu_dtype_size(t);
        void *data = tu_xmalloc(bytes);
        for (int kind = HIT; kind < KINDS; kind++) {
            for (size_t i = 0; i < n; i++)
                tu_set_value(t, data, i, sin(i * 1e-4) + (double)i * 1e-7);
            if (kind == SPIKE_FIRST)
                tu_set_value(t, data, a, 400.0);
            if (kind == SPIKE_LAST)
                tu_set_value(t, data, z, -3.0e3);
            if (kind == SPECIALS) {
                tu_set_bits(t, data, 0,
                            f64 ? 0x7ff8000000001234ull : 0x7fc01234ull);
                tu_set_value(t, data, 1, -INFINITY);
                tu_set_value(t, data, 2, INFINITY);
                tu_set_value(t, data, n / 2, -0.0);
                tu_set_bits(t, data, n / 2 + 1, 1); /* smallest subnormal */
                tu_set_value(t, data, a, -7.0e4);
                tu_set_value(t, data, z, 9.0e4);
            }
            if (kind == ONLY_UNSAMPLED)
                for (size_t i = 0; i < n; i++)
                    tu_set_value(t, data, i,
                                 i == a   ? -2.0
                                 : i == z ? 7.0
                                          : NAN);
            fz_params p = tu_params(t, n, 0);
            p.mode = FZ_MODE_REL;
            p.bound = 1e-3;
            tu_context("REL guess %s %s", tu_dtype_name(t), names[kind]);
            const uint64_t guess = sleek_rel_bound(t, data, n, p.bound, 1);
            const uint64_t right = sleek_rel_bound(t, data, n, p.bound, 0);
            CHECK(kind == HIT ? guess == right : guess != right);
            char name[64];
            snprintf(name, sizeof name, "%s %s", tu_dtype_name(t), names[kind]);
            rel_case(name, &p, data, bytes);
        }
        free(data);
    }
}

/* Specials (NaN with a payload, infinities, -0.0, subnormals) must stay out
 * of the range; the extremes lie in the first batch (min) and the last
 * (max), so a split range must combine the device and host sides. */
static void group_rel(void) {
    const size_t n = 1000 * 1000 + 7;
    for (int f64 = 0; f64 <= 1; f64++) {
        const fz_dtype t = f64 ? FZ_F64 : FZ_F32;
        const size_t bytes = n * tu_dtype_size(t);
        void *data = tu_xmalloc(bytes);
        tu_fill(TU_GEN_WAVE, t, data, n, 5 + (uint64_t)f64);
        tu_set_bits(t, data, 0, f64 ? 0x7ff8000000001234ull : 0x7fc01234ull);
        tu_set_value(t, data, 1, -INFINITY);
        tu_set_value(t, data, 100, -1e9);
        tu_set_value(t, data, n / 2, INFINITY);
        tu_set_value(t, data, n / 2 + 1, -0.0);
        tu_set_bits(t, data, n / 2 + 2, 1); /* smallest subnormal */
        tu_set_value(t, data, n - 2, 2e9);
        tu_set_bits(t, data, n - 1, f64 ? 0xfff0000000000001ull : 0xff800001u);
        fz_params p = tu_params(t, n, 0);
        p.mode = FZ_MODE_REL;
        p.bound = f64 ? 1e-10 : 1e-7;
        rel_case(f64 ? "sleek f64" : "sleek f32", &p, data, bytes);
        /* no finite value at all: the range is empty */
        for (size_t i = 0; i < n; i++)
            tu_set_value(t, data, i,
                         i % 3 ? (i & 1 ? NAN : INFINITY) : -INFINITY);
        rel_case(f64 ? "sleek f64 no finite" : "sleek f32 no finite", &p, data,
                 bytes);
        free(data);
    }
    /* lorenzo predicts across planes: batches keep the 3-D geometry */
    const uint64_t dims[3] = {64, 64, 160};
    const size_t m = 64 * 64 * 160, bytes = m * 4;
    float *v = (float *)tu_xmalloc(bytes);
    tu_fill(TU_GEN_SMOOTH, FZ_F32, v, m, 21);
    v[7] = NAN;
    v[m - 5] = INFINITY;
    fz_params p = tu_params(FZ_F32, 1, 0);
    CHECK_OK(fz_params_set_shape(&p, 3, dims));
    p.codec = FZ_CODEC_LORENZO;
    p.mode = FZ_MODE_REL;
    p.bound = 1e-4;
    rel_case("lorenzo f32 3-D", &p, v, bytes);
    free(v);
}

/* Codec auto on the GPU: the choice is made on the CPU from the data, so
 * the pipeline and the file API give the CPU's auto stream, whole arrays
 * (the trial stream itself) and sampled ones alike. */
static void auto_case(const char *what, const fz_params *p, const void *data,
                      fz_codec want_codec) {
    tu_context("auto %s", what);
    CHECK(fz_gpu_supports(p));
    uint64_t n = 0, bytes = 0;
    CHECK_OK(fz_params_count(p, &n, &bytes));
    size_t ref_size = 0, got = 0;
    uint8_t *ref = tu_compress(p, data, &ref_size);
    fz_info info;
    CHECK_OK(fz_inspect(ref, ref_size, &info));
    CHECK(info.params.codec == want_codec);
    void *want = tu_xmalloc((size_t)bytes);
    CHECK_OK(fz_decompress(ref, ref_size, want, (size_t)bytes, NULL, &got));
    for (int pinned = 0; pinned < 2; pinned++)
        check_pipeline(p, data, (size_t)bytes, ref, ref_size, want, 2, pinned,
                       pinned);

    const char *in = "test_gpu_auto_in.raw", *z = "test_gpu_auto.fz";
    FILE *f = fopen(in, "wb");
    CHECK(f && fwrite(data, 1, (size_t)bytes, f) == bytes && fclose(f) == 0);
    fz_params q = *p;
    q.exec = FZ_EXEC_GPU;
    uint64_t zsize = 0;
    CHECK_OK(fz_compress_file(&q, in, z, NULL, NULL, &zsize));
    CHECK_EQ_U64(zsize, ref_size);
    uint8_t *back = (uint8_t *)tu_xmalloc(ref_size);
    f = fopen(z, "rb");
    CHECK(f && fread(back, 1, ref_size, f) == ref_size && fclose(f) == 0);
    CHECK(memcmp(back, ref, ref_size) == 0);
    remove(in);
    remove(z);
    free(back);
    free(ref);
    free(want);
    cases_run++;
}

static void group_auto(void) {
    const uint64_t n = 3 * 1000 * 1000 + 7; /* sampled */
    double *dec = (double *)tu_xmalloc((size_t)n * 8);
    tu_fill_decimal(FZ_F64, dec, (size_t)n, 250000, 41);
    fz_params p = tu_params(FZ_F64, n, 0);
    p.codec = FZ_CODEC_AUTO;
    auto_case("decimal f64, sampled", &p, dec, FZ_CODEC_FALCON);
    fz_params_set_shape(&p, 1, &(uint64_t){5000}); /* whole */
    auto_case("decimal f64, whole", &p, dec, FZ_CODEC_FALCON);
    free(dec);

    const uint64_t d[3] = {256, 96, 80};
    const size_t m = (size_t)(d[0] * d[1] * d[2]);
    float *field = (float *)tu_xmalloc(m * 4);
    for (size_t i = 0; i < m; i++) {
        const double x = (double)(i % d[0]), y = (double)(i / d[0] % d[1]),
                     z = (double)(i / (d[0] * d[1]));
        field[i] = (float)(100.0 + sin(x / 19.0) * cos(y / 23.0) +
                           0.5 * sin(z / 29.0 + x / 41.0));
    }
    p = tu_params(FZ_F32, 1, 0);
    fz_params_set_shape(&p, 3, d);
    p.codec = FZ_CODEC_AUTO;
    p.mode = FZ_MODE_REL;
    p.bound = 1e-3;
    auto_case("smooth f32 3-D REL 1e-3, sampled", &p, field, FZ_CODEC_LORENZO);
    free(field);
}

static const tu_group groups[] = {
    {"boundaries", group_boundaries},
    {"streams", group_streams},
    {"errors", group_errors},
    {"files", group_files},
    {"large", group_large},
    {"cache", group_cache},
    {"rel", group_rel},
    {"rel_guess", group_rel_guess},
    {"auto", group_auto},
};

int main(int argc, char **argv) {
    if (fz_gpu_count() == 0) {
        printf("test_gpu_pipeline: no usable CUDA GPU, skipped\n");
        return 77;
    }
    return tu_run_groups(argc, argv, "test_gpu_pipeline", groups,
                         sizeof groups / sizeof groups[0], &cases_run, NULL);
}
