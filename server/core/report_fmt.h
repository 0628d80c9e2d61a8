/*
 * report_fmt.h - printing helpers for `tfboard report` sections (text,
 * Markdown and the html report's server-side strings), and the one number
 * format of every report (server/API.md "Numbers"; the page's twin is
 * webui/js/core/format.js, both checked against tests/format_cases.json).
 * Thread-safety: the tfb_fmt_* functions only write their buffer (any
 * thread); the put functions one thread per FILE.
 */
#ifndef TFB_SERVER_REPORT_FMT_H
#define TFB_SERVER_REPORT_FMT_H

#include <stddef.h>
#include <stdio.h>

/* ---- the one number format (server/API.md "Numbers") ---- */

/* Significant digits of every number: enough to tell two runs apart,
 * few enough for a table cell. */
#define TFB_FMT_DIGITS 4
/* Plain decimals from here ("0.000151": 8 characters, still read at a
 * glance) up to TFB_FMT_PLAIN_MAX; scientific outside ("1.5e-6",
 * "7.672e28"), with at least one decimal in the mantissa ("1.0e-6"). */
#define TFB_FMT_PLAIN_MIN 1e-4
/* ... and below this (a step count like 12345 stays a plain integer). */
#define TFB_FMT_PLAIN_MAX 1e5
/* A relative change whose ratio B / A reaches this is written as the
 * ratio ("×1.126e5"), not as "+11259885.9 %". */
#define TFB_FMT_RATIO_MIN 10.0
/* Below this a value reads "0" (denormals, float noise): no
 * "-1.0e-320". */
#define TFB_FMT_ZERO 1e-300
/* A buffer this big holds any tfb_fmt_* result (with a unit of up to 16
 * bytes). */
#define TFB_FMT_MAX 64

/* A number: TFB_FMT_DIGITS significant digits, trailing zeros dropped,
 * plain between TFB_FMT_PLAIN_MIN and TFB_FMT_PLAIN_MAX, else "1.5e-6";
 * "0" for zero and below TFB_FMT_ZERO (no sign), "NaN", "+Inf", "-Inf". Returns buf. */
char *tfb_fmt_num(char *buf, size_t cap, double v);
/* With an SI prefix and unit: "155.8 µs", "2.5 kW", "1.2 TFLOP/s". Time
 * ("s") takes no prefix above the second ("3600 s"). "0 s" for zero.
 * Returns buf. */
char *tfb_fmt_si(char *buf, size_t cap, double v, const char *unit);
/* Bytes with binary prefixes (the project's convention): "512 B",
 * "1.5 GiB". Returns buf. */
char *tfb_fmt_bytes(char *buf, size_t cap, double bytes);
/* A relative change (B - A) / |A|: "+12.3 %", "-4.0 %"; "×11.5" once
 * B / A reaches TFB_FMT_RATIO_MIN; "new" / "-new" when A was 0 (an
 * infinite change); "-" when unknown (NaN). Returns buf. */
char *tfb_fmt_change(char *buf, size_t cap, double change);
/* The input-pipeline verdict (pipeline_analysis.h's "highly", ...) in
 * words that read alone: "highly input-bound"; NULL gives "-". */
const char *tfb_fmt_verdict(const char *verdict);

/* A string from an event file, made safe: control characters become '?';
 * in Markdown, punctuation is backslash-escaped. NULL prints nothing. */
void tfb_report_put_str(FILE *f, const char *s, int markdown);
/* A number as tfb_fmt_num. */
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
/* Our own figure (never from a file) right-aligned in `width` columns,
 * counted as characters ("µ" is one), so tables stay aligned. */
void tfb_report_put_right(FILE *f, const char *s, size_t width);

#endif
