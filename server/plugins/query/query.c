/*
 * query.c - the Query dashboard (issue 30): SQL over runs, metrics,
 * hparams, alerts and traces. Its descriptor, its options (the limits of
 * each statement), the service that runs its engine beside the server
 * (query_pool.c: POST /data/query and the run filters, through core's
 * sql_engine.h seam) and its route listing the tables.
 */
#include <stdint.h>

#include "core/plugin.h"
#include "plugins/query/query_pool.h"
#include "tfboard.h"

extern const tfb_asset tfb_query_assets[];

/* Defaults (API.md "Limits"): 5 s is the time limit (a query a
 * person waits for); 100,000 rows is what a browser table and a CSV
 * download of a sweep's runs_wide or one run's scalars take; 256 MiB is
 * what sorting or grouping 10 M kernels needs, and a tenth of a small
 * server's memory. */
static double opt_timeout = 5;
static int opt_max_rows = 100000;
static int opt_max_mem = 256;

static const tfb_option options[] = {
    {.name = "query_timeout", .arg = "S", .type = TFB_OPT_DOUBLE,
     .help = "stop a SQL query (POST /data/query, the Query tab) after S "
             "seconds",
     .def = "5", .min = 0.01, .max = 3600, .dest = &opt_timeout},
    {.name = "query_max_rows", .arg = "N", .type = TFB_OPT_INT,
     .help = "a SQL query's answer holds at most N rows (then "
             "\"truncated\": true)",
     .def = "100000", .min = 1, .max = 10000000, .dest = &opt_max_rows},
    {.name = "query_max_mem", .arg = "MIB", .type = TFB_OPT_INT,
     .help = "memory a SQL query may hold for strings, sorts and CTEs, "
             "in MiB",
     .def = "256", .min = 1, .max = 65536, .dest = &opt_max_mem},
};

static int service_start(tfb_store *s, tfb_service_mode mode,
                         double interval, FILE *log)
{
    (void)interval;
    (void)log;
    if (mode != TFB_SERVICE_SERVE)
        return 0;
    query_opts o = {opt_timeout, opt_max_rows, opt_max_mem};
    return query_pool_start(s, &o);
}

static void service_stop(tfb_service_mode mode)
{
    if (mode == TFB_SERVICE_SERVE)
        query_pool_stop();
}

static const tfb_plugin_service service = {
    .start = service_start,
    .stop = service_stop,
};

/* GET /data/plugin/query/tables: {"tables": [{"name", "columns"}],
 * "examples": [{"title", "sql"}]} (API.md). */
static int route_tables(const tfb_http_req *req, tfb_http_resp *resp)
{
    tfb_json j;
    tfb_json_init(&j);
    tfb_json_object_begin(&j);
    int rc = query_pool_tables(tfb_server_store(req), &j);
    if (rc == TFB_ENOTSUP) {
        tfb_json_free(&j);
        return tfb_http_error(resp, 501, "this tfboard was built without "
                                         "the query engine");
    }
    if (rc < 0) {
        tfb_json_free(&j);
        return tfb_http_error(resp, 500, "the tables could not be listed: "
                                         "%s", tfb_strerror(rc));
    }
    tfb_json_object_end(&j);
    return tfb_http_json(resp, &j);
}

static const tfb_plugin_route routes[] = {
    {"tables", route_tables},
};

const tfb_plugin tfb_plugin_query = {
    TFB_PLUGIN_ABI,
    .name = "query",
    .title = "Query",
    .module = "js/pages/query.js",
    .assets = tfb_query_assets,
    .routes = routes,
    .n_routes = sizeof routes / sizeof routes[0],
    .options = options,
    .n_options = sizeof options / sizeof options[0],
    .service = &service,
};
