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
#include <stdlib.h>
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
        char last[TFB_FMT_MAX], mn[TFB_FMT_MAX], mx[TFB_FMT_MAX];
        tfb_fmt_num(last, sizeof last, s->last);
        if (s->has_finite) {
            tfb_fmt_num(mn, sizeof mn, s->min);
            tfb_fmt_num(mx, sizeof mx, s->max);
        } else {
            snprintf(mn, sizeof mn, "-");
            snprintf(mx, sizeof mx, "-");
        }
        fputs(md ? "| " : "    ", f);
        tfb_report_put_str(f, s->tag, md);
        if (!md)
            tfb_report_pad(f, strlen(s->tag), 36);
        fprintf(f, md ? " | %s | %s | %s | %zu |\n" : " %12s %12s %12s %8zu\n",
                last, mn, mx, s->count);
    }
}

/* ---- the first screen: a line per run, then the findings, ranked ------ */

/* Findings past this many lines are left to the details. */
#define SUMMARY_FINDINGS 12

/* "loss 0.661" for the run's headline scalar, "" when it has none. */
static void headline(char *out, size_t len, const tfb_report_run *rr)
{
    const tfb_report_scalar *h = tfb_report_headline(rr);
    out[0] = 0;
    if (!h)
        return;
    tfb_fmt_num(out, len, h->last);
}

/* Writes the run's labels ("diverged, straggler"), or "ok"; returns the
 * characters written. */
static size_t put_labels(FILE *f, const tfb_report_summary *sm, size_t run)
{
    size_t w = 0;
    for (size_t k = 0; k < sm->n_findings; k++)
        if (tfb_report_group_has(&sm->findings[k], run)) {
            const char *t = sm->findings[k].text;
            if (w) {
                fputs(", ", f);
                w += 2;
            }
            size_t l = tfb_report_label_len(t);
            fwrite(t, 1, l, f);
            w += l;
        }
    if (!w) {
        fputs("ok", f);
        w = 2;
    }
    return w;
}

static size_t labels_width(const tfb_report_summary *sm, size_t run)
{
    size_t w = 0;
    for (size_t k = 0; k < sm->n_findings; k++)
        if (tfb_report_group_has(&sm->findings[k], run))
            w += (w ? 2 : 0) + tfb_report_label_len(sm->findings[k].text);
    return w ? w : 2;
}

static void put_runs(FILE *f, const tfb_report *rep, const tfb_report_group *g,
                     int md)
{
    for (size_t j = 0; j < g->runs.n; j++) {
        fputs(j ? ", " : "", f);
        tfb_report_put_str(f, rep->runs[g->runs.v[j]].name, md);
    }
}

static void summary(FILE *f, const tfb_report *rep, int md)
{
    const tfb_report_summary *sm = &rep->summary;
    /* A line per run: its steps, its time, its status (the labels of its
     * findings, or ok) and its headline scalar. */
    fputs(md ? "\n## Summary\n\n| run | steps | duration | status | "
               "headline |\n| --- | --- | --- | --- | --- |\n"
             : "\nsummary (details below):\n", f);
    size_t namew = 8, statw = 2;
    for (size_t i = 0; i < rep->n_runs; i++) {
        size_t l = strlen(rep->runs[i].name);
        if (l > namew)
            namew = l < 40 ? l : 40;
        l = labels_width(sm, i);
        if (l > statw)
            statw = l < 40 ? l : 40;
    }
    for (size_t i = 0; i < rep->n_runs; i++) {
        const tfb_report_run *rr = &rep->runs[i];
        fputs(md ? "| " : "  ", f);
        tfb_report_put_str(f, rr->name, md);
        if (!md)
            tfb_report_pad(f, strlen(rr->name), namew);
        fputs(md ? " | " : "  ", f);
        char st[32];
        if (rr->max_step == INT64_MIN)
            snprintf(st, sizeof st, "-");
        else
            snprintf(st, sizeof st, "%lld", (long long)rr->max_step);
        fprintf(f, md ? "%s | " : "%7s steps  ", st);
        char dur[32];
        FILE *mf = fmemopen(dur, sizeof dur, "w");
        if (mf) {
            tfb_report_put_duration(mf, rr->last_wall - rr->first_wall);
            fclose(mf);
        } else {
            snprintf(dur, sizeof dur, "?");
        }
        fprintf(f, md ? "%s | " : "%-10s ", dur);
        size_t w = put_labels(f, sm, i);
        char hv[32];
        headline(hv, sizeof hv, rr);
        const tfb_report_scalar *h = tfb_report_headline(rr);
        if (md)
            fputs(" | ", f);
        else if (h)
            tfb_report_pad(f, w, statw + 2);
        if (h) {
            tfb_report_put_str(f, h->tag, md);
            fprintf(f, " %s", hv);
        }
        fputs(md ? " |\n" : "\n", f);
    }

    /* The findings, ranked; the same text on several runs is one line that
     * names them all. */
    fputs(md ? "\n**Top findings**\n\n" : "\ntop findings:\n", f);
    if (sm->n_findings == 0)
        fputs(md ? "None: no run diverged, straggled or waited on input.\n"
                 : "  none: no run diverged, straggled or waited on input\n",
              f);
    for (size_t k = 0; k < sm->n_findings; k++) {
        if (k == SUMMARY_FINDINGS) {
            fprintf(f, md ? "- and %zu more below.\n"
                          : "  ... and %zu more below\n",
                    sm->n_findings - k);
            break;
        }
        fprintf(f, md ? "%zu. " : "  %zu. ", k + 1);
        put_runs(f, rep, &sm->findings[k], md);
        fputs(" - ", f);
        tfb_report_put_str(f, sm->findings[k].text, md);
        fputc('\n', f);
    }
    fputs(md ? "\n## Details\n" : "\ndetails:\n", f);

    /* Advice once, with the runs it is for; each run's section has its
     * own figures. */
    if (sm->n_advice == 0)
        return;
    fputs(md ? "\n### Advice\n\nEach piece of advice once, with the runs it "
               "applies to (each run's figures are in its section).\n\n"
             : "\nadvice (each once, with the runs it applies to; each run's "
               "figures are in its section):\n",
          f);
    for (size_t k = 0; k < sm->n_advice; k++) {
        fputs(md ? "- " : "  - ", f);
        tfb_report_put_str(f, sm->advice[k].text, md);
        fputs(md ? " — runs " : "\n    runs: ", f);
        put_runs(f, rep, &sm->advice[k], md);
        fputc('\n', f);
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
    summary(f, rep, md);
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
