/*
 * pipeline.c - the input-pipeline dashboard: per-step timings, the
 * input-bound verdict and its recommendations
 * (/data/plugin/pipeline/{summary,steps}), and the report section.
 */
#include <stdlib.h>
#include <string.h>

#include "analysis/pipeline_analysis.h"
#include "core/plugin.h"
#include "core/report_fmt.h"

static int route_summary(const tfb_http_req *req, tfb_http_resp *resp)
{
    tfb_run *run;
    int rc = tfb_http_param_run(req, resp, &run);
    if (rc < 0)
        return rc;
    tfb_pipeline_summary s;
    rc = tfb_pipeline_analyze_run(tfb_server_store(req), run, &s);
    if (rc < 0)
        return rc;
    tfb_json j;
    tfb_json_init(&j);
    tfb_pipeline_summary_json(&j, &s);
    return tfb_http_json(resp, &j);
}

static int route_steps(const tfb_http_req *req, tfb_http_resp *resp)
{
    tfb_run *run;
    int rc = tfb_http_param_run(req, resp, &run);
    if (rc < 0)
        return rc;
    tfb_pipeline_step *steps;
    size_t n;
    rc = tfb_pipeline_collect(run, &steps, &n);
    if (rc < 0)
        return rc;
    tfb_json j;
    tfb_json_init(&j);
    tfb_pipeline_steps_json(&j, steps, n);
    free(steps);
    return tfb_http_json(resp, &j);
}

/* The run's line of one piece of advice: its title and this run's
 * figures; the advice itself is written once for all runs by the report
 * (report_advice). */
static void emit_line(void *user, const tfb_pipeline_advice *a)
{
    FILE **ctx = user;
    FILE *f = ctx[0];
    int markdown = ctx[1] != NULL;
    fputs(markdown ? "- " : "    - ", f);
    /* our own words: no markup in them */
    tfb_report_put_str(f, a->title, 0);
    if (a->detail[0]) {
        fputs(": ", f);
        tfb_report_put_str(f, a->detail, 0);
    }
    fputc('\n', f);
}

static const char *verdict_words(const char *v)
{
    if (!v)
        return "no data";
    if (!strcmp(v, "highly"))
        return "HIGHLY input-bound";
    if (!strcmp(v, "moderately"))
        return "MODERATELY input-bound";
    if (!strcmp(v, "potentially"))
        return "POTENTIALLY input-bound";
    return "NOT input-bound";
}

static void pipeline_text(FILE *f, const tfb_pipeline_summary *p, int md)
{
    if (p->steps == 0) {
        fputs(md ? "\n### Input pipeline\n\nNo pipeline/step_ms and "
                   "pipeline/input_ms scalars.\n"
                 : "  input pipeline: no step timings\n",
              f);
        return;
    }
    fprintf(f, md ? "\n### Input pipeline\n\n**%s**: %.1f%% of step time "
                    "waiting for input (mean step %.4g ms, mean input wait "
                    "%.4g ms, %zu steps).\n\n"
                  : "  input pipeline: %s: %.1f%% of step time waiting for "
                    "input (mean step %.4g ms, mean input wait %.4g ms, "
                    "%zu steps)\n",
            verdict_words(p->verdict), 100.0 * p->input_fraction,
            p->mean_step_ms, p->mean_input_ms, p->steps);
    if (md)
        fputs("| ms | mean | stddev | min | p50 | p90 | p99 | max |\n"
              "| --- | --- | --- | --- | --- | --- | --- | --- |\n", f);
    else
        fprintf(f, "    %-8s %10s %10s %10s %10s %10s %10s %10s\n", "ms",
                "mean", "stddev", "min", "p50", "p90", "p99", "max");
    const tfb_pipeline_stats *st[2] = {&p->step_ms, &p->input_ms};
    const char *names[2] = {"step", "input"};
    for (int k = 0; k < 2; k++) {
        const tfb_pipeline_stats *s = st[k];
        fprintf(f, md ? "| %s | %.4g | %.4g | %.4g | %.4g | %.4g | %.4g | "
                        "%.4g |\n"
                      : "    %-8s %10.4g %10.4g %10.4g %10.4g %10.4g %10.4g "
                        "%10.4g\n",
                names[k], s->mean, s->stddev, s->min, s->p50, s->p90, s->p99,
                s->max);
    }
    if (p->trace.has_trace) {
        fprintf(f, md ? "\nFrom the trace: other host time %.1f%% of step "
                        "time; %.1f%% of GPU idle time inside input waits.\n"
                      : "    trace: other host time %.1f%% of step time; "
                        "%.1f%% of GPU idle time inside input waits\n",
                100.0 * p->trace.other_host_fraction,
                100.0 * p->trace.gpu_idle_in_input_fraction);
    }
    fputs(md ? "\nAdvice (each written out once under \"Advice\" above):\n\n"
             : "    advice (each written out once under \"advice\" above):\n",
          f);
    FILE *ctx[2] = {f, md ? f : NULL};
    tfb_pipeline_advise(p, emit_line, ctx);
}

static int report_text(FILE *f, tfb_store *s, tfb_run *r,
                       const tfb_report_opts *o, int markdown)
{
    (void)o;
    tfb_pipeline_summary p;
    int rc = tfb_pipeline_analyze_run(s, r, &p);
    if (rc < 0)
        return rc;
    pipeline_text(f, &p, markdown);
    return 0;
}

/* An input-bound run: the share of step time faster input would save. */
static int report_findings(tfb_store *s, tfb_run *r, const tfb_report_opts *o,
                           void (*emit)(void *, double, const char *),
                           void *user)
{
    (void)o;
    tfb_pipeline_summary p;
    int rc = tfb_pipeline_analyze_run(s, r, &p);
    if (rc < 0)
        return rc;
    if (p.steps == 0 || p.saving_fraction < TFB_PIPELINE_MODERATELY)
        return 0;
    char line[256];
    snprintf(line, sizeof line,
             "input-bound: faster input would save about %.0f%% of step time "
             "(steps wait %.3g ms of %.3g ms for input)",
             100.0 * p.saving_fraction, p.mean_input_ms, p.mean_step_ms);
    double wgt = 50.0 + 50.0 * (p.saving_fraction > 1 ? 1 : p.saving_fraction);
    emit(user, wgt, line);
    return 0;
}

typedef struct advice_sink {
    void (*emit)(void *user, const char *advice);
    void *user;
} advice_sink;

static void emit_advice(void *user, const tfb_pipeline_advice *a)
{
    advice_sink *k = user;
    k->emit(k->user, a->advice);
}

static int report_advice(tfb_store *s, tfb_run *r, const tfb_report_opts *o,
                         void (*emit)(void *, const char *), void *user)
{
    (void)o;
    tfb_pipeline_summary p;
    int rc = tfb_pipeline_analyze_run(s, r, &p);
    if (rc < 0)
        return rc;
    advice_sink k = {emit, user};
    tfb_pipeline_advise(&p, emit_advice, &k);
    return 0;
}

static int report_json(tfb_json *j, tfb_store *s, tfb_run *r,
                       const tfb_report_opts *o)
{
    (void)o;
    tfb_pipeline_summary p;
    int rc = tfb_pipeline_analyze_run(s, r, &p);
    if (rc < 0)
        return rc;
    tfb_json_key(j, "pipeline");
    if (p.steps > 0)
        tfb_pipeline_summary_json(j, &p);
    else
        tfb_json_null(j);
    return 0;
}

static int has_steps(tfb_store *s, tfb_run *r)
{
    (void)s;
    return tfb_run_find_series(r, TFB_SERIES_SCALAR, TFB_TAG_STEP_MS) != NULL;
}

static const tfb_plugin_route routes[] = {
    {"summary", route_summary},
    {"steps", route_steps},
};

/* Its web files (page.js first), embedded from this folder by the
 * build (server/plugins/meson.build). */
extern const tfb_asset tfb_pipeline_assets[];

const tfb_plugin tfb_plugin_pipeline = {
    TFB_PLUGIN_ABI,
    .name = "pipeline",
    .title = "Input pipeline",
    .module = "js/pages/pipeline.js",
    .assets = tfb_pipeline_assets,
    .routes = routes,
    .n_routes = sizeof routes / sizeof routes[0],
    .has_data = has_steps,
    .report_text = report_text,
    .report_json = report_json,
    .report_findings = report_findings,
    .report_advice = report_advice,
};
