/* File I/O for the CLI: whole-file reads in 64 MiB pieces, crash-safe
 * output (temporary file, fsync, rename) and progress on stderr. */
#ifndef CLI_IO_H
#define CLI_IO_H

#include <stddef.h>
#include <stdint.h>

/* A heap buffer; data always has one spare byte after size for a NUL. */
typedef struct cli_buffer {
    unsigned char *data;
    size_t size;
} cli_buffer;

void cli_buffer_free(cli_buffer *b);

/* Percentage on stderr for transfers over 1 GiB, when stderr is a TTY. */
typedef struct cli_progress {
    const char *verb; /* "reading", "writing" */
    const char *path;
    uint64_t total;
    int enabled;
    int last_percent;
} cli_progress;

void cli_progress_begin(cli_progress *p, const char *verb, const char *path,
                        uint64_t total, int quiet);
void cli_progress_update(cli_progress *p, uint64_t done);
void cli_progress_end(cli_progress *p);

/* Read a whole file (regular file, pipe or device), but at most max bytes
 * (SIZE_MAX: no limit), so an endless input (/dev/urandom) cannot exhaust
 * memory when the size needed is known. Prints the error and returns
 * CLI_EXIT_FAIL on failure. */
int cli_read_file(const char *path, cli_buffer *out, size_t max, int quiet);

/* Read a floatz stream whole: the header, then at most the stream's size
 * plus one byte (out->size > the header's compressed_bytes: other data
 * follows). A file that is not a stream is read no further than the
 * header, for fz_inspect to report. */
int cli_read_stream(const char *path, cli_buffer *out, int quiet);

/* Read up to cap bytes from the start of a file, and its size. */
int cli_read_head(const char *path, void *dst, size_t cap, size_t *got,
                  uint64_t *file_size);

/* Checks before any work: IN and OUT are different files, OUT is not a
 * directory, and OUT does not exist unless force. */
int cli_check_output(const char *in, const char *out, int force);

/* An output being written to OUT.tmp.XXXXXX next to OUT. */
typedef struct cli_output {
    const char *path;
    char *tmp_path;
    int fd;
    int force;
    uint64_t written;
    cli_progress progress;
} cli_output;

/* expected_bytes only drives the progress display. */
int cli_output_open(cli_output *w, const char *path, int force,
                    uint64_t expected_bytes, int quiet);
int cli_output_write(cli_output *w, const void *data, size_t n);
/* fsync and move into place; on failure the temporary file is removed. */
int cli_output_commit(cli_output *w);
/* Remove the temporary file (safe to call after a failed commit). */
void cli_output_abort(cli_output *w);

/* open + write + commit of one buffer. */
int cli_write_file(const char *path, int force, const void *data, size_t n,
                   int quiet);

/* Seconds on the monotonic clock. */
double cli_now(void);

#endif /* CLI_IO_H */
