/* SLEEK, CPU backend: one chunk at a time (the driver runs chunks in
 * parallel). Lossless and lossy modes differ only in the per-value mapping;
 * layout, packing and mappings come from sleek_xform.h, shared with the GPU
 * backend. */
#include <string.h>

#include "../../common/fz_hash.h"
#include "../fz_codec.h"
#include "sleek_xform.h"

static uint32_t sleek_chunk_bytes(const fz_header *h) {
    (void)h;
    return SLEEK_CHUNK_BYTES;
}

static size_t sleek_encode_capacity(const fz_header *h) {
    (void)h;
    return SLEEK_WIDTHS_BYTES + SLEEK_CHUNK_BYTES;
}

static int sleek_mapping(const fz_header *h, int *lossless, int32_t *k) {
    if (sleek_mapping_of(fz_dtype_size(h->dtype),
                         h->mode ? h->bound_eff_bits : 0, lossless, k))
        return FZS_CORRUPT_HEADER;
    return FZS_OK;
}

/* The enforced bound: the largest power of two <= the absolute bound. */
static uint64_t sleek_effective_bound(const fz_header *h, uint64_t abs_bits) {
    int32_t k;
    if (sleek_bound_exponent(fz_dtype_size(h->dtype), abs_bits, &k))
        return 0; /* stored lossless */
    return sleek_pow2_bits(k);
}

static int sleek_check_header(const fz_header *h) {
    int lossless;
    int32_t k;
    if (h->codec_version < SLEEK_CODEC_VERSION_MIN ||
        h->codec_version > SLEEK_CODEC_VERSION ||
        h->chunk_bytes != SLEEK_CHUNK_BYTES)
        return FZS_CORRUPT_HEADER;
    for (int i = 0; i < 4; i++)
        if (h->codec_params[i] != 0)
            return FZS_CORRUPT_HEADER;
    /* ABS fixes the enforced bound: the one the encoder derives from the
     * requested bound (REL depends on the data and cannot be re-derived) */
    if (h->mode == 1 &&
        h->bound_eff_bits != sleek_effective_bound(h, h->bound_bits))
        return FZS_CORRUPT_HEADER;
    return sleek_mapping(h, &lossless, &k);
}

/* Bit packing, LSB-first: a subchunk packs V values of n bits into exactly
 * V n / W zeroed words (V n is a multiple of W for both word types). An
 * accumulator form that stores every word whole measured 3% slower here. */
#define DEFINE_PACK(W, T)                                                      \
    static void pack##W(const T *vals, uint32_t nvals, uint32_t n, T *out) {   \
        uint64_t p = 0;                                                        \
        for (uint32_t i = 0; i < nvals; i++, p += n) {                         \
            uint32_t sh = (uint32_t)(p % W);                                   \
            out[p / W] |= vals[i] << sh;                                       \
            if (sh + n > W)                                                    \
                out[p / W + 1] |= vals[i] >> (W - sh);                         \
        }                                                                      \
    }
DEFINE_PACK(32, uint32_t)
DEFINE_PACK(64, uint64_t)

/* Unpacking reads the words through an accumulator (no per-value word
 * index, no second load for a value that straddles two words). */
static void unpack32(const uint32_t *in, uint32_t nvals, uint32_t n,
                     uint32_t *vals) {
    const uint64_t mask = ((uint64_t)1 << n) - 1; /* n <= 32 */
    uint64_t acc = 0;
    uint32_t have = 0; /* bits in acc */
    for (uint32_t i = 0; i < nvals; i++) {
        if (have < n) { /* reads exactly the V n / 32 words */
            acc |= (uint64_t)*in++ << have;
            have += 32;
        }
        vals[i] = (uint32_t)(acc & mask);
        acc >>= n;
        have -= n;
    }
}

/* 64-bit words: cur holds the unread bits of the current word (a shift
 * by 64 is undefined in C, hence the tests). */
static void unpack64(const uint64_t *in, uint32_t nvals, uint32_t n,
                     uint64_t *vals) {
    const uint64_t mask = n == 64 ? ~0ull : ((uint64_t)1 << n) - 1;
    uint64_t cur = 0;
    uint32_t have = 0; /* unread bits of cur, at its bottom */
    for (uint32_t i = 0; i < nvals; i++) {
        uint64_t v = cur;
        if (have < n) { /* the rest of the value from the next word */
            const uint64_t next = *in++;
            v = have ? cur | next << have : next;
            cur = n - have == 64 ? 0 : next >> (n - have);
            have = 64 - (n - have);
        } else {
            cur = n == 64 ? 0 : cur >> n;
            have -= n;
        }
        vals[i] = v & mask;
    }
}

/* The encoder's quantizer per width: f32's in binary64 (vectorized, with
 * the scale 2^-k1), f64's the integer form. */
#define QUANT32(x, q, scale) sleek_quant32_host((x), (q), (scale))
#define QUANT64(x, q, scale) ((void)(scale), sleek_quant64((x), (q)))

/* Encode/decode one chunk for one word type. Buffers are memcpy'd through
 * word arrays so unaligned user pointers are fine. */
#define DEFINE_CHUNK_CODER(W, T, F)                                            \
    static size_t encode##W(const fz_header *h, const void *src,               \
                            uint64_t nvalues, uint8_t *dst,                    \
                            uint32_t *checksum) {                              \
        enum { V = SLEEK_SUB_BYTES / (W / 8) };                                \
        T vals[V], packed[V];                                                  \
        int lossless;                                                          \
        int32_t k = 0;                                                         \
        sleek_mapping(h, &lossless, &k);                                       \
        const sleek_q##W q = sleek_q##W##_make(lossless ? 0 : k);              \
        const double fscale = sleek_host_scale(q.k1);                          \
        const uint64_t raw = nvalues * (W / 8);                                \
        uint8_t *out = dst + SLEEK_WIDTHS_BYTES;                               \
        for (uint32_t s = 0; s < SLEEK_SUBS; s++) {                            \
            uint64_t first = (uint64_t)s * V;                                  \
            uint32_t have =                                                    \
                nvalues > first                                                \
                    ? (uint32_t)(nvalues - first < V ? nvalues - first : V)    \
                    : 0;                                                       \
            memcpy(vals, (const uint8_t *)src + first * (W / 8),               \
                   (size_t)have * (W / 8));                                    \
            /* padding: +0.0, which both mappings send to 0 */                 \
            memset(vals + have, 0, (size_t)(V - have) * (W / 8));              \
            if (lossless)                                                      \
                for (uint32_t i = 0; i < V; i++)                               \
                    vals[i] = sleek_fwd##W(vals[i]);                           \
            else                                                               \
                for (uint32_t i = 0; i < V; i++)                               \
                    vals[i] = QUANT##W(vals[i], q, fscale);                    \
            T maxv = 0;                                                        \
            for (uint32_t i = 0; i < V; i++)                                   \
                maxv |= vals[i];                                               \
            uint32_t n = sleek_width##W(maxv);                                 \
            dst[s] = (uint8_t)n;                                               \
            size_t bytes = sleek_sub_packed_bytes(W / 8, n);                   \
            memset(packed, 0, bytes);                                          \
            if (n)                                                             \
                pack##W(vals, V, n, packed);                                   \
            memcpy(out, packed, bytes);                                        \
            out += bytes;                                                      \
        }                                                                      \
        size_t size = (size_t)(out - dst);                                     \
        if (size >= raw) {                                                     \
            /* verbatim: what the decoder returns (the reconstruction) */      \
            for (uint64_t i = 0; i < nvalues; i++) {                           \
                T v;                                                           \
                memcpy(&v, (const uint8_t *)src + i * (W / 8), W / 8);         \
                v = lossless ? v : sleek_dequant##W(sleek_quant##W(v, q), q);  \
                memcpy(dst + i * (W / 8), &v, W / 8);                          \
            }                                                                  \
            size = (size_t)raw;                                                \
        }                                                                      \
        /* versions 2 and 3: the checksum covers the stored payload */         \
        *checksum = h->flags & FZ_HDR_FLAG_CHECKSUMS                           \
                        ? fz_data_checksum(sleek_sum_kind(h->codec_version),   \
                                           dst, size)                          \
                        : 0;                                                   \
        return size;                                                           \
    }                                                                          \
    static int decode##W(const fz_header *h, const uint8_t *src, size_t size,  \
                         void *dst, uint64_t nvalues) {                        \
        enum { V = SLEEK_SUB_BYTES / (W / 8) };                                \
        T vals[V], packed[V];                                                  \
        int lossless;                                                          \
        int32_t k = 0;                                                         \
        sleek_mapping(h, &lossless, &k);                                       \
        const sleek_q##W q = sleek_q##W##_make(lossless ? 0 : k);              \
        size_t need = SLEEK_WIDTHS_BYTES;                                      \
        if (size < need)                                                       \
            return FZS_CORRUPT_CHUNK;                                          \
        for (uint32_t s = 0; s < SLEEK_SUBS; s++) {                            \
            if (src[s] > W)                                                    \
                return FZS_CORRUPT_CHUNK;                                      \
            need += sleek_sub_packed_bytes(W / 8, src[s]);                     \
        }                                                                      \
        if (need != size)                                                      \
            return FZS_CORRUPT_CHUNK;                                          \
        const uint8_t *in = src + SLEEK_WIDTHS_BYTES;                          \
        for (uint32_t s = 0; s < SLEEK_SUBS; s++) {                            \
            uint32_t n = src[s];                                               \
            size_t bytes = sleek_sub_packed_bytes(W / 8, n);                   \
            uint64_t first = (uint64_t)s * V;                                  \
            uint32_t have =                                                    \
                nvalues > first                                                \
                    ? (uint32_t)(nvalues - first < V ? nvalues - first : V)    \
                    : 0;                                                       \
            if (n == 0) {                                                      \
                memset(vals, 0, sizeof vals);                                  \
            } else {                                                           \
                memcpy(packed, in, bytes);                                     \
                unpack##W(packed, V, n, vals);                                 \
            }                                                                  \
            in += bytes;                                                       \
            T any = 0;                                                         \
            for (uint32_t i = 0; i < V; i++)                                   \
                any |= vals[i];                                                \
            if (sleek_width##W(any) != n) /* widths are minimal */             \
                return FZS_CORRUPT_CHUNK;                                      \
            for (uint32_t i = have; i < V; i++)                                \
                if (vals[i] != 0) /* padding must be +0.0 */                   \
                    return FZS_CORRUPT_CHUNK;                                  \
            uint32_t invalid = 0; /* a code the quantizer cannot produce */    \
            if (lossless) {       /* a loop of its own: vectorized */          \
                for (uint32_t i = 0; i < have; i++)                            \
                    vals[i] = sleek_inv##W(vals[i]);                           \
            } else if (sleek_bins_direct##W(q) &&                              \
                       any < SLEEK_BIN_CODES##W) { /* all bins */              \
                const F scale = sleek_bin_scale##W(q);                         \
                for (uint32_t i = 0; i < have; i++)                            \
                    vals[i] = sleek_dequant##W##_bin(vals[i], scale);          \
            } else {                                                           \
                for (uint32_t i = 0; i < have; i++)                            \
                    vals[i] =                                                  \
                        sleek_dequant##W##_checked(vals[i], q, &invalid);      \
            }                                                                  \
            if (invalid)                                                       \
                return FZS_CORRUPT_CHUNK;                                      \
            memcpy((uint8_t *)dst + first * (W / 8), vals,                     \
                   (size_t)have * (W / 8));                                    \
        }                                                                      \
        return FZS_OK;                                                         \
    }
DEFINE_CHUNK_CODER(32, uint32_t, float)
DEFINE_CHUNK_CODER(64, uint64_t, double)

static size_t sleek_encode_chunk(const fz_header *h, const void *src,
                                 uint64_t nvalues, uint8_t *dst,
                                 uint32_t *checksum) {
    return h->dtype == 1 ? encode32(h, src, nvalues, dst, checksum)
                         : encode64(h, src, nvalues, dst, checksum);
}

static int sleek_decode_chunk(const fz_header *h, const uint8_t *src,
                              size_t size, void *dst, uint64_t nvalues) {
    return h->dtype == 1 ? decode32(h, src, size, dst, nvalues)
                         : decode64(h, src, size, dst, nvalues);
}

/* SLEEK has no options. */
static int sleek_check_params(fz_header *h, const int32_t options[4]) {
    for (int k = 0; k < 4; k++) {
        if (options[k] != 0)
            return FZS_INVALID_ARGUMENT;
        h->codec_params[k] = 0;
    }
    return FZS_OK;
}

/* Versions 2 and 3 checksum the stored payload, version 3 by square sums
 * (sleek_xform.h). */
static int sleek_checksum_covers_payload(const fz_header *h) {
    return sleek_payload_sums(h->codec_version);
}
static fz_sum_kind sleek_data_sum(const fz_header *h) {
    return sleek_sum_kind(h->codec_version);
}

const fz_codec_cpu fz_sleek_cpu = {
    SLEEK_CODEC_ID,          SLEEK_CODEC_VERSION,
    SLEEK_CODEC_VERSION_MIN, "sleek",
    sleek_chunk_bytes,       sleek_encode_capacity,
    sleek_check_header,      sleek_effective_bound,
    sleek_encode_chunk,      sleek_decode_chunk,
    sleek_check_params,      sleek_checksum_covers_payload,
    sleek_data_sum,
};
