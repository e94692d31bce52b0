/* File streaming API (CPU backend): fz_compress_file / fz_decompress_file
 * and the FILE* forms. Streams must equal fz_compress's bytes for every
 * codec and mode at sizes around batch boundaries, decode to what
 * fz_decompress gives, and every failure must leave no output file.
 * Run all groups, or one: test_stream GROUP. Files live in a fresh
 * directory under the working directory, removed at the end. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../src/api/fz_internal.h"
#include "pipeline_cases.h"
#include "test_util.h"

static unsigned cases_run;
static char dir[64];

static void path_of(char *dst, size_t cap, const char *name) {
    snprintf(dst, cap, "%s/%s", dir, name);
}

static void write_file(const char *path, const void *data, size_t n) {
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    CHECK(fwrite(data, 1, n, f) == n);
    CHECK(fclose(f) == 0);
}

static uint8_t *read_file(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    CHECK(f != NULL);
    CHECK(fseeko(f, 0, SEEK_END) == 0);
    const off_t size = ftello(f);
    CHECK(size >= 0);
    rewind(f);
    uint8_t *data = (uint8_t *)tu_xmalloc((size_t)size);
    CHECK(fread(data, 1, (size_t)size, f) == (size_t)size);
    fclose(f);
    *n = (size_t)size;
    return data;
}

static int file_exists(const char *path) {
    struct stat st;
    return stat(path, &st) == 0;
}

/* No file in the directory but those named. */
static void check_no_leftovers(int expected_files) {
    char cmd[128];
    snprintf(cmd, sizeof cmd, "test $(ls -A %s | wc -l) -eq %d", dir,
             expected_files);
    CHECK(system(cmd) == 0);
}

/* ----------------------------------------------------------- round trips */

static void progress_check(void *user, uint64_t done, uint64_t total) {
    uint64_t *last = (uint64_t *)user;
    CHECK(done > last[0] && done <= total);
    last[0] = done;
    last[1] = total;
}

/* One case: compress the file with batches of two chunks, compare with
 * fz_compress, decompress the file, compare with fz_decompress. */
static void roundtrip_case(const pc_config *c, uint64_t n) {
    tu_context("%s n=%llu", c->name, (unsigned long long)n);
    fz_params p = pc_params(c, n);
    uint64_t chunks = 0;
    p.batch_kib = pc_batch_kib(pc_chunk_bytes(&p), &chunks);
    const size_t bytes = (size_t)n * tu_dtype_size(c->dtype);
    void *data = tu_xmalloc(bytes);
    tu_fill(c->gen, c->dtype, data, (size_t)n, n * 31 + 7);
    char in[128], z[128], out[128];
    path_of(in, sizeof in, "in.raw");
    path_of(z, sizeof z, "in.fz");
    path_of(out, sizeof out, "out.raw");
    write_file(in, data, bytes);

    uint64_t last[2] = {0, 0}, zsize = 0;
    CHECK_OK(fz_compress_file(&p, in, z, progress_check, last, &zsize));
    CHECK_EQ_U64(last[0], n ? bytes : 0);
    size_t ref_size = 0, got_size = 0;
    uint8_t *ref = tu_compress(&p, data, &ref_size);
    uint8_t *got = read_file(z, &got_size);
    CHECK_EQ_U64(zsize, ref_size);
    CHECK_EQ_U64(got_size, ref_size);
    CHECK(memcmp(got, ref, ref_size) == 0);

    fz_decode_options o = tu_decode_opts(0, 0);
    o.batch_kib = p.batch_kib;
    uint64_t dsize = 0;
    CHECK_OK(fz_decompress_file(z, out, &o, NULL, NULL, &dsize));
    CHECK_EQ_U64(dsize, bytes);
    void *want = tu_xmalloc(bytes);
    size_t want_size = 0, out_size = 0;
    CHECK_OK(fz_decompress(ref, ref_size, want, bytes, NULL, &want_size));
    uint8_t *back = read_file(out, &out_size);
    CHECK_EQ_U64(out_size, bytes);
    CHECK(memcmp(back, want, bytes) == 0);
    if (c->mode == FZ_MODE_LOSSLESS)
        CHECK(memcmp(back, data, bytes) == 0);
    free(data);
    free(want);
    free(ref);
    free(got);
    free(back);
    check_no_leftovers(3);
    cases_run++;
}

static void group_roundtrip(void) {
    for (size_t i = 0; i < PC_CONFIG_COUNT; i++) {
        const pc_config *c = &pc_configs[i];
        fz_params p = pc_params(c, 1 << 16);
        const uint64_t cb = pc_chunk_bytes(&p);
        uint64_t chunks = 0, sizes[16];
        pc_batch_kib(cb, &chunks);
        const size_t k = pc_sizes(cb / tu_dtype_size(c->dtype), chunks, sizes);
        for (size_t j = 0; j < k; j++)
            roundtrip_case(c, sizes[j]);
    }
}

/* Default batch sizes (one batch), a 3-D shape, and no checksums. */
static void group_shapes(void) {
    const uint64_t dims[3] = {100, 70, 30};
    for (int flags = 0; flags <= 1; flags++) {
        tu_context("3-D sleek flags=%d", flags);
        fz_params p = tu_params(FZ_F32, 1, (uint32_t)flags);
        CHECK_OK(fz_params_set_shape(&p, 3, dims));
        const size_t n = 100 * 70 * 30, bytes = n * 4;
        float *data = (float *)tu_xmalloc(bytes);
        tu_fill(TU_GEN_SMOOTH, FZ_F32, data, n, 5);
        char in[128], z[128], out[128];
        path_of(in, sizeof in, "in.raw");
        path_of(z, sizeof z, "in.fz");
        path_of(out, sizeof out, "out.raw");
        write_file(in, data, bytes);
        for (uint32_t kib = 0; kib <= 48; kib += 48) {
            p.batch_kib = kib; /* default, then 3 chunks a batch */
            uint64_t zsize = 0, dsize = 0;
            CHECK_OK(fz_compress_file(&p, in, z, NULL, NULL, &zsize));
            size_t ref_size = 0, got_size = 0, out_size = 0;
            uint8_t *ref = tu_compress(&p, data, &ref_size);
            uint8_t *got = read_file(z, &got_size);
            CHECK(got_size == ref_size && memcmp(got, ref, ref_size) == 0);
            CHECK_OK(fz_decompress_file(z, out, NULL, NULL, NULL, &dsize));
            uint8_t *back = read_file(out, &out_size);
            CHECK(out_size == bytes && memcmp(back, data, bytes) == 0);
            free(ref);
            free(got);
            free(back);
            cases_run++;
        }
        free(data);
    }
}

/* A codec that predicts across rows and planes (lorenzo) must see each
 * batch with the array's geometry: 2-D, 3-D and 4-D arrays (4-D lorenzo
 * merges the two slowest extents) cut into batches of two chunks give the
 * bytes of fz_compress. */
static void shaped_case(fz_dtype dtype, fz_mode mode, double bound,
                        uint32_t ndims, const uint64_t *dims) {
    tu_context("lorenzo %s %uD mode %d", dtype == FZ_F32 ? "f32" : "f64", ndims,
               (int)mode);
    fz_params p = tu_params(dtype, 1, 0);
    CHECK_OK(fz_params_set_shape(&p, ndims, dims));
    p.codec = FZ_CODEC_LORENZO;
    p.mode = mode;
    p.bound = bound;
    uint64_t n = 0, chunks = 0;
    CHECK_OK(fz_params_count(&p, &n, NULL));
    p.batch_kib = pc_batch_kib(pc_chunk_bytes(&p), &chunks);
    const size_t bytes = (size_t)n * tu_dtype_size(dtype);
    CHECK(bytes > 2 * chunks * pc_chunk_bytes(&p)); /* several batches */
    void *data = tu_xmalloc(bytes);
    tu_fill(TU_GEN_SMOOTH, dtype, data, (size_t)n, 11 + ndims);
    char in[128], z[128], out[128];
    path_of(in, sizeof in, "shaped.raw");
    path_of(z, sizeof z, "shaped.fz");
    path_of(out, sizeof out, "shaped.out");
    write_file(in, data, bytes);
    uint64_t zsize = 0, dsize = 0;
    CHECK_OK(fz_compress_file(&p, in, z, NULL, NULL, &zsize));
    size_t ref_size = 0, got_size = 0, out_size = 0, want_size = 0;
    uint8_t *ref = tu_compress(&p, data, &ref_size);
    uint8_t *got = read_file(z, &got_size);
    CHECK(got_size == ref_size && memcmp(got, ref, ref_size) == 0);
    fz_decode_options o = tu_decode_opts(0, 0);
    o.batch_kib = p.batch_kib;
    CHECK_OK(fz_decompress_file(z, out, &o, NULL, NULL, &dsize));
    void *want = tu_xmalloc(bytes);
    CHECK_OK(fz_decompress(ref, ref_size, want, bytes, NULL, &want_size));
    uint8_t *back = read_file(out, &out_size);
    CHECK(out_size == bytes && memcmp(back, want, bytes) == 0);
    free(data);
    free(want);
    free(ref);
    free(got);
    free(back);
    check_no_leftovers(3);
    cases_run++;
}

static void group_lorenzo_shapes(void) {
    const uint64_t d2[2] = {300, 8727}, d3[3] = {40, 24, 2723},
                   d4[4] = {20, 12, 10, 1100};
    shaped_case(FZ_F32, FZ_MODE_ABS, 1e-3, 2, d2);
    shaped_case(FZ_F32, FZ_MODE_REL, 1e-4, 3, d3);
    shaped_case(FZ_F64, FZ_MODE_REL, 1e-5, 3, d3);
    shaped_case(FZ_F32, FZ_MODE_ABS, 1e-2, 4, d4);
}

/* The FILE* forms work from the files' current positions. */
static void group_offsets(void) {
    tu_context("FILE* at offsets");
    const size_t n = 20000, bytes = n * 8;
    double *data = (double *)tu_xmalloc(bytes);
    tu_fill(TU_GEN_WAVE, FZ_F64, data, n, 9);
    fz_params p = tu_params(FZ_F64, n, 0);
    p.mode = FZ_MODE_REL; /* REL reads the input twice */
    p.bound = 1e-5;
    p.batch_kib = 32;
    char in[128], z[128];
    path_of(in, sizeof in, "prefixed.raw");
    path_of(z, sizeof z, "prefixed.fz");
    FILE *fi = fopen(in, "w+b"), *fz = fopen(z, "w+b");
    CHECK(fi && fz);
    CHECK(fwrite("0123456", 1, 7, fi) == 7);
    CHECK(fwrite(data, 1, bytes, fi) == bytes);
    CHECK(fwrite("abc", 1, 3, fz) == 3);
    CHECK(fseeko(fi, 7, SEEK_SET) == 0);
    uint64_t zsize = 0;
    CHECK_OK(fz_compress_fp(&p, fi, fz, NULL, NULL, &zsize));
    size_t ref_size = 0;
    uint8_t *ref = tu_compress(&p, data, &ref_size);
    CHECK_EQ_U64(zsize, ref_size);
    uint8_t *got = (uint8_t *)tu_xmalloc(ref_size);
    CHECK(fseeko(fz, 3, SEEK_SET) == 0);
    CHECK(fread(got, 1, ref_size, fz) == ref_size);
    CHECK(memcmp(got, ref, ref_size) == 0);
    /* decompress from offset 3 into a file after a prefix */
    FILE *fo = tmpfile();
    CHECK(fo != NULL);
    CHECK(fwrite("xy", 1, 2, fo) == 2);
    CHECK(fseeko(fz, 3, SEEK_SET) == 0);
    uint64_t dsize = 0;
    CHECK_OK(fz_decompress_fp(fz, fo, NULL, NULL, NULL, &dsize));
    CHECK_EQ_U64(dsize, bytes);
    double *back = (double *)tu_xmalloc(bytes), *want = tu_xmalloc(bytes);
    size_t want_size = 0;
    CHECK_OK(fz_decompress(ref, ref_size, want, bytes, NULL, &want_size));
    CHECK(fseeko(fo, 2, SEEK_SET) == 0);
    CHECK(fread(back, 1, bytes, fo) == bytes);
    CHECK(memcmp(back, want, bytes) == 0);
    fclose(fi);
    fclose(fz);
    fclose(fo);
    unlink(in);
    unlink(z);
    free(data);
    free(ref);
    free(got);
    free(back);
    free(want);
    cases_run++;
}

/* ---------------------------------------------------------------- errors */

/* A stream file for the error cases: sleek f32, 5 batches of 2 chunks. */
static uint8_t *error_stream(size_t *size, fz_params *p) {
    const size_t n = 5 * 2 * 4096 + 100;
    float *data = (float *)tu_xmalloc(n * 4);
    tu_fill(TU_GEN_SMOOTH, FZ_F32, data, n, 3);
    *p = tu_params(FZ_F32, n, 0);
    p->batch_kib = 32;
    uint8_t *s = tu_compress(p, data, size);
    free(data);
    return s;
}

static void expect_decode_failure(const uint8_t *stream, size_t size,
                                  fz_status want, const char *what) {
    tu_context("decode error: %s", what);
    char z[128], out[128];
    path_of(z, sizeof z, "bad.fz");
    path_of(out, sizeof out, "out.raw");
    write_file(z, stream, size);
    fz_decode_options o = tu_decode_opts(0, 0);
    o.batch_kib = 32;
    uint64_t dsize = 12345;
    CHECK_STATUS(fz_decompress_file(z, out, &o, NULL, NULL, &dsize), want);
    CHECK_EQ_U64(dsize, 12345); /* untouched on failure */
    CHECK(!file_exists(out));
    /* the in-memory decoder agrees */
    void *dst = tu_xmalloc(1 << 20);
    size_t got = 0;
    CHECK_STATUS(fz_decompress(stream, size, dst, 1 << 20, NULL, &got), want);
    free(dst);
    unlink(z);
    check_no_leftovers(0);
    cases_run++;
}

static void group_corrupt(void) {
    size_t size = 0;
    fz_params p;
    uint8_t *s = error_stream(&size, &p);
    uint8_t *bad = (uint8_t *)tu_xmalloc(size);
    fz_info info;
    CHECK_OK(fz_inspect(s, size, &info));
    const size_t cuts[] = {
        0, 3, 100, FZ_HEADER_BYTES + 4, (size_t)info.payload_offset, size - 1};
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++)
        expect_decode_failure(s, cuts[i], FZ_ERR_TRUNCATED, "truncated");
    memcpy(bad, s, size);
    bad[0] ^= 1;
    expect_decode_failure(bad, size, FZ_ERR_BAD_MAGIC, "magic");
    memcpy(bad, s, size);
    bad[40] ^= 1;
    expect_decode_failure(bad, size, FZ_ERR_HEADER_CHECKSUM, "header");
    memcpy(bad, s, size);
    bad[FZ_HEADER_BYTES + 8 * 7] ^= 1; /* size of chunk 7 */
    expect_decode_failure(bad, size, FZ_ERR_TABLE_CHECKSUM, "table");
    memcpy(bad, s, size);
    bad[size - 200] ^= 0x10; /* in the last batch's payload */
    fz_decode_options o = tu_decode_opts(0, 0);
    size_t got = 0;
    void *dst = tu_xmalloc(1 << 20);
    const fz_status want = fz_decompress(bad, size, dst, 1 << 20, &o, &got);
    CHECK(want == FZ_ERR_DATA_CHECKSUM || want == FZ_ERR_CORRUPT_CHUNK);
    expect_decode_failure(bad, size, want, "payload");
    free(dst);
    free(s);
    free(bad);
}

static void group_io_errors(void) {
    char in[128], out[128], missing[128];
    path_of(in, sizeof in, "in.raw");
    path_of(out, sizeof out, "out.fz");
    path_of(missing, sizeof missing, "no-such-file");
    fz_params p = tu_params(FZ_F32, 10000, 0);
    float data[10001] = {0};
    uint64_t size = 7;

    tu_context("unreadable input");
    CHECK_STATUS(fz_compress_file(&p, missing, out, NULL, NULL, &size),
                 FZ_ERR_IO);
    CHECK_STATUS(fz_decompress_file(missing, out, NULL, NULL, NULL, &size),
                 FZ_ERR_IO);
    check_no_leftovers(0);

    tu_context("input shorter and longer than the shape");
    write_file(in, data, 9999 * 4);
    CHECK_STATUS(fz_compress_file(&p, in, out, NULL, NULL, &size),
                 FZ_ERR_SIZE_MISMATCH);
    write_file(in, data, 10001 * 4);
    CHECK_STATUS(fz_compress_file(&p, in, out, NULL, NULL, &size),
                 FZ_ERR_SIZE_MISMATCH);
    p.mode = FZ_MODE_REL; /* the range pass sees it first */
    p.bound = 0.01;
    write_file(in, data, 9999 * 4);
    CHECK_STATUS(fz_compress_file(&p, in, out, NULL, NULL, &size),
                 FZ_ERR_SIZE_MISMATCH);
    check_no_leftovers(1);

    tu_context("output directory missing");
    char nodir[160];
    snprintf(nodir, sizeof nodir, "%s/no-dir/out.fz", dir);
    p = tu_params(FZ_F32, 10000, 0);
    write_file(in, data, 10000 * 4);
    CHECK_STATUS(fz_compress_file(&p, in, nodir, NULL, NULL, &size), FZ_ERR_IO);
    CHECK_EQ_U64(size, 7);

    tu_context("device full");
    FILE *full = fopen("/dev/full", "wb");
    if (full) {
        FILE *fi = fopen(in, "rb");
        CHECK(fi != NULL);
        p.batch_kib = 16;
        CHECK_STATUS(fz_compress_fp(&p, fi, full, NULL, NULL, &size),
                     FZ_ERR_IO);
        fclose(fi);
        fclose(full);
    }
    tu_context("non-seekable output");
    FILE *fi = fopen(in, "rb");
    int fds[2];
    CHECK(fi != NULL && pipe(fds) == 0);
    FILE *pw = fdopen(fds[1], "wb");
    CHECK(pw != NULL);
    CHECK_STATUS(fz_compress_fp(&p, fi, pw, NULL, NULL, &size), FZ_ERR_IO);
    fclose(fi);
    fclose(pw);
    close(fds[0]);
    unlink(in);
    check_no_leftovers(0);
    cases_run++;
}

/* The path forms' outputs get a new file's mode, 0666 & ~umask, under any
 * umask (they are written as a temporary file and renamed). */
static void group_output_mode(void) {
    char in[128], out[128], back[128];
    path_of(in, sizeof in, "in.raw");
    path_of(out, sizeof out, "out.fz");
    path_of(back, sizeof back, "back.raw");
    fz_params p = tu_params(FZ_F32, 1000, 0);
    float data[1000] = {0};
    write_file(in, data, sizeof data);
    const mode_t masks[] = {022, 077, 002, 0};
    const mode_t saved = umask(022);
    for (size_t i = 0; i < sizeof masks / sizeof masks[0]; i++) {
        tu_context("umask %03o", (unsigned)masks[i]);
        umask(masks[i]);
        uint64_t size = 0;
        struct stat st;
        CHECK_OK(fz_compress_file(&p, in, out, NULL, NULL, &size));
        CHECK(stat(out, &st) == 0 && (st.st_mode & 0777) == (0666 & ~masks[i]));
        CHECK_OK(fz_decompress_file(out, back, NULL, NULL, NULL, &size));
        CHECK(stat(back, &st) == 0 &&
              (st.st_mode & 0777) == (0666 & ~masks[i]));
        unlink(out);
        unlink(back);
    }
    umask(saved);
    unlink(in);
    check_no_leftovers(0);
    cases_run++;
}

static void group_arguments(void) {
    tu_context("arguments");
    char in[128], out[128];
    path_of(in, sizeof in, "in.raw");
    path_of(out, sizeof out, "out.fz");
    fz_params p = tu_params(FZ_F32, 4, 0);
    uint64_t size = 0;
    float data[4] = {1, 2, 3, 4};
    write_file(in, data, sizeof data);
    CHECK_STATUS(fz_compress_file(NULL, in, out, NULL, NULL, &size),
                 FZ_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(fz_compress_file(&p, NULL, out, NULL, NULL, &size),
                 FZ_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(fz_compress_file(&p, in, NULL, NULL, NULL, &size),
                 FZ_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(fz_compress_file(&p, in, out, NULL, NULL, NULL),
                 FZ_ERR_INVALID_ARGUMENT);
    p.gpu_streams = FZ_MAX_GPU_STREAMS + 1;
    CHECK_STATUS(fz_compress_file(&p, in, out, NULL, NULL, &size),
                 FZ_ERR_INVALID_ARGUMENT);
    p.gpu_streams = FZ_MAX_GPU_STREAMS;
    CHECK_OK(fz_compress_file(&p, in, out, NULL, NULL, &size));
    fz_decode_options o = tu_decode_opts(0, 0);
    o.gpu_streams = FZ_MAX_GPU_STREAMS + 1;
    CHECK_STATUS(fz_decompress_file(out, in, &o, NULL, NULL, &size),
                 FZ_ERR_INVALID_ARGUMENT);
    o = tu_decode_opts(0, 0);
    o.reserved[2] = 1;
    CHECK_STATUS(fz_decompress_file(out, in, &o, NULL, NULL, &size),
                 FZ_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(fz_decompress_fp(NULL, stdout, NULL, NULL, NULL, &size),
                 FZ_ERR_INVALID_ARGUMENT);
    /* the GPU backend without a GPU (or CUDA): a clear status, no file */
    if (fz_gpu_count() == 0) {
        unlink(out);
        p = tu_params(FZ_F32, 4, 0);
        p.exec = FZ_EXEC_GPU;
        const fz_status s = fz_compress_file(&p, in, out, NULL, NULL, &size);
        CHECK(s == FZ_ERR_NO_GPU || s == FZ_ERR_NO_CUDA);
        CHECK(!file_exists(out));
    }
    unlink(in);
    unlink(out);
    check_no_leftovers(0);
    cases_run++;
}

/* A batch_kib far above the data's size: one batch of the whole array
 * both ways, its buffers sized by the array (decompression took
 * batch_kib itself, 4 TiB here: out of memory for a stream of 5 KiB). */
static void group_large_batch(void) {
    enum { N = 1234 };
    char in[128], out[128], back[128];
    path_of(in, sizeof in, "in.raw");
    path_of(out, sizeof out, "out.fz");
    path_of(back, sizeof back, "back.raw");
    float data[N];
    tu_fill(TU_GEN_WAVE, FZ_F32, data, N, 5);
    write_file(in, data, sizeof data);
    const uint32_t kibs[] = {UINT32_MAX, 1u << 30};
    for (int k = 0; k < 2; k++) {
        tu_context("large batch_kib %u", (unsigned)kibs[k]);
        fz_params p = tu_params(FZ_F32, N, 0);
        p.batch_kib = kibs[k];
        uint64_t size = 0, got = 0;
        CHECK_OK(fz_compress_file(&p, in, out, NULL, NULL, &size));
        size_t mem_size = 0, file_size = 0;
        uint8_t *mem = tu_compress(&p, data, &mem_size);
        uint8_t *file = read_file(out, &file_size);
        CHECK(file_size == mem_size && memcmp(file, mem, mem_size) == 0);
        fz_decode_options o = tu_decode_opts(0, 0);
        o.batch_kib = kibs[k];
        CHECK_OK(fz_decompress_file(out, back, &o, NULL, NULL, &got));
        CHECK_EQ_U64(got, sizeof data);
        size_t back_size = 0;
        uint8_t *decoded = read_file(back, &back_size);
        CHECK(back_size == sizeof data &&
              memcmp(decoded, data, sizeof data) == 0);
        free(decoded);
        free(file);
        free(mem);
        unlink(out);
        unlink(back);
        cases_run++;
    }
    unlink(in);
    check_no_leftovers(0);
}

/* ----------------------------------------------------------------- plans
 * The GPU pipeline's batches (fz_plan_split with the ramp): contiguous,
 * every chunk once, the ramp's sizes where there is room for it, the
 * largest batch reported right, and every batch compressed on its own
 * giving the whole stream's table entries and payload bytes. */

/* Compress batch b of plan on its own (CPU) and compare its entries and
 * payload with the whole stream's at the batch's place. */
static void check_batch_bytes(const fz_batch_plan *plan, uint64_t b,
                              const uint8_t *src, const uint8_t *whole,
                              uint64_t *payload_pos) {
    uint64_t first, n, first_byte, bytes;
    fz_plan_batch(plan, b, &first, &n, &first_byte, &bytes);
    fz_params bp;
    CHECK_OK(fz_plan_batch_params(plan, b, &bp));
    size_t size = 0;
    uint8_t *sub = tu_compress(&bp, src + first_byte, &size);
    const uint32_t entry = fz_table_entry_bytes(plan->h.flags);
    fz_header wh, sh;
    CHECK_OK(fz_header_read(whole, FZ_HDR_BYTES, &wh));
    CHECK_OK(fz_header_read(sub, size, &sh));
    CHECK_EQ_U64(sh.chunk_count, n);
    CHECK(memcmp(sub + FZ_HDR_BYTES, whole + FZ_HDR_BYTES + first * entry,
                 (size_t)(n * entry)) == 0);
    CHECK(memcmp(sub + fz_payload_offset(&sh),
                 whole + fz_payload_offset(&wh) + *payload_pos,
                 (size_t)sh.payload_bytes) == 0);
    *payload_pos += sh.payload_bytes;
    free(sub);
}

static void plan_case(const fz_params *p, uint64_t cpb, int compare) {
    tu_context("plans %s %llu chunks per batch", fz_codec_name(p->codec),
               (unsigned long long)cpb);
    fz_batch_plan plan;
    CHECK_OK(fz_plan_compress(p, 1, &plan));
    fz_plan_split(&plan, cpb * plan.h.chunk_bytes, 1);
    const uint64_t chunks = plan.h.chunk_count;
    uint64_t ramp[3], up = 0;
    for (int i = 0; i < 3; i++) {
        ramp[i] = cpb >> (3 - i) ? cpb >> (3 - i) : 1;
        up += ramp[i];
    }
    const int ramped = cpb > 1 && chunks >= 2 * up + 2 * cpb;
    CHECK_EQ_U64(plan.ramp, ramped ? 3 : 0);
    uint64_t next = 0, next_byte = 0, most = 0;
    for (uint64_t b = 0; b < plan.batch_count; b++) {
        uint64_t first, n, first_byte, bytes;
        fz_plan_batch(&plan, b, &first, &n, &first_byte, &bytes);
        CHECK_EQ_U64(first, next);
        CHECK_EQ_U64(first_byte, next_byte);
        CHECK(n >= 1 && n <= cpb);
        if (ramped && b < 3)
            CHECK_EQ_U64(n, ramp[b]);
        else if (ramped && b >= plan.batch_count - 3)
            CHECK_EQ_U64(n, ramp[plan.batch_count - 1 - b]);
        else if (b + 1 < plan.batch_count - (ramped ? 3 : 0))
            CHECK_EQ_U64(n, cpb); /* a middle batch but the last */
        most = n > most ? n : most;
        next += n;
        next_byte += bytes;
    }
    CHECK_EQ_U64(next, chunks);
    CHECK_EQ_U64(next_byte, plan.h.original_bytes);
    if (plan.batch_count) {
        uint64_t first, n, first_byte, bytes;
        fz_plan_batch(&plan, fz_plan_largest_batch(&plan), &first, &n,
                      &first_byte, &bytes);
        CHECK_EQ_U64(n, most);
    }
    if (!compare)
        return;
    CHECK_EQ_U64(plan.ramp, 3); /* the byte cases are all ramped */
    const size_t esize = tu_dtype_size(p->dtype);
    uint64_t values = 1;
    for (uint32_t d = 0; d < p->ndims; d++)
        values *= p->dims[d];
    uint8_t *src = (uint8_t *)tu_xmalloc((size_t)values * esize);
    tu_fill(TU_GEN_WAVE, p->dtype, src, (size_t)values, values + cpb);
    size_t whole_size = 0;
    uint8_t *whole = tu_compress(p, src, &whole_size);
    fz_batch_plan rel = plan;
    if (plan.h.mode == FZ_MODE_REL) { /* the range fz_compress took */
        double lo = 0, hi = 0;
        fz_value_range(p->dtype, src, values, 1, &lo, &hi);
        fz_plan_set_range(&rel, lo, hi);
    }
    uint64_t pos = 0;
    for (uint64_t b = 0; b < rel.batch_count; b++)
        check_batch_bytes(&rel, b, src, whole, &pos);
    fz_header wh;
    CHECK_OK(fz_header_read(whole, whole_size, &wh));
    CHECK_EQ_U64(pos, wh.payload_bytes);
    free(src);
    free(whole);
}

static void group_plans(void) {
    /* the split alone, over chunk counts and batch sizes around the
     * ramp's threshold */
    const uint64_t cpbs[] = {1, 2, 3, 7, 8, 9, 16, 64};
    for (size_t i = 0; i < sizeof cpbs / sizeof cpbs[0]; i++)
        for (uint64_t chunks = 0; chunks <= 12 * cpbs[i] + 5; chunks++) {
            fz_params p = tu_params(FZ_F32, chunks * 4096, 0);
            plan_case(&p, cpbs[i], 0);
            cases_run++;
        }
    /* bytes: sleek 1-D with a partial last chunk, lorenzo 3-D REL (whole
     * slabs of its own view), falcon f64 */
    fz_params s = tu_params(FZ_F32, 37 * 4096 + 100, 0);
    plan_case(&s, 2, 1);
    plan_case(&s, 8, 1);
    fz_params l = tu_params(FZ_F32, 1, 0);
    const uint64_t dims[3] = {128, 96, 445}; /* 40-plane chunks: 11 + 5 */
    CHECK_OK(fz_params_set_shape(&l, 3, dims));
    l.codec = FZ_CODEC_LORENZO;
    l.mode = FZ_MODE_REL;
    l.bound = 1e-3;
    plan_case(&l, 2, 1);
    fz_params f = tu_params(FZ_F64, 40 * 1025 + 3, 0);
    f.codec = FZ_CODEC_FALCON;
    plan_case(&f, 8, 1);
    cases_run += 4;
}

static const tu_group groups[] = {
    {"roundtrip", group_roundtrip}, {"shapes", group_shapes},
    {"offsets", group_offsets},     {"corrupt", group_corrupt},
    {"io_errors", group_io_errors}, {"output_mode", group_output_mode},
    {"arguments", group_arguments}, {"lorenzo_shapes", group_lorenzo_shapes},
    {"plans", group_plans},         {"large_batch", group_large_batch},
};

/* Each group starts with an empty scratch directory. */
static void empty_dir(void) {
    char cmd[96];
    snprintf(cmd, sizeof cmd, "rm -f %s/*", dir);
    CHECK(system(cmd) == 0);
}

int main(int argc, char **argv) {
    snprintf(dir, sizeof dir, "test_stream_XXXXXX");
    CHECK(mkdtemp(dir) != NULL);
    const int rc =
        tu_run_groups(argc, argv, "test_stream", groups,
                      sizeof groups / sizeof groups[0], &cases_run, empty_dir);
    rmdir(dir);
    return rc;
}
