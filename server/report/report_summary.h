/*
 * report_summary.h - the report's first screen, computed once and written
 * by every format (report_text.c: text and Markdown, report_json.c: the
 * "summary" object that the html page draws too): a line per run, the
 * findings ranked with the same finding on several runs grouped into one,
 * and the advice of every run, each piece once with the runs it applies to.
 *
 * The findings and the advice come from the plugins' report_findings and
 * report_advice hooks (core/plugin.h).
 *
 * Ownership: the summary owns its strings and arrays (tfb_report_summary_free).
 * Thread-safety: built and used by one thread.
 */
#ifndef TFB_SERVER_REPORT_SUMMARY_H
#define TFB_SERVER_REPORT_SUMMARY_H

#include <stddef.h>

#include "core/plugin.h"
#include "base/vec.h"
#include "store/store.h"

/* One finding text ("label: detail") and the runs it was found on. */
typedef struct tfb_report_group {
    char *text;
    double weight;   /* the heaviest of its runs' */
    TFB_VEC(size_t) runs; /* indexes into the report's runs, ascending */
} tfb_report_group;

typedef struct tfb_report_summary {
    /* Heaviest first; equal weights in the order of their first run. */
    tfb_report_group *findings;
    size_t n_findings;
    /* Advice in the order first met (each run's in order of importance,
     * runs in report order); weight unused. */
    tfb_report_group *advice;
    size_t n_advice;
} tfb_report_summary;

/* Asks every plugin for the findings and advice of runs[0..n) (their
 * order is the report's) and groups them. Returns 0, TFB_ENOMEM or a
 * plugin's error (*out is then empty). */
int tfb_report_summarize(tfb_store *store, const tfb_report_opts *opts,
                         tfb_run *const *runs, size_t n,
                         tfb_report_summary *out);
void tfb_report_summary_free(tfb_report_summary *s);

/* The length of a finding's label: the text before its first ':'. */
size_t tfb_report_label_len(const char *text);

/* The run's heaviest finding group (the first in rank order that names
 * run), or NULL when the run has none. */
const tfb_report_group *tfb_report_run_finding(const tfb_report_summary *s,
                                               size_t run);

/* 1 when the group names run. */
int tfb_report_group_has(const tfb_report_group *g, size_t run);

#endif
