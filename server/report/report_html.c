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

#include "plugins/pipeline/pipeline_analysis.h"
#include "report/report_page.h"

#define MAX_PIPELINE_BARS 1000

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
