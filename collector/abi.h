/*
 * abi.h - copying the public options and stats structs, whose first field
 * is their size (tfboard.h's convention block). A caller built against an
 * older header passes a smaller struct: only the fields it has are read or
 * written, the rest keep their defaults.
 */
#ifndef TFB_ABI_H
#define TFB_ABI_H

#include <stddef.h>
#include <string.h>

#include "tfboard.h"

/* Reads the caller's sized struct src over dst (which holds our defaults
 * and our own size). Returns TFB_EINVAL when src->size is 0 (not set by
 * its _init). */
static inline int tfb_abi_read(void *dst, size_t dst_size, const void *src)
{
    size_t n;
    memcpy(&n, src, sizeof n);
    if (n < sizeof(size_t))
        return TFB_EINVAL;
    if (n > dst_size)
        n = dst_size;
    memcpy((char *)dst + sizeof(size_t), (const char *)src + sizeof(size_t),
           n - sizeof(size_t));
    return 0;
}

/* Writes our struct src (src_size bytes) into the caller's dst, as far as
 * dst->size reaches; dst->size is kept. TFB_EINVAL when dst->size is 0. */
static inline int tfb_abi_write(void *dst, const void *src, size_t src_size)
{
    size_t n;
    memcpy(&n, dst, sizeof n);
    if (n < sizeof(size_t))
        return TFB_EINVAL;
    if (n > src_size)
        n = src_size;
    memcpy((char *)dst + sizeof(size_t), (const char *)src + sizeof(size_t),
           n - sizeof(size_t));
    return 0;
}

#endif
