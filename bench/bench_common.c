/* Shared pieces of the benchmark programs: see bench_common.h. */
#define _POSIX_C_SOURCE 200809L

#include "bench_common.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int fail(char *err, size_t errlen, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

void *fzb_aligned_alloc(size_t bytes) {
    void *p = NULL;
    if (posix_memalign(&p, 64, bytes ? bytes : 64) != 0)
        return NULL;
    return p;
}

double fzb_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int read_file(const char *path, char **buf, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    size_t cap = 1 << 20, n = 0;
    char *b = (char *)malloc(cap + 1);
    while (b) {
        size_t got = fread(b + n, 1, cap - n, f);
        n += got;
        if (n < cap)
            break;
        char *nb = (char *)realloc(b, 2 * cap + 1);
        if (!nb) {
            free(b);
            b = NULL;
            break;
        }
        b = nb;
        cap *= 2;
    }
    int bad = ferror(f) != 0;
    fclose(f);
    if (!b || bad) {
        free(b);
        return -1;
    }
    b[n] = '\0';
    *buf = b;
    *len = n;
    return 0;
}

static int ends_with(const char *s, const char *suffix) {
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

/* One number per line; blank lines are skipped. */
static int parse_text(char *text, size_t len, fzb_dataset *d, const char *path,
                      char *err, size_t errlen) {
    const size_t esize = d->dtype == FZ_F32 ? 4 : 8;
    uint64_t lines = 1;
    for (size_t i = 0; i < len; i++)
        lines += text[i] == '\n';
    unsigned char *out = (unsigned char *)fzb_aligned_alloc(lines * esize);
    if (!out)
        return fail(err, errlen, "%s: out of memory", path);
    uint64_t n = 0, line_no = 0;
    char *end = text + len;
    for (char *p = text; p < end;) {
        char *nl = (char *)memchr(p, '\n', (size_t)(end - p));
        char *line_end = nl ? nl : end;
        *line_end = '\0';
        line_no++;
        char *q = p;
        while (q < line_end && isspace((unsigned char)*q))
            q++;
        if (q < line_end) {
            char *after;
            errno = 0;
            if (d->dtype == FZ_F32) {
                float v = strtof(q, &after);
                memcpy(out + n * esize, &v, esize);
            } else {
                double v = strtod(q, &after);
                memcpy(out + n * esize, &v, esize);
            }
            while (after < line_end && isspace((unsigned char)*after))
                after++;
            if (after == q || after != line_end) {
                free(out);
                return fail(err, errlen, "%s:%llu: not a number", path,
                            (unsigned long long)line_no);
            }
            n++;
        }
        p = line_end + 1;
    }
    d->data = out;
    d->count = n;
    return 0;
}

static int parse_shape(const char *s, fzb_dataset *d) {
    d->ndims = 1;
    d->dims[0] = d->dims[1] = d->dims[2] = 1;
    if (strcmp(s, "-") == 0) {
        d->dims[0] = 0; /* from the file */
        return 0;
    }
    int k = 0;
    const char *p = s;
    for (;;) {
        char *end;
        if (!isdigit((unsigned char)*p) || k == 3)
            return -1;
        unsigned long long v = strtoull(p, &end, 10);
        if (v == 0)
            return -1;
        d->dims[k++] = v;
        if (*end == '\0')
            break;
        if (*end != 'x')
            return -1;
        p = end + 1;
    }
    if (k == 2)
        return -1;
    d->ndims = (uint32_t)k;
    return 0;
}

int fzb_load(const char *spec, fzb_dataset *d, char *err, size_t errlen) {
    memset(d, 0, sizeof *d);
    const char *c1 = strchr(spec, ':');
    const char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
    const char *c3 = c2 ? strchr(c2 + 1, ':') : NULL;
    if (!c3 || c1 == spec || (size_t)(c1 - spec) >= sizeof d->name)
        return fail(err, errlen, "bad dataset spec '%s' (NAME:TYPE:SHAPE:PATH)",
                    spec);
    memcpy(d->name, spec, (size_t)(c1 - spec));
    char type[8] = {0}, shape[64] = {0};
    if ((size_t)(c2 - c1 - 1) >= sizeof type ||
        (size_t)(c3 - c2 - 1) >= sizeof shape)
        return fail(err, errlen, "bad dataset spec '%s'", spec);
    memcpy(type, c1 + 1, (size_t)(c2 - c1 - 1));
    memcpy(shape, c2 + 1, (size_t)(c3 - c2 - 1));
    const char *path = c3 + 1;
    if (strcmp(type, "f32") == 0)
        d->dtype = FZ_F32;
    else if (strcmp(type, "f64") == 0)
        d->dtype = FZ_F64;
    else
        return fail(err, errlen, "%s: type must be f32 or f64", spec);
    if (parse_shape(shape, d) != 0)
        return fail(err, errlen, "%s: bad shape '%s'", spec, shape);
    const size_t esize = d->dtype == FZ_F32 ? 4 : 8;
    char *buf;
    size_t len;
    if (read_file(path, &buf, &len) != 0)
        return fail(err, errlen, "cannot read %s", path);
    const int text = ends_with(path, ".csv") || ends_with(path, ".txt");
    if (text) {
        int rc = parse_text(buf, len, d, path, err, errlen);
        free(buf);
        if (rc != 0)
            return rc;
        snprintf(d->source, sizeof d->source, "text parsed to %s", type);
    } else {
        if (len % esize != 0) {
            free(buf);
            return fail(err, errlen, "%s: %zu bytes is not a multiple of %zu",
                        path, len, esize);
        }
        d->count = len / esize;
        d->data = fzb_aligned_alloc(len);
        if (!d->data) {
            free(buf);
            return fail(err, errlen, "%s: out of memory", path);
        }
        memcpy(d->data, buf, len);
        free(buf);
        snprintf(d->source, sizeof d->source, "raw %s", type);
    }
    if (d->dims[0] == 0)
        d->dims[0] = d->count;
    if (d->dims[0] * d->dims[1] * d->dims[2] != d->count || d->count == 0) {
        fzb_free(d);
        return fail(err, errlen, "%s: %llu values do not fit shape %s", path,
                    (unsigned long long)d->count, shape);
    }
    d->bytes = (size_t)d->count * esize;
    return 0;
}

void fzb_free(fzb_dataset *d) {
    free(d->data);
    d->data = NULL;
}

void fzb_shape_string(const fzb_dataset *d, char *buf, size_t len) {
    if (d->ndims == 3)
        snprintf(buf, len, "%llux%llux%llu", (unsigned long long)d->dims[0],
                 (unsigned long long)d->dims[1],
                 (unsigned long long)d->dims[2]);
    else
        snprintf(buf, len, "%llu", (unsigned long long)d->count);
}

static double value_at(fz_dtype dtype, const void *v, uint64_t i) {
    if (dtype == FZ_F32)
        return (double)((const float *)v)[i];
    return ((const double *)v)[i];
}

double fzb_finite_range(fz_dtype dtype, const void *v, uint64_t n) {
    double lo = INFINITY, hi = -INFINITY;
    for (uint64_t i = 0; i < n; i++) {
        double x = value_at(dtype, v, i);
        if (isfinite(x)) {
            lo = x < lo ? x : lo;
            hi = x > hi ? x : hi;
        }
    }
    return hi >= lo ? hi - lo : 0.0;
}

void fzb_check(fz_dtype dtype, const void *orig, const void *dec, uint64_t n,
               int lossless, double abs_bound, double range, int threads,
               fzb_errors *e) {
    const size_t esize = dtype == FZ_F32 ? 4 : 8;
    const unsigned char *o = (const unsigned char *)orig;
    const unsigned char *d = (const unsigned char *)dec;
    double max_err = 0.0, sq = 0.0;
    uint64_t bad = 0, finite = 0;
    if (threads < 1)
        threads = 1;
#pragma omp parallel for num_threads(threads) schedule(static)                 \
    reduction(max : max_err) reduction(+ : sq, bad, finite)
    for (int64_t i = 0; i < (int64_t)n; i++) {
        double a = value_at(dtype, orig, (uint64_t)i);
        double b = value_at(dtype, dec, (uint64_t)i);
        int same =
            memcmp(o + (size_t)i * esize, d + (size_t)i * esize, esize) == 0;
        if (lossless || !isfinite(a)) {
            bad += !same;
            if (isfinite(a) && isfinite(b)) {
                double err = fabs(b - a);
                max_err = err > max_err ? err : max_err;
                sq += err * err;
                finite++;
            }
            continue;
        }
        double err = fabs(b - a);
        if (!(err <= abs_bound))
            bad++;
        if (isfinite(err)) {
            max_err = err > max_err ? err : max_err;
            sq += err * err;
            finite++;
        } else {
            max_err = INFINITY;
        }
    }
    e->max_err = max_err;
    e->violations = bad;
    if (finite == 0 || sq == 0.0 || !(range > 0.0) || !isfinite(range))
        e->psnr = INFINITY;
    else
        e->psnr = 20.0 * log10(range) - 10.0 * log10(sq / (double)finite);
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double fzb_median(double *v, int n) {
    if (n <= 0)
        return 0.0;
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* ---------------------------------------------------------------- output */
void fzb_csv_header(FILE *f) {
    fprintf(f, "side,dataset,dtype,MiB,codec,mode,rel_bound,abs_bound,CR,"
               "comp_GBps,decomp_GBps,memcpy_GBps,comp_vs_memcpy,"
               "decomp_vs_memcpy,max_err,max_err_over_bound,psnr_dB,"
               "violations,measured,note\n");
}

static double ratio(double a, double b) {
    return a > 0 && b > 0 ? a / b : 0.0;
}

void fzb_csv_row(FILE *f, const fzb_row *r) {
    fprintf(f,
            "%s,%s,%s,%.3f,%s,%s,%.6g,%.9g,%.6g,%.6g,%.6g,%.6g,%.4f,%.4f,"
            "%.9g,%.6g,%.4g,%llu,%d,\"%s\"\n",
            r->side, r->dataset, r->dtype, r->mib, r->codec, r->mode, r->rel,
            r->abs_bound, r->cr, r->comp_gbs, r->decomp_gbs, r->memcpy_gbs,
            ratio(r->comp_gbs, r->memcpy_gbs),
            ratio(r->decomp_gbs, r->memcpy_gbs), r->max_err,
            r->abs_bound > 0 ? r->max_err / r->abs_bound : 0.0, r->psnr,
            (unsigned long long)r->violations, r->measured, r->note);
    fflush(f);
}

void fzb_md_header(FILE *f) {
    fprintf(f, "| dataset | dtype | MiB | codec | mode/bound | CR | comp GB/s "
               "| decomp GB/s | comp/memcpy | decomp/memcpy | max err/bound "
               "| violations | note |\n");
    fprintf(f, "|---|---|--:|---|---|--:|--:|--:|--:|--:|--:|--:|---|\n");
}

void fzb_md_row(FILE *f, const fzb_row *r) {
    char bound[32];
    if (strcmp(r->mode, "lossless") == 0)
        snprintf(bound, sizeof bound, "lossless");
    else
        snprintf(bound, sizeof bound, "%s %g", r->mode, r->rel);
    if (!r->measured) {
        fprintf(f,
                "| %s | %s | %.1f | %s | %s | - | - | - | - | - | - | - "
                "| %s |\n",
                r->dataset, r->dtype, r->mib, r->codec, bound, r->note);
        return;
    }
    char err[24];
    if (r->abs_bound > 0)
        snprintf(err, sizeof err, "%.3f", r->max_err / r->abs_bound);
    else
        snprintf(err, sizeof err, "-");
    fprintf(f,
            "| %s | %s | %.1f | %s | %s | %.3f | %.2f | %.2f | %.2fx | %.2fx "
            "| %s | %llu | %s |\n",
            r->dataset, r->dtype, r->mib, r->codec, bound, r->cr, r->comp_gbs,
            r->decomp_gbs, ratio(r->comp_gbs, r->memcpy_gbs),
            ratio(r->decomp_gbs, r->memcpy_gbs), err,
            (unsigned long long)r->violations, r->note);
}

int fzb_mode_supported(fz_codec codec, fz_mode mode) {
    fz_params p;
    size_t bound;
    if (fz_params_init(&p, FZ_F32, 1024) != FZ_OK)
        return 0;
    p.codec = codec;
    p.mode = mode;
    p.bound = mode == FZ_MODE_LOSSLESS ? 0.0 : 1e-3;
    return fz_compress_bound(&p, &bound) == FZ_OK;
}
