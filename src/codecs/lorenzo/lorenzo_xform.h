/* Lorenzo codec (cuSZ+-style dual quantization), the parts shared by the
 * CPU and GPU backends: chunk geometry, prequantization and its exact
 * bound check, tile-local Lorenzo differencing rules, the chunk layout and
 * the canonical Huffman code rules. Everything here is deterministic:
 * integer arithmetic, or IEEE binary64 operations that round the same way
 * on every conforming host and GPU (no FMA contraction: the host builds
 * with -ffp-contract=off, nvcc with -fmad=false). docs/LORENZO.md has the
 * design and the error-bound argument; docs/FORMAT.md the byte layout. */
#ifndef LORENZO_XFORM_H
#define LORENZO_XFORM_H

#include <math.h>
#include <string.h>

#include "../../format/fz_container.h"

#define LZ_CODEC_ID 4u
/* Version 2 predicts tile corners from the corners before them
 * (lz_corner_term); version 3 adds the zero-run workflow (LZ_FLOW_ZRUNS,
 * allowed by LZ_OPT_ZERO_RUNS); version 1 streams (corners coded as q)
 * and version 2 streams still decode. */
#define LZ_CODEC_VERSION 3u
#define LZ_CODEC_VERSION_MIN 1u

/* Quant-code radius (codec_options[0]): codes are delta + radius for
 * |delta| < radius, 0 marks an outlier. The alphabet has 2 radius codes. */
#define LZ_RADIUS_DEFAULT 512u
#define LZ_RADIUS_MIN 2u
#define LZ_RADIUS_MAX 32768u

/* codec_params[1] (codec_options[1]): bit 0 lets the encoder pick the
 * zero-run workflow. Its alphabet extends the 2 radius codes by
 * LZ_ZRUN_SYMBOLS symbols Z_k (2^k codes `radius`), so the radius is at
 * most LZ_ZRUN_RADIUS_MAX to keep every symbol a u16. */
#define LZ_OPT_ZERO_RUNS 1u
#define LZ_ZRUN_SYMBOLS 32u
#define LZ_ZRUN_RADIUS_MAX ((65536u - LZ_ZRUN_SYMBOLS) / 2u)

/* |q| < 2^27 keeps every Lorenzo residual (at most 8 terms) and every
 * partial prefix sum inside int32. */
#define LZ_Q_LIMIT 134217728.0 /* 2^27 */

/* Tiles: 1-D 256 values; 2-D 16 x 16; 3-D 32 x 8 x 8 (x fastest). */
#define LZ_TILE1 256u
#define LZ_TILE2 16u
#define LZ_TILE3X 32u
#define LZ_TILE3Y 8u
#define LZ_TILE3Z 8u

/* Chunks are whole tile slabs: about LZ_CHUNK_TARGET bytes, and at most
 * LZ_SLAB_MAX bytes for one slab (above it the predictor drops a
 * dimension, see lz_geometry). */
#define LZ_CHUNK_TARGET (2u << 20)
#define LZ_SLAB_MAX (64u << 20)

/* Huffman: code lengths <= LZ_HUFF_MAXLEN, chunk code stream split into
 * sub-blocks of LZ_SUB_SYMBOLS codes, each byte-aligned, for parallel
 * decoding; each sub-block's bit count (at most LZ_SUB_SYMBOLS x
 * LZ_HUFF_MAXLEN = 20480) is stored as a u16 (LZ_SUB_SIZE bytes). */
#define LZ_HUFF_MAXLEN 20u
#define LZ_SUB_SYMBOLS 1024u
#define LZ_SUB_SIZE 2u

/* Chunk header: u8 workflow, u8 0, u16 0, u32 outliers, u32 exceptions. */
#define LZ_CHUNK_HEAD 12u
#define LZ_FLOW_HUFFMAN 0u
#define LZ_FLOW_RLE 1u
#define LZ_FLOW_ZRUNS 2u    /* version 3, with LZ_OPT_ZERO_RUNS only */
#define LZ_OUTLIER_BYTES 8u /* u32 index, i32 delta */

/* The predictor and the chunk slab of a header. The data is viewed as
 * X (fastest) x Y x Z with dims beyond the predictor's merged into the
 * slowest one. */
typedef struct lz_geom {
    uint32_t pd;          /* predictor dimensions 1..3 */
    uint64_t X, Y, Z;     /* view extents (Y = Z = 1 below pd) */
    uint32_t tx, ty, tz;  /* tile extents */
    uint64_t unit_values; /* values in one slab of tiles */
} lz_geom;

static FZ_HD lz_geom lz_geom_for(const fz_header *h, uint32_t pd) {
    lz_geom g;
    uint64_t n = 1;
    for (int d = 0; d < 4; d++)
        n *= h->dims[d];
    g.pd = pd;
    g.tx = pd == 1 ? LZ_TILE1 : pd == 2 ? LZ_TILE2 : LZ_TILE3X;
    g.ty = pd == 1 ? 1u : pd == 2 ? LZ_TILE2 : LZ_TILE3Y;
    g.tz = pd == 3 ? LZ_TILE3Z : 1u;
    g.X = pd == 1 ? n : h->dims[0];
    g.Y = pd == 1 ? 1 : pd == 2 ? (g.X ? n / g.X : 0) : h->dims[1];
    g.Z = pd == 3 && g.X && g.Y ? n / (g.X * g.Y) : 1;
    g.unit_values = pd == 1   ? LZ_TILE1
                    : pd == 2 ? (uint64_t)LZ_TILE2 * g.X
                              : (uint64_t)LZ_TILE3Z * g.X * g.Y;
    return g;
}

/* The header's shape decides the predictor: min(ndims, 3) dimensions
 * (4-D: the two slowest merged), one fewer while a slab of tiles would
 * exceed LZ_SLAB_MAX bytes; empty arrays use 1-D. */
static FZ_HD lz_geom lz_geometry(const fz_header *h) {
    const uint32_t es = fz_dtype_size(h->dtype);
    uint32_t pd = h->ndims < 3 ? h->ndims : 3u;
    if (h->original_bytes == 0)
        pd = 1;
    lz_geom g = lz_geom_for(h, pd);
    /* unit_values * es > LZ_SLAB_MAX, on the extents: for extents near
     * 2^60 (a header may claim them) 16 X and 8 X Y es wrap, and a wrapped
     * slab size kept pd and made lz_chunk_bytes divide by zero. X Y fits
     * (it is at most count < 2^62 when pd is 3). */
    while (g.pd > 1 && (g.pd == 2 ? g.X > LZ_SLAB_MAX / es / LZ_TILE2
                                  : g.X * g.Y > LZ_SLAB_MAX / es / LZ_TILE3Z))
        g = lz_geom_for(h, g.pd - 1);
    return g;
}

/* Zero-run workflow allowed by the header (codec_params[1]). */
static FZ_HD int lz_zero_runs(const fz_header *h) {
    return (h->codec_params[1] & LZ_OPT_ZERO_RUNS) != 0;
}

/* The last workflow a chunk of this header may use. */
static FZ_HD uint32_t lz_last_flow(const fz_header *h) {
    return lz_zero_runs(h) ? LZ_FLOW_ZRUNS : LZ_FLOW_RLE;
}

/* Symbols of the header's code book: the 2 radius codes, and the Z_k
 * when zero runs are allowed. */
static FZ_HD uint32_t lz_book_symbols(const fz_header *h) {
    return 2 * h->codec_params[0] + (lz_zero_runs(h) ? LZ_ZRUN_SYMBOLS : 0u);
}

/* Codes that zero-run symbol s stands for: a code (s < zsym) one, Z_k
 * (s = zsym + k) 2^k; k is at most 31 in a valid stream, capped at 32 so
 * that a damaged symbol never shifts by 64 or more. */
static FZ_HD uint64_t lz_zrun_codes(uint32_t s, uint32_t zsym) {
    if (s < zsym)
        return 1;
    const uint32_t k = s - zsym;
    return (uint64_t)1 << (k < 32 ? k : 32u);
}

/* Uncompressed bytes per chunk: whole slabs, about LZ_CHUNK_TARGET. */
static FZ_HD uint32_t lz_chunk_bytes(const fz_header *h) {
    const uint32_t es = fz_dtype_size(h->dtype);
    const lz_geom g = lz_geometry(h);
    const uint64_t unit = g.unit_values * es;
    const uint64_t k = unit >= LZ_CHUNK_TARGET ? 1 : LZ_CHUNK_TARGET / unit;
    return (uint32_t)(unit * k);
}

/* Local coordinates of value i of a chunk (chunks start on slab
 * boundaries, so tile boundaries are the multiples of the tile extents). */
static FZ_HD void lz_coords(const lz_geom *g, uint64_t i, uint64_t *x,
                            uint64_t *y, uint64_t *z) {
    *x = i % g->X;
    *y = (i / g->X) % g->Y;
    *z = i / (g->X * g->Y);
}

/* ------------------------------------------------------ tile corners */
/* A tile corner has local coordinates that are multiples of the tile
 * extents; all its Lorenzo neighbours lie outside its tile, so its in-tile
 * residual is q itself, far outside the radius at fine bounds. Codec
 * version 2 subtracts the Lorenzo prediction over the lattice of tile
 * corners: the corners one tile back along each nonempty subset S of the
 * pd axes, signed (-1)^(|S| + 1), those outside the chunk omitted (zero).
 * Decoding restores the corners in increasing index order (each term is a
 * smaller index) before the in-tile prefix sums. */
/* Term m (1..7: the axes x = 1, y = 2, z = 4 one tile back) of the
 * prediction of the corner at (x, y, z): 0 when it falls outside the
 * chunk (a coordinate below its tile extent, an axis beyond pd); else 1,
 * *back its index distance and *plus whether it is added (an odd number
 * of axes) or subtracted. */
static FZ_HD int lz_corner_term(const lz_geom *g, uint64_t x, uint64_t y,
                                uint64_t z, uint32_t m, uint64_t *back,
                                int *plus) {
    const int ux = m & 1u, uy = (m >> 1) & 1u, uz = (m >> 2) & 1u;
    if ((ux && x < g->tx) || (uy && (g->pd < 2 || y < g->ty)) ||
        (uz && (g->pd < 3 || z < g->tz)))
        return 0;
    *back = (ux ? g->tx : 0u) + (uy ? (uint64_t)g->ty * g->X : 0u) +
            (uz ? (uint64_t)g->tz * g->X * g->Y : 0u);
    *plus = ux ^ uy ^ uz;
    return 1;
}

/* ------------------------------------------------- prequantization */
/* 2 eb, clamped to the largest double when it overflows (then every
 * finite value within eb of 0 quantizes to 0 and reconstructs as 0). */
static FZ_HD double lz_ebx2(double eb) {
    const double twice = 2.0 * eb;
    return twice <= 1.7976931348623157e308 ? twice : 1.7976931348623157e308;
}

/* |r - d| <= eb exactly (not only after rounding the difference): with
 * s = fl(r - d) and its exact rounding error e (TwoSum, exact for any
 * finite r, d without overflow), r - d = s + e and |e| <= ulp(s) / 2. */
static FZ_HD int lz_within(double r, double d, double eb) {
    const double s = r - d;
    const double as = fabs(s);
    if (as != eb)       /* NaN and overflow included: not below eb */
        return as < eb; /* as <= pred(eb): as + ulp/2 < eb */
    const double bv = s - r;
    const double av = s - bv;
    const double e = (r - av) + (-d - bv);
    return s > 0 ? e <= 0 : e >= 0;
}

/* Reconstruction of integer q: q x 2eb in binary64, then rounded to the
 * dtype. The encoder checks exactly this value, the decoder computes it. */
static FZ_HD double lz_recon64(int32_t q, double ebx2) {
    return (double)q * ebx2;
}
static FZ_HD float lz_recon32(int32_t q, double ebx2) {
    return (float)((double)q * ebx2);
}

/* round(x), half away from zero, for |x| < 2^27 (callers check): the
 * conversion truncates exactly and x - trunc(x) is exact (it only drops
 * integer bits), so no libm call is needed and every backend gets the
 * same integer (tests/test_lorenzo.c, group "quant", compares it with
 * round()). */
static FZ_HD int32_t lz_round(double x) {
    const int32_t t = (int32_t)x;
    const double frac = x - (double)t;
    return t + (frac >= 0.5) - (frac <= -0.5);
}

/* 1 / 2eb in binary64, clamped to the largest double when it overflows
 * (2eb subnormal): the quantizer multiplies by it instead of dividing.
 * Any finite factor is safe: the exact check decides, a poor q only makes
 * an exception. */
static FZ_HD double lz_inv_ebx2(double ebx2) {
    const double inv = 1.0 / ebx2;
    return inv <= 1.7976931348623157e308 ? inv : 1.7976931348623157e308;
}

/* What the quantizer needs of the bound: eb, 2eb, 1 / 2eb. */
typedef struct lz_quant {
    double eb, ebx2, inv;
} lz_quant;

static FZ_HD lz_quant lz_quant_of(double eb) {
    lz_quant z;
    z.eb = eb;
    z.ebx2 = lz_ebx2(eb);
    z.inv = lz_inv_ebx2(z.ebx2);
    return z;
}

/* Prequantize one value: 1, *q = round(d x (1 / 2eb)) and *r = the bits
 * of its reconstruction when that is within eb; else 0 and *r = bits
 * (stored exactly: an exception) for NaN, infinities, subnormals, -0.0,
 * |d x inv| >= 2^27 and any value whose reconstruction misses the bound.
 * *r is what the decoder returns either way. *q is 0 for the first five;
 * a value that only misses the bound (by the rounding of r to f32, or of
 * q x 2eb) keeps its q (codec version 2): the Lorenzo residuals of its
 * neighbours stay small, where q = 0 (version 1) made up to 2^pd of them
 * outliers around every such exception. Branch-free but for
 * the exact tie in lz_within: every step runs, on x = 0 when x is out of
 * range (d x inv is never NaN for finite d: inv is finite), and the
 * verdicts are combined at the end. */
static FZ_HD int lz_prequant64(uint64_t bits, const lz_quant *z, int32_t *q,
                               uint64_t *r) {
    const uint32_t ex = (uint32_t)(bits >> 52) & 0x7FF;
    const int normal = (ex - 1 < 0x7FE) | (bits == 0); /* or +0.0 */
    double d;
    memcpy(&d, &bits, sizeof d);
    const double x = d * z->inv;
    const int in = (x < LZ_Q_LIMIT) & (x > -LZ_Q_LIMIT);
    const int32_t qi = lz_round(in ? x : 0.0);
    const double rv = lz_recon64(qi, z->ebx2);
    uint64_t rb;
    memcpy(&rb, &rv, sizeof rb);
    const int ok = normal & in & lz_within(rv, d, z->eb);
    *q = normal & in ? qi : 0; /* an exception keeps a usable q: below */
    *r = ok ? rb : bits;
    return ok;
}

static FZ_HD int lz_prequant32(uint32_t bits, const lz_quant *z, int32_t *q,
                               uint32_t *r) {
    const uint32_t ex = (bits >> 23) & 0xFF;
    const int normal = (ex - 1 < 0xFE) | (bits == 0); /* or +0.0 */
    float f;
    memcpy(&f, &bits, sizeof f);
    const double d = (double)f;
    const double x = d * z->inv;
    const int in = (x < LZ_Q_LIMIT) & (x > -LZ_Q_LIMIT);
    const int32_t qi = lz_round(in ? x : 0.0);
    const float rv = lz_recon32(qi, z->ebx2);
    uint32_t rb;
    memcpy(&rb, &rv, sizeof rb);
    const int ok = normal & in & lz_within((double)rv, d, z->eb);
    *q = normal & in ? qi : 0;
    *r = ok ? rb : bits;
    return ok;
}

/* Quant code of a residual: delta + radius inside the radius, else 0. */
static FZ_HD uint32_t lz_code_of(int32_t delta, uint32_t radius) {
    return delta > -(int32_t)radius && delta < (int32_t)radius
               ? (uint32_t)(delta + (int32_t)radius)
               : 0u;
}

/* ------------------------------------------------------ RLE sizes */
static FZ_HD uint32_t lz_leb_bytes(uint64_t v) {
    uint32_t n = 1;
    while (v >= 128) {
        v >>= 7;
        n++;
    }
    return n;
}

/* RLE code stream: u32 runs, the u16 codes of all runs, then the LEB128
 * lengths of all runs (7 bits per byte, low first, high bit = more). A
 * length's last byte has the high bit clear, so the lengths split at those
 * bytes without parsing the ones before: decoders may find the runs in
 * parallel. */
#define LZ_LEB_MAX 5u

/* The length coded in the L bytes at p (the last with its high bit clear,
 * the others set); 0 when it is invalid: longer than LZ_LEB_MAX bytes, not
 * minimal (a last byte of 0 after others) or 0. */
static FZ_HD uint64_t lz_leb_value(const uint8_t *p, uint32_t L) {
    if (L == 0 || L > LZ_LEB_MAX || (L > 1 && p[L - 1] == 0))
        return 0;
    uint64_t v = 0;
    for (uint32_t k = 0; k < L; k++)
        v |= (uint64_t)(p[k] & 0x7F) << (7 * k);
    return v;
}

/* Run r of an RLE stream (codes at `codes`, the next length at *lens,
 * lengths ending at end), read without passing end: 1 with *sym, *len and
 * *lens advanced when it is valid in a stream of nsym codes after a run of
 * code prev with `left` values still to fill (code < nsym, differs from
 * prev, 1 <= len <= left, length a valid LEB128); else 0. */
static FZ_HD int lz_rle_run(const uint8_t *codes, uint64_t r,
                            const uint8_t **lens, const uint8_t *end,
                            uint32_t nsym, uint32_t prev, uint64_t left,
                            uint32_t *sym, uint64_t *len) {
    const uint8_t *p = *lens;
    uint32_t L = 0;
    while (p + L < end && L < LZ_LEB_MAX && (p[L] & 0x80))
        L++;
    if (p + L == end || L == LZ_LEB_MAX) /* no last byte, or too long */
        return 0;
    const uint32_t s = fz_load16(codes + 2 * r);
    const uint64_t v = lz_leb_value(p, L + 1);
    if (s >= nsym || s == prev || v == 0 || v > left)
        return 0;
    *lens = p + L + 1;
    *sym = s;
    *len = v;
    return 1;
}

/* The CPU decoder of an RLE code stream p[0..end) of n codes (alphabet
 * nsym) into codes: FZS_OK, or FZS_CORRUPT_CHUNK for any malformed
 * stream (run count, codes, lengths, bytes left over). */
static inline int lz_rle_read(const uint8_t *p, const uint8_t *end,
                              uint16_t *codes, uint64_t n, uint32_t nsym) {
    if (end - p < 4)
        return FZS_CORRUPT_CHUNK;
    const uint64_t runs = fz_load32(p);
    p += 4;
    if (runs > n || (uint64_t)(end - p) / 2 < runs)
        return FZS_CORRUPT_CHUNK;
    const uint8_t *lens = p + 2 * runs;
    uint64_t at = 0;
    uint32_t prev = UINT32_MAX;
    for (uint64_t r = 0; r < runs; r++) {
        uint32_t sym;
        uint64_t len;
        if (!lz_rle_run(p, r, &lens, end, nsym, prev, n - at, &sym, &len))
            return FZS_CORRUPT_CHUNK;
        for (uint64_t i = 0; i < len; i++)
            codes[at + i] = (uint16_t)sym;
        at += len;
        prev = sym;
    }
    return at == n && lens == end ? FZS_OK : FZS_CORRUPT_CHUNK;
}

/* ------------------------------------------- canonical Huffman codes */
static FZ_HD uint64_t lz_sub_count(uint64_t n) {
    return (n + LZ_SUB_SYMBOLS - 1) / LZ_SUB_SYMBOLS;
}

/* Whether a sub-block of `count` codes can have `bits` bits: every code
 * takes 1..LZ_HUFF_MAXLEN bits (a cheap early rejection; decoding checks
 * the exact count). */
static FZ_HD int lz_sub_bits_ok(uint32_t bits, uint64_t count) {
    return bits >= count && bits <= LZ_HUFF_MAXLEN * count;
}

/* Canonical codes from the symbol count of each length l = 1..
 * LZ_HUFF_MAXLEN: codes of one length are consecutive in symbol order,
 * shorter codes numerically first. first[l] = first code of length l,
 * base[l] = index in the symbol order of the first symbol of length l.
 * Returns the Kraft sum scaled by 2^LZ_HUFF_MAXLEN. */
static FZ_HD uint64_t lz_canonical_counts(const uint32_t *count,
                                          uint32_t *first, uint32_t *base) {
    uint64_t kraft = 0;
    uint32_t code = 0, idx = 0;
    for (uint32_t l = 1; l <= LZ_HUFF_MAXLEN; l++) {
        first[l] = code;
        base[l] = idx;
        code = (code + count[l]) << 1;
        idx += count[l];
        kraft += (uint64_t)count[l] << (LZ_HUFF_MAXLEN - l);
    }
    return kraft;
}

/* lz_canonical_counts from lengths (len[s] = 0: unused), also filling
 * count[l] = symbols of length l. */
static FZ_HD uint64_t lz_canonical(const uint8_t *len, uint32_t nsym,
                                   uint32_t *count, uint32_t *first,
                                   uint32_t *base) {
    for (uint32_t l = 0; l <= LZ_HUFF_MAXLEN; l++)
        count[l] = 0;
    for (uint32_t s = 0; s < nsym; s++)
        count[len[s]]++;
    return lz_canonical_counts(count, first, base);
}

#endif /* LORENZO_XFORM_H */
