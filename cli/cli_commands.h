/* The floatz commands. Each returns the process exit code and has printed
 * any error. */
#ifndef CLI_COMMANDS_H
#define CLI_COMMANDS_H

#include "cli_args.h"

int cli_compress(const cli_options *o);
int cli_decompress(const cli_options *o);
int cli_info(const cli_options *o);
int cli_verify(const cli_options *o);

#endif /* CLI_COMMANDS_H */
