/*
 * compare_analysis.c - builds the comparison of two runs (compare_analysis.h)
 * from the same analyses the dashboards use: the store's scalar series,
 * the pipeline summary and the GPU kernel statistics; hparams in
 * compare_hparams.c.
 */
#include "plugins/compare/compare_analysis.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "trace/trace.h"
#include "analysis/efficiency.h"
#include "base/errors.h"
#include "core/plugin.h"
#include "analysis/pipeline_analysis.h"
#include "plugins/compare/compare_internal.h"
#include "base/str.h"

double tfb_compare_change(double a, double b)
{
    if (!isfinite(a) || !isfinite(b))
        return NAN;
    if (a == b)
        return 0.0;
    if (a == 0.0)
        return b > 0 ? INFINITY : -INFINITY;
    return (b - a) / fabs(a);
}

/* ---- scalars ------------------------------------------------------------ */

typedef struct facts {
    size_t count;
    double last, min;
    int has_min;
} facts;

static void series_facts(tfb_series *s, facts *f)
{
    tfb_series_view v;
    tfb_series_read_begin(s, &v);
    f->count = v.count;
    f->last = v.count ? (double)v.value[v.count - 1] : NAN;
    f->min = INFINITY;
    f->has_min = 0;
    for (size_t i = 0; i < v.count; i++) {
        double x = v.value[i];
        if (isfinite(x) && x < f->min) {
            f->min = x;
            f->has_min = 1;
        }
    }
    if (!f->has_min)
        f->min = NAN;
    tfb_series_read_end(s);
}

static int cmp_scalar(const void *x, const void *y)
{
    const tfb_compare_scalar *a = x, *b = y;
    return strcmp(a->tag, b->tag);
}

static int compare_scalars(tfb_run *a, tfb_run *b, tfb_compare *c)
{
    tfb_series **sa;
    size_t na;
    int rc = tfb_run_series(a, TFB_SERIES_SCALAR, &sa, &na);
    if (rc < 0)
        return rc;
    size_t nb_total = 0;
    {
        tfb_series **sb;
        rc = tfb_run_series(b, TFB_SERIES_SCALAR, &sb, &nb_total);
        if (rc < 0) {
            free(sa);
            return rc;
        }
        free(sb);
    }
    c->scalars = na ? calloc(na, sizeof *c->scalars) : NULL;
    if (na && !c->scalars) {
        free(sa);
        return TFB_ENOMEM;
    }
    for (size_t i = 0; i < na; i++) {
        const char *tag = tfb_series_tag(sa[i]);
        tfb_series *sb = tfb_run_find_series(b, TFB_SERIES_SCALAR, tag);
        if (!sb) {
            c->only_a++;
            continue;
        }
        facts fa, fb;
        series_facts(sa[i], &fa);
        series_facts(sb, &fb);
        tfb_compare_scalar *s = &c->scalars[c->n_scalars];
        s->tag = tfb_strdup(tag);
        if (!s->tag) {
            free(sa);
            return TFB_ENOMEM;
        }
        c->n_scalars++;
        s->count_a = fa.count;
        s->count_b = fb.count;
        s->last_a = fa.last;
        s->last_b = fb.last;
        s->last_change = tfb_compare_change(fa.last, fb.last);
        s->has_min_a = fa.has_min;
        s->has_min_b = fb.has_min;
        s->min_a = fa.min;
        s->min_b = fb.min;
        s->min_change = tfb_compare_change(fa.min, fb.min);
    }
    free(sa);
    c->only_b = nb_total - c->n_scalars;
    if (c->n_scalars > 1)
        qsort(c->scalars, c->n_scalars, sizeof *c->scalars, cmp_scalar);
    return 0;
}

/* ---- pipeline ----------------------------------------------------------- */

static int compare_pipeline(tfb_store *sa, tfb_run *a, tfb_store *sb,
                            tfb_run *b, tfb_compare_pipeline *p)
{
    tfb_pipeline_summary pa, pb;
    int rc = tfb_pipeline_analyze_run(sa, a, &pa);
    if (rc == 0)
        rc = tfb_pipeline_analyze_run(sb, b, &pb);
    if (rc < 0)
        return rc;
    p->steps_a = pa.steps;
    p->steps_b = pb.steps;
    p->step_ms_a = pa.steps ? pa.mean_step_ms : NAN;
    p->step_ms_b = pb.steps ? pb.mean_step_ms : NAN;
    p->input_ms_a = pa.steps ? pa.mean_input_ms : NAN;
    p->input_ms_b = pb.steps ? pb.mean_input_ms : NAN;
    p->share_a = pa.steps ? pa.input_fraction : NAN;
    p->share_b = pb.steps ? pb.input_fraction : NAN;
    p->verdict_a = pa.verdict;
    p->verdict_b = pb.verdict;
    p->step_change = tfb_compare_change(p->step_ms_a, p->step_ms_b);
    p->input_ms_change = tfb_compare_change(p->input_ms_a, p->input_ms_b);
    p->share_change = p->share_b - p->share_a; /* NaN if either is */
    return 0;
}

/* ---- efficiency --------------------------------------------------------- */

/* A double option of some dashboard (the efficiency flags), 0 when no
 * plugin declares it: the comparison reads the same MFU and energy
 * figures the dashboard shows, without naming the dashboard. */
static double option_double(const char *name)
{
    const tfb_option *o = tfb_plugin_option_find(name, strlen(name));
    return o && o->type == TFB_OPT_DOUBLE && o->dest ? *(double *)o->dest
                                                     : 0.0;
}

static int eff_of(tfb_run *r, const tfb_eff_opts *o, int *has, double *mfu,
                  double *tokens, double *jpt)
{
    tfb_eff_run e;
    int rc = tfb_eff_run_compute(r, o, &e);
    *has = rc == 0;
    *mfu = *tokens = *jpt = NAN;
    if (rc == TFB_ENOENT)
        return 0;
    if (rc < 0)
        return rc;
    *mfu = e.mfu_pct;
    *tokens = e.tokens_per_s;
    *jpt = e.j_per_token;
    return 0;
}

static int compare_eff(tfb_run *a, tfb_run *b, tfb_compare_eff *e)
{
    tfb_eff_opts o;
    memset(&o, 0, sizeof o);
    o.peak_tflops = option_double("peak_tflops");
    o.grid_gco2_per_kwh = option_double("grid_gco2_per_kwh");
    int rc = eff_of(a, &o, &e->has_a, &e->mfu_a, &e->tokens_a, &e->jpt_a);
    if (rc == 0)
        rc = eff_of(b, &o, &e->has_b, &e->mfu_b, &e->tokens_b, &e->jpt_b);
    e->mfu_change = tfb_compare_change(e->mfu_a, e->mfu_b);
    e->tokens_change = tfb_compare_change(e->tokens_a, e->tokens_b);
    e->jpt_change = tfb_compare_change(e->jpt_a, e->jpt_b);
    return rc;
}

/* ---- GPU kernels -------------------------------------------------------- */

/* One run's kernel statistics, names copied so the trace can go. */
typedef struct kstat {
    char *name;
    int64_t count, total_ns;
    double mean_ns;
} kstat;

static int cmp_kstat(const void *x, const void *y)
{
    return strcmp(((const kstat *)x)->name, ((const kstat *)y)->name);
}

static void kstats_free(kstat *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i].name);
    free(v);
}

/* *traced 0 when the run has no readable trace (not an error): *loading
 * when it is still being read, *error (malloc'd) when it failed. */
static int kernels_of(tfb_store *s, tfb_run *r, int wait_ms, int *traced,
                      int *loading, char **error, kstat **out, size_t *n,
                      int64_t *total)
{
    *traced = 0;
    *out = NULL;
    *n = 0;
    *total = 0;
    tfb_trace *t = NULL;
    tfb_trace_status st;
    memset(&st, 0, sizeof st);
    int rc = tfb_trace_get(s, r, wait_ms, &t, &st);
    if (rc < 0)
        return rc == TFB_ENOMEM ? rc : 0;
    if (st.state == TFB_TRACE_LOADING)
        *loading = 1;
    if (st.state == TFB_TRACE_FAILED) {
        *error = tfb_strdup(st.error[0] ? st.error : "unreadable trace");
        if (!*error)
            return TFB_ENOMEM;
    }
    if (st.state != TFB_TRACE_READY || !t) {
        if (t)
            tfb_trace_release(t);
        return 0;
    }
    tfb_trace_kernels k;
    rc = tfb_trace_kernel_stats(t, 0, &k);
    if (rc < 0) {
        tfb_trace_release(t);
        return rc == TFB_ENOMEM ? rc : 0;
    }
    *traced = 1;
    *total = k.total_ns;
    kstat *v = k.n ? calloc(k.n, sizeof *v) : NULL;
    if (k.n && !v)
        rc = TFB_ENOMEM;
    for (size_t i = 0; i < k.n && rc == 0; i++) {
        v[i].name = tfb_strdup(k.v[i].name ? k.v[i].name : "");
        if (!v[i].name) {
            rc = TFB_ENOMEM;
            break;
        }
        v[i].count = k.v[i].count;
        v[i].total_ns = k.v[i].total_ns;
        v[i].mean_ns = k.v[i].mean_ns;
    }
    size_t nk = k.n;
    tfb_trace_kernels_free(&k);
    tfb_trace_release(t);
    if (rc < 0) {
        kstats_free(v, nk);
        return rc;
    }
    if (nk > 1)
        qsort(v, nk, sizeof *v, cmp_kstat);
    *out = v;
    *n = nk;
    return 0;
}

static int cmp_kernel_delta(const void *x, const void *y)
{
    const tfb_compare_kernel *a = x, *b = y;
    int64_t da = a->total_ns_b - a->total_ns_a;
    int64_t db = b->total_ns_b - b->total_ns_a;
    if (da != db)
        return da > db ? -1 : 1;
    return strcmp(a->name, b->name);
}

static int compare_kernels(tfb_store *sa, tfb_run *a, tfb_store *sb,
                           tfb_run *b, int wait_ms, tfb_compare *c)
{
    kstat *ka = NULL, *kb = NULL;
    size_t na = 0, nb = 0;
    int rc = kernels_of(sa, a, wait_ms, &c->traced_a, &c->loading_a,
                        &c->gpu_error_a, &ka, &na, &c->kernel_ns_a);
    if (rc == 0)
        rc = kernels_of(sb, b, wait_ms, &c->traced_b, &c->loading_b,
                        &c->gpu_error_b, &kb, &nb, &c->kernel_ns_b);
    if (rc == 0 && na + nb) {
        c->kernels = calloc(na + nb, sizeof *c->kernels);
        if (!c->kernels)
            rc = TFB_ENOMEM;
    }
    /* Merge the two name-sorted lists. */
    size_t i = 0, k = 0;
    while (rc == 0 && (i < na || k < nb)) {
        int ord = i == na ? 1 : k == nb ? -1 : strcmp(ka[i].name, kb[k].name);
        tfb_compare_kernel *e = &c->kernels[c->n_kernels];
        e->mean_ns_a = e->mean_ns_b = NAN;
        if (ord <= 0) {
            e->count_a = ka[i].count;
            e->total_ns_a = ka[i].total_ns;
            e->mean_ns_a = ka[i].mean_ns;
        }
        if (ord >= 0) {
            e->count_b = kb[k].count;
            e->total_ns_b = kb[k].total_ns;
            e->mean_ns_b = kb[k].mean_ns;
        }
        e->name = tfb_strdup(ord <= 0 ? ka[i].name : kb[k].name);
        if (!e->name) {
            rc = TFB_ENOMEM;
            break;
        }
        c->n_kernels++;
        if (ord <= 0)
            i++;
        if (ord >= 0)
            k++;
        /* A kernel only one run has is compared against 0 when both runs
         * were traced (it appeared or went away); else it is unknown. */
        if (c->traced_a && c->traced_b) {
            e->change = tfb_compare_change((double)e->total_ns_a,
                                           (double)e->total_ns_b);
            int64_t grew = e->total_ns_b - e->total_ns_a;
            e->slower = grew >= TFB_COMPARE_SLOWER_MIN_NS &&
                        (double)grew > TFB_COMPARE_SLOWER *
                                           (double)e->total_ns_a;
        } else {
            e->change = NAN;
        }
    }
    kstats_free(ka, na);
    kstats_free(kb, nb);
    if (rc == 0 && c->n_kernels > 1)
        qsort(c->kernels, c->n_kernels, sizeof *c->kernels,
              cmp_kernel_delta);
    c->kernel_change = c->traced_a && c->traced_b
                           ? tfb_compare_change((double)c->kernel_ns_a,
                                                (double)c->kernel_ns_b)
                           : NAN;
    return rc;
}

/* ---- the whole comparison ---------------------------------------------- */

int tfb_compare_runs(tfb_store *sa, tfb_run *a, const char *name_a,
                     tfb_store *sb, tfb_run *b, const char *name_b,
                     int gpu_wait_ms, tfb_compare *out)
{
    memset(out, 0, sizeof *out);
    out->kernel_change = NAN;
    out->name_a = tfb_strdup(name_a ? name_a : tfb_run_name(a));
    out->name_b = tfb_strdup(name_b ? name_b : tfb_run_name(b));
    int rc = out->name_a && out->name_b ? 0 : TFB_ENOMEM;
    if (rc == 0)
        rc = compare_scalars(a, b, out);
    /* Kernels before the pipeline: the pipeline's trace figures wait for
     * the trace only briefly, and by then it is loaded. */
    if (rc == 0)
        rc = compare_kernels(sa, a, sb, b, gpu_wait_ms, out);
    if (rc == 0 && out->traced_a && out->traced_b)
        rc = tfb_trace_diff_runs(sa, a, sb, b, gpu_wait_ms, &out->diff);
    if (rc == 0)
        rc = compare_pipeline(sa, a, sb, b, &out->pipeline);
    if (rc == 0)
        rc = compare_eff(a, b, &out->eff);
    if (rc == 0)
        rc = tfb_compare_hparams_diff(sa, a, sb, b, out);
    if (rc < 0)
        tfb_compare_free(out);
    return rc;
}

void tfb_compare_free(tfb_compare *c)
{
    if (!c)
        return;
    free(c->name_a);
    free(c->name_b);
    for (size_t i = 0; i < c->n_scalars; i++)
        free(c->scalars[i].tag);
    free(c->scalars);
    for (size_t i = 0; i < c->n_kernels; i++)
        free(c->kernels[i].name);
    free(c->kernels);
    free(c->gpu_error_a);
    free(c->gpu_error_b);
    for (size_t i = 0; i < c->n_hparams; i++) {
        free(c->hparams[i].name);
        free(c->hparams[i].a);
        free(c->hparams[i].b);
    }
    free(c->hparams);
    tfb_trace_diff_free(&c->diff);
    memset(c, 0, sizeof *c);
    c->kernel_change = NAN;
}
