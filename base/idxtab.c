/*
 * idxtab.c - open-addressing table of indexes (idxtab.h).
 */
#include "base/idxtab.h"

#include <stdlib.h>

static int32_t *empty_slots(size_t cap)
{
    int32_t *s = malloc(cap * sizeof *s);
    if (s)
        for (size_t i = 0; i < cap; i++)
            s[i] = -1;
    return s;
}

int tfb_idxtab_reserve(tfb_idxtab *t, size_t want, tfb_idxtab_hash_fn hash,
                       const void *ctx)
{
    if (t->cap && want <= t->cap / 2)
        return 0;
    size_t cap = t->cap ? t->cap : 16;
    while (want > cap / 2) {
        if (cap > ((size_t)1 << 40) || cap > SIZE_MAX / 2 / sizeof(int32_t))
            return -1;
        cap *= 2;
    }
    int32_t *s = empty_slots(cap);
    if (!s)
        return -1;
    for (size_t k = 0; k < t->cap; k++) {
        int32_t i = t->slot[k];
        if (i < 0)
            continue;
        size_t p = (size_t)hash(ctx, i) & (cap - 1);
        while (s[p] >= 0)
            p = (p + 1) & (cap - 1);
        s[p] = i;
    }
    free(t->slot);
    t->slot = s;
    t->cap = cap;
    return 0;
}

void tfb_idxtab_set(tfb_idxtab *t, size_t pos, int32_t i)
{
    if (t->slot[pos] < 0)
        t->n++;
    t->slot[pos] = i;
}

/* Backward-shift deletion (linear probing): an entry after the hole moves
 * into it unless its home slot lies cyclically in (hole, entry]. */
void tfb_idxtab_remove(tfb_idxtab *t, size_t pos, tfb_idxtab_hash_fn hash,
                       const void *ctx)
{
    size_t mask = t->cap - 1, hole = pos;
    if (t->slot[pos] < 0)
        return;
    t->slot[hole] = -1;
    t->n--;
    for (size_t j = (hole + 1) & mask; t->slot[j] >= 0; j = (j + 1) & mask) {
        size_t home = (size_t)hash(ctx, t->slot[j]) & mask;
        /* home in (hole, j] cyclically: the entry stays */
        int stays = hole < j ? (home > hole && home <= j)
                             : (home > hole || home <= j);
        if (stays)
            continue;
        t->slot[hole] = t->slot[j];
        t->slot[j] = -1;
        hole = j;
    }
}

void tfb_idxtab_free(tfb_idxtab *t)
{
    free(t->slot);
    t->slot = NULL;
    t->cap = t->n = 0;
}
