/* SLEEK lossless, CPU backend: one chunk at a time (the driver runs chunks
 * in parallel). Layout and transforms come from sleek_xform.h. */
#include <string.h>

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

static int sleek_check_header(const fz_header *h) {
    if (h->codec_version != SLEEK_CODEC_VERSION ||
        h->chunk_bytes != SLEEK_CHUNK_BYTES || h->mode != 0)
        return FZS_CORRUPT_HEADER;
    for (int k = 0; k < 4; k++)
        if (h->codec_params[k] != 0)
            return FZS_CORRUPT_HEADER;
    return FZS_OK;
}

/* Pack V values of width n LSB-first into zeroed words of W bits. */
#define DEFINE_PACK(W, T)                                                      \
    static void pack##W(const T *vals, uint32_t nvals, uint32_t n, T *out) {   \
        uint64_t p = 0;                                                        \
        for (uint32_t i = 0; i < nvals; i++, p += n) {                         \
            uint32_t sh = (uint32_t)(p % W);                                   \
            out[p / W] |= vals[i] << sh;                                       \
            if (sh + n > W)                                                    \
                out[p / W + 1] |= vals[i] >> (W - sh);                         \
        }                                                                      \
    }                                                                          \
    static void unpack##W(const T *in, uint32_t nvals, uint32_t n, T *vals) {  \
        const T mask = n == W ? (T) ~(T)0 : (T)(((T)1 << n) - 1);              \
        uint64_t p = 0;                                                        \
        for (uint32_t i = 0; i < nvals; i++, p += n) {                         \
            uint32_t sh = (uint32_t)(p % W);                                   \
            T v = in[p / W] >> sh;                                             \
            if (sh + n > W)                                                    \
                v |= in[p / W + 1] << (W - sh);                                \
            vals[i] = v & mask;                                                \
        }                                                                      \
    }
DEFINE_PACK(32, uint32_t)
DEFINE_PACK(64, uint64_t)

/* Encode/decode one chunk for one word type. Buffers are memcpy'd through
 * word arrays so unaligned user pointers are fine. */
#define DEFINE_CHUNK_CODER(W, T)                                               \
    static size_t encode##W(const void *src, uint64_t nvalues, uint8_t *dst) { \
        enum { V = SLEEK_SUB_BYTES / (W / 8) };                                \
        T vals[V], packed[V];                                                  \
        uint8_t *out = dst + SLEEK_WIDTHS_BYTES;                               \
        for (uint32_t s = 0; s < SLEEK_SUBS; s++) {                            \
            uint64_t first = (uint64_t)s * V;                                  \
            uint32_t have =                                                    \
                nvalues > first                                                \
                    ? (uint32_t)(nvalues - first < V ? nvalues - first : V)    \
                    : 0;                                                       \
            memcpy(vals, (const uint8_t *)src + first * (W / 8),               \
                   (size_t)have * (W / 8));                                    \
            T maxv = 0;                                                        \
            for (uint32_t i = 0; i < V; i++) {                                 \
                vals[i] = i < have ? sleek_fwd##W(vals[i]) : 0;                \
                maxv |= vals[i];                                               \
            }                                                                  \
            uint32_t n = sleek_width##W(maxv);                                 \
            dst[s] = (uint8_t)n;                                               \
            size_t bytes = sleek_sub_packed_bytes(W / 8, n);                   \
            memset(packed, 0, bytes);                                          \
            if (n)                                                             \
                pack##W(vals, V, n, packed);                                   \
            memcpy(out, packed, bytes);                                        \
            out += bytes;                                                      \
        }                                                                      \
        return (size_t)(out - dst);                                            \
    }                                                                          \
    static int decode##W(const uint8_t *src, size_t size, void *dst,           \
                         uint64_t nvalues) {                                   \
        enum { V = SLEEK_SUB_BYTES / (W / 8) };                                \
        T vals[V], packed[V];                                                  \
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
            for (uint32_t i = 0; i < have; i++)                                \
                vals[i] = sleek_inv##W(vals[i]);                               \
            memcpy((uint8_t *)dst + first * (W / 8), vals,                     \
                   (size_t)have * (W / 8));                                    \
        }                                                                      \
        return FZS_OK;                                                         \
    }
DEFINE_CHUNK_CODER(32, uint32_t)
DEFINE_CHUNK_CODER(64, uint64_t)

static size_t sleek_encode_chunk(const fz_header *h, const void *src,
                                 uint64_t nvalues, uint8_t *dst) {
    return h->dtype == 1 ? encode32(src, nvalues, dst)
                         : encode64(src, nvalues, dst);
}

static int sleek_decode_chunk(const fz_header *h, const uint8_t *src,
                              size_t size, void *dst, uint64_t nvalues) {
    return h->dtype == 1 ? decode32(src, size, dst, nvalues)
                         : decode64(src, size, dst, nvalues);
}

const fz_codec_cpu fz_sleek_cpu = {
    SLEEK_CODEC_ID,     SLEEK_CODEC_VERSION,   "sleek",
    sleek_chunk_bytes,  sleek_encode_capacity, sleek_check_header,
    sleek_encode_chunk, sleek_decode_chunk,
};
