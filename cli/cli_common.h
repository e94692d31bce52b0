/* Shared conventions of the floatz command-line tool: exit codes and the
 * one-line "floatz: " error messages. */
#ifndef CLI_COMMON_H
#define CLI_COMMON_H

#include "floatz.h"

enum {
    CLI_EXIT_OK = 0,
    CLI_EXIT_FAIL = 1, /* data, I/O or library error */
    CLI_EXIT_USAGE = 2 /* bad command line */
};

#if defined(__GNUC__)
#define CLI_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define CLI_PRINTF(f, a)
#endif

/* Print "floatz: <message>\n" on stderr. */
void cli_error(const char *fmt, ...) CLI_PRINTF(1, 2);

/* Print "floatz: <what>: <status text>\n" on stderr; returns CLI_EXIT_FAIL. */
int cli_status_error(const char *what, fz_status status);

/* 1 when name ends in ".csv" or ".txt" (any case): text by default. */
int cli_has_text_suffix(const char *name);

/* 1 when the library has its CUDA backend (whether or not a GPU is
 * present). */
int cli_cuda_built(void);

#endif /* CLI_COMMON_H */
