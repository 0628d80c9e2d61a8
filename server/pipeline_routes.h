/*
 * pipeline_routes.h - HTTP handlers of the input-pipeline plugin:
 *   GET /data/plugin/pipeline/summary?run=R  the summary object
 *       (pipeline_analysis.h, tfb_pipeline_summary_json)
 *   GET /data/plugin/pipeline/steps?run=R    [[step, step_ms, input_ms], ...]
 * A missing run parameter is 400, an unknown run 404; a run without
 * pipeline scalars answers steps 0 (summary) or [] (steps).
 *
 * Ownership: area "pipeline". Thread-safety: handlers may run on many
 * threads at once.
 */
#ifndef TFB_SERVER_PIPELINE_ROUTES_H
#define TFB_SERVER_PIPELINE_ROUTES_H

#include "http_api.h"

int tfb_route_pipeline_summary(const tfb_http_req *req, tfb_http_resp *resp);
int tfb_route_pipeline_steps(const tfb_http_req *req, tfb_http_resp *resp);

#endif
