/*
 * health.c - the health dashboard: NaN/Inf alerts of every run
 * (/data/plugin/health/alerts) and their report section.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "plugins/health/health_analysis.h"
#include "core/plugin.h"
#include "core/report_fmt.h"

static int route_alerts(const tfb_http_req *req, tfb_http_resp *resp)
{
    tfb_run *run = NULL;
    int rc;
    if (tfb_http_query(req, "run") != NULL &&
        (rc = tfb_http_param_run(req, resp, &run)) < 0)
        return rc;
    tfb_health_alert *a;
    size_t n;
    rc = tfb_health_alerts(tfb_server_store(req), run, &a, &n);
    if (rc < 0)
        return rc;
    tfb_json j;
    tfb_json_init(&j);
    tfb_health_alerts_json(&j, a, n);
    free(a);
    return tfb_http_json(resp, &j);
}

static void alerts_text(FILE *f, const tfb_health_alert *v, size_t n, int md)
{
    if (md)
        fputs("\n### Health alerts\n\n", f);
    if (n == 0) {
        fputs(md ? "No NaN or Inf values.\n" : "  alerts: none\n", f);
        return;
    }
    if (v[0].explain[0]) {
        fputs(md ? "Before it: " : "  before the first NaN/Inf: ", f);
        tfb_report_put_str(f, v[0].explain, md);
        fputs(md ? "\n\n" : "\n", f);
    }
    if (md) {
        fputs("First non-finite value first.\n\n"
              "| tag | first step | first time | NaN | +Inf | -Inf | "
              "events |\n| --- | --- | --- | --- | --- | --- | --- |\n",
              f);
    } else {
        fprintf(f, "  alerts: %zu tag%s held NaN/Inf (first one first)\n",
                n, n == 1 ? "" : "s");
        fprintf(f, "    %-32s %10s %-23s %8s %8s %8s %8s\n", "tag",
                "first step", " first wall time", "NaN", "+Inf", "-Inf",
                "events");
    }
    for (size_t i = 0; i < n; i++) {
        const tfb_health_alert *a = &v[i];
        fputs(md ? "| " : "    ", f);
        tfb_report_put_str(f, a->tag, md);
        if (!md)
            tfb_report_pad(f, strlen(a->tag), 32);
        fprintf(f, md ? " | %lld | " : " %10lld ", (long long)a->first_step);
        tfb_report_put_wall(f, a->first_wall_time);
        fprintf(f, md ? " | %llu | %llu | %llu | %llu |\n"
                      : " %8llu %8llu %8llu %8llu\n",
                (unsigned long long)a->nan, (unsigned long long)a->pos_inf,
                (unsigned long long)a->neg_inf, (unsigned long long)a->events);
    }
}

static int report_text(FILE *f, tfb_store *s, tfb_run *r,
                       const tfb_report_opts *o, int markdown)
{
    (void)o;
    tfb_health_alert *v;
    size_t n;
    int rc = tfb_health_alerts(s, r, &v, &n);
    if (rc < 0)
        return rc;
    alerts_text(f, v, n, markdown);
    free(v);
    return 0;
}

static int report_json(tfb_json *j, tfb_store *s, tfb_run *r,
                       const tfb_report_opts *o)
{
    (void)o;
    tfb_health_alert *v;
    size_t n;
    int rc = tfb_health_alerts(s, r, &v, &n);
    if (rc < 0)
        return rc;
    tfb_health_alerts_member(j, v, n);
    free(v);
    return 0;
}

/* The run broke: its earliest non-finite tag. */
static int report_findings(tfb_store *s, tfb_run *r, const tfb_report_opts *o,
                           void (*emit)(void *, double, const char *),
                           void *user)
{
    (void)o;
    tfb_health_alert *v;
    size_t n;
    int rc = tfb_health_alerts(s, r, &v, &n);
    if (rc < 0)
        return rc;
    size_t first = 0;
    for (size_t i = 1; i < n; i++)
        if (v[i].first_step < v[first].first_step)
            first = i;
    if (n > 0) {
        char line[320];
        const tfb_health_alert *a = &v[first];
        snprintf(line, sizeof line,
                 "diverged: %.120s became %s at step %lld (%zu tag%s with "
                 "NaN/Inf)",
                 a->tag, a->nan ? "NaN" : "infinite", (long long)a->first_step,
                 n, n == 1 ? "" : "s");
        emit(user, 100.0, line);
    }
    free(v);
    return 0;
}

static const tfb_plugin_route routes[] = {
    {"alerts", route_alerts},
};

/* Its web files (page.js first), embedded from this folder by the
 * build (server/plugins/meson.build). */
extern const tfb_asset tfb_health_assets[];

const tfb_plugin tfb_plugin_health = {
    TFB_PLUGIN_ABI,
    .name = "health",
    .title = "Health",
    .module = "js/pages/health.js",
    .assets = tfb_health_assets,
    .routes = routes,
    .n_routes = sizeof routes / sizeof routes[0],
    .report_text = report_text,
    .report_json = report_json,
    .report_findings = report_findings,
};
