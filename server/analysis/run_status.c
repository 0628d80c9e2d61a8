/*
 * run_status.c - running, finished, crashed, stalled or diverged
 * (run_status.h has the rules).
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/select.h"
#include "base/str.h"
#include "base/strtab.h"
#include "analysis/loss_tags.h"
#include "analysis/loss_watch.h"
#include "analysis/run_status.h"
#include "tfboard.h"

/* Set once before the threads start (run_status.h). */
static double g_stall_after = TFB_STALL_AFTER_DEFAULT;

int tfb_run_status_configure(double stall_after, const char *loss_regex)
{
    if (!(stall_after > 0))
        return TFB_EINVAL;
    if (tfb_loss_tags_configure(loss_regex) < 0)
        return TFB_EINVAL;
    g_stall_after = stall_after;
    return 0;
}

const char *tfb_run_state_name(tfb_run_state s)
{
    static const char *const names[TFB_RUN_STATE_COUNT] = {
        "running", "finished", "crashed", "stalled", "diverged"};
    return (unsigned)s < TFB_RUN_STATE_COUNT ? names[s] : "unknown";
}

/* Clock skew tolerated between a run's last event and its end record. */
#define END_SLACK_S 1e-3

/* ---- the median interval, kept per series -----------------------------
 * One entry per series whose median interval was worked out, by
 * "run\x1ftag" (names, not the series pointer: another store's series at
 * a freed address must not inherit it), with the count it was worked out
 * at: a status reads it again only when that series grew. */
typedef struct series_entry {
    char *key;            /* owned; the table's key */
    size_t interval_count;  /* points when `interval` was worked out; 0 */
    double interval;
} series_entry;

/* "run\x1ftag" -> its entry (malloc'd). Under g_mu. */
static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static tfb_strtab g_tab;

/* The entry of s, created if needed; NULL on no memory. g_mu held. */
static series_entry *entry_of(const tfb_series *s)
{
    char key[1024];
    size_t n = tfb_series_key(s, key, sizeof key);
    if (!n)
        return NULL;
    series_entry *e = tfb_strtab_get(&g_tab, key, n);
    if (e)
        return e;
    e = calloc(1, sizeof *e);
    if (!e || !(e->key = tfb_strndup(key, n))) {
        free(e);
        return NULL;
    }
    if (tfb_strtab_put(&g_tab, e->key, n, e) < 0) {
        free(e->key);
        free(e);
        return NULL;
    }
    return e;
}

void tfb_run_status_forget(void)
{
    pthread_mutex_lock(&g_mu);
    for (size_t i = 0; i < g_tab.cap; i++) {
        series_entry *e = g_tab.slots[i].hash ? g_tab.slots[i].val : NULL;
        if (e) {
            free(e->key);
            free(e);
        }
    }
    tfb_strtab_free(&g_tab);
    pthread_mutex_unlock(&g_mu);
}

/* 1 when the loss series s blew up (loss_watch.h), its step in *step:
 * the store's watch has taken every point as it loaded, so nothing is
 * decoded here. */
static int blew_up(tfb_series *s, int64_t *step)
{
    tfb_loss_watch w;
    if (tfb_series_loss_watch(s, &w) < 0)
        return 0;
    int up = tfb_loss_watch_blew_up(&w, step);
    tfb_loss_watch_free(&w);
    return up;
}

/* ---- the writer process ---------------------------------------------- */

/* The pid from events.out.tfevents.<s>.<host>.<pid>.<n>[suffix] when
 * <host> is this machine's name; -1 otherwise. The host may hold dots, so
 * the name is cut from both ends. */
static long writer_pid(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    static const char pre[] = "events.out.tfevents.";
    if (strncmp(base, pre, sizeof pre - 1) != 0)
        return -1;
    const char *p = base + sizeof pre - 1;
    while (*p >= '0' && *p <= '9')
        p++;
    if (*p != '.')
        return -1;
    const char *host = p + 1;
    char hn[256];
    if (gethostname(hn, sizeof hn) != 0)
        return -1;
    hn[sizeof hn - 1] = 0;
    size_t hl = strlen(hn);
    if (hl == 0 || strncmp(host, hn, hl) != 0 || host[hl] != '.')
        return -1;
    p = host + hl + 1;
    char *end;
    errno = 0;
    long pid = strtol(p, &end, 10);
    if (errno || end == p || *end != '.' || pid <= 0)
        return -1;
    p = end + 1;
    if (!(*p >= '0' && *p <= '9'))
        return -1;
    return pid;
}

/* 1 alive, 0 gone, -1 unknown. EPERM: it exists under another user. */
static int process_state(long pid)
{
    if (pid <= 0)
        return -1;
    if (kill((pid_t)pid, 0) == 0 || errno == EPERM)
        return 1;
    return errno == ESRCH ? 0 : -1;
}

/* ---- the median interval ----------------------------------------------- */

/* Median seconds between the last 256 points of the run's longest scalar
 * series; NaN with fewer than 2 points. Decodes only those points. */
static double median_interval(tfb_series *const *ser, size_t n)
{
    tfb_series *best = NULL;
    size_t most = 1;
    for (size_t i = 0; i < n; i++) {
        size_t c = tfb_series_count(ser[i]);
        if (c > most) {
            most = c;
            best = ser[i];
        }
    }
    if (!best)
        return NAN;
    /* Worked out again only when the series grew. */
    pthread_mutex_lock(&g_mu);
    series_entry *e = entry_of(best);
    if (e && e->interval_count == most) {
        double iv = e->interval;
        pthread_mutex_unlock(&g_mu);
        return iv;
    }
    pthread_mutex_unlock(&g_mu);
    enum { K = 256 };
    int64_t step[K + 1];
    double wall[K + 1], d[K];
    size_t from = most > K + 1 ? most - (K + 1) : 0;
    size_t got = tfb_series_scalar_range(best, from, K + 1, step, wall, NULL,
                                         NULL);
    size_t nd = 0;
    for (size_t i = 1; i < got; i++) {
        double dt = wall[i] - wall[i - 1];
        if (dt >= 0 && step[i] != step[i - 1])
            d[nd++] = dt;
    }
    double iv = nd ? tfb_median(d, nd) : NAN;
    pthread_mutex_lock(&g_mu);
    if ((e = entry_of(best)) != NULL) {
        e->interval = iv;
        e->interval_count = most;
    }
    pthread_mutex_unlock(&g_mu);
    return iv;
}

/* ---- the status -------------------------------------------------------- */

static void note_diverged(tfb_run_status *st, int64_t step, const char *tag,
                          const char *why)
{
    if (st->diverged_why && st->diverged_step <= step)
        return;
    st->diverged_step = step;
    st->diverged_tag = tag;
    st->diverged_why = why;
}

/* The status; the median interval worked out always (need_interval)
 * or only when it decides the state. */
static int status_of(tfb_run *r, double now, int need_interval,
                     tfb_run_status *st)
{
    memset(st, 0, sizeof *st);
    /* A directory of trace files only: no writer to judge. */
    tfb_file_info *fi;
    size_t fi_n;
    if (tfb_run_files(r, &fi, &fi_n) < 0)
        return TFB_ENOMEM;
    if (!fi_n) {
        tfb_file_infos_free(fi, fi_n);
        return TFB_ENOENT;
    }
    st->pid = -1;
    st->process = -1;
    st->step_interval = NAN;
    st->last_wall = tfb_run_last_wall(r);
    st->idle_s = isnan(st->last_wall) ? NAN : now - st->last_wall;

    /* diverged: non-finite values in any series (earliest first), or a
     * loss that blew up. */
    tfb_series **ser, **scalars = NULL;
    size_t ns, n_scalars = 0;
    for (int k = 0; k < TFB_SERIES_KIND_COUNT; k++) {
        if (k == TFB_SERIES_TEXT)
            continue;
        if (tfb_run_series(r, (tfb_series_kind)k, &ser, &ns) < 0) {
            tfb_file_infos_free(fi, fi_n);
            free(scalars);
            return TFB_ENOMEM;
        }
        for (size_t i = 0; i < ns; i++) {
            tfb_nonfinite_stats nf;
            tfb_series_nonfinite(ser[i], &nf);
            if (nf.has_first)
                note_diverged(st, nf.first_step, tfb_series_tag(ser[i]),
                              "non-finite");
        }
        if (k == TFB_SERIES_SCALAR) {
            for (size_t i = 0; i < ns; i++) {
                int64_t step = 0;
                if (blew_up(ser[i], &step))
                    note_diverged(st, step, tfb_series_tag(ser[i]),
                                  "loss blow-up");
            }
            scalars = ser; /* for the median interval, below */
            n_scalars = ns;
            continue;
        }
        free(ser);
    }

    /* The end record counts when nothing came after it. libtfboard stamps
     * scalars through the TSC (collector/wallclock.h, within 1 ms of
     * CLOCK_REALTIME) and the end record through clock_gettime, so the
     * last scalar may carry a wall time a little after its own end record
     * (2 ULP were seen): a millisecond of slack, far less than a resumed
     * writer needs to open a file and log again. */
    tfb_plugin_record *rec;
    size_t nrec;
    if (tfb_run_records(r, TFB_RUN_END_PLUGIN, &rec, &nrec) < 0) {
        tfb_file_infos_free(fi, fi_n);
        free(scalars);
        return TFB_ENOMEM;
    }
    for (size_t i = 0; i < nrec; i++) {
        if (!(rec[i].wall >= st->last_wall - END_SLACK_S))
            continue;
        st->ended = 1;
        size_t n = rec[i].content_len < TFB_RUN_END_REASON_MAX
                       ? rec[i].content_len : TFB_RUN_END_REASON_MAX;
        memcpy(st->reason, rec[i].content, n);
        st->reason[n] = 0;
    }
    tfb_plugin_records_free(rec, nrec);

    /* The newest event file names the writer. */
    if (fi_n)
        st->pid = writer_pid(fi[fi_n - 1].path);
    tfb_file_infos_free(fi, fi_n);
    if (!st->ended)
        st->process = process_state(st->pid);

    /* The median interval matters to the state only when the run has
     * been idle past the floor and nothing else decided it (the
     * threshold is never below the floor). */
    if (need_interval || (!st->diverged_why && !st->ended &&
                          st->process != 0 && st->idle_s > g_stall_after))
        st->step_interval = median_interval(scalars, n_scalars);
    free(scalars);
    st->stall_after = g_stall_after;
    if (st->step_interval * 20 > st->stall_after)
        st->stall_after = st->step_interval * 20;

    if (st->diverged_why)
        st->state = TFB_RUN_DIVERGED;
    else if (st->ended)
        st->state = TFB_RUN_FINISHED;
    else if (st->process == 0)
        st->state = TFB_RUN_CRASHED;
    else if (st->idle_s > st->stall_after)
        st->state = TFB_RUN_STALLED;
    else
        st->state = TFB_RUN_RUNNING;
    return 0;
}

int tfb_run_status_get(tfb_run *r, double now, tfb_run_status *st)
{
    return status_of(r, now, 1, st);
}

int tfb_run_status_judge(tfb_run *r, double now, tfb_run_status *st)
{
    return status_of(r, now, 0, st);
}
