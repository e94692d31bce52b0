/*
 * fzgen - deterministic synthetic float32/float64 data for floatz tests and
 * benchmarks. Run `fzgen --help` for the options.
 *
 * Determinism
 *   Every random number comes from splitmix64 (Steele, Lea, Flood 2014):
 *     state += 0x9E3779B97F4A7C15;
 *     z = state;
 *     z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9;
 *     z = (z ^ (z >> 27)) * 0x94D049BB133111EB;
 *     return z ^ (z >> 31);
 *   Output number i of a stream whose state starts at K is therefore
 *   mix(K + (i + 1) * 0x9E3779B97F4A7C15), computable without the i - 1
 *   outputs before it. Each family takes a key K = output number TAG of the
 *   stream seeded with the -s seed and uses output i of K for value i (or as
 *   the start state of value i's own little stream): the bytes never depend
 *   on the thread count or on the order the threads run in.
 *   Floating-point work uses only +, -, *, / and sqrt (all correctly rounded
 *   in IEEE-754) in a fixed order; sine, cosine, log and exp are this file's
 *   own polynomials, not libm's. Built with -ffp-contract=off (no FMA
 *   contraction) on an IEEE-754 binary64 machine (x86-64 SSE2, AArch64, ...)
 *   the output is the same bytes everywhere, so small outputs can serve as
 *   golden files. Values are written little-endian whatever the host.
 *
 * Families (-k)
 *   smooth3d    Gaussian random field: the sum of M (-m, default 256) Fourier
 *               modes cos(2 pi (kx x/NX + ky y/NY + kz z/NZ) + phase) with
 *               integer wave numbers (so the field is periodic on the grid),
 *               spatial frequency f = |(kx/NX, ky/NY, kz/NZ)| drawn
 *               log-uniformly between 1/max(NX,NY,NZ) and 1/8 cycles per
 *               cell, a uniformly random direction and phase, and amplitude
 *               (f/fmin)^(-alpha/2) (-a, default 3.7). Normalised to unit
 *               variance, then mapped to 285 + 10 g: a temperature-like
 *               field in kelvin, about 250..320.
 *   turbulence  The same field with alpha = 11/3 (Kolmogorov) and frequencies
 *               up to 1/4 cycles per cell, times an intermittency factor
 *               exp(0.6 h - 0.18), h a second unit-variance field of 64
 *               small-scale modes (1/32..1/4 cycles per cell, alpha 1);
 *               mapped to 4 g exp(...): a velocity component in m/s,
 *               mean 0.
 *   particles   -n N particles in a periodic box [0,100)^3, written as
 *               x,y,z,vx,vy,vz interleaved per particle (6 N values). One
 *               particle in 8 is uniform background with velocity
 *               dispersion 50; the others belong to one of H = N/2000
 *               (1..65536) halos (halo floor(H u^2), u uniform: the first
 *               halos are the most massive), with Gaussian offsets of the
 *               halo's radius (0.05..0.5) around its centre, and velocity =
 *               halo bulk velocity (dispersion 250) + Gaussian of
 *               dispersion 100 + 1200 radius.
 *   timeseries  A random walk in integer units of 10^-D (-D, default 2
 *               decimals) starting at 100: each step is 0 (3/8), +-1..4
 *               units (39/64) or +-5..100 units (1/64). Value = units / 10^D
 *               as one correctly rounded division (in binary32 for f32 while
 *               |units| < 2^24, else in binary64), i.e. what a decimal
 *               parser gives for the printed decimal.
 *   random      Every value a uniformly random bit pattern (NaNs included).
 *   constant    Every value -c VALUE (default 273.15).
 *   special     A mix of +-0, +-inf, quiet and signalling NaNs with random
 *               payloads and signs, subnormals, edge values (smallest and
 *               largest subnormal and normal, +-1) and random normal values.
 *
 * Shapes: -n N (1-D) or -3 NX NY NZ (NX fastest). Output: raw values, no
 * header, written to a temporary file in the target's directory and renamed
 * into place; an existing file is replaced only with -f.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifdef _OPENMP
#include <omp.h>
#endif

/* ------------------------------------------------------------ splitmix64 */
#define SM_GAMMA 0x9E3779B97F4A7C15u

static uint64_t sm_mix(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    return z ^ (z >> 31);
}

/* Output number i (0-based) of the stream whose state starts at key. */
static uint64_t sm_at(uint64_t key, uint64_t i) {
    return sm_mix(key + (i + 1) * SM_GAMMA);
}

typedef struct rng {
    uint64_t s;
} rng;

static uint64_t rng_next(rng *r) {
    r->s += SM_GAMMA;
    return sm_mix(r->s);
}

/* Uniform in [0, 1) with 53 random bits. */
static double rng_unit(rng *r) {
    return (double)(rng_next(r) >> 11) * 0x1.0p-53;
}

/* Uniform integer in [0, n), n <= 2^32 (multiply-shift, tiny bias). */
static uint64_t rng_below(rng *r, uint64_t n) {
    return ((rng_next(r) >> 32) * n) >> 32;
}

/* Stream tags: one independent key per use. */
enum {
    TAG_MODES = 1,
    TAG_INTERMITTENCY = 2,
    TAG_HALOS = 3,
    TAG_PARTICLES = 4,
    TAG_WALK = 5,
    TAG_RANDOM = 6,
    TAG_SPECIAL = 7
};

/* ----------------------------------------------- deterministic functions */
#define PI_D 3.14159265358979323846
#define LN2_D 0.69314718055994530942
#define SQRT2_D 1.41421356237309504880

static double det_floor(double y) { /* |y| < 2^62 */
    double t = (double)(int64_t)y;
    return t > y ? t - 1.0 : t;
}

/* sin and cos on [0, pi/4]: Taylor polynomials, error below 1e-16. */
static double poly_sin(double x) {
    double x2 = x * x;
    double p = 1.0 / 355687428096000.0;
    p = -1.0 / 1307674368000.0 + x2 * p;
    p = 1.0 / 6227020800.0 + x2 * p;
    p = -1.0 / 39916800.0 + x2 * p;
    p = 1.0 / 362880.0 + x2 * p;
    p = -1.0 / 5040.0 + x2 * p;
    p = 1.0 / 120.0 + x2 * p;
    p = -1.0 / 6.0 + x2 * p;
    return x + x * x2 * p;
}

static double poly_cos(double x) {
    double x2 = x * x;
    double p = 1.0 / 20922789888000.0;
    p = -1.0 / 87178291200.0 + x2 * p;
    p = 1.0 / 479001600.0 + x2 * p;
    p = -1.0 / 3628800.0 + x2 * p;
    p = 1.0 / 40320.0 + x2 * p;
    p = -1.0 / 720.0 + x2 * p;
    p = 1.0 / 24.0 + x2 * p;
    p = -1.0 / 2.0 + x2 * p;
    return 1.0 + x2 * p;
}

/* cos and sin of 2 pi j / n, 0 <= j < n < 2^52: the reduction to an octant
 * is exact integer arithmetic. */
static void sincos_frac(uint64_t j, uint64_t n, double *c, double *s) {
    const uint64_t q = 4 * j / n; /* quadrant, 0..3 */
    uint64_t r = 4 * j - q * n;   /* 0 <= r < n */
    int swap = 2 * r > n;
    if (swap)
        r = n - r;
    double a = (PI_D / 2.0) * ((double)r / (double)n); /* [0, pi/4] */
    double cs = poly_cos(a), sn = poly_sin(a);
    if (swap) {
        double t = cs;
        cs = sn;
        sn = t;
    }
    switch (q & 3) {
    case 0: *c = cs, *s = sn; break;
    case 1: *c = -sn, *s = cs; break;
    case 2: *c = -cs, *s = -sn; break;
    default: *c = sn, *s = -cs; break;
    }
}

/* (a * b) mod n without overflow, a, b < n. */
static uint64_t mulmod(uint64_t a, uint64_t b, uint64_t n) {
    if (a < ((uint64_t)1 << 32) && b < ((uint64_t)1 << 32))
        return a * b % n;
    uint64_t r = 0;
    while (b) {
        if (b & 1)
            r = r >= n - a ? r - (n - a) : r + a;
        a = a >= n - a ? a - (n - a) : a + a;
        b >>= 1;
    }
    return r;
}

/* cos and sin of 2 pi k x / n for an integer wave number k. */
static void wave(int64_t k, uint64_t x, uint64_t n, double *c, double *s) {
    int64_t km = k % (int64_t)n;
    uint64_t ku = (uint64_t)(km < 0 ? km + (int64_t)n : km);
    sincos_frac(mulmod(ku, x % n, n), n, c, s);
}

/* Natural log of a positive normal double. */
static double det_log(double x) {
    uint64_t b;
    memcpy(&b, &x, sizeof b);
    int e = (int)((b >> 52) & 0x7FF) - 1023;
    b = (b & 0x000FFFFFFFFFFFFFu) | 0x3FF0000000000000u;
    double m;
    memcpy(&m, &b, sizeof m); /* [1, 2) */
    if (m > SQRT2_D) {
        m *= 0.5;
        e++;
    }
    double s = (m - 1.0) / (m + 1.0), s2 = s * s; /* |s| < 0.172 */
    double p = 2.0 / 23.0;
    for (int k = 21; k >= 1; k -= 2)
        p = 2.0 / (double)k + s2 * p;
    return (double)e * LN2_D + s * p;
}

/* e^x for |x| < 700. ln 2 is split in two (the high part has 11 trailing
 * zero bits, so k * LN2_HI is exact). */
#define LN2_HI 6.93147180369123816490e-01
#define LN2_LO 1.90821492927058770002e-10
static double det_exp(double x) {
    double k = det_floor(x / LN2_D + 0.5);
    double r = (x - k * LN2_HI) - k * LN2_LO; /* |r| <= 0.35 */
    double p = 1.0;
    for (int i = 14; i >= 1; i--)
        p = 1.0 + r * p / (double)i;
    uint64_t b = (uint64_t)((int64_t)k + 1023) << 52;
    double scale;
    memcpy(&scale, &b, sizeof scale);
    return p * scale;
}

/* Standard normal pair (Marsaglia's polar method). */
static void rng_gauss2(rng *r, double *g0, double *g1) {
    double u, v, s;
    do {
        u = 2.0 * rng_unit(r) - 1.0;
        v = 2.0 * rng_unit(r) - 1.0;
        s = u * u + v * v;
    } while (s >= 1.0 || s < 0x1.0p-40);
    double f = sqrt(-2.0 * det_log(s) / s);
    *g0 = u * f;
    *g1 = v * f;
}

static void rng_gauss3(rng *r, double g[3]) {
    double spare;
    rng_gauss2(r, &g[0], &g[1]);
    rng_gauss2(r, &g[2], &spare);
}

/* --------------------------------------------------------- configuration */
typedef enum kind {
    K_SMOOTH3D,
    K_TURBULENCE,
    K_PARTICLES,
    K_TIMESERIES,
    K_RANDOM,
    K_CONSTANT,
    K_SPECIAL
} kind;

static const char *const kind_names[] = {
    "smooth3d", "turbulence", "particles", "timeseries",
    "random",   "constant",   "special"};
#define NKINDS (sizeof kind_names / sizeof kind_names[0])

typedef struct config {
    kind k;
    int esize;  /* 4 or 8 */
    int shape3; /* -3 given */
    uint64_t n[3];
    uint64_t count; /* values in the output */
    uint64_t seed;
    double alpha;
    int alpha_set;
    int modes;
    int digits;
    double constant;
    int threads; /* 0 = OpenMP default */
    int force, verbose;
    const char *out;
} config;

static int nthreads(const config *c) {
#ifdef _OPENMP
    return c->threads > 0 ? c->threads : omp_get_max_threads();
#else
    (void)c;
    return 1;
#endif
}

/* Little-endian stores of value i of the output buffer. */
static void put32(uint8_t *buf, uint64_t i, uint32_t v) {
    uint8_t *p = buf + 4 * i;
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

static void put64(uint8_t *buf, uint64_t i, uint64_t v) {
    put32(buf, 2 * i, (uint32_t)v);
    put32(buf, 2 * i + 1, (uint32_t)(v >> 32));
}

static void put_f32(uint8_t *buf, uint64_t i, float f) {
    uint32_t b;
    memcpy(&b, &f, sizeof b);
    put32(buf, i, b);
}

static void put_value(uint8_t *buf, uint64_t i, double v, int esize) {
    if (esize == 4) {
        put_f32(buf, i, (float)v);
    } else {
        uint64_t b;
        memcpy(&b, &v, sizeof b);
        put64(buf, i, b);
    }
}

/* ----------------------------------------------------- Fourier-mode field */
#define XBLOCK 128u            /* x values per table block */
#define SEGMENT (32u * XBLOCK) /* x values per work item */

typedef struct modeset {
    int m;
    int64_t *k;      /* 3 m integer wave numbers */
    double *pr, *pi; /* amplitude * e^(i phase), scaled to unit variance */
    double *xc, *xs; /* [m][XBLOCK]: cos, sin of 2 pi kx j / NX */
    double *bc, *bs; /* [m][nblocks]: block starts, or NULL: on the fly */
} modeset;

typedef struct field {
    uint64_t n[3];
    uint64_t nblocks; /* x blocks per row */
    modeset base, inter;
    int has_inter;
    int turbulence;
} field;

static void modeset_free(modeset *s) {
    free(s->k);
    free(s->pr);
    free(s->pi);
    free(s->xc);
    free(s->xs);
    free(s->bc);
    free(s->bs);
    memset(s, 0, sizeof *s);
}

/* Draw m modes with frequencies log-uniform in [fmin, fmax] cycles per cell
 * and amplitudes (f / fmin)^(-alpha / 2). */
static int modeset_init(modeset *s, const field *f, uint64_t key, int m,
                        double fmin, double fmax, double alpha) {
    memset(s, 0, sizeof *s);
    s->m = m;
    s->k = (int64_t *)malloc(sizeof(int64_t) * 3 * (size_t)m);
    s->pr = (double *)malloc(sizeof(double) * (size_t)m);
    s->pi = (double *)malloc(sizeof(double) * (size_t)m);
    s->xc = (double *)malloc(sizeof(double) * XBLOCK * (size_t)m);
    s->xs = (double *)malloc(sizeof(double) * XBLOCK * (size_t)m);
    if (!s->k || !s->pr || !s->pi || !s->xc || !s->xs)
        return -1;
    if (fmax < fmin)
        fmax = fmin;
    const double lmin = det_log(fmin), lmax = det_log(fmax);
    int longest = 0;
    for (int d = 1; d < 3; d++)
        if (f->n[d] > f->n[longest])
            longest = d;
    rng r = {key};
    double var = 0.0;
    for (int i = 0; i < m; i++) {
        int64_t *k = s->k + 3 * i;
        double f2 = 0.0;
        for (int attempt = 0; f2 == 0.0; attempt++) {
            double freq = det_exp(lmin + rng_unit(&r) * (lmax - lmin));
            double g[3], norm2 = 0.0;
            rng_gauss3(&r, g);
            for (int d = 0; d < 3; d++) {
                if (f->n[d] == 1)
                    g[d] = 0.0;
                norm2 += g[d] * g[d];
            }
            f2 = 0.0;
            for (int d = 0; d < 3; d++) {
                double kd = 0.0;
                if (norm2 > 0.0) {
                    double want = freq * g[d] / sqrt(norm2) * (double)f->n[d];
                    double half = (double)(f->n[d] / 2);
                    kd = det_floor(want + 0.5);
                    kd = kd > half ? half : kd < -half ? -half : kd;
                }
                if (attempt >= 1000) /* degenerate shape: fundamental mode */
                    kd = d == longest && f->n[d] > 1 ? 1.0 : 0.0;
                k[d] = (int64_t)kd;
                double fd = kd / (double)f->n[d];
                f2 += fd * fd;
            }
            if (attempt >= 1000 && f2 == 0.0) { /* a single value */
                f2 = fmin * fmin;
                break;
            }
        }
        double amp = det_exp(-0.5 * alpha * det_log(sqrt(f2) / fmin));
        double c, sn;
        sincos_frac(rng_next(&r) >> 32, (uint64_t)1 << 32, &c, &sn);
        s->pr[i] = amp * c;
        s->pi[i] = amp * sn;
        var += 0.5 * amp * amp;
    }
    const double scale = 1.0 / sqrt(var);
    for (int i = 0; i < m; i++) {
        s->pr[i] *= scale;
        s->pi[i] *= scale;
        for (uint32_t j = 0; j < XBLOCK; j++)
            wave(s->k[3 * i], j, f->n[0], &s->xc[i * XBLOCK + j],
                 &s->xs[i * XBLOCK + j]);
    }
    /* Block-start factors: tabulated unless the table would be large. */
    if (f->nblocks * (uint64_t)m <= ((uint64_t)1 << 19)) {
        size_t cnt = (size_t)(f->nblocks * (uint64_t)m);
        s->bc = (double *)malloc(sizeof(double) * cnt);
        s->bs = (double *)malloc(sizeof(double) * cnt);
        if (!s->bc || !s->bs)
            return -1;
        for (int i = 0; i < m; i++)
            for (uint64_t b = 0; b < f->nblocks; b++)
                wave(s->k[3 * i], b * XBLOCK, f->n[0],
                     &s->bc[(size_t)i * f->nblocks + b],
                     &s->bs[(size_t)i * f->nblocks + b]);
    }
    return 0;
}

/* Per-thread state: the current row's mode factors. */
typedef struct row_cache {
    uint64_t y, z;
    int valid_z, valid_y;
    double *zr, *zi; /* P * e^(i kz z): per mode, both sets */
    double *wr, *wi; /* P * e^(i (ky y + kz z)) */
    double acc[XBLOCK], acc2[XBLOCK];
} row_cache;

static void row_factors(const field *f, const modeset *s, uint64_t y,
                        uint64_t z, int new_z, double *zr, double *zi,
                        double *wr, double *wi) {
    for (int i = 0; i < s->m; i++) {
        double c, sn;
        if (new_z) {
            wave(s->k[3 * i + 2], z, f->n[2], &c, &sn);
            zr[i] = s->pr[i] * c - s->pi[i] * sn;
            zi[i] = s->pr[i] * sn + s->pi[i] * c;
        }
        wave(s->k[3 * i + 1], y, f->n[1], &c, &sn);
        wr[i] = zr[i] * c - zi[i] * sn;
        wi[i] = zr[i] * sn + zi[i] * c;
    }
}

/* Factor of mode i for x block blk: w_i * e^(i 2 pi kx x0 / NX). */
static void block_factor(const field *f, const modeset *s, const double *wr,
                         const double *wi, int i, uint64_t blk, double *vr,
                         double *vi) {
    double c, sn;
    if (s->bc) {
        c = s->bc[(size_t)i * f->nblocks + blk];
        sn = s->bs[(size_t)i * f->nblocks + blk];
    } else {
        wave(s->k[3 * i], blk * XBLOCK, f->n[0], &c, &sn);
    }
    *vr = wr[i] * c - wi[i] * sn;
    *vi = wr[i] * sn + wi[i] * c;
}

/* acc[0..nb) = sum over modes, in mode order, of
 * Re(v_i * e^(i 2 pi kx j / NX)). Four modes per pass over acc (fewer loads
 * and stores); the additions stay in mode order, so the result is the same
 * as one mode per pass. */
static void field_block(const field *f, const modeset *s, const double *wr,
                        const double *wi, uint64_t blk, uint32_t nb,
                        double *acc) {
    for (uint32_t j = 0; j < nb; j++)
        acc[j] = 0.0;
    int i = 0;
    for (; i + 4 <= s->m; i += 4) {
        double vr[4], vi[4];
        for (int q = 0; q < 4; q++)
            block_factor(f, s, wr, wi, i + q, blk, &vr[q], &vi[q]);
        const double *c0 = s->xc + (size_t)i * XBLOCK,
                     *s0 = s->xs + (size_t)i * XBLOCK;
        const double *c1 = c0 + XBLOCK, *s1 = s0 + XBLOCK;
        const double *c2 = c1 + XBLOCK, *s2 = s1 + XBLOCK;
        const double *c3 = c2 + XBLOCK, *s3 = s2 + XBLOCK;
        for (uint32_t j = 0; j < nb; j++) {
            double a = acc[j];
            a += vr[0] * c0[j] - vi[0] * s0[j];
            a += vr[1] * c1[j] - vi[1] * s1[j];
            a += vr[2] * c2[j] - vi[2] * s2[j];
            a += vr[3] * c3[j] - vi[3] * s3[j];
            acc[j] = a;
        }
    }
    for (; i < s->m; i++) {
        double vr, vi;
        block_factor(f, s, wr, wi, i, blk, &vr, &vi);
        const double *xc = s->xc + (size_t)i * XBLOCK;
        const double *xs = s->xs + (size_t)i * XBLOCK;
        for (uint32_t j = 0; j < nb; j++)
            acc[j] += vr * xc[j] - vi * xs[j];
    }
}

/* Values of row `row`, x in [x0, x0 + len), into out[0..len). */
static void field_segment(const field *f, row_cache *rc, uint64_t row,
                          uint64_t x0, uint64_t len, uint8_t *out, int esize) {
    const uint64_t y = row % f->n[1], z = row / f->n[1];
    const int new_z = !rc->valid_z || rc->z != z;
    if (new_z || !rc->valid_y || rc->y != y) {
        const int mb = f->base.m;
        row_factors(f, &f->base, y, z, new_z, rc->zr, rc->zi, rc->wr, rc->wi);
        if (f->has_inter)
            row_factors(f, &f->inter, y, z, new_z, rc->zr + mb, rc->zi + mb,
                        rc->wr + mb, rc->wi + mb);
        rc->z = z;
        rc->y = y;
        rc->valid_z = rc->valid_y = 1;
    }
    for (uint64_t x = x0; x < x0 + len; x += XBLOCK) {
        const uint32_t nb =
            (uint32_t)(x0 + len - x < XBLOCK ? x0 + len - x : XBLOCK);
        field_block(f, &f->base, rc->wr, rc->wi, x / XBLOCK, nb, rc->acc);
        if (f->has_inter) {
            const int mb = f->base.m;
            field_block(f, &f->inter, rc->wr + mb, rc->wi + mb, x / XBLOCK, nb,
                        rc->acc2);
        }
        for (uint32_t j = 0; j < nb; j++) {
            double v;
            if (f->turbulence)
                v = 4.0 * rc->acc[j] * det_exp(0.6 * rc->acc2[j] - 0.18);
            else
                v = 285.0 + 10.0 * rc->acc[j];
            put_value(out, x - x0 + j, v, esize);
        }
    }
}

static int field_init(field *f, const config *c) {
    memset(f, 0, sizeof *f);
    for (int d = 0; d < 3; d++)
        f->n[d] = c->n[d];
    f->nblocks = (f->n[0] + XBLOCK - 1) / XBLOCK;
    uint64_t nmax = f->n[0];
    for (int d = 1; d < 3; d++)
        if (f->n[d] > nmax)
            nmax = f->n[d];
    const double fmin = 1.0 / (double)(nmax > 1 ? nmax : 2);
    f->turbulence = c->k == K_TURBULENCE;
    const double alpha = c->alpha_set    ? c->alpha
                         : f->turbulence ? 11.0 / 3.0
                                         : 3.7;
    const double fmax = f->turbulence ? 0.25 : 0.125;
    if (modeset_init(&f->base, f, sm_at(c->seed, TAG_MODES), c->modes, fmin,
                     fmax, alpha) != 0)
        return -1;
    if (f->turbulence) {
        f->has_inter = 1;
        double lo = 1.0 / 32.0 > fmin ? 1.0 / 32.0 : fmin;
        if (modeset_init(&f->inter, f, sm_at(c->seed, TAG_INTERMITTENCY), 64,
                         lo, 0.25, 1.0) != 0)
            return -1;
    }
    return 0;
}

static void field_free(field *f) {
    modeset_free(&f->base);
    modeset_free(&f->inter);
}

/* ------------------------------------------------------------- particles */
#define BOX 100.0

typedef struct halo {
    double c[3], v[3];
    double radius, sigma;
} halo;

static halo *halos_make(uint64_t seed, uint64_t nparticles, uint64_t *nh) {
    uint64_t h = nparticles / 2000;
    h = h < 1 ? 1 : h > 65536 ? 65536 : h;
    halo *hs = (halo *)malloc(sizeof(halo) * (size_t)h);
    if (!hs)
        return NULL;
    const uint64_t key = sm_at(seed, TAG_HALOS);
    for (uint64_t i = 0; i < h; i++) {
        rng r = {sm_at(key, i)};
        for (int d = 0; d < 3; d++)
            hs[i].c[d] = BOX * rng_unit(&r);
        double u = rng_unit(&r);
        hs[i].radius = 0.05 + 0.45 * u * u;
        hs[i].sigma = 100.0 + 1200.0 * hs[i].radius;
        rng_gauss3(&r, hs[i].v);
        for (int d = 0; d < 3; d++)
            hs[i].v[d] *= 250.0;
    }
    *nh = h;
    return hs;
}

static double wrap_box(double x) {
    double w = x - BOX * det_floor(x / BOX);
    return w >= BOX || w < 0.0 ? 0.0 : w;
}

static void particle(const halo *hs, uint64_t nh, uint64_t key, uint64_t p,
                     double out[6]) {
    rng r = {sm_at(key, p)};
    double g[3], gv[3];
    if (rng_below(&r, 8) == 0) {
        for (int d = 0; d < 3; d++)
            out[d] = BOX * rng_unit(&r);
        rng_gauss3(&r, gv);
        for (int d = 0; d < 3; d++)
            out[3 + d] = 50.0 * gv[d];
        return;
    }
    double u = rng_unit(&r);
    uint64_t h = (uint64_t)(u * u * (double)nh); /* low halos heavier */
    if (h >= nh)
        h = nh - 1;
    const halo *hh = &hs[h];
    rng_gauss3(&r, g);
    rng_gauss3(&r, gv);
    for (int d = 0; d < 3; d++) {
        out[d] = wrap_box(hh->c[d] + hh->radius * g[d]);
        out[3 + d] = hh->v[d] + hh->sigma * gv[d];
    }
}

/* ------------------------------------------------------------ timeseries */
#define WALK_BLOCK 65536u

static int64_t walk_step(uint64_t key, uint64_t i) {
    uint64_t r = sm_at(key, i);
    uint64_t c = r & 63;
    int64_t sign = (r >> 6) & 1 ? -1 : 1;
    if (c < 24)
        return 0;
    if (c < 63)
        return sign * (int64_t)((r >> 8) % 4 + 1);
    return sign * (int64_t)((r >> 8) % 96 + 5);
}

static int64_t pow10_i(int d) {
    int64_t p = 1;
    while (d-- > 0)
        p *= 10;
    return p;
}

static void put_decimal(uint8_t *buf, uint64_t i, int64_t units, int digits,
                        int esize) {
    const int64_t scale = pow10_i(digits);
    const int64_t lim = (int64_t)1 << 24;
    if (esize == 4 && units < lim && units > -lim)
        put_f32(buf, i, (float)units / (float)scale);
    else if (esize == 4)
        put_f32(buf, i, (float)((double)units / (double)scale));
    else
        put_value(buf, i, (double)units / (double)scale, esize);
}

/* --------------------------------------------------------- special values */
static void special_value(uint8_t *buf, uint64_t i, uint64_t key, int esize) {
    const uint64_t r = sm_at(key, 2 * i), b = sm_at(key, 2 * i + 1);
    const unsigned cat = (unsigned)(r >> 60); /* 0..15 */
    const int w = esize * 8, mbits = esize == 4 ? 23 : 52;
    const uint64_t sign = (uint64_t)1 << (w - 1);
    const uint64_t emax = esize == 4 ? 0xFF : 0x7FF;
    const uint64_t mmask = ((uint64_t)1 << mbits) - 1;
    const uint64_t quiet = (uint64_t)1 << (mbits - 1);
    const uint64_t rs = (r & 1) ? sign : 0;
    uint64_t v;
    switch (cat) {
    case 0: v = 0; break;
    case 1: v = sign; break;
    case 2: v = emax << mbits; break;
    case 3: v = sign | emax << mbits; break;
    case 4:
    case 5: /* quiet NaN, random payload */
        v = rs | emax << mbits | quiet | (b & mmask);
        break;
    case 6: { /* signalling NaN: quiet bit clear, payload nonzero */
        uint64_t pl = b & (quiet - 1);
        v = rs | emax << mbits | (pl ? pl : 1);
        break;
    }
    case 7:
    case 8: { /* subnormal */
        uint64_t m = b & mmask;
        v = rs | (m ? m : 1);
        break;
    }
    case 9: { /* edge values */
        const uint64_t one = (emax >> 1) << mbits;
        const uint64_t big = (emax - 1) << mbits | mmask;
        /* smallest and largest subnormal, smallest normal, largest
         * finite, 1, -1, -smallest subnormal, -largest finite */
        const uint64_t edge[8] = {1,        mmask,     (uint64_t)1 << mbits,
                                  big,      one,       sign | one,
                                  sign | 1, sign | big};
        v = edge[b & 7];
        break;
    }
    default: { /* random normal value */
        uint64_t e = 1 + (b >> 40) % (emax - 1);
        v = rs | e << mbits | (b & mmask);
        break;
    }
    }
    if (esize == 4)
        put32(buf, i, (uint32_t)v);
    else
        put64(buf, i, v);
}

/* --------------------------------------------------------------- output */
typedef struct sink {
    FILE *fp;
    char *tmp;
    uint64_t written;
} sink;

static int sink_write(sink *s, const uint8_t *buf, size_t bytes) {
    if (bytes && fwrite(buf, 1, bytes, s->fp) != bytes)
        return -1;
    s->written += bytes;
    return 0;
}

/* Values per output slab (the buffer the threads fill between writes). */
#define SLAB_VALUES ((uint64_t)1 << 22)

/* smooth3d, turbulence. Work items are segments of up to SEGMENT x values
 * of one row, in output order; a slab is a run of consecutive items. */
static int gen_field(const config *c, int nt, uint8_t *buf, sink *out) {
    field f;
    memset(&f, 0, sizeof f);
    row_cache *caches = (row_cache *)calloc((size_t)nt, sizeof *caches);
    int rc = caches && field_init(&f, c) == 0 ? 0 : -1;
    const size_t per = (size_t)(f.base.m + f.inter.m);
    for (int t = 0; rc == 0 && t < nt; t++) {
        caches[t].zr = (double *)malloc(sizeof(double) * 4 * per);
        if (!caches[t].zr)
            rc = -1;
        else {
            caches[t].zi = caches[t].zr + per;
            caches[t].wr = caches[t].zi + per;
            caches[t].wi = caches[t].wr + per;
        }
    }
    const uint64_t nx = c->n[0];
    const uint64_t segs_per_row = (nx + SEGMENT - 1) / SEGMENT;
    const uint64_t nseg = segs_per_row * c->n[1] * c->n[2];
    const uint64_t per_slab = SLAB_VALUES / (nx < SEGMENT ? nx : SEGMENT);
    for (uint64_t s0 = 0; rc == 0 && s0 < nseg; s0 += per_slab) {
        const uint64_t s1 = s0 + per_slab < nseg ? s0 + per_slab : nseg;
        /* output index of segment s: row * nx + x0 */
        const uint64_t first =
            s0 / segs_per_row * nx + s0 % segs_per_row * SEGMENT;
        const uint64_t last_x0 = (s1 - 1) % segs_per_row * SEGMENT;
        const uint64_t end = (s1 - 1) / segs_per_row * nx + last_x0 +
                             (nx - last_x0 < SEGMENT ? nx - last_x0 : SEGMENT);
#pragma omp parallel for num_threads(nt) schedule(dynamic, 1)
        for (int64_t s = (int64_t)s0; s < (int64_t)s1; s++) {
#ifdef _OPENMP
            row_cache *rcache = &caches[omp_get_thread_num()];
#else
            row_cache *rcache = &caches[0];
#endif
            const uint64_t row = (uint64_t)s / segs_per_row;
            const uint64_t x0 = (uint64_t)s % segs_per_row * SEGMENT;
            const uint64_t len = nx - x0 < SEGMENT ? nx - x0 : SEGMENT;
            const uint64_t idx = row * nx + x0 - first;
            field_segment(&f, rcache, row, x0, len, buf + idx * c->esize,
                          c->esize);
        }
        if (sink_write(out, buf, (size_t)((end - first) * c->esize)))
            rc = -2;
    }
    for (int t = 0; caches && t < nt; t++)
        free(caches[t].zr);
    free(caches);
    field_free(&f);
    return rc;
}

static int gen_particles(const config *c, int nt, uint8_t *buf, sink *out) {
    (void)nt; /* unused without OpenMP */
    const uint64_t np = c->count / 6;
    uint64_t nh = 0;
    halo *hs = halos_make(c->seed, np, &nh);
    if (!hs)
        return -1;
    const uint64_t key = sm_at(c->seed, TAG_PARTICLES);
    const uint64_t per = SLAB_VALUES / 6;
    int rc = 0;
    for (uint64_t p0 = 0; rc == 0 && p0 < np; p0 += per) {
        const uint64_t p1 = p0 + per < np ? p0 + per : np;
#pragma omp parallel for num_threads(nt) schedule(static)
        for (int64_t p = (int64_t)p0; p < (int64_t)p1; p++) {
            double v[6];
            particle(hs, nh, key, (uint64_t)p, v);
            for (int d = 0; d < 6; d++)
                put_value(buf, ((uint64_t)p - p0) * 6 + (uint64_t)d, v[d],
                          c->esize);
        }
        if (sink_write(out, buf, (size_t)((p1 - p0) * 6 * c->esize)))
            rc = -2;
    }
    free(hs);
    return rc;
}

/* Values [v0, v1) of the walk; *carry is the position at value v0 - 1 and
 * becomes the one at v1 - 1. Value i = 100 + steps 1..i, in 10^-D units. */
static void walk_slab(const config *c, int nt, uint64_t v0, uint64_t v1,
                      int64_t *carry, uint8_t *buf) {
    (void)nt;
    const uint64_t key = sm_at(c->seed, TAG_WALK);
    int64_t start[SLAB_VALUES / WALK_BLOCK];
    const int64_t nb = (int64_t)((v1 - v0 + WALK_BLOCK - 1) / WALK_BLOCK);
#pragma omp parallel for num_threads(nt) schedule(static)
    for (int64_t b = 0; b < nb; b++) {
        const uint64_t i0 = v0 + (uint64_t)b * WALK_BLOCK;
        const uint64_t i1 = i0 + WALK_BLOCK < v1 ? i0 + WALK_BLOCK : v1;
        int64_t sum = 0;
        for (uint64_t i = i0; i < i1; i++)
            sum += i ? walk_step(key, i) : 0;
        start[b] = sum;
    }
    for (int64_t b = 0; b < nb; b++) { /* exclusive prefix sum */
        const int64_t t = start[b];
        start[b] = *carry;
        *carry += t;
    }
#pragma omp parallel for num_threads(nt) schedule(static)
    for (int64_t b = 0; b < nb; b++) {
        const uint64_t i0 = v0 + (uint64_t)b * WALK_BLOCK;
        const uint64_t i1 = i0 + WALK_BLOCK < v1 ? i0 + WALK_BLOCK : v1;
        int64_t u = start[b];
        for (uint64_t i = i0; i < i1; i++) {
            u += i ? walk_step(key, i) : 0;
            put_decimal(buf, i - v0, u, c->digits, c->esize);
        }
    }
}

/* timeseries, random, constant, special: value by value. */
static int gen_values(const config *c, int nt, uint8_t *buf, sink *out) {
    (void)nt;
    const uint64_t rnd_key = sm_at(c->seed, TAG_RANDOM);
    const uint64_t spc_key = sm_at(c->seed, TAG_SPECIAL);
    const int esize = c->esize;
    int64_t carry = 100 * pow10_i(c->digits);
    for (uint64_t v0 = 0; v0 < c->count; v0 += SLAB_VALUES) {
        const uint64_t v1 =
            v0 + SLAB_VALUES < c->count ? v0 + SLAB_VALUES : c->count;
        const int64_t n = (int64_t)(v1 - v0);
        switch (c->k) {
        case K_TIMESERIES: walk_slab(c, nt, v0, v1, &carry, buf); break;
        case K_RANDOM:
#pragma omp parallel for num_threads(nt) schedule(static)
            for (int64_t i = 0; i < n; i++) {
                uint64_t r = sm_at(rnd_key, v0 + (uint64_t)i);
                if (esize == 4)
                    put32(buf, (uint64_t)i, (uint32_t)r);
                else
                    put64(buf, (uint64_t)i, r);
            }
            break;
        case K_CONSTANT:
#pragma omp parallel for num_threads(nt) schedule(static)
            for (int64_t i = 0; i < n; i++)
                put_value(buf, (uint64_t)i, c->constant, esize);
            break;
        default: /* K_SPECIAL */
#pragma omp parallel for num_threads(nt) schedule(static)
            for (int64_t i = 0; i < n; i++)
                special_value(buf, (uint64_t)i, spc_key, esize);
            break;
        }
        if (sink_write(out, buf, (size_t)n * (size_t)esize))
            return -2;
    }
    return 0;
}

/* 0, -1 out of memory, -2 write error. */
static int generate(const config *c, sink *out) {
    if (c->count == 0)
        return 0;
    uint8_t *buf = (uint8_t *)malloc((size_t)SLAB_VALUES * 8);
    if (!buf)
        return -1;
    const int nt = nthreads(c);
    int rc;
    if (c->k == K_SMOOTH3D || c->k == K_TURBULENCE)
        rc = gen_field(c, nt, buf, out);
    else if (c->k == K_PARTICLES)
        rc = gen_particles(c, nt, buf, out);
    else
        rc = gen_values(c, nt, buf, out);
    free(buf);
    return rc;
}

/* ----------------------------------------------------------- command line */
static void usage(FILE *fp) {
    fprintf(
        fp,
        "usage: fzgen -k KIND (-n N | -3 NX NY NZ) -o FILE [options]\n"
        "\n"
        "Writes deterministic synthetic data as raw little-endian values.\n"
        "\n"
        "  -k KIND      smooth3d | turbulence | particles | timeseries |\n"
        "               random | constant | special\n"
        "  -t TYPE      f32 (default) or f64\n"
        "  -n N         1-D shape of N values (particles: N particles, 6 N\n"
        "               values x,y,z,vx,vy,vz per particle); suffix k, M or G\n"
        "               multiplies by 2^10, 2^20 or 2^30\n"
        "  -3 NX NY NZ  3-D shape, NX fastest (not for particles)\n"
        "  -o FILE      output file (written to a temporary file, then\n"
        "               renamed into place)\n"
        "  -f           replace FILE if it exists\n"
        "  -s SEED      seed of the splitmix64 generator (default 1)\n"
        "  -a ALPHA     spectral slope (smooth3d: 3.7, turbulence: 11/3)\n"
        "  -m MODES     Fourier modes (smooth3d, turbulence; default 256)\n"
        "  -D DIGITS    timeseries decimal digits, 0..9 (default 2)\n"
        "  -c VALUE     constant value (default 273.15)\n"
        "  -j THREADS   OpenMP threads (default: all; output is the same)\n"
        "  -v           print a summary to stderr\n"
        "  -h, --help   this text\n"
        "\n"
        "Families:\n"
        "  smooth3d    Gaussian random field: random Fourier modes with\n"
        "              power-law amplitudes f^(-alpha/2), periodic on the\n"
        "              grid, mapped to 285 + 10 g (temperature-like, about\n"
        "              250..320 K)\n"
        "  turbulence  alpha 11/3 field times a small-scale lognormal\n"
        "              intermittency factor (velocity-like, m/s, mean 0)\n"
        "  particles   clustered positions in a periodic box [0,100)^3 and\n"
        "              Maxwellian velocities per halo\n"
        "  timeseries  random walk with D decimal digits (value = integer /\n"
        "              10^D, correctly rounded)\n"
        "  random      uniformly random bit patterns (NaNs included)\n"
        "  constant    every value -c VALUE\n"
        "  special     NaNs with payloads, +-0, +-inf, subnormals, edge and\n"
        "              normal values\n"
        "\n"
        "Same options, same bytes, on every IEEE-754 machine and for any\n"
        "thread count. Prints nothing on success without -v.\n");
}

static int parse_u64(const char *s, uint64_t *v, int suffix) {
    if (!s || !*s || *s == '-' || *s == '+')
        return -1;
    char *end;
    errno = 0;
    unsigned long long x = strtoull(s, &end, 0);
    if (errno || end == s)
        return -1;
    uint64_t mul = 1;
    if (suffix && *end) {
        if (*end == 'k' || *end == 'K')
            mul = (uint64_t)1 << 10;
        else if (*end == 'M')
            mul = (uint64_t)1 << 20;
        else if (*end == 'G')
            mul = (uint64_t)1 << 30;
        else
            return -1;
        end++;
    }
    if (*end || (x && (uint64_t)x > UINT64_MAX / mul))
        return -1;
    *v = (uint64_t)x * mul;
    return 0;
}

static int parse_double(const char *s, double *v) {
    if (!s || !*s)
        return -1;
    char *end;
    errno = 0;
    double x = strtod(s, &end);
    if (end == s || *end)
        return -1;
    *v = x;
    return 0;
}

static int parse_int(const char *s, int lo, int hi, int *v) {
    uint64_t x;
    if (parse_u64(s, &x, 0) || x < (uint64_t)lo || x > (uint64_t)hi)
        return -1;
    *v = (int)x;
    return 0;
}

static int bad_usage(const char *msg, const char *arg) {
    fprintf(stderr, "fzgen: %s%s%s\nTry 'fzgen --help'.\n", msg,
            arg ? ": " : "", arg ? arg : "");
    return 2;
}

static int parse_args(int argc, char **argv, config *c) {
    memset(c, 0, sizeof *c);
    c->k = (kind)-1;
    c->esize = 4;
    c->seed = 1;
    c->modes = 256;
    c->digits = 2;
    c->constant = 273.15;
    int have_n = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 1;
        } else if (!strcmp(a, "-f")) {
            c->force = 1;
        } else if (!strcmp(a, "-v")) {
            c->verbose = 1;
        } else if (!strcmp(a, "-k")) {
            size_t j = 0;
            while (v && j < NKINDS && strcmp(v, kind_names[j]))
                j++;
            if (!v || j == NKINDS)
                return bad_usage("unknown kind", v);
            c->k = (kind)j;
            i++;
        } else if (!strcmp(a, "-t")) {
            if (v && !strcmp(v, "f32"))
                c->esize = 4;
            else if (v && !strcmp(v, "f64"))
                c->esize = 8;
            else
                return bad_usage("type must be f32 or f64", v);
            i++;
        } else if (!strcmp(a, "-n")) {
            if (parse_u64(v, &c->n[0], 1))
                return bad_usage("bad count", v);
            c->n[1] = c->n[2] = 1;
            c->shape3 = 0;
            have_n = 1;
            i++;
        } else if (!strcmp(a, "-3")) {
            if (i + 3 >= argc)
                return bad_usage("-3 needs NX NY NZ", NULL);
            for (int d = 0; d < 3; d++)
                if (parse_u64(argv[i + 1 + d], &c->n[d], 1))
                    return bad_usage("bad dimension", argv[i + 1 + d]);
            c->shape3 = 1;
            have_n = 1;
            i += 3;
        } else if (!strcmp(a, "-o")) {
            if (!v)
                return bad_usage("-o needs a file name", NULL);
            c->out = v;
            i++;
        } else if (!strcmp(a, "-s")) {
            if (parse_u64(v, &c->seed, 0))
                return bad_usage("bad seed", v);
            i++;
        } else if (!strcmp(a, "-a")) {
            if (parse_double(v, &c->alpha) || !(c->alpha >= 0.0) ||
                c->alpha > 20.0)
                return bad_usage("alpha must be in 0..20", v);
            c->alpha_set = 1;
            i++;
        } else if (!strcmp(a, "-m")) {
            if (parse_int(v, 1, 4096, &c->modes))
                return bad_usage("modes must be in 1..4096", v);
            i++;
        } else if (!strcmp(a, "-D")) {
            if (parse_int(v, 0, 9, &c->digits))
                return bad_usage("digits must be in 0..9", v);
            i++;
        } else if (!strcmp(a, "-c")) {
            if (parse_double(v, &c->constant))
                return bad_usage("bad constant", v);
            i++;
        } else if (!strcmp(a, "-j")) {
            if (parse_int(v, 1, 4096, &c->threads))
                return bad_usage("threads must be in 1..4096", v);
            i++;
        } else {
            return bad_usage("unknown option", a);
        }
    }
    if ((int)c->k < 0)
        return bad_usage("missing -k KIND", NULL);
    if (!have_n)
        return bad_usage("missing -n N or -3 NX NY NZ", NULL);
    if (!c->out)
        return bad_usage("missing -o FILE", NULL);
    if (c->k == K_PARTICLES && c->shape3)
        return bad_usage("particles takes -n PARTICLES", NULL);
    /* Total values, and a bound that keeps every index computation exact. */
    const uint64_t limit = (uint64_t)1 << 50;
    uint64_t count = c->k == K_PARTICLES ? 6 : 1;
    for (int d = 0; d < 3; d++) {
        if (c->n[d] > limit || (c->n[d] && count > limit / c->n[d]))
            return bad_usage("shape too large", NULL);
        count *= c->n[d];
    }
    c->count = count;
    return 0;
}

/* Publish tmp as path: without force, never replace an existing file. */
static int publish(const char *tmp, const char *path, int force) {
    if (force)
        return rename(tmp, path);
    if (link(tmp, path) == 0)
        return unlink(tmp);
    if (errno == EEXIST)
        return -1;
    /* File systems without hard links: check, then rename. */
    struct stat st;
    if (stat(path, &st) == 0) {
        errno = EEXIST;
        return -1;
    }
    return rename(tmp, path);
}

int main(int argc, char **argv) {
    config c;
    int prc = parse_args(argc, argv, &c);
    if (prc)
        return prc == 1 ? 0 : prc;

    struct stat st;
    if (!c.force && stat(c.out, &st) == 0) {
        fprintf(stderr, "fzgen: %s exists (use -f to replace it)\n", c.out);
        return 1;
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);

    sink out = {0};
    size_t plen = strlen(c.out);
    out.tmp = (char *)malloc(plen + 16);
    if (!out.tmp) {
        fprintf(stderr, "fzgen: out of memory\n");
        return 1;
    }
    memcpy(out.tmp, c.out, plen);
    memcpy(out.tmp + plen, ".tmp.XXXXXX", 12);
    int fd = mkstemp(out.tmp);
    if (fd < 0) {
        fprintf(stderr, "fzgen: cannot create a file next to %s: %s\n", c.out,
                strerror(errno));
        free(out.tmp);
        return 1;
    }
    mode_t mask = umask(0);
    umask(mask);
    fchmod(fd, (mode_t)(0666 & ~mask));
    out.fp = fdopen(fd, "wb");
    if (!out.fp) {
        close(fd);
        unlink(out.tmp);
        free(out.tmp);
        fprintf(stderr, "fzgen: cannot open %s\n", c.out);
        return 1;
    }

    int grc = generate(&c, &out);
    int werr = ferror(out.fp) != 0;
    if (fclose(out.fp) != 0)
        werr = 1;
    if (grc == -1 || grc == -2 || werr) {
        fprintf(stderr, "fzgen: %s\n",
                grc == -1 ? "out of memory" : "write error");
        unlink(out.tmp);
        free(out.tmp);
        return 1;
    }
    if (publish(out.tmp, c.out, c.force) != 0) {
        fprintf(stderr, "fzgen: cannot write %s: %s\n", c.out, strerror(errno));
        unlink(out.tmp);
        free(out.tmp);
        return 1;
    }
    free(out.tmp);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (c.verbose) {
        double secs = (double)(t1.tv_sec - t0.tv_sec) +
                      (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
        fprintf(stderr,
                "fzgen: %s %s %llu x %llu x %llu (%llu values, %llu bytes) "
                "seed %llu -> %s in %.2f s (%.1f MB/s, %d threads)\n",
                kind_names[c.k], c.esize == 4 ? "f32" : "f64",
                (unsigned long long)c.n[0], (unsigned long long)c.n[1],
                (unsigned long long)c.n[2], (unsigned long long)c.count,
                (unsigned long long)out.written, (unsigned long long)c.seed,
                c.out, secs, secs > 0 ? (double)out.written / secs / 1e6 : 0.0,
                nthreads(&c));
    }
    return 0;
}
