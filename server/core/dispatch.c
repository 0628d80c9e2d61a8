/*
 * dispatch.c - maps a request path to its handler: the core routes below,
 * then /data/plugin/<plugin>/<route> from the plugin table (plugin.h).
 * Paths match exactly.
 */
#include <string.h>

#include "http_api.h"
#include "plugin.h"
#include "routes_core.h"

static const tfb_route core_routes[] = {
    {"/data/runs", tfb_route_runs},
    {"/data/runs_info", tfb_route_runs_info},
    {"/data/environment", tfb_route_environment},
    {"/data/plugins_listing", tfb_route_plugins_listing},
    {"/data/plugin/core/progress", tfb_route_progress},
};

#define PLUGIN_PREFIX "/data/plugin/"

tfb_http_handler tfb_route_find(const char *path)
{
    for (size_t i = 0; i < sizeof core_routes / sizeof core_routes[0]; i++)
        if (strcmp(core_routes[i].path, path) == 0)
            return core_routes[i].handler;
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
    for (size_t i = 0; i < p->n_routes; i++)
        if (strcmp(p->routes[i].path, slash + 1) == 0)
            return p->routes[i].handler;
    return NULL;
}
