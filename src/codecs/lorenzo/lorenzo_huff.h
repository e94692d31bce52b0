/* Lorenzo codec: the per-chunk canonical Huffman stage. The code lengths
 * come from package-merge, whose pieces (merge rule, merge-path split,
 * selection, length rule) are FZ_HD so that the GPU's block-parallel
 * builder and the CPU's sequential one compute the very same lengths; the
 * rest is the CPU coder.
 *
 * Code stream of a chunk (docs/FORMAT.md): u16 lo, u16 hi (used symbol
 * range), 5-bit code lengths of symbols lo..hi MSB-first, zero-padded to a
 * byte; u16 bit count of each sub-block of LZ_SUB_SYMBOLS codes; then the
 * sub-blocks, each starting on a byte, codes MSB-first, zero-padded. */
#ifndef LORENZO_HUFF_H
#define LORENZO_HUFF_H

#include <stdlib.h>
#include <string.h>

#include "lorenzo_xform.h"

/* ------------------------------------------ code lengths: package-merge */
/* Optimal prefix code lengths of at most `limit` bits (Larmore and
 * Hirschberg's package-merge), one definition for both backends:
 *  - leaves: the used symbols as keys freq << 16 | symbol, ascending, so
 *    ordered by (frequency, symbol) with no ties;
 *  - level lists, from the bottom: level `limit` is the leaves; level
 *    j < limit is the merge of the leaves with the packages of level
 *    j + 1 (package k = items 2k and 2k + 1 of that list, weights added,
 *    an odd last item dropped), a leaf before a package of equal weight;
 *  - selection, from the top: the first m = 2n - 2 items of level 1; of
 *    the first m items of a level, `take` are leaves and the other
 *    m - take are packages, i.e. the first 2 (m - take) items of the level
 *    below;
 *  - the length of leaf i is the number of levels whose take exceeds i.
 * The merge order is a total order, so the lists and lengths are unique.
 * A level's list can be merged from any output position on (lz_pm_split
 * finds where the leaves and packages stand there): the GPU finds each
 * item on its own (small alphabets) or merges a range of outputs per
 * thread, the CPU merges the whole list at once, and all get the same
 * list. Each level keeps its leaf flags (bit d: item d is a
 * leaf) for the selection. */

static FZ_HD uint64_t lz_pm_key(uint32_t freq, uint32_t sym) {
    return (uint64_t)freq << 16 | sym;
}

static FZ_HD uint64_t lz_pm_weight(uint64_t key) {
    return key >> 16;
}

static FZ_HD uint32_t lz_pm_symbol(uint64_t key) {
    return (uint32_t)(key & 0xFFFFu);
}

/* 32-bit words of one level's leaf flags (a list has < 2 nsym items). */
static FZ_HD uint32_t lz_pm_words(uint32_t nsym) {
    return (2 * nsym + 31) / 32;
}

/* Weight of package k made from the list `below`. */
static FZ_HD uint64_t lz_pm_package(const uint64_t *below, uint32_t k) {
    return below[2 * k] + below[2 * k + 1];
}

/* Leaves among the first d items of the merge of leaves[0..n) with np
 * packages of `below` (the merge-path split): leaf a comes before package
 * d - a - 1 exactly while a is below the split, so a binary search finds
 * it. */
static FZ_HD uint32_t lz_pm_split(const uint64_t *leaves, uint32_t n,
                                  const uint64_t *below, uint32_t np,
                                  uint32_t d) {
    uint32_t lo = d > np ? d - np : 0, hi = d < n ? d : n;
    while (lo < hi) {
        const uint32_t mid = lo + (hi - lo) / 2;
        if (lz_pm_weight(leaves[mid]) <= lz_pm_package(below, d - mid - 1))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Whether the next item of a merge that has used a of n leaves and b of
 * np packages is a leaf (ties: the leaf first). */
static FZ_HD int lz_pm_leaf_next(const uint64_t *leaves, uint32_t n,
                                 const uint64_t *below, uint32_t np, uint32_t a,
                                 uint32_t b) {
    return a < n &&
           (b >= np || lz_pm_weight(leaves[a]) <= lz_pm_package(below, b));
}

/* Item d of the level list merged from the leaves and the packages of
 * `below` (nbelow items; d < n + nbelow / 2); *is_leaf set. */
static FZ_HD uint64_t lz_pm_item(const uint64_t *leaves, uint32_t n,
                                 const uint64_t *below, uint32_t nbelow,
                                 uint32_t d, uint32_t *is_leaf) {
    const uint32_t np = nbelow / 2;
    const uint32_t a = lz_pm_split(leaves, n, below, np, d), b = d - a;
    *is_leaf = (uint32_t)lz_pm_leaf_next(leaves, n, below, np, a, b);
    return *is_leaf ? lz_pm_weight(leaves[a]) : lz_pm_package(below, b);
}

/* Items [d0, d1) (d0 a multiple of 32, d1 at most n + nbelow / 2) of the
 * level list merged from the leaves and the packages of `below` (nbelow
 * items) into list[d0..d1), their leaf flags into bits: whole words, the
 * flags past d1 zero. */
static FZ_HD void lz_pm_merge(const uint64_t *leaves, uint32_t n,
                              const uint64_t *below, uint32_t nbelow,
                              uint32_t d0, uint32_t d1, uint64_t *list,
                              uint32_t *bits) {
    const uint32_t np = nbelow / 2;
    uint32_t a = lz_pm_split(leaves, n, below, np, d0), b = d0 - a;
    uint32_t word = 0;
    for (uint32_t d = d0; d < d1; d++) {
        const uint32_t is_leaf =
            (uint32_t)lz_pm_leaf_next(leaves, n, below, np, a, b);
        list[d] = is_leaf ? lz_pm_weight(leaves[a]) : lz_pm_package(below, b);
        a += is_leaf;
        b += !is_leaf;
        word |= is_leaf << (d & 31);
        if ((d & 31) == 31 || d + 1 == d1) {
            bits[d >> 5] = word;
            word = 0;
        }
    }
}

static FZ_HD uint32_t lz_popc(uint32_t x) {
#ifdef __CUDA_ARCH__
    return (uint32_t)__popc(x);
#else
    return (uint32_t)__builtin_popcount(x);
#endif
}

/* Word k of a level's leaf flags, cut to the first m items. */
static FZ_HD uint32_t lz_pm_flags(const uint32_t *bits, uint32_t k,
                                  uint32_t m) {
    const uint32_t rest = m - 32 * k; /* k < ceil(m / 32) */
    return rest >= 32 ? bits[k] : bits[k] & ((1u << rest) - 1);
}

/* Length of leaf i from the leaves taken at each of `limit` levels. */
static FZ_HD uint32_t lz_pm_length(const uint32_t *take, uint32_t limit,
                                   uint32_t i) {
    uint32_t l = 0;
    for (uint32_t j = 0; j < limit; j++)
        l += i < take[j];
    return l;
}

/* Sorts keys[0..n), given in increasing symbol order, by frequency
 * (stable LSD radix over the frequency bytes): ascending keys. */
static inline void lz_sort_keys(uint64_t *keys, uint64_t *tmp, uint32_t n) {
    uint64_t all = 0;
    for (uint32_t i = 0; i < n; i++)
        all |= keys[i];
    for (uint32_t shift = 16; shift < 64 && all >> shift; shift += 8) {
        uint32_t count[257];
        memset(count, 0, sizeof count);
        for (uint32_t i = 0; i < n; i++)
            count[((keys[i] >> shift) & 0xFF) + 1]++;
        for (uint32_t b = 0; b < 256; b++)
            count[b + 1] += count[b];
        for (uint32_t i = 0; i < n; i++)
            tmp[count[(keys[i] >> shift) & 0xFF]++] = keys[i];
        memcpy(keys, tmp, n * sizeof(uint64_t));
    }
}

/* Scratch of lz_huff_lengths for an alphabet of nsym symbols. */
typedef struct lz_huff_scratch {
    uint64_t *keys;    /* used symbols, sorted [nsym] */
    uint64_t *tmp;     /* [nsym] */
    uint64_t *list[2]; /* level lists [2 nsym] each */
    uint32_t *bits;    /* leaf flags [LZ_HUFF_MAXLEN lz_pm_words(nsym)] */
} lz_huff_scratch;

/* Code lengths (0 for unused symbols) of an optimal prefix code of at
 * most `limit` bits (1 <= limit <= LZ_HUFF_MAXLEN) by the package-merge
 * above, computed sequentially; one used symbol gets length 1. Returns 0
 * (all lengths 0) when more than 2^limit symbols are used or limit is out
 * of range. */
static inline int lz_huff_lengths_limit(const uint32_t *freq, uint32_t nsym,
                                        uint32_t limit, uint8_t *len,
                                        lz_huff_scratch s) {
    uint32_t n = 0;
    for (uint32_t i = 0; i < nsym; i++) {
        len[i] = 0;
        if (freq[i])
            s.keys[n++] = lz_pm_key(freq[i], i);
    }
    if (limit < 1 || limit > LZ_HUFF_MAXLEN || n > 1u << limit)
        return 0;
    if (n <= 1) { /* one symbol: length 1; none: nothing to do */
        if (n == 1)
            len[lz_pm_symbol(s.keys[0])] = 1;
        return 1;
    }
    lz_sort_keys(s.keys, s.tmp, n);
    const uint32_t words = lz_pm_words(nsym);
    const uint64_t *below = s.list[1];
    uint32_t nbelow = 0;
    for (uint32_t j = limit; j >= 1; j--) {
        uint64_t *list = s.list[j & 1];
        const uint32_t size = n + nbelow / 2;
        lz_pm_merge(s.keys, n, below, nbelow, 0, size, list,
                    s.bits + (j - 1) * words);
        below = list;
        nbelow = size;
    }
    uint32_t take[LZ_HUFF_MAXLEN], m = 2 * n - 2;
    for (uint32_t j = 0; j < limit; j++) {
        const uint32_t *bits = s.bits + j * words;
        take[j] = 0;
        for (uint32_t k = 0; k < (m + 31) / 32; k++)
            take[j] += lz_popc(lz_pm_flags(bits, k, m));
        m = 2 * (m - take[j]);
    }
    for (uint32_t i = 0; i < n; i++)
        len[lz_pm_symbol(s.keys[i])] = (uint8_t)lz_pm_length(take, limit, i);
    return 1;
}

/* Code lengths of at most LZ_HUFF_MAXLEN bits (the codec's builder). At
 * least one frequency must be nonzero. */
static inline void lz_huff_lengths(const uint32_t *freq, uint32_t nsym,
                                   uint8_t *len, lz_huff_scratch s) {
    (void)lz_huff_lengths_limit(freq, nsym, LZ_HUFF_MAXLEN, len, s);
}

/* ------------------------------------------------------- CPU coder */
/* Alphabet [0, nsym): codes below zsym, then (zero-run coding, zsym <
 * nsym) the symbols Z_k = zsym + k, whose lengths follow those of the
 * codes' range lo..hi in the table, after a u8 count zk. */
typedef struct lz_huff {
    uint32_t nsym, zsym, lo, hi, zk;
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
    free(hf->s.keys);
    free(hf->s.tmp);
    free(hf->s.list[0]);
    free(hf->s.list[1]);
    free(hf->s.bits);
    memset(hf, 0, sizeof *hf);
}

static inline int lz_huff_alloc(lz_huff *hf, uint64_t n, uint32_t nsym) {
    memset(hf, 0, sizeof *hf);
    hf->nsym = hf->zsym = nsym;
    hf->freq = (uint32_t *)malloc(nsym * sizeof(uint32_t));
    hf->part = (uint32_t *)malloc(3 * (size_t)nsym * sizeof(uint32_t));
    hf->code = (uint32_t *)malloc(nsym * sizeof(uint32_t));
    hf->len = (uint8_t *)malloc(nsym);
    hf->sub_bits = (uint32_t *)malloc((size_t)lz_sub_count(n + 1) * 4);
    hf->s.keys = (uint64_t *)malloc(nsym * sizeof(uint64_t));
    hf->s.tmp = (uint64_t *)malloc(nsym * sizeof(uint64_t));
    hf->s.list[0] = (uint64_t *)malloc(2 * (size_t)nsym * sizeof(uint64_t));
    hf->s.list[1] = (uint64_t *)malloc(2 * (size_t)nsym * sizeof(uint64_t));
    hf->s.bits = (uint32_t *)malloc((size_t)LZ_HUFF_MAXLEN * lz_pm_words(nsym) *
                                    sizeof(uint32_t));
    if (!hf->freq || !hf->part || !hf->code || !hf->len || !hf->sub_bits ||
        !hf->s.keys || !hf->s.tmp || !hf->s.list[0] || !hf->s.list[1] ||
        !hf->s.bits) {
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

/* Bytes of a table head: u16 lo, u16 hi (and u8 zk with zero runs),
 * then 5-bit lengths of `entries` symbols, zero-padded to a byte. */
static FZ_HD uint32_t lz_table_bytes(int zero_runs, uint32_t entries) {
    return (zero_runs ? 5u : 4u) + (5u * entries + 7) / 8;
}

/* Table entries: the codes lo..hi (none when lo > hi), then zk. */
static FZ_HD uint32_t lz_table_entries(uint32_t lo, uint32_t hi, uint32_t zk) {
    return (lo <= hi ? hi - lo + 1 : 0) + zk;
}

/* Bytes of a code stream's head: the table (lo, hi, [zk,] lengths) and
 * the sizes of the sub-blocks of n symbols. */
static FZ_HD uint64_t lz_code_head_bytes(int zero_runs, uint32_t lo,
                                         uint32_t hi, uint32_t zk, uint64_t n) {
    return lz_table_bytes(zero_runs, lz_table_entries(lo, hi, zk)) +
           (uint64_t)LZ_SUB_SIZE * lz_sub_count(n);
}

/* Used range of the codes (lo = 1, hi = 0 when none is used: possible
 * only with zero runs, and such a stream is never written) and the
 * zero-run symbols up to the last used. */
static inline void lz_huff_range(lz_huff *hf) {
    hf->lo = 0;
    while (hf->lo < hf->zsym && !hf->len[hf->lo])
        hf->lo++;
    hf->hi = hf->zsym - 1;
    while (hf->hi > hf->lo && !hf->len[hf->hi])
        hf->hi--;
    if (hf->lo == hf->zsym) {
        hf->lo = 1;
        hf->hi = 0;
    }
    hf->zk = hf->nsym - hf->zsym;
    while (hf->zk && !hf->len[hf->zsym + hf->zk - 1])
        hf->zk--;
}

/* Used range, canonical codes and sub-block sizes of codes[0..n) (n >= 1)
 * whose histogram and code lengths hf holds; returns the exact size of the
 * code stream in bytes. */
static inline uint64_t lz_huff_finish(lz_huff *hf, const uint16_t *codes,
                                      uint64_t n) {
    uint32_t count[LZ_HUFF_MAXLEN + 1], first[LZ_HUFF_MAXLEN + 1],
        base[LZ_HUFF_MAXLEN + 1];
    lz_huff_range(hf);
    lz_canonical(hf->len, hf->nsym, count, first, base);
    for (uint32_t sym = 0; sym < hf->nsym; sym++)
        if (hf->len[sym])
            hf->code[sym] = first[hf->len[sym]]++;
    const uint64_t nsub = lz_sub_count(n);
    uint64_t size =
        lz_code_head_bytes(hf->zsym < hf->nsym, hf->lo, hf->hi, hf->zk, n);
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

/* Histogram, lengths, canonical codes and sub-block sizes of codes[0..n)
 * (n >= 1); returns the exact size of the code stream in bytes. */
static inline uint64_t lz_huff_plan(lz_huff *hf, const uint16_t *codes,
                                    uint64_t n) {
    lz_histogram(hf, codes, n);
    lz_huff_lengths(hf->freq, hf->nsym, hf->len, hf->s);
    return lz_huff_finish(hf, codes, n);
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
    const int zero_runs = hf->zsym < hf->nsym;
    const uint32_t entries = lz_table_entries(hf->lo, hf->hi, hf->zk);
    const uint32_t tbytes = lz_table_bytes(zero_runs, entries);
    memset(p, 0, tbytes);
    fz_store16(p, (uint16_t)hf->lo);
    fz_store16(p + 2, (uint16_t)hf->hi);
    if (zero_runs)
        p[4] = (uint8_t)hf->zk;
    uint8_t *tab = p + (zero_runs ? 5 : 4);
    uint64_t pos = 0;
    for (uint32_t sym = hf->lo; sym <= hf->hi; sym++, pos += 5)
        put_bits(tab, pos, hf->len[sym], 5);
    for (uint32_t k = 0; k < hf->zk; k++, pos += 5)
        put_bits(tab, pos, hf->len[hf->zsym + k], 5);
    p += tbytes;
    const uint64_t nsub = lz_sub_count(n);
    for (uint64_t b = 0; b < nsub; b++, p += LZ_SUB_SIZE)
        fz_store16(p, (uint16_t)hf->sub_bits[b]);
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

/* The head of a code stream of n codes (alphabet nsym; zero-run symbols
 * from zsym on, none when zsym = nsym) at p[0..size): lo, hi (zk), the
 * 5-bit lengths of lo..hi (and of Z_0..Z_zk-1), zero-padded, room for the
 * sub-block sizes. Fills len[nsym], the canonical table t and syms (the
 * used symbols in code order), and returns the offset of the sub-block
 * sizes, or 0 when the head is malformed: lengths over the limit, lo, hi
 * or Z_zk-1 unused, nonzero padding, an incomplete code (a single symbol
 * must have length 1). */
static FZ_HD uint32_t lz_huff_parse_head(const uint8_t *p, uint64_t size,
                                         uint64_t n, uint32_t nsym,
                                         uint32_t zsym, uint8_t *len,
                                         lz_huff_table *t, uint32_t *syms) {
    const int zero_runs = zsym < nsym;
    if (size < (zero_runs ? 5u : 4u))
        return 0;
    const uint32_t lo = fz_load16(p), hi = fz_load16(p + 2);
    const uint32_t zk = zero_runs ? p[4] : 0u;
    if (zk > nsym - zsym || lo > hi || hi >= zsym)
        return 0;
    const uint32_t entries = lz_table_entries(lo, hi, zk);
    const uint32_t head = lz_table_bytes(zero_runs, entries);
    const uint32_t tbytes = head - (zero_runs ? 5u : 4u);
    const uint64_t nsub = lz_sub_count(n);
    if (size < head || (size - head) / LZ_SUB_SIZE < nsub)
        return 0;
    const uint8_t *tab = p + (zero_runs ? 5 : 4);
    for (uint32_t sym = 0; sym < nsym; sym++)
        len[sym] = 0;
    uint32_t used = 0, last = 0;
    for (uint32_t e = 0; e < entries; e++) {
        const uint32_t sym =
            e < entries - zk ? lo + e : zsym + e - (entries - zk);
        const uint32_t l =
            lz_peek(tab, tbytes, 5 * (uint64_t)e) >> (LZ_HUFF_MAXLEN - 5);
        if (l > LZ_HUFF_MAXLEN)
            return 0;
        len[sym] = (uint8_t)l;
        used += l != 0;
        last = l ? sym : last;
    }
    const uint32_t tbits = 5 * entries;
    if (!len[lo] || !len[hi] || (zk && !len[zsym + zk - 1]) ||
        (tbits & 7 && tab[tbytes - 1] & (0xFFu >> (tbits & 7))))
        return 0;
    const uint64_t kraft = lz_canonical(len, nsym, t->count, t->first, t->base);
    if (used == 1 ? len[last] != 1 : kraft != (1u << LZ_HUFF_MAXLEN))
        return 0;
    t->minlen = 1;
    while (!t->count[t->minlen])
        t->minlen++;
    uint32_t fill[LZ_HUFF_MAXLEN + 1];
    for (uint32_t l = 0; l <= LZ_HUFF_MAXLEN; l++)
        fill[l] = t->base[l];
    for (uint32_t e = 0; e < entries; e++) {
        const uint32_t sym =
            e < entries - zk ? lo + e : zsym + e - (entries - zk);
        if (len[sym])
            syms[fill[len[sym]]++] = sym;
    }
    return head;
}

/* The head of a plain code stream (no zero runs). */
static FZ_HD uint32_t lz_huff_parse_table(const uint8_t *p, uint64_t size,
                                          uint64_t n, uint32_t nsym,
                                          uint8_t *len, lz_huff_table *t,
                                          uint32_t *syms) {
    return lz_huff_parse_head(p, size, n, nsym, nsym, len, t, syms);
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
/* The next LZ_LUT_BITS bits are looked up once and decide up to
 * LZ_LUT_CODES whole codes of at most LZ_LUT_BITS bits each (the first
 * codes those bits hold completely); a pattern that starts no such code
 * (longer codes, or none) falls back to lz_huff_next, which does every
 * check. Decoding k codes at once accepts and rejects exactly what k
 * single look-ups would: they take the same bits, and the running bit
 * count passes the sub-block's end at one of them iff it does at the
 * last. */
#define LZ_LUT_BITS 11u
#define LZ_LUT_CODES 3u /* lz_lut_extend keeps two more codes in 32 bits */

typedef struct lz_lut_entry {
    uint16_t sym[LZ_LUT_CODES]; /* the codes decided, in order */
    uint8_t len1;               /* length of the first; 0: not decided */
    uint8_t packed;             /* codes decided << 4 | their total bits */
} lz_lut_entry;

/* The first code of pattern v (canonical search by length): symbol << 8
 * | length, 0 when v starts no code of at most LZ_LUT_BITS bits. */
static FZ_HD uint32_t lz_lut_code(const lz_huff_table *t, const uint32_t *syms,
                                  uint32_t v) {
    for (uint32_t l = t->minlen; l <= LZ_LUT_BITS; l++) {
        const uint32_t c = v >> (LZ_LUT_BITS - l);
        if (c - t->first[l] < t->count[l])
            return syms[t->base[l] + c - t->first[l]] << 8 | l;
    }
    return 0;
}

/* First pass of the table: entry v with its first code only. */
static FZ_HD void lz_lut_first(lz_lut_entry *e, uint32_t code) {
    e->sym[0] = (uint16_t)(code >> 8);
    e->sym[1] = e->sym[2] = 0;
    e->len1 = (uint8_t)(code & 0xFF);
    e->packed = 0;
}

/* Second pass: the codes of pattern v after its first, each the first
 * code of the pattern v shifted past the codes before it (a code of
 * length l is decided by its first l bits alone, so the zeros shifted in
 * behind v never decide one). Reads only sym[0] and len1 of any entry and
 * writes only sym[1], sym[2] and packed of entry v, so the passes over all
 * v may run at once (the GPU's threads). */
static FZ_HD void lz_lut_extend(lz_lut_entry *lut, uint32_t v) {
    const uint32_t mask = (1u << LZ_LUT_BITS) - 1;
    uint32_t used = lut[v].len1, k = used != 0, more = 0; /* sym[1], sym[2] */
    for (; k && k < LZ_LUT_CODES; k++) {
        const lz_lut_entry *next = &lut[(v << used) & mask];
        const uint32_t l = next->len1;
        if (!l || used + l > LZ_LUT_BITS)
            break;
        more |= (uint32_t)next->sym[0] << (16 * (k - 1));
        used += l;
    }
    lut[v].sym[1] = (uint16_t)more;
    lut[v].sym[2] = (uint16_t)(more >> 16);
    lut[v].packed = (uint8_t)(k << 4 | used);
}

/* The table of a parsed canonical code: for each pattern v, the first
 * codes that lie wholly inside v, at most LZ_LUT_CODES. */
static inline void lz_lut_build(const lz_huff_table *t, const uint32_t *syms,
                                lz_lut_entry *lut) {
    for (uint32_t v = 0; v < 1u << LZ_LUT_BITS; v++)
        lz_lut_first(&lut[v], lz_lut_code(t, syms, v));
    for (uint32_t v = 0; v < 1u << LZ_LUT_BITS; v++)
        lz_lut_extend(lut, v);
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
 * reached, or UINT64_MAX when a code is invalid or runs past the end.
 * buf holds the bits from pos on, `avail` of them valid (a refill reads
 * at least 57), so a look-up needs a load only every few codes. */
static inline uint64_t
lz_huff_read_sub(const lz_huff_table *t, const uint32_t *syms,
                 const lz_lut_entry *lut, const uint8_t *data, uint32_t bits,
                 uint16_t *codes, uint64_t begin, uint64_t end) {
    const uint64_t bytes = ((uint64_t)bits + 7) / 8;
    uint64_t pos = 0, buf = 0;
    uint32_t avail = 0;
    for (uint64_t i = begin; i < end;) {
        if (avail < LZ_LUT_BITS) {
            buf = lz_peek64(data, bytes, pos);
            avail = 64 - (uint32_t)(pos & 7);
        }
        const lz_lut_entry e = lut[buf >> (64 - LZ_LUT_BITS)];
        uint32_t k = e.packed >> 4, used = e.packed & 0xFu;
        if (k > end - i) { /* the sub-block ends first: one code */
            k = 1;
            used = e.len1;
        }
        if (k == 0) {
            const int32_t sym = lz_huff_next(t, syms, data, bits, &pos);
            if (sym < 0)
                return UINT64_MAX;
            codes[i++] = (uint16_t)sym;
            avail = 0;
            continue;
        }
        if (pos + used > bits)
            return UINT64_MAX;
        if (end - i >= LZ_LUT_CODES) /* the codes past k are rewritten */
            for (uint32_t j = 0; j < LZ_LUT_CODES; j++)
                codes[i + j] = e.sym[j];
        else
            for (uint32_t j = 0; j < k; j++)
                codes[i + j] = e.sym[j];
        i += k;
        pos += used;
        buf <<= used;
        avail -= used;
    }
    return pos;
}

/* Decode n codes (alphabet nsym; scratch len[nsym], syms[nsym]) from
 * p[0..size), which must be exactly one code stream: complete canonical code,
 * minimal symbol range, every sub-block consumed to its last bit, zero padding.
 */
static inline int lz_huff_read_z(const uint8_t *p, size_t size, uint16_t *codes,
                                 uint64_t n, uint32_t nsym, uint32_t zsym,
                                 uint8_t *len, uint32_t *syms) {
    lz_huff_table t;
    const uint32_t at =
        lz_huff_parse_head(p, size, n, nsym, zsym, len, &t, syms);
    if (!at)
        return FZS_CORRUPT_CHUNK;
    const uint64_t nsub = lz_sub_count(n);
    lz_lut_entry lut[1u << LZ_LUT_BITS];
    lz_lut_build(&t, syms, lut);
    const uint8_t *sizes = p + at;
    const uint8_t *data = sizes + LZ_SUB_SIZE * nsub;
    uint64_t left = size - at - LZ_SUB_SIZE * nsub;
    for (uint64_t b = 0; b < nsub; b++) {
        const uint32_t bits = fz_load16(sizes + LZ_SUB_SIZE * b);
        const uint64_t bytes = ((uint64_t)bits + 7) / 8;
        const uint64_t end =
            (b + 1) * LZ_SUB_SYMBOLS < n ? (b + 1) * LZ_SUB_SYMBOLS : n;
        if (bytes > left || !lz_sub_bits_ok(bits, end - b * LZ_SUB_SYMBOLS))
            return FZS_CORRUPT_CHUNK;
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

static inline int lz_huff_read(const uint8_t *p, size_t size, uint16_t *codes,
                               uint64_t n, uint32_t nsym, uint8_t *len,
                               uint32_t *syms) {
    return lz_huff_read_z(p, size, codes, n, nsym, nsym, len, syms);
}

#endif /* LORENZO_HUFF_H */
