/*
 * abi.h - copying the public sized structs (options, stats, and the
 * structs the library fills or reads for a caller: tfb_event, tfb_value,
 * tfb_rank_info, tfb_hparam), whose first field is their size (tfboard.h's
 * convention block). A caller built against an
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

/* The caller's sized struct src as a whole one of ours, for reading: src
 * itself when its size covers ours, else tmp (tmp_size bytes) holding
 * src's fields and zeros past them. NULL when src's size is 0. So a
 * function never reads past an older caller's struct. */
static inline const void *tfb_abi_view(void *tmp, size_t tmp_size,
                                       const void *src)
{
    size_t n;
    memcpy(&n, src, sizeof n);
    if (n < sizeof(size_t))
        return NULL;
    if (n >= tmp_size)
        return src;
    memset(tmp, 0, tmp_size);
    memcpy(tmp, src, n);
    return tmp;
}

/* The caller's size of a sized struct (0: not set). */
static inline size_t tfb_abi_size(const void *src)
{
    size_t n;
    memcpy(&n, src, sizeof n);
    return n;
}

#endif
