/*
 * cli.h - the `tfboard` command line: serve a logdir, or `tfboard report
 * ...`. Register extra plugins (plugin.h) before calling it.
 * Thread-safety: call once, from main.
 */
#ifndef TFB_SERVER_CLI_H
#define TFB_SERVER_CLI_H

#include <stdio.h>

#include "core/config.h"

/* Returns the process exit status. */
int tfb_cli_main(int argc, char **argv);

/* The serve command line: parses argv (argv[0] is the program) into cfg
 * (defaults first) with tfb_options_parse (core/options.h): the serve
 * options, then the dashboards' (which go to the plugins' own variables;
 * then their check_options run); then the token and TLS checks. Returns 0
 * to go on serving, 1 when --help or --version was handled (text printed
 * to out; exit 0), or TFB_EINVAL after one clear message on err (exit 2).
 * Strings in cfg point into argv (the token may point into the
 * environment). */
int tfb_cli_parse_serve(tfb_config *cfg, int argc, char **argv, FILE *out,
                        FILE *err);

#endif
