/*
 * cli.h - the `tfboard` command line: serve a logdir, or `tfboard report
 * ...`. Register extra plugins (plugin.h) before calling it.
 * Thread-safety: call once, from main.
 */
#ifndef TFB_SERVER_CLI_H
#define TFB_SERVER_CLI_H

/* Returns the process exit status. */
int tfb_cli_main(int argc, char **argv);

#endif
