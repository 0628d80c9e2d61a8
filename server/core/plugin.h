/*
 * plugin.h - a dashboard is one plugin: one descriptor names its routes,
 * its web page, the test that says whether a run has its data, and the
 * writers of its section in `tfboard report`.
 *
 * The one table of plugins (the built-in list of server/plugins/
 * registry.c, handed to core at start with tfb_plugin_table_init, plus any
 * plugin registered with tfb_plugin_register before the server starts) is
 * where everything else comes from:
 *  - the route table: plugin route "tags" of plugin "scalars" answers
 *    /data/plugin/scalars/tags (core/dispatch.c);
 *  - /data/plugins_listing: every plugin, in table order, with `enabled`
 *    true when some run has its data; the web UI makes its tabs from it
 *    and loads the page module that it names;
 *  - `tfboard report`: each plugin's section, in table order;
 *  - the command line: each plugin's own options (tfb_option,
 *    options.h), accepted by serve, report and watch, and listed after
 *    the command's own in their --help.
 *
 * ABI: a descriptor starts with its size and version (TFB_PLUGIN_ABI sets
 * both). Core reads only what the size covers, so a plugin built against
 * an older, smaller tfb_plugin keeps working: newer fields read as unset.
 * A field is only ever added at the end, with TFB_PLUGIN_VERSION raised.
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
#include <stdint.h>
#include <stdio.h>

#include "core/http_api.h"
#include "core/json.h"
#include "core/options.h"
#include "store/store.h"
#include "store/value_decoder.h"
#include "webui/assets.h"

/* What `tfboard report` asks of every plugin's section. */
typedef struct tfb_report_opts {
    const char *run_regex;  /* POSIX extended, unanchored; NULL = all runs */
    /* --where: a run-filter expression over runs_wide (server/API.md
     * "SQL"); NULL = all runs. The report keeps only the runs it selects
     * before any plugin sees them. */
    const char *where;
} tfb_report_opts;

/* One route of a plugin: path is relative to /data/plugin/<name>/. */
typedef struct tfb_plugin_route {
    const char *path;
    tfb_http_handler handler;
} tfb_plugin_route;

/* One fire or clear event of a dashboard's service, as `tfboard watch`
 * prints it ("<time> FIRED run=<run> rule=<rule> step=<step>: <message>").
 * The strings live for the emit call only. */
typedef struct tfb_service_event {
    double wall;         /* when it was seen (seconds since the epoch) */
    int fired;           /* 1 fired, 0 cleared */
    const char *run, *rule, *message;
    int64_t step;        /* -1: not step-bound */
} tfb_service_event;

/* How a service runs: beside the server (it works on threads of its own
 * until stopped), or under `tfboard watch` (which calls poll after each
 * loader pass, on its own thread). */
typedef enum tfb_service_mode {
    TFB_SERVICE_SERVE = 1,
    TFB_SERVICE_WATCH,
} tfb_service_mode;

/* A dashboard's background work (the alerts: evaluation and delivery to
 * a webhook or a command), so that neither the server's start nor
 * `tfboard watch` names a dashboard. */
typedef struct tfb_plugin_service {
    /* Starts it on store s, re-evaluating every interval seconds (serve).
     * Messages go to log. Returns 0 (also when its options ask for
     * nothing to run), or a negative TFB_E* code: the server goes on
     * without it, `tfboard watch` exits 2. */
    int (*start)(tfb_store *s, tfb_service_mode mode, double interval,
                 FILE *log);
    /* Stops what start started (delivering what is queued, within a
     * bound it chooses by mode). Called once, after a start that
     * returned 0. */
    void (*stop)(tfb_service_mode mode);
    /* `tfboard watch`: one evaluation of s at wall time now; calls emit
     * once for each event, in order. Returns 0 or a negative TFB_E*
     * code. NULL: nothing to print. */
    int (*poll)(tfb_store *s, double now,
                void (*emit)(void *user, const tfb_service_event *e),
                void *user);
    /* For `tfboard watch --help`: what poll reports (a few lines). */
    const char *watch_help;
} tfb_plugin_service;

/* The layout of tfb_plugin this header describes. */
#define TFB_PLUGIN_VERSION 3
/* The smallest descriptor accepted: up to and including report_json. */
#define TFB_PLUGIN_SIZE_V1 \
    (offsetof(tfb_plugin, report_json) + sizeof(void (*)(void)))
/* The first members of every descriptor: .size and .version. */
#define TFB_PLUGIN_ABI .size = sizeof(tfb_plugin), .version = TFB_PLUGIN_VERSION

typedef struct tfb_plugin {
    /* sizeof(tfb_plugin) and TFB_PLUGIN_VERSION as the plugin was built
     * (TFB_PLUGIN_ABI); core reads no field past size. */
    size_t size;
    int version;
    /* Listing key and URL segment: [a-z0-9_]+. */
    const char *name;
    /* The tab's title. */
    const char *title;
    /* The web UI page module, relative to the page root (e.g.
     * "js/pages/scalars.js"; served from `assets`); NULL when the plugin
     * has no tab. */
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
    /* Its own command-line options (NULL/0: none; options.h), accepted
     * by serve, report and watch alike as --name VALUE, --name=VALUE (or
     * --name alone for a flag). A value is parsed before anything else
     * starts and written to *dest, which the plugin owns and reads
     * (read-only once the server runs). Their names must not clash with
     * a command's or another plugin's. */
    const tfb_option *options;
    size_t n_options;
    /* Called once after the command line is parsed (serve, report and
     * watch), for checks across its options (e.g. one threshold below
     * another).
     * Returns 0, or TFB_EINVAL with a one-line reason in err. NULL: none. */
    int (*check_options)(char *err, size_t err_len);
    /* The report's first screen: calls emit once for each finding about
     * run r that belongs in the summary, with a weight (higher is more
     * urgent: 100 a run that broke, 90 a straggler, 50..100 an input-bound
     * run) and one line "label: detail" (label a few words, the same for
     * the same kind of finding, so the summary can group it across runs).
     * NULL: none. Returns 0 or a negative TFB_E* code. */
    int (*report_findings)(tfb_store *s, tfb_run *r, const tfb_report_opts *o,
                           void (*emit)(void *user, double weight,
                                        const char *text),
                           void *user);
    /* Version 2. The report's advice, listed once for all runs: calls emit
     * once for each piece of advice for run r, in order of importance,
     * with text that is the same on every run it applies to (none of this
     * run's figures: the report writes it once, naming the runs, in every
     * format). report_text then writes only the run's own figures behind
     * it. NULL: none. Returns 0 or a negative TFB_E* code. */
    int (*report_advice)(tfb_store *s, tfb_run *r, const tfb_report_opts *o,
                         void (*emit)(void *user, const char *advice),
                         void *user);
    /* Version 3. Writes "key": value members of its own into run r's
     * object in /data/runs_info (the runs plugin's "status"), at wall
     * time now; keys must not clash with core's or another plugin's.
     * NULL: none. */
    void (*run_info)(tfb_json *j, tfb_store *s, tfb_run *r, double now);
    /* Version 3. The decoders of its own kinds of value (values whose tag
     * carries its plugin name; store/value_decoder.h): core registers
     * them with the store when the plugin joins the table, so a new kind
     * of value edits no file of the loader. NULL/0: none. */
    const tfb_value_decoder *decoders;
    size_t n_decoders;
    /* Version 3. Its background service (tfb_plugin_service); NULL:
     * none. */
    const tfb_plugin_service *service;
    /* Version 3. Its web files, served at their paths (the page module
     * first: its path is "/" + module), ended by an entry whose path is
     * NULL; the build embeds them from the plugin's folder (page.js and
     * its helpers, server/plugins/meson.build). Not served with
     * --webui_dir, which serves every web file from that directory.
     * NULL: none (a page in module_source, or no page). */
    const tfb_asset *assets;
} tfb_plugin;

/* Hands the built-in plugins (in tab order) to core; the command line
 * calls it once at start (tfb_builtin_plugins_init in
 * server/plugins/registry.h), before or after tfb_plugin_register. The
 * array must outlive the server. Returns 0, TFB_EINVAL for a bad
 * descriptor, TFB_EEXIST when called twice or a name is taken. */
int tfb_plugin_table_init(const tfb_plugin *const *builtin, size_t n);

/* The table: the built-in plugins, then the registered ones, in order.
 * The array lives as long as the process. */
const tfb_plugin *const *tfb_plugins(size_t *n);

/* Adds a plugin after the built-in ones. Call before the server starts
 * (not thread-safe against requests). The descriptor is copied as far as
 * its size says (the copy is what tfb_plugins and tfb_plugin_find return);
 * what it points to must outlive the server. Returns TFB_EEXIST for a name
 * taken, TFB_EINVAL for a bad descriptor (a size below TFB_PLUGIN_SIZE_V1,
 * a version this server does not know), TFB_ENOMEM past the room for
 * extra plugins (16). */
int tfb_plugin_register(const tfb_plugin *p);

/* The plugin of that name, or NULL. */
const tfb_plugin *tfb_plugin_find(const char *name, size_t len);

/* The option --<name> of some plugin in the table (name without the
 * dashes, len bytes, spelled as declared: '_', never '-'; options.c
 * makes a typed name so), or NULL. */
const tfb_option *tfb_plugin_option_find(const char *name, size_t len);

/* ---- the plugins' services ------------------------------------------ */

/* Starts every plugin's service (tfb_plugin_service.start) on store s,
 * in table order. Returns 0, or the first error (the services started
 * before it keep running; stop them with tfb_plugin_services_stop). In
 * serve mode core starts one of its own first: once the first load is
 * done it fills tfb_plugin_enabled's cache (the listing's warm-up). */
int tfb_plugin_services_start(tfb_store *s, tfb_service_mode mode,
                              double interval, FILE *log);
/* Stops the services started, in reverse order. */
void tfb_plugin_services_stop(void);
/* `tfboard watch`: every service's poll, in table order. Returns 0 or
 * the first error. */
int tfb_plugin_services_poll(tfb_store *s, double now,
                             void (*emit)(void *user,
                                          const tfb_service_event *e),
                             void *user);

/* 1 when some run of the store has the plugin's data. Kept per store
 * generation (a plugin without data asks has_data of every run). */
int tfb_plugin_enabled(const tfb_plugin *p, tfb_store *s);

#endif
