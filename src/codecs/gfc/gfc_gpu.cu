/* GFC lossless, CUDA backend. One warp per chunk, as in the paper: lane l
 * holds value l of the current subchunk, the prediction comes from the
 * previous subchunk's values by one shuffle, and warp prefix sums (shuffles)
 * place each lane's residual bytes. Blocks are persistent and every warp
 * takes its own chunks from an atomic ticket.
 *
 * Compression makes two passes over a chunk (its encoded size is needed
 * before anything can be written, and a chunk can be larger than any
 * on-chip buffer): pass 1 computes the size and the data checksum and
 * publishes the size for the decoupled look-back; pass 2, once the offset
 * is resolved, reads the chunk again and writes the codes (16 bytes per
 * subchunk, gathered 32 subchunks at a time into one coalesced store) and
 * the residual bytes (staged per warp in shared memory, written as aligned
 * 8-byte words). Encoded chunks are multiples of 8 bytes, so every chunk
 * starts 8-byte aligned.
 *
 * Decompression takes chunk offsets from the CUB scan of the table: a warp
 * loads the codes of 32 subchunks at once, turns them into residual byte
 * counts and offsets with prefix sums, then decodes the 32 subchunks.
 * Codes, layout and chunk sizes: gfc_xform.h, shared with the CPU. */
#include "../../gpu/fz_gpu.cuh"
#include "gfc_xform.h"

namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr uint32_t kAhead = 4; /* subchunks loaded ahead by a lane */
/* Residual staging per warp: flushed in pieces of kFlush bytes; holds one
 * more subchunk (at most 32 x 8 bytes) and 8 bytes of alignment padding. */
constexpr uint32_t kFlush = 1024;
constexpr uint32_t kStage = kFlush + 32 * 8 + 16;

/* Per-type codes and checksum terms. */
template <typename T> struct Gfc;
template <> struct Gfc<uint32_t> {
    static __device__ uint32_t code(uint32_t r) {
        return gfc_code32(r);
    }
    static __device__ uint32_t bytes(uint32_t code) {
        return gfc_bytes32(code);
    }
    static __device__ bool valid(uint32_t code) {
        return gfc_code_valid32(code);
    }
    static __device__ uint32_t residual(uint32_t code, uint64_t mag) {
        return gfc_residual32(code, (uint32_t)mag);
    }
    static __device__ uint32_t hash(uint32_t x, uint64_t idx) {
        return fz_hash_value32(x, idx);
    }
};
template <> struct Gfc<uint64_t> {
    static __device__ uint32_t code(uint64_t r) {
        return gfc_code64(r);
    }
    static __device__ uint32_t bytes(uint32_t code) {
        return gfc_bytes64(code);
    }
    static __device__ bool valid(uint32_t) {
        return true;
    }
    static __device__ uint64_t residual(uint32_t code, uint64_t mag) {
        return gfc_residual64(code, mag);
    }
    static __device__ uint32_t hash(uint64_t x, uint64_t idx) {
        return fz_hash_value64(x, idx);
    }
};

/* Streaming load (last use of the input). */
__device__ __forceinline__ uint32_t load_last(const uint32_t *p) {
    return __ldcs(p);
}
__device__ __forceinline__ uint64_t load_last(const uint64_t *p) {
    return __ldcs(reinterpret_cast<const unsigned long long *>(p));
}

__device__ __forceinline__ uint32_t lane_id() {
    return threadIdx.x & 31;
}

/* Exclusive prefix sum over the warp; *total gets the sum. */
__device__ __forceinline__ uint32_t warp_exclusive(uint32_t x,
                                                   uint32_t *total) {
    const uint32_t lane = lane_id();
    uint32_t incl = x;
#pragma unroll
    for (uint32_t d = 1; d < 32; d <<= 1) {
        const uint32_t up = __shfl_up_sync(FZ_FULL_MASK, incl, d);
        if (lane >= d)
            incl += up;
    }
    *total = __shfl_sync(FZ_FULL_MASK, incl, 31);
    return incl - x;
}

/* The next chunk for this warp. */
__device__ uint64_t warp_ticket(const fz_gpu_args &a) {
    unsigned t = 0;
    if (lane_id() == 0)
        t = atomicAdd(&a.scratch->ticket, 1u);
    return __shfl_sync(FZ_FULL_MASK, t, 0);
}

/* Compression: one chunk per warp. */
template <typename T>
__global__ void __launch_bounds__(kThreads)
    gfc_compress_kernel(const fz_gpu_args a) {
    __shared__ __align__(16) uint8_t stage_all[kWarps][kStage];
    const uint32_t lane = lane_id();
    uint8_t *stage = stage_all[threadIdx.x >> 5];
    const fz_header &h = a.expect;
    const uint32_t pl = gfc_pred_lane(lane, h.codec_params[GFC_PARAM_DIM]);
    const bool checksums = h.flags & FZ_HDR_FLAG_CHECKSUMS;
    for (;;) {
        const uint64_t c = warp_ticket(a);
        if (c >= h.chunk_count)
            break;
        const uint64_t raw = fz_chunk_raw_bytes(&h, c);
        const uint32_t n = (uint32_t)(raw / sizeof(T));
        const uint32_t subs = (uint32_t)gfc_subchunks(n);
        const T *in = reinterpret_cast<const T *>(a.src + c * h.chunk_bytes);

        /* pass 1: encoded size and checksum */
        uint32_t bytes = 0, hsum = 0;
        T prev = 0;
        for (uint32_t s0 = 0; s0 < subs; s0 += kAhead) {
            T x[kAhead];
#pragma unroll
            for (uint32_t g = 0; g < kAhead; g++) {
                const uint32_t i = (s0 + g) * GFC_SUB + lane;
                x[g] = i < n ? in[i] : 0;
            }
#pragma unroll
            for (uint32_t g = 0; g < kAhead; g++) {
                if (s0 + g >= subs) /* warp-uniform */
                    break;
                const T p = __shfl_sync(FZ_FULL_MASK, prev, pl);
                const uint32_t i = (s0 + g) * GFC_SUB + lane;
                if (i < n)
                    hsum += Gfc<T>::hash(x[g], i);
                else
                    x[g] = p; /* padding: residual 0 */
                bytes += Gfc<T>::bytes(Gfc<T>::code((T)(x[g] - p)));
                prev = x[g];
            }
        }
        const uint32_t total = __reduce_add_sync(FZ_FULL_MASK, bytes);
        const uint32_t chunk_hash = __reduce_add_sync(FZ_FULL_MASK, hsum);
        const uint64_t enc = gfc_encoded_bytes(subs, total);
        const bool verbatim = enc >= raw;
        const uint32_t size = (uint32_t)(verbatim ? raw : enc);
        if (lane == 0) {
            fz_lookback_publish(a.lookback, c, size);
            fz_gpu_put_entry(a, c, size, checksums, chunk_hash, raw);
        }
        const unsigned long long excl =
            fz_lookback_resolve(a.lookback, c, size);
        if (lane == 0 && c == h.chunk_count - 1)
            a.scratch->payload_total = excl + size;
        const uint64_t at = a.payload_off + excl;
        if (at + size > a.dst_capacity) {
            if (lane == 0)
                fz_gpu_fail(a.scratch, FZS_DST_TOO_SMALL);
            continue;
        }
        uint8_t *out = a.dst + at; /* 8-byte aligned */
        if (verbatim) {
            T *o = reinterpret_cast<T *>(out);
            for (uint32_t i = lane; i < n; i += GFC_SUB)
                o[i] = in[i];
            continue;
        }

        /* pass 2: codes and residual bytes */
        unsigned long long *resid =
            reinterpret_cast<unsigned long long *>(out + GFC_CODE_BYTES * subs);
        const unsigned long long *stage64 =
            reinterpret_cast<const unsigned long long *>(stage);
        uint32_t fill = 0, flushed = 0; /* bytes staged, words written */
        uint32_t keep[4] = {0, 0, 0,
                            0}; /* codes of subchunk (s & ~31) + lane */
        prev = 0;
        for (uint32_t s0 = 0; s0 < subs; s0 += kAhead) {
            T x[kAhead];
#pragma unroll
            for (uint32_t g = 0; g < kAhead; g++) {
                const uint32_t i = (s0 + g) * GFC_SUB + lane;
                x[g] = i < n ? load_last(in + i) : 0;
            }
#pragma unroll
            for (uint32_t g = 0; g < kAhead; g++) {
                const uint32_t s = s0 + g;
                if (s >= subs)
                    break;
                const T p = __shfl_sync(FZ_FULL_MASK, prev, pl);
                if (s * GFC_SUB + lane >= n)
                    x[g] = p;
                const T r = (T)(x[g] - p);
                const uint32_t code = Gfc<T>::code(r);
                const uint32_t nb = Gfc<T>::bytes(code);
                const T mag = (code & 8u) ? (T)(0 - r) : r;
                prev = x[g];
                /* the 16 code bytes as 4 words: word k holds lanes
                 * 8k..8k+7, lane 8k + m in bits 4m..4m+3 */
                const uint32_t mine = code << (4 * (lane & 7));
                uint32_t w[4];
#pragma unroll
                for (uint32_t k = 0; k < 4; k++)
                    w[k] = __reduce_or_sync(FZ_FULL_MASK,
                                            (lane >> 3) == k ? mine : 0u);
                if ((s & 31) == lane)
#pragma unroll
                    for (uint32_t k = 0; k < 4; k++)
                        keep[k] = w[k];
                if ((s & 31) == 31 || s == subs - 1) {
                    if (lane <= (s & 31)) {
                        unsigned long long *o =
                            reinterpret_cast<unsigned long long *>(
                                out + GFC_CODE_BYTES * ((s & ~31u) + lane));
                        o[0] = (unsigned long long)keep[1] << 32 | keep[0];
                        o[1] = (unsigned long long)keep[3] << 32 | keep[2];
                    }
                }
                /* residual bytes, lane order, into the staging buffer */
                uint32_t sub_total;
                const uint32_t pos = fill + warp_exclusive(nb, &sub_total);
                for (uint32_t k = 0; k < nb; k++)
                    stage[pos + k] = (uint8_t)((uint64_t)mag >> (8 * k));
                fill += sub_total;
                if (fill >= kFlush) {
                    __syncwarp();
                    for (uint32_t k = lane; k < kFlush / 8; k += 32)
                        resid[flushed + k] = stage64[k];
                    __syncwarp();
                    for (uint32_t k = lane; k < fill - kFlush; k += 32)
                        stage[k] = stage[kFlush + k];
                    __syncwarp();
                    flushed += kFlush / 8;
                    fill -= kFlush;
                }
            }
        }
        /* the rest, zero-padded to a multiple of 8 bytes */
        const uint32_t padded = (fill + 7) & ~7u;
        if (lane < padded - fill)
            stage[fill + lane] = 0;
        __syncwarp();
        for (uint32_t k = lane; k < padded / 8; k += 32)
            resid[flushed + k] = stage64[k];
        __syncwarp(); /* the stage is reused by the next chunk */
    }
}

/* Decompression: one chunk per warp. */
template <typename T>
__global__ void __launch_bounds__(kThreads)
    gfc_decompress_kernel(const fz_gpu_args a) {
    __shared__ fz_header hdr;
    __shared__ int stream_ok;
    /* codes of 32 subchunks per warp */
    __shared__ __align__(16) uint8_t codes_all[kWarps][32 * GFC_CODE_BYTES];
    const uint32_t lane = lane_id();
    uint8_t *codes = codes_all[threadIdx.x >> 5];
    if (threadIdx.x == 0) {
        const int st = fz_gpu_check_stream(a, &hdr);
        if (st != FZS_OK)
            fz_gpu_fail(a.scratch, st);
        stream_ok = st == FZS_OK;
    }
    __syncthreads();
    if (!stream_ok)
        return;
    const fz_header &h = hdr;
    const uint32_t pl = gfc_pred_lane(lane, h.codec_params[GFC_PARAM_DIM]);
    const bool checksums = h.flags & FZ_HDR_FLAG_CHECKSUMS;
    for (;;) {
        const uint64_t c = warp_ticket(a);
        if (c >= h.chunk_count)
            break;
        const uint64_t raw = fz_chunk_raw_bytes(&h, c);
        const uint32_t n = (uint32_t)(raw / sizeof(T));
        const uint32_t subs = (uint32_t)gfc_subchunks(n);
        const uint64_t off = a.offsets[c], size = a.offsets[c + 1] - off;
        uint32_t want = 0;
        if (lane == 0)
            want = fz_gpu_take_entry(a, h.flags, c, (uint32_t)size);
        want = __shfl_sync(FZ_FULL_MASK, want, 0);
        /* valid streams keep chunks 8-byte aligned (a verbatim last chunk
         * may end elsewhere); checking keeps a hostile table from
         * misaligned or out-of-stream reads */
        if (!(size <= raw && off + size <= h.payload_bytes && (off & 7) == 0 &&
              (size == raw || (size & 7) == 0))) {
            if (lane == 0)
                fz_gpu_fail(a.scratch, FZS_CORRUPT_CHUNK);
            continue;
        }
        const uint8_t *in = a.src + a.payload_off + off;
        T *out = reinterpret_cast<T *>(a.dst + c * h.chunk_bytes);
        uint32_t hsum = 0;
        bool bad = false;
        if (size == raw) { /* verbatim */
            const T *v = reinterpret_cast<const T *>(in);
            for (uint32_t i = lane; i < n; i += GFC_SUB) {
                const T x = v[i];
                out[i] = x;
                hsum += Gfc<T>::hash(x, i);
            }
        } else {
            uint64_t rbase = (uint64_t)GFC_CODE_BYTES * subs;
            bad = size < rbase;
            bool lane_bad = false;
            T prev = 0;
            for (uint32_t sb = 0; sb < subs && !bad; sb += 32) {
                /* lane L: the codes of subchunk sb + L, and its bytes */
                uint32_t cnt = 0;
                if (sb + lane < subs) {
                    const unsigned long long *q =
                        reinterpret_cast<const unsigned long long *>(
                            in + GFC_CODE_BYTES * (sb + lane));
                    const unsigned long long q0 = q[0], q1 = q[1];
                    reinterpret_cast<unsigned long long *>(codes)[2 * lane] =
                        q0;
                    reinterpret_cast<unsigned long long *>(
                        codes)[2 * lane + 1] = q1;
#pragma unroll
                    for (uint32_t k = 0; k < 16; k++) {
                        const uint32_t c0 = (uint32_t)(q0 >> (4 * k)) & 15u;
                        const uint32_t c1 = (uint32_t)(q1 >> (4 * k)) & 15u;
                        cnt += Gfc<T>::bytes(c0) + Gfc<T>::bytes(c1);
                        lane_bad |= !Gfc<T>::valid(c0) || !Gfc<T>::valid(c1);
                    }
                }
                uint32_t batch;
                const uint32_t sub_off = warp_exclusive(cnt, &batch);
                bad =
                    __any_sync(FZ_FULL_MASK, lane_bad) || rbase + batch > size;
                __syncwarp();
                if (bad)
                    break;
                /* the batch's residual bytes towards L2 while its
                 * subchunks are decoded one after the other */
                for (uint64_t b = rbase + 128 * lane; b < rbase + batch;
                     b += 32 * 128)
                    asm volatile("prefetch.global.L2 [%0];" ::"l"(in + b));
                const uint32_t nsub = subs - sb < 32 ? subs - sb : 32;
#pragma unroll 4
                for (uint32_t j = 0; j < nsub; j++) {
                    const uint32_t code =
                        (codes[GFC_CODE_BYTES * j + lane / 2] >>
                         (4 * (lane & 1))) &
                        15u;
                    const uint32_t nb = Gfc<T>::bytes(code);
                    uint32_t unused;
                    const uint64_t start =
                        rbase + __shfl_sync(FZ_FULL_MASK, sub_off, j) +
                        warp_exclusive(nb, &unused);
                    /* start + nb <= size, a multiple of 8: the aligned
                     * words holding the bytes lie inside the chunk */
                    uint64_t mag = 0;
                    if (nb) {
                        const uint32_t sh = (uint32_t)(start & 7) * 8;
                        const unsigned long long *w =
                            reinterpret_cast<const unsigned long long *>(
                                in + (start & ~7ull));
                        const uint64_t lo = w[0];
                        const uint64_t hi = sh + 8 * nb > 64 ? w[1] : 0;
                        mag = gfc_low_bytes(
                            sh ? lo >> sh | hi << (64 - sh) : lo, nb);
                    }
                    const T r = Gfc<T>::residual(code, mag);
                    lane_bad |= Gfc<T>::code(r) != code; /* canonical */
                    const T x = (T)(__shfl_sync(FZ_FULL_MASK, prev, pl) + r);
                    const uint32_t i = (sb + j) * GFC_SUB + lane;
                    if (i < n) {
                        out[i] = x;
                        hsum += Gfc<T>::hash(x, i);
                    } else {
                        lane_bad |= r != 0; /* padding is predicted exactly */
                    }
                    prev = x;
                }
                rbase += batch;
                __syncwarp(); /* codes read before the next batch lands */
            }
            if (!bad) {
                /* the size must be exact; the alignment bytes zero */
                lane_bad |= fz_align_up(rbase, GFC_ALIGN) != size ||
                            (rbase + lane < size && in[rbase + lane] != 0);
                bad = __any_sync(FZ_FULL_MASK, lane_bad);
            }
        }
        if (bad) {
            if (lane == 0)
                fz_gpu_fail(a.scratch, FZS_CORRUPT_CHUNK);
        } else if (a.verify && checksums) {
            const uint32_t total = __reduce_add_sync(FZ_FULL_MASK, hsum);
            if (lane == 0 && fz_hash_final(total, raw / 4) != want)
                fz_gpu_fail(a.scratch, FZS_DATA_CHECKSUM);
        }
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
    const uint64_t needed = (a->expect.chunk_count + kWarps - 1) / kWarps;
    if (grid > needed)
        grid = needed;
    if (grid == 0)
        return cudaSuccess;
    kernel<<<(unsigned)grid, kThreads, 0, stream>>>(*a);
    return cudaGetLastError();
}

} // namespace

cudaError_t fz_gfc_gpu_compress(const fz_gpu_args *a, int sm_count,
                                cudaStream_t stream) {
    return a->expect.dtype == 1
               ? launch(gfc_compress_kernel<uint32_t>, a, sm_count, stream)
               : launch(gfc_compress_kernel<uint64_t>, a, sm_count, stream);
}

cudaError_t fz_gfc_gpu_decompress(const fz_gpu_args *a, int sm_count,
                                  cudaStream_t stream) {
    return a->expect.dtype == 1
               ? launch(gfc_decompress_kernel<uint32_t>, a, sm_count, stream)
               : launch(gfc_decompress_kernel<uint64_t>, a, sm_count, stream);
}
