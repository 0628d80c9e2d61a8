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

/* Loads every run of the store's logdir once. Progress lines go to stderr
 * unless quiet (silent for the first second, then one a second). Returns
 * 0 or a negative TFB_E* code. */
int tfb_report_load_once(tfb_store *store, int quiet);
/* 1 when logdir is an s3:// or gs:// URL (a bucket, not a directory). */
int tfb_report_is_url(const char *logdir);

#endif
