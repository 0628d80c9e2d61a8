/*
 * natural.c - natural order of names (natural.h).
 */
#include "base/natural.h"

#include <stdlib.h>
#include <string.h>

static int is_digit(char c) { return c >= '0' && c <= '9'; }

static int lower(char c)
{
    return (c >= 'A' && c <= 'Z') ? c - 'A' + 'a' : (unsigned char)c;
}

/* Length of the number at s: digits, then '.' and digits when there. */
static size_t number_len(const char *s)
{
    size_t n = 0;
    while (is_digit(s[n]))
        n++;
    if (s[n] == '.' && is_digit(s[n + 1])) {
        n++;
        while (is_digit(s[n]))
            n++;
    }
    return n;
}

/* The value of the number spelled by s[0..n) (n < 64 in practice; a
 * longer one is compared by its first 63 characters' value). */
static double number_value(const char *s, size_t n)
{
    char buf[64];
    if (n >= sizeof buf)
        n = sizeof buf - 1;
    memcpy(buf, s, n);
    buf[n] = 0;
    return strtod(buf, NULL);
}

int tfb_natural_cmp(const char *a, const char *b)
{
    const char *x = a ? a : "", *y = b ? b : "";
    while (*x && *y) {
        if (is_digit(*x) && is_digit(*y)) {
            size_t nx = number_len(x), ny = number_len(y);
            double vx = number_value(x, nx), vy = number_value(y, ny);
            if (vx != vy)
                return vx < vy ? -1 : 1;
            /* Same value: the shorter spelling first, then bytes. */
            if (nx != ny)
                return nx < ny ? -1 : 1;
            int c = memcmp(x, y, nx);
            if (c)
                return c;
            x += nx;
            y += ny;
            continue;
        }
        int cx = lower(*x), cy = lower(*y);
        if (cx != cy)
            return cx < cy ? -1 : 1;
        x++;
        y++;
    }
    if (*x || *y)
        return *x ? 1 : -1;
    return strcmp(a ? a : "", b ? b : "");
}
