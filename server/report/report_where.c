/*
 * report_where.c - `--where EXPR` of report and watch (report_where.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/report_where.h"
#include "tfboard.h"

#if defined(__has_include)
#if __has_include("query/query.h")
#include "query/query.h"
#define HAVE_QUERY 1
#endif
#endif

static int cmp_name(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int tfb_where_eval(tfb_store *s, const char *expr, tfb_where_set *out,
                   char *err, size_t errcap)
{
    out->names = NULL;
    out->n = 0;
#ifdef HAVE_QUERY
    tfb_query *q;
    int rc = tfb_query_open(s, &q);
    if (rc < 0) {
        snprintf(err, errcap, "--where: the query engine could not start: "
                              "%s", tfb_strerror(rc));
        return rc;
    }
    tfb_query_limits lim = {.max_mem = TFB_QUERY_CLI_MAX_MEM};
    char msg[400] = "";
    int off = -1;
    rc = tfb_query_filter_runs(q, expr, &lim, &out->names, &out->n, msg,
                               sizeof msg, &off);
    tfb_query_close(q);
    if (rc < 0) {
        if (off >= 0)
            snprintf(err, errcap, "--where: %s (at byte %d: '%.20s')",
                     msg[0] ? msg : tfb_strerror(rc), off,
                     expr + (off <= (int)strlen(expr) ? off : 0));
        else
            snprintf(err, errcap, "--where: %s",
                     msg[0] ? msg : tfb_strerror(rc));
        return rc;
    }
    if (out->n > 1)
        qsort(out->names, out->n, sizeof *out->names, cmp_name);
    return 0;
#else
    (void)s;
    (void)expr;
    snprintf(err, errcap, "--where needs the query engine, which this "
                          "build does not have");
    return TFB_ENOTSUP;
#endif
}

int tfb_where_has(const tfb_where_set *w, const char *name)
{
    return w->n && bsearch(&name, w->names, w->n, sizeof *w->names,
                           cmp_name) != NULL;
}

void tfb_where_set_free(tfb_where_set *w)
{
#ifdef HAVE_QUERY
    tfb_query_names_free(w->names, w->n);
#else
    for (size_t i = 0; i < w->n; i++)
        free(w->names[i]);
    free(w->names);
#endif
    w->names = NULL;
    w->n = 0;
}
