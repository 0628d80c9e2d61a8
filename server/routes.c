/*
 * routes.c - the one table that maps request paths to handlers.
 *
 * Other areas: add your handler header to the includes and ONE line per
 * route to the table, in your section. Paths match exactly.
 */
#include <string.h>

#include "http_api.h"
#include "routes_core.h"
/* Feature areas' handler headers (one line each): */
#include "pipeline_routes.h"
#include "health_routes.h"
#include "gpu_routes.h"

static const tfb_route route_table[] = {
    /* core (server area) */
    {"/data/runs", tfb_route_runs},
    {"/data/runs_info", tfb_route_runs_info},
    {"/data/environment", tfb_route_environment},
    {"/data/plugins_listing", tfb_route_plugins_listing},
    {"/data/plugin/core/progress", tfb_route_progress},
    {"/data/plugin/scalars/tags", tfb_route_scalar_tags},
    {"/data/plugin/scalars/scalars", tfb_route_scalars},
    {"/data/plugin/scalars/summary", tfb_route_scalar_summary},
    {"/data/plugin/histograms/tags", tfb_route_histogram_tags},
    {"/data/plugin/histograms/histograms", tfb_route_histograms},
    {"/data/plugin/distributions/tags", tfb_route_histogram_tags},
    {"/data/plugin/distributions/distributions", tfb_route_distributions},
    {"/data/plugin/text/tags", tfb_route_text_tags},
    {"/data/plugin/text/text", tfb_route_text},
    /* health / gradients */
    {"/data/plugin/health/alerts", tfb_route_health_alerts},
    {"/data/plugin/gradients/norms", tfb_route_gradients_norms},
    /* pipeline */
    {"/data/plugin/pipeline/summary", tfb_route_pipeline_summary},
    {"/data/plugin/pipeline/steps", tfb_route_pipeline_steps},
    /* gpu */
    {"/data/plugin/gpu/summary", tfb_route_gpu_summary},
    {"/data/plugin/gpu/kernels", tfb_route_gpu_kernels},
    {"/data/plugin/gpu/utilization", tfb_route_gpu_utilization},
    {"/data/plugin/gpu/timeline", tfb_route_gpu_timeline},
    {"/data/plugin/gpu/trace.json", tfb_route_gpu_trace_json},
};

tfb_http_handler tfb_route_find(const char *path)
{
    for (size_t i = 0; i < sizeof route_table / sizeof route_table[0]; i++)
        if (strcmp(route_table[i].path, path) == 0)
            return route_table[i].handler;
    return NULL;
}

const tfb_route *tfb_routes(size_t *n)
{
    *n = sizeof route_table / sizeof route_table[0];
    return route_table;
}
