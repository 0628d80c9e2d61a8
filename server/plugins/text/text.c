/*
 * text.c - the text dashboard: /data/plugin/text/{tags,text}. The text is
 * sent as a JSON string, with its Markdown rendered to safe HTML
 * (markdown.h) beside it; the page rebuilds that HTML's allowed elements
 * with DOM calls, never inserting it as HTML.
 */
#include <stdlib.h>
#include <string.h>

#include "plugins/text/markdown.h"
#include "core/plugin.h"
#include "core/routes_core.h"

/* TensorBoard's text plugin answers {run: [tag, ...]}. */
static int tfb_route_text_tags(const tfb_http_req *req, tfb_http_resp *resp)
{
    return tfb_route_tags_of_kind(req, resp, TFB_SERIES_TEXT, 1);
}

static int tfb_route_text(const tfb_http_req *req, tfb_http_resp *resp)
{
    tfb_series *s;
    if (tfb_http_param_series(req, resp, TFB_SERIES_TEXT, NULL, &s) < 0)
        return 0;
    /* The texts are copied out and the pin released before the Markdown
     * is rendered: a pin is held for a copy, not for cmark. Texts are
     * appended, so they lie in order in one region of text_data. */
    tfb_series_view v;
    tfb_series_read_begin(s, &v);
    size_t n = v.count;
    uint64_t base = n ? v.text_off[0] : 0;
    uint64_t end = n ? v.text_off[n - 1] + v.text_len[n - 1] : 0;
    int64_t *steps = malloc((n ? n : 1) * sizeof *steps);
    double *walls = malloc((n ? n : 1) * sizeof *walls);
    uint64_t *offs = malloc((n ? n : 1) * sizeof *offs);
    uint32_t *lens = malloc((n ? n : 1) * sizeof *lens);
    char *data = malloc(end - base + 1);
    int ok = steps && walls && offs && lens && data;
    if (ok) {
        memcpy(steps, v.step, n * sizeof *steps);
        memcpy(walls, v.wall, n * sizeof *walls);
        for (size_t i = 0; i < n; i++)
            offs[i] = v.text_off[i] - base;
        memcpy(lens, v.text_len, n * sizeof *lens);
        memcpy(data, v.text_data + base, end - base);
    }
    tfb_series_read_end(s);
    if (!ok) {
        free(steps);
        free(walls);
        free(offs);
        free(lens);
        free(data);
        return tfb_http_error(resp, 500, "out of memory");
    }
    tfb_json j;
    tfb_json_init(&j);
    tfb_json_array_begin(&j);
    for (size_t i = 0; i < n; i++) {
        tfb_json_object_begin(&j);
        tfb_json_key(&j, "wall_time");
        tfb_json_double(&j, walls[i]);
        tfb_json_key(&j, "step");
        tfb_json_i64(&j, steps[i]);
        tfb_json_key(&j, "text");
        tfb_json_strn(&j, data + offs[i], lens[i]);
        /* TensorBoard's rendering of the same text (null when memory ran
         * out: the page shows the plain text then). */
        size_t hl;
        char *html = tfb_markdown_html(data + offs[i], lens[i], &hl);
        tfb_json_key(&j, "html");
        if (html)
            tfb_json_strn(&j, html, hl);
        else
            tfb_json_null(&j);
        free(html);
        tfb_json_object_end(&j);
    }
    tfb_json_array_end(&j);
    free(steps);
    free(walls);
    free(offs);
    free(lens);
    free(data);
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

/* Its web files (page.js first), embedded from this folder by the
 * build (server/plugins/meson.build). */
extern const tfb_asset tfb_text_assets[];

const tfb_plugin tfb_plugin_text = {
    TFB_PLUGIN_ABI,
    .name = "text",
    .title = "Text",
    .module = "js/pages/text.js",
    .assets = tfb_text_assets,
    .routes = routes,
    .n_routes = sizeof routes / sizeof routes[0],
    .has_data = has_text,
};
