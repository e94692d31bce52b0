/* Data generators for the Falcon tests (CPU and GPU): decimal data of the
 * kinds the codec is built for (Case 1 chunks) and the kinds that force its
 * fallbacks (Case 2, verbatim), plus edge values around its limits.
 * Values made "from decimals" are the correctly rounded division w / 10^k,
 * which is what reading the decimal text would give. */
#ifndef FZ_FALCON_DATA_H
#define FZ_FALCON_DATA_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

typedef enum fd_gen {
    FD_DECIMAL_WALK,   /* random walk with 0..4 decimals, both signs */
    FD_DECIMAL_PLACES, /* every value its own number of decimals (0..6) */
    FD_INTEGERS,       /* integers stored as floats, up to 2^53 / 2^24 */
    FD_WIDE,           /* decimals from 1e-300 to 1e300 (f32: its range) */
    FD_LONG,           /* 16..17 significant digits */
    FD_DEC_SPECIAL,    /* decimal walk with NaN payloads, infinities, -0.0,
                          subnormals, zeros sprinkled in */
    FD_PAPER,          /* the paper's examples: 1.11, 1.02, 9.110900773177071 */
    FD_NEAR,           /* decimals nudged by one ulp */
    FD_LIMITS,         /* integers just below/at 10^15 (10^6), tiny 10^-22 */
    FD_PLATEAU,        /* long runs of one decimal, occasional jumps */
    FD_SCALE_RUNS,     /* runs with their own number of decimals; some only
                          multiples of 10, some with D-digit integers */
    FD_LATE_MISS,      /* per 1025 values: 300 of one decimal, then 1, 2,
                          3 or 6 decimals: a guessed scale fits the first
                          rows of a chunk and misses a later one (the GPU's
                          try then puts the rows before it back), or is 5
                          places too high (the walk down's count capped) */
    FD_COUNT
} fd_gen;

static inline const char *fd_gen_name(fd_gen g) {
    static const char *const names[FD_COUNT] = {
        "decimal_walk", "decimal_places", "integers",   "wide",
        "long",         "dec_special",    "paper",      "near",
        "limits",       "plateau",        "scale_runs", "late_miss"};
    return names[g];
}

static inline double fd_pow10(int k) {
    double p = 1.0;
    for (int i = 0; i < k; i++)
        p *= 10.0;
    return p;
}

/* The value of the decimal w * 10^-k (k <= 22 for f64, <= 10 for f32). */
static inline void fd_store(fz_dtype t, void *dst, size_t i, int64_t w, int k) {
    if (t == FZ_F64) {
        double v = (double)w / fd_pow10(k);
        memcpy((uint8_t *)dst + 8 * i, &v, 8);
    } else {
        float v = (float)w / (float)fd_pow10(k);
        memcpy((uint8_t *)dst + 4 * i, &v, 4);
    }
}

static inline void fd_store_bits(fz_dtype t, void *dst, size_t i,
                                 uint64_t bits) {
    if (t == FZ_F64)
        memcpy((uint8_t *)dst + 8 * i, &bits, 8);
    else {
        uint32_t b = (uint32_t)bits;
        memcpy((uint8_t *)dst + 4 * i, &b, 4);
    }
}

static inline uint64_t fd_load_bits(fz_dtype t, const void *src, size_t i) {
    if (t == FZ_F64) {
        uint64_t b;
        memcpy(&b, (const uint8_t *)src + 8 * i, 8);
        return b;
    }
    uint32_t b;
    memcpy(&b, (const uint8_t *)src + 4 * i, 4);
    return b;
}

static inline void fd_fill(fd_gen g, fz_dtype t, void *dst, size_t n,
                           uint64_t seed) {
    tu_rng r = tu_rng_make(seed * 7919 + (uint64_t)g);
    const int f64 = t == FZ_F64;
    const int k = (int)tu_below(&r, 5);
    int64_t w = (int64_t)tu_below(&r, 200000) - 100000;
    int run_places = 0, run_mode = 0;
    for (size_t i = 0; i < n; i++) {
        switch (g) {
        case FD_DECIMAL_WALK:
            w += (int64_t)tu_below(&r, 201) - 100;
            fd_store(t, dst, i, f64 ? w : w % 1000000, k);
            break;
        case FD_DECIMAL_PLACES: {
            const int places = (int)tu_below(&r, 7);
            const int64_t m = (int64_t)tu_below(&r, 100000) - 50000;
            fd_store(t, dst, i, m, places);
            break;
        }
        case FD_INTEGERS: {
            const uint64_t top = f64 ? (uint64_t)1 << 53 : (uint64_t)1 << 24;
            const uint64_t m =
                tu_below(&r, 4) ? tu_below(&r, 1000000) : tu_below(&r, top + 1);
            fd_store(t, dst, i, tu_below(&r, 2) ? -(int64_t)m : (int64_t)m, 0);
            break;
        }
        case FD_WIDE: {
            char text[64];
            const int e =
                f64 ? (int)tu_below(&r, 601) - 300 : (int)tu_below(&r, 76) - 38;
            snprintf(text, sizeof text, "%s%llue%d", tu_below(&r, 2) ? "-" : "",
                     (unsigned long long)tu_below(&r, 100000), e);
            if (f64) {
                double v = strtod(text, NULL);
                memcpy((uint8_t *)dst + 8 * i, &v, 8);
            } else {
                float v = strtof(text, NULL);
                memcpy((uint8_t *)dst + 4 * i, &v, 4);
            }
            break;
        }
        case FD_LONG: {
            /* uniform mantissa bits in [1, 2) or [0.5, 1): almost all need
             * 16..17 digits (f64) or 8..9 (f32) */
            const uint64_t b =
                f64 ? (tu_next(&r) >> 12) |
                          ((uint64_t)(1022 + tu_below(&r, 2)) << 52)
                    : (tu_next32(&r) >> 9) |
                          ((126u + (uint32_t)tu_below(&r, 2)) << 23);
            fd_store_bits(t, dst, i, b);
            break;
        }
        case FD_DEC_SPECIAL: {
            w += (int64_t)tu_below(&r, 21) - 10;
            fd_store(t, dst, i, f64 ? w : w % 1000000, 2);
            if (tu_below(&r, 50) == 0) {
                static const uint64_t s64[] = {
                    0x7FF8000000000001ull, 0xFFF0000000000000ull,
                    0x7FF0000000000000ull, 0x8000000000000000ull,
                    0x0000000000000001ull, 0x800FFFFFFFFFFFFFull,
                    0x7FF4000000000000ull, 0};
                static const uint32_t s32[] = {
                    0x7FC00001u, 0xFF800000u, 0x7F800000u, 0x80000000u,
                    0x00000001u, 0x807FFFFFu, 0x7FA00000u, 0};
                const size_t j = tu_below(&r, 8);
                fd_store_bits(t, dst, i, f64 ? s64[j] : s32[j]);
            }
            break;
        }
        case FD_PAPER: {
            static const char *const texts[] = {
                "1.11",   "1.02", "9.110900773177071",
                "0.0314", "1200", "-120",
                "7.15",   "0.1",  "0.2",
                "0.3",    "314",  "1.2"};
            const char *s = texts[tu_below(&r, 12)];
            if (f64) {
                double v = strtod(s, NULL);
                memcpy((uint8_t *)dst + 8 * i, &v, 8);
            } else {
                float v = strtof(s, NULL);
                memcpy((uint8_t *)dst + 4 * i, &v, 4);
            }
            break;
        }
        case FD_NEAR: {
            fd_store(t, dst, i, (int64_t)tu_below(&r, 100000), 3);
            const uint64_t b = fd_load_bits(t, dst, i);
            fd_store_bits(t, dst, i, tu_below(&r, 2) ? b + 1 : b - 1);
            break;
        }
        case FD_LIMITS: {
            const int64_t lim = f64 ? 1000000000000000ll : 1000000;
            const int64_t c[] = {lim - 1, -(lim - 1), lim, lim + 1,
                                 1,       -1,         0,   lim / 10};
            const int64_t m = c[tu_below(&r, 8)];
            const int places =
                f64 ? (int)tu_below(&r, 23) : (int)tu_below(&r, 11);
            fd_store(t, dst, i, m, places);
            break;
        }
        case FD_PLATEAU:
            if (tu_below(&r, 200) == 0)
                w += (int64_t)tu_below(&r, 2001) - 1000;
            fd_store(t, dst, i, w, 1);
            break;
        case FD_SCALE_RUNS: {
            /* a chunk's scale differs from the last one's: runs that fit
             * a larger scale than they need (multiples of 10) or not even
             * a smaller one (D digits), so guessed scales miss both ways */
            if (i == 0 || tu_below(&r, 24) == 0) {
                run_places = (int)tu_below(&r, f64 ? 9 : 5);
                run_mode = (int)tu_below(&r, 3);
            }
            int64_t m = run_mode == 2
                            ? (int64_t)tu_below(&r, f64 ? 1000000000000000ull
                                                        : 1000000u)
                            : (int64_t)tu_below(&r, 99999) + 1;
            if (run_mode == 1)
                m *= 10;
            fd_store(t, dst, i, tu_below(&r, 2) ? -m : m, run_places);
            break;
        }
        case FD_LATE_MISS: {
            const size_t in_chunk = i % 1025, chunk = i / 1025;
            static const int later[4] = {1, 2, 3, 6};
            const int places = in_chunk < 300 ? 1 : later[chunk % 4];
            const int64_t m = (int64_t)tu_below(&r, 99999) + 1;
            fd_store(t, dst, i, tu_below(&r, 2) ? -m : m, places);
            break;
        }
        case FD_COUNT: break;
        }
    }
}

/* Lossless falcon params; chunk = values per chunk (0 = default). */
static inline fz_params fd_params(fz_dtype t, uint64_t n, uint32_t flags,
                                  int32_t chunk) {
    fz_params p = tu_params(t, n, flags);
    p.codec = FZ_CODEC_FALCON;
    p.codec_options[0] = chunk;
    return p;
}

#endif /* FZ_FALCON_DATA_H */
