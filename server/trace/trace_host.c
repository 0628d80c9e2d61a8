/*
 * trace_host.c - the host side of a run's traces (trace.h): one load
 * of a run's files (each to its host loader, into one builder, under the
 * load budgets; the per-run cache, trace_cache.c, runs it on a load
 * thread), and the link of each file's correlation ids to the GPU
 * trace's.
 */
#include <stdio.h>

#include "trace/trace_file.h"
#include "trace/trace_internal.h"
#include "tfboard.h"

int tfb_trace_host_load_files(char *const *paths, size_t n,
                              tfb_trace_host **out, char *err, size_t errcap)
{
    *out = NULL;
    if (err && errcap)
        err[0] = '\0';
    tfb_trace_load_ctl ctl;
    tfb_trace_load_ctl_init(&ctl, n);
    tfb_trace_host_builder *b;
    int rc = tfb_trace_host_builder_new(&b, &ctl);
    if (rc)
        return rc;
    for (size_t i = 0; i < n && rc >= 0; i++) {
        tfb_trace_host_builder_begin_file(b, i);
        const char *p = paths[i];
        int kind = tfb_trace_file_kind_of(p);
        rc = kind == TFB_TRACE_FILE_SQLITE   ? tfb_trace_host_load_sqlite(b, p)
             : kind == TFB_TRACE_FILE_KINETO ? tfb_trace_host_load_kineto(b, p)
                                             : 0;
        if (rc < 0 && err && errcap) {
            if (ctl.error[0])
                snprintf(err, errcap, "%s", ctl.error);
            else
                snprintf(err, errcap, "%s: %s", tfb_trace_file_name(p),
                         tfb_strerror(rc));
        }
    }
    if (rc < 0) {
        tfb_trace_host_builder_free(b);
        return rc;
    }
    rc = tfb_trace_host_builder_finish(b, out);
    if (rc < 0 && err && errcap)
        snprintf(err, errcap, "building the host trace: %s",
                 tfb_strerror(rc));
    return rc;
}

/* ------------------------------------------------------------------------
 * Correlation link
 * ---------------------------------------------------------------------- */
void tfb_trace_host_link(const tfb_trace_host *h, const tfb_trace *t,
                         int64_t *bases)
{
    for (size_t f = 0; h && f < h->nfiles; f++) {
        bases[f] = -1;
        if (!t || !t->ncalls)
            continue;
        /* Each probe call votes for the offsets of the calls of t with its
         * start and end; the offset with the most votes wins (a call of
         * another file at the same times votes alone). */
        int64_t cand[TFB_TRACE_HOST_PROBES * 4];
        size_t nc = 0;
        for (size_t k = 0; k < h->probes[f].n; k++) {
            const tfb_trace_host_probe *p = &h->probes[f].v[k];
            for (size_t i = tfb_trace_calls_from(t, p->start);
                 i < t->ncalls && t->calls[i].start == p->start &&
                 nc < sizeof cand / sizeof cand[0];
                 i++)
                if (t->calls[i].end == p->end &&
                    t->calls[i].correlation >= p->correlation)
                    cand[nc++] = t->calls[i].correlation - p->correlation;
        }
        size_t best = 0;
        for (size_t i = 0; i < nc; i++) {
            size_t votes = 0;
            for (size_t j = 0; j < nc; j++)
                votes += cand[j] == cand[i];
            if (votes > best) {
                best = votes;
                bases[f] = cand[i];
            }
        }
    }
}

int64_t tfb_trace_host_correlation(const tfb_trace_host_event *s,
                                   const int64_t *bases)
{
    if (s->kind != TFB_TRACE_HOST_RUNTIME || s->correlation < 0 ||
        bases[s->file] < 0)
        return -1;
    return s->correlation + bases[s->file];
}
