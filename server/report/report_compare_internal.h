/*
 * report_compare_internal.h - the parts of the comparison that live in
 * their own files (report_compare_hparams.c).
 */
#ifndef TFB_SERVER_REPORT_COMPARE_INTERNAL_H
#define TFB_SERVER_REPORT_COMPARE_INTERNAL_H

#include "report/report_compare.h"

/* Fills c->hparams (the differing ones, by name), c->hparams_a/_b.
 * Returns 0 or TFB_ENOMEM. */
int tfb_compare_hparams_diff(tfb_store *sa, tfb_run *a, tfb_store *sb,
                             tfb_run *b, tfb_compare *c);

#endif
