/* Lossy modes (FZ_MODE_ABS, FZ_MODE_REL) on the CPU, through the public API.
 * Every case checks, value by value in double precision:
 *  - a finite original decodes within the requested absolute bound (ABS:
 *    the bound; REL: bound x (max - min) of the finite values, computed
 *    here) and within the effective bound fz_inspect reports;
 *  - NaN (any payload, either sign), infinities and subnormals decode bit
 *    for bit; -0.0 may decode as +0.0;
 *  - the effective bound is 0 or a power of two <= the requested absolute
 *    bound (exactly the largest one, clamped, for ABS), and an effective
 *    bound of 0 means a bitwise identical round trip.
 * Inputs: generators, values around SLEEK's lossless threshold
 * T = 2 eps 2^m, around every power of two, huge dynamic ranges, extreme
 * bounds, special values, constants, many sizes. Also determinism over
 * thread counts, single-byte corruption of lossy streams, and invalid
 * bounds. Run all groups, or one: test_lossy GROUP. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../src/format/fz_container.h"
#include "test_util.h"

static unsigned cases_run;

/* ------------------------------------------------------- value access */
static int is_subnormal_bits(fz_dtype t, uint64_t b) {
    if (t == FZ_F32)
        return (b & 0x7F800000u) == 0 && (b & 0x007FFFFFu) != 0;
    return (b & 0x7FF0000000000000ull) == 0 && (b & 0x000FFFFFFFFFFFFFull) != 0;
}

/* A growing array of values of one dtype. */
typedef struct vlist {
    fz_dtype t;
    uint8_t *data;
    size_t n, cap;
} vlist;

static vlist vl_make(fz_dtype t) {
    vlist v = {t, NULL, 0, 0};
    return v;
}

static void vl_push_bits(vlist *v, uint64_t b) {
    const size_t es = tu_dtype_size(v->t);
    if (v->n == v->cap) {
        v->cap = v->cap ? 2 * v->cap : 256;
        v->data = (uint8_t *)realloc(v->data, v->cap * es);
        CHECK(v->data != NULL);
    }
    if (v->t == FZ_F32) {
        uint32_t b32 = (uint32_t)b;
        memcpy(v->data + 4 * v->n, &b32, 4);
    } else {
        memcpy(v->data + 8 * v->n, &b, 8);
    }
    v->n++;
}

/* f32: the value rounded to float (callers pass representable values). */
static void vl_push(vlist *v, double d) {
    if (v->t == FZ_F32) {
        float f = (float)d;
        uint32_t b;
        memcpy(&b, &f, 4);
        vl_push_bits(v, b);
    } else {
        vl_push_bits(v, tu_dbits(d));
    }
}

/* d and -d */
static void vl_push_pm(vlist *v, double d) {
    vl_push(v, d);
    vl_push(v, -d);
}

static void vl_free(vlist *v) {
    free(v->data);
    v->data = NULL;
}

/* Next representable value of the dtype from d towards `to`. */
static double next_toward(fz_dtype t, double d, double to) {
    return t == FZ_F32 ? (double)nextafterf((float)d, (float)to)
                       : nextafter(d, to);
}

/* ------------------------------------------------------- the bounds */
static int mant_bits(fz_dtype t) {
    return t == FZ_F32 ? FLT_MANT_DIG - 1 : DBL_MANT_DIG - 1; /* m */
}

/* eps = 2^k: k below kmin is finer than the smallest subnormal (stored
 * lossless); above kmax the threshold T = 2 eps 2^m would not be finite. */
static int kmin_of(fz_dtype t) {
    return t == FZ_F32 ? FLT_MIN_EXP - FLT_MANT_DIG
                       : DBL_MIN_EXP - DBL_MANT_DIG; /* -149, -1074 */
}
static int kmax_of(fz_dtype t) {
    return t == FZ_F32 ? FLT_MAX_EXP - FLT_MANT_DIG - 1
                       : DBL_MAX_EXP - DBL_MANT_DIG - 1; /* 103, 970 */
}

/* The documented effective bound for an absolute bound b: the largest
 * power of two <= b, clamped to 2^kmax; 0 for b = 0 or b < 2^kmin. */
static double expected_eff(fz_dtype t, double b) {
    if (!(b > 0))
        return 0.0;
    if (isinf(b))
        return ldexp(1.0, kmax_of(t));
    int e;
    frexp(b, &e); /* b = f 2^e, f in [0.5, 1): floor(log2 b) = e - 1 */
    int k = e - 1;
    if (k < kmin_of(t))
        return 0.0;
    if (k > kmax_of(t))
        k = kmax_of(t);
    return ldexp(1.0, k);
}

static int is_pow2(double x) {
    int e;
    return x > 0 && isfinite(x) && frexp(x, &e) == 0.5;
}

/* The requested bound as an absolute bound, computed here in double. REL:
 * bound x (max - min) over the finite values (0 without any), without
 * intermediate overflow when max - min exceeds DBL_MAX. */
static double requested_abs(const fz_params *p, const void *src, size_t n) {
    if (p->mode == FZ_MODE_ABS)
        return p->bound;
    double lo = INFINITY, hi = -INFINITY;
    for (size_t i = 0; i < n; i++) {
        double v = tu_value_at(p->dtype, src, i);
        if (isfinite(v)) {
            lo = v < lo ? v : lo;
            hi = v > hi ? v : hi;
        }
    }
    if (!(hi >= lo))
        return 0.0;
    double range = hi - lo;
    if (isinf(range))
        return 2.0 * (p->bound * (0.5 * hi - 0.5 * lo));
    return p->bound * range;
}

/* --------------------------------------------------------- value checks */
static _Noreturn void value_failure(fz_dtype t, const void *src,
                                    const void *out, size_t i, double abs_b,
                                    double eff, const char *what) {
    char detail[400];
    snprintf(detail, sizeof detail,
             "value %zu: original %.17g (bits 0x%llx) decoded %.17g (bits "
             "0x%llx); requested absolute bound %.17g, effective %.17g",
             i, tu_value_at(t, src, i),
             (unsigned long long)tu_bits_at(t, src, i), tu_value_at(t, out, i),
             (unsigned long long)tu_bits_at(t, out, i), abs_b, eff);
    tu_fail(__FILE__, __LINE__, what, detail);
}

/* Every value of out against src (see the file comment). */
static void check_values(fz_dtype t, const void *src, const void *out, size_t n,
                         double abs_b, double eff) {
    /* SLEEK keeps |v| >= T = 2 eps 2^m bit for bit (sleek_xform.h) */
    const double T = eff > 0 ? ldexp(eff, mant_bits(t) + 1) : 0.0;
    for (size_t i = 0; i < n; i++) {
        const uint64_t a = tu_bits_at(t, src, i), b = tu_bits_at(t, out, i);
        const double o = tu_value_at(t, src, i), d = tu_value_at(t, out, i);
        if (!isfinite(o) || is_subnormal_bits(t, a)) {
            if (a != b)
                value_failure(t, src, out, i, abs_b, eff,
                              "NaN, infinity or subnormal kept bit for bit");
            continue;
        }
        if (!isfinite(d))
            value_failure(t, src, out, i, abs_b, eff,
                          "finite value decodes to a finite value");
        const double err = fabs(d - o);
        if (!(err <= abs_b))
            value_failure(t, src, out, i, abs_b, eff,
                          "|decoded - original| <= requested absolute bound");
        if (!(err <= eff))
            value_failure(t, src, out, i, abs_b, eff,
                          "|decoded - original| <= effective bound");
        if (eff == 0 && a != b)
            value_failure(t, src, out, i, abs_b, eff,
                          "effective bound 0: bit for bit");
        if (eff > 0 && fabs(o) >= T && a != b)
            value_failure(t, src, out, i, abs_b, eff,
                          "|v| >= T = 2 eps 2^m: bit for bit");
    }
}

/* The effective bound against the requested absolute bound. */
static void check_effective(const fz_params *p, double abs_b, double eff) {
    char detail[200];
    snprintf(detail, sizeof detail,
             "effective %.17g (bits 0x%llx), requested absolute %.17g", eff,
             (unsigned long long)tu_dbits(eff), abs_b);
    if (!(eff == 0 || is_pow2(eff)))
        tu_fail(__FILE__, __LINE__, "effective bound is 0 or a power of two",
                detail);
    if (!(eff <= abs_b))
        tu_fail(__FILE__, __LINE__,
                "effective bound <= requested absolute bound", detail);
    if (p->mode == FZ_MODE_ABS) {
        if (tu_dbits(eff) != tu_dbits(expected_eff(p->dtype, abs_b)))
            tu_fail(__FILE__, __LINE__,
                    "ABS: effective bound is the largest power of two <= "
                    "the bound (clamped; 0 below the finest spacing)",
                    detail);
        return;
    }
    /* REL: the product bound x range is rounded, so the library may stay a
     * few ulps below it, but not a power of two lower than that. Where the
     * product is tiny (subnormal-range rounding is not relative) storing
     * lossless is a safe answer too. */
    const double slack = abs_b >= 0x1p-990 ? abs_b * (1 - 0x1p-48) : 0.0;
    if (!(eff <= expected_eff(p->dtype, abs_b) &&
          eff >= expected_eff(p->dtype, slack)))
        tu_fail(__FILE__, __LINE__,
                "REL: effective bound is the largest power of two <= "
                "bound x range (up to rounding)",
                detail);
}

/* ------------------------------------------------------ one round trip */
typedef struct lossy_run {
    tu_buf stream;
    size_t size;
    tu_buf out; /* the decoded values */
    double eff, abs_b;
} lossy_run;

static void lossy_free(lossy_run *r) {
    tu_buf_free(&r->stream);
    tu_buf_free(&r->out);
}

static void check_info(const fz_params *p, const lossy_run *r) {
    fz_info info, head;
    CHECK_OK(fz_inspect(r->stream.data, r->size, &info));
    CHECK(info.params.dtype == p->dtype);
    CHECK(info.params.mode == p->mode);
    CHECK_EQ_U64(info.params.ndims, p->ndims);
    for (int d = 0; d < FZ_MAX_DIMS; d++)
        CHECK_EQ_U64(info.params.dims[d], p->dims[d]);
    /* the requested bound as given; -0.0 is stored as +0.0 */
    CHECK_EQ_U64(tu_dbits(info.params.bound),
                 p->bound == 0 ? 0 : tu_dbits(p->bound));
    CHECK_EQ_U64(info.compressed_bytes, r->size);
    CHECK_EQ_U64(info.has_checksums, !(p->flags & FZ_FLAG_NO_CHECKSUM));
    CHECK_OK(fz_inspect(r->stream.data, FZ_HEADER_BYTES, &head));
    CHECK(memcmp(&head, &info, sizeof head) == 0);
}

/* Compress src with p, inspect, decode, and check every value. */
static lossy_run lossy_check(const fz_params *p, const void *src) {
    lossy_run r;
    uint64_t n = 0, bytes = 0;
    size_t bound = 0, got = 0;
    CHECK_OK(fz_params_count(p, &n, &bytes));
    CHECK_OK(fz_compress_bound(p, &bound));
    r.stream = tu_buf_alloc(bound);
    CHECK_OK(fz_compress(p, src, (size_t)bytes, r.stream.data, bound, &r.size));
    CHECK(r.size <= bound);
    CHECK(tu_guard_intact(&r.stream));
    check_info(p, &r);

    fz_info info;
    CHECK_OK(fz_inspect(r.stream.data, r.size, &info));
    r.eff = info.bound_effective;
    r.abs_b = requested_abs(p, src, (size_t)n);
    check_effective(p, r.abs_b, r.eff);

    r.out = tu_buf_alloc((size_t)bytes);
    CHECK_OK(fz_decompress(r.stream.data, r.size, r.out.data, (size_t)bytes,
                           NULL, &got));
    CHECK_EQ_U64(got, bytes);
    CHECK(tu_guard_intact(&r.out));
    check_values(p->dtype, src, r.out.data, (size_t)n, r.abs_b, r.eff);
    if (r.eff == 0)
        CHECK(memcmp(r.out.data, src, (size_t)bytes) == 0);

    /* the checksums agree with the payloads: skipping them changes
     * nothing */
    tu_buf again = tu_buf_alloc((size_t)bytes);
    fz_decode_options o = tu_decode_opts(2, FZ_DECODE_SKIP_CHECKSUM);
    CHECK_OK(fz_decompress(r.stream.data, r.size, again.data, (size_t)bytes, &o,
                           &got));
    CHECK(memcmp(again.data, r.out.data, (size_t)bytes) == 0);
    tu_buf_free(&again);
    cases_run++;
    return r;
}

static fz_params lossy_params(fz_dtype t, uint64_t n, fz_mode mode,
                              double bound) {
    fz_params p = tu_params(t, n, 0);
    p.mode = mode;
    p.bound = bound;
    return p;
}

/* One checked round trip, nothing kept; returns the effective bound. */
static double lossy_case(fz_dtype t, const void *src, size_t n, fz_mode mode,
                         double bound) {
    fz_params p = lossy_params(t, n, mode, bound);
    lossy_run r = lossy_check(&p, src);
    double eff = r.eff;
    lossy_free(&r);
    return eff;
}

static const char *mode_name(fz_mode m) {
    return m == FZ_MODE_ABS ? "ABS" : m == FZ_MODE_REL ? "REL" : "lossless";
}

static const fz_dtype dtypes[] = {FZ_F32, FZ_F64};
static const fz_mode modes[] = {FZ_MODE_ABS, FZ_MODE_REL};

/* ------------------------------------------------------------- groups */
/* Every generator, a few bounds per mode; with and without checksums the
 * decoded values are the same. */
static void group_generators(void) {
    const double abs_bounds[] = {1e-3, 0.37, 5.0};
    const double rel_bounds[] = {1e-5, 1e-2, 0.3};
    for (int ti = 0; ti < 2; ti++) {
        const fz_dtype t = dtypes[ti];
        const size_t n = 2 * tu_chunk_values(t) + 77;
        void *src = tu_xmalloc(n * tu_dtype_size(t));
        for (int g = 0; g < TU_GEN_COUNT; g++) {
            tu_fill((tu_gen)g, t, src, n, 77 + (uint64_t)g);
            for (int mi = 0; mi < 2; mi++) {
                for (int b = 0; b < 3; b++) {
                    const double bound = modes[mi] == FZ_MODE_ABS
                                             ? abs_bounds[b]
                                             : rel_bounds[b];
                    tu_context("generators %s %s %s bound %g", tu_dtype_name(t),
                               tu_gen_name((tu_gen)g), mode_name(modes[mi]),
                               bound);
                    fz_params p = lossy_params(t, n, modes[mi], bound);
                    lossy_run r = lossy_check(&p, src);
                    p.flags = FZ_FLAG_NO_CHECKSUM;
                    lossy_run r2 = lossy_check(&p, src);
                    CHECK(r2.eff == r.eff);
                    CHECK(memcmp(r.out.data, r2.out.data,
                                 n * tu_dtype_size(t)) == 0);
                    lossy_free(&r2);
                    lossy_free(&r);
                }
            }
        }
        free(src);
    }
}

/* Values around the lossless threshold T = 2 eps 2^m and around the
 * rounding points of the quantizer (bin + 1/2) 2 eps, for eps = 2^k. */
static void threshold_values(vlist *v, fz_dtype t, int k) {
    const double eps = ldexp(1.0, k), two = ldexp(1.0, k + 1);
    const double T = ldexp(1.0, k + 1 + mant_bits(t));
    const double B = ldexp(1.0, mant_bits(t)); /* bins below T */
    vl_push_pm(v, T);
    double up = T, down = T;
    for (int j = 0; j < 4; j++) {
        up = next_toward(t, up, INFINITY);
        down = next_toward(t, down, 0);
        vl_push_pm(v, up);
        vl_push_pm(v, down);
    }
    vl_push_pm(v, 2 * T);
    vl_push_pm(v, T - eps);         /* halfway to the last bin: a tie */
    vl_push_pm(v, (B - 1.5) * two); /* tie */
    vl_push_pm(v, (B - 1) * two);   /* a bin */
    vl_push_pm(v, T / 2);           /* exact bin */
    vl_push_pm(v, eps);             /* tie between bins 0 and 1 */
    vl_push_pm(v, 3 * eps);         /* tie between bins 1 and 2 */
    vl_push_pm(v, two);             /* bin 1 */
    vl_push_pm(v, next_toward(t, eps, 0));
    vl_push_pm(v, next_toward(t, eps, INFINITY));
    vl_push_pm(v, next_toward(t, 3 * eps, 0));
    vl_push_pm(v, next_toward(t, 3 * eps, INFINITY));
    vl_push_pm(v, eps / 2);
    vl_push(v, 0.0);
    vl_push(v, -0.0);
}

static void group_threshold(void) {
    const int k32[] = {-149, -140, -126, -60, -20, -3, 0, 1, 7, 40, 102, 103};
    const int k64[] = {-1074, -1060, -1022, -300, -40, -1,
                       0,     5,     60,    500,  969, 970};
    for (int ti = 0; ti < 2; ti++) {
        const fz_dtype t = dtypes[ti];
        const int *ks = t == FZ_F32 ? k32 : k64;
        for (int i = 0; i < 12; i++) {
            const int k = ks[i];
            const double eps = ldexp(1.0, k);
            vlist v = vl_make(t);
            threshold_values(&v, t, k);
            /* bounds that all give eps: eps, just above, just below 2 eps */
            const double bounds[] = {eps, nextafter(eps, INFINITY),
                                     nextafter(2 * eps, 0), 1.5 * eps};
            for (int b = 0; b < 4; b++) {
                if (!(bounds[b] < 2 * eps)) /* subnormal spacing */
                    continue;
                tu_context("threshold %s k=%d ABS bound %.17g",
                           tu_dtype_name(t), k, bounds[b]);
                if (k < kmax_of(t))
                    CHECK(lossy_case(t, v.data, v.n, FZ_MODE_ABS, bounds[b]) ==
                          eps);
                else /* clamped: any larger bound also gives eps */
                    CHECK(lossy_case(t, v.data, v.n, FZ_MODE_ABS,
                                     bounds[b] * 4) == eps);
            }
            /* REL aimed at 1.5 eps, where max - min stays finite */
            double lo = INFINITY, hi = -INFINITY;
            for (size_t j = 0; j < v.n; j++) {
                const double x = tu_value_at(t, v.data, j);
                if (isfinite(x)) {
                    lo = x < lo ? x : lo;
                    hi = x > hi ? x : hi;
                }
            }
            if (k < kmax_of(t) && isfinite(hi - lo)) {
                tu_context("threshold %s k=%d REL", tu_dtype_name(t), k);
                const double eff = lossy_case(t, v.data, v.n, FZ_MODE_REL,
                                              1.5 * eps / (hi - lo));
                /* (binary64 subnormal products round too coarsely) */
                CHECK(eff == eps || eps < 0x1p-990);
            }
            vl_free(&v);
        }
    }
}

/* 2^e, its neighbours and 1.5 x 2^e, both signs, for every f32 exponent
 * (subnormals included) and a stride of f64 exponents plus the edges. */
static void power_values(vlist *v, fz_dtype t, int positive_only) {
    const int lo = t == FZ_F32 ? -149 : -1074, hi = t == FZ_F32 ? 127 : 1023;
    const int stride = t == FZ_F32 ? 1 : 7;
    for (int e = lo; e <= hi + stride; e += stride) {
        const int ee = e > hi ? hi : e;
        const double p = ldexp(1.0, ee);
        const double vals[] = {p, next_toward(t, p, 0),
                               next_toward(t, p, INFINITY),
                               ee > lo ? 1.5 * p : p};
        for (int j = 0; j < 4; j++) {
            if (!isfinite(vals[j]) ||
                (t == FZ_F32 && !isfinite((float)vals[j])))
                continue;
            vl_push(v, vals[j]);
            if (!positive_only)
                vl_push(v, -vals[j]);
        }
    }
    /* the edges of the f64 stride */
    if (t == FZ_F64) {
        const int edges[] = {-1074, -1073, -1023, -1022, -1021, 1022, 1023};
        for (int j = 0; j < 7; j++) {
            vl_push(v, ldexp(1.0, edges[j]));
            vl_push(v, next_toward(t, ldexp(1.0, edges[j]), 0));
        }
        vl_push(v, DBL_MAX);
    } else {
        vl_push(v, FLT_MAX);
    }
}

static void group_powers(void) {
    const double abs32[] = {0x1p-149, 0x1p-130, 1e-30,  1e-10, 1e-3,
                            0.75,     1.0,      1e5,    1e30,  0x1p103,
                            0x1p104,  FLT_MAX,  DBL_MAX};
    const double abs64[] = {0x1p-1074, 1e-320,  1e-300,  1e-30,
                            1e-3,      1.0,     1e30,    1e300,
                            0x1p970,   0x1p971, DBL_MAX, 0x1.8p-1060};
    const double rel[] = {1e-300, 1e-30, 1e-8, 1e-3, 0.5, 1.0, 4.0};
    for (int ti = 0; ti < 2; ti++) {
        const fz_dtype t = dtypes[ti];
        vlist both = vl_make(t), pos = vl_make(t);
        power_values(&both, t, 0);
        power_values(&pos, t, 1); /* REL: max - min stays finite for f64 */
        const double *ab = t == FZ_F32 ? abs32 : abs64;
        const size_t nab = t == FZ_F32 ? 13 : 12;
        for (size_t b = 0; b < nab; b++) {
            tu_context("powers %s ABS bound %.17g", tu_dtype_name(t), ab[b]);
            lossy_case(t, both.data, both.n, FZ_MODE_ABS, ab[b]);
        }
        for (size_t b = 0; b < sizeof rel / sizeof rel[0]; b++) {
            const vlist *v = t == FZ_F32 ? &both : &pos;
            tu_context("powers %s REL bound %.17g", tu_dtype_name(t), rel[b]);
            lossy_case(t, v->data, v->n, FZ_MODE_REL, rel[b]);
        }
        vl_free(&both);
        vl_free(&pos);
    }
}

/* Log-uniform magnitudes over (nearly) the whole exponent range, random
 * signs and mantissas. max_e keeps the f64 range finite for REL. */
static void random_wide(vlist *v, fz_dtype t, size_t n, int max_e,
                        uint64_t seed) {
    tu_rng r = tu_rng_make(seed);
    const int min_e = t == FZ_F32 ? -149 : -1074;
    for (size_t i = 0; i < n; i++) {
        const int e = min_e + (int)tu_below(&r, (uint64_t)(max_e - min_e + 1));
        double m = 1.0 + (double)(tu_next(&r) >> 11) * 0x1p-53;
        double x = ldexp(m, e);
        if (t == FZ_F32 && !isfinite((float)x))
            x = FLT_MAX;
        if (!isfinite(x))
            x = DBL_MAX;
        vl_push(v, (tu_next(&r) & 1) ? -x : x);
    }
}

static void group_ranges(void) {
    const double abs_b[] = {1e-30, 1e-3, 1e3, 1e30};
    const double rel_b[] = {1e-12, 1e-3, 0.25};
    for (int ti = 0; ti < 2; ti++) {
        const fz_dtype t = dtypes[ti];
        const size_t n = tu_chunk_values(t) + 333;
        vlist full = vl_make(t), half = vl_make(t);
        random_wide(&full, t, n, t == FZ_F32 ? 127 : 1023, 5);
        random_wide(&half, t, n, t == FZ_F32 ? 127 : 1022, 6);
        for (int b = 0; b < 4; b++) {
            tu_context("ranges %s ABS %g", tu_dtype_name(t), abs_b[b]);
            lossy_case(t, full.data, full.n, FZ_MODE_ABS, abs_b[b]);
        }
        for (int b = 0; b < 3; b++) {
            tu_context("ranges %s REL %g", tu_dtype_name(t), rel_b[b]);
            lossy_case(t, half.data, half.n, FZ_MODE_REL, rel_b[b]);
        }
        /* smooth data riding on a huge offset next to tiny values */
        vlist mix = vl_make(t);
        for (size_t i = 0; i < n; i++)
            vl_push(&mix, i % 3 ? 1e30 + 1e24 * sin((double)i * 0.01)
                                : 1e-30 * cos((double)i));
        tu_context("ranges %s huge offset", tu_dtype_name(t));
        lossy_case(t, mix.data, mix.n, FZ_MODE_ABS, 1e20);
        lossy_case(t, mix.data, mix.n, FZ_MODE_REL, 1e-9);
        vl_free(&mix);
        vl_free(&full);
        vl_free(&half);
    }
}

/* REL on f64 data whose max - min exceeds DBL_MAX: the absolute bound is
 * bound x (max - min) as a real number, so it must not become huge just
 * because max - min overflows in double. */
static void group_rel_overflow(void) {
    const double rel[] = {1e-300, 1e-100, 1e-10, 0.25};
    vlist v = vl_make(FZ_F64);
    vl_push(&v, -DBL_MAX);
    vl_push(&v, DBL_MAX);
    for (int i = 0; i < 200; i++)
        vl_push(&v, ldexp(sin(i * 0.7), (i * 37) % 2000 - 1000));
    for (int b = 0; b < 4; b++) {
        tu_context("REL, f64, max - min above DBL_MAX, bound %g", rel[b]);
        lossy_case(FZ_F64, v.data, v.n, FZ_MODE_REL, rel[b]);
    }
    vl_free(&v);
    cases_run++;
}

/* Tiny, huge and power-of-two bounds; 0 and -0.0. */
static void group_bounds(void) {
    for (int ti = 0; ti < 2; ti++) {
        const fz_dtype t = dtypes[ti];
        const size_t n = tu_chunk_values(t) + 3;
        void *src = tu_xmalloc(n * tu_dtype_size(t));
        tu_fill(TU_GEN_MIXED, t, src, n, 11);
        const double tiny_t = t == FZ_F32 ? 0x1p-149 : DBL_TRUE_MIN;
        const struct {
            double bound, eff; /* eff < 0: not fixed here */
        } cases[] = {
            {1e-30, 0x1p-100},
            {tiny_t, tiny_t},
            {3 * tiny_t, 2 * tiny_t},
            /* below the smallest subnormal of f32: lossless */
            {t == FZ_F32 ? 0x1.fffffp-150 : 0x1p-1074,
             t == FZ_F32 ? 0.0 : 0x1p-1074},
            {t == FZ_F32 ? 1e-46 : 1e-323, t == FZ_F32 ? 0.0 : 0x1p-1073},
            {t == FZ_F32 ? 1e-300 : 3e-324, t == FZ_F32 ? 0.0 : 0x1p-1074},
            {1e30, 0x1p99},
            {1e300, t == FZ_F32 ? 0x1p103 : 0x1p970},
            {DBL_MAX, t == FZ_F32 ? 0x1p103 : 0x1p970},
            {0x1p-20, 0x1p-20},
            {nextafter(0x1p-20, 0), 0x1p-21},
            {nextafter(0x1p-20, 1), 0x1p-20},
            {1.0, 1.0},
            {nextafter(1.0, 0), 0.5},
            {nextafter(1.0, 2), 1.0},
            {0x1p10, 0x1p10},
            {nextafter(0x1p10, 0), 0x1p9},
            {nextafter(0x1p10, 1e9), 0x1p10},
            {0.0, 0.0},
            {-0.0, 0.0},
        };
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
            tu_context("bounds %s ABS %.17g", tu_dtype_name(t), cases[c].bound);
            CHECK(lossy_case(t, src, n, FZ_MODE_ABS, cases[c].bound) ==
                  cases[c].eff);
        }
        /* REL (on data whose max - min is about 2^21): bound 0 and -0.0
         * are lossless, and so is a bound that times the range is finer
         * than float32's smallest subnormal */
        tu_fill(TU_GEN_WAVE, t, src, n, 12);
        for (int z = 0; z < 2; z++) {
            tu_context("bounds %s REL %g", tu_dtype_name(t), z ? -0.0 : 0.0);
            CHECK(lossy_case(t, src, n, FZ_MODE_REL, z ? -0.0 : 0.0) == 0.0);
        }
        tu_context("bounds %s REL DBL_TRUE_MIN", tu_dtype_name(t));
        const double eff = lossy_case(t, src, n, FZ_MODE_REL, DBL_TRUE_MIN);
        CHECK(t == FZ_F64 || eff == 0.0);
        tu_context("bounds %s REL DBL_MAX", tu_dtype_name(t));
        CHECK(lossy_case(t, src, n, FZ_MODE_REL, DBL_MAX) ==
              ldexp(1.0, kmax_of(t)));
        free(src);
    }
}

/* Special values (every NaN kind, infinities, zeros, subnormals, extremes)
 * alone and mixed with ordinary values and random NaN payloads and
 * subnormals, under small and huge bounds. */
static void special_values(vlist *v, fz_dtype t, int with_finite) {
    tu_rng r = tu_rng_make(99);
    const uint32_t *s32;
    const uint64_t *s64;
    const size_t ns = t == FZ_F32 ? tu_special32(&s32) : tu_special64(&s64);
    for (int rep = 0; rep < 3; rep++)
        for (size_t i = 0; i < ns; i++)
            vl_push_bits(v, t == FZ_F32 ? s32[i] : s64[i]);
    for (int i = 0; i < 300; i++) {
        const uint64_t x = tu_next(&r);
        const uint64_t sign =
            (x & 1) ? (t == FZ_F32 ? 0x80000000u : 1ull << 63) : 0;
        if (t == FZ_F32) {
            const uint32_t mant = (uint32_t)(x >> 9) & 0x7FFFFFu;
            vl_push_bits(v, sign | 0x7F800000u | (mant ? mant : 1)); /* NaN */
            vl_push_bits(v, sign | (mant ? mant : 1)); /* subnormal */
        } else {
            const uint64_t mant = (x >> 12) ? (x >> 12) : 1;
            vl_push_bits(v, sign | 0x7FF0000000000000ull | mant);
            vl_push_bits(v, sign | mant);
        }
        if (with_finite)
            vl_push(v, sin(i * 0.3) * 100);
    }
}

static void group_special(void) {
    const double bounds[] = {1e-3, 1.0, 1e30, DBL_MAX};
    for (int ti = 0; ti < 2; ti++) {
        const fz_dtype t = dtypes[ti];
        for (int wf = 0; wf < 2; wf++) {
            vlist v = vl_make(t);
            special_values(&v, t, wf);
            for (int b = 0; b < 4; b++)
                for (int mi = 0; mi < 2; mi++) {
                    tu_context("special %s %s %s bound %g", tu_dtype_name(t),
                               wf ? "mixed" : "only", mode_name(modes[mi]),
                               bounds[b]);
                    lossy_case(t, v.data, v.n, modes[mi], bounds[b]);
                }
            vl_free(&v);
        }
        /* no finite value at all: REL has range 0, stored lossless */
        vlist nan = vl_make(t);
        for (int i = 0; i < 100; i++)
            vl_push_bits(&nan, t == FZ_F32
                                   ? 0x7FC00000u + (uint32_t)i
                                   : 0xFFF8000000000000ull + (uint64_t)i);
        vl_push(&nan, INFINITY);
        vl_push(&nan, -INFINITY);
        tu_context("special %s NaN and inf only", tu_dtype_name(t));
        CHECK(lossy_case(t, nan.data, nan.n, FZ_MODE_REL, 0.1) == 0.0);
        lossy_case(t, nan.data, nan.n, FZ_MODE_ABS, 0.1);
        vl_free(&nan);
    }
}

/* Constant arrays: REL stores them lossless (range 0), also with NaN and
 * infinities among them; ABS keeps them within the bound. */
static void group_constant(void) {
    const double values[] = {3.14159, -2.5e-3, 0.0, -0.0, 1e-40, 1e30, 7.0};
    for (int ti = 0; ti < 2; ti++) {
        const fz_dtype t = dtypes[ti];
        for (size_t c = 0; c < sizeof values / sizeof values[0]; c++) {
            const size_t n = tu_chunk_values(t) + 9;
            vlist v = vl_make(t);
            for (size_t i = 0; i < n; i++)
                vl_push(&v, values[c]);
            tu_context("constant %s %g", tu_dtype_name(t), values[c]);
            CHECK(lossy_case(t, v.data, v.n, FZ_MODE_REL, 0.01) == 0.0);
            CHECK(lossy_case(t, v.data, v.n, FZ_MODE_REL, DBL_MAX) == 0.0);
            lossy_case(t, v.data, v.n, FZ_MODE_ABS, 1e-3);
            lossy_case(t, v.data, v.n, FZ_MODE_ABS, 10.0);
            for (size_t i = 0; i < n; i += 97)
                memcpy(v.data + i * tu_dtype_size(t),
                       t == FZ_F32 ? (const void *)&(float){NAN}
                                   : (const void *)&(double){-INFINITY},
                       tu_dtype_size(t));
            tu_context("constant %s %g with non-finite", tu_dtype_name(t),
                       values[c]);
            CHECK(lossy_case(t, v.data, v.n, FZ_MODE_REL, 0.5) == 0.0);
            vl_free(&v);
        }
    }
}

/* Sizes around subchunk and chunk boundaries, and a 3-D shape. */
static void group_sizes(void) {
    for (int ti = 0; ti < 2; ti++) {
        const fz_dtype t = dtypes[ti];
        const size_t c = tu_chunk_values(t);
        const size_t sizes[] = {0,     1,         2,         3,         31,
                                127,   128,       129,       c - 1,     c,
                                c + 1, 2 * c - 1, 2 * c + 1, 5 * c + 17};
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
            const size_t n = sizes[s];
            void *src = tu_xmalloc(n * tu_dtype_size(t));
            tu_fill(TU_GEN_WAVE, t, src, n, 3 + n);
            for (int mi = 0; mi < 2; mi++) {
                tu_context("sizes %s n=%zu %s", tu_dtype_name(t), n,
                           mode_name(modes[mi]));
                const double eff =
                    lossy_case(t, src, n, modes[mi],
                               modes[mi] == FZ_MODE_ABS ? 1e-2 : 1e-4);
                if (n <= 1 && modes[mi] == FZ_MODE_REL)
                    CHECK(eff == 0.0); /* no range */
            }
            free(src);
        }
        const uint64_t dims[] = {17, 9, 5};
        void *src = tu_xmalloc(17 * 9 * 5 * tu_dtype_size(t));
        tu_fill(TU_GEN_MIXED, t, src, 17 * 9 * 5, 4);
        for (int mi = 0; mi < 2; mi++) {
            tu_context("sizes %s 3-D %s", tu_dtype_name(t),
                       mode_name(modes[mi]));
            fz_params p = lossy_params(t, 1, modes[mi], 1e-3);
            CHECK_OK(fz_params_set_shape(&p, 3, dims));
            lossy_run r = lossy_check(&p, src);
            lossy_free(&r);
        }
        free(src);
    }
}

/* Streams do not depend on the thread count (REL's range included), nor
 * decoded values on the decoder's. Several batches of chunks. */
static void group_determinism(void) {
    for (int ti = 0; ti < 2; ti++) {
        const fz_dtype t = dtypes[ti];
        const size_t n = 50 * tu_chunk_values(t) + 13;
        const size_t bytes = n * tu_dtype_size(t);
        void *src = tu_xmalloc(bytes);
        for (int mi = 0; mi < 2; mi++) {
            /* REL: data without +-DBL_MAX, for a bound that matters */
            tu_fill(modes[mi] == FZ_MODE_ABS ? TU_GEN_MIXED : TU_GEN_WAVE, t,
                    src, n, 21);
            tu_context("determinism %s %s", tu_dtype_name(t),
                       mode_name(modes[mi]));
            fz_params p = lossy_params(t, n, modes[mi],
                                       modes[mi] == FZ_MODE_ABS ? 1e-3 : 1e-6);
            p.threads = 1;
            lossy_run one = lossy_check(&p, src);
            const int32_t others[] = {3, 0};
            for (int k = 0; k < 2; k++) {
                p.threads = others[k];
                size_t size = 0;
                uint8_t *s = tu_compress(&p, src, &size);
                CHECK_EQ_U64(size, one.size);
                CHECK(memcmp(s, one.stream.data, size) == 0);
                free(s);
            }
            const int32_t dthreads[] = {1, 3};
            for (int k = 0; k < 2; k++) {
                size_t got = 0;
                fz_decode_options o = tu_decode_opts(dthreads[k], 0);
                void *out = tu_xmalloc(bytes);
                CHECK_OK(fz_decompress(one.stream.data, one.size, out, bytes,
                                       &o, &got));
                CHECK(memcmp(out, one.out.data, bytes) == 0);
                free(out);
            }
            lossy_free(&one);
        }
        free(src);
    }
}

/* Statuses a corruption at byte pos may give, by region of the stream. */
static int status_fits_region(fz_status st, size_t pos, const fz_info *info) {
    const size_t table_end = FZ_HEADER_BYTES + (size_t)info->chunk_count * 8;
    if (pos < FZ_HEADER_BYTES)
        return st == FZ_ERR_BAD_MAGIC || st == FZ_ERR_HEADER_CHECKSUM ||
               st == FZ_ERR_FORMAT_VERSION || st == FZ_ERR_CORRUPT_HEADER;
    if (pos < table_end)
        return st == FZ_ERR_TABLE_CHECKSUM || st == FZ_ERR_CORRUPT_HEADER ||
               st == FZ_ERR_CORRUPT_CHUNK;
    if (pos < info->payload_offset)
        return st == FZ_ERR_CORRUPT_HEADER;
    return st == FZ_ERR_CORRUPT_CHUNK || st == FZ_ERR_DATA_CHECKSUM;
}

/* Every truncation fails; every byte at the given positions xor'ed with
 * each mask either fails with a status fitting the region or decodes
 * exactly what the intact stream decodes. */
static void corruption_case(const fz_params *p, const void *src,
                            size_t stride) {
    lossy_run r = lossy_check(p, src);
    const size_t bytes = r.out.capacity;
    fz_info info;
    CHECK_OK(fz_inspect(r.stream.data, r.size, &info));
    CHECK(info.has_checksums);
    tu_buf dst = tu_buf_alloc(bytes);
    size_t got = 0;
    const fz_decode_options o = tu_decode_opts(1, 0);
    for (size_t len = 0; len < r.size; len += len < 300 ? 1 : stride) {
        uint8_t *part = (uint8_t *)tu_xmalloc(len);
        memcpy(part, r.stream.data, len);
        CHECK_ERROR(fz_decompress(part, len, dst.data, bytes, &o, &got));
        CHECK(tu_guard_intact(&dst));
        free(part);
    }
    const uint8_t masks[] = {0x01, 0x02, 0x04, 0x08, 0x10,
                             0x20, 0x40, 0x80, 0xFF, 0x5A};
    uint8_t *copy = (uint8_t *)tu_xmalloc(r.size);
    memcpy(copy, r.stream.data, r.size);
    for (size_t pos = 0; pos < r.size;
         pos += pos < info.payload_offset + 64 ? 1 : stride) {
        for (size_t m = 0; m < sizeof masks; m++) {
            copy[pos] ^= masks[m];
            fz_status st =
                fz_decompress(copy, r.size, dst.data, bytes, &o, &got);
            copy[pos] ^= masks[m];
            CHECK(tu_guard_intact(&dst));
            if (st == FZ_OK) {
                CHECK(memcmp(dst.data, r.out.data, bytes) == 0);
            } else if (!status_fits_region(st, pos, &info)) {
                fprintf(stderr, "byte %zu ^ 0x%02X -> status %d (%s)\n", pos,
                        masks[m], (int)st, fz_status_string(st));
                tu_fail(__FILE__, __LINE__, "status_fits_region",
                        "unexpected status for the corrupted region");
            }
        }
    }
    free(copy);
    tu_buf_free(&dst);
    lossy_free(&r);
}

static void group_corruption(void) {
    for (int ti = 0; ti < 2; ti++) {
        const fz_dtype t = dtypes[ti];
        for (int mi = 0; mi < 2; mi++) {
            /* small: every byte */
            const size_t n = t == FZ_F32 ? 300 : 150;
            void *src = tu_xmalloc(n * tu_dtype_size(t));
            tu_fill(TU_GEN_MIXED, t, src, n, 31);
            tu_context("corruption %s %s n=%zu", tu_dtype_name(t),
                       mode_name(modes[mi]), n);
            fz_params p = lossy_params(t, n, modes[mi],
                                       modes[mi] == FZ_MODE_ABS ? 1e-2 : 1e-3);
            corruption_case(&p, src, 1);
            free(src);
            /* two chunks, the first incompressible (stored verbatim: its
             * reconstruction), the second encoded; strided */
            const size_t n2 = tu_chunk_values(t) + 500;
            void *src2 = tu_xmalloc(n2 * tu_dtype_size(t));
            tu_fill(TU_GEN_PATCHWORK, t, src2, n2, 32);
            tu_context("corruption %s %s patchwork n=%zu", tu_dtype_name(t),
                       mode_name(modes[mi]), n2);
            p = lossy_params(t, n2, modes[mi],
                             modes[mi] == FZ_MODE_ABS ? 1e-30 : 1e-25);
            corruption_case(&p, src2, 61);
            free(src2);
            cases_run++;
        }
    }
}

/* Streams of the older codec versions (as earlier builds wrote them:
 * version 1 hashes the decoded bytes, version 2 the payloads) still decode
 * to the same values, and a wrong checksum is still caught. Two chunks:
 * the first verbatim, the second encoded. */
static void old_version_case(const lossy_run *r, uint32_t version,
                             const char *what) {
    tu_context("version %u %s", version, what);
    const size_t bytes = r->out.capacity;
    uint8_t *old = (uint8_t *)tu_xmalloc(r->size);
    memcpy(old, r->stream.data, r->size);
    tu_sleek_to_version(old, r->size, r->out.data, version);
    const size_t sum1 = FZ_HEADER_BYTES + 8 + 4; /* chunk 1's */
    CHECK(memcmp(old + sum1, r->stream.data + sum1, 4) != 0);
    fz_info info;
    CHECK_OK(fz_inspect(old, r->size, &info));
    CHECK_EQ_U64(info.codec_version, version);
    tu_buf dst = tu_buf_alloc(bytes);
    size_t got = 0;
    const fz_decode_options o = tu_decode_opts(2, 0);
    CHECK_OK(fz_decompress(old, r->size, dst.data, bytes, &o, &got));
    CHECK(memcmp(dst.data, r->out.data, bytes) == 0);
    old[r->size - 1] ^= 0x40; /* in chunk 1's last subchunk */
    const fz_status st = fz_decompress(old, r->size, dst.data, bytes, &o, &got);
    CHECK(st == FZ_ERR_DATA_CHECKSUM || st == FZ_ERR_CORRUPT_CHUNK);
    /* the current version's checksums, read as the old version's, are
     * wrong */
    memcpy(old, r->stream.data, r->size);
    fz_header h;
    memset(&h, 0, sizeof h);
    CHECK_EQ_U64(fz_header_parse(old, r->size, &h), FZS_OK);
    CHECK_EQ_U64(h.codec_version, 3);
    h.codec_version = version;
    fz_header_write(&h, old);
    CHECK_STATUS(fz_decompress(old, r->size, dst.data, bytes, &o, &got),
                 FZ_ERR_DATA_CHECKSUM);
    free(old);
    tu_buf_free(&dst);
}

static void group_old_versions(void) {
    for (int ti = 0; ti < 2; ti++) {
        for (int mi = 0; mi < 3; mi++) {
            const fz_dtype t = dtypes[ti];
            const size_t n = tu_chunk_values(t) + 700;
            void *src = tu_xmalloc(n * tu_dtype_size(t));
            tu_fill(TU_GEN_PATCHWORK, t, src, n, 41);
            fz_params p =
                mi == 2 ? tu_params(t, n, 0)
                        : lossy_params(t, n, modes[mi],
                                       modes[mi] == FZ_MODE_ABS ? 1e-2 : 1e-3);
            tu_context("old versions %s %s", tu_dtype_name(t),
                       mi == 2 ? "lossless" : mode_name(modes[mi]));
            lossy_run r = lossy_check(&p, src);
            char what[64];
            snprintf(what, sizeof what, "%s %s", tu_dtype_name(t),
                     mi == 2 ? "lossless" : mode_name(modes[mi]));
            for (uint32_t v = 1; v <= 2; v++) {
                old_version_case(&r, v, what);
                cases_run++;
            }
            lossy_free(&r);
            free(src);
        }
    }
}

/* Negative, NaN and infinite bounds are invalid arguments everywhere. */
static void group_invalid(void) {
    const double bad[] = {-1.0,     -DBL_TRUE_MIN, -1e-300, -DBL_MAX,
                          INFINITY, -INFINITY,     NAN,     -NAN};
    float src[64] = {0};
    uint8_t dst[2048];
    for (int ti = 0; ti < 2; ti++) {
        for (int mi = 0; mi < 2; mi++) {
            for (size_t b = 0; b < sizeof bad / sizeof bad[0]; b++) {
                const fz_dtype t = dtypes[ti];
                const size_t n = t == FZ_F32 ? 64 : 32;
                tu_context("invalid %s %s bound %g", tu_dtype_name(t),
                           mode_name(modes[mi]), bad[b]);
                fz_params p = lossy_params(t, n, modes[mi], bad[b]);
                size_t size = 0, bound = 0;
                uint64_t count = 0;
                CHECK_STATUS(
                    fz_compress(&p, src, sizeof src, dst, sizeof dst, &size),
                    FZ_ERR_INVALID_ARGUMENT);
                CHECK_STATUS(fz_compress_bound(&p, &bound),
                             FZ_ERR_INVALID_ARGUMENT);
                CHECK_STATUS(fz_params_count(&p, &count, NULL),
                             FZ_ERR_INVALID_ARGUMENT);
                cases_run++;
            }
        }
    }
    tu_context("invalid lossless mode with a bound");
    fz_params p = tu_params(FZ_F32, 64, 0);
    p.bound = 1e-3;
    size_t size = 0;
    CHECK_STATUS(fz_compress(&p, src, sizeof src, dst, sizeof dst, &size),
                 FZ_ERR_INVALID_ARGUMENT);
}

static const tu_group groups[] = {
    {"generators", group_generators},
    {"threshold", group_threshold},
    {"powers", group_powers},
    {"ranges", group_ranges},
    {"rel_overflow", group_rel_overflow},
    {"bounds", group_bounds},
    {"special", group_special},
    {"constant", group_constant},
    {"sizes", group_sizes},
    {"determinism", group_determinism},
    {"corruption", group_corruption},
    {"old_versions", group_old_versions},
    {"invalid", group_invalid},
};

int main(int argc, char **argv) {
    return tu_run_groups(argc, argv, "test_lossy", groups,
                         sizeof groups / sizeof groups[0], &cases_run, NULL);
}
