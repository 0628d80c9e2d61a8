/* tag_table.c - the writer's tag set on the base string table (see
 * tag_table.h). */
#include "collector/tag_table.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "tfboard.h"

tfb_tag_entry *tfb_tag_table_get(tfb_tag_table *t, const char *tag,
                                 size_t len)
{
    uint64_t h = tfb_hash_bytes(tag, len);
    tfb_tag_entry *found = tfb_strtab_get_h(&t->index, tag, len, h);
    if (found)
        return found;
    tfb_tag_entry *e = malloc(sizeof *e);
    if (!e)
        return NULL;
    /* field = 0x0a, varint(len), tag bytes, NUL, padding */
    size_t hdr = 2; /* key, and the length's first varint byte */
    for (size_t v = len; v >= 0x80; v >>= 7)
        hdr++;
    uint8_t *field = calloc(1, hdr + len + 1 + TFB_TAG_FIELD_PAD);
    if (!field) {
        free(e);
        return NULL;
    }
    uint8_t *q = field;
    *q++ = 0x0a;
    for (size_t v = len;; v >>= 7) {
        if (v < 0x80) {
            *q++ = (uint8_t)v;
            break;
        }
        *q++ = (uint8_t)(v | 0x80);
    }
    if (len)
        memcpy(q, tag, len);
    *e = (tfb_tag_entry){(char *)q, len, field, hdr + len, 0, -1};
    if (tfb_strtab_put_h(&t->index, e->tag, len, h, e) < 0) {
        free(field);
        free(e);
        return NULL;
    }
    return e;
}

int tfb_tag_table_id(tfb_tag_table *t, tfb_tag_entry *e)
{
    if (e->id >= 0)
        return e->id;
    if (t->by_id.n >= (size_t)INT_MAX)
        return TFB_ETOOBIG;
    if (tfb_vec_push(&t->by_id, e) < 0)
        return TFB_ENOMEM;
    e->id = (int)(t->by_id.n - 1);
    return e->id;
}

void tfb_tag_table_free(tfb_tag_table *t)
{
    for (size_t i = 0; i < t->index.cap; i++) {
        tfb_tag_entry *e = t->index.slots[i].val;
        if (t->index.slots[i].hash && e) {
            free(e->field);
            free(e);
        }
    }
    tfb_strtab_free(&t->index);
    tfb_vec_free(&t->by_id);
}
