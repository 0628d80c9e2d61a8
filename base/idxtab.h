/*
 * idxtab.h - the one open-addressing table of indexes for keys that are
 * not strings (base/strtab.h keeps those): a table of int32 indexes into
 * an array the caller owns, found by the caller's hash of an element and
 * compared by the caller. The trace builder's kernel descriptions and
 * lanes, the trace loader's id map and the GPU memory view's live
 * allocations use it; khash-style, with the element array kept apart so
 * that the array stays a plain TFB_VEC.
 *
 *     // find, else add
 *     if (tfb_idxtab_reserve(&t, arr.n + 1, hash_of, &arr) < 0) ...ENOMEM
 *     size_t p = tfb_idxtab_first(&t, h);
 *     for (int32_t i; (i = t.slot[p]) >= 0; p = tfb_idxtab_next(&t, p))
 *         if (same(&arr.v[i], key)) return i;
 *     push key onto arr; tfb_idxtab_set(&t, p, arr.n - 1);
 *
 * Load stays at most 1/2 (reserve doubles the capacity, a power of two,
 * rehashing every index through hash_of). Deletion shifts later entries
 * of the cluster back, so no tombstones build up.
 *
 * Ownership: base; the slots belong to the table (tfb_idxtab_free); the
 * elements to the caller. Thread-safety: none; the caller serialises.
 * Internal to libtfboard and the server: not exported.
 */
#ifndef TFB_BASE_IDXTAB_H
#define TFB_BASE_IDXTAB_H

#include <stddef.h>
#include <stdint.h>

typedef struct tfb_idxtab {
    int32_t *slot; /* cap slots: an index, or -1 for empty */
    size_t cap;    /* 0 or a power of two */
    size_t n;      /* indexes held */
} tfb_idxtab;

/* The hash of element i (the same hash the caller probes with). */
typedef uint64_t (*tfb_idxtab_hash_fn)(const void *ctx, int32_t i);

/* Room for `want` indexes at load <= 1/2: 0, or -1 (out of memory or too
 * big; the table is unchanged). */
int tfb_idxtab_reserve(tfb_idxtab *t, size_t want, tfb_idxtab_hash_fn hash,
                       const void *ctx);

/* Where the probe for hash h starts (the table has a capacity). */
static inline size_t tfb_idxtab_first(const tfb_idxtab *t, uint64_t h)
{
    return (size_t)h & (t->cap - 1);
}

static inline size_t tfb_idxtab_next(const tfb_idxtab *t, size_t pos)
{
    return (pos + 1) & (t->cap - 1);
}

/* Puts index i in the empty slot pos that a probe ended on. */
void tfb_idxtab_set(tfb_idxtab *t, size_t pos, int32_t i);

/* Empties slot pos (held by an index) and shifts the entries after it in
 * its cluster back where their probes find them. */
void tfb_idxtab_remove(tfb_idxtab *t, size_t pos, tfb_idxtab_hash_fn hash,
                       const void *ctx);

void tfb_idxtab_free(tfb_idxtab *t);

#endif
