/*
 * alerts_rules.c - user alert rules (alerts_rules.h).
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugins/alerts/alerts_rules.h"
#include "tfboard.h"

/* Strips a trailing " <word> N steps" clause (case as written) into *n;
 * returns 1 when found, 0 when not, -1 when the clause is malformed. */
static int clause(char *s, const char *word, int64_t *n)
{
    size_t len = strlen(s);
    const char *suffix = " steps";
    size_t sl = strlen(suffix);
    char *w = NULL;
    /* find " word " as the last occurrence */
    char pat[32];
    snprintf(pat, sizeof pat, " %s ", word);
    for (char *p = strstr(s, pat); p; p = strstr(p + 1, pat))
        w = p;
    if (!w)
        return 0;
    if (len < sl || strcmp(s + len - sl, suffix) != 0) {
        /* "for 100 step" is accepted too */
        if (len < 5 || strcmp(s + len - 5, " step") != 0)
            return -1;
        sl = 5;
    }
    char *num = w + strlen(pat);
    char *end;
    errno = 0;
    long long v = strtoll(num, &end, 10);
    if (end == num || errno || v < 0 || end != s + len - sl)
        return -1;
    *n = v;
    *w = 0;
    return 1;
}

int tfb_alert_rule_parse(const char *spec, tfb_alert_rule *out, char *err,
                         size_t err_len)
{
    memset(out, 0, sizeof *out);
    out->after_step = -1;
    snprintf(out->text, sizeof out->text, "%s", spec);
    char s[512];
    if (strlen(spec) >= sizeof s) {
        snprintf(err, err_len, "alert rule '%.60s...' is too long", spec);
        return TFB_EINVAL;
    }
    snprintf(s, sizeof s, "%s", spec);
    /* trailing blanks */
    for (size_t n = strlen(s); n && (s[n - 1] == ' ' || s[n - 1] == '\t');)
        s[--n] = 0;
    /* The clauses come off the end, the later one first. */
    int a = 0, f = 0;
    for (int round = 0; round < 2; round++) {
        char *pa = NULL, *pf = NULL;
        for (char *p = strstr(s, " after "); p; p = strstr(p + 1, " after "))
            pa = p;
        for (char *p = strstr(s, " for "); p; p = strstr(p + 1, " for "))
            pf = p;
        if (a)
            pa = NULL;
        if (f)
            pf = NULL;
        if (!pa && !pf)
            break;
        if (pa && (!pf || pa > pf)) {
            if ((a = clause(s, "after", &out->after_step)) < 0)
                goto bad_clause;
        } else if ((f = clause(s, "for", &out->for_steps)) < 0) {
            goto bad_clause;
        }
    }
    for (size_t n = strlen(s); n && s[n - 1] == ' ';)
        s[--n] = 0;
    const char *gt = strrchr(s, '>'), *lt = strrchr(s, '<');
    const char *op = !gt ? lt : !lt ? gt : (gt > lt ? gt : lt);
    if (!op) {
        snprintf(err, err_len, "alert rule '%s' needs TAG>LIMIT or "
                 "TAG<LIMIT, e.g. 'loss>5 for 100 steps'", spec);
        return TFB_EINVAL;
    }
    size_t tlen = (size_t)(op - s);
    while (tlen && s[tlen - 1] == ' ')
        tlen--;
    if (tlen == 0) {
        snprintf(err, err_len, "alert rule '%s' names no tag before '%c'",
                 spec, *op);
        return TFB_EINVAL;
    }
    if (s[tlen - 1] == '>' || s[tlen - 1] == '<') {
        snprintf(err, err_len, "alert rule '%s' has two comparison signs "
                 "in a row", spec);
        return TFB_EINVAL;
    }
    if (tlen >= sizeof out->tag) {
        snprintf(err, err_len, "alert rule '%.60s...': the tag is too long",
                 spec);
        return TFB_EINVAL;
    }
    const char *lim = op + 1;
    while (*lim == ' ')
        lim++;
    char *end;
    errno = 0;
    double v = strtod(lim, &end);
    if (end == lim || *end || errno || !isfinite(v)) {
        snprintf(err, err_len, "alert rule '%s': the limit '%s' must be a "
                 "finite number", spec, lim);
        return TFB_EINVAL;
    }
    memcpy(out->tag, s, tlen);
    out->tag[tlen] = 0;
    out->greater = *op == '>';
    out->limit = v;
    return 0;
bad_clause:
    snprintf(err, err_len, "alert rule '%s': write 'for N steps' or 'after "
             "N steps' with N a whole number >= 0", spec);
    return TFB_EINVAL;
}

/* step - from, saturated at INT64_MIN / INT64_MAX: steps are any int64
 * a file holds, and a streak from -2^63 to 2^63 - 1 has held for more
 * steps than any rule asks (plain subtraction overflows, undefined
 * behaviour that in practice wraps negative, so the rule never fired). */
static int64_t steps_between(int64_t from, int64_t step)
{
    int64_t d;
    if (__builtin_sub_overflow(step, from, &d))
        return step > from ? INT64_MAX : INT64_MIN;
    return d;
}

/* The rule holds at the newest point (step), in a streak since from. */
static int holds_at(const tfb_alert_rule *r, int ok, int64_t from,
                    int64_t step)
{
    return ok && steps_between(from, step) >= r->for_steps &&
           (r->after_step < 0 || step >= r->after_step);
}

int tfb_rule_compare(const tfb_alert_rule *r, double value)
{
    return r->greater ? value > r->limit : value < r->limit;
}

void tfb_rule_feed(const tfb_alert_rule *r, tfb_rule_state *st, int64_t step,
                   double value)
{
    st->fed++;
    st->last_step = step;
    st->last_value = value;
    int ok = tfb_rule_compare(r, value);
    if (ok && !st->in_streak) {
        st->in_streak = 1;
        st->streak_from = step;
    } else if (!ok) {
        st->in_streak = 0;
    }
    st->holds = holds_at(r, ok, st->streak_from, step);
}

void tfb_rule_feed_n(const tfb_alert_rule *r, tfb_rule_state *st,
                     const int64_t *step, const float *value, size_t n)
{
    if (!n)
        return;
    int in = st->in_streak;
    int64_t from = st->streak_from;
    double limit = r->limit;
    int ok = 0;
    for (size_t i = 0; i < n; i++) {
        double v = value[i];
        ok = r->greater ? v > limit : v < limit;
        from = ok && !in ? step[i] : from;
        in = ok;
    }
    st->fed += n;
    st->in_streak = in;
    st->streak_from = from;
    st->last_step = step[n - 1];
    st->last_value = value[n - 1];
    st->holds = holds_at(r, ok, from, st->last_step);
}
