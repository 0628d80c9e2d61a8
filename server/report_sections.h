/*
 * report_sections.h - the report's sections that come from other areas'
 * analyses (health alerts, gradient flags, GPU), gathered for one run and
 * written in each format. Kept apart from the model so that each
 * analysis's glue lives in one place.
 *
 * Ownership: area "pipeline". Thread-safety: one thread per run model.
 */
#ifndef TFB_SERVER_REPORT_SECTIONS_H
#define TFB_SERVER_REPORT_SECTIONS_H

#include <stdio.h>

#include "report_model.h"

/* Fills rr's alerts, gradient flags and GPU parts from the analyses.
 * Returns 0 or TFB_ENOMEM. */
int tfb_report_sections(tfb_report_run *rr, tfb_store *store,
                        const tfb_report_opts *opts);

/* Frees what tfb_report_sections() put in rr. */
void tfb_report_sections_free(tfb_report_run *rr);

/* Writes those sections as text (markdown = 0) or Markdown. */
void tfb_report_sections_text(FILE *f, const tfb_report_run *rr,
                              int markdown);

/* Writes "alerts", "gradient_flags" and "gpu" members (keys and values)
 * into the run object being built in j. */
void tfb_report_sections_json(tfb_json *j, const tfb_report_run *rr);

#endif
