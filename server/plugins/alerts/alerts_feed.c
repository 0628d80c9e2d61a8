/*
 * alerts_feed.c - evaluates the alert conditions of every run and keeps
 * the fire/clear log (alerts_feed.h).
 */
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugins/alerts/alerts_feed.h"
#include "plugins/alerts/alerts_spikes.h"
#include "base/hash.h"
#include "core/run_status.h"
#include "base/strtab.h"
#include "base/vec.h"
#include "tfboard.h"

#define FEED_KEEP 4096
#define TAIL 200

/* One condition that was seen to hold: key "run\x1fkey". */
typedef struct cond {
    char *k;
    size_t klen;
    int active;
    unsigned seen_pass;
} cond;

/* A user rule's state on one series. */
typedef struct rule_entry {
    const tfb_series *s;
    size_t rule;
    tfb_rule_state st;
} rule_entry;

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static tfb_alert_rule *g_rules;
static size_t g_n_rules;
static double g_gpu_idle = 50;
static tfb_strtab g_conds;        /* -> cond */
static TFB_VEC(cond *) g_cond_list;
static TFB_VEC(rule_entry) g_re;
static tfb_alert_event *g_feed;   /* ring of FEED_KEEP */
static uint64_t g_seq;
static unsigned g_pass;

int tfb_alerts_configure(const tfb_alert_rule *rules, size_t n,
                         double gpu_idle_pct)
{
    tfb_alert_rule *c = NULL;
    if (n) {
        c = malloc(n * sizeof *c);
        if (!c)
            return TFB_ENOMEM;
        memcpy(c, rules, n * sizeof *c);
    }
    pthread_mutex_lock(&g_mu);
    free(g_rules);
    g_rules = c;
    g_n_rules = n;
    g_gpu_idle = gpu_idle_pct;
    pthread_mutex_unlock(&g_mu);
    return 0;
}

/* ---- what holds now, per run ------------------------------------------ */

typedef struct found {
    char rule[256], key[320], message[512];
    int64_t step;
} found;

typedef TFB_VEC(found) found_vec;

static void add(found_vec *f, const char *rule, const char *key_extra,
                int64_t step, const char *fmt, ...)
{
    found *x = tfb_vec_add(f);
    if (!x)
        return;
    snprintf(x->rule, sizeof x->rule, "%s", rule);
    snprintf(x->key, sizeof x->key, "%s%s%s", rule, key_extra ? "@" : "",
             key_extra ? key_extra : "");
    x->step = step;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(x->message, sizeof x->message, fmt, ap);
    va_end(ap);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median of the finite values of the last `tail` points of s; NaN. */
static double tail_median(tfb_series *s, size_t tail)
{
    if (!s)
        return NAN;
    double buf[TAIL];
    size_t n = 0;
    if (tail > TAIL)
        tail = TAIL;
    tfb_series_view v;
    tfb_series_read_begin(s, &v);
    for (size_t i = v.count; i-- > 0 && n < tail;)
        if (isfinite(v.value[i]))
            buf[n++] = v.value[i];
    tfb_series_read_end(s);
    if (!n)
        return NAN;
    qsort(buf, n, sizeof buf[0], cmp_double);
    return n % 2 ? buf[n / 2] : (buf[n / 2 - 1] + buf[n / 2]) / 2;
}

static double last_value(tfb_series *s)
{
    if (!s)
        return NAN;
    tfb_series_view v;
    tfb_series_read_begin(s, &v);
    double x = v.count ? v.value[v.count - 1] : NAN;
    tfb_series_read_end(s);
    return x;
}

static rule_entry *rule_state(const tfb_series *s, size_t rule)
{
    for (size_t i = 0; i < g_re.n; i++)
        if (g_re.v[i].s == s && g_re.v[i].rule == rule)
            return &g_re.v[i];
    rule_entry *e = tfb_vec_add(&g_re);
    if (!e)
        return NULL;
    e->s = s;
    e->rule = rule;
    return e;
}

/* The per-device GPU conditions: gpu/<dev>/<metric>. */
static void gpu_conditions(tfb_series **ser, size_t ns, found_vec *f)
{
    const size_t pre = sizeof TFB_TAG_GPU_PREFIX - 1;
    for (size_t i = 0; i < ns; i++) {
        const char *tag = tfb_series_tag(ser[i]);
        if (strncmp(tag, TFB_TAG_GPU_PREFIX, pre) != 0)
            continue;
        const char *metric = strrchr(tag, '/');
        if (!metric || metric < tag + pre)
            continue;
        metric++;
        char dev[128];
        snprintf(dev, sizeof dev, "%.*s", (int)(metric - 1 - (tag + pre)),
                 tag + pre);
        if (!strcmp(metric, TFB_TAG_GPU_SM_UTIL) ||
            !strcmp(metric, TFB_TAG_GPU_UTILIZATION)) {
            double u = tail_median(ser[i], 20);
            /* utilization is a share (0..1) for traced runs */
            double pct = !strcmp(metric, TFB_TAG_GPU_UTILIZATION) && u <= 1
                             ? 100 * u : u;
            if (pct < 100 - g_gpu_idle)
                add(f, "gpu_idle", dev, -1, "GPU %s is idle %.0f %% of the "
                    "time (%s median over 20 samples; threshold %.0f %%)",
                    dev, 100 - pct, metric, g_gpu_idle);
        } else if (!strcmp(metric, TFB_TAG_GPU_MEM_USED)) {
            char tt[512];
            snprintf(tt, sizeof tt, "%.*s%s", (int)(metric - tag), tag,
                     TFB_TAG_GPU_MEM_TOTAL);
            tfb_series *tot = NULL;
            for (size_t k = 0; k < ns && !tot; k++)
                if (!strcmp(tfb_series_tag(ser[k]), tt))
                    tot = ser[k];
            double used = last_value(ser[i]), total = last_value(tot);
            if (total > 0 && used > 0.95 * total)
                add(f, "gpu_memory", dev, -1, "GPU %s memory %.1f %% full "
                    "(%.0f of %.0f MiB)", dev, 100 * used / total,
                    used / 1048576, total / 1048576);
        }
    }
}

/* The parent directory part of a run name ("" for a top-level run). */
static size_t parent_len(const char *name)
{
    const char *sl = strrchr(name, '/');
    return sl ? (size_t)(sl - name) : 0;
}

/* Own time per step of a rank: median step_ms - median comm/ms; NaN when
 * the run is no rank or has no step timings. */
static double own_time(tfb_run *r)
{
    tfb_plugin_record *rec;
    size_t nrec;
    if (tfb_run_records(r, TFB_RANK_PLUGIN, &rec, &nrec) < 0)
        return NAN;
    tfb_plugin_records_free(rec, nrec);
    if (!nrec)
        return NAN;
    double step = tail_median(tfb_run_find_series(r, TFB_SERIES_SCALAR,
                                                  TFB_TAG_STEP_MS), TAIL);
    double comm = tail_median(tfb_run_find_series(r, TFB_SERIES_SCALAR,
                                                  TFB_TAG_COMM_MS), TAIL);
    return isnan(comm) ? step : step - comm;
}

static void run_conditions(tfb_run *r, double now, const double *own,
                           tfb_run **runs, size_t nr, size_t me, found_vec *f)
{
    tfb_run_status st;
    if (tfb_run_status_get(r, now, &st) == 0) {
        if (st.diverged_why && !strcmp(st.diverged_why, "non-finite")) {
            /* What came before it, as the Health tab says it. */
            tfb_precursors p;
            char why[400] = "";
            if (tfb_precursors_find(r, st.diverged_step, st.diverged_step,
                                    TFB_PRECURSOR_K_DEFAULT, &p) == 0) {
                p.nonfinite = 0;
                tfb_precursors_text(&p, why, sizeof why);
            }
            add(f, "nonfinite", NULL, st.diverged_step,
                "%s%sNaN/Inf in %s at step %lld", why, why[0] ? "; " : "",
                st.diverged_tag, (long long)st.diverged_step);
        }
        else if (st.diverged_why)
            add(f, "diverged", NULL, st.diverged_step,
                "%s blew up at step %lld", st.diverged_tag,
                (long long)st.diverged_step);
        if (st.state == TFB_RUN_STALLED)
            add(f, "stalled", NULL, -1, "no new step for %.0f s (threshold "
                "%.0f s)", st.idle_s, st.stall_after);
        if (st.state == TFB_RUN_CRASHED)
            add(f, "crashed", NULL, -1, "no end record and process %ld is "
                "gone", st.pid);
    }
    tfb_alert_spike *sp;
    size_t nsp;
    if (tfb_alert_spikes(r, &sp, &nsp) == 0) {
        for (size_t i = 0; i < nsp; i++) {
            char why[512], key[256];
            tfb_precursors_text(&sp[i].pre, why, sizeof why);
            snprintf(key, sizeof key, "%s@%lld", sp[i].tag,
                     (long long)sp[i].spike.step);
            add(f, "loss_spike", key, sp[i].spike.step,
                "%s spiked to %.4g (level %.4g, z %.0f) at step %lld, %s%s%s",
                sp[i].tag, sp[i].spike.value, sp[i].spike.level,
                sp[i].spike.z, (long long)sp[i].spike.step,
                tfb_spike_state_name(sp[i].spike.state), why[0] ? "; " : "",
                why);
            if (sp[i].spike.state == TFB_SPIKE_DIVERGED)
                add(f, "diverged", NULL, sp[i].spike.step, "%s diverged "
                    "after its spike at step %lld%s%s", sp[i].tag,
                    (long long)sp[i].spike.step, why[0] ? "; " : "", why);
        }
        free(sp);
    }
    /* straggler: against the sibling ranks */
    if (!isnan(own[me])) {
        size_t pl = parent_len(tfb_run_name(r));
        double o[256];
        size_t no = 0;
        for (size_t k = 0; k < nr && no < 256; k++)
            if (k != me && !isnan(own[k]) &&
                parent_len(tfb_run_name(runs[k])) == pl &&
                !strncmp(tfb_run_name(runs[k]), tfb_run_name(r), pl))
                o[no++] = own[k];
        if (no) {
            qsort(o, no, sizeof o[0], cmp_double);
            double med = no % 2 ? o[no / 2] : (o[no / 2 - 1] + o[no / 2]) / 2;
            if (med > 0 && own[me] > 1.10 * med)
                add(f, "straggler", NULL, -1, "straggler: %.1f ms of own "
                    "time a step, %.0f %% above the median of the other %zu "
                    "rank%s", own[me], 100 * (own[me] / med - 1), no,
                    no == 1 ? "" : "s");
        }
    }
    tfb_series **ser;
    size_t ns;
    if (tfb_run_series(r, TFB_SERIES_SCALAR, &ser, &ns) < 0)
        return;
    /* input-bound */
    double in = tail_median(tfb_run_find_series(r, TFB_SERIES_SCALAR,
                                                TFB_TAG_INPUT_MS), TAIL);
    double stp = tail_median(tfb_run_find_series(r, TFB_SERIES_SCALAR,
                                                 TFB_TAG_STEP_MS), TAIL);
    if (stp > 0 && in / stp >= 0.20)
        add(f, "input_bound", NULL, -1, "input-bound: the step waits for "
            "input %.0f %% of the time (%.1f of %.1f ms, median)",
            100 * in / stp, in, stp);
    gpu_conditions(ser, ns, f);
    /* user rules */
    for (size_t q = 0; q < g_n_rules; q++) {
        const tfb_alert_rule *ru = &g_rules[q];
        for (size_t i = 0; i < ns; i++) {
            if (strcmp(tfb_series_tag(ser[i]), ru->tag) != 0)
                continue;
            rule_entry *e = rule_state(ser[i], q);
            if (!e)
                continue;
            tfb_series_view v;
            tfb_series_read_begin(ser[i], &v);
            if (v.count < e->st.fed)
                memset(&e->st, 0, sizeof e->st);
            for (size_t p = e->st.fed; p < v.count; p++)
                tfb_rule_feed(ru, &e->st, v.step[p], v.value[p]);
            tfb_series_read_end(ser[i]);
            if (e->st.holds)
                add(f, ru->text, NULL, e->st.streak_from,
                    "%s: %s = %.6g at step %lld%s", ru->text, ru->tag,
                    e->st.last_value, (long long)e->st.last_step,
                    ru->for_steps ? " (held since the streak began)" : "");
        }
    }
    free(ser);
}

/* ---- the log ----------------------------------------------------------- */

typedef TFB_VEC(tfb_alert_event) event_vec;

/* Logs one event in the feed and, when pass is not NULL, copies it there
 * (a copy that does not fit is dropped; the feed keeps it). */
static void log_event(const char *run, const found *x, int fired, double now,
                      event_vec *pass)
{
    if (!g_feed && !(g_feed = calloc(FEED_KEEP, sizeof *g_feed)))
        return;
    tfb_alert_event *e = &g_feed[g_seq % FEED_KEEP];
    memset(e, 0, sizeof *e);
    e->seq = ++g_seq;
    e->wall = now;
    e->fired = fired;
    snprintf(e->run, sizeof e->run, "%s", run);
    snprintf(e->rule, sizeof e->rule, "%s", x->rule);
    snprintf(e->key, sizeof e->key, "%s", x->key);
    e->step = x->step;
    snprintf(e->message, sizeof e->message, "%s", x->message);
    if (pass)
        (void)tfb_vec_push(pass, *e);
}

int tfb_alerts_poll(tfb_store *s, double now, tfb_alert_event **out,
                    size_t *nout)
{
    if (out) {
        *out = NULL;
        *nout = 0;
    }
    tfb_run **runs;
    size_t nr;
    if (tfb_store_runs(s, &runs, &nr) < 0)
        return TFB_ENOMEM;
    double *own = malloc((nr ? nr : 1) * sizeof *own);
    if (!own) {
        free(runs);
        return TFB_ENOMEM;
    }
    for (size_t i = 0; i < nr; i++)
        own[i] = own_time(runs[i]);
    event_vec pass = {0};
    event_vec *passp = out ? &pass : NULL;
    pthread_mutex_lock(&g_mu);
    g_pass++;
    found_vec f = {0};
    for (size_t i = 0; i < nr; i++) {
        f.n = 0;
        run_conditions(runs[i], now, own, runs, nr, i, &f);
        const char *rn = tfb_run_name(runs[i]);
        for (size_t q = 0; q < f.n; q++) {
            char k[700];
            int kl = snprintf(k, sizeof k, "%s\x1f%s", rn, f.v[q].key);
            if (kl < 0 || (size_t)kl >= sizeof k)
                continue;
            cond *c = tfb_strtab_get(&g_conds, k, (size_t)kl);
            if (!c) {
                c = calloc(1, sizeof *c);
                if (!c || !(c->k = malloc((size_t)kl + 1))) {
                    free(c);
                    continue;
                }
                memcpy(c->k, k, (size_t)kl + 1);
                c->klen = (size_t)kl;
                /* Room first, so the push after the put cannot fail. */
                if (tfb_vec_need(&g_cond_list, g_cond_list.n + 1) < 0) {
                    free(c->k);
                    free(c);
                    continue;
                }
                if (tfb_strtab_put(&g_conds, c->k, c->klen, c) < 0) {
                    free(c->k);
                    free(c);
                    continue;
                }
                g_cond_list.v[g_cond_list.n++] = c;
            }
            c->seen_pass = g_pass;
            if (!c->active) {
                c->active = 1;
                log_event(rn, &f.v[q], 1, now, passp);
            }
        }
    }
    free(f.v);
    /* Conditions that no longer hold clear (a spike's condition stays:
     * it happened). */
    for (size_t i = 0; i < g_cond_list.n; i++) {
        cond *c = g_cond_list.v[i];
        if (!c->active || c->seen_pass == g_pass)
            continue;
        const char *sep = memchr(c->k, '\x1f', c->klen);
        if (!sep || !strncmp(sep + 1, "loss_spike@", 11))
            continue;
        c->active = 0;
        found x;
        memset(&x, 0, sizeof x);
        snprintf(x.key, sizeof x.key, "%s", sep + 1);
        snprintf(x.rule, sizeof x.rule, "%.*s",
                 (int)strcspn(sep + 1, "@"), sep + 1);
        snprintf(x.message, sizeof x.message, "cleared: %s", x.rule);
        x.step = -1;
        char run[256];
        snprintf(run, sizeof run, "%.*s", (int)(sep - c->k), c->k);
        log_event(run, &x, 0, now, passp);
    }
    pthread_mutex_unlock(&g_mu);
    if (out) {
        *out = pass.v;
        *nout = pass.n;
    }
    free(own);
    free(runs);
    return 0;
}

int tfb_alerts_feed(uint64_t since, tfb_alert_event **out, size_t *n,
                    size_t *active)
{
    *out = NULL;
    *n = 0;
    pthread_mutex_lock(&g_mu);
    uint64_t first = g_seq > FEED_KEEP ? g_seq - FEED_KEEP + 1 : 1;
    if (since + 1 > first)
        first = since + 1;
    size_t cnt = g_seq >= first ? (size_t)(g_seq - first + 1) : 0;
    int rc = 0;
    if (cnt) {
        *out = malloc(cnt * sizeof **out);
        if (!*out)
            rc = TFB_ENOMEM;
        else
            for (uint64_t q = first; q <= g_seq; q++)
                (*out)[(*n)++] = g_feed[(q - 1) % FEED_KEEP];
    }
    if (active) {
        *active = 0;
        for (size_t i = 0; i < g_cond_list.n; i++)
            *active += g_cond_list.v[i]->active != 0;
    }
    pthread_mutex_unlock(&g_mu);
    return rc;
}
