/*
 * selection.c - the store of run selections (selection.h): at most
 * TFB_SELECTION_MAX_HELD sets of names and TFB_SELECTION_MAX_BYTES of
 * names in all, least recently used evicted first. Each held set is
 * immutable and reference-counted, so a route reads its names without
 * the store's lock while another request evicts it.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "base/vec.h"
#include "core/selection.h"
#include "tfboard.h"

struct tfb_selection {
    char id[TFB_SELECTION_ID_LEN + 1];
    size_t n;
    char **names; /* n pointers into block, in byte order */
    char *block;
    size_t bytes; /* what it costs, counted against MAX_BYTES */
    unsigned refs; /* the store's one (while held) and each pin's */
    uint64_t used; /* LRU tick of the last hold or get */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static TFB_VEC(tfb_selection *) held;
static size_t held_bytes;
static uint64_t tick;

static int by_name(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The sum over distinct names of their hashes: sorted copies of the
 * pointers make the repeats neighbours. */
static void id_of_sorted(const char *const *s, size_t n,
                         char id[TFB_SELECTION_ID_LEN + 1])
{
    uint64_t sum = 0;
    for (size_t i = 0; i < n; i++)
        if (i == 0 || strcmp(s[i], s[i - 1]) != 0)
            sum += tfb_hash_str(s[i]);
    snprintf(id, TFB_SELECTION_ID_LEN + 1, "%016llx",
             (unsigned long long)sum);
}

void tfb_selection_id(const char *const *names, size_t n,
                      char id[TFB_SELECTION_ID_LEN + 1])
{
    const char **s = malloc((n ? n : 1) * sizeof *s);
    if (!s) {
        /* Order-independent anyway; only the repeats need the sort. */
        uint64_t sum = 0;
        for (size_t i = 0; i < n; i++)
            sum += tfb_hash_str(names[i]);
        snprintf(id, TFB_SELECTION_ID_LEN + 1, "%016llx",
                 (unsigned long long)sum);
        return;
    }
    if (n) /* names may be NULL for the empty set */
        memcpy(s, names, n * sizeof *s);
    qsort(s, n, sizeof *s, by_name);
    id_of_sorted(s, n, id);
    free(s);
}

static void sel_free(tfb_selection *s)
{
    if (!s)
        return;
    free(s->names);
    free(s->block);
    free(s);
}

/* A new selection of the sorted names s[0..n), repeats dropped. */
static tfb_selection *sel_make(const char *const *s, size_t n)
{
    tfb_selection *sel = calloc(1, sizeof *sel);
    if (!sel)
        return NULL;
    size_t bytes = 0, m = 0;
    for (size_t i = 0; i < n; i++)
        if (i == 0 || strcmp(s[i], s[i - 1]) != 0) {
            bytes += strlen(s[i]) + 1;
            m++;
        }
    sel->names = malloc((m ? m : 1) * sizeof *sel->names);
    sel->block = malloc(bytes ? bytes : 1);
    if (!sel->names || !sel->block) {
        sel_free(sel);
        return NULL;
    }
    char *p = sel->block;
    for (size_t i = 0; i < n; i++)
        if (i == 0 || strcmp(s[i], s[i - 1]) != 0) {
            size_t len = strlen(s[i]) + 1;
            memcpy(p, s[i], len);
            sel->names[sel->n++] = p;
            p += len;
        }
    sel->bytes = sizeof *sel + m * sizeof *sel->names + bytes;
    id_of_sorted(s, n, sel->id);
    return sel;
}

/* Drops the store's reference of held[i] (lock held). */
static void evict_at(size_t i)
{
    tfb_selection *s = held.v[i];
    held.v[i] = held.v[--held.n];
    held_bytes -= s->bytes;
    if (--s->refs == 0)
        sel_free(s);
}

static size_t lru_index(void)
{
    size_t at = 0;
    for (size_t i = 1; i < held.n; i++)
        if (held.v[i]->used < held.v[at]->used)
            at = i;
    return at;
}

/* Index of the held selection with that id, or held.n (lock held). */
static size_t find(const char *id)
{
    for (size_t i = 0; i < held.n; i++)
        if (strcmp(held.v[i]->id, id) == 0)
            return i;
    return held.n;
}

static int same_names(const tfb_selection *a, const tfb_selection *b)
{
    if (a->n != b->n)
        return 0;
    for (size_t i = 0; i < a->n; i++)
        if (strcmp(a->names[i], b->names[i]) != 0)
            return 0;
    return 1;
}

int tfb_selection_hold(const char *const *names, size_t n,
                       char id[TFB_SELECTION_ID_LEN + 1])
{
    if (n > TFB_SELECTION_MAX_RUNS)
        return TFB_EINVAL;
    const char **s = malloc((n ? n : 1) * sizeof *s);
    if (!s)
        return TFB_ENOMEM;
    if (n) /* names may be NULL for the empty set */
        memcpy(s, names, n * sizeof *s);
    qsort(s, n, sizeof *s, by_name);
    /* Built outside the lock: sorting and copying 100,000 names is the
     * costly part, and other requests look selections up meanwhile. */
    tfb_selection *sel = sel_make(s, n);
    free(s);
    if (!sel)
        return TFB_ENOMEM;
    if (sel->bytes > TFB_SELECTION_MAX_BYTES) {
        sel_free(sel);
        return TFB_EINVAL;
    }
    memcpy(id, sel->id, sizeof sel->id);
    pthread_mutex_lock(&lock);
    size_t at = find(sel->id);
    if (at < held.n && same_names(held.v[at], sel)) {
        held.v[at]->used = ++tick;
        pthread_mutex_unlock(&lock);
        sel_free(sel);
        return 0;
    }
    /* Another set with the same id (a hash collision, or a crafted one):
     * the newer wins, as a changed file replaces its run. */
    if (at < held.n)
        evict_at(at);
    while (held.n && (held.n >= TFB_SELECTION_MAX_HELD ||
                      held_bytes + sel->bytes > TFB_SELECTION_MAX_BYTES))
        evict_at(lru_index());
    if (tfb_vec_push(&held, sel) < 0) {
        pthread_mutex_unlock(&lock);
        sel_free(sel);
        return TFB_ENOMEM;
    }
    sel->refs = 1;
    sel->used = ++tick;
    held_bytes += sel->bytes;
    pthread_mutex_unlock(&lock);
    return 0;
}

tfb_selection *tfb_selection_get(const char *id)
{
    tfb_selection *s = NULL;
    pthread_mutex_lock(&lock);
    size_t at = find(id);
    if (at < held.n) {
        s = held.v[at];
        s->refs++;
        s->used = ++tick;
    }
    pthread_mutex_unlock(&lock);
    return s;
}

void tfb_selection_release(tfb_selection *s)
{
    if (!s)
        return;
    pthread_mutex_lock(&lock);
    int last = --s->refs == 0;
    pthread_mutex_unlock(&lock);
    if (last)
        sel_free(s);
}

size_t tfb_selection_count(const tfb_selection *s) { return s->n; }

const char *tfb_selection_name(const tfb_selection *s, size_t i)
{
    return i < s->n ? s->names[i] : NULL;
}

int tfb_selection_has(const tfb_selection *s, const char *name)
{
    size_t lo = 0, hi = s->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(s->names[mid], name);
        if (c == 0)
            return 1;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return 0;
}

size_t tfb_selection_held(void)
{
    pthread_mutex_lock(&lock);
    size_t n = held.n;
    pthread_mutex_unlock(&lock);
    return n;
}
