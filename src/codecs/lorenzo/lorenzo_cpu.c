/* Lorenzo codec, CPU backend: one chunk at a time (the driver runs chunks
 * in parallel). Dual quantization (prequantize to integers, Lorenzo
 * residuals on the integers), values the prequantization cannot bring
 * within the bound stored exactly, then per chunk the smaller of a
 * canonical Huffman coding (parallel-decodable sub-blocks), a run-length
 * coding of the quant codes and, when allowed, a Huffman coding with zero
 * runs. Layout: docs/FORMAT.md; design and the bound
 * argument: docs/LORENZO.md. */
#include <stdlib.h>
#include <string.h>

#include "../../common/fz_hash.h"
#include "../fz_codec.h"
#include "lorenzo_huff.h"
#include "lorenzo_xform.h"

static double bound_of(const fz_header *h) {
    double eb;
    memcpy(&eb, &h->bound_eff_bits, sizeof eb);
    return eb;
}

static uint32_t lorenzo_chunk_bytes(const fz_header *h) {
    return lz_chunk_bytes(h);
}

/* The encoder writes a chunk only when it is smaller than the raw bytes
 * (exact sizes are known before writing), else it stores them verbatim. */
static size_t lorenzo_encode_capacity(const fz_header *h) {
    return lz_chunk_bytes(h);
}

/* The enforced bound is the absolute bound itself: every value is checked
 * against it during compression. */
static uint64_t lorenzo_effective_bound(const fz_header *h, uint64_t abs_bits) {
    (void)h;
    return abs_bits;
}

static int lorenzo_check_header(const fz_header *h) {
    const uint32_t r = h->codec_params[0];
    if (h->codec_version < LZ_CODEC_VERSION_MIN ||
        h->codec_version > LZ_CODEC_VERSION || h->mode == 0 ||
        r < LZ_RADIUS_MIN || r > LZ_RADIUS_MAX ||
        (h->codec_params[1] &&
         (h->codec_params[1] != LZ_OPT_ZERO_RUNS || h->codec_version < 3 ||
          r > LZ_ZRUN_RADIUS_MAX)) ||
        h->codec_params[2] | h->codec_params[3] ||
        h->chunk_bytes != lz_chunk_bytes(h))
        return FZS_CORRUPT_HEADER;
    if (h->mode == 1 && h->bound_eff_bits != h->bound_bits)
        return FZS_CORRUPT_HEADER;
    return FZS_OK;
}

/* Lossy modes only (lossless: use another codec). A bound of 0 (ABS 0, or
 * REL over a zero range) stores every chunk verbatim, i.e. exactly.
 * codec_options[0] = radius (0 = 512), [1] = 0 or LZ_OPT_ZERO_RUNS (radius
 * at most LZ_ZRUN_RADIUS_MAX), others 0. */
static int lorenzo_check_params(fz_header *h, const int32_t options[4]) {
    if (h->mode == 0)
        return FZS_UNSUPPORTED;
    const int32_t r = options[0] ? options[0] : (int32_t)LZ_RADIUS_DEFAULT;
    if (r < (int32_t)LZ_RADIUS_MIN || r > (int32_t)LZ_RADIUS_MAX ||
        (options[1] && (options[1] != (int32_t)LZ_OPT_ZERO_RUNS ||
                        r > (int32_t)LZ_ZRUN_RADIUS_MAX)) ||
        options[2] || options[3])
        return FZS_INVALID_ARGUMENT;
    h->codec_params[0] = (uint32_t)r;
    h->codec_params[1] = (uint32_t)options[1];
    h->codec_params[2] = h->codec_params[3] = 0;
    return FZS_OK;
}

/* --------------------------------------------------------- encoding */
typedef struct lz_work {
    int32_t *q;      /* prequantized values, then residuals */
    uint16_t *codes; /* quant codes */
    uint32_t *exc;   /* indices of exactly stored values */
    uint64_t nexc;
    uint32_t *out_idx; /* outliers */
    int32_t *out_delta;
    uint64_t nout;
    lz_huff huff;
    uint16_t *zcodes; /* zero-run symbols (when allowed) */
    lz_huff zhuff;
} lz_work;

static void work_free(lz_work *w) {
    free(w->q);
    free(w->codes);
    free(w->exc);
    free(w->out_idx);
    free(w->out_delta);
    free(w->zcodes);
    lz_huff_free(&w->huff);
    lz_huff_free(&w->zhuff);
}

/* Work arrays for a chunk of n values; the zero-run coder only when the
 * header allows that workflow. */
static int work_alloc(lz_work *w, const fz_header *h, uint64_t n) {
    memset(w, 0, sizeof *w);
    const size_t m = (size_t)n ? (size_t)n : 1;
    const uint32_t nsym = 2 * h->codec_params[0];
    w->q = (int32_t *)malloc(m * sizeof(int32_t));
    w->codes = (uint16_t *)malloc(m * sizeof(uint16_t));
    w->exc = (uint32_t *)malloc(m * sizeof(uint32_t));
    w->out_idx = (uint32_t *)malloc(m * sizeof(uint32_t));
    w->out_delta = (int32_t *)malloc(m * sizeof(int32_t));
    int ok = w->q && w->codes && w->exc && w->out_idx && w->out_delta &&
             lz_huff_alloc(&w->huff, n, nsym);
    if (ok && lz_zero_runs(h)) {
        w->zcodes = (uint16_t *)malloc(m * sizeof(uint16_t));
        ok = w->zcodes && lz_huff_alloc(&w->zhuff, n, nsym + LZ_ZRUN_SYMBOLS);
        w->zhuff.zsym = nsym;
    }
    if (!ok)
        work_free(w);
    return ok;
}

/* Prequantize every value; exceptions get q = 0. Returns the hash sum of
 * what the decoder will produce (reconstruction or exact value). One loop
 * per dtype. */
static uint32_t prequantize(const fz_header *h, const void *src, uint64_t n,
                            lz_work *w) {
    const lz_quant z = lz_quant_of(bound_of(h));
    const uint8_t *in = (const uint8_t *)src;
    uint32_t sum = 0;
    uint64_t nexc = 0;
    if (h->dtype == 1) {
        for (uint64_t i = 0; i < n; i++) {
            int32_t q;
            uint32_t b, r;
            memcpy(&b, in + 4 * i, 4);
            if (!lz_prequant32(b, &z, &q, &r))
                w->exc[nexc++] = (uint32_t)i;
            sum += fz_hash_value32(r, i);
            w->q[i] = q;
        }
    } else {
        for (uint64_t i = 0; i < n; i++) {
            int32_t q;
            uint64_t b, r;
            memcpy(&b, in + 8 * i, 8);
            if (!lz_prequant64(b, &z, &q, &r))
                w->exc[nexc++] = (uint32_t)i;
            sum += fz_hash_value64(r, i);
            w->q[i] = q;
        }
    }
    w->nexc = nexc;
    return sum;
}

/* In place: v[i] -= v[i - stride] along one axis, except at tile starts.
 * Applied along x, y, z this is the Lorenzo residual with zero padding
 * outside the tile. The chunk is walked as blocks of `extent` rows of
 * `stride` values (the last ones may be cut by n), so no value needs a
 * division to find its coordinate. Rows go from last to first so each
 * step reads unchanged values. */
static void difference_axis(int32_t *v, uint64_t n, uint64_t stride,
                            uint64_t extent, uint32_t tile) {
    if (stride == 1) { /* along x: tiles of `tile` values inside rows */
        for (uint64_t row = 0; row < n; row += extent) {
            const uint64_t row_end = row + extent < n ? row + extent : n;
            for (uint64_t t0 = row; t0 < row_end; t0 += tile) {
                const uint64_t t1 = t0 + tile < row_end ? t0 + tile : row_end;
                for (uint64_t i = t1; --i > t0;)
                    v[i] -= v[i - 1];
            }
        }
        return;
    }
    for (uint64_t block = 0; block < n; block += stride * extent)
        for (uint64_t c = extent; --c > 0;) {
            const uint64_t at = block + c * stride;
            if (c % tile == 0 || at >= n)
                continue;
            const uint64_t m = at + stride < n ? stride : n - at;
            int32_t *row = v + at;
            const int32_t *prev = row - stride;
            for (uint64_t k = 0; k < m; k++)
                row[k] -= prev[k];
        }
}

/* Partial sums, the inverse of difference_axis (first row to last;
 * wrapping arithmetic: corrupt residuals give wrong values, never
 * undefined behaviour). */
static void prefix_axis(int32_t *v, uint64_t n, uint64_t stride,
                        uint64_t extent, uint32_t tile) {
    if (stride == 1) {
        for (uint64_t row = 0; row < n; row += extent) {
            const uint64_t row_end = row + extent < n ? row + extent : n;
            for (uint64_t t0 = row; t0 < row_end; t0 += tile) {
                const uint64_t t1 = t0 + tile < row_end ? t0 + tile : row_end;
                uint32_t sum = (uint32_t)v[t0];
                for (uint64_t i = t0 + 1; i < t1; i++) {
                    sum += (uint32_t)v[i];
                    v[i] = (int32_t)sum;
                }
            }
        }
        return;
    }
    for (uint64_t block = 0; block < n; block += stride * extent)
        for (uint64_t c = 1; c < extent; c++) {
            const uint64_t at = block + c * stride;
            if (at >= n)
                break;
            if (c % tile == 0)
                continue;
            const uint64_t m = at + stride < n ? stride : n - at;
            int32_t *row = v + at;
            const int32_t *prev = row - stride;
            for (uint64_t k = 0; k < m; k++)
                row[k] = (int32_t)((uint32_t)row[k] + (uint32_t)prev[k]);
        }
}

static void lorenzo_residuals(const lz_geom *g, int32_t *v, uint64_t n) {
    difference_axis(v, n, 1, g->X, g->tx);
    if (g->pd >= 2)
        difference_axis(v, n, g->X, g->Y, g->ty);
    if (g->pd >= 3)
        difference_axis(v, n, g->X * g->Y, n / (g->X * g->Y) + 1, g->tz);
}

static void lorenzo_partial_sums(const lz_geom *g, int32_t *v, uint64_t n) {
    prefix_axis(v, n, 1, g->X, g->tx);
    if (g->pd >= 2)
        prefix_axis(v, n, g->X, g->Y, g->ty);
    if (g->pd >= 3)
        prefix_axis(v, n, g->X * g->Y, n / (g->X * g->Y) + 1, g->tz);
}

/* Corner lattice extents of a chunk of n values (whole rows and planes). */
static void corner_extents(const lz_geom *g, uint64_t n, uint64_t ext[3]) {
    ext[0] = g->pd == 1 ? n : g->X;
    ext[1] = g->pd == 1 ? 1 : g->pd == 2 ? n / g->X : g->Y;
    ext[2] = g->pd == 3 ? n / (g->X * g->Y) : 1;
}

/* Version 2 (lz_corner_term): encode = 1 replaces each corner's q (its
 * in-tile residual) by its residual on the corner lattice, from the last
 * corner to the first so that every prediction reads q; encode = 0 is the
 * inverse, first to last, so that every prediction reads restored q. */
static void corner_pass(const lz_geom *g, int32_t *v, uint64_t n, int encode) {
    uint64_t ext[3];
    corner_extents(g, n, ext);
    const uint64_t cx = (ext[0] + g->tx - 1) / g->tx;
    const uint64_t cy = (ext[1] + g->ty - 1) / g->ty;
    const uint64_t cz = (ext[2] + g->tz - 1) / g->tz;
    const uint64_t total = cx * cy * cz;
    for (uint64_t k = 0; k < total; k++) {
        const uint64_t c = encode ? total - 1 - k : k;
        const uint64_t x = (c % cx) * g->tx, y = (c / cx % cy) * g->ty,
                       z = c / (cx * cy) * g->tz;
        const uint64_t i = (z * ext[1] + y) * ext[0] + x;
        uint32_t p = 0; /* wrapping: any int32 inputs */
        for (uint32_t m = 1; m < 8; m++) {
            uint64_t back;
            int plus;
            if (lz_corner_term(g, x, y, z, m, &back, &plus))
                p += plus ? (uint32_t)v[i - back] : 0u - (uint32_t)v[i - back];
        }
        v[i] = (int32_t)(encode ? (uint32_t)v[i] - p : (uint32_t)v[i] + p);
    }
}

static void quant_codes(lz_work *w, uint64_t n, uint32_t radius) {
    w->nout = 0;
    for (uint64_t i = 0; i < n; i++) {
        const uint32_t c = lz_code_of(w->q[i], radius);
        w->codes[i] = (uint16_t)c;
        if (c == 0) {
            w->out_idx[w->nout] = (uint32_t)i;
            w->out_delta[w->nout++] = w->q[i];
        }
    }
}

/* Exact size of the run-length coding: u32 runs, then a u16 symbol and a
 * LEB128 length per run (3 bytes, plus one per 7 bits beyond the
 * first 7). Branch-free over the values: a run ends where the code
 * changes, and short runs of varying length would defeat the predictor. */
static uint64_t rle_size(const uint16_t *codes, uint64_t n, uint64_t *runs) {
    if (n == 0) {
        *runs = 0;
        return 4;
    }
    uint64_t r = 1, extra = 0, start = 0;
    for (uint64_t i = 1; i <= n; i++) {
        const int ends = i == n || codes[i] != codes[i - 1];
        const uint64_t len = i - start;
        const uint64_t leb_extra = (uint64_t)(len >= (1u << 7)) +
                                   (len >= (1u << 14)) + (len >= (1u << 21)) +
                                   (len >= (1u << 28)) +
                                   (len >= ((uint64_t)1 << 35));
        extra += ends ? leb_extra : 0;
        r += (uint64_t)(ends && i < n);
        start = ends ? i : start;
    }
    *runs = r;
    return 4 + 3 * r + extra;
}

/* Runs of equal codes (what rle_size counts), in a loop the compiler
 * vectorizes: RLE costs at least 4 + 3 runs bytes, so when that already
 * loses to the Huffman size the exact size is never needed. */
static uint64_t count_runs(const uint16_t *codes, uint64_t n) {
    uint64_t changes = 0;
    for (uint64_t i = 1; i < n; i++)
        changes += codes[i] != codes[i - 1];
    return n ? changes + 1 : 0;
}

/* min(rle_size, 8) from the run count alone: no run costs 4 bytes; one
 * run 7 bytes below 128 values, else at least 8; two or more at least 10. */
static uint64_t rle_size_capped(uint64_t n, uint64_t runs) {
    return runs == 0 ? 4 : runs == 1 && n < 128 ? 7 : 8;
}

/* u32 runs, the codes of all runs, then their LEB128 lengths. */
static uint8_t *write_rle(uint8_t *p, const uint16_t *codes, uint64_t n,
                          uint64_t runs) {
    fz_store32(p, (uint32_t)runs);
    uint8_t *code = p + 4, *leb = code + 2 * runs;
    for (uint64_t i = 0; i < n;) {
        uint64_t j = i + 1;
        while (j < n && codes[j] == codes[i])
            j++;
        fz_store16(code, codes[i]);
        code += 2;
        for (uint64_t len = j - i; len >= 128; len >>= 7)
            *leb++ = (uint8_t)(0x80 | (len & 0x7F));
        *leb++ = (uint8_t)((j - i) >> (7 * (lz_leb_bytes(j - i) - 1)));
        i = j;
    }
    return leb;
}

/* Zero-run symbols of codes[0..n): each maximal run of code `radius`
 * (residual 0) of length L becomes Z_k = zsym + k for the set bits k of
 * L, highest first; other codes stay. Their histogram into z->freq: the
 * codes' own counts (code_freq) but `radius`, and the Z_k counted here, once
 * per run. Returns their count m. */
static uint64_t zero_run_symbols(const uint16_t *codes, uint64_t n,
                                 uint32_t radius, const uint32_t *code_freq,
                                 lz_huff *z, uint16_t *out) {
    const uint32_t zsym = z->zsym;
    memcpy(z->freq, code_freq, zsym * sizeof(uint32_t));
    memset(z->freq + zsym, 0, (z->nsym - zsym) * sizeof(uint32_t));
    z->freq[radius] = 0;
    uint64_t m = 0;
    for (uint64_t i = 0; i < n;) {
        if (codes[i] != radius) {
            out[m++] = codes[i++];
            continue;
        }
        uint64_t j = i + 1;
        while (j < n && codes[j] == radius)
            j++;
        for (int k = LZ_ZRUN_SYMBOLS - 1; k >= 0; k--)
            if ((j - i) >> k & 1) {
                out[m++] = (uint16_t)(zsym + (uint32_t)k);
                z->freq[zsym + (uint32_t)k]++;
            }
        i = j;
    }
    return m;
}

/* A lower bound of the zero-run code stream's size (u32 symbol count,
 * then the Huffman coding of the m symbols) from their histogram: the
 * code lengths (kept for lz_huff_finish) and the total bits
 * ceil(sum freq x len / 8) in place of the per-sub-block sum of rounded-up
 * bytes, which is at least that. Exact integer arithmetic: a chunk this
 * rules out is one where zero runs do not win, and its symbols' bits need
 * not be summed. */
static uint64_t zero_run_bound(lz_huff *z, uint64_t m) {
    lz_huff_lengths(z->freq, z->nsym, z->len, z->s);
    lz_huff_range(z);
    uint64_t bits = 0;
    for (uint32_t sym = 0; sym < z->nsym; sym++)
        bits += (uint64_t)z->freq[sym] * z->len[sym];
    return 4 + lz_code_head_bytes(1, z->lo, z->hi, z->zk, m) + (bits + 7) / 8;
}

static uint8_t *write_lists(uint8_t *p, const fz_header *h, const void *src,
                            const lz_work *w) {
    const uint32_t es = fz_dtype_size(h->dtype);
    for (uint64_t k = 0; k < w->nout; k++, p += LZ_OUTLIER_BYTES) {
        fz_store32(p, w->out_idx[k]);
        fz_store32(p + 4, (uint32_t)w->out_delta[k]);
    }
    for (uint64_t k = 0; k < w->nexc; k++, p += 4 + es) {
        fz_store32(p, w->exc[k]);
        memcpy(p + 4, (const uint8_t *)src + (size_t)w->exc[k] * es, es);
    }
    return p;
}

static size_t encode_chunk(const fz_header *h, const void *src, uint64_t n,
                           uint8_t *dst, uint32_t *checksum, lz_work *w) {
    const uint32_t es = fz_dtype_size(h->dtype);
    const uint32_t radius = h->codec_params[0];
    const uint64_t raw = n * es;
    const lz_geom g = lz_geometry(h);
    const uint32_t sum = prequantize(h, src, n, w);
    *checksum = fz_hash_final(sum, raw / 4);
    if (bound_of(h) == 0.0) /* REL of constant data: nothing to gain */
        goto verbatim;
    lorenzo_residuals(&g, w->q, n);
    corner_pass(&g, w->q, n, 1); /* the encoder writes LZ_CODEC_VERSION */
    quant_codes(w, n, radius);

    uint64_t runs = count_runs(w->codes, n);
    const uint64_t lists =
        LZ_CHUNK_HEAD + w->nout * LZ_OUTLIER_BYTES + w->nexc * (4 + es);
    if (lists + rle_size_capped(n, runs) >= raw) /* cheap early exit */
        goto verbatim;
    const uint64_t huff = lz_huff_plan(&w->huff, w->codes, n);
    /* Huffman wins ties, so the exact RLE size matters only below it */
    const uint64_t rle =
        4 + 3 * runs >= huff ? huff : rle_size(w->codes, n, &runs);
    uint32_t flow = rle < huff ? LZ_FLOW_RLE : LZ_FLOW_HUFFMAN;
    uint64_t best = flow == LZ_FLOW_RLE ? rle : huff, zsyms = 0;
    /* then zero runs, on a strict gain only (the bound skips summing the
     * symbols' bits where they cannot win: most chunks at fine bounds) */
    if (lz_zero_runs(h)) {
        lz_huff *z = &w->zhuff;
        zsyms =
            zero_run_symbols(w->codes, n, radius, w->huff.freq, z, w->zcodes);
        if (zero_run_bound(z, zsyms) < best) {
            const uint64_t zr = 4 + lz_huff_finish(z, w->zcodes, zsyms);
            /* a stream of run symbols alone (every code the zero residual)
             * is not valid; RLE's one run is smaller there anyway */
            const int wins = zr < best && z->lo <= z->hi;
            flow = wins ? LZ_FLOW_ZRUNS : flow;
            best = wins ? zr : best;
        }
    }
    const uint64_t total = lists + best;
    if (total >= raw)
        goto verbatim;
    dst[0] = (uint8_t)flow;
    dst[1] = dst[2] = dst[3] = 0;
    fz_store32(dst + 4, (uint32_t)w->nout);
    fz_store32(dst + 8, (uint32_t)w->nexc);
    uint8_t *p = write_lists(dst + LZ_CHUNK_HEAD, h, src, w);
    if (flow == LZ_FLOW_RLE) {
        write_rle(p, w->codes, n, runs);
    } else if (flow == LZ_FLOW_ZRUNS) {
        fz_store32(p, (uint32_t)zsyms);
        lz_huff_write(&w->zhuff, w->zcodes, zsyms, p + 4);
    } else {
        lz_huff_write(&w->huff, w->codes, n, p);
    }
    return (size_t)total;
verbatim: /* the input itself: exact, so its own checksum */
    memcpy(dst, src, (size_t)raw);
    *checksum = fz_hash_bytes((const uint8_t *)src, raw);
    return (size_t)raw;
}

static size_t lorenzo_encode_chunk(const fz_header *h, const void *src,
                                   uint64_t nvalues, uint8_t *dst,
                                   uint32_t *checksum) {
    lz_work w;
    if (!work_alloc(&w, h, nvalues)) {
        /* no memory: the raw bytes are a valid chunk */
        memcpy(dst, src, (size_t)(nvalues * fz_dtype_size(h->dtype)));
        *checksum = fz_hash_bytes((const uint8_t *)src,
                                  nvalues * fz_dtype_size(h->dtype));
        return (size_t)(nvalues * fz_dtype_size(h->dtype));
    }
    size_t size = encode_chunk(h, src, nvalues, dst, checksum, &w);
    work_free(&w);
    return size;
}

/* --------------------------------------------------------- decoding */
/* Outliers and exceptions: indices strictly increasing and in range;
 * outlier residuals outside the radius (else they would be codes). */
static int check_lists(const uint8_t *p, uint64_t nout, uint64_t nexc,
                       uint64_t n, uint32_t es, uint32_t radius) {
    int64_t prev = -1;
    for (uint64_t k = 0; k < nout; k++, p += LZ_OUTLIER_BYTES) {
        const int64_t idx = fz_load32(p);
        const int32_t delta = (int32_t)fz_load32(p + 4);
        if (idx <= prev || (uint64_t)idx >= n || lz_code_of(delta, radius))
            return FZS_CORRUPT_CHUNK;
        prev = idx;
    }
    prev = -1;
    for (uint64_t k = 0; k < nexc; k++, p += 4 + es) {
        const int64_t idx = fz_load32(p);
        if (idx <= prev || (uint64_t)idx >= n)
            return FZS_CORRUPT_CHUNK;
        prev = idx;
    }
    return FZS_OK;
}

/* Residuals from codes and outliers: code 0 exactly at the outliers. */
static int residuals_of(const uint16_t *codes, const uint8_t *outliers,
                        uint64_t nout, uint64_t n, uint32_t radius,
                        int32_t *v) {
    uint64_t zeros = 0;
    for (uint64_t i = 0; i < n; i++) {
        zeros += codes[i] == 0;
        v[i] = (int32_t)codes[i] - (int32_t)radius;
    }
    if (zeros != nout)
        return FZS_CORRUPT_CHUNK;
    for (uint64_t k = 0; k < nout; k++) {
        const uint8_t *o = outliers + k * LZ_OUTLIER_BYTES;
        const uint32_t idx = fz_load32(o);
        if (codes[idx] != 0)
            return FZS_CORRUPT_CHUNK;
        v[idx] = (int32_t)fz_load32(o + 4);
    }
    return FZS_OK;
}

/* The q decoded at an exception: version 1, 0; version 2, the q that the
 * quantizer gives the stored value (raw, LE), which must be an exception,
 * so that a damaged index is caught even without checksums. */
static int exception_q_ok(const fz_header *h, const lz_quant *z,
                          const uint8_t *raw, int32_t q) {
    if (h->codec_version < 2)
        return q == 0;
    int32_t qe;
    int quantizes;
    if (h->dtype == 1) {
        uint32_t r;
        quantizes = lz_prequant32(fz_load32(raw), z, &qe, &r);
    } else {
        uint64_t r;
        quantizes = lz_prequant64(fz_load64(raw), z, &qe, &r);
    }
    return !quantizes && q == qe;
}

/* Values from q, then the exact values at the exceptions, whose q is
 * checked (exception_q_ok). One loop per dtype. */
static int write_values(const fz_header *h, const int32_t *q, uint64_t n,
                        const uint8_t *exc, uint64_t nexc, void *dst) {
    const uint32_t es = fz_dtype_size(h->dtype);
    const double ebx2 = lz_ebx2(bound_of(h));
    const int32_t limit = (int32_t)LZ_Q_LIMIT;
    uint8_t *out = (uint8_t *)dst;
    int bad = 0;
    if (es == 4) {
        for (uint64_t i = 0; i < n; i++) {
            bad |= !(q[i] < limit && q[i] > -limit);
            const float r = lz_recon32(q[i], ebx2);
            memcpy(out + 4 * i, &r, 4);
        }
    } else {
        for (uint64_t i = 0; i < n; i++) {
            bad |= !(q[i] < limit && q[i] > -limit);
            const double r = lz_recon64(q[i], ebx2);
            memcpy(out + 8 * i, &r, 8);
        }
    }
    if (bad)
        return FZS_CORRUPT_CHUNK;
    const lz_quant z = lz_quant_of(bound_of(h));
    for (uint64_t k = 0; k < nexc; k++) {
        const uint8_t *e = exc + k * (4 + es);
        const uint32_t idx = fz_load32(e);
        if (!exception_q_ok(h, &z, e + 4, q[idx]))
            return FZS_CORRUPT_CHUNK;
        memcpy(out + (size_t)idx * es, e + 4, es);
    }
    return FZS_OK;
}

typedef struct lz_decode_work {
    uint16_t *codes, *zcodes;
    int32_t *v;
    uint8_t *len;
    uint32_t *syms;
} lz_decode_work;

/* Codes from zero-run symbols z[0..m): Z_k (zsym + k) is 2^k codes
 * `radius`, others are codes; they must make exactly n codes. */
static int expand_zero_runs(const uint16_t *z, uint64_t m, uint32_t zsym,
                            uint32_t radius, uint16_t *codes, uint64_t n) {
    uint64_t i = 0;
    for (uint64_t j = 0; j < m; j++) {
        const uint64_t len = lz_zrun_codes(z[j], zsym);
        const uint16_t code = (uint16_t)(z[j] < zsym ? z[j] : radius);
        if (n - i < len)
            return FZS_CORRUPT_CHUNK;
        for (const uint64_t e = i + len; i < e; i++)
            codes[i] = code;
    }
    return i == n ? FZS_OK : FZS_CORRUPT_CHUNK;
}

/* The zero-run code stream: u32 symbol count m (1..n), then their
 * Huffman coding (zero-run table head). */
static int read_zero_runs(const fz_header *h, const uint8_t *p,
                          const uint8_t *end, uint64_t n,
                          const lz_decode_work *w) {
    const uint32_t radius = h->codec_params[0], zsym = 2 * radius;
    if (end - p < 4)
        return FZS_CORRUPT_CHUNK;
    const uint64_t m = fz_load32(p);
    if (m == 0 || m > n)
        return FZS_CORRUPT_CHUNK;
    int s = lz_huff_read_z(p + 4, (size_t)(end - p - 4), w->zcodes, m,
                           zsym + LZ_ZRUN_SYMBOLS, zsym, w->len, w->syms);
    return s == FZS_OK
               ? expand_zero_runs(w->zcodes, m, zsym, radius, w->codes, n)
               : s;
}

static int decode_chunk(const fz_header *h, const uint8_t *src, size_t size,
                        void *dst, uint64_t n, const lz_decode_work *w) {
    uint16_t *codes = w->codes;
    int32_t *v = w->v;
    const uint32_t es = fz_dtype_size(h->dtype);
    const uint32_t radius = h->codec_params[0];
    if (size < LZ_CHUNK_HEAD || src[0] > lz_last_flow(h) || src[1] || src[2] ||
        src[3] || bound_of(h) == 0.0)
        return FZS_CORRUPT_CHUNK;
    const uint64_t nout = fz_load32(src + 4), nexc = fz_load32(src + 8);
    const uint64_t lists = nout * LZ_OUTLIER_BYTES + nexc * (4 + es);
    if (nout > n || nexc > n || size - LZ_CHUNK_HEAD < lists)
        return FZS_CORRUPT_CHUNK;
    const uint8_t *outliers = src + LZ_CHUNK_HEAD;
    const uint8_t *exc = outliers + nout * LZ_OUTLIER_BYTES;
    const uint8_t *payload = src + LZ_CHUNK_HEAD + lists;
    int s = check_lists(outliers, nout, nexc, n, es, radius);
    if (s == FZS_OK && src[0] == LZ_FLOW_RLE)
        s = lz_rle_read(payload, src + size, codes, n, 2 * radius);
    else if (s == FZS_OK && src[0] == LZ_FLOW_ZRUNS)
        s = read_zero_runs(h, payload, src + size, n, w);
    else if (s == FZS_OK)
        s = lz_huff_read(payload, (size_t)(src + size - payload), codes, n,
                         2 * radius, w->len, w->syms);
    if (s == FZS_OK)
        s = residuals_of(codes, outliers, nout, n, radius, v);
    if (s != FZS_OK)
        return s;
    const lz_geom g = lz_geometry(h);
    if (h->codec_version >= 2)
        corner_pass(&g, v, n, 0);
    lorenzo_partial_sums(&g, v, n);
    return write_values(h, v, n, exc, nexc, dst);
}

static int lorenzo_decode_chunk(const fz_header *h, const uint8_t *src,
                                size_t size, void *dst, uint64_t nvalues) {
    const size_t m = (size_t)nvalues ? (size_t)nvalues : 1;
    const int zr = lz_zero_runs(h);
    const size_t nsym = lz_book_symbols(h);
    lz_decode_work w;
    w.codes = (uint16_t *)malloc(m * sizeof(uint16_t));
    w.zcodes = zr ? (uint16_t *)malloc(m * sizeof(uint16_t)) : NULL;
    w.v = (int32_t *)malloc(m * sizeof(int32_t));
    w.len = (uint8_t *)malloc(nsym);
    w.syms = (uint32_t *)malloc(nsym * sizeof(uint32_t));
    int s = w.codes && (w.zcodes || !zr) && w.v && w.len && w.syms
                ? decode_chunk(h, src, size, dst, nvalues, &w)
                : FZS_OUT_OF_MEMORY;
    free(w.codes);
    free(w.zcodes);
    free(w.v);
    free(w.len);
    free(w.syms);
    return s;
}

const fz_codec_cpu fz_lorenzo_cpu = {
    LZ_CODEC_ID,
    LZ_CODEC_VERSION,
    LZ_CODEC_VERSION_MIN,
    "lorenzo",
    lorenzo_chunk_bytes,
    lorenzo_encode_capacity,
    lorenzo_check_header,
    lorenzo_effective_bound,
    lorenzo_encode_chunk,
    lorenzo_decode_chunk,
    lorenzo_check_params,
    NULL, /* checksums cover the decoded bytes */
    NULL, /* data checksums: FZ_SUM_MIX */
};
