/*
 * test_alerts_notify.c - alert delivery (alerts_notify.h; issue 32 item
 * 11): a hung webhook holds back neither the --on_alert command nor the
 * exit (each destination has its own queue and thread, and the flush at
 * stop is bounded); alerts past a full queue, given up, or still queued
 * at exit are counted and told on the log, never dropped silently.
 *
 * The hung webhook is a listening socket that nobody accepts on: the
 * kernel completes the connection, libcurl sends the POST and waits for
 * an answer that never comes, TFB_ALERT_WEBHOOK_TIMEOUT_S a try.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "plugins/alerts/alerts_notify.h"
#include "test_util.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void nap(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (time_t)s) * 1e9)};
    nanosleep(&ts, NULL);
}

/* A webhook URL on 127.0.0.1 that never answers; returns the socket. */
static int hung_webhook(char *url, size_t len)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(fd, 64), 0);
    socklen_t al = sizeof a;
    assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &al), 0);
    snprintf(url, len, "http://127.0.0.1:%d/hook", ntohs(a.sin_port));
    return fd;
}

static tfb_alert_event *events(size_t n)
{
    tfb_alert_event *e = calloc(n, sizeof *e);
    assert_non_null(e);
    for (size_t i = 0; i < n; i++) {
        e[i].seq = i + 1;
        e[i].wall = 1.7e9 + (double)i;
        e[i].fired = 1;
        e[i].step = (int64_t)i;
        snprintf(e[i].run, sizeof e[i].run, "run%zu", i);
        snprintf(e[i].rule, sizeof e[i].rule, "loss>5");
        snprintf(e[i].key, sizeof e[i].key, "loss>5");
        snprintf(e[i].message, sizeof e[i].message, "loss>5: loss = 9");
    }
    return e;
}

/* Everything written to the log so far (a NUL-terminated copy). */
static char *log_text(FILE *log)
{
    fflush(log);
    long n = ftell(log);
    assert_true(n >= 0);
    char *s = calloc(1, (size_t)n + 1);
    assert_non_null(s);
    rewind(log);
    size_t got = fread(s, 1, (size_t)n, log);
    s[got] = 0;
    fseek(log, 0, SEEK_END);
    return s;
}

/* The counts of the stop line of `what` in the log; 0 when it is not
 * there. */
static int stop_counts(const char *log, const char *what,
                       unsigned long long c[4])
{
    char head[64];
    snprintf(head, sizeof head, "tfboard: %s: ", what);
    for (const char *p = strstr(log, head); p; p = strstr(p + 1, head))
        if (sscanf(p + strlen(head),
                   "%llu alerts delivered, %llu failed, %llu dropped (queue "
                   "full), %llu not delivered at exit",
                   &c[0], &c[1], &c[2], &c[3]) == 4)
            return 1;
    return 0;
}

static size_t count_lines(const char *path)
{
    size_t len = 0, n = 0;
    uint8_t *b = tu_read_file(path, &len);
    for (size_t i = 0; b && i < len; i++)
        n += b[i] == '\n';
    free(b);
    return n;
}

/* Three alerts: the command runs for each at once while the webhook
 * hangs on the first (before: each command waited out about 57 s of the
 * webhook's tries); the stop then ends within its bound and says the
 * webhook's three were not delivered. */
static void hung_webhook_holds_back_nothing(void **st)
{
    (void)st;
    char url[64];
    int fd = hung_webhook(url, sizeof url);
    char *dir = tu_mkdtemp();
    char hook[512], out[512], script[1200];
    snprintf(hook, sizeof hook, "%s/hook.sh", dir);
    snprintf(out, sizeof out, "%s/out", dir);
    snprintf(script, sizeof script,
             "#!/bin/sh\necho \"$TFB_ALERT_SEQ $TFB_ALERT_RUN\" >> '%s'\n",
             out);
    assert_int_equal(tu_write_file(hook, script, strlen(script)), 0);
    assert_int_equal(chmod(hook, 0755), 0);
    FILE *log = tmpfile();
    assert_non_null(log);
    assert_int_equal(tfb_alerts_notify_start(url, hook, log), 0);
    tfb_alert_event *e = events(3);
    tfb_alerts_notify(e, 3);
    /* Generous for a loaded machine; one webhook alert alone takes
     * 5 x 10 s of timeouts plus 7.5 s of back-off. */
    double t0 = now_s();
    while (count_lines(out) < 3 && now_s() - t0 < 40)
        nap(0.05);
    size_t ran = count_lines(out);
    if (ran != 3)
        fail_msg("the command ran for %zu of 3 alerts in %.0f s: the hung "
                 "webhook held it back", ran, now_s() - t0);
    t0 = now_s();
    tfb_alerts_notify_stop(1.0);
    double took = now_s() - t0;
    if (took > 15)
        fail_msg("the stop took %.1f s with a flush bound of 1 s", took);
    char *text = log_text(log);
    unsigned long long c[4];
    if (!stop_counts(text, "alert webhook", c))
        fail_msg("the log does not count the webhook's lost alerts:\n%s",
                 text);
    assert_int_equal(c[0], 0);      /* delivered */
    assert_int_equal(c[1] + c[3], 3); /* failed (in flight) + not sent */
    assert_int_equal(c[2], 0);      /* dropped */
    assert_null(strstr(text, "--on_alert")); /* the command lost none */
    free(text);
    free(e);
    fclose(log);
    close(fd);
    tu_rmtree(dir);
    free(dir);
}

/* 1,100 alerts at once on a queue of 1,024: the 76 oldest are dropped,
 * counted and told at once; at stop the rest are counted as not
 * delivered, and the stop keeps its bound though the webhook hangs. */
static void overflow_and_exit_are_counted(void **st)
{
    (void)st;
    enum { N = TFB_ALERT_QUEUE_MAX + 76 };
    char url[64];
    int fd = hung_webhook(url, sizeof url);
    FILE *log = tmpfile();
    assert_non_null(log);
    assert_int_equal(tfb_alerts_notify_start(url, NULL, log), 0);
    tfb_alert_event *e = events(N);
    tfb_alerts_notify(e, N);
    char *text = log_text(log);
    char want[128];
    snprintf(want, sizeof want, "tfboard: alert webhook: queue full (%d "
             "alerts): dropped the 76 oldest (76 so far)",
             TFB_ALERT_QUEUE_MAX);
    if (!strstr(text, want))
        fail_msg("the drops are not told when they happen:\n%s", text);
    free(text);
    double t0 = now_s();
    tfb_alerts_notify_stop(0.5);
    double took = now_s() - t0;
    if (took > 15)
        fail_msg("the stop took %.1f s with a flush bound of 0.5 s", took);
    text = log_text(log);
    unsigned long long c[4];
    if (!stop_counts(text, "alert webhook", c))
        fail_msg("the log does not count the lost alerts:\n%s", text);
    assert_int_equal(c[0], 0);
    assert_int_equal(c[2], 76);
    assert_int_equal(c[1] + c[3], TFB_ALERT_QUEUE_MAX);
    free(text);
    free(e);
    fclose(log);
    close(fd);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(hung_webhook_holds_back_nothing),
        cmocka_unit_test(overflow_and_exit_are_counted),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
