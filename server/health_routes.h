/*
 * health_routes.h - HTTP handlers of the training-health plugins:
 *   GET /data/plugin/health/alerts[?run=R]
 *       {"alerts": [...]} (health_analysis.h); an unknown run is 404.
 *   GET /data/plugin/gradients/norms?run=R[&vanish=X][&explode=Y]
 *       the gradient-norm table (gradients_analysis.h); thresholds default
 *       to --grad-vanish / --grad-explode; a missing run is 400, an
 *       unknown one 404, bad thresholds (not numbers, vanish < 0,
 *       explode <= vanish) 400.
 *
 * Ownership: area "health". Thread-safety: handlers may run on many
 * threads at once.
 */
#ifndef TFB_SERVER_HEALTH_ROUTES_H
#define TFB_SERVER_HEALTH_ROUTES_H

#include "http_api.h"

int tfb_route_health_alerts(const tfb_http_req *req, tfb_http_resp *resp);
int tfb_route_gradients_norms(const tfb_http_req *req, tfb_http_resp *resp);

#endif
