/*
 * registry.c - the one table of dashboards. Its order is the order of the
 * tabs, of /data/plugins_listing and of the report's sections.
 */
#include <stdlib.h>
#include <string.h>

#include "core/plugin.h"

extern const tfb_plugin tfb_plugin_scalars;
extern const tfb_plugin tfb_plugin_runs;
extern const tfb_plugin tfb_plugin_histograms;
extern const tfb_plugin tfb_plugin_distributions;
extern const tfb_plugin tfb_plugin_text;
extern const tfb_plugin tfb_plugin_health;
extern const tfb_plugin tfb_plugin_gradients;
extern const tfb_plugin tfb_plugin_gpu;
extern const tfb_plugin tfb_plugin_pipeline;
extern const tfb_plugin tfb_plugin_ranks;
extern const tfb_plugin tfb_plugin_hparams;
extern const tfb_plugin tfb_plugin_compare;

#define TFB_MAX_PLUGINS 32

/* Built-in first; tfb_plugin_register appends. Written only before the
 * server starts, so readers need no lock. */
static const tfb_plugin *table[TFB_MAX_PLUGINS] = {
    &tfb_plugin_scalars,
    &tfb_plugin_runs,
    &tfb_plugin_histograms,
    &tfb_plugin_distributions,
    &tfb_plugin_text,
    &tfb_plugin_health,
    &tfb_plugin_gradients,
    &tfb_plugin_gpu,
    &tfb_plugin_pipeline,
    &tfb_plugin_ranks,
    &tfb_plugin_hparams,
    &tfb_plugin_compare,
};
static size_t n_table = 12;

const tfb_plugin *const *tfb_plugins(size_t *n)
{
    *n = n_table;
    return table;
}

const tfb_plugin *tfb_plugin_find(const char *name, size_t len)
{
    for (size_t i = 0; i < n_table; i++)
        if (strlen(table[i]->name) == len &&
            memcmp(table[i]->name, name, len) == 0)
            return table[i];
    return NULL;
}

static int valid_name(const char *s)
{
    if (!s || !*s)
        return 0;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') ||
              *s == '_'))
            return 0;
    return 1;
}

int tfb_plugin_register(const tfb_plugin *p)
{
    if (!p || !valid_name(p->name) || !p->title ||
        (p->n_routes && !p->routes))
        return TFB_EINVAL;
    if (tfb_plugin_find(p->name, strlen(p->name)))
        return TFB_EEXIST;
    if (n_table == TFB_MAX_PLUGINS)
        return TFB_ENOMEM;
    table[n_table++] = p;
    return 0;
}

int tfb_plugin_enabled(const tfb_plugin *p, tfb_store *s)
{
    tfb_run **runs;
    size_t nr;
    if (tfb_store_runs(s, &runs, &nr) < 0)
        return 0;
    int on = 0;
    for (size_t i = 0; i < nr && !on; i++)
        on = p->has_data ? p->has_data(s, runs[i]) : 1;
    free(runs);
    return on;
}
