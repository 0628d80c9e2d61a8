/*
 * testplug.c - the test dashboard: a folder of its own (this one) and one
 * line in tests/plugin/plugins.list, exactly what a built-in dashboard
 * costs (docs/ARCHITECTURE.md, "How to add a dashboard"). The test build
 * tfboard_testplug compiles it with the built-in ones;
 * tests/integration/test_plugins.py and tests/webui/test_plugin_tab.js
 * check that it shows up in /data/plugins_listing, as a tab with its page,
 * in the API reference, in the report and in --help.
 *
 * It has data for runs that log a scalar tag starting with "testplug/";
 * its route `runs` lists those runs with their tag counts, leaving out
 * runs with fewer than --testplug_min_tags (its own option). It also
 * decodes a kind of value of its own (store/value_decoder.h): values
 * whose tag carries the plugin name "testplug" are kept per run by its
 * decoder (count, last step, sum of their scalars), not as scalar series;
 * its route `values` answers them.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/plugin.h"

#define PREFIX "testplug/"

/* --testplug_min_tags N: set while the command line is parsed. */
static int min_tags = 1;

static const tfb_option options[] = {
    {.name = "testplug_min_tags", .arg = "N", .type = TFB_OPT_INT,
     .help = "runs with fewer testplug/ tags are left out", .def = "1",
     .min = 1, .max = 1000, .dest = &min_tags},
};

/* The run's testplug/ tags, or 0 when below --testplug_min_tags. */
static size_t count_tags(tfb_run *r)
{
    tfb_series **ser;
    size_t n, hits = 0;
    if (tfb_run_series(r, TFB_SERIES_SCALAR, &ser, &n) < 0)
        return 0;
    for (size_t i = 0; i < n; i++)
        hits += strncmp(tfb_series_tag(ser[i]), PREFIX, strlen(PREFIX)) == 0;
    free(ser);
    return hits >= (size_t)min_tags ? hits : 0;
}

static int has_data(tfb_store *s, tfb_run *r)
{
    (void)s;
    return count_tags(r) > 0;
}

/* ---- its own kind of value ---- */

/* A run's decoded values; the loader writes, route handlers read. */
typedef struct values {
    pthread_mutex_t lock;
    unsigned long long n;
    long long last_step;
    double sum;
} values;

static void *values_new(void)
{
    values *v = calloc(1, sizeof *v);
    if (v)
        pthread_mutex_init(&v->lock, NULL);
    return v;
}

static void values_reset(void *p)
{
    values *v = p;
    pthread_mutex_lock(&v->lock);
    v->n = 0;
    v->last_step = 0;
    v->sum = 0;
    pthread_mutex_unlock(&v->lock);
}

static void values_free(void *p)
{
    values *v = p;
    pthread_mutex_destroy(&v->lock);
    free(v);
}

static int decode(const tfb_decoded_value *d)
{
    values *v = d->state;
    pthread_mutex_lock(&v->lock);
    v->n++;
    v->last_step = d->ev->step;
    if (d->v->kind == TFB_VALUE_SCALAR)
        v->sum += d->v->scalar;
    pthread_mutex_unlock(&v->lock);
    return 1;
}

static const tfb_value_decoder decoders[] = {
    {.plugin = "testplug", .decode = decode, .state_new = values_new,
     .state_reset = values_reset, .state_free = values_free},
};

/* ---- routes ---- */

/* {"runs": {run: tag count}} */
static int route_runs(const tfb_http_req *req, tfb_http_resp *resp)
{
    tfb_run **runs;
    size_t nr;
    if (tfb_store_runs(tfb_server_store(req), &runs, &nr) < 0)
        return tfb_http_error(resp, 500, "out of memory");
    tfb_json j;
    tfb_json_init(&j);
    tfb_json_object_begin(&j);
    tfb_json_key(&j, "runs");
    tfb_json_object_begin(&j);
    for (size_t i = 0; i < nr; i++) {
        size_t c = count_tags(runs[i]);
        if (c) {
            tfb_json_key(&j, tfb_run_name(runs[i]));
            tfb_json_u64(&j, c);
        }
    }
    tfb_json_object_end(&j);
    tfb_json_object_end(&j);
    free(runs);
    return tfb_http_json(resp, &j);
}

/* {"runs": {run: {"values", "last_step", "sum"}}}: the decoder's. */
static int route_values(const tfb_http_req *req, tfb_http_resp *resp)
{
    tfb_run **runs;
    size_t nr;
    if (tfb_store_runs(tfb_server_store(req), &runs, &nr) < 0)
        return tfb_http_error(resp, 500, "out of memory");
    tfb_json j;
    tfb_json_init(&j);
    tfb_json_object_begin(&j);
    tfb_json_key(&j, "runs");
    tfb_json_object_begin(&j);
    for (size_t i = 0; i < nr; i++) {
        values *v = tfb_run_decoder_state(runs[i], &decoders[0]);
        if (!v)
            continue;
        pthread_mutex_lock(&v->lock);
        values c = *v;
        pthread_mutex_unlock(&v->lock);
        if (!c.n)
            continue;
        tfb_json_key(&j, tfb_run_name(runs[i]));
        tfb_json_object_begin(&j);
        tfb_json_key(&j, "values");
        tfb_json_u64(&j, c.n);
        tfb_json_key(&j, "last_step");
        tfb_json_i64(&j, c.last_step);
        tfb_json_key(&j, "sum");
        tfb_json_double(&j, c.sum);
        tfb_json_object_end(&j);
    }
    tfb_json_object_end(&j);
    tfb_json_object_end(&j);
    free(runs);
    return tfb_http_json(resp, &j);
}

static int report_text(FILE *f, tfb_store *s, tfb_run *r,
                       const tfb_report_opts *o, int markdown)
{
    (void)s;
    (void)o;
    size_t c = count_tags(r);
    if (c)
        fprintf(f, markdown ? "\n### Test plugin\n\n%zu tags.\n"
                            : "  testplug: %zu tags\n", c);
    return 0;
}

static const tfb_plugin_route routes[] = {
    {"runs", route_runs},
    {"values", route_values},
};

/* Its web files (page.js), embedded from this folder by the build. */
extern const tfb_asset tfb_testplug_assets[];

const tfb_plugin tfb_plugin_testplug = {
    TFB_PLUGIN_ABI,
    .name = "testplug",
    .title = "Test plugin",
    .module = "js/pages/testplug.js",
    .assets = tfb_testplug_assets,
    .routes = routes,
    .n_routes = sizeof routes / sizeof routes[0],
    .has_data = has_data,
    .report_text = report_text,
    .options = options,
    .n_options = sizeof options / sizeof options[0],
    .decoders = decoders,
    .n_decoders = sizeof decoders / sizeof decoders[0],
};
