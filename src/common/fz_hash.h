/* The floatz checksum: one definition for both backends.
 *
 * A region of 32-bit little-endian words w[0..n) hashes to
 *     fz_hash_final( sum_i fz_hash_term(w[i], i), n )      (sums mod 2^32)
 * Each term is a bijection of its word for a fixed position, so any single
 * corrupted word is always detected, and the sum is associative: a GPU can
 * hash lanes and warps in any order (and with atomicAdd across blocks) and
 * still get the CPU's value bit for bit. The position in the term catches
 * swapped words. Mixing constants are MurmurHash3's finalizer. */
#ifndef FZ_HASH_H
#define FZ_HASH_H

#include "fz_portable.h"

static FZ_HD uint32_t fz_mix32(uint32_t h) {
    h ^= h >> 16;
    h *= 0x85EBCA6Bu;
    h ^= h >> 13;
    h *= 0xC2B2AE35u;
    h ^= h >> 16;
    return h;
}

/* Contribution of word w at position i (position counted in words). */
static FZ_HD uint32_t fz_hash_term(uint32_t w, uint64_t i) {
    return fz_mix32(w ^ ((uint32_t)i * 0x9E3779B1u + 0x7F4A7C15u));
}

/* Terms of one value at value index idx: a float32 is one word, a float64
 * two (low word first, as in memory). */
static FZ_HD uint32_t fz_hash_value32(uint32_t v, uint64_t idx) {
    return fz_hash_term(v, idx);
}
static FZ_HD uint32_t fz_hash_value64(uint64_t v, uint64_t idx) {
    return fz_hash_term((uint32_t)v, 2 * idx) +
           fz_hash_term((uint32_t)(v >> 32), 2 * idx + 1);
}

static FZ_HD uint32_t fz_hash_final(uint32_t sum, uint64_t nwords) {
    return fz_mix32(sum ^ ((uint32_t)nwords * 0x27D4EB2Fu) ^
                    (uint32_t)(nwords >> 32));
}

/* Partial sum over the LE words of a byte region (length a multiple of
 * 4) whose first word sits at position first. */
static inline uint32_t fz_hash_sum_bytes(const uint8_t *p, uint64_t nbytes,
                                         uint64_t first) {
    uint32_t s = 0;
    for (uint64_t i = 0; i < nbytes / 4; i++)
        s += fz_hash_term(fz_load32(p + 4 * i), first + i);
    return s;
}

/* Hash of a byte region whose length is a multiple of 4 (read LE). */
static inline uint32_t fz_hash_bytes(const uint8_t *p, uint64_t nbytes) {
    return fz_hash_final(fz_hash_sum_bytes(p, nbytes, 0), nbytes / 4);
}

/* The square-sum data checksum (codec versions that say so, FORMAT.md
 * section 6.2): for words w[0..n) at positions i,
 *     S = sum_i (w[i] XOR key(i))^2   mod 2^64   (each square exact)
 *     checksum = high 32 bits of fz_mix64(S XOR n * 0x9E3779B97F4A7C15)
 * A term costs a GPU thread three instructions (the key, the XOR, one
 * 32 x 32 -> 64-bit multiply-add) where fz_hash_term costs about eleven.
 * For a fixed position the term is injective (x -> x^2 on [0, 2^32) is),
 * so any single changed word changes S; the square makes the sum
 * nonlinear, so no fixed pattern of changes to several words cancels
 * independently of the data (a weighted linear sum has such blind spots),
 * and the sum splits and reorders like fz_hash's. */
static FZ_HD uint32_t fz_qsum_key(uint64_t i) {
    return (uint32_t)i * 0x9E3779B1u + 0x7F4A7C15u;
}
static FZ_HD uint64_t fz_qsum_term(uint32_t w, uint64_t i) {
    const uint32_t x = w ^ fz_qsum_key(i);
    return (uint64_t)x * x;
}
/* Terms of one value at value index idx (float64: low word first). */
static FZ_HD uint64_t fz_qsum_value32(uint32_t v, uint64_t idx) {
    return fz_qsum_term(v, idx);
}
static FZ_HD uint64_t fz_qsum_value64(uint64_t v, uint64_t idx) {
    return fz_qsum_term((uint32_t)v, 2 * idx) +
           fz_qsum_term((uint32_t)(v >> 32), 2 * idx + 1);
}

/* MurmurHash3's 64-bit finalizer: a bijection of 64-bit words. */
static FZ_HD uint64_t fz_mix64(uint64_t h) {
    h ^= h >> 33;
    h *= 0xFF51AFD7ED558CCDull;
    h ^= h >> 33;
    h *= 0xC4CEB9FE1A85EC53ull;
    h ^= h >> 33;
    return h;
}
static FZ_HD uint32_t fz_qsum_final(uint64_t sum, uint64_t nwords) {
    return (uint32_t)(fz_mix64(sum ^ nwords * 0x9E3779B97F4A7C15ull) >> 32);
}

/* Partial square sum over the LE words of a byte region (length a
 * multiple of 4) whose first word sits at position first. */
static inline uint64_t fz_qsum_sum_bytes(const uint8_t *p, uint64_t nbytes,
                                         uint64_t first) {
    uint64_t s = 0;
    for (uint64_t i = 0; i < nbytes / 4; i++)
        s += fz_qsum_term(fz_load32(p + 4 * i), first + i);
    return s;
}
static inline uint32_t fz_qsum_bytes(const uint8_t *p, uint64_t nbytes) {
    return fz_qsum_final(fz_qsum_sum_bytes(p, nbytes, 0), nbytes / 4);
}

/* Which checksum a chunk's data checksum is (the codec version says). */
typedef enum fz_sum_kind { FZ_SUM_MIX = 1, FZ_SUM_SQUARE = 2 } fz_sum_kind;

static inline uint32_t fz_data_checksum(fz_sum_kind kind, const uint8_t *p,
                                        uint64_t nbytes) {
    return kind == FZ_SUM_SQUARE ? fz_qsum_bytes(p, nbytes)
                                 : fz_hash_bytes(p, nbytes);
}

#endif /* FZ_HASH_H */
