/* Helpers shared by the GFC tests (CPU and GPU):
 *  - a reference encoder of one GFC chunk, written from docs/GFC.md and
 *    independent of src/codecs/gfc/ (so the tests check the documented
 *    layout, not the library against itself);
 *  - hand-made payloads that break one canonical-encoding rule each while
 *    decoding to the very same values (so only the canonical checks can
 *    reject them), spliced into a real stream with valid checksums;
 *  - interleaved multi-dimensional test data. */
#ifndef GFC_TEST_REF_H
#define GFC_TEST_REF_H

#include <stdlib.h>
#include <string.h>

#include "../src/format/fz_container.h"
#include "test_util.h"

/* Encoded size of a chunk of n values of esize bytes (4 or 8) with
 * dimensionality dim, written to out (capacity >= n * esize * 9 / 8 + 64).
 * The result may be >= n * esize: the stream then stores it verbatim. */
static inline size_t gfc_ref_encode(size_t esize, const void *src, size_t n,
                                    uint32_t dim, uint8_t *out) {
    const unsigned W = (unsigned)(8 * esize);
    const uint64_t mask = W == 64 ? ~(uint64_t)0 : ((uint64_t)1 << W) - 1;
    const size_t subs = (n + 31) / 32;
    uint64_t prev[32] = {0}, cur[32];
    memset(out, 0, 16 * subs);
    size_t pos = 16 * subs;
    for (size_t s = 0; s < subs; s++) {
        for (unsigned l = 0; l < 32; l++) {
            const size_t i = 32 * s + l;
            const uint64_t pred = prev[32 - dim + l % dim];
            uint64_t x = 0;
            if (i < n)
                memcpy(&x, (const uint8_t *)src + i * esize, esize);
            else
                x = pred; /* padding: predicted exactly */
            cur[l] = x;
            const uint64_t r = (x - pred) & mask;
            const unsigned sign = (unsigned)(r >> (W - 1));
            const uint64_t mag = sign ? (0 - r) & mask : r;
            unsigned lz = 0; /* leading zero bytes of mag */
            while (lz < W / 8 && ((mag >> (W - 8 * (lz + 1))) & 0xFF) == 0)
                lz++;
            unsigned code, nbytes;
            if (W == 64) { /* 6 leading zero bytes coded as 5 */
                code = lz <= 5 ? lz : lz - 1;
                nbytes = lz == 6 ? 3 : 8 - lz;
            } else {
                code = lz;
                nbytes = 4 - lz;
            }
            out[16 * s + l / 2] |=
                (uint8_t)((sign << 3 | code) << (4 * (l % 2)));
            for (unsigned k = 0; k < nbytes; k++)
                out[pos++] = (uint8_t)(mag >> (8 * k));
        }
        memcpy(prev, cur, sizeof prev);
    }
    while (pos % 8)
        out[pos++] = 0;
    return pos;
}

/* Capacity gfc_ref_encode needs for n values. */
static inline size_t gfc_ref_capacity(size_t esize, size_t n) {
    return n * esize + (n + 31) / 32 * 16 + 64;
}

/* Check every chunk of a gfc stream against the reference encoder: encoded
 * chunks byte for byte, verbatim chunks exactly when the reference is not
 * smaller. Needs the original data. */
static inline void gfc_ref_check_stream(const uint8_t *stream, size_t size,
                                        const void *src) {
    fz_info info;
    CHECK_OK(fz_inspect(stream, size, &info));
    CHECK(info.params.codec == FZ_CODEC_GFC);
    const size_t es = tu_dtype_size(info.params.dtype);
    const uint32_t dim = (uint32_t)info.params.codec_options[0];
    const uint32_t entry = info.has_checksums ? 8 : 4;
    uint8_t *ref =
        (uint8_t *)tu_xmalloc(gfc_ref_capacity(es, info.chunk_bytes / es));
    uint64_t off = info.payload_offset;
    for (uint64_t c = 0; c < info.chunk_count; c++) {
        uint64_t raw = info.original_bytes - c * info.chunk_bytes;
        raw = raw < info.chunk_bytes ? raw : info.chunk_bytes;
        const uint8_t *in = (const uint8_t *)src + c * info.chunk_bytes;
        const uint32_t csize = fz_load32(stream + FZ_HEADER_BYTES + c * entry);
        const size_t want = gfc_ref_encode(es, in, raw / es, dim, ref);
        CHECK(off + csize <= size);
        if (want < raw) {
            CHECK_EQ_U64(csize, want);
            CHECK(memcmp(stream + off, ref, want) == 0);
        } else {
            CHECK_EQ_U64(csize, raw);
            CHECK(memcmp(stream + off, in, raw) == 0);
        }
        off += csize;
    }
    CHECK_EQ_U64(off, size);
    free(ref);
}

/* A copy of a valid one-chunk stream whose chunk payload is replaced by
 * payload[0..psize): table entry, table hash, payload size and header hash
 * are rewritten; the data checksum is kept (the forgeries decode to the
 * original data, so only canonical checks reject them). */
static inline uint8_t *gfc_splice_payload(const uint8_t *stream, size_t size,
                                          const uint8_t *payload, size_t psize,
                                          size_t *out_size) {
    fz_header h;
    memset(&h, 0, sizeof h);
    CHECK_EQ_U64(fz_header_parse(stream, size, &h), FZS_OK);
    CHECK_EQ_U64(h.chunk_count, 1);
    const uint64_t off = fz_payload_offset(&h);
    uint8_t *out = (uint8_t *)tu_xmalloc((size_t)off + psize);
    memcpy(out, stream, (size_t)off);
    memcpy(out + off, payload, psize);
    fz_store32(out + FZ_HDR_BYTES, (uint32_t)psize);
    h.payload_bytes = psize;
    h.table_hash = fz_table_hash(out + FZ_HDR_BYTES, fz_table_bytes(&h));
    fz_header_write(&h, out);
    *out_size = (size_t)off + psize;
    return out;
}

/* One non-canonical chunk: data (n values of dtype), the payload that
 * breaks a rule, and what it breaks. */
typedef struct gfc_forgery {
    const char *what;
    fz_dtype dtype;
    size_t n;
    uint64_t values[40];
    uint8_t payload[256];
    size_t psize;
} gfc_forgery;

/* Appends the 8-byte little-endian image of v to p at *pos. */
static inline void gfc_put_bytes(uint8_t *p, size_t *pos, uint64_t v,
                                 unsigned bytes) {
    for (unsigned k = 0; k < bytes; k++)
        p[(*pos)++] = (uint8_t)(v >> (8 * k));
}

/* The forgeries. Every one decodes, by the arithmetic of the format, to
 * its `values` (so the stored checksum matches): only the canonical-form
 * rules can reject it. Returns the count; fills out[0..count). */
static inline size_t gfc_forgeries(gfc_forgery *out) {
    size_t k = 0;
    gfc_forgery *f;
    /* f64, 40 values 0..39 (bit patterns): subchunk 0 residuals i
     * (1 byte, code 6; 0 for i = 0, code 7), subchunk 1 (dim 1):
     * residuals i - 31 for 8 values, 24 padding values (code 7). */
#define F64_BASE(name)                                                         \
    do {                                                                       \
        f = &out[k++];                                                         \
        memset(f, 0, sizeof *f);                                               \
        f->what = name;                                                        \
        f->dtype = FZ_F64;                                                     \
        f->n = 40;                                                             \
        for (size_t i = 0; i < 40; i++)                                        \
            f->values[i] = i;                                                  \
    } while (0)
    /* codes as nibbles, then the residual bytes */
#define F64_PAYLOAD(codes0, codes1, resid_stmt)                                \
    do {                                                                       \
        size_t pos = 32;                                                       \
        for (unsigned l = 0; l < 32; l++) {                                    \
            f->payload[l / 2] |= (uint8_t)((codes0) << (4 * (l % 2)));         \
            f->payload[16 + l / 2] |= (uint8_t)((codes1) << (4 * (l % 2)));    \
        }                                                                      \
        resid_stmt;                                                            \
        while (pos % 8)                                                        \
            f->payload[pos++] = 0;                                             \
        f->psize = pos;                                                        \
    } while (0)

    /* 0. the canonical encoding (must decode) */
    F64_BASE("canonical f64");
    F64_PAYLOAD(l == 0 ? 7u : 6u, l < 8 ? 6u : 7u, {
        for (unsigned l = 1; l < 32; l++)
            gfc_put_bytes(f->payload, &pos, l, 1);
        for (unsigned l = 0; l < 8; l++)
            gfc_put_bytes(f->payload, &pos, 32 + l - 31, 1);
    });
    /* 1. value 1 stored with 8 bytes (code 0) */
    F64_BASE("f64 non-minimal: 8 bytes for 1");
    F64_PAYLOAD(l == 0   ? 7u
                : l == 1 ? 0u
                         : 6u,
                l < 8 ? 6u : 7u, {
                    for (unsigned l = 1; l < 32; l++)
                        gfc_put_bytes(f->payload, &pos, l, l == 1 ? 8 : 1);
                    for (unsigned l = 0; l < 8; l++)
                        gfc_put_bytes(f->payload, &pos, 32 + l - 31, 1);
                });
    /* 2. value 5 stored with 3 bytes (code 5, the "six as five" code,
     *    needs |r| >= 256) */
    F64_BASE("f64 non-minimal: code 5 for a 1-byte residual");
    F64_PAYLOAD(l == 0   ? 7u
                : l == 5 ? 5u
                         : 6u,
                l < 8 ? 6u : 7u, {
                    for (unsigned l = 1; l < 32; l++)
                        gfc_put_bytes(f->payload, &pos, l, l == 5 ? 3 : 1);
                    for (unsigned l = 0; l < 8; l++)
                        gfc_put_bytes(f->payload, &pos, 32 + l - 31, 1);
                });
    /* 3. a zero residual with the sign set (code 15) */
    F64_BASE("f64 negative zero residual");
    F64_PAYLOAD(l == 0 ? 15u : 6u, l < 8 ? 6u : 7u, {
        for (unsigned l = 1; l < 32; l++)
            gfc_put_bytes(f->payload, &pos, l, 1);
        for (unsigned l = 0; l < 8; l++)
            gfc_put_bytes(f->payload, &pos, 32 + l - 31, 1);
    });
    /* 4. a padding value that is not its prediction (residual 2^64 - ...:
     *    stored as sign 1, |r| = 1); padding is not hashed */
    F64_BASE("f64 padding residual != 0");
    F64_PAYLOAD(l == 0 ? 7u : 6u,
                l < 8     ? 6u
                : l == 20 ? 14u
                          : 7u,
                {
                    for (unsigned l = 1; l < 32; l++)
                        gfc_put_bytes(f->payload, &pos, l, 1);
                    for (unsigned l = 0; l < 8; l++)
                        gfc_put_bytes(f->payload, &pos, 32 + l - 31, 1);
                    gfc_put_bytes(f->payload, &pos, 1, 1);
                });
    /* 5. a nonzero alignment byte */
    F64_BASE("f64 nonzero alignment padding");
    F64_PAYLOAD(l == 0 ? 7u : 6u, l < 8 ? 6u : 7u, {
        for (unsigned l = 1; l < 32; l++)
            gfc_put_bytes(f->payload, &pos, l, 1);
        for (unsigned l = 0; l < 8; l++)
            gfc_put_bytes(f->payload, &pos, 32 + l - 31, 1);
        f->payload[pos++] = 0x40; /* byte 71 of 72 */
    });
    /* 6. 8 more zero bytes than the codes account for */
    F64_BASE("f64 trailing zero word");
    F64_PAYLOAD(l == 0 ? 7u : 6u, l < 8 ? 6u : 7u, {
        for (unsigned l = 1; l < 32; l++)
            gfc_put_bytes(f->payload, &pos, l, 1);
        for (unsigned l = 0; l < 8; l++)
            gfc_put_bytes(f->payload, &pos, 32 + l - 31, 1);
        pos = (pos + 7) / 8 * 8 + 8;
    });
    /* 7. residual 1 stored as sign 0 with |r| = 2^64 - 1... impossible in
     *    8 bytes; instead residual -1 (value 0 after 1) as sign 0 and
     *    |r| = 0xFF..FF (8 bytes): decodes the same, sign must be 1 */
    F64_BASE("f64 sign 0 with |r| >= 2^63");
    f->values[32] = 30; /* residual 30 - 31 = -1 */
    F64_PAYLOAD(l == 0 ? 7u : 6u,
                l == 0  ? 0u
                : l < 8 ? 6u
                        : 7u,
                {
                    for (unsigned l = 1; l < 32; l++)
                        gfc_put_bytes(f->payload, &pos, l, 1);
                    gfc_put_bytes(f->payload, &pos, ~(uint64_t)0, 8);
                    for (unsigned l = 1; l < 8; l++)
                        gfc_put_bytes(f->payload, &pos, 32 + l - 31, 1);
                });
#undef F64_BASE
#undef F64_PAYLOAD

    /* f32, 36 values 0..35: subchunk 0 residuals i (code 3, 1 byte; code
     * 4 for 0), subchunk 1 residuals 1..4 then 28 padding values. */
#define F32_BASE(name)                                                         \
    do {                                                                       \
        f = &out[k++];                                                         \
        memset(f, 0, sizeof *f);                                               \
        f->what = name;                                                        \
        f->dtype = FZ_F32;                                                     \
        f->n = 36;                                                             \
        for (size_t i = 0; i < 36; i++)                                        \
            f->values[i] = i;                                                  \
    } while (0)
#define F32_PAYLOAD(codes0, codes1, resid_stmt)                                \
    do {                                                                       \
        size_t pos = 32;                                                       \
        for (unsigned l = 0; l < 32; l++) {                                    \
            f->payload[l / 2] |= (uint8_t)((codes0) << (4 * (l % 2)));         \
            f->payload[16 + l / 2] |= (uint8_t)((codes1) << (4 * (l % 2)));    \
        }                                                                      \
        resid_stmt;                                                            \
        while (pos % 8)                                                        \
            f->payload[pos++] = 0;                                             \
        f->psize = pos;                                                        \
    } while (0)
#define F32_RESID(first_bytes)                                                 \
    do {                                                                       \
        for (unsigned l = 1; l < 32; l++)                                      \
            gfc_put_bytes(f->payload, &pos, l, l == 1 ? (first_bytes) : 1);    \
        for (unsigned l = 0; l < 4; l++)                                       \
            gfc_put_bytes(f->payload, &pos, 32 + l - 31, 1);                   \
    } while (0)
    /* 8. canonical */
    F32_BASE("canonical f32");
    F32_PAYLOAD(l == 0 ? 4u : 3u, l < 4 ? 3u : 4u, F32_RESID(1));
    /* 9. value 1 with 4 bytes (code 0) */
    F32_BASE("f32 non-minimal: 4 bytes for 1");
    F32_PAYLOAD(l == 0 ? 4u : l == 1 ? 0u : 3u, l < 4 ? 3u : 4u, F32_RESID(4));
    /* 10. a negative zero residual (code 12) */
    F32_BASE("f32 negative zero residual");
    F32_PAYLOAD(l == 0 ? 12u : 3u, l < 4 ? 3u : 4u, F32_RESID(1));
    /* 11..13. codes 5, 6, 7 (z > 4) for a zero residual: no bytes */
    F32_BASE("f32 code 5");
    F32_PAYLOAD(l == 0 ? 5u : 3u, l < 4 ? 3u : 4u, F32_RESID(1));
    F32_BASE("f32 code 7");
    F32_PAYLOAD(l == 0 ? 7u : 3u, l < 4 ? 3u : 4u, F32_RESID(1));
    F32_BASE("f32 code 13");
    F32_PAYLOAD(l == 0 ? 13u : 3u, l < 4 ? 3u : 4u, F32_RESID(1));
    /* 14. padding with a nonzero residual */
    F32_BASE("f32 padding residual != 0");
    F32_PAYLOAD(l == 0 ? 4u : 3u, l < 4 || l == 31 ? 3u : 4u, {
        F32_RESID(1);
        gfc_put_bytes(f->payload, &pos, 9, 1);
    });
#undef F32_BASE
#undef F32_PAYLOAD
#undef F32_RESID
    return k;
}

/* Bytes of a forgery's values in its dtype. */
static inline void gfc_forgery_data(const gfc_forgery *f, void *dst) {
    for (size_t i = 0; i < f->n; i++) {
        if (f->dtype == FZ_F64) {
            memcpy((uint8_t *)dst + 8 * i, &f->values[i], 8);
        } else {
            const uint32_t v = (uint32_t)f->values[i];
            memcpy((uint8_t *)dst + 4 * i, &v, 4);
        }
    }
}

/* n values interleaving dim smooth series of very different magnitudes
 * (component j around 10^(3j - 6)), as a dim-dimensional field would. */
static inline void gfc_fill_interleaved(fz_dtype dtype, void *dst, size_t n,
                                        uint32_t dim, uint64_t seed) {
    double *tmp = (double *)tu_xmalloc(((n + dim - 1) / dim + 1) * 8);
    for (uint32_t j = 0; j < dim; j++) {
        const size_t m = (n - j + dim - 1) / dim;
        tu_fill(TU_GEN_SMOOTH, FZ_F64, tmp, m, seed + j);
        double scale = 1e-6;
        for (uint32_t e = 0; e < 3 * (j % 5); e++)
            scale *= 10;
        for (size_t q = 0; q < m; q++) {
            const double v = tmp[q] * scale * (j % 2 ? -1 : 1);
            const size_t i = q * dim + j;
            if (dtype == FZ_F64) {
                memcpy((uint8_t *)dst + 8 * i, &v, 8);
            } else {
                const float f = (float)v;
                memcpy((uint8_t *)dst + 4 * i, &f, 4);
            }
        }
    }
    free(tmp);
}

#endif /* GFC_TEST_REF_H */
