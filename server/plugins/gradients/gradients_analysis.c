/*
 * gradients_analysis.c - the layer × step table of gradient norms and its
 * vanishing/exploding/non-finite flags (see gradients_analysis.h).
 */
#include "plugins/gradients/gradients_analysis.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *tfb_grad_flag_name(tfb_grad_flag_kind k)
{
    switch (k) {
    case TFB_GRAD_FLAG_VANISHING:
        return "vanishing";
    case TFB_GRAD_FLAG_EXPLODING:
        return "exploding";
    case TFB_GRAD_FLAG_NONFINITE:
        return "nonfinite";
    }
    return "unknown";
}

void tfb_gradients_free(tfb_gradients *g)
{
    if (g == NULL)
        return;
    for (size_t i = 0; i < g->n_layers; i++)
        free(g->layers[i]);
    free(g->layers);
    free(g->steps);
    free(g->norms);
    free(g->present);
    free(g->global);
    free(g->global_present);
    free(g->flags);
    free(g);
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Index of step in the sorted unique array (it is always there). */
static size_t step_index(const int64_t *steps, size_t n, int64_t step)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (steps[mid] < step)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Appends the steps of series s to *v (a growable array). */
static int gather_steps(tfb_series *s, int64_t **v, size_t *n, size_t *cap)
{
    tfb_series_view view;
    tfb_series_read_begin(s, &view);
    int rc = 0;
    if (*n + view.count > *cap) {
        size_t nc = (*cap ? *cap : 64);
        while (nc < *n + view.count)
            nc *= 2;
        int64_t *nv = realloc(*v, nc * sizeof *nv);
        if (nv == NULL) {
            rc = TFB_ENOMEM;
            goto out;
        }
        *v = nv;
        *cap = nc;
    }
    memcpy(*v + *n, view.step, view.count * sizeof(int64_t));
    *n += view.count;
out:
    tfb_series_read_end(s);
    return rc;
}

/* Fills one row (n_steps cells) from series s. */
static void fill_row(tfb_series *s, const int64_t *steps, size_t n_steps,
                     float *row, unsigned char *present)
{
    tfb_series_view view;
    tfb_series_read_begin(s, &view);
    /* The snapshot may hold points appended after the steps were gathered:
     * skip steps we do not know rather than index out of range. */
    for (size_t i = 0; i < view.count; i++) {
        size_t k = step_index(steps, n_steps, view.step[i]);
        if (k < n_steps && steps[k] == view.step[i]) {
            row[k] = view.value[i];
            present[k] = 1;
        }
    }
    tfb_series_read_end(s);
}

static int classify(float v, double vanish, double explode,
                    tfb_grad_flag_kind *kind)
{
    if (!isfinite(v))
        *kind = TFB_GRAD_FLAG_NONFINITE;
    else if ((double)v < vanish)
        *kind = TFB_GRAD_FLAG_VANISHING;
    else if ((double)v > explode)
        *kind = TFB_GRAD_FLAG_EXPLODING;
    else
        return 0;
    return 1;
}

int tfb_gradients_analyze(tfb_run *run, double vanish, double explode,
                          tfb_gradients **out)
{
    if (run == NULL || out == NULL || !(vanish >= 0) || !(explode > vanish) ||
        isinf(vanish))
        return TFB_EINVAL;
    tfb_series **all = NULL;
    size_t n_all = 0;
    int rc = tfb_run_series(run, TFB_SERIES_SCALAR, &all, &n_all);
    if (rc < 0)
        return rc;
    tfb_gradients *g = calloc(1, sizeof *g);
    tfb_series **layer_series = calloc(n_all ? n_all : 1, sizeof *layer_series);
    tfb_series *global_series = NULL;
    int64_t *steps = NULL;
    size_t n_steps = 0, cap = 0;
    if (g == NULL || layer_series == NULL) {
        rc = TFB_ENOMEM;
        goto fail;
    }
    g->layers = calloc(n_all ? n_all : 1, sizeof *g->layers);
    if (g->layers == NULL) {
        rc = TFB_ENOMEM;
        goto fail;
    }
    const size_t plen = strlen(TFB_TAG_GRAD_NORM_PREFIX);
    for (size_t i = 0; i < n_all; i++) {
        const char *tag = tfb_series_tag(all[i]);
        if (strncmp(tag, TFB_TAG_GRAD_NORM_PREFIX, plen) != 0 || tag[plen] == '\0')
            continue;
        if (strcmp(tag, TFB_TAG_GRAD_NORM_GLOBAL) == 0) {
            global_series = all[i];
        } else {
            g->layers[g->n_layers] = strdup(tag + plen);
            if (g->layers[g->n_layers] == NULL) {
                rc = TFB_ENOMEM;
                goto fail;
            }
            layer_series[g->n_layers++] = all[i];
        }
        if ((rc = gather_steps(all[i], &steps, &n_steps, &cap)) < 0)
            goto fail;
    }
    if (n_steps > 0)
        qsort(steps, n_steps, sizeof *steps, cmp_i64);
    size_t u = 0;
    for (size_t i = 0; i < n_steps; i++)
        if (u == 0 || steps[u - 1] != steps[i])
            steps[u++] = steps[i];
    n_steps = u;
    g->steps = steps;
    steps = NULL;
    g->n_steps = n_steps;

    size_t cells = g->n_layers * n_steps;
    g->norms = calloc(cells ? cells : 1, sizeof *g->norms);
    g->present = calloc(cells ? cells : 1, 1);
    g->global = calloc(n_steps ? n_steps : 1, sizeof *g->global);
    g->global_present = calloc(n_steps ? n_steps : 1, 1);
    if (!g->norms || !g->present || !g->global || !g->global_present) {
        rc = TFB_ENOMEM;
        goto fail;
    }
    for (size_t l = 0; l < g->n_layers; l++)
        fill_row(layer_series[l], g->steps, n_steps, g->norms + l * n_steps,
                 g->present + l * n_steps);
    if (global_series != NULL) {
        fill_row(global_series, g->steps, n_steps, g->global,
                 g->global_present);
    } else if (g->n_layers > 0) {
        g->global_computed = 1;
        for (size_t s = 0; s < n_steps; s++) {
            double sum = 0;
            int all_there = 1;
            for (size_t l = 0; l < g->n_layers && all_there; l++) {
                all_there = g->present[l * n_steps + s];
                double v = g->norms[l * n_steps + s];
                sum += v * v; /* float values: their squares fit a double */
            }
            if (all_there) {
                g->global[s] = (float)sqrt(sum);
                g->global_present[s] = 1;
            }
        }
    }

    /* Flags, by step then layer (global last). Count first, then fill. */
    size_t nf = 0;
    tfb_grad_flag_kind kind;
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1) {
            g->flags = malloc((nf ? nf : 1) * sizeof *g->flags);
            if (g->flags == NULL) {
                rc = TFB_ENOMEM;
                goto fail;
            }
            g->n_flags = nf;
            nf = 0;
        }
        for (size_t s = 0; s < n_steps; s++)
            for (size_t l = 0; l <= g->n_layers; l++) {
                int here = l < g->n_layers ? g->present[l * n_steps + s]
                                           : g->global_present[s];
                float v = l < g->n_layers ? g->norms[l * n_steps + s]
                                          : g->global[s];
                if (!here || !classify(v, vanish, explode, &kind))
                    continue;
                if (pass == 1)
                    g->flags[nf] = (tfb_grad_flag){l, s, kind};
                nf++;
            }
    }
    free(all);
    free(layer_series);
    *out = g;
    return 0;
fail:
    free(steps);
    free(all);
    free(layer_series);
    tfb_gradients_free(g);
    return rc;
}

static void cell(tfb_json *j, int present, float v)
{
    if (present)
        tfb_json_float(j, v);
    else
        tfb_json_null(j);
}

void tfb_gradients_json(tfb_json *j, const tfb_gradients *g)
{
    size_t ns = g->n_steps;
    tfb_json_object_begin(j);
    tfb_json_key(j, "layers");
    tfb_json_array_begin(j);
    for (size_t l = 0; l < g->n_layers; l++)
        tfb_json_str(j, g->layers[l]);
    tfb_json_array_end(j);
    tfb_json_key(j, "steps");
    tfb_json_array_begin(j);
    for (size_t s = 0; s < ns; s++)
        tfb_json_i64(j, g->steps[s]);
    tfb_json_array_end(j);
    tfb_json_key(j, "norms");
    tfb_json_array_begin(j);
    for (size_t l = 0; l < g->n_layers; l++) {
        tfb_json_array_begin(j);
        for (size_t s = 0; s < ns; s++)
            cell(j, g->present[l * ns + s], g->norms[l * ns + s]);
        tfb_json_array_end(j);
    }
    tfb_json_array_end(j);
    tfb_json_key(j, "global");
    tfb_json_array_begin(j);
    for (size_t s = 0; s < ns; s++)
        cell(j, g->global_present[s], g->global[s]);
    tfb_json_array_end(j);
    tfb_json_key(j, "global_computed");
    tfb_json_bool(j, g->global_computed);
    tfb_json_key(j, "flags");
    tfb_json_array_begin(j);
    for (size_t f = 0; f < g->n_flags; f++) {
        const tfb_grad_flag *fl = &g->flags[f];
        tfb_json_object_begin(j);
        tfb_json_key(j, "layer");
        tfb_json_str(j, fl->layer < g->n_layers ? g->layers[fl->layer]
                                                : "global");
        tfb_json_key(j, "step");
        tfb_json_i64(j, g->steps[fl->step]);
        tfb_json_key(j, "kind");
        tfb_json_str(j, tfb_grad_flag_name(fl->kind));
        tfb_json_object_end(j);
    }
    tfb_json_array_end(j);
    tfb_json_object_end(j);
}
