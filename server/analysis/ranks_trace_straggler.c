/*
 * ranks_trace_straggler.c - the straggler from the ranks' NCCL kernel
 * starts (rule and bounds in ranks_trace_straggler.h): one pass over the
 * compared collectives, each looking at every rank's k-th start.
 */
#include "analysis/ranks_trace_straggler.h"

#include <stdlib.h>
#include <string.h>

#include "tfboard.h"

int tfb_ranks_trace_straggler_find(const tfb_ranks_trace_starts *in,
                                   size_t n,
                                   tfb_ranks_trace_straggler *out)
{
    memset(out, 0, sizeof *out);
    out->straggler = -1;
    out->per_rank = calloc(n ? n : 1, sizeof *out->per_rank);
    if (!out->per_rank)
        return TFB_ENOMEM;
    out->n = n;
    size_t compared = SIZE_MAX, ranks = 0;
    for (size_t r = 0; r < n; r++) {
        if (!in[r].n)
            continue;
        ranks++;
        if (in[r].n < compared)
            compared = in[r].n;
    }
    if (ranks < 2)
        return 0;
    out->ranks = ranks;
    out->compared = compared;
    double *late_sum = calloc(n, sizeof *late_sum);
    if (!late_sum) {
        tfb_ranks_trace_straggler_free(out);
        return TFB_ENOMEM;
    }
    for (size_t k = 0; k < compared; k++) {
        int64_t first = INT64_MAX, last = INT64_MIN;
        size_t who = 0, at_last = 0;
        for (size_t r = 0; r < n; r++) {
            if (!in[r].n)
                continue;
            int64_t s = in[r].starts[k];
            first = s < first ? s : first;
            if (s > last) {
                last = s;
                who = r;
                at_last = 1;
            } else if (s == last) {
                at_last++;
            }
        }
        int64_t wait = 0;
        for (size_t r = 0; r < n; r++) {
            if (!in[r].n)
                continue;
            late_sum[r] += (double)(in[r].starts[k] - first);
            wait += last - in[r].starts[k];
        }
        if (at_last == 1) {
            out->per_rank[who].last++;
            out->per_rank[who].wait_caused_ns += wait;
        }
    }
    size_t best = 0;
    for (size_t r = 0; r < n; r++) {
        tfb_ranks_trace_lateness *l = &out->per_rank[r];
        if (!in[r].n)
            continue;
        l->last_share = (double)l->last / (double)compared;
        l->mean_late_ns = late_sum[r] / (double)compared;
        if (l->last > out->per_rank[best].last || !in[best].n)
            best = r;
    }
    free(late_sum);
    if (compared >= TFB_RANKS_TRACE_MIN_COLLECTIVES &&
        out->per_rank[best].last_share >= TFB_RANKS_TRACE_STRAGGLER_SHARE)
        out->straggler = (long)best;
    return 0;
}

void tfb_ranks_trace_straggler_free(tfb_ranks_trace_straggler *s)
{
    if (!s)
        return;
    free(s->per_rank);
    memset(s, 0, sizeof *s);
    s->straggler = -1;
}
