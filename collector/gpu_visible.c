/*
 * gpu_visible.c - CUDA_VISIBLE_DEVICES as CUDA reads it (gpu_visible.h).
 */
#include "collector/gpu_visible.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

static int same(const tfb_visible_entry *a, const tfb_visible_entry *b)
{
    return a->is_uuid == b->is_uuid &&
           (a->is_uuid ? strcmp(a->uuid, b->uuid) == 0 : a->index == b->index);
}

/* One entry of len bytes at p (blanks trimmed): 0, or -1 when it is not
 * an index nor a UUID. */
static int parse_one(const char *p, size_t len, tfb_visible_entry *e)
{
    memset(e, 0, sizeof *e);
    if (len == 0)
        return -1;
    int digits = 1;
    for (size_t i = 0; i < len; i++)
        if (!isdigit((unsigned char)p[i]))
            digits = 0;
    if (digits) {
        if (len > 6) /* no machine has a million GPUs */
            return -1;
        unsigned v = 0;
        for (size_t i = 0; i < len; i++)
            v = v * 10 + (unsigned)(p[i] - '0');
        e->index = v;
        return 0;
    }
    if (len < 5 || len >= TFB_VISIBLE_UUID_MAX ||
        (strncmp(p, "GPU-", 4) != 0 && strncmp(p, "MIG-", 4) != 0))
        return -1;
    for (size_t i = 4; i < len; i++)
        if (!isxdigit((unsigned char)p[i]) && p[i] != '-')
            return -1; /* "MIG-GPU-<uuid>/1/0", the pre-R470 form: no */
    e->is_uuid = 1;
    memcpy(e->uuid, p, len);
    e->uuid[len] = 0;
    return 0;
}

int tfb_visible_parse(const char *s, tfb_visible_entry *out, int max)
{
    int n = 0;
    while (s && n < max) {
        const char *end = strchr(s, ',');
        size_t len = end ? (size_t)(end - s) : strlen(s);
        const char *p = s;
        while (len && isspace((unsigned char)*p)) {
            p++;
            len--;
        }
        while (len && isspace((unsigned char)p[len - 1]))
            len--;
        if (parse_one(p, len, &out[n]) < 0)
            break;
        int dup = 0;
        for (int i = 0; i < n; i++)
            dup |= same(&out[i], &out[n]);
        if (dup)
            break;
        n++;
        s = end ? end + 1 : NULL;
    }
    return n;
}
