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

#endif /* FZ_HASH_H */
