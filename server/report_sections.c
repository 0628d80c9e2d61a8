/*
 * report_sections.c - the report's health alerts, gradient flags and GPU
 * sections, from the health, gradients and GPU analyses (the same
 * functions behind /data/plugin/health/alerts, /data/plugin/gradients/norms
 * and /data/plugin/gpu/...).
 */
#include "report_sections.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_analysis.h"
#include "gradients_analysis.h"
#include "health_analysis.h"
#include "report_jsonval.h"
#include "report_text.h"

#define GPU_TOP_KERNELS 10

typedef struct alerts_part {
    tfb_health_alert *v;
    size_t n;
} alerts_part;

/* The GPU analysis's report JSON, kept as written (for json and html) and
 * read back into a tree (for text and Markdown). */
typedef struct gpu_part {
    char *json;
    size_t len;
    tfb_jv *tree;
} gpu_part;

static int gpu_section(tfb_report_run *rr, tfb_store *store)
{
    tfb_json j;
    tfb_json_init(&j);
    int rc = tfb_gpu_report_json(store, rr->run, GPU_TOP_KERNELS, &j);
    if (rc < 0) {
        tfb_json_free(&j);
        /* An unreadable trace is not the report's failure: no section. */
        return rc == TFB_ENOMEM ? rc : 0;
    }
    gpu_part *g = calloc(1, sizeof *g);
    if (!g) {
        tfb_json_free(&j);
        return TFB_ENOMEM;
    }
    g->json = tfb_json_take(&j, &g->len);
    if (!g->json) {
        free(g);
        return TFB_ENOMEM;
    }
    if (!strcmp(g->json, "null")) {
        free(g->json);
        free(g);
        return 0;
    }
    g->tree = tfb_jv_parse(g->json, g->len);
    rr->gpu = g;
    return 0;
}

int tfb_report_sections(tfb_report_run *rr, tfb_store *store,
                        const tfb_report_opts *opts)
{
    alerts_part *ap = calloc(1, sizeof *ap);
    if (!ap)
        return TFB_ENOMEM;
    rr->alerts = ap;
    int rc = tfb_health_alerts(store, rr->run, &ap->v, &ap->n);
    if (rc < 0)
        return rc;
    rr->n_alerts = ap->n;

    tfb_gradients *g = NULL;
    rc = tfb_gradients_analyze(rr->run, opts->grad_vanish, opts->grad_explode,
                               &g);
    if (rc < 0)
        return rc;
    if (g && g->n_layers == 0 && g->n_steps == 0) {
        tfb_gradients_free(g);
        g = NULL;
    }
    rr->grads = g;
    return gpu_section(rr, store);
}

void tfb_report_sections_free(tfb_report_run *rr)
{
    alerts_part *ap = rr->alerts;
    if (ap) {
        free(ap->v);
        free(ap);
        rr->alerts = NULL;
    }
    tfb_gradients_free(rr->grads);
    rr->grads = NULL;
    gpu_part *gp = rr->gpu;
    if (gp) {
        free(gp->json);
        tfb_jv_free(gp->tree);
        free(gp);
        rr->gpu = NULL;
    }
}

/* ---- JSON -------------------------------------------------------------- */

static const char *flag_layer(const tfb_gradients *g, size_t layer)
{
    return layer < g->n_layers ? g->layers[layer] : "global";
}

void tfb_report_sections_json(tfb_json *j, const tfb_report_run *rr)
{
    const alerts_part *ap = rr->alerts;
    tfb_json_key(j, "alerts");
    tfb_json_array_begin(j);
    for (size_t i = 0; ap && i < ap->n; i++) {
        const tfb_health_alert *a = &ap->v[i];
        tfb_json_object_begin(j);
        tfb_json_key(j, "run");
        tfb_json_str(j, a->run);
        tfb_json_key(j, "tag");
        tfb_json_str(j, a->tag);
        tfb_json_key(j, "first_step");
        tfb_json_i64(j, a->first_step);
        tfb_json_key(j, "first_wall_time");
        tfb_json_double(j, a->first_wall_time);
        tfb_json_key(j, "nan");
        tfb_json_u64(j, a->nan);
        tfb_json_key(j, "pos_inf");
        tfb_json_u64(j, a->pos_inf);
        tfb_json_key(j, "neg_inf");
        tfb_json_u64(j, a->neg_inf);
        tfb_json_key(j, "events");
        tfb_json_u64(j, a->events);
        tfb_json_object_end(j);
    }
    tfb_json_array_end(j);

    const tfb_gradients *g = rr->grads;
    tfb_json_key(j, "gradient_flags");
    tfb_json_array_begin(j);
    for (size_t i = 0; g && i < g->n_flags; i++) {
        const tfb_grad_flag *f = &g->flags[i];
        tfb_json_object_begin(j);
        tfb_json_key(j, "layer");
        tfb_json_str(j, flag_layer(g, f->layer));
        tfb_json_key(j, "step");
        tfb_json_i64(j, g->steps[f->step]);
        tfb_json_key(j, "kind");
        tfb_json_str(j, tfb_grad_flag_name(f->kind));
        tfb_json_object_end(j);
    }
    tfb_json_array_end(j);

    const gpu_part *gp = rr->gpu;
    tfb_json_key(j, "gpu");
    if (gp)
        tfb_json_raw(j, gp->json, gp->len);
    else
        tfb_json_null(j);
}

/* ---- text / Markdown --------------------------------------------------- */

static void alerts_text(FILE *f, const tfb_report_run *rr, int md)
{
    const alerts_part *ap = rr->alerts;
    size_t n = ap ? ap->n : 0;
    if (md)
        fputs("\n### Health alerts\n\n", f);
    if (n == 0) {
        fputs(md ? "No NaN or Inf values.\n" : "  alerts: none\n", f);
        return;
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
        const tfb_health_alert *a = &ap->v[i];
        if (md) {
            fputs("| ", f);
            tfb_report_put_str(f, a->tag, 1);
            fprintf(f, " | %lld | ", (long long)a->first_step);
            tfb_report_put_wall(f, a->first_wall_time);
            fprintf(f, " | %llu | %llu | %llu | %llu |\n",
                    (unsigned long long)a->nan,
                    (unsigned long long)a->pos_inf,
                    (unsigned long long)a->neg_inf,
                    (unsigned long long)a->events);
        } else {
            fputs("    ", f);
            tfb_report_put_str(f, a->tag, 0);
            for (size_t k = strlen(a->tag); k < 32; k++)
                fputc(' ', f);
            fprintf(f, " %10lld ", (long long)a->first_step);
            tfb_report_put_wall(f, a->first_wall_time);
            fprintf(f, " %8llu %8llu %8llu %8llu\n",
                    (unsigned long long)a->nan,
                    (unsigned long long)a->pos_inf,
                    (unsigned long long)a->neg_inf,
                    (unsigned long long)a->events);
        }
    }
}

/* Flags grouped by (layer, kind): how many, first and last step. A run
 * whose gradients vanish for 10,000 steps gives one line, not 10,000. */
static void grads_text(FILE *f, const tfb_report_run *rr, int md)
{
    const tfb_gradients *g = rr->grads;
    if (md)
        fputs("\n### Gradient flags\n\n", f);
    if (!g) {
        fputs(md ? "No gradient norms logged.\n"
                 : "  gradient flags: no gradient norms logged\n",
              f);
        return;
    }
    if (g->n_flags == 0) {
        fprintf(f, md ? "None (%zu layers, %zu steps).\n"
                      : "  gradient flags: none (%zu layers, %zu steps)\n",
                g->n_layers, g->n_steps);
        return;
    }
    if (md)
        fputs("| layer | kind | flagged steps | first step | last step |\n"
              "| --- | --- | --- | --- | --- |\n", f);
    else
        fprintf(f, "  gradient flags: %zu\n    %-24s %-10s %8s %12s %12s\n",
                g->n_flags, "layer", "kind", "steps", "first step",
                "last step");
    /* One pass over the flags into (layer, kind) groups. */
    size_t ng = (g->n_layers + 1) * 3;
    struct group {
        size_t count;
        int64_t first, last;
    } *grp = calloc(ng, sizeof *grp);
    if (!grp) {
        fputs("  (out of memory)\n", f);
        return;
    }
    for (size_t i = 0; i < g->n_flags; i++) {
        const tfb_grad_flag *fl = &g->flags[i];
        if (fl->layer > g->n_layers || (unsigned)fl->kind > 2)
            continue;
        struct group *gr = &grp[fl->layer * 3 + (size_t)fl->kind];
        int64_t st = g->steps[fl->step];
        if (gr->count == 0 || st < gr->first)
            gr->first = st;
        if (gr->count == 0 || st > gr->last)
            gr->last = st;
        gr->count++;
    }
    for (size_t gi = 0; gi < ng; gi++) {
        const struct group *gr = &grp[gi];
        if (gr->count == 0)
            continue;
        const char *name = flag_layer(g, gi / 3);
        const char *kind = tfb_grad_flag_name((tfb_grad_flag_kind)(gi % 3));
        if (md) {
            fputs("| ", f);
            tfb_report_put_str(f, name, 1);
            fprintf(f, " | %s | %zu | %lld | %lld |\n", kind, gr->count,
                    (long long)gr->first, (long long)gr->last);
        } else {
            fputs("    ", f);
            tfb_report_put_str(f, name, 0);
            for (size_t c = strlen(name); c < 24; c++)
                fputc(' ', f);
            fprintf(f, " %-10s %8zu %12lld %12lld\n", kind, gr->count,
                    (long long)gr->first, (long long)gr->last);
        }
    }
    free(grp);
}

static void put_ms(FILE *f, const tfb_jv *ns)
{
    tfb_report_put_num(f, tfb_jv_num(ns, NAN) / 1e6);
}

static void gpu_text(FILE *f, const tfb_report_run *rr, int md)
{
    const gpu_part *gp = rr->gpu;
    if (md)
        fputs("\n### GPU\n\n", f);
    if (!gp) {
        fputs(md ? "Not traced.\n" : "  gpu: not traced\n", f);
        return;
    }
    const tfb_jv *devs = tfb_jv_get(gp->tree, "devices");
    const tfb_jv *ks = tfb_jv_get(gp->tree, "kernels");
    if (md)
        fputs("| device | name | kernels | busy ms | span ms | utilization | "
              "host wait ms | kernel wait ms | other idle ms |\n"
              "| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n", f);
    else
        fputs("  gpu:\n", f);
    for (size_t i = 0; devs && devs->type == TFB_JV_ARRAY && i < devs->n; i++) {
        const tfb_jv *d = &devs->items[i];
        const tfb_jv *idle = tfb_jv_get(d, "idle");
        const char *name = tfb_jv_str(tfb_jv_get(d, "name"), "?");
        double frac = tfb_jv_num(tfb_jv_get(d, "busy_fraction"), NAN);
        if (md) {
            fprintf(f, "| %.0f | ", tfb_jv_num(tfb_jv_get(d, "id"), -1));
            tfb_report_put_str(f, name, 1);
            fprintf(f, " | %.0f | ", tfb_jv_num(tfb_jv_get(d, "kernels"), 0));
        } else {
            fprintf(f, "    device %.0f (", tfb_jv_num(tfb_jv_get(d, "id"), -1));
            tfb_report_put_str(f, name, 0);
            fprintf(f, "): %.0f kernels, busy ",
                    tfb_jv_num(tfb_jv_get(d, "kernels"), 0));
        }
        put_ms(f, tfb_jv_get(d, "busy_ns"));
        fputs(md ? " | " : " ms of ", f);
        put_ms(f, tfb_jv_get(d, "span_ns"));
        fprintf(f, md ? " | %.1f%% | " : " ms (utilization %.1f%%); idle: host "
                                         "wait ",
                100.0 * frac);
        put_ms(f, tfb_jv_get(idle, "host_wait_ns"));
        fputs(md ? " | " : " ms, kernel wait ", f);
        put_ms(f, tfb_jv_get(idle, "kernel_wait_ns"));
        fputs(md ? " | " : " ms, other ", f);
        put_ms(f, tfb_jv_get(idle, "other_ns"));
        fputs(md ? " |\n" : " ms\n", f);
    }
    if (!ks || ks->type != TFB_JV_ARRAY || ks->n == 0)
        return;
    if (md)
        fputs("\nTop kernels by total time:\n\n| kernel | count | total ms | "
              "mean us | share |\n| --- | --- | --- | --- | --- |\n", f);
    else
        fprintf(f, "    top kernels by total time:\n    %-40s %8s %12s %10s "
                   "%7s\n", "kernel", "count", "total ms", "mean us", "share");
    for (size_t i = 0; i < ks->n; i++) {
        const tfb_jv *k = &ks->items[i];
        const char *name = tfb_jv_str(tfb_jv_get(k, "name"), "?");
        double count = tfb_jv_num(tfb_jv_get(k, "count"), 0);
        double total = tfb_jv_num(tfb_jv_get(k, "total_ns"), NAN) / 1e6;
        double mean = tfb_jv_num(tfb_jv_get(k, "mean_ns"), NAN) / 1e3;
        double share = tfb_jv_num(tfb_jv_get(k, "share"), NAN) * 100.0;
        if (md) {
            fputs("| ", f);
            tfb_report_put_str(f, name, 1);
            fprintf(f, " | %.0f | %.4g | %.4g | %.1f%% |\n", count, total, mean,
                    share);
        } else {
            fputs("    ", f);
            tfb_report_put_str(f, name, 0);
            for (size_t c = strlen(name); c < 40; c++)
                fputc(' ', f);
            fprintf(f, " %8.0f %12.4g %10.4g %6.1f%%\n", count, total, mean,
                    share);
        }
    }
}

void tfb_report_sections_text(FILE *f, const tfb_report_run *rr,
                              int markdown)
{
    alerts_text(f, rr, markdown);
    grads_text(f, rr, markdown);
    gpu_text(f, rr, markdown);
}
