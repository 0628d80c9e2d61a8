/*
 * report_fmt.c - the small printing helpers that every report section
 * shares (the plugins' sections and the report's own parts), and the one
 * number format of the text, Markdown and html reports (report_fmt.h;
 * the page's twin is webui/js/core/format.js: both follow the cases of
 * tests/format_cases.json, so change them together).
 *
 * Strings from event files (run names, tags) are made harmless for each
 * medium: control characters never reach the terminal, and Markdown
 * punctuation is escaped so a tag cannot inject links or break a table.
 */
#include "core/report_fmt.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- numbers ---------------------------------------------------------- */

/* Drops trailing zeros of a decimal fraction ("2.500" -> "2.5", "3.0" ->
 * "3"); keep_one leaves one decimal ("1.000" -> "1.0", for a mantissa). */
static void trim_zeros(char *s, int keep_one)
{
    char *dot = strchr(s, '.');
    if (!dot)
        return;
    char *end = s + strlen(s);
    while (end > dot + 1 && end[-1] == '0')
        end--;
    if (end == dot + 1 && !keep_one)
        end = dot;
    else if (end == dot + 1)
        end++; /* "1." -> "1.0": the zero is still there */
    *end = 0;
}

/* |v| (finite, not 0) by the rule; the caller writes the sign. The
 * exponent comes from the value rounded to TFB_FMT_DIGITS digits, so
 * 99996 and 0.000099996 fall on the side their rounded digits do. */
static void fmt_abs(char *buf, size_t cap, double a)
{
    char e[40];
    snprintf(e, sizeof e, "%.*e", TFB_FMT_DIGITS - 1, a);
    double r = strtod(e, NULL);
    char *x = strchr(e, 'e');
    int ex = x ? atoi(x + 1) : 0;
    if (r >= TFB_FMT_PLAIN_MIN && r < TFB_FMT_PLAIN_MAX) {
        int dec = TFB_FMT_DIGITS - 1 - ex;
        snprintf(buf, cap, "%.*f", dec > 0 ? dec : 0, a);
        trim_zeros(buf, 0);
        return;
    }
    if (x)
        *x = 0;
    trim_zeros(e, 1);
    snprintf(buf, cap, "%se%d", e, ex);
}

char *tfb_fmt_num(char *buf, size_t cap, double v)
{
    if (isnan(v)) {
        snprintf(buf, cap, "NaN");
    } else if (isinf(v)) {
        snprintf(buf, cap, "%s", v > 0 ? "+Inf" : "-Inf");
    } else if (fabs(v) < TFB_FMT_ZERO) {
        snprintf(buf, cap, "0"); /* -0 too: no signed zero */
    } else {
        char a[TFB_FMT_MAX];
        fmt_abs(a, sizeof a, fabs(v));
        snprintf(buf, cap, "%s%s", v < 0 ? "-" : "", a);
    }
    return buf;
}

/* SI prefixes from femto (10^-15) to peta (10^15); index 5 is none. */
static const char *const SI_PREFIX[] = {"f", "p", "n", "\xc2\xb5", "m", "",
                                        "k", "M", "G", "T", "P"};

char *tfb_fmt_si(char *buf, size_t cap, double v, const char *unit)
{
    if (!unit)
        unit = "";
    char n[TFB_FMT_MAX];
    if (!isfinite(v) || fabs(v) < TFB_FMT_ZERO) {
        snprintf(buf, cap, "%s %s", tfb_fmt_num(n, sizeof n, v), unit);
        return buf;
    }
    double a = fabs(v);
    char e[40];
    snprintf(e, sizeof e, "%.*e", TFB_FMT_DIGITS - 1, a);
    char *x = strchr(e, 'e');
    int ex = x ? atoi(x + 1) : 0;
    /* floor(ex / 3), then the prefixes we have: time has none above s */
    int k = ex >= 0 ? ex / 3 : -((-ex + 2) / 3);
    int top = strcmp(unit, "s") == 0 ? 0 : 5;
    if (k < -5)
        k = -5;
    if (k > top)
        k = top;
    /* 1000^|k| is exact up to 10^15: one correctly rounded operation */
    double scale = 1;
    for (int i = 0; i < (k < 0 ? -k : k); i++)
        scale *= 1000;
    double m = k < 0 ? a * scale : a / scale;
    fmt_abs(n, sizeof n, m);
    snprintf(buf, cap, "%s%s %s%s", v < 0 ? "-" : "", n, SI_PREFIX[k + 5],
             unit);
    return buf;
}

char *tfb_fmt_bytes(char *buf, size_t cap, double b)
{
    static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB",
                                       "PiB"};
    char n[TFB_FMT_MAX];
    if (!isfinite(b) || fabs(b) < TFB_FMT_ZERO) {
        snprintf(buf, cap, "%s B", tfb_fmt_num(n, sizeof n, b));
        return buf;
    }
    double a = fabs(b);
    int u = 0;
    while (a >= 1024 && u < 5) {
        a /= 1024; /* exact: a power of two */
        u++;
    }
    fmt_abs(n, sizeof n, a);
    snprintf(buf, cap, "%s%s %s", b < 0 ? "-" : "", n, unit[u]);
    return buf;
}

char *tfb_fmt_change(char *buf, size_t cap, double change)
{
    char n[TFB_FMT_MAX];
    if (isnan(change)) {
        snprintf(buf, cap, "-");
    } else if (isinf(change)) {
        snprintf(buf, cap, "%s", change > 0 ? "new" : "-new");
    } else if (1.0 + change >= TFB_FMT_RATIO_MIN) {
        snprintf(buf, cap, "\xc3\x97%s", /* U+00D7, the times sign */
                 tfb_fmt_num(n, sizeof n, 1.0 + change));
    } else if (fabs(100.0 * change) < 1000) {
        snprintf(n, sizeof n, "%.1f", 100.0 * change);
        if (!strcmp(n, "-0.0")) /* rounds to zero: no sign, "+0.0 %" */
            snprintf(n, sizeof n, "0.0");
        snprintf(buf, cap, "%s%s %%", n[0] == '-' ? "" : "+", n);
    } else {
        /* below -1000 % (B of the other sign); above is a ratio */
        snprintf(buf, cap, "%s %%", tfb_fmt_num(n, sizeof n, 100.0 * change));
    }
    return buf;
}

const char *tfb_fmt_verdict(const char *v)
{
    static const char *const words[][2] = {
        {"highly", "highly input-bound"},
        {"moderately", "moderately input-bound"},
        {"potentially", "potentially input-bound"},
        {"not", "not input-bound"},
    };
    if (!v)
        return "-";
    for (size_t i = 0; i < sizeof words / sizeof *words; i++)
        if (!strcmp(v, words[i][0]))
            return words[i][1];
    return v;
}

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

void tfb_report_put_num(FILE *f, double v)
{
    char b[TFB_FMT_MAX];
    fputs(tfb_fmt_num(b, sizeof b, v), f);
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

void tfb_report_put_right(FILE *f, const char *s, size_t width)
{
    tfb_report_pad(f, columns(s, strlen(s)), width);
    fputs(s, f);
}
