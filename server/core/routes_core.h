/*
 * routes_core.h - the routes that belong to no dashboard (run list, run
 * details, load progress, environment, plugins listing), and the tag
 * listing that several dashboards share.
 * Thread-safety: each handler may run on many threads at once.
 */
#ifndef TFB_SERVER_ROUTES_CORE_H
#define TFB_SERVER_ROUTES_CORE_H

#include "core/http_api.h"

/* route_runs.c */
int tfb_route_runs(const tfb_http_req *req, tfb_http_resp *resp);
int tfb_route_runs_info(const tfb_http_req *req, tfb_http_resp *resp);
int tfb_route_progress(const tfb_http_req *req, tfb_http_resp *resp);
int tfb_route_environment(const tfb_http_req *req, tfb_http_resp *resp);
int tfb_route_reload(const tfb_http_req *req, tfb_http_resp *resp);
int tfb_route_plugins_listing(const tfb_http_req *req, tfb_http_resp *resp);

/* route_tags.c: {run: {tag: {displayName, description}}} for one kind of
 * series (TensorBoard's /tags answer), or with names_only {run: [tag,
 * ...]} (its text plugin's); runs without such a series left out. */
int tfb_route_tags_of_kind(const tfb_http_req *req, tfb_http_resp *resp,
                           tfb_series_kind kind, int names_only);
/* route_tags.c: the same listing with each distinct tag set once:
 * {"runs": {run: i}, "tag_sets": [[tag, ...], ...]}, run -> its index in
 * tag_sets (names in the series' first-seen order). A sweep's runs share
 * one set: 100,000 runs' scalar tags were 20 MB of JSON and 400,000
 * objects in the browser as the per-run map, 2 MB this way (issue 28). */
int tfb_route_tag_sets_of_kind(const tfb_http_req *req, tfb_http_resp *resp,
                               tfb_series_kind kind);
/* route_tags.c: answers [[wall_time, step, X], ...] for the histogram
 * series named by the request's run and tag, every point or `samples`
 * evenly spaced ones (first and last kept); X is written by fn for point i
 * of the pinned view. Shared by the histograms and distributions routes. */
typedef void (*tfb_hist_point_fn)(tfb_json *j, const tfb_series_view *v,
                                  size_t i);
int tfb_route_histogram_points(const tfb_http_req *req, tfb_http_resp *resp,
                               tfb_hist_point_fn fn);

/* 1 when run r has at least one series of that kind (a plugin's has_data
 * test). */
int tfb_run_has_kind(tfb_store *s, tfb_run *r, tfb_series_kind kind);

#endif
