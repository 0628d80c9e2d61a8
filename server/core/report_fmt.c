/*
 * report_fmt.c - the small printing helpers that every report section
 * shares (the plugins' sections and the report's own parts).
 *
 * Strings from event files (run names, tags) are made harmless for each
 * medium: control characters never reach the terminal, and Markdown
 * punctuation is escaped so a tag cannot inject links or break a table.
 */
#include "core/report_fmt.h"

#include <math.h>
#include <string.h>
#include <time.h>

static void put_safe(FILE *f, const char *s, int markdown)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p < 0x20 || *p == 0x7f) {
            fputc('?', f);
        } else if (markdown && strchr("\\`*_{}[]<>()#+-.!|~&", *p)) {
            fputc('\\', f);
            fputc(*p, f);
        } else {
            fputc(*p, f);
        }
    }
}

void tfb_report_put_str(FILE *f, const char *s, int markdown)
{
    put_safe(f, s ? s : "", markdown);
}

void tfb_report_put_wall(FILE *f, double w)
{
    if (isnan(w)) {
        fputs("unknown", f);
        return;
    }
    time_t t = (time_t)w;
    struct tm tm;
    char buf[64];
    gmtime_r(&t, &tm);
    strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S UTC", &tm);
    fputs(buf, f);
}

void tfb_report_put_duration(FILE *f, double s)
{
    if (isnan(s) || s < 0) {
        fputs("unknown", f);
        return;
    }
    if (s < 60) {
        fprintf(f, "%.3g s", s);
        return;
    }
    long t = (long)(s + 0.5);
    if (t >= 3600)
        fprintf(f, "%ldh %02ldm %02lds", t / 3600, t / 60 % 60, t % 60);
    else
        fprintf(f, "%ldm %02lds", t / 60, t % 60);
}

/* Engineering-style number with 4 significant digits; NaN/Inf by name. */
void tfb_report_put_num(FILE *f, double v)
{
    if (isnan(v))
        fputs("NaN", f);
    else if (isinf(v))
        fputs(v > 0 ? "Infinity" : "-Infinity", f);
    else
        fprintf(f, "%.4g", v);
}

void tfb_report_pad(FILE *f, size_t used, size_t width)
{
    for (size_t k = used; k < width; k++)
        fputc(' ', f);
}

/* Columns of s: UTF-8 continuation bytes take none. */
static size_t columns(const char *s, size_t n)
{
    size_t c = 0;
    for (size_t i = 0; i < n; i++)
        c += ((unsigned char)s[i] & 0xC0) != 0x80;
    return c;
}

void tfb_report_put_cell(FILE *f, const char *s, size_t width)
{
    if (!s)
        s = "";
    size_t n = strlen(s);
    if (columns(s, n) <= width) {
        put_safe(f, s, 0);
        tfb_report_pad(f, columns(s, n), width);
        return;
    }
    /* Keep width - 1 characters, then the ellipsis. */
    size_t keep = 0, cols = 0;
    while (keep < n) {
        size_t next = keep + 1;
        while (next < n && ((unsigned char)s[next] & 0xC0) == 0x80)
            next++;
        if (cols + 1 > width - 1)
            break;
        cols++;
        keep = next;
    }
    char buf[1024];
    if (keep >= sizeof buf)
        keep = sizeof buf - 1; /* a cell is never this wide */
    memcpy(buf, s, keep);
    buf[keep] = 0;
    put_safe(f, buf, 0);
    fputs("\xe2\x80\xa6", f); /* U+2026 */
    tfb_report_pad(f, cols + 1, width);
}
