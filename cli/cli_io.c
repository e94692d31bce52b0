/* File I/O for the CLI. Inputs are read whole with a read() loop (files
 * over 2 GiB need several calls); outputs go to a temporary file next to
 * OUT that is fsynced and renamed into place, so OUT is either the old file
 * or the complete new one, never a partial write. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli_common.h"
#include "cli_io.h"

#define IO_PIECE ((size_t)64 << 20)      /* bytes per read()/write() */
#define PROGRESS_MIN ((uint64_t)1 << 30) /* show progress above 1 GiB */
#define PIPE_INITIAL_CAPACITY ((size_t)1 << 20)

void cli_buffer_free(cli_buffer *b) {
    free(b->data);
    b->data = NULL;
    b->size = 0;
}

/* ------------------------------------------------------------ progress */
void cli_progress_begin(cli_progress *p, const char *verb, const char *path,
                        uint64_t total, int quiet) {
    p->verb = verb;
    p->path = path;
    p->total = total;
    p->enabled = !quiet && total > PROGRESS_MIN && isatty(STDERR_FILENO);
    p->last_percent = -1;
}

void cli_progress_update(cli_progress *p, uint64_t done) {
    if (!p->enabled)
        return;
    int percent = (int)(done >= p->total ? 100 : done * 100 / p->total);
    if (percent == p->last_percent)
        return;
    p->last_percent = percent;
    fprintf(stderr, "\rfloatz: %s %s: %3d%%", p->verb, p->path, percent);
    fflush(stderr);
}

void cli_progress_end(cli_progress *p) {
    if (p->enabled && p->last_percent >= 0)
        fputc('\n', stderr);
    p->enabled = 0;
}

/* --------------------------------------------------------------- input */
static ssize_t read_retrying(int fd, void *dst, size_t n) {
    ssize_t got;
    do
        got = read(fd, dst, n);
    while (got < 0 && errno == EINTR);
    return got;
}

/* Grow b (capacity *cap) to hold at least need bytes plus the spare NUL. */
static int grow_buffer(cli_buffer *b, size_t *cap, size_t need) {
    size_t new_cap = *cap * 2 > need ? *cap * 2 : need;
    unsigned char *p = realloc(b->data, new_cap + 1);
    if (!p)
        return -1;
    b->data = p;
    *cap = new_cap;
    return 0;
}

/* Read until EOF or until b holds limit bytes. A full buffer is probed
 * with a small read first, so a regular file of the size fstat gave is
 * never reallocated. */
static int read_all(int fd, cli_buffer *b, size_t *cap, size_t limit,
                    cli_progress *pr) {
    while (b->size < limit) {
        const size_t end = *cap < limit ? *cap : limit;
        if (b->size == end) {
            unsigned char probe[4096];
            size_t n =
                limit - b->size < sizeof probe ? limit - b->size : sizeof probe;
            ssize_t got = read_retrying(fd, probe, n);
            if (got <= 0)
                return (int)got;
            if (grow_buffer(b, cap, b->size + (size_t)got) != 0) {
                errno = ENOMEM;
                return -1;
            }
            memcpy(b->data + b->size, probe, (size_t)got);
            b->size += (size_t)got;
            continue;
        }
        size_t want = end - b->size < IO_PIECE ? end - b->size : IO_PIECE;
        ssize_t got = read_retrying(fd, b->data + b->size, want);
        if (got <= 0)
            return (int)got;
        b->size += (size_t)got;
        cli_progress_update(pr, b->size);
    }
    return 0;
}

static int open_input(const char *path, struct stat *st) {
    int fd = open(path, O_RDONLY);
    if (fd < 0) {
        cli_error("%s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    if (fstat(fd, st) != 0 || S_ISDIR(st->st_mode)) {
        cli_error("%s: %s", path,
                  S_ISDIR(st->st_mode) ? "is a directory" : strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

/* A file being read whole into buf. */
typedef struct input {
    const char *path;
    int fd;
    size_t cap; /* bytes allocated in buf->data, less the spare NUL */
    cli_buffer *buf;
    cli_progress progress;
} input;

/* Open path and allocate for it: its size for a regular file (at most
 * max), else a first piece that grows as data comes. */
static int input_open(input *in, const char *path, cli_buffer *out, size_t max,
                      int quiet) {
    struct stat st;
    in->path = path;
    in->buf = out;
    in->fd = open_input(path, &st);
    if (in->fd < 0)
        return CLI_EXIT_FAIL;
    uint64_t expected = S_ISREG(st.st_mode) ? (uint64_t)st.st_size : 0;
    if (expected >= SIZE_MAX) {
        close(in->fd);
        cli_error("%s: too large for this machine's address space", path);
        return CLI_EXIT_FAIL;
    }
    in->cap = S_ISREG(st.st_mode) ? (size_t)expected : PIPE_INITIAL_CAPACITY;
    in->cap = in->cap < max ? in->cap : max;
    out->size = 0;
    out->data = malloc(in->cap + 1);
    if (!out->data) {
        close(in->fd);
        cli_error("%s: out of memory reading %zu bytes", path, in->cap);
        return CLI_EXIT_FAIL;
    }
    cli_progress_begin(&in->progress, "reading", path, expected, quiet);
    return CLI_EXIT_OK;
}

/* Read on until EOF or until the buffer holds limit bytes. */
static int input_read(input *in, size_t limit) {
    if (read_all(in->fd, in->buf, &in->cap, limit, &in->progress) == 0)
        return CLI_EXIT_OK;
    const int err = errno;
    cli_progress_end(&in->progress); /* the message on a line of its own */
    cli_error("%s: read failed: %s", in->path, strerror(err));
    return CLI_EXIT_FAIL;
}

/* Close; on failure the buffer is freed, else NUL-terminated. */
static int input_close(input *in, int rc) {
    cli_progress_end(&in->progress);
    close(in->fd);
    if (rc != CLI_EXIT_OK)
        cli_buffer_free(in->buf);
    else
        in->buf->data[in->buf->size] = '\0';
    return rc;
}

int cli_read_file(const char *path, cli_buffer *out, size_t max, int quiet) {
    input in;
    if (input_open(&in, path, out, max, quiet) != CLI_EXIT_OK)
        return CLI_EXIT_FAIL;
    return input_close(&in, input_read(&in, max));
}

/* The header first: a file that is not a stream (or an endless one such
 * as /dev/zero) stops there; then as many bytes as the header says, and
 * one more to see whether other data follows. */
int cli_read_stream(const char *path, cli_buffer *out, int quiet) {
    input in;
    fz_info info;
    if (input_open(&in, path, out, SIZE_MAX, quiet) != CLI_EXIT_OK)
        return CLI_EXIT_FAIL;
    int rc = input_read(&in, FZ_HEADER_BYTES);
    if (rc == CLI_EXIT_OK && fz_inspect(out->data, out->size, &info) == FZ_OK)
        rc = input_read(&in, info.compressed_bytes < SIZE_MAX
                                 ? (size_t)info.compressed_bytes + 1
                                 : SIZE_MAX);
    return input_close(&in, rc);
}

int cli_read_head(const char *path, void *dst, size_t cap, size_t *got,
                  uint64_t *file_size) {
    struct stat st;
    int fd = open_input(path, &st);
    if (fd < 0)
        return CLI_EXIT_FAIL;
    *file_size = (uint64_t)st.st_size;
    *got = 0;
    while (*got < cap) {
        ssize_t n = read_retrying(fd, (char *)dst + *got, cap - *got);
        if (n < 0) {
            cli_error("%s: read failed: %s", path, strerror(errno));
            close(fd);
            return CLI_EXIT_FAIL;
        }
        if (n == 0)
            break;
        *got += (size_t)n;
    }
    close(fd);
    return CLI_EXIT_OK;
}

/* -------------------------------------------------------------- output */
int cli_check_output(const char *in, const char *out, int force) {
    struct stat so, si;
    if (strcmp(in, out) == 0) {
        cli_error("input and output are the same file: %s", out);
        return CLI_EXIT_FAIL;
    }
    if (stat(out, &so) != 0) {
        if (errno == ENOENT)
            return CLI_EXIT_OK;
        cli_error("%s: %s", out, strerror(errno));
        return CLI_EXIT_FAIL;
    }
    if (stat(in, &si) == 0 && si.st_dev == so.st_dev &&
        si.st_ino == so.st_ino) {
        cli_error("input and output are the same file: %s and %s", in, out);
        return CLI_EXIT_FAIL;
    }
    if (!S_ISREG(so.st_mode)) {
        cli_error("%s: %s", out,
                  S_ISDIR(so.st_mode)
                      ? "is a directory"
                      : "exists and is not a regular file (not replaced)");
        return CLI_EXIT_FAIL;
    }
    if (!force) {
        cli_error("%s: already exists (use -F to overwrite)", out);
        return CLI_EXIT_FAIL;
    }
    return CLI_EXIT_OK;
}

/* The temporary file to remove if a signal ends the process mid-write. */
static char *volatile pending_tmp_path;

static void remove_tmp_and_die(int sig) {
    char *path = pending_tmp_path;
    if (path)
        unlink(path);
    signal(sig, SIG_DFL);
    raise(sig);
}

static void install_signal_cleanup(void) {
    static int installed;
    const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
    if (installed)
        return;
    installed = 1;
    /* Past `ulimit -f`, a write then fails with EFBIG and is reported and
     * cleaned up like a full disk; SIGXFSZ would kill the process and
     * leave OUT.tmp.XXXXXX behind. */
    signal(SIGXFSZ, SIG_IGN);
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        struct sigaction old, sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = remove_tmp_and_die;
        sigemptyset(&sa.sa_mask);
        /* Keep signals ignored under nohup ignored. */
        if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler != SIG_IGN)
            sigaction(sigs[i], &sa, NULL);
    }
}

/* mkstemp creates mode 0600; give the result the usual 0666 & ~umask. */
static void apply_default_mode(int fd) {
    mode_t mask = umask(0);
    umask(mask);
    fchmod(fd, 0666 & ~mask);
}

int cli_output_open(cli_output *w, const char *path, int force,
                    uint64_t expected_bytes, int quiet) {
    static const char suffix[] = ".tmp.XXXXXX";
    memset(w, 0, sizeof *w);
    w->path = path;
    w->force = force;
    w->fd = -1;
    w->tmp_path = malloc(strlen(path) + sizeof suffix);
    if (!w->tmp_path) {
        cli_error("%s: out of memory", path);
        return CLI_EXIT_FAIL;
    }
    strcpy(w->tmp_path, path);
    strcat(w->tmp_path, suffix);
    install_signal_cleanup();
    w->fd = mkstemp(w->tmp_path);
    if (w->fd < 0) {
        cli_error("%s: cannot create a temporary file next to it: %s", path,
                  strerror(errno));
        free(w->tmp_path);
        w->tmp_path = NULL;
        return CLI_EXIT_FAIL;
    }
    pending_tmp_path = w->tmp_path;
    apply_default_mode(w->fd);
    cli_progress_begin(&w->progress, "writing", path, expected_bytes, quiet);
    return CLI_EXIT_OK;
}

int cli_output_write(cli_output *w, const void *data, size_t n) {
    const unsigned char *p = data;
    uint64_t done = 0;
    while (done < n) {
        size_t piece = n - done < IO_PIECE ? (size_t)(n - done) : IO_PIECE;
        ssize_t put = write(w->fd, p + done, piece);
        if (put < 0 && errno == EINTR)
            continue;
        if (put <= 0) {
            cli_error("%s: write failed: %s", w->path,
                      put < 0 ? strerror(errno) : "no progress");
            return CLI_EXIT_FAIL;
        }
        done += (uint64_t)put;
        w->written += (uint64_t)put;
        cli_progress_update(&w->progress, w->written);
    }
    return CLI_EXIT_OK;
}

void cli_output_abort(cli_output *w) {
    cli_progress_end(&w->progress);
    if (w->fd >= 0)
        close(w->fd);
    w->fd = -1;
    pending_tmp_path = NULL;
    if (w->tmp_path)
        unlink(w->tmp_path);
    free(w->tmp_path);
    w->tmp_path = NULL;
}

static int link_unsupported(int err) {
    return err == EPERM || err == ENOTSUP || err == EOPNOTSUPP ||
           err == EMLINK || err == ENOSYS;
}

/* Move the finished temporary file to OUT. Without -F, link() refuses an
 * OUT that appeared since the first check; rename() would replace it. */
static int publish(cli_output *w) {
    if (!w->force) {
        if (link(w->tmp_path, w->path) == 0) {
            unlink(w->tmp_path);
            return CLI_EXIT_OK;
        }
        int err = errno;
        if (err == EEXIST ||
            (link_unsupported(err) && access(w->path, F_OK) == 0)) {
            cli_error("%s: already exists (use -F to overwrite)", w->path);
            return CLI_EXIT_FAIL;
        }
        if (!link_unsupported(err)) {
            cli_error("%s: cannot create: %s", w->path, strerror(err));
            return CLI_EXIT_FAIL;
        }
    }
    if (rename(w->tmp_path, w->path) != 0) {
        cli_error("%s: cannot rename %s into place: %s", w->path, w->tmp_path,
                  strerror(errno));
        return CLI_EXIT_FAIL;
    }
    return CLI_EXIT_OK;
}

/* Make the new directory entry durable too; best effort, as some file
 * systems cannot fsync a directory. */
static void sync_parent_dir(const char *path) {
    char *copy = strdup(path);
    if (!copy)
        return;
    int fd = open(dirname(copy), O_RDONLY | O_DIRECTORY);
    if (fd >= 0) {
        fsync(fd);
        close(fd);
    }
    free(copy);
}

int cli_output_commit(cli_output *w) {
    cli_progress_end(&w->progress);
    int err = fsync(w->fd) != 0 ? errno : 0;
    if (close(w->fd) != 0 && err == 0)
        err = errno;
    w->fd = -1;
    if (err != 0) {
        cli_error("%s: cannot flush to disk: %s", w->path, strerror(err));
        cli_output_abort(w);
        return CLI_EXIT_FAIL;
    }
    if (publish(w) != CLI_EXIT_OK) {
        cli_output_abort(w);
        return CLI_EXIT_FAIL;
    }
    pending_tmp_path = NULL;
    free(w->tmp_path);
    w->tmp_path = NULL;
    sync_parent_dir(w->path);
    return CLI_EXIT_OK;
}

int cli_write_file(const char *path, int force, const void *data, size_t n,
                   int quiet) {
    cli_output w;
    if (cli_output_open(&w, path, force, n, quiet) != CLI_EXIT_OK)
        return CLI_EXIT_FAIL;
    if (cli_output_write(&w, data, n) != CLI_EXIT_OK) {
        cli_output_abort(&w);
        return CLI_EXIT_FAIL;
    }
    return cli_output_commit(&w);
}

double cli_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
