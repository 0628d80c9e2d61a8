/* vec.c - growable array helper (see vec.h). */
#include "vec.h"

#include <stdint.h>
#include <stdlib.h>

int tfb_vec_reserve(void **v, size_t *cap, size_t elem, size_t need)
{
    if (need <= *cap)
        return 0;
    if (elem == 0)
        return -1;
    size_t max = SIZE_MAX / elem;
    if (need > max)
        return -1;
    size_t nc = *cap ? *cap : 16;
    while (nc < need)
        nc = nc > max / 2 ? max : nc * 2;
    void *nv = realloc(*v, nc * elem);
    if (!nv)
        return -1;
    *v = nv;
    *cap = nc;
    return 0;
}
