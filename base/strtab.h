/*
 * strtab.h - one open-addressing string table: key bytes (+ length) ->
 * void * value. Linear probing in a power-of-two array of slots, grown
 * (doubled) before the load factor passes 0.7, so a lookup or insert is
 * O(1) expected at any size.
 *
 * The table never copies keys: each key's bytes
 * belong to the caller and must stay unchanged at the same address while
 * the key is in the table (callers keep them in the value they store,
 * e.g. a series' own tag copy). The table owns only its slot array.
 *
 * Thread-safety: none; callers serialise access to one table (each user
 * holds its own lock around every call). Distinct tables are independent.
 * Internal to libtfboard and the server: not exported.
 */
#ifndef TFB_BASE_STRTAB_H
#define TFB_BASE_STRTAB_H

#include <stddef.h>
#include <stdint.h>

typedef struct tfb_strtab_slot {
    uint64_t hash; /* tfb_hash_bytes of the key; 0 = empty slot */
    const char *key;
    size_t len;
    void *val;
} tfb_strtab_slot;

/* Zero-initialise ({0}) for an empty table; no init call is needed. */
typedef struct tfb_strtab {
    tfb_strtab_slot *slots;
    size_t cap; /* power of two, 0 before the first insert */
    size_t count;
} tfb_strtab;

/* The value stored for key, or NULL when absent. */
void *tfb_strtab_get(const tfb_strtab *t, const char *key, size_t len);
/* As tfb_strtab_get, with h = tfb_hash_bytes(key, len) already known. */
void *tfb_strtab_get_h(const tfb_strtab *t, const char *key, size_t len,
                       uint64_t h);

/* Stores val for key (key not copied, see above), replacing the value of
 * an equal key already present (the stored key pointer then becomes this
 * one). val must not be NULL (NULL means "absent" to get). Returns 0, or
 * -1 when memory runs out (the table is unchanged then). The _h form
 * takes h = tfb_hash_bytes(key, len) (never 0), computed once by callers
 * that also looked the key up. */
int tfb_strtab_put(tfb_strtab *t, const char *key, size_t len, void *val);
int tfb_strtab_put_h(tfb_strtab *t, const char *key, size_t len, uint64_t h,
                     void *val);

/* Grows the table so that n keys in all fit without growing again: after
 * it, inserting up to n - count new keys cannot fail. Returns 0 or -1
 * when memory runs out. */
int tfb_strtab_reserve(tfb_strtab *t, size_t n);

/* Frees the slot array (not keys or values); t is empty and reusable. */
void tfb_strtab_free(tfb_strtab *t);

#endif
