/*
 * pipeline_routes.c - the HTTP layer of the input-pipeline plugin: parse
 * the run, call the analysis, send its JSON.
 */
#include "pipeline_routes.h"

#include <stdlib.h>

#include "pipeline_analysis.h"

int tfb_route_pipeline_summary(const tfb_http_req *req, tfb_http_resp *resp)
{
    tfb_run *run;
    int rc = tfb_http_param_run(req, resp, &run);
    if (rc < 0)
        return rc;
    tfb_pipeline_summary s;
    rc = tfb_pipeline_analyze_run(tfb_server_store(req), run, &s);
    if (rc < 0)
        return rc;
    tfb_json j;
    tfb_json_init(&j);
    tfb_pipeline_summary_json(&j, &s);
    return tfb_http_json(resp, &j);
}

int tfb_route_pipeline_steps(const tfb_http_req *req, tfb_http_resp *resp)
{
    tfb_run *run;
    int rc = tfb_http_param_run(req, resp, &run);
    if (rc < 0)
        return rc;
    tfb_pipeline_step *steps;
    size_t n;
    rc = tfb_pipeline_collect(run, &steps, &n);
    if (rc < 0)
        return rc;
    tfb_json j;
    tfb_json_init(&j);
    tfb_pipeline_steps_json(&j, steps, n);
    free(steps);
    return tfb_http_json(resp, &j);
}
