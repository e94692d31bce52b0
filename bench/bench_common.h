/* Shared pieces of the benchmark programs (bench_cpu, bench_gpu_peers):
 * datasets (raw files and one-number-per-line text), the result row with
 * its CSV and markdown forms, error checks and timing helpers. C11; also
 * included from CUDA C++. */
#ifndef FZ_BENCH_COMMON_H
#define FZ_BENCH_COMMON_H

#include <floatz.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One input array. name is "suite/name" (e.g. "timeseries/Air-pressure"):
 * the plots group rows by the suite. */
typedef struct fzb_dataset {
    char name[96];
    fz_dtype dtype;
    uint32_t ndims;   /* 1 or 3 */
    uint64_t dims[3]; /* dims[0] fastest; unused dims are 1 */
    uint64_t count;   /* values */
    size_t bytes;
    void *data; /* 64-byte aligned, fzb_free() */
    char source[160];
} fzb_dataset;

/* Loads a dataset from SPEC = NAME:TYPE:SHAPE:PATH (split at the first three
 * colons, so PATH may hold colons). TYPE is f32 or f64. PATH ending in .csv
 * or .txt is text, one decimal number per line, parsed with strtof/strtod
 * straight to TYPE (exact: no detour through double for f32); anything else
 * is raw little-endian values. SHAPE is "-" (1-D, count from the file), N,
 * or NXxNYxNZ (NX fastest). Returns 0, or -1 with a message in err. */
int fzb_load(const char *spec, fzb_dataset *d, char *err, size_t errlen);
void fzb_free(fzb_dataset *d);

void *fzb_aligned_alloc(size_t bytes); /* 64-byte aligned, free with free() */
double fzb_now(void);                  /* monotonic seconds */

/* max - min over the finite values, in double (inf if that overflows, 0 if
 * there are none). */
double fzb_finite_range(fz_dtype dtype, const void *v, uint64_t n);

/* Error statistics of a decoded array against its original. lossless:
 * every value must match bit for bit. Lossy: |d - o| <= abs_bound in
 * double for finite originals, bit-exact for NaN/inf. threads > 0 splits
 * the work with OpenMP. */
typedef struct fzb_errors {
    double max_err;      /* over finite originals */
    double psnr;         /* dB, over finite values, vs the finite range */
    uint64_t violations; /* values outside the bound (or not bit-exact) */
} fzb_errors;
void fzb_check(fz_dtype dtype, const void *orig, const void *dec, uint64_t n,
               int lossless, double abs_bound, double range, int threads,
               fzb_errors *e);

/* One result row. Throughputs are ORIGINAL bytes / median time (1e9 B/s);
 * 0 where not measured. */
typedef struct fzb_row {
    const char *side; /* "cpu" or "gpu" */
    char dataset[96];
    const char *dtype; /* "f32" / "f64" */
    double mib;        /* bytes compressed per call, MiB */
    char codec[48];    /* "floatz-sleek", "zstd-1", "nvcomp-lz4", ... */
    char mode[12];     /* "lossless", "REL", "ABS" */
    double rel;        /* REL bound asked for (0 for lossless) */
    double abs_bound;  /* absolute bound checked (0 for lossless) */
    double cr;
    double comp_gbs, decomp_gbs, memcpy_gbs;
    double max_err, psnr;
    uint64_t violations;
    int measured; /* 0: skipped or failed, see note */
    char note[128];
} fzb_row;

void fzb_csv_header(FILE *f);
void fzb_csv_row(FILE *f, const fzb_row *r);
void fzb_md_header(FILE *f);
void fzb_md_row(FILE *f, const fzb_row *r);

/* "256x256x128" or "1048576" */
void fzb_shape_string(const fzb_dataset *d, char *buf, size_t len);

double fzb_median(double *v, int n); /* sorts v */

/* Whether codec `codec` accepts mode `mode` (lossless codecs refuse lossy
 * modes, lossy-only codecs refuse lossless): asked of fz_compress_bound. */
int fzb_mode_supported(fz_codec codec, fz_mode mode);

#ifdef __cplusplus
}
#endif
#endif
