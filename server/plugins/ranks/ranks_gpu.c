/*
 * ranks_gpu.c - the GPU side of a job: each rank's trace (through the
 * trace layer's per-run cache and background loader, trace.h) turned into
 * the analysis's device intervals, then HTA's temporal breakdown and the
 * comm/compute overlap (ranks_overlap.c). The only file of the plugin that
 * reads trace rows; ranks_json.c writes what a trace says of itself (its
 * devices, notes, distributedInfo) through the trace layer's writers.
 *
 * Loading: every rank's load is started first (the trace layer reads each
 * run's trace on its own thread, without a lock other requests wait on),
 * then the request waits for them within its budget; ranks still loading
 * are reported as loading, never waited for past the budget.
 */
#include "plugins/ranks/ranks_job.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/vec.h"
#include "trace/trace.h"
#include "tfboard.h"

void tfb_ranks_gpu_view_free(tfb_ranks_gpu_view *v)
{
    if (!v)
        return;
    for (size_t i = 0; v->ranks && i < v->n_ranks; i++)
        tfb_trace_release(v->ranks[i].trace);
    free(v->ranks);
    tfb_ranks_trace_straggler_free(&v->trace_straggler);
    memset(v, 0, sizeof *v);
}

int64_t tfb_ranks_gpu_world_size(const tfb_ranks_gpu_view *v,
                                 const char **backend)
{
    if (backend)
        *backend = NULL;
    for (size_t i = 0; v && i < v->n_ranks; i++) {
        const tfb_trace *t = v->ranks[i].trace;
        if (t && t->dist.present && t->dist.world_size > 0) {
            if (backend)
                *backend = tfb_trace_str(t, t->dist.backend, NULL);
            return t->dist.world_size;
        }
    }
    return -1;
}

/* The device intervals of trace t (GPU lanes only), kernels classed by
 * name (once per string). */
static int intervals_of(const tfb_trace *t, tfb_ranks_interval **out,
                        size_t *n_out, size_t *n_comm)
{
    *out = NULL;
    *n_out = 0;
    *n_comm = 0;
    int8_t *cls = calloc(t->nstrings ? t->nstrings : 1, 1);
    if (!cls)
        return TFB_ENOMEM;
    for (size_t i = 0; i < t->nstrings; i++)
        cls[i] = (int8_t)tfb_ranks_classify_kernel(t->strings[i]);
    size_t n = 0;
    for (size_t l = 0; l < t->nlanes; l++)
        if (!t->lanes[l].host)
            n += t->lanes[l].n;
    tfb_ranks_interval *iv = malloc((n ? n : 1) * sizeof *iv);
    if (!iv) {
        free(cls);
        return TFB_ENOMEM;
    }
    size_t m = 0, comm = 0;
    for (size_t l = 0; l < t->nlanes; l++) {
        const tfb_trace_lane *ln = &t->lanes[l];
        if (ln->host)
            continue;
        for (size_t i = ln->off; i < ln->off + ln->n && i < t->nspans; i++) {
            const tfb_trace_span *s = &t->spans[i];
            int32_t c;
            if (s->kind == TFB_TRACE_KERNEL) {
                int32_t name = s->info >= 0 && (size_t)s->info < t->nkinfo
                                   ? t->kinfo[s->info].name
                                   : -1;
                c = name >= 0 && (size_t)name < t->nstrings
                        ? cls[name]
                        : TFB_RANKS_COMPUTE;
            } else if (s->kind == TFB_TRACE_MEMCPY ||
                       s->kind == TFB_TRACE_MEMSET) {
                c = TFB_RANKS_MEMORY;
            } else {
                continue;
            }
            comm += c == TFB_RANKS_COMM;
            iv[m++] = (tfb_ranks_interval){s->start, s->end, ln->device,
                                           ln->stream, c};
        }
    }
    free(cls);
    *out = iv;
    *n_out = m;
    *n_comm = comm;
    return 0;
}

static int cmp_i64(const void *x, const void *y)
{
    int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    return (a > b) - (a < b);
}

/* The start times of t's NCCL kernels, ascending (*out malloc'd). */
static int nccl_starts(const tfb_trace *t, int64_t **out, size_t *n_out)
{
    *out = NULL;
    *n_out = 0;
    int8_t *cls = calloc(t->nstrings ? t->nstrings : 1, 1);
    if (!cls)
        return TFB_ENOMEM;
    for (size_t i = 0; i < t->nstrings; i++)
        cls[i] = (int8_t)(tfb_ranks_classify_kernel(t->strings[i]) ==
                          TFB_RANKS_COMM);
    TFB_VEC(int64_t) v = {0};
    for (size_t i = 0; i < t->nspans; i++) {
        const tfb_trace_span *s = &t->spans[i];
        if (s->kind != TFB_TRACE_KERNEL || s->info < 0 ||
            (size_t)s->info >= t->nkinfo)
            continue;
        int32_t name = t->kinfo[s->info].name;
        if (name < 0 || (size_t)name >= t->nstrings || !cls[name])
            continue;
        if (tfb_vec_push(&v, s->start) < 0) {
            tfb_vec_free(&v);
            free(cls);
            return TFB_ENOMEM;
        }
    }
    free(cls);
    if (v.n > 1)
        qsort(v.v, v.n, sizeof *v.v, cmp_i64);
    *out = v.v;
    *n_out = v.n;
    return 0;
}

/* The straggler from the ready traces (each cut to its window). */
static int trace_straggler(tfb_trace **tr, const tfb_ranks_gpu_rank *ranks,
                           size_t n, tfb_ranks_trace_straggler *out)
{
    tfb_ranks_trace_starts *in = calloc(n ? n : 1, sizeof *in);
    int64_t **own = calloc(n ? n : 1, sizeof *own);
    int rc = in && own ? 0 : TFB_ENOMEM;
    for (size_t i = 0; i < n && rc == 0; i++) {
        /* A ready rank's trace has moved into the view (ranks[i].trace)
         * by now; tr[i] holds its cut to the window, when there is one. */
        const tfb_trace *t = tr[i] ? tr[i] : ranks[i].trace;
        if (ranks[i].state != TFB_RANKS_TRACE_READY || !t)
            continue;
        rc = nccl_starts(t, &own[i], &in[i].n);
        in[i].starts = own[i];
    }
    if (rc == 0)
        rc = tfb_ranks_trace_straggler_find(in, n, out);
    for (size_t i = 0; own && i < n; i++)
        free(own[i]);
    free(own);
    free(in);
    return rc;
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* Figures of one ready trace into g. */
static int figures(const tfb_trace *t, tfb_ranks_gpu_rank *g)
{
    tfb_ranks_interval *iv;
    size_t niv, ncomm;
    int rc = intervals_of(t, &iv, &niv, &ncomm);
    if (rc == 0)
        rc = tfb_ranks_gpu_breakdown(iv, niv, &g->gpu, &g->bad_intervals);
    free(iv);
    if (rc < 0)
        return rc;
    g->has_trace = 1;
    g->gpu.has_trace = 1;
    g->n_comm_kernels = ncomm;
    return 0;
}

/* Rank i's trace t cut to the step window of mode (*cut NULL when the
 * window cuts nothing: the figures are t's then). */
static int window_cut(tfb_store *s, tfb_run *run, const tfb_trace *t,
                      tfb_trace_window_mode mode, tfb_ranks_gpu_rank *g,
                      tfb_trace **cut)
{
    *cut = NULL;
    tfb_trace_host *h = NULL;
    int host_err = 0;
    if (mode != TFB_TRACE_WINDOW_ALL) {
        int rc = tfb_trace_host_get(s, run, &h, NULL, 0);
        if (rc == TFB_ENOMEM)
            return rc;
        /* A host side that cannot be read (the gpu plugin's /host names
         * the file): the rank counts whole, and its window says why,
         * rather than the job losing its figures. */
        host_err = rc < 0;
    }
    tfb_trace_window_find(h, t, mode, &g->window);
    tfb_trace_host_release(h);
    if (host_err)
        g->window.note = "the host trace cannot be read: the whole trace";
    return g->window.applies ? tfb_trace_window_apply(t, &g->window, cut)
                             : 0;
}

int tfb_ranks_job_gpu(tfb_store *s, const tfb_ranks_job *job, int wait_ms,
                      tfb_trace_window_mode mode, tfb_ranks_gpu_view *out)
{
    memset(out, 0, sizeof *out);
    out->overlap = NAN;
    out->trace_straggler.straggler = -1;
    size_t n = job->n_members;
    out->ranks = calloc(n ? n : 1, sizeof *out->ranks);
    tfb_trace **tr = calloc(n ? n : 1, sizeof *tr);
    if (!out->ranks || !tr) {
        free(tr);
        tfb_ranks_gpu_view_free(out);
        return TFB_ENOMEM;
    }
    out->n_ranks = n;
    out->window = mode;
    int rc = 0;
    /* 1. Start (or find) every rank's load without waiting, so they run
     * side by side; 2. wait for the ones still loading, within the
     * budget. */
    double deadline = now_ms() + (wait_ms > 0 ? wait_ms : 0);
    for (int pass = 0; pass < 2 && rc == 0; pass++) {
        for (size_t i = 0; i < n; i++) {
            tfb_ranks_gpu_rank *g = &out->ranks[i];
            if (pass == 0) {
                g->rank = job->members[i].rank;
                g->run_name = job->members[i].run_name;
                g->gpu.busy_pct = NAN;
                g->gpu.overlap = NAN;
            } else if (g->state != TFB_RANKS_TRACE_LOADING) {
                continue;
            }
            int w = 0;
            if (pass == 1) {
                if (wait_ms < 0) {
                    w = -1;
                } else {
                    double left = deadline - now_ms();
                    w = left > 0 ? (int)left : 0;
                }
            }
            tfb_trace_status st;
            memset(&st, 0, sizeof st);
            rc = tfb_trace_get(s, job->members[i].run, w, &tr[i], &st);
            if (rc < 0)
                break;
            switch (st.state) {
            case TFB_TRACE_READY:
                g->state = tr[i] ? TFB_RANKS_TRACE_READY
                                 : TFB_RANKS_TRACE_NONE;
                break;
            case TFB_TRACE_LOADING:
                g->state = TFB_RANKS_TRACE_LOADING;
                g->progress = st.progress;
                break;
            case TFB_TRACE_FAILED:
                g->state = TFB_RANKS_TRACE_FAILED;
                snprintf(g->error, sizeof g->error, "%s", st.error);
                break;
            default:
                g->state = TFB_RANKS_TRACE_NONE;
                break;
            }
        }
    }
    double progress = 0;
    size_t with_file = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        tfb_ranks_gpu_rank *g = &out->ranks[i];
        if (g->state != TFB_RANKS_TRACE_NONE)
            with_file++;
        if (g->state == TFB_RANKS_TRACE_LOADING) {
            out->n_loading++;
            progress += g->progress;
        } else if (g->state == TFB_RANKS_TRACE_READY) {
            progress += 1.0;
            tfb_trace *cut;
            if ((rc = window_cut(s, job->members[i].run, tr[i], mode, g,
                                 &cut)) < 0)
                break;
            /* The view holds the whole trace (what it says of itself);
             * tr[i] the cut the figures and the straggler are of. */
            g->trace = tr[i];
            tr[i] = cut;
            if ((rc = figures(cut ? cut : g->trace, g)) < 0)
                break;
            out->n_traced++;
            out->compute_ns += g->gpu.compute_ns;
            out->comm_ns += g->gpu.comm_ns;
            out->memory_ns += g->gpu.memory_ns;
            out->idle_ns += g->gpu.idle_ns;
            out->comm_union_ns += g->gpu.comm_union_ns;
            out->overlap_ns += g->gpu.overlap_ns;
        } else if (g->state == TFB_RANKS_TRACE_FAILED) {
            progress += 1.0;
            out->n_failed++;
        }
    }
    if (rc == 0)
        rc = trace_straggler(tr, out->ranks, n, &out->trace_straggler);
    for (size_t i = 0; i < n; i++)
        tfb_trace_release(tr[i]);
    free(tr);
    if (rc < 0) {
        tfb_ranks_gpu_view_free(out);
        return rc;
    }
    out->progress = with_file ? progress / (double)with_file : 1.0;
    if (out->comm_union_ns > 0)
        out->overlap = (double)out->overlap_ns / (double)out->comm_union_ns;
    return 0;
}
