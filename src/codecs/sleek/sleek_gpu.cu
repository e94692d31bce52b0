/* SLEEK lossless and lossy, CUDA backend. Persistent blocks take 16 KiB
 * chunks from an atomic ticket; a compressing block has 8 coder warps (each
 * owns 4 of the 32 subchunks: lane L holds 16 contiguous bytes of each) and
 * a writer warp that hashes, places and stores the encoded chunks; a
 * decoding block has the 8 warps only. Input is read once and output
 * written once; packing goes through shared memory, the output offset comes
 * from the decoupled look-back, so one kernel does it all. Transforms and
 * layout: sleek_xform.h, shared with the CPU backend. */
#include <cuda_pipeline_primitives.h>

#include "../../gpu/fz_gpu.cuh"
#include "../../common/fz_bound.h"
#include "sleek_xform.h"

namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr int kSubsPerWarp = SLEEK_SUBS / kWarps; /* 4 */

/* Compression is warp-specialized: 8 coder warps load and encode chunks,
 * a ninth, the writer, resolves each chunk's offset by the look-back,
 * hashes it, puts its table entry and stores it, so that no coder waits
 * for the look-back's L2 round trips (that barrier held a third of the
 * encoder's warp samples, run s185). Buffers change hands through
 * mbarriers (CompressShared); kBarCoders is the coders' own named
 * barrier. */
constexpr int kCompressThreads = kThreads + 32;
constexpr int kWriterWarp = kWarps;
constexpr int kBarCoders = 1;

/* Threads that reduce a range together: a whole block (barrier 0), or the
 * compression kernel's coder warps (kBarCoders). */
struct Group {
    int bar, threads;
    __device__ void sync() const {
        if (bar == 0)
            __syncthreads();
        else
            fz_bar_sync(bar, threads);
    }
};
__device__ Group whole_block() {
    return Group{0, (int)blockDim.x};
}

/* Per-type constants and the shared transforms. */
template <typename T> struct Word;
template <> struct Word<uint32_t> {
    static __device__ uint32_t warp_or(uint32_t x) {
        return __reduce_or_sync(FZ_FULL_MASK, x);
    }
};
template <> struct Word<uint64_t> {
    static __device__ uint64_t warp_or(uint64_t x) {
        uint32_t lo = __reduce_or_sync(FZ_FULL_MASK, (uint32_t)x);
        uint32_t hi = __reduce_or_sync(FZ_FULL_MASK, (uint32_t)(x >> 32));
        return (uint64_t)hi << 32 | lo;
    }
};

/* The per-value mapping of a launch: lossless transform or quantizer.
 * Compression instantiates it with a constant `lossless`, so per-value
 * code never tests it. */
template <typename T> struct Map;
template <> struct Map<uint32_t> {
    bool lossless;
    sleek_q32 q;
    sleek_fscale32 fs;
    __device__ Map(bool l, int32_t k)
        : lossless(l), q(sleek_q32_make(k)), fs(sleek_fscale32_make(q)) {}
    __device__ uint32_t fwd(uint32_t x) const {
        return lossless ? sleek_fwd32(x) : sleek_quant32_fp(x, q, fs);
    }
    __device__ uint32_t inv(uint32_t x) const {
        return lossless ? sleek_inv32(x) : sleek_dequant32(x, q);
    }
    /* inv, and *invalid |= 1 for a code the quantizer cannot produce */
    __device__ uint32_t inv_checked(uint32_t x, uint32_t *invalid) const {
        return lossless ? sleek_inv32(x)
                        : sleek_dequant32_checked(x, q, invalid);
    }
    /* lossy: codes below kBinCodes dequantize by inv_bin */
    static constexpr uint32_t kBinCodes = SLEEK_BIN_CODES32;
    __device__ bool bins_direct() const {
        return sleek_bins_direct32(q);
    }
    __device__ uint32_t inv_bin(uint32_t x) const {
        return sleek_dequant32_bin(x, sleek_bin_scale32(q));
    }
};
template <> struct Map<uint64_t> {
    bool lossless;
    sleek_q64 q;
    sleek_fscale64 fs;
    __device__ Map(bool l, int32_t k)
        : lossless(l), q(sleek_q64_make(k)), fs(sleek_fscale64_make(q)) {}
    __device__ uint64_t fwd(uint64_t x) const {
        return lossless ? sleek_fwd64(x) : sleek_quant64_fp(x, q, fs);
    }
    __device__ uint64_t inv(uint64_t x) const {
        return lossless ? sleek_inv64(x) : sleek_dequant64(x, q);
    }
    __device__ uint64_t inv_checked(uint64_t x, uint32_t *invalid) const {
        return lossless ? sleek_inv64(x)
                        : sleek_dequant64_checked(x, q, invalid);
    }
    static constexpr uint64_t kBinCodes = SLEEK_BIN_CODES64;
    __device__ bool bins_direct() const {
        return sleek_bins_direct64(q);
    }
    __device__ uint64_t inv_bin(uint64_t x) const {
        return sleek_dequant64_bin(x, sleek_bin_scale64(q));
    }
};

template <typename T> struct Layout {
    static constexpr int TB = 8 * sizeof(T);
    static constexpr int V = SLEEK_SUB_BYTES / sizeof(T); /* per subchunk */
    static constexpr int VPL = V / 32;                    /* per lane */
};

/* REL speculation (fz_sleek_gpu_compress). Ranges travel as
 * order-preserving integer keys of a value's bits (NaN excluded by the
 * callers), published as the largest key and the largest complemented key
 * by one atomicMax pair per warp: integer max is exact and order-free, so
 * the range is that of a min/max over doubles (but for the sign of a zero,
 * which the bound ignores). */
__device__ __forceinline__ uint32_t order_key(uint32_t b) {
    return b >> 31 ? ~b : b | 0x80000000u;
}
__device__ __forceinline__ uint64_t order_key(uint64_t b) {
    return b >> 63 ? ~b : b | 0x8000000000000000ull;
}
/* 0 for NaN and infinities: only finite values count. */
__device__ __forceinline__ uint32_t finite_key(uint32_t b) {
    return (b & 0x7F800000u) == 0x7F800000u ? 0 : order_key(b);
}
__device__ __forceinline__ uint64_t finite_key(uint64_t b) {
    return (b & 0x7FF0000000000000ull) == 0x7FF0000000000000ull ? 0
                                                                : order_key(b);
}

__device__ void warp_max_keys(unsigned long long *h, unsigned long long *l) {
    for (int d = 16; d > 0; d >>= 1) {
        const unsigned long long oh = __shfl_xor_sync(FZ_FULL_MASK, *h, d);
        const unsigned long long ol = __shfl_xor_sync(FZ_FULL_MASK, *l, d);
        *h = oh > *h ? oh : *h;
        *l = ol > *l ? ol : *l;
    }
}

/* The block's largest keys by one atomicMax pair (a pair per warp queued
 * thousands of same-address atomics at the L2 at the end of a pass). Every
 * thread of the group (warps 0 up) calls it, once per kernel. */
__device__ void publish_keys(fz_gpu_scratch *s, unsigned long long h,
                             unsigned long long l, const Group &g) {
    __shared__ unsigned long long part[2][32];
    const unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    warp_max_keys(&h, &l);
    if (lane == 0) {
        part[0][warp] = h;
        part[1][warp] = l;
    }
    g.sync();
    if (warp != 0)
        return;
    const bool mine = lane < g.threads / 32;
    h = mine ? part[0][lane] : 0;
    l = mine ? part[1][lane] : 0;
    warp_max_keys(&h, &l);
    if (lane == 0 && h) {
        atomicMax(&s->key_hi, h);
        atomicMax(&s->key_lo_inv, l);
    }
}

/* Whether this block is the grid's last to get here, after every thread
 * of it made its global writes and atomics (block barrier, then thread
 * 0's fence and count: CUDA's threadFenceReduction pattern), so that one
 * kernel's last block can do what a one-thread kernel after it did. The
 * last block clears the count for the call's next kernel. */
__device__ bool last_block(fz_gpu_scratch *s, const Group &g) {
    __shared__ unsigned int last;
    g.sync();
    if (threadIdx.x == 0) {
        __threadfence();
        last = atomicAdd(&s->blocks_done, 1u) == gridDim.x - 1;
        if (last)
            s->blocks_done = 0;
    }
    g.sync();
    return last;
}

/* A thread's running range of finite values (keys; 0 = none yet). */
template <typename T> struct RangeKeys {
    T hi = 0, lo_inv = 0;
    __device__ void add(T bits) {
        const T k = finite_key(bits);
        hi = k > hi ? k : hi;
        const T inv = k ? (T)~k : (T)0;
        lo_inv = inv > lo_inv ? inv : lo_inv;
    }
    __device__ void publish(fz_gpu_scratch *s) const {
        publish_keys(s, hi, lo_inv, whole_block());
    }
};

/* The compression pass's running range: two float min/max instructions
 * per value (NaN is ignored by fmin/fmax; the build keeps subnormals, no
 * -ftz). Infinities are not excluded: when one is seen, the check falls
 * back to an exact pass over the finite values. */
template <typename T> struct TrackedRange;
template <> struct TrackedRange<uint32_t> {
    float lo = INFINITY, hi = -INFINITY;
    __device__ void add(uint32_t b) {
        const float f = __uint_as_float(b);
        lo = fminf(lo, f);
        hi = fmaxf(hi, f);
    }
    __device__ void publish(fz_gpu_scratch *s, const Group &g) const {
        publish_keys(s, order_key(__float_as_uint(hi)),
                     (uint32_t)~order_key(__float_as_uint(lo)), g);
    }
};
/* Double fmin/fmax cost about ten instructions each (NaN quieting); a
 * compare and a select ignore NaN just as well (it compares false). */
template <> struct TrackedRange<uint64_t> {
    double lo = HUGE_VAL, hi = -HUGE_VAL;
    __device__ void add(uint64_t b) {
        const double f = __longlong_as_double((long long)b);
        lo = f < lo ? f : lo;
        hi = f > hi ? f : hi;
    }
    __device__ void publish(fz_gpu_scratch *s, const Group &g) const {
        publish_keys(s, order_key((uint64_t)__double_as_longlong(hi)),
                     ~order_key((uint64_t)__double_as_longlong(lo)), g);
    }
};

/* The range from the published keys; nothing published gives lo > hi,
 * as the CUB reduction's neutral pair would. */
__device__ void range_from_keys(const fz_gpu_scratch *s, bool f32, double *lo,
                                double *hi) {
    /* from the L2, where every block's atomics went */
    const unsigned long long key_hi = fz_ld_volatile(&s->key_hi),
                             key_lo_inv = fz_ld_volatile(&s->key_lo_inv);
    if (!key_hi) {
        *lo = 1.7976931348623157e308;
        *hi = -*lo;
        return;
    }
    if (f32) {
        const uint32_t kh = (uint32_t)key_hi, kl = ~(uint32_t)key_lo_inv;
        *hi = (double)__uint_as_float(kh >> 31 ? kh & 0x7FFFFFFFu : ~kh);
        *lo = (double)__uint_as_float(kl >> 31 ? kl & 0x7FFFFFFFu : ~kl);
    } else {
        const uint64_t kh = key_hi, kl = ~key_lo_inv;
        *hi = __longlong_as_double(
            (long long)(kh >> 63 ? kh & 0x7FFFFFFFFFFFFFFFull : ~kh));
        *lo = __longlong_as_double(
            (long long)(kl >> 63 ? kl & 0x7FFFFFFFFFFFFFFFull : ~kl));
    }
}

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

/* Bit packing on 32-bit words (the stream is LSB-first, so any word size
 * gives the same bytes). A lane's values are contiguous in the stream:
 * lane L's value e starts at bit (L * VPL + e) * n, so its VPL x n <= 128
 * bits form one 128-bit field hi:lo, built branch-free (saturating shifts
 * cover the full-width cases). The field is ORed in at bit p0 as five
 * words, of which only the first and the last can be shared with a
 * neighbouring lane, hence atomics into a zeroed region (was: a test and up
 * to two atomics per value). A word that is 0 goes to the thread's own
 * `sink` word instead (shared-window addresses), so that every atomic is
 * issued: `if (y) atomicOr` (or a predicated red) became a branch around
 * each atomic, five branch instructions apiece, 7% of the encoder's
 * instructions (run s182); and ORing the zeros in place queued many lanes
 * of a narrow subchunk on the same word (f64 at CR 13: -22%, run s183). */
__device__ void or_bits128(uint64_t lo, uint64_t hi, uint32_t p0, uint32_t *w,
                           uint32_t sink) {
    const uint32_t q = p0 >> 5, s = p0 & 31;
    const uint32_t x0 = (uint32_t)lo, x1 = (uint32_t)(lo >> 32),
                   x2 = (uint32_t)hi, x3 = (uint32_t)(hi >> 32);
    const uint32_t y[5] = {
        x0 << s, __funnelshift_l(x0, x1, s), __funnelshift_l(x1, x2, s),
        __funnelshift_l(x2, x3, s), __funnelshift_l(x3, 0u, s)};
    const uint32_t at = (uint32_t)__cvta_generic_to_shared(w + q);
#pragma unroll
    for (int k = 0; k < 5; k++)
        asm volatile(
            "red.shared.or.b32 [%0], %1;" ::"r"(y[k] ? at + 4 * k : sink),
            "r"(y[k])
            : "memory");
}

__device__ void pack_lane(const uint32_t (&t)[4], uint32_t n, uint32_t *w,
                          uint32_t sink) {
    const uint64_t a = t[0] | (uint64_t)t[1] << n; /* n <= 32 */
    const uint64_t b = t[2] | (uint64_t)t[3] << n;
    or_bits128(a | sleek_shl64_sat(b, 2 * n), sleek_shr64_sat(b, 64 - 2 * n),
               (threadIdx.x & 31) * 4 * n, w, sink);
}

__device__ void pack_lane(const uint64_t (&t)[2], uint32_t n, uint32_t *w,
                          uint32_t sink) {
    or_bits128(t[0] | sleek_shl64_sat(t[1], n), sleek_shr64_sat(t[1], 64 - n),
               (threadIdx.x & 31) * 2 * n, w, sink);
}

/* A word of shared memory by its shared-window address. */
__device__ __forceinline__ uint32_t ld_shared(uint32_t at) {
    uint32_t x;
    asm volatile("ld.shared.u32 %0, [%1];" : "=r"(x) : "r"(at));
    return x;
}

/* A lane's four f32 codes as two pairs: a pair's 2n <= 64 bits come from
 * at most three words as one 64-bit window, split by one more funnel shift
 * (was one window per code: 13 of the lossy decoder's ~50 instructions per
 * value, run s185). Words past the subchunk's last hold no bits of the
 * pair: clamping their addresses keeps the loads inside it, unpredicated. */
__device__ void unpack_lane(const uint32_t *w, uint32_t n, uint32_t (&t)[4]) {
    const uint32_t mask = n == 32 ? ~0u : (1u << n) - 1;
    const uint32_t base = (uint32_t)__cvta_generic_to_shared(w),
                   end = base + 16 * n - 4; /* the last of 4n words */
    uint32_t p = (threadIdx.x & 31) * 4 * n;
#pragma unroll
    for (int e = 0; e < 4; e += 2, p += 2 * n) {
        const uint32_t at = base + (p >> 5) * 4, sh = p & 31;
        const uint32_t w0 = ld_shared(at), w1 = ld_shared(min(at + 4, end)),
                       w2 = ld_shared(min(at + 8, end));
        const uint32_t lo = __funnelshift_r(w0, w1, sh),
                       hi = __funnelshift_r(w1, w2, sh);
        t[e] = lo & mask;
        t[e + 1] = __funnelshift_rc(lo, hi, n) & mask;
    }
}

/* A lane's two f64 codes, each a 64-bit window of three words, clamped to
 * the subchunk's 2n words as for f32. */
__device__ void unpack_lane(const uint32_t *w, uint32_t n, uint64_t (&t)[2]) {
    const uint64_t mask = n == 64 ? ~0ull : (1ull << n) - 1;
    const uint32_t base = (uint32_t)__cvta_generic_to_shared(w),
                   end = base + 8 * n - 4; /* the last of 2n words */
    uint32_t p = (threadIdx.x & 31) * 2 * n;
#pragma unroll
    for (int e = 0; e < 2; e++, p += n) {
        const uint32_t at = base + (p >> 5) * 4, sh = p & 31;
        const uint32_t w0 = ld_shared(at), w1 = ld_shared(min(at + 4, end)),
                       w2 = ld_shared(min(at + 8, end));
        const uint32_t lo = __funnelshift_r(w0, w1, sh),
                       hi = __funnelshift_r(w1, w2, sh);
        t[e] = ((uint64_t)hi << 32 | lo) & mask;
    }
}

/* Store this lane's values of subchunk s (only those below nvals); `whole`
 * (block-uniform): a full chunk at a 16-byte aligned `out`, where every
 * lane's 16 bytes are one aligned store. */
template <typename T>
__device__ void store_lane(uint8_t *out, uint32_t nvals, int s,
                           const T (&v)[Layout<T>::VPL], bool whole) {
    typedef Layout<T> L;
    const uint32_t i0 = s * L::V + (threadIdx.x & 31) * L::VPL;
    T *o = reinterpret_cast<T *>(out);
    if (whole) {
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

/* Zero bytes [first, last) of a chunk buffer with one warp: a warp's four
 * subchunks, at most 2 KiB. Packed subchunks are width x 16 (f32) or
 * width x 8 (f64) bytes after the 32-byte widths table, so both ends are
 * multiples of that. Unrolled to the bound with predicated stores (the loop
 * was 3% of the encoder's instructions, run s182). */
template <typename T>
__device__ void zero_span(uint8_t *buf, uint32_t first, uint32_t last) {
    constexpr uint32_t kPiece = sizeof(T) == 4 ? 16 : 8;
    constexpr uint32_t kMax = kSubsPerWarp * SLEEK_SUB_BYTES / kPiece / 32;
    const uint32_t lane = threadIdx.x & 31;
#pragma unroll
    for (uint32_t r = 0; r < kMax; r++) {
        const uint32_t i = first / kPiece + lane + 32 * r;
        if (i < last / kPiece) {
            if (sizeof(T) == 4)
                reinterpret_cast<uint4 *>(buf)[i] = make_uint4(0, 0, 0, 0);
            else
                reinterpret_cast<unsigned long long *>(buf)[i] = 0;
        }
    }
}

/* Partial checksum of this lane's values of its warp's subchunks (the
 * decoded bytes: version-1 streams): word positions are value indices (x2
 * for f64). Full chunks skip the bounds test, a large share of the
 * per-value work. */
template <typename T>
__device__ uint32_t lane_hash(const T (&v)[kSubsPerWarp][Layout<T>::VPL],
                              uint32_t nvals) {
    typedef Layout<T> L;
    const uint32_t base =
        (threadIdx.x >> 5) * kSubsPerWarp * L::V + (threadIdx.x & 31) * L::VPL;
    uint32_t h = 0;
    if (nvals == SLEEK_CHUNK_BYTES / sizeof(T)) {
#pragma unroll
        for (int j = 0; j < kSubsPerWarp; j++)
#pragma unroll
            for (int e = 0; e < L::VPL; e++)
                h += fz_gpu_sum<FZ_SUM_MIX>::term(v[j][e], base + j * L::V + e);
    } else {
#pragma unroll
        for (int j = 0; j < kSubsPerWarp; j++)
#pragma unroll
            for (int e = 0; e < L::VPL; e++)
                if (base + j * L::V + e < nvals)
                    h += fz_gpu_sum<FZ_SUM_MIX>::term(v[j][e],
                                                      base + j * L::V + e);
    }
    return h;
}

/* This lane's values of its warp's subchunks into its running range
 * (the zero padding of a partial last chunk left out). */
template <typename T>
__device__ void lane_range(const T (&v)[kSubsPerWarp][Layout<T>::VPL],
                           uint32_t nvals, TrackedRange<T> *range) {
    typedef Layout<T> L;
    const uint32_t base =
        (threadIdx.x >> 5) * kSubsPerWarp * L::V + (threadIdx.x & 31) * L::VPL;
    /* full chunks (all but a partial last one) without the per-value
     * index test, which cost as much as the min/max (f32 REL compression
     * +3%, run s135; predicated f64 selects also need moves) */
    if (nvals == SLEEK_CHUNK_BYTES / sizeof(T)) {
#pragma unroll
        for (int j = 0; j < kSubsPerWarp; j++)
#pragma unroll
            for (int e = 0; e < L::VPL; e++)
                range->add(v[j][e]);
        return;
    }
#pragma unroll
    for (int j = 0; j < kSubsPerWarp; j++)
#pragma unroll
        for (int e = 0; e < L::VPL; e++)
            if (base + j * L::V + e < nvals)
                range->add(v[j][e]);
}

/* The checksum terms (of kind kKind) of 16-byte piece i of a shared
 * region. */
template <int kKind>
__device__ typename fz_gpu_sum<kKind>::Acc piece_sum(const uint8_t *buf,
                                                     uint32_t i) {
    typedef fz_gpu_sum<kKind> Sum;
    const uint4 q = reinterpret_cast<const uint4 *>(buf)[i];
    return Sum::term(q.x, 4 * i) + Sum::term(q.y, 4 * i + 1) +
           Sum::term(q.z, 4 * i + 2) + Sum::term(q.w, 4 * i + 3);
}

/* Thread t's part (of NT threads) of the checksum of kind kKind of a
 * 16-byte-aligned shared region of `bytes` (a multiple of 4, at most a
 * chunk), word positions from its start: 16-byte pieces, then the last
 * words. The decoder (kUnrolled) runs the pieces' loop to its bound
 * unrolled, every load issued before the first term (lossy decompression
 * +0-1.5%, run s113); the encoder's writer warp (NT = 32) keeps the loop
 * that stops at the last piece. */
template <int kKind, uint32_t NT, bool kUnrolled>
__device__ typename fz_gpu_sum<kKind>::Acc
region_sum(const uint8_t *buf, uint32_t bytes, uint32_t t) {
    static_assert(NT >= 3, "the last words (at most 3): one per thread");
    typedef fz_gpu_sum<kKind> Sum;
    const uint32_t pieces = bytes / 16;
    typename Sum::Acc h = 0;
    if constexpr (kUnrolled) {
#pragma unroll
        for (uint32_t r = 0; r < (SLEEK_CHUNK_BYTES / 16 + NT - 1) / NT; r++)
            if (t + r * NT < pieces)
                h += piece_sum<kKind>(buf, t + r * NT);
    } else {
        for (uint32_t i = t; i < pieces; i += NT)
            h += piece_sum<kKind>(buf, i);
    }
    const uint32_t i = pieces * 4 + t;
    if (i < bytes / 4)
        h += Sum::term(reinterpret_cast<const uint32_t *>(buf)[i], i);
    return h;
}

/* Block-wide sum mod 2^64 of one value per thread, valid in thread 0. */
__device__ uint64_t block_sum_to_thread0(uint64_t x, unsigned long long *sm) {
    x = fz_gpu_warp_sum64(x);
    if ((threadIdx.x & 31) == 0)
        sm[threadIdx.x >> 5] = x;
    __syncthreads();
    uint64_t total = 0;
    if (threadIdx.x == 0)
        for (int w = 0; w < kWarps; w++)
            total += sm[w];
    return total;
}

/* Copy `bytes` (a multiple of 4) from shared to global by one warp:
 * 16-byte pieces when aligned, else 8-byte, and the odd last word of a
 * partial last chunk. */
__device__ void copy_out(const uint8_t *buf, uint8_t *dst, uint32_t bytes) {
    const uint32_t lane = threadIdx.x & 31;
    uint32_t done;
    if (((uintptr_t)dst & 15) == 0) {
        done = bytes / 16 * 16;
        for (uint32_t i = lane; i < bytes / 16; i += 32)
            __stcs(reinterpret_cast<uint4 *>(dst) + i,
                   reinterpret_cast<const uint4 *>(buf)[i]);
    } else {
        done = bytes / 8 * 8;
        for (uint32_t i = lane; i < bytes / 8; i += 32)
            reinterpret_cast<unsigned long long *>(dst)[i] =
                reinterpret_cast<const unsigned long long *>(buf)[i];
    }
    for (uint32_t i = done + 4 * lane; i < bytes; i += 4 * 32)
        *reinterpret_cast<uint32_t *>(dst + i) =
            *reinterpret_cast<const uint32_t *>(buf + i);
}

__device__ uint64_t chunk_raw_bytes(uint64_t original, uint64_t c) {
    uint64_t left = original - c * SLEEK_CHUNK_BYTES;
    return left < SLEEK_CHUNK_BYTES ? left : SLEEK_CHUNK_BYTES;
}

/* Shared memory of a compressing block. One raw buffer and two output
 * buffers (three 16 KiB buffers let 4 blocks share an SM): the coders read
 * a chunk from `raw` into registers, then the next chunk loads into it
 * while they pack this one into out[i], which the store two chunks back
 * has freed; so a load never waits for a store, and the look-back of a
 * chunk has until the chunk after next is packed. */
struct __align__(16) CompressShared {
    uint8_t raw[SLEEK_CHUNK_BYTES];
    uint8_t out[2][SLEEK_WIDTHS_BYTES + SLEEK_CHUNK_BYTES + 16];
    uint8_t widths[SLEEK_SUBS];
    uint32_t sink[kThreads];      /* a coder's target for atomics of 0 */
    unsigned long long raw_chunk; /* raw's chunk (chunk_count: the end) */
    unsigned long long chunk[2];  /* out[i]'s chunk (chunk_count: the end) */
    uint32_t size[2];             /* its encoded size */
    /* Handoffs, each completing once per chunk: `full` (coder warp 0's 32
     * lanes; on sm_90 also the bulk load's bytes): raw_chunk and its bytes
     * are in `raw`; sized[i] (coder 0): chunk[i] and size[i] are set, the
     * writer starts the look-back; encoded[i] (all coders): out[i] is
     * complete; stored[i] (the writer's lanes): out[i]'s table entry is in
     * and out[i] may be packed again. */
    unsigned long long full, sized[2], encoded[2], stored[2];
};
/* Decoding streams the next chunk in while this one is decoded (a third
 * stage was measured: no gain). */
constexpr int kDecodeStages = 2;
struct __align__(16) DecodeShared {
    uint8_t stage[kDecodeStages][SLEEK_CHUNK_BYTES]; /* stored chunks */
    unsigned long long hash[kWarps];           /* checksum sums of the warps */
    unsigned long long next, next_lo, next_hi; /* chunk, its offsets */
    uint32_t next_want;                        /* its stored checksum */
    uint32_t stage_size[kDecodeStages], stage_want[kDecodeStages],
        stage_ok[kDecodeStages];
    fz_header hdr; /* the stream's header, validated */
    int stream_ok;
    unsigned long long landed[kDecodeStages]; /* mbarrier: bulk loads */
};

/* 16 bytes of shared memory into a lane's values. */
template <typename T>
__device__ void load16(const uint8_t *p, T (&v)[Layout<T>::VPL]) {
    uint4 q = *reinterpret_cast<const uint4 *>(p);
    memcpy(v, &q, 16);
}

/* Bytes [at, at + 16) of chunk `in` (raw bytes long) into the stage,
 * zeros past raw. */
__device__ void stage_tail_piece(const uint8_t *in, uint32_t raw, uint32_t at,
                                 uint8_t *stage) {
    uint32_t w[4];
#pragma unroll
    for (int k = 0; k < 4; k++)
        w[k] = at + 4 * k < raw ? reinterpret_cast<const uint32_t *>(in + at)[k]
                                : 0;
    *reinterpret_cast<uint4 *>(stage + at) = make_uint4(w[0], w[1], w[2], w[3]);
}

__device__ uint32_t next_ticket(const fz_gpu_args &a) {
    return atomicAdd(&a.scratch->ticket, 1u);
}

/* Coder warp 0's load of chunk c into bs.raw (c >= chunk_count: the end
 * mark, nothing loaded), completing bs.full. sm_90: lane 0 moves the
 * chunk's whole 16-byte pieces with one bulk load; the rest of a partial
 * last chunk (the piece holding its end, zeros after it) is staged by the
 * warp's plain stores, which each lane's arrival publishes. Older GPUs: the
 * lanes copy every piece with cp.async and wait for them before arriving.
 * Every coder has read `raw` and fenced its reads (the caller). */
__device__ void load_raw(const fz_gpu_args &a, CompressShared &bs,
                         unsigned long long c) {
    const fz_header &h = a.expect;
    const uint32_t lane = threadIdx.x & 31;
    if (lane == 0)
        bs.raw_chunk = c;
    if (c < h.chunk_count) {
        const uint32_t raw = (uint32_t)chunk_raw_bytes(h.original_bytes, c);
        const uint8_t *in = a.src + c * SLEEK_CHUNK_BYTES;
        if constexpr (FZ_GPU_BULK) {
            const uint32_t whole = raw & ~15u;
            if (raw != SLEEK_CHUNK_BYTES)
                for (uint32_t at = whole + 16 * lane; at < SLEEK_CHUNK_BYTES;
                     at += 16 * 32)
                    stage_tail_piece(in, raw, at, bs.raw);
            if (lane == 0) {
                fz_mbar_expect(&bs.full, whole); /* lane 0's arrival */
                if (whole)
                    fz_bulk_load(bs.raw, in, whole, &bs.full);
                return;
            }
        } else {
            for (uint32_t at = 16 * lane; at < SLEEK_CHUNK_BYTES; at += 16 * 32)
                if (at + 16 <= raw)
                    __pipeline_memcpy_async(bs.raw + at, in + at, 16);
                else
                    stage_tail_piece(in, raw, at, bs.raw);
            __pipeline_commit();
            __pipeline_wait_prior(0);
        }
    }
    fz_mbar_arrive(&bs.full);
}

/* The checksum the encoders write: version 3's square sum of the payload. */
constexpr int kWriteSum = FZ_SUM_SQUARE;
typedef fz_gpu_sum<kWriteSum> WriteSum;
static_assert(SLEEK_CODEC_VERSION == 3, "the encoder's checksum kind");

/* The writer warp: for each chunk the coders size, resolve its offset by
 * the look-back (while they pack it), then, once it is encoded, put its
 * table entry, store it and hand its buffer back. Stops at the end mark. */
__device__ void write_chunks(const fz_gpu_args &a, CompressShared &bs) {
    const uint32_t lane = threadIdx.x & 31;
    const uint64_t count = a.expect.chunk_count;
    const bool checksums = a.expect.flags & FZ_HDR_FLAG_CHECKSUMS;
    for (uint32_t j = 0;; j++) {
        const int i = j & 1;
        const uint32_t phase = (j >> 1) & 1;
        fz_mbar_wait(&bs.sized[i], phase);
        const unsigned long long c = bs.chunk[i];
        if (c >= count)
            break;
        const uint32_t size = bs.size[i];
        const unsigned long long excl =
            fz_lookback_resolve(a.lookback, c, size);
        const uint64_t at = a.payload_off + excl;
        fz_mbar_wait(&bs.encoded[i], phase);
        uint32_t checksum = 0;
        if (checksums)
            checksum = WriteSum::warp_final(
                region_sum<kWriteSum, 32, false>(bs.out[i], size, lane),
                size / 4);
        if (lane == 0) {
            fz_gpu_put_checksum(a, c, size, checksum);
            if (c == count - 1)
                a.scratch->payload_total = excl + size;
        }
        if (at + size > a.dst_capacity) {
            if (lane == 0)
                fz_gpu_fail(a.scratch, FZS_DST_TOO_SMALL);
        } else if (FZ_GPU_BULK &&
                   (((uintptr_t)(a.dst + at) | size) & 15) == 0) {
            /* one bulk store where both ends are 16-byte aligned (f32
             * chunks but a partial last one; f64 chunks at an aligned
             * offset) */
            if (lane == 0) {
                fz_bulk_store(a.dst + at, bs.out[i], size);
                fz_bulk_stores_read();
            }
        } else {
            copy_out(bs.out[i], a.dst + at, size);
        }
        __syncwarp();
        fz_mbar_arrive(&bs.stored[i]);
    }
    if (FZ_GPU_BULK && lane == 0)
        fz_bulk_stores_done(); /* the block's shared memory stays till then */
}

/* Which compression launch: lossless or ABS (kPlain); REL on a sampled
 * bound, tracking the range (kTrack); REL again after a miss (kRedo: every
 * block leaves at once unless the check asked for it). */
enum Pass { kPlain, kTrack, kRedo };

/* Transform this lane's values of its warp's subchunks in place and store
 * the subchunk widths into `widths`. */
template <typename T>
__device__ void transform_lane(T (&v)[kSubsPerWarp][Layout<T>::VPL],
                               const Map<T> &map, uint8_t *widths,
                               uint32_t (&width)[kSubsPerWarp]) {
    typedef Layout<T> L;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
    for (int j = 0; j < kSubsPerWarp; j++) {
        T any = 0;
#pragma unroll
        for (int e = 0; e < L::VPL; e++) {
            v[j][e] = map.fwd(v[j][e]);
            any |= v[j][e];
        }
        const T all = Word<T>::warp_or(any);
        width[j] = L::TB - (sizeof(T) == 4 ? fz_clz32((uint32_t)all)
                                           : fz_clz64((uint64_t)all));
        if (lane == 0)
            widths[warp * kSubsPerWarp + j] = (uint8_t)width[j];
    }
}

/* REL's tracking pass ends here (defined with the bound's kernels). */
template <typename T>
__device__ void publish_and_confirm(const fz_gpu_args &a,
                                    const TrackedRange<T> &range);

/* The coder warps' loop; QUANT: the quantizer (the lossy bound resolved
 * on the device), else the lossless transform. A template parameter so
 * that no per-value code tests the mapping. Coder 0 takes the tickets, one
 * chunk ahead (the atomic's latency off the path), warp 0 loads them. */
template <typename T, bool QUANT, Pass PASS>
__device__ __forceinline__ void encode_chunks(const fz_gpu_args &a,
                                              CompressShared &bs,
                                              TrackedRange<T> *range) {
    typedef Layout<T> L;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const fz_header &h = a.expect;
    const Map<T> map(!QUANT, QUANT ? a.scratch->bound_k : 0);
    const uint32_t sink =
        (uint32_t)__cvta_generic_to_shared(&bs.sink[threadIdx.x]);
    uint32_t ticket = 0; /* the scratch's ticket counter is 32-bit */
    if (warp == 0) {
        if (lane == 0)
            ticket = next_ticket(a);
        load_raw(a, bs, __shfl_sync(FZ_FULL_MASK, ticket, 0));
        if (lane == 0)
            ticket = next_ticket(a);
    }
    for (uint32_t j = 0;; j++) {
        const int i = j & 1;
        fz_mbar_wait(&bs.full, j & 1);
        const uint64_t c = bs.raw_chunk;
        if (c >= h.chunk_count) { /* tell the writer, after its last use */
            if (threadIdx.x == 0) {
                fz_mbar_wait(&bs.stored[i], ((j >> 1) & 1) ^ 1);
                bs.chunk[i] = c;
                fz_mbar_arrive(&bs.sized[i]);
                /* the tracking pass: the last chunk stored, so its table
                 * entry is in before the range check (thread 0 counts the
                 * block) can reset the call's table sum for a redo */
                if (PASS == kTrack && j > 0)
                    fz_mbar_wait(&bs.stored[i ^ 1], ((j - 1) >> 1) & 1);
            }
            break;
        }
        const uint64_t raw = chunk_raw_bytes(h.original_bytes, c);
        const uint32_t nvals = (uint32_t)(raw / sizeof(T));
        T v[kSubsPerWarp][L::VPL];
        uint32_t width[kSubsPerWarp];
#pragma unroll
        for (int k = 0; k < kSubsPerWarp; k++)
            load16<T>(bs.raw + (warp * kSubsPerWarp + k) * SLEEK_SUB_BYTES +
                          lane * 16,
                      v[k]);
        if constexpr (FZ_GPU_BULK)
            fz_fence_proxy_async(); /* our reads of raw, before its reload */
        /* every coder holds its values: raw takes the next chunk */
        fz_bar_sync(kBarCoders, kThreads);
        if (warp == 0) {
            load_raw(a, bs, __shfl_sync(FZ_FULL_MASK, ticket, 0));
            if (lane == 0)
                ticket = next_ticket(a);
        }
        if (PASS == kTrack)
            lane_range(v, nvals, range);
        transform_lane<T>(v, map, bs.widths, width);
        fz_bar_sync(kBarCoders, kThreads); /* every width is in bs.widths */
        uint32_t my_off;
        uint32_t size = subchunk_offsets<T>(bs.widths[lane], &my_off);
        const bool verbatim = size >= raw;
        if (verbatim)
            size = (uint32_t)raw;
        if (threadIdx.x == 0)
            fz_lookback_publish(a.lookback, c, size);
        /* out[i] once the store two chunks back has read it (the first two
         * chunks find it free: the parity before the first phase) */
        const uint32_t free_phase = ((j >> 1) & 1) ^ 1;
        fz_mbar_wait(&bs.stored[i], free_phase);
        if (threadIdx.x == 0) {
            bs.chunk[i] = c;
            bs.size[i] = size;
            fz_mbar_arrive(&bs.sized[i]);
        }
        uint8_t *out = bs.out[i];
        if (verbatim) { /* what decoding returns: input or reconstruction */
#pragma unroll
            for (int k = 0; k < kSubsPerWarp; k++) {
#pragma unroll
                for (int e = 0; e < L::VPL; e++)
                    v[k][e] = map.inv(v[k][e]);
                uint4 q;
                memcpy(&q, v[k], 16);
                *reinterpret_cast<uint4 *>(
                    out + (warp * kSubsPerWarp + k) * SLEEK_SUB_BYTES +
                    lane * 16) = q;
            }
        } else { /* zero this warp's region, then OR the packed bits in */
            if (warp == 0)
                out[lane] = bs.widths[lane];
            const int sub0 = warp * kSubsPerWarp;
            const uint32_t first = __shfl_sync(FZ_FULL_MASK, my_off, sub0);
            const uint32_t last =
                __shfl_sync(FZ_FULL_MASK, my_off, sub0 + kSubsPerWarp - 1) +
                width[kSubsPerWarp - 1] * L::V / 8;
            zero_span<T>(out, first, last);
            __syncwarp();
#pragma unroll
            for (int k = 0; k < kSubsPerWarp; k++) {
                const uint32_t off =
                    __shfl_sync(FZ_FULL_MASK, my_off, sub0 + k);
                if (width[k])
                    pack_lane(v[k], width[k],
                              reinterpret_cast<uint32_t *>(out + off), sink);
            }
        }
        /* no barrier here: the writer hashes out[i] once every coder has
         * arrived, and bs.widths, read above, is written again only after
         * the next chunk's first barrier */
        if constexpr (FZ_GPU_BULK)
            fz_fence_proxy_async(); /* for the bulk store */
        fz_mbar_arrive(&bs.encoded[i]);
    }
}

/* One compression launch: the writer warp and the coders, then (REL's
 * tracking pass) the range of everything read. */
template <typename T, bool QUANT, Pass PASS>
__device__ __forceinline__ void compress_chunks(const fz_gpu_args &a) {
    extern __shared__ __align__(16) uint8_t smem_raw[];
    CompressShared &bs = *reinterpret_cast<CompressShared *>(smem_raw);
    if (threadIdx.x == 0) {
        fz_mbar_init(&bs.full, 32);
        for (int i = 0; i < 2; i++) {
            fz_mbar_init(&bs.sized[i], 1);
            fz_mbar_init(&bs.encoded[i], kThreads);
            fz_mbar_init(&bs.stored[i], 32);
        }
    }
    __syncthreads();
    if ((threadIdx.x >> 5) == kWriterWarp) {
        write_chunks(a, bs);
        return;
    }
    TrackedRange<T> range;
    encode_chunks<T, QUANT, PASS>(a, bs, &range);
    if (PASS == kTrack)
        publish_and_confirm(a, range);
}

template <typename T, bool LOSSY, Pass PASS = kPlain>
__global__ void __launch_bounds__(kCompressThreads, 4)
    sleek_compress_kernel(const fz_gpu_args a) {
    if (PASS == kRedo && !a.scratch->redo)
        return;
    /* lossy launches read the bound resolved on the device (REL needs the
     * data's range); it may still say lossless */
    if (LOSSY && !a.scratch->bound_lossless)
        compress_chunks<T, true, PASS>(a);
    else
        compress_chunks<T, false, PASS>(a);
}

/* Thread 0's schedule (fz_gpu_ahead) hands the block its next chunk. */
__device__ void advance(fz_gpu_ahead &ahead, const fz_gpu_args &a,
                        const fz_header &h, DecodeShared &bs) {
    bs.next = ahead.take(a, h.flags, h.chunk_count, &bs.next_lo, &bs.next_hi,
                         &bs.next_want);
}

/* Decode prefetch: chunk c = bs.next's stored bytes into a stage. Where
 * it starts 16-byte aligned (every f32 chunk when the stream does, half the
 * f64 ones) and the GPU has bulk copies, thread 0 moves it by one bulk load
 * completing on bs.landed[s] and the call returns true (block-uniform);
 * else every thread copies 16/8/4-byte pieces, as alignment allows, with
 * cp.async. Thread 0 records the chunk's
 * size, validity and expected checksum, and hashes its table entry. */
__device__ bool prefetch_stored(const fz_gpu_args &a, const fz_header &h,
                                uint64_t c, DecodeShared &bs, int s) {
    if (c >= h.chunk_count)
        return false;
    const uint64_t raw = chunk_raw_bytes(h.original_bytes, c);
    const uint64_t off = bs.next_lo, size = bs.next_hi - off;
    /* valid streams keep chunks 8-byte aligned (only the last may end
     * elsewhere); checking keeps a hostile table from misaligned reads */
    const bool ok = size <= raw && off + size <= h.payload_bytes &&
                    (off & 7) == 0 && (size == raw || (size & 7) == 0);
    if (threadIdx.x == 0) {
        const uint32_t want = bs.next_want;
        fz_gpu_hash_entry(a, h.flags, c, (uint32_t)size, want);
        bs.stage_size[s] = (uint32_t)size;
        bs.stage_want[s] = want;
        bs.stage_ok[s] = ok;
        if (!ok)
            fz_gpu_fail(a.scratch, FZS_CORRUPT_CHUNK);
    }
    if (!ok)
        return false;
    const uint8_t *in = a.src + a.payload_off + off;
    uint8_t *st = bs.stage[s];
    /* the bulk load rounds the size up to 16 bytes (an f64 chunk may end
     * at 8 mod 16): what it reads past the chunk is payload, never used */
    const uint32_t span = ((uint32_t)size + 15u) & ~15u;
    if (FZ_GPU_BULK && size && ((uintptr_t)in & 15) == 0 &&
        off + span <= h.payload_bytes) {
        if (threadIdx.x == 0) {
            fz_mbar_expect(&bs.landed[s], span);
            fz_bulk_load(st, in, span, &bs.landed[s]);
        }
        return true;
    }
    const uint32_t piece = ((off | size) & 15) == 0  ? 16
                           : ((off | size) & 7) == 0 ? 8
                                                     : 4;
    for (uint32_t i = threadIdx.x * piece; i < size; i += kThreads * piece)
        __pipeline_memcpy_async(st + i, in + i, piece);
    return false;
}

/* The checksums a decode loop verifies: the current version's square sums
 * of the payload, or (kOlderSums) versions 1 and 2, told apart at run
 * time; a loop of its own for each, so that the common one carries no
 * other hash. */
enum DecodeSums { kCurrentSums, kOlderSums };

template <typename T, bool LOSSY, DecodeSums SUMS>
__device__ __forceinline__ void
decode_chunks(const fz_gpu_args &a, DecodeShared &bs, fz_gpu_ahead &ahead) {
    typedef Layout<T> L;
    constexpr uint32_t kChunkVals = SLEEK_CHUNK_BYTES / sizeof(T);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const fz_header &h = bs.hdr;
    int lossless;
    int32_t k;
    if (sleek_mapping_of(sizeof(T), h.mode ? h.bound_eff_bits : 0, &lossless,
                         &k)) {
        if (threadIdx.x == 0)
            fz_gpu_fail(a.scratch, FZS_CORRUPT_HEADER);
        return;
    }
    const Map<T> map(!LOSSY || lossless, k);
    const bool bins_direct = LOSSY && !map.lossless && map.bins_direct();
    const bool verify = a.verify && (h.flags & FZ_HDR_FLAG_CHECKSUMS);
    /* the stream's checksums: of the payload (else the decoded bytes), of
     * the loop's kind */
    constexpr int kSum = SUMS == kCurrentSums ? kWriteSum : FZ_SUM_MIX;
    const bool payload_sums =
        SUMS == kCurrentSums || sleek_payload_sums(h.codec_version);
    uint64_t c = bs.next;
    bool bulk = prefetch_stored(a, h, c, bs, 0); /* chunk c's */
    __pipeline_commit();
    __syncthreads();
    if (threadIdx.x == 0)
        advance(ahead, a, h, bs);
    uint32_t phases = 0; /* bit s: the parity of stage s's next bulk load */
    for (int s = 0; c < h.chunk_count; s ^= 1) {
        /* the PTX memory model orders this thread's reads of stage s ^ 1
         * (and its cp.async writes) before a bulk load into it only through
         * a proxy fence: a barrier alone does not (write after read) */
        if constexpr (FZ_GPU_BULK)
            fz_fence_proxy_async();
        __syncthreads(); /* bs.next visible; last chunk's stage free */
        const uint64_t c_next = bs.next;
        const bool bulk_next = prefetch_stored(a, h, c_next, bs, s ^ 1);
        __pipeline_commit();
        __pipeline_wait_prior(1);
        if (bulk) {
            fz_mbar_wait(&bs.landed[s], (phases >> s) & 1u);
            phases ^= 1u << s;
        }
        bulk = bulk_next;
        __syncthreads(); /* every thread's copies of chunk c visible */
        if (threadIdx.x == 0)
            advance(ahead, a, h, bs);
        const uint64_t raw = chunk_raw_bytes(h.original_bytes, c);
        const uint32_t nvals = (uint32_t)(raw / sizeof(T));
        const uint32_t size = bs.stage_size[s];
        const uint8_t *st = bs.stage[s];
        if (!bs.stage_ok[s]) {
            c = c_next;
            continue;
        }
        T v[kSubsPerWarp][L::VPL];
        bool bad = false;
        uint32_t invalid = 0; /* a code the quantizer cannot produce */
        if (size == raw) {    /* stored verbatim */
#pragma unroll
            for (int j = 0; j < kSubsPerWarp; j++) {
                const int sub = warp * kSubsPerWarp + j;
                const uint32_t at = sub * SLEEK_SUB_BYTES + lane * 16;
                if (at + 16 <= raw)
                    load16<T>(st + at, v[j]);
                else
#pragma unroll
                    for (int e = 0; e < L::VPL; e++)
                        v[j][e] = at + e * sizeof(T) < raw
                                      ? reinterpret_cast<const T *>(st + at)[e]
                                      : 0;
            }
        } else {
            const uint32_t lane_width = st[lane];
            uint32_t my_off;
            const uint32_t need = subchunk_offsets<T>(lane_width, &my_off);
            /* block-uniform: every warp reads the same widths */
            if (!__all_sync(FZ_FULL_MASK, lane_width <= (uint32_t)L::TB) ||
                need != size) {
                if (threadIdx.x == 0)
                    fz_gpu_fail(a.scratch, FZS_CORRUPT_CHUNK);
                c = c_next;
                continue;
            }
#pragma unroll
            for (int j = 0; j < kSubsPerWarp; j++) {
                const int sub = warp * kSubsPerWarp + j;
                const uint32_t n = __shfl_sync(FZ_FULL_MASK, lane_width, sub);
                const uint32_t off = __shfl_sync(FZ_FULL_MASK, my_off, sub);
                if (n == 0) {
#pragma unroll
                    for (int e = 0; e < L::VPL; e++)
                        v[j][e] = 0;
                } else {
                    unpack_lane(reinterpret_cast<const uint32_t *>(st + off), n,
                                v[j]);
                }
                if (nvals < kChunkVals) /* the last chunk: padding is +0.0 */
#pragma unroll
                    for (int e = 0; e < L::VPL; e++)
                        bad |= sub * L::V + lane * L::VPL + e >= nvals &&
                               v[j][e] != 0;
                T any = 0;
#pragma unroll
                for (int e = 0; e < L::VPL; e++)
                    any |= v[j][e];
                if (LOSSY && bins_direct && any < Map<T>::kBinCodes) {
                    /* a lane's codes all bins (smooth data): branch-free
                     * (lossy decompression +23..+31%, run s184) */
#pragma unroll
                    for (int e = 0; e < L::VPL; e++)
                        v[j][e] = map.inv_bin(v[j][e]);
                } else {
#pragma unroll
                    for (int e = 0; e < L::VPL; e++)
                        v[j][e] = LOSSY ? map.inv_checked(v[j][e], &invalid)
                                        : map.inv(v[j][e]);
                }
                /* canonical streams: the width is exactly the bits needed */
                const T all = Word<T>::warp_or(any);
                bad |= n != L::TB - (sizeof(T) == 4 ? fz_clz32((uint32_t)all)
                                                    : fz_clz64((uint64_t)all));
            }
        }
        uint64_t hsum = 0;
        if (verify)
            hsum = payload_sums
                       ? region_sum<kSum, kThreads, true>(st, size, threadIdx.x)
                       : lane_hash<T>(v, nvals);
        uint8_t *out = a.dst + c * SLEEK_CHUNK_BYTES;
        const bool whole = nvals == kChunkVals && ((uintptr_t)out & 15) == 0;
#pragma unroll
        for (int j = 0; j < kSubsPerWarp; j++)
            store_lane<T>(out, nvals, warp * kSubsPerWarp + j, v[j], whole);
        if (bad || invalid)
            fz_gpu_fail(a.scratch, FZS_CORRUPT_CHUNK);
        if (verify) {
            const uint64_t total = block_sum_to_thread0(hsum, bs.hash);
            const uint64_t words = (payload_sums ? size : raw) / 4;
            if (threadIdx.x == 0 &&
                fz_gpu_sum<kSum>::final(total, words) != bs.stage_want[s])
                fz_gpu_fail(a.scratch, FZS_DATA_CHECKSUM);
        }
        c = c_next;
    }
    __pipeline_wait_prior(0);
}

/* One decompression launch: thread 0 checks the stream and starts the
 * chunk schedule, then the decode loop of the stream's checksums. */
template <typename T, bool LOSSY>
__global__ void __launch_bounds__(kThreads, 4)
    sleek_decompress_kernel(const fz_gpu_args a) {
    extern __shared__ __align__(16) uint8_t smem_raw[];
    DecodeShared &bs = *reinterpret_cast<DecodeShared *>(smem_raw);
    fz_gpu_ahead ahead;
    if (threadIdx.x == 0) {
        int st = fz_gpu_check_stream(a, &bs.hdr);
        if (st != FZS_OK)
            fz_gpu_fail(a.scratch, st);
        bs.stream_ok = st == FZS_OK;
        if (st == FZS_OK) {
            ahead.start(a, bs.hdr.flags, bs.hdr.chunk_count);
            advance(ahead, a, bs.hdr, bs);
        }
        if constexpr (FZ_GPU_BULK)
            for (int i = 0; i < kDecodeStages; i++)
                fz_mbar_init(&bs.landed[i], 1);
    }
    __syncthreads();
    if (!bs.stream_ok)
        return;
    if (sleek_sum_kind(bs.hdr.codec_version) == kWriteSum)
        decode_chunks<T, LOSSY, kCurrentSums>(a, bs, ahead);
    else
        decode_chunks<T, LOSSY, kOlderSums>(a, bs, ahead);
}

template <typename K>
cudaError_t launch(K kernel, int threads, int smem, const fz_gpu_args *a,
                   int sm_count, cudaStream_t stream) {
    cudaError_t err = cudaFuncSetAttribute(
        kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
    int per_sm = 0;
    if (err == cudaSuccess)
        err = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel,
                                                            threads, smem);
    if (err != cudaSuccess)
        return err;
    uint64_t grid = (uint64_t)sm_count * (per_sm > 0 ? per_sm : 1);
    if (grid > a->expect.chunk_count)
        grid = a->expect.chunk_count;
    if (grid == 0)
        return cudaSuccess;
    kernel<<<(unsigned)grid, threads, smem, stream>>>(*a);
    return cudaGetLastError();
}

/* The enforced bound (lossless flag, exponent) for an absolute bound. */
__device__ void bound_of(const fz_header &h, uint64_t abs_bits, int *lossless,
                         int32_t *k) {
    *k = 0;
    *lossless = sleek_bound_exponent(fz_dtype_size(h.dtype), abs_bits, k);
    if (*lossless)
        *k = 0;
}

/* The absolute bound of the params (ABS) or of the range in the scratch
 * keys (REL). */
__device__ uint64_t abs_bound_bits(const fz_gpu_args &a, double *lo,
                                   double *hi) {
    const fz_header &h = a.expect;
    if (h.mode != 2)
        return h.bound_bits;
    double rel;
    memcpy(&rel, &h.bound_bits, sizeof rel);
    range_from_keys(a.scratch, h.dtype == 1, lo, hi);
    return fz_rel_abs_bound_bits(rel, *lo, *hi);
}

__device__ void set_bound(fz_gpu_scratch *s, int lossless, int32_t k) {
    s->bound_lossless = lossless;
    s->bound_k = k;
    s->bound_eff_bits = lossless ? 0 : sleek_pow2_bits(k);
}

/* Lossy compression: the effective bound on the device, from the params
 * (ABS) or the sampled range (REL), before the main kernel reads it. The
 * keys are cleared for the main kernel's own range. One thread. */
__device__ void resolve(const fz_gpu_args &a) {
    fz_gpu_scratch *s = a.scratch;
    double lo = 0, hi = 0;
    int lossless;
    int32_t k;
    bound_of(a.expect, abs_bound_bits(a, &lo, &hi), &lossless, &k);
    set_bound(s, lossless, k);
    s->key_hi = s->key_lo_inv = 0;
}

__global__ void resolve_bound(const fz_gpu_args a) {
    resolve(a);
}

/* REL: the range of the sample (sleek_sample_index) into the keys; the
 * last block resolves the bound from it. */
constexpr int kSampleThreads = 256;
template <typename T>
__global__ void __launch_bounds__(kSampleThreads)
    sample_range(const fz_gpu_args a) {
    const uint64_t n = a.expect.original_bytes / sizeof(T);
    const uint64_t m = n < SLEEK_SAMPLE ? n : SLEEK_SAMPLE;
    const uint64_t k = (uint64_t)blockIdx.x * kSampleThreads + threadIdx.x;
    RangeKeys<T> range;
    if (k < m)
        range.add(
            reinterpret_cast<const T *>(a.src)[sleek_sample_index(k, n, m)]);
    range.publish(a.scratch);
    if (last_block(a.scratch, whole_block()) && threadIdx.x == 0)
        resolve(a);
}

/* REL: the whole input's bound against the sampled one (one thread). On a
 * difference the pass's state is reset (its output is rewritten
 * completely) and the redo pass runs. After the tracking pass (exact =
 * false) a range that reaches an infinity is not the finite range: the
 * exact pass decides. */
__device__ void confirm(const fz_gpu_args &a, bool exact) {
    fz_gpu_scratch *s = a.scratch;
    double lo = 0, hi = 0;
    int lossless;
    int32_t k;
    const uint64_t abs_bits = abs_bound_bits(a, &lo, &hi);
    if (!exact && (isinf(lo) && lo < 0 || isinf(hi) && hi > 0)) {
        s->exact_pass = 1;
        s->key_hi = s->key_lo_inv = 0;
        return;
    }
    bound_of(a.expect, abs_bits, &lossless, &k);
    if (lossless == s->bound_lossless && k == s->bound_k)
        return;
    set_bound(s, lossless, k);
    s->redo = 1;
    s->ticket = 0;
    s->table_sum = 0;
    s->payload_total = 0;
    s->status = FZS_OK;
}

/* The tracking pass's end: every block's coders publish their range, the
 * last block confirms the bound (every block's writer has stored its last
 * chunk: encode_chunks). (A launch with no chunks runs no block: then the
 * tracked range is as empty as the sample's and nothing changes.) */
template <typename T>
__device__ void publish_and_confirm(const fz_gpu_args &a,
                                    const TrackedRange<T> &range) {
    const Group coders{kBarCoders, kThreads};
    range.publish(a.scratch, coders);
    if (last_block(a.scratch, coders) && threadIdx.x == 0)
        confirm(a, false);
}

/* Look-back words [first, chunk_count) in steps of `step` back to 0. */
__device__ void reset_lookback(const fz_gpu_args &a, uint64_t first,
                               uint64_t step) {
    for (uint64_t i = first; i < a.expect.chunk_count; i += step)
        a.lookback[i] = 0;
}

/* REL after the tracking pass: with an infinity in the data, the finite
 * range exactly (a plain grid pass; the last block confirms the bound);
 * when a redo follows, the look-back words back to 0 first. A no-op in the
 * common case, but its launch cannot be skipped from the host. */
template <typename T>
__global__ void __launch_bounds__(kSampleThreads)
    exact_range_or_reset(const fz_gpu_args a) {
    fz_gpu_scratch *s = a.scratch;
    if (!s->exact_pass) {
        if (s->redo)
            reset_lookback(a,
                           (uint64_t)blockIdx.x * kSampleThreads + threadIdx.x,
                           (uint64_t)gridDim.x * kSampleThreads);
        return;
    }
    const uint64_t n = a.expect.original_bytes / sizeof(T);
    const T *in = reinterpret_cast<const T *>(a.src);
    RangeKeys<T> range;
    for (uint64_t i = (uint64_t)blockIdx.x * kSampleThreads + threadIdx.x;
         i < n; i += (uint64_t)gridDim.x * kSampleThreads)
        range.add(in[i]);
    range.publish(s);
    if (!last_block(s, whole_block()))
        return;
    if (threadIdx.x == 0)
        confirm(a, true);
    __syncthreads(); /* the other blocks are done: this one resets alone */
    if (*(volatile unsigned int *)&s->redo)
        reset_lookback(a, threadIdx.x, kSampleThreads);
}

/* Four launches; in the common case the last two do nothing. */
template <typename T>
cudaError_t compress_rel(const fz_gpu_args *a, int smem, int sm_count,
                         cudaStream_t stream) {
    sample_range<T><<<(SLEEK_SAMPLE + kSampleThreads - 1) / kSampleThreads,
                      kSampleThreads, 0, stream>>>(*a);
    cudaError_t err = cudaGetLastError();
    if (err == cudaSuccess)
        err = launch(sleek_compress_kernel<T, true, kTrack>, kCompressThreads,
                     smem, a, sm_count, stream);
    if (err != cudaSuccess)
        return err;
    exact_range_or_reset<T><<<4 * sm_count, kSampleThreads, 0, stream>>>(*a);
    err = cudaGetLastError();
    if (err != cudaSuccess)
        return err;
    return launch(sleek_compress_kernel<T, true, kRedo>, kCompressThreads, smem,
                  a, sm_count, stream);
}

} // namespace

/* REL speculates on the bound instead of reading the whole input for its
 * range first: SLEEK's quantizer only uses the power of two at or below
 * rel x (max - min), so the range of a spread sample almost always gives
 * the same exponent as the whole input's. The compression pass tracks the
 * range of everything it reads, a one-thread check compares the
 * exponents, and only on a miss does a second pass run with the right one
 * (LOSSY.md 5.1). Either way the bytes are those the CPU writes. */
cudaError_t fz_sleek_gpu_compress(const fz_gpu_args *a, int sm_count,
                                  cudaStream_t stream) {
    const int smem = (int)sizeof(CompressShared);
    const bool f32 = a->expect.dtype == 1;
    if (a->expect.mode == 0)
        return f32 ? launch(sleek_compress_kernel<uint32_t, false>,
                            kCompressThreads, smem, a, sm_count, stream)
                   : launch(sleek_compress_kernel<uint64_t, false>,
                            kCompressThreads, smem, a, sm_count, stream);
    if (a->expect.mode == 2)
        return f32 ? compress_rel<uint32_t>(a, smem, sm_count, stream)
                   : compress_rel<uint64_t>(a, smem, sm_count, stream);
    resolve_bound<<<1, 1, 0, stream>>>(*a);
    cudaError_t err = cudaGetLastError();
    if (err != cudaSuccess)
        return err;
    return f32 ? launch(sleek_compress_kernel<uint32_t, true>, kCompressThreads,
                        smem, a, sm_count, stream)
               : launch(sleek_compress_kernel<uint64_t, true>, kCompressThreads,
                        smem, a, sm_count, stream);
}

cudaError_t fz_sleek_gpu_decompress(const fz_gpu_args *a, int sm_count,
                                    cudaStream_t stream) {
    const int smem = (int)sizeof(DecodeShared);
    const bool f32 = a->expect.dtype == 1, lossy = a->expect.mode != 0;
    if (f32)
        return lossy ? launch(sleek_decompress_kernel<uint32_t, true>, kThreads,
                              smem, a, sm_count, stream)
                     : launch(sleek_decompress_kernel<uint32_t, false>,
                              kThreads, smem, a, sm_count, stream);
    return lossy ? launch(sleek_decompress_kernel<uint64_t, true>, kThreads,
                          smem, a, sm_count, stream)
                 : launch(sleek_decompress_kernel<uint64_t, false>, kThreads,
                          smem, a, sm_count, stream);
}
