/* Falcon, CUDA backend. Two kernels per direction, byte-identical to the
 * CPU backend:
 *
 *  - the warp kernel (default): one warp per chunk, persistent warps take
 *    chunks from an atomic ticket. Lane L owns the deltas 32 j + L
 *    (j = 0..31), i.e. the values 1 + 32 j + L of a chunk of at most 1025:
 *    loads and stores are coalesced, the chunk's shared decimal place is a
 *    warp reduction, the deltas' predecessors come from a shuffle, and a
 *    bit-plane is 32 ballots (ballot j is the plane's bytes 4j..4j+3, kept
 *    by lane j). The output offset comes from the decoupled look-back as
 *    soon as the chunk's size is known; the chunk is then written straight
 *    to its place (a second round of ballots instead of a staging buffer).
 *  - the reference kernel: one warp per chunk in which lane 0 runs the
 *    CPU's own chunk coder (falcon_chunk.h) in shared memory. Slow; it is
 *    what the warp kernel is checked against. Selected with the environment
 *    variable FZ_FALCON_GPU_KERNEL=reference (debugging and tests).
 *
 * Every decision (decimal places, case, widths, sparse or dense) comes
 * from falcon_xform.h, shared with the CPU backend. */
#include <stdlib.h>
#include <string.h>

#include "../../gpu/fz_gpu.cuh"
#include "falcon_chunk.h"

namespace {

constexpr int kWarps = 8; /* warps per block of the warp kernel */
constexpr int kThreads = 32 * kWarps;

/* Per word type: the shared transforms under one name. */
template <typename T> struct FW;
template <> struct FW<uint32_t> {
    static constexpr uint32_t BITS = 32, AMAX = FALCON_AMAX32;
    static constexpr int DMAX = FALCON_DMAX32;
    static __device__ int dp(uint32_t b, uint64_t *mag) {
        uint32_t m;
        const int a = falcon_dp32(b, &m);
        *mag = m;
        return a;
    }
    static __device__ uint32_t fwd(uint32_t b, uint32_t scale, double p) {
        return falcon_fwd32(b, scale, p);
    }
    static __device__ uint32_t inv(uint32_t s, uint32_t scale, double p) {
        return falcon_inv32(s, scale, p);
    }
    static __device__ uint32_t zz(uint32_t x) {
        return falcon_zz32(x);
    }
    static __device__ uint32_t unzz(uint32_t x) {
        return falcon_unzz32(x);
    }
    static __device__ int valid1(uint32_t s) {
        return falcon_valid_case1_32(s);
    }
    static __device__ int not10(uint32_t s) {
        return falcon_not_mult10_32(s);
    }
    static __device__ uint32_t width(uint32_t any) {
        return 32u - (uint32_t)fz_clz32(__reduce_or_sync(FZ_FULL_MASK, any));
    }
    static __device__ uint32_t hash(uint32_t x, uint64_t idx) {
        return fz_hash_value32(x, idx);
    }
    static __device__ uint32_t load(const uint8_t *p) {
        return fz_load32(p);
    }
    static __device__ uint32_t encode_ref(const uint32_t *v, uint32_t n,
                                          uint32_t *e, uint8_t *plane,
                                          uint8_t *dst, uint32_t raw) {
        return falcon_encode32(v, n, e, plane, dst, raw);
    }
    static __device__ int decode_ref(const uint8_t *src, uint32_t size,
                                     uint32_t *e, uint32_t n) {
        return falcon_decode32(src, size, e, n);
    }
};
template <> struct FW<uint64_t> {
    static constexpr uint32_t BITS = 64, AMAX = FALCON_AMAX64;
    static constexpr int DMAX = FALCON_DMAX64;
    static __device__ int dp(uint64_t b, uint64_t *mag) {
        return falcon_dp64(b, mag);
    }
    static __device__ uint64_t fwd(uint64_t b, uint32_t scale, double p) {
        return falcon_fwd64(b, scale, p);
    }
    static __device__ uint64_t inv(uint64_t s, uint32_t scale, double p) {
        return falcon_inv64(s, scale, p);
    }
    static __device__ uint64_t zz(uint64_t x) {
        return falcon_zz64(x);
    }
    static __device__ uint64_t unzz(uint64_t x) {
        return falcon_unzz64(x);
    }
    static __device__ int valid1(uint64_t s) {
        return falcon_valid_case1_64(s);
    }
    static __device__ int not10(uint64_t s) {
        return falcon_not_mult10_64(s);
    }
    static __device__ uint32_t width(uint64_t any) {
        const uint32_t lo = __reduce_or_sync(FZ_FULL_MASK, (uint32_t)any);
        const uint32_t hi =
            __reduce_or_sync(FZ_FULL_MASK, (uint32_t)(any >> 32));
        return 64u - (uint32_t)fz_clz64((uint64_t)hi << 32 | lo);
    }
    static __device__ uint32_t hash(uint64_t x, uint64_t idx) {
        return fz_hash_value64(x, idx);
    }
    static __device__ uint64_t load(const uint8_t *p) {
        return fz_load64(p);
    }
    static __device__ uint32_t encode_ref(const uint64_t *v, uint32_t n,
                                          uint64_t *e, uint8_t *plane,
                                          uint8_t *dst, uint32_t raw) {
        return falcon_encode64(v, n, e, plane, dst, raw);
    }
    static __device__ int decode_ref(const uint8_t *src, uint32_t size,
                                     uint64_t *e, uint32_t n) {
        return falcon_decode64(src, size, e, n);
    }
};

__device__ unsigned long long warp_ticket(const fz_gpu_args &a) {
    unsigned long long c = 0;
    if ((threadIdx.x & 31) == 0)
        c = atomicAdd(&a.scratch->ticket, 1u);
    return __shfl_sync(FZ_FULL_MASK, c, 0);
}

/* Inclusive prefix sum over the lanes (wrapping for unsigned types). */
template <typename T> __device__ T warp_incl_sum(T x) {
    const int lane = threadIdx.x & 31;
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
        const T up = __shfl_up_sync(FZ_FULL_MASK, x, d);
        if (lane >= d)
            x = (T)(x + up);
    }
    return x;
}

/* Bit q of this lane's 32 deltas' plane: the plane's bytes 4L..4L+3 for
 * lane L (delta 32 L + b is bit b). */
template <typename T>
__device__ uint32_t plane_word(const T (&x)[32], uint32_t q) {
    uint32_t word = 0;
#pragma unroll
    for (int j = 0; j < 32; j++) {
        const uint32_t b =
            __ballot_sync(FZ_FULL_MASK, (uint32_t)(x[j] >> q) & 1u);
        if ((int)(threadIdx.x & 31) == j)
            word = b;
    }
    return word;
}

/* Which of a lane's 4 plane bytes are nonzero (bit r: byte r). */
__device__ uint32_t nonzero4(uint32_t word) {
    return (uint32_t)((word & 0xFFu) != 0) |
           (uint32_t)((word & 0xFF00u) != 0) << 1 |
           (uint32_t)((word & 0xFF0000u) != 0) << 2 |
           (uint32_t)((word & 0xFF000000u) != 0) << 3;
}

/* The table entry of chunk c, its share of the table hash, and the look-
 * back: returns the chunk's offset in the payload (every lane). */
__device__ unsigned long long publish_chunk(const fz_gpu_args &a, uint64_t c,
                                            uint32_t size, uint64_t raw,
                                            uint32_t chunk_hash) {
    const fz_header &h = a.expect;
    if ((threadIdx.x & 31) == 0) {
        fz_lookback_publish(a.lookback, c, size);
        fz_gpu_put_entry(a, c, size, h.flags & FZ_HDR_FLAG_CHECKSUMS,
                         chunk_hash, raw);
    }
    const unsigned long long excl = fz_lookback_resolve(a.lookback, c, size);
    if ((threadIdx.x & 31) == 0 && c == h.chunk_count - 1)
        a.scratch->payload_total = excl + size;
    return excl;
}

/* ------------------------------------------------------ warp kernel */
template <typename T>
__global__ void __launch_bounds__(kThreads)
    falcon_compress_warp(const fz_gpu_args a) {
    typedef FW<T> F;
    const int lane = threadIdx.x & 31;
    const fz_header &h = a.expect;
    for (;;) {
        const unsigned long long c = warp_ticket(a);
        if (c >= h.chunk_count)
            break;
        const uint64_t raw = fz_chunk_raw_bytes(&h, c);
        const uint32_t n = (uint32_t)(raw / sizeof(T));
        const uint8_t *inb = a.src + c * h.chunk_bytes;
        const T *in = reinterpret_cast<const T *>(inb);

        /* 1. the chunk's scale: decimal places of every value, reduced
         *    (read from memory, not unrolled: the search is long code) */
        falcon_scan sc = falcon_scan_init();
        uint32_t hsum = 0;
        const T b0 = in[0];
        if (lane == 0) {
            uint64_t mag;
            const int alpha = F::dp(b0, &mag);
            falcon_scan_add(&sc, alpha, mag);
            hsum = F::hash(b0, 0);
        }
#pragma unroll 1
        for (int j = 0; j < 32; j++) {
            const uint32_t i = 1 + 32 * j + lane;
            if (i < n) {
                const T b = in[i];
                hsum += F::hash(b, i);
                if (!sc.exception) {
                    uint64_t mag;
                    const int alpha = F::dp(b, &mag);
                    falcon_scan_add(&sc, alpha, mag);
                }
            }
        }
        falcon_scan all;
        all.exception = __any_sync(FZ_FULL_MASK, sc.exception);
        all.amax = (int)__reduce_max_sync(FZ_FULL_MASK, (unsigned)sc.amax);
        all.qmax = (int)__reduce_max_sync(FZ_FULL_MASK,
                                          (unsigned)(sc.qmax - FALCON_QNONE)) +
                   FALCON_QNONE;
        const uint32_t scale = falcon_scale_of(&all, F::DMAX);
        const uint32_t chunk_hash = __reduce_add_sync(FZ_FULL_MASK, hsum);

        /* 2. integers, deltas, zigzag: x[j] = delta of value 1 + 32j + L */
        const double p = scale == FALCON_CASE2 ? 1.0 : falcon_pow10((int)scale);
        const T s0 = F::fwd(b0, scale, p);
        T x[32];
        T carry = s0, any = 0;
#pragma unroll
        for (int j = 0; j < 32; j++) {
            const uint32_t i = 1 + 32 * j + lane;
            const T s = F::fwd(i < n ? in[i] : (T)0, scale, p);
            const T up = __shfl_up_sync(FZ_FULL_MASK, s, 1);
            const T prev = lane == 0 ? carry : up;
            carry = __shfl_sync(FZ_FULL_MASK, s, 31);
            x[j] = i < n ? F::zz((T)(s - prev)) : (T)0;
            any |= x[j];
        }
        const uint32_t width = F::width(any);
        const T u0 = scale == FALCON_CASE2 ? s0 : F::zz(s0);
        const uint32_t first_len = falcon_first_len(u0);
        const uint32_t nflags = (width + 7) / 8;
        const uint32_t B = falcon_plane_bytes(n), M = falcon_bitmap_bytes(B);

        /* 3. the size: every plane's cheaper storage */
        uint64_t sparse_mask = 0;
        uint32_t size = FALCON_HEAD_BYTES + first_len + nflags;
        for (uint32_t q = width; q-- > 0;) {
            const uint32_t word = plane_word<T>(x, q);
            const uint32_t nnz =
                __reduce_add_sync(FZ_FULL_MASK, __popc(nonzero4(word)));
            if (falcon_sparse(B, nnz)) {
                sparse_mask |= 1ull << q;
                size += M + nnz;
            } else {
                size += B;
            }
        }
        const bool verbatim = size >= raw;
        if (verbatim)
            size = (uint32_t)raw;

        /* 4. offset, then the bytes at their place */
        const unsigned long long excl =
            publish_chunk(a, c, size, raw, chunk_hash);
        const uint64_t at = a.payload_off + excl;
        if (at + size > a.dst_capacity) {
            if (lane == 0)
                fz_gpu_fail(a.scratch, FZS_DST_TOO_SMALL);
            continue;
        }
        uint8_t *out = a.dst + at;
        if (verbatim) {
            for (uint32_t k = lane; k < size; k += 32)
                out[k] = inb[k];
            continue;
        }
        if (lane == 0) {
            out[0] = (uint8_t)scale;
            out[1] = (uint8_t)width;
            out[2] = (uint8_t)first_len;
            for (uint32_t k = 0; k < first_len; k++)
                out[FALCON_HEAD_BYTES + k] = (uint8_t)((uint64_t)u0 >> (8 * k));
            for (uint32_t k = 0; k < nflags; k++)
                out[FALCON_HEAD_BYTES + first_len + k] =
                    (uint8_t)(sparse_mask >> (8 * k));
        }
        uint32_t pos = FALCON_HEAD_BYTES + first_len + nflags;
        for (uint32_t q = width; q-- > 0;) {
            const uint32_t word = plane_word<T>(x, q);
            const uint32_t nz = nonzero4(word);
            if ((sparse_mask >> q) & 1u) {
                /* bitmap byte k: plane bytes 8k..8k+7 = lanes 2k, 2k+1 */
                const uint32_t hi = __shfl_down_sync(FZ_FULL_MASK, nz, 1);
                if (!(lane & 1) && (uint32_t)(lane >> 1) < M)
                    out[pos + (lane >> 1)] = (uint8_t)(nz | hi << 4);
                const uint32_t cnt = __popc(nz);
                const uint32_t incl = warp_incl_sum<uint32_t>(cnt);
                const uint32_t total = __shfl_sync(FZ_FULL_MASK, incl, 31);
                uint32_t o = pos + M + incl - cnt;
#pragma unroll
                for (int r = 0; r < 4; r++) {
                    const uint32_t byte = (word >> (8 * r)) & 0xFFu;
                    if (byte)
                        out[o++] = (uint8_t)byte;
                }
                pos += M + total;
            } else {
#pragma unroll
                for (int r = 0; r < 4; r++) {
                    const uint32_t k = 4 * lane + r;
                    if (k < B)
                        out[pos + k] = (uint8_t)(word >> (8 * r));
                }
                pos += B;
            }
        }
    }
}

/* Decode one encoded chunk (size < raw) into x[j] = value 1 + 32j + L and
 * *v0; returns true (every lane) when the chunk is not one the encoder
 * writes. Reads only in[0..size). */
template <typename T>
__device__ bool decode_warp(const uint8_t *in, uint32_t size, uint32_t n,
                            T (&x)[32], T *v0) {
    typedef FW<T> F;
    const int lane = threadIdx.x & 31;
#pragma unroll
    for (int j = 0; j < 32; j++)
        x[j] = 0;
    if (size < FALCON_HEAD_BYTES)
        return true;
    const uint32_t scale = in[0], width = in[1], first_len = in[2];
    if ((scale > F::AMAX && scale != FALCON_CASE2) || width > F::BITS ||
        first_len > sizeof(T) || size < FALCON_HEAD_BYTES + first_len)
        return true;
    T u0 = 0;
    for (uint32_t k = 0; k < first_len; k++)
        u0 |= (T)in[FALCON_HEAD_BYTES + k] << (8 * k);
    if (falcon_first_len(u0) != first_len)
        return true;
    uint32_t pos = FALCON_HEAD_BYTES + first_len;
    const uint32_t nflags = (width + 7) / 8;
    if (size - pos < nflags)
        return true;
    uint64_t flags = 0;
    for (uint32_t k = 0; k < nflags; k++)
        flags |= (uint64_t)in[pos + k] << (8 * k);
    pos += nflags;
    if (width < 64 && (flags >> width) != 0)
        return true; /* flag bits past the width */
    const uint32_t B = falcon_plane_bytes(n), M = falcon_bitmap_bytes(B);
    const uint32_t last_mask =
        B && (n - 1) % 8 ? 0xFFu << ((n - 1) % 8) & 0xFFu : 0;
    for (uint32_t q = width; q-- > 0;) {
        uint32_t word = 0, nnz;
        if ((flags >> q) & 1u) {
            if (size - pos < M)
                return true;
            uint32_t my4 = 0;
            if ((uint32_t)(lane >> 1) < M) {
                const uint32_t bm = in[pos + (lane >> 1)];
                my4 = (lane & 1) ? bm >> 4 : bm & 15u;
            }
            /* bitmap bits past the plane's B bytes must be 0: this lane's
             * bits are plane bytes 4L..4L+3, of which `have` exist */
            const uint32_t first = 4u * (uint32_t)lane;
            const uint32_t have =
                B > first ? (B - first < 4 ? B - first : 4) : 0;
            const bool pad = (my4 >> have) != 0;
            const uint32_t cnt = __popc(my4);
            const uint32_t incl = warp_incl_sum<uint32_t>(cnt);
            nnz = __shfl_sync(FZ_FULL_MASK, incl, 31);
            if (__any_sync(FZ_FULL_MASK, pad) || !falcon_sparse(B, nnz) ||
                size - pos - M < nnz)
                return true;
            uint32_t o = pos + M + incl - cnt;
            bool zero = false;
#pragma unroll
            for (int r = 0; r < 4; r++)
                if ((my4 >> r) & 1u) {
                    const uint32_t byte = in[o++];
                    zero |= byte == 0;
                    word |= byte << (8 * r);
                }
            if (__any_sync(FZ_FULL_MASK, zero))
                return true; /* a listed byte that is zero */
            pos += M + nnz;
        } else {
            if (size - pos < B)
                return true;
#pragma unroll
            for (int r = 0; r < 4; r++) {
                const uint32_t k = 4 * lane + r;
                if (k < B)
                    word |= (uint32_t)in[pos + k] << (8 * r);
            }
            nnz = __reduce_add_sync(FZ_FULL_MASK, __popc(nonzero4(word)));
            if (falcon_sparse(B, nnz))
                return true; /* sparse would have been smaller */
            pos += B;
        }
        const bool padbits = B && (uint32_t)lane == (B - 1) / 4 &&
                             ((word >> (8 * ((B - 1) % 4))) & last_mask);
        if (__any_sync(FZ_FULL_MASK, padbits) || (q == width - 1 && nnz == 0))
            return true;
#pragma unroll
        for (int j = 0; j < 32; j++) {
            const uint32_t wj = __shfl_sync(FZ_FULL_MASK, word, j);
            x[j] |= (T)((wj >> lane) & 1u) << q;
        }
    }
    if (pos != size)
        return true;
    /* integers: a running sum over the chunk */
    const double p = scale == FALCON_CASE2 ? 1.0 : falcon_pow10((int)scale);
    const T s0 = scale == FALCON_CASE2 ? u0 : F::unzz(u0);
    int ok = 1, tight = scale == 0 || scale == FALCON_CASE2;
    if (lane == 0 && scale != FALCON_CASE2) {
        ok &= F::valid1(s0);
        tight |= F::not10(s0);
    }
    T carry = s0;
#pragma unroll
    for (int j = 0; j < 32; j++) {
        const uint32_t i = 1 + 32 * j + lane;
        const T s = (T)(carry + warp_incl_sum<T>(F::unzz(x[j])));
        carry = __shfl_sync(FZ_FULL_MASK, s, 31);
        if (i < n && scale != FALCON_CASE2) {
            ok &= F::valid1(s);
            tight |= F::not10(s);
        }
        x[j] = F::inv(s, scale, p);
    }
    if (!__all_sync(FZ_FULL_MASK, ok) || !__any_sync(FZ_FULL_MASK, tight))
        return true;
    *v0 = F::inv(s0, scale, p);
    return false;
}

template <typename T>
__global__ void __launch_bounds__(kThreads)
    falcon_decompress_warp(const fz_gpu_args a) {
    typedef FW<T> F;
    const int lane = threadIdx.x & 31;
    int st = FZS_OK;
    uint32_t flags = 0;
    unsigned long long payload_bytes = 0;
    if (lane == 0) {
        fz_header hdr;
        st = fz_gpu_check_stream(a, &hdr);
        if (st != FZS_OK)
            fz_gpu_fail(a.scratch, st);
        flags = hdr.flags;
        payload_bytes = hdr.payload_bytes;
    }
    if (__shfl_sync(FZ_FULL_MASK, st, 0) != FZS_OK)
        return;
    flags = __shfl_sync(FZ_FULL_MASK, flags, 0);
    payload_bytes = __shfl_sync(FZ_FULL_MASK, payload_bytes, 0);
    const fz_header &h = a.expect; /* equal to the stream's, checked */
    const bool verify = a.verify && (flags & FZ_HDR_FLAG_CHECKSUMS);
    for (;;) {
        const unsigned long long c = warp_ticket(a);
        if (c >= h.chunk_count)
            break;
        const uint64_t raw = fz_chunk_raw_bytes(&h, c);
        const uint32_t n = (uint32_t)(raw / sizeof(T));
        const uint64_t off = a.offsets[c], size = a.offsets[c + 1] - off;
        const bool ok = size <= raw && off + size <= payload_bytes;
        uint32_t want = 0;
        if (lane == 0) {
            want = fz_gpu_take_entry(a, flags, c, (uint32_t)size);
            if (!ok)
                fz_gpu_fail(a.scratch, FZS_CORRUPT_CHUNK);
        }
        if (!ok)
            continue;
        want = __shfl_sync(FZ_FULL_MASK, want, 0);
        const uint8_t *in = a.src + a.payload_off + off;
        T x[32], v0;
        if (size == raw) { /* verbatim */
            v0 = F::load(in);
#pragma unroll
            for (int j = 0; j < 32; j++) {
                const uint32_t i = 1 + 32 * j + lane;
                x[j] = i < n ? F::load(in + (uint64_t)i * sizeof(T)) : (T)0;
            }
        } else if (decode_warp<T>(in, (uint32_t)size, n, x, &v0)) {
            if (lane == 0)
                fz_gpu_fail(a.scratch, FZS_CORRUPT_CHUNK);
            continue;
        }
        T *out = reinterpret_cast<T *>(a.dst + c * h.chunk_bytes);
        uint32_t hsum = 0;
        if (lane == 0) {
            out[0] = v0;
            hsum = F::hash(v0, 0);
        }
#pragma unroll
        for (int j = 0; j < 32; j++) {
            const uint32_t i = 1 + 32 * j + lane;
            if (i < n) {
                out[i] = x[j];
                hsum += F::hash(x[j], i);
            }
        }
        if (size != raw && in[0] == FALCON_CASE2) {
            /* canonical: the encoder chooses Case 2 only when Case 1 is
             * impossible. Each lane reads back what it wrote. */
            falcon_scan sc = falcon_scan_init();
            if (lane == 0) {
                uint64_t mag;
                const int alpha = F::dp(v0, &mag);
                falcon_scan_add(&sc, alpha, mag);
            }
#pragma unroll 1
            for (int j = 0; j < 32; j++) {
                if (__any_sync(FZ_FULL_MASK, sc.exception))
                    break;
                const uint32_t i = 1 + 32 * j + lane;
                if (i < n) {
                    uint64_t mag;
                    const int alpha = F::dp(out[i], &mag);
                    falcon_scan_add(&sc, alpha, mag);
                }
            }
            falcon_scan all;
            all.exception = __any_sync(FZ_FULL_MASK, sc.exception);
            all.amax = (int)__reduce_max_sync(FZ_FULL_MASK, (unsigned)sc.amax);
            all.qmax = (int)__reduce_max_sync(
                           FZ_FULL_MASK, (unsigned)(sc.qmax - FALCON_QNONE)) +
                       FALCON_QNONE;
            if (falcon_scale_of(&all, F::DMAX) != FALCON_CASE2) {
                if (lane == 0)
                    fz_gpu_fail(a.scratch, FZS_CORRUPT_CHUNK);
                continue;
            }
        }
        if (verify) {
            const uint32_t total = __reduce_add_sync(FZ_FULL_MASK, hsum);
            if (lane == 0 && fz_hash_final(total, raw / 4) != want)
                fz_gpu_fail(a.scratch, FZS_DATA_CHECKSUM);
        }
    }
}

/* -------------------------------------------------- reference kernel */
template <typename T> struct RefShared {
    T v[FALCON_MAX_VALUES]; /* values (encode input, decode output) */
    T e[FALCON_MAX_VALUES]; /* work */
    uint8_t plane[FALCON_MAX_VALUES / 8 + 8];
    uint8_t buf[FALCON_HEAD_BYTES + 16 + 8 * sizeof(T) * 129]; /* payload */
};

/* Hash of a chunk's raw bytes as 32-bit words, from shared memory. */
__device__ uint32_t ref_hash(const uint8_t *bytes, uint64_t raw) {
    uint32_t h = 0;
    for (uint32_t k = threadIdx.x & 31; k < raw / 4; k += 32)
        h += fz_hash_term(fz_load32(bytes + 4 * k), k);
    return __reduce_add_sync(FZ_FULL_MASK, h);
}

template <typename T>
__global__ void __launch_bounds__(32) falcon_compress_ref(const fz_gpu_args a) {
    extern __shared__ __align__(16) uint8_t smem_raw[];
    RefShared<T> &sm = *reinterpret_cast<RefShared<T> *>(smem_raw);
    const int lane = threadIdx.x & 31;
    const fz_header &h = a.expect;
    for (;;) {
        const unsigned long long c = warp_ticket(a);
        if (c >= h.chunk_count)
            break;
        const uint64_t raw = fz_chunk_raw_bytes(&h, c);
        const uint32_t n = (uint32_t)(raw / sizeof(T));
        const T *in = reinterpret_cast<const T *>(a.src + c * h.chunk_bytes);
        for (uint32_t i = lane; i < n; i += 32)
            sm.v[i] = in[i];
        __syncwarp();
        const uint32_t chunk_hash =
            ref_hash(reinterpret_cast<const uint8_t *>(sm.v), raw);
        uint32_t size = 0;
        if (lane == 0)
            size = FW<T>::encode_ref(sm.v, n, sm.e, sm.plane, sm.buf,
                                     (uint32_t)raw);
        __syncwarp(); /* lane 0's shared-memory writes, for every lane */
        size = __shfl_sync(FZ_FULL_MASK, size, 0);
        const bool verbatim = size >= raw;
        if (verbatim)
            size = (uint32_t)raw;
        const unsigned long long excl =
            publish_chunk(a, c, size, raw, chunk_hash);
        const uint64_t at = a.payload_off + excl;
        if (at + size > a.dst_capacity) {
            if (lane == 0)
                fz_gpu_fail(a.scratch, FZS_DST_TOO_SMALL);
        } else {
            const uint8_t *from =
                verbatim ? reinterpret_cast<const uint8_t *>(sm.v) : sm.buf;
            for (uint32_t k = lane; k < size; k += 32)
                a.dst[at + k] = from[k];
        }
        __syncwarp();
    }
}

template <typename T>
__global__ void __launch_bounds__(32)
    falcon_decompress_ref(const fz_gpu_args a) {
    extern __shared__ __align__(16) uint8_t smem_raw[];
    RefShared<T> &sm = *reinterpret_cast<RefShared<T> *>(smem_raw);
    const int lane = threadIdx.x & 31;
    int st = FZS_OK;
    uint32_t flags = 0;
    unsigned long long payload_bytes = 0;
    if (lane == 0) {
        fz_header hdr;
        st = fz_gpu_check_stream(a, &hdr);
        if (st != FZS_OK)
            fz_gpu_fail(a.scratch, st);
        flags = hdr.flags;
        payload_bytes = hdr.payload_bytes;
    }
    if (__shfl_sync(FZ_FULL_MASK, st, 0) != FZS_OK)
        return;
    flags = __shfl_sync(FZ_FULL_MASK, flags, 0);
    payload_bytes = __shfl_sync(FZ_FULL_MASK, payload_bytes, 0);
    const fz_header &h = a.expect;
    const bool verify = a.verify && (flags & FZ_HDR_FLAG_CHECKSUMS);
    for (;;) {
        const unsigned long long c = warp_ticket(a);
        if (c >= h.chunk_count)
            break;
        const uint64_t raw = fz_chunk_raw_bytes(&h, c);
        const uint32_t n = (uint32_t)(raw / sizeof(T));
        const uint64_t off = a.offsets[c], size = a.offsets[c + 1] - off;
        const bool ok = size <= raw && off + size <= payload_bytes;
        uint32_t want = 0;
        if (lane == 0) {
            want = fz_gpu_take_entry(a, flags, c, (uint32_t)size);
            if (!ok)
                fz_gpu_fail(a.scratch, FZS_CORRUPT_CHUNK);
        }
        if (!ok)
            continue;
        want = __shfl_sync(FZ_FULL_MASK, want, 0);
        const uint8_t *in = a.src + a.payload_off + off;
        uint8_t *vb = reinterpret_cast<uint8_t *>(sm.v);
        for (uint32_t k = lane; k < size; k += 32)
            (size == raw ? vb : sm.buf)[k] = in[k];
        __syncwarp();
        int bad = 0;
        if (size != raw && lane == 0)
            bad = FW<T>::decode_ref(sm.buf, (uint32_t)size, sm.v, n) != FZS_OK;
        bad = __shfl_sync(FZ_FULL_MASK, bad, 0);
        __syncwarp();
        if (bad) {
            if (lane == 0)
                fz_gpu_fail(a.scratch, FZS_CORRUPT_CHUNK);
            continue;
        }
        uint8_t *out = a.dst + c * h.chunk_bytes;
        for (uint32_t k = lane; k < raw; k += 32)
            out[k] = vb[k];
        if (verify) {
            const uint32_t total = ref_hash(vb, raw);
            if (lane == 0 && fz_hash_final(total, raw / 4) != want)
                fz_gpu_fail(a.scratch, FZS_DATA_CHECKSUM);
        }
        __syncwarp();
    }
}

} // namespace

/* The launches are left out when the kernels are compiled for the
 * host-side lock-step warp emulator (tools/falcon_warp_emu). */
#ifndef FALCON_GPU_EMULATION
namespace {

/* ------------------------------------------------------------ launch */
bool use_reference() {
    const char *k = getenv("FZ_FALCON_GPU_KERNEL");
    return k && strcmp(k, "reference") == 0;
}

template <typename K>
cudaError_t launch(K kernel, int threads, int smem, uint64_t units,
                   const fz_gpu_args *a, int sm_count, cudaStream_t stream) {
    cudaError_t err = cudaSuccess;
    if (smem > 0)
        err = cudaFuncSetAttribute(
            kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
    int per_sm = 0;
    if (err == cudaSuccess)
        err = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel,
                                                            threads, smem);
    if (err != cudaSuccess)
        return err;
    uint64_t grid = (uint64_t)sm_count * (per_sm > 0 ? per_sm : 1);
    if (grid > units)
        grid = units;
    if (grid == 0)
        return cudaSuccess;
    kernel<<<(unsigned)grid, threads, smem, stream>>>(*a);
    return cudaGetLastError();
}

template <typename T>
cudaError_t run(const fz_gpu_args *a, int sm_count, cudaStream_t stream,
                bool compress) {
    const uint64_t chunks = a->expect.chunk_count;
    if (use_reference()) {
        const int smem = (int)sizeof(RefShared<T>);
        return compress ? launch(falcon_compress_ref<T>, 32, smem, chunks, a,
                                 sm_count, stream)
                        : launch(falcon_decompress_ref<T>, 32, smem, chunks, a,
                                 sm_count, stream);
    }
    const uint64_t blocks = (chunks + kWarps - 1) / kWarps;
    return compress ? launch(falcon_compress_warp<T>, kThreads, 0, blocks, a,
                             sm_count, stream)
                    : launch(falcon_decompress_warp<T>, kThreads, 0, blocks, a,
                             sm_count, stream);
}

} // namespace

cudaError_t fz_falcon_gpu_compress(const fz_gpu_args *a, int sm_count,
                                   cudaStream_t stream) {
    return a->expect.dtype == 1 ? run<uint32_t>(a, sm_count, stream, true)
                                : run<uint64_t>(a, sm_count, stream, true);
}

cudaError_t fz_falcon_gpu_decompress(const fz_gpu_args *a, int sm_count,
                                     cudaStream_t stream) {
    return a->expect.dtype == 1 ? run<uint32_t>(a, sm_count, stream, false)
                                : run<uint64_t>(a, sm_count, stream, false);
}
#endif /* FALCON_GPU_EMULATION */
