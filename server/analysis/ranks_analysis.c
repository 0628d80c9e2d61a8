/*
 * ranks_analysis.c - the job-level analysis of a distributed job: per-rank
 * step statistics, stragglers, per-step skew, the rank x step matrix and
 * the notes on bad input. The GPU side (breakdown, overlap) is in
 * ranks_overlap.c; the rules are in ranks_analysis.h.
 *
 * One pass over the union of step numbers with a cursor per rank (each
 * rank's steps sorted once) gives the per-step medians, the "slower than
 * the median" counts, the skew and the matrix cells together, without a
 * rank x step table in memory (256 x 20 k would be 40 MB per series).
 */
#include "analysis/ranks_analysis.h"
#include "analysis/ranks_internal.h"

#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tfboard.h"
#include "base/vec.h"

#define DEFAULT_EXCESS 0.05
#define DEFAULT_SHARE 0.75
#define DEFAULT_COLUMNS 500

void tfb_ranks_opts_init(tfb_ranks_opts *o)
{
    if (!o)
        return;
    memset(o, 0, sizeof *o);
    o->size = sizeof *o;
    o->straggler_excess = DEFAULT_EXCESS;
    o->straggler_share = DEFAULT_SHARE;
    o->max_columns = DEFAULT_COLUMNS;
}

/* Derived times of a step: own = step - comm (floored at 0), compute =
 * own - input (floored at 0); unknown input/comm count as 0. */
static inline double own_of(const tfb_ranks_step *x)
{
    double o = x->step_ms - (isnan(x->comm_ms) ? 0.0 : x->comm_ms);
    return o > 0 ? o : 0;
}

static inline double compute_of(const tfb_ranks_step *x)
{
    double c = own_of(x) - (isnan(x->input_ms) ? 0.0 : x->input_ms);
    return c > 0 ? c : 0;
}

enum series { S_STEP, S_INPUT, S_COMM, S_COMPUTE, S_OWN };

static inline double series_of(const tfb_ranks_step *x, enum series which)
{
    switch (which) {
    case S_STEP: return x->step_ms;
    case S_INPUT: return x->input_ms;
    case S_COMM: return x->comm_ms;
    case S_COMPUTE: return compute_of(x);
    case S_OWN: return own_of(x);
    }
    return NAN;
}

typedef struct rank_work {
    size_t input;
    /* The rank's usable steps, ascending and unique: the caller's array
     * when it already is so (the usual case: no copy), else a copy. */
    const tfb_ranks_step *s;
    tfb_ranks_step *owned;
    size_t n, cur;
    size_t shared, above; /* steps with >= 2 ranks; of them, above median */
    double sum_step, sum_input, sum_comm;
    int have_input, have_comm;
} rank_work;

/* Grown with base/vec.h (its first fields are a TFB_VEC's). */
typedef struct note_list {
    tfb_ranks_note *v;
    size_t n, cap;
    int oom;
} note_list;

static void add_note(note_list *l, tfb_ranks_note_kind kind, int32_t rank,
                     int64_t count, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

static void add_note(note_list *l, tfb_ranks_note_kind kind, int32_t rank,
                     int64_t count, const char *fmt, ...)
{
    tfb_ranks_note *x = tfb_vec_add(l);
    if (!x) {
        l->oom = 1;
        return;
    }
    x->kind = kind;
    x->rank = rank;
    x->count = count;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(x->text, sizeof x->text, fmt, ap);
    va_end(ap);
}

static const char *label_of(const tfb_ranks_input *in)
{
    return in->label ? in->label : "(unnamed run)";
}

/* (step, position in the caller's array): sorting by both keeps the
 * caller's order among repeated steps. */
typedef struct step_key {
    int64_t step;
    size_t order;
} step_key;

static int cmp_step_key(const void *a, const void *b)
{
    const step_key *x = a, *y = b;
    if (x->step != y->step)
        return x->step < y->step ? -1 : 1;
    return x->order < y->order ? -1 : (x->order > y->order);
}

static int usable(const tfb_ranks_step *x)
{
    return x->step_ms >= 0 && !isinf(x->step_ms) && !(x->input_ms < 0) &&
           !(x->comm_ms < 0) && !isinf(x->input_ms) && !isinf(x->comm_ms);
}

typedef struct cand {
    int32_t rank;
    size_t input;
} cand;

static int cmp_cand(const void *a, const void *b)
{
    const cand *x = a, *y = b;
    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    return x->input < y->input ? -1 : (x->input > y->input);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : (x > y);
}

/* Usable steps of one input, sorted by step, the last of a repeated step
 * kept. Counts bad and repeated steps. */
static int load_steps(const tfb_ranks_input *in, rank_work *w, size_t *bad,
                      size_t *dups)
{
    *bad = *dups = 0;
    int clean = 1;
    for (size_t i = 0; i < in->n_steps; i++) {
        if (!usable(&in->steps[i])) {
            (*bad)++;
            clean = 0;
        } else if (i && in->steps[i - 1].step >= in->steps[i].step) {
            clean = 0;
        }
    }
    if (clean) {
        w->s = in->steps;
        w->n = in->n_steps;
    } else {
        size_t k = 0;
        step_key *keys = malloc((in->n_steps ? in->n_steps : 1) * sizeof *keys);
        w->owned = malloc((in->n_steps ? in->n_steps : 1) * sizeof *w->owned);
        if (!keys || !w->owned) {
            free(keys);
            return TFB_ENOMEM;
        }
        for (size_t i = 0; i < in->n_steps; i++)
            if (usable(&in->steps[i]))
                keys[k++] = (step_key){in->steps[i].step, i};
        qsort(keys, k, sizeof *keys, cmp_step_key);
        /* Repeated steps: keep the last logged (a restarted run rewrote
         * it). */
        size_t m = 0;
        for (size_t i = 0; i < k; i++) {
            const tfb_ranks_step *x = &in->steps[keys[i].order];
            if (m && w->owned[m - 1].step == x->step) {
                w->owned[m - 1] = *x;
                (*dups)++;
            } else {
                w->owned[m++] = *x;
            }
        }
        free(keys);
        w->s = w->owned;
        w->n = m;
    }
    for (size_t i = 0; i < w->n; i++) {
        const tfb_ranks_step *r = &w->s[i];
        w->sum_step += r->step_ms;
        if (!isnan(r->input_ms)) {
            w->sum_input += r->input_ms;
            w->have_input = 1;
        }
        if (!isnan(r->comm_ms)) {
            w->sum_comm += r->comm_ms;
            w->have_comm = 1;
        }
    }
    return 0;
}

/* mean / p50 / p90 of one series over its non-NaN values. */
static tfb_ranks_dist dist_of(const rank_work *w, enum series which,
                              double *scratch)
{
    tfb_ranks_dist d = {NAN, NAN, NAN, 0};
    size_t n = 0;
    double sum = 0;
    for (size_t i = 0; i < w->n; i++) {
        double x = series_of(&w->s[i], which);
        if (isnan(x))
            continue;
        scratch[n++] = x;
        sum += x;
    }
    d.n = n;
    if (!n)
        return d;
    d.mean = sum / (double)n;
    double q[2] = {0.5, 0.9}, v[2];
    tfb_ranks_quantiles(scratch, n, q, v, 2);
    d.p50 = v[0];
    d.p90 = v[1];
    return d;
}

void tfb_ranks_result_free(tfb_ranks_result *r)
{
    if (!r)
        return;
    free(r->ranks);
    free(r->stragglers);
    free(r->steps);
    free(r->skew_ms);
    free(r->matrix.col_first);
    free(r->matrix.col_last);
    free(r->matrix.step_ms);
    free(r->matrix.input_ms);
    free(r->matrix.comm_ms);
    free(r->matrix.compute_ms);
    free(r->notes);
    free(r);
}

/* Median of sorted[0..n) with element `skip` taken out (n >= 2). */
static double median_without(const double *sorted, size_t n, size_t skip)
{
    size_t m = n - 1;
    double h = 0.5 * (double)(m - 1);
    size_t k = (size_t)h;
    double x = sorted[k < skip ? k : k + 1];
    if (h - (double)k <= 0)
        return x;
    size_t k1 = k + 1;
    double y = sorted[k1 < skip ? k1 : k1 + 1];
    return 0.5 * (x + y);
}

/* The pass over the union of steps: medians, slower counts, skew, matrix. */
static int step_pass(rank_work *rw, size_t nr, tfb_ranks_result *res,
                     size_t max_cols)
{
    /* The union of the step numbers. Usually every rank logged the same
     * steps: then it is the longest rank's list, no sort needed. */
    size_t total = 0, longest = 0;
    for (size_t r = 0; r < nr; r++) {
        total += rw[r].n;
        if (rw[r].n > rw[longest].n)
            longest = r;
    }
    int same = 1;
    for (size_t r = 0; r < nr && same; r++) {
        /* Both ascending and unique: r's steps are a subset of the
         * longest's iff each is found walking forward. */
        const tfb_ranks_step *L = rw[longest].s;
        size_t j = 0, nl = rw[longest].n;
        for (size_t i = 0; i < rw[r].n && same; i++) {
            while (j < nl && L[j].step < rw[r].s[i].step)
                j++;
            same = j < nl && L[j].step == rw[r].s[i].step;
        }
    }
    int64_t *all = NULL;
    size_t nu = 0;
    if (same) {
        nu = nr ? rw[longest].n : 0;
        all = malloc((nu ? nu : 1) * sizeof *all);
        if (!all)
            return TFB_ENOMEM;
        for (size_t i = 0; i < nu; i++)
            all[i] = rw[longest].s[i].step;
    } else {
        all = malloc(total * sizeof *all);
        int64_t *tmp = malloc(total * sizeof *tmp);
        if (!all || !tmp) {
            free(all);
            free(tmp);
            return TFB_ENOMEM;
        }
        size_t k = 0;
        for (size_t r = 0; r < nr; r++)
            for (size_t i = 0; i < rw[r].n; i++)
                all[k++] = rw[r].s[i].step;
        tfb_ranks_sort_i64(all, tmp, total);
        free(tmp);
        for (size_t i = 0; i < total; i++)
            if (!nu || all[nu - 1] != all[i])
                all[nu++] = all[i];
    }
    res->n_steps = nu;
    res->steps = all;
    res->skew_ms = nu ? malloc(nu * sizeof *res->skew_ms) : NULL;
    size_t cols = nu < max_cols ? nu : max_cols;
    tfb_ranks_matrix *mx = &res->matrix;
    mx->n_rows = nr;
    mx->n_cols = cols;
    size_t cells = nr * cols;
    double *own = malloc((nr ? nr : 1) * sizeof *own);
    double *skews = malloc((nu ? nu : 1) * sizeof *skews);
    uint32_t *cnt = calloc(cells ? cells * 4 : 1, sizeof *cnt);
    if (cols) {
        mx->col_first = malloc(cols * sizeof *mx->col_first);
        mx->col_last = malloc(cols * sizeof *mx->col_last);
        mx->step_ms = calloc(cells ? cells : 1, sizeof *mx->step_ms);
        mx->input_ms = calloc(cells ? cells : 1, sizeof *mx->input_ms);
        mx->comm_ms = calloc(cells ? cells : 1, sizeof *mx->comm_ms);
        mx->compute_ms = calloc(cells ? cells : 1, sizeof *mx->compute_ms);
    }
    if ((nu && !res->skew_ms) || !own || !skews || !cnt ||
        (cols && (!mx->col_first || !mx->col_last || !mx->step_ms ||
                  !mx->input_ms || !mx->comm_ms || !mx->compute_ms))) {
        free(own);
        free(skews);
        free(cnt);
        return TFB_ENOMEM;
    }
    double *sums[4] = {mx->step_ms, mx->input_ms, mx->comm_ms, mx->compute_ms};
    size_t c = 0, nskew = 0;
    res->skew_max_ms = NAN;
    res->skew_max_step = -1;
    for (size_t u = 0; u < nu; u++) {
        /* Column c covers union indexes [c*nu/cols, (c+1)*nu/cols). */
        while (c + 1 < cols && u >= (c + 1) * nu / cols)
            c++;
        if (u == c * nu / cols)
            mx->col_first[c] = all[u];
        mx->col_last[c] = all[u];
        size_t present = 0;
        double wmin = INFINITY, wmax = -INFINITY;
        size_t nwall = 0;
        for (size_t r = 0; r < nr; r++) {
            rank_work *w = &rw[r];
            if (w->cur >= w->n || w->s[w->cur].step != all[u])
                continue;
            const tfb_ranks_step *x = &w->s[w->cur];
            own[present++] = own_of(x);
            if (!isnan(x->wall_end) && !isinf(x->wall_end)) {
                wmin = x->wall_end < wmin ? x->wall_end : wmin;
                wmax = x->wall_end > wmax ? x->wall_end : wmax;
                nwall++;
            }
            size_t cell = r * cols + c;
            double v[4] = {x->step_ms, x->input_ms, x->comm_ms,
                           compute_of(x)};
            for (int s = 0; s < 4; s++) {
                if (isnan(v[s]))
                    continue;
                sums[s][cell] += v[s];
                cnt[s * cells + cell]++;
            }
        }
        double sk = NAN;
        if (nwall >= 2) {
            sk = (wmax - wmin) * 1e3;
            skews[nskew++] = sk;
            if (isnan(res->skew_max_ms) || sk > res->skew_max_ms) {
                res->skew_max_ms = sk;
                res->skew_max_step = all[u];
            }
        }
        res->skew_ms[u] = sk;
        double med = present >= 2 ? tfb_ranks_quantile(own, present, 0.5)
                                   : NAN;
        for (size_t r = 0; r < nr; r++) {
            rank_work *w = &rw[r];
            if (w->cur >= w->n || w->s[w->cur].step != all[u])
                continue;
            if (present >= 2) {
                w->shared++;
                if (own_of(&w->s[w->cur]) > med)
                    w->above++;
            }
            w->cur++;
        }
    }
    for (size_t i = 0; i < cells; i++)
        for (int s = 0; s < 4; s++)
            sums[s][i] = cnt[s * cells + i] ? sums[s][i] / cnt[s * cells + i]
                                            : NAN;
    /* The skew's distribution. */
    tfb_ranks_dist d = {NAN, NAN, NAN, nskew};
    if (nskew) {
        double sum = 0;
        for (size_t i = 0; i < nskew; i++)
            sum += skews[i];
        d.mean = sum / (double)nskew;
        double q[2] = {0.5, 0.9}, v[2];
        tfb_ranks_quantiles(skews, nskew, q, v, 2);
        d.p50 = v[0];
        d.p90 = v[1];
    }
    res->skew = d;
    free(own);
    free(skews);
    free(cnt);
    return 0;
}

int tfb_ranks_analyze(const tfb_ranks_input *inputs, size_t n,
                      const tfb_ranks_opts *opts, tfb_ranks_result **out)
{
    if (!out || (!inputs && n))
        return TFB_EINVAL;
    for (size_t i = 0; i < n; i++)
        if ((!inputs[i].steps && inputs[i].n_steps) ||
            (!inputs[i].intervals && inputs[i].n_intervals))
            return TFB_EINVAL;
    tfb_ranks_opts o;
    tfb_ranks_opts_init(&o);
    if (opts) {
        if (opts->straggler_excess >= 0)
            o.straggler_excess = opts->straggler_excess;
        if (opts->straggler_share > 0 && opts->straggler_share <= 1)
            o.straggler_share = opts->straggler_share;
        if (opts->max_columns >= 1)
            o.max_columns = opts->max_columns;
    }
    tfb_ranks_result *res = calloc(1, sizeof *res);
    if (!res)
        return TFB_ENOMEM;
    res->others_comm_share = NAN;
    res->job_median_own_ms = NAN;
    res->skew_max_ms = NAN;
    res->skew_max_step = -1;
    res->skew = (tfb_ranks_dist){NAN, NAN, NAN, 0};
    note_list notes = {0};
    int err = 0;
    cand *cs = malloc((n ? n : 1) * sizeof *cs);
    rank_work *rw = calloc(n ? n : 1, sizeof *rw);
    double *scratch = NULL;
    double *meds = NULL;
    if (!cs || !rw) {
        err = TFB_ENOMEM;
        goto done;
    }
    /* Which inputs take part: a rank number, first of each number. */
    size_t nc = 0;
    for (size_t i = 0; i < n; i++) {
        if (inputs[i].rank < 0) {
            add_note(&notes, TFB_RANKS_NOTE_NO_RANK, -1, 0,
                     "%s has no rank record; it is left out of the job",
                     label_of(&inputs[i]));
            continue;
        }
        cs[nc++] = (cand){inputs[i].rank, i};
    }
    qsort(cs, nc, sizeof *cs, cmp_cand);
    size_t nr = 0;
    for (size_t i = 0; i < nc; i++) {
        if (nr && cs[i].rank == inputs[rw[nr - 1].input].rank) {
            add_note(&notes, TFB_RANKS_NOTE_DUP_RANK, cs[i].rank, 2,
                     "rank %d appears more than once (%s and %s); the "
                     "second is left out", (int)cs[i].rank,
                     label_of(&inputs[rw[nr - 1].input]),
                     label_of(&inputs[cs[i].input]));
            continue;
        }
        rw[nr++].input = cs[i].input;
    }
    /* World size: the most common known value. */
    int32_t ws = 0;
    size_t ws_votes = 0, n_known = 0;
    int disagree = 0;
    for (size_t r = 0; r < nr; r++) {
        int32_t x = inputs[rw[r].input].world_size;
        if (x <= 0)
            continue;
        n_known++;
        size_t votes = 0;
        for (size_t q = 0; q < nr; q++)
            votes += inputs[rw[q].input].world_size == x;
        if (votes > ws_votes) {
            ws = x;
            ws_votes = votes;
        }
    }
    for (size_t r = 0; r < nr; r++) {
        int32_t x = inputs[rw[r].input].world_size;
        if (x > 0 && x != ws)
            disagree = 1;
    }
    if (disagree)
        add_note(&notes, TFB_RANKS_NOTE_WORLD_SIZE, -1,
                 (int64_t)(n_known - ws_votes),
                 "the ranks disagree on the world size: %zu of %zu say %d",
                 ws_votes, n_known, (int)ws);
    res->world_size = ws;
    if (ws > 0) {
        size_t inside = 0;
        for (size_t r = 0; r < nr; r++) {
            int32_t rank = inputs[rw[r].input].rank;
            if (rank < ws)
                inside++;
            else
                add_note(&notes, TFB_RANKS_NOTE_RANK_OUT_OF_WORLD, rank, 0,
                         "rank %d is outside the world size %d (%s)",
                         (int)rank, (int)ws, label_of(&inputs[rw[r].input]));
        }
        if (inside < (size_t)ws)
            add_note(&notes, TFB_RANKS_NOTE_MISSING_RANKS, -1,
                     (int64_t)((size_t)ws - inside),
                     "%zu of %d ranks have no run in this job",
                     (size_t)ws - inside, (int)ws);
    }
    int any_trace = 0;
    for (size_t r = 0; r < nr; r++)
        any_trace |= inputs[rw[r].input].has_trace != 0;
    /* Steps of each rank. */
    size_t most = 1;
    for (size_t r = 0; r < nr; r++) {
        const tfb_ranks_input *in = &inputs[rw[r].input];
        size_t bad, dups;
        if ((err = load_steps(in, &rw[r], &bad, &dups)) != 0)
            goto done;
        most = rw[r].n > most ? rw[r].n : most;
        if (bad)
            add_note(&notes, TFB_RANKS_NOTE_BAD_VALUES, in->rank,
                     (int64_t)bad,
                     "rank %d: %zu steps with unusable times are left out",
                     (int)in->rank, bad);
        if (dups)
            add_note(&notes, TFB_RANKS_NOTE_DUP_STEP, in->rank, (int64_t)dups,
                     "rank %d: %zu steps were logged more than once; the "
                     "last value is used", (int)in->rank, dups);
        if (rw[r].n == 0)
            add_note(&notes, TFB_RANKS_NOTE_NO_STEPS, in->rank, 0,
                     "rank %d has no step timings (%s)", (int)in->rank,
                     label_of(in));
        if (any_trace && !in->has_trace)
            add_note(&notes, TFB_RANKS_NOTE_NO_TRACE, in->rank, 0,
                     "rank %d has no GPU trace while other ranks have one",
                     (int)in->rank);
    }
    scratch = malloc(most * sizeof *scratch);
    meds = malloc((nr ? nr : 1) * sizeof *meds);
    res->ranks = calloc(nr ? nr : 1, sizeof *res->ranks);
    res->stragglers = malloc((nr ? nr : 1) * sizeof *res->stragglers);
    if (!scratch || !meds || !res->ranks || !res->stragglers) {
        err = TFB_ENOMEM;
        goto done;
    }
    res->n_ranks = nr;
    for (size_t r = 0; r < nr; r++) {
        const tfb_ranks_input *in = &inputs[rw[r].input];
        tfb_ranks_rank *k = &res->ranks[r];
        k->rank = in->rank;
        k->input_index = rw[r].input;
        k->n_steps = rw[r].n;
        k->step_ms = dist_of(&rw[r], S_STEP, scratch);
        k->input_ms = dist_of(&rw[r], S_INPUT, scratch);
        k->comm_ms = dist_of(&rw[r], S_COMM, scratch);
        k->compute_ms = dist_of(&rw[r], S_COMPUTE, scratch);
        k->own_ms = dist_of(&rw[r], S_OWN, scratch);
        double ss = rw[r].sum_step;
        k->comm_share = rw[r].have_comm && ss > 0 ? rw[r].sum_comm / ss : NAN;
        k->input_share =
            rw[r].have_input && ss > 0 ? rw[r].sum_input / ss : NAN;
        k->slowdown = NAN;
        k->slower_share = NAN;
        k->gpu.busy_pct = NAN;
        k->gpu.overlap = NAN;
        if (in->has_trace) {
            size_t bad = 0;
            if ((err = tfb_ranks_gpu_breakdown(in->intervals, in->n_intervals,
                                               &k->gpu, &bad)) != 0)
                goto done;
            if (bad)
                add_note(&notes, TFB_RANKS_NOTE_BAD_VALUES, in->rank,
                         (int64_t)bad,
                         "rank %d: %zu GPU intervals end before they start "
                         "and are left out", (int)in->rank, bad);
        }
    }
    if ((err = step_pass(rw, nr, res, o.max_columns)) != 0)
        goto done;
    /* Slowdown against the median of the other ranks. */
    size_t nm = 0;
    for (size_t r = 0; r < nr; r++)
        if (rw[r].n)
            meds[nm++] = res->ranks[r].own_ms.p50;
    qsort(meds, nm, sizeof *meds, cmp_double);
    if (nm) {
        res->job_median_own_ms =
            nm % 2 ? meds[nm / 2] : 0.5 * (meds[nm / 2 - 1] + meds[nm / 2]);
    }
    size_t ns = 0;
    for (size_t r = 0; r < nr; r++) {
        tfb_ranks_rank *k = &res->ranks[r];
        if (rw[r].shared)
            k->slower_share = (double)rw[r].above / (double)rw[r].shared;
        if (!rw[r].n || nm < 2)
            continue;
        /* Its own value's position in the sorted medians. */
        size_t pos = 0;
        while (pos < nm && meds[pos] != k->own_ms.p50)
            pos++;
        double other = median_without(meds, nm, pos);
        if (other > 0)
            k->slowdown = k->own_ms.p50 / other - 1.0;
        if (k->slowdown > o.straggler_excess &&
            k->slower_share >= o.straggler_share) {
            k->straggler = 1;
            res->stragglers[ns++] = r;
        }
    }
    /* Worst first (few stragglers: insertion sort, stable). */
    for (size_t i = 1; i < ns; i++) {
        size_t x = res->stragglers[i], j = i;
        while (j > 0 && res->ranks[res->stragglers[j - 1]].slowdown <
                            res->ranks[x].slowdown) {
            res->stragglers[j] = res->stragglers[j - 1];
            j--;
        }
        res->stragglers[j] = x;
    }
    res->n_stragglers = ns;
    double oc = 0, os = 0;
    int have = 0;
    for (size_t r = 0; r < nr; r++) {
        if (res->ranks[r].straggler || !rw[r].n || !rw[r].have_comm)
            continue;
        oc += rw[r].sum_comm;
        os += rw[r].sum_step;
        have = 1;
    }
    if (have && os > 0)
        res->others_comm_share = oc / os;
done:
    if (rw)
        for (size_t r = 0; r < n; r++)
            free(rw[r].owned);
    free(rw);
    free(cs);
    free(scratch);
    free(meds);
    if (!err && notes.oom)
        err = TFB_ENOMEM;
    if (err) {
        free(notes.v);
        tfb_ranks_result_free(res);
        return err;
    }
    res->notes = notes.v;
    res->n_notes = notes.n;
    *out = res;
    return 0;
}
