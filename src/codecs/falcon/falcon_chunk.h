/* Falcon: the scalar chunk coder, one chunk per call, FZ_HD. The CPU
 * backend runs it per chunk; the GPU backend's reference kernel runs the
 * very same code in one thread per chunk, and its warp kernel must agree
 * with it byte for byte. Layout: docs/FALCON.md, section 4.
 *
 * falcon_encode{32,64}(v, n, e, dst, raw): v = the n <= 1025 bit
 * patterns, e (n words) a work buffer; dst gets the encoding
 * (falcon_max_encoded bytes at most) and the size is returned, or raw
 * (= n * esize) when the encoding would not be smaller (the caller stores
 * the chunk verbatim).
 * falcon_decode{32,64}(src, size, e, n): decodes an encoded chunk of size
 * bytes (< raw) into the n bit patterns e[0..n); FZS_OK or
 * FZS_CORRUPT_CHUNK for anything the encoder would not have written. Reads
 * only src[0..size). */
#ifndef FALCON_CHUNK_H
#define FALCON_CHUNK_H

#include "../../format/fz_container.h"
#include "falcon_xform.h"

/* The scale byte of a chunk (Case 1 alpha* or Case 2), from the bit
 * patterns. Stops as soon as the answer is Case 2. */
static FZ_HD uint32_t falcon_choose64(const uint64_t *bits, uint32_t n) {
    falcon_scan s = falcon_scan_init();
    for (uint32_t i = 0; i < n && !s.case2; i++)
        falcon_scan_add64(&s, bits[i]);
    return falcon_scale_of(&s);
}

static FZ_HD uint32_t falcon_choose32(const uint32_t *bits, uint32_t n) {
    falcon_scan s = falcon_scan_init();
    for (uint32_t i = 0; i < n && !s.case2; i++)
        falcon_scan_add32(&s, bits[i]);
    return falcon_scale_of(&s);
}

/* The coders' plane work buffer (on the stack): 8 planes of
 * ceil((n - 1) / 8) bytes. */
#define FALCON_PLANE_WORK_BYTES (8u * (FALCON_MAX_VALUES / 8u + 1u))

/* The 8 x 8 bit matrix with row i in byte i, transposed: bit j of byte i
 * goes to bit i of byte j (three delta swaps). */
static FZ_HD uint64_t falcon_transpose8(uint64_t x) {
    uint64_t t = (x ^ (x >> 7)) & 0x00AA00AA00AA00AAull;
    x ^= t ^ (t << 7);
    t = (x ^ (x >> 14)) & 0x0000CCCC0000CCCCull;
    x ^= t ^ (t << 14);
    t = (x ^ (x >> 28)) & 0x00000000F0F0F0F0ull;
    x ^= t ^ (t << 28);
    return x;
}

/* Planes 8c .. 8c + 7 of the deltas e[1..n) into plane[r B + k] (byte k of
 * plane 8c + r: bit j is bit 8c + r of e[1 + 8k + j], 0 past n): for each
 * byte k, byte c of its 8 deltas transposed at once, instead of 64 single
 * bit moves (CPU falcon compression ~1.6x, bench/NOTES.md F48). */
#define FALCON_DEFINE_PLANES8(W, T)                                            \
    static FZ_HD void falcon_planes8_##W(const T *e, uint32_t n, uint32_t B,   \
                                         uint32_t c, uint8_t *plane) {         \
        const uint32_t full = (n - 1) / 8; /* bytes of 8 deltas, no test */    \
        for (uint32_t k = 0; k < B; k++) {                                     \
            const T *g = e + 1 + 8 * k;                                        \
            uint64_t x = 0;                                                    \
            if (k < full) {                                                    \
                for (uint32_t j = 0; j < 8; j++)                               \
                    x |= (uint64_t)((g[j] >> (8 * c)) & 0xFFu) << (8 * j);     \
            } else {                                                           \
                for (uint32_t j = 0; 1 + 8 * k + j < n; j++)                   \
                    x |= (uint64_t)((g[j] >> (8 * c)) & 0xFFu) << (8 * j);     \
            }                                                                  \
            x = falcon_transpose8(x);                                          \
            for (uint32_t r = 0; r < 8; r++)                                   \
                plane[r * B + k] = (uint8_t)(x >> (8 * r));                    \
        }                                                                      \
    }
/* The inverse, for the decoder: planes 8c .. 8c + 7 in plane[r B + k]
 * ORed into byte c of e[1..n). */
#define FALCON_DEFINE_UNPLANES8(W, T)                                          \
    static FZ_HD void falcon_unplanes8_##W(const uint8_t *plane, uint32_t B,   \
                                           uint32_t c, T *e, uint32_t n) {     \
        const uint32_t full = (n - 1) / 8; /* bytes of 8 deltas, no test */    \
        for (uint32_t k = 0; k < B; k++) {                                     \
            uint64_t x = 0;                                                    \
            for (uint32_t r = 0; r < 8; r++)                                   \
                x |= (uint64_t)plane[r * B + k] << (8 * r);                    \
            x = falcon_transpose8(x);                                          \
            T *g = e + 1 + 8 * k;                                              \
            if (k < full) {                                                    \
                for (uint32_t j = 0; j < 8; j++)                               \
                    g[j] |= (T)((x >> (8 * j)) & 0xFFu) << (8 * c);            \
            } else {                                                           \
                for (uint32_t j = 0; 1 + 8 * k + j < n; j++)                   \
                    g[j] |= (T)((x >> (8 * j)) & 0xFFu) << (8 * c);            \
            }                                                                  \
        }                                                                      \
    }
FALCON_DEFINE_PLANES8(32, uint32_t)
FALCON_DEFINE_PLANES8(64, uint64_t)
FALCON_DEFINE_UNPLANES8(32, uint32_t)
FALCON_DEFINE_UNPLANES8(64, uint64_t)

/* Per word type W (32 or 64 bits, T its type): the chunk coder.
 *
 * Encoded chunk: scale, width, first_len (one byte each), the first value's
 * field, ceil(width / 8) bytes of sparse flags (bit q: plane q is sparse),
 * then the planes q = width-1 down to 0, each dense (B bytes) or sparse
 * (bitmap, then its nonzero bytes). */
#define FALCON_DEFINE_CHUNK_CODER(W, T)                                        \
    static FZ_HD uint32_t falcon_encode##W(const T *v, uint32_t n, T *e,       \
                                           uint8_t *dst, uint32_t raw) {       \
        const uint32_t scale = falcon_choose##W(v, n);                         \
        const double p =                                                       \
            scale == FALCON_CASE2 ? 1.0 : falcon_pow10((int)scale);            \
        T prev = falcon_fwd##W(v[0], scale, p), any = 0;                       \
        const T u0 = scale == FALCON_CASE2 ? prev : falcon_zz##W(prev);        \
        for (uint32_t i = 1; i < n; i++) {                                     \
            const T s = falcon_fwd##W(v[i], scale, p);                         \
            e[i] = falcon_zz##W((T)(s - prev));                                \
            any |= e[i];                                                       \
            prev = s;                                                          \
        }                                                                      \
        const uint32_t width = (uint32_t)(W - fz_clz##W(any));                 \
        const uint32_t first_len = falcon_first_len(u0);                       \
        const uint32_t nflags = (width + 7) / 8;                               \
        const uint32_t B = falcon_plane_bytes(n);                              \
        const uint32_t M = falcon_bitmap_bytes(B);                             \
        dst[0] = (uint8_t)scale;                                               \
        dst[1] = (uint8_t)width;                                               \
        dst[2] = (uint8_t)first_len;                                           \
        uint32_t pos = FALCON_HEAD_BYTES;                                      \
        for (uint32_t k = 0; k < first_len; k++)                               \
            dst[pos++] = (uint8_t)((uint64_t)u0 >> (8 * k));                   \
        uint8_t *flags = dst + pos;                                            \
        uint8_t plane[FALCON_PLANE_WORK_BYTES]; /* 8 planes at a time */       \
        memset(flags, 0, nflags);                                              \
        pos += nflags;                                                         \
        for (uint32_t q = width; q-- > 0;) {                                   \
            if (q == width - 1 || q % 8 == 7) /* a new byte of the deltas */   \
                falcon_planes8_##W(e, n, B, q / 8, plane);                     \
            const uint8_t *bytes = plane + (q % 8) * B; /* plane q */          \
            uint32_t nonzero = 0;                                              \
            for (uint32_t k = 0; k < B; k++)                                   \
                nonzero += bytes[k] != 0;                                      \
            if (pos + falcon_plane_cost(B, nonzero) >= raw)                    \
                return raw; /* not smaller: verbatim */                        \
            if (falcon_sparse(B, nonzero)) {                                   \
                flags[q / 8] |= (uint8_t)(1u << (q % 8));                      \
                uint8_t *bitmap = dst + pos;                                   \
                memset(bitmap, 0, M);                                          \
                pos += M;                                                      \
                for (uint32_t k = 0; k < B; k++)                               \
                    if (bytes[k]) {                                            \
                        bitmap[k / 8] |= (uint8_t)(1u << (k % 8));             \
                        dst[pos++] = bytes[k];                                 \
                    }                                                          \
            } else {                                                           \
                memcpy(dst + pos, bytes, B);                                   \
                pos += B;                                                      \
            }                                                                  \
        }                                                                      \
        return pos < raw ? pos : raw;                                          \
    }                                                                          \
    static FZ_HD int falcon_decode##W(const uint8_t *src, uint32_t size, T *e, \
                                      uint32_t n) {                            \
        const uint32_t amax = W == 64 ? FALCON_AMAX64 : FALCON_AMAX32;         \
        if (size < FALCON_HEAD_BYTES)                                          \
            return FZS_CORRUPT_CHUNK;                                          \
        const uint32_t scale = src[0], width = src[1], first_len = src[2];     \
        if ((scale > amax && scale != FALCON_CASE2) || width > W ||            \
            first_len > W / 8 || size < FALCON_HEAD_BYTES + first_len)         \
            return FZS_CORRUPT_CHUNK;                                          \
        uint32_t pos = FALCON_HEAD_BYTES;                                      \
        T u0 = 0;                                                              \
        for (uint32_t k = 0; k < first_len; k++)                               \
            u0 |= (T)src[pos++] << (8 * k);                                    \
        if (falcon_first_len(u0) != first_len) /* minimal length */            \
            return FZS_CORRUPT_CHUNK;                                          \
        const uint32_t nflags = (width + 7) / 8;                               \
        if (size - pos < nflags)                                               \
            return FZS_CORRUPT_CHUNK;                                          \
        const uint8_t *flags = src + pos;                                      \
        pos += nflags;                                                         \
        if (width % 8 && flags[nflags - 1] >> (width % 8))                     \
            return FZS_CORRUPT_CHUNK; /* flag bits past the width */           \
        const uint32_t B = falcon_plane_bytes(n);                              \
        const uint32_t M = falcon_bitmap_bytes(B);                             \
        /* padding bits of the last plane byte must be 0 */                    \
        const uint32_t last_mask =                                             \
            B && (n - 1) % 8 ? 0xFFu << ((n - 1) % 8) & 0xFFu : 0;             \
        memset(e, 0, (size_t)n * sizeof(T));                                   \
        uint8_t work[FALCON_PLANE_WORK_BYTES]; /* 8 planes, then into e */     \
        for (uint32_t q = width; q-- > 0;) {                                   \
            if (q == width - 1 || q % 8 == 7) /* planes above width: 0 */      \
                memset(work, 0, 8 * B);                                        \
            uint8_t *out = work + (q % 8) * B;                                 \
            const uint8_t *bytes = src + pos; /* dense plane */                \
            const uint8_t *bitmap = NULL;                                      \
            uint32_t nonzero = 0;                                              \
            if ((flags[q / 8] >> (q % 8)) & 1u) {                              \
                if (size - pos < M)                                            \
                    return FZS_CORRUPT_CHUNK;                                  \
                bitmap = src + pos;                                            \
                for (uint32_t k = 0; k < M; k++)                               \
                    nonzero += falcon_popc32(bitmap[k]);                       \
                if (B % 8 && bitmap[M - 1] >> (B % 8))                         \
                    return FZS_CORRUPT_CHUNK; /* bitmap padding */             \
                if (!falcon_sparse(B, nonzero) || size - pos - M < nonzero)    \
                    return FZS_CORRUPT_CHUNK;                                  \
                bytes = src + pos + M;                                         \
                pos += M + nonzero;                                            \
            } else {                                                           \
                if (size - pos < B)                                            \
                    return FZS_CORRUPT_CHUNK;                                  \
                for (uint32_t k = 0; k < B; k++)                               \
                    nonzero += bytes[k] != 0;                                  \
                if (falcon_sparse(B, nonzero))                                 \
                    return FZS_CORRUPT_CHUNK; /* sparse would be smaller */    \
                pos += B;                                                      \
            }                                                                  \
            if (q == width - 1 && nonzero == 0)                                \
                return FZS_CORRUPT_CHUNK; /* width not minimal */              \
            if (bitmap) { /* listed bytes to their places (out is 0) */        \
                const uint8_t *next = bytes;                                   \
                for (uint32_t k8 = 0; k8 < M; k8++)                            \
                    for (uint32_t b = bitmap[k8], k = 8 * k8; b;               \
                         b >>= 1, k++) {                                       \
                        if (!(b & 1u))                                         \
                            continue;                                          \
                        if (*next == 0)                                        \
                            return FZS_CORRUPT_CHUNK; /* listed zero byte */   \
                        out[k] = *next++;                                      \
                    }                                                          \
            } else {                                                           \
                memcpy(out, bytes, B);                                         \
            }                                                                  \
            if (B && (out[B - 1] & last_mask))                                 \
                return FZS_CORRUPT_CHUNK; /* padding bits of the last byte */  \
            if (q % 8 == 0)                                                    \
                falcon_unplanes8_##W(work, B, q / 8, e, n);                    \
        }                                                                      \
        if (pos != size)                                                       \
            return FZS_CORRUPT_CHUNK;                                          \
        /* integers back, then values; canonical-choice checks */              \
        const double p =                                                       \
            scale == FALCON_CASE2 ? 1.0 : falcon_pow10((int)scale);            \
        T s = scale == FALCON_CASE2 ? u0 : falcon_unzz##W(u0);                 \
        int case1_ok = 1, alpha_tight = scale == 0 || scale == FALCON_CASE2;   \
        for (uint32_t i = 0; i < n; i++) {                                     \
            if (i)                                                             \
                s = (T)(s + falcon_unzz##W(e[i]));                             \
            if (scale != FALCON_CASE2) {                                       \
                case1_ok &= falcon_valid_case1_##W(s);                         \
                alpha_tight |= falcon_not_mult10_##W(s);                       \
            }                                                                  \
            e[i] = s;                                                          \
        }                                                                      \
        if (!case1_ok || !alpha_tight)                                         \
            return FZS_CORRUPT_CHUNK;                                          \
        for (uint32_t i = 0; i < n; i++)                                       \
            e[i] = falcon_inv##W(e[i], scale, p);                              \
        if (scale == FALCON_CASE2 && falcon_choose##W(e, n) != FALCON_CASE2)   \
            return FZS_CORRUPT_CHUNK; /* the encoder would use Case 1 */       \
        return FZS_OK;                                                         \
    }
FALCON_DEFINE_CHUNK_CODER(32, uint32_t)
FALCON_DEFINE_CHUNK_CODER(64, uint64_t)

#endif /* FALCON_CHUNK_H */
