/*
 * regex_bound.c - a user's regular expression measured before regcomp
 * (see regex_bound.h).
 *
 * The measure follows glibc's parser for REG_EXTENDED: an atom (a
 * character, '.', an anchor, a bracket expression, an escape) is one
 * element, a group is its alternatives plus one; each repetition operator
 * multiplies the element or group before it by the copies regcomp makes
 * of it: X{m,n} n (at least one), X{m,} m + 1, X+ 2, X* and X? one.
 * Consecutive operators multiply in turn (glibc accepts a{2}{3}). What
 * counted repetition adds is the expanded size less the written one.
 * Arithmetic saturates, so no pattern overflows the count.
 */
#include "base/regex_bound.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>

#include "tfboard.h"

#define SAT ((uint64_t)1 << 62)

static uint64_t sat_add(uint64_t a, uint64_t b)
{
    return a >= SAT - b ? SAT : a + b;
}

static uint64_t sat_mul(uint64_t a, uint64_t b)
{
    if (a == 0 || b == 0)
        return 0;
    return a > SAT / b ? SAT : a * b;
}

/* One open group: its finished alternatives, the current alternative
 * without its last element, and that last element (which a following
 * repetition operator multiplies). Expanded sizes. */
typedef struct frame {
    uint64_t alts, seq, last;
} frame;

static void frame_add(frame *f, uint64_t elem)
{
    f->seq = sat_add(f->seq, f->last);
    f->last = elem;
}

/* The size of frame f's group, closed. */
static uint64_t frame_close(const frame *f)
{
    return sat_add(sat_add(f->alts, sat_add(f->seq, f->last)), 1);
}

/* Where the bracket expression opening at p[0] == '[' ends (its ']'), or
 * NULL when it does not (regcomp then fails). ']' first, or after '^', is
 * a member; [:class:], [=equiv=] and [.coll.] hold their own ']'. */
static const char *bracket_end(const char *p)
{
    const char *q = p + 1;
    if (*q == '^')
        q++;
    if (*q == ']')
        q++;
    while (*q && *q != ']') {
        if (*q == '[' && (q[1] == ':' || q[1] == '=' || q[1] == '.')) {
            char d = q[1];
            const char *e = q + 2;
            while (*e && !(e[0] == d && e[1] == ']'))
                e++;
            if (*e) {
                q = e + 2;
                continue;
            }
        }
        q++;
    }
    return *q ? q : NULL;
}

static uint64_t read_count(const char **pp)
{
    const char *p = *pp;
    uint64_t v = 0;
    while (*p >= '0' && *p <= '9') {
        if (v < 1000000000u)
            v = v * 10 + (uint64_t)(*p - '0');
        p++;
    }
    *pp = p;
    return v;
}

/* An interval at p[0] == '{': "{m}", "{m,}", "{m,n}" or "{,n}" (glibc's
 * {0,n}). Sets *copies and returns the character after '}', or NULL when
 * it is no interval (regcomp then fails or takes '{' as itself). */
static const char *interval(const char *p, uint64_t *copies)
{
    const char *q = p + 1;
    int have_m = *q >= '0' && *q <= '9';
    uint64_t m = read_count(&q), n = m;
    int unbounded = 0;
    if (*q == ',') {
        q++;
        if (*q >= '0' && *q <= '9')
            n = read_count(&q);
        else
            unbounded = 1;
    } else if (!have_m) {
        return NULL;
    }
    if (*q != '}')
        return NULL;
    *copies = unbounded ? m + 1 : n ? n : 1;
    return q + 1;
}

static void say(char *err, size_t err_len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void say(char *err, size_t err_len, const char *fmt, ...)
{
    if (!err || !err_len)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, err_len, fmt, ap);
    va_end(ap);
}

int tfb_regex_check(const char *pattern, char *err, size_t err_len)
{
    if (err && err_len)
        err[0] = 0;
    if (!pattern)
        return TFB_EINVAL;
    frame st[TFB_REGEX_MAX_DEPTH + 1] = {{0, 0, 0}};
    size_t depth = 0;
    uint64_t written = 0; /* the elements and groups as written */
    for (const char *p = pattern; *p;) {
        frame *f = &st[depth];
        uint64_t copies = 0;
        const char *next;
        switch (*p) {
        case '(':
            if (depth == TFB_REGEX_MAX_DEPTH) {
                say(err, err_len, "groups nested more than %d deep are "
                                  "refused",
                    TFB_REGEX_MAX_DEPTH);
                return TFB_EINVAL;
            }
            st[++depth] = (frame){0, 0, 0};
            written++;
            p++;
            continue;
        case ')':
            if (depth == 0)
                break; /* an unmatched ')' is an ordinary character */
            depth--;
            frame_add(&st[depth], frame_close(f));
            p++;
            continue;
        case '|':
            f->alts = sat_add(f->alts, sat_add(f->seq, f->last));
            f->seq = f->last = 0;
            p++;
            continue;
        case '*':
        case '?':
            p++;
            continue; /* one copy */
        case '+':
            f->last = sat_mul(f->last, 2);
            p++;
            continue;
        case '{':
            if ((next = interval(p, &copies)) != NULL) {
                f->last = sat_mul(f->last, copies);
                p = next;
                continue;
            }
            break;
        case '[':
            if ((next = bracket_end(p)) == NULL)
                return 0; /* unterminated: regcomp says so */
            frame_add(f, 1);
            written++;
            p = next + 1;
            continue;
        case '\\':
            if (p[1] >= '1' && p[1] <= '9') {
                say(err, err_len, "back-references (\\%c) are refused: "
                                  "matching them can take exponential "
                                  "time",
                    p[1]);
                return TFB_EINVAL;
            }
            if (!p[1])
                return 0; /* a trailing '\': regcomp says so */
            frame_add(f, 1);
            written++;
            p += 2;
            continue;
        default:
            break;
        }
        frame_add(f, 1); /* an ordinary character, '.', '^', '$' */
        written++;
        p++;
    }
    /* Groups left open: regcomp refuses them; measured closed anyway. */
    while (depth > 0) {
        uint64_t g = frame_close(&st[depth]);
        depth--;
        frame_add(&st[depth], g);
    }
    uint64_t total = sat_add(st[0].alts, sat_add(st[0].seq, st[0].last));
    uint64_t added = total > written ? total - written : 0;
    if (added > TFB_REGEX_MAX_COPIES) {
        if (total >= SAT) /* saturated */
            say(err, err_len, "too costly: its repetition counts multiply "
                              "to more than 10^18 copies of its parts (at "
                              "most %d; each X{m,n} is compiled as n "
                              "copies of X, and nested counts multiply)",
                TFB_REGEX_MAX_COPIES);
        else
            say(err, err_len, "too costly: its repetition counts make %llu "
                              "copies of its parts (at most %d; each "
                              "X{m,n} is compiled as n copies of X, and "
                              "nested counts multiply)",
                (unsigned long long)added, TFB_REGEX_MAX_COPIES);
        return TFB_EINVAL;
    }
    return 0;
}

int tfb_regex_compile(regex_t *re, const char *pattern, int cflags,
                      char *err, size_t err_len)
{
    int rc = tfb_regex_check(pattern, err, err_len);
    if (rc < 0)
        return rc;
    int e = regcomp(re, pattern, cflags);
    if (e != 0) {
        char msg[160];
        regerror(e, re, msg, sizeof msg);
        if (err && err_len)
            snprintf(err, err_len, "%s", msg);
        return TFB_EINVAL;
    }
    return 0;
}
