/*
 * tag_table.h - the writer's set of tags seen so far, with per-tag flags
 * (metadata already sent for a kind, non-finite already reported).
 * Not thread-safe: the writer holds its lock around every call.
 */
#ifndef TFB_TAG_TABLE_H
#define TFB_TAG_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "base/strtab.h"
#include "base/vec.h"

enum {
    TFB_TAG_META_SCALAR = 1u << 0,
    TFB_TAG_META_HISTO = 1u << 1,
    TFB_TAG_META_TEXT = 1u << 2,
    TFB_TAG_NONFINITE = 1u << 3,
};

/* Readable bytes after each entry's field, so encoders may copy short
 * fields with one fixed-size move. */
#define TFB_TAG_FIELD_PAD 32

typedef struct tfb_tag_entry {
    char *tag; /* the tag, NUL-terminated, inside field's allocation */
    size_t len;
    /* The tag encoded as Summary.Value field 1 (key, length, bytes), as
     * the scalar encoder copies it; owned; TFB_TAG_FIELD_PAD bytes follow. */
    uint8_t *field;
    size_t field_len;
    unsigned flags;
    int id; /* its index in the table's by_id, or -1 before tfb_tag_table_id */
} tfb_tag_entry;

/* Zero-initialise for an empty table. Entries are allocated one by one
 * and indexed by the base string table (keys: each entry's own tag); the
 * entries given an id (tfb_tag_table_id) are also listed in by_id, so a
 * binding that keeps the id finds its tag without hashing. */
typedef struct tfb_tag_table {
    tfb_strtab index;
    TFB_VEC(tfb_tag_entry *) by_id;
} tfb_tag_table;

/* Finds tag, inserting it (with flags 0) when absent. Returns NULL only
 * when memory runs out. Entries never move: the pointer stays valid until
 * tfb_tag_table_free. */
tfb_tag_entry *tfb_tag_table_get(tfb_tag_table *t, const char *tag,
                                 size_t len);

/* e's id (>= 0), given on the first call: ids are dense, in the order
 * asked, and never change. TFB_ENOMEM, or TFB_ETOOBIG past INT_MAX ids. */
int tfb_tag_table_id(tfb_tag_table *t, tfb_tag_entry *e);

/* The entry of id, or NULL when no entry has it (out of range). */
static inline tfb_tag_entry *tfb_tag_table_by_id(const tfb_tag_table *t,
                                                 int id)
{
    return id >= 0 && (size_t)id < t->by_id.n ? t->by_id.v[id] : NULL;
}

/* Frees every entry and the table's memory; t may be reused after. */
void tfb_tag_table_free(tfb_tag_table *t);

#endif
