/*
 * alerts_feed.c - evaluates the alert conditions of every run and keeps
 * the fire/clear log (alerts_feed.h).
 */
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "plugins/alerts/alerts_feed.h"
#include "plugins/alerts/alerts_spikes.h"
#include "analysis/ranks_jobs.h"
#include "analysis/run_status.h"
#include "base/select.h"
#include "base/str.h"
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

typedef struct found {
    char rule[256], key[320], message[512];
    int64_t step;
    char wall_tag[256]; /* the series whose wall time at `step` is when
                           it happened ("": none); looked up when the
                           condition fires (holds) */
} found;

typedef TFB_VEC(found) found_vec;

/* What the evaluation keeps of one run between passes (by run name, so a
 * new store does not inherit another's by address):
 *  - the conditions that come from its data alone (spikes, input-bound,
 *    GPU, user rules), worked out again only when its scalar series
 *    changed (`data_ver`: their number plus their point counts);
 *  - each user rule's state, fed only the points that arrived since;
 *  - the straggler sentence of this pass (from its job, see jobs_pass). */
typedef struct run_state {
    char *name;
    size_t name_len;
    uint64_t data_ver;
    int have_data;
    found_vec data;
    tfb_rule_state *rules;     /* g_n_rules of them */
    size_t n_rules;
    unsigned straggler_pass;   /* == g_pass: straggler[] holds this pass */
    char straggler[400];
    int rank_known, is_rank;   /* a rank of a job (ranks_jobs.h), looked
                                  at once, when the run first has points */
    int rank_new;              /* rank_known set by this pass's worker;
                                  counted into g_rank_runs after it */
} run_state;

/* A job's straggler verdict, kept while its members' step counts stay. */
typedef struct job_state {
    uint64_t ver;              /* sum of the members' step_ms counts */
    int have;
    TFB_VEC(size_t) slow;      /* member indexes */
    TFB_VEC(char *) sentence;  /* one per slow member (owned) */
} job_state;

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static tfb_alert_rule *g_rules;
static size_t g_n_rules;
static double g_gpu_idle = 50;
static tfb_strtab g_conds;        /* -> cond */
static TFB_VEC(cond *) g_cond_list;
static tfb_strtab g_runs;         /* run name -> run_state */
/* The events' step_wall looked up in this pass (holds); at most
 * TFB_ALERTS_STEP_WALL_LOOKUPS. */
static size_t g_wall_lookups;
static TFB_VEC(run_state *) g_run_list;
static tfb_alert_event *g_feed;   /* ring of FEED_KEEP */
static uint64_t g_seq;
static unsigned g_pass;
/* The jobs of the store (analysis/ranks_jobs.h), found again only when
 * a run turned out to be a rank (each run is looked at once, so runs
 * that are no rank never cost a scan of every run) or, while data
 * arrives, every JOBS_RESCAN_S. */
#define JOBS_RESCAN_S 10.0
static const tfb_store *g_jobs_store;
static tfb_ranks_job *g_jobs;
static size_t g_n_jobs, g_jobs_ranks;
static size_t g_rank_runs;        /* runs known to be ranks */
static double g_jobs_at;          /* CLOCK_MONOTONIC seconds */
static uint64_t g_jobs_gen;
static job_state *g_job_st;

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
    /* The kept data conditions and rule states were for the old rules. */
    for (size_t i = 0; i < g_run_list.n; i++) {
        run_state *rs = g_run_list.v[i];
        rs->have_data = 0;
        free(rs->rules);
        rs->rules = NULL;
        rs->n_rules = 0;
    }
    pthread_mutex_unlock(&g_mu);
    return 0;
}

/* ---- what holds now, per run ------------------------------------------ */

/* Adds one condition to f; returns it (NULL on no memory) for the caller
 * to name its wall_tag. */
static found *add(found_vec *f, const char *rule, const char *key_extra,
                  int64_t step, const char *fmt, ...)
{
    found *x = tfb_vec_add(f);
    if (!x)
        return NULL;
    snprintf(x->rule, sizeof x->rule, "%s", rule);
    snprintf(x->key, sizeof x->key, "%s%s%s", rule, key_extra ? "@" : "",
             key_extra ? key_extra : "");
    x->step = step;
    x->wall_tag[0] = 0;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(x->message, sizeof x->message, fmt, ap);
    va_end(ap);
    return x;
}

/* The wall time of the first point of series s at step `step` (the time
 * the event happened, as the run logged it); NaN when s has no such
 * point. Reads only the blocks holding that step. */
static double wall_at_step(tfb_series *s, int64_t step)
{
    int64_t st;
    float v;
    size_t idx;
    double w = NAN;
    if (!s || step < 0 ||
        tfb_series_scalar_in_steps(s, step, step, &st, &v, &idx, 1, NULL) !=
            1 ||
        tfb_series_scalar_range(s, idx, 1, NULL, &w, NULL, NULL) != 1)
        return NAN;
    return w;
}

/* Median of the finite values of the last `tail` points of s; NaN. Reads
 * only those points (a range of the store's blocks, no pin). */
static double tail_median(tfb_series *s, size_t tail)
{
    if (!s)
        return NAN;
    float v[TAIL];
    double buf[TAIL];
    if (tail > TAIL)
        tail = TAIL;
    size_t count = tfb_series_count(s);
    size_t from = count > tail ? count - tail : 0;
    size_t got = tfb_series_scalar_range(s, from, tail, NULL, NULL, v, NULL);
    size_t n = 0;
    for (size_t i = 0; i < got; i++)
        if (isfinite(v[i]))
            buf[n++] = v[i];
    return n ? tfb_median(buf, n) : NAN;
}

static double last_value(tfb_series *s)
{
    if (!s)
        return NAN;
    size_t count = tfb_series_count(s);
    float x;
    if (!count || tfb_series_scalar_range(s, count - 1, 1, NULL, NULL, &x,
                                          NULL) != 1)
        return NAN;
    return x;
}

/* The per-device GPU conditions: gpu/<dev>/<metric>. */
static void gpu_conditions(tfb_run *r, tfb_series **ser, size_t ns,
                           found_vec *f)
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
            tfb_series *tot = tfb_run_find_series(r, TFB_SERIES_SCALAR, tt);
            double used = last_value(ser[i]), total = last_value(tot);
            if (total > 0 && used > 0.95 * total)
                add(f, "gpu_memory", dev, -1, "GPU %s memory %.1f %% full "
                    "(%.0f of %.0f MiB)", dev, 100 * used / total,
                    used / 1048576, total / 1048576);
        }
    }
}

/* The conditions that come from the run's data alone (see run_state),
 * into rs->data. g_mu held. */
static void data_conditions(tfb_run *r, run_state *rs, tfb_series **ser,
                            size_t ns)
{
    enum { CHUNK = 256 };
    found_vec *f = &rs->data;
    found_vec rf = {0};
    f->n = 0;
    /* User rules first (their conditions are listed last). A run has one
     * scalar series per tag, so a rule's state is per (run, rule). */
    if (g_n_rules && rs->n_rules != g_n_rules) {
        free(rs->rules);
        rs->rules = calloc(g_n_rules, sizeof *rs->rules);
        rs->n_rules = rs->rules ? g_n_rules : 0;
    }
    for (size_t q = 0; q < rs->n_rules; q++) {
        const tfb_alert_rule *ru = &g_rules[q];
        tfb_series *s = tfb_run_find_series(r, TFB_SERIES_SCALAR, ru->tag);
        if (!s)
            continue;
        tfb_rule_state *st = &rs->rules[q];
        size_t count = tfb_series_count(s), got;
        if (count < st->fed)
            memset(st, 0, sizeof *st);
        int64_t step[CHUNK];
        float val[CHUNK];
        while (st->fed < count &&
               (got = tfb_series_scalar_range(s, st->fed, CHUNK, step, NULL,
                                              val, NULL)) > 0)
            tfb_rule_feed_n(ru, st, step, val, got);
        found *x;
        if (st->holds &&
            (x = add(&rf, ru->text, NULL, st->streak_from,
                     "%s: %s = %.6g at step %lld%s", ru->text, ru->tag,
                     st->last_value, (long long)st->last_step,
                     ru->for_steps ? " (held since the streak began)" : "")))
            snprintf(x->wall_tag, sizeof x->wall_tag, "%s", ru->tag);
    }
    tfb_alert_spike *sp;
    size_t nsp;
    if (tfb_alert_spikes(r, &sp, &nsp) == 0) {
        for (size_t i = 0; i < nsp; i++) {
            char why[512], key[256];
            size_t first = f->n;
            tfb_precursors_text(&sp[i].pre, why, sizeof why);
            snprintf(key, sizeof key, "%s@%lld", sp[i].tag,
                     (long long)sp[i].spike.step);
            add(f, "loss_spike", key, sp[i].spike.step,
                "%s spiked to %.4g (level %.4g, z %.0f) at step %lld, %s%s%s",
                sp[i].tag, sp[i].spike.value, sp[i].spike.level,
                sp[i].spike.z, (long long)sp[i].spike.step,
                tfb_spike_state_name(sp[i].spike.state), why[0] ? "; " : "",
                why);
            /* Not recovered yet (nor diverged): a condition that clears
             * when the loss comes back, so `watch --fail_on` can tell a
             * spike the run is still in from one it got over. */
            if (sp[i].spike.state == TFB_SPIKE_OPEN)
                add(f, "spike_open", key, sp[i].spike.step, "%s has not "
                    "recovered from its spike at step %lld (%.4g, level "
                    "%.4g)", sp[i].tag, (long long)sp[i].spike.step,
                    sp[i].spike.value, sp[i].spike.level);
            if (sp[i].spike.state == TFB_SPIKE_DIVERGED)
                add(f, "diverged", NULL, sp[i].spike.step, "%s diverged "
                    "after its spike at step %lld%s%s", sp[i].tag,
                    (long long)sp[i].spike.step, why[0] ? "; " : "", why);
            for (size_t q = first; q < f->n; q++)
                snprintf(f->v[q].wall_tag, sizeof f->v[q].wall_tag, "%s",
                         sp[i].tag);
        }
        free(sp);
    }
    /* input-bound */
    double in = tail_median(tfb_run_find_series(r, TFB_SERIES_SCALAR,
                                                TFB_TAG_INPUT_MS), TAIL);
    double stp = tail_median(tfb_run_find_series(r, TFB_SERIES_SCALAR,
                                                 TFB_TAG_STEP_MS), TAIL);
    if (stp > 0 && in / stp >= 0.20)
        add(f, "input_bound", NULL, -1, "input-bound: the step waits for "
            "input %.0f %% of the time (%.1f of %.1f ms, median)",
            100 * in / stp, in, stp);
    gpu_conditions(r, ser, ns, f);
    if (rf.n && tfb_vec_need(f, f->n + rf.n) == 0) {
        memcpy(f->v + f->n, rf.v, rf.n * sizeof *f->v);
        f->n += rf.n;
    }
    tfb_vec_free(&rf);
}

/* The state of run r, created if needed; NULL on no memory. g_mu held. */
static run_state *state_of(tfb_run *r)
{
    const char *name = tfb_run_name(r);
    size_t len = strlen(name);
    run_state *rs = tfb_strtab_get(&g_runs, name, len);
    if (rs)
        return rs;
    rs = calloc(1, sizeof *rs);
    if (!rs || !(rs->name = malloc(len + 1)) ||
        tfb_vec_need(&g_run_list, g_run_list.n + 1) < 0) {
        if (rs)
            free(rs->name);
        free(rs);
        return NULL;
    }
    memcpy(rs->name, name, len + 1);
    rs->name_len = len;
    if (tfb_strtab_put(&g_runs, rs->name, len, rs) < 0) {
        free(rs->name);
        free(rs);
        return NULL;
    }
    g_run_list.v[g_run_list.n++] = rs;
    return rs;
}

/* What holds for run r now, into f (emptied first). Touches only r's
 * own state and reads the settings: the poll runs it for several runs at
 * once (see eval_runs), with g_mu held by the poll's thread. */
static void run_conditions(tfb_run *r, run_state *rs, double now,
                           found_vec *f)
{
    f->n = 0;
    tfb_series **ser;
    size_t ns;
    int have_ser = tfb_run_series(r, TFB_SERIES_SCALAR, &ser, &ns) == 0;
    if (have_ser) {
        uint64_t ver = ns;
        for (size_t i = 0; i < ns; i++)
            ver += tfb_series_count(ser[i]);
        if (!rs->have_data || ver != rs->data_ver) {
            data_conditions(r, rs, ser, ns);
            rs->data_ver = ver;
            rs->have_data = 1;
        }
        free(ser);
        /* Its rank record comes before its first point: once it has
         * points, whether it is a rank is known for good (the next
         * pass's jobs_pass finds its job). */
        if (!rs->rank_known && ver > ns) {
            rs->rank_known = 1;
            rs->is_rank = tfb_ranks_run_is_rank(r);
            rs->rank_new = 1;
        }
    }
    tfb_run_status st;
    if (tfb_run_status_judge(r, now, &st) == 0) {
        found *x = NULL;
        if (st.diverged_why && !strcmp(st.diverged_why, "non-finite")) {
            /* What came before it, as the Health tab says it. */
            tfb_precursors p;
            char why[400] = "";
            if (tfb_precursors_find(r, st.diverged_step, st.diverged_step,
                                    TFB_PRECURSOR_K_DEFAULT, &p) == 0) {
                p.nonfinite = 0;
                tfb_precursors_text(&p, why, sizeof why);
            }
            x = add(f, "nonfinite", NULL, st.diverged_step,
                    "%s%sNaN/Inf in %s at step %lld", why, why[0] ? "; " : "",
                    st.diverged_tag, (long long)st.diverged_step);
        }
        else if (st.diverged_why)
            x = add(f, "diverged", NULL, st.diverged_step,
                    "%s blew up at step %lld", st.diverged_tag,
                    (long long)st.diverged_step);
        if (x && st.diverged_tag)
            snprintf(x->wall_tag, sizeof x->wall_tag, "%s", st.diverged_tag);
        if (st.state == TFB_RUN_STALLED)
            add(f, "stalled", NULL, -1, "no new step for %.0f s (threshold "
                "%.0f s)", st.idle_s, st.stall_after);
        if (st.state == TFB_RUN_CRASHED)
            add(f, "crashed", NULL, -1, "no end record and process %ld is "
                "gone", st.pid);
    }
    if (have_ser && rs->data.n &&
        tfb_vec_need(f, f->n + rs->data.n) == 0) {
        memcpy(f->v + f->n, rs->data.v, rs->data.n * sizeof *f->v);
        f->n += rs->data.n;
    }
}

/* ---- stragglers, per job ------------------------------------------------ */

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void job_state_clear(job_state *j)
{
    for (size_t i = 0; i < j->sentence.n; i++)
        free(j->sentence.v[i]);
    tfb_vec_free(&j->sentence);
    tfb_vec_free(&j->slow);
    j->have = 0;
}

static void jobs_forget(void)
{
    for (size_t i = 0; i < g_n_jobs; i++)
        job_state_clear(&g_job_st[i]);
    free(g_job_st);
    g_job_st = NULL;
    tfb_ranks_jobs_free(g_jobs, g_n_jobs);
    g_jobs = NULL;
    g_n_jobs = 0;
}

/* Marks this pass's stragglers on their run states: the ranks analysis's
 * rule (analysis/ranks_analysis.h), the one the Ranks dashboard and the
 * report apply, on each job of the store. A job is analysed again only
 * when its members logged new steps. g_mu held. */
static void jobs_pass(tfb_store *s)
{
    if (!g_rank_runs) { /* no rank seen: no job to look at */
        jobs_forget();
        return;
    }
    uint64_t gen = tfb_store_generation(s);
    double t = mono_s();
    if (s != g_jobs_store || g_rank_runs != g_jobs_ranks ||
        gen < g_jobs_gen ||
        (gen != g_jobs_gen && t - g_jobs_at >= JOBS_RESCAN_S)) {
        jobs_forget();
        tfb_ranks_job *v;
        size_t n;
        if (tfb_ranks_find_jobs(s, &v, &n) < 0)
            return;
        g_job_st = calloc(n ? n : 1, sizeof *g_job_st);
        if (!g_job_st) {
            tfb_ranks_jobs_free(v, n);
            return;
        }
        g_jobs = v;
        g_n_jobs = n;
        g_jobs_store = s;
        g_jobs_ranks = g_rank_runs;
        g_jobs_at = t;
        g_jobs_gen = gen;
    }
    for (size_t j = 0; j < g_n_jobs; j++) {
        const tfb_ranks_job *job = &g_jobs[j];
        job_state *js = &g_job_st[j];
        if (job->n_members < 2)
            continue;
        uint64_t ver = 0;
        for (size_t m = 0; m < job->n_members; m++) {
            tfb_series *st = tfb_run_find_series(job->members[m].run,
                                                 TFB_SERIES_SCALAR,
                                                 TFB_TAG_STEP_MS);
            ver += st ? tfb_series_count(st) : 0;
        }
        if (!js->have || ver != js->ver) {
            tfb_ranks_result *res;
            if (tfb_ranks_job_analyze(job, NULL, &res) < 0)
                continue;
            job_state_clear(js);
            for (size_t k = 0; k < res->n_stragglers; k++) {
                char buf[400];
                tfb_ranks_straggler_sentence(res, k, buf, sizeof buf);
                char *c = tfb_strdup(buf);
                if (!c || tfb_vec_push(&js->sentence, c) < 0) {
                    free(c);
                    continue;
                }
                if (tfb_vec_push(&js->slow,
                                 res->ranks[res->stragglers[k]].input_index) <
                    0)
                    free(js->sentence.v[--js->sentence.n]);
            }
            tfb_ranks_result_free(res);
            js->ver = ver;
            js->have = 1;
        }
        for (size_t k = 0; k < js->slow.n; k++) {
            run_state *rs = state_of(job->members[js->slow.v[k]].run);
            if (!rs)
                continue;
            rs->straggler_pass = g_pass;
            snprintf(rs->straggler, sizeof rs->straggler, "%s",
                     js->sentence.v[k]);
        }
    }
}

/* ---- the log ----------------------------------------------------------- */

typedef TFB_VEC(tfb_alert_event) event_vec;

/* Logs one event in the feed and, when pass is not NULL, copies it there
 * (a copy that does not fit is dropped; the feed keeps it). */
static void log_event(const char *run, const found *x, int fired, double now,
                      double step_wall, event_vec *pass)
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
    e->step_wall = x->step >= 0 ? step_wall : NAN;
    snprintf(e->message, sizeof e->message, "%s", x->message);
    if (pass)
        (void)tfb_vec_push(pass, *e);
}

/* Marks condition x of run rn as holding in this pass; logs it when it
 * starts to hold. g_mu held. */
static void holds(tfb_run *r, const char *rn, const found *x, double now,
                  event_vec *passp)
{
    char k[700];
    int kl = snprintf(k, sizeof k, "%s\x1f%s", rn, x->key);
    if (kl < 0 || (size_t)kl >= sizeof k)
        return;
    cond *c = tfb_strtab_get(&g_conds, k, (size_t)kl);
    if (!c) {
        c = calloc(1, sizeof *c);
        if (!c || !(c->k = malloc((size_t)kl + 1))) {
            free(c);
            return;
        }
        memcpy(c->k, k, (size_t)kl + 1);
        c->klen = (size_t)kl;
        /* Room first, so the push after the put cannot fail. */
        if (tfb_vec_need(&g_cond_list, g_cond_list.n + 1) < 0 ||
            tfb_strtab_put(&g_conds, c->k, c->klen, c) < 0) {
            free(c->k);
            free(c);
            return;
        }
        g_cond_list.v[g_cond_list.n++] = c;
    }
    c->seen_pass = g_pass;
    if (!c->active) {
        c->active = 1;
        /* When it happened, as the run logged it: looked up once, when it
         * fires, at most TFB_ALERTS_STEP_WALL_LOOKUPS times a pass (each
         * reads the series' steps: a hostile series of thousands of
         * spikes gets the rest without a time rather than a pass that
         * reads it thousands of times). */
        double w = NAN;
        if (r && x->step >= 0 && x->wall_tag[0] &&
            g_wall_lookups < TFB_ALERTS_STEP_WALL_LOOKUPS) {
            g_wall_lookups++;
            w = wall_at_step(tfb_run_find_series(r, TFB_SERIES_SCALAR,
                                                 x->wall_tag),
                             x->step);
        }
        log_event(rn, x, 1, now, w, passp);
    }
}

/* ---- evaluating many runs at once --------------------------------------
 * The runs of a pass are independent until their conditions are logged,
 * so a large store is evaluated by up to EVAL_THREADS threads (the
 * caller's among them) taking runs from one counter; logging (the
 * condition table, the feed) stays on the caller's thread, in run order,
 * so the feed is the same whatever the number of threads. */
#define EVAL_THREADS 4
#define EVAL_MIN_RUNS 64  /* below this a thread costs more than it saves */
#define EVAL_BATCH 8      /* runs taken from the counter at a time */

typedef struct eval_pass {
    tfb_run **runs;
    run_state **rs;   /* NULL: no memory for its state, skipped */
    found_vec *found; /* per run */
    size_t n;
    double now;
    _Atomic size_t next;
} eval_pass;

static void *eval_runs(void *arg)
{
    eval_pass *ep = arg;
    size_t i;
    while ((i = atomic_fetch_add(&ep->next, EVAL_BATCH)) < ep->n) {
        size_t end = i + EVAL_BATCH < ep->n ? i + EVAL_BATCH : ep->n;
        for (; i < end; i++)
            if (ep->rs[i])
                run_conditions(ep->runs[i], ep->rs[i], ep->now,
                               &ep->found[i]);
    }
    return NULL;
}

/* Runs eval_runs on the caller's thread and, for a large pass, on up to
 * EVAL_THREADS - 1 more (as many as the machine has cores); a thread that
 * cannot start leaves its share to the others. */
static void eval_all(eval_pass *ep)
{
    pthread_t th[EVAL_THREADS - 1];
    size_t extra = 0;
    if (ep->n >= EVAL_MIN_RUNS) {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        size_t want = cpus > EVAL_THREADS ? EVAL_THREADS - 1
                      : cpus > 1 ? (size_t)cpus - 1 : 0;
        while (extra < want &&
               pthread_create(&th[extra], NULL, eval_runs, ep) == 0)
            extra++;
    }
    eval_runs(ep);
    for (size_t t = 0; t < extra; t++)
        pthread_join(th[t], NULL);
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
    eval_pass ep = {.runs = runs, .n = nr, .now = now};
    ep.rs = calloc(nr ? nr : 1, sizeof *ep.rs);
    ep.found = calloc(nr ? nr : 1, sizeof *ep.found);
    if (!ep.rs || !ep.found) {
        free(ep.rs);
        free(ep.found);
        free(runs);
        return TFB_ENOMEM;
    }
    atomic_init(&ep.next, 0);
    event_vec pass = {0};
    event_vec *passp = out ? &pass : NULL;
    pthread_mutex_lock(&g_mu);
    g_pass++;
    g_wall_lookups = 0;
    for (size_t i = 0; i < nr; i++)
        ep.rs[i] = state_of(runs[i]);
    eval_all(&ep);
    for (size_t i = 0; i < nr; i++) {
        run_state *rs = ep.rs[i];
        if (!rs)
            continue;
        if (rs->rank_new) {
            g_rank_runs += rs->is_rank != 0;
            rs->rank_new = 0;
        }
        for (size_t q = 0; q < ep.found[i].n; q++)
            holds(runs[i], tfb_run_name(runs[i]), &ep.found[i].v[q], now,
                  passp);
        tfb_vec_free(&ep.found[i]);
    }
    free(ep.found);
    free(ep.rs);
    /* Stragglers, once every run's rank membership of this pass is known
     * (a job's ranks can all arrive in one pass: `watch --once`). */
    jobs_pass(s);
    for (size_t i = 0; i < g_run_list.n; i++) {
        run_state *rs = g_run_list.v[i];
        if (rs->straggler_pass != g_pass)
            continue;
        found x;
        memset(&x, 0, sizeof x);
        snprintf(x.rule, sizeof x.rule, "straggler");
        snprintf(x.key, sizeof x.key, "straggler");
        snprintf(x.message, sizeof x.message, "straggler: %s",
                 rs->straggler);
        x.step = -1;
        holds(NULL, rs->name, &x, now, passp);
    }
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
        log_event(run, &x, 0, now, NAN, passp);
    }
    pthread_mutex_unlock(&g_mu);
    if (out) {
        *out = pass.v;
        *nout = pass.n;
    }
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

void tfb_alerts_reset(void)
{
    pthread_mutex_lock(&g_mu);
    for (size_t i = 0; i < g_cond_list.n; i++) {
        free(g_cond_list.v[i]->k);
        free(g_cond_list.v[i]);
    }
    tfb_vec_free(&g_cond_list);
    tfb_strtab_free(&g_conds);
    for (size_t i = 0; i < g_run_list.n; i++) {
        run_state *rs = g_run_list.v[i];
        tfb_vec_free(&rs->data);
        free(rs->rules);
        free(rs->name);
        free(rs);
    }
    tfb_vec_free(&g_run_list);
    tfb_strtab_free(&g_runs);
    jobs_forget();
    g_jobs_store = NULL;
    g_jobs_ranks = 0;
    g_rank_runs = 0;
    free(g_feed);
    g_feed = NULL;
    g_seq = 0;
    pthread_mutex_unlock(&g_mu);
    tfb_alert_spikes_reset();
    tfb_run_status_forget();
}
