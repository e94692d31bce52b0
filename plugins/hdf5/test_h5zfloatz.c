/* The floatz HDF5 filter through real HDF5 files:
 *  - load: HDF5 finds the plugin through HDF5_PLUGIN_PATH by itself;
 *  - register: with plugin loading off, dlopen + fz_h5z_register works;
 *  - cdvalues: defaults, the bound's word order, the appended dtype and
 *    chunk shape (fastest first; more than 4 dims merged), a copied dcpl;
 *  - lossless_1d/2d/3d/nd: bitwise round trips (NaN payloads, -0.0,
 *    infinities, subnormals) of f32/f64 with sleek, gfc and falcon, shapes
 *    that leave partial edge chunks;
 *  - lossy_abs, lossy_rel: every value within its bound (REL: of its own
 *    chunk's range, HDF5's padding of edge chunks included), NaN and
 *    infinities exact;
 *  - options: codec options and flags reach the stored streams;
 *  - raw_chunk: every stored chunk is a floatz stream of the chunk's shape
 *    that decodes to that chunk's values;
 *  - refuse: non-float, big-endian, non-IEEE, unchunked, bad cd_values
 *    (half a bound, a lossy mode without one, swapped bound words);
 *  - pipeline: floatz must be the first filter (shuffle, deflate,
 *    fletcher32, scaleoffset before it, or floatz twice, are refused);
 *    filters after it work;
 *  - corrupt: damaged chunks make H5Dread fail with the floatz status;
 *  - exec: FLOATZ_HDF5_EXEC (gpu without a GPU fails loudly).
 * Run with a group name (ctest does). Two more modes serve h5tools_test.sh:
 * `write_input FILE` writes unfiltered datasets, `compare A B` checks that
 * two such files hold the same bytes. Files live in a fresh directory
 * under $TMPDIR (or /tmp), removed at exit. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <dlfcn.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hdf5.h"

#include "H5Zfloatz.h"
#include "test_util.h"

/* ------------------------------------------------------------ checks */
/* CHECK and the case text (tu_context) are test_util.h's. */

static char g_dir[1024];

static void remove_dir(void) {
    if (!g_dir[0])
        return;
    DIR *d = opendir(g_dir);
    if (d) {
        char p[2048];
        for (struct dirent *e; (e = readdir(d)) != NULL;) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                continue;
            snprintf(p, sizeof p, "%s/%s", g_dir, e->d_name);
            remove(p);
        }
        closedir(d);
    }
    rmdir(g_dir);
}

/* tu_fail with a printf-style detail; tu_fail exit(1)s: atexit cleans up. */
static _Noreturn __attribute__((format(printf, 4, 5))) void
fail_fmt(const char *file, int line, const char *expr, const char *fmt, ...) {
    char detail[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    tu_fail(file, line, expr, detail);
}

/* CHECK with a formatted detail line. */
#define CHECKF(e, ...)                                                         \
    do {                                                                       \
        if (!(e))                                                              \
            fail_fmt(__FILE__, __LINE__, #e, __VA_ARGS__);                     \
    } while (0)

static const char *tmp_path(const char *name) {
    static char buf[4][2048];
    static int next;
    char *p = buf[next++ % 4];
    snprintf(p, sizeof buf[0], "%s/%s", g_dir, name);
    return p;
}

/* ------------------------------------------------------ HDF5 error stack */

static H5E_auto2_t g_auto_fn;
static void *g_auto_data;

/* Expected failures: keep HDF5 from printing them (the log stays readable)
 * while the stack is still checked for the plugin's message. */
static void quiet_begin(void) {
    H5Eget_auto2(H5E_DEFAULT, &g_auto_fn, &g_auto_data);
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
}

static void quiet_end(void) {
    H5Eset_auto2(H5E_DEFAULT, g_auto_fn, g_auto_data);
}

typedef struct walk_ctx {
    const char *needle;
    int found;
} walk_ctx;

static herr_t walk_cb(unsigned n, const H5E_error2_t *e, void *data) {
    (void)n;
    walk_ctx *w = data;
    if (e->desc && strstr(e->desc, "floatz: ") && strstr(e->desc, w->needle))
        w->found = 1;
    return 0;
}

/* Whether a message of the plugin containing `needle` is on the stack of
 * the last failed call (call this before any other HDF5 call). */
static int stack_has(const char *needle) {
    walk_ctx w = {needle, 0};
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, walk_cb, &w);
    return w.found;
}

/* ------------------------------------------------------------------ data */

/* Special value k (modulo the count) of test_util's tables: quiet and
 * signalling NaNs with payloads (both signs), -0.0, infinities,
 * subnormals, extreme normals. */
static void set_special(fz_dtype t, void *a, size_t i, size_t k) {
    if (t == FZ_F64) {
        const uint64_t *v;
        const size_t n = tu_special64(&v);
        tu_set_bits(t, a, i, v[k % n]);
    } else {
        const uint32_t *v;
        const size_t n = tu_special32(&v);
        tu_set_bits(t, a, i, v[k % n]);
    }
}

static int finite_bits(fz_dtype t, uint64_t b) {
    return t == FZ_F64 ? ((b >> 52) & 0x7ff) != 0x7ff
                       : ((b >> 23) & 0xff) != 0xff;
}

/* n values: a smooth field of 2-decimal values (compressible, falcon's
 * kind of data) with a special value every ~60 on average; `random_runs`
 * adds stretches of random bit patterns (every NaN payload included). */
static void *make_data(fz_dtype t, size_t n, uint64_t seed, int random_runs) {
    void *a = malloc(n * tu_dtype_size(t) + 1);
    CHECK(a);
    tu_rng s = tu_rng_make(seed);
    for (size_t i = 0; i < n; i++) {
        const uint64_t r = tu_next(&s);
        double x = 280.0 + 20.0 * sin((double)i * 0.001) +
                   3.0 * cos((double)i * 0.037);
        if (r % 61 == 0)
            set_special(t, a, i, (size_t)(r >> 8));
        else if (random_runs && (i / 3000) % 4 == 3)
            tu_set_bits(t, a, i, r);
        else
            tu_set_value(t, a, i, round(x * 100.0) / 100.0);
    }
    return a;
}

/* Bitwise equality of n values. */
static void check_same(fz_dtype t, const void *want, const void *got,
                       size_t n) {
    if (memcmp(want, got, n * tu_dtype_size(t)) == 0)
        return;
    size_t i = 0;
    while (tu_bits_at(t, want, i) == tu_bits_at(t, got, i))
        i++;
    fail_fmt(__FILE__, __LINE__, "bitwise round trip",
             "value %zu of %zu: wrote bits 0x%llx, read 0x%llx", i, n,
             (unsigned long long)tu_bits_at(t, want, i),
             (unsigned long long)tu_bits_at(t, got, i));
}

/* NaNs and infinities exact, every finite value within `bound` (the
 * difference taken in double, exact for these magnitudes). */
static void check_within(fz_dtype t, const void *want, const void *got,
                         size_t n, double bound) {
    for (size_t i = 0; i < n; i++) {
        const uint64_t bw = tu_bits_at(t, want, i), bg = tu_bits_at(t, got, i);
        if (!finite_bits(t, bw)) {
            CHECKF(bw == bg, "value %zu: special 0x%llx came back as 0x%llx", i,
                   (unsigned long long)bw, (unsigned long long)bg);
            continue;
        }
        const double w = tu_value_at(t, want, i), g = tu_value_at(t, got, i);
        CHECKF(isfinite(g) && fabs(w - g) <= bound,
               "value %zu: wrote %.17g, read %.17g, bound %g", i, w, g, bound);
    }
}

/* ------------------------------------------------------------ HDF5 files */

typedef struct shape {
    int rank;
    hsize_t dims[6];  /* HDF5 order: slowest first */
    hsize_t chunk[6]; /* 0 in chunk[0]: contiguous layout */
} shape;

static size_t shape_count(const shape *s) {
    size_t n = 1;
    for (int d = 0; d < s->rank; d++)
        n *= (size_t)s->dims[d];
    return n;
}

static hid_t file_type(fz_dtype t) {
    return t == FZ_F64 ? H5T_IEEE_F64LE : H5T_IEEE_F32LE;
}

static hid_t mem_type(fz_dtype t) {
    return t == FZ_F64 ? H5T_NATIVE_DOUBLE : H5T_NATIVE_FLOAT;
}

static hid_t file_create(const char *name) {
    hid_t f =
        H5Fcreate(tmp_path(name), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    CHECK(f >= 0);
    return f;
}

static hid_t file_open(const char *name, unsigned flags) {
    hid_t f = H5Fopen(tmp_path(name), flags, H5P_DEFAULT);
    CHECK(f >= 0);
    return f;
}

/* Set before an expected failure of create_dset: whether the plugin's
 * message holding g_needle was on the stack right after H5Dcreate2 (any
 * later HDF5 call clears the stack). */
static const char *g_needle;
static int g_found;

/* H5Dcreate2 with the filter (mandatory) and cd; ncd == (size_t)-1 adds
 * no filter. Returns what H5Dcreate2 returned. */
static hid_t create_dset(hid_t file, const char *name, hid_t type,
                         const shape *s, const unsigned *cd, size_t ncd,
                         hid_t dapl) {
    hid_t space = H5Screate_simple(s->rank, s->dims, NULL);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    CHECK(space >= 0 && dcpl >= 0);
    if (s->chunk[0])
        CHECK(H5Pset_chunk(dcpl, s->rank, s->chunk) >= 0);
    if (ncd != (size_t)-1)
        CHECK(H5Pset_filter(dcpl, FZ_H5Z_FILTER_ID, H5Z_FLAG_MANDATORY, ncd,
                            cd) >= 0);
    hid_t d = H5Dcreate2(file, name, type, space, H5P_DEFAULT, dcpl, dapl);
    if (d < 0 && g_needle)
        g_found = stack_has(g_needle);
    CHECK(H5Pclose(dcpl) >= 0 && H5Sclose(space) >= 0);
    return d;
}

static void *read_all(hid_t d, fz_dtype t, size_t n) {
    void *back = malloc(n * tu_dtype_size(t) + 1);
    CHECK(back);
    CHECK(H5Dread(d, mem_type(t), H5S_ALL, H5S_ALL, H5P_DEFAULT, back) >= 0);
    return back;
}

/* A stored chunk's bytes (H5Dread_chunk); *mask gets its filter mask. */
static unsigned char *read_raw_chunk(hid_t d, const hsize_t *offset,
                                     size_t *size, uint32_t *mask) {
    hsize_t nb = 0;
    CHECK(H5Dget_chunk_storage_size(d, offset, &nb) >= 0 && nb > 0);
    unsigned char *buf = malloc((size_t)nb);
    CHECK(buf);
    CHECK(H5Dread_chunk(d, H5P_DEFAULT, offset, mask, buf) >= 0);
    *size = (size_t)nb;
    return buf;
}

/* The stream stored for the chunk at `offset` of dataset "d" in `file`. */
static void inspect_chunk(const char *file, const hsize_t *offset,
                          fz_info *info) {
    hid_t f = file_open(file, H5F_ACC_RDONLY);
    hid_t d = H5Dopen2(f, "d", H5P_DEFAULT);
    CHECK(d >= 0);
    size_t size;
    uint32_t mask = 1;
    unsigned char *raw = read_raw_chunk(d, offset, &size, &mask);
    CHECK(mask == 0); /* the filter ran on this chunk */
    fz_status s = fz_inspect(raw, size, info);
    CHECKF(s == FZ_OK, "fz_inspect: %s", fz_status_string(s));
    CHECK(info->compressed_bytes == size);
    free(raw);
    CHECK(H5Dclose(d) >= 0 && H5Fclose(f) >= 0);
}

/* Dataset d's pipeline holds `nfilters` filters, floatz the first. */
static void check_floatz_first(hid_t d, int nfilters) {
    hid_t dcpl = H5Dget_create_plist(d);
    CHECK(dcpl >= 0 && H5Pget_nfilters(dcpl) == nfilters);
    CHECK(H5Pget_filter2(dcpl, 0, NULL, NULL, NULL, 0, NULL, NULL) ==
          FZ_H5Z_FILTER_ID);
    CHECK(H5Pclose(dcpl) >= 0);
}

/* Write `data` through the filter into dataset "d" of a new file, close
 * everything (every chunk has then gone through the encoder), reopen and
 * read it back (through the decoder). Checks on the way that the dataset
 * holds the filter and that its first chunk is a floatz stream of the
 * asked codec and dtype. Returns what was read (free() it). */
static void *roundtrip(const char *file, fz_dtype t, const shape *s,
                       const unsigned *cd, size_t ncd, const void *data) {
    const size_t n = shape_count(s);
    hid_t f = file_create(file);
    hid_t d = create_dset(f, "d", file_type(t), s, cd, ncd, H5P_DEFAULT);
    CHECK(d >= 0);
    CHECK(H5Dwrite(d, mem_type(t), H5S_ALL, H5S_ALL, H5P_DEFAULT, data) >= 0);
    CHECK(H5Dclose(d) >= 0 && H5Fclose(f) >= 0);

    f = file_open(file, H5F_ACC_RDONLY);
    d = H5Dopen2(f, "d", H5P_DEFAULT);
    CHECK(d >= 0);
    check_floatz_first(d, 1);
    void *back = read_all(d, t, n);
    CHECK(H5Dclose(d) >= 0 && H5Fclose(f) >= 0);

    const hsize_t zero[6] = {0};
    fz_info info;
    inspect_chunk(file, zero, &info);
    const unsigned codec = ncd > FZ_H5Z_CD_CODEC && ncd != (size_t)-1
                               ? cd[FZ_H5Z_CD_CODEC]
                               : FZ_CODEC_SLEEK;
    if (codec != FZ_CODEC_AUTO) /* auto: the chunk's codec, checked there */
        CHECK((unsigned)info.params.codec == codec);
    CHECK(info.params.dtype == t);
    return back;
}

/* ------------------------------------------------------------ groups */

static const fz_codec lossless_codecs[] = {FZ_CODEC_SLEEK, FZ_CODEC_GFC,
                                           FZ_CODEC_FALCON};

/* Every dtype x lossless codec through one shape, bitwise. */
static void lossless_shape(const char *label, const shape *s) {
    const size_t n = shape_count(s);
    for (int ti = 0; ti < 2; ti++) {
        const fz_dtype t = ti ? FZ_F64 : FZ_F32;
        void *data = make_data(t, n, 1000u + (unsigned)n, 1);
        for (int c = 0; c < 3; c++) {
            tu_context("%s %s %s", label, tu_dtype_name(t),
                       fz_codec_name(lossless_codecs[c]));
            unsigned cd[FZ_H5Z_CD_USER];
            size_t ncd = fz_h5z_cd_values(cd, lossless_codecs[c],
                                          FZ_MODE_LOSSLESS, 0.0, 0, 0);
            void *back = roundtrip("lossless.h5", t, s, cd, ncd, data);
            check_same(t, data, back, n);
            free(back);
        }
        free(data);
    }
}

static void group_lossless_1d(void) {
    const shape big = {1, {100003}, {4096}}; /* a partial edge chunk */
    const shape small = {1, {10}, {10}}, one = {1, {1}, {1}};
    lossless_shape("1-D 100003 / 4096", &big);
    lossless_shape("1-D 10 / 10", &small);
    lossless_shape("1-D 1 / 1", &one);
}

static void group_lossless_2d(void) {
    const shape a = {2, {300, 257}, {64, 100}}, b = {2, {5, 7}, {5, 7}};
    lossless_shape("2-D 300x257 / 64x100", &a);
    lossless_shape("2-D 5x7 / 5x7", &b);
}

static void group_lossless_3d(void) {
    const shape a = {3, {37, 29, 23}, {16, 16, 8}};
    const shape b = {3, {8, 1, 300}, {3, 1, 128}};
    lossless_shape("3-D 37x29x23 / 16x16x8", &a);
    lossless_shape("3-D 8x1x300 / 3x1x128", &b);
}

/* More than 4 dims: the slowest merge into floatz's 4th. */
static void group_lossless_nd(void) {
    const shape five = {5, {3, 4, 5, 6, 7}, {2, 3, 4, 5, 6}};
    const shape six = {6, {2, 3, 2, 3, 2, 5}, {1, 2, 2, 2, 2, 5}};
    lossless_shape("5-D", &five);
    lossless_shape("6-D", &six);
    const hsize_t zero[6] = {0};
    fz_info info;
    tu_context("6-D chunk shape in the stream");
    inspect_chunk("lossless.h5", zero, &info); /* the last file: 6-D */
    CHECK(info.params.ndims == 4);
    CHECK(info.params.dims[0] == 5 && info.params.dims[1] == 2 &&
          info.params.dims[2] == 2 && info.params.dims[3] == 1 * 2 * 2);

    unsigned cd[FZ_H5Z_CD_USER];
    size_t ncd =
        fz_h5z_cd_values(cd, FZ_CODEC_SLEEK, FZ_MODE_LOSSLESS, 0, 0, 0);
    void *data = make_data(FZ_F32, shape_count(&five), 5, 1);
    free(roundtrip("five.h5", FZ_F32, &five, cd, ncd, data));
    free(data);
    inspect_chunk("five.h5", zero, &info);
    CHECK(info.params.ndims == 4);
    CHECK(info.params.dims[0] == 6 && info.params.dims[1] == 5 &&
          info.params.dims[2] == 4 && info.params.dims[3] == 2 * 3);
}

/* A chunk written in pieces with no chunk cache: HDF5 decodes and
 * re-encodes it at every piece, and ABS values must stay within the bound
 * through the repeated re-encoding (README.md, Lossy modes). */
static void abs_rewrites(fz_codec codec, fz_dtype t, double bound) {
    enum { N = 4096, PIECE = 64 };
    tu_context("ABS %s %s bound %g, chunk rewritten %d times",
               fz_codec_name(codec), tu_dtype_name(t), bound, 2 * N / PIECE);
    const shape s = {1, {N}, {N}};
    void *data = make_data(t, N, 500 + (unsigned)codec, 0);
    const size_t es = tu_dtype_size(t);
    unsigned cd[FZ_H5Z_CD_USER];
    const size_t ncd = fz_h5z_cd_values(cd, codec, FZ_MODE_ABS, bound, 0, 0);
    hid_t f = file_create("rewrite.h5");
    hid_t dapl = H5Pcreate(H5P_DATASET_ACCESS);
    CHECK(dapl >= 0 && H5Pset_chunk_cache(dapl, 1, 0, 1.0) >= 0);
    hid_t d = create_dset(f, "d", file_type(t), &s, cd, ncd, dapl);
    CHECK(d >= 0);
    /* Each piece twice: written in order, then again in reverse. */
    for (int pass = 0; pass < 2; pass++)
        for (hsize_t p = 0; p < N / PIECE; p++) {
            const hsize_t first = (pass ? N / PIECE - 1 - p : p) * PIECE;
            const hsize_t count[1] = {PIECE}, start[1] = {first};
            hid_t fs = H5Dget_space(d), ms = H5Screate_simple(1, count, NULL);
            CHECK(fs >= 0 && ms >= 0);
            CHECK(H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count,
                                      NULL) >= 0);
            CHECK(H5Dwrite(d, mem_type(t), ms, fs, H5P_DEFAULT,
                           (const char *)data + first * es) >= 0);
            CHECK(H5Sclose(fs) >= 0 && H5Sclose(ms) >= 0);
        }
    void *back = read_all(d, t, N);
    check_within(t, data, back, N, bound);
    free(back);
    free(data);
    CHECK(H5Dclose(d) >= 0 && H5Pclose(dapl) >= 0 && H5Fclose(f) >= 0);
}

typedef struct lossy_case {
    fz_codec codec;
    fz_dtype dtype;
    shape s;
    double bound;
} lossy_case;

static void group_lossy_abs(void) {
    const lossy_case cases[] = {
        {FZ_CODEC_SLEEK, FZ_F32, {1, {100003}, {4096}}, 1e-3},
        {FZ_CODEC_SLEEK, FZ_F64, {2, {300, 257}, {64, 100}}, 0.05},
        {FZ_CODEC_SLEEK, FZ_F32, {3, {37, 29, 23}, {16, 16, 8}}, 0.25},
        {FZ_CODEC_LORENZO, FZ_F32, {1, {100003}, {4096}}, 1e-2},
        {FZ_CODEC_LORENZO, FZ_F64, {2, {300, 257}, {64, 100}}, 1e-3},
        {FZ_CODEC_LORENZO, FZ_F64, {3, {37, 29, 23}, {16, 16, 8}}, 0.1},
        {FZ_CODEC_LORENZO, FZ_F32, {3, {37, 29, 23}, {16, 16, 8}}, 1e-4},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const lossy_case *c = &cases[k];
        const size_t n = shape_count(&c->s);
        tu_context("ABS %s %s %d-D bound %g", fz_codec_name(c->codec),
                   tu_dtype_name(c->dtype), c->s.rank, c->bound);
        void *data = make_data(c->dtype, n, 77 + k, 0);
        unsigned cd[FZ_H5Z_CD_USER];
        size_t ncd =
            fz_h5z_cd_values(cd, c->codec, FZ_MODE_ABS, c->bound, 0, 0);
        void *back = roundtrip("abs.h5", c->dtype, &c->s, cd, ncd, data);
        check_within(c->dtype, data, back, n, c->bound);
        free(back);
        free(data);

        const hsize_t zero[6] = {0};
        fz_info info;
        inspect_chunk("abs.h5", zero, &info);
        CHECK(info.params.mode == FZ_MODE_ABS);
        CHECK(info.params.bound == c->bound); /* all 64 bits arrived */
    }
    abs_rewrites(FZ_CODEC_SLEEK, FZ_F32, 0.01);
    abs_rewrites(FZ_CODEC_SLEEK, FZ_F64, 0.3);
    abs_rewrites(FZ_CODEC_LORENZO, FZ_F32, 0.3);
    abs_rewrites(FZ_CODEC_LORENZO, FZ_F64, 1e-3);
}

/* REL: each chunk's bound is relative to that chunk's range. Chunks of
 * the 2-D test field have amplitudes from 0.01 to 10, and every value is
 * checked against its own chunk's range. */
static void rel_field(fz_dtype t, void *a, size_t rows, size_t cols,
                      size_t crow, size_t ccol) {
    tu_rng s = tu_rng_make(9);
    for (size_t r = 0; r < rows; r++)
        for (size_t c = 0; c < cols; c++) {
            const size_t k = (r / crow) * (cols / ccol) + c / ccol;
            const double amp = pow(10.0, (double)(k % 4) - 2.0);
            const uint64_t x = tu_next(&s);
            /* Indices into tu_special32/64: NaN with a payload, +-inf. */
            static const size_t outside[3] = {6, 2, 3};
            if (x % 97 == 0) /* not part of the range */
                set_special(t, a, r * cols + c, outside[(x >> 8) % 3]);
            else
                tu_set_value(t, a, r * cols + c,
                             100.0 +
                                 amp * sin(0.1 * (double)r + 0.05 * (double)c));
        }
}

/* A partial edge chunk: HDF5 pads it with the dataset's fill value, which
 * is then part of the chunk's range (README.md). 100 values 280.0..289.9
 * in chunks of 64: the edge chunk holds 36 values (286.4..289.9) and 28
 * of padding. Returns the edge chunk's enforced bound. */
static double rel_edge_bound(int fill_inside) {
    enum { N = 100 };
    const shape s = {1, {N}, {64}};
    const double rel = 1e-2;
    float v[N];
    for (int i = 0; i < N; i++)
        v[i] = 280.0f + 0.1f * (float)i;
    hid_t f = file_create("edge.h5");
    hid_t space = H5Screate_simple(1, s.dims, NULL);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    unsigned cd[FZ_H5Z_CD_USER];
    size_t ncd = fz_h5z_cd_values(cd, FZ_CODEC_SLEEK, FZ_MODE_REL, rel, 0, 0);
    const float fill = 288.0f;
    CHECK(space >= 0 && dcpl >= 0 && H5Pset_chunk(dcpl, 1, s.chunk) >= 0);
    CHECK(H5Pset_filter(dcpl, FZ_H5Z_FILTER_ID, H5Z_FLAG_MANDATORY, ncd, cd) >=
          0);
    if (fill_inside)
        CHECK(H5Pset_fill_value(dcpl, H5T_NATIVE_FLOAT, &fill) >= 0);
    hid_t d = H5Dcreate2(f, "d", H5T_IEEE_F32LE, space, H5P_DEFAULT, dcpl,
                         H5P_DEFAULT);
    CHECK(d >= 0);
    CHECK(H5Dwrite(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0);
    CHECK(H5Dclose(d) >= 0 && H5Pclose(dcpl) >= 0 && H5Sclose(space) >= 0);
    CHECK(H5Fclose(f) >= 0);

    f = file_open("edge.h5", H5F_ACC_RDONLY);
    d = H5Dopen2(f, "d", H5P_DEFAULT);
    CHECK(d >= 0);
    float *back = read_all(d, FZ_F32, N);
    CHECK(H5Dclose(d) >= 0 && H5Fclose(f) >= 0);
    const hsize_t edge[1] = {64};
    fz_info info;
    inspect_chunk("edge.h5", edge, &info);
    check_within(FZ_F32, v + 64, back + 64, N - 64, info.bound_effective);
    free(back);
    return info.bound_effective;
}

enum { REL_ROWS = 64, REL_COLS = 256, REL_CR = 32, REL_CC = 64 };

/* Chunk (br, bc) of the REL field: every value within rel * the chunk's
 * range, and the stream's enforced bound no larger. Returns that bound. */
static double rel_check_chunk(fz_dtype t, const char *data, const char *back,
                              size_t br, size_t bc, double rel) {
    const size_t es = tu_dtype_size(t), r0 = br * REL_CR, c0 = bc * REL_CC;
    double lo = INFINITY, hi = -INFINITY;
    for (size_t r = r0; r < r0 + REL_CR; r++)
        for (size_t c = c0; c < c0 + REL_CC; c++) {
            const double v = tu_value_at(t, data, r * REL_COLS + c);
            if (isfinite(v)) {
                lo = v < lo ? v : lo;
                hi = v > hi ? v : hi;
            }
        }
    for (size_t r = r0; r < r0 + REL_CR; r++)
        check_within(t, data + (r * REL_COLS + c0) * es,
                     back + (r * REL_COLS + c0) * es, REL_CC, rel * (hi - lo));
    const hsize_t off[2] = {r0, c0};
    fz_info info;
    inspect_chunk("rel.h5", off, &info);
    CHECK(info.params.mode == FZ_MODE_REL);
    CHECK(info.bound_effective > 0 && info.bound_effective <= rel * (hi - lo));
    return info.bound_effective;
}

static void group_lossy_rel(void) {
    const double edge_range =
        (double)(280.0f + 0.1f * 99) - (double)(280.0f + 0.1f * 64); /* 3.5 */
    tu_context("REL edge chunk, default fill value 0");
    CHECK(rel_edge_bound(0) > 10 * 1e-2 * edge_range); /* 0 widens it */
    tu_context("REL edge chunk, fill value inside the data's range");
    CHECK(rel_edge_bound(1) <= 1e-2 * edge_range);

    const shape s = {2, {REL_ROWS, REL_COLS}, {REL_CR, REL_CC}};
    const double rel = 1e-3;
    const fz_codec codecs[] = {FZ_CODEC_SLEEK, FZ_CODEC_LORENZO};
    for (int k = 0; k < 4; k++) {
        const fz_dtype t = k & 1 ? FZ_F64 : FZ_F32;
        const fz_codec codec = codecs[k >> 1];
        tu_context("REL %s %s", fz_codec_name(codec), tu_dtype_name(t));
        void *data = malloc((size_t)REL_ROWS * REL_COLS * tu_dtype_size(t));
        CHECK(data);
        rel_field(t, data, REL_ROWS, REL_COLS, REL_CR, REL_CC);
        unsigned cd[FZ_H5Z_CD_USER];
        size_t ncd = fz_h5z_cd_values(cd, codec, FZ_MODE_REL, rel, 0, 0);
        void *back = roundtrip("rel.h5", t, &s, cd, ncd, data);
        double eff[REL_ROWS / REL_CR][REL_COLS / REL_CC];
        for (size_t br = 0; br < REL_ROWS / REL_CR; br++)
            for (size_t bc = 0; bc < REL_COLS / REL_CC; bc++)
                eff[br][bc] = rel_check_chunk(t, data, back, br, bc, rel);
        /* Chunk (0,0) has amplitude 0.01, chunk (0,3) 10: their enforced
         * bounds differ by about 1000x. */
        CHECK(eff[0][3] > 100 * eff[0][0]);
        free(back);
        free(data);
    }
}

/* Codec options, flags and the bound reach the stored stream. */
static void group_options(void) {
    typedef struct {
        fz_codec codec;
        fz_mode mode;
        double bound;
        uint32_t flags;
        int32_t opt0, opt1;
    } opt_case;
    const opt_case cases[] = {
        {FZ_CODEC_GFC, FZ_MODE_LOSSLESS, 0, 0, 3, 0},
        {FZ_CODEC_GFC, FZ_MODE_LOSSLESS, 0, 0, 0, 1024},
        {FZ_CODEC_FALCON, FZ_MODE_LOSSLESS, 0, 0, 64, 0},
        {FZ_CODEC_LORENZO, FZ_MODE_ABS, 0.01, 0, 256, 1},
        {FZ_CODEC_SLEEK, FZ_MODE_LOSSLESS, 0, FZ_FLAG_NO_CHECKSUM, 0, 0},
        {FZ_CODEC_SLEEK, FZ_MODE_ABS, 0.3, FZ_FLAG_NO_CHECKSUM, 0, 0},
    };
    const shape s = {3, {37, 29, 23}, {16, 16, 8}};
    const size_t n = shape_count(&s);
    void *data = make_data(FZ_F64, n, 31, 0);
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const opt_case *c = &cases[k];
        tu_context("options: %s mode %d flags %u options %d,%d",
                   fz_codec_name(c->codec), (int)c->mode, c->flags, c->opt0,
                   c->opt1);
        unsigned cd[FZ_H5Z_CD_USER];
        size_t ncd = fz_h5z_cd_values(cd, c->codec, c->mode, c->bound, c->flags,
                                      c->opt0);
        cd[FZ_H5Z_CD_OPTION1] = (unsigned)c->opt1;
        void *back = roundtrip("options.h5", FZ_F64, &s, cd, ncd, data);
        if (c->mode == FZ_MODE_LOSSLESS)
            check_same(FZ_F64, data, back, n);
        else
            check_within(FZ_F64, data, back, n, c->bound);
        free(back);
        const hsize_t zero[3] = {0};
        fz_info info;
        inspect_chunk("options.h5", zero, &info);
        CHECK(info.params.mode == c->mode && info.params.bound == c->bound);
        CHECK(info.has_checksums == !(c->flags & FZ_FLAG_NO_CHECKSUM));
        if (c->opt0)
            CHECK(info.params.codec_options[0] == c->opt0);
        if (c->opt1)
            CHECK(info.params.codec_options[1] == c->opt1);
    }
    free(data);
}

/* Every stored chunk is a floatz stream of the chunk's shape that decodes
 * to exactly that chunk's values (the edge chunks padded by HDF5). */
static void group_raw_chunk(void) {
    enum { ROWS = 100, COLS = 90, CR = 32, CC = 40 };
    const shape s = {2, {ROWS, COLS}, {CR, CC}};
    const double bound = 1e-3;
    void *data = make_data(FZ_F64, (size_t)ROWS * COLS, 4, 0);
    for (int lossy = 0; lossy < 2; lossy++) {
        const fz_codec codec = lossy ? FZ_CODEC_LORENZO : FZ_CODEC_SLEEK;
        tu_context("raw chunks, %s", fz_codec_name(codec));
        unsigned cd[FZ_H5Z_CD_USER];
        size_t ncd =
            fz_h5z_cd_values(cd, codec, lossy ? FZ_MODE_ABS : FZ_MODE_LOSSLESS,
                             lossy ? bound : 0.0, 0, 0);
        free(roundtrip("raw.h5", FZ_F64, &s, cd, ncd, data));

        hid_t f = file_open("raw.h5", H5F_ACC_RDONLY);
        hid_t d = H5Dopen2(f, "d", H5P_DEFAULT);
        hid_t space = H5Dget_space(d);
        hsize_t nchunks = 0;
        CHECK(d >= 0 && space >= 0);
        CHECK(H5Dget_num_chunks(d, space, &nchunks) >= 0);
        CHECK(nchunks == 4 * 3);
        double chunk[CR * CC];
        for (hsize_t idx = 0; idx < nchunks; idx++) {
            hsize_t off[2], size;
            unsigned mask;
            haddr_t addr;
            CHECK(H5Dget_chunk_info(d, space, idx, off, &mask, &addr, &size) >=
                  0);
            size_t nb;
            uint32_t mask2 = 1;
            unsigned char *raw = read_raw_chunk(d, off, &nb, &mask2);
            CHECK(mask == 0 && mask2 == 0 && nb == size);
            fz_info info;
            CHECK(fz_inspect(raw, nb, &info) == FZ_OK);
            CHECK(info.params.codec == codec && info.params.dtype == FZ_F64);
            CHECK(info.params.ndims == 2 && info.params.dims[0] == CC &&
                  info.params.dims[1] == CR);
            CHECK(info.original_bytes == sizeof chunk);
            size_t got = 0;
            CHECK(fz_decompress(raw, nb, chunk, sizeof chunk, NULL, &got) ==
                      FZ_OK &&
                  got == sizeof chunk);
            for (size_t r = 0; r < CR && off[0] + r < ROWS; r++) {
                const size_t cols = off[1] + CC <= COLS ? CC : COLS - off[1];
                const void *want =
                    (const double *)data + (off[0] + r) * COLS + off[1];
                if (lossy)
                    check_within(FZ_F64, want, chunk + r * CC, cols, bound);
                else
                    check_same(FZ_F64, want, chunk + r * CC, cols);
            }
            free(raw);
        }
        CHECK(H5Sclose(space) >= 0 && H5Dclose(d) >= 0 && H5Fclose(f) >= 0);
    }
    free(data);
}

/* cd_values: defaults, the appended part, the bound's word order, and a
 * dataset created from another's dcpl with a new chunk shape. */
static void check_full_cd(hid_t d, const unsigned *want) {
    hid_t dcpl = H5Dget_create_plist(d);
    unsigned flags = 0, cd[32];
    size_t n = 32;
    CHECK(dcpl >= 0 && H5Pget_filter_by_id2(dcpl, FZ_H5Z_FILTER_ID, &flags, &n,
                                            cd, 0, NULL, NULL) >= 0);
    CHECK(n == FZ_H5Z_CD_TOTAL);
    CHECK((flags & H5Z_FLAG_OPTIONAL) == 0);
    for (size_t k = 0; k < FZ_H5Z_CD_TOTAL; k++)
        CHECKF(cd[k] == want[k], "cd[%zu] = %u, expected %u", k, cd[k],
               want[k]);
    CHECK(H5Pclose(dcpl) >= 0);
}

static void group_cdvalues(void) {
    tu_context("cd_values helper");
    unsigned cd[FZ_H5Z_CD_USER];
    CHECK(fz_h5z_cd_values(cd, FZ_CODEC_LORENZO, FZ_MODE_ABS, 1.0, 1, -5) == 8);
    CHECK(cd[0] == 1 && cd[1] == 4 && cd[2] == 1 && cd[5] == 1);
    CHECK(cd[3] == 0 && cd[4] == 0x3ff00000u); /* 1.0: low word, high word */
    CHECK(fz_h5z_cd_option(cd[6]) == -5 && cd[7] == 0);
    fz_h5z_cd_values(cd, FZ_CODEC_SLEEK, FZ_MODE_ABS, 0.1, 0, 0);
    CHECK(cd[3] == 0x9999999au && cd[4] == 0x3fb99999u); /* 0.1 */
    CHECK(fz_h5z_cd_bound(cd) == 0.1);

    hid_t f = file_create("cd.h5");
    const shape s2 = {2, {40, 70}, {16, 32}};
    tu_context("no cd_values: every default");
    hid_t d = create_dset(f, "none", H5T_IEEE_F32LE, &s2, NULL, 0, H5P_DEFAULT);
    CHECK(d >= 0);
    const unsigned want0[] = {1, 1, 0, 0, 0, 0, 0, 0, 1, 2, 32, 16, 1, 1};
    check_full_cd(d, want0);
    CHECK(H5Dclose(d) >= 0);

    tu_context("three cd_values: gfc");
    const unsigned three[] = {1, FZ_CODEC_GFC, 0};
    const shape s1 = {1, {1000}, {250}};
    d = create_dset(f, "three", H5T_IEEE_F64LE, &s1, three, 3, H5P_DEFAULT);
    CHECK(d >= 0);
    const unsigned want1[] = {1, 2, 0, 0, 0, 0, 0, 0, 2, 1, 250, 1, 1, 1};
    check_full_cd(d, want1);
    CHECK(H5Dclose(d) >= 0);

    tu_context("full cd_values, 5-D chunk merged");
    fz_h5z_cd_values(cd, FZ_CODEC_LORENZO, FZ_MODE_ABS, 0.1, 0, 300);
    cd[FZ_H5Z_CD_OPTION1] = 1;
    const shape s5 = {5, {4, 4, 6, 8, 10}, {2, 3, 4, 5, 6}};
    d = create_dset(f, "five", H5T_IEEE_F32LE, &s5, cd, 8, H5P_DEFAULT);
    CHECK(d >= 0);
    const unsigned want5[] = {1, 4, 1, 0x9999999au, 0x3fb99999u, 0, 300,
                              1, 1, 4, 6,           5,           4, 6};
    check_full_cd(d, want5);

    tu_context("a copied dcpl (14 values) with a new chunk shape");
    hid_t dcpl = H5Dget_create_plist(d);
    CHECK(dcpl >= 0 && H5Dclose(d) >= 0);
    const hsize_t chunk[5] = {1, 1, 2, 8, 10};
    CHECK(H5Pset_chunk(dcpl, 5, chunk) >= 0);
    hid_t space = H5Screate_simple(s5.rank, s5.dims, NULL);
    d = H5Dcreate2(f, "copy", H5T_IEEE_F32LE, space, H5P_DEFAULT, dcpl,
                   H5P_DEFAULT);
    CHECK(d >= 0);
    const unsigned wantc[] = {1, 4, 1, 0x9999999au, 0x3fb99999u, 0, 300,
                              1, 1, 4, 10,          8,           2, 1};
    check_full_cd(d, wantc);
    const size_t n5 = shape_count(&s5);
    float *data = make_data(FZ_F32, n5, 55, 0);
    CHECK(H5Dwrite(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) >=
          0);
    CHECK(H5Dclose(d) >= 0 && H5Pclose(dcpl) >= 0 && H5Sclose(space) >= 0);
    CHECK(H5Fclose(f) >= 0);
    f = file_open("cd.h5", H5F_ACC_RDONLY);
    d = H5Dopen2(f, "copy", H5P_DEFAULT);
    CHECK(d >= 0);
    float *back = read_all(d, FZ_F32, n5);
    check_within(FZ_F32, data, back, n5, 0.1);
    free(back);
    free(data);
    CHECK(H5Dclose(d) >= 0 && H5Fclose(f) >= 0);
}

/* H5Dcreate2 must fail, with the plugin's message holding `needle`
 * (NULL: HDF5 itself may refuse first; only the failure is checked). */
static void expect_create_fails(hid_t file, hid_t type, const shape *s,
                                const unsigned *cd, size_t ncd,
                                const char *needle) {
    quiet_begin();
    g_needle = needle;
    g_found = 0;
    hid_t d = create_dset(file, "refused", type, s, cd, ncd, H5P_DEFAULT);
    const int found = needle ? g_found : 1;
    g_needle = NULL;
    quiet_end();
    CHECK(d < 0);
    CHECKF(found, "no plugin message containing \"%s\" on the stack", needle);
}

static void group_refuse(void) {
    hid_t f = file_create("refuse.h5");
    const shape s = {1, {1000}, {100}};
    unsigned cd[FZ_H5Z_CD_USER];
    const size_t ncd =
        fz_h5z_cd_values(cd, FZ_CODEC_SLEEK, FZ_MODE_LOSSLESS, 0, 0, 0);

    tu_context("refuse: integer dataset");
    expect_create_fails(f, H5T_STD_I32LE, &s, cd, ncd,
                        "not a floating-point type");
    tu_context("refuse: big-endian float32");
    expect_create_fails(f, H5T_IEEE_F32BE, &s, cd, ncd, "not little-endian");
    tu_context("refuse: big-endian float64");
    expect_create_fails(f, H5T_IEEE_F64BE, &s, cd, ncd, "not little-endian");
    tu_context("refuse: long double");
    if (H5Tget_size(H5T_NATIVE_LDOUBLE) != 8)
        expect_create_fails(f, H5T_NATIVE_LDOUBLE, &s, cd, ncd,
                            "neither 4 nor 8 bytes");
    tu_context("refuse: a 4-byte float that is not IEEE binary32");
    hid_t odd = H5Tcopy(H5T_IEEE_F32LE);
    CHECK(odd >= 0 && H5Tset_ebias(odd, 100) >= 0);
    expect_create_fails(f, odd, &s, cd, ncd, "not an IEEE-754");
    CHECK(H5Tclose(odd) >= 0);
    tu_context("refuse: contiguous layout"); /* HDF5 refuses it first */
    const shape contiguous = {1, {1000}, {0}};
    expect_create_fails(f, H5T_IEEE_F32LE, &contiguous, cd, ncd, NULL);

    typedef struct {
        const char *what;
        unsigned codec, mode;
        double bound;
        unsigned flags, opt0, version;
        size_t n;
        const char *needle;
    } bad_cd;
    const char *unsupported = fz_status_string(FZ_ERR_UNSUPPORTED);
    const char *invalid = fz_status_string(FZ_ERR_INVALID_ARGUMENT);
    const bad_cd bad[] = {
        {"unknown codec", 99, 0, 0, 0, 0, 1, 4, "unknown codec id 99"},
        {"codec 0", 0, 0, 0, 0, 0, 1, 4, "unknown codec id 0"},
        {"negative bound", 1, 1, -1.0, 0, 0, 1, 8, "bound"},
        {"NaN bound", 1, 1, NAN, 0, 0, 1, 8, "bound"},
        {"infinite bound", 1, 2, INFINITY, 0, 0, 1, 8, "bound"},
        {"lossless with a bound", 1, 0, 0.5, 0, 0, 1, 8, "bound"},
        {"unknown mode", 1, 3, 0.5, 0, 0, 1, 8, "unknown mode 3"},
        {"unknown flags", 1, 0, 0, 2, 0, 1, 8, "unknown flags"},
        {"layout version 2", 1, 0, 0, 0, 0, 2, 8, "layout version 2"},
        {"layout version 0", 1, 0, 0, 0, 0, 0, 1, "layout version 0"},
        {"too many values", 1, 0, 0, 0, 0, 1, 9, "cd_values given"},
        {"11 values", 1, 0, 0, 0, 0, 1, 11, "cd_values given"},
        /* The bound is two values: 4 give half of it (a subnormal), and a
         * lossy mode without it ran at bound 0 (lossless) unannounced. */
        {"4 values: half a bound", 1, 1, 0.5, 0, 0, 1, 4,
         "the bound takes two"},
        {"4 values, lossless", 3, 0, 0, 0, 0, 1, 4, "the bound takes two"},
        {"ABS without a bound", 1, 1, 0.5, 0, 0, 1, 3, "without a bound"},
        {"REL without a bound", 4, 2, 0.5, 0, 0, 1, 3, "without a bound"},
        {"subnormal bound", 1, 1, 1e-310, 0, 0, 1, 5, "is subnormal"},
        {"gfc lossy", 2, 1, 0.1, 0, 0, 1, 8, unsupported},
        {"lorenzo lossless", 4, 0, 0, 0, 0, 1, 8, unsupported},
        {"falcon chunk 2000", 3, 0, 0, 0, 2000, 1, 8, invalid},
        {"gfc dimensionality 33", 2, 0, 0, 0, 33, 1, 8, invalid},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        tu_context("refuse cd_values: %s", bad[k].what);
        unsigned v[16] = {0};
        fz_h5z_cd_values(v, (fz_codec)bad[k].codec, (fz_mode)bad[k].mode,
                         bad[k].bound, bad[k].flags, (int32_t)bad[k].opt0);
        v[FZ_H5Z_CD_VERSION] = bad[k].version;
        expect_create_fails(f, H5T_IEEE_F32LE, &s, v, bad[k].n, bad[k].needle);
    }
    tu_context("refuse cd_values: the bound's words swapped");
    unsigned sw[FZ_H5Z_CD_USER];
    fz_h5z_cd_values(sw, FZ_CODEC_SLEEK, FZ_MODE_ABS, 0.5, 0, 0);
    const unsigned lo = sw[FZ_H5Z_CD_BOUND_LO];
    sw[FZ_H5Z_CD_BOUND_LO] = sw[FZ_H5Z_CD_BOUND_HI];
    sw[FZ_H5Z_CD_BOUND_HI] = lo;
    expect_create_fails(f, H5T_IEEE_F32LE, &s, sw, 5, "swapped?");
    tu_context("refuse: nothing was created");
    CHECK(H5Lexists(f, "refused", H5P_DEFAULT) == 0);
    CHECK(H5Fclose(f) >= 0);
}

/* Filters in a pipeline, in the order given. */
typedef enum pipe_filter {
    PF_FLOATZ,
    PF_SHUFFLE,
    PF_DEFLATE,
    PF_FLETCHER32,
    PF_SCALEOFFSET
} pipe_filter;

/* H5Dcreate2 of a float32 dataset `name` whose pipeline is pipe[0..n)
 * (floatz with fz_flags and cd). When it fails, *found tells whether the
 * plugin's message holding `needle` was on the stack. */
static hid_t create_piped(hid_t file, const char *name, const shape *s,
                          const pipe_filter *pipe, int n, unsigned fz_flags,
                          const unsigned *cd, size_t ncd, const char *needle,
                          int *found) {
    hid_t space = H5Screate_simple(s->rank, s->dims, NULL);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    CHECK(space >= 0 && dcpl >= 0 &&
          H5Pset_chunk(dcpl, s->rank, s->chunk) >= 0);
    for (int k = 0; k < n; k++) {
        herr_t r = -1;
        switch (pipe[k]) {
        case PF_FLOATZ:
            r = H5Pset_filter(dcpl, FZ_H5Z_FILTER_ID, fz_flags, ncd, cd);
            break;
        case PF_SHUFFLE: r = H5Pset_shuffle(dcpl); break;
        case PF_DEFLATE: r = H5Pset_deflate(dcpl, 4); break;
        case PF_FLETCHER32: r = H5Pset_fletcher32(dcpl); break;
        case PF_SCALEOFFSET:
            r = H5Pset_scaleoffset(dcpl, H5Z_SO_FLOAT_DSCALE, 2);
            break;
        }
        CHECK(r >= 0);
    }
    hid_t d = H5Dcreate2(file, name, H5T_IEEE_F32LE, space, H5P_DEFAULT, dcpl,
                         H5P_DEFAULT);
    *found = d < 0 && needle && stack_has(needle);
    CHECK(H5Pclose(dcpl) >= 0 && H5Sclose(space) >= 0);
    return d;
}

/* floatz must come first in the pipeline: a filter before it hands it
 * other bytes than the values. Shuffle before a lossy floatz was accepted
 * and broke the bound silently (errors of ~300 for a bound of 0.5); size
 * changing filters before it made every write fail after H5Dcreate2 had
 * succeeded. Filters after floatz work. */
static void group_pipeline(void) {
    hid_t f = file_create("pipeline.h5");
    const shape s = {1, {10000}, {1000}};
    const size_t n = shape_count(&s);
    const double bound = 0.5;
    unsigned abs_cd[FZ_H5Z_CD_USER], ll_cd[FZ_H5Z_CD_USER];
    const size_t nabs =
        fz_h5z_cd_values(abs_cd, FZ_CODEC_SLEEK, FZ_MODE_ABS, bound, 0, 0);
    const size_t nll =
        fz_h5z_cd_values(ll_cd, FZ_CODEC_FALCON, FZ_MODE_LOSSLESS, 0, 0, 0);
    typedef struct {
        const char *what;
        pipe_filter pipe[3];
        int n;
        unsigned flags;
        int lossy;
        const char *needle;
    } piped;
    const piped refused[] = {
        {"shuffle, floatz ABS",
         {PF_SHUFFLE, PF_FLOATZ},
         2,
         H5Z_FLAG_MANDATORY,
         1,
         "first filter of the pipeline, but filter 2 (shuffle)"},
        {"shuffle, floatz ABS optional",
         {PF_SHUFFLE, PF_FLOATZ},
         2,
         H5Z_FLAG_OPTIONAL,
         1,
         "(shuffle) comes before it"},
        {"shuffle, floatz lossless",
         {PF_SHUFFLE, PF_FLOATZ},
         2,
         H5Z_FLAG_MANDATORY,
         0,
         "(shuffle) comes before it"},
        {"deflate, floatz",
         {PF_DEFLATE, PF_FLOATZ},
         2,
         H5Z_FLAG_MANDATORY,
         0,
         "(deflate) comes before it"},
        {"fletcher32, floatz",
         {PF_FLETCHER32, PF_FLOATZ},
         2,
         H5Z_FLAG_MANDATORY,
         0,
         "(fletcher32) comes before it"},
        {"scaleoffset, floatz",
         {PF_SCALEOFFSET, PF_FLOATZ},
         2,
         H5Z_FLAG_MANDATORY,
         1,
         "(scaleoffset) comes before it"},
        {"floatz twice",
         {PF_FLOATZ, PF_FLOATZ},
         2,
         H5Z_FLAG_MANDATORY,
         0,
         "more than once"},
    };
    for (size_t k = 0; k < sizeof refused / sizeof refused[0]; k++) {
        const piped *c = &refused[k];
        tu_context("pipeline refused: %s", c->what);
        int found = 0;
        quiet_begin();
        hid_t d = create_piped(f, "refused", &s, c->pipe, c->n, c->flags,
                               c->lossy ? abs_cd : ll_cd, c->lossy ? nabs : nll,
                               c->needle, &found);
        quiet_end();
        CHECK(d < 0);
        CHECKF(found, "no plugin message containing \"%s\"", c->needle);
    }
    CHECK(H5Lexists(f, "refused", H5P_DEFAULT) == 0);

    tu_context("pipeline: floatz ABS, shuffle, deflate, fletcher32");
    float *data = make_data(FZ_F32, n, 21, 0);
    const pipe_filter ok[4] = {PF_FLOATZ, PF_SHUFFLE, PF_DEFLATE,
                               PF_FLETCHER32};
    int found = 0;
    hid_t d = create_piped(f, "d", &s, ok, 4, H5Z_FLAG_MANDATORY, abs_cd, nabs,
                           NULL, &found);
    CHECK(d >= 0);
    CHECK(H5Dwrite(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) >=
          0);
    CHECK(H5Dclose(d) >= 0 && H5Fclose(f) >= 0);
    f = file_open("pipeline.h5", H5F_ACC_RDONLY);
    d = H5Dopen2(f, "d", H5P_DEFAULT);
    CHECK(d >= 0);
    check_floatz_first(d, 4);
    float *back = read_all(d, FZ_F32, n);
    check_within(FZ_F32, data, back, n, bound);
    free(back);
    free(data);
    CHECK(H5Dclose(d) >= 0 && H5Fclose(f) >= 0);
}

/* H5Dread of dataset "d" must fail with `needle` from the plugin on the
 * stack. */
static void expect_read_fails(const char *file, size_t n, const char *needle) {
    hid_t f = file_open(file, H5F_ACC_RDONLY);
    hid_t d = H5Dopen2(f, "d", H5P_DEFAULT);
    CHECK(d >= 0);
    float *back = malloc(n * sizeof *back);
    CHECK(back);
    quiet_begin();
    herr_t r =
        H5Dread(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, back);
    const int found = stack_has(needle);
    quiet_end();
    CHECK(r < 0);
    CHECKF(found, "no plugin message containing \"%s\" on the stack", needle);
    free(back);
    CHECK(H5Dclose(d) >= 0 && H5Fclose(f) >= 0);
}

/* Replace chunk 0 of dataset "d" by these bytes, as if it were stored by
 * the filter (filter mask 0). */
static void write_chunk0(const char *file, const void *bytes, size_t size) {
    hid_t f = file_open(file, H5F_ACC_RDWR);
    hid_t d = H5Dopen2(f, "d", H5P_DEFAULT);
    const hsize_t zero[1] = {0};
    CHECK(d >= 0 && H5Dwrite_chunk(d, H5P_DEFAULT, 0, zero, size, bytes) >= 0);
    CHECK(H5Dclose(d) >= 0 && H5Fclose(f) >= 0);
}

/* Chunk 1 is untouched by the damage to chunk 0 and still reads. */
static void check_chunk1(const char *file, const float *data) {
    hid_t f = file_open(file, H5F_ACC_RDONLY);
    hid_t d = H5Dopen2(f, "d", H5P_DEFAULT);
    hid_t space = H5Dget_space(d);
    const hsize_t start[1] = {4096}, count[1] = {4096};
    CHECK(d >= 0 && space >= 0);
    CHECK(H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, count,
                              NULL) >= 0);
    hid_t mspace = H5Screate_simple(1, count, NULL);
    float *back = malloc(4096 * sizeof *back);
    CHECK(back && mspace >= 0);
    CHECK(H5Dread(d, H5T_NATIVE_FLOAT, mspace, space, H5P_DEFAULT, back) >= 0);
    check_same(FZ_F32, data + 4096, back, 4096);
    free(back);
    CHECK(H5Sclose(mspace) >= 0 && H5Sclose(space) >= 0);
    CHECK(H5Dclose(d) >= 0 && H5Fclose(f) >= 0);
}

/* The status fz_decompress gives for these bytes as a 4096-float chunk. */
static fz_status direct_status(const void *bytes, size_t size) {
    static float out[4096];
    size_t got;
    return fz_decompress(bytes, size, out, sizeof out, NULL, &got);
}

static void group_corrupt(void) {
    const shape s = {1, {8192}, {4096}};
    const size_t n = 8192;
    float *data = make_data(FZ_F32, n, 3, 0);
    unsigned cd[FZ_H5Z_CD_USER];
    size_t ncd =
        fz_h5z_cd_values(cd, FZ_CODEC_SLEEK, FZ_MODE_LOSSLESS, 0, 0, 0);
    tu_context("corrupt: intact file");
    float *back = roundtrip("corrupt.h5", FZ_F32, &s, cd, ncd, data);
    check_same(FZ_F32, data, back, n);
    free(back);

    /* A valid stream of chunk 0, as the filter makes it. */
    fz_params p;
    CHECK(fz_params_init(&p, FZ_F32, 4096) == FZ_OK);
    size_t cap, size;
    CHECK(fz_compress_bound(&p, &cap) == FZ_OK);
    unsigned char *stream = malloc(cap), *bad = malloc(cap);
    CHECK(stream && bad);
    CHECK(fz_compress(&p, data, 4096 * sizeof *data, stream, cap, &size) ==
          FZ_OK);
    fz_info info;
    CHECK(fz_inspect(stream, size, &info) == FZ_OK);
    CHECK(info.payload_offset + 16 < size);

    tu_context("corrupt: one payload byte flipped");
    memcpy(bad, stream, size);
    bad[info.payload_offset + (size - info.payload_offset) / 2] ^= 0x10;
    CHECK(direct_status(bad, size) == FZ_ERR_DATA_CHECKSUM);
    write_chunk0("corrupt.h5", bad, size);
    expect_read_fails("corrupt.h5", n, fz_status_string(FZ_ERR_DATA_CHECKSUM));
    check_chunk1("corrupt.h5", data);

    tu_context("corrupt: truncated stream");
    const fz_status trunc = direct_status(stream, size - 100);
    CHECK(trunc != FZ_OK);
    write_chunk0("corrupt.h5", stream, size - 100);
    expect_read_fails("corrupt.h5", n, fz_status_string(trunc));

    tu_context("corrupt: only 10 bytes");
    const fz_status tiny = direct_status(stream, 10);
    CHECK(tiny != FZ_OK);
    write_chunk0("corrupt.h5", stream, 10);
    expect_read_fails("corrupt.h5", n, fz_status_string(tiny));

    tu_context("corrupt: random bytes");
    tu_rng r = tu_rng_make(12345);
    tu_fill_bytes(&r, bad, 700);
    const fz_status rnd = direct_status(bad, 700);
    CHECK(rnd != FZ_OK);
    write_chunk0("corrupt.h5", bad, 700);
    expect_read_fails("corrupt.h5", n, fz_status_string(rnd));

    tu_context("corrupt: a valid stream of another size");
    CHECK(fz_params_init(&p, FZ_F32, 2048) == FZ_OK);
    CHECK(fz_compress(&p, data, 2048 * sizeof *data, bad, cap, &size) == FZ_OK);
    write_chunk0("corrupt.h5", bad, size);
    expect_read_fails("corrupt.h5", n, "chunk stream holds 8192 bytes");

    tu_context("corrupt: a valid float64 stream of the same byte count");
    CHECK(fz_params_init(&p, FZ_F64, 2048) == FZ_OK);
    double d64[2048];
    for (size_t i = 0; i < 2048; i++)
        d64[i] = data[i];
    CHECK(fz_compress(&p, d64, sizeof d64, bad, cap, &size) == FZ_OK);
    write_chunk0("corrupt.h5", bad, size);
    expect_read_fails("corrupt.h5", n, "of dtype 2");
    check_chunk1("corrupt.h5", data);

    free(stream);
    free(bad);
    free(data);
}

/* What fz_compress says about FZ_EXEC_GPU in this process. */
static fz_status gpu_status(void) {
    fz_params p;
    float x[64] = {0};
    unsigned char out[1024];
    size_t size;
    fz_params_init(&p, FZ_F32, 64);
    p.exec = FZ_EXEC_GPU;
    return fz_compress(&p, x, sizeof x, out, sizeof out, &size);
}

/* Write dataset "d" with chunks too large for the chunk cache, so that
 * the filter runs inside H5Dwrite; returns H5Dwrite's result (the message
 * holding `needle` must then be on the stack when it failed). */
static herr_t write_uncached(const char *file, const shape *s,
                             const float *data, const char *needle) {
    hid_t f = file_create(file);
    hid_t dapl = H5Pcreate(H5P_DATASET_ACCESS);
    CHECK(dapl >= 0 && H5Pset_chunk_cache(dapl, 1, 0, 1.0) >= 0);
    hid_t d = create_dset(f, "d", H5T_IEEE_F32LE, s, NULL, 0, dapl);
    CHECK(d >= 0);
    quiet_begin();
    herr_t r =
        H5Dwrite(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, data);
    const int found = r < 0 && stack_has(needle);
    quiet_end();
    CHECKF(r >= 0 || found, "no plugin message containing \"%s\"", needle);
    CHECK(H5Dclose(d) >= 0 && H5Pclose(dapl) >= 0 && H5Fclose(f) >= 0);
    return r;
}

static void group_exec(void) {
    const shape s = {1, {8192}, {4096}};
    const size_t n = 8192;
    float *data = make_data(FZ_F32, n, 8, 1);

    tu_context("FLOATZ_HDF5_EXEC=cpu");
    CHECK(setenv("FLOATZ_HDF5_EXEC", "cpu", 1) == 0);
    CHECK(write_uncached("exec.h5", &s, data, "") >= 0);
    float *back = roundtrip("exec.h5", FZ_F32, &s, NULL, 0, data);
    check_same(FZ_F32, data, back, n);
    free(back);

    tu_context("FLOATZ_HDF5_EXEC=bogus");
    CHECK(setenv("FLOATZ_HDF5_EXEC", "bogus", 1) == 0);
    CHECK(write_uncached("bogus.h5", &s, data, "FLOATZ_HDF5_EXEC=bogus") < 0);
    expect_read_fails("exec.h5", n, "FLOATZ_HDF5_EXEC=bogus");

    tu_context("FLOATZ_HDF5_EXEC=gpu");
    CHECK(setenv("FLOATZ_HDF5_EXEC", "gpu", 1) == 0);
    const fz_status gs = gpu_status();
    printf("GPU in this process: %s\n", fz_status_string(gs));
    if (gs != FZ_OK) { /* both directions fail with the library's reason */
        CHECK(gs == FZ_ERR_NO_CUDA || gs == FZ_ERR_NO_GPU);
        CHECK(write_uncached("gpu.h5", &s, data, fz_status_string(gs)) < 0);
        expect_read_fails("exec.h5", n, fz_status_string(gs));
    } else { /* the GPU writes and reads the same streams */
        back = roundtrip("gpu.h5", FZ_F32, &s, NULL, 0, data);
        check_same(FZ_F32, data, back, n);
        free(back);
        hid_t f = file_open("exec.h5", H5F_ACC_RDONLY);
        hid_t d = H5Dopen2(f, "d", H5P_DEFAULT);
        CHECK(d >= 0);
        back = read_all(d, FZ_F32, n);
        check_same(FZ_F32, data, back, n);
        free(back);
        CHECK(H5Dclose(d) >= 0 && H5Fclose(f) >= 0);
    }
    CHECK(unsetenv("FLOATZ_HDF5_EXEC") == 0);
    free(data);
}

/* HDF5 loads the plugin from HDF5_PLUGIN_PATH by itself. */
static void group_load(void) {
    tu_context("dynamic loading");
    CHECKF(getenv("HDF5_PLUGIN_PATH"), "HDF5_PLUGIN_PATH is not set");
    CHECK(H5Zfilter_avail(FZ_H5Z_FILTER_ID) > 0);
    unsigned cfg = 0;
    CHECK(H5Zget_filter_info(FZ_H5Z_FILTER_ID, &cfg) >= 0);
    CHECK(cfg & H5Z_FILTER_CONFIG_ENCODE_ENABLED);
    CHECK(cfg & H5Z_FILTER_CONFIG_DECODE_ENABLED);
    const shape s = {2, {100, 100}, {50, 30}};
    float *data = make_data(FZ_F32, 10000, 1, 1);
    float *back = roundtrip("load.h5", FZ_F32, &s, NULL, 0, data);
    check_same(FZ_F32, data, back, 10000);
    free(back);
    free(data);
}

/* With plugin loading off, a program that has the library (here through
 * dlopen) registers the filter itself. */
static void group_register(void) {
    tu_context("fz_h5z_register");
    const char *dir = getenv("HDF5_PLUGIN_PATH");
    CHECKF(dir, "HDF5_PLUGIN_PATH is not set");
    CHECK(H5PLset_loading_state(0) >= 0);
    CHECK(H5Zfilter_avail(FZ_H5Z_FILTER_ID) == 0);
    char lib[2048];
    snprintf(lib, sizeof lib, "%s/libH5Zfloatz.so", dir);
    void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    CHECKF(h, "dlopen: %s", dlerror());
    /* The plugin's own copy of floatz stays private. */
    CHECK(dlsym(h, "fz_compress") == NULL);
    void *sym = dlsym(h, "fz_h5z_register");
    int (*reg)(void) = NULL;
    CHECK(sym != NULL);
    memcpy(&reg, &sym, sizeof reg); /* object to function pointer */
    CHECK(reg() == 0);
    CHECK(H5Zfilter_avail(FZ_H5Z_FILTER_ID) > 0);
    const shape s = {1, {5000}, {1000}};
    double *data = make_data(FZ_F64, 5000, 2, 1);
    double *back = roundtrip("register.h5", FZ_F64, &s, NULL, 0, data);
    check_same(FZ_F64, data, back, 5000);
    free(back);
    free(data);
    /* h stays open: HDF5 keeps pointers into it until exit. */
}

/* -------------------------------------------------- h5tools_test.sh modes */

typedef struct tool_dset {
    const char *name;
    fz_dtype dtype;
    shape s;
} tool_dset;

static const tool_dset tool_dsets[] = {
    {"f32_1d", FZ_F32, {1, {100003}, {4096}}},
    {"f64_3d", FZ_F64, {3, {37, 29, 23}, {16, 16, 8}}},
    {"f32_5d", FZ_F32, {5, {3, 4, 5, 6, 7}, {2, 3, 4, 5, 6}}},
};
#define N_TOOL_DSETS 3

/* Unfiltered chunked datasets of compressible data with specials. */
static int write_input(const char *path) {
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    CHECK(f >= 0);
    for (int k = 0; k < N_TOOL_DSETS; k++) {
        const tool_dset *t = &tool_dsets[k];
        void *data = make_data(t->dtype, shape_count(&t->s), 100u + k, 0);
        hid_t d = create_dset(f, t->name, file_type(t->dtype), &t->s, NULL,
                              (size_t)-1, H5P_DEFAULT);
        CHECK(d >= 0);
        CHECK(H5Dwrite(d, mem_type(t->dtype), H5S_ALL, H5S_ALL, H5P_DEFAULT,
                       data) >= 0);
        CHECK(H5Dclose(d) >= 0);
        free(data);
    }
    CHECK(H5Fclose(f) >= 0);
    return 0;
}

/* 0 when both files hold the same bytes in every dataset, 1 otherwise. */
static int compare_files(const char *a, const char *b) {
    hid_t fa = H5Fopen(a, H5F_ACC_RDONLY, H5P_DEFAULT);
    hid_t fb = H5Fopen(b, H5F_ACC_RDONLY, H5P_DEFAULT);
    CHECK(fa >= 0 && fb >= 0);
    int differ = 0;
    for (int k = 0; k < N_TOOL_DSETS; k++) {
        const tool_dset *t = &tool_dsets[k];
        const size_t n = shape_count(&t->s);
        hid_t da = H5Dopen2(fa, t->name, H5P_DEFAULT);
        hid_t db = H5Dopen2(fb, t->name, H5P_DEFAULT);
        CHECK(da >= 0 && db >= 0);
        void *va = read_all(da, t->dtype, n), *vb = read_all(db, t->dtype, n);
        if (memcmp(va, vb, n * tu_dtype_size(t->dtype)) != 0) {
            fprintf(stderr, "%s differs\n", t->name);
            differ = 1;
        }
        free(va);
        free(vb);
        CHECK(H5Dclose(da) >= 0 && H5Dclose(db) >= 0);
    }
    CHECK(H5Fclose(fa) >= 0 && H5Fclose(fb) >= 0);
    return differ;
}

/* ------------------------------------------------------------------ main */

typedef struct group {
    const char *name;
    void (*run)(void);
} group;

/* Codec auto: each chunk is compressed by the codec its data favours, and
 * reads back exactly (lossless) or within the bound. */
static void group_auto(void) {
    const shape s = {2, {1000, 300}, {1000, 50}};
    const size_t n = shape_count(&s);
    double *dec = (double *)malloc(n * sizeof *dec);
    CHECK(dec != NULL);
    tu_fill_decimal(FZ_F64, dec, n, 100000, 17); /* falcon's case */
    unsigned cd[FZ_H5Z_CD_USER];
    tu_context("auto lossless");
    size_t ncd =
        fz_h5z_cd_values(cd, FZ_CODEC_AUTO, FZ_MODE_LOSSLESS, 0.0, 0, 0);
    void *back = roundtrip("auto.h5", FZ_F64, &s, cd, ncd, dec);
    check_same(FZ_F64, dec, back, n);
    free(back);
    const hsize_t zero[6] = {0};
    fz_info info;
    inspect_chunk("auto.h5", zero, &info);
    CHECK(info.params.codec == FZ_CODEC_FALCON);
    free(dec);

    tu_context("auto ABS");
    void *data = make_data(FZ_F32, n, 5, 0);
    ncd = fz_h5z_cd_values(cd, FZ_CODEC_AUTO, FZ_MODE_ABS, 1e-2, 0, 0);
    back = roundtrip("auto.h5", FZ_F32, &s, cd, ncd, data);
    check_within(FZ_F32, data, back, n, 1e-2);
    inspect_chunk("auto.h5", zero, &info);
    CHECK(info.params.codec == FZ_CODEC_SLEEK ||
          info.params.codec == FZ_CODEC_LORENZO);
    CHECK(info.params.mode == FZ_MODE_ABS && info.params.bound == 1e-2);
    free(back);
    free(data);
}

static const group groups[] = {
    {"load", group_load},
    {"register", group_register},
    {"cdvalues", group_cdvalues},
    {"lossless_1d", group_lossless_1d},
    {"lossless_2d", group_lossless_2d},
    {"lossless_3d", group_lossless_3d},
    {"lossless_nd", group_lossless_nd},
    {"lossy_abs", group_lossy_abs},
    {"lossy_rel", group_lossy_rel},
    {"options", group_options},
    {"raw_chunk", group_raw_chunk},
    {"refuse", group_refuse},
    {"pipeline", group_pipeline},
    {"corrupt", group_corrupt},
    {"exec", group_exec},
    {"auto", group_auto},
};
#define N_GROUPS (sizeof groups / sizeof groups[0])

static void make_tmp_dir(void) {
    const char *base = getenv("TMPDIR");
    snprintf(g_dir, sizeof g_dir, "%s/h5zfloatz.XXXXXX",
             base && *base ? base : "/tmp");
    if (!mkdtemp(g_dir)) {
        perror("mkdtemp");
        exit(1);
    }
    atexit(remove_dir);
}

int main(int argc, char **argv) {
    if (argc == 3 && strcmp(argv[1], "write_input") == 0)
        return write_input(argv[2]);
    if (argc == 4 && strcmp(argv[1], "compare") == 0)
        return compare_files(argv[2], argv[3]);
    if (argc > 2) {
        fprintf(stderr, "usage: %s [group] | write_input FILE | compare A B\n",
                argv[0]);
        return 2;
    }
    /* "register" must run before anything loads the plugin. */
    int ran = 0;
    make_tmp_dir();
    for (size_t g = 0; g < N_GROUPS; g++) {
        if (argc == 2 ? strcmp(argv[1], groups[g].name) != 0
                      : strcmp(groups[g].name, "register") == 0)
            continue;
        printf("group %s\n", groups[g].name);
        fflush(stdout);
        groups[g].run();
        ran++;
    }
    if (!ran) {
        fprintf(stderr, "unknown group %s\n", argv[1]);
        return 2;
    }
    CHECK(H5close() >= 0);
    printf("ok: %d group(s)\n", ran);
    return 0;
}
