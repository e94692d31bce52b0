/* Text arrays for the CLI. Each line is parsed with strtof/strtod directly
 * (never through double for float32: double rounding would change some
 * values), and printed with 9 / 17 significant digits so it reads back
 * bit for bit. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_common.h"
#include "cli_text.h"

#define TEXT_OUT_BUFFER ((size_t)1 << 20)
#define TEXT_MAX_LINE 32 /* longest "%.17g\n" is 25 bytes */
#define SHOWN_CHARS 40   /* how much of a bad line an error quotes */

enum { NUMBER_OK, NUMBER_INVALID, NUMBER_OVERFLOW };

static int is_blank(const char *p, const char *end) {
    for (; p < end; p++)
        if (!isspace((unsigned char)*p))
            return 0;
    return 1;
}

static uint64_t count_lines(const char *text, size_t len) {
    uint64_t lines = 1;
    const char *end = text + len;
    for (const char *p = text; (p = memchr(p, '\n', (size_t)(end - p))); p++)
        lines++;
    return lines;
}

/* The whole line must be one number, optionally surrounded by spaces. */
static int parse_number(const char *line, const char *line_end, fz_dtype dtype,
                        unsigned char *dst) {
    char *after;
    int overflow;
    errno = 0;
    if (dtype == FZ_F32) {
        float v = strtof(line, &after);
        overflow = errno == ERANGE && isinf(v);
        memcpy(dst, &v, sizeof v);
    } else {
        double v = strtod(line, &after);
        overflow = errno == ERANGE && isinf(v);
        memcpy(dst, &v, sizeof v);
    }
    if (after == line)
        return NUMBER_INVALID;
    while (after < line_end && isspace((unsigned char)*after))
        after++;
    if (after != line_end) /* trailing text, or a NUL inside the line */
        return NUMBER_INVALID;
    return overflow ? NUMBER_OVERFLOW : NUMBER_OK;
}

/* Length of the printable start of a line, for quoting it in errors. */
static int shown_length(const char *line, const char *line_end) {
    int n = 0;
    while (line + n < line_end && n < SHOWN_CHARS &&
           isprint((unsigned char)line[n]))
        n++;
    return n;
}

static void report_bad_line(const char *path, uint64_t line_no,
                            const char *line, const char *line_end, int why,
                            fz_dtype dtype) {
    int n = shown_length(line, line_end);
    if (why == NUMBER_OVERFLOW)
        cli_error("%s:%llu: '%.*s' is out of range for %s", path,
                  (unsigned long long)line_no, n, line,
                  dtype == FZ_F32 ? "float32" : "float64");
    else
        cli_error("%s:%llu: not a number: '%.*s'%s", path,
                  (unsigned long long)line_no, n, line,
                  line + n < line_end ? "..." : "");
}

/* Parse each line into values->data; blank lines only at the end. */
static int parse_lines(const char *path, char *text, size_t len, fz_dtype dtype,
                       cli_buffer *values) {
    const size_t esize = dtype == FZ_F32 ? 4 : 8;
    char *end = text + len, *line_end;
    uint64_t line_no = 0, first_blank = 0;
    for (char *p = text; p < end; p = line_end + 1) {
        line_end = memchr(p, '\n', (size_t)(end - p));
        if (!line_end)
            line_end = end;
        *line_end = '\0'; /* stops strtod at the line's end */
        line_no++;
        if (is_blank(p, line_end)) {
            first_blank = first_blank ? first_blank : line_no;
            continue;
        }
        if (first_blank) {
            cli_error("%s:%llu: empty line (only trailing ones are allowed)",
                      path, (unsigned long long)first_blank);
            return CLI_EXIT_FAIL;
        }
        int rc = parse_number(p, line_end, dtype, values->data + values->size);
        if (rc != NUMBER_OK) {
            report_bad_line(path, line_no, p, line_end, rc, dtype);
            return CLI_EXIT_FAIL;
        }
        values->size += esize;
    }
    return CLI_EXIT_OK;
}

int cli_parse_text(const char *path, char *text, size_t len, fz_dtype dtype,
                   cli_buffer *values) {
    const size_t esize = dtype == FZ_F32 ? 4 : 8;
    uint64_t max_values = count_lines(text, len);
    values->size = 0;
    values->data = malloc((size_t)max_values * esize + 1);
    if (!values->data) {
        cli_error("%s: out of memory for %llu values", path,
                  (unsigned long long)max_values);
        return CLI_EXIT_FAIL;
    }
    int rc = parse_lines(path, text, len, dtype, values);
    if (rc != CLI_EXIT_OK)
        cli_buffer_free(values);
    return rc;
}

static int format_value(char *dst, const unsigned char *src, fz_dtype dtype) {
    if (dtype == FZ_F32) {
        float v;
        memcpy(&v, src, sizeof v);
        return snprintf(dst, TEXT_MAX_LINE, "%.9g\n", (double)v);
    }
    double v;
    memcpy(&v, src, sizeof v);
    return snprintf(dst, TEXT_MAX_LINE, "%.17g\n", v);
}

int cli_write_text(cli_output *w, const void *values, uint64_t count,
                   fz_dtype dtype, int quiet) {
    const size_t esize = dtype == FZ_F32 ? 4 : 8;
    const unsigned char *src = values;
    char *buf = malloc(TEXT_OUT_BUFFER);
    if (!buf) {
        cli_error("%s: out of memory", w->path);
        return CLI_EXIT_FAIL;
    }
    cli_progress pr;
    cli_progress_begin(&pr, "writing", w->path, count * esize, quiet);
    size_t used = 0;
    int rc = CLI_EXIT_OK;
    for (uint64_t i = 0; i < count && rc == CLI_EXIT_OK; i++) {
        used += (size_t)format_value(buf + used, src + i * esize, dtype);
        if (used > TEXT_OUT_BUFFER - TEXT_MAX_LINE || i + 1 == count) {
            rc = cli_output_write(w, buf, used);
            used = 0;
            cli_progress_update(&pr, (i + 1) * esize);
        }
    }
    cli_progress_end(&pr);
    free(buf);
    return rc;
}
