/* GFC on the GPU, through the public API (plus the CUDA runtime for device
 * buffers and internal headers to forge streams):
 *  1. GPU streams are byte-identical to CPU streams: every generator, odd
 *     sizes, dimensionality 1..32, chunk counts 1..10000, a 64 MiB input;
 *  2. cross decoding: GPU streams on the CPU, CPU streams on the GPU, with
 *     and without checksum verification; the device API likewise;
 *  3. damaged streams (every truncation and a byte-flip sweep of small
 *     streams, hostile tables) and non-canonical chunks are rejected on
 *     the GPU, without reading or writing out of bounds.
 * Exits 77 (ctest: skipped) when no CUDA GPU is usable. */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../gfc_test_ref.h"
#include "gpu_test_util.h"
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

/* ------------------------------------------------------------ device API */
/* Compress on the device and decode there with the given params (the
 * stream's own, or the ones fz_inspect reports); compare with the CPU. On
 * the legacy default stream, as an application without streams calls it. */
static void check_device_api(const fz_params *p, const void *src, size_t bytes,
                             const uint8_t *cpu, size_t cpu_size) {
    device_buffers d = device_setup(p, src, bytes);
    check_default_stream_compress(p, &d, cpu, cpu_size);
    fz_info info;
    CHECK_OK(fz_inspect(cpu, cpu_size, &info)); /* the device's stream too */
    const fz_params *decode_params[2] = {p, &info.params};
    for (int k = 0; k < 2; k++) {
        CUDA_CHECK(cudaMemset(d.out, 0xCD, bytes ? bytes : 16));
        fz_device_result res =
            default_stream_decompress(decode_params[k], &d, cpu_size, bytes);
        CHECK_OK((fz_status)res.status);
        CHECK_EQ_U64(res.size, bytes);
        check_device_output(&d, src, bytes);
    }
    /* another dimensionality or chunk size than the stream's */
    fz_params other = *p;
    other.codec_options[0] = (int32_t)info.params.codec_options[0] % 32 + 1;
    size_t other_scratch = 0;
    CHECK_OK(fz_device_scratch_size(&other, &other_scratch));
    CHECK_EQ_U64(other_scratch, d.scratch_bytes);
    fz_device_result res =
        default_stream_decompress(&other, &d, cpu_size, bytes);
    CHECK_STATUS((fz_status)res.status, FZ_ERR_CORRUPT_HEADER);
    device_teardown(&d);
}

/* CPU stream == GPU stream, and every cross decoding. */
static void run_case(const fz_params *p, const void *src, int device_api) {
    uint64_t values = 0, bytes = 0;
    CHECK_OK(fz_params_count(p, &values, &bytes));
    size_t cpu_size = 0;
    uint8_t *cpu = tu_compress(p, src, &cpu_size);
    fz_params g = *p;
    g.exec = FZ_EXEC_GPU;
    size_t bound = 0, size = 0;
    CHECK_OK(fz_compress_bound(&g, &bound));
    tu_buf dst = tu_buf_alloc(bound);
    CHECK_OK(fz_compress(&g, src, (size_t)bytes, dst.data, bound, &size));
    CHECK(tu_guard_intact(&dst));
    CHECK_EQ_U64(size, cpu_size);
    CHECK(memcmp(dst.data, cpu, size) == 0);
    CHECK_OK(decode_on(FZ_EXEC_GPU, dst.data, size, src, (size_t)bytes, 0));
    CHECK_OK(decode_on(FZ_EXEC_GPU, dst.data, size, src, (size_t)bytes,
                       FZ_DECODE_SKIP_CHECKSUM));
    CHECK_OK(decode_on(FZ_EXEC_CPU, dst.data, size, src, (size_t)bytes, 0));
    CHECK_OK(decode_on(FZ_EXEC_GPU, cpu, cpu_size, src, (size_t)bytes, 0));
    if (device_api)
        check_device_api(p, src, (size_t)bytes, cpu, cpu_size);
    tu_buf_free(&dst);
    free(cpu);
    cases_run++;
}

static void test_generators(void) {
    const fz_dtype dtypes[] = {FZ_F32, FZ_F64};
    const size_t sizes[] = {0,   1,    2,    5,    31,   32,     33,
                            100, 2047, 2048, 2049, 5000, 100003, 400001};
    const struct {
        int32_t dim, cv;
    } opts[] = {{0, 0}, {3, 0}, {32, 64}, {1, 32}, {7, 1024}};
    for (int t = 0; t < 2; t++) {
        const size_t es = tu_dtype_size(dtypes[t]);
        for (int gen = 0; gen < TU_GEN_COUNT; gen++)
            for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
                for (size_t o = 0; o < sizeof opts / sizeof opts[0]; o++) {
                    if (sizes[i] > 5000 && o > 1 && o != (size_t)gen % 5)
                        continue;
                    const uint32_t flags =
                        (i + o) % 2 ? FZ_FLAG_NO_CHECKSUM : 0;
                    tu_context("gpu gfc %s %s n=%zu dim=%d chunk=%d flags=%u",
                               tu_dtype_name(dtypes[t]),
                               tu_gen_name((tu_gen)gen), sizes[i], opts[o].dim,
                               opts[o].cv, flags);
                    void *src = tu_xmalloc(sizes[i] * es);
                    tu_fill((tu_gen)gen, dtypes[t], src, sizes[i], 31 + i);
                    fz_params p = gfc_params(dtypes[t], sizes[i], flags,
                                             opts[o].dim, opts[o].cv);
                    run_case(&p, src, o == 0 || i % 3 == 0);
                    free(src);
                }
    }
}

static void test_dims(void) {
    const fz_dtype dtypes[] = {FZ_F32, FZ_F64};
    const size_t n = 20011;
    for (int t = 0; t < 2; t++) {
        void *src = tu_xmalloc(n * tu_dtype_size(dtypes[t]));
        for (int32_t dim = 1; dim <= 32; dim++) {
            tu_context("gpu gfc dims %s dim=%d", tu_dtype_name(dtypes[t]), dim);
            gfc_fill_interleaved(dtypes[t], src, n, (uint32_t)dim,
                                 (uint64_t)dim);
            fz_params p = gfc_params(dtypes[t], n, 0, dim, dim % 2 ? 0 : 512);
            run_case(&p, src, dim % 8 == 0);
        }
        free(src);
    }
}

/* Chunk counts 1..64, a sweep up to 10000, and one chunk of the largest
 * size (a single warp does all the work). */
static void test_chunk_counts(void) {
    const fz_dtype dtypes[] = {FZ_F32, FZ_F64};
    const size_t max_n = 10000 * 64;
    for (int t = 0; t < 2; t++) {
        void *src = tu_xmalloc(max_n * tu_dtype_size(dtypes[t]));
        tu_fill(TU_GEN_MIXED, dtypes[t], src, max_n, 7);
        for (size_t count = 1; count <= 10000;
             count = count < 64 ? count + 1 : count * 3 / 2) {
            const int32_t cv = (int32_t)(count < 64 ? 32 * (1 + count % 64)
                                                    : 32 + 32 * (count % 2));
            const size_t n = (size_t)cv * (count - 1) + 1 + count % (size_t)cv;
            tu_context("gpu gfc chunks %s count=%zu chunk=%d",
                       tu_dtype_name(dtypes[t]), count, cv);
            fz_params p = gfc_params(dtypes[t], n, 0, (int32_t)(count % 4), cv);
            run_case(&p, src, count % 10 == 1);
            fz_info info;
            size_t size = 0;
            uint8_t *s = tu_compress(&p, src, &size);
            CHECK_OK(fz_inspect(s, size, &info));
            CHECK_EQ_U64(info.chunk_count, count);
            free(s);
        }
        const size_t exact[] = {9999, 10000};
        for (int k = 0; k < 2; k++) {
            tu_context("gpu gfc chunks %s count=%zu", tu_dtype_name(dtypes[t]),
                       exact[k]);
            fz_params p = gfc_params(dtypes[t], 64 * exact[k] - 5, 0, 2, 64);
            run_case(&p, src, 1);
        }
        tu_context("gpu gfc one chunk %s", tu_dtype_name(dtypes[t]));
        fz_params p = gfc_params(dtypes[t], max_n, 0, 1, 1 << 22);
        run_case(&p, src, 1);
        free(src);
    }
}

/* 64 MiB, default chunks (about 4096): the look-back over many warps. */
static void test_large(void) {
    const fz_dtype dtypes[] = {FZ_F32, FZ_F64};
    for (int t = 0; t < 2; t++) {
        const size_t es = tu_dtype_size(dtypes[t]);
        const size_t n = ((size_t)64 << 20) / es + 3;
        void *src = tu_xmalloc(n * es);
        tu_fill(TU_GEN_PATCHWORK, dtypes[t], src, n, 2);
        tu_context("gpu gfc large %s", tu_dtype_name(dtypes[t]));
        fz_params p = gfc_params(dtypes[t], n, 0, 0, 0);
        run_case(&p, src, 1);
        free(src);
    }
}

/* ------------------------------------------------------------ damage */
static void corruption_case(fz_dtype dtype, tu_gen g, size_t n, int32_t dim,
                            int32_t cv) {
    tu_context("gpu gfc corruption %s %s n=%zu", tu_dtype_name(dtype),
               tu_gen_name(g), n);
    const size_t bytes = n * tu_dtype_size(dtype);
    void *src = tu_xmalloc(bytes);
    tu_fill(g, dtype, src, n, 5 + n);
    fz_params p = gfc_params(dtype, n, 0, dim, cv);
    size_t size = 0;
    uint8_t *s = tu_compress(&p, src, &size);
    for (size_t len = 0; len < size; len += len < 300 ? 1 : 7) {
        uint8_t *part = (uint8_t *)tu_xmalloc(len);
        memcpy(part, s, len);
        CHECK_ERROR(decode_on(FZ_EXEC_GPU, part, len, src, bytes, 0));
        free(part);
    }
    const uint8_t masks[] = {0x01, 0x80, 0xFF, 0x10};
    const size_t step = size / 1500 + 1;
    for (size_t pos = 0; pos < size; pos += step)
        for (size_t m = 0; m < sizeof masks; m++) {
            s[pos] ^= masks[m];
            /* decode_on compares: never accepted with different data */
            CHECK_ERROR(decode_on(FZ_EXEC_GPU, s, size, src, bytes, 0));
            s[pos] ^= masks[m];
        }
    free(s);
    free(src);
    cases_run++;
}

/* Chunk sizes moved between two chunks: the table hash and the total
 * stay valid, the payload offsets are wrong (and misaligned). */
static void test_hostile_table(void) {
    const size_t n = 200;
    double v[200];
    tu_fill(TU_GEN_SMOOTH, FZ_F64, v, n, 3);
    fz_params p = gfc_params(FZ_F64, n, 0, 0, 96);
    size_t size = 0;
    uint8_t *s = tu_compress(&p, v, &size);
    fz_header h;
    memset(&h, 0, sizeof h);
    CHECK_EQ_U64(fz_header_parse(s, size, &h), FZS_OK);
    CHECK(h.chunk_count == 3);
    const int32_t shifts[] = {-1, 1, -8, 8, -3};
    for (size_t k = 0; k < sizeof shifts / sizeof shifts[0]; k++) {
        uint8_t *copy = (uint8_t *)tu_xmalloc(size);
        memcpy(copy, s, size);
        const uint32_t a = fz_load32(copy + FZ_HDR_BYTES);
        const uint32_t b = fz_load32(copy + FZ_HDR_BYTES + 8);
        fz_store32(copy + FZ_HDR_BYTES, a + (uint32_t)shifts[k]);
        fz_store32(copy + FZ_HDR_BYTES + 8, b - (uint32_t)shifts[k]);
        h.table_hash = fz_table_hash(copy + FZ_HDR_BYTES, fz_table_bytes(&h));
        fz_header_write(&h, copy);
        tu_context("gpu gfc hostile table, shift %d", shifts[k]);
        fz_status cpu_st = decode_on(FZ_EXEC_CPU, copy, size, v, sizeof v, 0);
        fz_status gpu_st = decode_on(FZ_EXEC_GPU, copy, size, v, sizeof v, 0);
        CHECK_ERROR(cpu_st);
        CHECK_ERROR(gpu_st);
        free(copy);
        cases_run++;
    }
    free(s);
}

static void test_forgeries(void) {
    gfc_forgery f[32];
    const size_t count = gfc_forgeries(f);
    for (size_t i = 0; i < count; i++) {
        tu_context("gpu gfc forgery: %s", f[i].what);
        const size_t bytes = f[i].n * tu_dtype_size(f[i].dtype);
        uint8_t data[320];
        gfc_forgery_data(&f[i], data);
        fz_params p = gfc_params(f[i].dtype, f[i].n, 0, 0, 0);
        size_t size = 0, fsize = 0;
        uint8_t *s = tu_compress(&p, data, &size);
        uint8_t *forged =
            gfc_splice_payload(s, size, f[i].payload, f[i].psize, &fsize);
        const int canonical = strncmp(f[i].what, "canonical", 9) == 0;
        const fz_status want = canonical ? FZ_OK : FZ_ERR_CORRUPT_CHUNK;
        CHECK_STATUS(decode_on(FZ_EXEC_GPU, forged, fsize, data, bytes, 0),
                     want);
        CHECK_STATUS(decode_on(FZ_EXEC_GPU, forged, fsize, data, bytes,
                               FZ_DECODE_SKIP_CHECKSUM),
                     want);
        free(forged);
        free(s);
        cases_run++;
    }
}

static void test_damage(void) {
    const fz_dtype dtypes[] = {FZ_F32, FZ_F64};
    for (int t = 0; t < 2; t++) {
        corruption_case(dtypes[t], TU_GEN_SMOOTH, 1, 0, 0);
        corruption_case(dtypes[t], TU_GEN_SMOOTH, 33, 0, 0);
        corruption_case(dtypes[t], TU_GEN_WAVE, 300, 3, 64);
        corruption_case(dtypes[t], TU_GEN_PATCHWORK, 5000, 1, 512);
        corruption_case(dtypes[t], TU_GEN_SPECIAL, 700, 32, 0);
    }
    test_hostile_table();
    test_forgeries();
}

int main(void) {
    if (fz_gpu_count() == 0) {
        printf("SKIP: no CUDA GPU available (fz_gpu_count() == 0)\n");
        return 77;
    }
    test_generators();
    test_dims();
    test_chunk_counts();
    test_large();
    test_damage();
    printf("test_gpu_gfc: %u cases passed\n", cases_run);
    return 0;
}
