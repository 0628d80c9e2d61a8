/*
 * route_text.c - /data/plugin/text/{tags,text}. The text is sent as a
 * JSON string; the page inserts it as text, never as HTML.
 */
#include <stdlib.h>

#include "routes_core.h"

/* TensorBoard's text plugin answers {run: [tag, ...]}. */
int tfb_route_text_tags(const tfb_http_req *req, tfb_http_resp *resp)
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

int tfb_route_text(const tfb_http_req *req, tfb_http_resp *resp)
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
