/*
 * utf8.c - UTF-8 validation and cleaning (utf8.h).
 */
#include "base/utf8.h"

#include <stdlib.h>
#include <string.h>

size_t tfb_utf8_seq(const unsigned char *s, size_t n)
{
    unsigned c = s[0];
    size_t len;
    unsigned cp;
    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf) {
        len = 2;
        cp = c & 0x1f;
    } else if (c >= 0xe0 && c <= 0xef) {
        len = 3;
        cp = c & 0x0f;
    } else if (c >= 0xf0 && c <= 0xf4) {
        len = 4;
        cp = c & 0x07;
    } else {
        return 0;
    }
    if (n < len)
        return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i] & 0x3f);
    }
    /* overlong, surrogates, beyond U+10FFFF */
    if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
        (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
        return 0;
    return len;
}

int tfb_utf8_valid(const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    for (size_t i = 0; i < n;) {
        size_t l = u[i] ? tfb_utf8_seq(u + i, n - i) : 0;
        if (!l)
            return 0;
        i += l;
    }
    return 1;
}

char *tfb_utf8_clean(const char *s, size_t n, size_t *out_len)
{
    /* At most 3 bytes (U+FFFD) per input byte. */
    char *o = malloc(n * 3 + 1);
    if (!o)
        return NULL;
    const unsigned char *u = (const unsigned char *)s;
    size_t k = 0;
    for (size_t i = 0; i < n;) {
        size_t l = u[i] ? tfb_utf8_seq(u + i, n - i) : 0;
        if (l) {
            memcpy(o + k, s + i, l);
            k += l;
            i += l;
        } else {
            memcpy(o + k, "\xef\xbf\xbd", 3);
            k += 3;
            i++;
        }
    }
    o[k] = '\0';
    if (out_len)
        *out_len = k;
    return o;
}

size_t tfb_utf8_cut(const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    /* A character is at most 4 bytes: its lead byte is among the last 4. */
    for (size_t i = n; i > 0 && n - i < 4;) {
        unsigned c = u[--i];
        if ((c & 0xc0) == 0x80)
            continue; /* a continuation byte: its lead is further back */
        size_t need = c >= 0xc2 && c <= 0xdf   ? 2
                      : c >= 0xe0 && c <= 0xef ? 3
                      : c >= 0xf0 && c <= 0xf4 ? 4
                                               : 1;
        return n - i < need ? i : n;
    }
    return n;
}

size_t tfb_utf8_copy(char *dst, size_t cap, const char *src)
{
    if (cap == 0)
        return 0;
    size_t n = strnlen(src, cap - 1);
    n = tfb_utf8_cut(src, n);
    memmove(dst, src, n);
    dst[n] = '\0';
    return n;
}
