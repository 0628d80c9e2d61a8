/*
 * query_trace_run.c - a trace table cursor's hold on one run's data
 * (query_trace_internal.h): the GPU trace through the trace layer's
 * per-run cache, the error that names the run, the release. The table
 * families and the module use it; it uses neither.
 */
#include "query/query_trace_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tfboard.h"

int tfb_qt_fail(qt_cursor *c, int rc, const char *what, const char *msg)
{
    if (rc == TFB_ENOMEM)
        return SQLITE_NOMEM;
    sqlite3_free(c->base.pVtab->zErrMsg);
    c->base.pVtab->zErrMsg = sqlite3_mprintf(
        "run '%s': %s: %s", c->run ? tfb_run_name(c->run) : "?", what,
        msg && msg[0] ? msg : tfb_strerror(rc));
    return c->base.pVtab->zErrMsg ? SQLITE_ERROR : SQLITE_NOMEM;
}

int tfb_qt_load_trace(qt_cursor *c, tfb_run *r)
{
    char err[512] = "";
    int rc = tfb_trace_of_run_err(c->ctx->store, r, &c->t, err, sizeof err);
    if (rc < 0)
        return tfb_qt_fail(c, rc, "its trace could not be loaded", err);
    if (c->t)
        return SQLITE_OK;
    /* No GPU trace although the run has trace files: unless they hold a
     * host side (below), the trace layer skipped each of them (damaged,
     * not a trace, or without a kernel table). Said, so that an answer
     * over every run is never quietly short. */
    char **files = NULL;
    size_t n = 0;
    rc = tfb_run_trace_files(r, &files, &n);
    if (rc < 0)
        return tfb_qt_fail(c, rc, "its trace files could not be listed",
                           NULL);
    if (n) {
        /* A trace with no GPU side at all (torch.profiler on a machine
         * without a GPU: CPU ops only) was read, it just has no kernels:
         * no rows, no error. Its host side tells it from a file the trace
         * layer could not read. */
        tfb_trace_host *h = NULL;
        if (tfb_trace_host_get(c->ctx->store, r, &h, NULL, 0) == 0 && h) {
            tfb_trace_host_release(h);
            tfb_strv_free(files, n);
            return SQLITE_OK;
        }
        const char *base = strrchr(files[0], '/');
        snprintf(err, sizeof err,
                 "%s%s: damaged, not a trace, or without a kernel table",
                 base ? base + 1 : files[0],
                 n > 1 ? " and the run's other trace files" : "");
        tfb_strv_free(files, n);
        return tfb_qt_fail(c, TFB_ECORRUPT, "no GPU trace could be read",
                           err);
    }
    tfb_strv_free(files, n);
    return SQLITE_OK;
}

void tfb_qt_unload(qt_cursor *c)
{
    if (c->t && c->t != c->named)
        tfb_trace_release(c->t);
    free(c->kname);
    free(c->klen);
    c->kname = NULL;
    c->klen = NULL;
    if (c->h)
        tfb_trace_host_release(c->h);
    if (c->m)
        tfb_trace_memory_release(c->m);
    free(c->bases);
    c->bases = NULL;
    free(c->order);
    c->order = NULL;
    c->norder = c->opos = 0;
    c->t = NULL;
    c->h = NULL;
    c->m = NULL;
    c->run = NULL;
}

void tfb_qt_close(qt_cursor *c)
{
    tfb_qt_unload(c);
    if (c->named)
        tfb_trace_release(c->named);
    c->named = NULL;
}

void tfb_qt_result_str(qt_cursor *c, sqlite3_context *ctx, const char *s,
                       int len)
{
    if (!s)
        sqlite3_result_null(ctx);
    else
        sqlite3_result_text(ctx, s, len,
                            c->t && c->t == c->named ? SQLITE_STATIC
                                                     : SQLITE_TRANSIENT);
}
