/*
 * health_routes.c - the HTTP layer of the health and gradients plugins:
 * parse parameters, call the analyses, send their JSON.
 */
#include "health_routes.h"

#include <math.h>
#include <stdlib.h>

#include "gradients_analysis.h"
#include "health_analysis.h"

int tfb_route_health_alerts(const tfb_http_req *req, tfb_http_resp *resp)
{
    tfb_run *run = NULL;
    int rc;
    if (tfb_http_query(req, "run") != NULL &&
        (rc = tfb_http_param_run(req, resp, &run)) < 0)
        return rc;
    tfb_health_alert *a;
    size_t n;
    rc = tfb_health_alerts(tfb_server_store(req), run, &a, &n);
    if (rc < 0)
        return rc;
    tfb_json j;
    tfb_json_init(&j);
    tfb_health_alerts_json(&j, a, n);
    free(a);
    return tfb_http_json(resp, &j);
}

int tfb_route_gradients_norms(const tfb_http_req *req, tfb_http_resp *resp)
{
    const tfb_config *cfg = tfb_server_config(req);
    tfb_run *run;
    double vanish, explode;
    int rc = tfb_http_param_run(req, resp, &run);
    if (rc < 0)
        return rc;
    rc = tfb_http_param_double(req, resp, "vanish", 0, cfg->grad_vanish, 0.0,
                               HUGE_VAL, &vanish);
    if (rc < 0)
        return rc;
    rc = tfb_http_param_double(req, resp, "explode", 0, cfg->grad_explode,
                               0.0, HUGE_VAL, &explode);
    if (rc < 0)
        return rc;
    if (!(explode > vanish) || isinf(vanish))
        return tfb_http_error(resp, 400,
                              "explode (%g) must be greater than vanish (%g)",
                              explode, vanish);
    tfb_gradients *g;
    rc = tfb_gradients_analyze(run, vanish, explode, &g);
    if (rc < 0)
        return rc;
    tfb_json j;
    tfb_json_init(&j);
    tfb_gradients_json(&j, g);
    tfb_gradients_free(g);
    return tfb_http_json(resp, &j);
}
