/*
 * runs.c - the runs table: every run with its time span, steps, tags,
 * files and their read errors, and whether it is alive. Its data comes
 * from the core routes /data/runs and /data/runs_info, to which this
 * plugin adds each run's "status" (analysis/run_status.h); it has no
 * routes of its own and is shown whenever the logdir has a run.
 */
#include "analysis/run_status.h"
#include "core/plugin.h"

/* NaN: unknown (null); the end reason is null unless the run ended. */
static const tfb_json_field status_fields[] = {
    TFB_JSON_FIELD(tfb_run_status, ended, BOOL),
    TFB_JSON_FIELD_IF("reason", tfb_run_status, reason, CHARS, ended),
    TFB_JSON_FIELD(tfb_run_status, idle_s, NUM),
    TFB_JSON_FIELD(tfb_run_status, step_interval, NUM),
    TFB_JSON_FIELD(tfb_run_status, stall_after, DOUBLE),
};
static const tfb_json_field diverged_fields[] = {
    TFB_JSON_FIELD(tfb_run_status, diverged_tag, STR),
    TFB_JSON_FIELD(tfb_run_status, diverged_why, STR),
};

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
    TFB_JSON_FIELDS(j, &st, status_fields);
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
    TFB_JSON_FIELDS(j, &st, diverged_fields);
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
