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
 * is resolved, reads the chunk again and writes it, four subchunks at a
 * time (one packed prefix sum places their residual bytes; codes and
 * byte counts of the four are built as byte fields of one word). Pass 2
 * stages per warp in shared memory: the code bytes of 32 subchunks (one
 * shuffle per four subchunks, byte stores by even lanes, then one
 * coalesced store per lane) and the residual bytes (ORed as 32-bit words
 * into a zeroed ring by shared reductions, which lanes with nothing to
 * add aim at a spare word of their own; written out as aligned 8-byte
 * words half a ring at a time). Encoded chunks are
 * multiples of 8 bytes, so every chunk starts 8-byte aligned. Both passes
 * ask L2 for the input a fixed distance ahead, so a warp has enough bytes
 * in flight even when few warps are left (the last round of chunks).
 *
 * Decompression takes chunk offsets from the CUB scan of the table: a warp
 * loads the codes of 32 subchunks at once, lane L those of subchunk L,
 * and turns them into the offset of every residual inside its subchunk
 * (SWAR prefix sums of four byte fields at a time, staged in shared
 * memory: no warp scan per subchunk) and the subchunk offsets (one warp
 * scan), then decodes the 32 subchunks while their residual bytes are
 * requested from L2.
 * Codes, layout and chunk sizes: gfc_xform.h, shared with the CPU. */
#include "../../gpu/fz_gpu.cuh"
#include "gfc_xform.h"

namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr uint32_t kAhead = 4; /* subchunks loaded ahead by a lane */
/* L2 prefetch distance of a compressing warp, in input bytes: 2 KiB per
 * warp keeps ~13 MB of a full GPU's L2 busy, and a single warp ~16 lines
 * ahead of its loads. */
constexpr uint32_t kPrefetchBytes = 2048;
/* Residual staging ring per warp: written out kHalf bytes at a time, so it
 * holds less than kHalf unwritten bytes plus one subchunk (<= 256). */
constexpr uint32_t kRing = 2048;
constexpr uint32_t kHalf = kRing / 2;
constexpr uint32_t kRingWords = kRing / 4;
constexpr uint32_t kCodeStage = 32 * GFC_CODE_BYTES; /* 32 subchunks */

/* Index of the highest set bit of m; 0xffffffff for m = 0 (one FLO;
 * 31 - __clz(m) is not folded into it). */
__device__ __forceinline__ uint32_t highest_bit(uint32_t m) {
    uint32_t b;
    asm("bfind.u32 %0, %1;" : "=r"(b) : "r"(m));
    return b;
}

/* Per-type codes and checksum terms. The SWAR helpers work on four code
 * fields in the bytes of a word. */
template <typename T> struct Gfc;
template <> struct Gfc<uint32_t> {
    static __device__ uint32_t code(uint32_t r) {
        return gfc_code32(r);
    }
    static __device__ uint32_t magnitude(uint32_t r) {
        return (int32_t)r < 0 ? 0u - r : r;
    }
    /* gfc_bytes32(gfc_code32(r)) = 4 - clz(|r|) / 8 = (flo(|r|) + 8) / 8
     * (flo = 31 - clz, -1 for 0) */
    static __device__ uint32_t residual_bytes(uint32_t r) {
        return (highest_bit(magnitude(r)) + 8) >> 3;
    }
    /* stored bytes of a valid code (z <= 4) */
    static __device__ uint32_t valid_bytes(uint32_t code) {
        return 4u - (code & 7u);
    }
    /* zero-byte counts z = 4 - bytes of four byte fields */
    static __device__ uint32_t zeros4(uint32_t counts) {
        return 0x04040404u - counts;
    }
    /* byte counts of four code fields (any code: garbage for invalid
     * ones, which fail invalid4) */
    static __device__ uint32_t counts4(uint32_t codes) {
        return 0x04040404u - (codes & 0x07070707u);
    }
    /* non-zero if a field has z > 4 */
    static __device__ uint32_t invalid4(uint32_t codes) {
        return ((codes & 0x07070707u) + 0x03030303u) & 0x08080808u;
    }
    /* The nb = 1..4 bytes at byte `start` of the chunk, 0 for nb = 0
     * (start + nb <= the chunk size, a multiple of 8). */
    static __device__ uint32_t load_mag(const uint8_t *in, uint32_t start,
                                        uint32_t nb) {
        const uint32_t *w =
            reinterpret_cast<const uint32_t *>(in + (start & ~3u));
        const uint32_t sh = (start & 3u) * 8;
        const uint32_t lo = nb ? w[0] : 0u;
        const uint32_t hi = sh + 8 * nb > 32 ? w[1] : 0u;
        /* nb = 0: lo = hi = 0, whatever the mask */
        const uint32_t keep = 0xffffffffu >> ((32 - 8 * nb) & 31);
        return __funnelshift_r(lo, hi, sh) & keep;
    }
    /* Bit 31 set if a valid code and its magnitude (< 2^(8 nb)) are not
     * canonical, i.e. gfc_code32(residual) != code: the top stored byte
     * is zero (flo(mag) < 8 nb - 8), or the sign is not the residual's
     * (sign 0: mag >= 2^31; sign 1: mag = 0 or mag > 2^31). */
    static __device__ uint32_t noncanonical(uint32_t code, uint32_t mag,
                                            uint32_t nb, uint32_t) {
        return (mag - (code >> 3)) | (highest_bit(mag) + 8 - 8 * nb);
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
    static __device__ uint64_t magnitude(uint64_t r) {
        return (int64_t)r < 0 ? 0 - r : r;
    }
    static __device__ uint32_t residual_bytes(uint64_t r) {
        return gfc_bytes64(gfc_code64(r));
    }
    static __device__ uint32_t valid_bytes(uint32_t code) {
        return gfc_bytes64(code);
    }
    /* z = 8 - bytes, or 7 - bytes for bytes 0 and 1 (z = 7, 6) */
    static __device__ uint32_t zeros4(uint32_t counts) {
        const uint32_t below2 = ~((counts + 0x06060606u) >> 3) & 0x01010101u;
        return 0x08080808u - counts - below2;
    }
    /* 8 - z, or 7 - z for z = 6, 7 */
    static __device__ uint32_t counts4(uint32_t codes) {
        const uint32_t z = codes & 0x07070707u;
        return 0x08080808u - z - (((z + 0x02020202u) >> 3) & 0x01010101u);
    }
    static __device__ uint32_t invalid4(uint32_t) {
        return 0;
    }
    static __device__ uint64_t load_mag(const uint8_t *in, uint32_t start,
                                        uint32_t nb) {
        if (!nb)
            return 0;
        const uint32_t sh = (start & 7u) * 8;
        const unsigned long long *w =
            reinterpret_cast<const unsigned long long *>(in + (start & ~7u));
        const uint64_t lo = w[0];
        const uint64_t hi = sh + 8 * nb > 64 ? w[1] : 0;
        return gfc_low_bytes(sh ? lo >> sh | hi << (64 - sh) : lo, nb);
    }
    static __device__ uint32_t noncanonical(uint32_t code, uint64_t, uint32_t,
                                            uint64_t r) {
        return gfc_code64(r) != code ? 0x80000000u : 0u;
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

/* x plus x of the lane d below (lanes < d: x), by the shuffle's own
 * in-range predicate (no lane compare and select). */
__device__ __forceinline__ uint32_t add_from_below(uint32_t x, uint32_t d) {
    asm volatile("{\n\t.reg .u32 t;\n\t.reg .pred p;\n\t"
                 "shfl.sync.up.b32 t|p, %0, %1, 0, -1;\n\t"
                 "@p add.u32 %0, %0, t;\n\t}"
                 : "+r"(x)
                 : "r"(d));
    return x;
}

/* Inclusive prefix sum over the warp. */
__device__ __forceinline__ uint32_t warp_inclusive(uint32_t x) {
#pragma unroll
    for (uint32_t d = 1; d < 32; d <<= 1)
        x = add_from_below(x, d);
    return x;
}

/* Exclusive prefix sum over the warp; *total gets the sum. */
__device__ __forceinline__ uint32_t warp_exclusive(uint32_t x,
                                                   uint32_t *total) {
    const uint32_t incl = warp_inclusive(x);
    *total = __shfl_sync(FZ_FULL_MASK, incl, 31);
    return incl - x;
}

/* Exclusive prefix sums over the warp of the four byte fields of x at
 * once (the byte counts of four subchunks). Every exclusive sum is at most
 * 31 * 8 = 248 and fits its byte; an inclusive sum of lane 31 may reach
 * 256 and carry into the next field, but incl - x is exact mod 2^32, and
 * lane 31 sends nothing in the scan. */
__device__ __forceinline__ uint32_t warp_exclusive_bytes(uint32_t x) {
    return warp_inclusive(x) - x;
}

/* Byte field g of x. */
__device__ __forceinline__ uint32_t byte_field(uint32_t x, uint32_t g) {
    return (x >> (8 * g)) & 255u;
}

/* The next chunk for this warp. */
__device__ uint64_t warp_ticket(const fz_gpu_args &a) {
    unsigned t = 0;
    if (lane_id() == 0)
        t = atomicAdd(&a.scratch->ticket, 1u);
    return __shfl_sync(FZ_FULL_MASK, t, 0);
}

__device__ __forceinline__ void prefetch_l2(const void *p) {
    asm volatile("prefetch.global.L2 [%0];" ::"l"(p));
}

/* Ask L2 for the group of kAhead subchunks kPrefetchBytes past the group
 * starting at subchunk s0 (lane k: its k-th 128-byte line; every line of a
 * range holds exactly one of the addresses 128 k apart). */
template <typename T>
__device__ __forceinline__ void prefetch_group(const T *in, uint32_t s0,
                                               uint64_t raw) {
    constexpr uint32_t kLines = kAhead * GFC_SUB * sizeof(T) / 128;
    const uint64_t at =
        (uint64_t)s0 * GFC_SUB * sizeof(T) + kPrefetchBytes + 128 * lane_id();
    if (lane_id() < kLines && at < raw)
        prefetch_l2(reinterpret_cast<const uint8_t *>(in) + at);
}

/* The first kPrefetchBytes of a chunk (one line per lane). */
__device__ __forceinline__ void prefetch_start(const void *in, uint64_t raw) {
    const uint64_t at = 128 * lane_id();
    if (at < kPrefetchBytes && at < raw)
        prefetch_l2(reinterpret_cast<const uint8_t *>(in) + at);
}

/* OR v into the shared word at shared address `at`, or into `spare` if v
 * is zero: no branch (ptxas turns predicated reductions into branches),
 * and lanes with nothing to store (often several at one position) do not
 * queue on one word. Every spare word differs by lane; ORing 0 into a
 * ring word changes nothing. */
__device__ __forceinline__ void shared_or(uint32_t at, uint32_t v,
                                          uint32_t spare) {
    asm volatile("red.shared.or.b32 [%0], %1;" ::"r"(v ? at : spare), "r"(v)
                 : "memory");
}

/* Shared address of ring word q (mod kRingWords); ring: shared address
 * of the ring. */
__device__ __forceinline__ uint32_t ring_word(uint32_t ring, uint32_t q) {
    return ring + 4 * (q % kRingWords);
}

/* OR a residual magnitude into the staging ring at byte `pos` (ring bytes
 * are little-endian in 32-bit words). Its bytes above the stored count are
 * zero, so neighbouring lanes' bytes are untouched; they may share a
 * boundary word, hence the atomics. spare: this lane's spare word. */
__device__ __forceinline__ void ring_or(uint32_t ring, uint32_t pos,
                                        uint32_t mag, uint32_t spare) {
    /* funnel shifts take the amount mod 32: 8 pos stands for 8 (pos % 4) */
    const uint32_t q = pos >> 2, sh = pos * 8;
    shared_or(ring_word(ring, q), __funnelshift_l(0u, mag, sh), spare);
    shared_or(ring_word(ring, q + 1), __funnelshift_l(mag, 0u, sh), spare);
}
__device__ __forceinline__ void ring_or(uint32_t ring, uint32_t pos,
                                        uint64_t mag, uint32_t spare) {
    const uint32_t q = pos >> 2, sh = (pos & 3) * 8;
    const uint32_t lo = (uint32_t)mag, hi = (uint32_t)(mag >> 32);
    shared_or(ring_word(ring, q), lo << sh, spare);
    shared_or(ring_word(ring, q + 1), __funnelshift_l(lo, hi, sh), spare);
    shared_or(ring_word(ring, q + 2), __funnelshift_l(hi, 0u, sh), spare);
}

/* Write the ring's 8-byte words for residual bytes [8 from, 8 to) of the
 * chunk (at most kRing bytes) and zero them for reuse. */
__device__ __forceinline__ void ring_flush(unsigned long long *ring64,
                                           unsigned long long *resid,
                                           uint32_t from, uint32_t to) {
    for (uint32_t k = from + lane_id(); k < to; k += 32) {
        const uint32_t w = k % (kRing / 8);
        resid[k] = ring64[w];
        ring64[w] = 0;
    }
}

/* Pass 1 of a chunk: this lane's share of the residual bytes and of the
 * data checksum. Branch-free groups: subchunks past the end (in the last
 * group) are padding like the tail of the last subchunk, residual 0 and
 * no bytes, so they need no test of their own. */
template <typename T>
__device__ void size_pass(const T *in, uint32_t n, uint32_t subs, uint64_t raw,
                          uint32_t pl, uint32_t *bytes_out,
                          uint32_t *hash_out) {
    const uint32_t lane = lane_id();
    uint32_t bytes = 0, hsum = 0;
    T prev = 0;
    prefetch_start(in, raw);
    for (uint32_t s0 = 0; s0 < subs; s0 += kAhead) {
        prefetch_group(in, s0, raw);
        const uint32_t i0 = s0 * GFC_SUB + lane;
        const T *at = in + i0;
        T x[kAhead];
#pragma unroll
        for (uint32_t g = 0; g < kAhead; g++)
            x[g] = i0 + g * GFC_SUB < n ? at[g * GFC_SUB] : 0;
#pragma unroll
        for (uint32_t g = 0; g < kAhead; g++) {
            const T p = __shfl_sync(FZ_FULL_MASK, prev, pl);
            const uint32_t i = i0 + g * GFC_SUB;
            const uint32_t h = Gfc<T>::hash(x[g], i);
            hsum += i < n ? h : 0u;
            if (i >= n)
                x[g] = p; /* padding: residual 0 */
            bytes += Gfc<T>::residual_bytes((T)(x[g] - p));
            prev = x[g];
        }
    }
    *bytes_out = bytes;
    *hash_out = hsum;
}

/* Per-warp staging of pass 2, in shared memory. */
struct __align__(16) WarpStage {
    uint32_t ring[kRingWords]; /* residual bytes; zero where unused */
    uint8_t codes[kCodeStage]; /* code bytes of 32 subchunks */
};

/* Pass 2 of a chunk: codes and residual bytes to `out` (8-byte aligned).
 * Subchunks go in groups of kAhead: one packed scan places the residual
 * bytes of the whole group, one shuffle pairs its codes. */
template <typename T>
__device__ void write_pass(const T *in, uint32_t n, uint32_t subs, uint64_t raw,
                           uint32_t pl, uint8_t *out, WarpStage &st) {
    static_assert(kAhead == 4, "one byte field per subchunk of a group");
    /* the ring holds < kHalf unwritten bytes plus one group */
    static_assert(kHalf >= kAhead * GFC_SUB * sizeof(T), "ring too small");
    static_assert(kCodeStage / GFC_CODE_BYTES % kAhead == 0, "group split");
    const uint32_t lane = lane_id();
    unsigned long long *resid =
        reinterpret_cast<unsigned long long *>(out + GFC_CODE_BYTES * subs);
    unsigned long long *ring64 =
        reinterpret_cast<unsigned long long *>(st.ring);
    uint32_t fill = 0, flushed = 0; /* residual bytes staged, written */
    T prev = 0;
    prefetch_start(in, raw);
    const uint32_t ring =
        (uint32_t)__cvta_generic_to_shared(static_cast<void *>(st.ring));
    const uint32_t spare = ring_word(ring, lane);
    for (uint32_t s0 = 0; s0 < subs; s0 += kAhead) {
        prefetch_group(in, s0, raw);
        const uint32_t i0 = s0 * GFC_SUB + lane;
        const T *at = in + i0;
        T x[kAhead];
        /* whole groups without per-load tests (f32; for f64 it costs
         * registers: 40 -> 44) */
        if (sizeof(T) == 4 &&
            s0 * GFC_SUB + kAhead * GFC_SUB <= n) { /* warp-uniform */
#pragma unroll
            for (uint32_t g = 0; g < kAhead; g++)
                x[g] = load_last(at + g * GFC_SUB);
        } else {
#pragma unroll
            for (uint32_t g = 0; g < kAhead; g++)
                x[g] = i0 + g * GFC_SUB < n ? load_last(at + g * GFC_SUB) : 0;
        }
        /* subchunks past the end are padding too: residual 0, code 0,
         * no bytes, and their codes are never copied out */
        T mag[kAhead];
        /* byte field g: subchunk s0 + g; signs at bit 3 of the fields */
        uint32_t signs = 0, counts = 0;
        T p = __shfl_sync(FZ_FULL_MASK, prev, pl);
#pragma unroll
        for (uint32_t g = 0; g < kAhead; g++) {
            if (i0 + g * GFC_SUB >= n)
                x[g] = p;
            const T r = (T)(x[g] - p);
            mag[g] = Gfc<T>::magnitude(r);
            counts |= Gfc<T>::residual_bytes(r) << (8 * g);
            signs |= (uint32_t)(r >> (8 * sizeof(T) - 1)) << (8 * g + 3);
            if (g + 1 < kAhead)
                p = __shfl_sync(FZ_FULL_MASK, x[g], pl);
        }
        const uint32_t codes = signs | Gfc<T>::zeros4(counts);
        prev = x[kAhead - 1];
        /* code byte l / 2 of each subchunk: lane l's code low, lane
         * l + 1's high */
        const uint32_t pairs = codes | __shfl_down_sync(FZ_FULL_MASK, codes, 1)
                                           << 4;
        if ((lane & 1) == 0) {
#pragma unroll
            for (uint32_t g = 0; g < kAhead; g++)
                st.codes[GFC_CODE_BYTES * ((s0 + g) & 31) + lane / 2] =
                    (uint8_t)byte_field(pairs, g);
        }
        const uint32_t s_end = s0 + kAhead < subs ? s0 + kAhead : subs;
        if ((s_end & 31) == 0 || s_end == subs) { /* warp-uniform */
            const uint32_t last = s_end - 1;
            __syncwarp();
            if (lane <= (last & 31)) {
                const unsigned long long *c =
                    reinterpret_cast<const unsigned long long *>(
                        st.codes + GFC_CODE_BYTES * lane);
                unsigned long long *o = reinterpret_cast<unsigned long long *>(
                    out + GFC_CODE_BYTES * ((last & ~31u) + lane));
                o[0] = c[0];
                o[1] = c[1];
            }
            __syncwarp(); /* read before the next group's codes */
        }
        /* residual bytes: subchunk by subchunk, lane by lane */
        const uint32_t excl = warp_exclusive_bytes(counts);
        const uint32_t excl31 = __shfl_sync(FZ_FULL_MASK, excl, 31);
        const uint32_t counts31 = __shfl_sync(FZ_FULL_MASK, counts, 31);
        /* subchunk totals (<= 256) in 16-bit fields: fields 0, 2 | 1, 3 */
        const uint32_t even = (excl31 & 0x00ff00ffu) + (counts31 & 0x00ff00ffu);
        const uint32_t odd =
            (excl31 >> 8 & 0x00ff00ffu) + (counts31 >> 8 & 0x00ff00ffu);
        const uint32_t total[kAhead] = {even & 0xffffu, odd & 0xffffu,
                                        even >> 16, odd >> 16};
#pragma unroll
        for (uint32_t g = 0; g < kAhead; g++) {
            /* no bytes: mag is 0 and ring_or stores nothing */
            ring_or(ring, fill + byte_field(excl, g), mag[g], spare);
            fill += total[g];
        }
        if (fill - flushed >= kHalf) { /* warp-uniform */
            __syncwarp();
            ring_flush(ring64, resid, flushed / 8, (flushed + kHalf) / 8);
            __syncwarp();
            flushed += kHalf;
        }
    }
    /* the rest, zero-padded to a multiple of 8 bytes: ring bytes past
     * `fill` are still zero */
    __syncwarp();
    ring_flush(ring64, resid, flushed / 8, (fill + 7) / 8);
    __syncwarp(); /* the ring is all zero again for the next chunk */
}

/* Compression: one chunk per warp. */
template <typename T>
__global__ void __launch_bounds__(kThreads)
    gfc_compress_kernel(const fz_gpu_args a) {
    __shared__ WarpStage stage_all[kWarps];
    const uint32_t lane = lane_id();
    WarpStage &st = stage_all[threadIdx.x >> 5];
    for (uint32_t k = lane; k < kRingWords; k += 32)
        st.ring[k] = 0;
    __syncwarp();
    const fz_header &h = a.expect;
    const uint32_t pl = gfc_pred_lane(lane, h.codec_params[GFC_PARAM_DIM]);
    for (;;) {
        const uint64_t c = warp_ticket(a);
        if (c >= h.chunk_count)
            break;
        const uint64_t raw = fz_chunk_raw_bytes(&h, c);
        const uint32_t n = (uint32_t)(raw / sizeof(T));
        const uint32_t subs = (uint32_t)gfc_subchunks(n);
        const T *in = reinterpret_cast<const T *>(a.src + c * h.chunk_bytes);

        uint32_t bytes, hsum;
        size_pass(in, n, subs, raw, pl, &bytes, &hsum);
        const uint32_t total = __reduce_add_sync(FZ_FULL_MASK, bytes);
        const uint32_t chunk_hash = __reduce_add_sync(FZ_FULL_MASK, hsum);
        const uint64_t enc = gfc_encoded_bytes(subs, total);
        const bool verbatim = enc >= raw;
        const uint32_t size = (uint32_t)(verbatim ? raw : enc);
        if (lane == 0) {
            fz_lookback_publish(a.lookback, c, size);
            fz_gpu_put_entry(a, c, size, chunk_hash, raw);
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
        write_pass(in, n, subs, raw, pl, out, st);
    }
}

/* Per-warp decoding stage: the codes of a batch of 32 subchunks, and
 * each lane's residual offset inside its subchunk (exclusive sums of the
 * byte counts, at most 31 * 8 = 248: one byte), 32 bytes per subchunk,
 * even lanes first: lane l at 16 (l & 1) + 4 (l >> 3) + (l >> 1) % 4. */
struct __align__(16) DecodeStage {
    uint8_t codes[32 * GFC_CODE_BYTES];
    uint8_t starts[32 * GFC_SUB];
};

/* Byte of lane l in a subchunk's 32 start bytes. */
__device__ __forceinline__ uint32_t start_slot(uint32_t l) {
    return 16 * (l & 1) + 4 * (l >> 3) + ((l >> 1) & 3);
}

/* One lane, one subchunk: its 16 code bytes q0, q1 to the stage's start
 * bytes (SWAR: four lanes per word, even and odd lanes apart). Returns
 * the subchunk's residual bytes; *invalid non-zero for an invalid code. */
template <typename T>
__device__ uint32_t subchunk_starts(unsigned long long q0,
                                    unsigned long long q1, uint8_t *starts,
                                    uint32_t *invalid) {
    const uint32_t words[4] = {(uint32_t)q0, (uint32_t)(q0 >> 32), (uint32_t)q1,
                               (uint32_t)(q1 >> 32)};
    uint32_t even[4], odd[4];
    uint32_t base = 0, bad = 0, pairs = 0; /* base: in every byte */
#pragma unroll
    for (uint32_t k = 0; k < 4; k++) {
        /* byte b: the codes of lanes 8k + 2b (ce) and 8k + 2b + 1 (co) */
        const uint32_t ce = words[k] & 0x0f0f0f0fu;
        const uint32_t co = words[k] >> 4 & 0x0f0f0f0fu;
        bad |= Gfc<T>::invalid4(ce) | Gfc<T>::invalid4(co);
        const uint32_t ne = Gfc<T>::counts4(ce);
        pairs = ne + Gfc<T>::counts4(co); /* <= 16 a byte */
        /* byte b: base + the pairs of bytes below b (<= 240, no carry) */
        even[k] = pairs * 0x01010100u + base;
        odd[k] = even[k] + ne;
        if (k < 3)
            base = ((even[k] + pairs) >> 24) * 0x01010101u;
    }
    uint4 *to = reinterpret_cast<uint4 *>(starts);
    to[0] = make_uint4(even[0], even[1], even[2], even[3]);
    to[1] = make_uint4(odd[0], odd[1], odd[2], odd[3]);
    *invalid = bad;
    return (even[3] >> 24) + (pairs >> 24);
}

/* Decompression: one chunk per warp. */
template <typename T>
__global__ void __launch_bounds__(kThreads)
    gfc_decompress_kernel(const fz_gpu_args a) {
    __shared__ fz_header hdr;
    __shared__ int stream_ok;
    __shared__ DecodeStage stage_all[kWarps];
    const uint32_t lane = lane_id();
    DecodeStage &st = stage_all[threadIdx.x >> 5];
    if (threadIdx.x == 0) {
        const int status = fz_gpu_check_stream(a, &hdr);
        if (status != FZS_OK)
            fz_gpu_fail(a.scratch, status);
        stream_ok = status == FZS_OK;
    }
    __syncthreads();
    if (!stream_ok)
        return;
    const fz_header &h = hdr;
    const uint32_t pl = gfc_pred_lane(lane, h.codec_params[GFC_PARAM_DIM]);
    const uint32_t slot = start_slot(lane), nibble = 4 * (lane & 1);
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
            /* size <= raw <= 8 GFC_MAX_CHUNK_VALUES: offsets fit 32 bits */
            uint32_t rbase = GFC_CODE_BYTES * subs;
            bad = size < rbase;
            uint32_t lane_bad = 0; /* bit 31 */
            T prev = 0;
            for (uint32_t sb = 0; sb < subs && !bad; sb += 32) {
                /* lane L: the codes of subchunk sb + L, its bytes and
                 * its lanes' offsets */
                uint32_t cnt = 0;
                if (sb + lane < subs) {
                    const unsigned long long *q =
                        reinterpret_cast<const unsigned long long *>(
                            in + GFC_CODE_BYTES * (sb + lane));
                    const unsigned long long q0 = q[0], q1 = q[1];
                    reinterpret_cast<unsigned long long *>(st.codes)[2 * lane] =
                        q0;
                    reinterpret_cast<unsigned long long *>(
                        st.codes)[2 * lane + 1] = q1;
                    uint32_t invalid;
                    cnt = subchunk_starts<T>(q0, q1, st.starts + GFC_SUB * lane,
                                             &invalid);
                    lane_bad |= invalid ? 0x80000000u : 0u;
                }
                uint32_t batch;
                const uint32_t sub_off = warp_exclusive(cnt, &batch);
                bad = __any_sync(FZ_FULL_MASK, lane_bad >> 31) ||
                      (uint64_t)rbase + batch > size;
                __syncwarp();
                if (bad)
                    break;
                /* the batch's residual bytes towards L2 while its
                 * subchunks are decoded one after the other (prefetching
                 * further ahead, and streaming stores, measured slower:
                 * bench/NOTES.md, step G3) */
                for (uint32_t b = rbase + 128 * lane; b < rbase + batch;
                     b += 32 * 128)
                    prefetch_l2(in + b);
                const uint32_t nsub = subs - sb < 32 ? subs - sb : 32;
#pragma unroll 4
                for (uint32_t j = 0; j < nsub; j++) {
                    const uint32_t code =
                        (st.codes[GFC_CODE_BYTES * j + lane / 2] >> nibble) &
                        15u;
                    const uint32_t nb = Gfc<T>::valid_bytes(code);
                    /* start + nb <= rbase + batch <= size */
                    const uint32_t start =
                        rbase + __shfl_sync(FZ_FULL_MASK, sub_off, j) +
                        st.starts[GFC_SUB * j + slot];
                    const auto mag = Gfc<T>::load_mag(in, start, nb);
                    const T r = Gfc<T>::residual(code, mag);
                    lane_bad |= Gfc<T>::noncanonical(code, mag, nb, r);
                    const T x = (T)(__shfl_sync(FZ_FULL_MASK, prev, pl) + r);
                    const uint32_t i = (sb + j) * GFC_SUB + lane;
                    const uint32_t term = Gfc<T>::hash(x, i);
                    if (i < n) {
                        out[i] = x;
                        hsum += term;
                    } else if (r != 0) { /* padding is predicted exactly */
                        lane_bad |= 0x80000000u;
                    }
                    prev = x;
                }
                rbase += batch;
                __syncwarp(); /* stage read before the next batch lands */
            }
            if (!bad) {
                /* the size must be exact; the alignment bytes zero */
                const bool tail_bad =
                    fz_align_up(rbase, GFC_ALIGN) != size ||
                    (rbase + lane < size && in[rbase + lane] != 0);
                bad = __any_sync(FZ_FULL_MASK, (lane_bad >> 31) | tail_bad);
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
