/*
 * gradients.c - the gradients dashboard: per-layer gradient norms with
 * vanishing/exploding flags (/data/plugin/gradients/norms) and their
 * report section.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugins/gradients/gradients_analysis.h"
#include "core/plugin.h"
#include "core/report_fmt.h"

/* The thresholds of the flags, from --grad_vanish / --grad_explode (the
 * options below; set before any thread starts, read-only after). The
 * route's vanish= / explode= parameters override them per request. */
static double opt_vanish = TFB_GRAD_VANISH_DEFAULT;
static double opt_explode = TFB_GRAD_EXPLODE_DEFAULT;

static const tfb_option options[] = {
    {.name = "grad_vanish", .arg = "X", .type = TFB_OPT_DOUBLE,
     .help = "gradient norm below which a layer counts as vanishing",
     .def = "1e-6", .min = 0, .max = HUGE_VAL, .dest = &opt_vanish},
    {.name = "grad_explode", .arg = "X", .type = TFB_OPT_DOUBLE,
     .help = "gradient norm above which a layer counts as exploding",
     .def = "1e2", .min = 0, .max = HUGE_VAL, .dest = &opt_explode},
};

static int check_options(char *err, size_t err_len)
{
    if (opt_vanish < opt_explode)
        return 0;
    snprintf(err, err_len, "gradient thresholds need 0 <= vanish < explode "
                           "(--grad_vanish %g, --grad_explode %g)",
             opt_vanish, opt_explode);
    return TFB_EINVAL;
}

static int route_norms(const tfb_http_req *req, tfb_http_resp *resp)
{
    tfb_run *run;
    double vanish, explode;
    int rc = tfb_http_param_run(req, resp, &run);
    if (rc < 0)
        return rc;
    rc = tfb_http_param_double(req, resp, "vanish", 0, opt_vanish, 0.0,
                               HUGE_VAL, &vanish);
    if (rc < 0)
        return rc;
    rc = tfb_http_param_double(req, resp, "explode", 0, opt_explode,
                               0.0, HUGE_VAL, &explode);
    if (rc < 0)
        return rc;
    if (!(explode > vanish) || isinf(vanish))
        return tfb_http_error(resp, 400,
                              "explode (%g) must be greater than vanish (%g)",
                              explode, vanish);
    tfb_gradients *g;
    rc = tfb_gradients_analyze(run, vanish, explode, &g);
    if (rc < 0)
        return rc;
    tfb_json j;
    tfb_json_init(&j);
    tfb_gradients_json(&j, g);
    tfb_gradients_free(g);
    return tfb_http_json(resp, &j);
}

static const char *flag_layer(const tfb_gradients *g, size_t layer)
{
    return layer < g->n_layers ? g->layers[layer] : "global";
}

/* Flags grouped by (layer, kind): how many, first and last step. A run
 * whose gradients vanish for 10,000 steps gives one line, not 10,000. */
static void grads_text(FILE *f, const tfb_gradients *g, int md)
{
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
        fputs(md ? "| " : "    ", f);
        tfb_report_put_str(f, name, md);
        if (!md)
            tfb_report_pad(f, strlen(name), 24);
        fprintf(f, md ? " | %s | %zu | %lld | %lld |\n"
                      : " %-10s %8zu %12lld %12lld\n",
                kind, gr->count, (long long)gr->first, (long long)gr->last);
    }
    free(grp);
}

/* The run's analysis, or NULL when it logged no gradient norms. */
static int analyze(tfb_run *r, const tfb_report_opts *o, tfb_gradients **out)
{
    tfb_gradients *g = NULL;
    (void)o;
    int rc = tfb_gradients_analyze(r, opt_vanish, opt_explode, &g);
    if (rc < 0)
        return rc;
    if (g && g->n_layers == 0 && g->n_steps == 0) {
        tfb_gradients_free(g);
        g = NULL;
    }
    *out = g;
    return 0;
}

static int report_text(FILE *f, tfb_store *s, tfb_run *r,
                       const tfb_report_opts *o, int markdown)
{
    (void)s;
    tfb_gradients *g;
    int rc = analyze(r, o, &g);
    if (rc < 0)
        return rc;
    grads_text(f, g, markdown);
    tfb_gradients_free(g);
    return 0;
}

static int report_json(tfb_json *j, tfb_store *s, tfb_run *r,
                       const tfb_report_opts *o)
{
    (void)s;
    tfb_gradients *g;
    int rc = analyze(r, o, &g);
    if (rc < 0)
        return rc;
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

    tfb_gradients_free(g);
    return 0;
}

static int has_norms(tfb_store *s, tfb_run *r)
{
    (void)s;
    tfb_series **ser;
    size_t n;
    if (tfb_run_series(r, TFB_SERIES_SCALAR, &ser, &n) < 0)
        return 0;
    size_t plen = strlen(TFB_TAG_GRAD_NORM_PREFIX);
    int found = 0;
    for (size_t i = 0; i < n && !found; i++)
        found = strncmp(tfb_series_tag(ser[i]), TFB_TAG_GRAD_NORM_PREFIX,
                        plen) == 0;
    free(ser);
    return found;
}

static const tfb_plugin_route routes[] = {
    {"norms", route_norms},
};

/* Its web files (page.js first), embedded from this folder by the
 * build (server/plugins/meson.build). */
extern const tfb_asset tfb_gradients_assets[];

const tfb_plugin tfb_plugin_gradients = {
    TFB_PLUGIN_ABI,
    .name = "gradients",
    .title = "Gradients",
    .module = "js/pages/gradients.js",
    .assets = tfb_gradients_assets,
    .routes = routes,
    .n_routes = sizeof routes / sizeof routes[0],
    .has_data = has_norms,
    .report_text = report_text,
    .report_json = report_json,
    .options = options,
    .n_options = sizeof options / sizeof options[0],
    .check_options = check_options,
};
