/*
 * report_text.c - the report for people: plain text for a terminal or a
 * CI log, and Markdown for a bug report or a pull request.
 *
 * Strings from event files (run names, tags) are made harmless for each
 * medium: control characters never reach the terminal, and Markdown
 * punctuation is escaped so a tag cannot inject links or break a table.
 */
#include "report/report_text.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "core/plugin.h"
#include "core/report_fmt.h"

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
            tfb_report_put_str(f, s->tag, 1);
            fprintf(f, " | %s | %s | %s | %zu |\n", last, mn, mx, s->count);
        } else {
            fputs("    ", f);
            size_t len = strlen(s->tag);
            tfb_report_put_str(f, s->tag, 0);
            for (size_t k = len; k < 36; k++)
                fputc(' ', f);
            fprintf(f, " %12s %12s %12s %8zu\n", last, mn, mx, s->count);
        }
    }
}

int tfb_report_text(FILE *f, const tfb_report *rep, int markdown)
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
        tfb_report_put_str(f, rep->logdir, 0);
        fprintf(f, " (%zu run%s, %zu alert%s)\n", rep->n_runs,
                rep->n_runs == 1 ? "" : "s", rep->total_alerts,
                rep->total_alerts == 1 ? "" : "s");
    }
    for (size_t i = 0; i < rep->n_runs; i++) {
        const tfb_report_run *rr = &rep->runs[i];
        fputs(md ? "\n## Run " : "\nrun ", f);
        tfb_report_put_str(f, rr->name, md);
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
        size_t np;
        const tfb_plugin *const *pl = tfb_plugins(&np);
        for (size_t k = 0; k < np; k++)
            if (pl[k]->report_text) {
                int rc = pl[k]->report_text(f, rep->store, rr->run,
                                            &rep->opts, md);
                if (rc < 0)
                    return rc;
            }
        scalars_section(f, rr, md);
    }
    return 0;
}
