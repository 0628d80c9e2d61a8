/*
 * registry.c - the built-in dashboards. Their order is the order of the
 * tabs, of /data/plugins_listing and of the report's sections. Core never
 * names this list: the command line hands it to core at start
 * (tfb_plugin_table_init, server/core/plugin.h).
 */
#include "plugins/registry.h"

extern const tfb_plugin tfb_plugin_scalars;
extern const tfb_plugin tfb_plugin_runs;
extern const tfb_plugin tfb_plugin_histograms;
extern const tfb_plugin tfb_plugin_distributions;
extern const tfb_plugin tfb_plugin_images;
extern const tfb_plugin tfb_plugin_text;
extern const tfb_plugin tfb_plugin_health;
extern const tfb_plugin tfb_plugin_gradients;
extern const tfb_plugin tfb_plugin_gpu;
extern const tfb_plugin tfb_plugin_pipeline;
extern const tfb_plugin tfb_plugin_ranks;
extern const tfb_plugin tfb_plugin_hparams;
extern const tfb_plugin tfb_plugin_compare;
extern const tfb_plugin tfb_plugin_pr_curves;
extern const tfb_plugin tfb_plugin_custom_scalars;
extern const tfb_plugin tfb_plugin_alerts;

static const tfb_plugin *const builtin[] = {
    &tfb_plugin_scalars,
    &tfb_plugin_runs,
    &tfb_plugin_histograms,
    &tfb_plugin_distributions,
    &tfb_plugin_images,
    &tfb_plugin_text,
    &tfb_plugin_health,
    &tfb_plugin_gradients,
    &tfb_plugin_gpu,
    &tfb_plugin_pipeline,
    &tfb_plugin_ranks,
    &tfb_plugin_hparams,
    &tfb_plugin_compare,
    &tfb_plugin_pr_curves,
    &tfb_plugin_custom_scalars,
    &tfb_plugin_alerts,
};

const tfb_plugin *const *tfb_builtin_plugins(size_t *n)
{
    *n = sizeof builtin / sizeof builtin[0];
    return builtin;
}

int tfb_builtin_plugins_init(void)
{
    size_t n;
    const tfb_plugin *const *b = tfb_builtin_plugins(&n);
    return tfb_plugin_table_init(b, n);
}
