/*
 * trace_diff.c - HTA's TraceDiff (definitions and the bound in
 * trace_diff.h): each run's kernel and op totals by name, copied out of
 * its traces, sorted, then merged into one row per name.
 */
#include "analysis/trace_diff.h"

#include <stdlib.h>
#include <string.h>

#include "tfboard.h"
#include "base/str.h"
#include "base/vec.h"
#include "trace/trace.h"

static const char *const k_kind_names[TFB_TRACE_DIFF_KINDS] = {
    "added", "deleted", "increased", "decreased", "unchanged"};

const char *tfb_trace_diff_kind_name(int k)
{
    return k >= 0 && k < TFB_TRACE_DIFF_KINDS ? k_kind_names[k] : "?";
}

/* One name's totals in one run; dev 0 = kernel, 1 = op. */
typedef struct entry {
    char *name;
    int dev;
    int64_t count, total;
} entry;

/* v, n and cap as base/vec.h's vectors, so tfb_vec_push grows it. */
typedef struct side {
    entry *v;
    size_t n, cap;
    int has;
} side;

static int side_add(side *s, const char *name, int dev, int64_t count,
                    int64_t total)
{
    char *copy = tfb_strdup(name ? name : "");
    if (!copy)
        return TFB_ENOMEM;
    if (tfb_vec_push(s, ((entry){copy, dev, count, total})) < 0) {
        free(copy);
        return TFB_ENOMEM;
    }
    return 0;
}

static void side_free(side *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->v[i].name);
    tfb_vec_free(s);
    memset(s, 0, sizeof *s);
}

static int cmp_entry(const void *x, const void *y)
{
    const entry *a = x, *b = y;
    if (a->dev != b->dev)
        return a->dev - b->dev;
    return strcmp(a->name, b->name);
}

/* A run's kernels (its GPU trace) and ops (its host side). */
static int side_of(tfb_store *s, tfb_run *r, int wait_ms, side *out)
{
    memset(out, 0, sizeof *out);
    tfb_trace *t = NULL;
    tfb_trace_status st;
    memset(&st, 0, sizeof st);
    int rc = tfb_trace_get(s, r, wait_ms, &t, &st);
    if (rc == TFB_ENOMEM)
        return rc;
    if (rc == 0 && st.state == TFB_TRACE_READY && t) {
        tfb_trace_kernels k;
        if ((rc = tfb_trace_kernel_stats(t, 0, &k)) == 0) {
            out->has = 1;
            for (size_t i = 0; i < k.n && rc == 0; i++)
                rc = side_add(out, k.v[i].name, 0, k.v[i].count,
                              k.v[i].total_ns);
            tfb_trace_kernels_free(&k);
        }
        if (rc == TFB_ENOMEM) {
            tfb_trace_release(t);
            side_free(out);
            return rc;
        }
    }
    if (t)
        tfb_trace_release(t);
    /* Only a run whose trace was read has a host side worth waiting for
     * (a CPU-only trace answers READY with no kernels). */
    if (st.state != TFB_TRACE_READY)
        return 0;
    tfb_trace_host *h = NULL;
    rc = tfb_trace_host_get(s, r, &h, NULL, 0);
    if (rc == TFB_ENOMEM) {
        side_free(out);
        return rc;
    }
    if (rc == 0 && h) {
        out->has = 1;
        for (size_t i = 0; i < h->nops && rc == 0; i++) {
            const tfb_trace_host_op_stat *o = &h->ops[i];
            const char *name =
                o->name < h->nstrings ? h->strings[o->name] : "";
            rc = side_add(out, name, 1, (int64_t)o->count, o->total_ns);
        }
        tfb_trace_host_release(h);
        if (rc == TFB_ENOMEM) {
            side_free(out);
            return rc;
        }
    }
    if (out->n > 1)
        qsort(out->v, out->n, sizeof *out->v, cmp_entry);
    return 0;
}

static int64_t abs64(int64_t x) { return x < 0 ? -x : x; }

static int cmp_row(const void *x, const void *y)
{
    const tfb_trace_diff_row *a = x, *b = y;
    int64_t da = abs64(a->diff_ns), db = abs64(b->diff_ns);
    if (da != db)
        return da > db ? -1 : 1;
    int c = strcmp(a->name, b->name);
    return c ? c : strcmp(b->device, a->device); /* "gpu" before "cpu" */
}

static tfb_trace_diff_kind kind_of(int64_t ca, int64_t cb)
{
    if (!ca)
        return TFB_TRACE_DIFF_ADDED;
    if (!cb)
        return TFB_TRACE_DIFF_DELETED;
    return cb > ca   ? TFB_TRACE_DIFF_INCREASED
           : cb < ca ? TFB_TRACE_DIFF_DECREASED
                     : TFB_TRACE_DIFF_UNCHANGED;
}

/* Merges the two sorted sides into rows (names moved out of them). */
static int merge(side *a, side *b, tfb_trace_diff *out)
{
    size_t cap = a->n + b->n;
    out->rows = cap ? calloc(cap, sizeof *out->rows) : NULL;
    if (cap && !out->rows)
        return TFB_ENOMEM;
    size_t i = 0, j = 0;
    while (i < a->n || j < b->n) {
        int c = i == a->n   ? 1
                : j == b->n ? -1
                            : cmp_entry(&a->v[i], &b->v[j]);
        entry *ea = c <= 0 ? &a->v[i++] : NULL;
        entry *eb = c >= 0 ? &b->v[j++] : NULL;
        tfb_trace_diff_row *r = &out->rows[out->n++];
        entry *e = ea ? ea : eb;
        r->name = e->name;
        e->name = NULL;
        r->device = e->dev ? "cpu" : "gpu";
        r->count_a = ea ? ea->count : 0;
        r->total_ns_a = ea ? ea->total : 0;
        r->count_b = eb ? eb->count : 0;
        r->total_ns_b = eb ? eb->total : 0;
        r->diff_count = r->count_b - r->count_a;
        r->diff_ns = r->total_ns_b - r->total_ns_a;
        tfb_trace_diff_kind k = kind_of(r->count_a, r->count_b);
        r->change = k_kind_names[k];
        out->kinds[e->dev][k]++;
    }
    out->names = out->n;
    if (out->n > 1)
        qsort(out->rows, out->n, sizeof *out->rows, cmp_row);
    /* Keep the first rows; the rest only counted. */
    for (size_t k = TFB_TRACE_DIFF_ROWS_MAX; k < out->n; k++)
        free(out->rows[k].name);
    if (out->n > TFB_TRACE_DIFF_ROWS_MAX)
        out->n = TFB_TRACE_DIFF_ROWS_MAX;
    return 0;
}

int tfb_trace_diff_runs(tfb_store *sa, tfb_run *a, tfb_store *sb,
                        tfb_run *b, int wait_ms, tfb_trace_diff *out)
{
    memset(out, 0, sizeof *out);
    side A, B;
    int rc = side_of(sa, a, wait_ms, &A);
    if (rc < 0)
        return rc;
    rc = side_of(sb, b, wait_ms, &B);
    if (rc < 0) {
        side_free(&A);
        return rc;
    }
    out->has_a = A.has;
    out->has_b = B.has;
    /* Without both traces there is nothing to diff: a missing trace is
     * not "every op deleted". */
    if (A.has && B.has)
        rc = merge(&A, &B, out);
    side_free(&A);
    side_free(&B);
    if (rc < 0)
        tfb_trace_diff_free(out);
    return rc;
}

void tfb_trace_diff_free(tfb_trace_diff *d)
{
    if (!d)
        return;
    for (size_t i = 0; i < d->n; i++)
        free(d->rows[i].name);
    free(d->rows);
    memset(d, 0, sizeof *d);
}
