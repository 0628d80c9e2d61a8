/*
 * json_str.h - one JSON string-literal reader: finds where a literal ends
 * and decodes its contents (escapes, \uXXXX with surrogate pairs) into
 * UTF-8.
 *
 * Ownership: base; output buffers are the caller's.
 * Thread-safety: pure functions, any thread.
 * Internal to libtfboard and the server: not exported.
 */
#ifndef TFB_BASE_JSON_STR_H
#define TFB_BASE_JSON_STR_H

#include <stddef.h>

/* p points at the opening '"' of a literal within [p, end). On success
 * sets *s / *len to the raw (still escaped) contents between the quotes,
 * *has_esc to 1 when they hold a backslash, and returns the position just
 * past the closing quote. Returns NULL when p is not at '"' or the
 * literal is not closed before end. */
const char *tfb_json_str_scan(const char *p, const char *end, const char **s,
                              size_t *len, int *has_esc);

/* Decodes the raw contents in[0..len) into out, which must have room for
 * len bytes: the UTF-8 is never longer than its escaped form. \uXXXX
 * pairs of a high and a low surrogate become one code point; a lone
 * surrogate becomes U+FFFD, a bad \u escape '?', an unknown escape \c the
 * character c. Returns the number of bytes written (no NUL added). */
size_t tfb_json_str_decode(const char *in, size_t len, char *out);

#endif
