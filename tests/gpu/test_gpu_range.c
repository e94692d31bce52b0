/* Random access on the device (fz_device_decompress_range): for every codec
 * and mode, values [first, first + count) of a device stream decode to the
 * bytes the CPU's fz_decompress_range gives, at chunk boundaries and at
 * random, never writing past count values; a damaged stream is accepted or
 * refused exactly as the CPU does it for the same range (a damaged chunk
 * fails the ranges that touch it, a damaged header or table every range);
 * bad arguments are refused before anything runs. Run all groups, or one:
 * test_gpu_range GROUP. Exits 77 (skipped) without a GPU. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/format/fz_container.h"
#include "../range_cases.h"
#include "gpu_test_util.h"

static unsigned cases_run;

#define GUARD_BYTES 64
#define GUARD_BYTE 0xA5

/* A stream on the host and on the device, with what it was made from. */
typedef struct dev_stream {
    fz_params p;
    uint8_t *bytes; /* host copy (the CPU reference decodes it) */
    size_t size;
    void *d_bytes;
    uint64_t n, chunk_values;
    size_t esize;
} dev_stream;

static dev_stream make_stream(const fz_params *p, tu_gen gen, uint64_t n) {
    dev_stream s;
    s.p = *p;
    s.n = n;
    s.esize = tu_dtype_size(p->dtype);
    void *src = tu_xmalloc(n * s.esize);
    tu_fill(gen, p->dtype, src, n, 5 + n);
    s.bytes = tu_compress(p, src, &s.size);
    free(src);
    fz_info info;
    CHECK_OK(fz_inspect(s.bytes, s.size, &info));
    s.chunk_values = info.chunk_bytes / s.esize;
    s.d_bytes = device_alloc(s.size);
    CUDA_CHECK(cudaMemcpy(s.d_bytes, s.bytes, s.size, cudaMemcpyHostToDevice));
    return s;
}

static void free_stream(dev_stream *s) {
    free(s->bytes);
    CUDA_CHECK(cudaFree(s->d_bytes));
}

/* Make the device copy equal the host bytes again (after damage). */
static void upload(const dev_stream *s) {
    CUDA_CHECK(
        cudaMemcpy(s->d_bytes, s->bytes, s->size, cudaMemcpyHostToDevice));
}

/* [first, first + count) on the device into a guarded buffer at an odd
 * offset (d_dst needs no alignment); *out gets the values on success. */
static fz_status device_range(const dev_stream *s, uint64_t first,
                              uint64_t count, uint8_t *out) {
    const size_t bytes = (size_t)(count * s->esize);
    size_t scratch_bytes = 0;
    CHECK_OK(fz_device_range_scratch_size(&s->p, first, count, &scratch_bytes));
    void *d_scratch = device_alloc(scratch_bytes);
    uint8_t *d_buf = (uint8_t *)device_alloc(bytes + GUARD_BYTES + 1);
    CUDA_CHECK(cudaMemset(d_buf, GUARD_BYTE, bytes + GUARD_BYTES + 1));
    fz_device_result *d_result =
        (fz_device_result *)device_alloc(sizeof(fz_device_result));
    fz_device_result r;
    memset(&r, 0xFF, sizeof r);
    fz_status st = fz_device_decompress_range(
        &s->p, s->d_bytes, s->size, first, count, d_buf + 1, bytes, d_scratch,
        scratch_bytes, NULL, d_result, &r, NULL);
    CUDA_CHECK(cudaDeviceSynchronize());
    uint8_t *back = (uint8_t *)tu_xmalloc(bytes + GUARD_BYTES + 1);
    CUDA_CHECK(cudaMemcpy(back, d_buf, bytes + GUARD_BYTES + 1,
                          cudaMemcpyDeviceToHost));
    CHECK(back[0] == GUARD_BYTE);
    for (size_t i = 0; i < GUARD_BYTES; i++)
        CHECK(back[1 + bytes + i] == GUARD_BYTE);
    if (st == FZ_OK) { /* queued: the device's verdict */
        st = (fz_status)r.status;
        CHECK_EQ_U64(r.size, st == FZ_OK ? bytes : 0);
    }
    if (st == FZ_OK && out)
        memcpy(out, back + 1, bytes);
    free(back);
    CUDA_CHECK(cudaFree(d_scratch));
    CUDA_CHECK(cudaFree(d_buf));
    CUDA_CHECK(cudaFree(d_result));
    return st;
}

/* The device and the CPU on the same range of the host bytes: both accept
 * with the same values, or both refuse. Returns the device's status. */
static fz_status range_agrees(const dev_stream *s, uint64_t first,
                              uint64_t count) {
    const size_t bytes = (size_t)(count * s->esize);
    uint8_t *want = (uint8_t *)tu_xmalloc(bytes);
    uint8_t *got = (uint8_t *)tu_xmalloc(bytes);
    fz_decode_options o = tu_decode_opts(2, 0);
    const fz_status cpu =
        fz_decompress_range(s->bytes, s->size, first, count, want, bytes, &o);
    const fz_status gpu = device_range(s, first, count, got);
    CHECK(gpu != FZ_ERR_CUDA);
    CHECK((gpu == FZ_OK) == (cpu == FZ_OK));
    if (gpu == FZ_OK && cpu == FZ_OK)
        CHECK(memcmp(got, want, bytes) == 0);
    free(want);
    free(got);
    cases_run++;
    return gpu;
}

/* One of the shared ranges (range_cases.h): the device must decode it
 * as the CPU does. */
static void visit_range(void *ctx, uint64_t first, uint64_t count, int k) {
    (void)k;
    CHECK_OK(range_agrees((const dev_stream *)ctx, first, count));
}

static void check_ranges(const dev_stream *s, uint64_t seed) {
    rc_for_each_range(s->n, s->chunk_values, seed, 30, visit_range, (void *)s);
}

/* 1: the shared cases (range_cases.h). */
static void group_codecs(void) {
    for (size_t k = 0; k < RC_CASE_COUNT; k++) {
        const rc_case c = rc_case_at(k);
        tu_context("device range %s", c.name);
        dev_stream s = make_stream(&c.p, c.gen, c.n);
        CHECK(s.chunk_values < c.n); /* more than one chunk */
        check_ranges(&s, 21 + k);
        free_stream(&s);
    }
}

/* 2: bad arguments are refused on the host, nothing queued. */
static void group_invalid(void) {
    tu_context("device range invalid");
    fz_params p = tu_params(FZ_F32, 10000, 0);
    dev_stream s = make_stream(&p, TU_GEN_WAVE, 10000);
    size_t need = 0;
    CHECK_OK(fz_device_range_scratch_size(&p, 5, 3, &need));
    CHECK_STATUS(fz_device_range_scratch_size(&p, 9999, 2, &need),
                 FZ_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(fz_device_range_scratch_size(&p, 5, 3, NULL),
                 FZ_ERR_INVALID_ARGUMENT);
    void *d_scratch = device_alloc(need);
    void *d_dst = device_alloc(64);
    fz_device_result *d_result =
        (fz_device_result *)device_alloc(sizeof(fz_device_result));
#define RANGE(first, count, dst, cap, scratch_bytes)                           \
    fz_device_decompress_range(&p, s.d_bytes, s.size, first, count, dst, cap,  \
                               d_scratch, scratch_bytes, NULL, d_result, NULL, \
                               NULL)
    CHECK_STATUS(RANGE(10000, 1, d_dst, 64, need), FZ_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(RANGE(9999, 2, d_dst, 64, need), FZ_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(RANGE(5, UINT64_MAX, d_dst, 64, need),
                 FZ_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(RANGE(5, 3, d_dst, 11, need), FZ_ERR_DST_TOO_SMALL);
    CHECK_STATUS(RANGE(5, 3, NULL, 0, need), FZ_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(RANGE(5, 3, d_dst, 64, need - 1), FZ_ERR_SCRATCH_TOO_SMALL);
    CHECK_STATUS(fz_device_decompress_range(&p, s.d_bytes, s.size, 5, 3, d_dst,
                                            64, d_scratch, need, NULL, NULL,
                                            NULL, NULL),
                 FZ_ERR_INVALID_ARGUMENT);
    fz_params bad = p;
    bad.codec = FZ_CODEC_AUTO;
    CHECK_STATUS(fz_device_range_scratch_size(&bad, 5, 3, &need),
                 FZ_ERR_UNSUPPORTED);
#undef RANGE
    cases_run += 10;
    /* the device's verdict on a stream that is not of these parameters */
    fz_params other = tu_params(FZ_F32, 10001, 0);
    size_t other_need = 0;
    CHECK_OK(fz_device_range_scratch_size(&other, 5, 3, &other_need));
    void *d_other = device_alloc(other_need);
    fz_device_result r;
    CHECK_OK(fz_device_decompress_range(&other, s.d_bytes, s.size, 5, 3, d_dst,
                                        64, d_other, other_need, NULL, d_result,
                                        &r, NULL));
    CUDA_CHECK(cudaDeviceSynchronize());
    CHECK_STATUS((fz_status)r.status, FZ_ERR_PARAMS_MISMATCH);
    CHECK_EQ_U64(r.size, 0);
    cases_run++;
    CUDA_CHECK(cudaFree(d_other));
    CUDA_CHECK(cudaFree(d_scratch));
    CUDA_CHECK(cudaFree(d_dst));
    CUDA_CHECK(cudaFree(d_result));
    free_stream(&s);
}

/* 3: one byte of chunk 3's payload flipped: ranges that touch chunk 3 fail,
 * the others decode exactly; a flipped table byte fails every range; then
 * single bytes flipped all over the stream, each range judged as the CPU
 * judges it. */
static void group_damage(void) {
    const fz_dtype dtypes[] = {FZ_F32, FZ_F64};
    for (int t = 0; t < 2; t++) {
        tu_context("device range damage %s", tu_dtype_name(dtypes[t]));
        const uint64_t cv = tu_chunk_values(dtypes[t]), n = 6 * cv;
        fz_params p = tu_params(dtypes[t], n, 0);
        dev_stream s = make_stream(&p, TU_GEN_SMOOTH, n);
        fz_header h;
        CHECK(fz_header_parse(s.bytes, s.size, &h) == FZS_OK);
        const uint32_t entry = fz_table_entry_bytes(h.flags);
        uint64_t at = fz_payload_offset(&h);
        for (uint64_t c = 0; c < 3; c++)
            at += fz_load32(s.bytes + FZ_HDR_BYTES + c * entry);
        const size_t flip = (size_t)at + 40;
        s.bytes[flip] ^= 0x10;
        upload(&s);
        CHECK_OK(range_agrees(&s, 0, 3 * cv));
        CHECK_OK(range_agrees(&s, 4 * cv, 2 * cv));
        CHECK(range_agrees(&s, 3 * cv, 1) != FZ_OK);
        CHECK(range_agrees(&s, 3 * cv - 1, 2) != FZ_OK);
        CHECK(range_agrees(&s, 0, n) != FZ_OK);
        s.bytes[flip] ^= 0x10;
        s.bytes[FZ_HDR_BYTES + 5 * entry] ^= 0x01; /* chunk 5's size */
        upload(&s);
        CHECK_STATUS(range_agrees(&s, 0, 1), FZ_ERR_TABLE_CHECKSUM);
        s.bytes[FZ_HDR_BYTES + 5 * entry] ^= 0x01;
        tu_rng r = tu_rng_make(1234 + (uint64_t)t);
        for (int i = 0; i < 60; i++) {
            const size_t k = (size_t)tu_below(&r, s.size);
            const uint8_t mask = (uint8_t)(1u << tu_below(&r, 8));
            s.bytes[k] ^= mask;
            upload(&s);
            const uint64_t f = tu_below(&r, n);
            range_agrees(&s, f,
                         1 + tu_below(&r, n - f < 2 * cv ? n - f : 2 * cv));
            s.bytes[k] ^= mask;
        }
        upload(&s);
        free_stream(&s);
    }
}

static const tu_group groups[] = {
    {"codecs", group_codecs},
    {"invalid", group_invalid},
    {"damage", group_damage},
};

int main(int argc, char **argv) {
    if (fz_gpu_count() == 0) {
        printf("SKIP: no CUDA GPU available (fz_gpu_count() == 0)\n");
        return 77;
    }
    return tu_run_groups(argc, argv, "test_gpu_range", groups,
                         sizeof groups / sizeof groups[0], &cases_run, NULL);
}
