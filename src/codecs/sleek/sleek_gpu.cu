/* SLEEK lossless, CUDA backend. Persistent blocks take 16 KiB chunks from
 * an atomic ticket; a block has 8 warps and each warp owns 4 of the 32
 * subchunks (lane L holds 16 contiguous bytes of each). Input is read once
 * and output written once; packing goes through shared memory, the output
 * offset comes from the decoupled look-back, so one kernel does it all.
 * Transforms and layout: sleek_xform.h, shared with the CPU backend. */
#include "../../gpu/fz_gpu.cuh"
#include "sleek_xform.h"

namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr int kSubsPerWarp = SLEEK_SUBS / kWarps; /* 4 */
constexpr int kBufWords64 = (SLEEK_WIDTHS_BYTES + SLEEK_CHUNK_BYTES) / 8 + 8;

typedef unsigned __int128 u128;

/* Per-type constants and the shared transforms. */
template <typename T> struct Word;
template <> struct Word<uint32_t> {
    static __device__ uint32_t fwd(uint32_t x) { return sleek_fwd32(x); }
    static __device__ uint32_t inv(uint32_t x) { return sleek_inv32(x); }
    static __device__ uint32_t warp_or(uint32_t x) {
        return __reduce_or_sync(FZ_FULL_MASK, x);
    }
    static __device__ uint32_t hash(uint32_t x, uint64_t idx) {
        return fz_hash_term(x, idx);
    }
};
template <> struct Word<uint64_t> {
    static __device__ uint64_t fwd(uint64_t x) { return sleek_fwd64(x); }
    static __device__ uint64_t inv(uint64_t x) { return sleek_inv64(x); }
    static __device__ uint64_t warp_or(uint64_t x) {
        uint32_t lo = __reduce_or_sync(FZ_FULL_MASK, (uint32_t)x);
        uint32_t hi = __reduce_or_sync(FZ_FULL_MASK, (uint32_t)(x >> 32));
        return (uint64_t)hi << 32 | lo;
    }
    static __device__ uint32_t hash(uint64_t x, uint64_t idx) {
        return fz_hash_term((uint32_t)x, 2 * idx) +
               fz_hash_term((uint32_t)(x >> 32), 2 * idx + 1);
    }
};

template <typename T> struct Layout {
    static constexpr int TB = 8 * sizeof(T);
    static constexpr int V = SLEEK_SUB_BYTES / sizeof(T); /* per subchunk */
    static constexpr int VPL = V / 32;                    /* per lane */
    static constexpr int W = 128 / TB;                    /* words in u128 */
};

struct __align__(16) ChunkShared {
    unsigned long long buf[kBufWords64]; /* encoded chunk, 16 B aligned */
    uint32_t hash[kWarps];
    unsigned long long chunk, offset;
    uint32_t size, entry_sum, ok;
};

/* Exclusive byte offset (within the chunk) and packed bytes of subchunk
 * `lane`, from the width table; every warp computes it redundantly, which
 * costs 5 shuffles and saves a block barrier. Returns the chunk size. */
template <typename T>
__device__ uint32_t subchunk_offsets(uint32_t width, uint32_t *offset) {
    const int lane = threadIdx.x & 31;
    uint32_t bytes = width * Layout<T>::V / 8, incl = bytes;
    for (int d = 1; d < 32; d <<= 1) {
        uint32_t up = __shfl_up_sync(FZ_FULL_MASK, incl, d);
        if (lane >= d)
            incl += up;
    }
    *offset = SLEEK_WIDTHS_BYTES + incl - bytes;
    return SLEEK_WIDTHS_BYTES + __shfl_sync(FZ_FULL_MASK, incl, 31);
}

__device__ __forceinline__ void or_word(uint32_t *p, uint32_t v) {
    atomicOr(p, v);
}
__device__ __forceinline__ void or_word(uint64_t *p, uint64_t v) {
    atomicOr(reinterpret_cast<unsigned long long *>(p),
             (unsigned long long)v);
}

/* OR this lane's VPL values of width n into the subchunk's words. */
template <typename T>
__device__ void pack_lane(const T (&t)[Layout<T>::VPL], uint32_t n, T *words) {
    typedef Layout<T> L;
    const uint32_t lane = threadIdx.x & 31;
    const uint32_t bit = lane * L::VPL * n, word = bit / L::TB,
                   s0 = bit % L::TB, span = s0 + L::VPL * n;
    u128 acc = 0;
#pragma unroll
    for (int e = 0; e < L::VPL; e++)
        acc |= (u128)t[e] << (e * n);
    const u128 lo = acc << s0;
#pragma unroll
    for (int k = 0; k < L::W; k++) {
        T w = (T)(lo >> (k * L::TB));
        if ((uint32_t)k * L::TB < span && w)
            or_word(&words[word + k], w);
    }
    if ((uint32_t)L::W * L::TB < span) {
        T top = (T)(acc >> (128 - s0)); /* span > 128 implies s0 > 0 */
        if (top)
            or_word(&words[word + L::W], top);
    }
}

template <typename T>
__device__ void unpack_lane(const T *words, uint32_t n,
                            T (&t)[Layout<T>::VPL]) {
    typedef Layout<T> L;
    const uint32_t lane = threadIdx.x & 31;
    const uint32_t bit = lane * L::VPL * n, word = bit / L::TB,
                   s0 = bit % L::TB, span = s0 + L::VPL * n;
    u128 lo = 0;
#pragma unroll
    for (int k = 0; k < L::W; k++)
        if ((uint32_t)k * L::TB < span)
            lo |= (u128)words[word + k] << (k * L::TB);
    u128 acc = lo >> s0;
    if ((uint32_t)L::W * L::TB < span)
        acc |= (u128)words[word + L::W] << (128 - s0);
    const T mask = n == (uint32_t)L::TB ? (T)~(T)0 : (T)(((T)1 << n) - 1);
#pragma unroll
    for (int e = 0; e < L::VPL; e++)
        t[e] = (T)(acc >> (e * n)) & mask;
}

/* Load this lane's 16 bytes of subchunk s (zeros past the end). */
template <typename T>
__device__ void load_lane(const T *chunk, uint32_t nvals, int s,
                          T (&v)[Layout<T>::VPL]) {
    typedef Layout<T> L;
    const uint32_t i0 = s * L::V + (threadIdx.x & 31) * L::VPL;
    if (i0 + L::VPL <= nvals) {
        uint4 q = __ldcs(reinterpret_cast<const uint4 *>(chunk + i0));
        memcpy(v, &q, 16);
    } else {
#pragma unroll
        for (int e = 0; e < L::VPL; e++)
            v[e] = i0 + e < nvals ? chunk[i0 + e] : 0;
    }
}

/* Store this lane's values of subchunk s (only those below nvals). */
template <typename T>
__device__ void store_lane(uint8_t *out, uint32_t nvals, int s,
                           const T (&v)[Layout<T>::VPL]) {
    typedef Layout<T> L;
    const uint32_t i0 = s * L::V + (threadIdx.x & 31) * L::VPL;
    T *o = reinterpret_cast<T *>(out);
    if (i0 + L::VPL <= nvals && ((uintptr_t)(o + i0) & 15) == 0) {
        uint4 q;
        memcpy(&q, v, 16);
        __stcs(reinterpret_cast<uint4 *>(o + i0), q);
    } else {
#pragma unroll
        for (int e = 0; e < L::VPL; e++)
            if (i0 + e < nvals)
                o[i0 + e] = v[e];
    }
}

/* Block-wide sum of one uint32 per thread, result valid in thread 0. */
__device__ uint32_t block_sum_to_thread0(uint32_t x, uint32_t *sm) {
    x = __reduce_add_sync(FZ_FULL_MASK, x);
    if ((threadIdx.x & 31) == 0)
        sm[threadIdx.x >> 5] = x;
    __syncthreads();
    uint32_t total = 0;
    if (threadIdx.x == 0)
        for (int w = 0; w < kWarps; w++)
            total += sm[w];
    return total;
}

/* Copy `bytes` (a multiple of 8) from shared to global, 16 B when aligned. */
__device__ void copy_out(const unsigned long long *buf, uint8_t *dst,
                         uint32_t bytes) {
    if (((uintptr_t)dst & 15) == 0 && bytes % 16 == 0) {
        const uint4 *s = reinterpret_cast<const uint4 *>(buf);
        for (uint32_t i = threadIdx.x; i < bytes / 16; i += kThreads)
            __stcs(reinterpret_cast<uint4 *>(dst) + i, s[i]);
    } else {
        for (uint32_t i = threadIdx.x; i < bytes / 8; i += kThreads)
            reinterpret_cast<unsigned long long *>(dst)[i] = buf[i];
    }
}

__device__ uint64_t chunk_raw_bytes(uint64_t original, uint64_t c) {
    uint64_t left = original - c * SLEEK_CHUNK_BYTES;
    return left < SLEEK_CHUNK_BYTES ? left : SLEEK_CHUNK_BYTES;
}

__device__ bool take_chunk(const fz_gpu_args &a, uint64_t count,
                           ChunkShared &sm, uint64_t *c) {
    if (threadIdx.x == 0)
        sm.chunk = atomicAdd(&a.scratch->ticket, 1u);
    __syncthreads();
    *c = sm.chunk;
    return *c < count;
}

template <typename T>
__global__ void __launch_bounds__(kThreads, 4)
    sleek_compress_kernel(const fz_gpu_args a) {
    typedef Layout<T> L;
    __shared__ ChunkShared sm;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const fz_header &h = a.expect;
    const bool checksums = h.flags & FZ_HDR_FLAG_CHECKSUMS;
    const uint32_t entry = fz_table_entry_bytes(h.flags);
    uint64_t c;
    while (take_chunk(a, h.chunk_count, sm, &c)) {
        const uint64_t raw = chunk_raw_bytes(h.original_bytes, c);
        const uint32_t nvals = (uint32_t)(raw / sizeof(T));
        const T *in = reinterpret_cast<const T *>(a.src + c * SLEEK_CHUNK_BYTES);
        T v[kSubsPerWarp][L::VPL];
        uint32_t width[kSubsPerWarp];
#pragma unroll
        for (int j = 0; j < kSubsPerWarp; j++)
            load_lane<T>(in, nvals, warp * kSubsPerWarp + j, v[j]);
        uint32_t hsum = 0;
#pragma unroll
        for (int j = 0; j < kSubsPerWarp; j++) {
            const int s = warp * kSubsPerWarp + j;
            T any = 0;
#pragma unroll
            for (int e = 0; e < L::VPL; e++) {
                uint32_t idx = s * L::V + lane * L::VPL + e;
                if (checksums && idx < nvals)
                    hsum += Word<T>::hash(v[j][e], idx);
                v[j][e] = Word<T>::fwd(v[j][e]);
                any |= v[j][e];
            }
            width[j] = L::TB - (sizeof(T) == 4 ? fz_clz32((uint32_t)Word<T>::warp_or(any))
                                               : fz_clz64((uint64_t)Word<T>::warp_or(any)));
            if (lane == 0)
                reinterpret_cast<uint8_t *>(sm.buf)[s] = (uint8_t)width[j];
        }
        uint32_t chunk_hash = block_sum_to_thread0(hsum, sm.hash); /* syncs */
        /* every warp: subchunk offsets + chunk size from the width table */
        uint32_t my_off;
        const uint32_t lane_width = reinterpret_cast<uint8_t *>(sm.buf)[lane];
        uint32_t size = subchunk_offsets<T>(lane_width, &my_off);
        const bool verbatim = size >= raw;
        if (verbatim)
            size = (uint32_t)raw;
        if (warp == 0) {
            unsigned long long excl = fz_lookback(a.lookback, c, size);
            if (lane == 0) {
                sm.offset = excl;
                uint8_t *e = a.dst + FZ_HDR_BYTES + c * entry;
                uint32_t tsum = fz_hash_term(size, c * entry / 4);
                fz_store32(e, size);
                if (checksums) {
                    const uint32_t ck = fz_hash_final(chunk_hash, raw / 4);
                    fz_store32(e + 4, ck);
                    tsum += fz_hash_term(ck, c * 2 + 1);
                }
                atomicAdd(&a.scratch->table_sum, tsum);
                if (c == h.chunk_count - 1)
                    a.scratch->payload_total = excl + size;
            }
        }
        if (!verbatim) {
            /* zero this warp's region, then OR the packed bits in */
            const uint32_t first = __shfl_sync(FZ_FULL_MASK, my_off, warp * kSubsPerWarp);
            const uint32_t last_off = __shfl_sync(FZ_FULL_MASK, my_off, warp * kSubsPerWarp + kSubsPerWarp - 1);
            const uint32_t last = last_off + width[kSubsPerWarp - 1] * L::V / 8;
            uint32_t *b32 = reinterpret_cast<uint32_t *>(sm.buf);
            for (uint32_t i = first / 4 + lane; i < last / 4; i += 32)
                b32[i] = 0;
            __syncwarp();
#pragma unroll
            for (int j = 0; j < kSubsPerWarp; j++) {
                const uint32_t off = __shfl_sync(FZ_FULL_MASK, my_off, warp * kSubsPerWarp + j);
                if (width[j])
                    pack_lane<T>(v[j], width[j],
                                 reinterpret_cast<T *>(reinterpret_cast<uint8_t *>(sm.buf) + off));
            }
        }
        __syncthreads();
        const uint64_t at = a.payload_off + sm.offset;
        if (at + size > a.dst_capacity) {
            if (threadIdx.x == 0)
                fz_gpu_fail(a.scratch, FZS_DST_TOO_SMALL);
        } else if (verbatim) {
#pragma unroll
            for (int j = 0; j < kSubsPerWarp; j++) {
#pragma unroll
                for (int e = 0; e < L::VPL; e++)
                    v[j][e] = Word<T>::inv(v[j][e]);
                store_lane<T>(a.dst + at, nvals, warp * kSubsPerWarp + j, v[j]);
            }
        } else {
            copy_out(sm.buf, a.dst + at, size);
        }
        __syncthreads(); /* shared buffer reused by the next chunk */
    }
}

template <typename T>
__global__ void __launch_bounds__(kThreads, 4)
    sleek_decompress_kernel(const fz_gpu_args a) {
    typedef Layout<T> L;
    __shared__ ChunkShared sm;
    __shared__ int sm_stream_ok;
    __shared__ fz_header sm_hdr;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (threadIdx.x == 0) {
        int s = fz_gpu_check_stream(a, &sm_hdr);
        if (s != FZS_OK)
            fz_gpu_fail(a.scratch, s);
        sm_stream_ok = s == FZS_OK;
    }
    __syncthreads();
    if (!sm_stream_ok)
        return;
    const fz_header &h = sm_hdr; /* the stream's own, validated */
    const bool checksums = h.flags & FZ_HDR_FLAG_CHECKSUMS;
    const uint32_t entry = fz_table_entry_bytes(h.flags);
    const uint8_t *payload = a.src + a.payload_off;
    uint64_t c;
    while (take_chunk(a, h.chunk_count, sm, &c)) {
        const uint64_t raw = chunk_raw_bytes(h.original_bytes, c);
        const uint32_t nvals = (uint32_t)(raw / sizeof(T));
        if (warp == 0) {
            const uint8_t *e = a.src + FZ_HDR_BYTES + c * entry;
            uint32_t size = fz_load32(e);
            uint32_t want = checksums ? fz_load32(e + 4) : 0;
            bool valid = size <= raw;
            unsigned long long excl =
                fz_lookback(a.lookback, c, valid ? size : 0);
            if (lane == 0) {
                uint32_t tsum = fz_hash_term(size, c * entry / 4);
                if (checksums)
                    tsum += fz_hash_term(want, c * 2 + 1);
                atomicAdd(&a.scratch->table_sum, tsum);
                if (c == h.chunk_count - 1)
                    a.scratch->payload_total = excl + (valid ? size : 0);
                /* valid streams keep every chunk 8-byte aligned; checking
                 * it keeps a hostile table from causing misaligned loads */
                valid = valid && excl + size <= h.payload_bytes &&
                        (excl & 7) == 0 && (size == raw || (size & 7) == 0);
                if (!valid)
                    fz_gpu_fail(a.scratch, FZS_CORRUPT_CHUNK);
                sm.offset = excl;
                sm.size = size;
                sm.entry_sum = want;
                sm.ok = valid;
            }
        }
        __syncthreads();
        if (!sm.ok) {
            __syncthreads();
            continue;
        }
        const uint32_t size = sm.size;
        const uint8_t *in = payload + sm.offset;
        const bool verbatim = size == raw;
        T v[kSubsPerWarp][L::VPL];
        bool bad = false;
        if (verbatim) {
            const T *vin = reinterpret_cast<const T *>(in);
            const bool vec_ok = ((uintptr_t)in & 15) == 0;
#pragma unroll
            for (int j = 0; j < kSubsPerWarp; j++) {
                const uint32_t i0 = (warp * kSubsPerWarp + j) * L::V + lane * L::VPL;
                if (vec_ok && i0 + L::VPL <= nvals) {
                    uint4 q = __ldcs(reinterpret_cast<const uint4 *>(vin + i0));
                    memcpy(v[j], &q, 16);
                } else {
#pragma unroll
                    for (int e = 0; e < L::VPL; e++)
                        v[j][e] = i0 + e < nvals ? vin[i0 + e] : 0;
                }
            }
        } else {
            const unsigned long long *in64 =
                reinterpret_cast<const unsigned long long *>(in);
            for (uint32_t i = threadIdx.x; i < size / 8; i += kThreads)
                sm.buf[i] = __ldcs(in64 + i);
            __syncthreads();
            const uint32_t lane_width = reinterpret_cast<uint8_t *>(sm.buf)[lane];
            uint32_t my_off;
            const uint32_t need = subchunk_offsets<T>(lane_width, &my_off);
            /* block-uniform: every warp reads the same widths */
            bool widths_ok = __all_sync(FZ_FULL_MASK, lane_width <= (uint32_t)L::TB);
            if (!widths_ok || need != size) {
                if (threadIdx.x == 0)
                    fz_gpu_fail(a.scratch, FZS_CORRUPT_CHUNK);
                __syncthreads();
                continue;
            }
#pragma unroll
            for (int j = 0; j < kSubsPerWarp; j++) {
                const int s = warp * kSubsPerWarp + j;
                const uint32_t n = __shfl_sync(FZ_FULL_MASK, lane_width, s);
                const uint32_t off = __shfl_sync(FZ_FULL_MASK, my_off, s);
                if (n == 0) {
#pragma unroll
                    for (int e = 0; e < L::VPL; e++)
                        v[j][e] = 0;
                } else {
                    unpack_lane<T>(reinterpret_cast<const T *>(
                                       reinterpret_cast<const uint8_t *>(sm.buf) + off),
                                   n, v[j]);
                }
#pragma unroll
                for (int e = 0; e < L::VPL; e++) {
                    uint32_t idx = s * L::V + lane * L::VPL + e;
                    bad |= idx >= nvals && v[j][e] != 0; /* padding is +0.0 */
                    v[j][e] = Word<T>::inv(v[j][e]);
                }
            }
        }
        uint32_t hsum = 0;
        if (a.verify && checksums) {
#pragma unroll
            for (int j = 0; j < kSubsPerWarp; j++)
#pragma unroll
                for (int e = 0; e < L::VPL; e++) {
                    uint32_t idx = (warp * kSubsPerWarp + j) * L::V + lane * L::VPL + e;
                    if (idx < nvals)
                        hsum += Word<T>::hash(v[j][e], idx);
                }
        }
        uint8_t *out = a.dst + c * SLEEK_CHUNK_BYTES;
#pragma unroll
        for (int j = 0; j < kSubsPerWarp; j++)
            store_lane<T>(out, nvals, warp * kSubsPerWarp + j, v[j]);
        if (bad)
            fz_gpu_fail(a.scratch, FZS_CORRUPT_CHUNK);
        uint32_t total = block_sum_to_thread0(hsum, sm.hash); /* syncs */
        if (threadIdx.x == 0 && a.verify && checksums &&
            fz_hash_final(total, raw / 4) != sm.entry_sum)
            fz_gpu_fail(a.scratch, FZS_DATA_CHECKSUM);
        __syncthreads();
    }
}

template <typename K>
cudaError_t launch(K kernel, const fz_gpu_args *a, int sm_count,
                   cudaStream_t stream) {
    int per_sm = 0;
    cudaError_t err = cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &per_sm, kernel, kThreads, 0);
    if (err != cudaSuccess)
        return err;
    uint64_t grid = (uint64_t)sm_count * (per_sm > 0 ? per_sm : 1);
    if (grid > a->expect.chunk_count)
        grid = a->expect.chunk_count;
    if (grid == 0)
        return cudaSuccess;
    kernel<<<(unsigned)grid, kThreads, 0, stream>>>(*a);
    return cudaGetLastError();
}

} // namespace

cudaError_t fz_sleek_gpu_compress(const fz_gpu_args *a, int sm_count,
                                  cudaStream_t stream) {
    return a->expect.dtype == 1
               ? launch(sleek_compress_kernel<uint32_t>, a, sm_count, stream)
               : launch(sleek_compress_kernel<uint64_t>, a, sm_count, stream);
}

cudaError_t fz_sleek_gpu_decompress(const fz_gpu_args *a, int sm_count,
                                    cudaStream_t stream) {
    return a->expect.dtype == 1
               ? launch(sleek_decompress_kernel<uint32_t>, a, sm_count, stream)
               : launch(sleek_decompress_kernel<uint64_t>, a, sm_count, stream);
}
