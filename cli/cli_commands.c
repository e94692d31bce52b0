/* compress, decompress, info and verify. Raw binary files are streamed
 * through the library's file API in bounded memory; text, pipes and
 * verify hold whole arrays in memory (the input plus a fz_compress_bound()
 * output buffer). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli_commands.h"
#include "cli_common.h"
#include "cli_io.h"
#include "cli_text.h"

/* ---------------------------------------------------------- helpers */
static size_t dtype_size(fz_dtype dtype) {
    return dtype == FZ_F32 ? 4 : 8;
}

static const char *dtype_name(fz_dtype dtype) {
    return dtype == FZ_F32 ? "float32" : dtype == FZ_F64 ? "float64" : "?";
}

static const char *mode_name(fz_mode mode) {
    switch (mode) {
    case FZ_MODE_LOSSLESS: return "lossless";
    case FZ_MODE_ABS: return "ABS (absolute error bound)";
    case FZ_MODE_REL: return "REL (bound relative to the value range)";
    }
    return "unknown";
}

static const char *exec_name(fz_exec exec) {
    return exec == FZ_EXEC_GPU ? "gpu" : "cpu";
}

static double ratio(uint64_t original, uint64_t compressed) {
    return compressed ? (double)original / (double)compressed : 0.0;
}

/* Text or raw: explicit --text/--raw, else by the name's suffix. */
static int is_text(const cli_options *o, const char *name) {
    if (o->format != CLI_FORMAT_AUTO)
        return o->format == CLI_FORMAT_TEXT;
    return cli_has_text_suffix(name);
}

static void *alloc_or_report(size_t bytes, const char *what) {
    void *p = malloc(bytes ? bytes : 1);
    if (!p)
        cli_error("%s: out of memory (%zu bytes)", what, bytes);
    return p;
}

/* "10 x 20 x 30" */
static void format_shape(char *dst, size_t cap, uint32_t ndims,
                         const uint64_t *dims) {
    size_t used = 0;
    dst[0] = '\0';
    for (uint32_t d = 0; d < ndims && used < cap; d++)
        used += (size_t)snprintf(dst + used, cap - used, "%s%llu",
                                 d ? " x " : "", (unsigned long long)dims[d]);
}

/* ---------------------------------------------- backend and params */
static int resolve_exec(const cli_options *o, fz_exec *exec) {
    int gpus = fz_gpu_count();
    if (o->backend == CLI_BACKEND_GPU && gpus <= 0) {
        fz_status why = cli_cuda_built() ? FZ_ERR_NO_GPU : FZ_ERR_NO_CUDA;
        cli_error("--gpu: %s (use --cpu)", fz_status_string(why));
        return CLI_EXIT_FAIL;
    }
    if (o->backend == CLI_BACKEND_AUTO)
        *exec = gpus > 0 ? FZ_EXEC_GPU : FZ_EXEC_CPU;
    else
        *exec = o->backend == CLI_BACKEND_GPU ? FZ_EXEC_GPU : FZ_EXEC_CPU;
    return CLI_EXIT_OK;
}

static void fill_params(const cli_options *o, fz_exec exec, uint64_t values,
                        fz_params *p) {
    fz_params_init(p, o->dtype, values);
    if (o->ndims)
        fz_params_set_shape(p, o->ndims, o->dims);
    p->codec = o->codec;
    p->mode = o->mode;
    p->bound = o->bound;
    p->flags = o->no_checksum ? FZ_FLAG_NO_CHECKSUM : 0;
    p->exec = exec;
    p->threads = o->threads;
    p->gpu_streams = o->gpu_streams;
    memcpy(p->codec_options, o->codec_options, sizeof p->codec_options);
}

static const char *mode_flag(fz_mode mode) {
    return mode == FZ_MODE_ABS ? "ABS" : mode == FZ_MODE_REL ? "REL" : "";
}

static int report_params_error(const cli_options *o, fz_exec exec,
                               fz_status s) {
    if (s == FZ_ERR_UNSUPPORTED && o->mode != FZ_MODE_LOSSLESS) {
        cli_error("lossy compression (-M %s -e %g) is not supported by the %s "
                  "backend of this build: %s%s",
                  mode_flag(o->mode), o->bound, exec_name(exec),
                  fz_status_string(s),
                  exec == FZ_EXEC_GPU ? " (use --cpu)" : "");
        return CLI_EXIT_FAIL;
    }
    return cli_status_error("compression parameters", s);
}

/* Reject parameters the library refuses before reading a large input. */
static int check_params_early(const cli_options *o, fz_exec exec) {
    fz_params p;
    size_t bound;
    cli_options one = *o;
    one.ndims = 0; /* the shape is checked against the data later */
    fill_params(&one, exec, 1, &p);
    fz_status s = fz_compress_bound(&p, &bound);
    return s == FZ_OK ? CLI_EXIT_OK : report_params_error(o, exec, s);
}

/* ------------------------------------------------------ loading input */
/* Product of the shape, or 0 when it overflows 64 bits. */
static uint64_t shape_values(const cli_options *o) {
    uint64_t n = 1;
    for (uint32_t d = 0; d < o->ndims; d++) {
        if (n > UINT64_MAX / o->dims[d])
            return 0;
        n *= o->dims[d];
    }
    return n;
}

static int check_size(const cli_options *o, uint64_t bytes, int text) {
    const size_t esize = dtype_size(o->dtype);
    if (!text && bytes % esize != 0) {
        cli_error("%s: %llu bytes is not a whole number of %s values (%zu "
                  "bytes each)",
                  o->input, (unsigned long long)bytes, dtype_name(o->dtype),
                  esize);
        return CLI_EXIT_FAIL;
    }
    uint64_t have = bytes / esize, need = shape_values(o);
    if (o->ndims == 0 || have == need)
        return CLI_EXIT_OK;
    char shape[128];
    format_shape(shape, sizeof shape, o->ndims, o->dims);
    if (need == 0) /* overflow: the dims are all >= 1 */
        cli_error("%s: holds %llu %s values but the shape %s has too many "
                  "(2^64 or more)",
                  o->input, (unsigned long long)have, dtype_name(o->dtype),
                  shape);
    else
        cli_error("%s: holds %llu %s values but the shape %s needs %llu",
                  o->input, (unsigned long long)have, dtype_name(o->dtype),
                  shape, (unsigned long long)need);
    return CLI_EXIT_FAIL;
}

/* Raw input with a shape is read up to one byte more than the shape
 * needs, so an endless input (/dev/urandom) fails instead of filling
 * memory. SIZE_MAX: no limit. */
static size_t raw_read_limit(const cli_options *o) {
    const uint64_t need = shape_values(o), esize = dtype_size(o->dtype);
    if (o->ndims == 0 || need == 0 || need >= (SIZE_MAX - 1) / esize)
        return SIZE_MAX;
    return (size_t)(need * esize) + 1;
}

/* Read IN as raw or text values and build the parameters for them. */
static int load_array(const cli_options *o, fz_exec exec, cli_buffer *data,
                      fz_params *p) {
    const int text = is_text(o, o->input);
    const size_t max = text ? SIZE_MAX : raw_read_limit(o);
    int rc = cli_read_file(o->input, data, max, o->quiet);
    if (rc != CLI_EXIT_OK)
        return rc;
    if (max != SIZE_MAX && data->size == max) {
        char shape[128];
        format_shape(shape, sizeof shape, o->ndims, o->dims);
        cli_error("%s: holds more than the %llu %s values of the shape %s",
                  o->input, (unsigned long long)shape_values(o),
                  dtype_name(o->dtype), shape);
        cli_buffer_free(data);
        return CLI_EXIT_FAIL;
    }
    if (text) {
        cli_buffer values;
        rc = cli_parse_text(o->input, (char *)data->data, data->size, o->dtype,
                            &values);
        cli_buffer_free(data);
        if (rc != CLI_EXIT_OK)
            return rc;
        *data = values;
    }
    rc = check_size(o, data->size, text);
    if (rc != CLI_EXIT_OK) {
        cli_buffer_free(data);
        return rc;
    }
    fill_params(o, exec, data->size / dtype_size(o->dtype), p);
    return CLI_EXIT_OK;
}

/* ------------------------------------------------- library calls */
/* prefault: touch the output first so a timing excludes page faults. */
static int compress_array(const cli_options *o, const fz_params *p,
                          const cli_buffer *data, cli_buffer *packed,
                          int prefault, double *seconds) {
    size_t bound;
    fz_status s = fz_compress_bound(p, &bound);
    if (s != FZ_OK)
        return report_params_error(o, p->exec, s);
    packed->size = 0;
    packed->data = alloc_or_report(bound, o->input);
    if (!packed->data)
        return CLI_EXIT_FAIL;
    if (prefault)
        memset(packed->data, 0, bound);
    double start = cli_now();
    s = fz_compress(p, data->data, data->size, packed->data, bound,
                    &packed->size);
    *seconds = cli_now() - start;
    if (s != FZ_OK) {
        cli_buffer_free(packed);
        if (s == FZ_ERR_UNSUPPORTED)
            return report_params_error(o, p->exec, s);
        cli_error("%s: compression failed: %s", o->input, fz_status_string(s));
        return CLI_EXIT_FAIL;
    }
    return CLI_EXIT_OK;
}

/* The decode options the command line asks for. */
static fz_decode_options decode_options(const cli_options *o, fz_exec exec) {
    fz_decode_options opts;
    memset(&opts, 0, sizeof opts);
    opts.flags = o->skip_checksum ? FZ_DECODE_SKIP_CHECKSUM : 0;
    opts.exec = exec;
    opts.threads = o->threads;
    opts.gpu_streams = o->gpu_streams;
    return opts;
}

static int decompress_stream(const cli_options *o, fz_exec exec,
                             const cli_buffer *stream, const fz_info *info,
                             cli_buffer *out, int prefault, double *seconds) {
    if (info->original_bytes >= SIZE_MAX) {
        cli_error("%s: too large for this machine", o->input);
        return CLI_EXIT_FAIL;
    }
    const size_t bytes = (size_t)info->original_bytes;
    out->size = 0;
    out->data = alloc_or_report(bytes, o->input);
    if (!out->data)
        return CLI_EXIT_FAIL;
    if (prefault)
        memset(out->data, 0, bytes);
    fz_decode_options opts = decode_options(o, exec);
    double start = cli_now();
    fz_status s = fz_decompress(stream->data, stream->size, out->data, bytes,
                                &opts, &out->size);
    *seconds = cli_now() - start;
    if (s != FZ_OK) {
        cli_buffer_free(out);
        cli_error("%s: decompression failed: %s", o->input,
                  fz_status_string(s));
        return CLI_EXIT_FAIL;
    }
    return CLI_EXIT_OK;
}

/* ------------------------------------------------------------ streaming */
/* Regular files stream; pipes and devices are read whole. */
static int regular_file(const char *path, uint64_t *size) {
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
        return 0;
    *size = (uint64_t)st.st_size;
    return 1;
}

static void show_progress(void *user, uint64_t done, uint64_t total) {
    (void)total;
    cli_progress_update((cli_progress *)user, done);
}

/* An I/O error names the file and the system's reason (a full disk is
 * the output's problem, not the input's). */
static void report_stream_error(const cli_options *o, const char *verb,
                                fz_status s, int read_failed, int write_failed,
                                int err) {
    const char *why = err ? strerror(err) : fz_status_string(s);
    if (s == FZ_ERR_IO && write_failed)
        cli_error("%s: write failed: %s", o->output, why);
    else if (s == FZ_ERR_IO && read_failed)
        cli_error("%s: read failed: %s", o->input, why);
    else
        cli_error("%s: %s failed: %s", o->input, verb, fz_status_string(s));
}

typedef fz_status (*stream_call)(const void *ctx, FILE *in, FILE *out,
                                 fz_progress_fn progress, void *user,
                                 uint64_t *size);

/* IN -> OUT.tmp through call, then sync and rename; nothing is left
 * behind on failure. */
static int stream_files(const cli_options *o, const char *verb,
                        uint64_t in_size, stream_call call, const void *ctx,
                        uint64_t *out_size, double *seconds) {
    FILE *in = fopen(o->input, "rb");
    if (!in) {
        cli_error("%s: cannot open: %s", o->input, strerror(errno));
        return CLI_EXIT_FAIL;
    }
    cli_output w;
    int rc = cli_output_open(&w, o->output, o->force, 0, 1);
    const int fd = rc == CLI_EXIT_OK ? dup(w.fd) : -1;
    FILE *out = fd >= 0 ? fdopen(fd, "w+b") : NULL;
    if (!out) {
        if (fd >= 0)
            close(fd);
        if (rc == CLI_EXIT_OK) {
            cli_error("%s: %s", o->output, strerror(errno));
            cli_output_abort(&w);
        }
        fclose(in);
        return CLI_EXIT_FAIL;
    }
    cli_progress progress;
    cli_progress_begin(&progress, verb, o->input, in_size, o->quiet);
    const double start = cli_now();
    errno = 0;
    fz_status s = call(ctx, in, out, show_progress, &progress, out_size);
    int err = errno; /* why a read or write failed, if one did */
    *seconds = cli_now() - start;
    cli_progress_end(&progress);
    const int read_failed = ferror(in);
    int write_failed = ferror(out);
    fclose(in);
    if (fclose(out) != 0 && s == FZ_OK) { /* the last buffered write */
        s = FZ_ERR_IO;
        write_failed = 1;
        err = errno;
    }
    if (s != FZ_OK) {
        cli_output_abort(&w);
        report_stream_error(o, verb, s, read_failed, write_failed, err);
        return CLI_EXIT_FAIL;
    }
    return cli_output_commit(&w);
}

static fz_status call_compress(const void *ctx, FILE *in, FILE *out,
                               fz_progress_fn progress, void *user,
                               uint64_t *size) {
    return fz_compress_fp((const fz_params *)ctx, in, out, progress, user,
                          size);
}

static fz_status call_decompress(const void *ctx, FILE *in, FILE *out,
                                 fz_progress_fn progress, void *user,
                                 uint64_t *size) {
    return fz_decompress_fp(in, out, (const fz_decode_options *)ctx, progress,
                            user, size);
}

/* ", codec NAME" and, for lossy streams, the bounds, for the summary line
 * (with -c auto the codec is the one chosen). */
static void describe_stream(const fz_info *info, char *dst, size_t cap) {
    const char *codec = fz_codec_name(info->params.codec);
    int n = snprintf(dst, cap, ", codec %s", codec ? codec : "unknown");
    if (n > 0 && (size_t)n < cap && info->params.mode != FZ_MODE_LOSSLESS)
        snprintf(dst + n, cap - (size_t)n, ", %s bound %g, effective %g",
                 mode_flag(info->params.mode), info->params.bound,
                 info->bound_effective);
}

static int compress_streaming(const cli_options *o, fz_exec exec,
                              uint64_t in_size) {
    int rc = check_size(o, in_size, 0);
    if (rc != CLI_EXIT_OK)
        return rc;
    fz_params p;
    fill_params(o, exec, in_size / dtype_size(o->dtype), &p);
    uint64_t out_size = 0;
    double seconds = 0;
    rc = stream_files(o, "compressing", in_size, call_compress, &p, &out_size,
                      &seconds);
    if (rc != CLI_EXIT_OK || o->quiet)
        return rc;
    char bounds[160] = "";
    uint8_t head[FZ_HEADER_BYTES];
    size_t got = 0;
    uint64_t file_size = 0;
    fz_info info;
    if (cli_read_head(o->output, head, sizeof head, &got, &file_size) ==
            CLI_EXIT_OK &&
        fz_inspect(head, got, &info) == FZ_OK)
        describe_stream(&info, bounds, sizeof bounds);
    fprintf(stderr,
            "floatz: %s -> %s: %llu -> %llu bytes (ratio %.3f, %s, %.3f s, "
            "streamed%s)\n",
            o->input, o->output, (unsigned long long)in_size,
            (unsigned long long)out_size, ratio(in_size, out_size),
            exec_name(exec), seconds, bounds);
    return rc;
}

/* ------------------------------------------------------------ compress */
static int compress_checks(const cli_options *o, fz_exec *exec) {
    int rc = resolve_exec(o, exec);
    if (rc == CLI_EXIT_OK)
        rc = check_params_early(o, *exec);
    if (rc == CLI_EXIT_OK && o->output)
        rc = cli_check_output(o->input, o->output, o->force);
    return rc;
}

int cli_compress(const cli_options *o) {
    fz_exec exec;
    cli_buffer data, packed;
    fz_params p;
    double seconds;
    uint64_t in_size = 0;
    int rc = compress_checks(o, &exec);
    if (rc == CLI_EXIT_OK && !is_text(o, o->input) &&
        regular_file(o->input, &in_size))
        return compress_streaming(o, exec, in_size);
    if (rc == CLI_EXIT_OK)
        rc = load_array(o, exec, &data, &p);
    if (rc != CLI_EXIT_OK)
        return rc;
    rc = compress_array(o, &p, &data, &packed, 0, &seconds);
    if (rc == CLI_EXIT_OK) {
        rc = cli_write_file(o->output, o->force, packed.data, packed.size,
                            o->quiet);
        if (rc == CLI_EXIT_OK && !o->quiet) {
            char bounds[160] = "";
            fz_info info;
            if (fz_inspect(packed.data, packed.size, &info) == FZ_OK)
                describe_stream(&info, bounds, sizeof bounds);
            fprintf(stderr,
                    "floatz: %s -> %s: %zu -> %zu bytes (ratio %.3f, %s, "
                    "%.3f s%s)\n",
                    o->input, o->output, data.size, packed.size,
                    ratio(data.size, packed.size), exec_name(exec), seconds,
                    bounds);
        }
        cli_buffer_free(&packed);
    }
    cli_buffer_free(&data);
    return rc;
}

/* ---------------------------------------------------------- decompress */
/* -f/-d/-t and a shape are optional here; when given they must match. */
static int check_expectations(const cli_options *o, const fz_info *info) {
    const fz_params *sp = &info->params;
    if (o->dtype && o->dtype != sp->dtype) {
        cli_error("%s: the stream holds %s values, not %s", o->input,
                  dtype_name(sp->dtype), dtype_name(o->dtype));
        return CLI_EXIT_FAIL;
    }
    int same = o->ndims == 0 || o->ndims == sp->ndims;
    for (uint32_t d = 0; same && d < o->ndims; d++)
        same = o->dims[d] == sp->dims[d];
    if (same)
        return CLI_EXIT_OK;
    char want[128], have[128];
    format_shape(want, sizeof want, o->ndims, o->dims);
    format_shape(have, sizeof have, sp->ndims, sp->dims);
    cli_error("%s: the stream's shape is %s, not %s", o->input, have, want);
    return CLI_EXIT_FAIL;
}

/* The CLI takes a file as one stream. Bytes after its end (a second
 * stream appended, other data) would be dropped without a word, so they
 * are an error, as missing bytes are. bytes: the file's size, or what was
 * read of a pipe (at most the stream's size + 1). */
static int check_stream_size(const char *path, const fz_info *info,
                             uint64_t bytes) {
    const unsigned long long want = info->compressed_bytes;
    if (bytes == want)
        return CLI_EXIT_OK;
    if (bytes < want)
        cli_error("%s: %s: the file has %llu bytes, the header says %llu", path,
                  fz_status_string(FZ_ERR_TRUNCATED), (unsigned long long)bytes,
                  want);
    else
        cli_error("%s: data after the end of the stream (the header says "
                  "%llu bytes): one stream per file, concatenated streams "
                  "are not decoded",
                  path, want);
    return CLI_EXIT_FAIL;
}

/* Header checks of decompress: a whole, single stream of the type and
 * shape asked for (if any). */
static int check_stream(const cli_options *o, const void *head, size_t got,
                        uint64_t file_bytes, fz_info *info) {
    fz_status s = fz_inspect(head, got, info);
    if (s != FZ_OK)
        return cli_status_error(o->input, s);
    int rc = check_stream_size(o->input, info, file_bytes);
    return rc == CLI_EXIT_OK ? check_expectations(o, info) : rc;
}

static int read_stream(const cli_options *o, cli_buffer *stream,
                       fz_info *info) {
    int rc = cli_read_stream(o->input, stream, o->quiet);
    if (rc != CLI_EXIT_OK)
        return rc;
    rc = check_stream(o, stream->data, stream->size, stream->size, info);
    if (rc != CLI_EXIT_OK)
        cli_buffer_free(stream);
    return rc;
}

static int write_values(const cli_options *o, const cli_buffer *values,
                        fz_dtype dtype) {
    if (!is_text(o, o->output))
        return cli_write_file(o->output, o->force, values->data, values->size,
                              o->quiet);
    cli_output w;
    int rc = cli_output_open(&w, o->output, o->force, 0, o->quiet);
    if (rc != CLI_EXIT_OK)
        return rc;
    rc = cli_write_text(&w, values->data, values->size / dtype_size(dtype),
                        dtype, o->quiet);
    if (rc != CLI_EXIT_OK) {
        cli_output_abort(&w);
        return rc;
    }
    return cli_output_commit(&w);
}

/* Raw output from a regular file: stream it. */
static int decompress_streaming(const cli_options *o, fz_exec exec,
                                uint64_t in_size) {
    uint8_t head[FZ_HEADER_BYTES];
    size_t got = 0;
    uint64_t file_size = 0;
    fz_info info;
    int rc = cli_read_head(o->input, head, sizeof head, &got, &file_size);
    if (rc == CLI_EXIT_OK)
        rc = check_stream(o, head, got, file_size, &info);
    if (rc != CLI_EXIT_OK)
        return rc;
    fz_decode_options opts = decode_options(o, exec);
    uint64_t out_size = 0;
    double seconds = 0;
    rc = stream_files(o, "decompressing", in_size, call_decompress, &opts,
                      &out_size, &seconds);
    if (rc == CLI_EXIT_OK && !o->quiet)
        fprintf(stderr,
                "floatz: %s -> %s: %llu -> %llu bytes (%s, %.3f s, "
                "streamed)\n",
                o->input, o->output, (unsigned long long)in_size,
                (unsigned long long)out_size, exec_name(exec), seconds);
    return rc;
}

/* The stream's header: from the head of a regular file, else (a pipe)
 * from the whole stream, read into *stream. */
static int range_source(const cli_options *o, int regular, cli_buffer *stream,
                        fz_info *info) {
    if (!regular)
        return read_stream(o, stream, info);
    uint8_t head[FZ_HEADER_BYTES];
    size_t got = 0;
    uint64_t file_size = 0;
    int rc = cli_read_head(o->input, head, sizeof head, &got, &file_size);
    return rc == CLI_EXIT_OK ? check_stream(o, head, got, file_size, info) : rc;
}

/* --range: values [first, first + count) only, on the CPU. From a regular
 * file only the header, the chunk table and the chunks holding them are
 * read (fz_decompress_range_file); a pipe is read whole. */
static int decompress_range(const cli_options *o) {
    fz_info info;
    cli_buffer stream = {NULL, 0}, values;
    uint64_t in_size = 0;
    const int regular = regular_file(o->input, &in_size);
    int rc = range_source(o, regular, &stream, &info);
    if (rc != CLI_EXIT_OK)
        return rc;
    const size_t esize = dtype_size(info.params.dtype);
    const uint64_t count = o->range_count, total = info.original_bytes / esize;
    if (o->range_first > total || count > total - o->range_first) {
        cli_buffer_free(&stream);
        cli_error("%s: --range %llu:%llu is past the stream's %llu values",
                  o->input, (unsigned long long)o->range_first,
                  (unsigned long long)count, (unsigned long long)total);
        return CLI_EXIT_FAIL;
    }
    values.size = (size_t)count * esize; /* count <= total: it fits */
    values.data = alloc_or_report(values.size ? values.size : 1, o->input);
    if (!values.data) {
        cli_buffer_free(&stream);
        return CLI_EXIT_FAIL;
    }
    fz_decode_options opts = decode_options(o, FZ_EXEC_CPU);
    const double start = cli_now();
    fz_status s =
        regular ? fz_decompress_range_file(o->input, o->range_first, count,
                                           values.data, values.size, &opts)
                : fz_decompress_range(stream.data, stream.size, o->range_first,
                                      count, values.data, values.size, &opts);
    const double seconds = cli_now() - start;
    if (s != FZ_OK) {
        cli_error("%s: decompression failed: %s", o->input,
                  fz_status_string(s));
        rc = CLI_EXIT_FAIL;
    } else {
        rc = write_values(o, &values, info.params.dtype);
        if (rc == CLI_EXIT_OK && !o->quiet)
            fprintf(stderr,
                    "floatz: %s -> %s: values %llu..%llu of %llu (%zu "
                    "bytes, cpu, %.2f ms)\n",
                    o->input, o->output, (unsigned long long)o->range_first,
                    (unsigned long long)(o->range_first + count),
                    (unsigned long long)total, values.size, seconds * 1e3);
    }
    cli_buffer_free(&values);
    cli_buffer_free(&stream);
    return rc;
}

int cli_decompress(const cli_options *o) {
    fz_exec exec;
    fz_info info;
    cli_buffer stream, values;
    double seconds;
    uint64_t in_size = 0;
    int rc = resolve_exec(o, &exec);
    if (rc == CLI_EXIT_OK)
        rc = cli_check_output(o->input, o->output, o->force);
    if (rc == CLI_EXIT_OK && o->range_given)
        return decompress_range(o);
    if (rc == CLI_EXIT_OK && !is_text(o, o->output) &&
        regular_file(o->input, &in_size))
        return decompress_streaming(o, exec, in_size);
    if (rc == CLI_EXIT_OK)
        rc = read_stream(o, &stream, &info);
    if (rc != CLI_EXIT_OK)
        return rc;
    rc = decompress_stream(o, exec, &stream, &info, &values, 0, &seconds);
    if (rc == CLI_EXIT_OK) {
        rc = write_values(o, &values, info.params.dtype);
        if (rc == CLI_EXIT_OK && !o->quiet)
            fprintf(stderr, "floatz: %s -> %s: %zu -> %zu bytes (%s, %.3f s)\n",
                    o->input, o->output, stream.size, values.size,
                    exec_name(exec), seconds);
        cli_buffer_free(&values);
    }
    cli_buffer_free(&stream);
    return rc;
}

/* ---------------------------------------------------------------- info */
static void print_info(const char *path, const fz_info *info,
                       uint64_t file_bytes) {
    const fz_params *p = &info->params;
    const char *codec = fz_codec_name(p->codec);
    char shape[128];
    format_shape(shape, sizeof shape, p->ndims, p->dims);
    printf("file:              %s\n", path);
    printf("format version:    %u\n", (unsigned)info->format_version);
    printf("codec:             %s (codec version %u)\n",
           codec ? codec : "unknown", (unsigned)info->codec_version);
    printf("dtype:             %s\n", dtype_name(p->dtype));
    printf("ndims:             %u\n", (unsigned)p->ndims);
    printf("dims:              %s (dims[0] is the fastest-varying)\n", shape);
    printf("mode:              %s\n", mode_name(p->mode));
    printf("bound requested:   %.17g%s\n", p->bound,
           p->mode == FZ_MODE_ABS   ? " (absolute)"
           : p->mode == FZ_MODE_REL ? " (x the value range: max - min of the "
                                      "finite values)"
                                    : "");
    printf("bound effective:   %.17g%s\n", info->bound_effective,
           p->mode == FZ_MODE_LOSSLESS ? ""
           : info->bound_effective > 0
               ? " (absolute, enforced: every finite value decodes within it)"
               : " (stored lossless: every bit kept)");
    printf("original bytes:    %llu\n",
           (unsigned long long)info->original_bytes);
    printf("compressed bytes:  %llu\n",
           (unsigned long long)info->compressed_bytes);
    printf("file bytes:        %llu\n", (unsigned long long)file_bytes);
    printf("ratio:             %.3f\n",
           ratio(info->original_bytes, info->compressed_bytes));
    printf("chunk bytes:       %llu\n", (unsigned long long)info->chunk_bytes);
    printf("chunk count:       %llu\n", (unsigned long long)info->chunk_count);
    printf("checksums:         %s\n", info->has_checksums ? "yes" : "no");
}

/* The stream's header and the file's size. A pipe has no size to ask
 * for: it is read (up to the stream's size + 1) and counted. */
static int read_info_source(const char *path, cli_buffer *head,
                            uint64_t *file_bytes) {
    if (regular_file(path, file_bytes))
        return cli_read_file(path, head, FZ_HEADER_BYTES, 1);
    int rc = cli_read_stream(path, head, 1);
    *file_bytes = rc == CLI_EXIT_OK ? head->size : 0;
    return rc;
}

int cli_info(const cli_options *o) {
    cli_buffer head;
    uint64_t file_bytes = 0;
    fz_info info;
    if (read_info_source(o->input, &head, &file_bytes) != CLI_EXIT_OK)
        return CLI_EXIT_FAIL;
    fz_status s = fz_inspect(head.data, head.size, &info);
    cli_buffer_free(&head);
    if (s != FZ_OK)
        return cli_status_error(o->input, s);
    print_info(o->input, &info, file_bytes);
    fflush(stdout);
    return check_stream_size(o->input, &info, file_bytes);
}

/* -------------------------------------------------------------- verify */
static double value_at(const unsigned char *base, uint64_t i, fz_dtype dtype) {
    if (dtype == FZ_F32) {
        float v;
        memcpy(&v, base + i * 4, sizeof v);
        return v;
    }
    double v;
    memcpy(&v, base + i * 8, sizeof v);
    return v;
}

/* Largest |decoded - original| (lossless verify); a NaN on one side
 * only counts as infinite. */
static double max_abs_error(const cli_buffer *a, const cli_buffer *b,
                            fz_dtype dtype) {
    uint64_t n = a->size / dtype_size(dtype);
    double worst = 0.0;
    for (uint64_t i = 0; i < n; i++) {
        double x = value_at(a->data, i, dtype), y = value_at(b->data, i, dtype);
        if (isnan(x) || isnan(y)) {
            if (isnan(x) != isnan(y))
                return INFINITY;
            continue;
        }
        double e = x == y ? 0.0 : fabs(x - y);
        if (e > worst)
            worst = e;
    }
    return worst;
}

static double gb_per_s(uint64_t bytes, double seconds) {
    return seconds > 0 ? (double)bytes / seconds / 1e9 : INFINITY;
}

/* What a lossy round trip did to the values. */
typedef struct lossy_stats {
    double lo, hi;       /* min and max of the finite original values */
    double range;        /* hi - lo (infinite if that overflows) */
    double abs_bound;    /* requested bound as an absolute bound */
    double max_error;    /* largest |decoded - original| */
    double rmse;         /* over the finite values */
    uint64_t violations; /* values outside abs_bound */
} lossy_stats;

/* factor x (hi - lo), also when hi - lo alone overflows. */
static double times_range(double factor, double lo, double hi) {
    double r = hi - lo;
    if (isinf(r))
        return 2.0 * (factor * (0.5 * hi - 0.5 * lo));
    return factor * r;
}

/* min and max of the finite values (lo > hi when there are none). */
static void finite_min_max(const cli_buffer *a, fz_dtype dtype, double *lo,
                           double *hi) {
    uint64_t n = a->size / dtype_size(dtype);
    *lo = INFINITY;
    *hi = -INFINITY;
    for (uint64_t i = 0; i < n; i++) {
        double x = value_at(a->data, i, dtype);
        if (isfinite(x)) {
            *lo = x < *lo ? x : *lo;
            *hi = x > *hi ? x : *hi;
        }
    }
}

/* A finite original must decode within abs_bound (checked in double, so
 * -0.0 and +0.0 are equal); NaN and infinities must come back bit for
 * bit. */
static void lossy_compare(const cli_options *o, const cli_buffer *orig,
                          const cli_buffer *dec, lossy_stats *s) {
    const size_t esize = dtype_size(o->dtype);
    const uint64_t n = orig->size / esize;
    double lo, hi, worst = 0.0, sum = 0.0;
    uint64_t finite = 0, non_finite_bad = 0;
    finite_min_max(orig, o->dtype, &lo, &hi);
    s->lo = lo;
    s->hi = hi;
    s->range = hi >= lo ? times_range(1.0, lo, hi) : 0.0;
    s->abs_bound = o->mode == FZ_MODE_REL
                       ? (hi >= lo ? times_range(o->bound, lo, hi) : 0.0)
                       : o->bound;
    s->violations = 0;
    for (uint64_t i = 0; i < n; i++) {
        double x = value_at(orig->data, i, o->dtype);
        double y = value_at(dec->data, i, o->dtype);
        if (!isfinite(x) || !isfinite(y)) {
            if (memcmp(orig->data + i * esize, dec->data + i * esize, esize))
                non_finite_bad++;
            continue;
        }
        double e = fabs(y - x);
        s->violations += e > s->abs_bound;
        worst = e > worst ? e : worst;
        finite++;
    }
    /* RMSE scaled by the largest error: the squares cannot overflow */
    for (uint64_t i = 0; i < n && worst > 0 && isfinite(worst); i++) {
        double x = value_at(orig->data, i, o->dtype);
        double y = value_at(dec->data, i, o->dtype);
        if (isfinite(x) && isfinite(y))
            sum += ((y - x) / worst) * ((y - x) / worst);
    }
    s->violations += non_finite_bad;
    s->max_error = non_finite_bad ? INFINITY : worst;
    if (non_finite_bad || isinf(worst))
        s->rmse = INFINITY;
    else
        s->rmse = worst > 0 ? worst * sqrt(sum / (double)finite) : 0.0;
}

typedef struct verify_result {
    uint64_t original, compressed;
    double compress_s, decompress_s, max_error;
    int identical, passed;
    double bound_effective; /* from the stream's header */
    fz_codec codec;         /* the stream's (auto: the one chosen) */
    lossy_stats lossy;      /* lossy modes only */
} verify_result;

static void print_psnr(const lossy_stats *s) {
    if (s->rmse == 0) {
        printf("PSNR:              inf (no error)\n");
    } else if (s->range == 0 || isinf(s->rmse)) {
        printf("PSNR:              -inf (%s)\n",
               s->range == 0 ? "the value range is 0" : "unbounded error");
    } else { /* (range / 2) x 2: no overflow */
        printf("PSNR:              %.2f dB\n",
               20.0 * (log10(times_range(0.5, s->lo, s->hi)) + log10(2.0) -
                       log10(s->rmse)));
    }
}

static void print_lossy_verify(const cli_options *o, const verify_result *r) {
    const lossy_stats *s = &r->lossy;
    printf("mode:              %s\n", mode_name(o->mode));
    printf("bound requested:   %.17g%s\n", o->bound,
           o->mode == FZ_MODE_REL ? " (x the value range)" : " (absolute)");
    printf("bound effective:   %.17g%s\n", r->bound_effective,
           r->bound_effective > 0
               ? (r->codec == FZ_CODEC_LORENZO
                      ? " (enforced: the absolute bound, every value checked)"
                      : " (enforced: a power of two <= the absolute bound)")
               : " (stored lossless: every bit kept)");
    printf("value range:       %.17g (max - min of the finite values)\n",
           s->range);
    if (o->mode == FZ_MODE_REL)
        printf("absolute bound:    %.17g (= %.17g x value range)\n",
               s->abs_bound, o->bound);
    else
        printf("absolute bound:    %.17g\n", s->abs_bound);
    printf("max abs error:     %.17g\n", s->max_error);
    if (s->abs_bound > 0)
        printf("max error / bound: %.6g\n", s->max_error / s->abs_bound);
    else
        printf("max error / bound: %s\n", s->max_error > 0 ? "inf" : "0");
    printf("violations:        %llu (values with |decoded - original| > the "
           "absolute bound)\n",
           (unsigned long long)s->violations);
    print_psnr(s);
}

static void print_verify(const cli_options *o, fz_exec exec,
                         const verify_result *r) {
    printf("input:             %s (%s, %llu values)\n", o->input,
           dtype_name(o->dtype),
           (unsigned long long)(r->original / dtype_size(o->dtype)));
    printf("original bytes:    %llu\n", (unsigned long long)r->original);
    printf("compressed bytes:  %llu\n", (unsigned long long)r->compressed);
    printf("ratio:             %.3f\n", ratio(r->original, r->compressed));
    const char *codec = fz_codec_name(r->codec);
    printf("codec:             %s%s\n", codec ? codec : "unknown",
           o->codec == FZ_CODEC_AUTO ? " (chosen by auto)" : "");
    printf("backend:           %s\n", exec_name(exec));
    printf("compression:       %.3f GB/s (%.6f s)\n",
           gb_per_s(r->original, r->compress_s), r->compress_s);
    printf("decompression:     %.3f GB/s (%.6f s)\n",
           gb_per_s(r->original, r->decompress_s), r->decompress_s);
    if (o->mode == FZ_MODE_LOSSLESS) {
        printf("max abs error:     %.17g\n", r->max_error);
        printf("result:            %s\n",
               r->passed ? "verified (bitwise identical round trip)"
                         : "FAILED (round trip is not bitwise identical)");
        return;
    }
    print_lossy_verify(o, r);
    if (r->passed)
        printf("result:            verified (within bound)\n");
    else
        printf("result:            FAILED (%llu values exceed the bound)\n",
               (unsigned long long)r->lossy.violations);
}

/* One small untimed round trip, so the timings leave out one-time costs:
 * OpenMP thread start-up, CUDA context creation. */
static void warm_up(const fz_params *like) {
    enum { WARM_VALUES = 4096 };
    static double zeros[WARM_VALUES];
    static unsigned char packed[WARM_VALUES * 8 + 4096];
    size_t bound, size;
    fz_params p = *like;
    fz_params_set_shape(&p, 1, &(uint64_t){WARM_VALUES});
    if (fz_compress_bound(&p, &bound) != FZ_OK || bound > sizeof packed)
        return;
    if (fz_compress(&p, zeros, WARM_VALUES * dtype_size(p.dtype), packed, bound,
                    &size) != FZ_OK)
        return;
    fz_decode_options opts;
    memset(&opts, 0, sizeof opts);
    opts.exec = p.exec;
    opts.threads = p.threads;
    fz_decompress(packed, size, zeros, sizeof zeros, &opts, &size);
}

/* Round trip data through the library; fill r. */
static int round_trip(const cli_options *o, fz_exec exec, const fz_params *p,
                      const cli_buffer *data, verify_result *r) {
    cli_buffer packed, restored;
    fz_info info;
    warm_up(p);
    int rc = compress_array(o, p, data, &packed, 1, &r->compress_s);
    if (rc != CLI_EXIT_OK)
        return rc;
    fz_status s = fz_inspect(packed.data, packed.size, &info);
    rc = s == FZ_OK ? decompress_stream(o, exec, &packed, &info, &restored, 1,
                                        &r->decompress_s)
                    : cli_status_error(o->input, s);
    if (rc == CLI_EXIT_OK) {
        r->original = data->size;
        r->compressed = packed.size;
        r->identical = restored.size == data->size &&
                       memcmp(restored.data, data->data, data->size) == 0;
        r->bound_effective = info.bound_effective;
        r->codec = info.params.codec;
        if (o->mode == FZ_MODE_LOSSLESS) {
            r->max_error = max_abs_error(data, &restored, o->dtype);
            r->passed = r->identical;
        } else {
            lossy_compare(o, data, &restored, &r->lossy);
            r->max_error = r->lossy.max_error;
            r->passed = r->lossy.violations == 0;
        }
        cli_buffer_free(&restored);
    }
    cli_buffer_free(&packed);
    return rc;
}

int cli_verify(const cli_options *o) {
    fz_exec exec;
    fz_params p;
    cli_buffer data;
    verify_result r;
    memset(&r, 0, sizeof r);
    int rc = compress_checks(o, &exec);
    if (rc == CLI_EXIT_OK)
        rc = load_array(o, exec, &data, &p);
    if (rc != CLI_EXIT_OK)
        return rc;
    rc = round_trip(o, exec, &p, &data, &r);
    cli_buffer_free(&data);
    if (rc != CLI_EXIT_OK)
        return rc;
    if (!o->quiet)
        print_verify(o, exec, &r);
    if (!r.passed) {
        fflush(stdout);
        cli_error("%s: round trip verification failed", o->input);
        return CLI_EXIT_FAIL;
    }
    return CLI_EXIT_OK;
}
