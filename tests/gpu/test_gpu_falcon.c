/* Falcon on the GPU, through the public API (plus the CUDA runtime for
 * device buffers), for both GPU kernels: the warp kernel (default) and the
 * reference kernel (FZ_FALCON_GPU_KERNEL=reference, the CPU's chunk coder
 * in one thread per chunk):
 *  1. host API with exec = FZ_EXEC_GPU: the stream is byte-identical to the
 *     CPU's; GPU streams decode on the CPU and CPU streams on the GPU;
 *  2. device API on device-resident data: the same bytes, decoded back;
 *  3. damaged streams: truncations and byte flips are rejected by the GPU
 *     decoder (or decode exactly); without checksums the GPU decoder
 *     accepts exactly what the CPU decoder accepts, with the same output;
 *  4. device API misuse: scratch and capacity too small, mismatched params;
 *  5. a large array (tens of thousands of chunks: the look-back under load).
 * Exits 77 (ctest: skipped) when no CUDA GPU is usable. Arguments:
 * [warp | reference] runs only that kernel; a second argument "quick"
 * leaves out the large sizes (for compute-sanitizer runs). */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "falcon_data.h"
#include "gpu_test_util.h"
#include "test_util.h"

static unsigned cases_run;
static const char *kernel_name = "warp";
static int quick;

static void select_kernel(const char *name) {
    kernel_name = name;
    if (strcmp(name, "reference") == 0)
        setenv("FZ_FALCON_GPU_KERNEL", "reference", 1);
    else
        unsetenv("FZ_FALCON_GPU_KERNEL");
}

typedef struct gpu_case {
    fz_params params;
    void *src;
    size_t bytes;
    uint8_t *cpu_stream;
    size_t cpu_size;
} gpu_case;

static gpu_case make_case(fz_dtype dt, int gen, int shared, size_t n,
                          uint32_t flags, int32_t chunk) {
    gpu_case c;
    c.bytes = n * tu_dtype_size(dt);
    c.src = tu_xmalloc(c.bytes);
    if (shared)
        tu_fill((tu_gen)gen, dt, c.src, n, 1000 + n);
    else
        fd_fill((fd_gen)gen, dt, c.src, n, 1000 + n);
    c.params = fd_params(dt, n, flags, chunk);
    c.cpu_stream = tu_compress(&c.params, c.src, &c.cpu_size);
    return c;
}

static void free_case(gpu_case *c) {
    free(c->src);
    free(c->cpu_stream);
}

/* Decode on a backend into a guarded buffer; compare with want on success. */
static fz_status decode_copy_on(fz_exec exec, const uint8_t *stream,
                                size_t size, size_t bytes, const void *want,
                                uint32_t flags, void *out_copy) {
    tu_buf out = tu_buf_alloc(bytes);
    fz_decode_options o = tu_decode_opts(exec == FZ_EXEC_CPU ? 1 : 0, flags);
    o.exec = exec;
    size_t got = 0;
    fz_status st = fz_decompress(stream, size, out.data, bytes, &o, &got);
    CHECK(tu_guard_intact(&out));
    if (st == FZ_OK) {
        CHECK_EQ_U64(got, bytes);
        if (want)
            CHECK(memcmp(out.data, want, bytes) == 0);
        if (out_copy)
            memcpy(out_copy, out.data, bytes);
    }
    tu_buf_free(&out);
    return st;
}

/* 1. host API on the GPU. */
static void check_host_api(const gpu_case *c) {
    fz_params p = c->params;
    p.exec = FZ_EXEC_GPU;
    size_t bound = 0, size = 0;
    CHECK_OK(fz_compress_bound(&p, &bound));
    tu_buf dst = tu_buf_alloc(bound);
    CHECK_OK(fz_compress(&p, c->src, c->bytes, dst.data, bound, &size));
    CHECK(tu_guard_intact(&dst));
    if (size != c->cpu_size || memcmp(dst.data, c->cpu_stream, size) != 0) {
        size_t k = 0;
        while (k < size && k < c->cpu_size && dst.data[k] == c->cpu_stream[k])
            k++;
        fprintf(stderr,
                "GPU stream %zu bytes, CPU %zu, first difference at "
                "byte %zu\n",
                size, c->cpu_size, k);
        tu_fail(__FILE__, __LINE__, "gpu == cpu", "streams differ");
    }
    CHECK_OK(
        decode_copy_on(FZ_EXEC_GPU, dst.data, size, c->bytes, c->src, 0, 0));
    CHECK_OK(decode_copy_on(FZ_EXEC_GPU, dst.data, size, c->bytes, c->src,
                            FZ_DECODE_SKIP_CHECKSUM, 0));
    CHECK_OK(
        decode_copy_on(FZ_EXEC_CPU, dst.data, size, c->bytes, c->src, 0, 0));
    CHECK_OK(decode_copy_on(FZ_EXEC_GPU, c->cpu_stream, c->cpu_size, c->bytes,
                            c->src, 0, 0));
    tu_buf_free(&dst);
}

/* Codec version 1 streams (fz_hash data checksums) decode on the GPU,
 * and their checksums are checked as version 1's. */
static void check_version1(const gpu_case *c) {
    if ((c->params.flags & FZ_FLAG_NO_CHECKSUM) || c->bytes == 0)
        return;
    uint8_t *v1 = (uint8_t *)tu_xmalloc(c->cpu_size);
    memcpy(v1, c->cpu_stream, c->cpu_size);
    tu_restamp_version(v1, c->cpu_size, c->src, 1, FZ_SUM_MIX);
    CHECK_OK(
        decode_copy_on(FZ_EXEC_GPU, v1, c->cpu_size, c->bytes, c->src, 0, 0));
    tu_restamp_version(v1, c->cpu_size, c->src, 1, FZ_SUM_SQUARE);
    CHECK_STATUS(
        decode_copy_on(FZ_EXEC_GPU, v1, c->cpu_size, c->bytes, NULL, 0, 0),
        FZ_ERR_DATA_CHECKSUM);
    CHECK_OK(decode_copy_on(FZ_EXEC_GPU, v1, c->cpu_size, c->bytes, c->src,
                            FZ_DECODE_SKIP_CHECKSUM, 0));
    free(v1);
}

/* ------------------------------------------------------------ device API */
/* 2. device API: the same bytes, decoded back; 4. misuse. */
static void check_device_api(const gpu_case *c, int misuse) {
    device_buffers d = device_setup(&c->params, c->src, c->bytes);
    check_device_roundtrip(&c->params, &d, c->cpu_stream, c->cpu_size, c->src,
                           c->bytes);
    CHECK_OK(device_decompress(&c->params, &d, d.dst_capacity, c->bytes,
                               FZ_DECODE_SKIP_CHECKSUM));
    check_device_output(&d, c->src, c->bytes);
    if (misuse) {
        const size_t scratch = d.scratch_bytes;
        d.scratch_bytes = scratch - 16;
        CHECK_STATUS(device_compress(&c->params, &d, d.dst_capacity),
                     FZ_ERR_SCRATCH_TOO_SMALL);
        d.scratch_bytes = scratch;
        CHECK_STATUS(device_compress(&c->params, &d, c->cpu_size - 1),
                     FZ_ERR_DST_TOO_SMALL);
        CHECK_OK(device_compress(&c->params, &d, d.dst_capacity));
        fz_params other = c->params; /* another chunk size: another stream */
        other.codec_options[0] = c->params.codec_options[0] == 7 ? 0 : 7;
        size_t s2 = 0;
        CHECK_OK(fz_device_scratch_size(&other, &s2));
        if (s2 <= d.scratch_bytes)
            CHECK_STATUS(
                device_decompress(&other, &d, c->cpu_size, c->bytes, 0),
                FZ_ERR_CORRUPT_HEADER);
        other = c->params; /* another codec */
        other.codec = FZ_CODEC_SLEEK;
        other.codec_options[0] = 0;
        CHECK_OK(fz_device_scratch_size(&other, &s2));
        if (s2 <= d.scratch_bytes)
            CHECK_STATUS(
                device_decompress(&other, &d, c->cpu_size, c->bytes, 0),
                FZ_ERR_PARAMS_MISMATCH);
        if (c->cpu_size > FZ_HEADER_BYTES)
            CHECK_ERROR(device_decompress(&c->params, &d, c->cpu_size - 1,
                                          c->bytes, 0));
        CHECK_OK(device_decompress(&c->params, &d, c->cpu_size, c->bytes, 0));
        check_device_output(&d, c->src, c->bytes);
    }
    device_teardown(&d);
}

/* 3. damaged streams on the GPU decoder, against the CPU decoder. */
static void check_damage(const gpu_case *c, size_t step) {
    const size_t size = c->cpu_size;
    uint8_t *copy = (uint8_t *)tu_xmalloc(size);
    void *cpu_out = tu_xmalloc(c->bytes ? c->bytes : 1);
    void *gpu_out = tu_xmalloc(c->bytes ? c->bytes : 1);
    const size_t cuts[] = {0, 4, FZ_HEADER_BYTES, size / 2, size - 1};
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++)
        if (cuts[i] < size) {
            memcpy(copy, c->cpu_stream, cuts[i]);
            CHECK_ERROR(decode_copy_on(FZ_EXEC_GPU, copy, cuts[i], c->bytes,
                                       NULL, 0, NULL));
        }
    const int checksums = !(c->params.flags & FZ_FLAG_NO_CHECKSUM);
    const uint8_t masks[] = {0x01, 0xFF};
    memcpy(copy, c->cpu_stream, size);
    for (size_t pos = 0; pos < size; pos += step)
        for (size_t m = 0; m < sizeof masks; m++) {
            copy[pos] ^= masks[m];
            const fz_status gs =
                decode_copy_on(FZ_EXEC_GPU, copy, size, c->bytes,
                               checksums ? c->src : NULL, 0, gpu_out);
            CHECK(gs != FZ_ERR_CUDA && gs != FZ_ERR_OUT_OF_MEMORY);
            if (!checksums) {
                const fz_status cs = decode_copy_on(FZ_EXEC_CPU, copy, size,
                                                    c->bytes, NULL, 0, cpu_out);
                if ((cs == FZ_OK) != (gs == FZ_OK)) {
                    fprintf(stderr, "byte %zu ^ 0x%02X: CPU %s, GPU %s\n", pos,
                            masks[m], fz_status_string(cs),
                            fz_status_string(gs));
                    tu_fail(__FILE__, __LINE__, "cpu/gpu decoders",
                            "accept different streams");
                }
                if (gs == FZ_OK)
                    CHECK(memcmp(cpu_out, gpu_out, c->bytes) == 0);
            }
            copy[pos] ^= masks[m];
        }
    free(copy);
    free(cpu_out);
    free(gpu_out);
}

static void run_case(fz_dtype dt, int gen, int shared, size_t n, uint32_t flags,
                     int32_t chunk) {
    tu_context("gpu falcon [%s] %s %s n=%zu flags=%u chunk=%d", kernel_name,
               tu_dtype_name(dt),
               shared ? tu_gen_name((tu_gen)gen) : fd_gen_name((fd_gen)gen), n,
               flags, chunk);
    gpu_case c = make_case(dt, gen, shared, n, flags, chunk);
    check_host_api(&c);
    check_version1(&c);
    check_device_api(&c, 0);
    free_case(&c);
    cases_run++;
}

static void test_roundtrips(void) {
    const fz_dtype dtypes[] = {FZ_F32, FZ_F64};
    const size_t all[] = {0, 1, 2, 33, 1024, 1025, 1026, 2051, 70000};
    const size_t few[] = {0, 1, 33, 1025, 2051};
    const size_t *sizes = quick ? few : all;
    const size_t nsizes =
        quick ? sizeof few / sizeof few[0] : sizeof all / sizeof all[0];
    for (int t = 0; t < 2; t++)
        for (size_t s = 0; s < nsizes; s++)
            for (int f = 0; f < (quick ? 1 : 2); f++) {
                const uint32_t flags = f ? FZ_FLAG_NO_CHECKSUM : 0;
                for (int g = 0; g < FD_COUNT; g++)
                    run_case(dtypes[t], g, 0, sizes[s], flags, 0);
                for (int g = 0; g < TU_GEN_COUNT; g++)
                    run_case(dtypes[t], g, 1, sizes[s], flags, 0);
            }
    if (quick)
        return;
    const int32_t chunks[] = {1, 2, 7, 9, 100, 1024};
    for (int t = 0; t < 2; t++)
        for (size_t k = 0; k < sizeof chunks / sizeof chunks[0]; k++)
            for (int g = 0; g < FD_COUNT; g++)
                run_case(dtypes[t], g, 0, 3001, 0, chunks[k]);
}

static void test_damage(void) {
    const fz_dtype dtypes[] = {FZ_F32, FZ_F64};
    const struct {
        int gen, shared;
        size_t n;
        int32_t chunk;
    } cases[] = {
        {FD_DECIMAL_WALK, 0, 3, 0},    {FD_DECIMAL_WALK, 0, 90, 33},
        {FD_DEC_SPECIAL, 0, 300, 0},   {FD_LONG, 0, 60, 0},
        {FD_PLATEAU, 0, 1100, 0},      {FD_DECIMAL_PLACES, 0, 40, 0},
        {TU_GEN_PATCHWORK, 1, 80, 20}, {TU_GEN_RANDOM_BITS, 1, 9, 0},
    };
    const size_t ncases = quick ? 3 : sizeof cases / sizeof cases[0];
    for (int t = 0; t < 2; t++)
        for (size_t k = 0; k < ncases; k++)
            for (int f = 0; f < 2; f++) {
                tu_context("gpu falcon damage [%s] %s %s n=%zu flags=%d",
                           kernel_name, tu_dtype_name(dtypes[t]),
                           cases[k].shared ? tu_gen_name((tu_gen)cases[k].gen)
                                           : fd_gen_name((fd_gen)cases[k].gen),
                           cases[k].n, f);
                gpu_case c = make_case(dtypes[t], cases[k].gen, cases[k].shared,
                                       cases[k].n, f ? FZ_FLAG_NO_CHECKSUM : 0,
                                       cases[k].chunk);
                check_damage(&c, c.cpu_size / (quick ? 40 : 150) + 1);
                if (k == 1)
                    check_device_api(&c, 1);
                free_case(&c);
                cases_run++;
            }
}

/* 5. ~200 MB (f64) of decimal data with specials, and of late_miss
 * (several chunks per warp, so that guessed scales are tried on whole
 * chunks and miss rows into them): 25000+ chunks. */
static void test_large(void) {
    if (quick)
        return;
    const size_t n = 25 * 1000 * 1025 + 17;
    const int gens[] = {FD_DEC_SPECIAL, FD_LATE_MISS};
    for (int t = 0; t < 2; t++)
        for (int g = 0; g < 2; g++) {
            const fz_dtype dt = t ? FZ_F64 : FZ_F32;
            tu_context("gpu falcon large [%s] %s %s", kernel_name,
                       tu_dtype_name(dt), fd_gen_name((fd_gen)gens[g]));
            gpu_case c = make_case(dt, gens[g], 0, n, 0, 0);
            check_host_api(&c);
            check_device_api(&c, 0);
            free_case(&c);
            cases_run++;
        }
}

int main(int argc, char **argv) {
    if (fz_gpu_count() == 0) {
        printf("SKIP: no CUDA GPU available (fz_gpu_count() == 0)\n");
        return 77;
    }
    const char *kernels[] = {"warp", "reference"};
    quick = argc > 2 && strcmp(argv[2], "quick") == 0;
    for (int k = 0; k < 2; k++) {
        if (argc > 1 && strcmp(argv[1], kernels[k]) != 0)
            continue;
        select_kernel(kernels[k]);
        test_roundtrips();
        test_damage();
        test_large();
        printf("test_gpu_falcon [%s]: %u cases passed\n", kernels[k],
               cases_run);
    }
    return 0;
}
