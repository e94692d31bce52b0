/* Lorenzo codec: the per-chunk canonical Huffman stage. The code-length
 * builder (lz_huff_lengths) is FZ_HD and works on caller scratch so both
 * backends compute the very same lengths; the rest is the CPU coder.
 *
 * Code stream of a chunk (docs/FORMAT.md): u16 lo, u16 hi (used symbol
 * range), 5-bit code lengths of symbols lo..hi MSB-first, zero-padded to a
 * byte; u32 bit count of each sub-block of LZ_SUB_SYMBOLS codes; then the
 * sub-blocks, each starting on a byte, codes MSB-first, zero-padded. */
#ifndef LORENZO_HUFF_H
#define LORENZO_HUFF_H

#include <stdlib.h>
#include <string.h>

#include "lorenzo_xform.h"

/* Stable LSD radix sort of order[0..m) by key[order[i]] (4 x 8 bits). */
static FZ_HD void lz_sort_by_key(uint32_t *order, uint32_t *tmp, uint32_t m,
                                 const uint32_t *key) {
    for (uint32_t shift = 0; shift < 32; shift += 8) {
        uint32_t count[257];
        for (uint32_t b = 0; b < 257; b++)
            count[b] = 0;
        for (uint32_t i = 0; i < m; i++)
            count[((key[order[i]] >> shift) & 0xFF) + 1]++;
        for (uint32_t b = 0; b < 256; b++)
            count[b + 1] += count[b];
        for (uint32_t i = 0; i < m; i++)
            tmp[count[(key[order[i]] >> shift) & 0xFF]++] = order[i];
        for (uint32_t i = 0; i < m; i++)
            order[i] = tmp[i];
    }
}

/* Scratch of lz_huff_lengths for an alphabet of nsym symbols. */
typedef struct lz_huff_scratch {
    uint32_t *wf;     /* working frequencies [nsym] */
    uint32_t *order;  /* used symbols by (frequency, symbol) [nsym] */
    uint32_t *tmp;    /* [nsym] */
    uint64_t *weight; /* node weights [2 nsym] */
    uint32_t *parent; /* [2 nsym] */
    uint8_t *depth;   /* [2 nsym] */
} lz_huff_scratch;

/* Huffman code lengths (0 for unused symbols) of at most LZ_HUFF_MAXLEN
 * bits. Two-queue construction over the leaves sorted by (frequency,
 * symbol), a leaf taken before an internal node of equal weight: fully
 * deterministic. Too long a code: halve the frequencies (keeping them
 * >= 1) and build again, which ends with a balanced tree at worst. At
 * least one frequency must be nonzero; one used symbol gets length 1. */
static FZ_HD void lz_huff_lengths(const uint32_t *freq, uint32_t nsym,
                                  uint8_t *len, lz_huff_scratch s) {
    for (uint32_t i = 0; i < nsym; i++) {
        s.wf[i] = freq[i];
        len[i] = 0;
    }
    for (;;) {
        uint32_t m = 0;
        for (uint32_t i = 0; i < nsym; i++)
            if (s.wf[i])
                s.order[m++] = i;
        if (m <= 1) { /* one symbol: length 1; none (never asked): none */
            if (m == 1)
                len[s.order[0]] = 1;
            return;
        }
        lz_sort_by_key(s.order, s.tmp, m, s.wf);
        for (uint32_t i = 0; i < m; i++)
            s.weight[i] = s.wf[s.order[i]];
        uint32_t leaf = 0, inner = m, next = m;
        for (uint32_t k = 0; k + 1 < m; k++, next++) {
            uint32_t pick[2];
            for (int j = 0; j < 2; j++)
                pick[j] = leaf < m && (inner >= next ||
                                       s.weight[leaf] <= s.weight[inner])
                              ? leaf++
                              : inner++;
            s.weight[next] = s.weight[pick[0]] + s.weight[pick[1]];
            s.parent[pick[0]] = s.parent[pick[1]] = next;
        }
        const uint32_t root = 2 * m - 2;
        uint32_t deepest = 0;
        s.depth[root] = 0;
        for (uint32_t i = root; i-- > 0;) {
            s.depth[i] = (uint8_t)(s.depth[s.parent[i]] + 1);
            deepest = s.depth[i] > deepest ? s.depth[i] : deepest;
        }
        if (deepest <= LZ_HUFF_MAXLEN) {
            for (uint32_t i = 0; i < m; i++)
                len[s.order[i]] = s.depth[i];
            return;
        }
        for (uint32_t i = 0; i < nsym; i++)
            if (s.wf[i])
                s.wf[i] = (s.wf[i] >> 1) | 1;
    }
}

/* ------------------------------------------------------- CPU coder */
typedef struct lz_huff {
    uint32_t nsym, lo, hi;
    uint32_t *freq, *code;
    uint32_t *part; /* 3 more histograms [3 nsym], merged into freq */
    uint8_t *len;
    uint32_t *sub_bits;
    lz_huff_scratch s;
} lz_huff;

static inline void lz_huff_free(lz_huff *hf) {
    free(hf->freq);
    free(hf->part);
    free(hf->code);
    free(hf->len);
    free(hf->sub_bits);
    free(hf->s.wf);
    free(hf->s.order);
    free(hf->s.tmp);
    free(hf->s.weight);
    free(hf->s.parent);
    free(hf->s.depth);
    memset(hf, 0, sizeof *hf);
}

static inline int lz_huff_alloc(lz_huff *hf, uint64_t n, uint32_t nsym) {
    memset(hf, 0, sizeof *hf);
    hf->nsym = nsym;
    hf->freq = (uint32_t *)malloc(nsym * sizeof(uint32_t));
    hf->part = (uint32_t *)malloc(3 * (size_t)nsym * sizeof(uint32_t));
    hf->code = (uint32_t *)malloc(nsym * sizeof(uint32_t));
    hf->len = (uint8_t *)malloc(nsym);
    hf->sub_bits = (uint32_t *)malloc((size_t)lz_sub_count(n + 1) * 4);
    hf->s.wf = (uint32_t *)malloc(nsym * sizeof(uint32_t));
    hf->s.order = (uint32_t *)malloc(nsym * sizeof(uint32_t));
    hf->s.tmp = (uint32_t *)malloc(nsym * sizeof(uint32_t));
    hf->s.weight = (uint64_t *)malloc(2 * nsym * sizeof(uint64_t));
    hf->s.parent = (uint32_t *)malloc(2 * nsym * sizeof(uint32_t));
    hf->s.depth = (uint8_t *)malloc(2 * nsym);
    if (!hf->freq || !hf->part || !hf->code || !hf->len || !hf->sub_bits ||
        !hf->s.wf || !hf->s.order || !hf->s.tmp || !hf->s.weight ||
        !hf->s.parent || !hf->s.depth) {
        lz_huff_free(hf);
        return 0;
    }
    return 1;
}

/* freq of codes[0..n) over four interleaved histograms: runs of equal
 * codes would otherwise chain every increment on the previous one. */
static inline void lz_histogram(lz_huff *hf, const uint16_t *codes,
                                uint64_t n) {
    const uint32_t m = hf->nsym;
    uint32_t *h0 = hf->freq, *h1 = hf->part, *h2 = h1 + m, *h3 = h2 + m;
    memset(h0, 0, m * sizeof(uint32_t));
    memset(h1, 0, 3 * (size_t)m * sizeof(uint32_t));
    const uint64_t n4 = n - n % 4;
    for (uint64_t i = 0; i < n4; i += 4) {
        h0[codes[i]]++;
        h1[codes[i + 1]]++;
        h2[codes[i + 2]]++;
        h3[codes[i + 3]]++;
    }
    for (uint64_t i = n4; i < n; i++)
        h0[codes[i]]++;
    for (uint32_t s = 0; s < m; s++)
        h0[s] += h1[s] + h2[s] + h3[s];
}

/* Histogram, lengths, canonical codes and sub-block sizes of codes[0..n)
 * (n >= 1); returns the exact size of the code stream in bytes. */
static inline uint64_t lz_huff_plan(lz_huff *hf, const uint16_t *codes,
                                    uint64_t n) {
    uint32_t count[LZ_HUFF_MAXLEN + 1], first[LZ_HUFF_MAXLEN + 1],
        base[LZ_HUFF_MAXLEN + 1];
    lz_histogram(hf, codes, n);
    lz_huff_lengths(hf->freq, hf->nsym, hf->len, hf->s);
    hf->lo = 0;
    while (!hf->len[hf->lo])
        hf->lo++;
    hf->hi = hf->nsym - 1;
    while (!hf->len[hf->hi])
        hf->hi--;
    lz_canonical(hf->len, hf->nsym, count, first, base);
    for (uint32_t sym = 0; sym < hf->nsym; sym++)
        if (hf->len[sym])
            hf->code[sym] = first[hf->len[sym]]++;
    const uint64_t nsub = lz_sub_count(n);
    uint64_t size = 4 + lz_lengths_bytes(hf->lo, hf->hi) + 4 * nsub;
    for (uint64_t b = 0; b < nsub; b++) {
        const uint64_t end =
            (b + 1) * LZ_SUB_SYMBOLS < n ? (b + 1) * LZ_SUB_SYMBOLS : n;
        uint32_t bits = 0;
        for (uint64_t i = b * LZ_SUB_SYMBOLS; i < end; i++)
            bits += hf->len[codes[i]];
        hf->sub_bits[b] = bits;
        size += (bits + 7) / 8;
    }
    return size;
}

/* MSB-first bit writer over a zeroed byte range (the small length table). */
static inline void put_bits(uint8_t *p, uint64_t pos, uint32_t v, uint32_t n) {
    for (uint32_t k = 0; k < n; k++, pos++)
        if ((v >> (n - 1 - k)) & 1)
            p[pos >> 3] |= (uint8_t)(0x80 >> (pos & 7));
}

static inline void lz_store_be32(uint8_t *p, uint32_t v) {
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

/* Codes[begin..end) MSB-first into p, whole codes at a time through a
 * 64-bit accumulator (codes are at most 20 bits, so it holds the pending
 * < 32 bits plus one code); writes exactly ceil(bits / 8) bytes, the last
 * one zero-padded. */
static inline void lz_huff_write_sub(const lz_huff *hf, const uint16_t *codes,
                                     uint64_t begin, uint64_t end, uint8_t *p) {
    uint64_t acc = 0;
    uint32_t pending = 0;
    for (uint64_t i = begin; i < end; i++) {
        const uint32_t sym = codes[i], len = hf->len[sym];
        acc = (acc << len) | hf->code[sym];
        pending += len;
        if (pending >= 32) {
            pending -= 32;
            lz_store_be32(p, (uint32_t)(acc >> pending));
            p += 4;
        }
    }
    for (; pending >= 8; pending -= 8)
        *p++ = (uint8_t)(acc >> (pending - 8));
    if (pending)
        *p = (uint8_t)(acc << (8 - pending));
}

static inline void lz_huff_write(const lz_huff *hf, const uint16_t *codes,
                                 uint64_t n, uint8_t *p) {
    fz_store16(p, (uint16_t)hf->lo);
    fz_store16(p + 2, (uint16_t)hf->hi);
    p += 4;
    const uint32_t tbytes = lz_lengths_bytes(hf->lo, hf->hi);
    memset(p, 0, tbytes);
    for (uint32_t sym = hf->lo; sym <= hf->hi; sym++)
        put_bits(p, 5 * (uint64_t)(sym - hf->lo), hf->len[sym], 5);
    p += tbytes;
    const uint64_t nsub = lz_sub_count(n);
    for (uint64_t b = 0; b < nsub; b++, p += 4)
        fz_store32(p, hf->sub_bits[b]);
    for (uint64_t b = 0; b < nsub; b++) {
        const uint64_t end =
            (b + 1) * LZ_SUB_SYMBOLS < n ? (b + 1) * LZ_SUB_SYMBOLS : n;
        lz_huff_write_sub(hf, codes, b * LZ_SUB_SYMBOLS, end, p);
        p += (hf->sub_bits[b] + 7) / 8;
    }
}

/* The LZ_HUFF_MAXLEN bits at bit pos of p[0..bytes), zeros past the end. */
static FZ_HD uint32_t lz_peek(const uint8_t *p, uint64_t bytes, uint64_t pos) {
    uint32_t w = 0;
    const uint64_t at = pos >> 3;
    for (uint64_t k = 0; k < 4; k++)
        w = (w << 8) | (at + k < bytes ? p[at + k] : 0u);
    return (w << (pos & 7)) >> (32 - LZ_HUFF_MAXLEN);
}

/* Parsed code table of a chunk: canonical decoding by length. */
typedef struct lz_huff_table {
    uint32_t count[LZ_HUFF_MAXLEN + 1], first[LZ_HUFF_MAXLEN + 1],
        base[LZ_HUFF_MAXLEN + 1];
    uint32_t minlen;
} lz_huff_table;

/* The head of a code stream of n codes (alphabet nsym) at p[0..size):
 * lo, hi, the 5-bit lengths of lo..hi (zero-padded), room for the
 * sub-block sizes. Fills len[nsym], the canonical table t and syms (the
 * used symbols in code order), and returns the offset of the sub-block
 * sizes, or 0 when the head is malformed: lengths over the limit, lo or
 * hi unused, nonzero padding, an incomplete code (a single symbol must
 * have length 1). */
static FZ_HD uint32_t lz_huff_parse_table(const uint8_t *p, uint64_t size,
                                          uint64_t n, uint32_t nsym,
                                          uint8_t *len, lz_huff_table *t,
                                          uint32_t *syms) {
    if (size < 4)
        return 0;
    const uint32_t lo = fz_load16(p), hi = fz_load16(p + 2);
    if (lo > hi || hi >= nsym)
        return 0;
    const uint32_t tbytes = lz_lengths_bytes(lo, hi);
    const uint64_t nsub = lz_sub_count(n);
    if (size - 4 < tbytes || (size - 4 - tbytes) / 4 < nsub)
        return 0;
    const uint8_t *tab = p + 4;
    for (uint32_t sym = 0; sym < nsym; sym++)
        len[sym] = 0;
    uint32_t used = 0;
    for (uint32_t sym = lo; sym <= hi; sym++) {
        const uint32_t l = lz_peek(tab, tbytes, 5 * (uint64_t)(sym - lo)) >>
                           (LZ_HUFF_MAXLEN - 5);
        if (l > LZ_HUFF_MAXLEN)
            return 0;
        len[sym] = (uint8_t)l;
        used += l != 0;
    }
    const uint32_t tbits = 5 * (hi - lo + 1);
    if (!len[lo] || !len[hi] ||
        (tbits & 7 && tab[tbytes - 1] & (0xFFu >> (tbits & 7))))
        return 0;
    const uint64_t kraft = lz_canonical(len, nsym, t->count, t->first, t->base);
    if (used == 1 ? len[lo] != 1 : kraft != (1u << LZ_HUFF_MAXLEN))
        return 0;
    t->minlen = 1;
    while (!t->count[t->minlen])
        t->minlen++;
    uint32_t fill[LZ_HUFF_MAXLEN + 1];
    for (uint32_t l = 0; l <= LZ_HUFF_MAXLEN; l++)
        fill[l] = t->base[l];
    for (uint32_t sym = lo; sym <= hi; sym++)
        if (len[sym])
            syms[fill[len[sym]]++] = sym;
    return 4 + tbytes;
}

/* One symbol at bit *pos of a sub-block of `bits` bits, or -1. */
static FZ_HD int32_t lz_huff_next(const lz_huff_table *t, const uint32_t *syms,
                                  const uint8_t *p, uint32_t bits,
                                  uint64_t *pos) {
    const uint32_t v = lz_peek(p, (bits + 7) / 8, *pos);
    for (uint32_t l = t->minlen; l <= LZ_HUFF_MAXLEN; l++) {
        const uint32_t c = v >> (LZ_HUFF_MAXLEN - l);
        if (c - t->first[l] < t->count[l]) {
            if (*pos + l > bits)
                return -1;
            *pos += l;
            return (int32_t)syms[t->base[l] + c - t->first[l]];
        }
    }
    return -1;
}

/* ------------------------------------------------ CPU table decoder */
/* Codes of at most LZ_LUT_BITS bits decode with one look-up of the next
 * LZ_LUT_BITS bits; longer ones (and bit patterns that start no code)
 * fall back to lz_huff_next, which does every check. */
#define LZ_LUT_BITS 11u

typedef struct lz_lut_entry {
    uint16_t sym;
    uint8_t len; /* 0: not decided by the table */
    uint8_t unused;
} lz_lut_entry;

/* The table of a parsed canonical code: entry c << (LZ_LUT_BITS - l) ..
 * of every code c of length l <= LZ_LUT_BITS. */
static inline void lz_lut_build(const lz_huff_table *t, const uint32_t *syms,
                                lz_lut_entry *lut) {
    memset(lut, 0, sizeof(lz_lut_entry) << LZ_LUT_BITS);
    for (uint32_t l = 1; l <= LZ_LUT_BITS; l++)
        for (uint32_t k = 0; k < t->count[l]; k++) {
            const uint32_t span = 1u << (LZ_LUT_BITS - l);
            lz_lut_entry e;
            e.sym = (uint16_t)syms[t->base[l] + k];
            e.len = (uint8_t)l;
            e.unused = 0;
            for (uint32_t j = 0; j < span; j++)
                lut[((t->first[l] + k) << (LZ_LUT_BITS - l)) + j] = e;
        }
}

/* 64 bits at bit pos of p[0..bytes) MSB-first, zeros past the end. */
static inline uint64_t lz_peek64(const uint8_t *p, uint64_t bytes,
                                 uint64_t pos) {
    const uint64_t at = pos >> 3;
    uint64_t w = 0;
    if (at + 8 <= bytes) {
        const uint8_t *q = p + at;
        w = (uint64_t)q[0] << 56 | (uint64_t)q[1] << 48 | (uint64_t)q[2] << 40 |
            (uint64_t)q[3] << 32 | (uint64_t)q[4] << 24 | (uint64_t)q[5] << 16 |
            (uint64_t)q[6] << 8 | (uint64_t)q[7];
    } else {
        for (uint64_t k = 0; k < 8; k++)
            w = (w << 8) | (at + k < bytes ? p[at + k] : 0u);
    }
    return w << (pos & 7);
}

/* Codes[begin..end) from a sub-block of `bits` bits; the bit position
 * reached, or UINT64_MAX when a code is invalid or runs past the end. */
static inline uint64_t
lz_huff_read_sub(const lz_huff_table *t, const uint32_t *syms,
                 const lz_lut_entry *lut, const uint8_t *data, uint32_t bits,
                 uint16_t *codes, uint64_t begin, uint64_t end) {
    const uint64_t bytes = ((uint64_t)bits + 7) / 8;
    uint64_t pos = 0;
    for (uint64_t i = begin; i < end; i++) {
        const lz_lut_entry e =
            lut[lz_peek64(data, bytes, pos) >> (64 - LZ_LUT_BITS)];
        if (e.len) {
            if (pos + e.len > bits)
                return UINT64_MAX;
            pos += e.len;
            codes[i] = e.sym;
        } else {
            const int32_t sym = lz_huff_next(t, syms, data, bits, &pos);
            if (sym < 0)
                return UINT64_MAX;
            codes[i] = (uint16_t)sym;
        }
    }
    return pos;
}

/* Decode n codes (alphabet nsym; scratch len[nsym], syms[nsym]) from
 * p[0..size), which must be exactly one code stream: complete canonical code,
 * minimal symbol range, every sub-block consumed to its last bit, zero padding.
 */
static inline int lz_huff_read(const uint8_t *p, size_t size, uint16_t *codes,
                               uint64_t n, uint32_t nsym, uint8_t *len,
                               uint32_t *syms) {
    lz_huff_table t;
    const uint32_t at = lz_huff_parse_table(p, size, n, nsym, len, &t, syms);
    if (!at)
        return FZS_CORRUPT_CHUNK;
    const uint64_t nsub = lz_sub_count(n);
    lz_lut_entry lut[1u << LZ_LUT_BITS];
    lz_lut_build(&t, syms, lut);
    const uint8_t *sizes = p + at;
    const uint8_t *data = sizes + 4 * nsub;
    uint64_t left = size - at - 4 * nsub;
    for (uint64_t b = 0; b < nsub; b++) {
        const uint32_t bits = fz_load32(sizes + 4 * b);
        const uint64_t bytes = ((uint64_t)bits + 7) / 8;
        if (bytes > left)
            return FZS_CORRUPT_CHUNK;
        const uint64_t end =
            (b + 1) * LZ_SUB_SYMBOLS < n ? (b + 1) * LZ_SUB_SYMBOLS : n;
        const uint64_t pos = lz_huff_read_sub(&t, syms, lut, data, bits, codes,
                                              b * LZ_SUB_SYMBOLS, end);
        if (pos != bits ||
            (bits & 7 && data[bytes - 1] & (0xFFu >> (bits & 7))))
            return FZS_CORRUPT_CHUNK;
        data += bytes;
        left -= bytes;
    }
    return left == 0 ? FZS_OK : FZS_CORRUPT_CHUNK;
}

#endif /* LORENZO_HUFF_H */
