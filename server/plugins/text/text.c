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

/* Markdown rendered for one answer, newest entries first: each text is
 * bounded (TFB_MARKDOWN_MAX_BYTES), but a tag logged at every step has
 * thousands of them, all rendered on every visit. 256 KiB is hundreds of
 * notes of ordinary size (the page shows the newest ten first) and bounds
 * an answer's cmark time to about 1 s (4 texts of the worst kind, 0.25 s
 * each). Older entries past it come as plain text, saying so (API.md). */
#define TEXT_MARKDOWN_BUDGET (256 * 1024)

/* Why an entry's html is null: its not_rendered member. */
static const char *const WHY_TOO_LONG =
    "longer than 64 KiB: Markdown is rendered up to 65536 bytes, so this "
    "text is shown as plain text";
static const char *const WHY_BUDGET =
    "this answer renders 256 KiB of Markdown, newest entries first; older "
    "entries are shown as plain text";
static const char *const WHY_MEMORY = "out of memory while rendering";

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
    char **html = calloc(n ? n : 1, sizeof *html);
    size_t *hlen = calloc(n ? n : 1, sizeof *hlen);
    const char **why = calloc(n ? n : 1, sizeof *why);
    int ok = steps && walls && offs && lens && data && html && hlen && why;
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
        free(html);
        free(hlen);
        free(why);
        free(steps);
        free(walls);
        free(offs);
        free(lens);
        free(data);
        return tfb_http_error(resp, 500, "out of memory");
    }
    /* Rendered newest first (the page shows those first), within the
     * answer's budget; NULL html with the reason otherwise. */
    size_t spent = 0;
    for (size_t i = n; i-- > 0;) {
        if (lens[i] > TFB_MARKDOWN_MAX_BYTES) {
            why[i] = WHY_TOO_LONG;
            continue;
        }
        if (lens[i] > TEXT_MARKDOWN_BUDGET - spent) {
            why[i] = WHY_BUDGET;
            continue;
        }
        spent += lens[i];
        html[i] = tfb_markdown_html(data + offs[i], lens[i], &hlen[i]);
        if (!html[i])
            why[i] = WHY_MEMORY;
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
        /* TensorBoard's rendering of the same text; null, with the
         * reason, when not rendered (the page shows the plain text). */
        tfb_json_key(&j, "html");
        if (html[i]) {
            tfb_json_strn(&j, html[i], hlen[i]);
        } else {
            tfb_json_null(&j);
            tfb_json_key(&j, "not_rendered");
            tfb_json_str(&j, why[i]);
        }
        free(html[i]);
        tfb_json_object_end(&j);
    }
    tfb_json_array_end(&j);
    free(html);
    free(hlen);
    free(why);
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
