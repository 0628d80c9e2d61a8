/*
 * report_fmt.h - printing helpers for `tfboard report` sections (text and
 * Markdown). Thread-safety: one thread per FILE.
 */
#ifndef TFB_SERVER_REPORT_FMT_H
#define TFB_SERVER_REPORT_FMT_H

#include <stdio.h>

/* A string from an event file, made safe: control characters become '?';
 * in Markdown, punctuation is backslash-escaped. NULL prints nothing. */
void tfb_report_put_str(FILE *f, const char *s, int markdown);
/* A number with 4 significant digits; NaN/Infinity/-Infinity by name. */
void tfb_report_put_num(FILE *f, double v);
/* A wall time (s since the Unix epoch) as "2026-11-30 05:31:57 UTC". */
void tfb_report_put_wall(FILE *f, double wall);
/* A duration in seconds as "12.3 s", "4m 05s" or "1h 02m 03s". */
void tfb_report_put_duration(FILE *f, double seconds);
/* Pads with spaces from column `used` to `width`. */
void tfb_report_pad(FILE *f, size_t used, size_t width);
/* A plain-text table cell of exactly `width` columns (width >= 2): s made
 * safe as tfb_report_put_str, cut with "…" when longer (at a character
 * boundary; a UTF-8 character counts as one column), else padded. */
void tfb_report_put_cell(FILE *f, const char *s, size_t width);

#endif
