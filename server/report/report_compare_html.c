/*
 * report_compare_html.c - `tfboard report --compare A B --format html`:
 * one self-contained page (the report's stylesheet, the comparison's JSON
 * in a data block, the compare script; all embedded, see report_page.h)
 * under a Content-Security-Policy that forbids every external load.
 */
#include <stdlib.h>

#include "report/report_compare.h"
#include "report/report_page.h"

int tfb_compare_html(FILE *f, const tfb_compare *c)
{
    /* JSON text with <, > and & escaped by the builder, so it cannot end
     * the <script type="application/json"> element. */
    tfb_json j;
    tfb_json_init(&j);
    tfb_compare_json(&j, c);
    size_t len;
    char *data = tfb_json_take(&j, &len);
    if (!data)
        return TFB_ENOMEM;
    tfb_report_page_head(f, "compare");
    fputs("<style>\n", f);
    int err = tfb_report_page_put(f, TFB_REPORT_PAGE_CSS, 1);
    if (!err)
        err = tfb_report_page_put(f, TFB_REPORT_COMPARE_CSS, 1);
    fputs("</style>\n</head>\n<body>\n<header><h1>tfboard compare</h1>"
          "<p id=\"meta\" class=\"muted\"></p></header>\n"
          "<main id=\"runs\"><noscript>This page draws itself with "
          "JavaScript; the same facts are in `tfboard report --compare A B "
          "--format text`.</noscript></main>\n"
          "<script type=\"application/json\" id=\"tfb-data\">",
          f);
    fwrite(data, 1, len, f);
    free(data);
    fputs("</script>\n<script>\n", f);
    if (!err)
        err = tfb_report_page_put(f, TFB_REPORT_HELPERS_JS, 0);
    if (!err)
        err = tfb_report_page_put(f, TFB_REPORT_COMPARE_JS, 0);
    fputs("</script>\n</body>\n</html>\n", f);
    if (err)
        return err;
    return ferror(f) ? TFB_EIO : 0;
}
