/* GFC, CPU backend: one chunk at a time (the driver runs chunks in
 * parallel). Lossless only. Codes, layout and chunk sizes come from
 * gfc_xform.h, shared with the GPU backend. */
#include <string.h>

#include "../../common/fz_hash.h"
#include "../fz_codec.h"
#include "gfc_xform.h"

static uint32_t gfc_chunk_bytes(const fz_header *h) {
    return h->codec_params[GFC_PARAM_CHUNK_VALUES] * fz_dtype_size(h->dtype);
}

/* The encoder falls back to verbatim as soon as the encoding would not
 * be smaller than the raw chunk; it stores residuals as whole 8-byte
 * words (the bytes above a residual are zeros, overwritten by the next
 * one), hence 8 bytes of slack. */
static size_t gfc_encode_capacity(const fz_header *h) {
    return (size_t)gfc_chunk_bytes(h) + 8;
}

static int gfc_check_header(const fz_header *h) {
    const uint32_t dim = h->codec_params[GFC_PARAM_DIM];
    const uint32_t values = h->codec_params[GFC_PARAM_CHUNK_VALUES];
    if (h->codec_version != GFC_CODEC_VERSION || h->mode != 0 || dim < 1 ||
        dim > GFC_MAX_DIM || values == 0 || values % GFC_SUB != 0 ||
        values > GFC_MAX_CHUNK_VALUES ||
        h->chunk_bytes != values * fz_dtype_size(h->dtype) ||
        h->codec_params[2] != 0 || h->codec_params[3] != 0)
        return FZS_CORRUPT_HEADER;
    return FZS_OK;
}

static int gfc_check_params(fz_header *h, const int32_t options[4]) {
    const int32_t dim = options[GFC_PARAM_DIM];
    const int32_t values = options[GFC_PARAM_CHUNK_VALUES];
    if (dim < 0 || dim > (int32_t)GFC_MAX_DIM || values < 0 ||
        values % (int32_t)GFC_SUB != 0 ||
        values > (int32_t)GFC_MAX_CHUNK_VALUES || options[2] != 0 ||
        options[3] != 0)
        return FZS_INVALID_ARGUMENT;
    h->codec_params[GFC_PARAM_DIM] = dim ? (uint32_t)dim : 1u;
    h->codec_params[GFC_PARAM_CHUNK_VALUES] =
        values ? (uint32_t)values
               : gfc_default_chunk_values(h->original_bytes /
                                          fz_dtype_size(h->dtype));
    h->codec_params[2] = h->codec_params[3] = 0;
    return FZS_OK;
}

/* Per-type code functions under one name. */
#define GFC_CODE_64 gfc_code64
#define GFC_CODE_32 gfc_code32
#define GFC_BYTES_64 gfc_bytes64
#define GFC_BYTES_32 gfc_bytes32
#define GFC_RESIDUAL_64 gfc_residual64
#define GFC_RESIDUAL_32 gfc_residual32
#define GFC_VALID_64(code) 1
#define GFC_VALID_32(code) gfc_code_valid32(code)

/* `bytes` (0..8) little-endian bytes at p, of which `avail` (>= bytes)
 * may be read. */
static uint64_t load_le(const uint8_t *p, uint32_t bytes, uint64_t avail) {
    uint64_t v = 0;
    if (avail >= 8) {
        v = fz_load64(p);
        return gfc_low_bytes(v, bytes);
    }
    for (uint32_t k = 0; k < bytes; k++)
        v |= (uint64_t)p[k] << (8 * k);
    return v;
}

/* Encode/decode one chunk for one word type. Values go through memcpy so
 * unaligned user pointers are fine. */
#define DEFINE_CHUNK_CODER(W, T)                                               \
    static size_t encode##W(const fz_header *h, const void *src,               \
                            uint64_t nvalues, uint8_t *dst,                    \
                            uint32_t *checksum) {                              \
        const uint32_t dim = h->codec_params[GFC_PARAM_DIM];                   \
        const uint64_t raw = nvalues * (W / 8);                                \
        const uint64_t subs = gfc_subchunks(nvalues);                          \
        const uint8_t *in = (const uint8_t *)src;                              \
        T prev[GFC_SUB] = {0}, cur[GFC_SUB];                                   \
        *checksum = fz_hash_bytes(in, raw);                                    \
        uint64_t pos = GFC_CODE_BYTES * subs; /* residual bytes go here */     \
        if (pos >= raw)                                                        \
            goto verbatim;                                                     \
        memset(dst, 0, (size_t)pos);                                           \
        for (uint64_t s = 0; s < subs; s++) {                                  \
            uint8_t *codes = dst + GFC_CODE_BYTES * s;                         \
            for (uint32_t l = 0; l < GFC_SUB; l++) {                           \
                const uint64_t i = s * GFC_SUB + l;                            \
                const T pred = prev[gfc_pred_lane(l, dim)];                    \
                if (i < nvalues)                                               \
                    memcpy(&cur[l], in + i * (W / 8), W / 8);                  \
                else                                                           \
                    cur[l] = pred; /* padding: residual 0 */                   \
                const T r = (T)(cur[l] - pred);                                \
                const uint32_t code = GFC_CODE_##W(r);                         \
                const uint32_t bytes = GFC_BYTES_##W(code);                    \
                if (pos + bytes >= raw)                                        \
                    goto verbatim;                                             \
                codes[l / 2] |= (uint8_t)(code << (4 * (l & 1)));              \
                /* |r| < 2^(8 bytes): the word's upper bytes are 0 */          \
                fz_store64(dst + pos, (code & 8u) ? (T)(0 - r) : r);           \
                pos += bytes;                                                  \
            }                                                                  \
            memcpy(prev, cur, sizeof prev);                                    \
        }                                                                      \
        {                                                                      \
            const uint64_t size = fz_align_up(pos, GFC_ALIGN);                 \
            if (size >= raw)                                                   \
                goto verbatim;                                                 \
            memset(dst + pos, 0, (size_t)(size - pos));                        \
            return (size_t)size;                                               \
        }                                                                      \
    verbatim:                                                                  \
        memcpy(dst, in, (size_t)raw);                                          \
        return (size_t)raw;                                                    \
    }                                                                          \
    static int decode##W(const fz_header *h, const uint8_t *src, size_t size,  \
                         void *dst, uint64_t nvalues) {                        \
        const uint32_t dim = h->codec_params[GFC_PARAM_DIM];                   \
        const uint64_t subs = gfc_subchunks(nvalues);                          \
        const uint64_t code_bytes = GFC_CODE_BYTES * subs;                     \
        uint8_t *out = (uint8_t *)dst;                                         \
        T prev[GFC_SUB] = {0}, cur[GFC_SUB];                                   \
        if (size < code_bytes)                                                 \
            return FZS_CORRUPT_CHUNK;                                          \
        uint64_t resid = 0;                                                    \
        for (uint64_t b = 0; b < code_bytes; b++) {                            \
            const uint32_t lo = src[b] & 15u, hi = src[b] >> 4;                \
            if (!GFC_VALID_##W(lo) || !GFC_VALID_##W(hi))                      \
                return FZS_CORRUPT_CHUNK;                                      \
            resid += GFC_BYTES_##W(lo) + GFC_BYTES_##W(hi);                    \
        }                                                                      \
        const uint64_t end = code_bytes + resid;                               \
        if (gfc_encoded_bytes(subs, resid) != size)                            \
            return FZS_CORRUPT_CHUNK;                                          \
        for (uint64_t b = end; b < size; b++) /* alignment padding */          \
            if (src[b] != 0)                                                   \
                return FZS_CORRUPT_CHUNK;                                      \
        uint64_t pos = code_bytes;                                             \
        for (uint64_t s = 0; s < subs; s++) {                                  \
            const uint8_t *codes = src + GFC_CODE_BYTES * s;                   \
            for (uint32_t l = 0; l < GFC_SUB; l++) {                           \
                const uint64_t i = s * GFC_SUB + l;                            \
                const uint32_t code = (codes[l / 2] >> (4 * (l & 1))) & 15u;   \
                const uint32_t bytes = GFC_BYTES_##W(code);                    \
                const T r = GFC_RESIDUAL_##W(                                  \
                    code, (T)load_le(src + pos, bytes, size - pos));           \
                pos += bytes;                                                  \
                if (GFC_CODE_##W(r) != code) /* minimal bytes, true sign */    \
                    return FZS_CORRUPT_CHUNK;                                  \
                cur[l] = (T)(prev[gfc_pred_lane(l, dim)] + r);                 \
                if (i < nvalues)                                               \
                    memcpy(out + i * (W / 8), &cur[l], W / 8);                 \
                else if (r != 0) /* padding is predicted exactly */            \
                    return FZS_CORRUPT_CHUNK;                                  \
            }                                                                  \
            memcpy(prev, cur, sizeof prev);                                    \
        }                                                                      \
        return FZS_OK;                                                         \
    }
DEFINE_CHUNK_CODER(32, uint32_t)
DEFINE_CHUNK_CODER(64, uint64_t)

static size_t gfc_encode_chunk(const fz_header *h, const void *src,
                               uint64_t nvalues, uint8_t *dst,
                               uint32_t *checksum) {
    return h->dtype == 1 ? encode32(h, src, nvalues, dst, checksum)
                         : encode64(h, src, nvalues, dst, checksum);
}

static int gfc_decode_chunk(const fz_header *h, const uint8_t *src, size_t size,
                            void *dst, uint64_t nvalues) {
    return h->dtype == 1 ? decode32(h, src, size, dst, nvalues)
                         : decode64(h, src, size, dst, nvalues);
}

const fz_codec_cpu fz_gfc_cpu = {
    GFC_CODEC_ID,
    GFC_CODEC_VERSION,
    GFC_CODEC_VERSION,
    "gfc",
    gfc_chunk_bytes,
    gfc_encode_capacity,
    gfc_check_header,
    NULL, /* lossless only */
    gfc_encode_chunk,
    gfc_decode_chunk,
    gfc_check_params,
    NULL, /* checksums cover the decoded bytes */
    NULL, /* data checksums: FZ_SUM_MIX */
};
