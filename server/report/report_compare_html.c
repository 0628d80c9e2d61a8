/*
 * report_compare_html.c - `tfboard report --compare A B --format html`:
 * one self-contained page (the report's stylesheet, the comparison's JSON
 * in a data block, the page script of report_compare_page.c) under a
 * Content-Security-Policy that forbids every external load.
 */
#include <stdlib.h>

#include "report/report_compare.h"
#include "report/report_page.h"

static void put_pieces(FILE *f, const char *const *pieces)
{
    for (size_t i = 0; pieces[i]; i++)
        fputs(pieces[i], f);
}

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
    fputs("<!doctype html>\n<html lang=\"en\">\n<head>\n"
          "<meta charset=\"utf-8\">\n"
          "<meta http-equiv=\"Content-Security-Policy\" content=\""
          "default-src 'none'; script-src 'unsafe-inline'; "
          "style-src 'unsafe-inline'; img-src data:\">\n"
          "<meta name=\"viewport\" content=\"width=device-width, "
          "initial-scale=1\">\n"
          "<title>tfboard compare</title>\n<style>\n",
          f);
    put_pieces(f, tfb_report_page_css);
    put_pieces(f, tfb_report_compare_css);
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
    put_pieces(f, tfb_report_compare_js);
    fputs("</script>\n</body>\n</html>\n", f);
    return ferror(f) ? TFB_EIO : 0;
}
