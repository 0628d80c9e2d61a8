/*
 * plugin.h - a dashboard is one plugin: one descriptor names its routes,
 * its web page, the test that says whether a run has its data, and the
 * writers of its section in `tfboard report`.
 *
 * The one table of plugins (server/plugins/registry.c, plus any plugin
 * registered with tfb_plugin_register before the server starts) is where
 * everything else comes from:
 *  - the route table: plugin route "tags" of plugin "scalars" answers
 *    /data/plugin/scalars/tags (core/dispatch.c);
 *  - /data/plugins_listing: every plugin, in table order, with `enabled`
 *    true when some run has its data; the web UI makes its tabs from it
 *    and loads the page module that it names;
 *  - `tfboard report`: each plugin's section, in table order.
 *
 * A plugin's analysis returns C structs; its route handlers and its report
 * writers both render those structs (JSON at the edge, never parsed back).
 *
 * Thread-safety: descriptors are immutable once registered; every callback
 * may run on many threads at once (route handlers on the HTTP pool, the
 * has_data test from any request).
 */
#ifndef TFB_SERVER_PLUGIN_H
#define TFB_SERVER_PLUGIN_H

#include <stddef.h>
#include <stdio.h>

#include "core/http_api.h"
#include "core/json.h"
#include "core/store.h"

/* What `tfboard report` asks of every plugin's section. */
typedef struct tfb_report_opts {
    const char *run_regex;  /* POSIX extended, unanchored; NULL = all runs */
    double grad_vanish;     /* gradient flag thresholds */
    double grad_explode;
} tfb_report_opts;

/* One route of a plugin: path is relative to /data/plugin/<name>/. */
typedef struct tfb_plugin_route {
    const char *path;
    tfb_http_handler handler;
} tfb_plugin_route;

typedef struct tfb_plugin {
    /* Listing key and URL segment: [a-z0-9_]+. */
    const char *name;
    /* The tab's title. */
    const char *title;
    /* The web UI page module, relative to the page root (e.g.
     * "js/pages/scalars.js"); NULL when the plugin has no tab. */
    const char *module;
    /* The page module's source, for a plugin built outside the web UI
     * bundle (served at /<module>); NULL: module is an embedded asset. */
    const char *module_source;
    const tfb_plugin_route *routes;
    size_t n_routes;
    /* 1 when run r has data for this dashboard. NULL: enabled when the
     * logdir has any run. Must be cheap (it runs per run per listing). */
    int (*has_data)(tfb_store *s, tfb_run *r);
    /* `tfboard report` writers for run r; NULL when the plugin has no
     * section. text: plain text (markdown 0) or Markdown, written only
     * when the run has something to say (or a "none" line). json: writes
     * "key": value members into the run's object being built in j.
     * Return 0 or a negative TFB_E* code (the report then fails). */
    int (*report_text)(FILE *f, tfb_store *s, tfb_run *r,
                       const tfb_report_opts *o, int markdown);
    int (*report_json)(tfb_json *j, tfb_store *s, tfb_run *r,
                       const tfb_report_opts *o);
    /* Routes that answer PUT (paths as in routes; NULL/0: none). The HTTP
     * layer lets a PUT through only to these, only with Content-Type
     * application/json and a body of at most TFB_HTTP_PUT_MAX bytes
     * (tfb_http_body); the server grants no CORS, so a cross-site page
     * cannot send one. GET/HEAD of the same path go to routes. */
    const tfb_plugin_route *put_routes;
    size_t n_put_routes;
} tfb_plugin;

/* The table: the built-in plugins, then the registered ones, in order.
 * The array lives as long as the process. */
const tfb_plugin *const *tfb_plugins(size_t *n);

/* Adds a plugin after the built-in ones. Call before the server starts
 * (not thread-safe against requests). Returns TFB_EEXIST for a name taken,
 * TFB_EINVAL for a bad descriptor, TFB_ENOMEM past the room for extra
 * plugins (16). The descriptor must outlive the server. */
int tfb_plugin_register(const tfb_plugin *p);

/* The plugin of that name, or NULL. */
const tfb_plugin *tfb_plugin_find(const char *name, size_t len);

/* 1 when some run of the store has the plugin's data. */
int tfb_plugin_enabled(const tfb_plugin *p, tfb_store *s);

#endif
