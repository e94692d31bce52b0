#include "test_util.h"

#include "../src/format/fz_container.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ assertions */
static char tu_context_text[512];

void tu_context(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tu_context_text, sizeof tu_context_text, fmt, ap);
    va_end(ap);
}

static void print_context(void) {
    if (tu_context_text[0])
        fprintf(stderr, "  while testing: %s\n", tu_context_text);
}

_Noreturn void tu_fail(const char *file, int line, const char *expr,
                       const char *detail) {
    fprintf(stderr, "%s:%d: CHECK failed: %s\n", file, line, expr);
    if (detail)
        fprintf(stderr, "  %s\n", detail);
    print_context();
    fflush(stderr);
    exit(1);
}

void tu_fail_status(const char *file, int line, const char *expr, fz_status got,
                    fz_status want) {
    char detail[256];
    snprintf(detail, sizeof detail, "got status %d (%s), expected %d (%s)",
             (int)got, fz_status_string(got), (int)want,
             fz_status_string(want));
    tu_fail(file, line, expr, detail);
}

void tu_fail_u64(const char *file, int line, const char *expr, uint64_t got,
                 uint64_t want) {
    char detail[128];
    snprintf(detail, sizeof detail, "got %llu, expected %llu",
             (unsigned long long)got, (unsigned long long)want);
    tu_fail(file, line, expr, detail);
}

/* ------------------------------------------------------------------ PRNG */
tu_rng tu_rng_make(uint64_t seed) {
    tu_rng r = {seed ^ 0x6A09E667F3BCC909ull};
    return r;
}

uint64_t tu_next(tu_rng *r) {
    uint64_t z = (r->state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

uint32_t tu_next32(tu_rng *r) {
    return (uint32_t)(tu_next(r) >> 32);
}

uint64_t tu_below(tu_rng *r, uint64_t n) {
    return n ? tu_next(r) % n : 0;
}

void tu_fill_bytes(tu_rng *r, void *dst, size_t n) {
    uint8_t *out = (uint8_t *)dst;
    for (size_t i = 0; i < n; i += 8) {
        uint64_t v = tu_next(r);
        size_t take = n - i < 8 ? n - i : 8;
        memcpy(out + i, &v, take);
    }
}

/* ------------------------------------------------------- special values */
static const uint32_t special32[] = {
    0x00000000u, 0x80000000u, /* +0, -0 */
    0x7F800000u, 0xFF800000u, /* +inf, -inf */
    0x7FC00000u, 0xFFC00000u, /* canonical quiet NaNs */
    0x7FC00001u, 0xFFD55555u, 0x7FFFFFFFu, 0xFFFFFFFFu, /* quiet payloads */
    0x7F800001u, 0xFF800001u, 0x7FA5A5A5u, 0x7FBFFFFFu, 0xFFBFFFFFu, /* sNaN */
    0x00000001u, 0x80000001u, /* smallest subnormals */
    0x007FFFFFu, 0x807FFFFFu, /* largest subnormals */
    0x00800000u, 0x80800000u, /* FLT_MIN */
    0x7F7FFFFFu, 0xFF7FFFFFu, /* FLT_MAX */
    0x3F800000u, 0xBF800000u, /* 1.0, -1.0 */
    0x34000000u,              /* FLT_EPSILON */
};

static const uint64_t special64[] = {
    0x0000000000000000ull, 0x8000000000000000ull, /* +0, -0 */
    0x7FF0000000000000ull, 0xFFF0000000000000ull, /* +inf, -inf */
    0x7FF8000000000000ull, 0xFFF8000000000000ull, /* canonical quiet NaNs */
    0x7FF8000000000001ull, 0xFFFAAAAAAAAAAAAAull, 0x7FFFFFFFFFFFFFFFull,
    0xFFFFFFFFFFFFFFFFull, /* quiet payloads */
    0x7FF0000000000001ull, 0xFFF0000000000001ull, 0x7FF5A5A5A5A5A5A5ull,
    0x7FF7FFFFFFFFFFFFull, 0xFFF7FFFFFFFFFFFFull, /* signalling NaNs */
    0x0000000000000001ull, 0x8000000000000001ull, /* smallest subnormals */
    0x000FFFFFFFFFFFFFull, 0x800FFFFFFFFFFFFFull, /* largest subnormals */
    0x0010000000000000ull, 0x8010000000000000ull, /* DBL_MIN */
    0x7FEFFFFFFFFFFFFFull, 0xFFEFFFFFFFFFFFFFull, /* DBL_MAX */
    0x3FF0000000000000ull, 0xBFF0000000000000ull, /* 1.0, -1.0 */
    0x3CB0000000000000ull,                        /* DBL_EPSILON */
};

size_t tu_special32(const uint32_t **values) {
    *values = special32;
    return sizeof special32 / sizeof special32[0];
}

size_t tu_special64(const uint64_t **values) {
    *values = special64;
    return sizeof special64 / sizeof special64[0];
}

/* ------------------------------------------------------------ generators */
size_t tu_dtype_size(fz_dtype dtype) {
    return dtype == FZ_F32 ? 4 : 8;
}

const char *tu_dtype_name(fz_dtype dtype) {
    return dtype == FZ_F32 ? "f32" : "f64";
}

size_t tu_chunk_values(fz_dtype dtype) {
    return 16384 / tu_dtype_size(dtype);
}

const char *tu_gen_name(tu_gen g) {
    static const char *const names[TU_GEN_COUNT] = {
        "random_bits", "smooth",  "wave",  "constant",
        "zeros",       "special", "mixed", "patchwork"};
    return (unsigned)g < TU_GEN_COUNT ? names[g] : "?";
}

int tu_gen_compressible(tu_gen g) {
    return g == TU_GEN_SMOOTH || g == TU_GEN_WAVE || g == TU_GEN_CONSTANT ||
           g == TU_GEN_ZEROS || g == TU_GEN_MIXED;
}

typedef struct smooth_wave {
    double phase[3];
} smooth_wave;

static smooth_wave smooth_make(uint64_t seed) {
    tu_rng r = tu_rng_make(seed);
    smooth_wave w;
    for (int k = 0; k < 3; k++)
        w.phase[k] = (double)(tu_next(&r) >> 11) * 0x1p-53 * 6.283185307179586;
    return w;
}

/* In [5.5, 14.5]: strictly positive, a few binary exponents. */
static double smooth_at(const smooth_wave *w, size_t i) {
    double x = (double)i;
    return 10.0 + 3.0 * sin(x * 0.0123 + w->phase[0]) +
           1.0 * sin(x * 0.071 + w->phase[1]) +
           0.5 * sin(x * 0.37 + w->phase[2]);
}

/* Both signs, zero crossings, magnitudes 2^-20..2^20: every transform
 * branch (exponents below, at and above the remap pivot) gets exercised. */
static double wave_at(const smooth_wave *w, size_t i) {
    double x = (double)i;
    return sin(x * 0.0123 + w->phase[0]) *
               exp2(20.0 * sin(x * 0.0007 + w->phase[1])) +
           1e-3 * sin(x * 0.37 + w->phase[2]);
}

static void put_value(fz_dtype dtype, void *dst, size_t i, double v) {
    if (dtype == FZ_F32) {
        float f = (float)v;
        memcpy((uint8_t *)dst + 4 * i, &f, 4);
    } else {
        memcpy((uint8_t *)dst + 8 * i, &v, 8);
    }
}

static void put_special(fz_dtype dtype, void *dst, size_t i, size_t k) {
    const uint32_t *s32;
    const uint64_t *s64;
    if (dtype == FZ_F32) {
        size_t n = tu_special32(&s32);
        memcpy((uint8_t *)dst + 4 * i, &s32[k % n], 4);
    } else {
        size_t n = tu_special64(&s64);
        memcpy((uint8_t *)dst + 8 * i, &s64[k % n], 8);
    }
}

static void put_random(fz_dtype dtype, void *dst, size_t i, tu_rng *r) {
    size_t es = tu_dtype_size(dtype);
    uint64_t v = tu_next(r);
    memcpy((uint8_t *)dst + es * i, &v, es);
}

static void fill_smooth(fz_dtype dtype, void *dst, size_t n, uint64_t seed) {
    smooth_wave w = smooth_make(seed);
    for (size_t i = 0; i < n; i++)
        put_value(dtype, dst, i, smooth_at(&w, i));
}

static void fill_wave(fz_dtype dtype, void *dst, size_t n, uint64_t seed) {
    smooth_wave w = smooth_make(seed);
    for (size_t i = 0; i < n; i++)
        put_value(dtype, dst, i, wave_at(&w, i));
}

static void fill_constant(fz_dtype dtype, void *dst, size_t n, uint64_t seed) {
    double v = 3.14159265358979 * (double)(1 + seed % 7);
    for (size_t i = 0; i < n; i++)
        put_value(dtype, dst, i, v);
}

static void fill_special(fz_dtype dtype, void *dst, size_t n, uint64_t seed) {
    for (size_t i = 0; i < n; i++)
        put_special(dtype, dst, i, i + (size_t)(seed % 64));
}

/* About one special value in 200: roughly half the subchunks hold one, so
 * chunks stay encoded and the specials go through the encoder. */
static void fill_mixed(fz_dtype dtype, void *dst, size_t n, uint64_t seed) {
    tu_rng r = tu_rng_make(seed);
    smooth_wave w = smooth_make(seed + 1);
    for (size_t i = 0; i < n; i++) {
        if (tu_below(&r, 200) == 0)
            put_special(dtype, dst, i, (size_t)tu_next(&r));
        else
            put_value(dtype, dst, i, wave_at(&w, i));
    }
}

static void fill_patchwork(fz_dtype dtype, void *dst, size_t n, uint64_t seed) {
    tu_rng r = tu_rng_make(seed);
    smooth_wave w = smooth_make(seed + 1);
    size_t chunk = tu_chunk_values(dtype);
    for (size_t i = 0; i < n; i++) {
        if ((i / chunk) % 2 == 0)
            put_random(dtype, dst, i, &r);
        else
            put_value(dtype, dst, i, smooth_at(&w, i));
    }
}

void tu_fill_decimal(fz_dtype dtype, void *dst, size_t n, int64_t cents,
                     uint64_t seed) {
    tu_rng r = tu_rng_make(seed);
    for (size_t i = 0; i < n; i++) {
        cents += (int64_t)tu_below(&r, 41) - 20;
        tu_set_value(dtype, dst, i, (double)cents / 100.0);
    }
}

void tu_fill(tu_gen g, fz_dtype dtype, void *dst, size_t n, uint64_t seed) {
    tu_rng r = tu_rng_make(seed);
    switch (g) {
    case TU_GEN_RANDOM_BITS:
        tu_fill_bytes(&r, dst, n * tu_dtype_size(dtype));
        break;
    case TU_GEN_SMOOTH: fill_smooth(dtype, dst, n, seed); break;
    case TU_GEN_WAVE: fill_wave(dtype, dst, n, seed); break;
    case TU_GEN_CONSTANT: fill_constant(dtype, dst, n, seed); break;
    case TU_GEN_ZEROS: memset(dst, 0, n * tu_dtype_size(dtype)); break;
    case TU_GEN_SPECIAL: fill_special(dtype, dst, n, seed); break;
    case TU_GEN_MIXED: fill_mixed(dtype, dst, n, seed); break;
    case TU_GEN_PATCHWORK: fill_patchwork(dtype, dst, n, seed); break;
    case TU_GEN_COUNT: break;
    }
}

/* --------------------------------------------------------- guarded memory */
static uint8_t guard_byte(size_t i) {
    return (uint8_t)(0xA5 ^ (i * 37));
}

void *tu_xmalloc(size_t n) {
    void *p = malloc(n ? n : 1);
    if (!p)
        tu_fail(__FILE__, __LINE__, "malloc", "out of memory");
    return p;
}

tu_buf tu_buf_alloc(size_t capacity) {
    tu_buf b;
    b.capacity = capacity;
    b.data = (uint8_t *)tu_xmalloc(capacity + TU_GUARD_BYTES);
    memset(b.data, 0xCD, capacity);
    for (size_t i = 0; i < TU_GUARD_BYTES; i++)
        b.data[capacity + i] = guard_byte(i);
    return b;
}

void tu_buf_free(tu_buf *b) {
    free(b->data);
    b->data = NULL;
}

int tu_guard_intact(const tu_buf *b) {
    for (size_t i = 0; i < TU_GUARD_BYTES; i++)
        if (b->data[b->capacity + i] != guard_byte(i))
            return 0;
    return 1;
}

/* ---------------------------------------------------------- fz shortcuts */
fz_params tu_params(fz_dtype dtype, uint64_t n, uint32_t flags) {
    fz_params p;
    CHECK_OK(fz_params_init(&p, dtype, n));
    p.flags = flags;
    return p;
}

uint8_t *tu_compress(const fz_params *p, const void *src, size_t *size) {
    size_t bound = 0;
    uint64_t bytes = 0;
    CHECK_OK(fz_compress_bound(p, &bound));
    CHECK_OK(fz_params_count(p, NULL, &bytes));
    uint8_t *dst = (uint8_t *)tu_xmalloc(bound);
    CHECK_OK(fz_compress(p, src, (size_t)bytes, dst, bound, size));
    CHECK(*size <= bound);
    return dst;
}

void tu_restamp_version(uint8_t *stream, size_t size, const void *decoded,
                        uint32_t version, fz_sum_kind kind) {
    fz_header h;
    memset(&h, 0, sizeof h);
    CHECK_EQ_U64(fz_header_parse(stream, size, &h), FZS_OK);
    CHECK(fz_table_entry_bytes(h.flags) == 8);
    uint8_t *table = stream + FZ_HDR_BYTES;
    for (uint64_t c = 0; c < h.chunk_count; c++)
        fz_store32(
            table + 8 * c + 4,
            fz_data_checksum(kind, (const uint8_t *)decoded + c * h.chunk_bytes,
                             fz_chunk_raw_bytes(&h, c)));
    h.codec_version = version;
    h.table_hash = fz_table_hash(table, fz_table_bytes(&h));
    fz_header_write(&h, stream);
}

/* Rewrite chunk checksums (table entries of 8 bytes) as sums of `kind`
 * over each chunk's stored payload; the table and header hashes follow. */
static void restamp_payload_sums(uint8_t *stream, fz_header *h,
                                 fz_sum_kind kind) {
    uint8_t *table = stream + FZ_HDR_BYTES;
    const uint8_t *payload = stream + fz_payload_offset(h);
    uint64_t at = 0;
    for (uint64_t c = 0; c < h->chunk_count; c++) {
        const uint32_t size = fz_load32(table + 8 * c);
        fz_store32(table + 8 * c + 4,
                   fz_data_checksum(kind, payload + at, size));
        at += size;
    }
    h->table_hash = fz_table_hash(table, fz_table_bytes(h));
    fz_header_write(h, stream);
}

void tu_sleek_to_version(uint8_t *stream, size_t size, const void *decoded,
                         uint32_t version) {
    fz_header h;
    memset(&h, 0, sizeof h);
    CHECK_EQ_U64(fz_header_parse(stream, size, &h), FZS_OK);
    CHECK(h.codec == 1 && h.codec_version == 3);
    CHECK(fz_table_entry_bytes(h.flags) == 8);
    if (version == 1) {
        tu_restamp_version(stream, size, decoded, 1, FZ_SUM_MIX);
        return;
    }
    CHECK(version == 2);
    h.codec_version = 2;
    restamp_payload_sums(stream, &h, FZ_SUM_MIX);
}

fz_decode_options tu_decode_opts(int32_t threads, uint32_t flags) {
    fz_decode_options o;
    memset(&o, 0, sizeof o);
    o.exec = FZ_EXEC_CPU;
    o.threads = threads;
    o.flags = flags;
    return o;
}

#if defined(__SANITIZE_ADDRESS__)
#define TU_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TU_ASAN 1
#endif
#endif

int tu_under_sanitizer(void) {
#ifdef TU_ASAN
    return 1;
#else
    return 0;
#endif
}

uint64_t tu_bits_at(fz_dtype t, const void *a, size_t i) {
    if (t == FZ_F32) {
        uint32_t b;
        memcpy(&b, (const uint8_t *)a + 4 * i, 4);
        return b;
    }
    uint64_t b;
    memcpy(&b, (const uint8_t *)a + 8 * i, 8);
    return b;
}

double tu_value_at(fz_dtype t, const void *a, size_t i) {
    if (t == FZ_F32) {
        float f;
        memcpy(&f, (const uint8_t *)a + 4 * i, 4);
        return f;
    }
    double d;
    memcpy(&d, (const uint8_t *)a + 8 * i, 8);
    return d;
}

void tu_set_value(fz_dtype t, void *a, size_t i, double v) {
    if (t == FZ_F32) {
        float f = (float)v;
        memcpy((uint8_t *)a + 4 * i, &f, 4);
    } else {
        memcpy((uint8_t *)a + 8 * i, &v, 8);
    }
}

void tu_set_bits(fz_dtype t, void *a, size_t i, uint64_t b) {
    if (t == FZ_F32) {
        uint32_t b32 = (uint32_t)b;
        memcpy((uint8_t *)a + 4 * i, &b32, 4);
    } else {
        memcpy((uint8_t *)a + 8 * i, &b, 8);
    }
}

uint64_t tu_dbits(double d) {
    uint64_t b;
    memcpy(&b, &d, sizeof b);
    return b;
}

/* ---------------------------------------------------------- test groups */
int tu_run_groups(int argc, char **argv, const char *prog,
                  const tu_group *groups, size_t count, const unsigned *cases,
                  void (*after_each)(void)) {
    int found = argc < 2;
    for (size_t i = 0; i < count; i++)
        if (argc < 2 || strcmp(argv[1], groups[i].name) == 0) {
            found = 1;
            groups[i].run();
            if (after_each)
                after_each();
        }
    if (!found) {
        fprintf(stderr, "usage: %s [GROUP]; groups:", argv[0]);
        for (size_t i = 0; i < count; i++)
            fprintf(stderr, " %s", groups[i].name);
        fprintf(stderr, "\n");
        return 2;
    }
    printf("%s%s%s: %u cases passed\n", prog, argc > 1 ? " " : "",
           argc > 1 ? argv[1] : "", *cases);
    return 0;
}
