/*
 * report_html.h - `tfboard report --format html`: one self-contained page
 * (styles, data and Chart.js inlined; a Content-Security-Policy that
 * forbids loading anything else) that can be attached to a bug report.
 *
 * Thread-safety: one thread per FILE.
 */
#ifndef TFB_SERVER_REPORT_HTML_H
#define TFB_SERVER_REPORT_HTML_H

#include <stdio.h>

#include "report/report_model.h"

/* Most points drawn per scalar chart, and most scalar charts per run. */
#define TFB_REPORT_HTML_POINTS 600
#define TFB_REPORT_HTML_CHARTS 24

/* Writes the page. Returns 0 or TFB_ENOMEM. */
int tfb_report_html(FILE *f, const tfb_report *rep);

#endif
