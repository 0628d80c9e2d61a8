/* json_str.c - JSON string literals (see json_str.h). */
#include "base/json_str.h"

#include <stdint.h>

const char *tfb_json_str_scan(const char *p, const char *end, const char **s,
                              size_t *len, int *has_esc)
{
    if (p >= end || *p != '"')
        return NULL;
    const char *b = ++p;
    int esc = 0;
    while (p < end && *p != '"') {
        if (*p == '\\') {
            esc = 1;
            p++; /* the escaped byte cannot close the literal */
        }
        p++;
    }
    if (p >= end)
        return NULL;
    *s = b;
    *len = (size_t)(p - b);
    *has_esc = esc;
    return p + 1;
}

static size_t put_utf8(char *o, uint32_t cp)
{
    if (cp < 0x80) {
        o[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (char)(0xc0 | (cp >> 6));
        o[1] = (char)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (char)(0xe0 | (cp >> 12));
        o[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
        o[2] = (char)(0x80 | (cp & 0x3f));
        return 3;
    }
    o[0] = (char)(0xf0 | (cp >> 18));
    o[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
    o[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
    o[3] = (char)(0x80 | (cp & 0x3f));
    return 4;
}

static int hex4(const char *p, const char *end, uint32_t *out)
{
    if (end - p < 4)
        return 0;
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) {
        char c = p[i];
        v <<= 4;
        if (c >= '0' && c <= '9')
            v |= (uint32_t)(c - '0');
        else if (c >= 'a' && c <= 'f')
            v |= (uint32_t)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            v |= (uint32_t)(c - 'A' + 10);
        else
            return 0;
    }
    *out = v;
    return 1;
}

size_t tfb_json_str_decode(const char *in, size_t len, char *out)
{
    size_t n = 0;
    const char *p = in, *end = in + len;
    while (p < end) {
        if (*p != '\\') {
            out[n++] = *p++;
            continue;
        }
        p++;
        if (p >= end)
            break;
        char c = *p++;
        switch (c) {
        case 'n': out[n++] = '\n'; break;
        case 't': out[n++] = '\t'; break;
        case 'r': out[n++] = '\r'; break;
        case 'b': out[n++] = '\b'; break;
        case 'f': out[n++] = '\f'; break;
        case 'u': {
            uint32_t cp;
            if (!hex4(p, end, &cp)) {
                out[n++] = '?';
                break;
            }
            p += 4;
            if (cp >= 0xd800 && cp < 0xdc00 && end - p >= 6 && p[0] == '\\' &&
                p[1] == 'u') {
                uint32_t lo;
                if (hex4(p + 2, end, &lo) && lo >= 0xdc00 && lo < 0xe000) {
                    cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
                    p += 6;
                }
            }
            if (cp >= 0xd800 && cp < 0xe000)
                cp = 0xfffd; /* lone surrogate */
            /* 6 source bytes give at most 3 UTF-8 bytes; a pair's 12
             * give 4, so out never passes len. */
            n += put_utf8(out + n, cp);
            break;
        }
        default: out[n++] = c; break;
        }
    }
    return n;
}
