/* str.c - string copies (see str.h). */
#include "base/str.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

char *tfb_strndup(const char *s, size_t n)
{
    if (n == SIZE_MAX)
        return NULL;
    char *d = malloc(n + 1);
    if (!d)
        return NULL;
    if (n)
        memcpy(d, s, n);
    d[n] = 0;
    return d;
}

char *tfb_strdup(const char *s)
{
    return tfb_strndup(s, strlen(s));
}
