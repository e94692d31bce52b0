/* CPU benchmark: floatz's CPU backend side by side with the CPU peers and
 * the memcpy limit, on the same data, in the same run.
 *
 *   bench_cpu [--threads T] [--reps N] [--budget-s S] [--csv FILE]
 *             [--markdown FILE] [--no-peers] [--version]
 *             --data SPEC [--data SPEC ...]
 *
 * SPEC = NAME:TYPE:SHAPE:PATH (bench_common.h), e.g.
 *   smooth3d:f32:256x256x128:/tmp/smooth3d.f32
 *   timeseries/Air-pressure:f64:-:../shared/data/timeseries/Air-pressure.csv
 *
 * What is timed (BENCHMARKING.md, mode "cpu"): one call that compresses
 * (or decompresses) the whole array, input and output in memory, T threads
 * (default: all cores). Warm-up, then the median of N (default 5) runs;
 * calls shorter than 2 ms are repeated inside one timing (the mean of those
 * repeats is one run). Throughput = ORIGINAL bytes / time, 1e9 B/s. The
 * limit: memcpy of the same bytes on the same T threads.
 *
 * Codecs: every floatz codec registered in this build (fz_codec_name over
 * the ids) in each mode it supports: lossless, and REL 1e-2, 1e-3, 1e-4 for
 * the lossy codecs. Peers, when found at
 * configure time (else printed as "absent"): zstd levels 1 and 3, lz4
 * (default acceleration), c-blosc (clevel 5, byte or bit shuffle, lz4 or
 * zstd codec, its own T threads on the whole array), zfp (reversible, and
 * fixed accuracy at the same absolute bounds as floatz's REL rows), fpzip
 * (lossless). zstd, lz4, zfp and fpzip are single-threaded libraries: they
 * run on independent pieces (whole z-planes of 3-D arrays, ranges of 1-D
 * ones; >= 256 KiB, about 4 per thread) on the same T threads, and their
 * ratio counts 8 bytes per piece for its size. Every decompression is
 * checked: bit for bit (lossless), or |d - o| <= bound for finite values
 * and bit-exact NaN/inf (lossy, peers too). Exit status 1 if a floatz row
 * has a violation. */
#define _POSIX_C_SOURCE 200809L

#include "bench_common.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif
#ifdef FZB_HAVE_ZSTD
#include <zstd.h>
#endif
#ifdef FZB_HAVE_LZ4
#include <lz4.h>
#endif
#ifdef FZB_HAVE_BLOSC
#include <blosc.h>
#endif
#ifdef FZB_HAVE_ZFP
#include <zfp.h>
#endif
#ifdef FZB_HAVE_FPZIP
#include <fpzip.h>
#endif

#define MAX_DATASETS 128
#define MAX_REPS 64
#define MAX_ROWS 8192
#define PIECE_MIN_BYTES ((size_t)256 << 10)

static const double rel_bounds[] = {1e-2, 1e-3, 1e-4};
#define NREL (sizeof rel_bounds / sizeof rel_bounds[0])

typedef struct options {
    int threads, reps, no_peers, version;
    double budget_s;
    const char *csv, *markdown;
    const char *specs[MAX_DATASETS];
    int nspecs;
} options;

#ifdef FZB_HAVE_ZSTD
static int thread_id(void) {
#ifdef _OPENMP
    return omp_get_thread_num();
#else
    return 0;
#endif
}
#endif

/* ------------------------------------------------------------- timing */
typedef int (*run_fn)(void *arg);

/* Median seconds per call of fn over reps runs after one warm-up; -1 if a
 * call failed. */
static int measure(run_fn fn, void *arg, int reps, double *median) {
    double t0 = fzb_now();
    if (fn(arg) != 0)
        return -1;
    double warm = fzb_now() - t0;
    int inner = 1;
    if (warm < 2e-3)
        inner = (int)ceil(2e-3 / (warm > 1e-6 ? warm : 1e-6));
    if (inner > 256)
        inner = 256;
    double t[MAX_REPS];
    for (int r = 0; r < reps; r++) {
        double a = fzb_now();
        for (int i = 0; i < inner; i++)
            if (fn(arg) != 0)
                return -1;
        t[r] = (fzb_now() - a) / inner;
    }
    *median = fzb_median(t, reps);
    return 0;
}

/* ------------------------------------------------------------- memcpy */
typedef struct copy_job {
    void *dst;
    const void *src;
    size_t bytes;
    int threads;
} copy_job;

static int run_memcpy(void *arg) {
    copy_job *j = (copy_job *)arg;
    const int t = j->threads;
#pragma omp parallel for num_threads(t) schedule(static)
    for (int i = 0; i < t; i++) {
        size_t a = j->bytes * (size_t)i / (size_t)t;
        size_t b = j->bytes * (size_t)(i + 1) / (size_t)t;
        memcpy((char *)j->dst + a, (const char *)j->src + a, b - a);
    }
    return 0;
}

/* ------------------------------------------------------------- floatz */
typedef struct fz_job {
    fz_params p;
    fz_decode_options o;
    const void *src;
    size_t src_bytes;
    void *comp;
    size_t cap, size;
    void *out;
    fz_status st;
} fz_job;

static int run_fz_compress(void *arg) {
    fz_job *j = (fz_job *)arg;
    j->st = fz_compress(&j->p, j->src, j->src_bytes, j->comp, j->cap, &j->size);
    return j->st != FZ_OK;
}

static int run_fz_decompress(void *arg) {
    fz_job *j = (fz_job *)arg;
    size_t got;
    j->st = fz_decompress(j->comp, j->size, j->out, j->src_bytes, &j->o, &got);
    return j->st != FZ_OK || got != j->src_bytes;
}

/* -------------------------------------------------------------- peers */
enum peer_kind { P_ZSTD, P_LZ4, P_BLOSC, P_ZFP, P_FPZIP };

typedef struct peer {
    enum peer_kind kind;
    char name[48];
    int lossy;          /* zfp accuracy mode */
    int level;          /* zstd level, blosc clevel */
    int shuffle;        /* blosc: BLOSC_SHUFFLE / BLOSC_BITSHUFFLE */
    const char *bcodec; /* blosc compressor name */
} peer;

typedef struct piece {
    uint64_t off, n; /* values */
    uint32_t ndims;
    uint64_t dims[3];
} piece;

typedef struct peer_job {
    const peer *pr;
    const fzb_dataset *d;
    double tol; /* zfp accuracy */
    int threads;
    int npieces;
    piece *pieces;
    size_t *slot_off, *slot_cap, *size;
    unsigned char *comp;
    void *out;
    int whole; /* one piece, the library's own threads */
} peer_job;

#ifdef FZB_HAVE_ZSTD
static ZSTD_CCtx *zcctx[FZ_MAX_THREADS];
static ZSTD_DCtx *zdctx[FZ_MAX_THREADS];
#endif

static size_t esize_of(const fzb_dataset *d) {
    return d->dtype == FZ_F32 ? 4 : 8;
}

#ifdef FZB_HAVE_ZFP
static zfp_field *zfp_field_for(const peer_job *j, const piece *p, void *ptr) {
    zfp_type t = j->d->dtype == FZ_F32 ? zfp_type_float : zfp_type_double;
    if (p->ndims == 3)
        return zfp_field_3d(ptr, t, (size_t)p->dims[0], (size_t)p->dims[1],
                            (size_t)p->dims[2]);
    return zfp_field_1d(ptr, t, (size_t)p->n);
}

static zfp_stream *zfp_stream_for(const peer_job *j) {
    zfp_stream *z = zfp_stream_open(NULL);
    if (!z)
        return NULL;
    if (j->pr->lossy)
        zfp_stream_set_accuracy(z, j->tol);
    else
        zfp_stream_set_reversible(z);
    return z;
}
#endif

/* Worst-case compressed bytes of one piece (0: cannot). */
static size_t piece_bound(const peer_job *j, const piece *p) {
    const size_t bytes = (size_t)p->n * esize_of(j->d);
    (void)bytes;
    switch (j->pr->kind) {
#ifdef FZB_HAVE_ZSTD
    case P_ZSTD: return ZSTD_compressBound(bytes);
#endif
#ifdef FZB_HAVE_LZ4
    case P_LZ4:
        return bytes > LZ4_MAX_INPUT_SIZE
                   ? 0
                   : (size_t)LZ4_compressBound((int)bytes);
#endif
#ifdef FZB_HAVE_BLOSC
    case P_BLOSC:
        return bytes > BLOSC_MAX_BUFFERSIZE ? 0 : bytes + BLOSC_MAX_OVERHEAD;
#endif
#ifdef FZB_HAVE_ZFP
    case P_ZFP: {
        zfp_stream *z = zfp_stream_for(j);
        zfp_field *f = zfp_field_for(j, p, NULL);
        size_t b = z && f ? zfp_stream_maximum_size(z, f) : 0;
        if (f)
            zfp_field_free(f);
        if (z)
            zfp_stream_close(z);
        return b;
    }
#endif
#ifdef FZB_HAVE_FPZIP
    case P_FPZIP: return bytes + bytes / 8 + 1024; /* fpzip's own advice */
#endif
    default: return 0;
    }
}

static int piece_compress(const peer_job *j, int i) {
    const piece *p = &j->pieces[i];
    const size_t es = esize_of(j->d);
    const unsigned char *src = (const unsigned char *)j->d->data + p->off * es;
    unsigned char *dst = j->comp + j->slot_off[i];
    const size_t bytes = (size_t)p->n * es, cap = j->slot_cap[i];
    size_t out = 0;
    switch (j->pr->kind) {
#ifdef FZB_HAVE_ZSTD
    case P_ZSTD:
        out = ZSTD_compressCCtx(zcctx[thread_id()], dst, cap, src, bytes,
                                j->pr->level);
        if (ZSTD_isError(out))
            return -1;
        break;
#endif
#ifdef FZB_HAVE_LZ4
    case P_LZ4: {
        int r = LZ4_compress_default((const char *)src, (char *)dst, (int)bytes,
                                     (int)cap);
        if (r <= 0)
            return -1;
        out = (size_t)r;
        break;
    }
#endif
#ifdef FZB_HAVE_BLOSC
    case P_BLOSC: {
        int r = blosc_compress_ctx(j->pr->level, j->pr->shuffle, es, bytes, src,
                                   dst, cap, j->pr->bcodec, 0,
                                   j->whole ? j->threads : 1);
        if (r <= 0)
            return -1;
        out = (size_t)r;
        break;
    }
#endif
#ifdef FZB_HAVE_ZFP
    case P_ZFP: {
        zfp_stream *z = zfp_stream_for(j);
        zfp_field *f = zfp_field_for(j, p, (void *)src);
        bitstream *bs = stream_open(dst, cap);
        if (z && f && bs) {
            zfp_stream_set_bit_stream(z, bs);
            zfp_stream_rewind(z);
            out = zfp_compress(z, f);
        }
        if (bs)
            stream_close(bs);
        if (f)
            zfp_field_free(f);
        if (z)
            zfp_stream_close(z);
        if (out == 0)
            return -1;
        break;
    }
#endif
#ifdef FZB_HAVE_FPZIP
    case P_FPZIP: {
        FPZ *fz = fpzip_write_to_buffer(dst, cap);
        if (!fz)
            return -1;
        fz->type = j->d->dtype == FZ_F32 ? FPZIP_TYPE_FLOAT : FPZIP_TYPE_DOUBLE;
        fz->prec = 0;
        fz->nx = (int)(p->ndims == 3 ? p->dims[0] : p->n);
        fz->ny = (int)(p->ndims == 3 ? p->dims[1] : 1);
        fz->nz = (int)(p->ndims == 3 ? p->dims[2] : 1);
        fz->nf = 1;
        out = fpzip_write(fz, src);
        fpzip_write_close(fz);
        if (out == 0)
            return -1;
        break;
    }
#endif
    default: (void)src, (void)dst, (void)bytes, (void)cap; return -1;
    }
    j->size[i] = out;
    return 0;
}

static int piece_decompress(const peer_job *j, int i) {
    const piece *p = &j->pieces[i];
    const size_t es = esize_of(j->d);
    unsigned char *dst = (unsigned char *)j->out + p->off * es;
    const unsigned char *src = j->comp + j->slot_off[i];
    const size_t bytes = (size_t)p->n * es, size = j->size[i];
    switch (j->pr->kind) {
#ifdef FZB_HAVE_ZSTD
    case P_ZSTD: {
        size_t r =
            ZSTD_decompressDCtx(zdctx[thread_id()], dst, bytes, src, size);
        return ZSTD_isError(r) || r != bytes ? -1 : 0;
    }
#endif
#ifdef FZB_HAVE_LZ4
    case P_LZ4: {
        int r = LZ4_decompress_safe((const char *)src, (char *)dst, (int)size,
                                    (int)bytes);
        return r == (int)bytes ? 0 : -1;
    }
#endif
#ifdef FZB_HAVE_BLOSC
    case P_BLOSC: {
        int r =
            blosc_decompress_ctx(src, dst, bytes, j->whole ? j->threads : 1);
        return r == (int)bytes ? 0 : -1;
    }
#endif
#ifdef FZB_HAVE_ZFP
    case P_ZFP: {
        zfp_stream *z = zfp_stream_for(j);
        zfp_field *f = zfp_field_for(j, p, dst);
        bitstream *bs = stream_open((void *)src, size);
        size_t r = 0;
        if (z && f && bs) {
            zfp_stream_set_bit_stream(z, bs);
            zfp_stream_rewind(z);
            r = zfp_decompress(z, f);
        }
        if (bs)
            stream_close(bs);
        if (f)
            zfp_field_free(f);
        if (z)
            zfp_stream_close(z);
        return r ? 0 : -1;
    }
#endif
#ifdef FZB_HAVE_FPZIP
    case P_FPZIP: {
        FPZ *fz = fpzip_read_from_buffer(src);
        if (!fz)
            return -1;
        fz->type = j->d->dtype == FZ_F32 ? FPZIP_TYPE_FLOAT : FPZIP_TYPE_DOUBLE;
        fz->prec = 0;
        fz->nx = (int)(p->ndims == 3 ? p->dims[0] : p->n);
        fz->ny = (int)(p->ndims == 3 ? p->dims[1] : 1);
        fz->nz = (int)(p->ndims == 3 ? p->dims[2] : 1);
        fz->nf = 1;
        size_t r = fpzip_read(fz, dst);
        fpzip_read_close(fz);
        return r ? 0 : -1;
    }
#endif
    default: (void)dst, (void)src, (void)bytes, (void)size; return -1;
    }
}

static int run_peer_compress(void *arg) {
    peer_job *j = (peer_job *)arg;
    int bad = 0;
    const int np = j->npieces, t = j->whole ? 1 : j->threads;
#pragma omp parallel for num_threads(t) schedule(dynamic, 1) reduction(| : bad)
    for (int i = 0; i < np; i++)
        bad |= piece_compress(j, i) != 0;
    return bad;
}

static int run_peer_decompress(void *arg) {
    peer_job *j = (peer_job *)arg;
    int bad = 0;
    const int np = j->npieces, t = j->whole ? 1 : j->threads;
#pragma omp parallel for num_threads(t) schedule(dynamic, 1) reduction(| : bad)
    for (int i = 0; i < np; i++)
        bad |= piece_decompress(j, i) != 0;
    return bad;
}

/* Pieces: whole z-planes (a multiple of 4, zfp's block edge) of a 3-D
 * array, or ranges of a multiple of 1024 values, of at least
 * PIECE_MIN_BYTES and about 4 per thread. */
static int make_pieces(const fzb_dataset *d, int threads, piece **out) {
    const size_t es = esize_of(d);
    size_t target = d->bytes / (size_t)(4 * threads);
    if (target < PIECE_MIN_BYTES)
        target = PIECE_MIN_BYTES;
    uint64_t unit, units, per;
    if (d->ndims == 3) {
        unit = d->dims[0] * d->dims[1]; /* values per plane */
        units = d->dims[2];
        per = (target / es + unit - 1) / unit;
        per = (per + 3) / 4 * 4;
    } else {
        unit = 1;
        units = d->count;
        per = (target / es + 1023) / 1024 * 1024;
    }
    if (per == 0)
        per = 1;
    const int np = (int)((units + per - 1) / per);
    piece *p = (piece *)calloc((size_t)np, sizeof *p);
    if (!p)
        return -1;
    for (int i = 0; i < np; i++) {
        uint64_t a = (uint64_t)i * per, b = a + per < units ? a + per : units;
        p[i].off = a * unit;
        p[i].n = (b - a) * unit;
        p[i].ndims = d->ndims;
        p[i].dims[0] = d->ndims == 3 ? d->dims[0] : p[i].n;
        p[i].dims[1] = d->ndims == 3 ? d->dims[1] : 1;
        p[i].dims[2] = d->ndims == 3 ? b - a : 1;
    }
    *out = p;
    return np;
}

/* ------------------------------------------------------------ the run */
typedef struct bench {
    options o;
    int threads;
    double t_start;
    FILE *csv;
    fzb_row *rows;
    int nrows;
    int floatz_failed; /* a floatz row failed or broke its bound: exit 1 */
} bench;

static int over_budget(const bench *b) {
    return b->o.budget_s > 0 && fzb_now() - b->t_start > b->o.budget_s;
}

static void emit(bench *b, const fzb_row *r) {
    if (b->nrows < MAX_ROWS)
        b->rows[b->nrows++] = *r;
    if (b->csv)
        fzb_csv_row(b->csv, r);
    if (r->measured)
        fprintf(stderr,
                "  %-26s %-18s %-9s %-7g CR %8.3f  comp %7.2f  decomp %7.2f "
                "GB/s  viol %llu %s\n",
                r->dataset, r->codec, r->mode, r->rel, r->cr, r->comp_gbs,
                r->decomp_gbs, (unsigned long long)r->violations, r->note);
    else
        fprintf(stderr, "  %-26s %-18s %-9s %-7g %s\n", r->dataset, r->codec,
                r->mode, r->rel, r->note);
}

static void row_init(fzb_row *r, const fzb_dataset *d, double memcpy_gbs) {
    memset(r, 0, sizeof *r);
    r->side = "cpu";
    snprintf(r->dataset, sizeof r->dataset, "%s", d->name);
    r->dtype = d->dtype == FZ_F32 ? "f32" : "f64";
    r->mib = (double)d->bytes / 1048576.0;
    r->memcpy_gbs = memcpy_gbs;
}

static void run_floatz(bench *b, const fzb_dataset *d, double memcpy_gbs,
                       double range, void *comp, size_t comp_cap, void *out) {
    for (uint32_t id = 1; id < 256; id++) {
        const char *name = fz_codec_name((fz_codec)id);
        if (!name)
            continue;
        const int lossless = fzb_mode_supported((fz_codec)id, FZ_MODE_LOSSLESS);
        const int lossy = fzb_mode_supported((fz_codec)id, FZ_MODE_REL);
        for (int m = 0; m < 1 + (int)NREL; m++) {
            if (m == 0 ? !lossless : !lossy)
                continue;
            fzb_row r;
            row_init(&r, d, memcpy_gbs);
            snprintf(r.codec, sizeof r.codec, "floatz-%s", name);
            snprintf(r.mode, sizeof r.mode, "%s", m ? "REL" : "lossless");
            r.rel = m ? rel_bounds[m - 1] : 0.0;
            r.abs_bound = r.rel * range;
            if (over_budget(b)) {
                snprintf(r.note, sizeof r.note, "skipped: time budget");
                emit(b, &r);
                continue;
            }
            fz_job j;
            memset(&j, 0, sizeof j);
            fz_params_init(&j.p, d->dtype, d->count);
            fz_params_set_shape(&j.p, d->ndims, d->dims);
            j.p.codec = (fz_codec)id;
            j.p.mode = m ? FZ_MODE_REL : FZ_MODE_LOSSLESS;
            j.p.bound = r.rel;
            j.p.threads = b->threads;
            j.o.threads = b->threads;
            j.src = d->data;
            j.src_bytes = d->bytes;
            j.comp = comp;
            j.out = out;
            size_t need;
            fz_status st = fz_compress_bound(&j.p, &need);
            if (st != FZ_OK || need > comp_cap) {
                snprintf(r.note, sizeof r.note, "error: %s",
                         st != FZ_OK ? fz_status_string(st) : "bound");
                emit(b, &r);
                b->floatz_failed = 1;
                continue;
            }
            j.cap = comp_cap;
            double tc, td;
            if (measure(run_fz_compress, &j, b->o.reps, &tc) != 0 ||
                measure(run_fz_decompress, &j, b->o.reps, &td) != 0) {
                snprintf(r.note, sizeof r.note, "error: %s",
                         fz_status_string(j.st));
                emit(b, &r);
                b->floatz_failed = 1;
                continue;
            }
            fzb_errors e;
            fzb_check(d->dtype, d->data, out, d->count, m == 0, r.abs_bound,
                      range, b->threads, &e);
            r.measured = 1;
            r.cr = (double)d->bytes / (double)j.size;
            r.comp_gbs = (double)d->bytes / tc / 1e9;
            r.decomp_gbs = (double)d->bytes / td / 1e9;
            r.max_err = e.max_err;
            r.psnr = e.psnr;
            r.violations = e.violations;
            if (m) {
                fz_info info;
                if (fz_inspect(comp, j.size, &info) == FZ_OK)
                    snprintf(r.note, sizeof r.note, "eff. bound %.3g",
                             info.bound_effective);
            }
            if (e.violations)
                b->floatz_failed = 1;
            emit(b, &r);
        }
    }
}

static void run_one_peer(bench *b, const fzb_dataset *d, const peer *pr,
                         double memcpy_gbs, double range, double rel,
                         piece *pieces, int np, void *out) {
    fzb_row r;
    row_init(&r, d, memcpy_gbs);
    snprintf(r.codec, sizeof r.codec, "%s", pr->name);
    snprintf(r.mode, sizeof r.mode, "%s", pr->lossy ? "REL" : "lossless");
    r.rel = rel;
    r.abs_bound = rel * range;
    if (pr->lossy && !(r.abs_bound > 0 && isfinite(r.abs_bound))) {
        snprintf(r.note, sizeof r.note, "n/a: absolute bound %g", r.abs_bound);
        emit(b, &r);
        return;
    }
    if (over_budget(b)) {
        snprintf(r.note, sizeof r.note, "skipped: time budget");
        emit(b, &r);
        return;
    }
    peer_job j;
    memset(&j, 0, sizeof j);
    j.pr = pr;
    j.d = d;
    j.tol = r.abs_bound;
    j.threads = b->threads;
    j.out = out;
    piece whole_piece;
    j.whole = pr->kind == P_BLOSC;
    if (j.whole) {
        whole_piece.off = 0;
        whole_piece.n = d->count;
        whole_piece.ndims = d->ndims;
        memcpy(whole_piece.dims, d->dims, sizeof whole_piece.dims);
        j.pieces = &whole_piece;
        j.npieces = 1;
    } else {
        j.pieces = pieces;
        j.npieces = np;
    }
    j.slot_off = (size_t *)calloc((size_t)j.npieces, sizeof(size_t));
    j.slot_cap = (size_t *)calloc((size_t)j.npieces, sizeof(size_t));
    j.size = (size_t *)calloc((size_t)j.npieces, sizeof(size_t));
    size_t total = 0;
    int ok = j.slot_off && j.slot_cap && j.size;
    for (int i = 0; ok && i < j.npieces; i++) {
        size_t cap = piece_bound(&j, &j.pieces[i]);
        ok = cap > 0;
        j.slot_off[i] = total;
        j.slot_cap[i] = cap;
        total += (cap + 63) / 64 * 64;
    }
    j.comp = ok ? (unsigned char *)fzb_aligned_alloc(total) : NULL;
    if (!j.comp) {
        snprintf(r.note, sizeof r.note, "error: too large or out of memory");
    } else {
        double tc, td;
        memset(out, 0, d->bytes);
        if (measure(run_peer_compress, &j, b->o.reps, &tc) != 0) {
            snprintf(r.note, sizeof r.note, "error: compression failed");
        } else if (measure(run_peer_decompress, &j, b->o.reps, &td) != 0) {
            snprintf(r.note, sizeof r.note, "error: decompression failed");
        } else {
            size_t csize = 0;
            for (int i = 0; i < j.npieces; i++)
                csize += j.size[i];
            if (!j.whole)
                csize += 8 * (size_t)j.npieces;
            fzb_errors e;
            fzb_check(d->dtype, d->data, out, d->count, !pr->lossy, r.abs_bound,
                      range, b->threads, &e);
            r.measured = 1;
            r.cr = (double)d->bytes / (double)csize;
            r.comp_gbs = (double)d->bytes / tc / 1e9;
            r.decomp_gbs = (double)d->bytes / td / 1e9;
            r.max_err = e.max_err;
            r.psnr = e.psnr;
            r.violations = e.violations;
            if (j.whole)
                snprintf(r.note, sizeof r.note, "%d internal threads",
                         b->threads);
            else
                snprintf(r.note, sizeof r.note, "%d pieces", j.npieces);
        }
    }
    free(j.comp);
    free(j.slot_off);
    free(j.slot_cap);
    free(j.size);
    emit(b, &r);
}

static int make_peers(peer *list, int max) {
    int n = 0;
    (void)max;
    (void)list;
#ifdef FZB_HAVE_ZSTD
    for (int lv = 1; lv <= 3; lv += 2) {
        peer p = {P_ZSTD, "", 0, lv, 0, NULL};
        snprintf(p.name, sizeof p.name, "zstd-%d", lv);
        list[n++] = p;
    }
#endif
#ifdef FZB_HAVE_LZ4
    {
        peer p = {P_LZ4, "lz4", 0, 0, 0, NULL};
        list[n++] = p;
    }
#endif
#ifdef FZB_HAVE_BLOSC
    const char *bc[] = {"lz4", "zstd"};
    for (int s = 0; s < 2; s++)
        for (int c = 0; c < 2; c++) {
            peer p = {P_BLOSC, "", 0, 5, s ? BLOSC_BITSHUFFLE : BLOSC_SHUFFLE,
                      bc[c]};
            snprintf(p.name, sizeof p.name, "blosc-%s-%s",
                     s ? "bitshuf" : "byteshuf", bc[c]);
            list[n++] = p;
        }
#endif
#ifdef FZB_HAVE_ZFP
    {
        peer p = {P_ZFP, "zfp-reversible", 0, 0, 0, NULL};
        list[n++] = p;
        peer q = {P_ZFP, "zfp-accuracy", 1, 0, 0, NULL};
        list[n++] = q;
    }
#endif
#ifdef FZB_HAVE_FPZIP
    {
        peer p = {P_FPZIP, "fpzip", 0, 0, 0, NULL};
        list[n++] = p;
    }
#endif
    return n;
}

/* The output buffer every floatz codec and mode run on d fits: codecs
 * chunk differently, so their tables (and bounds) differ (falcon's 1025-value
 * chunks need four times sleek's table). */
static size_t largest_bound(const fzb_dataset *d) {
    size_t cap = 0;
    for (uint32_t id = 1; id < 256; id++) {
        if (!fz_codec_name((fz_codec)id))
            continue;
        for (int m = 0; m < 2; m++) {
            fz_params p;
            fz_params_init(&p, d->dtype, d->count);
            fz_params_set_shape(&p, d->ndims, d->dims);
            p.codec = (fz_codec)id;
            p.mode = m ? FZ_MODE_REL : FZ_MODE_LOSSLESS;
            p.bound = m ? 1e-3 : 0.0;
            size_t need = 0;
            if (fz_compress_bound(&p, &need) == FZ_OK && need > cap)
                cap = need;
        }
    }
    return cap;
}

static void run_dataset(bench *b, const fzb_dataset *d) {
    char shape[64];
    fzb_shape_string(d, shape, sizeof shape);
    fprintf(stderr, "== %s %s %s (%.2f MiB, %s)\n", d->name,
            d->dtype == FZ_F32 ? "f32" : "f64", shape,
            (double)d->bytes / 1048576.0, d->source);
    void *out = fzb_aligned_alloc(d->bytes);
    void *copy = fzb_aligned_alloc(d->bytes);
    const size_t cap = largest_bound(d);
    void *comp = fzb_aligned_alloc(cap);
    if (!out || !copy || !comp) {
        fprintf(stderr, "bench_cpu: out of memory for %s\n", d->name);
        free(out);
        free(copy);
        free(comp);
        return;
    }
    copy_job cj = {copy, d->data, d->bytes, b->threads};
    double tm = 0;
    measure(run_memcpy, &cj, b->o.reps, &tm);
    const double memcpy_gbs = (double)d->bytes / tm / 1e9;
    free(copy);
    const double range = fzb_finite_range(d->dtype, d->data, d->count);

    run_floatz(b, d, memcpy_gbs, range, comp, cap, out);
    free(comp);

    if (!b->o.no_peers) {
        peer peers[32];
        const int npeers = make_peers(peers, 32);
        piece *pieces = NULL;
        const int np = make_pieces(d, b->threads, &pieces);
        for (int k = 0; np > 0 && k < npeers; k++) {
            if (!peers[k].lossy) {
                run_one_peer(b, d, &peers[k], memcpy_gbs, range, 0.0, pieces,
                             np, out);
                continue;
            }
            for (size_t m = 0; m < NREL; m++)
                run_one_peer(b, d, &peers[k], memcpy_gbs, range, rel_bounds[m],
                             pieces, np, out);
        }
        free(pieces);
    }
    free(out);
}

/* ------------------------------------------------------------ reports */
static void cpu_model(char *buf, size_t len) {
    snprintf(buf, len, "unknown CPU");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10) == 0) {
            char *c = strchr(line, ':');
            if (c) {
                c++;
                while (*c == ' ')
                    c++;
                c[strcspn(c, "\n")] = '\0';
                snprintf(buf, len, "%s", c);
            }
            break;
        }
    }
    fclose(f);
}

static void describe(FILE *f, const bench *b) {
    char model[256];
    cpu_model(model, sizeof model);
    int cores = 1;
#ifdef _OPENMP
    cores = omp_get_num_procs();
#endif
    fprintf(f,
            "- CPU: %s, %d cores; **%d threads** for floatz, memcpy and "
            "the peers\n",
            model, cores, b->threads);
    fprintf(f,
            "- floatz %s (CPU backend, checksums on); timed: whole-array "
            "call, warm-up then median of %d\n",
            fz_version_string(), b->o.reps);
    fprintf(f, "- peers:");
#ifdef FZB_HAVE_ZSTD
    fprintf(f, " zstd %s;", ZSTD_versionString());
#else
    fprintf(f, " zstd absent;");
#endif
#ifdef FZB_HAVE_LZ4
    fprintf(f, " lz4 %s;", LZ4_versionString());
#else
    fprintf(f, " lz4 absent;");
#endif
#ifdef FZB_HAVE_BLOSC
    fprintf(f, " c-blosc %s (clevel 5);", BLOSC_VERSION_STRING);
#else
    fprintf(f, " c-blosc absent;");
#endif
#ifdef FZB_HAVE_ZFP
    fprintf(f, " %s;", zfp_version_string); /* "zfp version ..." */
#else
    fprintf(f, " zfp absent;");
#endif
#ifdef FZB_HAVE_FPZIP
    fprintf(f, " fpzip %s", FPZIP_VERSION_STRING);
#else
    fprintf(f, " fpzip absent");
#endif
    fprintf(f, "%s\n",
            b->o.no_peers ? " (not run: --no-peers)"
                          : " (absent = not found when the bench "
                            "was configured: "
                            "scripts/install_bench_deps.sh)");
    fprintf(f, "- single-threaded peers (zstd, lz4, zfp, fpzip) run on "
               "independent pieces (>= 256 KiB, whole z-planes of 3-D "
               "arrays) over the same threads, +8 bytes per piece in CR; "
               "c-blosc uses its own threads on the whole array\n");
}

static int usage(void) {
    fprintf(stderr,
            "usage: bench_cpu [--threads T] [--reps N] [--budget-s S] "
            "[--csv FILE] [--markdown FILE] [--no-peers] [--version] --data "
            "NAME:TYPE:SHAPE:PATH ...\n");
    return 2;
}

int main(int argc, char **argv) {
    bench b;
    memset(&b, 0, sizeof b);
    b.o.reps = 5;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--threads") && v)
            b.o.threads = atoi(v), i++;
        else if (!strcmp(a, "--reps") && v)
            b.o.reps = atoi(v), i++;
        else if (!strcmp(a, "--budget-s") && v)
            b.o.budget_s = atof(v), i++;
        else if (!strcmp(a, "--csv") && v)
            b.o.csv = v, i++;
        else if (!strcmp(a, "--markdown") && v)
            b.o.markdown = v, i++;
        else if (!strcmp(a, "--no-peers"))
            b.o.no_peers = 1;
        else if (!strcmp(a, "--version"))
            b.o.version = 1;
        else if (!strcmp(a, "--data") && v && b.o.nspecs < MAX_DATASETS)
            b.o.specs[b.o.nspecs++] = v, i++;
        else
            return usage();
    }
    if (b.o.version) {
        b.threads = b.o.threads > 0 ? b.o.threads : 1;
#ifdef _OPENMP
        if (b.o.threads == 0)
            b.threads = omp_get_num_procs();
#endif
        describe(stdout, &b);
        return 0;
    }
    if (b.o.nspecs == 0 || b.o.reps < 1 || b.o.reps > MAX_REPS ||
        b.o.threads < 0)
        return usage();
    b.threads = b.o.threads;
#ifdef _OPENMP
    if (b.threads == 0)
        b.threads = omp_get_num_procs();
#else
    b.threads = 1;
#endif
    if (b.threads > FZ_MAX_THREADS)
        b.threads = FZ_MAX_THREADS;
    b.rows = (fzb_row *)calloc(MAX_ROWS, sizeof(fzb_row));
    if (!b.rows)
        return 1;
#ifdef FZB_HAVE_ZSTD
    for (int t = 0; t < b.threads; t++) {
        zcctx[t] = ZSTD_createCCtx();
        zdctx[t] = ZSTD_createDCtx();
    }
#endif
#ifdef FZB_HAVE_BLOSC
    blosc_init();
#endif
    if (b.o.csv) {
        b.csv = fopen(b.o.csv, "w");
        if (!b.csv) {
            fprintf(stderr, "bench_cpu: cannot write %s\n", b.o.csv);
            return 1;
        }
        fzb_csv_header(b.csv);
    }
    describe(stderr, &b);
    b.t_start = fzb_now();
    for (int k = 0; k < b.o.nspecs; k++) {
        fzb_dataset d;
        char err[256];
        if (fzb_load(b.o.specs[k], &d, err, sizeof err) != 0) {
            fprintf(stderr, "bench_cpu: %s (skipped)\n", err);
            continue;
        }
        run_dataset(&b, &d);
        fzb_free(&d);
    }
    const double elapsed = fzb_now() - b.t_start;
    FILE *outs[2] = {stdout, NULL};
    if (b.o.markdown) {
        outs[1] = fopen(b.o.markdown, "w");
        if (!outs[1])
            fprintf(stderr, "bench_cpu: cannot write %s\n", b.o.markdown);
    }
    for (int k = 0; k < 2; k++) {
        FILE *f = outs[k];
        if (!f)
            continue;
        describe(f, &b);
        fprintf(f, "- run time %.0f s%s\n\n", elapsed,
                b.o.budget_s > 0 ? " (with a time budget)" : "");
        fzb_md_header(f);
        for (int i = 0; i < b.nrows; i++)
            fzb_md_row(f, &b.rows[i]);
        if (f != stdout)
            fclose(f);
    }
    if (b.csv)
        fclose(b.csv);
#ifdef FZB_HAVE_ZSTD
    for (int t = 0; t < b.threads; t++) {
        ZSTD_freeCCtx(zcctx[t]);
        ZSTD_freeDCtx(zdctx[t]);
    }
#endif
#ifdef FZB_HAVE_BLOSC
    blosc_destroy();
#endif
    free(b.rows);
    return b.floatz_failed ? 1 : 0;
}
