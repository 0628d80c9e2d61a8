/*
 * report_page.h - the shared frame of the self-contained html pages that
 * `tfboard report --format html` and `report --compare --format html`
 * write: the head (under a Content-Security-Policy that forbids every
 * external load, so a page works offline and attached to a bug) and the
 * stylesheets and scripts, which are real files (webui/report/) embedded
 * into the binary at build time with the web UI (webui/meson.build) and
 * inlined from there. The scripts build the page from the JSON data block
 * with textContent only: nothing from an event file is parsed as HTML.
 * Stateless; thread-safe when each caller writes its own FILE.
 */
#ifndef TFB_SERVER_REPORT_PAGE_H
#define TFB_SERVER_REPORT_PAGE_H

#include <stdio.h>

/* Embedded asset paths (webui/meson.build). TFB_REPORT_HELPERS_JS goes
 * first in the <script> element of either page's script. */
#define TFB_REPORT_HELPERS_JS "/report/page.js"
#define TFB_REPORT_PAGE_CSS "/report/report.css"
#define TFB_REPORT_PAGE_JS "/report/report.js"
#define TFB_REPORT_COMPARE_CSS "/report/compare.css"
#define TFB_REPORT_COMPARE_JS "/report/compare.js"
#define TFB_REPORT_CHART_JS "/vendor/chart.umd.min.js"

/* Writes "<!doctype html>" up to and including "<title>tfboard TITLE
 * </title>\n" (title: plain ASCII of ours, written as is). */
void tfb_report_page_head(FILE *f, const char *title);

/* Writes the embedded asset at path, as it is (css = 1) or as script
 * text that cannot close its <script> element early ("</" written as
 * "<\/", the same string to JavaScript). Returns 0, or TFB_ENOENT when
 * the build holds no such asset. */
int tfb_report_page_put(FILE *f, const char *path, int css);

#endif
