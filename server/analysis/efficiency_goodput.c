/*
 * efficiency_goodput.c - the goodput decomposition of a run's wall time
 * into productive step time, input, comm, startup, gaps and checkpoints
 * (the rules are in efficiency.h; efficiency.c gathers the spans from the
 * store).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/efficiency.h"

static int cmp_step_start(const void *a, const void *b)
{
    const tfb_eff_step_span *x = a, *y = b;
    double sx = x->end - x->step_s, sy = y->end - y->step_s;
    return (sx > sy) - (sx < sy);
}

static int cmp_ckpt_start(const void *a, const void *b)
{
    const tfb_eff_ckpt_span *x = a, *y = b;
    double sx = x->end - x->len_s, sy = y->end - y->len_s;
    return (sx > sy) - (sx < sy);
}

static double max2(double a, double b)
{
    return a > b ? a : b;
}

static double min2(double a, double b)
{
    return a < b ? a : b;
}

/* The merged checkpoint spans' measure inside [lo, hi]; *k is the first
 * span that may still reach past lo (the gaps come in time order). */
static double ckpt_in(const tfb_eff_ckpt_span *c, size_t nc, size_t *k,
                      double lo, double hi)
{
    double sum = 0;
    while (*k < nc && c[*k].end <= lo)
        (*k)++;
    for (size_t i = *k; i < nc; i++) {
        double s = c[i].end - c[i].len_s;
        if (s >= hi)
            break;
        double a = max2(s, lo), b = min2(c[i].end, hi);
        if (b > a)
            sum += b - a;
    }
    return sum;
}

void tfb_eff_goodput_of(tfb_eff_step_span *steps, size_t n,
                        tfb_eff_ckpt_span *ckpts, size_t nc, double run_start,
                        tfb_eff_goodput *out)
{
    memset(out, 0, sizeof *out);
    out->goodput = NAN;
    if (n == 0)
        return;
    qsort(steps, n, sizeof *steps, cmp_step_start);
    /* Merge the checkpoint spans: two logged over each other count once. */
    size_t m = 0;
    if (nc > 0) {
        qsort(ckpts, nc, sizeof *ckpts, cmp_ckpt_start);
        for (size_t i = 0; i < nc; i++) {
            double s = ckpts[i].end - ckpts[i].len_s;
            if (m > 0 && s <= ckpts[m - 1].end) {
                if (ckpts[i].end > ckpts[m - 1].end) {
                    double ms = ckpts[m - 1].end - ckpts[m - 1].len_s;
                    ckpts[m - 1].end = ckpts[i].end;
                    ckpts[m - 1].len_s = ckpts[i].end - ms;
                }
            } else {
                ckpts[m++] = ckpts[i];
            }
        }
    }
    double first = steps[0].end - steps[0].step_s;
    /* Steps begin no earlier than the run start (a step_ms longer than the
     * time since the first event is clipped, never a negative startup). */
    if (!isfinite(run_start))
        run_start = first;
    /* t: the end of what is counted so far. */
    double t = run_start;
    size_t k = 0;
    int started = 0;
    for (size_t i = 0; i < n; i++) {
        const tfb_eff_step_span *sp = &steps[i];
        double len = sp->step_s;
        double s = sp->end - len;
        if (s > t) {
            if (!started) {
                out->startup_s += s - t;
            } else {
                double c = ckpt_in(ckpts, m, &k, t, s);
                out->checkpoint_s += c;
                out->gap_s += max2(0.0, (s - t) - c);
            }
            t = s;
        }
        started = 1;
        /* What of this step lies past t (all of it unless it overlaps or
         * went back in time); its input and comm shrink in proportion. */
        double counted = sp->end - t;
        if (!(counted > 0) || !(len > 0))
            continue;
        double share = counted / len;
        double in = min2(sp->input_s, len);
        double cm = min2(sp->comm_s, len - in);
        in *= share;
        cm *= share;
        out->input_s += in;
        out->comm_s += cm;
        out->productive_s += max2(0.0, counted - in - cm);
        t = sp->end;
    }
    out->wall_s = t - run_start;
    out->goodput = out->wall_s > 0 ? out->productive_s / out->wall_s : NAN;
}
