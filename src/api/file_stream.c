/* File streaming: compress and decompress files of any size in bounded
 * memory. Each batch of whole chunks runs through the host API of the
 * chosen backend as a stand-alone stream (batch.c); its table entries and
 * payload go straight to their final places in the output, and the table
 * hash is summed as the entries pass (the hash is position-keyed). The
 * header is written last. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "fz_internal.h"

#define DEFAULT_CPU_BATCH ((uint64_t)64 << 20)
#define DEFAULT_GPU_BATCH ((uint64_t)256 << 20)
#define DEFAULT_GPU_STREAMS 4u    /* for splitting a file batch only */
#define TABLE_PIECE_CHUNKS 65536u /* table entries read at a time */
#define TABLE_PIECE_BYTES                                                      \
    (TABLE_PIECE_CHUNKS * 8u) /* of the largest entries                        \
                               */

static uint64_t file_batch_bytes(uint32_t batch_kib, fz_exec exec) {
    if (batch_kib)
        return (uint64_t)batch_kib << 10;
    return exec == FZ_EXEC_GPU ? DEFAULT_GPU_BATCH : DEFAULT_CPU_BATCH;
}

/* A file batch on the GPU is split over the pipeline's streams. */
static uint32_t inner_batch_kib(uint64_t file_batch, uint32_t streams) {
    uint64_t kib =
        (file_batch >> 10) / (streams ? streams : DEFAULT_GPU_STREAMS);
    return kib ? (uint32_t)(kib < UINT32_MAX ? kib : UINT32_MAX) : 1u;
}

static fz_status seek_to(FILE *f, uint64_t pos) {
    return fseeko(f, (off_t)pos, SEEK_SET) == 0 ? FZ_OK : FZ_ERR_IO;
}

static fz_status write_at(FILE *f, uint64_t pos, const void *data, size_t n) {
    if (n == 0)
        return FZ_OK;
    if (seek_to(f, pos) != FZ_OK || fwrite(data, 1, n, f) != n)
        return FZ_ERR_IO;
    return FZ_OK;
}

/* Read exactly n bytes; a short read is `short_status` (end of file) or
 * FZ_ERR_IO (read error). */
static fz_status read_exact(FILE *f, void *dst, size_t n,
                            fz_status short_status) {
    size_t got = n ? fread(dst, 1, n, f) : 0;
    if (got == n)
        return FZ_OK;
    return ferror(f) ? FZ_ERR_IO : short_status;
}

static fz_status read_at(FILE *f, uint64_t pos, void *dst, size_t n,
                         fz_status short_status) {
    if (seek_to(f, pos) != FZ_OK)
        return FZ_ERR_IO;
    return read_exact(f, dst, n, short_status);
}

/* REL: range of the whole input, one batch at a time; rewinds. */
static fz_status file_value_range(FILE *in, uint64_t in_base,
                                  fz_batch_plan *plan, uint8_t *buf) {
    const uint32_t esize = fz_dtype_size(plan->h.dtype);
    const int threads = fz_thread_count(plan->params.threads);
    double lo = 1.0, hi = 0.0; /* empty: lo > hi */
    int any = 0;
    for (uint64_t b = 0; b < plan->batch_count; b++) {
        uint64_t first, count, first_byte, bytes;
        fz_plan_batch(plan, b, &first, &count, &first_byte, &bytes);
        fz_status s = read_exact(in, buf, (size_t)bytes, FZ_ERR_SIZE_MISMATCH);
        if (s != FZ_OK)
            return s;
        double blo, bhi;
        fz_value_range(plan->h.dtype, buf, bytes / esize, threads, &blo, &bhi);
        if (blo > bhi)
            continue;
        lo = any && lo < blo ? lo : blo;
        hi = any && hi > bhi ? hi : bhi;
        any = 1;
    }
    fz_plan_set_range(plan, lo, hi);
    return seek_to(in, in_base);
}

typedef struct compress_state {
    FILE *out;
    uint64_t out_base;
    uint64_t payload_pos; /* bytes of payload written */
    uint32_t table_sum;
    uint8_t *in_buf, *sub_buf;
    size_t sub_cap;
} compress_state;

/* Compress batch b (already in st->in_buf) and write its table entries and
 * payload in place. */
static fz_status compress_batch(const fz_batch_plan *plan, uint64_t b,
                                compress_state *st) {
    uint64_t first, count, first_byte, bytes;
    fz_plan_batch(plan, b, &first, &count, &first_byte, &bytes);
    fz_params bp;
    fz_status s = fz_plan_batch_params(plan, b, &bp);
    if (s != FZ_OK)
        return s;
    if (bp.exec == FZ_EXEC_GPU) /* batch_kib is the file batch's size */
        bp.batch_kib = inner_batch_kib(
            file_batch_bytes(plan->params.batch_kib, FZ_EXEC_GPU),
            bp.gpu_streams);
    size_t sub_size = 0;
    s = fz_compress(&bp, st->in_buf, (size_t)bytes, st->sub_buf, st->sub_cap,
                    &sub_size);
    if (s != FZ_OK)
        return s;
    fz_header sh;
    if (fz_header_parse(st->sub_buf, sub_size, &sh) != FZS_OK ||
        sh.chunk_count != count)
        return FZ_ERR_UNSUPPORTED; /* a backend broke the batch contract */
    const uint32_t entry = fz_table_entry_bytes(plan->h.flags);
    const uint8_t *entries = st->sub_buf + FZ_HDR_BYTES;
    st->table_sum +=
        fz_hash_sum_bytes(entries, count * entry, first * entry / 4);
    s = write_at(st->out, st->out_base + FZ_HDR_BYTES + first * entry, entries,
                 (size_t)(count * entry));
    if (s == FZ_OK)
        s = write_at(
            st->out,
            st->out_base + fz_payload_offset(&plan->h) + st->payload_pos,
            st->sub_buf + fz_payload_offset(&sh), (size_t)sh.payload_bytes);
    st->payload_pos += sh.payload_bytes;
    return s;
}

/* Header and the zero padding after the table, written last. */
static fz_status write_header(const fz_batch_plan *plan,
                              const compress_state *st, uint64_t *total) {
    fz_header h = plan->h;
    h.payload_bytes = st->payload_pos;
    h.table_hash = fz_hash_final(st->table_sum, fz_table_bytes(&h) / 4);
    uint8_t head[FZ_HDR_BYTES + FZ_PAYLOAD_ALIGN] = {0};
    fz_header_write(&h, head);
    const uint64_t table_end = FZ_HDR_BYTES + fz_table_bytes(&h);
    const uint64_t pad = fz_payload_offset(&h) - table_end;
    fz_status s = write_at(st->out, st->out_base, head, FZ_HDR_BYTES);
    if (s == FZ_OK)
        s = write_at(st->out, st->out_base + table_end, head + FZ_HDR_BYTES,
                     (size_t)pad);
    if (s == FZ_OK && fflush(st->out) != 0)
        s = FZ_ERR_IO;
    *total = fz_stream_bytes(&h);
    return s;
}

/* Largest compressed batch: the first batch is the largest. */
static fz_status batch_capacity(const fz_batch_plan *plan, size_t *cap) {
    fz_params bp;
    fz_status s = fz_plan_batch_params(plan, 0, &bp);
    return s == FZ_OK ? fz_compress_bound(&bp, cap) : s;
}

static fz_status compress_batches(fz_batch_plan *plan, FILE *in,
                                  compress_state *st, fz_progress_fn progress,
                                  void *user) {
    for (uint64_t b = 0; b < plan->batch_count; b++) {
        uint64_t first, count, first_byte, bytes;
        fz_plan_batch(plan, b, &first, &count, &first_byte, &bytes);
        fz_status s =
            read_exact(in, st->in_buf, (size_t)bytes, FZ_ERR_SIZE_MISMATCH);
        if (s == FZ_OK)
            s = compress_batch(plan, b, st);
        if (s != FZ_OK)
            return s;
        if (progress)
            progress(user, first_byte + bytes, plan->h.original_bytes);
    }
    if (fgetc(in) != EOF) /* more input than the shape says */
        return FZ_ERR_SIZE_MISMATCH;
    return ferror(in) ? FZ_ERR_IO : FZ_OK;
}

/* Codec auto reads its sample from the file (value index -> offset). */
typedef struct file_source {
    FILE *in;
    uint64_t base;
    size_t esize;
} file_source;

static fz_status read_file_values(void *ctx, uint64_t first, uint64_t count,
                                  void *dst) {
    const file_source *f = (const file_source *)ctx;
    return read_at(f->in, f->base + first * f->esize, dst,
                   (size_t)(count * f->esize), FZ_ERR_SIZE_MISMATCH);
}

/* Choose the codec from the file (fz_auto_pick), then stream as usual from
 * the same position: the choice equals fz_compress's on the same data. */
static fz_status compress_fp_auto(const fz_params *p, FILE *src_file,
                                  FILE *dst_file, fz_progress_fn progress,
                                  void *user, uint64_t *compressed_size) {
    const off_t in_base = ftello(src_file);
    if (in_base < 0)
        return FZ_ERR_IO; /* the sample needs a seekable input */
    file_source f = {src_file, (uint64_t)in_base, p->dtype == FZ_F64 ? 8u : 4u};
    fz_params chosen;
    fz_status s =
        fz_auto_pick(p, NULL, read_file_values, &f, &chosen, NULL, NULL);
    if (s == FZ_OK)
        s = seek_to(src_file, (uint64_t)in_base);
    if (s == FZ_OK)
        s = fz_compress_fp(&chosen, src_file, dst_file, progress, user,
                           compressed_size);
    return s;
}

fz_status fz_compress_fp(const fz_params *p, FILE *src_file, FILE *dst_file,
                         fz_progress_fn progress, void *user,
                         uint64_t *compressed_size) {
    if (!p || !src_file || !dst_file || !compressed_size || p->threads < 0)
        return FZ_ERR_INVALID_ARGUMENT;
    if (p->codec == FZ_CODEC_AUTO)
        return compress_fp_auto(p, src_file, dst_file, progress, user,
                                compressed_size);
    fz_batch_plan plan;
    fz_status s =
        fz_plan_compress(p, file_batch_bytes(p->batch_kib, p->exec), &plan);
    if (s != FZ_OK)
        return s;
    const off_t in_base = ftello(src_file), out_base = ftello(dst_file);
    if (out_base < 0 || (plan.h.mode == FZ_MODE_REL && in_base < 0))
        return FZ_ERR_IO;
    compress_state st = {dst_file, (uint64_t)out_base, 0, 0, NULL, NULL, 0};
    if (plan.batch_count > 0) {
        uint64_t f, c, fb, max_bytes;
        fz_plan_batch(&plan, 0, &f, &c, &fb, &max_bytes);
        if (plan.h.mode == FZ_MODE_REL)
            fz_plan_set_range(&plan, 0.0, 0.0); /* any bound: capacity only */
        s = batch_capacity(&plan, &st.sub_cap);
        if (s != FZ_OK)
            return s;
        st.in_buf = (uint8_t *)malloc((size_t)max_bytes);
        st.sub_buf = (uint8_t *)malloc(st.sub_cap);
        if (!st.in_buf || !st.sub_buf)
            s = FZ_ERR_OUT_OF_MEMORY;
    }
    if (s == FZ_OK && plan.h.mode == FZ_MODE_REL)
        s = file_value_range(src_file, (uint64_t)in_base, &plan, st.in_buf);
    if (s == FZ_OK)
        s = compress_batches(&plan, src_file, &st, progress, user);
    uint64_t total = 0;
    if (s == FZ_OK)
        s = write_header(&plan, &st, &total);
    free(st.in_buf);
    free(st.sub_buf);
    if (s == FZ_OK)
        *compressed_size = total;
    return s;
}

/* ------------------------------------------------------------ decompress */

/* Validate the whole table and the padding, reading them in pieces (buf:
 * TABLE_PIECE_BYTES); payload_before, unless NULL, gets where chunk
 * at_chunk's payload starts (relative to the payload). */
static fz_status scan_table(FILE *in, uint64_t in_base, const fz_header *h,
                            uint64_t avail, uint8_t *buf, uint64_t at_chunk,
                            uint64_t *payload_before) {
    const uint32_t entry = fz_table_entry_bytes(h->flags);
    fz_table_scan t = {0, 0, 0, 0};
    fz_status s = seek_to(in, in_base + FZ_HDR_BYTES);
    for (uint64_t c = 0; s == FZ_OK && c < h->chunk_count;
         c += TABLE_PIECE_CHUNKS) {
        uint64_t n = h->chunk_count - c;
        n = n < TABLE_PIECE_CHUNKS ? n : TABLE_PIECE_CHUNKS;
        s = read_exact(in, buf, (size_t)(n * entry), FZ_ERR_TRUNCATED);
        if (s == FZ_OK && payload_before && at_chunk >= c && at_chunk < c + n)
            *payload_before =
                t.payload + fz_entries_payload(h, buf, at_chunk - c);
        if (s == FZ_OK)
            fz_table_scan_add(h, &t, buf, n);
    }
    const size_t pad =
        (size_t)(fz_payload_offset(h) - FZ_HDR_BYTES - fz_table_bytes(h));
    uint8_t pad_bytes[FZ_PAYLOAD_ALIGN];
    if (s == FZ_OK)
        s = read_exact(in, pad_bytes, pad, FZ_ERR_TRUNCATED);
    if (s != FZ_OK)
        return s;
    int padding_ok = 1;
    for (size_t i = 0; i < pad; i++)
        padding_ok &= pad_bytes[i] == 0;
    return fz_table_scan_end(h, &t, padding_ok, avail);
}

typedef struct decompress_state {
    FILE *in, *out;
    uint64_t in_base;
    uint64_t payload_pos;
    uint8_t *sub_buf, *out_buf;
    size_t sub_cap;
} decompress_state;

/* Bytes a stand-alone stream of `count` chunks of h can take. */
static uint64_t sub_stream_capacity(const fz_header *h, uint64_t count) {
    return fz_align_up(FZ_HDR_BYTES + count * fz_table_entry_bytes(h->flags),
                       FZ_PAYLOAD_ALIGN) +
           count * h->chunk_bytes;
}

/* The stand-alone stream of chunks [first, first + count) of the file's
 * stream h (at in_base), whose payload starts payload_pos bytes into h's,
 * into buf (sub_stream_capacity bytes); *size gets its length and
 * *payload the bytes of payload it read. */
static fz_status read_sub_stream(FILE *in, uint64_t in_base, const fz_header *h,
                                 uint64_t first, uint64_t count,
                                 uint64_t payload_pos, uint8_t *buf,
                                 uint64_t *size, uint64_t *payload) {
    const uint32_t entry = fz_table_entry_bytes(h->flags);
    uint8_t *entries = buf + FZ_HDR_BYTES;
    fz_status s = read_at(in, in_base + FZ_HDR_BYTES + first * entry, entries,
                          (size_t)(count * entry), FZ_ERR_TRUNCATED);
    if (s != FZ_OK)
        return s;
    *payload = fz_entries_payload(h, entries, count);
    fz_sub_header(h, first, count, entries, *payload, buf);
    fz_header sh;
    /* the table was validated; a file changed since fails here */
    if (*payload > count * h->chunk_bytes ||
        fz_header_parse(buf, FZ_HDR_BYTES, &sh) != FZS_OK)
        return FZ_ERR_CORRUPT_CHUNK;
    const uint64_t sub_off = fz_payload_offset(&sh);
    memset(entries + count * entry, 0,
           (size_t)(sub_off - FZ_HDR_BYTES - count * entry));
    *size = sub_off + *payload;
    return read_at(in, in_base + fz_payload_offset(h) + payload_pos,
                   buf + sub_off, (size_t)*payload, FZ_ERR_TRUNCATED);
}

/* Build batch b's stand-alone stream from the file, decode, write. */
static fz_status decompress_batch(const fz_batch_plan *plan, uint64_t b,
                                  const fz_decode_options *opts,
                                  decompress_state *st) {
    uint64_t first, count, first_byte, bytes, size = 0, payload = 0;
    fz_plan_batch(plan, b, &first, &count, &first_byte, &bytes);
    fz_status s =
        read_sub_stream(st->in, st->in_base, &plan->h, first, count,
                        st->payload_pos, st->sub_buf, &size, &payload);
    if (s != FZ_OK)
        return s;
    st->payload_pos += payload;
    size_t got = 0;
    s = fz_decompress(st->sub_buf, (size_t)size, st->out_buf, (size_t)bytes,
                      opts, &got);
    if (s == FZ_OK &&
        (got != bytes || fwrite(st->out_buf, 1, got, st->out) != got))
        s = FZ_ERR_IO;
    return s;
}

static fz_status read_stream_header(FILE *in, fz_header *h, uint64_t *base,
                                    uint64_t *avail) {
    const off_t start = ftello(in);
    if (start < 0 || fseeko(in, 0, SEEK_END) != 0)
        return FZ_ERR_IO;
    const off_t end = ftello(in);
    if (end < start || seek_to(in, (uint64_t)start) != FZ_OK)
        return FZ_ERR_IO;
    uint8_t head[FZ_HDR_BYTES];
    const size_t got = fread(head, 1, sizeof head, in);
    if (ferror(in))
        return FZ_ERR_IO;
    *base = (uint64_t)start;
    *avail = (uint64_t)(end - start);
    fz_status s = fz_header_read(head, got, h);
    if (s == FZ_OK && *avail < fz_payload_offset(h))
        return FZ_ERR_TRUNCATED;
    return s;
}

static fz_status decompress_batches(const fz_batch_plan *plan,
                                    const fz_decode_options *opts,
                                    decompress_state *st,
                                    fz_progress_fn progress, void *user) {
    fz_decode_options bo = {0, FZ_EXEC_CPU, 0, 0, 0, {0, 0, 0}};
    if (opts)
        bo = *opts;
    if (bo.exec == FZ_EXEC_GPU) /* batch_kib is the file batch's size */
        bo.batch_kib = inner_batch_kib(
            file_batch_bytes(opts ? opts->batch_kib : 0, FZ_EXEC_GPU),
            bo.gpu_streams);
    for (uint64_t b = 0; b < plan->batch_count; b++) {
        fz_status s = decompress_batch(plan, b, &bo, st);
        if (s != FZ_OK)
            return s;
        if (progress) {
            uint64_t first, count, first_byte, bytes;
            fz_plan_batch(plan, b, &first, &count, &first_byte, &bytes);
            progress(user, first_byte + bytes, plan->h.original_bytes);
        }
    }
    return fflush(st->out) == 0 ? FZ_OK : FZ_ERR_IO;
}

fz_status fz_decompress_fp(FILE *src_file, FILE *dst_file,
                           const fz_decode_options *opts,
                           fz_progress_fn progress, void *user,
                           uint64_t *decompressed_size) {
    if (!src_file || !dst_file || !decompressed_size ||
        !fz_decode_options_valid(opts))
        return FZ_ERR_INVALID_ARGUMENT;
    fz_header h;
    uint64_t base = 0, avail = 0;
    fz_status s = read_stream_header(src_file, &h, &base, &avail);
    if (s != FZ_OK)
        return s;
    const fz_exec exec = opts ? opts->exec : FZ_EXEC_CPU;
    fz_batch_plan plan;
    fz_plan_decompress(&h, file_batch_bytes(opts ? opts->batch_kib : 0, exec),
                       &plan);
    decompress_state st = {src_file, dst_file, base, 0, NULL, NULL, 0};
    /* Buffers for the first batch, the largest: a batch_kib above the
     * stream's size (chunks_per_batch is not capped by the chunk count)
     * asked for that much memory, terabytes for a stream of a few KiB. */
    uint64_t first = 0, count = 0, first_byte = 0, max_bytes = 0;
    if (plan.batch_count > 0)
        fz_plan_batch(&plan, 0, &first, &count, &first_byte, &max_bytes);
    st.sub_cap = (size_t)sub_stream_capacity(&h, count);
    st.sub_buf = (uint8_t *)malloc(
        st.sub_cap > TABLE_PIECE_BYTES ? st.sub_cap : TABLE_PIECE_BYTES);
    st.out_buf = (uint8_t *)malloc(max_bytes ? (size_t)max_bytes : 1);
    if (!st.sub_buf || !st.out_buf)
        s = FZ_ERR_OUT_OF_MEMORY;
    if (s == FZ_OK)
        s = scan_table(src_file, base, &h, avail, st.sub_buf, 0, NULL);
    if (s == FZ_OK)
        s = decompress_batches(&plan, opts, &st, progress, user);
    free(st.sub_buf);
    free(st.out_buf);
    if (s == FZ_OK)
        *decompressed_size = h.original_bytes;
    return s;
}

/* Random access from a file: the header and the whole table are read and
 * validated, then only the chunks holding the range are read, as a
 * stand-alone stream decoded by fz_decompress_range. */
fz_status fz_decompress_range_fp(FILE *src_file, uint64_t first, uint64_t count,
                                 void *dst, size_t dst_capacity,
                                 const fz_decode_options *opts) {
    if (!src_file || !fz_decode_options_valid(opts))
        return FZ_ERR_INVALID_ARGUMENT;
    fz_header h;
    uint64_t base = 0, avail = 0;
    fz_status s = read_stream_header(src_file, &h, &base, &avail);
    if (s == FZ_OK)
        s = fz_check_range(&h, first, count, dst, dst_capacity);
    if (s != FZ_OK)
        return s;
    const uint64_t esize = fz_dtype_size(h.dtype);
    const uint64_t c0 = count ? first * esize / h.chunk_bytes : 0;
    const uint64_t n =
        count ? ((first + count) * esize - 1) / h.chunk_bytes - c0 + 1 : 0;
    const uint64_t cap = sub_stream_capacity(&h, n);
    if (cap > SIZE_MAX)
        return FZ_ERR_OUT_OF_MEMORY;
    uint8_t *buf = (uint8_t *)malloc(
        (size_t)(cap > TABLE_PIECE_BYTES ? cap : TABLE_PIECE_BYTES));
    if (!buf)
        return FZ_ERR_OUT_OF_MEMORY;
    uint64_t payload_pos = 0, size = 0, payload = 0; /* where c0's starts */
    s = scan_table(src_file, base, &h, avail, buf, c0, &payload_pos);
    if (s == FZ_OK && n)
        s = read_sub_stream(src_file, base, &h, c0, n, payload_pos, buf, &size,
                            &payload);
    if (s == FZ_OK && n)
        s = fz_decompress_range(buf, (size_t)size,
                                first - c0 * (h.chunk_bytes / esize), count,
                                dst, dst_capacity, opts);
    free(buf);
    return s;
}

fz_status fz_decompress_range_file(const char *src_path, uint64_t first,
                                   uint64_t count, void *dst,
                                   size_t dst_capacity,
                                   const fz_decode_options *opts) {
    if (!src_path)
        return FZ_ERR_INVALID_ARGUMENT;
    FILE *f = fopen(src_path, "rb");
    if (!f)
        return FZ_ERR_IO;
    fz_status s =
        fz_decompress_range_fp(f, first, count, dst, dst_capacity, opts);
    fclose(f);
    return s;
}

/* ------------------------------------------------------------ path forms */

/* A temporary file next to path, mode 0666 & ~umask like any new file.
 * Not mkstemp: its files are 0600, and reading the umask to widen them
 * (umask() sets it) races with other threads creating files. open() with
 * O_EXCL applies the umask itself; the name is made unique by the process
 * id and a counter (and a retry, should a stale file hold one). */
static FILE *open_temp(const char *path, char **tmp_path) {
    static atomic_ulong counter;
    const size_t cap = strlen(path) + 64;
    char *name = (char *)malloc(cap);
    if (!name)
        return NULL;
    for (int attempt = 0; attempt < 100; attempt++) {
        snprintf(name, cap, "%s.tmp.%ld.%lu", path, (long)getpid(),
                 atomic_fetch_add(&counter, 1));
        const int fd = open(name, O_RDWR | O_CREAT | O_EXCL, 0666);
        if (fd < 0 && errno == EEXIST)
            continue;
        FILE *f = fd >= 0 ? fdopen(fd, "w+b") : NULL;
        if (f) {
            *tmp_path = name;
            return f;
        }
        if (fd >= 0) {
            close(fd);
            unlink(name);
        }
        break;
    }
    free(name);
    return NULL;
}

/* After the rename, the directory entry is made durable too: fsync of the
 * parent directory. Best effort: some file systems cannot sync a
 * directory, and the file itself is complete and in place by then. */
static void sync_parent(const char *path) {
    const char *slash = strrchr(path, '/');
    const size_t len = slash ? (size_t)(slash - path) : 0;
    char *dir = (char *)malloc(len + 2);
    if (!dir)
        return;
    if (slash)
        memcpy(dir, path, len ? len : 1); /* "/name": the root */
    else
        dir[0] = '.';
    dir[slash && len ? len : 1] = '\0';
    const int fd = open(dir, O_RDONLY | O_DIRECTORY);
    if (fd >= 0) {
        fsync(fd);
        close(fd);
    }
    free(dir);
}

/* Flush, sync and close the temporary file; rename it over path on
 * success, remove it otherwise. */
static fz_status finish_temp(FILE *f, char *tmp_path, const char *path,
                             fz_status s) {
    if (s == FZ_OK && (fflush(f) != 0 || fsync(fileno(f)) != 0))
        s = FZ_ERR_IO;
    if (fclose(f) != 0 && s == FZ_OK)
        s = FZ_ERR_IO;
    if (s == FZ_OK && rename(tmp_path, path) != 0)
        s = FZ_ERR_IO;
    if (s == FZ_OK)
        sync_parent(path);
    if (s != FZ_OK)
        unlink(tmp_path);
    free(tmp_path);
    return s;
}

typedef fz_status (*stream_job)(const void *ctx, FILE *in, FILE *out,
                                uint64_t *size);

static fz_status run_on_paths(const char *src_path, const char *dst_path,
                              stream_job job, const void *ctx, uint64_t *size) {
    if (!src_path || !dst_path || !size)
        return FZ_ERR_INVALID_ARGUMENT;
    FILE *in = fopen(src_path, "rb");
    if (!in)
        return FZ_ERR_IO;
    char *tmp_path = NULL;
    FILE *out = open_temp(dst_path, &tmp_path);
    if (!out) {
        fclose(in);
        return FZ_ERR_IO;
    }
    uint64_t got = 0;
    fz_status s = job(ctx, in, out, &got);
    fclose(in);
    s = finish_temp(out, tmp_path, dst_path, s);
    if (s == FZ_OK)
        *size = got;
    return s;
}

typedef struct compress_job {
    const fz_params *p;
    fz_progress_fn progress;
    void *user;
} compress_job;

static fz_status run_compress(const void *ctx, FILE *in, FILE *out,
                              uint64_t *size) {
    const compress_job *j = (const compress_job *)ctx;
    return fz_compress_fp(j->p, in, out, j->progress, j->user, size);
}

typedef struct decompress_job {
    const fz_decode_options *opts;
    fz_progress_fn progress;
    void *user;
} decompress_job;

static fz_status run_decompress(const void *ctx, FILE *in, FILE *out,
                                uint64_t *size) {
    const decompress_job *j = (const decompress_job *)ctx;
    return fz_decompress_fp(in, out, j->opts, j->progress, j->user, size);
}

fz_status fz_compress_file(const fz_params *p, const char *src_path,
                           const char *dst_path, fz_progress_fn progress,
                           void *user, uint64_t *compressed_size) {
    /* checked before touching files */
    fz_status s = fz_params_count(p, NULL, NULL);
    if (s != FZ_OK)
        return s;
    const compress_job j = {p, progress, user};
    return run_on_paths(src_path, dst_path, run_compress, &j, compressed_size);
}

fz_status fz_decompress_file(const char *src_path, const char *dst_path,
                             const fz_decode_options *opts,
                             fz_progress_fn progress, void *user,
                             uint64_t *decompressed_size) {
    if (!fz_decode_options_valid(opts))
        return FZ_ERR_INVALID_ARGUMENT;
    const decompress_job j = {opts, progress, user};
    return run_on_paths(src_path, dst_path, run_decompress, &j,
                        decompressed_size);
}
