/*
 * report_where.h - `--where EXPR` of `tfboard report` and `tfboard
 * watch`: the runs a run-filter expression over runs_wide selects
 * (server/API.md "SQL"; the same text as the web UI's filter box and the
 * multi-run routes' where=), through the query layer.
 *
 * Thread-safety: one call at a time per store is not required; each
 * call opens its own connection.
 */
#ifndef TFB_REPORT_WHERE_H
#define TFB_REPORT_WHERE_H

#include <stddef.h>

#include "store/store.h"

/* A command line's filter has no time limit but Ctrl-C, like `tfboard
 * query`; its memory is bounded as the query layer bounds the command
 * line's statements. */
typedef struct tfb_where_set {
    char **names; /* sorted by strcmp */
    size_t n;
} tfb_where_set;

/* Evaluates expr over the store as it is now into *out (free with
 * tfb_where_set_free). Returns 0; TFB_EINVAL (or the query layer's
 * code) with "--where: MESSAGE (at byte N)" in err; TFB_ENOTSUP in a
 * build without the query layer. */
int tfb_where_eval(tfb_store *s, const char *expr, tfb_where_set *out,
                   char *err, size_t errcap);
/* 1 when name is in the set. */
int tfb_where_has(const tfb_where_set *w, const char *name);
void tfb_where_set_free(tfb_where_set *w);

#endif
