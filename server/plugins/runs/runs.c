/*
 * runs.c - the runs table: every run with its time span, steps, tags,
 * files and their read errors. Its data comes from the core routes
 * /data/runs and /data/runs_info, so the plugin has no routes of its own;
 * it is shown whenever the logdir has a run.
 */
#include "core/plugin.h"

const tfb_plugin tfb_plugin_runs = {
    .name = "runs",
    .title = "Runs",
    .module = "js/pages/runs.js",
};
