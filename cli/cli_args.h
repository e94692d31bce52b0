/* Command-line parsing for floatz: one option table shared by all
 * commands, then per-command checks of what applies. */
#ifndef CLI_ARGS_H
#define CLI_ARGS_H

#include <stdint.h>

#include "floatz.h"

typedef enum cli_command {
    CLI_CMD_NONE,
    CLI_CMD_COMPRESS,
    CLI_CMD_DECOMPRESS,
    CLI_CMD_INFO,
    CLI_CMD_VERIFY
} cli_command;

typedef enum cli_backend {
    CLI_BACKEND_AUTO, /* GPU when one is usable, else CPU */
    CLI_BACKEND_CPU,
    CLI_BACKEND_GPU
} cli_backend;

typedef enum cli_format {
    CLI_FORMAT_AUTO, /* text for names ending in .csv / .txt */
    CLI_FORMAT_RAW,
    CLI_FORMAT_TEXT
} cli_format;

typedef struct cli_options {
    cli_command command;
    int help;
    int version;
    const char *input;
    const char *output;
    fz_dtype dtype; /* 0 when not given */
    uint32_t ndims; /* 0 when no shape given */
    uint64_t dims[FZ_MAX_DIMS];
    fz_codec codec;
    fz_mode mode; /* lossless unless -M or -e is given */
    double bound; /* -e: finite and >= 0 (0: stored lossless) */
    int bound_given;
    cli_backend backend;
    int32_t threads;      /* 0 = all cores */
    uint32_t gpu_streams; /* --streams: GPU pipeline streams, 0 = auto */
    /* fz_params.codec_options: gfc --dim [0], --chunk-values [1];
     * lorenzo --zero-runs [1] */
    int32_t codec_options[4];
    int no_checksum;
    int skip_checksum;
    int force;
    int quiet;
    cli_format format;
    /* decompress --range FIRST:COUNT: only these values (random access) */
    int range_given;
    uint64_t range_first, range_count;
} cli_options;

/* Fill *o from argv. Returns CLI_EXIT_OK, or CLI_EXIT_USAGE after
 * printing what is wrong. */
int cli_parse_args(int argc, char **argv, cli_options *o);

const char *cli_command_name(cli_command command);

#endif /* CLI_ARGS_H */
