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
 * Delivery runs on a thread of its own fed by a bounded queue (1,024
 * events; beyond it the oldest are dropped and counted), so loading and
 * serving never wait for a slow endpoint. A webhook answer other than 2xx,
 * or no answer within 10 s, is retried after 0.5, 1, 2 and 4 s (5 tries);
 * a command is killed after 30 s.
 *
 * Thread-safety: every function may be called from any thread.
 */
#ifndef TFB_ALERTS_NOTIFY_H
#define TFB_ALERTS_NOTIFY_H

#include <stddef.h>
#include <stdio.h>

#include "plugins/alerts/alerts_feed.h"
#include "store/store.h"

/* Starts the delivery thread when a webhook or a command is set (no-op
 * otherwise). webhook / cmd: NULL for none; copied. log: where failed
 * deliveries are told (stderr), may be NULL. Returns 0, TFB_ENOMEM or
 * TFB_EINVAL (an empty command). */
int tfb_alerts_notify_start(const char *webhook, const char *cmd, FILE *log);
/* Queues copies of n events (fired ones and cleared ones) for delivery. */
void tfb_alerts_notify(const tfb_alert_event *e, size_t n);
/* Delivers what is queued (waiting at most `drain_s` seconds), stops the
 * thread. */
void tfb_alerts_notify_stop(double drain_s);

/* The server's own evaluation loop, for when no page is open: polls the
 * store every `interval` seconds and hands fired events to the notifier.
 * Started only when a webhook or command is set. */
int tfb_alerts_watcher_start(tfb_store *s, double interval);
void tfb_alerts_watcher_stop(void);

#endif
