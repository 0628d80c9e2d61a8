/* strtab.c - open-addressing string table (see strtab.h). */
#include "base/strtab.h"

#include <stdlib.h>
#include <string.h>

#include "base/hash.h"

/* Grow when count would pass 7/10 of cap: probe runs stay short. */
static int over_load(size_t count, size_t cap)
{
    return count > cap / 10 * 7 + (cap % 10) * 7 / 10;
}

/* Tables start small: a sweep has two per run (the run's series, the
 * loader's tags), and 64 slots each were 2 bytes a point at 10,000 runs of
 * 10 tags x 200 steps. */
static int grow(tfb_strtab *t)
{
    size_t ncap = t->cap ? t->cap * 2 : 8;
    if (ncap < t->cap || ncap > SIZE_MAX / sizeof(tfb_strtab_slot))
        return -1;
    tfb_strtab_slot *ns = calloc(ncap, sizeof *ns);
    if (!ns)
        return -1;
    for (size_t i = 0; i < t->cap; i++) {
        const tfb_strtab_slot *e = &t->slots[i];
        if (!e->hash)
            continue;
        size_t j = (size_t)e->hash & (ncap - 1);
        while (ns[j].hash)
            j = (j + 1) & (ncap - 1);
        ns[j] = *e;
    }
    free(t->slots);
    t->slots = ns;
    t->cap = ncap;
    return 0;
}

/* The slot holding key, or the empty slot where it would go (cap > 0). */
static tfb_strtab_slot *probe(const tfb_strtab *t, const char *key,
                              size_t len, uint64_t h)
{
    size_t j = (size_t)h & (t->cap - 1);
    for (;;) {
        tfb_strtab_slot *e = &t->slots[j];
        if (!e->hash ||
            (e->hash == h && e->len == len &&
             (len == 0 || memcmp(e->key, key, len) == 0)))
            return e;
        j = (j + 1) & (t->cap - 1);
    }
}

void *tfb_strtab_get_h(const tfb_strtab *t, const char *key, size_t len,
                       uint64_t h)
{
    if (!t->cap)
        return NULL;
    tfb_strtab_slot *e = probe(t, key, len, h);
    return e->hash ? e->val : NULL;
}

void *tfb_strtab_get(const tfb_strtab *t, const char *key, size_t len)
{
    if (!t->cap)
        return NULL;
    return tfb_strtab_get_h(t, key, len, tfb_hash_bytes(key, len));
}

int tfb_strtab_put_h(tfb_strtab *t, const char *key, size_t len, uint64_t h,
                     void *val)
{
    if (!val)
        return -1;
    if (t->cap) {
        tfb_strtab_slot *e = probe(t, key, len, h);
        if (e->hash) {
            e->key = key;
            e->val = val;
            return 0;
        }
    }
    if ((!t->cap || over_load(t->count + 1, t->cap)) && grow(t) < 0)
        return -1;
    tfb_strtab_slot *e = probe(t, key, len, h);
    *e = (tfb_strtab_slot){h, key, len, val};
    t->count++;
    return 0;
}

int tfb_strtab_put(tfb_strtab *t, const char *key, size_t len, void *val)
{
    return tfb_strtab_put_h(t, key, len, tfb_hash_bytes(key, len), val);
}

int tfb_strtab_reserve(tfb_strtab *t, size_t n)
{
    while (!t->cap || over_load(n, t->cap))
        if (grow(t) < 0)
            return -1;
    return 0;
}

void tfb_strtab_free(tfb_strtab *t)
{
    free(t->slots);
    t->slots = NULL;
    t->cap = t->count = 0;
}
