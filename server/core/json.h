/*
 * json.h - a growable JSON text builder for HTTP answers and reports.
 *
 * Any area may use it.
 * Thread-safety: a tfb_json is used by one thread at a time; distinct
 * builders are independent.
 *
 * Commas are inserted automatically: call tfb_json_key() before each value
 * inside an object, nothing between array elements. An allocation failure
 * (or nesting deeper than TFB_JSON_MAX_DEPTH) is sticky: later calls do
 * nothing and tfb_json_take() returns NULL.
 *
 * Strings are escaped for JSON (", \, control characters as \uXXXX) and
 * also `<`, `>` and `&` as \u003c, \u003e, \u0026 so that the text can
 * never close a <script> element or be read as markup. Invalid UTF-8 bytes
 * become U+FFFD. Non-finite doubles are written as the strings "NaN",
 * "Infinity", "-Infinity" (TensorBoard's convention).
 */
#ifndef TFB_SERVER_JSON_H
#define TFB_SERVER_JSON_H

#include <stddef.h>
#include <stdint.h>

#include "base/vec.h"

#define TFB_JSON_MAX_DEPTH 64

typedef struct tfb_json {
    TFB_VEC(char) out; /* the text so far, NUL-terminated once non-empty */
    int failed;
    int depth;
    /* per depth: 1 when the next value needs a comma before it */
    unsigned char comma[TFB_JSON_MAX_DEPTH + 1];
    int after_key; /* a key was written; its value follows without comma */
} tfb_json;

void tfb_json_init(tfb_json *j);
/* Frees the buffer (unless taken). NULL-safe. */
void tfb_json_free(tfb_json *j);
/* Returns the NUL-terminated text (caller frees with free()) and its
 * length, and resets j to empty; NULL on a sticky failure. */
char *tfb_json_take(tfb_json *j, size_t *len);
/* 1 after an allocation failure. */
int tfb_json_failed(const tfb_json *j);

void tfb_json_object_begin(tfb_json *j);
void tfb_json_object_end(tfb_json *j);
void tfb_json_array_begin(tfb_json *j);
void tfb_json_array_end(tfb_json *j);
/* An object key (escaped like a string). */
void tfb_json_key(tfb_json *j, const char *key);
void tfb_json_keyn(tfb_json *j, const char *key, size_t len);

void tfb_json_str(tfb_json *j, const char *s);   /* NULL writes null */
void tfb_json_strn(tfb_json *j, const char *s, size_t len);
/* Shortest text that reads back as the same double; non-finite as above. */
void tfb_json_double(tfb_json *j, double v);
/* Shortest text that reads back as the same float (for float32 data). */
void tfb_json_float(tfb_json *j, float v);
void tfb_json_i64(tfb_json *j, int64_t v);
void tfb_json_u64(tfb_json *j, uint64_t v);
void tfb_json_bool(tfb_json *j, int v);
void tfb_json_null(tfb_json *j);
/* Reopens the top-level object just written (the text is one whole
 * object) so that more keys can be added before another
 * tfb_json_object_end: how a route adds a key common to its answers (the
 * GPU routes' step window) around a writer that closes its object.
 * 0, or -1 (nothing changed) when the text is not one whole object. */
int tfb_json_object_reopen(tfb_json *j);
/* Appends already-valid JSON text as one value. */
void tfb_json_raw(tfb_json *j, const char *text, size_t len);

/* Appends bytes as they are, with no separator: for building CSV or other
 * text with the same growable buffer. */
void tfb_json_append(tfb_json *j, const char *text, size_t len);

/* Appends the JSON-escaped form of s (no quotes) to j's buffer; also used
 * by the CSV writer. Exposed for tests. */
void tfb_json_escape_into(tfb_json *j, const char *s, size_t len);

/* ---- structs as objects: a field table per struct ------------------ */

/* How a member is written; the "or null" rules are how an analysis says
 * "unknown" (NaN, an empty text, a step of -1) without a flag of its own. */
typedef enum tfb_json_type {
    TFB_JSON_STR = 1, /* const char *; NULL: null */
    TFB_JSON_TEXT,    /* char[]; "" : null */
    TFB_JSON_CHARS,   /* char[], as it is */
    TFB_JSON_I64,     /* int64_t */
    TFB_JSON_STEP,    /* int64_t; negative: null (no such step) */
    TFB_JSON_U64,     /* uint64_t */
    TFB_JSON_SIZE,    /* size_t */
    TFB_JSON_INT,     /* int (int32_t) */
    TFB_JSON_POS,     /* int (int32_t); 0 or less: null (unknown) */
    TFB_JSON_INT3,    /* int32_t[3], as an array (a grid, a block) */
    TFB_JSON_U32,     /* uint32_t */
    TFB_JSON_DOUBLE,  /* double; non-finite as "NaN", "Infinity" */
    TFB_JSON_NUM,     /* double; NaN: null (unknown), infinities as above */
    TFB_JSON_FIN,     /* double; NaN or infinite: null */
    TFB_JSON_FLOAT,   /* float, shortest */
    TFB_JSON_BOOL,    /* int; 0: false */
    TFB_JSON_OBJECT,  /* a struct member, written with its own table */
} tfb_json_type;

/* One member: its key, type and offset in the struct; when `if_set` is
 * not 0 it is 1 + the offset of an int member of the same struct, and
 * the value is null while that int is 0 (a "has_..." flag); an OBJECT
 * member is written with the table `sub` (n_sub fields). */
typedef struct tfb_json_field {
    const char *key;
    tfb_json_type type;
    size_t off;
    size_t size; /* the member's, checked against the type's when written */
    size_t if_set;
    const struct tfb_json_field *sub;
    size_t n_sub;
} tfb_json_field;

/* A field named as its member, and one with a key of its own; _IF: null
 * unless the int member `flag` is set; _OBJ: a struct member, with the
 * static table of its own type. */
#define TFB_JSON_MEMBER(T, member) \
    .off = offsetof(T, member), .size = sizeof(((T *)0)->member)
#define TFB_JSON_FIELD(T, member, ty) \
    {.key = #member, .type = TFB_JSON_##ty, TFB_JSON_MEMBER(T, member)}
#define TFB_JSON_FIELD_AS(key_, T, member, ty) \
    {.key = key_, .type = TFB_JSON_##ty, TFB_JSON_MEMBER(T, member)}
#define TFB_JSON_FIELD_IF(key_, T, member, ty, flag) \
    {.key = key_, .type = TFB_JSON_##ty, TFB_JSON_MEMBER(T, member), \
     .if_set = offsetof(T, flag) + 1}
#define TFB_JSON_FIELD_OBJ(key_, T, member, table) \
    {.key = key_, .type = TFB_JSON_OBJECT, TFB_JSON_MEMBER(T, member), \
     .sub = (table), .n_sub = sizeof(table) / sizeof((table)[0])}

/* Writes "key": value for each of the n fields of the struct at obj, in
 * table order, into the object being built. A field whose member is not
 * of its type's size (a table that names the wrong type) is written as
 * null, and fails an assert in builds with asserts (the tests'). */
void tfb_json_fields(tfb_json *j, const void *obj, const tfb_json_field *f,
                     size_t n);
/* The same, as a whole object. */
void tfb_json_struct(tfb_json *j, const void *obj, const tfb_json_field *f,
                     size_t n);
/* For a static table: its element count is taken from its size. */
#define TFB_JSON_FIELDS(j, obj, table) \
    tfb_json_fields((j), (obj), (table), sizeof(table) / sizeof((table)[0]))
#define TFB_JSON_STRUCT(j, obj, table) \
    tfb_json_struct((j), (obj), (table), sizeof(table) / sizeof((table)[0]))

/* Low-level number formatting into buf (at least 32 bytes); returns the
 * length. Non-finite values give NaN / Infinity / -Infinity unquoted. */
size_t tfb_fmt_double(char *buf, double v);
size_t tfb_fmt_float(char *buf, float v);
size_t tfb_fmt_i64(char *buf, int64_t v);

#endif
