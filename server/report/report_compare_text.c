/*
 * report_compare_text.c - `tfboard report --compare A B` as plain text
 * (terminal, CI log) or Markdown (pull request): the same facts as the
 * JSON, strings from files made safe by report_fmt.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "report/report_compare.h"
#include "core/report_fmt.h"

/* Numbers in fixed-width cells: the one format (core/report_fmt.h). */
static void num(char *buf, size_t cap, double v)
{
    tfb_fmt_num(buf, cap, v);
}

/* A relative change: "+12.3 %", "×11.5", "new" when A was 0; "-"
 * unknown. */
static void pct(char *buf, size_t cap, double change)
{
    tfb_fmt_change(buf, cap, change);
}

/* A time given in ms, with the prefix that shows it ("155.8 µs"). */
static void ms(char *buf, size_t cap, double v, int known)
{
    if (!known)
        snprintf(buf, cap, "-");
    else
        tfb_fmt_si(buf, cap, v / 1e3, "s");
}

/* One table row: the first cell is a string from a file (padded to 36 in
 * text), the rest our own figures. */
static void row(FILE *f, int md, const char *first, const char *const *cells,
                size_t n)
{
    if (md) {
        fputs("| ", f);
        tfb_report_put_str(f, first, 1);
        for (size_t i = 0; i < n; i++)
            fprintf(f, " | %s", cells[i]);
        fputs(" |\n", f);
        return;
    }
    fputs("    ", f);
    tfb_report_put_str(f, first, 0);
    tfb_report_pad(f, strlen(first), 36);
    for (size_t i = 0; i < n; i++) {
        fputc(' ', f);
        tfb_report_put_right(f, cells[i], 12);
    }
    fputc('\n', f);
}

static void head(FILE *f, int md, const char *first, const char *const *cells,
                 size_t n)
{
    if (md) {
        fprintf(f, "| %s", first);
        for (size_t i = 0; i < n; i++)
            fprintf(f, " | %s", cells[i]);
        fputs(" |\n|", f);
        for (size_t i = 0; i <= n; i++)
            fputs(" --- |", f);
        fputc('\n', f);
        return;
    }
    fprintf(f, "    %-36s", first);
    for (size_t i = 0; i < n; i++)
        fprintf(f, " %12s", cells[i]);
    fputc('\n', f);
}

static void section(FILE *f, int md, const char *title)
{
    if (md)
        fprintf(f, "\n## %s\n\n", title);
    else
        fprintf(f, "\n%s:\n", title);
}

static void scalars_text(FILE *f, const tfb_compare *c, int md)
{
    char title[128];
    snprintf(title, sizeof title, "Scalars (%zu shared, %zu only in A, "
                                  "%zu only in B)",
             c->n_scalars, c->only_a, c->only_b);
    section(f, md, title);
    if (c->n_scalars == 0) {
        fputs(md ? "No shared scalar tags.\n" : "    none shared\n", f);
        return;
    }
    static const char *const heads[] = {"final A", "final B", "change",
                                        "min A", "min B", "change"};
    head(f, md, "tag", heads, 6);
    for (size_t i = 0; i < c->n_scalars; i++) {
        const tfb_compare_scalar *s = &c->scalars[i];
        char v[6][32];
        num(v[0], sizeof v[0], s->last_a);
        num(v[1], sizeof v[1], s->last_b);
        pct(v[2], sizeof v[2], s->last_change);
        if (s->has_min_a)
            num(v[3], sizeof v[3], s->min_a);
        else
            snprintf(v[3], sizeof v[3], "-");
        if (s->has_min_b)
            num(v[4], sizeof v[4], s->min_b);
        else
            snprintf(v[4], sizeof v[4], "-");
        pct(v[5], sizeof v[5], s->min_change);
        const char *cells[6] = {v[0], v[1], v[2], v[3], v[4], v[5]};
        row(f, md, s->tag, cells, 6);
    }
}

static void pipeline_text(FILE *f, const tfb_compare_pipeline *p, int md)
{
    section(f, md, "Input pipeline");
    if (p->steps_a == 0 && p->steps_b == 0) {
        fputs(md ? "Neither run has pipeline/step_ms and pipeline/input_ms "
                   "scalars.\n"
                 : "    no step timings in either run\n",
              f);
        return;
    }
    static const char *const heads[] = {"A", "B", "change"};
    head(f, md, "figure", heads, 3);
    char v[3][32];
    ms(v[0], sizeof v[0], p->step_ms_a, p->steps_a > 0);
    ms(v[1], sizeof v[1], p->step_ms_b, p->steps_b > 0);
    pct(v[2], sizeof v[2], p->step_change);
    const char *cells[3] = {v[0], v[1], v[2]};
    row(f, md, "mean step time", cells, 3);
    ms(v[0], sizeof v[0], p->input_ms_a, p->steps_a > 0);
    ms(v[1], sizeof v[1], p->input_ms_b, p->steps_b > 0);
    pct(v[2], sizeof v[2], p->input_ms_change);
    row(f, md, "mean input wait", cells, 3);
    if (p->steps_a)
        snprintf(v[0], sizeof v[0], "%.1f %%", 100.0 * p->share_a);
    else
        snprintf(v[0], sizeof v[0], "-");
    if (p->steps_b)
        snprintf(v[1], sizeof v[1], "%.1f %%", 100.0 * p->share_b);
    else
        snprintf(v[1], sizeof v[1], "-");
    if (isnan(p->share_change))
        snprintf(v[2], sizeof v[2], "-");
    else
        snprintf(v[2], sizeof v[2], "%+.1f pts", 100.0 * p->share_change);
    row(f, md, "input share", cells, 3);
    /* The verdicts in words that read alone ("not input-bound ->
     * highly input-bound"): too wide for the cells, a line of their own
     * in text. */
    const char *va = tfb_fmt_verdict(p->verdict_a);
    const char *vb = tfb_fmt_verdict(p->verdict_b);
    int changed = p->verdict_a && p->verdict_b &&
                  strcmp(p->verdict_a, p->verdict_b);
    if (md) {
        const char *vc[3] = {va, vb, changed ? "changed" : ""};
        row(f, md, "verdict", vc, 3);
    } else {
        fprintf(f, "    verdict: %s -> %s%s\n", va, vb,
                changed ? " (changed)" : "");
    }
}

/* MFU, tokens/s and J/token (analysis/efficiency.h). */
static void eff_text(FILE *f, const tfb_compare_eff *e, int md)
{
    section(f, md, "Efficiency");
    if (!e->has_a && !e->has_b) {
        fputs(md ? "Neither run has step timing or perf scalars.\n"
                 : "    no step timing or perf scalars in either run\n",
              f);
        return;
    }
    static const char *const heads[] = {"A", "B", "change"};
    head(f, md, "figure", heads, 3);
    const struct {
        const char *name;
        double a, b, ch;
    } rows[] = {{"MFU %", e->mfu_a, e->mfu_b, e->mfu_change},
                {"tokens/s", e->tokens_a, e->tokens_b, e->tokens_change},
                {"J/token", e->jpt_a, e->jpt_b, e->jpt_change}};
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        char v[3][32];
        num(v[0], sizeof v[0], rows[i].a);
        num(v[1], sizeof v[1], rows[i].b);
        pct(v[2], sizeof v[2], rows[i].ch);
        if (isnan(rows[i].a))
            snprintf(v[0], sizeof v[0], i == 0 ? "peak unknown" : "-");
        if (isnan(rows[i].b))
            snprintf(v[1], sizeof v[1], i == 0 ? "peak unknown" : "-");
        const char *cells[3] = {v[0], v[1], v[2]};
        row(f, md, rows[i].name, cells, 3);
    }
}

static void gpu_text(FILE *f, const tfb_compare *c, int md)
{
    section(f, md, "GPU kernel time");
    for (int s = 0; s < 2; s++) {
        const char *e = s ? c->gpu_error_b : c->gpu_error_a;
        if (e) {
            fprintf(f, "%srun %c's trace could not be read: ", md ? "" : "    ",
                    s ? 'B' : 'A');
            tfb_report_put_str(f, e, md);
            fputs(md ? "\n\n" : "\n", f);
        }
    }
    if (!c->traced_a && !c->traced_b) {
        fputs(md ? "Neither run was traced.\n" : "    neither run traced\n",
              f);
        return;
    }
    char ta[32], tb[32], ch[32];
    ms(ta, sizeof ta, (double)c->kernel_ns_a / 1e6, c->traced_a);
    ms(tb, sizeof tb, (double)c->kernel_ns_b / 1e6, c->traced_b);
    pct(ch, sizeof ch, c->kernel_change);
    size_t slower = 0;
    for (size_t i = 0; i < c->n_kernels; i++)
        slower += (size_t)c->kernels[i].slower;
    fprintf(f, "%sall kernels: %s -> %s (%s); %zu kernel%s slower by more "
               "than %.0f%%\n%s",
            md ? "" : "    ", ta, tb, ch, slower, slower == 1 ? "" : "s",
            100.0 * TFB_COMPARE_SLOWER, md ? "\n" : "");
    if (!c->traced_a || !c->traced_b) {
        fprintf(f, "%sonly run %s was traced\n", md ? "" : "    ",
                c->traced_a ? "A" : "B");
    }
    if (c->n_kernels == 0)
        return;
    static const char *const heads[] = {"count A", "count B", "total A",
                                        "total B", "change", ""};
    head(f, md, "kernel", heads, 6);
    for (size_t i = 0; i < c->n_kernels; i++) {
        const tfb_compare_kernel *k = &c->kernels[i];
        char v[6][32];
        snprintf(v[0], sizeof v[0], "%" PRId64, k->count_a);
        snprintf(v[1], sizeof v[1], "%" PRId64, k->count_b);
        ms(v[2], sizeof v[2], (double)k->total_ns_a / 1e6, c->traced_a);
        ms(v[3], sizeof v[3], (double)k->total_ns_b / 1e6, c->traced_b);
        pct(v[4], sizeof v[4], k->change);
        snprintf(v[5], sizeof v[5], "%s", k->slower ? "SLOWER" : "");
        const char *cells[6] = {v[0], v[1], v[2], v[3], v[4], v[5]};
        row(f, md, k->name, cells, 6);
    }
}

/* HTA's TraceDiff: counts per kind, then the names whose count or time
 * changed (rows as the analysis ordered them). */
static void trace_diff_text(FILE *f, const tfb_trace_diff *d, int md)
{
    section(f, md, "Trace diff (HTA's TraceDiff: kernels and CPU ops)");
    if (!d->has_a || !d->has_b) {
        fputs(md ? "Needs a trace in both runs.\n" : "    needs a trace in "
                                                      "both runs\n",
              f);
        return;
    }
    static const char *const what[2] = {"kernels", "CPU ops"};
    for (int s = 0; s < 2; s++)
        fprintf(f, "%s%s: %zu added, %zu deleted, %zu increased, %zu "
                   "decreased, %zu unchanged (in count)\n%s",
                md ? "" : "    ", what[s],
                d->kinds[s][TFB_TRACE_DIFF_ADDED],
                d->kinds[s][TFB_TRACE_DIFF_DELETED],
                d->kinds[s][TFB_TRACE_DIFF_INCREASED],
                d->kinds[s][TFB_TRACE_DIFF_DECREASED],
                d->kinds[s][TFB_TRACE_DIFF_UNCHANGED], md ? "\n" : "");
    static const char *const heads[] = {"on",      "change",  "count A",
                                        "count B", "total A", "total B",
                                        "B - A"};
    int any = 0;
    for (size_t i = 0; i < d->n; i++) {
        const tfb_trace_diff_row *r = &d->rows[i];
        if (!r->diff_count && !r->diff_ns)
            continue;
        if (!any++)
            head(f, md, "name", heads, 7);
        char v[7][32];
        snprintf(v[0], sizeof v[0], "%s", r->device);
        snprintf(v[1], sizeof v[1], "%s", r->change);
        snprintf(v[2], sizeof v[2], "%" PRId64, r->count_a);
        snprintf(v[3], sizeof v[3], "%" PRId64, r->count_b);
        ms(v[4], sizeof v[4], (double)r->total_ns_a / 1e6, 1);
        ms(v[5], sizeof v[5], (double)r->total_ns_b / 1e6, 1);
        snprintf(v[6], sizeof v[6], "%+.4g ms", (double)r->diff_ns / 1e6);
        const char *cells[7] = {v[0], v[1], v[2], v[3], v[4], v[5], v[6]};
        row(f, md, r->name, cells, 7);
    }
    if (!any)
        fputs(md ? "No name changed in count or time.\n"
                 : "    no name changed in count or time\n",
              f);
}

static void hparams_text(FILE *f, const tfb_compare *c, int md)
{
    char title[128];
    snprintf(title, sizeof title, "Hparams that differ (A logged %zu, B "
                                  "logged %zu)",
             c->hparams_a, c->hparams_b);
    section(f, md, title);
    if (c->n_hparams == 0) {
        fputs(md ? "None.\n" : "    none\n", f);
        return;
    }
    if (md)
        fputs("| hparam | A | B |\n| --- | --- | --- |\n", f);
    else
        fprintf(f, "    %-36s %s -> %s\n", "hparam", "A", "B");
    for (size_t i = 0; i < c->n_hparams; i++) {
        const tfb_compare_hparam *h = &c->hparams[i];
        fputs(md ? "| " : "    ", f);
        tfb_report_put_str(f, h->name, md);
        if (!md)
            tfb_report_pad(f, strlen(h->name), 36);
        fputs(md ? " | " : " ", f);
        tfb_report_put_str(f, h->a ? h->a : "(not set)", md);
        fputs(md ? " | " : " -> ", f);
        tfb_report_put_str(f, h->b ? h->b : "(not set)", md);
        fputs(md ? " |\n" : "\n", f);
    }
}

/* The headline the compare dashboard shows: "A diverged at step 6:
 * train/loss NaN; B diverged at ...". Nothing when neither run did. */
static void headline(FILE *f, const tfb_compare_diverged *div, int md)
{
    if (!div || (!div[0].diverged && !div[1].diverged))
        return;
    fputs(md ? "\n**" : "\n  ", f);
    int first = 1;
    for (int s = 0; s < 2; s++) {
        if (!div[s].diverged)
            continue;
        fprintf(f, "%s%c diverged at step %lld: ", first ? "" : "; ",
                s ? 'B' : 'A', div[s].step);
        tfb_report_put_str(f, div[s].tag, md);
        fprintf(f, " %s", div[s].kind);
        first = 0;
    }
    fputs(md ? "**\n\nFrom the health alerts: the first non-finite value "
               "of each run.\n"
             : "\n  (from the health alerts: the first non-finite value "
               "of each run)\n",
          f);
}

int tfb_compare_text(FILE *f, const tfb_compare *c,
                     const tfb_compare_diverged *div, int markdown)
{
    int md = markdown;
    fputs(md ? "# tfboard compare\n\n- A (baseline): " : "tfboard compare\n"
                                                         "  A (baseline): ",
          f);
    tfb_report_put_str(f, c->name_a, md);
    fputs(md ? "\n- B: " : "\n  B:            ", f);
    tfb_report_put_str(f, c->name_b, md);
    fputs("\n", f);
    if (!md)
        fputs("  changes are (B - A) / |A|\n", f);
    else
        fputs("\nChanges are (B - A) / |A|.\n", f);
    headline(f, div, md);
    scalars_text(f, c, md);
    pipeline_text(f, &c->pipeline, md);
    eff_text(f, &c->eff, md);
    gpu_text(f, c, md);
    trace_diff_text(f, &c->diff, md);
    hparams_text(f, c, md);
    return ferror(f) ? TFB_EIO : 0;
}
