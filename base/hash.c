/* hash.c - FNV-1a 64 with a final mix (see hash.h for why). */
#include "base/hash.h"

/* FNV-1a 64's published offset basis and prime. */
#define FNV_OFFSET 14695981039346656037ull
#define FNV_PRIME 1099511628211ull

static uint64_t finish(uint64_t h)
{
    /* fmix64: every input bit reaches the low bits the tables mask. */
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ull;
    h ^= h >> 33;
    return h ? h : 1;
}

uint64_t tfb_hash_bytes(const void *p, size_t n)
{
    const unsigned char *s = p;
    uint64_t h = FNV_OFFSET;
    for (size_t i = 0; i < n; i++) {
        h ^= s[i];
        h *= FNV_PRIME;
    }
    return finish(h);
}

uint64_t tfb_hash_str(const char *s)
{
    uint64_t h = FNV_OFFSET;
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= FNV_PRIME;
    }
    return finish(h);
}
