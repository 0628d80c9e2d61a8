/* buf.c - the growable byte string (see buf.h). */
#include "base/buf.h"

#include <stdlib.h>
#include <string.h>

#include "base/vec.h"

void tfb_buf_put(tfb_buf *b, const void *s, size_t n)
{
    if (b->failed)
        return;
    /* n + 1 cannot wrap for a real object; + 1 keeps the NUL's room. */
    if (n >= (size_t)-1 - b->n || tfb_vec_need(b, b->n + n + 1) < 0) {
        b->failed = 1;
        return;
    }
    if (n)
        memcpy(b->v + b->n, s, n);
    b->n += n;
    b->v[b->n] = '\0';
}

void tfb_buf_puts(tfb_buf *b, const char *s)
{
    tfb_buf_put(b, s, strlen(s));
}

char *tfb_buf_take(tfb_buf *b)
{
    if (!b->failed && !b->v)
        tfb_buf_put(b, NULL, 0); /* "" rather than NULL for no bytes */
    char *s = b->failed ? NULL : b->v;
    if (s)
        b->v = NULL; /* the caller's now: not freed below */
    tfb_buf_free(b);
    return s;
}

void tfb_buf_free(tfb_buf *b)
{
    free(b->v);
    b->v = NULL;
    b->n = b->cap = 0;
    b->failed = 0;
}
