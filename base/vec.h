/*
 * vec.h - the one growable array of the tree: a typed vector whose element
 * size comes from sizeof, in the spirit of h2o's H2O_VECTOR and lwan's
 * DEFINE_ARRAY_TYPE.
 *
 *     TFB_VEC(struct span) spans = {0};        // or: typedef TFB_VEC(int) tfb_int_vec;
 *     if (tfb_vec_push(&spans, s) < 0)         // copies s to the end
 *         return TFB_ENOMEM;
 *     struct span *p = tfb_vec_add(&spans);    // a zeroed slot at the end, or NULL
 *     if (tfb_vec_need(&spans, spans.n + 100) < 0)   // room for 100 more
 *         return TFB_ENOMEM;
 *     tfb_vec_setcap(&queue, bytes);           // exactly: a chosen size
 *     for (size_t i = 0; i < spans.n; i++) use(spans.v[i]);
 *     tfb_vec_free(&spans);
 *
 * Every growable array of the tree is one of these (or, for columns that
 * share a capacity, a tfb_array_resize'd array); byte strings are
 * base/buf.h's. tests/arch/check_growth.py fails on growth by hand.
 *
 * Growth doubles the capacity (16 elements the first time, or as many as
 * fit in 4 KiB when an element is over 256 bytes), so n pushes
 * cost O(n) in all; need * sizeof overflowing size_t is refused, never
 * wrapped. On failure the vector is unchanged (v, n and cap as before).
 * The macros evaluate their vector argument more than once: pass a plain
 * lvalue (&x, or p->field), never an expression with side effects; the
 * count given to tfb_vec_need is evaluated once.
 *
 * Ownership: base; the array belongs to the vector's owner (tfb_vec_free,
 * or free(vec.v) after taking it over).
 * Thread-safety: none; the caller serialises use of one vector.
 * Internal to libtfboard and the server: not exported.
 */
#ifndef TFB_BASE_VEC_H
#define TFB_BASE_VEC_H

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* The type of a vector of T: { T *v; size_t n, cap; }. Zero-initialise
 * ({0}) for an empty vector. Declare a named type with
 * `typedef TFB_VEC(T) name;` when it crosses a function boundary. */
#define TFB_VEC(T) struct { T *v; size_t n, cap; }

/* Ensures room for `need` elements in all: 0, or -1 (overflow or out of
 * memory; the vector is unchanged). `need` is evaluated once. */
#define tfb_vec_need(a, need)                                               \
    tfb_vec__need(&(a)->v, &(a)->cap, sizeof *(a)->v, (size_t)(need))

/* Appends a copy of x: 0, or -1 (unchanged). */
#define tfb_vec_push(a, x)                                                  \
    (tfb_vec_need((a), (a)->n + 1) < 0 ? -1 : ((a)->v[(a)->n++] = (x), 0))

/* Appends a zeroed element and returns a pointer to it, or NULL
 * (unchanged). The pointer is valid until the next growth. */
#define tfb_vec_add(a)                                                      \
    (tfb_vec_need((a), (a)->n + 1) < 0                                      \
         ? NULL                                                             \
         : memset(&(a)->v[(a)->n++], 0, sizeof *(a)->v))

/* Frees the array; the vector is empty and reusable. */
#define tfb_vec_free(a) (free((a)->v), (a)->v = NULL, (a)->n = (a)->cap = 0)

/* Shrinks the array to n elements (keeps it when n is 0 or realloc
 * fails: trimming is an optimisation, never an error). */
#define tfb_vec_trim(a)                                                     \
    ((a)->v = tfb_vec__trim((a)->v, &(a)->cap, sizeof *(a)->v, (a)->n))

/* Sets the capacity to exactly ncap elements (>= n; at least one is
 * allocated), growing or shrinking: 0, or -1 (overflow or out of memory;
 * the vector is unchanged). For a capacity the caller chose on purpose: a
 * queue of a configured size, growth tuned to a memory budget. ncap is
 * evaluated once. */
#define tfb_vec_setcap(a, ncap)                                             \
    tfb_vec__setcap(&(a)->v, &(a)->cap, sizeof *(a)->v, (size_t)(ncap))

/* Resizes a plain array `T *p` (pass &p) to exactly n elements (at least
 * one is allocated): 0, or -1 (overflow or out of memory; p unchanged).
 * For arrays whose count and capacity live elsewhere: parallel columns
 * that share one capacity (a store series' step, wall and value arrays).
 * Anything with its own count grows as a TFB_VEC. */
#define tfb_array_resize(pp, n)                                             \
    tfb_vec__setcap((pp), NULL, sizeof **(pp), (size_t)(n))

/* Internals of the macros. tfb_vec__grow returns the new array with *cap
 * raised to at least need, or the old array with *cap unchanged. */
void *tfb_vec__grow(void *v, size_t *cap, size_t elem, size_t need);
void *tfb_vec__trim(void *v, size_t *cap, size_t elem, size_t n);
/* vfield as in tfb_vec__need; *cap (when cap is not NULL) set to n on
 * success. */
int tfb_vec__setcap(void *vfield, size_t *cap, size_t elem, size_t n);

/* vfield is the address of the vector's `T *v` field: its pointer is
 * read and written with memcpy (no type punning through void **). */
static inline int tfb_vec__need(void *vfield, size_t *cap, size_t elem,
                                size_t need)
{
    if (need <= *cap)
        return 0;
    void *v;
    size_t old = *cap;
    memcpy(&v, vfield, sizeof v);
    v = tfb_vec__grow(v, cap, elem, need);
    if (*cap == old)
        return -1;
    memcpy(vfield, &v, sizeof v);
    return 0;
}

#endif
