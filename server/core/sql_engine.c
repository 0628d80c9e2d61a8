/*
 * sql_engine.c - the installed SQL engine (sql_engine.h) and the run
 * filter every route shares.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/sql_engine.h"
#include "tfboard.h"

static _Atomic(const tfb_sql_engine *) installed;

void tfb_sql_engine_install(const tfb_sql_engine *e)
{
    atomic_store(&installed, e);
}

const tfb_sql_engine *tfb_sql_engine_get(void)
{
    return atomic_load(&installed);
}

int tfb_run_filter(tfb_store *s, const char *expr, char ***names, size_t *n,
                   char *err, size_t errcap, int *err_off)
{
    const tfb_sql_engine *e = tfb_sql_engine_get();
    *names = NULL;
    *n = 0;
    *err_off = -1;
    if (!e || !e->filter_runs) {
        snprintf(err, errcap, "run filter expressions need the query "
                              "engine, which this server does not run");
        return TFB_ENOTSUP;
    }
    return e->filter_runs(s, expr, names, n, err, errcap, err_off);
}

void tfb_run_filter_free(char **names, size_t n)
{
    const tfb_sql_engine *e = tfb_sql_engine_get();
    if (e && e->names_free) {
        e->names_free(names, n);
        return;
    }
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
}
