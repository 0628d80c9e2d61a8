/*
 * report_text.c - the report for people: plain text for a terminal or a
 * CI log, and Markdown for a bug report or a pull request.
 *
 * Strings from event files (run names, tags) are made harmless for each
 * medium: control characters never reach the terminal, and Markdown
 * punctuation is escaped so a tag cannot inject links or break a table.
 */
#include "report_text.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "report_sections.h"

static void put_safe(FILE *f, const char *s, int markdown)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p < 0x20 || *p == 0x7f) {
            fputc('?', f);
        } else if (markdown && strchr("\\`*_{}[]<>()#+-.!|~&", *p)) {
            fputc('\\', f);
            fputc(*p, f);
        } else {
            fputc(*p, f);
        }
    }
}

void tfb_report_put_str(FILE *f, const char *s, int markdown)
{
    put_safe(f, s ? s : "", markdown);
}

void tfb_report_put_wall(FILE *f, double w)
{
    if (isnan(w)) {
        fputs("unknown", f);
        return;
    }
    time_t t = (time_t)w;
    struct tm tm;
    char buf[64];
    gmtime_r(&t, &tm);
    strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S UTC", &tm);
    fputs(buf, f);
}

void tfb_report_put_duration(FILE *f, double s)
{
    if (isnan(s) || s < 0) {
        fputs("unknown", f);
        return;
    }
    if (s < 60) {
        fprintf(f, "%.3g s", s);
        return;
    }
    long t = (long)(s + 0.5);
    if (t >= 3600)
        fprintf(f, "%ldh %02ldm %02lds", t / 3600, t / 60 % 60, t % 60);
    else
        fprintf(f, "%ldm %02lds", t / 60, t % 60);
}

/* Engineering-style number with 4 significant digits; NaN/Inf by name. */
void tfb_report_put_num(FILE *f, double v)
{
    if (isnan(v))
        fputs("NaN", f);
    else if (isinf(v))
        fputs(v > 0 ? "Infinity" : "-Infinity", f);
    else
        fprintf(f, "%.4g", v);
}

static void emit_line(void *user, const char *text)
{
    FILE **ctx = user;
    FILE *f = ctx[0];
    int markdown = ctx[1] != NULL;
    fputs(markdown ? "- " : "    - ", f);
    put_safe(f, text, 0); /* our own sentences: no markup in them */
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

static void pipeline_section(FILE *f, const tfb_report_run *rr, int md)
{
    const tfb_pipeline_summary *p = &rr->pipeline;
    if (!rr->has_pipeline) {
        fputs(md ? "\n### Input pipeline\n\nNo pipeline/step_ms and "
                   "pipeline/input_ms scalars.\n"
                 : "  input pipeline: no step timings\n",
              f);
        return;
    }
    if (md) {
        fprintf(f, "\n### Input pipeline\n\n**%s**: %.1f%% of step time "
                   "waiting for input (mean step %.4g ms, mean input wait "
                   "%.4g ms, %zu steps).\n\n",
                verdict_words(p->verdict), 100.0 * p->input_fraction,
                p->mean_step_ms, p->mean_input_ms, p->steps);
        fputs("| ms | mean | stddev | min | p50 | p90 | p99 | max |\n"
              "| --- | --- | --- | --- | --- | --- | --- | --- |\n", f);
    } else {
        fprintf(f, "  input pipeline: %s: %.1f%% of step time waiting for "
                   "input (mean step %.4g ms, mean input wait %.4g ms, "
                   "%zu steps)\n",
                verdict_words(p->verdict), 100.0 * p->input_fraction,
                p->mean_step_ms, p->mean_input_ms, p->steps);
        fprintf(f, "    %-8s %10s %10s %10s %10s %10s %10s %10s\n", "ms",
                "mean", "stddev", "min", "p50", "p90", "p99", "max");
    }
    const tfb_pipeline_stats *st[2] = {&p->step_ms, &p->input_ms};
    const char *names[2] = {"step", "input"};
    for (int k = 0; k < 2; k++) {
        const tfb_pipeline_stats *s = st[k];
        if (md)
            fprintf(f, "| %s | %.4g | %.4g | %.4g | %.4g | %.4g | %.4g | "
                       "%.4g |\n",
                    names[k], s->mean, s->stddev, s->min, s->p50, s->p90,
                    s->p99, s->max);
        else
            fprintf(f, "    %-8s %10.4g %10.4g %10.4g %10.4g %10.4g %10.4g "
                       "%10.4g\n",
                    names[k], s->mean, s->stddev, s->min, s->p50, s->p90,
                    s->p99, s->max);
    }
    if (p->trace.has_trace) {
        fprintf(f, md ? "\nFrom the trace: other host time %.1f%% of step "
                        "time; %.1f%% of GPU idle time inside input waits.\n"
                      : "    trace: other host time %.1f%% of step time; "
                        "%.1f%% of GPU idle time inside input waits\n",
                100.0 * p->trace.other_host_fraction,
                100.0 * p->trace.gpu_idle_in_input_fraction);
    }
    fputs(md ? "\nRecommendations:\n\n" : "    recommendations:\n", f);
    FILE *ctx[2] = {f, md ? f : NULL};
    tfb_pipeline_recommend(p, emit_line, ctx);
}

static void scalars_section(FILE *f, const tfb_report_run *rr, int md)
{
    if (rr->n_scalars == 0) {
        fputs(md ? "\n### Scalars\n\nNone.\n" : "  scalars: none\n", f);
        return;
    }
    if (md)
        fputs("\n### Scalars\n\n| tag | last | min | max | count |\n"
              "| --- | --- | --- | --- | --- |\n", f);
    else
        fprintf(f, "  scalars:\n    %-36s %12s %12s %12s %8s\n", "tag", "last",
                "min", "max", "count");
    for (size_t i = 0; i < rr->n_scalars; i++) {
        const tfb_report_scalar *s = &rr->scalars[i];
        char last[32], mn[32], mx[32];
        snprintf(last, sizeof last, "%.4g", s->last);
        if (isnan(s->last))
            snprintf(last, sizeof last, "NaN");
        else if (isinf(s->last))
            snprintf(last, sizeof last, "%s", s->last > 0 ? "Infinity"
                                                          : "-Infinity");
        if (s->has_finite) {
            snprintf(mn, sizeof mn, "%.4g", s->min);
            snprintf(mx, sizeof mx, "%.4g", s->max);
        } else {
            snprintf(mn, sizeof mn, "-");
            snprintf(mx, sizeof mx, "-");
        }
        if (md) {
            fputs("| ", f);
            put_safe(f, s->tag, 1);
            fprintf(f, " | %s | %s | %s | %zu |\n", last, mn, mx, s->count);
        } else {
            fputs("    ", f);
            size_t len = strlen(s->tag);
            put_safe(f, s->tag, 0);
            for (size_t k = len; k < 36; k++)
                fputc(' ', f);
            fprintf(f, " %12s %12s %12s %8zu\n", last, mn, mx, s->count);
        }
    }
}

void tfb_report_text(FILE *f, const tfb_report *rep, int markdown)
{
    int md = markdown;
    if (md) {
        fputs("# tfboard report\n\nLogdir: `", f);
        /* Inside a code span only the backtick needs care. */
        for (const char *p = rep->logdir; *p; p++)
            fputc(*p == '`' ? '\'' : (unsigned char)*p < 0x20 ? '?' : *p, f);
        fprintf(f, "`, %zu run%s, %zu alert%s.\n", rep->n_runs,
                rep->n_runs == 1 ? "" : "s", rep->total_alerts,
                rep->total_alerts == 1 ? "" : "s");
    } else {
        fputs("tfboard report: ", f);
        put_safe(f, rep->logdir, 0);
        fprintf(f, " (%zu run%s, %zu alert%s)\n", rep->n_runs,
                rep->n_runs == 1 ? "" : "s", rep->total_alerts,
                rep->total_alerts == 1 ? "" : "s");
    }
    for (size_t i = 0; i < rep->n_runs; i++) {
        const tfb_report_run *rr = &rep->runs[i];
        fputs(md ? "\n## Run " : "\nrun ", f);
        put_safe(f, rr->name, md);
        fputc('\n', f);
        if (md)
            fputc('\n', f);
        fputs(md ? "- last step: " : "  last step: ", f);
        if (rr->max_step == INT64_MIN)
            fputs("none", f);
        else
            fprintf(f, "%lld", (long long)rr->max_step);
        fputs(md ? "\n- duration: " : "  duration: ", f);
        tfb_report_put_duration(f, rr->last_wall - rr->first_wall);
        fputs(" (", f);
        tfb_report_put_wall(f, rr->first_wall);
        fputs(" to ", f);
        tfb_report_put_wall(f, rr->last_wall);
        fputs(")\n", f);
        tfb_report_sections_text(f, rr, md);
        pipeline_section(f, rr, md);
        scalars_section(f, rr, md);
    }
}
