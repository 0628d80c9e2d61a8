/*
 * trace_queue.c - HTA's queue length per stream (definitions and the
 * limit in trace_queue.h): per GPU lane, the call starts of its paired ops
 * (sorted here) merged with the ops' starts (sorted already: a lane's
 * spans are sorted by start), one sample per change.
 */
#include "analysis/trace_queue.h"

#include <stdlib.h>
#include <string.h>

#include "tfboard.h"

static int cmp_i64(const void *x, const void *y)
{
    int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    return (a > b) - (a < b);
}

/* One lane's series into *q; rises/falls/samples are scratch arrays of
 * at least lane->n (samples 2 lane->n). */
static void lane_queue(const tfb_trace *t, const tfb_trace_lane *lane,
                       int64_t *rises, int64_t *falls, double *samples,
                       tfb_queue_stream *q)
{
    size_t n = 0;
    for (size_t i = 0; i < lane->n; i++) {
        const tfb_trace_span *s = &t->spans[lane->off + i];
        if (s->kind > TFB_TRACE_MEMSET)
            continue;
        const tfb_trace_call *c = tfb_trace_call_of(t, s->correlation);
        if (!c)
            continue;
        rises[n] = c->start;
        falls[n] = s->start;
        n++;
    }
    q->ops = (int64_t)n;
    if (!n)
        return;
    qsort(rises, n, sizeof *rises, cmp_i64);
    size_t i = 0, j = 0, m = 0;
    int64_t len = 0, at_limit = 0, since = 0;
    while (i < n || j < n) {
        int rise = j == n || (i < n && rises[i] <= falls[j]);
        int64_t ts = rise ? rises[i++] : falls[j++];
        /* The interval since the previous change is spent at the length
         * that change left. */
        if (m && len >= TFB_QUEUE_LIMIT)
            at_limit += ts - since;
        len += rise ? 1 : -1;
        since = ts;
        samples[m++] = (double)len;
    }
    q->samples = (int64_t)m;
    q->at_limit_ns = at_limit;
    tfb_launch_dist d;
    tfb_launch_dist_of(samples, m, &d);
    q->p50 = d.p50_ns;
    q->p90 = d.p90_ns;
    q->p99 = d.p99_ns;
    q->max = d.max_ns;
    q->mean = d.mean_ns;
}

int tfb_queue_summarize(const tfb_trace *t, tfb_queue_summary *out)
{
    memset(out, 0, sizeof *out);
    size_t most = 0, gpu_lanes = 0;
    for (size_t l = 0; l < t->nlanes; l++) {
        if (t->lanes[l].host)
            continue;
        gpu_lanes++;
        if (t->lanes[l].n > most)
            most = t->lanes[l].n;
    }
    if (!gpu_lanes)
        return 0;
    int64_t *rises = malloc((most ? most : 1) * sizeof *rises);
    int64_t *falls = malloc((most ? most : 1) * sizeof *falls);
    double *samples = malloc((most ? 2 * most : 1) * sizeof *samples);
    out->streams = calloc(gpu_lanes, sizeof *out->streams);
    if (!rises || !falls || !samples || !out->streams) {
        free(rises);
        free(falls);
        free(samples);
        free(out->streams);
        out->streams = NULL;
        return TFB_ENOMEM;
    }
    int64_t first = t->first_ns ? t->first_ns : t->start_ns;
    out->duration_ns = t->end_ns > first ? t->end_ns - first : 0;
    for (size_t l = 0; l < t->nlanes; l++) {
        const tfb_trace_lane *lane = &t->lanes[l];
        if (lane->host)
            continue;
        tfb_queue_stream *q = &out->streams[out->n];
        q->device = lane->device;
        q->stream = lane->stream;
        lane_queue(t, lane, rises, falls, samples, q);
        if (!q->ops)
            continue;
        q->at_limit_fraction =
            out->duration_ns
                ? (double)q->at_limit_ns / (double)out->duration_ns
                : 0;
        out->n++;
    }
    free(rises);
    free(falls);
    free(samples);
    return 0;
}

void tfb_queue_summary_free(tfb_queue_summary *q)
{
    if (!q)
        return;
    free(q->streams);
    memset(q, 0, sizeof *q);
}
