/*
 * report_text.h - `tfboard report --format text|markdown`.
 * Thread-safety: one thread per FILE.
 */
#ifndef TFB_SERVER_REPORT_TEXT_H
#define TFB_SERVER_REPORT_TEXT_H

#include <stdio.h>

#include "report/report_model.h"

/* Writes the whole report; markdown = 1 for Markdown, 0 for plain text.
 * Returns 0 or a plugin's error. */
int tfb_report_text(FILE *f, const tfb_report *rep, int markdown);

#endif
