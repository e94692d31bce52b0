/* Falcon, CUDA backend. Two kernels per direction, byte-identical to the
 * CPU backend:
 *
 *  - the warp kernel (default): one warp per chunk, persistent warps take
 *    chunks from an atomic ticket. The chunk is staged in shared memory
 *    (asynchronous copies, all in flight); the chunk's scale is the warp's
 *    last one, or a neighbour of it, when one search step per value
 *    proves it (falcon_scan), else the decimal places of a strided pass
 *    over the stage and a warp reduction. Lane L then takes the 32 consecutive
 * deltas of values 32L + 1 .. 32L + 32: its words of every bit-plane (the
 * plane's bytes 4L..4L+3) are one or two 32 x 32 bit transposes of them, kept
 * in shared memory for the size pass and the write pass. The chunk's size is
 * published to the decoupled look-back as soon as it is known; its offset is
 * resolved, and the chunk written straight to its place, after the warp's
 * next chunk is coded (write-behind: its planes wait in a second stage or,
 * f64, a smaller plane buffer; WarpSmem). The decoder stages
 * the encoded chunk, parses the planes into shared memory, transposes back,
 * sums the deltas in the lane and across the lanes once, and writes the values
 * coalesced from the stage.
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

/* Warps per block of the warp kernel: few, so that blocks with ~17 KiB of
 * shared memory per warp (f64 decoding) still fill an SM. */
constexpr int kWarps = 4;
constexpr int kThreads = 32 * kWarps;

/* Per word type: the shared transforms under one name. */
template <typename T> struct FW;
template <> struct FW<uint32_t> {
    typedef int32_t Signed;
    static constexpr uint32_t BITS = 32, AMAX = FALCON_AMAX32;
    static constexpr bool FUSED_GUESS = true; /* see ScaleWork */
    static constexpr uint64_t LIMIT = FALCON_LIMIT32;
    static __device__ void scan_add(falcon_scan *s, uint32_t b) {
        falcon_scan_add32(s, b);
    }
    /* fl32(1 / p): the read-back without a division (falcon_divf_pow10) */
    static __device__ float recip(double p) {
        return __fdiv_rn(1.0f, (float)p);
    }
    static __device__ int fits(uint32_t b, double p, float y, uint64_t *mag) {
        uint32_t m;
        const int ok = falcon_fits32_by(b, (float)p, y, &m);
        *mag = m;
        return ok;
    }
    static __device__ bool mag_not10(uint64_t mag) {
        return (uint32_t)mag % 10u != 0; /* mag < 10^6 */
    }
    static __device__ uint32_t fwd(uint32_t b, uint32_t scale, double p) {
        return falcon_fwd32(b, scale, p);
    }
    static __device__ uint32_t fwd_case1(uint32_t b, double p) {
        return falcon_fwd32_case1(b, p);
    }
    static __device__ uint32_t inv(uint32_t s, uint32_t scale, double p,
                                   float y) {
        return falcon_inv32_by(s, scale, (float)p, y);
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
    static __device__ uint32_t load(const uint8_t *p) {
        return fz_load32(p);
    }
    static __device__ uint32_t encode_ref(const uint32_t *v, uint32_t n,
                                          uint32_t *e, uint8_t *dst,
                                          uint32_t raw) {
        return falcon_encode32(v, n, e, dst, raw);
    }
    static __device__ int decode_ref(const uint8_t *src, uint32_t size,
                                     uint32_t *e, uint32_t n) {
        return falcon_decode32(src, size, e, n);
    }
};
template <> struct FW<uint64_t> {
    typedef int64_t Signed;
    static constexpr uint32_t BITS = 64, AMAX = FALCON_AMAX64;
    static constexpr bool FUSED_GUESS = false;
    static constexpr uint64_t LIMIT = FALCON_LIMIT64;
    static __device__ void scan_add(falcon_scan *s, uint64_t b) {
        falcon_scan_add64(s, b);
    }
    static __device__ float recip(double) {
        return 0.0f; /* the decoder divides: a division-free read-back
                        (falcon_reads_back64 proving Markstein's quotient)
                        was 1% slower there (run s90) */
    }
    static __device__ int fits(uint64_t b, double p, float, uint64_t *mag) {
        return falcon_fits64_gpu(b, p, mag);
    }
    static __device__ bool mag_not10(uint64_t mag) {
        return mag % 10u != 0;
    }
    static __device__ uint64_t fwd(uint64_t b, uint32_t scale, double p) {
        return falcon_fwd64(b, scale, p);
    }
    static __device__ uint64_t fwd_case1(uint64_t b, double p) {
        return falcon_fwd64_case1(b, p);
    }
    static __device__ uint64_t inv(uint64_t s, uint32_t scale, double p,
                                   float) {
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
    static __device__ uint64_t load(const uint8_t *p) {
        return fz_load64(p);
    }
    static __device__ uint32_t encode_ref(const uint64_t *v, uint32_t n,
                                          uint64_t *e, uint8_t *dst,
                                          uint32_t raw) {
        return falcon_encode64(v, n, e, dst, raw);
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

/* A decoding warp's next chunk with its offset, size and stored checksum.
 * The f64 decoder takes it from a schedule kept two chunks ahead
 * (fz_gpu_ahead: decompression +3-5%, H100 run s71); the f32 one, bounded
 * to 64 registers, was ~1% slower with it and takes its ticket and loads
 * as it goes. */
template <typename T>
__device__ unsigned long long
next_chunk(fz_gpu_ahead *ahead, const fz_gpu_args &a, uint32_t flags,
           uint64_t *off, uint64_t *size, uint32_t *want) {
    const uint64_t count = a.expect.chunk_count;
    if (sizeof(T) == 8)
        return fz_gpu_warp_take(*ahead, a, flags, count, off, size, want);
    const unsigned long long c = warp_ticket(a);
    if (c < count) { /* warp-uniform */
        *off = a.offsets[c];
        *size = a.offsets[c + 1] - *off;
        const uint32_t w =
            (threadIdx.x & 31) == 0 ? fz_gpu_entry_checksum(a, flags, c) : 0;
        *want = __shfl_sync(FZ_FULL_MASK, w, 0);
    }
    return c;
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

/* Exclusive prefix sum over the lanes of cnt (0..7 in every lane), and in
 * *total the sum: bit b of cnt counted by a ballot, so three independent
 * votes instead of a chain of five shuffles. */
__device__ __forceinline__ uint32_t lanes_before(uint32_t cnt,
                                                 uint32_t *total) {
    const uint32_t below = (1u << (threadIdx.x & 31)) - 1u;
    const uint32_t b0 = __ballot_sync(FZ_FULL_MASK, cnt & 1u);
    const uint32_t b1 = __ballot_sync(FZ_FULL_MASK, (cnt >> 1) & 1u);
    const uint32_t b2 = __ballot_sync(FZ_FULL_MASK, (cnt >> 2) & 1u);
    *total = (uint32_t)__popc(b0) + 2u * (uint32_t)__popc(b1) +
             4u * (uint32_t)__popc(b2);
    return (uint32_t)__popc(b0 & below) + 2u * (uint32_t)__popc(b1 & below) +
           4u * (uint32_t)__popc(b2 & below);
}

/* Which of a lane's 4 plane bytes are nonzero (bit r: byte r). */
__device__ uint32_t nonzero4(uint32_t word) {
    return (uint32_t)((word & 0xFFu) != 0) |
           (uint32_t)((word & 0xFF00u) != 0) << 1 |
           (uint32_t)((word & 0xFF0000u) != 0) << 2 |
           (uint32_t)((word & 0xFF000000u) != 0) << 3;
}

/* what the encoders write: falcon_sum_kind(FALCON_CODEC_VERSION) */
typedef fz_gpu_sum<FZ_SUM_SQUARE> SquareSum;
static_assert(FALCON_CODEC_VERSION == 2, "the encoder's checksum kind");

/* The data checksum of version 1 (fz_hash) of a chunk this warp has just
 * written to out (lane L wrote values L + 32 k, so it reads its own
 * writes back): decoders sum version 2's in the decode loop, and a stream
 * of the older version is the rare case that pays a second pass. */
template <typename T>
__device__ uint32_t version1_checksum(const T *out, uint32_t n) {
    typedef fz_gpu_sum<FZ_SUM_MIX> Sum;
    Sum::Acc s = 0;
    for (uint32_t i = threadIdx.x & 31; i < n; i += 32)
        s += Sum::term(out[i], i);
    return Sum::warp_final(s, (uint64_t)n * sizeof(T) / 4);
}

/* How many of a lane's 4 plane bytes are nonzero: bit 7 of each byte of
 * (word & 0x7F..) + 0x7F.. is set iff its low 7 bits are not all zero (no
 * carry leaves a byte), and word supplies bit 7 itself. */
__device__ __forceinline__ uint32_t nonzero_count(uint32_t word) {
    const uint32_t low7 = (word & 0x7F7F7F7Fu) + 0x7F7F7F7Fu;
    return (uint32_t)__popc((low7 | word) & 0x80808080u);
}

/* The table entry of chunk c (size, data checksum ck), its share of the
 * table hash, and its size for the look-back (lane 0). */
__device__ void publish_chunk(const fz_gpu_args &a, uint64_t c, uint32_t size,
                              uint32_t ck) {
    if ((threadIdx.x & 31) == 0) {
        fz_lookback_publish(a.lookback, c, size);
        fz_gpu_put_checksum(a, c, size, ck);
    }
}

/* The look-back of a published chunk: its offset in the payload (every
 * lane). */
__device__ unsigned long long resolve_chunk(const fz_gpu_args &a, uint64_t c,
                                            uint32_t size) {
    const unsigned long long excl = fz_lookback_resolve(a.lookback, c, size);
    if ((threadIdx.x & 31) == 0 && c == a.expect.chunk_count - 1)
        a.scratch->payload_total = excl + size;
    return excl;
}

/* Round s of a 32 x 32 bit transpose on the pairs (k, k + s), k in [lo,
 * hi) with bit s of k clear: the off-diagonal s x s blocks swapped. */
template <int s, int lo, int hi>
__device__ __forceinline__ void transpose_round(uint32_t (&m)[32]) {
    constexpr uint32_t low = s == 16  ? 0x0000FFFFu
                             : s == 8 ? 0x00FF00FFu
                             : s == 4 ? 0x0F0F0F0Fu
                             : s == 2 ? 0x33333333u
                                      : 0x55555555u;
#pragma unroll
    for (int k = lo; k < hi; k++) {
        if (k & s)
            continue;
        const uint32_t t = ((m[k] >> s) ^ m[k + s]) & low;
        m[k + s] ^= t;
        m[k] ^= t << s;
    }
}

/* In-place transpose of the S x S bit matrix in the low S bits of m[0..S)
 * (S = 32: the whole 32 x 32 matrix): afterwards bit b of m[q] is what bit
 * q of m[b] was. Rounds s = S / 2, ..., 2, 1 transpose the whole matrix:
 * at S = 32, 5 rounds of 16 swaps of 5 operations, ~13 per word, where a
 * ballot per bit costs ~6 per word and bit-plane. The rounds commute
 * (round s swaps bit s of the row index with bit s of the column index),
 * which the narrow forms below use. */
/* Rounds 4, 2, 1 on m[0..N): the whole of an 8 x 8 block's transpose,
 * and the rounds the 24-plane forms run on 24 words. */
template <int N>
__device__ __forceinline__ void transpose_low_rounds(uint32_t (&m)[32]) {
    transpose_round<4, 0, N>(m);
    transpose_round<2, 0, N>(m);
    transpose_round<1, 0, N>(m);
}
template <int S>
__device__ __forceinline__ void transpose_block(uint32_t (&m)[32]) {
    if (S > 16)
        transpose_round<16, 0, S>(m);
    if (S > 8)
        transpose_round<8, 0, S>(m);
    transpose_low_rounds<S>(m);
}
__device__ __forceinline__ void transpose32(uint32_t (&m)[32]) {
    transpose_block<32>(m);
}

/* transpose32 of 32 words whose bits from W on are 0 (W = 8, 16 or 24: a
 * chunk's deltas of width <= W), giving its rows q < W; the rows from W on
 * are left undefined. The rounds s >= W of transpose32 only gather the
 * words' low bits side by side (round 16 moves the low half of m[k + 16]
 * into the empty high half of m[k], round 8 then the low byte of m[k + 8]),
 * so they are a fold, and the rest runs on W words: W = 8 ~3, W = 16 ~6
 * instructions per word instead of ~13. W = 24 (the top byte 0): after a
 * full round 16 the high halves m[16..32) hold 8 bits per 16, so their
 * round 8 is a fold and rounds 4, 2, 1 run on 24 words (~10). */
template <int W>
__device__ __forceinline__ void transpose_narrow(uint32_t (&m)[32]) {
    static_assert(W == 8 || W == 16 || W == 24, "a fold of whole bytes");
    if constexpr (W == 24) {
        transpose_round<16, 0, 32>(m);
        transpose_round<8, 0, 16>(m);
#pragma unroll
        for (int k = 16; k < 24; k++)
            m[k] |= m[k + 8] << 8;
        transpose_low_rounds<24>(m);
    } else {
#pragma unroll
        for (int k = 0; k < W; k++)
#pragma unroll
            for (int j = 1; j < 32 / W; j++)
                m[k] |= m[k + j * W] << (j * W);
        transpose_block<W>(m);
    }
}

/* The inverse direction: transpose32 of 32 words of which only m[0..W)
 * may be nonzero (a chunk's planes of width <= W; m[W..32) are not read),
 * giving all 32 rows: the rounds s < W on the W words, then the rounds
 * s >= W as an unfold (bit field j of m[k] to m[k + j W]); W = 24 the
 * other way round from transpose_narrow<24>. */
template <int W>
__device__ __forceinline__ void untranspose_narrow(uint32_t (&m)[32]) {
    static_assert(W == 8 || W == 16 || W == 24, "an unfold of whole bytes");
    if constexpr (W == 24) {
        transpose_low_rounds<24>(m);
        transpose_round<8, 0, 16>(m);
#pragma unroll
        for (int k = 16; k < 24; k++) {
            m[k + 8] = (m[k] >> 8) & 0x00FF00FFu;
            m[k] &= 0x00FF00FFu;
        }
        transpose_round<16, 0, 32>(m);
    } else {
        constexpr uint32_t mask = (1u << W) - 1;
        transpose_block<W>(m);
#pragma unroll
        for (int k = 0; k < W; k++) {
#pragma unroll
            for (int j = 1; j < 32 / W; j++)
                m[k + j * W] = (m[k] >> (j * W)) & mask;
            m[k] &= mask;
        }
    }
}

/* Shared memory of the warp kernels, per warp: a stage of the chunk's
 * values, value i at slot i + i / 32 (the padding keeps both a lane-strided
 * pass, value 32 k + L, and a lane-contiguous pass, values 32 L + b, free
 * of bank conflicts). The encoder keeps its bit-planes there once the
 * values are in registers (word L of plane q at 32 q + L: the plane's bytes
 * 4L..4L+3); the decoder stages the encoded chunk's bytes at its end,
 * parses the planes into its start (decode_warp says why they never meet),
 * then writes the decoded values. */
constexpr uint32_t kStageSlots =
    FALCON_MAX_VALUES + (FALCON_MAX_VALUES - 1) / 32 + 3; /* 1060 */
static_assert(kStageSlots % 4 == 0 && kStageSlots * 4 >= 128 * (32 + 1) + 15 &&
                  kStageSlots * 8 >= 128 * (64 + 1) + 15,
              "the decoder's planes and encoded bytes share the stage");

__device__ __forceinline__ uint32_t stage_slot(uint32_t i) {
    return i + (i >> 5);
}

/* Row by row (lane L: values 32 k + L), value 32 k + L sits at slot
 * 33 k + L: the passes over rows step a pointer by kRowSlots instead of
 * computing stage_slot per value (four instructions of ~25 in the f32
 * guess pass). */
constexpr uint32_t kRowSlots = 33;

/* Blocks per SM that the register budget is cut to fit (an SM has 64 Ki
 * registers, a block 128 threads): 24 warps for the f32 encoder (<= 85
 * registers; its two stages, 8.3 KiB per warp, allow no more), 40 for the
 * f32 decoder (48), 16 for the f64 encoder (128; its stage and pending
 * planes, 13.8 KiB per warp, allow no more) and 24 for the f64 decoder
 * (80; its stage allows no more). The decoders are latency-bound, so
 * they take every warp their stage allows, at the price of a few words
 * spilled per chunk (f32 4 / 12 bytes without / with verification, f64
 * 24 / 60 around the running sum): run s151-s152, decompression f64
 * +13-18% at 24 warps against 16 (+2-4% against 20), f32 +1-3% at 40
 * against 32 (the low-ratio series most). The encoders spill nothing. */
template <typename T> struct MinBlocks;
template <> struct MinBlocks<uint32_t> {
    static constexpr int encode = 6, decode = 10;
};
template <> struct MinBlocks<uint64_t> {
    static constexpr int encode = 4, decode = 6;
};

/* Bytes per warp of the encoder and of the decoder (the stage). The
 * encoder codes a chunk in its stage and keeps the previous one's planes
 * until its offset is known (write-behind, falcon_compress_warp): f32 in a
 * second stage-sized buffer, the two alternating; f64 in a buffer of
 * kPendingPlanes64 planes that the coded planes are copied into (a chunk
 * of more planes is written at once). Two f64 stages, 16.6 KiB per warp,
 * allowed 12 warps per SM, this 13.8 KiB 16 (compression +13-19%, H100 run
 * s78); real series need 6-37 planes. f32 kept in 30 planes at 7 blocks
 * (28 warps) was 1-2% slower than two stages at 6. */
constexpr uint32_t kPendingPlanes64 = 44;
constexpr uint32_t kPendingPlanes32 = 0; /* 0: two stages */
template <typename T> struct WarpSmem {
    static constexpr uint32_t buffer = kStageSlots * (uint32_t)sizeof(T);
    static constexpr uint32_t pending_planes =
        sizeof(T) == 8 ? kPendingPlanes64 : kPendingPlanes32;
    static constexpr uint32_t encode =
        pending_planes ? buffer + 128 * pending_planes : 2 * buffer;
    /* the f64 decoder's chunk schedule (fz_gpu_ahead, lane 0's) after
     * the stage: in registers, every lane of the warp held its ~9 */
    static constexpr uint32_t schedule = sizeof(T) == 8 ? 48 : 0;
    static constexpr uint32_t decode = buffer + schedule;
};
static_assert(sizeof(fz_gpu_ahead) <= WarpSmem<uint64_t>::schedule &&
                  WarpSmem<uint64_t>::decode % 16 == 0,
              "the decoder's schedule fits after its stage");

/* This warp's part of the dynamic shared memory. */
__device__ __forceinline__ uint8_t *warp_smem(uint8_t *smem, uint32_t bytes) {
    return smem + (threadIdx.x >> 5) * bytes;
}

/* Stages the chunk's n values (lane L: values 32 k + L) by asynchronous
 * copies, all of a lane's in flight at once: loads into registers came in
 * batches of ~6 that 66 registers allow (f64), a round trip each, and the
 * waits were 13% of the f64 encoder's stall samples (run s165). The
 * caller's __syncwarp makes them visible to the warp. */
template <typename T>
__device__ void stage_chunk(const T *in, uint32_t n, T *stage) {
    const uint32_t lane = threadIdx.x & 31;
    constexpr int kRows = (FALCON_MAX_VALUES + 31) / 32; /* 33 */
#pragma unroll
    for (int k = 0; k < kRows; k++) {
        const uint32_t i = 32u * k + lane;
        if (i < n)
            fz_copy_async<sizeof(T)>(stage + kRowSlots * k + lane, in + i);
    }
    fz_copy_async_wait();
}

/* Rows q < min(W, w) of m to planes[32 (q0 + q) + L]. */
template <int W>
__device__ __forceinline__ void store_rows(const uint32_t (&m)[32], uint32_t w,
                                           uint32_t q0, uint32_t *planes) {
    const uint32_t lane = threadIdx.x & 31;
#pragma unroll
    for (int q = 0; q < W; q++)
        if ((uint32_t)q < w)
            planes[32 * (q0 + (uint32_t)q) + lane] = m[q];
}

/* The bit-planes of 32 words of width <= w (warp-uniform, <= 32): rows q <
 * w of transpose32(m) to planes[32 (q0 + q) + L], by the narrow forms
 * where they apply (most chunks of real series are 6-13 planes wide).
 * Each form stores its own rows, so that no form's rows are moved into
 * the registers of another's (f64 decompression +2.7-6.7% against +0-4.6%
 * with one shared store loop, runs s144-s145). kFullFirst tests for the
 * full form first. The f32 encoder takes it: its series of 25-30 planes
 * (Basel, Bitcoin) lost 3-5% with the full form tested last and 1% with
 * it first. The f64 encoder does not: it was 1-2% slower with the full
 * form first (s146; code layout, not the cost of the tests). */
template <bool kFullFirst>
__device__ __forceinline__ void planes_out(uint32_t (&m)[32], uint32_t w,
                                           uint32_t q0, uint32_t *planes) {
    if (kFullFirst && w > 24) {
        transpose32(m);
        store_rows<32>(m, w, q0, planes);
    } else if (w <= 8) {
        transpose_narrow<8>(m);
        store_rows<8>(m, w, q0, planes);
    } else if (w <= 16) {
        transpose_narrow<16>(m);
        store_rows<16>(m, w, q0, planes);
    } else if (w <= 24) {
        transpose_narrow<24>(m);
        store_rows<24>(m, w, q0, planes);
    } else {
        transpose32(m);
        store_rows<32>(m, w, q0, planes);
    }
}

/* Rows q < W of m: plane top - q of the decoder's planes (word L at
 * planes[32 (top - q) + L]) for q < w, else 0. */
template <int W>
__device__ __forceinline__ void
load_rows(uint32_t (&m)[32], uint32_t w, const uint32_t *planes, uint32_t top) {
    const uint32_t lane = threadIdx.x & 31;
#pragma unroll
    for (int q = 0; q < W; q++)
        m[q] = (uint32_t)q < w ? planes[32 * (top - (uint32_t)q) + lane] : 0u;
}

/* The inverse: all 32 words of transpose32 of the planes q < w (warp-
 * uniform, <= 32; those above are 0), plane q the decoder's plane top - q. */
__device__ __forceinline__ void
planes_in(uint32_t (&m)[32], uint32_t w, const uint32_t *planes, uint32_t top) {
    if (w <= 8) {
        load_rows<8>(m, w, planes, top);
        untranspose_narrow<8>(m);
    } else if (w <= 16) {
        load_rows<16>(m, w, planes, top);
        untranspose_narrow<16>(m);
    } else if (w <= 24) {
        load_rows<24>(m, w, planes, top);
        untranspose_narrow<24>(m);
    } else {
        load_rows<32>(m, w, planes, top);
        transpose32(m);
    }
}

/* Bit-planes of this lane's 32 deltas x[b] (delta 32 L + b) into
 * planes[32 q + L], q < width: one or two 32 x 32 bit transposes. */
__device__ void store_planes(const uint32_t (&x)[32], uint32_t width,
                             uint32_t *planes) {
    uint32_t m[32];
#pragma unroll
    for (int b = 0; b < 32; b++)
        m[b] = x[b];
    planes_out<true>(m, width, 0, planes);
}
__device__ void store_planes(const uint64_t (&x)[32], uint32_t width,
                             uint32_t *planes) {
    uint32_t m[32];
#pragma unroll
    for (int b = 0; b < 32; b++)
        m[b] = (uint32_t)x[b];
    planes_out<false>(m, width < 32 ? width : 32, 0, planes);
    if (width <= 32)
        return; /* warp-uniform */
#pragma unroll
    for (int b = 0; b < 32; b++)
        m[b] = (uint32_t)(x[b] >> 32);
    planes_out<false>(m, width - 32, 32, planes);
}

/* The inverse: this lane's deltas x[b] from the decoder's planes, plane q
 * (q < width; those at and above the width are zero) in stream order:
 * word L of plane q at planes[32 (width - 1 - q) + L]. */
__device__ void load_planes(uint32_t (&x)[32], uint32_t width,
                            const uint32_t *planes) {
    planes_in(x, width, planes, width - 1);
}
__device__ void load_planes(uint64_t (&x)[32], uint32_t width,
                            uint32_t *planes) {
    uint32_t m[32];
    planes_in(m, width < 32 ? width : 32, planes, width - 1);
    if (width <= 32) { /* warp-uniform */
#pragma unroll
        for (int b = 0; b < 32; b++)
            x[b] = m[b];
        return;
    }
    /* the low words wait in the rows of the low planes, which this lane
     * has read (each lane reads and writes only its own word of a row),
     * so that they and the high planes' transpose are not in registers
     * together: that peak (~100 live registers) set the f64 decoder's
     * budget; without it the decoder runs 24 warps per SM (MinBlocks) */
    uint32_t *low = planes + 32 * (width - 1) + (threadIdx.x & 31);
#pragma unroll
    for (int b = 0; b < 32; b++)
        low[-32 * b] = m[b];
    planes_in(m, width - 32, planes, width - 33);
#pragma unroll
    for (int b = 0; b < 32; b++)
        x[b] = (uint64_t)m[b] << 32 | low[-32 * b];
}

/* The chunk's scale byte from the staged values by the CPU's own scan
 * (falcon_scan): each lane scans the values 32 k + L (every value's search
 * resumes at the lane's running amax; a loop, not unrolled: the search is
 * long code), then the lanes' scans merge: the largest amax, every lane's
 * top raised to it, any case2. The warp stops as soon as one lane's scan
 * says Case 2 (final), e.g. after the first row of a chunk of values that
 * have no decimal place. */
template <typename T>
__device__ uint32_t full_scale(const T *stage, uint32_t n) {
    typedef FW<T> F;
    const uint32_t lane = threadIdx.x & 31;
    falcon_scan sc = falcon_scan_init();
#pragma unroll 1
    for (uint32_t i0 = 0; i0 < n; i0 += 32) {
        if (__any_sync(FZ_FULL_MASK, sc.case2))
            return FALCON_CASE2;
        const uint32_t i = i0 + lane;
        if (i < n)
            F::scan_add(&sc, stage[stage_slot(i)]);
    }
    if (__any_sync(FZ_FULL_MASK, sc.case2))
        return FALCON_CASE2;
    const int amax = (int)__reduce_max_sync(FZ_FULL_MASK, (unsigned)sc.amax);
    falcon_scan_raise(&sc, amax, F::LIMIT);
    return __any_sync(FZ_FULL_MASK, sc.case2) ? FALCON_CASE2 : (uint32_t)amax;
}

/* What one search step per value at A (0 <= A <= AMAX) says about the
 * chunk's scale (proof at falcon_scan): kHolds: every value fits at A and
 * A = 0 or some value's integer there is not a multiple of 10, so the
 * scale is A; kTooSmall: some value does not fit at A (the warp stops at
 * the first such row); kNoWitness: every value fits, every integer is a
 * multiple of 10 (then every alpha_i < A), and try_scale's *down holds,
 * for f64, the least falcon_dec_zeros of the integers (the walk down). */
enum GuessResult { kHolds, kTooSmall, kNoWitness };

/* The f32 encoder's work on the staged chunk while its scale is sought
 * (FW<T>::FUSED_GUESS): the chunk hash is summed in the same pass as the
 * first try reads the values (rows hashed so far, this lane's sum), and a
 * try writes each row's integers (falcon_fwd at A) over its values once
 * the row fits, so that a try that holds leaves the stage holding the
 * chunk's integers and transform_staged is not needed (f32 compression
 * +9-16% where the guess mostly holds, run s79). A try that stops at a
 * row that does not fit puts the rows before it back; after kNoWitness
 * the integers stay and integers_down walks down. The f64 encoder was 10-43%
 * slower so (longer code, a division per value put back): it hashes and
 * transforms in transform_staged. */
struct ScaleWork {
    bool hash;           /* with checksums */
    uint32_t hashed;     /* rows hashed (warp-uniform) */
    SquareSum::Acc hsum; /* this lane's share of the chunk hash */
};

/* Rows [0, rows) of the stage back from their integers at A to the
 * values: exact, as a value fits at A only if the decoder's inverse (this
 * one) gives it back. */
template <typename T>
__device__ void restore_rows(T *stage, uint32_t n, uint32_t rows, int a,
                             double p) {
    const float y = FW<T>::recip(p);
    T *at = stage + (threadIdx.x & 31); /* stage_slot(i) */
#pragma unroll 1
    for (uint32_t i = threadIdx.x & 31; i < n && i < 32 * rows;
         i += 32, at += kRowSlots)
        *at = FW<T>::inv(*at, (uint32_t)a, p, y);
}

/* The warp's least falcon_dec_zeros (f64's walk down), as a max: the host pass
 * of this nvcc declares __reduce_max_sync but not __reduce_min_sync. */
__device__ uint32_t least_zeros(uint32_t zeros) {
    return FALCON_DOWN_MAX -
           __reduce_max_sync(FZ_FULL_MASK, FALCON_DOWN_MAX - zeros);
}

/* One try at A for FUSED_GUESS (f32): the rows' integers written over
 * their values as they fit, the hash summed as rows are first read. */
template <typename T>
__device__ GuessResult try_scale(T *stage, uint32_t n, int guess, ScaleWork *w,
                                 uint32_t *down) {
    typedef FW<T> F;
    static_assert(F::FUSED_GUESS, "f64 tries by try_scale_pairs");
    const uint32_t lane = threadIdx.x & 31;
    const double p = falcon_pow10(guess);
    const float y = F::recip(p);
    /* 0 once a witness is found (warp-uniform, looked for until found) */
    uint32_t least = guess == 0 ? 0u : FALCON_DOWN_MAX;
    uint32_t row = 0;
    T *at = stage + lane; /* stage_slot(i) */
#pragma unroll 1
    for (uint32_t i0 = 0; i0 < n; i0 += 32, row++, at += kRowSlots) {
        const uint32_t i = i0 + lane;
        const T v = i < n ? *at : (T)0; /* +0.0 fits */
        uint64_t mag;
        const bool fit = F::fits(v, p, y, &mag);
        if (w->hash && row == w->hashed) { /* warp-uniform */
            if (i < n)
                w->hsum += SquareSum::term(v, i);
            w->hashed++;
        }
        if (!__all_sync(FZ_FULL_MASK, fit)) {
            restore_rows<T>(stage, n, row, guess, p);
            return kTooSmall;
        }
        if (i < n) /* falcon_fwd's integer */
            *at = v >> (F::BITS - 1) ? (T)(0 - (T)mag) : (T)mag;
        if (least != 0 && __any_sync(FZ_FULL_MASK, F::mag_not10(mag)))
            least = 0;
    }
    *down = least;
    return least == 0 ? kHolds : kNoWitness; /* the integers stay */
}

/* try_scale for f64 (no FUSED_GUESS): two rows per step, so that the
 * exactness tests of two values per lane (each a chain of dependent
 * double operations) are in flight at once, and one reduction gives the
 * least count of both. Same answer: without FUSED_GUESS no row is put
 * back, so a try that fails says kTooSmall whichever row failed, and the
 * count is the least over all rows (a value past n is taken as +0.0,
 * which fits, with the count at its cap). */
template <typename T>
__device__ GuessResult try_scale_pairs(const T *stage, uint32_t n, int guess,
                                       uint32_t *down) {
    typedef FW<T> F;
    const uint32_t lane = threadIdx.x & 31;
    const double p = falcon_pow10(guess);
    uint32_t least = guess == 0 ? 0u : FALCON_DOWN_MAX;
    const T *at = stage + lane; /* stage_slot(i) */
#pragma unroll 1
    for (uint32_t i = lane; i - lane < n; i += 64, at += 2 * kRowSlots) {
        const T va = i < n ? at[0] : (T)0,
                vb = i + 32 < n ? at[kRowSlots] : (T)0;
        uint64_t ma, mb;
        const bool fa = F::fits(va, p, 0.0f, &ma),
                   fb = F::fits(vb, p, 0.0f, &mb);
        if (!__all_sync(FZ_FULL_MASK, fa && fb))
            return kTooSmall;
        if (least == 0)
            continue;
        const uint32_t za = falcon_dec_zeros(ma), zb = falcon_dec_zeros(mb);
        const uint32_t z = least_zeros(za < zb ? za : zb);
        least = z < least ? z : least;
    }
    *down = least;
    return least == 0 ? kHolds : kNoWitness;
}

/* After kNoWitness at A with the integers r_i at A in the stage (f32),
 * the try at A - 1 without a search step: every r_i is a multiple of 10,
 * so every alpha_i < A (an alpha_i = A would have w_i = r_i, and w_i / 10
 * at A - 1 would read back as v_i too), hence every value fits at A - 1
 * with the integer r_i / 10 < 10^D (the shortcut's proof at falcon_scan).
 * Divides the stage's integers by 10 and says whether one of them is a
 * witness (not a multiple of 10), i.e. whether A - 1 holds. */
template <typename T> __device__ bool integers_down(T *stage, uint32_t n) {
    typedef typename FW<T>::Signed S;
    bool witness = false;
    T *at = stage + (threadIdx.x & 31); /* stage_slot(i) */
#pragma unroll 1
    for (uint32_t i = threadIdx.x & 31; i < n; i += 32, at += kRowSlots) {
        const S s = (S)*at / 10; /* exact */
        *at = (T)s;
        witness |= s % 10 != 0;
    }
    return __any_sync(FZ_FULL_MASK, witness);
}

/* Tries of try_scale per chunk before the full scan. */
constexpr int kGuessTries = 4;

/* The chunk's scale byte: try_scale at the guess (the warp's last Case 1
 * scale), then one place up while a value does not fit, at most
 * kGuessTries times; else the full scan. Whatever the walk does, a kHolds
 * answer is the scan's. When no value is a witness the scale is below the
 * try: f32 walks down by dividing the integers (integers_down), f64 reads
 * it off the integers' trailing decimal zeros (the walk down at
 * falcon_dec_zeros), both without another try unless f64's count reached
 * its cap.
 * *ints: the stage holds the integers (a try held), else the values. */
template <typename T>
__device__ uint32_t chunk_scale(T *stage, uint32_t n, int guess, ScaleWork *w,
                                bool *ints) {
    int a = guess, dir = 0;
    *ints = false;
#pragma unroll 1
    for (int t = 0; t < kGuessTries && a >= 0 && a <= (int)FW<T>::AMAX; t++) {
        uint32_t down = FALCON_DOWN_MAX;
        GuessResult r;
        if constexpr (FW<T>::FUSED_GUESS)
            r = try_scale<T>(stage, n, a, w, &down);
        else
            r = try_scale_pairs<T>(stage, n, a, &down);
        if (r == kHolds) {
            *ints = FW<T>::FUSED_GUESS;
            return (uint32_t)a;
        }
        if (FW<T>::FUSED_GUESS && r == kNoWitness) {
            /* down to the place that holds (A = 0 needs no witness) */
            do
                a--;
            while (!integers_down<T>(stage, n) && a > 0);
            *ints = true;
            return (uint32_t)a;
        }
        if (r == kNoWitness) { /* f64: the walk down in one step */
            const int scale = falcon_walk_down(a, down);
            if (scale >= 0)
                return (uint32_t)scale;
            a -= (int)FALCON_DOWN_MAX;
            dir = -1;
            continue;
        }
        if (dir < 0)
            break; /* never both ways */
        dir = 1;
        a++;
    }
    return full_scale<T>(stage, n);
}

/* ------------------------------------------------------ warp kernel */
/* The stage's values from this lane's value *i (row by row, *at its
 * slot) up to `end` into their integers (falcon_fwd: Case 2's zigzag or
 * Case 1's scaled integer at p), with their hash terms when kHash. The
 * case and the hashing are template parameters, so the rolled per-value
 * loop carries neither test. */
template <typename T, bool kCase2, bool kHash>
__device__ void transform_rows(T **at, uint32_t *i, uint32_t end, double p,
                               SquareSum::Acc *hsum) {
    typedef FW<T> F;
    T *slot = *at;
    uint32_t k = *i;
    /* f64: two rows' conversions in flight */
    [[maybe_unused]] constexpr int kUnroll = sizeof(T) == 8 ? 2 : 1;
#pragma unroll kUnroll
    for (; k < end; k += 32, slot += kRowSlots) {
        const T v = *slot;
        if (kHash)
            *hsum += SquareSum::term(v, k);
        *slot = kCase2 ? F::zz(v) : F::fwd_case1(v, p);
    }
    *at = slot;
    *i = k;
}

/* transform_staged for one case: the rows a try already hashed (rows
 * [0, hashed)) without hashing, the rest with it when checksums are on. */
template <typename T, bool kCase2>
__device__ void transform_staged_as(T *stage, uint32_t n, double p,
                                    bool checksums, uint32_t hashed,
                                    SquareSum::Acc *hsum) {
    T *at = stage + (threadIdx.x & 31); /* stage_slot(i) */
    uint32_t i = threadIdx.x & 31;
    const uint32_t done = 32 * hashed < n ? 32 * hashed : n;
    transform_rows<T, kCase2, false>(&at, &i, done, p, hsum);
    if (checksums)
        transform_rows<T, kCase2, true>(&at, &i, n, p, hsum);
    else
        transform_rows<T, kCase2, false>(&at, &i, n, p, hsum);
}

/* The stage's values into the chunk's integers at scale (falcon_fwd) in
 * place, by rows (lane L: values 32 k + L), adding the hash terms of rows
 * from `hashed` on to *hsum: rolled passes, as 33 unrolled copies of the
 * transform (f64 above all) were an instruction-cache burden. */
template <typename T>
__device__ void transform_staged(T *stage, uint32_t n, uint32_t scale,
                                 bool checksums, uint32_t hashed,
                                 SquareSum::Acc *hsum) {
    if (scale == FALCON_CASE2)
        transform_staged_as<T, true>(stage, n, 1.0, checksums, hashed, hsum);
    else
        transform_staged_as<T, false>(stage, n, falcon_pow10((int)scale),
                                      checksums, hashed, hsum);
}

/* This lane's deltas x[b] = zigzag(s_(32L + 1 + b) - s_(32L + b)) of the
 * staged integers s_i, zero past the chunk, OR-ed into *any. Lane L reads
 * the slots of values 32 L .. 32 L + 32, i.e. 33 L .. 33 L + 33 (stage_slot):
 * fixed offsets from one address. The lane that holds the chunk's last
 * value may read past it: those slots first get that value (their deltas
 * are then 0), so no value needs a bounds test; lanes past the chunk take
 * zeros. */
template <typename T>
__device__ void lane_deltas(T *stage, uint32_t n, T (&x)[32], T *any) {
    typedef FW<T> F;
    const uint32_t lane = threadIdx.x & 31;
    const uint32_t last = n - 1; /* a chunk has a value */
    const uint32_t pad = n + lane, pad_end = 32 * (last / 32) + 33;
    const T last_value = stage[stage_slot(last)];
    __syncwarp();
    if (pad < pad_end && pad < FALCON_MAX_VALUES)
        stage[stage_slot(pad)] = last_value;
    __syncwarp();
    if (32 * lane + 1 < n) {
        const T *row = stage + kRowSlots * lane + 1; /* value 32 L + 1 */
        T prev = row[-1];
#pragma unroll
        for (int b = 0; b < 32; b++) {
            const T s = row[b < 31 ? b : 32];
            x[b] = F::zz((T)(s - prev));
            prev = s;
            *any |= x[b];
        }
    } else {
#pragma unroll
        for (int b = 0; b < 32; b++)
            x[b] = 0;
    }
}

/* A chunk coded and published but not yet written (warp-uniform): its
 * planes wait in their buffer for the look-back to give its offset. */
template <typename T> struct PendingChunk {
    unsigned long long c;
    T sparse_mask; /* bit q: plane q is sparse (a chunk has <= 8 x sizeof(T)) */
    T u0;
    uint32_t size; /* raw when verbatim */
    uint32_t scale, width;
    bool verbatim;
};

/* The look-back of p, then its bytes at their place: the head by lane 0,
 * the planes from planes (word L of plane q at 32 q + L). */
template <typename T>
__device__ void write_chunk(const fz_gpu_args &a, const PendingChunk<T> &p,
                            const uint32_t *planes) {
    const fz_header &h = a.expect;
    const uint32_t lane = threadIdx.x & 31;
    const unsigned long long excl = resolve_chunk(a, p.c, p.size);
    const uint64_t at = a.payload_off + excl;
    if (at + p.size > a.dst_capacity) {
        if (lane == 0)
            fz_gpu_fail(a.scratch, FZS_DST_TOO_SMALL);
        return;
    }
    uint8_t *out = a.dst + at;
    if (p.verbatim) {
        const uint8_t *inb = a.src + p.c * h.chunk_bytes;
        for (uint32_t k = lane; k < p.size; k += 32)
            out[k] = inb[k];
        return;
    }
    const uint32_t n = (uint32_t)(fz_chunk_raw_bytes(&h, p.c) / sizeof(T));
    const uint32_t B = falcon_plane_bytes(n), M = falcon_bitmap_bytes(B);
    const uint32_t first_len = falcon_first_len(p.u0);
    const uint32_t nflags = (p.width + 7) / 8;
    if (lane == 0) {
        out[0] = (uint8_t)p.scale;
        out[1] = (uint8_t)p.width;
        out[2] = (uint8_t)first_len;
        for (uint32_t k = 0; k < first_len; k++)
            out[FALCON_HEAD_BYTES + k] = (uint8_t)((uint64_t)p.u0 >> (8 * k));
        for (uint32_t k = 0; k < nflags; k++)
            out[FALCON_HEAD_BYTES + first_len + k] =
                (uint8_t)(p.sparse_mask >> (8 * k));
    }
    /* planes from the top down: the rows by a pointer, plane q's flag as
     * the top bit of the mask shifted left once per plane, the output by
     * a pointer (no row index, variable 64-bit shift or 64-bit address
     * sum per plane) */
    uint8_t *put = out + FALCON_HEAD_BYTES + first_len + nflags;
    const uint32_t *row = planes + 32 * p.width + lane;
    constexpr uint32_t kBits = 8 * sizeof(T);
    T flags = p.width ? p.sparse_mask << (kBits - p.width) : (T)0;
    for (uint32_t q = p.width; q-- > 0; flags <<= 1) {
        row -= 32;
        const uint32_t word = *row;
        if (flags >> (kBits - 1)) {
            const uint32_t nz = nonzero4(word);
            /* bitmap byte k: plane bytes 8k..8k+7 = lanes 2k, 2k+1 */
            const uint32_t hi = __shfl_down_sync(FZ_FULL_MASK, nz, 1);
            if (!(lane & 1) && (lane >> 1) < M)
                put[lane >> 1] = (uint8_t)(nz | hi << 4);
            uint32_t total;
            uint32_t o = M + lanes_before(__popc(nz), &total);
#pragma unroll
            for (int r = 0; r < 4; r++) {
                const uint32_t byte = (word >> (8 * r)) & 0xFFu;
                if (byte)
                    put[o++] = (uint8_t)byte;
            }
            put += M + total;
        } else if (B == 128) {
            /* a whole chunk's plane: every lane has its 4 bytes, one
             * address; one word store where they are aligned (all lanes
             * or none) */
            uint8_t *d = put + 4 * lane;
            if (((uintptr_t)put & 3u) == 0) {
                *reinterpret_cast<uint32_t *>(d) = word;
            } else {
                d[0] = (uint8_t)word;
                d[1] = (uint8_t)(word >> 8);
                d[2] = (uint8_t)(word >> 16);
                d[3] = (uint8_t)(word >> 24);
            }
            put += B;
        } else {
#pragma unroll
            for (int r = 0; r < 4; r++) {
                const uint32_t k = 4 * lane + r;
                if (k < B)
                    put[k] = (uint8_t)(word >> (8 * r));
            }
            put += B;
        }
    }
}

/* Codes chunk c from buffer (stage, then planes) and publishes its size;
 * returns what write_chunk needs. */
template <typename T>
__device__ PendingChunk<T>
code_chunk(const fz_gpu_args &a, unsigned long long c, T *stage, int *guess) {
    typedef FW<T> F;
    const fz_header &h = a.expect;
    const uint32_t lane = threadIdx.x & 31;
    uint32_t *planes = reinterpret_cast<uint32_t *>(stage);
    const uint64_t raw = fz_chunk_raw_bytes(&h, c);
    const uint32_t n = (uint32_t)(raw / sizeof(T));
    const uint8_t *inb = a.src + c * h.chunk_bytes;
    __syncwarp(); /* the buffer's previous planes are written out */
    stage_chunk<T>(reinterpret_cast<const T *>(inb), n, stage);
    __syncwarp();

    /* 1. the chunk's scale: a guess near the last one if it provably is
     *    the answer (falcon_xform.h, falcon_scan), else the scan */
    PendingChunk<T> pc;
    pc.c = c;
    const bool checksums = h.flags & FZ_HDR_FLAG_CHECKSUMS;
    ScaleWork work;
    work.hash = F::FUSED_GUESS && checksums;
    work.hashed = 0;
    work.hsum = 0;
    bool ints;
    pc.scale = chunk_scale<T>(stage, n, *guess, &work, &ints);
    if (pc.scale != FALCON_CASE2)
        *guess = (int)pc.scale;
    const uint32_t scale = pc.scale;
    SquareSum::Acc hsum = work.hsum;
    if (!ints)
        transform_staged<T>(stage, n, scale, checksums, work.hashed, &hsum);
    const uint32_t ck = checksums ? SquareSum::warp_final(hsum, raw / 4) : 0u;

    /* 2. deltas, zigzag: x[b] = delta of value 32L + 1 + b */
    __syncwarp(); /* the stage was written by rows */
    const T s0 = stage[0];
    T x[32], any = 0;
    lane_deltas<T>(stage, n, x, &any);
    pc.width = F::width(any);
    pc.u0 = scale == FALCON_CASE2 ? s0 : F::zz(s0);
    const uint32_t B = falcon_plane_bytes(n), M = falcon_bitmap_bytes(B);
    __syncwarp(); /* every lane has read the stage */
    store_planes(x, pc.width, planes);
    __syncwarp();

    /* 3. the size: every plane's cheaper storage */
    pc.sparse_mask = 0;
    uint32_t size =
        FALCON_HEAD_BYTES + falcon_first_len(pc.u0) + (pc.width + 7) / 8;
    const uint32_t *row = planes + 32 * pc.width + lane;
    for (uint32_t q = pc.width; q-- > 0;) { /* the mask fills from the top */
        row -= 32;
        const uint32_t nnz =
            __reduce_add_sync(FZ_FULL_MASK, nonzero_count(*row));
        const bool sparse = falcon_sparse(B, nnz);
        pc.sparse_mask = pc.sparse_mask << 1 | (T)sparse;
        size += sparse ? M + nnz : B;
    }
    pc.verbatim = size >= raw;
    pc.size = pc.verbatim ? (uint32_t)raw : size;
    publish_chunk(a, c, pc.size, ck);
    return pc;
}

/* Write-behind: a warp codes and publishes chunk k, then resolves and
 * writes chunk k - 1, whose planes wait in the other stage (f32) or the
 * kept planes (f64; WarpSmem). A chunk's
 * offset needs every earlier chunk's size; the chunks in flight just
 * before it were ticketed moments earlier, so waiting for them right
 * after publishing would idle the warp for the slowest one's lag (a third
 * of the warp time in the profile). One chunk later they are published. */
/* Every 128-byte line of a chunk's input into the L2 (lane L: lines L,
 * L + 32, ...). */
__device__ __forceinline__ void prefetch_chunk(const uint8_t *in,
                                               uint32_t bytes) {
    for (uint32_t off = 128u * (threadIdx.x & 31); off < bytes; off += 4096u)
        fz_prefetch_l2(in + off);
}

template <typename T>
__global__ void __launch_bounds__(kThreads, MinBlocks<T>::encode)
    falcon_compress_warp(const fz_gpu_args a) {
    extern __shared__ __align__(16) uint8_t smem_raw[];
    uint8_t *mine = warp_smem(smem_raw, WarpSmem<T>::encode);
    const fz_header &h = a.expect;
    const uint32_t lane = threadIdx.x & 31;
    constexpr uint32_t kKeep = WarpSmem<T>::pending_planes;
    uint32_t *kept = reinterpret_cast<uint32_t *>(mine + WarpSmem<T>::buffer);
    int guess = -1; /* the last Case 1 scale of this warp (warp-uniform) */
    PendingChunk<T> pending;
    bool has_pending = false;
    uint32_t k = 0; /* two stages: the one coded into */
    unsigned long long c = warp_ticket(a);
    while (c < h.chunk_count) {
        /* the next chunk's ticket is taken now and read after this one is
         * coded, and its input asked of the L2 then: neither the atomic's
         * round trip nor the input's DRAM latency waits in front of the
         * next chunk's staging any more */
        const unsigned int ticket =
            lane == 0 ? atomicAdd(&a.scratch->ticket, 1u) : 0u;
        T *stage = reinterpret_cast<T *>(mine + k * WarpSmem<T>::buffer);
        const uint32_t *planes = reinterpret_cast<const uint32_t *>(stage);
        const PendingChunk<T> coded = code_chunk<T>(a, c, stage, &guess);
        c = __shfl_sync(FZ_FULL_MASK, ticket, 0);
        if (c < h.chunk_count)
            prefetch_chunk(a.src + c * h.chunk_bytes,
                           (uint32_t)fz_chunk_raw_bytes(&h, c));
        if (has_pending)
            write_chunk<T>(a, pending,
                           kKeep ? kept
                                 : reinterpret_cast<const uint32_t *>(
                                       mine + (k ^ 1) * WarpSmem<T>::buffer));
        has_pending = true;
        pending = coded;
        if (!kKeep) {
            k ^= 1;
        } else if (!coded.verbatim && coded.width > kKeep) {
            write_chunk<T>(a, coded, planes); /* too wide to keep */
            has_pending = false;
        } else if (!coded.verbatim) {
            /* each lane copies its own words (it wrote and will read
             * only those) */
            for (uint32_t q = 0; q < coded.width; q++)
                kept[32 * q + lane] = planes[32 * q + lane];
        }
    }
    if (has_pending)
        write_chunk<T>(a, pending,
                       kKeep ? kept
                             : reinterpret_cast<const uint32_t *>(
                                   mine + (k ^ 1) * WarpSmem<T>::buffer));
}

/* Copies the size encoded bytes at in into the last 16-byte vectors of the
 * stage (stage_words 32-bit words, a multiple of 4, 16-byte aligned; the
 * decoder's planes grow from its start, see decode_warp) by 16-byte
 * asynchronous copies and returns where the first one landed,
 * at least stage_words * 4 - size - 15 bytes into the stage. The aligned
 * vectors may reach up to 15 bytes before in (the stream's header lies
 * there) and after the chunk: a vector past the end of the stream (at most
 * the last one) is read byte by byte. */
__device__ const uint8_t *stage_bytes(const uint8_t *in, uint32_t size,
                                      const uint8_t *end, uint32_t *all,
                                      uint32_t stage_words) {
    const uint32_t lane = threadIdx.x & 31;
    const uint32_t mis = (uint32_t)((uintptr_t)in & 15u);
    const uint8_t *base = in - mis;
    const uint4 *vecs = reinterpret_cast<const uint4 *>(base);
    const uint32_t nvecs = (mis + size + 15) / 16;
    uint4 *stage = reinterpret_cast<uint4 *>(all) + (stage_words / 4 - nvecs);
    const uint64_t whole = (uint64_t)(end - base) / 16;
    const uint32_t loadable = whole < nvecs ? (uint32_t)whole : nvecs;
    /* asynchronous copies, all in flight at once: loads into registers
     * came in batches of 2 KiB per warp, a round trip each */
#pragma unroll 1
    for (uint32_t k = lane; k < loadable; k += 32)
        fz_copy_async<16>(stage + k, vecs + k);
    fz_copy_async_wait();
    if (loadable < nvecs && lane == 0) { /* the stream's last bytes */
        uint8_t *last = reinterpret_cast<uint8_t *>(stage + loadable);
        for (uint32_t r = 0; base + 16 * loadable + r < end; r++)
            last[r] = base[16 * loadable + r];
    }
    return reinterpret_cast<const uint8_t *>(stage) + mis;
}

/* Decode one encoded chunk (size < raw, its bytes at in, staged at the end
 * of the stage by stage_bytes) into out (coalesced; with kVerify, this
 * lane's share of the chunk's square sum added to *hsum). Returns true (every
 * lane) when the chunk is not one the encoder writes; the last checks come with
 * the output, so a rejected chunk may have written out (the call fails). Of the
 * stream it reads only in[0..size).
 *
 * The parsed planes share the stage: the k-th plane of the stream (plane
 * q = width - 1 - k) goes to bytes [128 k, 128 k + 128) (planes), below the
 * stream bytes not yet read: writing it needs 128 (k + 1) <= the position
 * of its own encoded bytes, in + pos (the bytes before it are read: a
 * __syncwarp precedes every plane's write). A canonical chunk always
 * satisfies this: its planes from k on take at most 128 (width - k) bytes
 * and end at in + size >= stage end - 15 (stage_bytes), so in + pos >=
 * stage bytes - 15 - 128 (width - k) >= 128 (k + 1) because the stage
 * holds 128 (BITS + 1) + 15 bytes (kStageSlots). So a chunk that fails the test
 * is not canonical and is rejected there, as it would be later. */
template <typename T, bool kVerify>
__device__ bool decode_warp(const uint8_t *in, uint32_t size, uint32_t n,
                            uint32_t *planes, T *stage, T *out,
                            SquareSum::Acc *hsum) {
    typedef FW<T> F;
    const int lane = threadIdx.x & 31;
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
    const uintptr_t room =
        (uintptr_t)(in - reinterpret_cast<uint8_t *>(planes));
    __syncwarp(); /* the head is read before planes may overwrite it */
    /* checks that guard no read are voted on once, after the planes (F7);
     * a dense plane's too, so that no branch waits for its warp sum
     * (decompression f64 +2-4%, f32 +1-2.6%, run s148) */
    bool bad = false;
    for (uint32_t q = width; q-- > 0;) {
        const uint32_t k = width - 1 - q; /* stream order */
        if (room + pos < 128u * (k + 1))
            return true; /* not canonical (above) */
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
            bad |= (my4 >> have) != 0;
            uint32_t o = pos + M + lanes_before(__popc(my4), &nnz);
            if (!falcon_sparse(B, nnz) || size - pos - M < nnz)
                return true;
#pragma unroll
            for (int r = 0; r < 4; r++)
                if ((my4 >> r) & 1u) {
                    const uint32_t byte = in[o++];
                    bad |= byte == 0; /* a listed byte that is zero */
                    word |= byte << (8 * r);
                }
            pos += M + nnz;
        } else {
            if (size - pos < B)
                return true;
            const uint32_t k0 = 4u * (uint32_t)lane;
            if (k0 + 4 <= B) {
                /* the lane's 4 bytes from the aligned words around them:
                 * both lie in the stage (its end is 16-byte aligned and at
                 * or after in + size, so at or after the 4 bytes' word
                 * end) and above the planes written so far (the room test
                 * gives in + pos >= 128 (k + 1), and the first word starts
                 * at most 3 bytes before in + pos) */
                const uint8_t *at = in + pos + k0;
                const uint32_t sh = (uint32_t)((uintptr_t)at & 3u);
                const uint32_t *w = reinterpret_cast<const uint32_t *>(at - sh);
                word = __funnelshift_r(w[0], sh ? w[1] : 0u, 8 * sh);
            } else {
#pragma unroll
                for (int r = 0; r < 4; r++) {
                    const uint32_t k = k0 + r;
                    if (k < B)
                        word |= (uint32_t)in[pos + k] << (8 * r);
                }
            }
            nnz = __reduce_add_sync(FZ_FULL_MASK, nonzero_count(word));
            bad |= falcon_sparse(B, nnz); /* sparse would be smaller */
            pos += B;
        }
        bad |= B && (uint32_t)lane == (B - 1) / 4 &&
               ((word >> (8 * ((B - 1) % 4))) & last_mask);
        bad |= q == width - 1 && nnz == 0; /* the width is not minimal */
        __syncwarp(); /* every lane's reads so far precede the write */
        planes[32 * k + lane] = word;
    }
    if (__any_sync(FZ_FULL_MASK, bad) || pos != size)
        return true;
    __syncwarp(); /* the planes are written, the bytes read */

    /* deltas x[b] of values 32L + 1 + b, then the integers: a running sum
     * in the lane, offset by the lanes before it */
    T x[32];
    load_planes(x, width, planes);
    __syncwarp(); /* every lane has its planes: the stage is free */
    const uint32_t firsti = 32u * (uint32_t)lane + 1;
    T part = 0;
#pragma unroll
    for (int b = 0; b < 32; b++) {
        part = (T)(part + F::unzz(x[b]));
        x[b] = part;
    }
    const T s0 = scale == FALCON_CASE2 ? u0 : F::unzz(u0);
    const T before = (T)(s0 + warp_incl_sum<T>(part) - part);
    /* the integers into the stage, then one rolled pass checks them and
     * writes the values out: the inverse (a division) is long code, which
     * 32 unrolled copies made an instruction-cache burden */
#pragma unroll
    for (int b = 0; b < 32; b++) {
        const uint32_t i = firsti + b;
        if (i < n)
            stage[stage_slot(i)] = (T)(before + x[b]);
    }
    if (lane == 0)
        stage[0] = s0;
    __syncwarp();
    const double p = scale == FALCON_CASE2 ? 1.0 : falcon_pow10((int)scale);
    const float y = F::recip(p);
    int ok = 1, tight = scale == 0 || scale == FALCON_CASE2;
    T *at = stage + lane; /* stage_slot(i) */
#pragma unroll 1
    for (uint32_t i = lane; i < n; i += 32, at += kRowSlots) {
        const T s = *at;
        if (scale != FALCON_CASE2) {
            ok &= F::valid1(s);
            if (!tight)
                tight = F::not10(s);
        }
        const T v = F::inv(s, scale, p, y);
        if (scale == FALCON_CASE2) /* for the canonical check below */
            *at = v;
        out[i] = v;
        if (kVerify) /* a template argument: no test per value */
            *hsum += SquareSum::term(v, i);
    }
    if (!__all_sync(FZ_FULL_MASK, ok) || !__any_sync(FZ_FULL_MASK, tight))
        return true;
    if (scale != FALCON_CASE2)
        return false;
    /* canonical Case 2: the encoder chooses it only when Case 1 is
     * impossible, so the scan of the decoded values must say Case 2 */
    __syncwarp(); /* the stage holds the values */
    return full_scale<T>(stage, n) != FALCON_CASE2;
}

/* kVerify: the caller's a.verify, so that a decoder told not to verify
 * leaves the per-value hash out of its code (decompression +4-11%, run
 * s93) and one that verifies has no per-value test of it (a runtime flag
 * cost 1-3%). The codec version, and so the checksum kind, is the
 * stream's, known only on the device. */
template <typename T, bool kVerify>
__global__ void __launch_bounds__(kThreads, MinBlocks<T>::decode)
    falcon_decompress_warp(const fz_gpu_args a) {
    typedef FW<T> F;
    extern __shared__ __align__(16) uint8_t smem_raw[];
    uint8_t *mine = warp_smem(smem_raw, WarpSmem<T>::decode);
    T *stage = reinterpret_cast<T *>(mine);
    uint32_t *planes = reinterpret_cast<uint32_t *>(stage);
    const int lane = threadIdx.x & 31;
    int st = FZS_OK;
    uint32_t flags = 0, version = 0;
    unsigned long long payload_bytes = 0;
    if (lane == 0) {
        fz_header hdr;
        st = fz_gpu_check_stream(a, &hdr);
        if (st != FZS_OK)
            fz_gpu_fail(a.scratch, st);
        flags = hdr.flags;
        version = hdr.codec_version;
        payload_bytes = hdr.payload_bytes;
    }
    if (__shfl_sync(FZ_FULL_MASK, st, 0) != FZS_OK)
        return;
    flags = __shfl_sync(FZ_FULL_MASK, flags, 0);
    version = __shfl_sync(FZ_FULL_MASK, version, 0);
    payload_bytes = __shfl_sync(FZ_FULL_MASK, payload_bytes, 0);
    const fz_header &h = a.expect; /* the stream's but for codec_version */
    const bool verify = kVerify && (flags & FZ_HDR_FLAG_CHECKSUMS);
    const bool version1 = falcon_sum_kind(version) == FZ_SUM_MIX;
    /* f64 only: the f32 decoder takes plain tickets (next_chunk) */
    fz_gpu_ahead *ahead =
        WarpSmem<T>::schedule
            ? reinterpret_cast<fz_gpu_ahead *>(mine + WarpSmem<T>::buffer)
            : nullptr;
    if (ahead && lane == 0) {
        *ahead = fz_gpu_ahead();
        ahead->start(a, flags, h.chunk_count);
    }
    for (;;) {
        uint64_t off = 0, size = 0;
        uint32_t want = 0;
        const unsigned long long c =
            next_chunk<T>(ahead, a, flags, &off, &size, &want);
        if (c >= h.chunk_count)
            break;
        const uint64_t raw = fz_chunk_raw_bytes(&h, c);
        const uint32_t n = (uint32_t)(raw / sizeof(T));
        const bool ok = size <= raw && off + size <= payload_bytes;
        if (lane == 0) {
            fz_gpu_hash_entry(a, flags, c, (uint32_t)size, want);
            if (!ok)
                fz_gpu_fail(a.scratch, FZS_CORRUPT_CHUNK);
        }
        if (!ok)
            continue;
        const uint8_t *in = a.src + a.payload_off + off;
        T *out = reinterpret_cast<T *>(a.dst + c * h.chunk_bytes);
        SquareSum::Acc hsum = 0;
        __syncwarp();      /* the previous chunk's stage is read */
        if (size == raw) { /* verbatim */
            for (uint32_t i = lane; i < n; i += 32) {
                const T v = F::load(in + (uint64_t)i * sizeof(T));
                out[i] = v;
                if (kVerify)
                    hsum += SquareSum::term(v, i);
            }
        } else {
            const uint8_t *bytes =
                stage_bytes(in, (uint32_t)size, a.src + a.src_size, planes,
                            kStageSlots * (uint32_t)sizeof(T) / 4);
            __syncwarp();
            if (decode_warp<T, kVerify>(bytes, (uint32_t)size, n, planes, stage,
                                        out, &hsum)) {
                if (lane == 0)
                    fz_gpu_fail(a.scratch, FZS_CORRUPT_CHUNK);
                continue;
            }
        }
        if (verify) {
            const uint32_t ck = version1 ? version1_checksum<T>(out, n)
                                         : SquareSum::warp_final(hsum, raw / 4);
            if (lane == 0 && ck != want)
                fz_gpu_fail(a.scratch, FZS_DATA_CHECKSUM);
        }
    }
}

/* -------------------------------------------------- reference kernel */
template <typename T> struct RefShared {
    T v[FALCON_MAX_VALUES]; /* values (encode input, decode output) */
    T e[FALCON_MAX_VALUES]; /* work */
    uint8_t buf[FALCON_HEAD_BYTES + 16 + 8 * sizeof(T) * 129]; /* payload */
};

/* The data checksum of a chunk's raw bytes (32-bit words in shared
 * memory) by the kind sum names, every lane. */
__device__ uint32_t ref_checksum(const uint8_t *bytes, uint64_t raw,
                                 fz_sum_kind sum) {
    uint64_t qs = 0;
    uint32_t hs = 0;
    for (uint32_t k = threadIdx.x & 31; k < raw / 4; k += 32) {
        const uint32_t w = fz_load32(bytes + 4 * k);
        if (sum == FZ_SUM_SQUARE)
            qs += fz_qsum_term(w, k);
        else
            hs += fz_hash_term(w, k);
    }
    return sum == FZ_SUM_SQUARE
               ? fz_gpu_sum<FZ_SUM_SQUARE>::warp_final(qs, raw / 4)
               : fz_gpu_sum<FZ_SUM_MIX>::warp_final(hs, raw / 4);
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
        const uint32_t ck = ref_checksum(
            reinterpret_cast<const uint8_t *>(sm.v), raw, FZ_SUM_SQUARE);
        uint32_t size = 0;
        if (lane == 0)
            size = FW<T>::encode_ref(sm.v, n, sm.e, sm.buf, (uint32_t)raw);
        __syncwarp(); /* lane 0's shared-memory writes, for every lane */
        size = __shfl_sync(FZ_FULL_MASK, size, 0);
        const bool verbatim = size >= raw;
        if (verbatim)
            size = (uint32_t)raw;
        publish_chunk(a, c, size, ck);
        const uint64_t at = a.payload_off + resolve_chunk(a, c, size);
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
    uint32_t flags = 0, version = 0;
    unsigned long long payload_bytes = 0;
    if (lane == 0) {
        fz_header hdr;
        st = fz_gpu_check_stream(a, &hdr);
        if (st != FZS_OK)
            fz_gpu_fail(a.scratch, st);
        flags = hdr.flags;
        version = hdr.codec_version;
        payload_bytes = hdr.payload_bytes;
    }
    if (__shfl_sync(FZ_FULL_MASK, st, 0) != FZS_OK)
        return;
    flags = __shfl_sync(FZ_FULL_MASK, flags, 0);
    version = __shfl_sync(FZ_FULL_MASK, version, 0);
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
            const uint32_t ck = ref_checksum(vb, raw, falcon_sum_kind(version));
            if (lane == 0 && ck != want)
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
    const int dsmem = kWarps * (int)WarpSmem<T>::decode;
    if (compress)
        return launch(falcon_compress_warp<T>, kThreads,
                      kWarps * (int)WarpSmem<T>::encode, blocks, a, sm_count,
                      stream);
    return a->verify ? launch(falcon_decompress_warp<T, true>, kThreads, dsmem,
                              blocks, a, sm_count, stream)
                     : launch(falcon_decompress_warp<T, false>, kThreads, dsmem,
                              blocks, a, sm_count, stream);
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
