/*
 * alerts_rules.h - user alert rules, in the grammar of the regress gates
 * (server/report/report_compare_gate.c): TAG>LIMIT or TAG<LIMIT (the last
 * comparison sign splits, so a tag may hold '<' or '>'; two signs in a
 * row are an error), then optionally "for N steps" (the condition held
 * over the last N steps: from the first point of the current streak to
 * the newest) and/or "after N steps" (only from step N on):
 *     loss>5 for 100 steps
 *     accuracy<0.5 after 2000 steps
 * LIMIT is a finite number (a sign allowed). A rule holds at a point when
 * the value compares as written (NaN never does); it is checked on the
 * newest point of the tag, fed incrementally. Steps are any int64: the
 * streak's length (newest step - first step) saturates at the int64
 * range instead of overflowing.
 *
 * Thread-safety: parse is reentrant; a tfb_rule_state is one caller's.
 */
#ifndef TFB_ALERTS_RULES_H
#define TFB_ALERTS_RULES_H

#include <stddef.h>
#include <stdint.h>

typedef struct tfb_alert_rule {
    char text[256];        /* as given (cut) */
    char tag[200];
    int greater;           /* 1: TAG>LIMIT; 0: TAG<LIMIT */
    double limit;
    int64_t for_steps;     /* 0: none */
    int64_t after_step;    /* -1: none */
} tfb_alert_rule;

/* Returns 0, or TFB_EINVAL with a one-line reason naming the rule. */
int tfb_alert_rule_parse(const char *spec, tfb_alert_rule *out, char *err,
                         size_t err_len);

/* Incremental state of one rule on one series. */
typedef struct tfb_rule_state {
    size_t fed;            /* points seen */
    int in_streak;
    int64_t streak_from;   /* first step of the current streak */
    int64_t last_step;
    double last_value;
    int holds;             /* the rule holds at the newest point */
} tfb_rule_state;

/* Feeds one point (file order). */
void tfb_rule_feed(const tfb_alert_rule *r, tfb_rule_state *st, int64_t step,
                   double value);

/* Feeds n points (file order): the state n calls of tfb_rule_feed leave,
 * with the rule tested in a loop that keeps the streak in registers (the
 * first evaluation of a large logdir feeds every point of every ruled
 * series). */
void tfb_rule_feed_n(const tfb_alert_rule *r, tfb_rule_state *st,
                     const int64_t *step, const float *value, size_t n);

/* 1 when value compares as the rule says (the "holds at a point" test). */
int tfb_rule_compare(const tfb_alert_rule *r, double value);

#endif
