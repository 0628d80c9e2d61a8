/*
 * custom_scalars.c - TensorBoard's custom_scalars layout
 * (/data/plugin/custom_scalars/layout), from the runs' layout records
 * (tag custom_scalars__config__, a serialized tensorboard.Layout in a
 * string tensor). No tab of its own: the Scalars page opens the layout as
 * multi-tag charts when the logdir has no shared layout of its own.
 */
#include <stdlib.h>
#include <string.h>

#include "base/vec.h"
#include "collector/pb.h"
#include "core/plugin.h"

/* string_val[0] of a TensorProto, or 0 bytes. */
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

/* The strings of field num of a message, as a JSON array. */
static void strings(tfb_json *j, const uint8_t *p, size_t n, unsigned num)
{
    const uint8_t *end = p + n;
    pb_field f;
    tfb_json_array_begin(j);
    while (pb_next(&p, end, &f) > 0)
        if (f.num == num && f.wt == PB_LEN)
            tfb_json_strn(j, (const char *)f.p, f.len);
    tfb_json_array_end(j);
}

static void chart(tfb_json *j, const uint8_t *p, size_t n)
{
    const uint8_t *end = p + n;
    pb_field f;
    tfb_json_object_begin(j);
    while (pb_next(&p, end, &f) > 0) {
        if (f.wt != PB_LEN)
            continue;
        if (f.num == 1) {
            tfb_json_key(j, "title");
            tfb_json_strn(j, (const char *)f.p, f.len);
        } else if (f.num == 2) { /* MultilineChartContent{repeated tag} */
            tfb_json_key(j, "multiline");
            tfb_json_object_begin(j);
            tfb_json_key(j, "tag");
            strings(j, f.p, f.len, 1);
            tfb_json_object_end(j);
        } else if (f.num == 3) { /* MarginChartContent{repeated series} */
            tfb_json_key(j, "margin");
            tfb_json_object_begin(j);
            tfb_json_key(j, "series");
            tfb_json_array_begin(j);
            const uint8_t *q = f.p, *qe = f.p + f.len;
            pb_field g;
            while (pb_next(&q, qe, &g) > 0) {
                if (g.num != 1 || g.wt != PB_LEN)
                    continue;
                static const char *const names[] = {"value", "lower",
                                                    "upper"};
                tfb_json_object_begin(j);
                const uint8_t *s = g.p, *se = g.p + g.len;
                pb_field h;
                while (pb_next(&s, se, &h) > 0)
                    if (h.num >= 1 && h.num <= 3 && h.wt == PB_LEN) {
                        tfb_json_key(j, names[h.num - 1]);
                        tfb_json_strn(j, (const char *)h.p, h.len);
                    }
                tfb_json_object_end(j);
            }
            tfb_json_array_end(j);
            tfb_json_object_end(j);
        }
    }
    tfb_json_object_end(j);
}

static void category(tfb_json *j, const uint8_t *p, size_t n)
{
    const uint8_t *end = p + n, *q = p;
    pb_field f;
    int closed = 0;
    tfb_json_object_begin(j);
    while (pb_next(&q, end, &f) > 0) {
        if (f.num == 1 && f.wt == PB_LEN) {
            tfb_json_key(j, "title");
            tfb_json_strn(j, (const char *)f.p, f.len);
        } else if (f.num == 3 && f.wt == PB_VARINT) {
            closed = f.u != 0;
        }
    }
    tfb_json_key(j, "chart");
    tfb_json_array_begin(j);
    q = p;
    while (pb_next(&q, end, &f) > 0)
        if (f.num == 2 && f.wt == PB_LEN)
            chart(j, f.p, f.len);
    tfb_json_array_end(j);
    tfb_json_key(j, "closed");
    tfb_json_bool(j, closed);
    tfb_json_object_end(j);
}

/* TensorBoard's merged layout: {"version", "category": [...]}, the
 * categories of every run's layout in run order (TensorBoard merges
 * equal titles; tfboard lists each category once per title, first one
 * kept). {} when no run has a layout. Strings are JSON-escaped. */
static int route_layout(const tfb_http_req *req, tfb_http_resp *resp)
{
    tfb_run **runs;
    size_t nr;
    if (tfb_store_runs(tfb_server_store(req), &runs, &nr) < 0)
        return tfb_http_error(resp, 500, "out of memory");
    tfb_json j;
    tfb_json_init(&j);
    tfb_json_object_begin(&j);
    int any = 0;
    TFB_VEC(char *) seen = {0};
    for (size_t i = 0; i < nr; i++) {
        tfb_plugin_record *recs;
        size_t n;
        if (tfb_run_records(runs[i], "custom_scalars", &recs, &n) < 0)
            continue;
        for (size_t k = 0; k < n; k++) {
            const uint8_t *lp;
            size_t ll;
            if (!first_string(recs[k].tensor, recs[k].tensor_len, &lp, &ll))
                continue;
            if (!any) {
                any = 1;
                tfb_json_key(&j, "version");
                tfb_json_i64(&j, 0);
                tfb_json_key(&j, "category");
                tfb_json_array_begin(&j);
            }
            const uint8_t *p = lp, *end = lp + ll;
            pb_field f;
            while (pb_next(&p, end, &f) > 0) {
                if (f.num != 2 || f.wt != PB_LEN)
                    continue;
                /* The category's title, to list each once. */
                const uint8_t *q = f.p, *qe = f.p + f.len;
                pb_field g;
                char *title = NULL;
                while (pb_next(&q, qe, &g) > 0)
                    if (g.num == 1 && g.wt == PB_LEN) {
                        title = strndup((const char *)g.p, g.len);
                        break;
                    }
                if (!title)
                    title = strdup("");
                int dup = 0;
                for (size_t s = 0; s < seen.n && title; s++)
                    dup |= strcmp(seen.v[s], title) == 0;
                if (title && !dup && tfb_vec_push(&seen, title) == 0) {
                    category(&j, f.p, f.len);
                } else {
                    free(title);
                }
            }
        }
        tfb_plugin_records_free(recs, n);
    }
    if (any)
        tfb_json_array_end(&j);
    tfb_json_object_end(&j);
    for (size_t s = 0; s < seen.n; s++)
        free(seen.v[s]);
    tfb_vec_free(&seen);
    free(runs);
    return tfb_http_json(resp, &j);
}

static int has_layout(tfb_store *s, tfb_run *r)
{
    (void)s;
    tfb_plugin_record *recs;
    size_t n;
    if (tfb_run_records(r, "custom_scalars", &recs, &n) < 0)
        return 0;
    tfb_plugin_records_free(recs, n);
    return n > 0;
}

static const tfb_plugin_route routes[] = {
    {"layout", route_layout},
};

const tfb_plugin tfb_plugin_custom_scalars = {
    TFB_PLUGIN_ABI,
    .name = "custom_scalars",
    .title = "Custom Scalars",
    .module = NULL, /* opened on the Scalars page */
    .routes = routes,
    .n_routes = sizeof routes / sizeof routes[0],
    .has_data = has_layout,
};
