/*
 * report_load.h - one loader pass over a store's logdir for `tfboard
 * report` and `tfboard report --compare`, with progress lines on stderr
 * (report_load.c). Both report.c and report_compare_cli.c call it; it
 * calls neither.
 * Thread-safety: called from the main thread; it runs the pass on a
 * thread of its own and returns when that pass is over.
 */
#ifndef TFB_SERVER_REPORT_LOAD_H
#define TFB_SERVER_REPORT_LOAD_H

#include "store/store.h"

/* A store of the logdir dir (a directory, or an s3:// or gs:// URL) with
 * every run loaded once: 0 with *out (tfb_store_destroy), or -1 after
 * saying why on stderr. Progress lines go to stderr unless quiet (silent
 * for the first second, then one a second). */
int tfb_report_open(const char *dir, int quiet, tfb_store **out);
/* As tfb_report_open, its messages starting with prog ("tfboard query"). */
int tfb_report_open_as(const char *prog, const char *dir, int quiet,
                       tfb_store **out);

#endif
