/*
 * gpu_builder.c - the in-memory GPU trace and the builder that the trace
 * loaders fill: interned strings, spans, runtime calls, devices, and
 * correlation ids made unique across files.
 */
#include <stdlib.h>
#include <string.h>

#include "gpu_trace.h"
#include "hash.h"

struct tfb_gpu_builder {
    tfb_gpu_trace *t;
    size_t cap_spans, cap_calls, cap_devices, cap_strings;
    /* string intern table: indexes into t->strings, -1 = empty */
    int32_t *htab;
    size_t hcap;
    int64_t corr_base;
    int64_t corr_max; /* largest raw id seen in the current file */
};

const char *tfb_gpu_str(const tfb_gpu_trace *t, int32_t i,
                        const char *fallback)
{
    if (!t || i < 0 || (size_t)i >= t->nstrings)
        return fallback;
    return t->strings[i];
}

static const char *const k_copy_labels[] = {
    "Unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA",
    "AtoD",    "DtoA", "DtoD", "HtoH", "PtoP"};

const char *tfb_gpu_copy_kind_label(int k)
{
    if (k < 0 || k >= (int)(sizeof k_copy_labels / sizeof k_copy_labels[0]))
        return "Unknown";
    return k_copy_labels[k];
}

int tfb_gpu_copy_kind_from_text(const char *s, size_t len)
{
    for (int k = 1; k < (int)(sizeof k_copy_labels / sizeof k_copy_labels[0]);
         k++) {
        size_t ll = strlen(k_copy_labels[k]);
        for (size_t i = 0; i + ll <= len; i++)
            if (memcmp(s + i, k_copy_labels[k], ll) == 0)
                return k;
    }
    return 0;
}

/* ------------------------------------------------------------------------
 * Builder
 * ---------------------------------------------------------------------- */
static int grow(void **v, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return 0;
    size_t nc = *cap ? *cap * 2 : 64;
    while (nc < need)
        nc *= 2;
    void *p = realloc(*v, nc * elem);
    if (!p)
        return -1;
    *v = p;
    *cap = nc;
    return 0;
}

static int rehash(tfb_gpu_builder *b)
{
    size_t nc = b->hcap ? b->hcap * 2 : 1024;
    int32_t *nt = malloc(nc * sizeof *nt);
    if (!nt)
        return -1;
    for (size_t i = 0; i < nc; i++)
        nt[i] = -1;
    for (size_t i = 0; i < b->t->nstrings; i++) {
        const char *s = b->t->strings[i];
        size_t j = (size_t)tfb_hash_bytes(s, strlen(s)) & (nc - 1);
        while (nt[j] >= 0)
            j = (j + 1) & (nc - 1);
        nt[j] = (int32_t)i;
    }
    free(b->htab);
    b->htab = nt;
    b->hcap = nc;
    return 0;
}

int32_t tfb_gpu_builder_str(tfb_gpu_builder *b, const char *s, size_t len)
{
    if (!s)
        return -1;
    if ((b->t->nstrings + 1) * 2 > b->hcap && rehash(b) != 0)
        return -1;
    size_t j = (size_t)tfb_hash_bytes(s, len) & (b->hcap - 1);
    while (b->htab[j] >= 0) {
        const char *c = b->t->strings[b->htab[j]];
        if (strlen(c) == len && memcmp(c, s, len) == 0)
            return b->htab[j];
        j = (j + 1) & (b->hcap - 1);
    }
    if (grow((void **)&b->t->strings, &b->cap_strings, b->t->nstrings + 1,
             sizeof *b->t->strings))
        return -1;
    char *copy = malloc(len + 1);
    if (!copy)
        return -1;
    memcpy(copy, s, len);
    copy[len] = '\0';
    int32_t idx = (int32_t)b->t->nstrings++;
    b->t->strings[idx] = copy;
    b->htab[j] = idx;
    return idx;
}

int tfb_gpu_builder_span(tfb_gpu_builder *b, const tfb_gpu_span *s)
{
    /* Malformed or nonsense times are skipped: before the epoch, ending
     * before starting, or lasting more than a week (sums of durations must
     * stay far from overflowing). */
    if (s->start < 0 || s->end < s->start ||
        s->end - s->start > INT64_C(7) * 86400 * 1000000000)
        return 0;
    if (grow((void **)&b->t->spans, &b->cap_spans, b->t->nspans + 1,
             sizeof *b->t->spans))
        return TFB_ENOMEM;
    tfb_gpu_span *d = &b->t->spans[b->t->nspans++];
    *d = *s;
    if (d->correlation >= 0) {
        if (d->correlation > b->corr_max)
            b->corr_max = d->correlation;
        d->correlation += b->corr_base;
    }
    if (d->device >= 0 && d->kind <= TFB_GPU_MEMSET)
        return tfb_gpu_builder_device(b, d->device, -1, -1);
    return 0;
}

int tfb_gpu_builder_call(tfb_gpu_builder *b, const tfb_gpu_call *c)
{
    if (c->correlation < 0)
        return 0;
    if (grow((void **)&b->t->calls, &b->cap_calls, b->t->ncalls + 1,
             sizeof *b->t->calls))
        return TFB_ENOMEM;
    tfb_gpu_call *d = &b->t->calls[b->t->ncalls++];
    *d = *c;
    if (d->correlation > b->corr_max)
        b->corr_max = d->correlation;
    d->correlation += b->corr_base;
    return 0;
}

int tfb_gpu_builder_device(tfb_gpu_builder *b, int32_t id, int32_t name,
                           int32_t sm_count)
{
    tfb_gpu_trace *t = b->t;
    for (size_t i = 0; i < t->ndevices; i++) {
        if (t->devices[i].id == id) {
            if (name >= 0)
                t->devices[i].name = name;
            if (sm_count >= 0)
                t->devices[i].sm_count = sm_count;
            return 0;
        }
    }
    if (grow((void **)&t->devices, &b->cap_devices, t->ndevices + 1,
             sizeof *t->devices))
        return TFB_ENOMEM;
    size_t pos = t->ndevices;
    while (pos > 0 && t->devices[pos - 1].id > id) {
        t->devices[pos] = t->devices[pos - 1];
        pos--;
    }
    t->devices[pos].id = id;
    t->devices[pos].name = name;
    t->devices[pos].sm_count = sm_count;
    t->ndevices++;
    return 0;
}

int64_t tfb_gpu_builder_corr_base(const tfb_gpu_builder *b)
{
    return b->corr_base;
}

void tfb_gpu_trace_free(tfb_gpu_trace *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->nstrings; i++)
        free(t->strings[i]);
    free(t->strings);
    free(t->spans);
    free(t->calls);
    free(t->devices);
    free(t);
}


int tfb_gpu_builder_new(tfb_gpu_builder **out)
{
    tfb_gpu_builder *b = calloc(1, sizeof *b);
    if (!b)
        return TFB_ENOMEM;
    b->t = calloc(1, sizeof *b->t);
    if (!b->t) {
        free(b);
        return TFB_ENOMEM;
    }
    *out = b;
    return 0;
}

void tfb_gpu_builder_begin_file(tfb_gpu_builder *b)
{
    b->corr_max = -1;
}

void tfb_gpu_builder_end_file(tfb_gpu_builder *b, int read)
{
    if (read)
        b->t->files_read++;
    else
        b->t->files_skipped++;
    /* The next file's correlation ids start above this file's. */
    if (b->corr_max >= 0)
        b->corr_base += b->corr_max + 1;
}

static int cmp_span(const void *a, const void *b)
{
    const tfb_gpu_span *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return (x->end > y->end) - (x->end < y->end);
}

static int cmp_call(const void *a, const void *b)
{
    const tfb_gpu_call *x = a, *y = b;
    return (x->correlation > y->correlation) -
           (x->correlation < y->correlation);
}

tfb_gpu_trace *tfb_gpu_builder_finish(tfb_gpu_builder *b)
{
    tfb_gpu_trace *t = b->t;
    free(b->htab);
    free(b);
    /* qsort's base may not be NULL, even for zero elements. */
    if (t->nspans)
        qsort(t->spans, t->nspans, sizeof *t->spans, cmp_span);
    if (t->ncalls)
        qsort(t->calls, t->ncalls, sizeof *t->calls, cmp_call);
    t->refs = 1;
    return t;
}

void tfb_gpu_builder_free(tfb_gpu_builder *b)
{
    if (!b)
        return;
    tfb_gpu_trace_free(b->t);
    free(b->htab);
    free(b);
}
