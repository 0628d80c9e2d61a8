/*
 * report_html.c - writes the html report: the page frame, the report's
 * JSON with the chart series in a data block, Chart.js and the page script
 * inlined (report_page.c), under a Content-Security-Policy that forbids
 * every external load, so the file works offline and attached to a bug.
 */
#include "report/report_html.h"

#include <stdlib.h>
#include <string.h>

#include "plugins/pipeline/pipeline_analysis.h"
#include "report/report_page.h"

#ifdef TFB_HAVE_EMBEDDED_ASSETS
#include "webui/assets.h"
#endif

#define CHART_JS_PATH "/vendor/chart.umd.min.js"
#define MAX_PIPELINE_BARS 1000

/* Writes script text so that nothing in it can close the <script>
 * element early: "</" becomes "<\/" (the same string to JavaScript in
 * strings and regular expressions, where such text can appear). */
static void put_script(FILE *f, const char *s, size_t len)
{
    size_t start = 0;
    for (size_t i = 0; i + 1 < len; i++) {
        if (s[i] == '<' && s[i + 1] == '/') {
            fwrite(s + start, 1, i + 1 - start, f);
            fputc('\\', f);
            start = i + 1;
        }
    }
    fwrite(s + start, 1, len - start, f);
}

static void put_pieces(FILE *f, const char *const *pieces)
{
    for (size_t i = 0; pieces[i]; i++)
        fputs(pieces[i], f);
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
    tfb_json_array_begin(j);
    for (size_t i = 0; i < n; i += stride) {
        tfb_json_array_begin(j);
        tfb_json_i64(j, steps[i].step);
        tfb_json_double(j, steps[i].step_ms);
        tfb_json_double(j, steps[i].input_ms);
        tfb_json_array_end(j);
    }
    tfb_json_array_end(j);
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
    tfb_json_object_end(j);
    return 0;
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

    fputs("<!doctype html>\n<html lang=\"en\">\n<head>\n"
          "<meta charset=\"utf-8\">\n"
          "<meta http-equiv=\"Content-Security-Policy\" content=\""
          "default-src 'none'; script-src 'unsafe-inline'; "
          "style-src 'unsafe-inline'; img-src data:\">\n"
          "<meta name=\"viewport\" content=\"width=device-width, "
          "initial-scale=1\">\n"
          "<title>tfboard report</title>\n<style>\n",
          f);
    put_pieces(f, tfb_report_page_css);
    fputs("</style>\n", f);
#ifdef TFB_HAVE_EMBEDDED_ASSETS
    const tfb_asset *chart = tfb_asset_find(CHART_JS_PATH);
    if (chart) {
        fputs("<script>\n", f);
        put_script(f, (const char *)chart->data, chart->len);
        fputs("\n</script>\n", f);
    }
#endif
    fputs("</head>\n<body>\n<header><h1>tfboard report</h1>"
          "<p id=\"meta\" class=\"muted\"></p></header>\n"
          "<main id=\"runs\"><noscript>This report draws itself with "
          "JavaScript; the same facts are in `tfboard report --format "
          "text`.</noscript></main>\n"
          "<script type=\"application/json\" id=\"tfb-data\">",
          f);
    fwrite(data, 1, len, f);
    free(data);
    fputs("</script>\n<script>\n", f);
    put_pieces(f, tfb_report_page_js);
    fputs("</script>\n</body>\n</html>\n", f);
    return ferror(f) ? TFB_EIO : 0;
}
