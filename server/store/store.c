/*
 * store.c - the in-memory store (see store.h for the contract).
 *
 * Concurrency: each series has one writer (the loader thread that owns
 * its run) and any number of readers. The writer fills slots past the
 * published count without a lock and then publishes the new count with a
 * release store; readers load it with acquire, so they see whole points.
 * Arrays move only when they grow, are trimmed or reset, and that happens
 * under the series' write lock, which waits for pinned readers. The lock
 * prefers writers so that a busy query load cannot starve loading.
 * Scalars: the raw tail is filled the same way; sealing it into blocks
 * (and re-encoding a short last block) is done outside the lock, and only
 * the copy into the block arena and the new counts take the write lock.
 * A scalar reader decodes under the read lock and drops it at once.
 * An observed series' state (the scalar observer, store.h) is fed each
 * sealed block under the same write lock (a few microseconds a block), so
 * a reader's copy of it always matches the sealed points.
 */
#include "store/store.h"

#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "store/media_index.h"
#include "store/scalar_codec.h"
#include "store/storage.h"
#include "store/value_decoder.h"
#include "base/str.h"
#include "base/strtab.h"
#include "base/vec.h"

/* A sweep has 500,000 series of 100 points, so the struct is kept small:
 * the kinds' fields share a union, the four names share one allocation
 * (found by offsets, not pointers), the raw tail is one allocation, a
 * one-block series has no block index and the non-finite statistics are
 * allocated with the first such point. */
struct tfb_series {
    tfb_run *run;
    tfb_series_kind kind;
    _Atomic int has_f64;    /* SCALAR: a value was a double, no float */
    /* names[] holds tag, plugin, display and desc, each NUL-terminated,
     * the others at these offsets (so the tag is plugin_off - 1 bytes) */
    uint32_t plugin_off, display_off, desc_off;
    atomic_flag nf_lock;       /* guards nf; held for a few stores */
    _Atomic size_t count;
    union {
        /* SCALAR: sealed blocks (scalar_codec.h) in enc[0, enc_len),
         * holding the first `sealed` points; the last block starts at
         * last_off and holds last_n points (fewer than a block after a
         * trim: the next seal re-encodes it with the new points). The
         * points after them wait raw in the tail (t_n of t_cap, at most a
         * block): one allocation of t_cap steps, then t_cap walls, then
         * t_cap values (tail_steps() and the others). Every block but the
         * last holds TFB_SCALAR_BLOCK points, so point i is in block
         * i / TFB_SCALAR_BLOCK, which starts at byte block_off(): a read
         * from the middle of a long series goes straight to its block.
         * boff.n counts the blocks; their offsets are kept only once
         * there are two (the first starts at 0), so the many one-block
         * series of a sweep allocate no index. `unsorted` is set once
         * a step comes below the one before it (last_step); while it is
         * clear the blocks are in step order and a read by steps finds
         * its first block by bisection. */
        struct {
            uint8_t *enc;
            size_t enc_len, enc_cap, sealed, last_off;
            uint32_t last_n, t_n, t_cap;
            void *tail;
            TFB_VEC(size_t) boff;
            int64_t last_step;  /* loader only */
            int pend_unsorted;  /* loader only; into unsorted at a seal */
            int unsorted;       /* the sealed points; under the lock */
        };
        /* the other kinds: arrays of cap points */
        struct {
            size_t cap;
            int64_t *step;
            double *wall;
            tfb_hist_point *hist;
            TFB_VEC(tfb_hist_bucket) buckets; /* every point's, in order */
            uint64_t *text_off;
            uint32_t *text_len;
            TFB_VEC(char) text_data; /* every point's text, in order */
            tfb_numerics_point *numerics;
        };
    };
    tfb_nonfinite_stats *nf;   /* NULL until a non-finite point */
    union {
        /* SCALAR the scalar observer attached to: its state, fed the
         * sealed points (under lock); NULL otherwise */
        void *obs;
        /* the other kinds: the series' own lock (lock_of) */
        pthread_rwlock_t *own_lock;
    };
    /* the names, NUL-terminated one after the other, in the series' own
     * allocation: a malloc less per series (100,000 runs have 500,000) */
    char names[];
};

_Static_assert(TFB_SERIES_TAIL_MAX == TFB_SCALAR_BLOCK,
               "a series' tail is at most one block");

/* The series' lock (lock_of). A scalar series' lock is one of
 * SCALAR_STRIPES shared by the scalar series whose addresses hash to it:
 * 56 bytes in each of 500,000 series were 0.6 B of a sweep's point. That
 * is safe because no scalar lock is ever held while another lock of the
 * store is taken: a scalar pin drops its lock before returning, the
 * readers that decode under it (scalar_range, in_steps, observed, bytes)
 * call nothing that locks, and the loader holds one series' lock at a
 * time (the observer's hooks may not call into the store). So two
 * series sharing a stripe only ever wait for each other's microseconds,
 * never in a cycle. The other kinds keep a lock of their own: their pin
 * holds the read lock for a whole query, during which the reader may
 * pin other series, and a stripe shared with one of those would deadlock
 * behind a waiting writer. */
#define SCALAR_STRIPES 1024
static pthread_rwlock_t g_stripes[SCALAR_STRIPES];
static pthread_once_t g_stripes_once = PTHREAD_ONCE_INIT;

/* A lock that prefers the waiting writer, so a busy query load cannot
 * starve loading. */
static void rwlock_init_writer_first(pthread_rwlock_t *l)
{
    pthread_rwlockattr_t attr;
    pthread_rwlockattr_init(&attr);
    pthread_rwlockattr_setkind_np(&attr,
        PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
    pthread_rwlock_init(l, &attr);
    pthread_rwlockattr_destroy(&attr);
}

static void stripes_init(void)
{
    for (size_t i = 0; i < SCALAR_STRIPES; i++)
        rwlock_init_writer_first(&g_stripes[i]);
}

static pthread_rwlock_t *lock_of(const tfb_series *s)
{
    if (s->kind != TFB_SERIES_SCALAR)
        return s->own_lock;
    /* Fibonacci hashing of the address (allocations are 16-aligned) */
    uint64_t h = (uint64_t)(uintptr_t)s * UINT64_C(0x9e3779b97f4a7c15);
    return &g_stripes[h >> 54]; /* the top 10 bits: SCALAR_STRIPES */
}

/* The raw tail's columns in its one allocation (see the struct). */
static int64_t *tail_steps(const tfb_series *s)
{
    return (int64_t *)s->tail;
}

static double *tail_walls(const tfb_series *s)
{
    return (double *)s->tail + s->t_cap;
}

static double *tail_values(const tfb_series *s)
{
    return (double *)s->tail + 2 * (size_t)s->t_cap;
}

/* Where block b of a scalar series starts in enc (b < boff.n). */
static size_t block_off(const tfb_series *s, size_t b)
{
    return b ? s->boff.v[b] : 0;
}

/* The scalar observer (store.h), set before any store is created. */
static const tfb_scalar_observer *_Atomic g_observer;

void tfb_store_set_scalar_observer(const tfb_scalar_observer *o)
{
    atomic_store(&g_observer, o);
}

/* A run's event times (tfb_run_note_event); none yet: NaN walls and
 * INT64_MIN as the step. */
typedef struct run_times {
    double first_wall, last_wall;
    int64_t max_step;
} run_times;
#define NO_TIMES ((run_times){NAN, NAN, INT64_MIN})

/* A run's note: its key and text (tfb_run_set_note). */
typedef struct run_note {
    char *key, *text;
} run_note;

/* A kind with at most this many series in a run is searched in its
 * vector: its table of 8 slots was 272 B of a sweep's 5-tag run. */
#define SERIES_SCAN_MAX 8

struct tfb_run {
    tfb_store *store;
    char *name, *dir;
    pthread_mutex_t lock; /* series lists, files, traces, times */
    TFB_VEC(tfb_series *) series[TFB_SERIES_KIND_COUNT];
    /* tag -> series, per kind (keys: each series' own tag copy), built
     * when the kind passes SERIES_SCAN_MAX series (before, none: the
     * vector is scanned): finding or adding a series is O(1), so a run
     * with a million tags loads in linear time. The kinds' tables are
     * one allocation made with the first (NULL before: four empty
     * tables were 96 B of each run of a sweep). */
    tfb_strtab *series_idx;
    run_times times;
    char **traces;
    size_t n_traces;
    tfb_file_info *files;
    size_t n_files;
    TFB_VEC(tfb_plugin_record) records; /* under lock */
    TFB_VEC(run_note) notes;            /* under lock */
    /* where the run's images lie (own lock); NULL until the run's first
     * image (tfb_run_media_to_add): 200 B a run that has none */
    tfb_media_index *_Atomic media;
    /* the plugin value decoders' states (value_decoder.h), by decoder
     * number; NULL until the run's first plugin value (under lock) */
    void **dec_state;
    /* tfb_run_generation: moved by run_changed after each change */
    _Atomic uint64_t gen;
};

struct tfb_store {
    char *logdir;
    pthread_mutex_t lock; /* runs list, progress */
    TFB_VEC(tfb_run *) runs;
    tfb_strtab run_idx; /* name -> run (keys: each run's own name) */
    _Atomic uint64_t generation;
    tfb_load_progress progress;
    /* what the storage backend said of itself after the last reload */
    tfb_storage_status storage_info;
    int has_storage_info;
    void (*reload_fn)(void *);
    void *reload_ctx;
    void (*owned_free)(void *); /* tfb_store_own */
    void *owned;
};

/* The statistics lock: held for a handful of stores or one copy, so a
 * spin costs less than a mutex's 40 bytes in each of 100,000 series. */
static void nf_acquire(tfb_series *s)
{
    while (atomic_flag_test_and_set_explicit(&s->nf_lock,
                                             memory_order_acquire))
        sched_yield();
}

static void nf_release(tfb_series *s)
{
    atomic_flag_clear_explicit(&s->nf_lock, memory_order_release);
}

/* ---- store ---------------------------------------------------------- */

int tfb_store_create(tfb_store **out, const char *logdir)
{
    if (!out || !logdir)
        return TFB_EINVAL;
    tfb_store *s = calloc(1, sizeof *s);
    if (!s)
        return TFB_ENOMEM;
    s->logdir = tfb_strndup(logdir, strlen(logdir));
    if (!s->logdir) {
        free(s);
        return TFB_ENOMEM;
    }
    pthread_mutex_init(&s->lock, NULL);
    pthread_once(&g_stripes_once, stripes_init);
    *out = s;
    return 0;
}

static void series_free(tfb_series *se)
{
    if (se->kind == TFB_SERIES_SCALAR) {
        tfb_vec_free(&se->boff);
        free(se->enc);
        free(se->tail);
    } else {
        free(se->step);
        free(se->wall);
        free(se->hist);
        tfb_vec_free(&se->buckets);
        free(se->text_off);
        free(se->text_len);
        tfb_vec_free(&se->text_data);
        free(se->numerics);
    }
    free(se->nf);
    if (se->kind == TFB_SERIES_SCALAR) {
        if (se->obs)
            atomic_load(&g_observer)->detach(se->obs);
    } else if (se->own_lock) {
        pthread_rwlock_destroy(se->own_lock);
        free(se->own_lock);
    }
    free(se);
}

static void run_free(tfb_run *r)
{
    for (int k = 0; k < TFB_SERIES_KIND_COUNT; k++) {
        for (size_t i = 0; i < r->series[k].n; i++)
            series_free(r->series[k].v[i]);
        tfb_vec_free(&r->series[k]);
        if (r->series_idx)
            tfb_strtab_free(&r->series_idx[k]);
    }
    tfb_strv_free(r->traces, r->n_traces);
    tfb_file_infos_free(r->files, r->n_files);
    tfb_plugin_records_free(r->records.v, r->records.n);
    for (size_t i = 0; i < r->notes.n; i++) {
        free(r->notes.v[i].key);
        free(r->notes.v[i].text);
    }
    tfb_vec_free(&r->notes);
    free(r->series_idx);
    tfb_media_index_destroy(r->media);
    if (r->dec_state) {
        size_t nd;
        const tfb_value_decoder *const *d = tfb_value_decoders(&nd);
        for (size_t i = 0; i < nd; i++)
            if (r->dec_state[i])
                d[i]->state_free(r->dec_state[i]);
        free(r->dec_state);
    }
    pthread_mutex_destroy(&r->lock);
    free(r->name);
    free(r->dir);
    free(r);
}

void tfb_store_destroy(tfb_store *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->runs.n; i++)
        run_free(s->runs.v[i]);
    tfb_vec_free(&s->runs);
    tfb_strtab_free(&s->run_idx);
    pthread_mutex_destroy(&s->lock);
    if (s->owned_free)
        s->owned_free(s->owned);
    free(s->logdir);
    free(s);
}

void tfb_store_own(tfb_store *s, void *obj, void (*free_fn)(void *))
{
    if (s->owned_free)
        s->owned_free(s->owned);
    s->owned = obj;
    s->owned_free = free_fn;
}

void tfb_store_set_storage_info(tfb_store *s, const tfb_storage_status *st)
{
    pthread_mutex_lock(&s->lock);
    s->has_storage_info = st != NULL;
    if (st)
        s->storage_info = *st;
    pthread_mutex_unlock(&s->lock);
}

int tfb_store_storage_info(tfb_store *s, tfb_storage_status *out)
{
    pthread_mutex_lock(&s->lock);
    int has = s->has_storage_info;
    if (has)
        *out = s->storage_info;
    pthread_mutex_unlock(&s->lock);
    return has ? 0 : TFB_ENOENT;
}

void tfb_store_set_reload_hook(tfb_store *s, void (*fn)(void *), void *ctx)
{
    pthread_mutex_lock(&s->lock);
    s->reload_fn = fn;
    s->reload_ctx = ctx;
    pthread_mutex_unlock(&s->lock);
}

int tfb_store_request_reload(tfb_store *s)
{
    pthread_mutex_lock(&s->lock);
    void (*fn)(void *) = s->reload_fn;
    void *ctx = s->reload_ctx;
    if (fn)
        fn(ctx);
    pthread_mutex_unlock(&s->lock);
    return fn ? 0 : TFB_ESTATE;
}

const char *tfb_store_logdir(const tfb_store *s)
{
    return s->logdir;
}

uint64_t tfb_store_generation(const tfb_store *s)
{
    return atomic_load_explicit(&((tfb_store *)s)->generation,
                                memory_order_acquire);
}

void tfb_store_bump_generation(tfb_store *s)
{
    atomic_fetch_add_explicit(&s->generation, 1, memory_order_acq_rel);
}

void tfb_store_progress(const tfb_store *cs, tfb_load_progress *out)
{
    tfb_store *s = (tfb_store *)cs;
    pthread_mutex_lock(&s->lock);
    *out = s->progress;
    pthread_mutex_unlock(&s->lock);
}

void tfb_store_set_progress(tfb_store *s, const tfb_load_progress *p)
{
    pthread_mutex_lock(&s->lock);
    s->progress = *p;
    pthread_mutex_unlock(&s->lock);
}

typedef struct run_key {
    tfb_run *run;
    double first;
} run_key;

static int run_key_cmp(const void *a, const void *b)
{
    const run_key *x = a, *y = b;
    int xn = isnan(x->first), yn = isnan(y->first);
    if (xn != yn)
        return xn - yn; /* runs with no event yet go last */
    if (!xn && x->first != y->first)
        return x->first < y->first ? -1 : 1;
    return strcmp(x->run->name, y->run->name);
}

int tfb_store_runs(tfb_store *s, tfb_run ***out, size_t *n)
{
    pthread_mutex_lock(&s->lock);
    size_t cnt = s->runs.n;
    run_key *keys = malloc((cnt ? cnt : 1) * sizeof *keys);
    tfb_run **v = malloc((cnt ? cnt : 1) * sizeof *v);
    if (!keys || !v) {
        pthread_mutex_unlock(&s->lock);
        free(keys);
        free(v);
        return TFB_ENOMEM;
    }
    for (size_t i = 0; i < cnt; i++)
        keys[i].run = s->runs.v[i];
    pthread_mutex_unlock(&s->lock);
    for (size_t i = 0; i < cnt; i++)
        keys[i].first = tfb_run_first_wall(keys[i].run);
    qsort(keys, cnt, sizeof *keys, run_key_cmp);
    for (size_t i = 0; i < cnt; i++)
        v[i] = keys[i].run;
    free(keys);
    *out = v;
    *n = cnt;
    return 0;
}

size_t tfb_store_run_count(tfb_store *s)
{
    pthread_mutex_lock(&s->lock);
    size_t n = s->runs.n;
    pthread_mutex_unlock(&s->lock);
    return n;
}

tfb_run *tfb_store_find_run(tfb_store *s, const char *name)
{
    size_t len = strlen(name);
    uint64_t h = tfb_hash_bytes(name, len);
    pthread_mutex_lock(&s->lock);
    tfb_run *found = tfb_strtab_get_h(&s->run_idx, name, len, h);
    pthread_mutex_unlock(&s->lock);
    return found;
}

int tfb_store_get_run(tfb_store *s, const char *name, tfb_run **out)
{
    tfb_run *r = tfb_store_find_run(s, name);
    if (r) {
        *out = r;
        return 0;
    }
    r = calloc(1, sizeof *r);
    if (!r)
        return TFB_ENOMEM;
    r->store = s;
    r->name = tfb_strndup(name, strlen(name));
    r->dir = tfb_storage_join(s->logdir, name);
    if (!r->name || !r->dir) {
        free(r->name);
        free(r->dir);
        free(r);
        return TFB_ENOMEM;
    }
    pthread_mutex_init(&r->lock, NULL);
    r->times = NO_TIMES;
    pthread_mutex_lock(&s->lock);
    if (tfb_vec_need(&s->runs, s->runs.n + 1) < 0 ||
        tfb_strtab_put(&s->run_idx, r->name, strlen(r->name), r) < 0) {
        pthread_mutex_unlock(&s->lock);
        run_free(r);
        return TFB_ENOMEM;
    }
    s->runs.v[s->runs.n++] = r;
    pthread_mutex_unlock(&s->lock);
    tfb_store_bump_generation(s);
    *out = r;
    return 0;
}

/* ---- runs ----------------------------------------------------------- */

/* After a change to r's data is made visible (tfb_run_generation). */
static void run_changed(tfb_run *r)
{
    atomic_fetch_add_explicit(&r->gen, 1, memory_order_release);
}

void tfb_run_points_published(tfb_run *r)
{
    run_changed(r);
}

void tfb_run_generation_prefetch(const tfb_run *r)
{
    __builtin_prefetch(&r->gen);
}

uint64_t tfb_run_generation(const tfb_run *r)
{
    return atomic_load_explicit(&((tfb_run *)r)->gen, memory_order_acquire);
}

const char *tfb_run_name(const tfb_run *r) { return r->name; }
const char *tfb_run_dir(const tfb_run *r) { return r->dir; }
tfb_store *tfb_run_store(const tfb_run *r) { return r->store; }

/* The run's times as one consistent copy, under its lock. */
static run_times times_of(const tfb_run *cr)
{
    tfb_run *r = (tfb_run *)cr;
    pthread_mutex_lock(&r->lock);
    run_times t = r->times;
    pthread_mutex_unlock(&r->lock);
    return t;
}

double tfb_run_first_wall(const tfb_run *r) { return times_of(r).first_wall; }
double tfb_run_last_wall(const tfb_run *r) { return times_of(r).last_wall; }
int64_t tfb_run_max_step(const tfb_run *r) { return times_of(r).max_step; }

void tfb_run_note_event(tfb_run *r, double wall, int64_t step)
{
    int moved = 0;
    pthread_mutex_lock(&r->lock);
    if (isfinite(wall)) {
        if (isnan(r->times.first_wall) || wall < r->times.first_wall) {
            r->times.first_wall = wall;
            moved = 1;
        }
        if (isnan(r->times.last_wall) || wall > r->times.last_wall) {
            r->times.last_wall = wall;
            moved = 1;
        }
    }
    if (step > r->times.max_step) {
        r->times.max_step = step;
        moved = 1;
    }
    pthread_mutex_unlock(&r->lock);
    if (moved)
        run_changed(r);
}

int tfb_run_series(tfb_run *r, tfb_series_kind kind, tfb_series ***out,
                   size_t *n)
{
    if ((unsigned)kind >= TFB_SERIES_KIND_COUNT)
        return TFB_EINVAL;
    pthread_mutex_lock(&r->lock);
    size_t cnt = r->series[kind].n;
    tfb_series **v = malloc((cnt ? cnt : 1) * sizeof *v);
    if (!v) {
        pthread_mutex_unlock(&r->lock);
        return TFB_ENOMEM;
    }
    if (cnt)
        memcpy(v, r->series[kind].v, cnt * sizeof *v);
    pthread_mutex_unlock(&r->lock);
    *out = v;
    *n = cnt;
    return 0;
}

/* Copies name (len bytes; NULL when len is 0) to p with its NUL; returns
 * where the next name goes. */
static char *put_name(char *p, const char *name, size_t len)
{
    if (len)
        memcpy(p, name, len);
    p[len] = 0;
    return p + len + 1;
}

/* The tag's length: it ends where the plugin's name begins. */
static size_t tag_len_of(const tfb_series *se)
{
    return se->plugin_off - 1;
}

static tfb_series *find_locked(tfb_run *r, tfb_series_kind kind,
                               const char *tag, size_t len, uint64_t h)
{
    if (r->series_idx && r->series_idx[kind].cap)
        return tfb_strtab_get_h(&r->series_idx[kind], tag, len, h);
    /* a few series (SERIES_SCAN_MAX at most): no table to keep */
    for (size_t i = 0; i < r->series[kind].n; i++) {
        tfb_series *se = r->series[kind].v[i];
        if (tag_len_of(se) == len && memcmp(se->names, tag, len) == 0)
            return se;
    }
    return NULL;
}

/* Makes room in the run's index of kind (sn series now) for one more,
 * building the index when the kind passes SERIES_SCAN_MAX series; after
 * it, putting the new series into a built index cannot fail. 0, or -1
 * when memory runs out (nothing changed). Under the run's lock. */
static int index_room(tfb_run *r, tfb_series_kind kind, size_t sn)
{
    if ((!r->series_idx || !r->series_idx[kind].cap) &&
        sn + 1 <= SERIES_SCAN_MAX)
        return 0;
    if (!r->series_idx &&
        !(r->series_idx = calloc(TFB_SERIES_KIND_COUNT,
                                 sizeof *r->series_idx)))
        return -1;
    tfb_strtab *t = &r->series_idx[kind];
    if (tfb_strtab_reserve(t, sn + 1) < 0)
        return -1;
    if (t->count < sn) /* just built: the series so far */
        for (size_t i = 0; i < sn; i++) {
            tfb_series *x = r->series[kind].v[i];
            size_t len = tag_len_of(x);
            (void)tfb_strtab_put_h(t, x->names, len,
                                   tfb_hash_bytes(x->names, len), x);
        }
    return 0;
}

tfb_series *tfb_run_find_series(tfb_run *r, tfb_series_kind kind,
                                const char *tag)
{
    if ((unsigned)kind >= TFB_SERIES_KIND_COUNT || !tag)
        return NULL;
    size_t len = strlen(tag);
    uint64_t h = tfb_hash_bytes(tag, len);
    pthread_mutex_lock(&r->lock);
    tfb_series *se = find_locked(r, kind, tag, len, h);
    pthread_mutex_unlock(&r->lock);
    return se;
}

int tfb_run_get_series(tfb_run *r, tfb_series_kind kind, const char *tag,
                       size_t tag_len, const char *plugin, size_t plugin_len,
                       const char *display, size_t display_len,
                       const char *desc, size_t desc_len, tfb_series **out)
{
    if ((unsigned)kind >= TFB_SERIES_KIND_COUNT)
        return TFB_EINVAL;
    uint64_t h = tfb_hash_bytes(tag, tag_len);
    pthread_mutex_lock(&r->lock);
    tfb_series *se = find_locked(r, kind, tag, tag_len, h);
    if (se) {
        pthread_mutex_unlock(&r->lock);
        *out = se;
        return 0;
    }
    int rc = TFB_ENOMEM;
    if (!plugin)
        plugin_len = 0;
    if (!display)
        display_len = 0;
    if (!desc)
        desc_len = 0;
    size_t names = tag_len + plugin_len + display_len + desc_len + 4;
    /* the names' offsets are 32-bit (a value is at most a record, far
     * under 4 GiB: only a corrupt length could get here) */
    se = names > tag_len && names < UINT32_MAX
             ? calloc(1, sizeof *se + names)
             : NULL;
    if (!se)
        goto fail;
    se->run = r;
    se->kind = kind;
    {
        char *p = put_name(se->names, tag, tag_len);
        se->plugin_off = (uint32_t)(p - se->names);
        p = put_name(p, plugin, plugin_len);
        se->display_off = (uint32_t)(p - se->names);
        p = put_name(p, display, display_len);
        se->desc_off = (uint32_t)(p - se->names);
        put_name(p, desc, desc_len);
    }
    if (kind != TFB_SERIES_SCALAR) {
        se->own_lock = malloc(sizeof *se->own_lock);
        if (!se->own_lock) {
            free(se);
            goto fail;
        }
        rwlock_init_writer_first(se->own_lock);
    }
    atomic_flag_clear(&se->nf_lock);
    /* Observed from its first point; an observer without memory for its
     * state returns NULL and the series still loads unobserved. */
    const tfb_scalar_observer *ob = atomic_load(&g_observer);
    if (kind == TFB_SERIES_SCALAR && ob)
        se->obs = ob->attach(tag, tag_len);
    /* Room by doubling from one: a vector's first 16 pointers were 128 B
     * of a 5-tag run (a sweep's 100,000 runs each have a few tags). */
    size_t sn = r->series[kind].n;
    if ((sn == r->series[kind].cap &&
         tfb_vec_setcap(&r->series[kind], sn ? 2 * sn : 1) < 0) ||
        index_room(r, kind, sn) < 0) {
        series_free(se);
        goto fail;
    }
    if (r->series_idx && r->series_idx[kind].cap)
        (void)tfb_strtab_put_h(&r->series_idx[kind], se->names, tag_len, h,
                               se);
    r->series[kind].v[r->series[kind].n++] = se;
    pthread_mutex_unlock(&r->lock);
    run_changed(r);
    tfb_store_bump_generation(r->store);
    *out = se;
    return 0;
fail:
    pthread_mutex_unlock(&r->lock);
    return rc;
}

void tfb_strv_free(char **v, size_t n)
{
    if (!v)
        return;
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

static int strv_copy(char *const *src, size_t n, char ***out)
{
    char **v = calloc(n ? n : 1, sizeof *v);
    if (!v)
        return TFB_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        v[i] = tfb_strndup(src[i], strlen(src[i]));
        if (!v[i]) {
            tfb_strv_free(v, n);
            return TFB_ENOMEM;
        }
    }
    *out = v;
    return 0;
}

int tfb_run_trace_files(tfb_run *r, char ***out, size_t *n)
{
    pthread_mutex_lock(&r->lock);
    int rc = strv_copy(r->traces, r->n_traces, out);
    if (rc == 0)
        *n = r->n_traces;
    pthread_mutex_unlock(&r->lock);
    return rc;
}

int tfb_run_set_trace_files(tfb_run *r, char *const *paths, size_t n)
{
    if (n == 0) {
        /* none, as before (most runs, every pass): nothing to allocate */
        pthread_mutex_lock(&r->lock);
        int had = r->n_traces != 0;
        pthread_mutex_unlock(&r->lock);
        if (!had)
            return 0;
    }
    char **v;
    int rc = strv_copy(paths, n, &v);
    if (rc < 0)
        return rc;
    pthread_mutex_lock(&r->lock);
    char **old = r->traces;
    size_t on = r->n_traces;
    int same = on == n;
    for (size_t i = 0; same && i < n; i++)
        same = strcmp(old[i], v[i]) == 0;
    r->traces = v;
    r->n_traces = n;
    pthread_mutex_unlock(&r->lock);
    tfb_strv_free(old, on);
    if (!same)
        run_changed(r);
    return 0;
}

void tfb_file_infos_free(tfb_file_info *v, size_t n)
{
    if (!v)
        return;
    for (size_t i = 0; i < n; i++)
        free(v[i].path);
    free(v);
}

static int infos_copy(const tfb_file_info *src, size_t n, tfb_file_info **out)
{
    tfb_file_info *v = calloc(n ? n : 1, sizeof *v);
    if (!v)
        return TFB_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        v[i] = src[i];
        v[i].path = tfb_strndup(src[i].path, strlen(src[i].path));
        if (!v[i].path) {
            tfb_file_infos_free(v, n);
            return TFB_ENOMEM;
        }
    }
    *out = v;
    return 0;
}

int tfb_run_files(tfb_run *r, tfb_file_info **out, size_t *n)
{
    pthread_mutex_lock(&r->lock);
    int rc = infos_copy(r->files, r->n_files, out);
    if (rc == 0)
        *n = r->n_files;
    pthread_mutex_unlock(&r->lock);
    return rc;
}

int tfb_run_set_files(tfb_run *r, const tfb_file_info *files, size_t n)
{
    tfb_file_info *v;
    int rc = infos_copy(files, n, &v);
    if (rc < 0)
        return rc;
    pthread_mutex_lock(&r->lock);
    tfb_file_info *old = r->files;
    size_t on = r->n_files;
    /* the list (what a run's status reads: how many, the newest path);
     * the read counters move with the points, which count themselves */
    int same = on == n;
    for (size_t i = 0; same && i < n; i++)
        same = strcmp(old[i].path, v[i].path) == 0 &&
               old[i].error == v[i].error;
    r->files = v;
    r->n_files = n;
    pthread_mutex_unlock(&r->lock);
    tfb_file_infos_free(old, on);
    if (!same)
        run_changed(r);
    return 0;
}

void tfb_run_reset(tfb_run *r)
{
    /* Series locks are taken without the run lock held, so a reader that
     * pins a series and then asks about its run cannot deadlock with us. */
    for (int k = 0; k < TFB_SERIES_KIND_COUNT; k++) {
        tfb_series **v;
        size_t n;
        if (tfb_run_series(r, (tfb_series_kind)k, &v, &n) < 0)
            continue;
        for (size_t i = 0; i < n; i++) {
            tfb_series *se = v[i];
            pthread_rwlock_wrlock(lock_of(se));
            atomic_store_explicit(&se->count, 0, memory_order_release);
            if (se->kind == TFB_SERIES_SCALAR) {
                se->enc_len = se->sealed = se->last_off = 0;
                se->last_n = se->t_n = 0;
                se->has_f64 = 0;
                se->boff.n = 0;
                se->unsorted = se->pend_unsorted = 0;
                if (se->obs)
                    atomic_load(&g_observer)->reset(se->obs);
            } else {
                se->buckets.n = 0;
                se->text_data.n = 0;
            }
            nf_acquire(se);
            if (se->nf)
                memset(se->nf, 0, sizeof *se->nf);
            nf_release(se);
            pthread_rwlock_unlock(lock_of(se));
        }
        free(v);
    }
    tfb_media_index_reset(atomic_load_explicit(&r->media,
                                               memory_order_acquire));
    pthread_mutex_lock(&r->lock);
    /* the plugin decoders' states: empty, as the series */
    if (r->dec_state) {
        size_t nd;
        const tfb_value_decoder *const *d = tfb_value_decoders(&nd);
        for (size_t i = 0; i < nd; i++)
            if (r->dec_state[i])
                d[i]->state_reset(r->dec_state[i]);
    }
    r->times = NO_TIMES;
    pthread_mutex_unlock(&r->lock);
    run_changed(r);
    tfb_store_bump_generation(r->store);
}

void *tfb_run_decoder_state(tfb_run *r, const tfb_value_decoder *dec)
{
    size_t nd, i;
    const tfb_value_decoder *const *d = tfb_value_decoders(&nd);
    for (i = 0; i < nd && d[i] != dec; i++)
        ;
    if (i == nd)
        return NULL;
    pthread_mutex_lock(&r->lock);
    if (!r->dec_state)
        r->dec_state = calloc(TFB_VALUE_DECODERS_MAX, sizeof *r->dec_state);
    void *st = NULL;
    if (r->dec_state) {
        if (!r->dec_state[i])
            r->dec_state[i] = dec->state_new();
        st = r->dec_state[i];
    }
    pthread_mutex_unlock(&r->lock);
    return st;
}

tfb_media_index *tfb_run_media(tfb_run *r)
{
    tfb_media_index *ix = atomic_load_explicit(&r->media,
                                               memory_order_acquire);
    return ix ? ix : tfb_media_index_empty();
}

tfb_media_index *tfb_run_media_to_add(tfb_run *r)
{
    tfb_media_index *ix = atomic_load_explicit(&r->media,
                                               memory_order_acquire);
    if (ix)
        return ix;
    pthread_mutex_lock(&r->lock);
    ix = atomic_load_explicit(&r->media, memory_order_relaxed);
    if (!ix && tfb_media_index_create(&ix) == 0)
        atomic_store_explicit(&r->media, ix, memory_order_release);
    pthread_mutex_unlock(&r->lock);
    return ix;
}

/* ---- series --------------------------------------------------------- */

const char *tfb_series_tag(const tfb_series *s) { return s->names; }
const char *tfb_series_plugin(const tfb_series *s)
{
    return s->names + s->plugin_off;
}
const char *tfb_series_display_name(const tfb_series *s)
{
    return s->names + s->display_off;
}
const char *tfb_series_description(const tfb_series *s)
{
    return s->names + s->desc_off;
}
tfb_run *tfb_series_run(const tfb_series *s) { return s->run; }

size_t tfb_series_count(const tfb_series *s)
{
    return atomic_load_explicit(&((tfb_series *)s)->count,
                                memory_order_acquire);
}

void tfb_series_nonfinite(tfb_series *s, tfb_nonfinite_stats *out)
{
    memset(out, 0, sizeof *out);
    nf_acquire(s);
    if (s->nf)
        *out = *s->nf;
    nf_release(s);
}

/* A scalar snapshot decoded for one pin, listed per thread so that
 * read_end (given only the series) finds it: a thread pins a series at
 * most once at a time, so (thread, series) names one pin. The list runs
 * from the newest pin to the oldest and read_end looks at the oldest
 * first, so releasing in pin order (a route that pins 10,000 series and
 * then releases them) and in reverse order both cost O(1). The arrays
 * follow the header. */
typedef struct pin_buf {
    struct pin_buf *newer, *older;
    const tfb_series *s;
    void *pad; /* keeps the arrays 16-byte aligned */
} pin_buf;
static _Thread_local pin_buf *pins_newest, *pins_oldest;

static void pin_unlink(pin_buf *pb)
{
    if (pb->newer)
        pb->newer->older = pb->older;
    else
        pins_newest = pb->older;
    if (pb->older)
        pb->older->newer = pb->newer;
    else
        pins_oldest = pb->newer;
    free(pb);
}

/* Decodes the first v->count points of a scalar series into a new pin
 * buffer; called with the read lock held. On ENOMEM the view is empty. */
static void pin_scalar(tfb_series *s, tfb_series_view *v)
{
    size_t n = v->count;
    if (!n)
        return;
    int f64 = atomic_load_explicit(&s->has_f64, memory_order_relaxed);
    size_t per = sizeof(int64_t) + sizeof(double) + sizeof(float) +
                 (f64 ? sizeof(double) : 0);
    if (n > (SIZE_MAX - sizeof(pin_buf)) / per) {
        v->count = 0;
        return;
    }
    pin_buf *pb = malloc(sizeof *pb + n * per);
    if (!pb) {
        v->count = 0;
        return;
    }
    int64_t *step = (int64_t *)(pb + 1);
    double *wall = (double *)(step + n);
    double *v64 = f64 ? wall + n : NULL;
    float *value = (float *)(wall + (f64 ? 2 * n : n));
    const uint8_t *p = s->enc;
    size_t i = 0;
    while (i < s->sealed) {
        size_t m = tfb_scalar_block_count(p);
        p = tfb_scalar_block_decode(p, step + i, wall + i, value + i,
                                    v64 ? v64 + i : NULL);
        i += m;
    }
    size_t t = n - i; /* raw tail points; the tail is freed when 0 */
    if (t) {
        memcpy(step + i, tail_steps(s), t * sizeof *step);
        memcpy(wall + i, tail_walls(s), t * sizeof *wall);
    }
    const double *tv = t ? tail_values(s) : NULL;
    for (size_t k = 0; k < t; k++) {
        value[i + k] = (float)tv[k];
        if (v64)
            v64[i + k] = tv[k];
    }
    v->step = step;
    v->wall = wall;
    v->value = value;
    v->value64 = v64;
    pb->s = s;
    pb->newer = NULL;
    pb->older = pins_newest;
    if (pins_newest)
        pins_newest->newer = pb;
    else
        pins_oldest = pb;
    pins_newest = pb;
}

int tfb_series_read_begin(tfb_series *s, tfb_series_view *v)
{
    pthread_rwlock_rdlock(lock_of(s));
    memset(v, 0, sizeof *v);
    v->kind = s->kind;
    v->count = atomic_load_explicit(&s->count, memory_order_acquire);
    switch (s->kind) {
    case TFB_SERIES_SCALAR:
        pin_scalar(s, v);
        break;
    case TFB_SERIES_HISTOGRAM:
        v->hist = s->hist;
        v->buckets = s->buckets.v;
        break;
    case TFB_SERIES_TEXT:
        v->text_off = s->text_off;
        v->text_len = s->text_len;
        v->text_data = s->text_data.v;
        break;
    case TFB_SERIES_NUMERICS:
        v->numerics = s->numerics;
        break;
    default:
        break;
    }
    if (s->kind != TFB_SERIES_SCALAR) {
        v->step = s->step;
        v->wall = s->wall;
    }
    nf_acquire(s);
    if (s->nf)
        v->nonfinite = *s->nf;
    nf_release(s);
    /* A scalar view is the pin's own copy: the loader need not wait for
     * the query to end. */
    if (s->kind == TFB_SERIES_SCALAR)
        pthread_rwlock_unlock(lock_of(s));
    return 0;
}

void tfb_series_read_end(tfb_series *s)
{
    if (s->kind != TFB_SERIES_SCALAR) {
        pthread_rwlock_unlock(lock_of(s));
        return;
    }
    if (pins_oldest && pins_oldest->s == s) {
        pin_unlink(pins_oldest);
        return;
    }
    for (pin_buf *pb = pins_newest; pb; pb = pb->older)
        if (pb->s == s) {
            pin_unlink(pb);
            return;
        }
}

size_t tfb_series_scalar_in_steps(tfb_series *s, int64_t lo, int64_t hi,
                                  int64_t *step, float *value, size_t *index,
                                  size_t cap, int *more)
{
    if (more)
        *more = 0;
    if (s->kind != TFB_SERIES_SCALAR || lo > hi)
        return 0;
    pthread_rwlock_rdlock(lock_of(s));
    size_t count = atomic_load_explicit(&s->count, memory_order_acquire);
    size_t n = 0, at = 0;
    const uint8_t *p = s->enc;
    int64_t bstep[TFB_SCALAR_BLOCK];
    float bval[TFB_SCALAR_BLOCK];
    int full = 0;
    /* Steps in order: the blocks before the last one that starts below
     * lo hold only steps below lo, so the scan starts there (found by
     * bisection: a window near the end of a long run reads a few block
     * headers, not all of them) and stops at the first block that starts
     * above hi. */
    size_t nb = s->boff.n;
    int stop_hi = !s->unsorted;
    if (!s->unsorted && nb > 1) {
        size_t a = 0, b = nb; /* the answer is in [a, b) */
        while (b - a > 1) {
            size_t mid = a + (b - a) / 2;
            if (tfb_scalar_block_first_step(s->enc + block_off(s, mid)) <
                lo)
                a = mid;
            else
                b = mid;
        }
        at = a * TFB_SCALAR_BLOCK;
        p = s->enc + block_off(s, a);
    }
    while (at < s->sealed && !full) {
        size_t m = tfb_scalar_block_count(p);
        if (stop_hi && tfb_scalar_block_first_step(p) > hi)
            break;
        int64_t blo, bhi;
        int span = tfb_scalar_block_step_span(p, &blo, &bhi);
        if (span && (bhi < lo || blo > hi)) { /* a stride wholly outside */
            p = tfb_scalar_block_next(p);
            at += m;
            continue;
        }
        if (span && m > 1 && bhi > blo &&
            tfb_scalar_block_first_step(p) == blo) {
            /* A rising stride: the points inside are a range of indexes
             * worked out from it, and only their values are read. The
             * span fits an int64 (step_span checked), so its unsigned
             * differences are exact. */
            uint64_t d = ((uint64_t)bhi - (uint64_t)blo) / (m - 1);
            int64_t a = lo > blo ? lo : blo, b = hi < bhi ? hi : bhi;
            uint64_t oa = (uint64_t)a - (uint64_t)blo,
                     ob = (uint64_t)b - (uint64_t)blo;
            size_t i0 = (size_t)(oa / d + (oa % d != 0));
            size_t i1 = (size_t)(ob / d);
            size_t k = i1 >= i0 ? i1 - i0 + 1 : 0;
            if (k > cap - n) {
                k = cap - n;
                full = 1;
            }
            k = tfb_scalar_block_values(p, i0, k, value + n);
            for (size_t i = 0; i < k; i++) {
                step[n + i] = (int64_t)((uint64_t)blo + (i0 + i) * d);
                if (index)
                    index[n + i] = at + i0 + i;
            }
            n += k;
            p = tfb_scalar_block_next(p);
            at += m;
            continue;
        }
        (void)tfb_scalar_block_steps(p, bstep);
        size_t hit = 0;
        for (size_t i = 0; i < m; i++)
            hit += bstep[i] >= lo && bstep[i] <= hi;
        if (hit) {
            (void)tfb_scalar_block_decode(p, NULL, NULL, bval, NULL);
            for (size_t i = 0; i < m; i++) {
                if (bstep[i] < lo || bstep[i] > hi)
                    continue;
                if (n == cap) {
                    full = 1;
                    break;
                }
                step[n] = bstep[i];
                value[n] = bval[i];
                if (index)
                    index[n] = at + i;
                n++;
            }
        }
        p = tfb_scalar_block_next(p);
        at += m;
    }
    for (size_t i = s->sealed; i < count && !full; i++) { /* the raw tail */
        int64_t st = tail_steps(s)[i - s->sealed];
        if (st < lo || st > hi)
            continue;
        if (n == cap) {
            full = 1;
            break;
        }
        step[n] = st;
        value[n] = (float)tail_values(s)[i - s->sealed];
        if (index)
            index[n] = i;
        n++;
    }
    pthread_rwlock_unlock(lock_of(s));
    if (more)
        *more = full;
    return n;
}

size_t tfb_series_scalar_range(tfb_series *s, size_t from, size_t n,
                               int64_t *step, double *wall, float *value,
                               double *value64)
{
    if (s->kind != TFB_SERIES_SCALAR || !n)
        return 0;
    pthread_rwlock_rdlock(lock_of(s));
    size_t count = atomic_load_explicit(&s->count, memory_order_acquire);
    if (from >= count) {
        pthread_rwlock_unlock(lock_of(s));
        return 0;
    }
    if (n > count - from)
        n = count - from;
    /* at: index of the block's first point; straight to from's block */
    size_t done = 0, at = 0;
    const uint8_t *p = s->enc;
    if (from < s->sealed) {
        at = from / TFB_SCALAR_BLOCK * TFB_SCALAR_BLOCK;
        p = s->enc + block_off(s, from / TFB_SCALAR_BLOCK);
    } else {
        at = s->sealed;
    }
    int64_t bstep[TFB_SCALAR_BLOCK];
    double bwall[TFB_SCALAR_BLOCK], bv64[TFB_SCALAR_BLOCK];
    float bv32[TFB_SCALAR_BLOCK];
    while (done < n && at < s->sealed) {
        size_t m = tfb_scalar_block_count(p);
        if (from + done >= at + m) { /* before the range: skip */
            p = tfb_scalar_block_next(p);
            at += m;
            continue;
        }
        /* only the columns asked for (no double walls or values made) */
        p = tfb_scalar_block_decode(p, step ? bstep : NULL,
                                    wall ? bwall : NULL, value ? bv32 : NULL,
                                    value64 ? bv64 : NULL);
        size_t i = from + done - at, k = m - i;
        if (k > n - done)
            k = n - done;
        if (step)
            memcpy(step + done, bstep + i, k * sizeof *step);
        if (wall)
            memcpy(wall + done, bwall + i, k * sizeof *wall);
        if (value)
            memcpy(value + done, bv32 + i, k * sizeof *value);
        if (value64)
            memcpy(value64 + done, bv64 + i, k * sizeof *value64);
        done += k;
        at += m;
    }
    for (; done < n; done++) { /* the raw tail */
        size_t t = from + done - s->sealed;
        if (step)
            step[done] = tail_steps(s)[t];
        if (wall)
            wall[done] = tail_walls(s)[t];
        if (value)
            value[done] = (float)tail_values(s)[t];
        if (value64)
            value64[done] = tail_values(s)[t];
    }
    pthread_rwlock_unlock(lock_of(s));
    return n;
}

static int cmp_step_value(const void *a, const void *b)
{
    const tfb_step_value *x = a, *y = b;
    if (x->step != y->step)
        return (x->step > y->step) - (x->step < y->step);
    return (x->order > y->order) - (x->order < y->order);
}

int tfb_series_by_step(tfb_series *s, tfb_step_value **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    if (!s)
        return 0;
    tfb_series_view v;
    tfb_series_read_begin(s, &v);
    size_t cnt = v.count;
    tfb_step_value *a = cnt ? malloc(cnt * sizeof *a) : NULL;
    if (cnt && !a) {
        tfb_series_read_end(s);
        return TFB_ENOMEM;
    }
    int sorted = 1;
    for (size_t i = 0; i < cnt; i++) {
        a[i] = (tfb_step_value){v.step[i], i, (double)v.value[i]};
        if (i && v.step[i] < v.step[i - 1])
            sorted = 0;
    }
    tfb_series_read_end(s);
    if (!sorted)
        qsort(a, cnt, sizeof *a, cmp_step_value);
    size_t m = 0;
    for (size_t i = 0; i < cnt; i++) {
        if (m && a[m - 1].step == a[i].step)
            a[m - 1] = a[i];
        else
            a[m++] = a[i];
    }
    *out = a;
    *n = m;
    return 0;
}

size_t tfb_series_key(const tfb_series *s, char *buf, size_t len)
{
    int n = snprintf(buf, len, "%s\x1f%s", s->run->name, s->names);
    return n > 0 && (size_t)n < len ? (size_t)n : 0;
}

int tfb_series_observed(tfb_series *s,
                        int (*copy)(void *user, const void *state),
                        void *user, int64_t *tail_step,
                        double *tail_value, size_t *tail_n)
{
    if (s->kind != TFB_SERIES_SCALAR || !s->obs)
        return TFB_ENOENT;
    pthread_rwlock_rdlock(lock_of(s));
    size_t count = atomic_load_explicit(&s->count, memory_order_acquire);
    size_t tail = count - s->sealed; /* at most a block */
    if (tail) { /* a trimmed series has no tail arrays at all */
        memcpy(tail_step, tail_steps(s), tail * sizeof *tail_step);
        memcpy(tail_value, tail_values(s), tail * sizeof *tail_value);
    }
    int rc = copy(user, s->obs);
    pthread_rwlock_unlock(lock_of(s));
    *tail_n = tail;
    return rc;
}

size_t tfb_series_bytes(const tfb_series *cs)
{
    tfb_series *s = (tfb_series *)cs;
    pthread_rwlock_rdlock(lock_of(s));
    size_t b = 0;
    switch (s->kind) {
    case TFB_SERIES_SCALAR:
        b = s->enc_cap +
            (size_t)s->t_cap * (sizeof(int64_t) + 2 * sizeof(double)) +
            s->boff.cap * sizeof *s->boff.v;
        break;
    case TFB_SERIES_HISTOGRAM:
        b = s->cap * sizeof *s->hist +
            s->buckets.cap * sizeof *s->buckets.v;
        break;
    case TFB_SERIES_TEXT:
        b = s->cap * (sizeof *s->text_off + sizeof *s->text_len) +
            s->text_data.cap;
        break;
    case TFB_SERIES_NUMERICS:
        b = s->cap * sizeof *s->numerics;
        break;
    default:
        break;
    }
    if (s->kind != TFB_SERIES_SCALAR)
        b += s->cap * (sizeof *s->step + sizeof *s->wall);
    pthread_rwlock_unlock(lock_of(s));
    return b;
}

/* Resizes the per-point arrays to cap points; called with the write lock.
 * Growing or shrinking alike. The columns share one capacity (s->cap) and
 * grow by the store's memory budget (reserve_point), hence
 * tfb_array_resize rather than a TFB_VEC each. */
static int resize_points(tfb_series *s, size_t cap)
{
    int bad = tfb_array_resize(&s->step, cap);
    bad |= tfb_array_resize(&s->wall, cap);
    switch (s->kind) {
    case TFB_SERIES_HISTOGRAM:
        bad |= tfb_array_resize(&s->hist, cap);
        break;
    case TFB_SERIES_TEXT:
        bad |= tfb_array_resize(&s->text_off, cap);
        bad |= tfb_array_resize(&s->text_len, cap);
        break;
    case TFB_SERIES_NUMERICS:
        bad |= tfb_array_resize(&s->numerics, cap);
        break;
    default:
        break;
    }
    if (bad) {
        /* Arrays that did resize are at least the old size; keep the
         * smaller capacity so no slot is used that one array lacks. */
        if (cap < s->cap)
            s->cap = cap;
        return TFB_ENOMEM;
    }
    s->cap = cap;
    return 0;
}

/* Makes room for one more point; the loader thread only. */
static int reserve_point(tfb_series *s, size_t count)
{
    if (count < s->cap)
        return 0;
    /* grow by 1.5x: resident slack stays small for the 24 B budget.
     * Small series start at 4 points and grow 4x up to 64, so a run with
     * a million one-point tags does not reserve 64 points for each. */
    size_t nc = s->cap < 64 ? (s->cap ? s->cap * 4 : 4)
                            : s->cap + s->cap / 2;
    pthread_rwlock_wrlock(lock_of(s));
    int rc = resize_points(s, nc);
    pthread_rwlock_unlock(lock_of(s));
    return rc;
}

/* Encodes the tail into blocks after the sealed ones; the loader thread
 * only. A last block left short by a trim is decoded and encoded again
 * with the tail, so a run that grows a few points a pass still ends up
 * in full blocks. Encoding happens outside the lock; readers wait only
 * for the copy into the arena. */
static int seal_tail(tfb_series *s)
{
    size_t n = s->t_n;
    if (!n)
        return 0;
    int64_t step[2 * TFB_SCALAR_BLOCK];
    double wall[2 * TFB_SCALAR_BLOCK], value[2 * TFB_SCALAR_BLOCK];
    uint8_t buf[2 * TFB_SCALAR_BLOCK_MAX(TFB_SCALAR_BLOCK)];
    size_t m = 0, off = s->enc_len;
    if (s->last_n && s->last_n < TFB_SCALAR_BLOCK) {
        m = s->last_n;
        off = s->last_off;
        (void)tfb_scalar_block_decode(s->enc + off, step, wall, NULL, value);
    }
    memcpy(step + m, tail_steps(s), n * sizeof *step);
    memcpy(wall + m, tail_walls(s), n * sizeof *wall);
    memcpy(value + m, tail_values(s), n * sizeof *value);
    size_t total = m + n, len = 0, last_off = 0, last_n = 0, nb = 0;
    size_t boffs[2];
    for (size_t i = 0; i < total; i += last_n) {
        last_n = total - i < TFB_SCALAR_BLOCK ? total - i : TFB_SCALAR_BLOCK;
        last_off = len;
        boffs[nb++] = off + len;
        len += tfb_scalar_block_encode(buf + len, step + i, wall + i,
                                       value + i, last_n);
    }
    /* the re-encoded short block (m points) is the last one indexed */
    size_t first_block = s->sealed / TFB_SCALAR_BLOCK;
    pthread_rwlock_wrlock(lock_of(s));
    /* the index from the second block on (block_off) */
    if (first_block + nb > 1) {
        if (tfb_vec_need(&s->boff, first_block + nb) < 0) {
            pthread_rwlock_unlock(lock_of(s));
            return TFB_ENOMEM;
        }
        s->boff.v[0] = 0;
    }
    if (off + len > s->enc_cap) {
        size_t nc = s->enc_cap + s->enc_cap / 2;
        if (nc < off + len)
            nc = off + len;
        if (tfb_array_resize(&s->enc, nc) < 0) {
            pthread_rwlock_unlock(lock_of(s));
            return TFB_ENOMEM;
        }
        s->enc_cap = nc;
    }
    memcpy(s->enc + off, buf, len);
    s->enc_len = off + len;
    s->last_off = off + last_off;
    s->last_n = (uint32_t)last_n;
    s->sealed += n;
    s->t_n = 0;
    if (first_block + nb > 1)
        memcpy(s->boff.v + first_block, boffs, nb * sizeof *boffs);
    s->boff.n = first_block + nb;
    s->unsorted |= s->pend_unsorted;
    if (s->obs) /* the tail's points, raw: nothing to decode */
        atomic_load(&g_observer)->feed(s->obs, step + m, value + m, n);
    pthread_rwlock_unlock(lock_of(s));
    return 0;
}

/* Room for one more tail point; the loader thread only. The tail starts
 * at 16 points and grows 4x to a block, so a million one-point tags do
 * not reserve a block each. */
static int reserve_tail(tfb_series *s)
{
    if (s->t_n == TFB_SCALAR_BLOCK) {
        int rc = seal_tail(s);
        if (rc < 0)
            return rc;
    }
    if (s->t_n < s->t_cap)
        return 0;
    uint32_t nc = s->t_cap ? s->t_cap * 4 : 16;
    if (nc > TFB_SCALAR_BLOCK)
        nc = TFB_SCALAR_BLOCK;
    /* the columns move apart: a new allocation, each column copied */
    double *nt = malloc((size_t)nc * 3 * sizeof *nt);
    if (!nt)
        return TFB_ENOMEM;
    if (s->t_n) {
        memcpy(nt, tail_steps(s), s->t_n * sizeof(int64_t));
        memcpy(nt + nc, tail_walls(s), s->t_n * sizeof *nt);
        memcpy(nt + 2 * (size_t)nc, tail_values(s), s->t_n * sizeof *nt);
    }
    pthread_rwlock_wrlock(lock_of(s));
    void *old = s->tail;
    s->tail = nt;
    s->t_cap = nc;
    pthread_rwlock_unlock(lock_of(s));
    free(old);
    return 0;
}

/* After a pass: every point into blocks, the arena to its size, the tail
 * freed. */
static void trim_scalar(tfb_series *s)
{
    if (seal_tail(s) < 0)
        return;
    pthread_rwlock_wrlock(lock_of(s));
    if (s->enc_cap > s->enc_len) {
        if (!s->enc_len) {
            free(s->enc);
            s->enc = NULL;
            s->enc_cap = 0;
        } else if (tfb_array_resize(&s->enc, s->enc_len) == 0) {
            s->enc_cap = s->enc_len;
        }
    }
    if (s->boff.cap) /* none is kept for one block */
        tfb_vec_trim(&s->boff);
    free(s->tail);
    s->tail = NULL;
    s->t_cap = 0;
    pthread_rwlock_unlock(lock_of(s));
}

void tfb_series_trim(tfb_series *s)
{
    if (s->kind == TFB_SERIES_SCALAR) {
        trim_scalar(s);
        return;
    }
    size_t count = atomic_load_explicit(&s->count, memory_order_relaxed);
    pthread_rwlock_wrlock(lock_of(s));
    /* Small series (a sweep's 200 points) are trimmed to their points:
     * 16 spare were 8 % of their memory, and copying a few KiB again if
     * they grow is cheap. Large ones keep room for what a live run adds. */
    if (count && count <= 4096 && s->cap > count)
        (void)resize_points(s, count);
    else if (s->cap > count + 16 && s->cap > count + count / 16)
        (void)resize_points(s, count + 16);
    if (s->kind == TFB_SERIES_HISTOGRAM &&
        s->buckets.cap > s->buckets.n + 64)
        (void)tfb_vec_setcap(&s->buckets, s->buckets.n + 64);
    if (s->kind == TFB_SERIES_TEXT &&
        s->text_data.cap > s->text_data.n + 256)
        (void)tfb_vec_setcap(&s->text_data, s->text_data.n + 256);
    pthread_rwlock_unlock(lock_of(s));
}

static void note_nonfinite(tfb_series *s, int64_t step, double wall,
                           uint64_t nan, uint64_t pinf, uint64_t ninf)
{
    tfb_nonfinite_stats *nf = s->nf; /* only this thread sets it */
    if (!nf) {
        nf = calloc(1, sizeof *nf);
        if (!nf)
            return; /* the statistics miss this point; the data is kept */
    }
    nf_acquire(s);
    s->nf = nf;
    nf->nan += nan;
    nf->pos_inf += pinf;
    nf->neg_inf += ninf;
    nf->points++;
    if (!nf->has_first) {
        nf->has_first = 1;
        nf->first_step = step;
        nf->first_wall = wall;
    }
    nf_release(s);
}

int tfb_series_append_scalar(tfb_series *s, int64_t step, double wall,
                             double value)
{
    if (s->kind != TFB_SERIES_SCALAR)
        return TFB_EINVAL;
    size_t n = atomic_load_explicit(&s->count, memory_order_relaxed);
    int rc = reserve_tail(s);
    if (rc < 0)
        return rc;
    float f = (float)value;
    double back = f;
    if (memcmp(&back, &value, sizeof value) != 0)
        atomic_store_explicit(&s->has_f64, 1, memory_order_relaxed);
    if (n && step < s->last_step)
        s->pend_unsorted = 1;
    s->last_step = step;
    tail_steps(s)[s->t_n] = step;
    tail_walls(s)[s->t_n] = wall;
    tail_values(s)[s->t_n] = value;
    s->t_n++;
    if (!isfinite(f))
        note_nonfinite(s, step, wall, isnan(f), f > 0 && isinf(f),
                       f < 0 && isinf(f));
    atomic_store_explicit(&s->count, n + 1, memory_order_release);
    return 0;
}

int tfb_series_append_histogram(tfb_series *s, int64_t step, double wall,
                                double min, double max, double num,
                                double sum, const tfb_hist_bucket *b,
                                size_t nb)
{
    if (s->kind != TFB_SERIES_HISTOGRAM || nb > UINT32_MAX)
        return TFB_EINVAL;
    size_t n = atomic_load_explicit(&s->count, memory_order_relaxed);
    int rc = reserve_point(s, n);
    if (rc < 0)
        return rc;
    if (s->buckets.n + nb > s->buckets.cap) {
        size_t nc = s->buckets.cap < 256 ? 256 : s->buckets.cap * 3 / 2;
        while (nc < s->buckets.n + nb)
            nc = nc * 3 / 2;
        pthread_rwlock_wrlock(lock_of(s));
        rc = tfb_vec_setcap(&s->buckets, nc);
        pthread_rwlock_unlock(lock_of(s));
        if (rc < 0)
            return TFB_ENOMEM;
    }
    if (nb)
        memcpy(s->buckets.v + s->buckets.n, b, nb * sizeof *b);
    tfb_hist_point *p = &s->hist[n];
    p->min = min;
    p->max = max;
    p->num = num;
    p->sum = sum;
    p->bucket_off = s->buckets.n;
    p->n_buckets = (uint32_t)nb;
    s->buckets.n += nb;
    s->step[n] = step;
    s->wall[n] = wall;
    double f[4] = {min, max, sum, num};
    int any_nan = 0, inf_sign = 0;
    for (int i = 0; i < 4; i++) {
        if (isnan(f[i]))
            any_nan = 1;
        else if (isinf(f[i]) && !inf_sign)
            inf_sign = f[i] > 0 ? 1 : -1;
    }
    if (any_nan || inf_sign)
        note_nonfinite(s, step, wall, any_nan, !any_nan && inf_sign > 0,
                       !any_nan && inf_sign < 0);
    atomic_store_explicit(&s->count, n + 1, memory_order_release);
    return 0;
}

int tfb_series_append_text(tfb_series *s, int64_t step, double wall,
                           const char *text, size_t len)
{
    if (s->kind != TFB_SERIES_TEXT || len > UINT32_MAX)
        return TFB_EINVAL;
    size_t n = atomic_load_explicit(&s->count, memory_order_relaxed);
    int rc = reserve_point(s, n);
    if (rc < 0)
        return rc;
    if (s->text_data.n + len > s->text_data.cap) {
        size_t nc =
            s->text_data.cap < 4096 ? 4096 : s->text_data.cap * 3 / 2;
        while (nc < s->text_data.n + len)
            nc = nc * 3 / 2;
        pthread_rwlock_wrlock(lock_of(s));
        rc = tfb_vec_setcap(&s->text_data, nc);
        pthread_rwlock_unlock(lock_of(s));
        if (rc < 0)
            return TFB_ENOMEM;
    }
    if (len)
        memcpy(s->text_data.v + s->text_data.n, text, len);
    s->text_off[n] = s->text_data.n;
    s->text_len[n] = (uint32_t)len;
    s->text_data.n += len;
    s->step[n] = step;
    s->wall[n] = wall;
    atomic_store_explicit(&s->count, n + 1, memory_order_release);
    return 0;
}

int tfb_series_append_numerics(tfb_series *s, int64_t step, double wall,
                               const tfb_numerics_point *c)
{
    if (s->kind != TFB_SERIES_NUMERICS)
        return TFB_EINVAL;
    size_t n = atomic_load_explicit(&s->count, memory_order_relaxed);
    int rc = reserve_point(s, n);
    if (rc < 0)
        return rc;
    s->numerics[n] = *c;
    s->step[n] = step;
    s->wall[n] = wall;
    if (c->nan || c->pos_inf || c->neg_inf)
        note_nonfinite(s, step, wall, c->nan, c->pos_inf, c->neg_inf);
    atomic_store_explicit(&s->count, n + 1, memory_order_release);
    return 0;
}

/* ---- plugin records ------------------------------------------------- */

static void record_clear(tfb_plugin_record *x)
{
    free(x->plugin);
    free(x->tag);
    free(x->content);
    free(x->tensor);
    memset(x, 0, sizeof *x);
}

void tfb_plugin_records_free(tfb_plugin_record *v, size_t n)
{
    for (size_t i = 0; v && i < n; i++)
        record_clear(&v[i]);
    free(v);
}

static void *dup_bytes(const void *p, size_t n)
{
    void *d = malloc(n ? n : 1);
    if (d && n)
        memcpy(d, p, n);
    return d;
}

static int record_copy(tfb_plugin_record *d, const char *plugin,
                       size_t plugin_len, const char *tag, size_t tag_len,
                       int64_t step, double wall, const void *content,
                       size_t content_len, const void *tensor,
                       size_t tensor_len)
{
    memset(d, 0, sizeof *d);
    d->plugin = tfb_strndup(plugin, plugin_len);
    d->tag = tfb_strndup(tag, tag_len);
    d->content = dup_bytes(content, content_len);
    d->tensor = dup_bytes(tensor, tensor_len);
    d->step = step;
    d->wall = wall;
    d->content_len = content_len;
    d->tensor_len = tensor_len;
    if (!d->plugin || !d->tag || !d->content || !d->tensor) {
        record_clear(d);
        return TFB_ENOMEM;
    }
    return 0;
}

int tfb_run_put_record(tfb_run *r, const char *plugin, size_t plugin_len,
                       const char *tag, size_t tag_len, int64_t step,
                       double wall, const void *content, size_t content_len,
                       const void *tensor, size_t tensor_len)
{
    if (content_len + tensor_len > TFB_RECORD_MAX_BYTES)
        return TFB_ETOOBIG;
    tfb_plugin_record fresh;
    int rc = record_copy(&fresh, plugin, plugin_len, tag, tag_len, step, wall,
                         content, content_len, tensor, tensor_len);
    if (rc < 0)
        return rc;
    pthread_mutex_lock(&r->lock);
    size_t i = 0;
    /* Few plugin tags per run (a handful of hparams and rank records): a
     * linear search is enough. */
    for (; i < r->records.n; i++)
        if (!strcmp(r->records.v[i].plugin, fresh.plugin) &&
            !strcmp(r->records.v[i].tag, fresh.tag))
            break;
    /* Room by doubling from one: most runs hold one or two records, and
     * a vector's first 16 (1 KiB) were 2 B of every point of a
     * 500-point run in a 100,000-run sweep. */
    if (i == r->records.n && i == r->records.cap &&
        tfb_vec_setcap(&r->records, i ? 2 * i : 1) < 0) {
        pthread_mutex_unlock(&r->lock);
        record_clear(&fresh);
        return TFB_ENOMEM;
    }
    if (i == r->records.n)
        r->records.n++;
    else
        record_clear(&r->records.v[i]);
    r->records.v[i] = fresh;
    pthread_mutex_unlock(&r->lock);
    run_changed(r);
    tfb_store_bump_generation(r->store);
    return 0;
}

int tfb_run_records(tfb_run *r, const char *plugin, tfb_plugin_record **out,
                    size_t *n)
{
    pthread_mutex_lock(&r->lock);
    size_t m = 0;
    for (size_t i = 0; i < r->records.n; i++)
        m += !strcmp(r->records.v[i].plugin, plugin);
    tfb_plugin_record *v = calloc(m ? m : 1, sizeof *v);
    int rc = v ? 0 : TFB_ENOMEM;
    size_t k = 0;
    for (size_t i = 0; rc == 0 && i < r->records.n; i++) {
        const tfb_plugin_record *x = &r->records.v[i];
        if (strcmp(x->plugin, plugin) != 0)
            continue;
        rc = record_copy(&v[k], x->plugin, strlen(x->plugin), x->tag,
                         strlen(x->tag), x->step, x->wall, x->content,
                         x->content_len, x->tensor, x->tensor_len);
        if (rc == 0)
            k++;
    }
    pthread_mutex_unlock(&r->lock);
    if (rc < 0) {
        tfb_plugin_records_free(v, k);
        return rc;
    }
    *out = v;
    *n = k;
    return 0;
}

/* ---- notes ------------------------------------------------------------ */

int tfb_run_set_note(tfb_run *r, const char *key, const char *text)
{
    char *t = text ? tfb_strdup(text) : NULL;
    if (text && !t)
        return TFB_ENOMEM;
    int rc = 0, changed = 1;
    pthread_mutex_lock(&r->lock);
    size_t i = 0;
    while (i < r->notes.n && strcmp(r->notes.v[i].key, key) != 0)
        i++;
    if (i < r->notes.n) {
        run_note *e = &r->notes.v[i];
        if (t && !strcmp(e->text, t)) {
            free(t); /* unchanged */
            changed = 0;
        } else if (t) {
            free(e->text);
            e->text = t;
        } else {
            free(e->text);
            free(e->key);
            memmove(e, e + 1, (r->notes.n - i - 1) * sizeof *e);
            r->notes.n--;
        }
    } else if (t) {
        char *k = tfb_strdup(key);
        if (!k || tfb_vec_push(&r->notes, ((run_note){k, t})) < 0) {
            free(k);
            free(t);
            rc = TFB_ENOMEM;
        }
    } else {
        changed = 0; /* no such note to remove */
    }
    pthread_mutex_unlock(&r->lock);
    if (changed && rc == 0)
        run_changed(r);
    return rc;
}

int tfb_run_notes(tfb_run *r, char ***out, size_t *n)
{
    pthread_mutex_lock(&r->lock);
    size_t m = r->notes.n;
    char **v = calloc(m ? m : 1, sizeof *v);
    int rc = v ? 0 : TFB_ENOMEM;
    for (size_t i = 0; rc == 0 && i < m; i++)
        if (!(v[i] = tfb_strdup(r->notes.v[i].text)))
            rc = TFB_ENOMEM;
    pthread_mutex_unlock(&r->lock);
    if (rc < 0) {
        tfb_strv_free(v, m);
        return rc;
    }
    *out = v;
    *n = m;
    return 0;
}
