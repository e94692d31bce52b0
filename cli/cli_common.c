/* Error messages and small helpers shared by the CLI modules. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <ctype.h>

#include "cli_common.h"

void cli_error(const char *fmt, ...) {
    va_list args;
    va_start(args, fmt);
    fputs("floatz: ", stderr);
    vfprintf(stderr, fmt, args);
    fputc('\n', stderr);
    va_end(args);
}

int cli_status_error(const char *what, fz_status status) {
    cli_error("%s: %s", what, fz_status_string(status));
    return CLI_EXIT_FAIL;
}

static int ends_with_ci(const char *name, const char *suffix) {
    size_t n = strlen(name), k = strlen(suffix);
    if (n < k)
        return 0;
    for (size_t i = 0; i < k; i++)
        if (tolower((unsigned char)name[n - k + i]) != suffix[i])
            return 0;
    return 1;
}

int cli_has_text_suffix(const char *name) {
    return ends_with_ci(name, ".csv") || ends_with_ci(name, ".txt");
}

int cli_cuda_built(void) {
    fz_params p;
    size_t bytes;
    fz_params_init(&p, FZ_F32, 1);
    return fz_device_scratch_size(&p, &bytes) != FZ_ERR_NO_CUDA;
}
