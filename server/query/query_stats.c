/*
 * query_stats.c - per-connection statistics of scalar series for
 * scalar_stats and runs_wide's "<tag>.min" columns: worked out by decoding
 * the series TFB_QUERY_CHUNK points at a time (no pin, no copy of the
 * series), and kept by the series' pointer with the count they saw, so a
 * second query over an unchanged store decodes nothing. A series that
 * grew (or was reset and re-read) is worked out again.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "query/query_internal.h"
#include "tfboard.h"

static void compute(tfb_query *q, qstats *st, tfb_series *s)
{
    int64_t step[TFB_QUERY_CHUNK];
    double v[TFB_QUERY_CHUNK];
    size_t n = tfb_series_count(s), at = 0;
    st->count = 0;
    st->first = st->last = st->min = st->max = NAN;
    st->last_step = 0;
    int any = 0;
    while (at < n) {
        size_t k = tfb_series_scalar_range(s, at, TFB_QUERY_CHUNK, step, NULL,
                                           NULL, v);
        if (k == 0)
            break;
        if (at == 0)
            st->first = v[0];
        for (size_t i = 0; i < k; i++) {
            if (isfinite(v[i])) {
                if (!any || v[i] < st->min)
                    st->min = v[i];
                if (!any || v[i] > st->max)
                    st->max = v[i];
                any = 1;
            }
        }
        st->last = v[k - 1];
        st->last_step = step[k - 1];
        at += k;
        q->rows_touched += (int64_t)k;
    }
    st->count = at;
    tfb_nonfinite_stats nf;
    tfb_series_nonfinite(s, &nf);
    st->nonfinite = nf.nan + nf.pos_inf + nf.neg_inf;
}

const qstats *tfb_qstats_get(tfb_query *q, tfb_series *s)
{
    qstats *st = tfb_strtab_get(&q->stats, (const char *)&s, sizeof s);
    size_t n = tfb_series_count(s);
    if (st && st->count == n) {
        /* the non-finite counts move with the count; re-read them */
        tfb_nonfinite_stats nf;
        tfb_series_nonfinite(s, &nf);
        if (st->nonfinite == nf.nan + nf.pos_inf + nf.neg_inf)
            return st;
    }
    if (!st) {
        st = calloc(1, sizeof *st);
        if (!st)
            return NULL;
        st->s = s;
        if (tfb_strtab_put(&q->stats, (const char *)&st->s, sizeof st->s,
                           st) < 0) {
            free(st);
            return NULL;
        }
    }
    compute(q, st, s);
    return st;
}

void tfb_qstats_free(tfb_query *q)
{
    for (size_t i = 0; i < q->stats.cap; i++)
        if (q->stats.slots[i].hash)
            free(q->stats.slots[i].val);
    tfb_strtab_free(&q->stats);
}
