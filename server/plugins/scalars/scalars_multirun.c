/*
 * scalars_multirun.c - one scalar tag over many runs in one request:
 * /data/plugin/scalars/multirun (every run's series downsampled, or, past
 * 200 runs, bands of quantiles across runs with the best/worst runs and a
 * density; with smoothing=W each line's smoothed series beside its raw
 * one, so a chart is one request) and /data/plugin/scalars/nearest (the
 * runs whose value at a step is nearest a value: a click on a band).
 * API.md has the contract.
 *
 * Work is bounded: a series costs its points once (downsampling) and the
 * bands cost buckets x runs, so 10,000 runs answer in well under a second.
 */
#include <math.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "base/regex_bound.h"
#include "base/vec.h"
#include "core/downsample.h"
#include "core/plugin.h"
#include "core/selection.h"
#include "core/sql_engine.h"
#include "plugins/scalars/scalars_multirun.h"
#include "plugins/scalars/sweep_stats.h"

#define AUTO_BANDS_RUNS 200   /* summary=auto draws bands past this */
#define MAX_RUN_PARAMS 256    /* the HTTP layer's parameter limit */
#define MAX_SAMPLES 10000
#define MAX_LINE_POINTS ((size_t)2 << 20) /* in one lines answer */
#define DENSITY_NX_MAX 250
#define DENSITY_NY 64

typedef struct sel_run {
    tfb_run *run;
    tfb_series *s;
} sel_run;

typedef struct run_sel {
    sel_run *v;
    size_t n;
} run_sel;

static int cmp_name(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int already(const run_sel *rs, const tfb_run *r)
{
    for (size_t i = 0; i < rs->n; i++)
        if (rs->v[i].run == r)
            return 1;
    return 0;
}

/* The names `where` selects (a run-filter expression over runs_wide,
 * core/sql_engine.h), sorted for bsearch; NULL/0 without `where`. Sets a
 * 400 answer {"error", "offset"} on a bad expression. */
static int where_names(const tfb_http_req *req, tfb_http_resp *resp,
                       char ***names, size_t *n)
{
    const char *expr;
    *names = NULL;
    *n = 0;
    if (tfb_http_param_str(req, resp, "where", 0, NULL, &expr) < 0)
        return TFB_EINVAL;
    if (!expr)
        return 0;
    char err[400] = "";
    int off = -1;
    int rc = tfb_run_filter(tfb_server_store(req), expr, names, n, err,
                            sizeof err, &off);
    if (rc < 0 && off >= 0)
        return tfb_http_error(resp, 400, "parameter 'where': %s (at byte "
                                         "%d)", err, off);
    if (rc < 0)
        return tfb_http_error(resp, rc == TFB_ENOTSUP ? 501 : 400,
                              "parameter 'where': %s", err);
    qsort(*names, *n, sizeof **names, cmp_name);
    return 0;
}

static int in_names(char **names, size_t n, const char *name)
{
    return bsearch(&name, names, n, sizeof *names, cmp_name) != NULL;
}

/* The runs of the request that have scalar tag `tag`: the `run` params (in
 * request order), or every run (store order); either way only those in
 * the held `selection`, matching run_regex and selected by the `where`
 * expression when given. Sets a 400 answer on a bad regex or expression,
 * 404 on an unknown selection. */
static int select_runs(const tfb_http_req *req, tfb_http_resp *resp,
                       const char *tag, run_sel *out)
{
    memset(out, 0, sizeof *out);
    const char *rx;
    if (tfb_http_param_str(req, resp, "run_regex", 0, NULL, &rx) < 0)
        return TFB_EINVAL;
    tfb_selection *held;
    if (tfb_http_param_selection(req, resp, &held) < 0)
        return TFB_ENOENT;
    char **wn;
    size_t nw;
    if (where_names(req, resp, &wn, &nw) < 0) {
        tfb_selection_release(held);
        return TFB_EINVAL;
    }
    const char *where;
    tfb_http_param_str(req, resp, "where", 0, NULL, &where);
    regex_t re;
    char msg[300];
    /* Bounded (base/regex_bound.h): a loopback server needs no token, and
     * glibc's regcomp expands counted repetitions unbounded. */
    if (rx && tfb_regex_compile(&re, rx, REG_EXTENDED | REG_NOSUB, msg,
                                sizeof msg) < 0) {
        tfb_selection_release(held);
        if (where)
            tfb_run_filter_free(wn, nw);
        return tfb_http_error(resp, 400, "parameter 'run_regex': %s", msg);
    }
    const char *names[MAX_RUN_PARAMS];
    size_t nn = tfb_http_query_all(req, "run", names, MAX_RUN_PARAMS);
    if (nn > MAX_RUN_PARAMS)
        nn = MAX_RUN_PARAMS;
    tfb_store *st = tfb_server_store(req);
    tfb_run **all = NULL;
    size_t na = 0;
    int rc = 0;
    if (nn == 0 && tfb_store_runs(st, &all, &na) < 0)
        rc = TFB_ENOMEM;
    size_t cand = nn ? nn : na;
    if (rc == 0 && cand && !(out->v = malloc(cand * sizeof *out->v)))
        rc = TFB_ENOMEM;
    for (size_t i = 0; rc == 0 && i < cand; i++) {
        tfb_run *r = nn ? tfb_store_find_run(st, names[i]) : all[i];
        if (!r || (nn && already(out, r)))
            continue;
        if (held && !tfb_selection_has(held, tfb_run_name(r)))
            continue;
        if (rx && regexec(&re, tfb_run_name(r), 0, NULL, 0) != 0)
            continue;
        if (where && !in_names(wn, nw, tfb_run_name(r)))
            continue;
        tfb_series *s = tfb_run_find_series(r, TFB_SERIES_SCALAR, tag);
        if (s)
            out->v[out->n++] = (sel_run){r, s};
    }
    free(all);
    tfb_selection_release(held);
    if (where)
        tfb_run_filter_free(wn, nw);
    if (rx)
        regfree(&re);
    if (rc < 0) {
        free(out->v);
        out->v = NULL;
        return tfb_http_error(resp, 500, "out of memory");
    }
    return 0;
}

/* [[wall, step, value], ...] of the pinned view, picked by o. */
static int write_picked(tfb_json *j, const tfb_series_view *v,
                        const tfb_ds_opts *o)
{
    tfb_ds_point *pts = NULL;
    size_t np = 0;
    int rc = tfb_downsample(v->step, v->value, v->count, o, &pts, &np);
    tfb_json_array_begin(j);
    for (size_t i = 0; rc == 0 && i < np; i++) {
        size_t k = pts[i].index;
        tfb_json_array_begin(j);
        tfb_json_double(j, v->wall[k]);
        tfb_json_i64(j, v->step[k]);
        if (o->smoothing > 0)
            tfb_json_double(j, pts[i].value);
        else
            tfb_json_float(j, v->value[k]);
        tfb_json_array_end(j);
    }
    tfb_json_array_end(j);
    free(pts);
    return rc;
}

/* One series as /data/plugin/scalars/scalars answers it with the same
 * samples, step window and smoothing (the same numbers, byte for byte):
 * the raw answer into j and, when o->smoothing > 0, the smoothed one into
 * sj. Both come from one pin of the series, so a growing run gives the
 * two lines the same points. */
static int write_points(tfb_json *j, tfb_json *sj, tfb_series *s,
                        const tfb_ds_opts *o)
{
    tfb_series_view v;
    tfb_series_read_begin(s, &v);
    tfb_ds_opts raw = *o;
    raw.smoothing = 0;
    int rc = write_picked(j, &v, &raw);
    if (rc == 0 && o->smoothing > 0)
        rc = write_picked(sj, &v, o);
    tfb_series_read_end(s);
    return rc;
}

/* Closes the smoothed object built beside `series` and adds it to j as
 * "smoothed" (nothing when the request has no smoothing). */
static int add_smoothed(tfb_json *j, tfb_json *sj, const tfb_ds_opts *o)
{
    if (!(o->smoothing > 0))
        return 0;
    tfb_json_object_end(sj);
    size_t len;
    char *text = tfb_json_take(sj, &len);
    if (!text)
        return TFB_ENOMEM;
    tfb_json_key(j, "smoothed");
    tfb_json_raw(j, text, len);
    free(text);
    return 0;
}

typedef struct ranked {
    float value;
    size_t idx;
} ranked;

static int by_value(const void *a, const void *b)
{
    const ranked *x = a, *y = b;
    if (x->value != y->value)
        return x->value < y->value ? -1 : 1;
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

typedef struct bands {
    size_t nb;
    int64_t *step;
    double *q;       /* nb x 5: p5 p25 p50 p75 p95 */
    uint32_t *n;     /* finite values per bucket */
    ranked *last;    /* runs with a finite last value, by value */
    size_t n_last;
    int64_t dstep0, dstep1;
    double v0, v1;
    size_t nx, ny;
    uint32_t *counts; /* ny x nx */
} bands;

static void bands_free(bands *b)
{
    free(b->step);
    free(b->q);
    free(b->n);
    free(b->last);
    free(b->counts);
}

static const double QS[5] = {0.05, 0.25, 0.50, 0.75, 0.95};

/* Buckets x runs values held at once: the bands use fewer buckets than
 * `samples` when there are so many runs that more would take over 32 MB. */
#define MAX_CELLS ((size_t)8 << 20)

/* Points read at a time while looking back for a run's last finite
 * value (a diverged run ends in NaN). */
#define LAST_CHUNK 64

/* One run as the bands read it: the points it had when the bands began
 * (points appended later wait for the next request), first and last
 * step. */
typedef struct band_span {
    size_t count;
    int64_t first, last;
} band_span;

/* The last finite value among s's first n points: 1 and *out, or 0. */
static int last_finite(tfb_series *s, size_t n, float *out)
{
    float v[LAST_CHUNK];
    while (n) {
        size_t k = n < LAST_CHUNK ? n : LAST_CHUNK;
        size_t got = tfb_series_scalar_range(s, n - k, k, NULL, NULL, v, NULL);
        for (size_t i = got; i-- > 0;)
            if (isfinite(v[i])) {
                *out = v[i];
                return 1;
            }
        n -= k;
    }
    return 0;
}

/* Bands over the runs' series: quantiles per bucket, the density, and the
 * runs ranked by their last finite value; nf[r] gets run r's non-finite
 * statistics. Each run's points are read once, in order, into one buffer
 * reused from run to run (tfb_series_scalar_range: no pin, so no copy of
 * every series held at once: 100,000 pins were 240 MB of fresh pages a
 * request, half its time), and into a bucket-major table of its finite
 * values (walking all runs at one bucket, then the next, missed the cache
 * on every run: 4x slower at 10,000 runs); then each bucket's row is
 * contiguous for the quantiles and the density. */
static int compute_bands(const run_sel *rs, size_t samples, bands *b,
                         tfb_nonfinite_stats *nf)
{
    size_t nr = rs->n;
    memset(b, 0, sizeof *b);
    band_span *sp = malloc((nr ? nr : 1) * sizeof *sp);
    b->last = malloc((nr ? nr : 1) * sizeof *b->last);
    if (!sp || !b->last) {
        free(sp);
        return TFB_ENOMEM;
    }
    int64_t s0 = INT64_MAX, s1 = INT64_MIN;
    for (size_t r = 0; r < nr; r++) {
        tfb_series *s = rs->v[r].s;
        band_span *x = &sp[r];
        tfb_series_nonfinite(s, &nf[r]);
        x->count = tfb_series_count(s);
        if (x->count &&
            (tfb_series_scalar_range(s, 0, 1, &x->first, NULL, NULL, NULL) !=
                 1 ||
             tfb_series_scalar_range(s, x->count - 1, 1, &x->last, NULL,
                                     NULL, NULL) != 1))
            x->count = 0; /* not a scalar series */
        if (!x->count)
            continue;
        if (x->first < s0)
            s0 = x->first;
        if (x->last > s1)
            s1 = x->last;
        float v;
        if (last_finite(s, x->count, &v))
            b->last[b->n_last++] = (ranked){v, r};
    }
    qsort(b->last, b->n_last, sizeof *b->last, by_value);
    if (s0 > s1) {
        free(sp);
        return 0; /* no points at all */
    }
    size_t most = MAX_CELLS / nr;
    if (samples > most)
        samples = most < 2 ? 2 : most;
    b->step = malloc(samples * sizeof *b->step);
    if (!b->step) {
        free(sp);
        return TFB_ENOMEM;
    }
    b->nb = tfb_sweep_bucket_steps(s0, s1, samples, b->step);
    b->q = malloc(b->nb * 5 * sizeof *b->q);
    b->n = calloc(b->nb, sizeof *b->n);
    float *cells = malloc(b->nb * nr * sizeof *cells);
    TFB_VEC(int64_t) steps = {0};
    TFB_VEC(float) values = {0};
    int rc = 0;
    if (!b->q || !b->n || !cells) {
        rc = TFB_ENOMEM;
        goto out;
    }
    double v0 = INFINITY, v1 = -INFINITY;
    for (size_t r = 0; r < nr; r++) {
        size_t n = sp[r].count;
        if (!n)
            continue;
        if (tfb_vec_need(&steps, n) < 0 || tfb_vec_need(&values, n) < 0) {
            rc = TFB_ENOMEM;
            goto out;
        }
        n = tfb_series_scalar_range(rs->v[r].s, 0, n, steps.v, NULL,
                                    values.v, NULL);
        if (!n)
            continue;
        tfb_sweep_series ss = {steps.v, values.v, n};
        tfb_sweep_cursor cur = {0};
        /* the first bucket within the run's span */
        size_t lo = 0, hi = b->nb;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (b->step[mid] < steps.v[0])
                lo = mid + 1;
            else
                hi = mid;
        }
        for (size_t i = lo; i < b->nb; i++) {
            float x;
            size_t at;
            if (!tfb_sweep_value_at(&ss, &cur, b->step[i], &x, &at))
                break; /* past the run's last step */
            if (!isfinite(x))
                continue;
            cells[i * nr + b->n[i]++] = x;
            if (x < v0)
                v0 = x;
            if (x > v1)
                v1 = x;
        }
    }
    /* The density: every (bucket, run) value in a grid over the bucket
     * steps and the values' range; a bucket's row holds the same values
     * after the quantiles reorder it. */
    b->dstep0 = s0;
    b->dstep1 = s1;
    b->nx = b->nb < DENSITY_NX_MAX ? b->nb : DENSITY_NX_MAX;
    b->ny = DENSITY_NY;
    b->v0 = v0 <= v1 ? v0 : 0;
    b->v1 = v0 <= v1 ? v1 : 0;
    b->counts = calloc(b->nx * b->ny, sizeof *b->counts);
    if (!b->counts) {
        rc = TFB_ENOMEM;
        goto out;
    }
    double scale = v1 > v0 ? (double)b->ny / (v1 - v0) : 0;
    for (size_t i = 0; i < b->nb; i++) {
        float *row = cells + i * nr;
        size_t m = b->n[i], x = i * b->nx / b->nb;
        if (!m)
            continue;
        tfb_sweep_quantiles(row, m, QS, 5, b->q + i * 5);
        for (size_t k = 0; k < m; k++) {
            size_t y = (size_t)((row[k] - v0) * scale);
            if (y >= b->ny)
                y = b->ny - 1;
            b->counts[y * b->nx + x]++;
        }
    }
out:
    free(cells);
    free(sp);
    tfb_vec_free(&steps);
    tfb_vec_free(&values);
    return rc;
}

static void json_u32s(tfb_json *j, const char *key, const uint32_t *v,
                      size_t n)
{
    tfb_json_key(j, key);
    tfb_json_array_begin(j);
    for (size_t i = 0; i < n; i++)
        tfb_json_u64(j, v[i]);
    tfb_json_array_end(j);
}

static void write_bands(tfb_json *j, const bands *b)
{
    static const char *const names[5] = {"p5", "p25", "p50", "p75", "p95"};
    tfb_json_key(j, "bands");
    tfb_json_object_begin(j);
    tfb_json_key(j, "step");
    tfb_json_array_begin(j);
    for (size_t i = 0; i < b->nb; i++)
        tfb_json_i64(j, b->step[i]);
    tfb_json_array_end(j);
    for (int q = 0; q < 5; q++) {
        tfb_json_key(j, names[q]);
        tfb_json_array_begin(j);
        for (size_t i = 0; i < b->nb; i++) {
            if (b->n[i])
                tfb_json_double(j, b->q[i * 5 + q]);
            else
                tfb_json_null(j);
        }
        tfb_json_array_end(j);
    }
    json_u32s(j, "n", b->n, b->nb);
    tfb_json_object_end(j);
}

static void write_density(tfb_json *j, const bands *b)
{
    tfb_json_key(j, "density");
    tfb_json_object_begin(j);
    tfb_json_key(j, "step0");
    tfb_json_i64(j, b->nb ? b->dstep0 : 0);
    tfb_json_key(j, "step1");
    tfb_json_i64(j, b->nb ? b->dstep1 : 0);
    tfb_json_key(j, "v0");
    tfb_json_double(j, b->v0);
    tfb_json_key(j, "v1");
    tfb_json_double(j, b->v1);
    tfb_json_key(j, "nx");
    tfb_json_u64(j, b->nx);
    tfb_json_key(j, "ny");
    tfb_json_u64(j, b->counts ? b->ny : 0);
    json_u32s(j, "counts", b->counts, b->counts ? b->nx * b->ny : 0);
    tfb_json_object_end(j);
}

/* Adds r to the list of runs whose series the bands answer carries. */
static void pick(sel_run *picked, size_t *np, const sel_run *r)
{
    for (size_t i = 0; i < *np; i++)
        if (picked[i].s == r->s)
            return;
    picked[(*np)++] = *r;
}

/* o: the lines' samples and smoothing (no step window in bands mode). */
static int answer_bands(const tfb_http_req *req, tfb_http_resp *resp,
                        tfb_json *j, const run_sel *rs, const tfb_ds_opts *o)
{
    size_t samples = o->samples;
    int64_t k;
    if (tfb_http_param_i64(req, resp, "k", 0, 5, 0, 1000, &k) < 0)
        return TFB_EINVAL;
    size_t nr = rs->n;
    tfb_nonfinite_stats *nf = malloc((nr ? nr : 1) * sizeof *nf);
    if (!nf)
        return tfb_http_error(resp, 500, "out of memory");
    /* Each run is read as it was when the bands began (the loader may
     * append meanwhile: its new points wait for the next request). */
    bands b;
    int rc = compute_bands(rs, samples, &b, nf);
    if (rc < 0) {
        bands_free(&b);
        free(nf);
        return tfb_http_error(resp, 500, "%s", tfb_strerror(rc));
    }
    size_t kk = (size_t)k < b.n_last ? (size_t)k : b.n_last;
    tfb_json_key(j, "mode");
    tfb_json_str(j, "bands");
    tfb_json_key(j, "runs");
    tfb_json_u64(j, nr);
    write_bands(j, &b);
    const char *hl[MAX_RUN_PARAMS];
    size_t nh = tfb_http_query_all(req, "highlight", hl, MAX_RUN_PARAMS);
    if (nh > MAX_RUN_PARAMS)
        nh = MAX_RUN_PARAMS;
    sel_run *picked = malloc((2 * kk + nh + 1) * sizeof *picked);
    size_t np = 0;
    if (!picked) {
        bands_free(&b);
        free(nf);
        return tfb_http_error(resp, 500, "out of memory");
    }
    tfb_json_key(j, "best");
    tfb_json_array_begin(j);
    for (size_t i = 0; i < kk; i++) {
        const sel_run *r = &rs->v[b.last[i].idx];
        tfb_json_str(j, tfb_run_name(r->run));
        pick(picked, &np, r);
    }
    tfb_json_array_end(j);
    tfb_json_key(j, "worst");
    tfb_json_array_begin(j);
    for (size_t i = 0; i < kk; i++) {
        const sel_run *r = &rs->v[b.last[b.n_last - 1 - i].idx];
        tfb_json_str(j, tfb_run_name(r->run));
        pick(picked, &np, r);
    }
    tfb_json_array_end(j);
    for (size_t i = 0; i < nh; i++) {
        tfb_run *run = tfb_store_find_run(tfb_server_store(req), hl[i]);
        tfb_series *s = run ? tfb_run_find_series(run, TFB_SERIES_SCALAR,
                                                  tfb_http_query(req, "tag"))
                            : NULL;
        if (s)
            pick(picked, &np, &(sel_run){run, s});
    }
    tfb_json sj;
    tfb_json_init(&sj);
    tfb_json_object_begin(&sj);
    tfb_json_key(j, "series");
    tfb_json_object_begin(j);
    for (size_t i = 0; i < np && rc == 0; i++) {
        tfb_json_key(j, tfb_run_name(picked[i].run));
        tfb_json_key(&sj, tfb_run_name(picked[i].run));
        rc = write_points(j, &sj, picked[i].s, o);
    }
    tfb_json_object_end(j);
    if (rc == 0)
        rc = add_smoothed(j, &sj, o);
    tfb_json_free(&sj);
    free(picked);
    write_density(j, &b);
    tfb_json_key(j, "nonfinite");
    tfb_json_object_begin(j);
    for (size_t r = 0; r < nr; r++)
        if (nf[r].has_first) {
            tfb_json_key(j, tfb_run_name(rs->v[r].run));
            tfb_json_i64(j, nf[r].first_step);
        }
    tfb_json_object_end(j);
    free(nf);
    bands_free(&b);
    if (rc < 0)
        return tfb_http_error(resp, 500, "%s", tfb_strerror(rc));
    return 0;
}

int tfb_route_scalars_multirun(const tfb_http_req *req, tfb_http_resp *resp)
{
    const char *tag, *summary;
    int64_t samples, min_step, max_step;
    double smoothing;
    /* smoothing and the step window as the single-series route takes
     * them (its bounds, its defaults), so the answers can be equal */
    if (tfb_http_param_str(req, resp, "tag", 1, NULL, &tag) < 0 ||
        tfb_http_param_i64(req, resp, "samples", 0, 1000, 2, MAX_SAMPLES,
                           &samples) < 0 ||
        tfb_http_param_str(req, resp, "summary", 0, "auto", &summary) < 0 ||
        tfb_http_param_double(req, resp, "smoothing", 0, 0, 0, 0.999999,
                              &smoothing) < 0 ||
        tfb_http_param_i64(req, resp, "min_step", 0, INT64_MIN, INT64_MIN,
                           INT64_MAX, &min_step) < 0 ||
        tfb_http_param_i64(req, resp, "max_step", 0, INT64_MAX, INT64_MIN,
                           INT64_MAX, &max_step) < 0)
        return 0;
    tfb_ds_opts o = {(size_t)samples, smoothing,
                     min_step != INT64_MIN || max_step != INT64_MAX,
                     min_step, max_step};
    int bands_mode;
    if (strcmp(summary, "lines") == 0)
        bands_mode = 0;
    else if (strcmp(summary, "bands") == 0)
        bands_mode = 1;
    else if (strcmp(summary, "auto") == 0)
        bands_mode = -1;
    else
        return tfb_http_error(resp, 400, "parameter 'summary' must be auto, "
                                         "lines or bands");
    run_sel rs;
    if (select_runs(req, resp, tag, &rs) < 0)
        return 0;
    if (bands_mode < 0)
        bands_mode = rs.n > AUTO_BANDS_RUNS;
    if (bands_mode && o.has_range) {
        /* Bands span every run's whole history (the band chart zooms on
         * its own answer); a window there would silently mean something
         * else than in lines. */
        size_t n = rs.n;
        free(rs.v);
        return tfb_http_error(resp, 400,
                              "min_step/max_step apply to summary=lines "
                              "only (this answer is bands: %zu runs)",
                              n);
    }
    if (!bands_mode) {
        /* Lines asked for over thousands of runs: the answer would be
         * hundreds of MB; say so instead of building it. A smoothed line
         * is sent beside each raw one. */
        size_t pts = 0;
        for (size_t i = 0; i < rs.n; i++) {
            size_t c = tfb_series_count(rs.v[i].s);
            pts += c < (size_t)samples ? c : (size_t)samples;
        }
        if (smoothing > 0)
            pts *= 2;
        if (pts > MAX_LINE_POINTS) {
            free(rs.v);
            return tfb_http_error(resp, 400,
                                  "summary=lines over %zu runs would send %zu "
                                  "points (at most %zu): use summary=bands, "
                                  "fewer runs or fewer samples",
                                  rs.n, pts, MAX_LINE_POINTS);
        }
    }
    tfb_json j;
    tfb_json_init(&j);
    tfb_json_object_begin(&j);
    tfb_json_key(&j, "tag");
    tfb_json_str(&j, tag);
    int rc = 0;
    if (bands_mode) {
        rc = answer_bands(req, resp, &j, &rs, &o);
    } else {
        tfb_json_key(&j, "mode");
        tfb_json_str(&j, "lines");
        tfb_json_key(&j, "runs");
        tfb_json_u64(&j, rs.n);
        tfb_json sj;
        tfb_json_init(&sj);
        tfb_json_object_begin(&sj);
        tfb_json_key(&j, "series");
        tfb_json_object_begin(&j);
        for (size_t i = 0; i < rs.n && rc == 0; i++) {
            tfb_json_key(&j, tfb_run_name(rs.v[i].run));
            tfb_json_key(&sj, tfb_run_name(rs.v[i].run));
            rc = write_points(&j, &sj, rs.v[i].s, &o);
        }
        tfb_json_object_end(&j);
        if (rc == 0)
            rc = add_smoothed(&j, &sj, &o);
        tfb_json_free(&sj);
        if (rc < 0)
            tfb_http_error(resp, 500, "%s", tfb_strerror(rc));
    }
    free(rs.v);
    if (rc < 0 || tfb_http_resp_is_set(resp)) {
        tfb_json_free(&j);
        return 0;
    }
    tfb_json_object_end(&j);
    return tfb_http_json(resp, &j);
}

typedef struct near {
    double dist;
    size_t idx;
    int64_t step;
    float value;
} near;

static int by_dist(const void *a, const void *b)
{
    const near *x = a, *y = b;
    if (x->dist != y->dist)
        return x->dist < y->dist ? -1 : 1;
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

int tfb_route_scalars_nearest(const tfb_http_req *req, tfb_http_resp *resp)
{
    const char *tag;
    int64_t step, k;
    double value;
    if (tfb_http_param_str(req, resp, "tag", 1, NULL, &tag) < 0 ||
        tfb_http_param_i64(req, resp, "step", 1, 0, INT64_MIN, INT64_MAX,
                           &step) < 0 ||
        tfb_http_param_double(req, resp, "value", 1, 0, -INFINITY, INFINITY,
                              &value) < 0 ||
        tfb_http_param_i64(req, resp, "k", 0, 5, 1, 1000, &k) < 0)
        return 0;
    if (!isfinite(value))
        return tfb_http_error(resp, 400, "parameter 'value' must be finite");
    run_sel rs;
    if (select_runs(req, resp, tag, &rs) < 0)
        return 0;
    near *c = malloc((rs.n ? rs.n : 1) * sizeof *c);
    if (!c) {
        free(rs.v);
        return tfb_http_error(resp, 500, "out of memory");
    }
    size_t nc = 0;
    for (size_t i = 0; i < rs.n; i++) {
        tfb_series_view v;
        tfb_series_read_begin(rs.v[i].s, &v);
        /* The cursor starts by binary search: the last point at or before
         * step, as the bands take it. */
        size_t lo = 0, hi = v.count;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (v.step[mid] <= step)
                lo = mid + 1;
            else
                hi = mid;
        }
        tfb_sweep_series ss = {v.step, v.value, v.count};
        tfb_sweep_cursor cur = {lo};
        float x;
        size_t at;
        if (tfb_sweep_value_at(&ss, &cur, step, &x, &at) && isfinite(x))
            c[nc++] = (near){fabs((double)x - value), i, v.step[at], x};
        tfb_series_read_end(rs.v[i].s);
    }
    qsort(c, nc, sizeof *c, by_dist);
    tfb_json j;
    tfb_json_init(&j);
    tfb_json_object_begin(&j);
    tfb_json_key(&j, "runs");
    tfb_json_array_begin(&j);
    for (size_t i = 0; i < nc && i < (size_t)k; i++) {
        tfb_json_object_begin(&j);
        tfb_json_key(&j, "run");
        tfb_json_str(&j, tfb_run_name(rs.v[c[i].idx].run));
        tfb_json_key(&j, "step");
        tfb_json_i64(&j, c[i].step);
        tfb_json_key(&j, "value");
        tfb_json_float(&j, c[i].value);
        tfb_json_object_end(&j);
    }
    tfb_json_array_end(&j);
    tfb_json_object_end(&j);
    free(c);
    free(rs.v);
    return tfb_http_json(resp, &j);
}
