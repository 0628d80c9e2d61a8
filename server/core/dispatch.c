/*
 * dispatch.c - maps a request path to its handler: the core routes below,
 * then /data/plugin/<plugin>/<route> from the plugin table (plugin.h).
 * Paths match exactly.
 */
#include <string.h>

#include "core/http_internal.h"
#include "tfboard.h"
#include "core/http_api.h"
#include "core/plugin.h"
#include "core/routes_core.h"
#include "core/selection.h"
#include "core/sql_engine.h"

static const tfb_route core_routes[] = {
    {"/data/runs", tfb_route_runs},
    {"/data/runs_info", tfb_route_runs_info},
    {"/data/environment", tfb_route_environment},
    {"/data/plugins_listing", tfb_route_plugins_listing},
    {"/data/plugin/core/progress", tfb_route_progress},
    /* a reload now (harmless to repeat, so GET too: a link works) */
    {"/data/reload", tfb_route_reload},
    /* GET ?id= (the names of a held selection); PUT below */
    {"/data/selection", tfb_route_selection},
    /* GET ?where=EXPR: a run filter checked and evaluated (sql_engine.h) */
    {"/data/runs_filter", tfb_route_runs_filter},
};

#define PLUGIN_PREFIX "/data/plugin/"

/* The plugin route for path, or NULL (core routes are GET only). */
static const tfb_plugin_route *plugin_route(const char *path, int put);

tfb_http_handler tfb_route_find_put(const char *path, size_t *max_body)
{
    *max_body = TFB_HTTP_PUT_MAX;
    if (strcmp(path, "/data/reload") == 0)
        return tfb_route_reload;
    if (strcmp(path, "/data/selection") == 0) {
        /* A sweep's selection: 10,000 names are about 200 KB. */
        *max_body = TFB_SELECTION_BODY_MAX;
        return tfb_route_selection;
    }
    const tfb_plugin_route *r = plugin_route(path, 1);
    return r ? r->handler : NULL;
}

tfb_http_handler tfb_route_find_post(const char *path, size_t *max_body)
{
    *max_body = TFB_QUERY_BODY_MAX;
    return strcmp(path, "/data/query") == 0 ? tfb_route_query : NULL;
}

tfb_http_handler tfb_route_find(const char *path)
{
    for (size_t i = 0; i < sizeof core_routes / sizeof core_routes[0]; i++)
        if (strcmp(core_routes[i].path, path) == 0)
            return core_routes[i].handler;
    const tfb_plugin_route *r = plugin_route(path, 0);
    return r ? r->handler : NULL;
}

static const tfb_plugin_route *plugin_route(const char *path, int put)
{
    size_t plen = strlen(PLUGIN_PREFIX);
    if (strncmp(path, PLUGIN_PREFIX, plen) != 0)
        return NULL;
    const char *name = path + plen;
    const char *slash = strchr(name, '/');
    if (!slash)
        return NULL;
    const tfb_plugin *p = tfb_plugin_find(name, (size_t)(slash - name));
    if (!p)
        return NULL;
    const tfb_plugin_route *t = put ? p->put_routes : p->routes;
    size_t n = put ? p->n_put_routes : p->n_routes;
    for (size_t i = 0; i < n; i++)
        if (strcmp(t[i].path, slash + 1) == 0)
            return &t[i];
    return NULL;
}

/* Here, not with the answer helpers of http_params.c: route handlers
 * call those helpers, so the dispatcher that calls the handlers sits
 * above them (no loop between the files). */
void tfb_http_dispatch(const tfb_http_req *req, tfb_http_resp *resp)
{
    tfb_http_handler h = tfb_route_find(req->path);
    if (!h) {
        tfb_http_error(resp, 404, "no such route");
        return;
    }
    int rc = h(req, resp);
    if (!resp->set)
        tfb_http_error(resp, 500, "internal error: %s", tfb_strerror(rc));
}
