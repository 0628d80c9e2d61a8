/*
 * test_format_cases.c - the one number format on the C side
 * (core/report_fmt.h: tfb_fmt_num, _si, _bytes, _change, _verdict)
 * against the table of cases tests/format_cases.json, which the page's
 * test (tests/webui/test_format.mjs) reads too: both sides write every
 * value the same way.
 *
 * The table's shape is fixed (an array "cases" of flat objects whose
 * members are strings or numbers), so a small reader does: no JSON
 * library for one test.
 *
 * Argument: the path of format_cases.json.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/report_fmt.h"

static const char *path;

/* A JSON string at *p (after its opening quote) into out; \" and \\ are
 * the only escapes the table uses. */
static const char *read_str(const char *p, char *out, size_t cap)
{
    size_t n = 0;
    while (*p && *p != '"') {
        if (*p == '\\' && p[1])
            p++;
        if (n + 1 < cap)
            out[n++] = *p;
        p++;
    }
    out[n] = 0;
    return *p ? p + 1 : p;
}

typedef struct fcase {
    char kind[64], unit[64], want[64], sval[64]; /* as big as a read value */
    double value;
    int is_str;
} fcase;

/* One flat object from p (at its '{'); returns the text after it. */
static const char *read_case(const char *p, fcase *c)
{
    memset(c, 0, sizeof *c);
    p++;
    while (*p && *p != '}') {
        if (*p != '"') {
            p++;
            continue;
        }
        char key[32];
        p = read_str(p + 1, key, sizeof key);
        while (*p == ' ' || *p == ':')
            p++;
        char sv[64] = "";
        double nv = 0;
        int is_str = *p == '"';
        if (is_str) {
            p = read_str(p + 1, sv, sizeof sv);
        } else {
            char *end;
            nv = strtod(p, &end);
            p = end;
        }
        if (!strcmp(key, "kind"))
            snprintf(c->kind, sizeof c->kind, "%s", sv);
        else if (!strcmp(key, "unit"))
            snprintf(c->unit, sizeof c->unit, "%s", sv);
        else if (!strcmp(key, "want"))
            snprintf(c->want, sizeof c->want, "%s", sv);
        else if (!strcmp(key, "value")) {
            c->is_str = is_str;
            c->value = nv;
            snprintf(c->sval, sizeof c->sval, "%s", sv);
        }
    }
    return *p ? p + 1 : p;
}

static double value_of(const fcase *c)
{
    if (!c->is_str)
        return c->value;
    if (!strcmp(c->sval, "NaN"))
        return NAN;
    return c->sval[0] == '-' ? -INFINITY : INFINITY;
}

int main(int argc, char **argv)
{
    path = argc > 1 ? argv[1] : "format_cases.json";
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "cannot open %s\n", path);
        return 1;
    }
    static char text[1 << 16];
    size_t len = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[len] = 0;
    const char *p = strstr(text, "\"cases\"");
    if (!p || !(p = strchr(p, '['))) {
        fprintf(stderr, "%s: no \"cases\" array\n", path);
        return 1;
    }
    int n = 0, failed = 0;
    while ((p = strpbrk(p, "{]")) && *p == '{') {
        fcase c;
        p = read_case(p, &c);
        char got[TFB_FMT_MAX];
        double v = value_of(&c);
        if (!strcmp(c.kind, "num"))
            tfb_fmt_num(got, sizeof got, v);
        else if (!strcmp(c.kind, "si"))
            tfb_fmt_si(got, sizeof got, v, c.unit);
        else if (!strcmp(c.kind, "bytes"))
            tfb_fmt_bytes(got, sizeof got, v);
        else if (!strcmp(c.kind, "change"))
            tfb_fmt_change(got, sizeof got, v);
        else if (!strcmp(c.kind, "verdict"))
            snprintf(got, sizeof got, "%s", tfb_fmt_verdict(c.sval));
        else
            snprintf(got, sizeof got, "(unknown kind '%.32s')", c.kind);
        n++;
        if (strcmp(got, c.want)) {
            failed++;
            printf("not ok %d - %s(%s%s%s): got \"%s\", want \"%s\"\n", n,
                   c.kind, c.is_str ? c.sval : "", c.unit[0] ? ", " : "",
                   c.unit, got, c.want);
        } else {
            printf("ok %d - %s -> %s\n", n, c.kind, got);
        }
    }
    printf("1..%d\n", n);
    if (n < 50) {
        fprintf(stderr, "%s: only %d cases read\n", path, n);
        return 1;
    }
    return failed ? 1 : 0;
}
