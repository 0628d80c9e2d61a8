/*
 * report_jsonval.h - a small JSON reader, so the report can print as text
 * the sections other analyses only give as JSON (the GPU section) without
 * computing them a second time.
 *
 * Ownership: area "pipeline". Thread-safety: a parsed value is immutable;
 * share it freely, free it once.
 */
#ifndef TFB_SERVER_REPORT_JSONVAL_H
#define TFB_SERVER_REPORT_JSONVAL_H

#include <stddef.h>

typedef enum {
    TFB_JV_NULL = 0,
    TFB_JV_BOOL,
    TFB_JV_NUMBER,
    TFB_JV_STRING,
    TFB_JV_ARRAY,
    TFB_JV_OBJECT
} tfb_jv_type;

typedef struct tfb_jv {
    tfb_jv_type type;
    double num;         /* NUMBER and BOOL (1/0); the strings "NaN",
                           "Infinity", "-Infinity" stay STRING */
    char *str;          /* STRING (decoded UTF-8, NUL-terminated) */
    struct tfb_jv *items; /* ARRAY elements / OBJECT values */
    char **keys;        /* OBJECT keys, parallel to items */
    size_t n;
} tfb_jv;

/* Parses text[0..len) (one value, whitespace around allowed). Returns a
 * malloc'd tree (free with tfb_jv_free) or NULL when the text is not valid
 * JSON, nests deeper than 64, or memory runs out. */
tfb_jv *tfb_jv_parse(const char *text, size_t len);
void tfb_jv_free(tfb_jv *v);

/* The member `key` of an object, or NULL (also when v is not an object). */
const tfb_jv *tfb_jv_get(const tfb_jv *v, const char *key);
/* The number at v (or member path a.b via tfb_jv_get), else fallback. */
double tfb_jv_num(const tfb_jv *v, double fallback);
/* The string at v, else fallback. */
const char *tfb_jv_str(const tfb_jv *v, const char *fallback);

#endif
