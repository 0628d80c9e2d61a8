/*
 * utf8.h - UTF-8 validation, and the one rule for names that are not
 * UTF-8: each invalid byte becomes U+FFFD. JSON can only carry valid
 * Unicode, so a run or tag name is made valid once, where it enters the
 * store; the name listed is then the name that can be queried.
 *
 * Pure functions; thread-safe. Internal: not exported.
 */
#ifndef TFB_BASE_UTF8_H
#define TFB_BASE_UTF8_H

#include <stddef.h>

/* Length of the valid UTF-8 sequence at s (1-4), or 0 when invalid
 * (overlong forms, surrogates and code points past U+10FFFF included). */
size_t tfb_utf8_seq(const unsigned char *s, size_t n);

/* 1 when s[0..n) is valid UTF-8 without NUL bytes. */
int tfb_utf8_valid(const char *s, size_t n);

/* A NUL-terminated copy of s[0..n) with every byte that does not start a
 * valid sequence (and every NUL) replaced by U+FFFD; malloc'd, NULL on
 * ENOMEM. *out_len gets its length (may be NULL). */
char *tfb_utf8_clean(const char *s, size_t n, size_t *out_len);

/* The length of the longest prefix of s[0..n) that does not end inside a
 * character: n, less the bytes of a last character cut short (a lead
 * byte whose sequence needs more bytes than are left). A message cut to a
 * byte bound (snprintf into a fixed buffer) then keeps whole characters
 * instead of ending in half of one. Other invalid bytes are left for the
 * U+FFFD rule of whoever writes the text out. */
size_t tfb_utf8_cut(const char *s, size_t n);

/* Copies as much of src as fits into dst[cap] (cap > 0), cut by
 * tfb_utf8_cut, NUL-terminated; returns the length copied. */
size_t tfb_utf8_copy(char *dst, size_t cap, const char *src);

#endif
