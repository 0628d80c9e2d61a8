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

#endif
