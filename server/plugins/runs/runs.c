/*
 * runs.c - the runs table: every run with its time span, steps, tags,
 * files and their read errors, and whether it is alive. Its data comes
 * from the core routes /data/runs and /data/runs_info, to which this
 * plugin adds each run's "status" (analysis/run_status.h); it has no
 * routes of its own and is shown whenever the logdir has a run.
 */
#include <math.h>

#include "analysis/run_status.h"
#include "core/plugin.h"

static void number_or_null(tfb_json *j, double v)
{
    if (isnan(v))
        tfb_json_null(j);
    else
        tfb_json_double(j, v);
}

/* "status": {"state", "ended", "reason", "idle_s", "step_interval",
 * "stall_after", "pid", "process": "alive"|"gone"|null, "diverged_step",
 * "diverged_tag", "diverged_why"}, or null for a run without event
 * files. */
static void run_info(tfb_json *j, tfb_store *s, tfb_run *r, double now)
{
    (void)s;
    tfb_run_status st;
    tfb_json_key(j, "status");
    if (tfb_run_status_get(r, now, &st) < 0) {
        tfb_json_null(j);
        return;
    }
    tfb_json_object_begin(j);
    tfb_json_key(j, "state");
    tfb_json_str(j, tfb_run_state_name(st.state));
    tfb_json_key(j, "ended");
    tfb_json_bool(j, st.ended);
    tfb_json_key(j, "reason");
    if (st.ended)
        tfb_json_str(j, st.reason);
    else
        tfb_json_null(j);
    tfb_json_key(j, "idle_s");
    number_or_null(j, st.idle_s);
    tfb_json_key(j, "step_interval");
    number_or_null(j, st.step_interval);
    tfb_json_key(j, "stall_after");
    tfb_json_double(j, st.stall_after);
    tfb_json_key(j, "pid");
    if (st.pid > 0)
        tfb_json_i64(j, st.pid);
    else
        tfb_json_null(j);
    tfb_json_key(j, "process");
    if (st.process < 0)
        tfb_json_null(j);
    else
        tfb_json_str(j, st.process ? "alive" : "gone");
    tfb_json_key(j, "diverged_step");
    if (st.diverged_why)
        tfb_json_i64(j, st.diverged_step);
    else
        tfb_json_null(j);
    tfb_json_key(j, "diverged_tag");
    if (st.diverged_tag)
        tfb_json_str(j, st.diverged_tag);
    else
        tfb_json_null(j);
    tfb_json_key(j, "diverged_why");
    if (st.diverged_why)
        tfb_json_str(j, st.diverged_why);
    else
        tfb_json_null(j);
    tfb_json_object_end(j);
}

/* Its web files (page.js first), embedded from this folder by the
 * build (server/plugins/meson.build). */
extern const tfb_asset tfb_runs_assets[];

const tfb_plugin tfb_plugin_runs = {
    TFB_PLUGIN_ABI,
    .name = "runs",
    .title = "Runs",
    .module = "js/pages/runs.js",
    .assets = tfb_runs_assets,
    .run_info = run_info,
};
