/* Shared GPU machinery: per-call scratch layout, kernel arguments, the
 * decoupled look-back that turns chunk sizes into output offsets in one
 * pass, warp reductions, and stream-header validation on the device. */
#ifndef FZ_GPU_CUH
#define FZ_GPU_CUH

#include <cuda_runtime.h>

#include "../format/fz_container.h"

/* Head of the caller's scratch, zeroed (cudaMemsetAsync) before each call;
 * followed by one 64-bit look-back word per chunk. */
struct fz_gpu_scratch {
    unsigned int ticket;    /* next chunk index to hand out */
    unsigned int table_sum; /* partial hash of the chunk table */
    int status;             /* first error seen (FZS_*), 0 = none */
    unsigned int unused;
    unsigned long long payload_total; /* inclusive size after last chunk */
    unsigned long long unused2;
};
#define FZ_GPU_SCRATCH_HEAD 32u
#define FZ_GPU_SCRATCH_ALIGN 256u

/* Everything a codec kernel needs, passed by value. */
struct fz_gpu_args {
    uint8_t header[FZ_HDR_BYTES]; /* compress: header template */
    fz_header expect;             /* the header implied by the params */
    const uint8_t *src;
    uint8_t *dst;
    uint64_t src_size;
    uint64_t dst_capacity;
    uint64_t payload_off;
    uint32_t verify; /* decode: check per-chunk data checksums */
    fz_gpu_scratch *scratch;
    unsigned long long *lookback;
};

static inline uint64_t fz_gpu_scratch_bytes(uint64_t chunk_count) {
    return fz_align_up(FZ_GPU_SCRATCH_HEAD + 8 * chunk_count,
                       FZ_GPU_SCRATCH_ALIGN);
}

#define FZ_FULL_MASK 0xFFFFFFFFu
#define FZ_LB_AGGREGATE (1ull << 62)
#define FZ_LB_INCLUSIVE (2ull << 62)
#define FZ_LB_VALUE ((1ull << 62) - 1)

static __device__ __forceinline__ void fz_gpu_fail(fz_gpu_scratch *s,
                                                   int status) {
    atomicCAS(&s->status, 0, status);
}

static __device__ __forceinline__ unsigned long long
fz_ld_volatile(const unsigned long long *p) {
    return *(const volatile unsigned long long *)p;
}
static __device__ __forceinline__ void fz_st_volatile(unsigned long long *p,
                                                      unsigned long long v) {
    *(volatile unsigned long long *)p = v;
}

static __device__ __forceinline__ unsigned long long
fz_warp_sum64(unsigned long long v) {
    for (int off = 16; off > 0; off >>= 1)
        v += __shfl_down_sync(FZ_FULL_MASK, v, off);
    return __shfl_sync(FZ_FULL_MASK, v, 0);
}

/* Decoupled look-back (Merrill & Garland), one warp: publish this chunk's
 * size, sum predecessors' published sizes 32 at a time until one carries
 * an inclusive prefix, publish the inclusive prefix, return the exclusive
 * one (on every lane). Chunk indices come from an atomic ticket, so the
 * chunk we wait on always belongs to a running block: no deadlock. Flag
 * and value share one 64-bit word, so a single store publishes both. */
static __device__ unsigned long long fz_lookback(unsigned long long *state,
                                                 unsigned long long chunk,
                                                 unsigned long long size) {
    const int lane = threadIdx.x & 31;
    if (chunk == 0) {
        if (lane == 0)
            fz_st_volatile(&state[0], FZ_LB_INCLUSIVE | size);
        return 0;
    }
    if (lane == 0)
        fz_st_volatile(&state[chunk], FZ_LB_AGGREGATE | size);
    unsigned long long exclusive = 0;
    long long idx = (long long)chunk - 1 - lane; /* lane 0: nearest */
    for (;;) {
        unsigned long long s;
        for (;;) {
            s = idx < 0 ? FZ_LB_INCLUSIVE : fz_ld_volatile(&state[idx]);
            if (__all_sync(FZ_FULL_MASK, (s >> 62) != 0))
                break;
            __nanosleep(32);
        }
        unsigned inclusive = __ballot_sync(FZ_FULL_MASK, (s >> 62) == 2);
        int stop = inclusive ? __ffs(inclusive) - 1 : 31;
        exclusive += fz_warp_sum64(lane <= stop ? (s & FZ_LB_VALUE) : 0);
        if (inclusive)
            break;
        idx -= 32;
    }
    if (lane == 0)
        fz_st_volatile(&state[chunk], FZ_LB_INCLUSIVE | (exclusive + size));
    return exclusive;
}

/* Device-side validation of a stream before decoding: the same rules the
 * CPU applies to the header, plus the match with the caller's params. */
static __device__ int fz_gpu_check_stream(const fz_gpu_args &a,
                                          fz_header *h) {
    int s = fz_header_parse(a.src, a.src_size, h);
    if (s != FZS_OK)
        return s;
    const fz_header &e = a.expect;
    if (h->codec != e.codec)
        return FZS_PARAMS_MISMATCH;
    if (h->codec_version != e.codec_version || h->chunk_bytes != e.chunk_bytes)
        return FZS_CORRUPT_HEADER;
    for (int k = 0; k < 4; k++)
        if (h->codec_params[k] != e.codec_params[k])
            return FZS_CORRUPT_HEADER;
    if (h->dtype != e.dtype || h->ndims != e.ndims || h->mode != e.mode ||
        h->original_bytes != e.original_bytes)
        return FZS_PARAMS_MISMATCH;
    for (int d = 0; d < 4; d++)
        if (h->dims[d] != e.dims[d])
            return FZS_PARAMS_MISMATCH;
    const uint64_t table_end = FZ_HDR_BYTES + fz_table_bytes(h);
    const uint64_t payload_off = fz_payload_offset(h);
    if (a.src_size < payload_off)
        return FZS_TRUNCATED;
    for (uint64_t i = table_end; i < payload_off; i++)
        if (a.src[i] != 0)
            return FZS_CORRUPT_HEADER;
    if (a.src_size < payload_off + h->payload_bytes)
        return FZS_TRUNCATED;
    if (a.dst_capacity < h->original_bytes)
        return FZS_DST_TOO_SMALL;
    return FZS_OK;
}

/* Codec entry points (one .cu per codec). grid_limit: resident blocks. */
cudaError_t fz_sleek_gpu_compress(const fz_gpu_args *a, int sm_count,
                                  cudaStream_t stream);
cudaError_t fz_sleek_gpu_decompress(const fz_gpu_args *a, int sm_count,
                                    cudaStream_t stream);

#endif /* FZ_GPU_CUH */
