/*
 * routes_core.h - the handlers of the core routes (runs, progress,
 * scalars, histograms, text). Area "server".
 * Thread-safety: each handler may run on many threads at once.
 */
#ifndef TFB_SERVER_ROUTES_CORE_H
#define TFB_SERVER_ROUTES_CORE_H

#include "http_api.h"

/* route_runs.c */
int tfb_route_runs(const tfb_http_req *req, tfb_http_resp *resp);
int tfb_route_runs_info(const tfb_http_req *req, tfb_http_resp *resp);
int tfb_route_progress(const tfb_http_req *req, tfb_http_resp *resp);
int tfb_route_environment(const tfb_http_req *req, tfb_http_resp *resp);
int tfb_route_plugins_listing(const tfb_http_req *req, tfb_http_resp *resp);
/* route_scalars.c */
int tfb_route_scalar_tags(const tfb_http_req *req, tfb_http_resp *resp);
int tfb_route_scalars(const tfb_http_req *req, tfb_http_resp *resp);
int tfb_route_scalar_summary(const tfb_http_req *req, tfb_http_resp *resp);
/* {run: {tag: {displayName, description}}} for one kind (histograms too) */
int tfb_route_tags_of_kind(const tfb_http_req *req, tfb_http_resp *resp,
                           tfb_series_kind kind);
/* route_histograms.c */
int tfb_route_histogram_tags(const tfb_http_req *req, tfb_http_resp *resp);
int tfb_route_histograms(const tfb_http_req *req, tfb_http_resp *resp);
int tfb_route_distributions(const tfb_http_req *req, tfb_http_resp *resp);
/* route_text.c */
int tfb_route_text_tags(const tfb_http_req *req, tfb_http_resp *resp);
int tfb_route_text(const tfb_http_req *req, tfb_http_resp *resp);

#endif
