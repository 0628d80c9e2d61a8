/*
 * hparams_groups.c - run groups with mean and band over aligned steps, and
 * per-run metric summaries (the rule is in hparams_groups.h).
 */
#include "plugins/hparams/hparams_groups.h"

#include <math.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/hparams_analysis.h"
#include "base/json_str.h"
#include "base/regex_bound.h"
#include "base/str.h"
#include "base/vec.h"
#include "core/selection.h"

/* ---- metric summary ---------------------------------------------------- */

static tfb_run *parent_run(tfb_store *s, tfb_run *r)
{
    const char *name = tfb_run_name(r);
    const char *slash = strrchr(name, '/');
    if (strcmp(name, ".") == 0)
        return NULL;
    if (!slash)
        return tfb_store_find_run(s, ".");
    char *p = tfb_strndup(name, (size_t)(slash - name));
    if (!p)
        return NULL;
    tfb_run *pr = tfb_store_find_run(s, p);
    free(p);
    return pr;
}

int tfb_run_metric_summary(tfb_store *s, tfb_run *r, const char *tag,
                           tfb_metric_summary *out)
{
    tfb_series *se = tfb_run_find_series(r, TFB_SERIES_SCALAR, tag);
    tfb_run *from = r;
    if (!se) {
        from = parent_run(s, r);
        if (from)
            se = tfb_run_find_series(from, TFB_SERIES_SCALAR, tag);
    }
    if (!se)
        return TFB_ENOENT;
    tfb_metric_summary m;
    memset(&m, 0, sizeof m);
    m.run = tfb_run_name(from);
    m.min = m.max = m.last = NAN;
    tfb_series_view v;
    tfb_series_read_begin(se, &v);
    m.count = v.count;
    for (size_t k = 0; k < v.count; k++) {
        double x = v.value[k];
        if (k == 0 || v.step[k] >= m.last_step) {
            m.last_step = v.step[k];
            m.last = x;
        }
        if (!isfinite(x)) {
            m.nonfinite++;
            continue;
        }
        if (!m.finite || x < m.min)
            m.min = x;
        if (!m.finite || x > m.max)
            m.max = x;
        m.finite = 1;
    }
    tfb_series_read_end(se);
    *out = m;
    return 0;
}

/* ---- groups ------------------------------------------------------------ */

typedef struct sp {
    int64_t step;
    double v;
    size_t ord;
} sp;

/* One member's points sorted by step, last written of equal steps. */
typedef struct member {
    sp *pts;
    size_t n;
    size_t pos; /* cursor while walking the grid */
} member;

static int cmp_sp(const void *a, const void *b)
{
    const sp *x = a, *y = b;
    if (x->step != y->step)
        return x->step < y->step ? -1 : 1;
    return x->ord < y->ord ? -1 : x->ord > y->ord;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

static int load_member(tfb_series *se, member *m)
{
    tfb_series_view v;
    tfb_series_read_begin(se, &v);
    m->pts = malloc((v.count ? v.count : 1) * sizeof *m->pts);
    if (!m->pts) {
        tfb_series_read_end(se);
        return TFB_ENOMEM;
    }
    for (size_t k = 0; k < v.count; k++)
        m->pts[k] = (sp){v.step[k], v.value[k], k};
    m->n = v.count;
    tfb_series_read_end(se);
    qsort(m->pts, m->n, sizeof *m->pts, cmp_sp);
    /* keep the last of equal steps */
    size_t w = 0;
    for (size_t k = 0; k < m->n; k++) {
        if (w && m->pts[w - 1].step == m->pts[k].step)
            m->pts[w - 1] = m->pts[k];
        else
            m->pts[w++] = m->pts[k];
    }
    m->n = w;
    m->pos = 0;
    return 0;
}

static int compute_curve(tfb_store *s, tfb_run_group *g, const char *tag)
{
    (void)s;
    member *ms = calloc(g->runs.n ? g->runs.n : 1, sizeof *ms);
    if (!ms)
        return TFB_ENOMEM;
    int e = 0;
    size_t total = 0;
    for (size_t i = 0; i < g->runs.n && e == 0; i++) {
        tfb_run *r = tfb_store_find_run(s, g->runs.v[i]);
        tfb_series *se = r ? tfb_run_find_series(r, TFB_SERIES_SCALAR, tag)
                           : NULL;
        if (se) {
            e = load_member(se, &ms[i]);
            total += ms[i].n;
        }
    }
    int64_t *grid = NULL;
    size_t ng = 0;
    if (e == 0 && !(grid = malloc((total ? total : 1) * sizeof *grid)))
        e = TFB_ENOMEM;
    if (e == 0) {
        for (size_t i = 0; i < g->runs.n; i++)
            for (size_t k = 0; k < ms[i].n; k++)
                grid[ng++] = ms[i].pts[k].step;
        qsort(grid, ng, sizeof *grid, cmp_i64);
        size_t w = 0;
        for (size_t k = 0; k < ng; k++)
            if (!w || grid[w - 1] != grid[k])
                grid[w++] = grid[k];
        ng = w;
        g->points = malloc((ng ? ng : 1) * sizeof *g->points);
        if (!g->points)
            e = TFB_ENOMEM;
    }
    for (size_t k = 0; e == 0 && k < ng; k++) {
        int64_t t = grid[k];
        tfb_group_point p = {.step = t};
        double sum = 0, mn = INFINITY, mx = -INFINITY;
        /* Two passes over the values at t: mean, then the squared
         * deviations (stable for values far from 0). */
        for (size_t i = 0; i < g->runs.n; i++) {
            member *m = &ms[i];
            if (!m->n || t < m->pts[0].step || t > m->pts[m->n - 1].step)
                continue;
            while (m->pos + 1 < m->n && m->pts[m->pos + 1].step <= t)
                m->pos++;
            double x = m->pts[m->pos].v;
            if (!isfinite(x)) {
                p.nonfinite++;
                continue;
            }
            p.n++;
            sum += x;
            if (x < mn)
                mn = x;
            if (x > mx)
                mx = x;
        }
        if (p.n) {
            p.mean = sum / p.n;
            p.min = mn;
            p.max = mx;
            double ss = 0;
            for (size_t i = 0; i < g->runs.n; i++) {
                member *m = &ms[i];
                if (!m->n || t < m->pts[0].step || t > m->pts[m->n - 1].step)
                    continue;
                double x = m->pts[m->pos].v;
                if (isfinite(x))
                    ss += (x - p.mean) * (x - p.mean);
            }
            p.std = sqrt(ss / p.n);
        } else {
            p.mean = p.min = p.max = p.std = NAN;
        }
        g->points[g->n_points++] = p;
    }
    for (size_t i = 0; i < g->runs.n; i++)
        free(ms[i].pts);
    free(ms);
    free(grid);
    return e;
}

static void group_free(tfb_run_group *g)
{
    free(g->key);
    for (size_t i = 0; i < g->runs.n; i++)
        free(g->runs.v[i]);
    tfb_vec_free(&g->runs);
    free(g->points);
}

void tfb_run_groups_free(tfb_run_groups *g)
{
    if (!g)
        return;
    for (size_t i = 0; i < g->n_groups; i++)
        group_free(&g->groups[i]);
    free(g->groups);
    memset(g, 0, sizeof *g);
}

/* Group keys sort numerically when both are numbers, else as text. */
static int cmp_group(const void *a, const void *b)
{
    const tfb_run_group *x = a, *y = b;
    char *ex, *ey;
    double dx = strtod(x->key, &ex), dy = strtod(y->key, &ey);
    if (*x->key && *y->key && !*ex && !*ey && dx != dy)
        return dx < dy ? -1 : 1;
    return strcmp(x->key, y->key);
}

/* The groups being built; handed to out->groups when the build ends. */
typedef struct gbuild {
    TFB_VEC(tfb_run_group) groups;
} gbuild;

static int add_member(gbuild *b, const char *key, size_t key_len,
                      const char *run)
{
    tfb_run_group *g = NULL;
    for (size_t i = 0; i < b->groups.n && !g; i++)
        if (strlen(b->groups.v[i].key) == key_len &&
            memcmp(b->groups.v[i].key, key, key_len) == 0)
            g = &b->groups.v[i];
    if (!g) {
        if (!(g = tfb_vec_add(&b->groups)))
            return TFB_ENOMEM;
        if (!(g->key = tfb_strndup(key, key_len)))
            return TFB_ENOMEM;
    }
    char *copy = tfb_strdup(run);
    if (!copy || tfb_vec_push(&g->runs, copy) < 0) {
        free(copy);
        return TFB_ENOMEM;
    }
    return 0;
}

static int by_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* only: sorted (by_str). A binary search: a held selection of 10,000 runs
 * over a store of 10,000 was 10^8 comparisons, seconds, scanned. */
static int in_only(const char *run, const char *const *only, size_t n_only)
{
    if (!only)
        return 1;
    return bsearch(&run, only, n_only, sizeof *only, by_str) != NULL;
}

int tfb_run_groups_compute(tfb_store *s, const char *tag,
                           const char *group_by, const char *const *only,
                           size_t n_only, tfb_run_groups *out, char *err,
                           size_t err_len)
{
    memset(out, 0, sizeof *out);
    int by_hparam;
    const char *arg;
    if (strncmp(group_by, "hparam:", 7) == 0 && group_by[7]) {
        by_hparam = 1;
        arg = group_by + 7;
    } else if (strncmp(group_by, "regex:", 6) == 0 && group_by[6]) {
        by_hparam = 0;
        arg = group_by + 6;
    } else {
        snprintf(err, err_len,
                 "group_by must be hparam:<name> or regex:<ERE>");
        return TFB_EINVAL;
    }
    regex_t re;
    char msg[300];
    /* Bounded (base/regex_bound.h): glibc's regcomp expands counted
     * repetitions unbounded. */
    if (!by_hparam &&
        tfb_regex_compile(&re, arg, REG_EXTENDED, msg, sizeof msg) < 0) {
        snprintf(err, err_len, "bad group_by regex: %s", msg);
        return TFB_EINVAL;
    }
    /* A sorted copy of the names asked for, for in_only. */
    const char **sorted = NULL;
    if (only) {
        sorted = malloc((n_only ? n_only : 1) * sizeof *sorted);
        if (!sorted) {
            if (!by_hparam)
                regfree(&re);
            return TFB_ENOMEM;
        }
        memcpy(sorted, only, n_only * sizeof *sorted);
        qsort(sorted, n_only, sizeof *sorted, by_str);
        only = sorted;
    }
    tfb_run **runs;
    size_t nr;
    int e = tfb_store_runs(s, &runs, &nr);
    if (e < 0) {
        free(sorted);
        if (!by_hparam)
            regfree(&re);
        return e;
    }
    gbuild b = {0};
    for (size_t i = 0; i < nr && e == 0; i++) {
        const char *name = tfb_run_name(runs[i]);
        if (!in_only(name, only, n_only) ||
            !tfb_run_find_series(runs[i], TFB_SERIES_SCALAR, tag))
            continue;
        if (by_hparam) {
            tfb_hparams_set h;
            e = tfb_run_hparams(s, runs[i], &h);
            const tfb_hparam_value *v = e == 0 ? tfb_hparams_find(&h, arg)
                                               : NULL;
            if (v && v->kind != TFB_HPV_OTHER && v->kind != TFB_HPV_NONE) {
                size_t len = tfb_hparam_value_text(v, NULL, 0);
                char *txt = malloc(len + 1);
                if (!txt)
                    e = TFB_ENOMEM;
                else {
                    tfb_hparam_value_text(v, txt, len + 1);
                    e = add_member(&b, txt, len, name);
                    free(txt);
                }
            } else if (e == 0) {
                out->n_left_out++;
            }
            tfb_hparams_set_free(&h);
        } else {
            regmatch_t m[2];
            if (regexec(&re, name, 2, m, 0) != 0) {
                out->n_left_out++;
                continue;
            }
            regmatch_t k = (re.re_nsub >= 1 && m[1].rm_so >= 0) ? m[1] : m[0];
            e = add_member(&b, name + k.rm_so, (size_t)(k.rm_eo - k.rm_so),
                           name);
        }
    }
    free(runs);
    free(sorted);
    if (!by_hparam)
        regfree(&re);
    out->groups = b.groups.v; /* freed by tfb_run_groups_free, even on error */
    out->n_groups = b.groups.n;
    if (e == 0 && out->n_groups)
        qsort(out->groups, out->n_groups, sizeof *out->groups, cmp_group);
    for (size_t i = 0; i < out->n_groups && e == 0; i++)
        e = compute_curve(s, &out->groups[i], tag);
    return e;
}

/* ---- route ------------------------------------------------------------- */

/* The `runs` parameter: a JSON array of strings (the web UI's selection,
 * as the URL keeps it). Returns the count, or -1 when malformed. */
static long parse_runs(const char *txt, char ***out)
{
    const char *p = txt, *end = txt + strlen(txt);
    TFB_VEC(char *) v = {0};
    while (p < end && (*p == ' ' || *p == '\n' || *p == '\t'))
        p++;
    if (p >= end || *p++ != '[')
        return -1;
    for (;;) {
        while (p < end && (*p == ' ' || *p == '\n' || *p == '\t' || *p == ','))
            p++;
        if (p < end && *p == ']')
            break;
        const char *s;
        size_t len;
        int esc;
        const char *q = tfb_json_str_scan(p, end, &s, &len, &esc);
        char *d = q ? malloc(len + 1) : NULL;
        if (!d || tfb_vec_push(&v, d) < 0) {
            free(d);
            for (size_t i = 0; i < v.n; i++)
                free(v.v[i]);
            tfb_vec_free(&v);
            return -1;
        }
        size_t dl = esc ? tfb_json_str_decode(s, len, d) : len;
        if (!esc)
            memcpy(d, s, len);
        d[dl] = '\0';
        p = q;
    }
    *out = v.v;
    return (long)v.n;
}

static void json_num_or_null(tfb_json *j, double v)
{
    tfb_json_double(j, v); /* NaN is written as the string "NaN" */
}

int tfb_route_hparams_groups(const tfb_http_req *req, tfb_http_resp *resp)
{
    const char *tag, *group_by, *runs_txt;
    if (tfb_http_param_str(req, resp, "tag", 1, NULL, &tag) < 0 ||
        tfb_http_param_str(req, resp, "group_by", 1, NULL, &group_by) < 0 ||
        tfb_http_param_str(req, resp, "runs", 0, NULL, &runs_txt) < 0)
        return 0;
    /* A large selection comes as a held one (core/selection.h): a JSON
     * list of 3,000 names does not fit a URI. */
    tfb_selection *held;
    if (tfb_http_param_selection(req, resp, &held) < 0)
        return 0;
    if (held && runs_txt) {
        tfb_selection_release(held);
        return tfb_http_error(resp, 400, "give runs or selection, not both");
    }
    char **only = NULL;
    long n_only = 0;
    if (runs_txt && (n_only = parse_runs(runs_txt, &only)) < 0)
        return tfb_http_error(resp, 400,
                              "runs must be a JSON array of run names");
    if (held) {
        n_only = (long)tfb_selection_count(held);
        only = malloc((n_only ? (size_t)n_only : 1) * sizeof *only);
        if (!only) {
            tfb_selection_release(held);
            return tfb_http_error(resp, 500, "out of memory");
        }
        /* Borrowed from the pinned selection: not freed below. */
        for (long i = 0; i < n_only; i++)
            only[i] = (char *)tfb_selection_name(held, (size_t)i);
    }
    /* An empty list selects no run (only == NULL would mean all). */
    const char *none[1] = {NULL};
    const char *const *sel = !runs_txt && !held ? NULL
                             : n_only           ? (const char *const *)only
                                                : none;
    tfb_run_groups g;
    char err[200] = "";
    int e = tfb_run_groups_compute(tfb_server_store(req), tag, group_by, sel,
                                   (size_t)n_only, &g, err, sizeof err);
    for (long i = 0; !held && i < n_only; i++)
        free(only[i]);
    free(only);
    tfb_selection_release(held);
    if (e < 0) {
        tfb_run_groups_free(&g);
        if (e == TFB_EINVAL)
            return tfb_http_error(resp, 400, "%s", err);
        return tfb_http_error(resp, 500, "out of memory");
    }
    tfb_json j;
    tfb_json_init(&j);
    tfb_json_object_begin(&j);
    tfb_json_key(&j, "tag");
    tfb_json_str(&j, tag);
    tfb_json_key(&j, "group_by");
    tfb_json_str(&j, group_by);
    tfb_json_key(&j, "rule");
    tfb_json_str(&j, "steps: union of the members' steps; value per run: "
                     "its point at the step, else its last point before it, "
                     "only within the run's own step span; non-finite "
                     "values left out (counted in nonfinite); std: "
                     "population");
    tfb_json_key(&j, "left_out");
    tfb_json_u64(&j, g.n_left_out);
    tfb_json_key(&j, "groups");
    tfb_json_array_begin(&j);
    for (size_t i = 0; i < g.n_groups; i++) {
        const tfb_run_group *gr = &g.groups[i];
        tfb_json_object_begin(&j);
        tfb_json_key(&j, "key");
        tfb_json_str(&j, gr->key);
        tfb_json_key(&j, "runs");
        tfb_json_array_begin(&j);
        for (size_t k = 0; k < gr->runs.n; k++)
            tfb_json_str(&j, gr->runs.v[k]);
        tfb_json_array_end(&j);
        /* [step, mean, min, max, std, n, nonfinite] */
        tfb_json_key(&j, "points");
        tfb_json_array_begin(&j);
        for (size_t k = 0; k < gr->n_points; k++) {
            const tfb_group_point *p = &gr->points[k];
            tfb_json_array_begin(&j);
            tfb_json_i64(&j, p->step);
            json_num_or_null(&j, p->mean);
            json_num_or_null(&j, p->min);
            json_num_or_null(&j, p->max);
            json_num_or_null(&j, p->std);
            tfb_json_u64(&j, p->n);
            tfb_json_u64(&j, p->nonfinite);
            tfb_json_array_end(&j);
        }
        tfb_json_array_end(&j);
        tfb_json_object_end(&j);
    }
    tfb_json_array_end(&j);
    tfb_json_object_end(&j);
    tfb_run_groups_free(&g);
    return tfb_http_json(resp, &j);
}
