/* vec.c - the growth behind the typed vector (see vec.h). */
#include "base/vec.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void *tfb_vec__grow(void *v, size_t *cap, size_t elem, size_t need)
{
    if (need <= *cap)
        return v;
    if (elem == 0)
        return v;
    size_t max = SIZE_MAX / elem;
    if (need > max)
        return v;
    /* 16 the first time, but no more than 4 KiB of large elements: a
     * vector of 1 KiB records that mostly holds one or two (the alerts'
     * conditions and kept precursors, one per run) would otherwise take
     * 16 KiB each, and fresh memory costs page faults to first touch. */
    size_t nc = *cap ? *cap : 16;
    if (!*cap && elem > 256)
        nc = elem >= 4096 ? 1 : 4096 / elem;
    while (nc < need)
        nc = nc > max / 2 ? max : nc * 2;
    void *nv = realloc(v, nc * elem);
    if (!nv)
        return v;
    *cap = nc;
    return nv;
}

void *tfb_vec__trim(void *v, size_t *cap, size_t elem, size_t n)
{
    if (n == 0 || n >= *cap)
        return v;
    void *nv = realloc(v, n * elem);
    if (!nv)
        return v;
    *cap = n;
    return nv;
}

int tfb_vec__setcap(void *vfield, size_t *cap, size_t elem, size_t n)
{
    if (n == 0)
        n = 1; /* realloc(p, 0) may free p: keep one element instead */
    if (elem == 0 || n > SIZE_MAX / elem)
        return -1;
    void *v;
    memcpy(&v, vfield, sizeof v);
    void *nv = realloc(v, n * elem);
    if (!nv)
        return -1;
    memcpy(vfield, &nv, sizeof nv);
    if (cap)
        *cap = n;
    return 0;
}

