/* Text arrays: one decimal value per line, parsed and printed exactly. */
#ifndef CLI_TEXT_H
#define CLI_TEXT_H

#include "floatz.h"
#include "cli_io.h"

/* Parse text[0..len) (text[len] must be NUL; the text is modified) into
 * values of dtype. Float32 uses strtof, which rounds once, correctly.
 * Errors name the path and line. */
int cli_parse_text(const char *path, char *text, size_t len, fz_dtype dtype,
                   cli_buffer *values);

/* Write count values, one per line, with enough digits to read back the
 * same bits ("%.9g" for float32, "%.17g" for float64). */
int cli_write_text(cli_output *w, const void *values, uint64_t count,
                   fz_dtype dtype, int quiet);

#endif /* CLI_TEXT_H */
