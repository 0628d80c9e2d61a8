/*
 * alerts_notify.c - webhook and command delivery of alerts on a thread of
 * their own (alerts_notify.h).
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
#include "core/json.h"
#include "tfboard.h"

#define QUEUE_MAX 1024
#define MAX_ARGS 64

extern char **environ;

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_cv = PTHREAD_COND_INITIALIZER;
static pthread_t g_thread;
static int g_running, g_stop;
static tfb_alert_event *g_q;        /* ring of QUEUE_MAX */
static size_t g_head, g_len;
static uint64_t g_dropped;
static char *g_webhook;
static char *g_cmd_buf;
static char *g_argv[MAX_ARGS + 1];
static FILE *g_log;

static void sleep_s(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (time_t)s) * 1e9)};
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR) {
    }
}

static size_t discard(char *p, size_t size, size_t n, void *u)
{
    (void)p;
    (void)u;
    return size * n;
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

static void post(const tfb_alert_event *e)
{
    tfb_json j;
    body_of(e, &j);
    size_t blen;
    char *body = tfb_json_take(&j, &blen);
    if (!body)
        return;
    double delay = 0.5;
    for (int attempt = 1; attempt <= 5; attempt++) {
        CURL *c = curl_easy_init();
        if (!c)
            break;
        struct curl_slist *h =
            curl_slist_append(NULL, "Content-Type: application/json");
        curl_easy_setopt(c, CURLOPT_URL, g_webhook);
        curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)blen);
        curl_easy_setopt(c, CURLOPT_TIMEOUT, 10L);
        curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, discard);
        curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
        CURLcode rc = curl_easy_perform(c);
        long status = 0;
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
        curl_slist_free_all(h);
        curl_easy_cleanup(c);
        if (rc == CURLE_OK && status >= 200 && status < 300)
            break;
        if (g_log)
            fprintf(g_log, "tfboard: alert webhook: try %d failed (%s)%s\n",
                    attempt, rc != CURLE_OK ? curl_easy_strerror(rc)
                                            : "HTTP error status",
                    attempt < 5 ? "; retrying" : "; giving up");
        if (attempt == 5)
            break;
        pthread_mutex_lock(&g_mu);
        int stop = g_stop;
        pthread_mutex_unlock(&g_mu);
        if (stop && attempt >= 2)
            break; /* shutting down: do not hold the exit for long */
        sleep_s(delay);
        delay *= 2;
    }
    free(body);
}

/* Runs the command with the alert in its environment; no shell. */
static void run_cmd(const tfb_alert_event *e)
{
    char step[32] = "", seq[32];
    if (e->step >= 0)
        snprintf(step, sizeof step, "%lld", (long long)e->step);
    snprintf(seq, sizeof seq, "%llu", (unsigned long long)e->seq);
    pid_t pid = fork();
    if (pid < 0) {
        if (g_log)
            fprintf(g_log, "tfboard: --on_alert: fork: %s\n",
                    strerror(errno));
        return;
    }
    if (pid == 0) {
        /* The server blocks SIGINT/SIGTERM in its threads and ignores
         * SIGPIPE: give the command the defaults. */
        sigset_t none;
        sigemptyset(&none);
        pthread_sigmask(SIG_SETMASK, &none, NULL);
        signal(SIGPIPE, SIG_DFL);
        setenv("TFB_ALERT_EVENT", e->fired ? "fired" : "cleared", 1);
        setenv("TFB_ALERT_RUN", e->run, 1);
        setenv("TFB_ALERT_RULE", e->rule, 1);
        setenv("TFB_ALERT_KEY", e->key, 1);
        setenv("TFB_ALERT_STEP", step, 1);
        setenv("TFB_ALERT_MESSAGE", e->message, 1);
        setenv("TFB_ALERT_SEQ", seq, 1);
        execvp(g_argv[0], g_argv);
        _exit(127);
    }
    /* At most 30 s: a hung hook must not stop the others. */
    for (int i = 0; i < 300; i++) {
        int st;
        pid_t w = waitpid(pid, &st, WNOHANG);
        if (w == pid) {
            if (g_log && (!WIFEXITED(st) || WEXITSTATUS(st) != 0))
                fprintf(g_log, "tfboard: --on_alert %s: exit status %d\n",
                        g_argv[0], WIFEXITED(st) ? WEXITSTATUS(st) : -1);
            return;
        }
        if (w < 0 && errno != EINTR)
            return;
        sleep_s(0.1);
    }
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    if (g_log)
        fprintf(g_log, "tfboard: --on_alert %s: killed after 30 s\n",
                g_argv[0]);
}

static void *deliver(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&g_mu);
    for (;;) {
        while (!g_len && !g_stop)
            pthread_cond_wait(&g_cv, &g_mu);
        if (!g_len && g_stop)
            break;
        tfb_alert_event e = g_q[g_head];
        g_head = (g_head + 1) % QUEUE_MAX;
        g_len--;
        pthread_mutex_unlock(&g_mu);
        if (g_webhook)
            post(&e);
        if (g_argv[0])
            run_cmd(&e);
        pthread_mutex_lock(&g_mu);
        pthread_cond_broadcast(&g_cv);
    }
    pthread_mutex_unlock(&g_mu);
    return NULL;
}

int tfb_alerts_notify_start(const char *webhook, const char *cmd, FILE *log)
{
    if (!webhook && !cmd)
        return 0;
    if (g_running)
        return 0;
    g_log = log;
    if (cmd) {
        g_cmd_buf = strdup(cmd);
        if (!g_cmd_buf)
            return TFB_ENOMEM;
        size_t n = 0;
        for (char *save = NULL, *t = strtok_r(g_cmd_buf, " \t", &save);
             t && n < MAX_ARGS; t = strtok_r(NULL, " \t", &save))
            g_argv[n++] = t;
        g_argv[n] = NULL;
        if (!n)
            return TFB_EINVAL;
    }
    if (webhook) {
        curl_global_init(CURL_GLOBAL_DEFAULT);
        g_webhook = strdup(webhook);
        if (!g_webhook)
            return TFB_ENOMEM;
    }
    g_q = calloc(QUEUE_MAX, sizeof *g_q);
    if (!g_q)
        return TFB_ENOMEM;
    g_stop = 0;
    if (pthread_create(&g_thread, NULL, deliver, NULL) != 0)
        return TFB_ENOMEM;
    g_running = 1;
    return 0;
}

void tfb_alerts_notify(const tfb_alert_event *e, size_t n)
{
    pthread_mutex_lock(&g_mu);
    for (size_t i = 0; g_running && i < n; i++) {
        if (g_len == QUEUE_MAX) {
            g_head = (g_head + 1) % QUEUE_MAX;
            g_len--;
            g_dropped++;
        }
        g_q[(g_head + g_len) % QUEUE_MAX] = e[i];
        g_len++;
    }
    pthread_cond_broadcast(&g_cv);
    pthread_mutex_unlock(&g_mu);
}

void tfb_alerts_notify_stop(double drain_s)
{
    if (!g_running)
        return;
    struct timespec dl;
    clock_gettime(CLOCK_REALTIME, &dl);
    dl.tv_sec += (time_t)drain_s;
    pthread_mutex_lock(&g_mu);
    while (g_len) {
        if (pthread_cond_timedwait(&g_cv, &g_mu, &dl) == ETIMEDOUT)
            break;
    }
    g_stop = 1;
    g_len = 0; /* what was not delivered in time is dropped */
    pthread_cond_broadcast(&g_cv);
    pthread_mutex_unlock(&g_mu);
    pthread_join(g_thread, NULL);
    g_running = 0;
    if (g_dropped && g_log)
        fprintf(g_log, "tfboard: %llu alerts were dropped (queue full)\n",
                (unsigned long long)g_dropped);
    free(g_q);
    g_q = NULL;
    free(g_webhook);
    g_webhook = NULL;
    free(g_cmd_buf);
    g_cmd_buf = NULL;
    g_argv[0] = NULL;
    if (g_log)
        fflush(g_log);
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
