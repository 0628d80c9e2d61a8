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

#include "base/vec.h"
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

/* ---- the first screen: a line per run, then the findings, ranked ------ */

typedef struct finding {
    size_t run;   /* index into rep->runs */
    double weight;
    char *text;   /* "label: detail" */
} finding;

typedef struct findings {
    TFB_VEC(finding) list;
    size_t run;
    int err;
} findings;

static void collect(void *user, double weight, const char *text)
{
    findings *fs = user;
    if (fs->err)
        return;
    char *t = strdup(text);
    if (!t || tfb_vec_push(&fs->list, ((finding){fs->run, weight, t})) < 0) {
        free(t);
        fs->err = TFB_ENOMEM;
        return;
    }
}

/* Heaviest first; equal weights keep run order (stable by index). */
static int cmp_finding(const void *a, const void *b)
{
    const finding *x = a, *y = b;
    if (x->weight != y->weight)
        return x->weight < y->weight ? 1 : -1;
    return (x->run > y->run) - (x->run < y->run);
}

static size_t label_len(const char *t)
{
    const char *c = strchr(t, ':');
    return c ? (size_t)(c - t) : strlen(t);
}

/* Findings past this many lines are left to the details. */
#define SUMMARY_FINDINGS 12

static int summary(FILE *f, const tfb_report *rep, int md)
{
    findings fs = {0};
    size_t np;
    const tfb_plugin *const *pl = tfb_plugins(&np);
    for (size_t i = 0; i < rep->n_runs && !fs.err; i++) {
        fs.run = i;
        for (size_t k = 0; k < np && !fs.err; k++)
            if (pl[k]->report_findings) {
                int rc = pl[k]->report_findings(rep->store, rep->runs[i].run,
                                                &rep->opts, collect, &fs);
                if (rc < 0)
                    fs.err = rc;
            }
    }
    if (fs.err) {
        for (size_t i = 0; i < fs.list.n; i++)
            free(fs.list.v[i].text);
        tfb_vec_free(&fs.list);
        return fs.err;
    }
    if (fs.list.n > 1)
        qsort(fs.list.v, fs.list.n, sizeof *fs.list.v, cmp_finding);

    /* A line per run: its steps, its time and its findings' labels. */
    fputs(md ? "\n## Summary\n\n| run | steps | duration | findings |\n"
               "| --- | --- | --- | --- |\n"
             : "\nsummary (details below):\n", f);
    size_t namew = 8;
    for (size_t i = 0; i < rep->n_runs; i++) {
        size_t l = strlen(rep->runs[i].name);
        if (l > namew)
            namew = l < 40 ? l : 40;
    }
    for (size_t i = 0; i < rep->n_runs; i++) {
        const tfb_report_run *rr = &rep->runs[i];
        fputs(md ? "| " : "  ", f);
        tfb_report_put_str(f, rr->name, md);
        if (!md)
            for (size_t k = strlen(rr->name); k < namew; k++)
                fputc(' ', f);
        fputs(md ? " | " : "  ", f);
        char st[32];
        if (rr->max_step == INT64_MIN)
            snprintf(st, sizeof st, "-");
        else
            snprintf(st, sizeof st, "%lld", (long long)rr->max_step);
        fprintf(f, md ? "%s | " : "%7s steps  ", st);
        tfb_report_put_duration(f, rr->last_wall - rr->first_wall);
        fputs(md ? " | " : "  ", f);
        int any = 0;
        for (size_t k = 0; k < fs.list.n; k++)
            if (fs.list.v[k].run == i) {
                fputs(any ? ", " : "", f);
                const char *t = fs.list.v[k].text;
                fwrite(t, 1, label_len(t), f);
                any = 1;
            }
        fputs(any ? "" : "ok", f);
        fputs(md ? " |\n" : "\n", f);
    }

    /* The findings, ranked; the same text on several runs is one line that
     * names them all. */
    fputs(md ? "\n**Top findings**\n\n" : "\ntop findings:\n", f);
    if (fs.list.n == 0)
        fputs(md ? "None: no run diverged, straggled or waited on input.\n"
                 : "  none: no run diverged, straggled or waited on input\n",
              f);
    size_t shown = 0;
    for (size_t k = 0; k < fs.list.n; k++) {
        if (!fs.list.v[k].text)
            continue; /* grouped into an earlier line */
        if (shown == SUMMARY_FINDINGS) {
            size_t rest = 0;
            for (size_t j = k; j < fs.list.n; j++)
                rest += fs.list.v[j].text != NULL;
            fprintf(f, md ? "- and %zu more below.\n"
                          : "  ... and %zu more below\n", rest);
            break;
        }
        shown++;
        fprintf(f, md ? "%zu. " : "  %zu. ", shown);
        tfb_report_put_str(f, rep->runs[fs.list.v[k].run].name, md);
        size_t also = 0;
        for (size_t j = k + 1; j < fs.list.n; j++)
            if (fs.list.v[j].text &&
                !strcmp(fs.list.v[j].text, fs.list.v[k].text)) {
                fputs(", ", f);
                tfb_report_put_str(f, rep->runs[fs.list.v[j].run].name, md);
                free(fs.list.v[j].text);
                fs.list.v[j].text = NULL;
                also++;
            }
        fputs(" - ", f);
        tfb_report_put_str(f, fs.list.v[k].text, md);
        fputc('\n', f);
        (void)also;
    }
    for (size_t i = 0; i < fs.list.n; i++)
        free(fs.list.v[i].text);
    tfb_vec_free(&fs.list);
    fputs(md ? "\n## Details\n" : "\ndetails:\n", f);
    return 0;
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
    int src = summary(f, rep, md);
    if (src < 0)
        return src;
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
