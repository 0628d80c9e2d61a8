/*
 * text.c - the text dashboard: /data/plugin/text/{tags,text}. The text is sent as a
 * JSON string; the page inserts it as text, never as HTML.
 */
#include <stdlib.h>

#include "core/plugin.h"
#include "core/routes_core.h"

/* TensorBoard's text plugin answers {run: [tag, ...]}. */
static int tfb_route_text_tags(const tfb_http_req *req, tfb_http_resp *resp)
{
    tfb_run **runs;
    size_t nr;
    if (tfb_store_runs(tfb_server_store(req), &runs, &nr) < 0)
        return tfb_http_error(resp, 500, "out of memory");
    tfb_json j;
    tfb_json_init(&j);
    tfb_json_object_begin(&j);
    for (size_t i = 0; i < nr; i++) {
        tfb_series **ser;
        size_t ns;
        if (tfb_run_series(runs[i], TFB_SERIES_TEXT, &ser, &ns) < 0)
            continue;
        if (ns) {
            tfb_json_key(&j, tfb_run_name(runs[i]));
            tfb_json_array_begin(&j);
            for (size_t k = 0; k < ns; k++)
                tfb_json_str(&j, tfb_series_tag(ser[k]));
            tfb_json_array_end(&j);
        }
        free(ser);
    }
    tfb_json_object_end(&j);
    free(runs);
    return tfb_http_json(resp, &j);
}

static int tfb_route_text(const tfb_http_req *req, tfb_http_resp *resp)
{
    tfb_series *s;
    if (tfb_http_param_series(req, resp, TFB_SERIES_TEXT, NULL, &s) < 0)
        return 0;
    tfb_series_view v;
    tfb_series_read_begin(s, &v);
    tfb_json j;
    tfb_json_init(&j);
    tfb_json_array_begin(&j);
    for (size_t i = 0; i < v.count; i++) {
        tfb_json_object_begin(&j);
        tfb_json_key(&j, "wall_time");
        tfb_json_double(&j, v.wall[i]);
        tfb_json_key(&j, "step");
        tfb_json_i64(&j, v.step[i]);
        tfb_json_key(&j, "text");
        tfb_json_strn(&j, v.text_data + v.text_off[i], v.text_len[i]);
        tfb_json_object_end(&j);
    }
    tfb_json_array_end(&j);
    tfb_series_read_end(s);
    return tfb_http_json(resp, &j);
}

static int has_text(tfb_store *s, tfb_run *r)
{
    return tfb_run_has_kind(s, r, TFB_SERIES_TEXT);
}

static const tfb_plugin_route routes[] = {
    {"tags", tfb_route_text_tags},
    {"text", tfb_route_text},
};

const tfb_plugin tfb_plugin_text = {
    .name = "text",
    .title = "Text",
    .module = "js/pages/text.js",
    .routes = routes,
    .n_routes = sizeof routes / sizeof routes[0],
    .has_data = has_text,
};
