/*
 * registry.h - the built-in dashboards (registry.c), for the command line
 * (and tests) to hand to core at start. Core never includes this header.
 * Thread-safety: the list is immutable; tfb_builtin_plugins_init is called
 * once, before the server starts.
 */
#ifndef TFB_SERVER_REGISTRY_H
#define TFB_SERVER_REGISTRY_H

#include <stddef.h>

#include "core/plugin.h"

/* The built-in plugins, in tab order; the array lives as long as the
 * process. */
const tfb_plugin *const *tfb_builtin_plugins(size_t *n);

/* tfb_plugin_table_init(tfb_builtin_plugins()): hands the built-in list
 * to core. Returns 0 or a negative TFB_E* code (TFB_EEXIST when a plugin
 * registered earlier took a built-in name, or when called twice). */
int tfb_builtin_plugins_init(void);

#endif
