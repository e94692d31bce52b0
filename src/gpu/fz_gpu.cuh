/* Shared GPU machinery: per-call scratch layout, kernel arguments, the
 * decoupled look-back that turns chunk sizes into output offsets in one
 * pass, warp reductions, and stream-header validation on the device. */
#ifndef FZ_GPU_CUH
#define FZ_GPU_CUH

#include <cuda_runtime.h>
#include <string.h>

#include "../format/fz_container.h"

/* Head of the caller's scratch, zeroed (cudaMemsetAsync) before each call.
 * Compression follows it with one 64-bit look-back word per chunk;
 * decompression with chunk_count + 1 chunk offsets and the scan's temp. */
struct fz_gpu_scratch {
    unsigned int ticket;    /* next chunk index to hand out */
    unsigned int table_sum; /* partial hash of the chunk table */
    int status;             /* first error seen (FZS_*), 0 = none */
    unsigned int redo;      /* REL speculation missed: compress again */
    unsigned long long payload_total; /* compress: sum of chunk sizes */
    /* lossy compression: finite-value range (REL) and the resolved bound */
    double range_lo, range_hi;
    unsigned long long bound_eff_bits;
    int bound_lossless, bound_k;
    /* REL range seen by a kernel, as order-preserving keys (0: none):
     * the largest key and the largest complemented key */
    unsigned long long key_hi, key_lo_inv;
    unsigned int exact_pass;  /* REL: the tracked range met an infinity */
    unsigned int blocks_done; /* a kernel's finished blocks (last-block work) */
};
#define FZ_GPU_SCRATCH_HEAD 128u
static_assert(sizeof(fz_gpu_scratch) <= FZ_GPU_SCRATCH_HEAD,
              "scratch head overlaps the per-chunk words");
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
    uint32_t verify;         /* decode: check per-chunk data checksums */
    uint32_t oldest_version; /* decode: the codec's oldest readable version */
    fz_gpu_scratch *scratch;
    unsigned long long *lookback; /* compress: per-chunk look-back state */
    unsigned long long *offsets;  /* decode: chunk start offsets (n + 1) */
    void *temp;                   /* CUB temp storage */
    uint64_t temp_bytes;
};

/* CUB temp bytes of the offsets scan (chunk_offsets.cu). */
size_t fz_gpu_offsets_temp_bytes(uint64_t chunk_count);
cudaError_t fz_gpu_chunk_offsets(const fz_gpu_args *a, void *temp,
                                 size_t temp_bytes, cudaStream_t stream);
/* Min and max of the finite input values into scratch->range_lo/hi, using
 * the temp region (value_range.cu). */
size_t fz_gpu_range_temp_bytes(const fz_header *h);
cudaError_t fz_gpu_value_range(const fz_gpu_args *a, cudaStream_t stream);
/* The same for n values of dtype at src: lo_hi[0] = min, lo_hi[1] = max
 * (DBL_MAX, -DBL_MAX when none is finite), with temp_bytes of temp. */
size_t fz_gpu_values_range_temp_bytes(uint32_t dtype, uint64_t n);
cudaError_t fz_gpu_values_range(uint32_t dtype, const void *src, uint64_t n,
                                double *lo_hi, void *temp, size_t temp_bytes,
                                cudaStream_t stream);

/* Bytes before the decode scan's temp storage. */
static inline uint64_t fz_gpu_offsets_end(uint64_t chunk_count) {
    return fz_align_up(FZ_GPU_SCRATCH_HEAD + 8 * (chunk_count + 1),
                       FZ_GPU_SCRATCH_ALIGN);
}

/* Work arrays of the lorenzo codec (lorenzo_gpu.cu): about 11 bytes per
 * value plus per-chunk code books. */
uint64_t fz_lorenzo_gpu_work_bytes(const fz_header *h);

/* Bytes of temp storage after the offsets shared by every codec: the
 * decode scan's or the compress range reduction's, whichever is larger.
 * Only lorenzo REL reduces the range first; sleek REL tracks it in its
 * compression pass (LOSSY.md 5.1). */
static inline uint64_t fz_gpu_base_temp_bytes(const fz_header *h) {
    uint64_t scan = fz_gpu_offsets_temp_bytes(h->chunk_count);
    uint64_t range =
        h->mode == 2 && h->codec == 4u ? fz_gpu_range_temp_bytes(h) : 0;
    return fz_align_up(scan > range ? scan : range, FZ_GPU_SCRATCH_ALIGN);
}

/* The shared temp storage, then (lorenzo, codec 4, only) its work arrays. */
static inline uint64_t fz_gpu_temp_bytes(const fz_header *h) {
    return fz_gpu_base_temp_bytes(h) +
           (h->codec == 4u ? fz_lorenzo_gpu_work_bytes(h) : 0);
}

static inline uint64_t fz_gpu_scratch_bytes(const fz_header *h) {
    return fz_gpu_offsets_end(h->chunk_count) + fz_gpu_temp_bytes(h);
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

/* Ask the L2 for the line holding p (no register written, nothing waits);
 * a no-op in host passes (the warp emulator). */
static __device__ __forceinline__ void fz_prefetch_l2(const void *p) {
#if defined(__CUDA_ARCH__)
    asm volatile("prefetch.global.L2 [%0];" ::"l"(p));
#else
    (void)p;
#endif
}

#if defined(__CUDA_ARCH__)
/* A shared-memory pointer as the 32-bit address PTX takes. */
static __device__ __forceinline__ uint32_t fz_smem_addr(const void *p) {
    return (uint32_t)__cvta_generic_to_shared(p);
}
#endif

/* Asynchronous copies of 4, 8 or 16 bytes from global into shared memory
 * (cp.async, sm_80 and later): the bytes do not pass through registers, so
 * a lane can have a whole chunk's pieces in flight at once where loads
 * into registers come in batches that the register budget allows, one
 * round trip each. A thread's copies are complete, and visible to it, after
 * fz_copy_async_wait; other threads see them after a barrier. Both
 * addresses must be aligned to the size. Elsewhere a plain copy. */
template <int kBytes>
static __device__ __forceinline__ void fz_copy_async(void *dst,
                                                     const void *src) {
    static_assert(kBytes == 4 || kBytes == 8 || kBytes == 16,
                  "cp.async copies 4, 8 or 16 bytes");
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    const uint32_t to = fz_smem_addr(dst);
    if (kBytes == 16) /* past the L1: read once */
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(to),
                     "l"(src)
                     : "memory");
    else
        asm volatile("cp.async.ca.shared.global [%0], [%1], %2;" ::"r"(to),
                     "l"(src), "n"(kBytes)
                     : "memory");
#else
    memcpy(dst, src, kBytes);
#endif
}
static __device__ __forceinline__ void fz_copy_async_wait(void) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_all;" ::: "memory");
#endif
}

/* mbarriers (sm_80 and later): a phase completes once `count` arrivals
 * (and, on sm_90, the bytes a bulk copy announced) have come; arrivals
 * release and waits acquire, so an mbarrier hands shared data from the
 * arriving threads to the waiting ones without a block barrier. Init by one
 * thread, then a block barrier. A waiter tracks the parity of the phase it
 * waits for (0, 1, 0, ... per completion). */
static __device__ __forceinline__ void fz_mbar_init(unsigned long long *bar,
                                                    uint32_t count) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    const uint32_t at = fz_smem_addr(bar);
    asm volatile("mbarrier.init.shared.b64 [%0], %1;" ::"r"(at), "r"(count)
                 : "memory");
#if __CUDA_ARCH__ >= 900 /* visible to the bulk copies (async proxy) */
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
#endif
#else
    (void)bar;
    (void)count;
#endif
}
static __device__ __forceinline__ void fz_mbar_arrive(unsigned long long *bar) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    const uint32_t at = fz_smem_addr(bar);
    asm volatile("mbarrier.arrive.shared.b64 _, [%0];" ::"r"(at) : "memory");
#else
    (void)bar;
#endif
}
/* Wait for the phase of *bar with this parity to complete (sm_90: try_wait,
 * which suspends the warp for a while; sm_80: test_wait polls). */
static __device__ __forceinline__ void fz_mbar_wait(unsigned long long *bar,
                                                    uint32_t parity) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    const uint32_t at = fz_smem_addr(bar);
    uint32_t done;
    do
        asm volatile("{ .reg .pred p;\n"
#if __CUDA_ARCH__ >= 900
                     "mbarrier.try_wait.parity.shared.b64 p, [%1], %2;\n"
#else
                     "mbarrier.test_wait.parity.shared.b64 p, [%1], %2;\n"
#endif
                     "selp.u32 %0, 1, 0, p; }"
                     : "=r"(done)
                     : "r"(at), "r"(parity)
                     : "memory");
    while (!done);
#else
    (void)bar;
    (void)parity;
#endif
}
/* Hopper bulk copies (TMA, cp.async.bulk; FZ_GPU_BULK is 1 in device code
 * for sm_90 and later): one thread moves a whole region between global and
 * shared memory, where every thread used to copy its own 16-byte pieces.
 * Both addresses and the size must be multiples of 16. Loads complete on
 * an mbarrier (the issuing thread's fz_mbar_expect is its arrival; once the
 * phase completes, waiters see the bytes); stores are tracked by the issuing
 * thread's bulk group. Shared memory that ordinary stores wrote, or ordinary
 * loads read, must be fenced by those threads (fz_fence_proxy_async) before a
 * barrier that precedes the bulk copy reading or overwriting it. Elsewhere
 * (older GPUs, host passes) the helpers are empty and callers take their
 * per-thread paths. */
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define FZ_GPU_BULK 1
static __device__ __forceinline__ void fz_fence_proxy_async(void) {
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}
/* The phase of *bar completes once `bytes` have landed (0: at once). */
static __device__ __forceinline__ void fz_mbar_expect(unsigned long long *bar,
                                                      uint32_t bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(
                     fz_smem_addr(bar)),
                 "r"(bytes)
                 : "memory");
}
static __device__ __forceinline__ void fz_bulk_load(void *dst, const void *src,
                                                    uint32_t bytes,
                                                    unsigned long long *bar) {
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::"
                 "bytes [%0], [%1], %2, [%3];" ::"r"(fz_smem_addr(dst)),
                 "l"(src), "r"(bytes), "r"(fz_smem_addr(bar))
                 : "memory");
}
static __device__ __forceinline__ void fz_bulk_store(void *dst, const void *src,
                                                     uint32_t bytes) {
    asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;\n"
                 "cp.async.bulk.commit_group;" ::"l"(dst),
                 "r"(fz_smem_addr(src)), "r"(bytes)
                 : "memory");
}
/* This thread's bulk stores have read their shared memory / are done. */
static __device__ __forceinline__ void fz_bulk_stores_read(void) {
    asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
}
static __device__ __forceinline__ void fz_bulk_stores_done(void) {
    asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
}
#else
#define FZ_GPU_BULK 0
static __device__ __forceinline__ void fz_fence_proxy_async(void) {}
static __device__ __forceinline__ void fz_mbar_expect(unsigned long long *,
                                                      uint32_t) {}
static __device__ __forceinline__ void
fz_bulk_load(void *, const void *, uint32_t, unsigned long long *) {}
static __device__ __forceinline__ void fz_bulk_store(void *, const void *,
                                                     uint32_t) {}
static __device__ __forceinline__ void fz_bulk_stores_read(void) {}
static __device__ __forceinline__ void fz_bulk_stores_done(void) {}
#endif

/* A named barrier (ids 1-15; 0 is __syncthreads) for a subset of a block's
 * warps: waits until `threads` (a multiple of 32) have arrived. */
static __device__ __forceinline__ void fz_bar_sync(int id, int threads) {
    asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(threads) : "memory");
}
/* Decoupled look-back (Merrill & Garland) in two steps, so a block can do
 * useful work between them. fz_lookback_publish (one thread) announces a
 * chunk's size as soon as it is known. fz_lookback_resolve (one warp) sums
 * predecessors' announced sizes 32 at a time, back to the nearest inclusive
 * prefix, publishes this chunk's inclusive prefix and returns the exclusive
 * one. Flag and value share one 64-bit word: one store publishes both.
 * Waits only ever point at lower chunk indices, and chunk indices come
 * from an atomic ticket taken by running blocks, so it cannot deadlock. */
static __device__ void fz_lookback_publish(unsigned long long *state,
                                           unsigned long long chunk,
                                           unsigned long long size) {
    fz_st_volatile(&state[chunk],
                   (chunk == 0 ? FZ_LB_INCLUSIVE : FZ_LB_AGGREGATE) | size);
}

static __device__ unsigned long long
fz_lookback_resolve(unsigned long long *state, unsigned long long chunk,
                    unsigned long long size) {
    const int lane = threadIdx.x & 31;
    if (chunk == 0)
        return 0;
    unsigned long long exclusive = 0;
    long long idx = (long long)chunk - 1 - lane; /* lane 0: nearest */
    for (;;) {
        unsigned long long s;
        unsigned inclusive, missing;
        for (;;) { /* until every lane before the nearest inclusive is set */
            s = idx < 0 ? FZ_LB_INCLUSIVE : fz_ld_volatile(&state[idx]);
            inclusive = __ballot_sync(FZ_FULL_MASK, (s >> 62) == 2);
            missing = __ballot_sync(FZ_FULL_MASK, (s >> 62) == 0);
            unsigned before =
                inclusive ? (inclusive & -inclusive) - 1 : FZ_FULL_MASK;
            if ((missing & before) == 0 && (inclusive || !missing))
                break;
            __nanosleep(20);
        }
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

/* Add chunk c's entry (size, checksum) to the table hash. */
static inline __device__ void fz_gpu_hash_entry(const fz_gpu_args &a,
                                                uint32_t flags, uint64_t c,
                                                uint32_t size, uint32_t want) {
    const uint32_t entry = fz_table_entry_bytes(flags);
    uint32_t tsum = fz_hash_term(size, c * entry / 4);
    if (entry == 8)
        tsum += fz_hash_term(want, c * 2 + 1);
    atomicAdd(&a.scratch->table_sum, tsum);
}

/* Chunk table entries, shared by every codec's kernels (one thread per
 * chunk). Writing: store the entry of chunk c and add its words to the
 * table hash; fz_gpu_put_checksum takes the data checksum ck, and
 * fz_gpu_put_entry the fz_hash sum chunk_hash of the hashed_bytes / 4
 * words that checksum covers (the decoded bytes, or sleek's payload).
 * Reading: hash the entry read from the stream; returns the stored data
 * checksum (0 without checksums). */
static inline __device__ void fz_gpu_put_checksum(const fz_gpu_args &a,
                                                  uint64_t c, uint32_t size,
                                                  uint32_t ck) {
    const uint32_t entry = fz_table_entry_bytes(a.expect.flags);
    uint8_t *e = a.dst + FZ_HDR_BYTES + c * entry;
    fz_store32(e, size);
    if (entry == 8)
        fz_store32(e + 4, ck);
    fz_gpu_hash_entry(a, a.expect.flags, c, size, entry == 8 ? ck : 0);
}
static inline __device__ void fz_gpu_put_entry(const fz_gpu_args &a, uint64_t c,
                                               uint32_t size,
                                               uint32_t chunk_hash,
                                               uint64_t hashed_bytes) {
    fz_gpu_put_checksum(a, c, size,
                        fz_hash_final(chunk_hash, hashed_bytes / 4));
}

/* The sum over the warp's lanes of a 64-bit value mod 2^64 (every lane):
 * three 32-bit reductions (the low half in two 16-bit parts, whose sums
 * over 32 lanes stay below 2^21) instead of a 64-bit shuffle tree. */
static inline __device__ uint64_t fz_gpu_warp_sum64(uint64_t x) {
    const uint32_t lo = __reduce_add_sync(FZ_FULL_MASK, (uint32_t)x & 0xFFFFu);
    const uint32_t mid = __reduce_add_sync(FZ_FULL_MASK, (uint32_t)x >> 16);
    const uint32_t hi = __reduce_add_sync(FZ_FULL_MASK, (uint32_t)(x >> 32));
    return ((uint64_t)hi << 32) + ((uint64_t)mid << 16) + lo;
}

/* A chunk's data checksum (fz_hash.h) as per-lane sums of the kind a
 * stream's codec version names: terms of 32-bit words (a float32 is one,
 * a float64 two) at word or value positions, summed in any order, then
 * the warp's or block's total finished. The square sum is three
 * instructions per word where the mixed terms are about eleven. */
template <int kKind> struct fz_gpu_sum;
template <> struct fz_gpu_sum<FZ_SUM_SQUARE> {
    typedef uint64_t Acc;
    static __device__ Acc term(uint32_t v, uint32_t i) {
        return fz_qsum_value32(v, i);
    }
    static __device__ Acc term(uint64_t v, uint32_t i) {
        return fz_qsum_value64(v, i);
    }
    static __device__ uint32_t final(uint64_t total, uint64_t words) {
        return fz_qsum_final(total, words);
    }
    static __device__ uint32_t warp_final(Acc s, uint64_t words) {
        return final(fz_gpu_warp_sum64(s), words);
    }
};
template <> struct fz_gpu_sum<FZ_SUM_MIX> {
    typedef uint32_t Acc;
    static __device__ Acc term(uint32_t v, uint32_t i) {
        return fz_hash_value32(v, i);
    }
    static __device__ Acc term(uint64_t v, uint32_t i) {
        return fz_hash_value64(v, i);
    }
    static __device__ uint32_t final(uint64_t total, uint64_t words) {
        return fz_hash_final((uint32_t)total, words);
    }
    static __device__ uint32_t warp_final(Acc s, uint64_t words) {
        return final(__reduce_add_sync(FZ_FULL_MASK, s), words);
    }
};

/* The data checksum stored in chunk c's table entry (0 without). */
static inline __device__ uint32_t fz_gpu_entry_checksum(const fz_gpu_args &a,
                                                        uint32_t flags,
                                                        uint64_t c) {
    const uint32_t entry = fz_table_entry_bytes(flags);
    return entry == 8 ? fz_load32(a.src + FZ_HDR_BYTES + c * entry + 4) : 0;
}

static inline __device__ uint32_t fz_gpu_take_entry(const fz_gpu_args &a,
                                                    uint32_t flags, uint64_t c,
                                                    uint32_t size) {
    const uint32_t want = fz_gpu_entry_checksum(a, flags, c);
    fz_gpu_hash_entry(a, flags, c, size, want);
    return want;
}

/* A decoder's chunk schedule, kept two chunks ahead by one thread (lane 0
 * of a warp, or thread 0 of a block) so that neither the ticket's atomic
 * nor the loads of a chunk's offsets and stored checksum stall the chunk
 * being decoded: a ticket taken by one take() has its loads issued by the
 * next and is returned by the one after. Tickets only grow, so a decoder
 * that stops at the first one past the end leaves no chunk behind. */
struct fz_gpu_ahead {
    unsigned long long pending = 0; /* ticket whose atomic is in flight */
    unsigned long long ready = 0;   /* ticket whose loads are in flight */
    unsigned long long lo = 0, hi = 0;
    uint32_t want = 0;
    __device__ void load(const fz_gpu_args &a, uint32_t flags, uint64_t count) {
        if (ready < count) {
            lo = a.offsets[ready];
            hi = a.offsets[ready + 1];
            want = fz_gpu_entry_checksum(a, flags, ready);
        }
    }
    __device__ void start(const fz_gpu_args &a, uint32_t flags,
                          uint64_t count) {
        ready = atomicAdd(&a.scratch->ticket, 1u);
        load(a, flags, count);
        pending = atomicAdd(&a.scratch->ticket, 1u);
    }
    /* The next chunk, its start and end offsets and stored checksum. */
    __device__ unsigned long long take(const fz_gpu_args &a, uint32_t flags,
                                       uint64_t count, unsigned long long *off,
                                       unsigned long long *end, uint32_t *sum) {
        const unsigned long long c = ready;
        *off = lo;
        *end = hi;
        *sum = want;
        ready = pending;
        load(a, flags, count);
        pending = atomicAdd(&a.scratch->ticket, 1u);
        return c;
    }
};

/* Warp form: lane 0 runs the schedule (started by lane 0), the whole warp
 * gets the chunk, its offset and size, and its stored checksum. */
static __device__ unsigned long long
fz_gpu_warp_take(fz_gpu_ahead &ahead, const fz_gpu_args &a, uint32_t flags,
                 uint64_t count, uint64_t *off, uint64_t *size,
                 uint32_t *want) {
    unsigned long long c = 0, lo = 0, hi = 0;
    uint32_t w = 0;
    if ((threadIdx.x & 31) == 0)
        c = ahead.take(a, flags, count, &lo, &hi, &w);
    c = __shfl_sync(FZ_FULL_MASK, c, 0);
    lo = __shfl_sync(FZ_FULL_MASK, lo, 0);
    hi = __shfl_sync(FZ_FULL_MASK, hi, 0);
    *want = __shfl_sync(FZ_FULL_MASK, w, 0);
    *off = lo;
    *size = hi - lo;
    return c;
}

/* Device-side validation of a stream before decoding: the same rules the
 * CPU applies to the header, plus the match with the caller's params. */
static __device__ int fz_gpu_check_stream(const fz_gpu_args &a, fz_header *h) {
    int s = fz_header_parse(a.src, a.src_size, h);
    if (s != FZS_OK)
        return s;
    const fz_header &e = a.expect;
    if (h->codec != e.codec)
        return FZS_PARAMS_MISMATCH;
    if (h->codec_version < a.oldest_version ||
        h->codec_version > e.codec_version || h->chunk_bytes != e.chunk_bytes)
        return FZS_CORRUPT_HEADER;
    for (int k = 0; k < 4; k++)
        if (h->codec_params[k] != e.codec_params[k])
            return FZS_CORRUPT_HEADER;
    /* flags too: they set the table's entry size, so where the payload
     * starts (a.payload_off comes from the params) */
    if (h->dtype != e.dtype || h->ndims != e.ndims || h->mode != e.mode ||
        h->original_bytes != e.original_bytes ||
        h->bound_bits != e.bound_bits || h->flags != e.flags)
        return FZS_PARAMS_MISMATCH;
    /* ABS: the enforced bound follows from the requested one (the CPU's
     * codec check does the same); REL depends on the data */
    if (h->mode == 1 && h->bound_eff_bits != e.bound_eff_bits)
        return FZS_CORRUPT_HEADER;
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
cudaError_t fz_gfc_gpu_compress(const fz_gpu_args *a, int sm_count,
                                cudaStream_t stream);
cudaError_t fz_gfc_gpu_decompress(const fz_gpu_args *a, int sm_count,
                                  cudaStream_t stream);
cudaError_t fz_falcon_gpu_compress(const fz_gpu_args *a, int sm_count,
                                   cudaStream_t stream);
cudaError_t fz_falcon_gpu_decompress(const fz_gpu_args *a, int sm_count,
                                     cudaStream_t stream);
/* Whether the GPU backend implements this header (device_api.cu): both
 * directions of every known codec and option. */
bool fz_gpu_implements(const fz_header *h);

cudaError_t fz_lorenzo_gpu_compress(const fz_gpu_args *a, int sm_count,
                                    cudaStream_t stream);
cudaError_t fz_lorenzo_gpu_decompress(const fz_gpu_args *a, int sm_count,
                                      cudaStream_t stream);

#endif /* FZ_GPU_CUH */
