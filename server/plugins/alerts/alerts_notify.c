/*
 * alerts_notify.c - webhook and command delivery of alerts, each
 * destination on a queue and a thread of its own (alerts_notify.h).
 */
#include <curl/curl.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "plugins/alerts/alerts_notify.h"
#include "base/deadline.h"
#include "core/json.h"
#include "tfboard.h"

#define MAX_ARGS 64

extern char **environ;

/* One destination: its queue (a ring of TFB_ALERT_QUEUE_MAX), its thread
 * and its counts. Every field but the constant ones is under g_mu. */
typedef struct dest {
    const char *what; /* for messages */
    int (*send)(struct dest *d, const tfb_alert_event *e);
    pthread_t thread;
    pthread_cond_t cv; /* monotonic: work queued, stop asked */
    int on;            /* queue and cv made */
    int started;       /* thread made: to join (the stopping thread's) */
    tfb_alert_event *q;
    size_t head, len;
    uint64_t delivered, failed, dropped, unsent;
    int stopping;
    struct timespec flush_end; /* when stopping: give up at this time */
} dest;

static int post(dest *d, const tfb_alert_event *e);
static int run_cmd(dest *d, const tfb_alert_event *e);

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static int g_running;
static dest g_hook = {.what = "alert webhook", .send = post};
static dest g_cmd = {.what = "--on_alert", .send = run_cmd};
static dest *const g_dests[] = {&g_hook, &g_cmd};
#define N_DESTS (sizeof g_dests / sizeof g_dests[0])
static char *g_webhook;
static char *g_cmd_buf;
static char *g_argv[MAX_ARGS + 1];
static FILE *g_log;

/* 1 once the flush bound of a stop has run out: what is in flight is
 * abandoned. */
static int out_of_time(dest *d)
{
    pthread_mutex_lock(&g_mu);
    int r = d->stopping && tfb_deadline_passed(&d->flush_end);
    pthread_mutex_unlock(&g_mu);
    return r;
}

/* Waits s seconds, less when the flush bound ends first (a stop does not
 * wait out a retry's back-off). Returns 1 when out of time. */
static int pause_s(dest *d, double s)
{
    struct timespec dl;
    tfb_deadline_after_ms(&dl, (unsigned)(s * 1000));
    pthread_mutex_lock(&g_mu);
    for (;;) {
        int late = d->stopping && tfb_deadline_passed(&d->flush_end);
        if (late || tfb_deadline_passed(&dl)) {
            pthread_mutex_unlock(&g_mu);
            return late;
        }
        const struct timespec *until = &dl;
        if (d->stopping && (d->flush_end.tv_sec < dl.tv_sec ||
                            (d->flush_end.tv_sec == dl.tv_sec &&
                             d->flush_end.tv_nsec < dl.tv_nsec)))
            until = &d->flush_end;
        pthread_cond_timedwait(&d->cv, &g_mu, until);
    }
}

static size_t discard(char *p, size_t size, size_t n, void *u)
{
    (void)p;
    (void)u;
    return size * n;
}

/* libcurl asks this at least once a second during a transfer: a nonzero
 * answer aborts it, so a hung endpoint cannot hold a stop past its
 * bound. */
static int abort_when_late(void *u, curl_off_t dt, curl_off_t dn,
                           curl_off_t ut, curl_off_t un)
{
    (void)dt;
    (void)dn;
    (void)ut;
    (void)un;
    return out_of_time(u);
}

/* {"text": "...", "event", "run", "rule", "key", "step", "message",
 *  "seq", "wall_time"}; "text" is what Slack shows. */
static int body_of(const tfb_alert_event *e, tfb_json *j)
{
    char text[1200];
    snprintf(text, sizeof text, "[tfboard] %s %s: %s", e->run,
             e->fired ? "alert" : "cleared", e->message);
    tfb_json_init(j);
    tfb_json_object_begin(j);
    tfb_json_key(j, "text");
    tfb_json_str(j, text);
    tfb_json_key(j, "event");
    tfb_json_str(j, e->fired ? "fired" : "cleared");
    tfb_json_key(j, "run");
    tfb_json_str(j, e->run);
    tfb_json_key(j, "rule");
    tfb_json_str(j, e->rule);
    tfb_json_key(j, "key");
    tfb_json_str(j, e->key);
    tfb_json_key(j, "step");
    if (e->step >= 0)
        tfb_json_i64(j, e->step);
    else
        tfb_json_null(j);
    tfb_json_key(j, "message");
    tfb_json_str(j, e->message);
    tfb_json_key(j, "seq");
    tfb_json_u64(j, e->seq);
    tfb_json_key(j, "wall_time");
    tfb_json_double(j, e->wall);
    tfb_json_object_end(j);
    return 0;
}

/* The POST with its retries; 0 when a 2xx came back. Messages never name
 * the URL (a chat webhook's URL is its credential). */
static int post(dest *d, const tfb_alert_event *e)
{
    tfb_json j;
    body_of(e, &j);
    size_t blen;
    char *body = tfb_json_take(&j, &blen);
    if (!body)
        return TFB_ENOMEM;
    double delay = 0.5;
    int rc = TFB_EIO;
    for (int attempt = 1; attempt <= TFB_ALERT_WEBHOOK_TRIES; attempt++) {
        CURL *c = curl_easy_init();
        if (!c)
            break;
        struct curl_slist *h =
            curl_slist_append(NULL, "Content-Type: application/json");
        curl_easy_setopt(c, CURLOPT_URL, g_webhook);
        curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)blen);
        curl_easy_setopt(c, CURLOPT_TIMEOUT,
                         (long)TFB_ALERT_WEBHOOK_TIMEOUT_S);
        curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, discard);
        curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, abort_when_late);
        curl_easy_setopt(c, CURLOPT_XFERINFODATA, d);
        curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
        curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
        CURLcode cc = curl_easy_perform(c);
        long status = 0;
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
        curl_slist_free_all(h);
        curl_easy_cleanup(c);
        if (cc == CURLE_OK && status >= 200 && status < 300) {
            rc = 0;
            break;
        }
        int late = out_of_time(d);
        int last = attempt == TFB_ALERT_WEBHOOK_TRIES || late;
        if (g_log)
            fprintf(g_log, "tfboard: %s: alert %llu: try %d failed (%s)%s\n",
                    d->what, (unsigned long long)e->seq, attempt,
                    late ? "the exit's flush time ran out"
                    : cc != CURLE_OK ? curl_easy_strerror(cc)
                                     : "HTTP error status",
                    last ? "; giving up" : "; retrying");
        if (last || pause_s(d, delay))
            break;
        delay *= 2;
    }
    free(body);
    return rc;
}

/* The command's environment: ours without any TFB_ALERT_* it held, then
 * the alert's. Built before fork (the child of a threaded process only
 * calls exec). One malloc'd block: the pointers, then the strings. */
static char **alert_env(const tfb_alert_event *e)
{
    char step[32] = "", seq[32];
    if (e->step >= 0)
        snprintf(step, sizeof step, "%lld", (long long)e->step);
    snprintf(seq, sizeof seq, "%llu", (unsigned long long)e->seq);
    const char *const kv[][2] = {
        {"TFB_ALERT_EVENT", e->fired ? "fired" : "cleared"},
        {"TFB_ALERT_RUN", e->run},
        {"TFB_ALERT_RULE", e->rule},
        {"TFB_ALERT_KEY", e->key},
        {"TFB_ALERT_STEP", step},
        {"TFB_ALERT_MESSAGE", e->message},
        {"TFB_ALERT_SEQ", seq},
    };
    enum { NKV = sizeof kv / sizeof kv[0] };
    size_t n = 0, bytes = 0;
    for (char **p = environ; p && *p; p++, n++)
        bytes += strlen(*p) + 1;
    for (size_t i = 0; i < NKV; i++)
        bytes += strlen(kv[i][0]) + strlen(kv[i][1]) + 2;
    char **env = malloc((n + NKV + 1) * sizeof *env + bytes);
    if (!env)
        return NULL;
    char *at = (char *)(env + n + NKV + 1);
    size_t k = 0;
    for (char **p = environ; p && *p; p++) {
        if (strncmp(*p, "TFB_ALERT_", 10) == 0)
            continue;
        size_t l = strlen(*p) + 1;
        env[k++] = memcpy(at, *p, l);
        at += l;
    }
    for (size_t i = 0; i < NKV; i++) {
        env[k++] = at;
        at += sprintf(at, "%s=%s", kv[i][0], kv[i][1]) + 1;
    }
    env[k] = NULL;
    return env;
}

/* Runs the command with the alert in its environment; no shell. 0 when
 * it exited with status 0. */
static int run_cmd(dest *d, const tfb_alert_event *e)
{
    char **env = alert_env(e);
    if (!env)
        return TFB_ENOMEM;
    pid_t pid = fork();
    if (pid < 0) {
        if (g_log)
            fprintf(g_log, "tfboard: --on_alert: fork: %s\n",
                    strerror(errno));
        free(env);
        return TFB_EIO;
    }
    if (pid == 0) {
        /* The server blocks SIGINT/SIGTERM in its threads and ignores
         * SIGPIPE: give the command the defaults. */
        sigset_t none;
        sigemptyset(&none);
        pthread_sigmask(SIG_SETMASK, &none, NULL);
        signal(SIGPIPE, SIG_DFL);
        execvpe(g_argv[0], g_argv, env);
        _exit(127);
    }
    free(env);
    /* At most TFB_ALERT_CMD_TIMEOUT_S, less when a stop's flush time runs
     * out; looked at after 1 ms, then less and less often (every 100 ms
     * at most), so a quick hook costs little and a burst of alerts is
     * not paced at 10 a second. */
    struct timespec dl;
    tfb_deadline_after_ms(&dl, TFB_ALERT_CMD_TIMEOUT_S * 1000u);
    double nap = 0.001;
    const char *why = NULL;
    for (;;) {
        int st;
        pid_t w = waitpid(pid, &st, WNOHANG);
        if (w == pid) {
            int ok = WIFEXITED(st) && WEXITSTATUS(st) == 0;
            if (g_log && !ok)
                fprintf(g_log, "tfboard: --on_alert %s: alert %llu: exit "
                               "status %d\n", g_argv[0],
                        (unsigned long long)e->seq,
                        WIFEXITED(st) ? WEXITSTATUS(st) : -1);
            return ok ? 0 : TFB_EIO;
        }
        if (w < 0 && errno != EINTR)
            return TFB_EIO;
        if (tfb_deadline_passed(&dl))
            break;
        if (out_of_time(d)) {
            why = "killed: the exit's flush time ran out";
            break;
        }
        struct timespec ts = {0, (long)(nap * 1e9)};
        nanosleep(&ts, NULL);
        nap = nap * 2 < 0.1 ? nap * 2 : 0.1;
    }
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    if (g_log) {
        if (why)
            fprintf(g_log, "tfboard: --on_alert %s: alert %llu: %s\n",
                    g_argv[0], (unsigned long long)e->seq, why);
        else
            fprintf(g_log, "tfboard: --on_alert %s: alert %llu: killed "
                           "after %d s\n", g_argv[0],
                    (unsigned long long)e->seq, TFB_ALERT_CMD_TIMEOUT_S);
    }
    return TFB_EIO;
}

static void *deliver(void *arg)
{
    dest *d = arg;
    pthread_mutex_lock(&g_mu);
    for (;;) {
        while (!d->len && !d->stopping)
            pthread_cond_wait(&d->cv, &g_mu);
        if (!d->len)
            break; /* stopping, and everything went */
        if (d->stopping && tfb_deadline_passed(&d->flush_end))
            break; /* out of time: the rest is counted as not delivered */
        tfb_alert_event e = d->q[d->head];
        d->head = (d->head + 1) % TFB_ALERT_QUEUE_MAX;
        d->len--;
        pthread_mutex_unlock(&g_mu);
        int rc = d->send(d, &e);
        pthread_mutex_lock(&g_mu);
        if (rc == 0)
            d->delivered++;
        else
            d->failed++;
    }
    d->unsent += d->len;
    d->len = 0;
    pthread_mutex_unlock(&g_mu);
    return NULL;
}

/* After its thread is joined (or was never made). tfb_alerts_notify
 * looks at `on` under g_mu, hence the lock. */
static void dest_free(dest *d)
{
    pthread_mutex_lock(&g_mu);
    tfb_alert_event *q = d->q;
    int on = d->on;
    d->q = NULL;
    d->on = 0;
    pthread_mutex_unlock(&g_mu);
    free(q);
    if (on)
        pthread_cond_destroy(&d->cv);
}

static int dest_start(dest *d)
{
    tfb_alert_event *q = calloc(TFB_ALERT_QUEUE_MAX, sizeof *q);
    if (!q)
        return TFB_ENOMEM;
    if (tfb_cond_init_monotonic(&d->cv) != 0) {
        free(q);
        return TFB_ENOMEM;
    }
    pthread_mutex_lock(&g_mu);
    d->q = q;
    d->on = 1;
    d->head = d->len = 0;
    d->delivered = d->failed = d->dropped = d->unsent = 0;
    d->stopping = 0;
    pthread_mutex_unlock(&g_mu);
    if (pthread_create(&d->thread, NULL, deliver, d) != 0) {
        dest_free(d);
        return TFB_ENOMEM;
    }
    d->started = 1;
    return 0;
}

static void stop_all(double drain_s);

int tfb_alerts_notify_start(const char *webhook, const char *cmd, FILE *log)
{
    if (!webhook && !cmd)
        return 0;
    if (g_running)
        return 0;
    g_log = log;
    int rc = 0;
    if (cmd) {
        g_cmd_buf = strdup(cmd);
        if (!g_cmd_buf)
            return TFB_ENOMEM;
        size_t n = 0;
        for (char *save = NULL, *t = strtok_r(g_cmd_buf, " \t", &save);
             t && n < MAX_ARGS; t = strtok_r(NULL, " \t", &save))
            g_argv[n++] = t;
        g_argv[n] = NULL;
        if (!n) {
            free(g_cmd_buf);
            g_cmd_buf = NULL;
            return TFB_EINVAL;
        }
    }
    if (webhook) {
        curl_global_init(CURL_GLOBAL_DEFAULT);
        g_webhook = strdup(webhook);
        if (!g_webhook)
            rc = TFB_ENOMEM;
    }
    g_running = 1;
    if (rc == 0 && webhook)
        rc = dest_start(&g_hook);
    if (rc == 0 && cmd)
        rc = dest_start(&g_cmd);
    if (rc < 0)
        stop_all(0);
    return rc;
}

void tfb_alerts_notify(const tfb_alert_event *e, size_t n)
{
    uint64_t dropped_now[N_DESTS] = {0}, dropped_all[N_DESTS] = {0};
    pthread_mutex_lock(&g_mu);
    for (size_t k = 0; g_running && k < N_DESTS; k++) {
        dest *d = g_dests[k];
        if (!d->on || d->stopping)
            continue;
        for (size_t i = 0; i < n; i++) {
            if (d->len == TFB_ALERT_QUEUE_MAX) {
                d->head = (d->head + 1) % TFB_ALERT_QUEUE_MAX;
                d->len--;
                d->dropped++;
                dropped_now[k]++;
            }
            d->q[(d->head + d->len) % TFB_ALERT_QUEUE_MAX] = e[i];
            d->len++;
        }
        dropped_all[k] = d->dropped;
        pthread_cond_broadcast(&d->cv);
    }
    pthread_mutex_unlock(&g_mu);
    /* Told at once (one line a call, so at most one a poll): a queue that
     * overflows is news. */
    for (size_t k = 0; k < N_DESTS; k++)
        if (dropped_now[k] && g_log)
            fprintf(g_log, "tfboard: %s: queue full (%d alerts): dropped "
                           "the %llu oldest (%llu so far)\n",
                    g_dests[k]->what, TFB_ALERT_QUEUE_MAX,
                    (unsigned long long)dropped_now[k],
                    (unsigned long long)dropped_all[k]);
}

/* Asks every thread to deliver within drain_s, joins them, tells what
 * was lost, frees. */
static void stop_all(double drain_s)
{
    if (drain_s < 0)
        drain_s = 0;
    pthread_mutex_lock(&g_mu);
    for (size_t k = 0; k < N_DESTS; k++) {
        dest *d = g_dests[k];
        if (!d->on)
            continue;
        d->stopping = 1;
        tfb_deadline_after_ms(&d->flush_end, (unsigned)(drain_s * 1000));
        pthread_cond_broadcast(&d->cv);
    }
    pthread_mutex_unlock(&g_mu);
    for (size_t k = 0; k < N_DESTS; k++) {
        dest *d = g_dests[k];
        if (!d->started)
            continue;
        pthread_join(d->thread, NULL);
        d->started = 0;
        /* the thread is gone: the counts are ours to read */
        if (g_log && (d->failed || d->dropped || d->unsent))
            fprintf(g_log, "tfboard: %s: %llu alerts delivered, %llu "
                           "failed, %llu dropped (queue full), %llu not "
                           "delivered at exit (flush bound %g s)\n",
                    d->what, (unsigned long long)d->delivered,
                    (unsigned long long)d->failed,
                    (unsigned long long)d->dropped,
                    (unsigned long long)d->unsent, drain_s);
        dest_free(d);
    }
    pthread_mutex_lock(&g_mu);
    g_running = 0;
    pthread_mutex_unlock(&g_mu);
    free(g_webhook);
    g_webhook = NULL;
    free(g_cmd_buf);
    g_cmd_buf = NULL;
    g_argv[0] = NULL;
    if (g_log)
        fflush(g_log);
}

void tfb_alerts_notify_stop(double drain_s)
{
    if (!g_running)
        return;
    stop_all(drain_s);
}

/* ---- the server's own evaluation loop ---------------------------------- */

static pthread_t w_thread;
static int w_running, w_stop;
static pthread_mutex_t w_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t w_cv = PTHREAD_COND_INITIALIZER;
static tfb_store *w_store;
static double w_interval;

static void *watch_loop(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&w_mu);
    while (!w_stop) {
        pthread_mutex_unlock(&w_mu);
        struct timespec now;
        clock_gettime(CLOCK_REALTIME, &now);
        tfb_alert_event *ev;
        size_t n;
        if (tfb_alerts_poll(w_store, now.tv_sec + now.tv_nsec * 1e-9, &ev,
                            &n) == 0) {
            tfb_alerts_notify(ev, n);
            free(ev);
        }
        pthread_mutex_lock(&w_mu);
        struct timespec dl;
        clock_gettime(CLOCK_REALTIME, &dl);
        double t = dl.tv_sec + dl.tv_nsec * 1e-9 + w_interval;
        dl.tv_sec = (time_t)t;
        dl.tv_nsec = (long)((t - (double)dl.tv_sec) * 1e9);
        while (!w_stop &&
               pthread_cond_timedwait(&w_cv, &w_mu, &dl) != ETIMEDOUT) {
        }
    }
    pthread_mutex_unlock(&w_mu);
    return NULL;
}

int tfb_alerts_watcher_start(tfb_store *s, double interval)
{
    w_store = s;
    w_interval = interval > 0.05 ? interval : 0.05;
    w_stop = 0;
    if (pthread_create(&w_thread, NULL, watch_loop, NULL) != 0)
        return TFB_ENOMEM;
    w_running = 1;
    return 0;
}

void tfb_alerts_watcher_stop(void)
{
    if (!w_running)
        return;
    pthread_mutex_lock(&w_mu);
    w_stop = 1;
    pthread_cond_broadcast(&w_cv);
    pthread_mutex_unlock(&w_mu);
    pthread_join(w_thread, NULL);
    w_running = 0;
}
