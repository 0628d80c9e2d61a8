/* tag_table.c - open-addressing hash set of tags (see tag_table.h). */
#include "tag_table.h"

#include <stdlib.h>
#include <string.h>

static uint64_t hash_bytes(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a: tags are short */
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 1099511628211ull;
    }
    return h ? h : 1;
}

static int grow(tfb_tag_table *t)
{
    size_t ncap = t->cap ? t->cap * 2 : 64;
    tfb_tag_entry *ns = calloc(ncap, sizeof *ns);
    if (!ns)
        return -1;
    for (size_t i = 0; i < t->cap; i++) {
        tfb_tag_entry *e = &t->slots[i];
        if (!e->tag)
            continue;
        size_t j = e->hash & (ncap - 1);
        while (ns[j].tag)
            j = (j + 1) & (ncap - 1);
        ns[j] = *e;
    }
    free(t->slots);
    t->slots = ns;
    t->cap = ncap;
    return 0;
}

tfb_tag_entry *tfb_tag_table_get(tfb_tag_table *t, const char *tag,
                                 size_t len)
{
    uint64_t h = hash_bytes(tag, len);
    if (t->cap) {
        size_t j = h & (t->cap - 1);
        for (;;) {
            tfb_tag_entry *e = &t->slots[j];
            if (!e->tag)
                break;
            if (e->hash == h && e->len == len && !memcmp(e->tag, tag, len))
                return e;
            j = (j + 1) & (t->cap - 1);
        }
    }
    if ((t->count + 1) * 10 > t->cap * 7 && grow(t) < 0)
        return NULL;
    /* field = 0x0a, varint(len), tag bytes, NUL, padding */
    size_t hdr = 2; /* key, and the length's first varint byte */
    for (size_t v = len; v >= 0x80; v >>= 7)
        hdr++;
    uint8_t *field = calloc(1, hdr + len + 1 + TFB_TAG_FIELD_PAD);
    if (!field)
        return NULL;
    uint8_t *q = field;
    *q++ = 0x0a;
    for (size_t v = len;; v >>= 7) {
        if (v < 0x80) {
            *q++ = (uint8_t)v;
            break;
        }
        *q++ = (uint8_t)(v | 0x80);
    }
    memcpy(q, tag, len);
    size_t j = h & (t->cap - 1);
    while (t->slots[j].tag)
        j = (j + 1) & (t->cap - 1);
    t->slots[j] = (tfb_tag_entry){h, (char *)q, len, field, hdr + len, 0};
    t->count++;
    return &t->slots[j];
}

void tfb_tag_table_free(tfb_tag_table *t)
{
    for (size_t i = 0; i < t->cap; i++)
        free(t->slots[i].field);
    free(t->slots);
    t->slots = NULL;
    t->cap = t->count = 0;
}
