/* Random access (fz_decompress_range): for every codec and mode, values
 * [first, first + count) decode to the same bytes as that slice of a full
 * decode, at chunk boundaries and at random, with 1 and several threads,
 * never writing past count values; ranges past the end, too small or NULL
 * buffers are refused; a damaged chunk fails exactly the ranges that touch
 * it; the file forms read only what they need and agree. Run all groups,
 * or one: test_range GROUP. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../src/format/fz_container.h"
#include "range_cases.h"
#include "test_util.h"

static unsigned cases_run;

typedef struct range_stream {
    uint8_t *bytes;
    size_t size;
    uint8_t *full; /* fz_decompress's output */
    uint64_t n, chunk_values;
    size_t esize;
} range_stream;

static range_stream make_range_stream(const fz_params *p, tu_gen gen,
                                      uint64_t n) {
    range_stream s;
    s.n = n;
    s.esize = tu_dtype_size(p->dtype);
    void *src = tu_xmalloc(n * s.esize);
    tu_fill(gen, p->dtype, src, n, 77 + n);
    s.bytes = tu_compress(p, src, &s.size);
    free(src);
    fz_info info;
    CHECK_OK(fz_inspect(s.bytes, s.size, &info));
    s.chunk_values = info.chunk_bytes / s.esize;
    s.full = (uint8_t *)tu_xmalloc(n * s.esize);
    size_t got = 0;
    fz_decode_options o = tu_decode_opts(1, 0);
    CHECK_OK(fz_decompress(s.bytes, s.size, s.full, n * s.esize, &o, &got));
    CHECK_EQ_U64(got, n * s.esize);
    return s;
}

static void free_range_stream(range_stream *s) {
    free(s->bytes);
    free(s->full);
}

/* Decode [first, first + count) of `bytes` into a guarded buffer of
 * exactly count values; on success it must equal the full decode's slice. */
static fz_status range_checked(const range_stream *s, const uint8_t *bytes,
                               uint64_t first, uint64_t count,
                               int32_t threads) {
    tu_buf dst = tu_buf_alloc((size_t)count * s->esize);
    fz_decode_options o = tu_decode_opts(threads, 0);
    fz_status st = fz_decompress_range(bytes, s->size, first, count, dst.data,
                                       dst.capacity, &o);
    CHECK(tu_guard_intact(&dst));
    if (st == FZ_OK)
        CHECK(memcmp(dst.data, s->full + first * s->esize,
                     (size_t)count * s->esize) == 0);
    tu_buf_free(&dst);
    cases_run++;
    return st;
}

/* One of the shared ranges (range_cases.h) on 1 to 4 threads: it must
 * decode, to the full decode's slice. */
static void visit_range(void *ctx, uint64_t first, uint64_t count, int k) {
    const range_stream *s = (const range_stream *)ctx;
    CHECK_OK(range_checked(s, s->bytes, first, count, 1 + k % 4));
}

static void check_ranges(const range_stream *s, uint64_t seed) {
    rc_for_each_range(s->n, s->chunk_values, seed, 40, visit_range, (void *)s);
}

/* 1: the shared cases (range_cases.h). */
static void test_codecs(void) {
    for (size_t k = 0; k < RC_CASE_COUNT; k++) {
        const rc_case c = rc_case_at(k);
        tu_context("range %s", c.name);
        range_stream s = make_range_stream(&c.p, c.gen, c.n);
        CHECK(s.chunk_values < c.n); /* more than one chunk */
        check_ranges(&s, 11 + k);
        free_range_stream(&s);
    }
}

/* 2: what is refused, with nothing written. */
static void test_invalid(void) {
    tu_context("range invalid");
    fz_params p = tu_params(FZ_F32, 10000, 0);
    range_stream s = make_range_stream(&p, TU_GEN_WAVE, 10000);
    float one[2];
    fz_decode_options o = tu_decode_opts(1, 0);
    CHECK_STATUS(
        fz_decompress_range(s.bytes, s.size, 10000, 1, one, sizeof one, &o),
        FZ_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(
        fz_decompress_range(s.bytes, s.size, 10001, 0, one, sizeof one, &o),
        FZ_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(
        fz_decompress_range(s.bytes, s.size, 9999, 2, one, sizeof one, &o),
        FZ_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(fz_decompress_range(s.bytes, s.size, UINT64_MAX, 2, one,
                                     sizeof one, &o),
                 FZ_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(fz_decompress_range(s.bytes, s.size, 5, UINT64_MAX, one,
                                     sizeof one, &o),
                 FZ_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(
        fz_decompress_range(s.bytes, s.size, 5, 3, one, sizeof one, &o),
        FZ_ERR_DST_TOO_SMALL);
    CHECK_STATUS(fz_decompress_range(s.bytes, s.size, 5, 1, NULL, 0, &o),
                 FZ_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(fz_decompress_range(NULL, s.size, 5, 1, one, sizeof one, &o),
                 FZ_ERR_INVALID_ARGUMENT);
    fz_decode_options bad = o;
    bad.reserved[0] = 1;
    CHECK_STATUS(
        fz_decompress_range(s.bytes, s.size, 5, 1, one, sizeof one, &bad),
        FZ_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(fz_decompress_range(s.bytes, 10, 5, 1, one, sizeof one, &o),
                 FZ_ERR_TRUNCATED);
    cases_run += 10;
    free_range_stream(&s);
}

/* 3: one byte of chunk k's payload flipped: ranges that touch chunk k
 * fail (data checksum or a decoding check), the others still decode
 * exactly; a flipped table byte fails every range. */
static void test_damage(void) {
    const fz_dtype dtypes[] = {FZ_F32, FZ_F64};
    for (int t = 0; t < 2; t++) {
        tu_context("range damage %s", tu_dtype_name(dtypes[t]));
        const uint64_t cv = tu_chunk_values(dtypes[t]), n = 6 * cv;
        fz_params p = tu_params(dtypes[t], n, 0);
        range_stream s = make_range_stream(&p, TU_GEN_SMOOTH, n);
        fz_header h;
        CHECK(fz_header_parse(s.bytes, s.size, &h) == FZS_OK);
        const uint32_t entry = fz_table_entry_bytes(h.flags);
        uint64_t at = fz_payload_offset(&h); /* chunk 3's first byte */
        for (uint64_t c = 0; c < 3; c++)
            at += fz_load32(s.bytes + FZ_HDR_BYTES + c * entry);
        const size_t flip = (size_t)at + 40;
        s.bytes[flip] ^= 0x10;
        CHECK_OK(range_checked(&s, s.bytes, 0, 3 * cv, 2));
        CHECK_OK(range_checked(&s, s.bytes, 4 * cv, 2 * cv, 2));
        CHECK_OK(range_checked(&s, s.bytes, 3 * cv - 1, 1, 1));
        CHECK(range_checked(&s, s.bytes, 3 * cv, 1, 1) != FZ_OK);
        CHECK(range_checked(&s, s.bytes, 3 * cv - 1, 2, 1) != FZ_OK);
        CHECK(range_checked(&s, s.bytes, 0, n, 3) != FZ_OK);
        s.bytes[flip] ^= 0x10;
        s.bytes[FZ_HDR_BYTES + 5 * entry] ^= 0x01; /* chunk 5's size */
        CHECK_STATUS(range_checked(&s, s.bytes, 0, 1, 1),
                     FZ_ERR_TABLE_CHECKSUM);
        free_range_stream(&s);
    }
}

/* 4: from files: fz_decompress_range_file, and the FILE* form from the
 * stream's position in a file that holds other bytes before it. */
static void test_files(void) {
    char path[64], cut[64];
    snprintf(path, sizeof path, "test_range_%d.fz", (int)getpid());
    snprintf(cut, sizeof cut, "test_range_%d_cut.fz", (int)getpid());
    for (size_t k = 0; k < PC_CONFIG_COUNT; k += 3) {
        const pc_config *c = &pc_configs[k];
        tu_context("range file %s", c->name);
        fz_params p = pc_params(c, 1);
        const uint64_t cv = pc_chunk_bytes(&p) / tu_dtype_size(c->dtype);
        const uint64_t n = 4 * cv + 5;
        p = pc_params(c, n);
        range_stream s = make_range_stream(&p, c->gen, n);
        FILE *f = fopen(path, "wb");
        CHECK(f != NULL);
        CHECK(fwrite("junk", 1, 4, f) == 4); /* the stream starts at 4 */
        CHECK(fwrite(s.bytes, 1, s.size, f) == s.size);
        CHECK(fclose(f) == 0);
        const uint64_t ranges[][2] = {{0, n},    {0, 0},     {cv - 1, 2},
                                      {cv, cv},  {n - 1, 1}, {2 * cv + 3, 1},
                                      {1, n - 1}};
        for (size_t r = 0; r < sizeof ranges / sizeof ranges[0]; r++) {
            const uint64_t first = ranges[r][0], count = ranges[r][1];
            tu_buf dst = tu_buf_alloc((size_t)count * s.esize);
            fz_decode_options o = tu_decode_opts(2, 0);
            f = fopen(path, "rb");
            CHECK(f != NULL && fseek(f, 4, SEEK_SET) == 0);
            CHECK_OK(fz_decompress_range_fp(f, first, count, dst.data,
                                            dst.capacity, &o));
            fclose(f);
            CHECK(tu_guard_intact(&dst));
            CHECK(memcmp(dst.data, s.full + first * s.esize,
                         (size_t)count * s.esize) == 0);
            tu_buf_free(&dst);
            cases_run++;
        }
        /* the path form: the stream alone in a file */
        f = fopen(cut, "wb");
        CHECK(f != NULL && fwrite(s.bytes, 1, s.size, f) == s.size);
        CHECK(fclose(f) == 0);
        uint8_t *one = (uint8_t *)tu_xmalloc(s.esize);
        fz_decode_options o = tu_decode_opts(1, 0);
        CHECK_OK(fz_decompress_range_file(cut, n - 2, 1, one, s.esize, &o));
        CHECK(memcmp(one, s.full + (n - 2) * s.esize, s.esize) == 0);
        CHECK_STATUS(fz_decompress_range_file(cut, n, 1, one, s.esize, &o),
                     FZ_ERR_INVALID_ARGUMENT);
        /* truncated: the last chunk's bytes missing */
        f = fopen(cut, "wb");
        CHECK(f != NULL && fwrite(s.bytes, 1, s.size - 1, f) == s.size - 1);
        CHECK(fclose(f) == 0);
        CHECK(fz_decompress_range_file(cut, n - 1, 1, one, s.esize, &o) !=
              FZ_OK);
        free(one);
        cases_run += 3;
        free_range_stream(&s);
    }
    float v;
    fz_decode_options o = tu_decode_opts(1, 0);
    CHECK_STATUS(
        fz_decompress_range_file("no/such/file.fz", 0, 1, &v, sizeof v, &o),
        FZ_ERR_IO);
    CHECK_STATUS(fz_decompress_range_fp(NULL, 0, 1, &v, sizeof v, &o),
                 FZ_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(fz_decompress_range_file(NULL, 0, 1, &v, sizeof v, &o),
                 FZ_ERR_INVALID_ARGUMENT);
    cases_run += 3;
    remove(path);
    remove(cut);
}

static const tu_group groups[] = {{"codecs", test_codecs},
                                  {"invalid", test_invalid},
                                  {"damage", test_damage},
                                  {"files", test_files}};

int main(int argc, char **argv) {
    return tu_run_groups(argc, argv, "test_range", groups,
                         sizeof groups / sizeof groups[0], &cases_run, NULL);
}
