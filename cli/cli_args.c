/* Command-line parsing. SZ habits are kept: -z/-x select the command,
 * -f/-d the data type, -1..-4 the shape with NX (fastest) first. */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_args.h"
#include "cli_common.h"

/* Groups of options, to check which apply to the chosen command. */
enum {
    GROUP_INPUT = 1u << 0,
    GROUP_OUTPUT = 1u << 1,
    GROUP_DTYPE = 1u << 2,
    GROUP_SHAPE = 1u << 3,
    GROUP_CODEC = 1u << 4,
    GROUP_LOSSY = 1u << 5,
    GROUP_BACKEND = 1u << 6,
    GROUP_THREADS = 1u << 7,
    GROUP_NO_CHECKSUM = 1u << 8,
    GROUP_SKIP_CHECKSUM = 1u << 9,
    GROUP_FORCE = 1u << 10,
    GROUP_FORMAT = 1u << 11,
    GROUP_CODEC_OPTIONS = 1u << 12,
    GROUP_ZERO_RUNS = 1u << 13,
    GROUP_RANGE = 1u << 14
};

static const struct {
    unsigned group;
    const char *name;
} group_names[] = {
    {GROUP_INPUT, "-i"},
    {GROUP_OUTPUT, "-o"},
    {GROUP_DTYPE, "-f/-d/-t"},
    {GROUP_SHAPE, "-1/-2/-3/-4"},
    {GROUP_CODEC, "-c"},
    {GROUP_LOSSY, "-M/-e"},
    {GROUP_BACKEND, "--cpu/--gpu/--streams"},
    {GROUP_THREADS, "-j"},
    {GROUP_NO_CHECKSUM, "--no-checksum"},
    {GROUP_SKIP_CHECKSUM, "--skip-checksum"},
    {GROUP_FORCE, "-F"},
    {GROUP_FORMAT, "--text/--raw"},
    {GROUP_CODEC_OPTIONS, "--dim/--chunk-values"},
    {GROUP_ZERO_RUNS, "--zero-runs"},
    {GROUP_RANGE, "--range"},
};

static const unsigned allowed_groups[] = {
    [CLI_CMD_NONE] = 0,
    [CLI_CMD_COMPRESS] =
        GROUP_INPUT | GROUP_OUTPUT | GROUP_DTYPE | GROUP_SHAPE | GROUP_CODEC |
        GROUP_LOSSY | GROUP_BACKEND | GROUP_THREADS | GROUP_NO_CHECKSUM |
        GROUP_FORCE | GROUP_FORMAT | GROUP_CODEC_OPTIONS | GROUP_ZERO_RUNS,
    [CLI_CMD_DECOMPRESS] = GROUP_INPUT | GROUP_OUTPUT | GROUP_DTYPE |
                           GROUP_SHAPE | GROUP_BACKEND | GROUP_THREADS |
                           GROUP_SKIP_CHECKSUM | GROUP_FORCE | GROUP_FORMAT |
                           GROUP_RANGE,
    [CLI_CMD_INFO] = GROUP_INPUT,
    [CLI_CMD_VERIFY] = GROUP_INPUT | GROUP_DTYPE | GROUP_SHAPE | GROUP_CODEC |
                       GROUP_LOSSY | GROUP_BACKEND | GROUP_THREADS |
                       GROUP_NO_CHECKSUM | GROUP_SKIP_CHECKSUM | GROUP_FORMAT |
                       GROUP_CODEC_OPTIONS | GROUP_ZERO_RUNS,
};

enum {
    LONG_CPU = 256,
    LONG_GPU,
    LONG_NO_CHECKSUM,
    LONG_SKIP_CHECKSUM,
    LONG_TEXT,
    LONG_RAW,
    LONG_DIM,
    LONG_CHUNK_VALUES,
    LONG_ZERO_RUNS,
    LONG_STREAMS,
    LONG_RANGE
};

/* Leading '-': non-options come back in order as 1; ':' reports a missing
 * value as ':' rather than '?'. */
static const char short_options[] = "-:i:o:fdt:1:2:3:4:c:M:e:j:FqhVzx";

static const struct option long_options[] = {
    {"input", required_argument, NULL, 'i'},
    {"output", required_argument, NULL, 'o'},
    {"float", no_argument, NULL, 'f'},
    {"double", no_argument, NULL, 'd'},
    {"type", required_argument, NULL, 't'},
    {"codec", required_argument, NULL, 'c'},
    {"mode", required_argument, NULL, 'M'},
    {"bound", required_argument, NULL, 'e'},
    {"cpu", no_argument, NULL, LONG_CPU},
    {"gpu", no_argument, NULL, LONG_GPU},
    {"threads", required_argument, NULL, 'j'},
    {"streams", required_argument, NULL, LONG_STREAMS},
    {"no-checksum", no_argument, NULL, LONG_NO_CHECKSUM},
    {"skip-checksum", no_argument, NULL, LONG_SKIP_CHECKSUM},
    {"force", no_argument, NULL, 'F'},
    {"quiet", no_argument, NULL, 'q'},
    {"text", no_argument, NULL, LONG_TEXT},
    {"raw", no_argument, NULL, LONG_RAW},
    {"dim", required_argument, NULL, LONG_DIM},
    {"chunk-values", required_argument, NULL, LONG_CHUNK_VALUES},
    {"zero-runs", no_argument, NULL, LONG_ZERO_RUNS},
    {"range", required_argument, NULL, LONG_RANGE},
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, 'V'},
    {"compress", no_argument, NULL, 'z'},
    {"decompress", no_argument, NULL, 'x'},
    {NULL, 0, NULL, 0},
};

typedef struct parser {
    int argc;
    char **argv;
    cli_options *o;
    unsigned seen;  /* option groups given */
    unsigned given; /* value options given: 1 << option_slot(c) */
} parser;

/* The value options checked for repeats, and their names. */
static const struct {
    int c;
    const char *name;
} value_options[] = {
    {'i', "-i"},
    {'o', "-o"},
    {'c', "-c"},
    {'M', "-M"},
    {'e', "-e"},
    {'j', "-j"},
    {LONG_STREAMS, "--streams"},
    {LONG_RANGE, "--range"},
    {LONG_DIM, "--dim"},
    {LONG_CHUNK_VALUES, "--chunk-values"},
};

/* Index of option c in value_options, or -1. */
static int option_slot(int c) {
    for (size_t k = 0; k < sizeof value_options / sizeof value_options[0]; k++)
        if (value_options[k].c == c)
            return (int)k;
    return -1;
}

const char *cli_command_name(cli_command command) {
    switch (command) {
    case CLI_CMD_COMPRESS: return "compress";
    case CLI_CMD_DECOMPRESS: return "decompress";
    case CLI_CMD_INFO: return "info";
    case CLI_CMD_VERIFY: return "verify";
    case CLI_CMD_NONE: break;
    }
    return "";
}

static int usage_error(const parser *ps, const char *fmt, ...) CLI_PRINTF(2, 3);

/* One line: the problem, then where help is. */
static int usage_error(const parser *ps, const char *fmt, ...) {
    char msg[512];
    va_list args;
    va_start(args, fmt);
    vsnprintf(msg, sizeof msg, fmt, args);
    va_end(args);
    const char *cmd = cli_command_name(ps->o->command);
    cli_error("%s (see 'floatz %s%s--help')", msg, cmd, *cmd ? " " : "");
    return CLI_EXIT_USAGE;
}

static int equal_ignoring_case(const char *a, const char *b) {
    for (; *a && *b; a++, b++)
        if (tolower((unsigned char)*a) != tolower((unsigned char)*b))
            return 0;
    return *a == *b;
}

/* ------------------------------------------------------ option values */
static int parse_dim(const char *text, uint64_t *dim) {
    char *end;
    if (!isdigit((unsigned char)text[0]))
        return -1;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 10);
    if (errno != 0 || *end != '\0' || v == 0)
        return -1;
    *dim = (uint64_t)v;
    return 0;
}

/* -N takes N sizes: the first is optarg, the rest follow it in argv. */
static int parse_shape(parser *ps, int ndims, const char *first) {
    cli_options *o = ps->o;
    if (ps->seen & GROUP_SHAPE)
        return usage_error(ps, "only one shape option (-1..-4) may be given");
    for (int d = 0; d < ndims; d++) {
        const char *text = d == 0 ? first : NULL;
        if (d > 0 && optind < ps->argc)
            text = ps->argv[optind++];
        if (!text)
            return usage_error(ps, "-%d needs %d sizes", ndims, ndims);
        if (parse_dim(text, &o->dims[d]) != 0)
            return usage_error(ps, "-%d: '%s' is not a positive size", ndims,
                               text);
    }
    o->ndims = (uint32_t)ndims;
    return CLI_EXIT_OK;
}

static int set_dtype(parser *ps, fz_dtype dtype) {
    if (ps->o->dtype != 0 && ps->o->dtype != dtype)
        return usage_error(ps, "conflicting data types (-f/-d/-t)");
    ps->o->dtype = dtype;
    return CLI_EXIT_OK;
}

static int parse_type(parser *ps, const char *text) {
    if (equal_ignoring_case(text, "f32") ||
        equal_ignoring_case(text, "float32") ||
        equal_ignoring_case(text, "float"))
        return set_dtype(ps, FZ_F32);
    if (equal_ignoring_case(text, "f64") ||
        equal_ignoring_case(text, "float64") ||
        equal_ignoring_case(text, "double"))
        return set_dtype(ps, FZ_F64);
    return usage_error(ps, "-t: unknown type '%s' (use f32 or f64)", text);
}

static int parse_codec(parser *ps, const char *text) {
    if (fz_codec_from_name(text, &ps->o->codec) == FZ_OK)
        return CLI_EXIT_OK;
    char names[256] = "";
    for (uint32_t id = 1; id < 256; id++) {
        const char *name = fz_codec_name((fz_codec)id);
        if (name && strlen(names) + strlen(name) + 2 < sizeof names) {
            strcat(names, *names ? ", " : "");
            strcat(names, name);
        }
    }
    return usage_error(ps, "-c: unknown codec '%s' (available: %s)", text,
                       names);
}

static int parse_mode(parser *ps, const char *text) {
    if (equal_ignoring_case(text, "abs"))
        ps->o->mode = FZ_MODE_ABS;
    else if (equal_ignoring_case(text, "rel"))
        ps->o->mode = FZ_MODE_REL;
    else
        return usage_error(ps, "-M: unknown mode '%s' (use ABS or REL)", text);
    return CLI_EXIT_OK;
}

/* A finite bound >= 0 (SZ/zfp's -e). 0 keeps every bit; an underflow to a
 * subnormal or 0 is fine, an overflow to infinity is not. */
static int parse_bound(parser *ps, const char *text) {
    char *end;
    double v = strtod(text, &end);
    if (end == text || *end != '\0' || isnan(v) || isinf(v) || v < 0)
        return usage_error(ps,
                           "-e: '%s' is not a valid error bound (a finite "
                           "number >= 0)",
                           text);
    ps->o->bound = v == 0 ? 0.0 : v; /* -0 -> +0 */
    ps->o->bound_given = 1;
    return CLI_EXIT_OK;
}

static int parse_threads(parser *ps, const char *text) {
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (!isdigit((unsigned char)text[0]) || *end != '\0' || errno != 0 ||
        v > INT32_MAX)
        return usage_error(ps, "-j: '%s' is not a thread count", text);
    ps->o->threads = (int32_t)v;
    return CLI_EXIT_OK;
}

static int parse_streams(parser *ps, const char *text) {
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (!isdigit((unsigned char)text[0]) || *end != '\0' || errno != 0 ||
        v < 1 || v > FZ_MAX_GPU_STREAMS)
        return usage_error(ps, "--streams: '%s' is not a stream count (1..%d)",
                           text, FZ_MAX_GPU_STREAMS);
    ps->o->gpu_streams = (uint32_t)v;
    return CLI_EXIT_OK;
}

/* --range FIRST:COUNT (values; COUNT may be 0). */
static int parse_range(parser *ps, const char *text) {
    char *end;
    errno = 0;
    const unsigned long long first = strtoull(text, &end, 10);
    int ok = isdigit((unsigned char)text[0]) && errno == 0 && *end == ':';
    unsigned long long count = 0;
    if (ok) {
        const char *c = end + 1;
        count = strtoull(c, &end, 10);
        ok = isdigit((unsigned char)c[0]) && errno == 0 && *end == '\0';
    }
    if (!ok)
        return usage_error(ps, "--range: '%s' is not FIRST:COUNT", text);
    ps->o->range_first = (uint64_t)first;
    ps->o->range_count = (uint64_t)count;
    ps->o->range_given = 1;
    return CLI_EXIT_OK;
}

/* gfc: --dim 1..32 (codec_options[0]), --chunk-values a multiple of 32
 * up to 4194304 (codec_options[1]). */
static int parse_codec_option(parser *ps, const char *text, int k) {
    const char *name = k == 0 ? "--dim" : "--chunk-values";
    const long max = k == 0 ? 32 : 4194304, multiple = k == 0 ? 1 : 32;
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (!isdigit((unsigned char)text[0]) || *end != '\0' || errno != 0 ||
        v < 1 || v > max || v % multiple != 0)
        return usage_error(ps,
                           k == 0 ? "%s: '%s' is not a dimensionality (1..32)"
                                  : "%s: '%s' is not a multiple of 32 from 32 "
                                    "to 4194304",
                           name, text);
    ps->o->codec_options[k] = (int32_t)v;
    return CLI_EXIT_OK;
}

static int set_command(parser *ps, cli_command command) {
    if (ps->o->command != CLI_CMD_NONE && ps->o->command != command)
        return usage_error(ps, "more than one command given");
    ps->o->command = command;
    return CLI_EXIT_OK;
}

static int set_backend(parser *ps, cli_backend backend) {
    if (ps->o->backend != CLI_BACKEND_AUTO && ps->o->backend != backend)
        return usage_error(ps, "--cpu and --gpu exclude each other");
    ps->o->backend = backend;
    return CLI_EXIT_OK;
}

static int set_format(parser *ps, cli_format format) {
    if (ps->o->format != CLI_FORMAT_AUTO && ps->o->format != format)
        return usage_error(ps, "--text and --raw exclude each other");
    ps->o->format = format;
    return CLI_EXIT_OK;
}

static cli_command command_from_word(const char *word);

/* A bare argument: the command word after options (`floatz --help info`),
 * or the IN of `info IN`. */
static int take_positional(parser *ps, const char *arg) {
    if (ps->o->command == CLI_CMD_NONE &&
        command_from_word(arg) != CLI_CMD_NONE) {
        ps->o->command = command_from_word(arg);
        return CLI_EXIT_OK;
    }
    if (ps->o->command == CLI_CMD_INFO && !ps->o->input) {
        ps->o->input = arg;
        ps->seen |= GROUP_INPUT;
        ps->given |= 1u << option_slot('i');
        return CLI_EXIT_OK;
    }
    return usage_error(ps, "unexpected argument '%s'", arg);
}

static int bad_option(parser *ps, int c) {
    const char *arg = ps->argv[optind - 1];
    int is_long = strncmp(arg, "--", 2) == 0;
    if (c == ':')
        return is_long || optopt <= 0 || optopt > 127
                   ? usage_error(ps, "option '%s' needs a value", arg)
                   : usage_error(ps, "option '-%c' needs a value", optopt);
    if (!is_long && optopt > 0 && optopt < 128 && isprint(optopt))
        return usage_error(ps, "unknown option '-%c'", optopt);
    return usage_error(ps, "unknown option '%s'", arg);
}

/* -i/-o take a file name. One that starts with '-' is most likely the
 * next option, taken as the value when the name was left out: refused
 * rather than creating a file named "-q" ("./-q" names such a file). */
static int set_path(parser *ps, int c, const char *arg) {
    if (strcmp(arg, "-") == 0)
        return usage_error(ps, "-%c: '-' is not a file name (%s)", c,
                           c == 'i' ? "standard input: -i /dev/stdin"
                                    : "OUT is a file, never standard output");
    if (arg[0] == '-')
        return usage_error(ps,
                           "-%c needs a file name, not the option '%s' (a "
                           "file named so: ./%s)",
                           c, arg, arg);
    *(c == 'i' ? &ps->o->input : &ps->o->output) = arg;
    return CLI_EXIT_OK;
}

/* ------------------------------------------------------- the dispatch */
static int handle_value_option(parser *ps, int c, const char *arg) {
    cli_options *o = ps->o;
    switch (c) {
    case 'i':
    case 'o': return set_path(ps, c, arg);
    case 't': return parse_type(ps, arg);
    case '1':
    case '2':
    case '3':
    case '4': return parse_shape(ps, c - '0', arg);
    case 'c': return parse_codec(ps, arg);
    case 'M': return parse_mode(ps, arg);
    case 'e': return parse_bound(ps, arg);
    case 'j': return parse_threads(ps, arg);
    case LONG_STREAMS: return parse_streams(ps, arg);
    case LONG_RANGE: return parse_range(ps, arg);
    case LONG_DIM: return parse_codec_option(ps, arg, 0);
    case LONG_CHUNK_VALUES: return parse_codec_option(ps, arg, 1);
    case LONG_ZERO_RUNS: o->codec_options[1] = 1; return CLI_EXIT_OK;
    }
    return bad_option(ps, '?');
}

static int handle_option(parser *ps, int c, const char *arg) {
    cli_options *o = ps->o;
    switch (c) {
    case 1: return take_positional(ps, arg);
    case 'f': return set_dtype(ps, FZ_F32);
    case 'd': return set_dtype(ps, FZ_F64);
    case LONG_CPU: return set_backend(ps, CLI_BACKEND_CPU);
    case LONG_GPU: return set_backend(ps, CLI_BACKEND_GPU);
    case LONG_NO_CHECKSUM: o->no_checksum = 1; return CLI_EXIT_OK;
    case LONG_SKIP_CHECKSUM: o->skip_checksum = 1; return CLI_EXIT_OK;
    case LONG_TEXT: return set_format(ps, CLI_FORMAT_TEXT);
    case LONG_RAW: return set_format(ps, CLI_FORMAT_RAW);
    case 'F': o->force = 1; return CLI_EXIT_OK;
    case 'q': o->quiet = 1; return CLI_EXIT_OK;
    case 'h': o->help = 1; return CLI_EXIT_OK;
    case 'V': o->version = 1; return CLI_EXIT_OK;
    case 'z': return set_command(ps, CLI_CMD_COMPRESS);
    case 'x': return set_command(ps, CLI_CMD_DECOMPRESS);
    case '?':
    case ':': return bad_option(ps, c);
    }
    return handle_value_option(ps, c, arg);
}

static unsigned group_of(int c) {
    switch (c) {
    case 'i': return GROUP_INPUT;
    case 'o': return GROUP_OUTPUT;
    case 'f':
    case 'd':
    case 't': return GROUP_DTYPE;
    case '1':
    case '2':
    case '3':
    case '4': return GROUP_SHAPE;
    case 'c': return GROUP_CODEC;
    case 'M':
    case 'e': return GROUP_LOSSY;
    case LONG_CPU:
    case LONG_GPU:
    case LONG_STREAMS: return GROUP_BACKEND;
    case 'j': return GROUP_THREADS;
    case LONG_NO_CHECKSUM: return GROUP_NO_CHECKSUM;
    case LONG_SKIP_CHECKSUM: return GROUP_SKIP_CHECKSUM;
    case 'F': return GROUP_FORCE;
    case LONG_TEXT:
    case LONG_RAW: return GROUP_FORMAT;
    case LONG_DIM:
    case LONG_CHUNK_VALUES: return GROUP_CODEC_OPTIONS;
    case LONG_ZERO_RUNS: return GROUP_ZERO_RUNS;
    case LONG_RANGE: return GROUP_RANGE;
    }
    return 0;
}

/* ---------------------------------------------------- repeated options */
static int same_string(const char *a, const char *b) {
    return a && b ? strcmp(a, b) == 0 : a == b;
}

/* Whether option c changed what an earlier use of it had set. */
static int value_changed(int c, const cli_options *a, const cli_options *b) {
    switch (c) {
    case 'i': return !same_string(a->input, b->input);
    case 'o': return !same_string(a->output, b->output);
    case 'c': return a->codec != b->codec;
    case 'M': return a->mode != b->mode;
    case 'e': return a->bound != b->bound;
    case 'j': return a->threads != b->threads;
    case LONG_STREAMS: return a->gpu_streams != b->gpu_streams;
    case LONG_RANGE:
        return a->range_first != b->range_first ||
               a->range_count != b->range_count;
    case LONG_DIM: return a->codec_options[0] != b->codec_options[0];
    case LONG_CHUNK_VALUES: return a->codec_options[1] != b->codec_options[1];
    }
    return 0;
}

/* An option given twice must say the same thing twice, as -f/-d and
 * --cpu/--gpu must: "the last one wins" could silently compress another
 * file, or with another bound, than the one meant. */
static int handle_once(parser *ps, int c, const char *arg) {
    const cli_options before = *ps->o;
    const int slot = option_slot(c);
    int rc = handle_option(ps, c, arg);
    if (rc != CLI_EXIT_OK || slot < 0)
        return rc;
    if ((ps->given >> slot & 1u) && value_changed(c, &before, ps->o))
        return usage_error(ps, "%s given twice with different values",
                           value_options[slot].name);
    ps->given |= 1u << slot;
    return CLI_EXIT_OK;
}

/* ----------------------------------------------------- final checks */
static int check_groups(parser *ps) {
    unsigned extra = ps->seen & ~allowed_groups[ps->o->command];
    for (size_t k = 0; k < sizeof group_names / sizeof group_names[0]; k++)
        if (extra & group_names[k].group)
            return usage_error(ps, "option %s does not apply to %s",
                               group_names[k].name,
                               cli_command_name(ps->o->command));
    return CLI_EXIT_OK;
}

static int check_required(parser *ps) {
    const cli_options *o = ps->o;
    cli_command cmd = o->command;
    if (!o->input)
        return usage_error(ps, cmd == CLI_CMD_INFO ? "no input file given"
                                                   : "no input file (-i IN)");
    if ((cmd == CLI_CMD_COMPRESS || cmd == CLI_CMD_DECOMPRESS) && !o->output)
        return usage_error(ps, "no output file (-o OUT)");
    if ((cmd == CLI_CMD_COMPRESS || cmd == CLI_CMD_VERIFY) && !o->dtype)
        return usage_error(ps, "no data type: give -f (float32) or -d "
                               "(float64)");
    return CLI_EXIT_OK;
}

/* -e alone means an absolute bound (SZ's default); -M needs -e. */
static int check_lossy(parser *ps) {
    cli_options *o = ps->o;
    if (o->mode != FZ_MODE_LOSSLESS && !o->bound_given)
        return usage_error(ps, "-M %s needs an error bound (-e BOUND)",
                           o->mode == FZ_MODE_ABS ? "ABS" : "REL");
    if (o->mode == FZ_MODE_LOSSLESS && o->bound_given)
        o->mode = FZ_MODE_ABS;
    return CLI_EXIT_OK;
}

static int check_codec_options(parser *ps) {
    if ((ps->seen & GROUP_CODEC_OPTIONS) && ps->o->codec != FZ_CODEC_GFC)
        return usage_error(ps, "--dim and --chunk-values apply to codec gfc "
                               "only (-c gfc)");
    if ((ps->seen & GROUP_ZERO_RUNS) && ps->o->codec != FZ_CODEC_LORENZO)
        return usage_error(ps, "--zero-runs applies to codec lorenzo only "
                               "(-c lorenzo)");
    return CLI_EXIT_OK;
}

static int check_options(parser *ps) {
    int rc = check_groups(ps);
    if (rc == CLI_EXIT_OK)
        rc = check_codec_options(ps);
    if (rc == CLI_EXIT_OK)
        rc = check_required(ps);
    if (rc == CLI_EXIT_OK)
        rc = check_lossy(ps);
    return rc;
}

/* argv[first] is where options start (after a command word, if any). */
static int parse_from(parser *ps, int first) {
    opterr = 0;
    optind = first;
    int c;
    while ((c = getopt_long(ps->argc, ps->argv, short_options, long_options,
                            NULL)) != -1) {
        int rc = handle_once(ps, c, optarg);
        if (rc != CLI_EXIT_OK)
            return rc;
        ps->seen |= group_of(c);
    }
    for (; optind < ps->argc; optind++) { /* after "--" */
        int rc = take_positional(ps, ps->argv[optind]);
        if (rc != CLI_EXIT_OK)
            return rc;
    }
    return CLI_EXIT_OK;
}

static cli_command command_from_word(const char *word) {
    static const cli_command all[] = {CLI_CMD_COMPRESS, CLI_CMD_DECOMPRESS,
                                      CLI_CMD_INFO, CLI_CMD_VERIFY};
    for (size_t k = 0; k < sizeof all / sizeof all[0]; k++)
        if (strcmp(word, cli_command_name(all[k])) == 0)
            return all[k];
    return CLI_CMD_NONE;
}

int cli_parse_args(int argc, char **argv, cli_options *o) {
    memset(o, 0, sizeof *o);
    o->codec = FZ_CODEC_SLEEK;
    parser ps = {argc, argv, o, 0, 0};
    int first = 1;
    if (argc > 1 && argv[1][0] != '-') {
        o->command = command_from_word(argv[1]);
        if (o->command == CLI_CMD_NONE)
            return usage_error(&ps, "unknown command '%s'", argv[1]);
        first = 2;
    }
    int rc = parse_from(&ps, first);
    if (rc != CLI_EXIT_OK || o->help || o->version)
        return rc;
    if (o->command == CLI_CMD_NONE)
        return usage_error(&ps, "no command given");
    return check_options(&ps);
}
