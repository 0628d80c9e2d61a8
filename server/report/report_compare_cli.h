/*
 * report_compare_cli.h - `tfboard report --compare A B`: the part of the
 * command line that loads two runs, compares them, writes the comparison
 * and applies the regression gates (report_compare_cli.c). report.c parses
 * the options and calls in here.
 * Thread-safety: called once from main on the main thread.
 */
#ifndef TFB_SERVER_REPORT_COMPARE_CLI_H
#define TFB_SERVER_REPORT_COMPARE_CLI_H

#include <stddef.h>
#include <stdio.h>

#include "report/report_compare.h"
#include "store/store.h"

typedef enum { FMT_TEXT, FMT_MARKDOWN, FMT_JSON, FMT_HTML } report_format;

#define TFB_REPORT_MAX_GATES 16

typedef struct tfb_report_compare_args {
    /* With logdir, a and b are run names in it; without, each is a
     * directory: a logdir holding exactly one run, or a run's own
     * directory. */
    const char *logdir, *a, *b;
    const char *output;   /* NULL = stdout */
    report_format format;
    int fail_on_nan;      /* exit 1 when B has a NaN/Inf alert */
    int quiet;
    const tfb_compare_gate *gates;
    size_t n_gates;
} tfb_report_compare_args;

/* Returns the exit status: 0; 1 when a gate fails (reasons on stderr) or
 * the output cannot be written; 2 when a run or directory is not found. */
int tfb_report_compare_main(const tfb_report_compare_args *a);

#endif
