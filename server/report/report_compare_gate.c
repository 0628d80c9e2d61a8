/*
 * report_compare_gate.c - the regression gate of `tfboard report
 * --compare`: parses 'regress:METRIC>LIMIT' (report_compare.h states the
 * rule) and judges a comparison by it.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/report_compare.h"

int tfb_compare_gate_parse(const char *spec, tfb_compare_gate *out,
                           char *err, size_t err_len)
{
    memset(out, 0, sizeof *out);
    /* The last comparison sign splits, so a tag may hold '<' or '>'. */
    const char *gt = strrchr(spec, '>'), *lt = strrchr(spec, '<');
    const char *op = !gt ? lt : !lt ? gt : (gt > lt ? gt : lt);
    if (!op) {
        snprintf(err, err_len, "'regress:%s' needs METRIC>LIMIT (higher is "
                               "worse) or METRIC<LIMIT (higher is better), "
                               "e.g. regress:loss>2%%", spec);
        return TFB_EINVAL;
    }
    size_t mlen = (size_t)(op - spec);
    if (mlen == 0) {
        snprintf(err, err_len, "'regress:%s' names no metric before '%c'",
                 spec, *op);
        return TFB_EINVAL;
    }
    /* 'loss>>2' is a typo, not a gate on a tag called "loss>": a tag
     * never ends in a comparison sign here. */
    if (spec[mlen - 1] == '>' || spec[mlen - 1] == '<') {
        snprintf(err, err_len, "'regress:%s' has two comparison signs in a "
                               "row", spec);
        return TFB_EINVAL;
    }
    const char *lim = op + 1;
    char *end;
    errno = 0;
    double v = strtod(lim, &end);
    int rel = *end == '%';
    if (rel)
        end++;
    if (end == lim || *end || errno || !isfinite(v) || v < 0 ||
        (rel && end == lim + 1)) {
        snprintf(err, err_len, "'regress:%s': the limit '%s' must be a "
                               "number >= 0, with '%%' for a share of A's "
                               "value (2%%) or without for an absolute "
                               "difference (0.01)", spec, lim);
        return TFB_EINVAL;
    }
    out->higher_is_worse = *op == '>';
    out->relative = rel;
    out->limit = rel ? v / 100.0 : v;

    static const struct {
        const char *name;
        tfb_gate_metric m;
    } named[] = {{"step_ms", TFB_GATE_STEP_MS},
                 {"input_ms", TFB_GATE_INPUT_MS},
                 {"input_share", TFB_GATE_INPUT_SHARE},
                 {"kernel_ms", TFB_GATE_KERNEL_MS},
                 {"mfu", TFB_GATE_MFU},
                 {"tokens_per_s", TFB_GATE_TOKENS_PER_S},
                 {"j_per_token", TFB_GATE_J_PER_TOKEN}};
    out->metric = TFB_GATE_SCALAR;
    for (size_t i = 0; i < sizeof named / sizeof named[0]; i++)
        if (strlen(named[i].name) == mlen &&
            !memcmp(named[i].name, spec, mlen))
            out->metric = named[i].m;
    if (out->metric == TFB_GATE_SCALAR) {
        const char *tag = spec;
        if (mlen > 4 && !memcmp(spec, "tag:", 4)) {
            tag += 4;
            mlen -= 4;
        }
        if (mlen >= sizeof out->tag) {
            snprintf(err, err_len, "'regress:...': the tag is longer than "
                                   "%zu bytes", sizeof out->tag - 1);
            return TFB_EINVAL;
        }
        memcpy(out->tag, tag, mlen);
        out->tag[mlen] = 0;
    }
    return 0;
}

static const char *nonfinite(double v)
{
    return isnan(v) ? "NaN" : v > 0 ? "Infinity" : "-Infinity";
}

static const char *metric_name(const tfb_compare_gate *g)
{
    switch (g->metric) {
    case TFB_GATE_STEP_MS:
        return "step_ms";
    case TFB_GATE_INPUT_MS:
        return "input_ms";
    case TFB_GATE_INPUT_SHARE:
        return "input_share";
    case TFB_GATE_KERNEL_MS:
        return "kernel_ms";
    case TFB_GATE_MFU:
        return "mfu";
    case TFB_GATE_TOKENS_PER_S:
        return "tokens_per_s";
    case TFB_GATE_J_PER_TOKEN:
        return "j_per_token";
    case TFB_GATE_SCALAR:
        break;
    }
    return g->tag;
}

/* A's and B's values of the gate's metric; a reason when missing. */
static int values(const tfb_compare *c, const tfb_compare_gate *g, double *a,
                  double *b, const char **missing)
{
    const tfb_compare_pipeline *p = &c->pipeline;
    switch (g->metric) {
    case TFB_GATE_STEP_MS:
    case TFB_GATE_INPUT_MS:
    case TFB_GATE_INPUT_SHARE:
        if (!p->steps_a || !p->steps_b) {
            *missing = !p->steps_a ? "run A has no step timings"
                                   : "run B has no step timings";
            return -1;
        }
        *a = g->metric == TFB_GATE_STEP_MS    ? p->step_ms_a
             : g->metric == TFB_GATE_INPUT_MS ? p->input_ms_a
                                              : p->share_a;
        *b = g->metric == TFB_GATE_STEP_MS    ? p->step_ms_b
             : g->metric == TFB_GATE_INPUT_MS ? p->input_ms_b
                                              : p->share_b;
        return 0;
    case TFB_GATE_KERNEL_MS:
        if (!c->traced_a || !c->traced_b) {
            *missing = !c->traced_a ? "run A has no GPU trace"
                                    : "run B has no GPU trace";
            return -1;
        }
        *a = (double)c->kernel_ns_a / 1e6;
        *b = (double)c->kernel_ns_b / 1e6;
        return 0;
    case TFB_GATE_MFU:
    case TFB_GATE_TOKENS_PER_S:
    case TFB_GATE_J_PER_TOKEN: {
        const tfb_compare_eff *e = &c->eff;
        if (!e->has_a || !e->has_b) {
            *missing = !e->has_a ? "run A has no step timing or perf scalars"
                                 : "run B has no step timing or perf scalars";
            return -1;
        }
        *a = g->metric == TFB_GATE_MFU            ? e->mfu_a
             : g->metric == TFB_GATE_TOKENS_PER_S ? e->tokens_a
                                                  : e->jpt_a;
        *b = g->metric == TFB_GATE_MFU            ? e->mfu_b
             : g->metric == TFB_GATE_TOKENS_PER_S ? e->tokens_b
                                                  : e->jpt_b;
        /* An unknown figure is never a pass: say which one is missing. */
        if (isnan(*a) || isnan(*b)) {
            int side_a = isnan(*a);
            *missing = g->metric == TFB_GATE_MFU
                           ? (side_a ? "run A's peak is unknown (no MFU)"
                                     : "run B's peak is unknown (no MFU)")
                       : g->metric == TFB_GATE_TOKENS_PER_S
                           ? (side_a ? "run A logs no perf/tokens_per_s"
                                     : "run B logs no perf/tokens_per_s")
                           : (side_a ? "run A has no J/token (energy or "
                                       "tokens missing)"
                                     : "run B has no J/token (energy or "
                                       "tokens missing)");
            return -1;
        }
        return 0;
    }
    case TFB_GATE_SCALAR:
        for (size_t i = 0; i < c->n_scalars; i++)
            if (!strcmp(c->scalars[i].tag, g->tag)) {
                *a = c->scalars[i].last_a;
                *b = c->scalars[i].last_b;
                return 0;
            }
        *missing = "no scalar tag of that name in both runs";
        return -1;
    }
    return -1;
}

int tfb_compare_gate_check(const tfb_compare *c, const tfb_compare_gate *g,
                           char *why, size_t why_len)
{
    const char *name = metric_name(g);
    char limit[64];
    if (g->relative)
        snprintf(limit, sizeof limit, "%c%g%%", g->higher_is_worse ? '>' : '<',
                 100.0 * g->limit);
    else
        snprintf(limit, sizeof limit, "%c%g", g->higher_is_worse ? '>' : '<',
                 g->limit);
    double a, b;
    const char *missing = NULL;
    if (values(c, g, &a, &b, &missing) < 0) {
        snprintf(why, why_len, "regress:%s%s cannot be checked: %s", name,
                 limit, missing);
        return 1;
    }
    if (!isfinite(a)) {
        snprintf(why, why_len, "regress:%s%s cannot be checked: A's value "
                               "is %s", name, limit, nonfinite(a));
        return 1;
    }
    if (!isfinite(b)) {
        snprintf(why, why_len, "regress:%s%s FAILED: B's value is %s (A: "
                               "%.6g)", name, limit, nonfinite(b), a);
        return 1;
    }
    double worse = g->higher_is_worse ? b - a : a - b;
    double allowed = g->relative ? g->limit * fabs(a) : g->limit;
    double ch = tfb_compare_change(a, b);
    char chs[32];
    if (isinf(ch))
        snprintf(chs, sizeof chs, "from 0");
    else
        snprintf(chs, sizeof chs, "%+.2f%%", 100.0 * ch);
    int fail = worse > allowed;
    snprintf(why, why_len, "regress:%s%s %s: %.6g -> %.6g (%s, %s is "
                           "worse)",
             name, limit, fail ? "FAILED" : "passed", a, b, chs,
             g->higher_is_worse ? "higher" : "lower");
    return fail;
}
