/* Shared helpers of the floatz test suite: assertion macros that report
 * file:line and the failing expression and exit(1), a deterministic PRNG,
 * data generators for f32/f64 arrays, and guarded buffers that catch writes
 * past a capacity. Tests use only the public API unless they say otherwise. */
#ifndef FZ_TEST_UTIL_H
#define FZ_TEST_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "floatz.h"
#include "../src/common/fz_hash.h"

/* ------------------------------------------------------------ assertions */
_Noreturn void tu_fail(const char *file, int line, const char *expr,
                       const char *detail);
void tu_fail_status(const char *file, int line, const char *expr, fz_status got,
                    fz_status want);
void tu_fail_u64(const char *file, int line, const char *expr, uint64_t got,
                 uint64_t want);

/* Text printed with every failure (the case being tested), printf-style. */
void tu_context(const char *fmt, ...);

#define CHECK(expr)                                                            \
    do {                                                                       \
        if (!(expr))                                                           \
            tu_fail(__FILE__, __LINE__, #expr, NULL);                          \
    } while (0)

#define CHECK_STATUS(expr, want)                                               \
    do {                                                                       \
        fz_status tu_got_ = (expr);                                            \
        if (tu_got_ != (want))                                                 \
            tu_fail_status(__FILE__, __LINE__, #expr, tu_got_, (want));        \
    } while (0)

#define CHECK_OK(expr) CHECK_STATUS(expr, FZ_OK)

#define CHECK_EQ_U64(got, want)                                                \
    do {                                                                       \
        uint64_t tu_g_ = (uint64_t)(got), tu_w_ = (uint64_t)(want);            \
        if (tu_g_ != tu_w_)                                                    \
            tu_fail_u64(__FILE__, __LINE__, #got " == " #want, tu_g_, tu_w_);  \
    } while (0)

/* A call that must fail: any status but FZ_OK. */
#define CHECK_ERROR(expr)                                                      \
    do {                                                                       \
        if ((expr) == FZ_OK)                                                   \
            tu_fail(__FILE__, __LINE__, #expr,                                 \
                    "returned FZ_OK, expected an error");                      \
    } while (0)

/* ---------------------------------------------------------- test groups */
/* A test program's named groups of cases: `prog` runs them all, `prog NAME`
 * runs one (a sanitizer or a quick rerun takes one at a time). */
typedef struct tu_group {
    const char *name;
    void (*run)(void);
} tu_group;

/* Runs every group when there is no argument, else the group argv[1]
 * names, calling after_each (if not NULL) after each group run; then prints
 * "PROG[ NAME]: N cases passed" with N = *cases. Returns the exit status:
 * 0, or 2 after a usage line listing the groups for an unknown name. */
int tu_run_groups(int argc, char **argv, const char *prog,
                  const tu_group *groups, size_t count, const unsigned *cases,
                  void (*after_each)(void));

/* ------------------------------------------------------------------ PRNG */
typedef struct tu_rng {
    uint64_t state;
} tu_rng;

tu_rng tu_rng_make(uint64_t seed);
uint64_t tu_next(tu_rng *r); /* splitmix64 */
uint32_t tu_next32(tu_rng *r);
uint64_t tu_below(tu_rng *r, uint64_t n); /* uniform-ish in [0, n) */
void tu_fill_bytes(tu_rng *r, void *dst, size_t n);

/* ------------------------------------------------------------ generators */
typedef enum tu_gen {
    TU_GEN_RANDOM_BITS, /* every bit pattern, NaNs included */
    TU_GEN_SMOOTH,      /* sums of sines around a positive offset */
    TU_GEN_WAVE,        /* both signs, zero crossings, exponents -20..20 */
    TU_GEN_CONSTANT,    /* one nonzero value repeated */
    TU_GEN_ZEROS,       /* +0.0 everywhere */
    TU_GEN_SPECIAL,     /* NaNs, infinities, zeros, subnormals, extremes */
    TU_GEN_MIXED,       /* wave data with sparse specials (encoded) */
    TU_GEN_PATCHWORK,   /* whole chunks alternating random bits and smooth */
    TU_GEN_COUNT
} tu_gen;

const char *tu_gen_name(tu_gen g);

/* Whether SLEEK must compress this generator's data (sizes >= one chunk):
 * the encoder, not only the verbatim fallback, is then exercised. */
int tu_gen_compressible(tu_gen g);

/* Fill n values of dtype at dst (no alignment needed). */
void tu_fill(tu_gen g, fz_dtype dtype, void *dst, size_t n, uint64_t seed);

/* A price-like series: a random walk in cents (steps -20..20) from
 * `cents`, each value the nearest dtype value to the decimal, so Falcon's
 * decimal scaling applies exactly. */
void tu_fill_decimal(fz_dtype dtype, void *dst, size_t n, int64_t cents,
                     uint64_t seed);

/* Bit patterns of special values (both signs, quiet and signalling NaNs
 * with several payloads, zeros, infinities, subnormals, min/max normals). */
size_t tu_special32(const uint32_t **values);
size_t tu_special64(const uint64_t **values);

/* Element i of an array of dtype: its bits (zero-extended), its value in
 * double (exact), and stores (a double rounded to the dtype, or bits). */
uint64_t tu_bits_at(fz_dtype t, const void *a, size_t i);
double tu_value_at(fz_dtype t, const void *a, size_t i);
void tu_set_value(fz_dtype t, void *a, size_t i, double v);
void tu_set_bits(fz_dtype t, void *a, size_t i, uint64_t b);
uint64_t tu_dbits(double d); /* the bits of a double */

size_t tu_dtype_size(fz_dtype dtype);
const char *tu_dtype_name(fz_dtype dtype);

/* Values per 16 KiB SLEEK chunk. */
size_t tu_chunk_values(fz_dtype dtype);

/* --------------------------------------------------------- guarded memory
 * A buffer of `capacity` usable bytes followed by TU_GUARD_BYTES of a known
 * pattern; tu_guard_intact() tells whether anything wrote past capacity. */
#define TU_GUARD_BYTES 64

typedef struct tu_buf {
    uint8_t *data;
    size_t capacity;
} tu_buf;

tu_buf tu_buf_alloc(size_t capacity);
void tu_buf_free(tu_buf *b);
int tu_guard_intact(const tu_buf *b);

/* malloc that fails the test on NULL; xmalloc(0) returns a valid pointer. */
void *tu_xmalloc(size_t n);

/* ---------------------------------------------------------- fz shortcuts */
/* Lossless params for n values of dtype; flags = FZ_FLAG_*. */
fz_params tu_params(fz_dtype dtype, uint64_t n, uint32_t flags);

/* Compress into a fresh buffer of fz_compress_bound bytes; fails the test on
 * error. *size gets the stream length; free() the result. */
uint8_t *tu_compress(const fz_params *p, const void *src, size_t *size);

/* Decode options: CPU, given threads and flags. */
fz_decode_options tu_decode_opts(int32_t threads, uint32_t flags);

/* Rewrite a `sleek` stream with data checksums (made by this library, so
 * codec version 3: square sums of the payloads) as the streams earlier
 * builds wrote: version 2 (mixed hashes of the payloads) or version 1
 * (mixed hashes of the decoded bytes; `decoded` is what the stream decodes
 * to, unused for version 2). */
void tu_sleek_to_version(uint8_t *stream, size_t size, const void *decoded,
                         uint32_t version);
/* Rewrite a stream with checksums as codec version `version` whose data
 * checksums are of the given kind over the decoded bytes (decoded: what
 * the stream decodes to); the table and header hashes follow. */
void tu_restamp_version(uint8_t *stream, size_t size, const void *decoded,
                        uint32_t version, fz_sum_kind kind);

/* Nonzero when built with AddressSanitizer (slow exhaustive loops shrink). */
int tu_under_sanitizer(void);

#endif /* FZ_TEST_UTIL_H */
