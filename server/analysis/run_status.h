/*
 * run_status.h - is a run alive? running, finished, crashed, stalled or
 * diverged, from what the logdir holds (issue 23). Used by
 * /data/runs_info, the runs table and sidebar, `tfboard report` and the
 * alerts plugin.
 *
 * The rules, in the order they are tried (the first that holds wins):
 *  - diverged: some series of the run held a NaN/Inf (the non-finite
 *    statistics the store keeps per series at ingestion, the same the
 *    health dashboard reports: the earliest first point is the step), or
 *    a loss blew up: the last value of a loss series (analysis/loss_tags.h)
 *    is above 10 x its first value and 100 x its smallest positive
 *    value, both positive (analysis/loss_watch.h);
 *  - finished: the run's last event is the end-of-run record that
 *    tfb_writer_close writes (collector/run_end.h), with its reason;
 *  - crashed: no end record, and the process that wrote the run's newest
 *    event file is gone. Known only when the file name is libtfboard's or
 *    PyTorch's `events.out.tfevents.<s>.<host>.<pid>.<n>`, <host> is this
 *    machine's host name and kill(pid, 0) says ESRCH;
 *  - stalled: no new event for longer than max(stall_after, 20 x the
 *    median interval between the points of the run's longest scalar
 *    series); stall_after is 300 s unless set (--stall_after);
 *  - running: otherwise.
 * A pid can be reused by another process: then a crashed writer reads as
 * stalled, never the reverse.
 *
 * Cost: O(number of series), no pin, no decode but the median interval's:
 * the non-finite statistics are read as they are, the blow-up rule reads
 * the loss watch the store feeds as it loads, and the median interval is
 * worked out (from 256 points of one series) only when that series grew
 * (kept per series, by run and tag name).
 *
 * Thread-safety: tfb_run_status_get is reentrant. tfb_run_status_configure
 * is called once, before any thread reads the settings.
 */
#ifndef TFB_SERVER_RUN_STATUS_H
#define TFB_SERVER_RUN_STATUS_H

#include <stdint.h>

#include "collector/run_end.h"
#include "analysis/loss_tags.h"
#include "store/store.h"

typedef enum tfb_run_state {
    TFB_RUN_RUNNING = 0,
    TFB_RUN_FINISHED,
    TFB_RUN_CRASHED,
    TFB_RUN_STALLED,
    TFB_RUN_DIVERGED,
    TFB_RUN_STATE_COUNT
} tfb_run_state;

#define TFB_STALL_AFTER_DEFAULT 300.0

typedef struct tfb_run_status {
    tfb_run_state state;
    /* The end record (whatever the state): 1 when the run's last event is
     * it (no event's wall time more than 1 ms after it), with its reason
     * ("" when none was given). */
    int ended;
    char reason[TFB_RUN_END_REASON_MAX + 1];
    double last_wall;       /* newest event; NaN when none */
    double idle_s;          /* now - last_wall; NaN when unknown */
    double step_interval;   /* median seconds between points; NaN */
    double stall_after;     /* the threshold applied, seconds */
    long pid;               /* the writer's pid from the file name; -1 */
    int process;            /* 1 alive, 0 gone, -1 unknown */
    /* diverged: where, and why ("non-finite" or "loss blow-up"). */
    int64_t diverged_step;
    const char *diverged_tag;  /* owned by the store; NULL */
    const char *diverged_why;  /* static text; NULL */
} tfb_run_status;

/* Sets the floor of the stall threshold (seconds, > 0) and the loss tag
 * regex (tfb_loss_tags_configure: NULL the default, "" none). Call it
 * before any store is created. Returns 0 or TFB_EINVAL (a threshold out
 * of range or a regex that does not compile). */
int tfb_run_status_configure(double stall_after, const char *loss_regex);

/* The status of r at wall time now (seconds since the epoch). Returns 0,
 * TFB_ENOENT for a run without event files (a directory of trace files
 * only: no writer whose state could be told), or TFB_ENOMEM. */
int tfb_run_status_get(tfb_run *r, double now, tfb_run_status *out);

/* As tfb_run_status_get, but the median interval is worked out only when
 * it decides the state (the run idle past --stall_after, not diverged,
 * ended or crashed); step_interval is NaN otherwise, and stall_after the
 * floor. For callers that need the state alone on every pass (the
 * alerts' evaluation of every run). */
int tfb_run_status_judge(tfb_run *r, double now, tfb_run_status *out);

/* Frees what the status keeps per series between calls (the median
 * interval): benchmarks and tests that start over. Not concurrent with
 * tfb_run_status_get. */
void tfb_run_status_forget(void);

/* "running", "finished", ... */
const char *tfb_run_state_name(tfb_run_state s);

#endif
