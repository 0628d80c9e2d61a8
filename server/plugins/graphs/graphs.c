/*
 * graphs.c - TensorBoard's graphs plugin routes over the runs' graph
 * blobs (store/event_blobs.h for the event-level ones, plugin records for
 * the graph_* summaries): /info, /graph (pbtxt) and /run_metadata, with
 * TensorBoard 2.21's answers (graphs_plugin.py), and /notes, tfboard's
 * check of a graph a page is about to draw.
 */
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/vec.h"
#include "collector/pb.h"
#include "core/plugin.h"
#include "plugins/graphs/graph_check.h"
#include "plugins/graphs/keras_graph.h"
#include "plugins/graphs/pbtxt.h"
#include "store/event_blobs.h"

/* The plugin names TensorBoard files graph data under (metadata.py). */
#define P_GRAPH "graphs"
#define P_RUN_METADATA "graph_run_metadata"
#define P_RUN_METADATA_GRAPH "graph_run_metadata_graph"
#define P_KERAS_MODEL "graph_keras_model"
#define P_TAGGED_RUN_METADATA "graph_tagged_run_metadata"

#define PBTXT_TYPE "text/x-protobuf; charset=utf-8"

/* ---- blobs ---- */

/* string_val[0] of a TensorProto (the blob of a graph_* summary). */
static int first_string(const uint8_t *t, size_t n, const uint8_t **out,
                        size_t *len)
{
    const uint8_t *end = t + n;
    pb_field f;
    while (pb_next(&t, end, &f) > 0)
        if (f.num == 8 && f.wt == PB_LEN) {
            *out = f.p;
            *len = f.len;
            return 1;
        }
    return 0;
}

/* The blob of run r under the first of plugins that has tag: *out
 * malloc'd. TFB_ENOENT when none has it. */
static int read_blob(tfb_run *r, const char *const *plugins, size_t np,
                     const char *tag, uint8_t **out, size_t *len)
{
    for (size_t k = 0; k < np; k++) {
        tfb_plugin_record *recs;
        size_t n;
        if (tfb_run_records(r, plugins[k], &recs, &n) < 0)
            return TFB_ENOMEM;
        int rc = TFB_ENOENT;
        for (size_t i = 0; i < n && rc == TFB_ENOENT; i++) {
            if (strcmp(recs[i].tag, tag) != 0)
                continue;
            if (tfb_event_blob_is_locator(&recs[i])) {
                rc = tfb_event_blob_read(&recs[i], out, len);
            } else {
                const uint8_t *b;
                size_t bl;
                if (!first_string(recs[i].tensor, recs[i].tensor_len, &b,
                                  &bl))
                    continue;
                *out = malloc(bl ? bl : 1);
                if (!*out) {
                    rc = TFB_ENOMEM;
                } else {
                    memcpy(*out, b, bl);
                    *len = bl;
                    rc = 0;
                }
            }
        }
        tfb_plugin_records_free(recs, n);
        if (rc != TFB_ENOENT)
            return rc;
    }
    return TFB_ENOENT;
}

/* The run graph: graph_def, else a meta_graph_def's graph_def. */
static int read_run_graph(tfb_run *r, uint8_t **out, size_t *len)
{
    static const char *const p[] = {P_GRAPH};
    int rc = read_blob(r, p, 1, TFB_RUN_GRAPH_TAG, out, len);
    if (rc == TFB_ENOENT)
        rc = read_blob(r, p, 1, TFB_META_GRAPH_TAG, out, len);
    return rc;
}

static int blob_error(tfb_http_resp *resp, int rc, const char *what)
{
    if (rc == TFB_ENOENT)
        return tfb_http_text(resp, 404, "text/plain; charset=utf-8",
                             "404 Not Found", 13);
    if (rc == TFB_ETOOBIG)
        return tfb_http_error(resp, 413,
                              "the %s is over %llu bytes "
                              "(TFB_EVENT_BLOB_MAX): not served",
                              what,
                              (unsigned long long)TFB_EVENT_BLOB_MAX);
    return tfb_http_error(resp, 500, "the %s cannot be read: %s", what,
                          tfb_strerror(rc));
}

/* ---- /info ---- */

typedef struct tag_row {
    const char *tag;
    int conceptual, op, profile;
} tag_row;

typedef TFB_VEC(tag_row) tag_rows;

static tag_row *row_for(tag_rows *rows, const char *tag)
{
    for (size_t i = 0; i < rows->n; i++)
        if (!strcmp(rows->v[i].tag, tag))
            return &rows->v[i];
    tag_row *g = tfb_vec_add(rows);
    if (!g)
        return NULL;
    g->tag = tag;
    return g;
}

static int content_is_1(const tfb_plugin_record *r)
{
    return r->content_len == 1 && r->content[0] == '1';
}

/* TensorBoard's info_impl for one run: 1 when the run has a row. */
static int info_run(tfb_json *j, tfb_run *r)
{
    static const char *const plugins[] = {
        P_RUN_METADATA_GRAPH, P_RUN_METADATA, P_KERAS_MODEL, P_GRAPH,
        P_TAGGED_RUN_METADATA};
    tfb_plugin_record *recs[5] = {0};
    size_t nrec[5] = {0};
    tag_rows rows = {0};
    int run_graph = 0, any = 0;
    for (int k = 0; k < 5; k++) {
        if (tfb_run_records(r, plugins[k], &recs[k], &nrec[k]) < 0)
            nrec[k] = 0;
        for (size_t i = 0; i < nrec[k]; i++) {
            tfb_plugin_record *rc = &recs[k][i];
            if (k == 3) {
                if (!strcmp(rc->tag, TFB_RUN_GRAPH_TAG) ||
                    !strcmp(rc->tag, TFB_META_GRAPH_TAG))
                    run_graph = any = 1;
                continue;
            }
            /* The summary ops write version "1" as their content; other
             * versions are skipped, as TensorBoard does. */
            if (k < 3 && !content_is_1(rc))
                continue;
            tag_row *t = row_for(&rows, rc->tag);
            if (!t)
                continue;
            any = 1;
            if (k == 0)
                t->op = 1;
            else if (k == 1)
                t->op = t->profile = 1;
            else if (k == 2)
                t->conceptual = 1;
            else
                t->profile = 1;
        }
    }
    if (any) {
        tfb_json_key(j, tfb_run_name(r));
        tfb_json_object_begin(j);
        tfb_json_key(j, "run");
        tfb_json_str(j, tfb_run_name(r));
        tfb_json_key(j, "tags");
        tfb_json_object_begin(j);
        for (size_t i = 0; i < rows.n; i++) {
            tfb_json_key(j, rows.v[i].tag);
            tfb_json_object_begin(j);
            tfb_json_key(j, "tag");
            tfb_json_str(j, rows.v[i].tag);
            tfb_json_key(j, "conceptual_graph");
            tfb_json_bool(j, rows.v[i].conceptual);
            tfb_json_key(j, "op_graph");
            tfb_json_bool(j, rows.v[i].op);
            tfb_json_key(j, "profile");
            tfb_json_bool(j, rows.v[i].profile);
            tfb_json_object_end(j);
        }
        tfb_json_object_end(j);
        tfb_json_key(j, "run_graph");
        tfb_json_bool(j, run_graph);
        tfb_json_object_end(j);
    }
    tfb_vec_free(&rows);
    for (int k = 0; k < 5; k++)
        tfb_plugin_records_free(recs[k], nrec[k]);
    return any;
}

static int route_info(const tfb_http_req *req, tfb_http_resp *resp)
{
    tfb_run **runs;
    size_t nr;
    if (tfb_store_runs(tfb_server_store(req), &runs, &nr) < 0)
        return tfb_http_error(resp, 500, "out of memory");
    tfb_json j;
    tfb_json_init(&j);
    tfb_json_object_begin(&j);
    for (size_t i = 0; i < nr; i++)
        info_run(&j, runs[i]);
    tfb_json_object_end(&j);
    free(runs);
    return tfb_http_json(resp, &j);
}

/* ---- /graph ---- */

/* The op graph of a run metadata summary: its function graphs'
 * pre-optimization graphs (FunctionGraphs field 2), as
 * merge_graph_defs joins them. */
static int op_graph_text(tfb_buf *out, const uint8_t *md, size_t n,
                         tfb_pbtxt_opts *o, const char **why)
{
    const uint8_t *p = md, *end = md + n;
    pb_field f;
    size_t count = 0;
    int r;
    while ((r = pb_next(&p, end, &f)) > 0)
        count += f.num == 4 && f.wt == PB_LEN;
    if (r < 0) {
        *why = "the run metadata is cut short or malformed";
        return TFB_ECORRUPT;
    }
    size_t k = 0;
    int rc = 0;
    for (int part = 1; part <= 2 && rc == 0; part++) {
        p = md;
        k = 0;
        while (rc == 0 && pb_next(&p, end, &f) > 0) {
            if (f.num != 4 || f.wt != PB_LEN)
                continue;
            const uint8_t *g = NULL, *q = f.p, *qe = f.p + f.len;
            size_t gl = 0;
            pb_field h;
            while (pb_next(&q, qe, &h) > 0)
                if (h.num == 2 && h.wt == PB_LEN) {
                    g = h.p;
                    gl = h.len;
                }
            k++;
            if (!g)
                g = (const uint8_t *)"";
            char prefix[32];
            snprintf(prefix, sizeof prefix, "graph_%zu", k);
            tfb_pbtxt_opts one = *o;
            if (count > 1) {
                one.name_prefix = prefix;
                one.part = part;
            } else if (part == 2) {
                break;
            }
            if (part == 2 && k > 1)
                break; /* the first graph's versions only */
            rc = tfb_pbtxt(out, TFB_PBTXT_GRAPH_DEF, g, gl, &one, why);
        }
        if (count <= 1)
            break;
    }
    return rc;
}

static int route_graph(const tfb_http_req *req, tfb_http_resp *resp)
{
    const char *run = tfb_http_query(req, "run");
    const char *tag = tfb_http_query(req, "tag");
    const char *conceptual = tfb_http_query(req, "conceptual");
    const char *limit = tfb_http_query(req, "limit_attr_size");
    const char *lkey = tfb_http_query(req, "large_attrs_key");
    if (!run)
        return tfb_http_text(resp, 400, "text/plain; charset=utf-8",
                             "query parameter \"run\" is required", 34);
    tfb_pbtxt_opts o = {0};
    o.max_out = TFB_GRAPH_MAX_TEXT;
    if (limit) {
        char *e;
        long long v = strtoll(limit, &e, 10);
        if (!*limit || *e)
            return tfb_http_text(
                resp, 400, "text/plain; charset=utf-8",
                "query parameter `limit_attr_size` must be an integer", 52);
        if (!lkey)
            return tfb_http_error(resp, 400,
                                  "large_attrs_key must be != None when "
                                  "limit_attr_size != None.");
        if (v <= 0)
            return tfb_http_error(resp, 400,
                                  "limit_attr_size must be > 0, but is %lld",
                                  v);
        o.limit_attr_size = (uint64_t)v;
        o.large_attrs_key = lkey;
    }
    tfb_run *r = tfb_store_find_run(tfb_server_store(req), run);
    if (!r)
        return blob_error(resp, TFB_ENOENT, "graph");
    uint8_t *blob = NULL;
    size_t len = 0;
    int rc;
    int is_op = 0;
    if (conceptual && !strcmp(conceptual, "true")) {
        static const char *const p[] = {P_KERAS_MODEL};
        rc = read_blob(r, p, 1, tag ? tag : "", &blob, &len);
        if (rc < 0)
            return blob_error(resp, rc, "Keras model");
        /* The model's layers as TensorBoard's keras_util draws them. */
        tfb_buf gd = {0};
        const char *kwhy = NULL;
        rc = tfb_keras_graph_def(&gd, (const char *)blob, len, &kwhy);
        free(blob);
        if (rc < 0) {
            tfb_buf_free(&gd);
            if (rc == TFB_ETOOBIG)
                return tfb_http_error(resp, 413,
                                      "the Keras model of run %s has over "
                                      "%d layers (TFB_GRAPH_MAX_NODES)",
                                      run, TFB_GRAPH_MAX_NODES);
            if (rc == TFB_ECORRUPT)
                return tfb_http_error(resp, 422,
                                      "the Keras model of run %s (tag %s) "
                                      "cannot be read: %s",
                                      run, tag ? tag : "",
                                      kwhy ? kwhy : "malformed");
            return tfb_http_error(resp, 500, "%s", tfb_strerror(rc));
        }
        /* an empty model gives no bytes: gd.v stays NULL */
        len = gd.n;
        blob = len ? (uint8_t *)tfb_buf_take(&gd) : calloc(1, 1);
        if (!blob)
            return tfb_http_error(resp, 500, "out of memory");
    } else if (!tag) {
        rc = read_run_graph(r, &blob, &len);
        if (rc < 0)
            return blob_error(resp, rc, "graph");
    } else {
        static const char *const p[] = {P_RUN_METADATA,
                                        P_RUN_METADATA_GRAPH};
        rc = read_blob(r, p, 2, tag, &blob, &len);
        if (rc < 0)
            return blob_error(resp, rc, "run metadata");
        is_op = 1;
    }
    tfb_buf out = {0};
    const char *why = NULL;
    if (is_op) {
        rc = op_graph_text(&out, blob, len, &o, &why);
    } else {
        tfb_graph_summary sum;
        rc = tfb_graph_check(blob, len, &sum, NULL);
        if (rc == 0 && sum.nodes > TFB_GRAPH_MAX_NODES)
            rc = TFB_ETOOBIG;
        if (rc == TFB_ETOOBIG) {
            free(blob);
            return tfb_http_error(
                resp, 413,
                "the graph of run %s has %llu nodes; tfboard serves at "
                "most %d (TFB_GRAPH_MAX_NODES)",
                run, (unsigned long long)sum.nodes, TFB_GRAPH_MAX_NODES);
        }
        if (rc == 0)
            rc = tfb_pbtxt(&out, TFB_PBTXT_GRAPH_DEF, blob, len, &o, &why);
    }
    free(blob);
    if (rc < 0) {
        tfb_buf_free(&out);
        if (rc == TFB_ECORRUPT)
            return tfb_http_error(resp, 422,
                                  "the graph of run %s is not a valid "
                                  "GraphDef: %s",
                                  run, why ? why : "malformed");
        if (rc == TFB_ETOOBIG)
            return tfb_http_error(resp, 413,
                                  "the graph of run %s is over %d bytes "
                                  "as text (TFB_GRAPH_MAX_TEXT)",
                                  run, TFB_GRAPH_MAX_TEXT);
        return tfb_http_error(resp, 500, "%s", tfb_strerror(rc));
    }
    size_t n = out.n;
    char *body = tfb_buf_take(&out);
    if (!body)
        return tfb_http_error(resp, 500, "out of memory");
    return tfb_http_body_take(resp, 200, PBTXT_TYPE, body, n);
}

/* ---- /run_metadata ---- */

static int route_run_metadata(const tfb_http_req *req, tfb_http_resp *resp)
{
    const char *run = tfb_http_query(req, "run");
    const char *tag = tfb_http_query(req, "tag");
    if (!tag)
        return tfb_http_text(resp, 400, "text/plain; charset=utf-8",
                             "query parameter \"tag\" is required", 34);
    if (!run)
        return tfb_http_text(resp, 400, "text/plain; charset=utf-8",
                             "query parameter \"run\" is required", 34);
    tfb_run *r = tfb_store_find_run(tfb_server_store(req), run);
    if (!r)
        return blob_error(resp, TFB_ENOENT, "run metadata");
    static const char *const p[] = {P_TAGGED_RUN_METADATA, P_RUN_METADATA};
    uint8_t *blob;
    size_t len;
    int rc = read_blob(r, p, 2, tag, &blob, &len);
    if (rc < 0)
        return blob_error(resp, rc, "run metadata");
    tfb_buf out = {0};
    tfb_pbtxt_opts o = {.max_out = TFB_GRAPH_MAX_TEXT};
    const char *why = NULL;
    rc = tfb_pbtxt(&out, TFB_PBTXT_RUN_METADATA, blob, len, &o, &why);
    free(blob);
    if (rc < 0) {
        tfb_buf_free(&out);
        return tfb_http_error(resp, rc == TFB_ECORRUPT ? 422 : 500,
                              "the run metadata %s of run %s cannot be "
                              "read: %s",
                              tag, run, why ? why : tfb_strerror(rc));
    }
    size_t n = out.n;
    char *body = tfb_buf_take(&out);
    if (!body)
        return tfb_http_error(resp, 500, "out of memory");
    return tfb_http_body_take(resp, 200, PBTXT_TYPE, body, n);
}

/* ---- /notes: what a page should know before drawing the run graph ---- */

static int route_notes(const tfb_http_req *req, tfb_http_resp *resp)
{
    tfb_run *r;
    if (tfb_http_param_run(req, resp, &r) < 0)
        return 0;
    uint8_t *blob;
    size_t len;
    int rc = read_run_graph(r, &blob, &len);
    if (rc < 0)
        return blob_error(resp, rc, "graph");
    tfb_graph_summary sum;
    tfb_json j;
    tfb_json_init(&j);
    rc = tfb_graph_check(blob, len, &sum, &j);
    free(blob);
    if (rc < 0 && rc != TFB_ETOOBIG) {
        tfb_json_free(&j);
        return tfb_http_error(resp, rc == TFB_ECORRUPT ? 422 : 500,
                              "the graph cannot be checked: %s",
                              tfb_strerror(rc));
    }
    return tfb_http_json(resp, &j);
}

static int has_graph(tfb_store *s, tfb_run *r)
{
    (void)s;
    static const char *const plugins[] = {
        P_GRAPH, P_RUN_METADATA_GRAPH, P_RUN_METADATA, P_KERAS_MODEL,
        P_TAGGED_RUN_METADATA};
    for (size_t k = 0; k < 5; k++) {
        tfb_plugin_record *recs;
        size_t n;
        if (tfb_run_records(r, plugins[k], &recs, &n) < 0)
            continue;
        tfb_plugin_records_free(recs, n);
        if (n)
            return 1;
    }
    return 0;
}

static const tfb_plugin_route routes[] = {
    {"info", route_info},
    {"graph", route_graph},
    {"run_metadata", route_run_metadata},
    {"notes", route_notes},
};

/* The Graphs tab: page.js and its helpers, embedded by the build
 * (meson.build's plugin_js). */
extern const tfb_asset tfb_graphs_assets[];

const tfb_plugin tfb_plugin_graphs = {
    TFB_PLUGIN_ABI,
    .name = "graphs",
    .title = "Graphs",
    .module = "js/pages/graphs.js",
    .assets = tfb_graphs_assets,
    .routes = routes,
    .n_routes = sizeof routes / sizeof routes[0],
    .has_data = has_graph,
};
