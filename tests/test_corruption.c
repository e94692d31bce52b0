/* Damaged and hostile streams: every truncation and every single-byte
 * corruption of small streams is rejected (or, only where bits are ignored,
 * decodes exactly); hand-made headers with valid checksums but absurd fields
 * are rejected without huge allocations; hand-made chunks decode as the
 * format says. Uses the internal container header to forge checksums. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../src/codecs/sleek/sleek_xform.h"
#include "../src/format/fz_container.h"
#include "test_util.h"

static unsigned cases_run;

typedef struct stream_case {
    fz_dtype dtype;
    tu_gen gen;
    size_t n;
} stream_case;

typedef struct stream {
    uint8_t *bytes;
    size_t size;
    void *original;
    size_t original_bytes;
} stream;

static stream make_stream(const stream_case *c) {
    stream s;
    s.original_bytes = c->n * tu_dtype_size(c->dtype);
    s.original = tu_xmalloc(s.original_bytes);
    tu_fill(c->gen, c->dtype, s.original, c->n, 500 + c->n);
    fz_params p = tu_params(c->dtype, c->n, 0);
    s.bytes = tu_compress(&p, s.original, &s.size);
    return s;
}

static void free_stream(stream *s) {
    free(s->bytes);
    free(s->original);
}

/* Decode with one thread into a guarded buffer of the original size; on
 * success the output must be the original. Returns the status. */
static fz_status decode_checked(const stream *s, const uint8_t *bytes,
                                size_t size, tu_buf *dst, int32_t threads) {
    size_t got = 0;
    fz_decode_options o = tu_decode_opts(threads, 0);
    fz_status st =
        fz_decompress(bytes, size, dst->data, dst->capacity, &o, &got);
    CHECK(tu_guard_intact(dst));
    CHECK(st != FZ_ERR_OUT_OF_MEMORY);
    if (st == FZ_OK) {
        CHECK_EQ_U64(got, s->original_bytes);
        CHECK(memcmp(dst->data, s->original, s->original_bytes) == 0);
    }
    return st;
}

static void check_truncations(const stream *s, tu_buf *dst) {
    for (size_t len = 0; len < s->size; len++) {
        /* a fresh allocation of exactly len bytes: reads past it are caught
         * by ASan */
        uint8_t *part = (uint8_t *)tu_xmalloc(len);
        memcpy(part, s->bytes, len);
        CHECK_ERROR(decode_checked(s, part, len, dst, 1));
        free(part);
    }
}

/* Statuses a corruption at byte pos may give, by region of the stream. */
static int status_fits_region(fz_status st, size_t pos, size_t table_end,
                              size_t payload_off) {
    if (pos < FZ_HEADER_BYTES)
        return st == FZ_ERR_BAD_MAGIC || st == FZ_ERR_HEADER_CHECKSUM ||
               st == FZ_ERR_FORMAT_VERSION || st == FZ_ERR_CORRUPT_HEADER;
    if (pos < table_end)
        return st == FZ_ERR_TABLE_CHECKSUM || st == FZ_ERR_CORRUPT_HEADER ||
               st == FZ_ERR_CORRUPT_CHUNK;
    if (pos < payload_off)
        return st == FZ_ERR_CORRUPT_HEADER;
    return st == FZ_ERR_CORRUPT_CHUNK || st == FZ_ERR_DATA_CHECKSUM;
}

static unsigned check_byte_flips(const stream *s, tu_buf *dst) {
    const uint8_t masks[] = {0x01, 0x80, 0xFF, 0x5A, 0x22, 0x88};
    fz_info info;
    CHECK_OK(fz_inspect(s->bytes, s->size, &info));
    const size_t table_end = FZ_HEADER_BYTES + (size_t)info.chunk_count * 8;
    uint8_t *copy = (uint8_t *)tu_xmalloc(s->size);
    memcpy(copy, s->bytes, s->size);
    unsigned benign = 0;
    for (size_t pos = 0; pos < s->size; pos++) {
        for (size_t m = 0; m < sizeof masks; m++) {
            copy[pos] ^= masks[m];
            fz_status st = decode_checked(s, copy, s->size, dst, 1);
            copy[pos] ^= masks[m];
            if (st == FZ_OK) {
                benign++;
                continue;
            }
            if (!status_fits_region(st, pos, table_end,
                                    (size_t)info.payload_offset)) {
                fprintf(stderr, "byte %zu ^ 0x%02X -> status %d (%s)\n", pos,
                        masks[m], (int)st, fz_status_string(st));
                tu_fail(__FILE__, __LINE__, "status_fits_region",
                        "unexpected status for the corrupted region");
            }
        }
    }
    free(copy);
    return benign;
}

static void corruption_case(const stream_case *c) {
    tu_context("corruption %s %s n=%zu", tu_dtype_name(c->dtype),
               tu_gen_name(c->gen), c->n);
    stream s = make_stream(c);
    tu_buf dst = tu_buf_alloc(s.original_bytes);
    CHECK_OK(decode_checked(&s, s.bytes, s.size, &dst, 1));
    check_truncations(&s, &dst);
    unsigned benign = check_byte_flips(&s, &dst);
    if (benign)
        printf("  %s %s n=%zu: %u corruptions decoded exactly (ignored "
               "bits)\n",
               tu_dtype_name(c->dtype), tu_gen_name(c->gen), c->n, benign);
    tu_buf_free(&dst);
    free_stream(&s);
    cases_run++;
}

/* Chunk sizes from the (checksummed) table: the patchwork streams below
 * must hold both encoded and verbatim chunks. */
static void check_chunk_kinds(const stream *s) {
    fz_info info;
    CHECK_OK(fz_inspect(s->bytes, s->size, &info));
    int encoded = 0, verbatim = 0;
    for (uint64_t c = 0; c < info.chunk_count; c++) {
        uint64_t raw = info.original_bytes - c * info.chunk_bytes;
        raw = raw < info.chunk_bytes ? raw : info.chunk_bytes;
        uint32_t size = fz_load32(s->bytes + FZ_HEADER_BYTES + 8 * c);
        encoded += size < raw;
        verbatim += size == raw;
    }
    CHECK(encoded > 0 && verbatim > 0);
}

static void test_truncation_and_flips(void) {
    const fz_dtype dtypes[] = {FZ_F32, FZ_F64};
    const tu_gen gens[] = {TU_GEN_SMOOTH, TU_GEN_RANDOM_BITS};
    const size_t small[] = {0, 1, 33};
    for (int t = 0; t < 2; t++)
        for (int g = 0; g < 2; g++)
            for (int i = 0; i < 3; i++) {
                stream_case c = {dtypes[t], gens[g], small[i]};
                corruption_case(&c);
            }
    /* encoded and verbatim chunks in one stream */
    const stream_case patchwork[] = {{FZ_F32, TU_GEN_PATCHWORK, 5000},
                                     {FZ_F64, TU_GEN_PATCHWORK, 3000}};
    for (int i = 0; i < 2; i++) {
        stream s = make_stream(&patchwork[i]);
        tu_context("chunk kinds %s", tu_dtype_name(patchwork[i].dtype));
        check_chunk_kinds(&s);
        free_stream(&s);
        corruption_case(&patchwork[i]);
    }
    /* special values inside encoded chunks */
    const stream_case mixed = {FZ_F32, TU_GEN_MIXED, 4500};
    corruption_case(&mixed);
}

/* Narrow subchunks pack several values per byte: a one-byte corruption
 * then changes two decoded values at once (mask 0x22 on width-2 values
 * flips the sign of two of them), which the data checksum must catch. */
static void test_flips_spanning_values(void) {
    const fz_dtype dtypes[] = {FZ_F32, FZ_F64};
    for (int t = 0; t < 2; t++) {
        const size_t n = tu_chunk_values(dtypes[t]);
        const size_t es = tu_dtype_size(dtypes[t]);
        tu_context("signed zeros, flips spanning values, %s",
                   tu_dtype_name(dtypes[t]));
        stream s;
        s.original_bytes = n * es;
        s.original = tu_xmalloc(s.original_bytes);
        memset(s.original, 0, s.original_bytes);
        for (size_t i = 0; i < n; i += 3) /* -0.0: sign bit only */
            ((uint8_t *)s.original)[i * es + es - 1] = 0x80;
        fz_params p = tu_params(dtypes[t], n, 0);
        s.bytes = tu_compress(&p, s.original, &s.size);
        CHECK(s.size < s.original_bytes / 8); /* width-2 subchunks */
        tu_buf dst = tu_buf_alloc(s.original_bytes);
        check_byte_flips(&s, &dst);
        tu_buf_free(&dst);
        free_stream(&s);
        cases_run++;
    }
}

/* Two damaged chunks: the reported status is the first chunk's, whatever
 * the thread count. */
static void test_first_error_is_reported(void) {
    stream_case c = {FZ_F32, TU_GEN_SMOOTH, 4 * 4096};
    tu_context("first error reported");
    stream s = make_stream(&c);
    fz_info info;
    CHECK_OK(fz_inspect(s.bytes, s.size, &info));
    const size_t pay = (size_t)info.payload_offset;
    uint32_t size0 = fz_load32(s.bytes + FZ_HEADER_BYTES);
    CHECK(size0 < 16384); /* smooth data: chunk 0 is encoded */
    s.bytes[pay + SLEEK_WIDTHS_BYTES + 5] ^= 0x10; /* chunk 0: value bits */
    s.bytes[pay + size0] = 0xEE; /* chunk 1: impossible width */
    tu_buf dst = tu_buf_alloc(s.original_bytes);
    fz_status first = decode_checked(&s, s.bytes, s.size, &dst, 1);
    CHECK_STATUS(first, FZ_ERR_DATA_CHECKSUM);
    for (int32_t threads = 2; threads <= 4; threads++)
        CHECK_STATUS(decode_checked(&s, s.bytes, s.size, &dst, threads), first);
    tu_buf_free(&dst);
    free_stream(&s);
    cases_run++;
}

/* ------------------------------------------------------ hand-made streams */
static fz_header header_for(fz_dtype dtype, uint64_t n, int checksums) {
    fz_header h;
    memset(&h, 0, sizeof h);
    h.format_version = 1;
    h.codec = SLEEK_CODEC_ID;
    h.codec_version = SLEEK_CODEC_VERSION;
    h.dtype = (uint32_t)dtype;
    h.ndims = 1;
    h.flags = checksums ? FZ_HDR_FLAG_CHECKSUMS : 0;
    h.dims[0] = n;
    h.dims[1] = h.dims[2] = h.dims[3] = 1;
    h.chunk_bytes = SLEEK_CHUNK_BYTES;
    h.original_bytes = n * tu_dtype_size(dtype);
    h.chunk_count =
        (h.original_bytes + SLEEK_CHUNK_BYTES - 1) / SLEEK_CHUNK_BYTES;
    return h;
}

/* Assemble header + table + payload; table entries are (size, sum) pairs
 * (sum ignored without checksums). The table hash and header hash are
 * computed, so only the deliberate defects remain. */
static uint8_t *build_stream(fz_header *h, const uint32_t *sizes,
                             const uint32_t *sums, const uint8_t *payload,
                             size_t *out_size) {
    const uint32_t entry = fz_table_entry_bytes(h->flags);
    const size_t table = (size_t)h->chunk_count * entry;
    const size_t off = (size_t)fz_align_up(FZ_HDR_BYTES + table, 16);
    size_t payload_bytes = 0;
    for (uint64_t c = 0; c < h->chunk_count; c++)
        payload_bytes += sizes[c];
    uint8_t *out = (uint8_t *)tu_xmalloc(off + payload_bytes);
    memset(out, 0, off);
    for (uint64_t c = 0; c < h->chunk_count; c++) {
        fz_store32(out + FZ_HDR_BYTES + c * entry, sizes[c]);
        if (entry == 8)
            fz_store32(out + FZ_HDR_BYTES + c * entry + 4, sums[c]);
    }
    memcpy(out + off, payload, payload_bytes);
    h->payload_bytes = payload_bytes;
    h->table_hash = fz_table_hash(out + FZ_HDR_BYTES, table);
    fz_header_write(h, out);
    *out_size = off + payload_bytes;
    return out;
}

/* Status of decoding a stream into a 64 KiB guarded buffer. */
static fz_status decode_any(const uint8_t *bytes, size_t size, uint32_t flags) {
    tu_buf dst = tu_buf_alloc(65536);
    size_t got = 0;
    fz_decode_options o = tu_decode_opts(1, flags);
    fz_status st = fz_decompress(bytes, size, dst.data, 65536, &o, &got);
    CHECK(tu_guard_intact(&dst));
    tu_buf_free(&dst);
    return st;
}

/* A header-only stream (128 bytes) must be rejected by decode, without
 * running out of memory; fz_inspect may accept it (it reads no table). */
static void expect_header_rejected(const fz_header *h, const char *what) {
    uint8_t hdr[FZ_HDR_BYTES];
    fz_info info;
    fz_header_write(h, hdr);
    tu_context("hostile header: %s", what);
    fz_status st = decode_any(hdr, sizeof hdr, 0);
    CHECK_ERROR(st);
    CHECK(st != FZ_ERR_OUT_OF_MEMORY);
    st = fz_inspect(hdr, sizeof hdr, &info);
    CHECK(st != FZ_ERR_OUT_OF_MEMORY);
    cases_run++;
}

/* A valid stream of 1000 f32 values (one encoded chunk) and its header. */
typedef struct real_stream {
    uint8_t *bytes;
    size_t size;
    fz_header h;
} real_stream;

static real_stream make_real_stream(void) {
    float v[1000];
    real_stream r;
    tu_fill(TU_GEN_SMOOTH, FZ_F32, v, 1000, 17);
    fz_params p = tu_params(FZ_F32, 1000, 0);
    r.bytes = tu_compress(&p, v, &r.size);
    CHECK_EQ_U64(fz_header_parse(r.bytes, r.size, &r.h), FZS_OK);
    return r;
}

/* The real stream with header h (hash recomputed): fz_inspect and decode
 * must both reject it. */
static void expect_header_invalid(const fz_header *h, const char *what) {
    real_stream r = make_real_stream();
    fz_info info;
    fz_header_write(h, r.bytes);
    tu_context("invalid header: %s", what);
    CHECK_ERROR(fz_inspect(r.bytes, r.size, &info));
    fz_status st = decode_any(r.bytes, r.size, 0);
    CHECK_ERROR(st);
    CHECK(st != FZ_ERR_OUT_OF_MEMORY);
    free(r.bytes);
    cases_run++;
}

/* The unmodified header decodes: the rejections below are the fields'. */
static fz_header valid_base_header(void) {
    real_stream r = make_real_stream();
    tu_context("rewritten valid header");
    fz_header_write(&r.h, r.bytes);
    CHECK_OK(decode_any(r.bytes, r.size, 0));
    free(r.bytes);
    return r.h;
}

/* Over 4 GiB claimed, with a complete (2 MiB) table of empty chunks. */
static void test_huge_claim_with_table(void) {
    fz_header h = header_for(FZ_F32, ((uint64_t)1 << 30) + 4096, 1);
    const size_t chunks = (size_t)h.chunk_count; /* 2^18 + 1 */
    uint32_t *zeros = (uint32_t *)calloc(chunks, sizeof(uint32_t));
    CHECK(zeros != NULL);
    size_t size = 0;
    uint8_t *s = build_stream(&h, zeros, zeros, (const uint8_t *)zeros, &size);
    tu_context("4 GiB + 16 KiB claimed, table of empty chunks");
    CHECK_STATUS(decode_any(s, size, 0), FZ_ERR_DST_TOO_SMALL);
    size_t got = 0;
    fz_status st = fz_decompress(s, size, NULL, 0, NULL, &got);
    CHECK_ERROR(st);
    CHECK(st != FZ_ERR_OUT_OF_MEMORY);
    free(s);
    free(zeros);
    cases_run++;
}

static void test_huge_claims(void) {
    fz_header h = header_for(FZ_F32, (uint64_t)1 << 58, 1); /* 1 EiB */
    expect_header_rejected(&h, "2^58 values, no table");
    h.payload_bytes = h.original_bytes / 2;
    expect_header_rejected(&h, "2^58 values, huge payload");

    h = header_for(FZ_F64, (uint64_t)5 << 27, 1); /* 5 GiB */
    h.payload_bytes = (uint64_t)9 << 29;          /* 4.5 GiB */
    uint8_t hdr[FZ_HDR_BYTES];
    fz_header_write(&h, hdr);
    fz_info info;
    CHECK_OK(fz_inspect(hdr, sizeof hdr, &info)); /* the header is coherent */
    CHECK_EQ_U64(info.original_bytes, (uint64_t)5 << 30);
    expect_header_rejected(&h, "5 GiB claimed by 128 bytes");
    CHECK_STATUS(decode_any(hdr, sizeof hdr, 0), FZ_ERR_TRUNCATED);
    test_huge_claim_with_table();
}

/* Lorenzo headers (codec 4, version 3, ABS 0.5, radius 512) claiming
 * up to 2^62 bytes with extents near 2^60: the slab of a 2-D or 3-D
 * predictor overflowed 64 bits to 0 and checking chunk_bytes divided by
 * zero in fz_inspect and every decoder. The predictor drops to 1-D (a
 * slab above 64 MiB), whose chunks are 2 MiB: the header is coherent,
 * and a decoder finds the table missing. */
static void test_lorenzo_huge_extents(void) {
    const struct {
        fz_dtype dtype;
        uint32_t ndims;
        uint64_t dims[4];
    } shapes[] = {
        {FZ_F32, 2, {(uint64_t)1 << 60, 1, 1, 1}},
        {FZ_F32, 3, {(uint64_t)1 << 30, (uint64_t)1 << 30, 1, 1}},
        {FZ_F64, 3, {(uint64_t)1 << 29, (uint64_t)1 << 29, 1, 1}},
        {FZ_F64, 4, {(uint64_t)1 << 29, (uint64_t)1 << 29, 1, 2}},
    };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        fz_header h = header_for(shapes[i].dtype, 1, 1);
        h.codec = 4;
        h.codec_version = 3;
        h.mode = 1;
        h.bound_bits = h.bound_eff_bits = 0x3FE0000000000000ull; /* 0.5 */
        h.codec_params[0] = 512;
        h.ndims = shapes[i].ndims;
        h.original_bytes = tu_dtype_size(shapes[i].dtype);
        for (int d = 0; d < 4; d++) {
            h.dims[d] = shapes[i].dims[d];
            h.original_bytes *= h.dims[d];
        }
        h.chunk_bytes = 1u << 21;
        h.chunk_count = h.original_bytes >> 21;
        uint8_t hdr[FZ_HDR_BYTES];
        fz_header_write(&h, hdr);
        fz_info info;
        tu_context("lorenzo header, huge extents %zu", i);
        CHECK_OK(fz_inspect(hdr, sizeof hdr, &info));
        CHECK_EQ_U64(info.chunk_bytes, 1u << 21);
        CHECK_STATUS(decode_any(hdr, sizeof hdr, 0), FZ_ERR_TRUNCATED);
        expect_header_rejected(&h, "lorenzo, huge extents");
    }
}

static void test_absurd_fields(void) {
    fz_header base = valid_base_header(), h;
    h = base, h.chunk_count = (uint64_t)1 << 60;
    expect_header_invalid(&h, "chunk_count 2^60");
    h = base, h.chunk_count = 2;
    expect_header_invalid(&h, "chunk_count off by one");
    h = base, h.chunk_count = 0;
    expect_header_invalid(&h, "chunk_count 0");
    h = base, h.payload_bytes = h.original_bytes + 1;
    expect_header_invalid(&h, "payload larger than original");
    h = base, h.payload_bytes = (uint64_t)1 << 63;
    expect_header_invalid(&h, "payload 2^63");
    h = base, h.original_bytes = 4004;
    expect_header_invalid(&h, "original_bytes != dims");
    h = base, h.ndims = 2, h.dims[0] = h.dims[1] = (uint64_t)1 << 40;
    h.original_bytes = 0, h.chunk_count = 0; /* what 2^80 * 4 wraps to */
    expect_header_invalid(&h, "dims product overflows");
    h = base, h.ndims = 0;
    expect_header_invalid(&h, "ndims 0");
    h = base, h.ndims = 5;
    expect_header_invalid(&h, "ndims 5");
    h = base, h.dims[2] = 7;
    expect_header_invalid(&h, "unused dim 7");
    h = base, h.dims[1] = 0;
    expect_header_invalid(&h, "unused dim 0");
    h = base, h.dtype = 3;
    expect_header_invalid(&h, "dtype 3");
    h = base, h.mode = 3;
    expect_header_invalid(&h, "mode 3");
    h = base, h.flags = 0x80 | FZ_HDR_FLAG_CHECKSUMS;
    expect_header_invalid(&h, "unknown flag");
    h = base, h.bound_bits = 1;
    expect_header_invalid(&h, "lossless with a bound");
    h = base, h.format_version = 2;
    expect_header_invalid(&h, "format version 2");
    h = base, h.format_version = 0;
    expect_header_invalid(&h, "format version 0");
}

static void test_codec_fields(void) {
    fz_header base = valid_base_header(), h;
    h = base, h.codec = 0;
    expect_header_invalid(&h, "codec 0");
    h = base, h.codec = 77;
    expect_header_invalid(&h, "codec 77");
    h = base, h.codec_version = SLEEK_CODEC_VERSION + 1;
    expect_header_invalid(&h, "codec version above the newest");
    h = base, h.codec_version = SLEEK_CODEC_VERSION_MIN - 1;
    expect_header_invalid(&h, "codec version below the oldest");
    h = base, h.codec_params[1] = 5;
    expect_header_invalid(&h, "codec params");
    h = base, h.chunk_bytes = 4096, h.chunk_count = 1;
    expect_header_invalid(&h, "chunk_bytes 4096");
    h = base, h.chunk_bytes = 0;
    expect_header_invalid(&h, "chunk_bytes 0");
    h = base, h.chunk_bytes = 16386;
    expect_header_invalid(&h, "chunk_bytes not a multiple of 4");
    h = base, h.mode = 1, h.bound_bits = 0x3F50624DD2F1A9FCull; /* 1e-3 */
    h.bound_eff_bits = h.bound_bits;
    expect_header_invalid(&h, "lossy mode in a sleek stream");
}

/* A newer format version is reported as such, whether or not the rest of
 * the header still follows version 1's layout and hash (docs/API.md:
 * "rejected (FZ_ERR_FORMAT_VERSION), never misread"). */
static void test_newer_format_version(void) {
    const uint16_t versions[] = {2, 0xFFFF};
    for (int v = 0; v < 2; v++) {
        real_stream r = make_real_stream();
        fz_info info;
        tu_context("format version %u", (unsigned)versions[v]);
        fz_store16(r.bytes + FZ_OFF_VERSION, versions[v]); /* stale hash */
        CHECK_STATUS(fz_inspect(r.bytes, r.size, &info), FZ_ERR_FORMAT_VERSION);
        CHECK_STATUS(decode_any(r.bytes, r.size, 0), FZ_ERR_FORMAT_VERSION);
        fz_store32(r.bytes + FZ_OFF_HEADER_HASH, fz_header_hash(r.bytes));
        CHECK_STATUS(fz_inspect(r.bytes, r.size, &info), FZ_ERR_FORMAT_VERSION);
        CHECK_STATUS(decode_any(r.bytes, r.size, 0), FZ_ERR_FORMAT_VERSION);
        free(r.bytes);
        cases_run++;
    }
}

/* Header bytes that fz_header_write always sets: patch and re-hash. */
static void expect_patched_invalid(size_t off, uint8_t value,
                                   const char *what) {
    real_stream r = make_real_stream();
    fz_info info;
    r.bytes[off] = value;
    fz_store32(r.bytes + FZ_OFF_HEADER_HASH, fz_header_hash(r.bytes));
    tu_context("patched header: %s", what);
    CHECK_ERROR(fz_inspect(r.bytes, r.size, &info));
    CHECK_ERROR(decode_any(r.bytes, r.size, 0));
    free(r.bytes);
    cases_run++;
}

static void test_reserved_header_bytes(void) {
    expect_patched_invalid(FZ_OFF_HDR_BYTES, 0, "header size 0");
    expect_patched_invalid(FZ_OFF_HDR_BYTES + 1, 1, "header size 384");
    expect_patched_invalid(FZ_OFF_RESERVED0, 1, "reserved0");
    expect_patched_invalid(FZ_OFF_RESERVED0 + 1, 0x80, "reserved0 high");
    expect_patched_invalid(FZ_OFF_RESERVED1 + 2, 1, "reserved1");
    expect_patched_invalid(FZ_OFF_RESERVED2, 1, "reserved2");
    expect_patched_invalid(FZ_OFF_RESERVED2 + 7, 0xFF, "reserved2 high");
}

/* Tables with a valid hash but inconsistent entries. */
static void test_hostile_tables(void) {
    uint8_t payload[4 * 16384] = {0};
    uint32_t sizes[4] = {0}, sums[4] = {0};
    size_t size = 0;

    fz_header h = header_for(FZ_F32, 10000, 1); /* 3 chunks, last 7232 B */
    sizes[0] = 100, sizes[1] = 16384, sizes[2] = 7233; /* last > 7232 */
    uint8_t *s = build_stream(&h, sizes, sums, payload, &size);
    tu_context("table: chunk larger than its raw size");
    CHECK_STATUS(decode_any(s, size, 0), FZ_ERR_CORRUPT_CHUNK);
    free(s);

    h = header_for(FZ_F32, 10000, 1);
    sizes[0] = sizes[1] = sizes[2] = 0;
    s = build_stream(&h, sizes, sums, payload, &size);
    tu_context("table: zero-size chunks");
    CHECK_STATUS(decode_any(s, size, FZ_DECODE_SKIP_CHECKSUM),
                 FZ_ERR_CORRUPT_CHUNK);
    free(s);

    h = header_for(FZ_F32, 10000, 0);
    sizes[0] = 100, sizes[1] = 200, sizes[2] = 300;
    s = build_stream(&h, sizes, sums, payload, &size);
    fz_store64(s + FZ_OFF_PAYLOAD_BYTES, 601); /* != sum of the entries */
    fz_store32(s + FZ_OFF_HEADER_HASH, fz_header_hash(s));
    tu_context("table: entries do not sum to payload_bytes");
    CHECK_ERROR(decode_any(s, size, 0));
    CHECK(decode_any(s, size, 0) != FZ_ERR_OUT_OF_MEMORY);
    free(s);
    cases_run += 3;
}

static void test_nonzero_table_padding(void) {
    fz_header h = header_for(FZ_F32, 10, 0); /* table 4 B, padding 12 B */
    uint32_t sizes[1] = {40}, sums[1] = {0};
    uint8_t payload[40];
    size_t size = 0;
    tu_fill(TU_GEN_SMOOTH, FZ_F32, payload, 10, 1);
    uint8_t *s = build_stream(&h, sizes, sums, payload, &size);
    tu_context("table padding");
    CHECK_OK(decode_any(s, size, 0)); /* a valid verbatim stream */
    s[FZ_HDR_BYTES + 4 + 5] = 1;
    CHECK_STATUS(decode_any(s, size, 0), FZ_ERR_CORRUPT_HEADER);
    free(s);
    cases_run++;
}

/* ------------------------------------------------- hand-encoded chunks
 * One encoded chunk of n values: subchunk 0 has width 1 and every value 1,
 * the other subchunks width 0 (FORMAT: widths byte per subchunk, then the
 * low n_s bits of each value packed LSB-first). */
typedef struct hand_chunk {
    fz_dtype dtype;
    uint32_t n; /* values, < one subchunk */
    uint8_t payload[SLEEK_WIDTHS_BYTES + 16];
    uint32_t size;
    uint8_t expect[512]; /* decoded bytes */
} hand_chunk;

static hand_chunk hand_encode(fz_dtype dtype, uint32_t n) {
    hand_chunk c;
    memset(&c, 0, sizeof c);
    c.dtype = dtype;
    c.n = n;
    const uint32_t es = (uint32_t)tu_dtype_size(dtype);
    c.payload[0] = 1;
    for (uint32_t i = 0; i < n; i++)
        c.payload[SLEEK_WIDTHS_BYTES + i / 8] |= (uint8_t)(1u << (i % 8));
    c.size = SLEEK_WIDTHS_BYTES + sleek_sub_packed_bytes(es, 1);
    for (uint32_t i = 0; i < n; i++) {
        if (dtype == FZ_F32) {
            uint32_t v = sleek_inv32(1);
            memcpy(c.expect + 4 * i, &v, 4);
        } else {
            uint64_t v = sleek_inv64(1);
            memcpy(c.expect + 8 * i, &v, 8);
        }
    }
    return c;
}

/* A stream of the chunk at codec version `version`: version 1 hashes the
 * decoded bytes, version 2 the stored payload, version 3 square-sums the
 * stored payload (FORMAT.md section 4). */
static uint8_t *hand_stream(const hand_chunk *c, uint32_t version,
                            uint32_t sum_xor, size_t *size) {
    fz_header h = header_for(c->dtype, c->n, 1);
    h.codec_version = version;
    const size_t bytes = c->n * tu_dtype_size(c->dtype);
    uint32_t sizes[1] = {c->size};
    uint32_t sums[1] = {(version >= 3   ? fz_qsum_bytes(c->payload, c->size)
                         : version == 2 ? fz_hash_bytes(c->payload, c->size)
                                        : fz_hash_bytes(c->expect, bytes)) ^
                        sum_xor};
    return build_stream(&h, sizes, sums, c->payload, size);
}

static fz_status hand_decode_version(const hand_chunk *c, uint32_t version,
                                     uint32_t sum_xor, uint32_t flags) {
    size_t size = 0, got = 0;
    const size_t bytes = c->n * tu_dtype_size(c->dtype);
    uint8_t *s = hand_stream(c, version, sum_xor, &size);
    tu_buf dst = tu_buf_alloc(bytes);
    fz_decode_options o = tu_decode_opts(1, flags);
    fz_status st = fz_decompress(s, size, dst.data, bytes, &o, &got);
    CHECK(tu_guard_intact(&dst));
    if (st == FZ_OK) {
        CHECK_EQ_U64(got, bytes);
        CHECK(memcmp(dst.data, c->expect, bytes) == 0);
    }
    tu_buf_free(&dst);
    free(s);
    return st;
}

static fz_status hand_decode(const hand_chunk *c, uint32_t sum_xor,
                             uint32_t flags) {
    return hand_decode_version(c, SLEEK_CODEC_VERSION, sum_xor, flags);
}

static void hand_chunk_cases(fz_dtype dtype, uint32_t n) {
    tu_context("hand-encoded chunk %s n=%u", tu_dtype_name(dtype), n);
    hand_chunk c = hand_encode(dtype, n);
    CHECK(c.size < n * tu_dtype_size(dtype)); /* an encoded chunk */
    for (uint32_t v = SLEEK_CODEC_VERSION_MIN; v <= SLEEK_CODEC_VERSION; v++) {
        CHECK_OK(hand_decode_version(&c, v, 0, 0));
        CHECK_STATUS(hand_decode_version(&c, v, 1, 0), FZ_ERR_DATA_CHECKSUM);
        CHECK_OK(hand_decode_version(&c, v, 1, FZ_DECODE_SKIP_CHECKSUM));
    }

    hand_chunk bad = c; /* a padding value (past n) that is not +0.0 */
    bad.payload[SLEEK_WIDTHS_BYTES + n / 8] |= (uint8_t)(1u << (n % 8));
    CHECK_STATUS(hand_decode(&bad, 0, FZ_DECODE_SKIP_CHECKSUM),
                 FZ_ERR_CORRUPT_CHUNK);
    bad = c; /* width wider than the word */
    bad.payload[0] = (uint8_t)(tu_dtype_size(dtype) * 8 + 1);
    CHECK_STATUS(hand_decode(&bad, 0, FZ_DECODE_SKIP_CHECKSUM),
                 FZ_ERR_CORRUPT_CHUNK);
    bad = c; /* widths that need more bytes than the chunk has */
    bad.payload[0] = 2;
    CHECK_STATUS(hand_decode(&bad, 0, FZ_DECODE_SKIP_CHECKSUM),
                 FZ_ERR_CORRUPT_CHUNK);
    bad = c; /* fewer */
    bad.payload[0] = 0;
    CHECK_STATUS(hand_decode(&bad, 0, FZ_DECODE_SKIP_CHECKSUM),
                 FZ_ERR_CORRUPT_CHUNK);
    cases_run++;
}

/* Subchunk 0 declares a width one above the word size and the chunk has
 * exactly the bytes that width would need: still corrupt (decoding it
 * would overrun the subchunk). */
static void overwide_subchunk(fz_dtype dtype) {
    const uint32_t es = (uint32_t)tu_dtype_size(dtype), w = 8 * es + 1;
    const uint32_t n = 200, size = SLEEK_WIDTHS_BYTES + w * (512 / es) / 8;
    uint8_t payload[SLEEK_WIDTHS_BYTES + 600] = {0};
    CHECK(size < n * es && size <= sizeof payload);
    payload[0] = (uint8_t)w;
    fz_header h = header_for(dtype, n, 0);
    uint32_t sizes[1] = {size}, sums[1] = {0};
    size_t stream_size = 0;
    uint8_t *s = build_stream(&h, sizes, sums, payload, &stream_size);
    tu_context("width %u subchunk %s", w, tu_dtype_name(dtype));
    CHECK_STATUS(decode_any(s, stream_size, 0), FZ_ERR_CORRUPT_CHUNK);
    free(s);
    cases_run++;
}

static void test_hand_encoded_chunks(void) {
    overwide_subchunk(FZ_F32);
    overwide_subchunk(FZ_F64);
    hand_chunk_cases(FZ_F32, 100);
    hand_chunk_cases(FZ_F32, 13);
    hand_chunk_cases(FZ_F64, 50);
    hand_chunk_cases(FZ_F64, 7);
}

int main(void) {
    test_truncation_and_flips();
    test_flips_spanning_values();
    test_first_error_is_reported();
    test_huge_claims();
    test_lorenzo_huge_extents();
    test_absurd_fields();
    test_codec_fields();
    test_reserved_header_bytes();
    test_newer_format_version();
    test_hostile_tables();
    test_nonzero_table_padding();
    test_hand_encoded_chunks();
    printf("test_corruption: %u cases passed\n", cases_run);
    return 0;
}
