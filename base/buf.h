/*
 * buf.h - a growable byte string on the typed vector (vec.h): appends
 * that keep a NUL after the bytes and remember a failed allocation, so a
 * writer appends freely and checks once at the end.
 *
 *     tfb_buf b = {0};
 *     tfb_buf_puts(&b, "GET ");
 *     tfb_buf_put(&b, path, len);
 *     char *s = tfb_buf_take(&b);    // NULL when any append failed
 *
 * Its first three fields are a TFB_VEC(char)'s, so the vec.h macros apply
 * to it as well (tfb_vec_need(&b, n) to make room before writing into
 * b.v + b.n directly).
 *
 * Ownership: base; the bytes belong to the buffer's owner (tfb_buf_free,
 * or tfb_buf_take to take them over).
 * Thread-safety: none; the caller serialises use of one buffer.
 * Internal to libtfboard and the server: not exported.
 */
#ifndef TFB_BASE_BUF_H
#define TFB_BASE_BUF_H

#include <stddef.h>

typedef struct tfb_buf {
    char *v;       /* n bytes, then a NUL (NULL before the first append) */
    size_t n, cap; /* as in TFB_VEC */
    int failed;    /* an append ran out of memory: the bytes are short */
} tfb_buf;

/* Appends n bytes at s (s may be NULL when n is 0). Does nothing once
 * failed is set; sets it when memory runs out (the bytes before stay). */
void tfb_buf_put(tfb_buf *b, const void *s, size_t n);

/* Appends the NUL-terminated s. */
void tfb_buf_puts(tfb_buf *b, const char *s);

/* The string (malloc'd, the caller frees it; "" when nothing was
 * appended), or NULL when an append failed or memory runs out. The buffer
 * is empty and reusable afterwards either way. */
char *tfb_buf_take(tfb_buf *b);

/* Frees the bytes; the buffer is empty, not failed, and reusable. */
void tfb_buf_free(tfb_buf *b);

#endif
