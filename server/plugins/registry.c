/*
 * registry.c - the built-in dashboards, in the order of plugins.list: the
 * order of the tabs, of /data/plugins_listing and of the report's
 * sections. plugin_list.h is generated from the list by the build, so this
 * file names no dashboard and adding one edits nothing here. Core never
 * names this list: the command line hands it to core at start
 * (tfb_plugin_table_init, server/core/plugin.h). A build with more
 * dashboards (tests/plugin/) compiles this file again over a longer list.
 */
#include "plugins/registry.h"

#include "plugin_list.h" /* generated into the build directory */

#define TFB_DECLARE_PLUGIN(name) extern const tfb_plugin tfb_plugin_##name;
TFB_PLUGIN_LIST(TFB_DECLARE_PLUGIN)

static const tfb_plugin *const builtin[] = {
#define TFB_LIST_PLUGIN(name) &tfb_plugin_##name,
    TFB_PLUGIN_LIST(TFB_LIST_PLUGIN)
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
