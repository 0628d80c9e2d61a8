/*
 * str.h - string copies and formatted strings for the collector and the
 * server.
 *
 * Ownership: base; the copies are malloc'd and belong to the
 * caller (free() them). Thread-safety: any thread.
 * Internal to libtfboard and the server: not exported.
 */
#ifndef TFB_BASE_STR_H
#define TFB_BASE_STR_H

#include <stddef.h>

/* A NUL-terminated copy of the first n bytes at s (s may be NULL when n
 * is 0; NUL bytes inside are copied as they are). NULL when memory runs
 * out. */
char *tfb_strndup(const char *s, size_t n);

/* A copy of the NUL-terminated s; NULL when memory runs out. */
char *tfb_strdup(const char *s);

/* A string formatted as by printf, in memory of its exact size (paths and
 * keys joined from parts: no size to work out by hand); NULL when memory
 * runs out. */
char *tfb_strfmt(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
