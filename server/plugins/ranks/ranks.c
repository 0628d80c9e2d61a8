/*
 * ranks.c - the "Ranks" dashboard: distributed jobs found in the logdir
 * (/data/plugin/ranks/jobs), the job view from the ranks' event files
 * (/data/plugin/ranks/job: per-rank statistics, stragglers, skew, the
 * rank x step matrix, notes), the GPU side from the ranks' traces
 * (/data/plugin/ranks/gpu: HTA's temporal breakdown and comm/compute
 * overlap), and the job's section of `tfboard report`.
 *
 * The report API has sections per run: the job's section is written with
 * its first rank run (lowest rank) among the runs the report covers; the
 * job's other rank runs get one line that points there.
 */
#include <math.h>
#include <regex.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/regex_bound.h"
#include "core/plugin.h"
#include "plugins/ranks/ranks_job.h"
#include "analysis/run_memo.h"
#include "core/report_fmt.h"

/* How long the gpu route waits for its ranks' traces to load (all loads
 * run side by side) before it answers 202 "loading". */
#define ROUTE_WAIT_MS 1000

/* The `job` parameter: the job of that name, or the first job when absent.
 * Sets a 404 answer when there is none. */
static int param_job(const tfb_http_req *req, tfb_http_resp *resp,
                     const tfb_ranks_job *jobs, size_t nj,
                     const tfb_ranks_job **out)
{
    const char *name;
    int rc = tfb_http_param_str(req, resp, "job", 0, NULL, &name);
    if (rc < 0)
        return rc;
    const tfb_ranks_job *jb =
        name ? tfb_ranks_job_find(jobs, nj, name) : (nj ? &jobs[0] : NULL);
    if (!jb) {
        if (name)
            tfb_http_error(resp, 404, "no job '%s' in the logdir", name);
        else
            tfb_http_error(resp, 404, "no distributed job in the logdir");
        return TFB_ENOENT;
    }
    *out = jb;
    return 0;
}

static int route_jobs(const tfb_http_req *req, tfb_http_resp *resp)
{
    tfb_ranks_job *jobs;
    size_t nj;
    int rc = tfb_ranks_find_jobs(tfb_server_store(req), &jobs, &nj);
    if (rc < 0)
        return rc;
    tfb_json j;
    tfb_json_init(&j);
    tfb_ranks_jobs_json(&j, jobs, nj);
    tfb_ranks_jobs_free(jobs, nj);
    return tfb_http_json(resp, &j);
}

/* The job view's answers are kept in the run-memo cache
 * (analysis/run_memo.h, under the job's first run): a page on
 * auto-reload asks for the same view every few seconds, and a 256-rank job
 * costs more than a second to analyse. The key holds what the answer
 * depends on - the store's points and bytes read as the loader last
 * published them (they change whenever data arrives or a run is reset),
 * the job's composition and the parameters - so an answer is at most one
 * progress update old. */
static char *cache_key(tfb_store *s, const tfb_ranks_job *jb, int64_t cols,
                       int metric)
{
    tfb_load_progress p;
    tfb_store_progress(s, &p);
    size_t need = strlen(jb->name) + 160;
    for (size_t i = 0; i < jb->n_members; i++)
        need += strlen(jb->members[i].run_name) + 1;
    char *k = malloc(need);
    if (!k)
        return NULL;
    size_t w = (size_t)snprintf(
        k, need, "%llu|%llu|%zu|%lld|%d|%s", (unsigned long long)p.points,
        (unsigned long long)p.bytes_done,
        jb->n_empty_dirs, (long long)cols,
        metric, jb->name);
    for (size_t i = 0; i < jb->n_members && w < need; i++)
        w += (size_t)snprintf(k + w, need - w, "|%s",
                              jb->members[i].run_name);
    return k;
}

static int route_job(const tfb_http_req *req, tfb_http_resp *resp)
{
    int64_t cols;
    const char *metric_s;
    int rc = tfb_http_param_i64(req, resp, "columns", 0, 500, 1, 5000, &cols);
    if (rc < 0)
        return rc;
    rc = tfb_http_param_str(req, resp, "metric", 0, "step_ms", &metric_s);
    if (rc < 0)
        return rc;
    int metric = tfb_ranks_metric_parse(metric_s);
    if (metric < 0)
        return tfb_http_error(resp, 400, "metric must be step_ms, input_ms, "
                                         "comm_ms or compute_ms");
    tfb_ranks_job *jobs;
    size_t nj;
    rc = tfb_ranks_find_jobs(tfb_server_store(req), &jobs, &nj);
    if (rc < 0)
        return rc;
    const tfb_ranks_job *jb;
    rc = param_job(req, resp, jobs, nj, &jb);
    tfb_ranks_result *res = NULL;
    tfb_ranks_opts o;
    tfb_ranks_opts_init(&o);
    o.max_columns = (size_t)cols;
    char *key = NULL, *body = NULL;
    size_t len = 0;
    tfb_store *store = tfb_server_store(req);
    tfb_run *first = rc == 0 && jb->n_members ? jb->members[0].run : NULL;
    if (first && (key = cache_key(store, jb, cols, metric)) != NULL &&
        tfb_run_memo_get(store, first, key, &body, &len) == 1) {
        rc = tfb_http_body_take(resp, 200, "application/json; charset=utf-8",
                                body, len);
        goto done;
    }
    if (rc == 0)
        rc = tfb_ranks_job_analyze(jb, &o, &res);
    if (rc == 0) {
        tfb_json j;
        tfb_json_init(&j);
        tfb_ranks_job_json(&j, jb, res, &o, (tfb_ranks_metric)metric, 1);
        /* Each rank's MFU, energy and bus bandwidth, beside the table's
         * other figures. */
        int eff_loading = 0;
        if (tfb_json_object_reopen(&j) == 0) {
            rc = tfb_ranks_eff_json(&j, store, jb, &eff_loading);
            tfb_json_object_end(&j);
        }
        body = rc == 0 ? tfb_json_take(&j, &len) : NULL;
        if (rc < 0)
            tfb_json_free(&j);
        if (!body) {
            rc = tfb_http_error(resp, 500, "out of memory");
        } else {
            /* Not kept while a rank's trace loads: its bus bandwidth is
             * still null, and the store's progress would not change. */
            if (key && !eff_loading)
                tfb_run_memo_put(store, first, key, body, len);
            rc = tfb_http_body_take(resp, 200,
                                    "application/json; charset=utf-8", body,
                                    len);
        }
    }
done:
    free(key);
    tfb_ranks_result_free(res);
    tfb_ranks_jobs_free(jobs, nj);
    return rc;
}

static int route_gpu(const tfb_http_req *req, tfb_http_resp *resp)
{
    tfb_store *s = tfb_server_store(req);
    tfb_ranks_job *jobs;
    size_t nj;
    int rc = tfb_ranks_find_jobs(s, &jobs, &nj);
    if (rc < 0)
        return rc;
    const tfb_ranks_job *jb;
    const char *ws;
    tfb_trace_window_mode mode = TFB_TRACE_WINDOW_ALL;
    rc = param_job(req, resp, jobs, nj, &jb);
    if (rc == 0)
        rc = tfb_http_param_str(req, resp, "window", 0, "all", &ws);
    if (rc == 0 && tfb_trace_window_parse(ws, &mode) < 0)
        rc = tfb_http_error(resp, 400,
                            "window must be all, steps or steps_but_last");
    if (rc == 0) {
        tfb_ranks_gpu_view g;
        rc = tfb_ranks_job_gpu(s, jb, ROUTE_WAIT_MS, mode, &g);
        if (rc == 0 && g.n_loading) {
            /* As the gpu plugin's routes: ask again (the page polls). */
            char body[160];
            int len = snprintf(body, sizeof body,
                               "{\"loading\":true,\"progress\":%.3f,"
                               "\"ranks_loading\":%zu,\"ranks\":%zu}",
                               g.progress, g.n_loading, g.n_ranks);
            tfb_ranks_gpu_view_free(&g);
            rc = tfb_http_text(resp, 202, "application/json", body,
                               (size_t)len);
        } else if (rc == 0) {
            tfb_json j;
            tfb_json_init(&j);
            tfb_ranks_gpu_json(&j, jb, &g);
            tfb_ranks_gpu_view_free(&g);
            rc = tfb_http_json(resp, &j);
        }
    }
    tfb_ranks_jobs_free(jobs, nj);
    return rc;
}

/* ---- report ---------------------------------------------------------------- */

/* The member whose run carries the job's section: the first (lowest rank)
 * among the runs the report covers. NULL when none is covered. */
static const tfb_ranks_member *section_member(const tfb_ranks_job *jb,
                                              const tfb_report_opts *o)
{
    if (!o || !o->run_regex)
        return jb->n_members ? &jb->members[0] : NULL;
    regex_t re;
    if (tfb_regex_compile(&re, o->run_regex, REG_EXTENDED | REG_NOSUB, NULL,
                          0) < 0)
        return jb->n_members ? &jb->members[0] : NULL;
    const tfb_ranks_member *m = NULL;
    for (size_t i = 0; i < jb->n_members && !m; i++)
        if (regexec(&re, jb->members[i].run_name, 0, NULL, 0) == 0)
            m = &jb->members[i];
    regfree(&re);
    return m;
}

typedef struct report_ctx {
    tfb_ranks_job *jobs;
    size_t nj;
    const tfb_ranks_job *job;
    const tfb_ranks_member *self, *section;
    /* The job's figures (report_analyze). */
    tfb_ranks_opts opts;
    tfb_ranks_result *res;
    tfb_ranks_gpu_view gpu;
} report_ctx;

/* 1 when run r is a rank of a job (ctx filled), 0 when not, or an error. */
static int report_begin(tfb_store *s, tfb_run *r, const tfb_report_opts *o,
                        report_ctx *c)
{
    memset(c, 0, sizeof *c);
    if (!tfb_ranks_run_is_rank(r))
        return 0;
    int rc = tfb_ranks_find_jobs(s, &c->jobs, &c->nj);
    if (rc < 0)
        return rc;
    c->job = tfb_ranks_job_of_run(c->jobs, c->nj, r);
    if (!c->job) {
        tfb_ranks_jobs_free(c->jobs, c->nj);
        c->jobs = NULL;
        return 0;
    }
    for (size_t i = 0; i < c->job->n_members; i++)
        if (c->job->members[i].run == r)
            c->self = &c->job->members[i];
    c->section = section_member(c->job, o);
    tfb_ranks_opts_init(&c->opts);
    return 1;
}

/* The job's analysis and, with_gpu, its GPU view: what its section
 * writes. */
static int report_analyze(tfb_store *s, report_ctx *c, int with_gpu)
{
    int rc = tfb_ranks_job_analyze(c->job, &c->opts, &c->res);
    return rc || !with_gpu ? rc : tfb_ranks_job_gpu(s, c->job, -1, TFB_TRACE_WINDOW_ALL,
                                              &c->gpu);
}

static void report_end(report_ctx *c)
{
    tfb_ranks_gpu_view_free(&c->gpu);
    tfb_ranks_result_free(c->res);
    tfb_ranks_jobs_free(c->jobs, c->nj);
}

static void put_ms(FILE *f, double v)
{
    if (isfinite(v))
        fprintf(f, "%.4g", v);
    else
        fputs("-", f);
}

static void put_pct(FILE *f, double v)
{
    if (isfinite(v))
        /* + 0.0 turns a -0.0 (a rank a hair faster) into 0.0 */
        fprintf(f, "%.1f%%", fabs(v) < 0.0005 ? 0.0 : 100.0 * v + 0.0);
    else
        fputs("-", f);
}

static void job_text(FILE *f, const tfb_ranks_job *jb,
                     const tfb_ranks_result *res, const tfb_ranks_opts *o,
                     const tfb_ranks_gpu_view *g, int md)
{
    fputs(md ? "\n### Distributed job " : "  distributed job ", f);
    tfb_report_put_str(f, jb->name, md);
    /* The directories' world size, else the traces' (distributedInfo). */
    const char *backend = NULL;
    int64_t tws = tfb_ranks_gpu_world_size(g, &backend);
    if (res->world_size > 0 || tws < 0)
        fprintf(f, md ? "\n\n%zu ranks (world size %d), %zu steps.\n\n"
                      : ": %zu ranks (world size %d), %zu steps\n",
                res->n_ranks, (int)res->world_size, res->n_steps);
    else {
        fprintf(f, md ? "\n\n%zu ranks (world size %lld from the traces"
                      : ": %zu ranks (world size %lld from the traces",
                res->n_ranks, (long long)tws);
        if (backend) {
            fputs(", backend ", f);
            tfb_report_put_str(f, backend, md);
        }
        fprintf(f, md ? "), %zu steps.\n\n" : "), %zu steps\n",
                res->n_steps);
    }
    if (res->n_stragglers == 0) {
        fprintf(f, md ? "No straggler (rule: own time more than %.0f%% above "
                        "the median rank in at least %.0f%% of the steps).\n"
                      : "    no straggler (rule: own time more than %.0f%% "
                        "above the median rank in at least %.0f%% of the "
                        "steps)\n",
                100.0 * o->straggler_excess, 100.0 * o->straggler_share);
    }
    for (size_t k = 0; k < res->n_stragglers; k++) {
        char sentence[256];
        tfb_ranks_straggler_sentence(res, k, sentence, sizeof sentence);
        fputs(md ? "- **Straggler**: " : "    straggler: ", f);
        fputs(sentence, f);
        fputc('\n', f);
    }
    if (res->skew.n)
        fprintf(f, md ? "%sSkew (last minus first rank to finish a step): "
                        "p50 %.4g ms, p90 %.4g ms, max %.4g ms at step "
                        "%lld.\n\n"
                      : "%s    skew: p50 %.4g ms, p90 %.4g ms, max %.4g ms "
                        "at step %lld\n",
                md && res->n_stragglers ? "\n" : "", res->skew.p50,
                res->skew.p90, res->skew_max_ms,
                (long long)res->skew_max_step);
    else if (md)
        fputc('\n', f);
    if (md)
        fputs("| rank | steps | step p50 ms | step p90 ms | input ms | "
              "comm ms | compute p50 ms | slowdown | straggler |\n"
              "| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n",
              f);
    else
        fprintf(f, "    %-6s %7s %11s %11s %9s %9s %11s %9s\n", "rank",
                "steps", "step p50", "step p90", "input", "comm",
                "compute p50", "slowdown");
    for (size_t i = 0; i < res->n_ranks; i++) {
        const tfb_ranks_rank *rk = &res->ranks[i];
        if (md) {
            fprintf(f, "| %d | %zu | ", (int)rk->rank, rk->n_steps);
            put_ms(f, rk->step_ms.p50);
            fputs(" | ", f);
            put_ms(f, rk->step_ms.p90);
            fputs(" | ", f);
            put_ms(f, rk->input_ms.mean);
            fputs(" | ", f);
            put_ms(f, rk->comm_ms.mean);
            fputs(" | ", f);
            put_ms(f, rk->compute_ms.p50);
            fputs(" | ", f);
            put_pct(f, rk->slowdown);
            fprintf(f, " | %s |\n", rk->straggler ? "yes" : "");
        } else {
            fprintf(f, "    %-6d %7zu %11.4g %11.4g %9.4g %9.4g %11.4g ",
                    (int)rk->rank, rk->n_steps, rk->step_ms.p50,
                    rk->step_ms.p90, rk->input_ms.mean, rk->comm_ms.mean,
                    rk->compute_ms.p50);
            put_pct(f, rk->slowdown);
            fputs(rk->straggler ? "  straggler\n" : "\n", f);
        }
    }
    if (g && g->n_traced) {
        fputs(md ? "\nGPU (from the ranks' traces; time shares of the trace "
                   "span):\n\n| rank | compute | communication | memory | "
                   "idle | busy | comm/compute overlap |\n| --- | --- | --- "
                   "| --- | --- | --- | --- |\n"
                 : "    gpu (shares of the trace span): rank, compute, "
                   "communication, memory, idle, busy, overlap\n",
              f);
        for (size_t i = 0; i < g->n_ranks; i++) {
            const tfb_ranks_gpu_rank *r = &g->ranks[i];
            if (!r->has_trace)
                continue;
            double tot = (double)(r->gpu.compute_ns + r->gpu.comm_ns +
                                  r->gpu.memory_ns + r->gpu.idle_ns);
            double sh[4] = {NAN, NAN, NAN, NAN};
            if (tot > 0) {
                sh[0] = (double)r->gpu.compute_ns / tot;
                sh[1] = (double)r->gpu.comm_ns / tot;
                sh[2] = (double)r->gpu.memory_ns / tot;
                sh[3] = (double)r->gpu.idle_ns / tot;
            }
            fprintf(f, md ? "| %d |" : "      %d", (int)r->rank);
            for (int k = 0; k < 4; k++) {
                fputc(' ', f);
                put_pct(f, sh[k]);
                if (md)
                    fputs(" |", f);
            }
            fputc(' ', f);
            if (isfinite(r->gpu.busy_pct))
                fprintf(f, "%.1f%%", r->gpu.busy_pct);
            else
                fputc('-', f);
            fputs(md ? " | " : " ", f);
            put_pct(f, r->gpu.overlap);
            fputs(md ? " |\n" : "\n", f);
        }
        fputs(md ? "\nJob comm/compute overlap: " : "    job overlap: ", f);
        put_pct(f, g->overlap);
        fputc('\n', f);
    }
    for (size_t i = 0; g && i < g->n_ranks; i++)
        if (g->ranks[i].state == TFB_RANKS_TRACE_FAILED) {
            fprintf(f, md ? "\nRank %d: cannot read the GPU trace: "
                          : "    rank %d: cannot read the GPU trace: ",
                    (int)g->ranks[i].rank);
            tfb_report_put_str(f, g->ranks[i].error, md);
            fputc('\n', f);
        }
    size_t nn = res->n_notes + jb->n_empty_dirs;
    if (nn)
        fputs(md ? "\nNotes:\n\n" : "    notes:\n", f);
    for (size_t i = 0; i < nn; i++) {
        char buf[512];
        const char *t = buf;
        if (i < res->n_notes)
            t = res->notes[i].text;
        else
            tfb_ranks_empty_dir_note(jb, i - res->n_notes, buf, sizeof buf);
        fputs(md ? "- " : "      - ", f);
        tfb_report_put_str(f, t, md);
        fputc('\n', f);
    }
}

static int report_text(FILE *f, tfb_store *s, tfb_run *r,
                       const tfb_report_opts *o, int markdown)
{
    report_ctx c;
    int rc = report_begin(s, r, o, &c);
    if (rc <= 0)
        return rc;
    if (c.section && c.section->run != r) {
        fprintf(f, markdown ? "\n### Distributed job\n\nRank %d of job "
                            : "  distributed job: rank %d of job ",
                (int)(c.self ? c.self->rank : -1));
        tfb_report_put_str(f, c.job->name, markdown);
        fputs(markdown ? "; the job's section is under run "
                       : "; the job's section is under run ",
              f);
        tfb_report_put_str(f, c.section->run_name, markdown);
        fputs(markdown ? ".\n" : "\n", f);
        rc = 0;
    } else if ((rc = report_analyze(s, &c, 1)) == 0) {
        job_text(f, c.job, c.res, &c.opts, &c.gpu, markdown);
    }
    report_end(&c);
    return rc;
}

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median over the ranks other than `skip` of a figure picked by `which`
 * (0: compute p50, 1: input mean), leaving out NaN; NaN when none. */
static double others_median(const tfb_ranks_result *res, size_t skip,
                            int which)
{
    double *v = malloc(res->n_ranks * sizeof *v);
    if (!v)
        return NAN;
    size_t n = 0;
    for (size_t i = 0; i < res->n_ranks; i++) {
        double x = which ? res->ranks[i].input_ms.mean
                         : res->ranks[i].compute_ms.p50;
        if (i != skip && !isnan(x))
            v[n++] = x;
    }
    qsort(v, n, sizeof *v, cmp_dbl);
    double m = n == 0 ? NAN
               : n % 2 ? v[n / 2]
                       : (v[n / 2 - 1] + v[n / 2]) / 2;
    free(v);
    return m;
}

/* What the straggler's extra own time is made of, against the median of
 * the other ranks: its compute (a slower device, a bigger shard) or its
 * input (its own loader). A rank slow because of its compute gets its
 * batches in time; that is why it is only the straggler. "" when the job
 * logs no compute or input figures. */
static void straggler_cause(const tfb_ranks_result *res, size_t k, char *out,
                            size_t len)
{
    const tfb_ranks_rank *rr = &res->ranks[k];
    double c = rr->compute_ms.p50, co = others_median(res, k, 0);
    double in = rr->input_ms.mean, io = others_median(res, k, 1);
    out[0] = 0;
    if (isnan(c) || isnan(co) || isnan(in) || isnan(io))
        return;
    if (in - io > c - co)
        snprintf(out, len,
                 "; slow in its input (wait %.3g ms a step against %.3g ms "
                 "on the other ranks), not its compute (%.3g ms against "
                 "%.3g ms)",
                 in, io, c, co);
    else
        snprintf(out, len,
                 "; slow in its compute (%.3g ms a step against %.3g ms on "
                 "the other ranks), not its input (wait %.3g ms against "
                 "%.3g ms)",
                 c, co, in, io);
}

/* A straggler, on its own run, with what makes it slow. */
static int report_findings(tfb_store *s, tfb_run *r, const tfb_report_opts *o,
                           void (*emit)(void *, double, const char *),
                           void *user)
{
    report_ctx c;
    int rc = report_begin(s, r, o, &c);
    if (rc <= 0)
        return rc;
    rc = c.self ? report_analyze(s, &c, 0) : 0;
    const tfb_ranks_result *res = c.res;
    for (size_t k = 0; rc == 0 && res && k < res->n_stragglers; k++) {
        if (res->ranks[res->stragglers[k]].rank != c.self->rank)
            continue;
        char sentence[256], cause[192], line[576];
        tfb_ranks_straggler_sentence(res, k, sentence, sizeof sentence);
        straggler_cause(res, res->stragglers[k], cause, sizeof cause);
        snprintf(line, sizeof line, "straggler: %s%s (job %.*s)", sentence,
                 cause, (int)(c.job->name_len > 64 ? 64 : c.job->name_len),
                 c.job->name);
        emit(user, 90.0, line);
    }
    report_end(&c);
    return rc;
}

/* On the job's section run: "ranks", the job object of
 * /data/plugin/ranks/job without the matrix and the per-step skew, and
 * "ranks_gpu", the /data/plugin/ranks/gpu object (null without traces).
 * On its other ranks: "ranks": {"job", "rank", "section_run"}. */
static int report_json(tfb_json *j, tfb_store *s, tfb_run *r,
                       const tfb_report_opts *o)
{
    report_ctx c;
    int rc = report_begin(s, r, o, &c);
    if (rc <= 0)
        return rc;
    tfb_json_key(j, "ranks");
    if (c.section && c.section->run != r) {
        tfb_json_object_begin(j);
        tfb_json_key(j, "job");
        tfb_json_strn(j, c.job->name, c.job->name_len);
        tfb_json_key(j, "rank");
        tfb_json_i64(j, c.self ? c.self->rank : -1);
        tfb_json_key(j, "section_run");
        tfb_json_str(j, c.section->run_name);
        tfb_json_object_end(j);
        rc = 0;
    } else if ((rc = report_analyze(s, &c, 1)) == 0) {
        tfb_ranks_job_json(j, c.job, c.res, &c.opts, TFB_RANKS_M_STEP, 0);
        tfb_json_key(j, "ranks_gpu");
        if (c.gpu.n_traced || c.gpu.n_failed)
            tfb_ranks_gpu_json(j, c.job, &c.gpu);
        else
            tfb_json_null(j);
    } else {
        tfb_json_null(j);
    }
    report_end(&c);
    return rc;
}

static int has_ranks(tfb_store *s, tfb_run *r)
{
    (void)s;
    return tfb_ranks_run_is_rank(r);
}

static const tfb_plugin_route routes[] = {
    {"jobs", route_jobs},
    {"job", route_job},
    {"gpu", route_gpu},
};

/* Its web files (page.js first), embedded from this folder by the
 * build (server/plugins/meson.build). */
extern const tfb_asset tfb_ranks_assets[];

const tfb_plugin tfb_plugin_ranks = {
    TFB_PLUGIN_ABI,
    .name = "ranks",
    .title = "Ranks",
    .module = "js/pages/ranks.js",
    .assets = tfb_ranks_assets,
    .routes = routes,
    .n_routes = sizeof routes / sizeof routes[0],
    .has_data = has_ranks,
    .report_text = report_text,
    .report_json = report_json,
    .report_findings = report_findings,
};
