/*
 * alerts_notify.h - where fired alerts go besides the page and `tfboard
 * watch`: a webhook (--alert_webhook URL: a JSON POST through libcurl,
 * Slack-compatible "text") and a command (--on_alert CMD: fork/execvp of
 * CMD split at blanks, never through a shell; the alert is in the
 * environment: TFB_ALERT_EVENT ("fired"/"cleared"), TFB_ALERT_RUN,
 * TFB_ALERT_RULE, TFB_ALERT_KEY, TFB_ALERT_STEP ("" when none),
 * TFB_ALERT_MESSAGE, TFB_ALERT_SEQ). File-derived strings only ever travel
 * as JSON strings (escaped) or environment values, never as command text.
 *
 * Each destination (the webhook, the command) has a queue and a thread of
 * its own, so loading and serving never wait for a slow endpoint, and a
 * hung webhook (TFB_ALERT_WEBHOOK_TRIES tries of
 * TFB_ALERT_WEBHOOK_TIMEOUT_S, about 57 s an alert) never holds back the
 * command, nor the other way round. A full queue drops its oldest alert;
 * nothing is lost without a word: each drop, each alert given up after
 * its tries, and each one still queued when the flush bound of
 * tfb_alerts_notify_stop runs out is counted, and the counts are told on
 * the log (the drops when they happen, everything at stop).
 *
 * Thread-safety: every function may be called from any thread.
 */
#ifndef TFB_ALERTS_NOTIFY_H
#define TFB_ALERTS_NOTIFY_H

#include <stddef.h>
#include <stdio.h>

#include "plugins/alerts/alerts_feed.h"
#include "store/store.h"

/* The environment variable that gives the webhook's URL when neither
 * --alert_webhook nor --alert_webhook_file does: a chat webhook's URL is
 * its credential, and every local user can read a command line
 * (/proc/PID/cmdline), not another user's environment. */
#define TFB_ALERT_WEBHOOK_ENV "TFBOARD_ALERT_WEBHOOK"
/* The longest webhook URL read from a file or the environment, in bytes:
 * chat services' URLs are 80 to 500 bytes (Slack, Discord, Teams' workflow
 * URLs), so this leaves room, and a longer file is not a URL (the wrong
 * file given) and is refused before it is read whole. */
#define TFB_ALERT_WEBHOOK_MAX 4096

/* Alerts one destination keeps waiting (about 1.4 KB each, so 1.4 MB at
 * most): a first evaluation of a large logdir (one `nonfinite` per run on
 * a 1,000-run sweep) fits whole; past it the endpoint cannot keep up
 * anyway, and the oldest alerts go first (counted, told). */
#define TFB_ALERT_QUEUE_MAX 1024
/* A webhook POST: tries, and the seconds one try may take (connect and
 * answer). Retried after 0.5, 1, 2 and 4 s: a chat service's brief
 * outage or rate limit (429) passes, a dead one costs about 57 s an
 * alert, on the webhook's own thread only. */
#define TFB_ALERT_WEBHOOK_TRIES 5
#define TFB_ALERT_WEBHOOK_TIMEOUT_S 10
/* --on_alert: a command still running after this is killed, so one hung
 * hook cannot stop the alerts after it. */
#define TFB_ALERT_CMD_TIMEOUT_S 30
/* On exit, the time left to deliver what is queued (both destinations at
 * once), after which the delivery in flight is abandoned (the POST
 * aborted, the command killed) and the rest counted as not delivered:
 * `tfboard` 5 s, under `docker stop`'s 10 s grace, so a stop stays
 * clean; `tfboard watch` 30 s, since `watch --once` is how a CI job
 * sends its alerts and waits for the exit status anyway. A healthy
 * webhook takes dozens of alerts in either. */
#define TFB_ALERT_FLUSH_SERVE_S 5
#define TFB_ALERT_FLUSH_WATCH_S 30

/* Starts the delivery threads of the destinations set (no-op when
 * neither is). webhook / cmd: NULL for none; copied. log: where failed,
 * dropped and undelivered alerts are told (stderr), may be NULL. Returns
 * 0, TFB_ENOMEM or TFB_EINVAL (an empty command). */
int tfb_alerts_notify_start(const char *webhook, const char *cmd, FILE *log);
/* Queues copies of n events (fired ones and cleared ones) on each
 * destination's queue. */
void tfb_alerts_notify(const tfb_alert_event *e, size_t n);
/* Delivers what is queued, waiting at most `drain_s` seconds (then the
 * delivery in flight is abandoned), stops the threads and tells the
 * counts of what was not delivered. */
void tfb_alerts_notify_stop(double drain_s);

/* The server's own evaluation loop, for when no page is open: polls the
 * store every `interval` seconds and hands fired events to the notifier.
 * Started only when a webhook or command is set. */
int tfb_alerts_watcher_start(tfb_store *s, double interval);
void tfb_alerts_watcher_stop(void);

#endif
