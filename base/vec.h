/*
 * vec.h - one growable-array helper: make room for more elements with
 * amortised doubling and overflow checks, for any element type.
 *
 *     struct { item *v; size_t n, cap; } a = {0};
 *     if (tfb_vec_reserve((void **)&a.v, &a.cap, sizeof *a.v, a.n + 1) < 0)
 *         return TFB_ENOMEM;
 *     a.v[a.n++] = x;
 *
 * Ownership: base; the array belongs to the caller (free() it).
 * Thread-safety: none; the caller serialises use of one array.
 * Internal to libtfboard and the server: not exported.
 */
#ifndef TFB_BASE_VEC_H
#define TFB_BASE_VEC_H

#include <stddef.h>

/* Ensures *cap >= need elements of elem bytes at *v, growing to at least
 * double the old capacity (min_cap elements the first time: 16) so n
 * pushes cost O(n) in all. Returns 0, or -1 when need * elem overflows
 * size_t or memory runs out; *v and *cap are unchanged then. */
int tfb_vec_reserve(void **v, size_t *cap, size_t elem, size_t need);

#endif
