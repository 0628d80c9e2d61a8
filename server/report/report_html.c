/*
 * report_html.c - writes the html report: the page frame, the report's
 * JSON with the chart series in a data block, Chart.js and the page's
 * stylesheet and script inlined from the embedded assets (report_page.h),
 * under a Content-Security-Policy that forbids
 * every external load, so the file works offline and attached to a bug.
 */
#include "report/report_html.h"

#include <stdlib.h>
#include <string.h>

#include "store/media_index.h"
#include "analysis/pipeline_analysis.h"
#include "report/report_page.h"

#define MAX_PIPELINE_BARS 1000
/* Images embedded in the report (base64 data: URLs, the only images the
 * page's Content-Security-Policy allows): the last of each tag, each at
 * most this large, at most TFB_REPORT_HTML_IMAGES per run. */
#define MAX_REPORT_IMAGE_BYTES (4u << 20)
#define TFB_REPORT_HTML_IMAGES 64

static void put_base64(tfb_json *j, const uint8_t *p, size_t n)
{
    static const char tab[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    char out[4 * 256];
    size_t o = 0;
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16;
        if (i + 1 < n)
            v |= (uint32_t)p[i + 1] << 8;
        if (i + 2 < n)
            v |= p[i + 2];
        out[o++] = tab[v >> 18 & 63];
        out[o++] = tab[v >> 12 & 63];
        out[o++] = i + 1 < n ? tab[v >> 6 & 63] : '=';
        out[o++] = i + 2 < n ? tab[v & 63] : '=';
        if (o == sizeof out) {
            tfb_json_append(j, out, o);
            o = 0;
        }
    }
    tfb_json_append(j, out, o);
}

/* "images": [{"tag", "step", "src"} | {"tag", "step", "error"}]: the last
 * image of each image tag, read from its event file. */
static int image_data(tfb_json *j, tfb_run *run)
{
    tfb_media_index *ix = tfb_run_media(run);
    tfb_media_tag_info *t;
    size_t nt;
    int rc = tfb_media_tags(ix, TFB_MEDIA_IMAGE, &t, &nt);
    if (rc < 0)
        return rc;
    tfb_json_key(j, "images");
    tfb_json_array_begin(j);
    for (size_t i = 0, shown = 0; i < nt && shown < TFB_REPORT_HTML_IMAGES;
         i++) {
        if (!t[i].count)
            continue;
        shown++;
        tfb_json_object_begin(j);
        tfb_json_key(j, "tag");
        tfb_json_str(j, t[i].tag);
        tfb_json_key(j, "step");
        tfb_json_i64(j, t[i].last.step);
        uint8_t *bytes = NULL;
        size_t len = 0;
        char why[256] = "";
        const char *type = NULL;
        if (t[i].last.len > MAX_REPORT_IMAGE_BYTES)
            snprintf(why, sizeof why, "image of %u bytes left out (over %u)",
                     t[i].last.len, MAX_REPORT_IMAGE_BYTES);
        else if ((rc = tfb_media_read(ix, &t[i].last, &bytes, &len)) < 0)
            snprintf(why, sizeof why, "cannot be read back: %s",
                     tfb_strerror(rc));
        else
            type = tfb_media_check(bytes, len, why, sizeof why);
        if (type) {
            /* The data: URL as a JSON string: no character of base64 or
             * of the type needs escaping. */
            char head[64];
            int hl = snprintf(head, sizeof head, "\"data:%s;base64,", type);
            tfb_json_key(j, "src");
            /* One value: its start as raw JSON (the builder's separators
             * count it), the rest appended to it. */
            tfb_json_raw(j, head, (size_t)hl);
            put_base64(j, bytes, len);
            tfb_json_append(j, "\"", 1);
        } else {
            tfb_json_key(j, "error");
            tfb_json_str(j, why);
        }
        free(bytes);
        tfb_json_object_end(j);
    }
    tfb_json_array_end(j);
    tfb_media_tag_infos_free(t, nt);
    return 0;
}

/* The chart data of one run: the pipeline steps (thinned evenly to at
 * most MAX_PIPELINE_BARS bars) and the first scalar series. */
static int chart_data(tfb_json *j, const tfb_report_run *rr)
{
    tfb_json_object_begin(j);
    tfb_json_key(j, "pipeline");
    tfb_pipeline_step *steps = NULL;
    size_t n = 0;
    int rc = tfb_pipeline_collect(rr->run, &steps, &n);
    if (rc < 0)
        return rc;
    size_t stride = n > MAX_PIPELINE_BARS
                        ? (n + MAX_PIPELINE_BARS - 1) / MAX_PIPELINE_BARS
                        : 1;
    size_t kept = 0; /* thinned in place: the route's shape, fewer rows */
    for (size_t i = 0; i < n; i += stride)
        steps[kept++] = steps[i];
    tfb_pipeline_steps_json(j, steps, kept);
    free(steps);

    tfb_json_key(j, "scalars");
    tfb_json_array_begin(j);
    for (size_t i = 0; i < rr->n_scalars && i < TFB_REPORT_HTML_CHARTS; i++) {
        tfb_json_object_begin(j);
        tfb_json_key(j, "tag");
        tfb_json_str(j, rr->scalars[i].tag);
        tfb_json_key(j, "points");
        tfb_report_series_json(j, rr->run, rr->scalars[i].tag,
                               TFB_REPORT_HTML_POINTS);
        tfb_json_object_end(j);
    }
    tfb_json_array_end(j);
    rc = image_data(j, rr->run);
    tfb_json_object_end(j);
    return rc;
}

int tfb_report_html(FILE *f, const tfb_report *rep)
{
    /* The data block: JSON text with <, > and & escaped by the builder,
     * so it cannot end the <script type="application/json"> element. */
    tfb_json j;
    tfb_json_init(&j);
    tfb_json_object_begin(&j);
    tfb_json_key(&j, "report");
    int err = tfb_report_json(&j, rep);
    if (err < 0) {
        tfb_json_free(&j);
        return err;
    }
    tfb_json_key(&j, "charts");
    tfb_json_array_begin(&j);
    for (size_t i = 0; i < rep->n_runs; i++) {
        int rc = chart_data(&j, &rep->runs[i]);
        if (rc < 0) {
            tfb_json_free(&j);
            return rc;
        }
    }
    tfb_json_array_end(&j);
    tfb_json_object_end(&j);
    size_t len;
    char *data = tfb_json_take(&j, &len);
    if (!data)
        return TFB_ENOMEM;

    tfb_report_page_head(f, "report");
    fputs("<style>\n", f);
    err = tfb_report_page_put(f, TFB_REPORT_PAGE_CSS, 1);
    fputs("</style>\n<script>\n", f);
    /* Without Chart.js the page still renders, without its charts. */
    tfb_report_page_put(f, TFB_REPORT_CHART_JS, 0);
    fputs("\n</script>\n</head>\n<body>\n<header><h1>tfboard report</h1>"
          "<p id=\"meta\" class=\"muted\"></p></header>\n"
          "<main id=\"runs\"><noscript>This report draws itself with "
          "JavaScript; the same facts are in `tfboard report --format "
          "text`.</noscript></main>\n"
          "<script type=\"application/json\" id=\"tfb-data\">",
          f);
    fwrite(data, 1, len, f);
    free(data);
    fputs("</script>\n<script>\n", f);
    if (!err)
        err = tfb_report_page_put(f, TFB_REPORT_HELPERS_JS, 0);
    if (!err)
        err = tfb_report_page_put(f, TFB_REPORT_PAGE_JS, 0);
    fputs("</script>\n</body>\n</html>\n", f);
    if (err)
        return err;
    return ferror(f) ? TFB_EIO : 0;
}
