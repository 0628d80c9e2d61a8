/*
 * efficiency.c - the Efficiency dashboard: how much of the hardware a run
 * uses (throughput, MFU, goodput, energy) and the bandwidth its
 * collectives reach against the link (/data/plugin/efficiency/{runs,
 * steps,collectives,job_collectives}), its flags --peak_tflops,
 * --grid_gco2_per_kwh and --link_gbps, and its report section. The
 * analyses are below the plugins (analysis/efficiency.h,
 * analysis/comm_bandwidth.h); this file only renders them.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/comm_bandwidth.h"
#include "analysis/efficiency.h"
#include "analysis/ranks_jobs.h"
#include "base/errors.h"
#include "core/plugin.h"
#include "core/report_fmt.h"
#include "trace/trace.h"

/* The bounds of the answers (API.md "Bounds"). */
/* Runs in one /runs answer: each costs a pass over its perf series, and a
 * table or a stacked bar of more runs is read by nobody; the rest are
 * counted in "left_out". */
#define EFF_RUNS_MAX 500
/* Points of each per-step series in one /steps answer: a chart is a few
 * hundred pixels wide; a longer run is thinned to every k-th step
 * ("stride" says k), never averaged (a step's own figures stay exact). */
#define EFF_STEP_POINTS_MAX 2000
/* Rows of one /job_collectives answer (ranks x collectives x size
 * buckets): a 1,024-rank job with 10 kinds in 4 buckets each fits. */
#define EFF_JOB_ROWS_MAX 50000

/* How long a collectives route waits for the runs' traces to load before
 * it answers 202 "loading" (the page asks again): tfb_coll_run_rows waits
 * for a trace, and a request must not hold an HTTP thread for every
 * rank's load in turn. Each run's load is started at once. */
#define EFF_TRACE_WAIT_MS 200

/* The flags (set before any thread starts, read-only after). */
static double opt_peak_tflops;       /* 0: from perf/work or the table */
static double opt_grid_gco2_per_kwh; /* 0: no CO2 figure */
static double opt_link_gbps;         /* 0: from the device's table entry */

static const tfb_option options[] = {
    {.name = "peak_tflops", .arg = "X", .type = TFB_OPT_DOUBLE,
     .help = "the device's dense peak TFLOP/s for MFU, over the one the\n"
             "run logged or the table's (0: those)",
     .def = "0", .min = 0, .max = 1e6, .dest = &opt_peak_tflops},
    {.name = "grid_gco2_per_kwh", .arg = "X", .type = TFB_OPT_DOUBLE,
     .help = "grams of CO2 per kWh of the grid, for the runs' CO2 figure\n"
             "(0: none)",
     .def = "0", .min = 0, .max = 1e5, .dest = &opt_grid_gco2_per_kwh},
    {.name = "link_gbps", .arg = "X", .type = TFB_OPT_DOUBLE,
     .help = "the link's peak GB/s per GPU that collectives' bus bandwidth\n"
             "is compared with (0: the device table's NVLink/PCIe figure)",
     .def = "0", .min = 0, .max = 1e6, .dest = &opt_link_gbps},
};

static void eff_opts(tfb_eff_opts *o)
{
    o->peak_tflops = opt_peak_tflops;
    o->grid_gco2_per_kwh = opt_grid_gco2_per_kwh;
}

/* ---- JSON ----------------------------------------------------------- */

static const tfb_json_field goodput_fields[] = {
    TFB_JSON_FIELD(tfb_eff_goodput, wall_s, NUM),
    TFB_JSON_FIELD(tfb_eff_goodput, productive_s, NUM),
    TFB_JSON_FIELD(tfb_eff_goodput, input_s, NUM),
    TFB_JSON_FIELD(tfb_eff_goodput, comm_s, NUM),
    TFB_JSON_FIELD(tfb_eff_goodput, startup_s, NUM),
    TFB_JSON_FIELD(tfb_eff_goodput, gap_s, NUM),
    TFB_JSON_FIELD(tfb_eff_goodput, checkpoint_s, NUM),
    TFB_JSON_FIELD(tfb_eff_goodput, goodput, NUM),
};

static const tfb_json_field run_fields[] = {
    TFB_JSON_FIELD(tfb_eff_run, steps, I64),
    TFB_JSON_FIELD(tfb_eff_run, samples_per_s, NUM),
    TFB_JSON_FIELD(tfb_eff_run, tokens_per_s, NUM),
    TFB_JSON_FIELD(tfb_eff_run, tflops, NUM),
    TFB_JSON_FIELD(tfb_eff_run, mfu_pct, NUM),
    TFB_JSON_FIELD(tfb_eff_run, peak_tflops, NUM),
    TFB_JSON_FIELD(tfb_eff_run, peak_source, CHARS),
    TFB_JSON_FIELD(tfb_eff_run, device, TEXT),
    TFB_JSON_FIELD(tfb_eff_run, dtype, CHARS),
    TFB_JSON_FIELD(tfb_eff_run, dtype_assumed, BOOL),
    TFB_JSON_FIELD(tfb_eff_run, flops_estimated, BOOL),
    TFB_JSON_FIELD_OBJ("goodput", tfb_eff_run, goodput, goodput_fields),
    TFB_JSON_FIELD(tfb_eff_run, energy_j, NUM),
    TFB_JSON_FIELD(tfb_eff_run, energy_wh, NUM),
    TFB_JSON_FIELD(tfb_eff_run, gco2, NUM),
    TFB_JSON_FIELD(tfb_eff_run, j_per_sample, NUM),
    TFB_JSON_FIELD(tfb_eff_run, j_per_token, NUM),
    TFB_JSON_FIELD(tfb_eff_run, energy_source, TEXT),
};

static const tfb_json_field coll_fields[] = {
    TFB_JSON_FIELD(tfb_coll_row, rank, INT),
    TFB_JSON_FIELD(tfb_coll_row, bucket_lo, U64),
    TFB_JSON_FIELD(tfb_coll_row, count, U64),
    TFB_JSON_FIELD(tfb_coll_row, bytes, U64),
    TFB_JSON_FIELD(tfb_coll_row, seconds, NUM),
    TFB_JSON_FIELD(tfb_coll_row, algbw_gbps, NUM),
    TFB_JSON_FIELD(tfb_coll_row, busbw_gbps, NUM),
    TFB_JSON_FIELD(tfb_coll_row, link_gbps, NUM),
    TFB_JSON_FIELD(tfb_coll_row, link_pct, NUM),
    TFB_JSON_FIELD(tfb_coll_row, below, BOOL),
    TFB_JSON_FIELD(tfb_coll_row, source, CHARS),
};

static void coll_row_json(tfb_json *j, const char *run,
                          const tfb_coll_row *c)
{
    tfb_json_object_begin(j);
    if (run) {
        tfb_json_key(j, "run");
        tfb_json_str(j, run);
    }
    tfb_json_key(j, "kind");
    tfb_json_str(j, tfb_coll_kind_name(c->kind));
    TFB_JSON_FIELDS(j, c, coll_fields);
    tfb_json_object_end(j);
}

/* ---- routes --------------------------------------------------------- */

/* A run shows on the dashboard when it has step timing or perf scalars
 * (what tfb_eff_run_compute needs). */
static int has_eff(tfb_store *s, tfb_run *r)
{
    (void)s;
    return tfb_run_find_series(r, TFB_SERIES_SCALAR, TFB_TAG_STEP_MS) ||
           tfb_run_find_series(r, TFB_SERIES_SCALAR, "perf/tflops") ||
           tfb_run_find_series(r, TFB_SERIES_SCALAR, "perf/tokens_per_s") ||
           tfb_run_find_series(r, TFB_SERIES_SCALAR, "perf/samples_per_s");
}

static int route_runs(const tfb_http_req *req, tfb_http_resp *resp)
{
    tfb_store *s = tfb_server_store(req);
    tfb_run **runs;
    size_t n;
    int rc = tfb_store_runs(s, &runs, &n);
    if (rc < 0)
        return rc;
    tfb_eff_opts o;
    eff_opts(&o);
    tfb_json j;
    tfb_json_init(&j);
    tfb_json_object_begin(&j);
    tfb_json_key(&j, "grid_gco2_per_kwh");
    tfb_json_double(&j, opt_grid_gco2_per_kwh);
    tfb_json_key(&j, "runs");
    tfb_json_array_begin(&j);
    size_t shown = 0, left_out = 0;
    for (size_t i = 0; i < n; i++) {
        if (!has_eff(s, runs[i]))
            continue;
        if (shown == EFF_RUNS_MAX) {
            left_out++;
            continue;
        }
        tfb_eff_run e;
        int erc = tfb_eff_run_compute(runs[i], &o, &e);
        if (erc == TFB_ENOENT)
            continue;
        if (erc < 0) {
            rc = erc;
            break;
        }
        tfb_json_object_begin(&j);
        tfb_json_key(&j, "run");
        tfb_json_str(&j, tfb_run_name(runs[i]));
        TFB_JSON_FIELDS(&j, &e, run_fields);
        tfb_json_object_end(&j);
        shown++;
    }
    free(runs);
    tfb_json_array_end(&j);
    tfb_json_key(&j, "left_out");
    tfb_json_u64(&j, left_out);
    tfb_json_key(&j, "runs_max");
    tfb_json_i64(&j, EFF_RUNS_MAX);
    tfb_json_object_end(&j);
    if (rc < 0) {
        tfb_json_free(&j);
        return rc;
    }
    return tfb_http_json(resp, &j);
}

/* The per-step series of /steps, in column order. */
enum { COL_MFU, COL_SAMPLES, COL_TOKENS, COL_TFLOPS, COL_ENERGY, COL_JTOK,
       N_COLS };
static const char *const col_names[N_COLS] = {
    "mfu_pct", "samples_per_s", "tokens_per_s", "tflops", "energy_j",
    "j_per_token"};
static const char *const col_tags[N_COLS] = {
    NULL, "perf/samples_per_s", "perf/tokens_per_s", "perf/tflops",
    "perf/energy_j", "perf/j_per_token"};

typedef struct step_cols {
    tfb_step_value *v[N_COLS];
    size_t n[N_COLS];
} step_cols;

static void step_cols_free(step_cols *c)
{
    for (int k = 0; k < N_COLS; k++)
        free(c->v[k]);
}

/* The next step of the union of the columns at positions at[], or
 * INT64_MAX when every column is spent. */
static int64_t next_step(const step_cols *c, const size_t *at)
{
    int64_t m = INT64_MAX;
    for (int k = 0; k < N_COLS; k++)
        if (at[k] < c->n[k] && c->v[k][at[k]].step < m)
            m = c->v[k][at[k]].step;
    return m;
}

/* Walks the union of the steps: calls row() for every stride-th one
 * (when row is not NULL) and returns how many steps there are. */
static size_t walk_steps(const step_cols *c, size_t stride, tfb_json *j)
{
    size_t at[N_COLS] = {0}, i = 0;
    for (int64_t st; (st = next_step(c, at)) != INT64_MAX; i++) {
        int emit = j && i % stride == 0;
        if (emit) {
            tfb_json_array_begin(j);
            tfb_json_i64(j, st);
        }
        for (int k = 0; k < N_COLS; k++) {
            int here = at[k] < c->n[k] && c->v[k][at[k]].step == st;
            if (emit) {
                double v = here ? c->v[k][at[k]].v : NAN;
                if (isfinite(v))
                    tfb_json_double(j, v);
                else
                    tfb_json_null(j);
            }
            if (here)
                at[k]++;
        }
        if (emit)
            tfb_json_array_end(j);
    }
    return i;
}

static int route_steps(const tfb_http_req *req, tfb_http_resp *resp)
{
    tfb_run *run;
    int rc = tfb_http_param_run(req, resp, &run);
    if (rc < 0)
        return rc;
    tfb_eff_opts o;
    eff_opts(&o);
    step_cols c;
    memset(&c, 0, sizeof c);
    rc = tfb_eff_mfu_series(run, &o, &c.v[COL_MFU], &c.n[COL_MFU]);
    for (int k = 1; k < N_COLS && rc == 0; k++)
        rc = tfb_series_by_step(
            tfb_run_find_series(run, TFB_SERIES_SCALAR, col_tags[k]),
            &c.v[k], &c.n[k]);
    if (rc < 0) {
        step_cols_free(&c);
        return rc;
    }
    size_t total = walk_steps(&c, 1, NULL);
    size_t stride = total > EFF_STEP_POINTS_MAX
                        ? (total + EFF_STEP_POINTS_MAX - 1) /
                              EFF_STEP_POINTS_MAX
                        : 1;
    tfb_json j;
    tfb_json_init(&j);
    tfb_json_object_begin(&j);
    tfb_json_key(&j, "run");
    tfb_json_str(&j, tfb_run_name(run));
    tfb_json_key(&j, "columns");
    tfb_json_array_begin(&j);
    tfb_json_str(&j, "step");
    for (int k = 0; k < N_COLS; k++)
        tfb_json_str(&j, col_names[k]);
    tfb_json_array_end(&j);
    tfb_json_key(&j, "peak_known");
    tfb_json_bool(&j, c.n[COL_MFU] > 0);
    tfb_json_key(&j, "total_steps");
    tfb_json_u64(&j, total);
    tfb_json_key(&j, "stride");
    tfb_json_u64(&j, stride);
    tfb_json_key(&j, "steps");
    tfb_json_array_begin(&j);
    walk_steps(&c, stride, &j);
    tfb_json_array_end(&j);
    tfb_json_object_end(&j);
    step_cols_free(&c);
    return tfb_http_json(resp, &j);
}

/* Starts the trace load of each of the n runs, waits at most
 * EFF_TRACE_WAIT_MS in all, and answers 202 {"loading": true, "progress",
 * "runs_loading", "runs"} when some are still loading: returns 1 then, 0
 * when every trace is ready, absent or failed, or a negative code. */
static int answer_loading(tfb_store *s, tfb_run *const *runs, size_t n,
                          tfb_http_resp *resp)
{
    size_t loading = 0;
    double progress = 0;
    for (int pass = 0; pass < 2; pass++) {
        loading = 0;
        progress = 0;
        for (size_t i = 0; i < n; i++) {
            tfb_trace *tr = NULL;
            tfb_trace_status st;
            /* the first pass only starts the loads; the second waits */
            int rc = tfb_trace_get(s, runs[i], pass ? EFF_TRACE_WAIT_MS : 0,
                                   &tr, &st);
            if (rc < 0)
                return rc;
            tfb_trace_release(tr);
            if (st.state == TFB_TRACE_LOADING) {
                loading++;
                progress += st.progress;
            } else {
                progress += 1.0;
            }
        }
        if (!loading)
            return 0;
    }
    char body[160];
    int len = snprintf(body, sizeof body,
                       "{\"loading\":true,\"progress\":%.3f,"
                       "\"runs_loading\":%zu,\"runs\":%zu}",
                       n ? progress / (double)n : 0.0, loading, n);
    int rc = tfb_http_text(resp, 202, "application/json", body, (size_t)len);
    return rc < 0 ? rc : 1;
}

static int route_collectives(const tfb_http_req *req, tfb_http_resp *resp)
{
    tfb_run *run;
    int rc = tfb_http_param_run(req, resp, &run);
    if (rc < 0)
        return rc;
    rc = answer_loading(tfb_server_store(req), &run, 1, resp);
    if (rc != 0)
        return rc < 0 ? rc : 0;
    tfb_coll_row *rows = NULL;
    size_t n = 0;
    rc = tfb_coll_run_rows(run, opt_link_gbps, &rows, &n);
    if (rc < 0)
        return rc;
    tfb_json j;
    tfb_json_init(&j);
    tfb_json_object_begin(&j);
    tfb_json_key(&j, "run");
    tfb_json_str(&j, tfb_run_name(run));
    tfb_json_key(&j, "below_pct");
    tfb_json_double(&j, TFB_COLL_BELOW_PCT);
    tfb_json_key(&j, "rows");
    tfb_json_array_begin(&j);
    for (size_t i = 0; i < n; i++)
        coll_row_json(&j, NULL, &rows[i]);
    tfb_json_array_end(&j);
    tfb_json_object_end(&j);
    free(rows);
    return tfb_http_json(resp, &j);
}

/* Every rank's rows of one job (analysis/ranks_jobs.h names the jobs:
 * `job`, or the first one). */
static int route_job_collectives(const tfb_http_req *req,
                                 tfb_http_resp *resp)
{
    const char *name;
    int rc = tfb_http_param_str(req, resp, "job", 0, NULL, &name);
    if (rc < 0)
        return rc;
    tfb_ranks_job *jobs;
    size_t nj;
    rc = tfb_ranks_find_jobs(tfb_server_store(req), &jobs, &nj);
    if (rc < 0)
        return rc;
    const tfb_ranks_job *jb =
        name ? tfb_ranks_job_find(jobs, nj, name) : (nj ? &jobs[0] : NULL);
    if (!jb) {
        tfb_ranks_jobs_free(jobs, nj);
        if (name)
            return tfb_http_error(resp, 404, "no job '%s' in the logdir",
                                  name);
        return tfb_http_error(resp, 404, "no distributed job in the logdir");
    }
    tfb_run **mruns = malloc((jb->n_members ? jb->n_members : 1) *
                             sizeof *mruns);
    if (!mruns) {
        tfb_ranks_jobs_free(jobs, nj);
        return TFB_ENOMEM;
    }
    for (size_t m = 0; m < jb->n_members; m++)
        mruns[m] = jb->members[m].run;
    rc = answer_loading(tfb_server_store(req), mruns, jb->n_members, resp);
    free(mruns);
    if (rc != 0) {
        tfb_ranks_jobs_free(jobs, nj);
        return rc < 0 ? rc : 0;
    }
    tfb_json j;
    tfb_json_init(&j);
    tfb_json_object_begin(&j);
    tfb_json_key(&j, "job");
    tfb_json_strn(&j, jb->name, jb->name_len);
    tfb_json_key(&j, "below_pct");
    tfb_json_double(&j, TFB_COLL_BELOW_PCT);
    tfb_json_key(&j, "rows");
    tfb_json_array_begin(&j);
    size_t shown = 0, left_out = 0;
    for (size_t m = 0; m < jb->n_members && rc == 0; m++) {
        tfb_coll_row *rows = NULL;
        size_t n = 0;
        rc = tfb_coll_run_rows(jb->members[m].run, opt_link_gbps, &rows, &n);
        for (size_t i = 0; rc == 0 && i < n; i++) {
            if (shown == EFF_JOB_ROWS_MAX) {
                left_out++;
                continue;
            }
            coll_row_json(&j, jb->members[m].run_name, &rows[i]);
            shown++;
        }
        free(rows);
    }
    tfb_json_array_end(&j);
    tfb_json_key(&j, "left_out");
    tfb_json_u64(&j, left_out);
    tfb_json_object_end(&j);
    tfb_ranks_jobs_free(jobs, nj);
    if (rc < 0) {
        tfb_json_free(&j);
        return rc;
    }
    return tfb_http_json(resp, &j);
}

/* ---- the report section --------------------------------------------- */

/* A figure as every report writes numbers (core/report_fmt.h: 4
 * significant digits, "6.554e5"), or `none` for a NaN. buf: TFB_FMT_MAX
 * bytes. */
static const char *fig(char *buf, double v, const char *none)
{
    return isfinite(v) ? tfb_fmt_num(buf, TFB_FMT_MAX, v) : none;
}

static void eff_text(FILE *f, const tfb_eff_run *e, int md)
{
    char a[TFB_FMT_MAX], b[TFB_FMT_MAX], c[TFB_FMT_MAX], d[TFB_FMT_MAX],
        g1[TFB_FMT_MAX], g2[TFB_FMT_MAX], g3[TFB_FMT_MAX], g4[TFB_FMT_MAX];
    const char *ind = md ? "- " : "    ";
    fputs(md ? "\n### Efficiency\n\n" : "  efficiency:\n", f);
    int work = isfinite(e->samples_per_s) || isfinite(e->tokens_per_s) ||
               isfinite(e->tflops);
    if (work)
        fprintf(f, "%sthroughput: %s samples/s, %s tokens/s, %s TFLOP/s "
                   "(%lld steps)\n",
                ind, fig(a, e->samples_per_s, "-"),
                fig(b, e->tokens_per_s, "-"), fig(c, e->tflops, "-"),
                (long long)e->steps);
    else
        fprintf(f, "%sthroughput: no work per step logged (tfb_step_work; "
                   "%lld steps)\n",
                ind, (long long)e->steps);
    fprintf(f, "%sMFU: ", ind);
    if (!isfinite(e->mfu_pct) && !isfinite(e->tflops))
        fputs("no FLOPs per step logged", f);
    else if (isfinite(e->mfu_pct))
        fprintf(f, "%.1f%% of %s TFLOP/s (%s peak, %s%s)", e->mfu_pct,
                fig(a, e->peak_tflops, "-"), e->peak_source, e->dtype,
                e->dtype_assumed ? " assumed" : "");
    else
        fputs("peak unknown", f);
    if (e->device[0]) {
        fputs(" on ", f);
        tfb_report_put_str(f, e->device, md);
    }
    if (e->flops_estimated)
        fputs("; FLOPs from the 6*N*T estimate", f);
    fputc('\n', f);
    const tfb_eff_goodput *g = &e->goodput;
    if (isfinite(g->goodput))
        fprintf(f, "%sgoodput: %.1f%% of %s s wall (input %s s, comm %s s, "
                   "startup %s s, gaps %s s, checkpoint %s s)\n",
                ind, 100.0 * g->goodput, fig(a, g->wall_s, "-"),
                fig(b, g->input_s, "-"), fig(c, g->comm_s, "-"),
                fig(d, g->startup_s, "-"), fig(g1, g->gap_s, "-"),
                fig(g2, g->checkpoint_s, "-"));
    if (isfinite(e->energy_j))
        fprintf(f, "%senergy: %s J (%s Wh%s%s), %s J/sample, %s J/token%s\n",
                ind, fig(a, e->energy_j, "-"), fig(b, e->energy_wh, "-"),
                isfinite(e->gco2) ? ", gCO2 " : "", fig(c, e->gco2, ""),
                fig(g3, e->j_per_sample, "-"), fig(g4, e->j_per_token, "-"),
                strcmp(e->energy_source, "power_x_time") == 0
                    ? " (power x time: no energy counter)"
                    : "");
}

static int report_text(FILE *f, tfb_store *s, tfb_run *r,
                       const tfb_report_opts *ro, int markdown)
{
    (void)ro;
    if (!has_eff(s, r))
        return 0;
    tfb_eff_opts o;
    eff_opts(&o);
    tfb_eff_run e;
    int rc = tfb_eff_run_compute(r, &o, &e);
    if (rc == TFB_ENOENT)
        return 0;
    if (rc < 0)
        return rc;
    eff_text(f, &e, markdown);
    return 0;
}

static int report_json(tfb_json *j, tfb_store *s, tfb_run *r,
                       const tfb_report_opts *ro)
{
    (void)ro;
    tfb_eff_opts o;
    eff_opts(&o);
    tfb_eff_run e;
    int rc = has_eff(s, r) ? tfb_eff_run_compute(r, &o, &e) : TFB_ENOENT;
    if (rc < 0 && rc != TFB_ENOENT)
        return rc;
    tfb_json_key(j, "efficiency");
    if (rc == TFB_ENOENT)
        tfb_json_null(j);
    else
        TFB_JSON_STRUCT(j, &e, run_fields);
    return 0;
}

static const tfb_plugin_route routes[] = {
    {"runs", route_runs},
    {"steps", route_steps},
    {"collectives", route_collectives},
    {"job_collectives", route_job_collectives},
};

/* Its web files (page.js first), embedded from this folder by the
 * build (server/plugins/meson.build). */
extern const tfb_asset tfb_efficiency_assets[];

const tfb_plugin tfb_plugin_efficiency = {
    TFB_PLUGIN_ABI,
    .name = "efficiency",
    .title = "Efficiency",
    .module = "js/pages/efficiency.js",
    .assets = tfb_efficiency_assets,
    .routes = routes,
    .n_routes = sizeof routes / sizeof routes[0],
    .has_data = has_eff,
    .report_text = report_text,
    .report_json = report_json,
    .options = options,
    .n_options = sizeof options / sizeof options[0],
};
