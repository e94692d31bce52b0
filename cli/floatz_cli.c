/* floatz: command-line front end of the floatz library. Parses the
 * command line, prints help and versions, and runs one command. */
#include <stdio.h>

#include "cli_args.h"
#include "cli_commands.h"
#include "cli_common.h"

/* ---------------------------------------------------------------- help */
static const char help_overview[] =
    "Usage: floatz COMMAND [options]\n"
    "\n"
    "Compress arrays of float32 / float64 values, without loss or within an\n"
    "error bound (-M/-e), on the CPU (OpenMP) or an NVIDIA GPU (CUDA).\n"
    "\n"
    "Commands:\n"
    "  compress   (-z)  -i IN -o OUT -f|-d [options]  compress an array\n"
    "  decompress (-x)  -i IN -o OUT [options]        restore an array\n"
    "  info       IN                                  show a stream's header\n"
    "  verify     -i IN -f|-d [options]               compress and decompress"
    "\n"
    "                                                 in memory: ratio, speed,"
    "\n"
    "                                                 exactness or errors\n"
    "\n"
    "  floatz COMMAND --help   the options of a command\n"
    "  floatz --version        versions of the tool, library and format\n"
    "\n"
    "Exit status: 0 success, 1 error (data, file, library), 2 bad command "
    "line.\n";

static const char help_input_output[] =
    "  -i, --input IN        input file\n"
    "  -o, --output OUT      output file; written to OUT.tmp.XXXXXX, synced,\n"
    "                        then renamed, so OUT is never left half-written\n"
    "  -F, --force           overwrite an existing OUT\n";

static const char help_type_shape[] =
    "  -f, --float           float32 values\n"
    "  -d, --double          float64 values\n"
    "  -t, --type f32|f64    the same as -f / -d\n"
    "  -1 NX | -2 NX NY | -3 NX NY NZ | -4 NX NY NZ NW\n"
    "                        shape; NX is the fastest-varying (contiguous)\n"
    "                        dimension, as in SZ: a C array a[NZ][NY][NX] is\n"
    "                        -3 NX NY NZ. Without a shape the array is 1-D\n"
    "                        (file size / value size values).\n";

static const char help_codec[] =
    "  -c, --codec NAME      codec (default: sleek; `floatz --version` lists\n"
    "                        them); auto tries the codecs that suit the mode\n"
    "                        on a sample of the data and keeps the smallest\n"
    "  -M, --mode ABS|REL    lossy: ABS keeps |decoded - original| <= BOUND,\n"
    "                        REL <= BOUND x (max - min) of the finite values\n"
    "  -e, --bound BOUND     error bound, a finite number >= 0 (-e alone:\n"
    "                        ABS). The bound enforced is the largest power of\n"
    "                        two <= it (info shows both); 0, or a bound below\n"
    "                        the type's finest spacing, keeps every bit. NaN,\n"
    "                        infinities and subnormals are kept exactly; -0.0\n"
    "                        may come back as +0.0\n"
    "  --no-checksum         store no per-chunk data checksums\n"
    "  --zero-runs           lorenzo: also try Huffman coding with runs of\n"
    "                        zero residuals folded into run symbols (higher\n"
    "                        ratio on smooth data at coarse bounds)\n";

static const char help_backend[] =
    "  --cpu | --gpu         backend (default: the GPU when one is usable,\n"
    "                        else the CPU)\n"
    "  -j, --threads N       CPU threads (default 0: all cores)\n"
    "  --streams N           GPU: CUDA streams of the copy/compute pipeline,\n"
    "                        1..64 (default: 4, or 2 with one copy engine)\n";

static const char help_common[] =
    "  -q, --quiet           no summary and no progress display\n"
    "  -h, --help            this help\n";

static const char help_memory[] =
    "\nMemory: raw binary files are streamed in batches of whole chunks\n"
    "(64 MiB on the CPU, 256 MiB on the GPU): about two batches of memory\n"
    "whatever the file size, so files larger than RAM or GPU memory work.\n"
    "Text input and output, pipes, and verify hold the whole array in\n"
    "memory (about 2x its size, 3x for verify). Work over 1 GiB shows\n"
    "progress on a terminal.\n";

static const char help_raw_input[] =
    "\nInput: raw binary values in the machine's (little-endian) order; the\n"
    "file size must be a whole number of values and match the shape.\n"
    "Text input has one decimal value per line (--text, or automatic when\n"
    "IN ends in .csv or .txt); float32 text is rounded once, correctly.\n";

static void print_compress_help(void) {
    fputs("Usage: floatz compress -i IN -o OUT -f|-d [options]"
          "   (or: floatz -z ...)\n\nOptions:\n",
          stdout);
    fputs(help_input_output, stdout);
    fputs(help_type_shape, stdout);
    fputs("  --text | --raw        input format (default: by IN's name)\n",
          stdout);
    fputs(help_codec, stdout);
    fputs(help_backend, stdout);
    fputs(help_common, stdout);
    fputs(help_raw_input, stdout);
    fputs(help_memory, stdout);
}

static void print_decompress_help(void) {
    fputs("Usage: floatz decompress -i IN -o OUT [options]"
          "   (or: floatz -x ...)\n\nOptions:\n",
          stdout);
    fputs(help_input_output, stdout);
    fputs("  -f|-d, -1..-4         optional: fail unless the stream has this\n"
          "                        type and shape (it stores both)\n"
          "  --text | --raw        output format (default: by OUT's name,\n"
          "                        text for .csv / .txt, else raw binary)\n"
          "  --skip-checksum       do not verify the per-chunk checksums\n"
          "  --range FIRST:COUNT   only values FIRST..FIRST+COUNT-1 (storage\n"
          "                        order, dims[0] fastest): only the chunks\n"
          "                        holding them are read and decoded (CPU)\n",
          stdout);
    fputs(help_backend, stdout);
    fputs(help_common, stdout);
    fputs("\nIN holds one whole stream: bytes missing, or data after its end\n"
          "(a second stream appended), are an error.\n",
          stdout);
    fputs("\nText output has one value per line, \"%.9g\" for float32 and\n"
          "\"%.17g\" for float64: it reads back to the same bits (NaN\n"
          "payloads aside).\n",
          stdout);
    fputs(help_memory, stdout);
}

static void print_info_help(void) {
    fputs("Usage: floatz info IN   (or: floatz info -i IN)\n\n"
          "Print every field of a stream's header: format and codec\n"
          "versions, type, shape (dims[0] fastest), mode and bounds, sizes,\n"
          "ratio, chunking and checksums. Only the header is read (a pipe\n"
          "is read whole, to count its bytes); a file shorter or longer than\n"
          "its header says is reported and exits with 1.\n",
          stdout);
}

static void print_verify_help(void) {
    fputs("Usage: floatz verify -i IN -f|-d [options]\n\n"
          "Compress and decompress IN in memory and print sizes, ratio,\n"
          "throughput (GB/s = 1e9 bytes/s of original data, wall time on a\n"
          "monotonic clock) and the largest absolute error.\n"
          "Lossless: \"verified\" when the round trip is bitwise identical.\n"
          "Lossy (-M/-e): the requested, effective and absolute bounds (REL:\n"
          "BOUND x value range), max error / bound, PSNR (20 log10(range /\n"
          "RMSE)) and the violations: finite values with |decoded - original|\n"
          "above the absolute bound (in double; -0.0 equals +0.0), and NaN or\n"
          "infinities not returned bit for bit; \"verified (within bound)\"\n"
          "when there are none. Exits with 1 when the check fails.\n"
          "\nOptions:\n"
          "  -i, --input IN        input file\n",
          stdout);
    fputs(help_type_shape, stdout);
    fputs("  --text | --raw        input format (default: by IN's name)\n"
          "  --skip-checksum       decode without verifying checksums\n",
          stdout);
    fputs(help_codec, stdout);
    fputs(help_backend, stdout);
    fputs("  -q, --quiet           print nothing; the exit status tells\n"
          "  -h, --help            this help\n",
          stdout);
    fputs(help_raw_input, stdout);
    fputs(help_memory, stdout);
}

static int print_help(cli_command command) {
    switch (command) {
    case CLI_CMD_COMPRESS: print_compress_help(); break;
    case CLI_CMD_DECOMPRESS: print_decompress_help(); break;
    case CLI_CMD_INFO: print_info_help(); break;
    case CLI_CMD_VERIFY: print_verify_help(); break;
    case CLI_CMD_NONE: fputs(help_overview, stdout); break;
    }
    return CLI_EXIT_OK;
}

static int print_version(void) {
    int gpus = fz_gpu_count();
    printf("floatz %d.%d.%d (library %s, container format %d)\n",
           FZ_VERSION_MAJOR, FZ_VERSION_MINOR, FZ_VERSION_PATCH,
           fz_version_string(), FZ_FORMAT_VERSION);
    printf("codecs: ");
    for (uint32_t id = 1, first = 1; id < 256; id++) {
        const char *name = fz_codec_name((fz_codec)id);
        if (name) {
            printf("%s%s", first ? "" : ", ", name);
            first = 0;
        }
    }
    printf("\nCUDA backend: %s, usable GPUs: %d\n",
           cli_cuda_built() ? "yes" : "no", gpus > 0 ? gpus : 0);
    return CLI_EXIT_OK;
}

/* ---------------------------------------------------------------- main */
static int run(const cli_options *o) {
    if (o->help)
        return print_help(o->command);
    if (o->version)
        return print_version();
    switch (o->command) {
    case CLI_CMD_COMPRESS: return cli_compress(o);
    case CLI_CMD_DECOMPRESS: return cli_decompress(o);
    case CLI_CMD_INFO: return cli_info(o);
    case CLI_CMD_VERIFY: return cli_verify(o);
    case CLI_CMD_NONE: break;
    }
    return print_help(CLI_CMD_NONE);
}

int main(int argc, char **argv) {
    cli_options o;
    int rc = cli_parse_args(argc, argv, &o);
    if (rc == CLI_EXIT_OK)
        rc = run(&o);
    /* A full disk or closed pipe on stdout must not look like success. */
    if (fflush(stdout) != 0 || ferror(stdout)) {
        cli_error("cannot write to standard output");
        if (rc == CLI_EXIT_OK)
            rc = CLI_EXIT_FAIL;
    }
    return rc;
}
