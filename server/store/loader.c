/*
 * loader.c - logdir scanning and (re)loading into the store. See loader.h.
 */
#include "store/loader.h"
#include "store/storage.h"

#include "base/deadline.h"
#include "base/hash.h"
#include "store/event_blobs.h"
#include "store/loader_split.h"
#include "collector/event_decode.h"
#include "store/media_index.h"
#include "base/str.h"
#include "store/text_tensor.h"
#include "store/value_decoder.h"
#include "base/strtab.h"
#include "base/utf8.h"
#include "base/vec.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/errors.h"
#include "collector/reader_source.h"

/* Events between progress updates and stop checks, and a batch of points
 * for the run's generation (tfb_run_points_published): a cache of the
 * run's results is stale for at most this many events of a long read. */
#define CHUNK_EVENTS 65536
/* Bytes read from one file between stop checks, and in one pass: a 20 GB
 * file (or a sparse one of garbage) is read over several passes, which
 * follow each other at once, so it cannot hold back every other run's
 * reload, and SIGTERM is seen within one chunk. */
#define CHUNK_BYTES ((uint64_t)32 << 20)
#define PASS_FILE_BYTES ((uint64_t)128 << 20)
#define MAX_DEPTH 64
/* A file's error detail as the run's note quotes it (whole characters). */
#define DETAIL_MAX 200
/* Forced reloads (tfb_store_request_reload: /data/reload) start a pass at
 * most once per this many seconds, or per reload interval when that is
 * shorter: for a bucket each pass is a billed LIST of the whole prefix,
 * and 50 requests in 1 s made 34 to 48 of them while --reload_interval
 * was 30. A request inside the spacing is not dropped: one pass at its end
 * serves every request made meanwhile. 5 s is as long as a person waits
 * for a reload they asked for, and caps forced passes at 12 a minute
 * (server/API.md, "Loading and reloading"). */
#define RELOAD_SPACING_S 5.0
/* The profile's index time (store.h, tfb_load_profile) is measured on one
 * value in this many: two clock reads (~60 ns here, under KVM) on every
 * value would cost more than putting a scalar into its series. A power of
 * two, not a multiple of a run's usual tag count, so every tag is
 * sampled. The estimate is the samples' mean (less the clock's own cost)
 * times the values; a sample over TFB_LOAD_PROFILE_OUTLIER_NS was
 * preempted (a loaded machine: one preemption of 4 ms, scaled, had made
 * the estimate twice the whole load's CPU time) and is left out. */
#define TFB_LOAD_PROFILE_SAMPLE 64
#define TFB_LOAD_PROFILE_OUTLIER_NS 50000

typedef struct tag_entry {
    char *tag;
    size_t len;
    char *plugin; /* from the tag's first value that carried metadata */
    size_t plugin_len;
    tfb_series *series[TFB_SERIES_KIND_COUNT];
    /* the plugin's value decoder (value_decoder.h) and the run's state of
     * it, looked up once when the plugin is known; NULL: none */
    const tfb_value_decoder *dec;
    void *dec_state;
    struct tag_entry *succ;
} tag_entry;

/* One per event file of a run, kept for the server's life: 100,000 runs
 * keep 100,000 of these, so what is rare (an error's detail) is allocated
 * when it happens and the base name points into the path. */
typedef struct file_state {
    char *path;
    const char *name; /* base name (in path), for ordering */
    /* NULL between passes once read to its end (`parked`): the next pass
     * resumes a new reader at `done` with `stats`
     * (tfb_storage_reader_resume), so an idle file holds no reader. */
    tfb_reader *reader;
    int parked;
    char etag[TFB_STORAGE_ETAG_MAX]; /* the version being read */
    uint64_t listed; /* size in the last listing */
    uint64_t size;  /* at the last scan */
    uint64_t done;  /* bytes consumed */
    int error;      /* last error (reported once per change) */
    char *detail; /* the backend's line about it (storage.h); NULL: none */
    uint64_t requests, request_bytes; /* the last pass's (storage.h) */
    int gone;       /* deleted since: data kept, reader closed */
    /* The last pass stopped at the end of what the object held (a partial
     * record waits there, or nothing more), which was waiting_size bytes:
     * on storage whose objects never change in place (storage.h,
     * ops->immutable), the same listing means nothing new to read. */
    int waiting;
    uint64_t waiting_size;
    tfb_reader_stats stats;
} file_state;

typedef struct run_state {
    tfb_run *run;
    char *dir;
    TFB_VEC(file_state) files;
    /* tag -> tag_entry (each malloc'd; the key is its own tag copy).
     * Entries never move. */
    tfb_strtab tags;
    /* The entry of the previous value. Writers log the same tags in the
     * same order, so each entry's `succ` (the tag that followed it last
     * time) predicts the next one and skips most hash lookups. */
    tag_entry *last;
    /* the table was dropped after the run was read to its end, loading
     * once (drop_tags): a tag seen again is restored from the store */
    int tags_dropped;
    const char *cur_path; /* the file being read, for the image index */
    int need_reset;
    /* What a user should hear about (the run's notes, runs_info). */
    uint64_t empty_tag_values; /* values with neither tag nor node name */
    uint64_t bad_utf8_tags;    /* tags renamed by the U+FFFD rule */
    uint64_t noted_empty, noted_utf8;
} run_state;

struct tfb_loader {
    tfb_store *store;
    tfb_loader_opts opts;
    tfb_storage *storage; /* opts.storage, or our own local one */
    int own_storage;
    TFB_VEC(run_state *) runs;
    tfb_strtab run_idx; /* run name -> run_state (keys: the run's name) */
    pthread_t thread;
    int has_thread;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    atomic_int stop;
    /* pass state shared by the workers */
    atomic_size_t next_run;
    atomic_uint_fast64_t points;
    atomic_uint_fast64_t bytes_done;
    atomic_uint_fast64_t files_done;
    uint64_t bytes_total, files_total, reloads;
    atomic_int more; /* a file stopped at its pass budget with bytes left */
    atomic_int spare; /* this pass's threads left over for helpers */
    int deep_noted;  /* said once that a directory was too deep */
    int first_done;
    int logdir_missing; /* the last pass could not open the logdir */
    int kicked; /* a reload was asked for (tfb_store_request_reload) */
    long long kick_pass_ns; /* when the last forced pass began; 0: none */
    unsigned idle_passes; /* remote storage: passes that found nothing new */
    uint64_t pass_new_bytes; /* bytes the last pass read */
    tfb_load_profile prof;   /* summed at each worker's end; under lock */
    /* prof as of the last pass's end: written by the loader thread between
     * passes (no worker runs), read by publish_progress */
    tfb_load_profile prof_pub;
    uint64_t clock_ns; /* clock_cost_ns, once */
};

static uint64_t now_ns(void)
{
    return (uint64_t)tfb_mono_now_ns();
}

/* What one timing (two clock reads) costs by itself, taken from the
 * sampled index times: the least of a few tries. */
static uint64_t clock_cost_ns(void)
{
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < 16; i++) {
        uint64_t t0 = now_ns(), t1 = now_ns();
        if (t1 - t0 < best)
            best = t1 - t0;
    }
    return best;
}

/* ---- small helpers -------------------------------------------------- */

static int ends_with(const char *s, const char *suf)
{
    size_t ls = strlen(s), lf = strlen(suf);
    return ls >= lf && memcmp(s + ls - lf, suf, lf) == 0;
}

static int is_trace_name(const char *n)
{
    return ends_with(n, ".sqlite") || ends_with(n, ".pt.trace.json") ||
           ends_with(n, ".pt.trace.json.gz");
}

/* ---- tag table (loader-private, one per run) ------------------------ */

static void tags_free(run_state *rs)
{
    for (size_t i = 0; i < rs->tags.cap; i++) {
        tag_entry *e = rs->tags.slots[i].val;
        if (!rs->tags.slots[i].hash || !e)
            continue;
        free(e->tag);
        free(e->plugin);
        free(e);
    }
    tfb_strtab_free(&rs->tags);
}

static void set_plugin(run_state *rs, tag_entry *e, const char *plugin,
                       size_t len);

/* A tag seen again after its run's table was dropped (drop_tags): its
 * series and plugin as the store has them, since writers put a tag's
 * plugin on its first value only. */
static void tag_restore(run_state *rs, tag_entry *e)
{
    for (int k = 0; k < TFB_SERIES_KIND_COUNT; k++) {
        tfb_series *s = tfb_run_find_series(rs->run, (tfb_series_kind)k,
                                            e->tag);
        if (!s)
            continue;
        e->series[k] = s;
        const char *pl = tfb_series_plugin(s);
        if (!e->plugin && pl && *pl)
            set_plugin(rs, e, pl, strlen(pl));
    }
}

static tag_entry *tag_lookup(run_state *rs, const char *tag, size_t len)
{
    uint64_t h = tfb_hash_bytes(tag, len);
    tag_entry *e = tfb_strtab_get_h(&rs->tags, tag, len, h);
    if (e)
        return e;
    e = calloc(1, sizeof *e);
    if (!e)
        return NULL;
    e->tag = tfb_strndup(tag, len);
    e->len = len;
    if (!e->tag || tfb_strtab_put_h(&rs->tags, e->tag, len, h, e) < 0) {
        free(e->tag);
        free(e);
        return NULL;
    }
    if (rs->tags_dropped)
        tag_restore(rs, e);
    return e;
}

/* ---- scanning ------------------------------------------------------- */

static run_state *find_run_state(tfb_loader *l, tfb_run *run)
{
    const char *name = tfb_run_name(run);
    return tfb_strtab_get(&l->run_idx, name, strlen(name));
}

static int add_file(run_state *rs, const char *path, const char *name,
                    uint64_t listed)
{
    for (size_t i = 0; i < rs->files.n; i++)
        if (strcmp(rs->files.v[i].path, path) == 0) {
            rs->files.v[i].listed = listed;
            return 0;
        }
    /* Room first; the slot counts only once its strings are copied. */
    if (tfb_vec_need(&rs->files, rs->files.n + 1) < 0)
        return TFB_ENOMEM;
    file_state *f = &rs->files.v[rs->files.n];
    memset(f, 0, sizeof *f);
    f->path = tfb_strdup(path);
    f->listed = listed;
    if (!f->path)
        return TFB_ENOMEM;
    /* name is path's last part (the listing's entries end with it) */
    size_t pl = strlen(path), nl = strlen(name);
    f->name = nl <= pl && strcmp(path + pl - nl, name) == 0 ? f->path + pl - nl
                                                            : f->path;
    rs->files.n++;
    return 0;
}

static int cmp_file(const void *a, const void *b)
{
    return strcmp(((const file_state *)a)->name, ((const file_state *)b)->name);
}

/* Registers the directory dir (relative name rel) as a run when it holds
 * event or trace files. */
static int scan_one_dir(tfb_loader *l, const char *dir, const char *rel,
                        const tfb_storage_entry *const *events,
                        size_t n_events,
                        const tfb_storage_entry *const *traces,
                        size_t n_traces)
{
    if (n_events == 0 && n_traces == 0)
        return 0;
    tfb_run *run;
    /* A directory name that is not UTF-8 is listed, and queried, with its
     * invalid bytes as U+FFFD (the only form JSON can carry). */
    int bad_name = !tfb_utf8_valid(rel, strlen(rel));
    char *clean_rel = bad_name ? tfb_utf8_clean(rel, strlen(rel), NULL)
                               : (char *)rel;
    if (!clean_rel)
        return TFB_ENOMEM;
    int rc = tfb_store_get_run(l->store, clean_rel, &run);
    if (bad_name)
        free(clean_rel);
    if (rc < 0)
        return rc;
    if (bad_name)
        tfb_run_set_note(run, "name",
                         "the directory name is not valid UTF-8: its invalid "
                         "bytes are shown (and queried) as U+FFFD");
    run_state *rs = find_run_state(l, run);
    if (!rs) {
        rs = calloc(1, sizeof *rs);
        if (!rs)
            return TFB_ENOMEM;
        rs->run = run;
        rs->dir = tfb_strdup(dir);
        if (!rs->dir) {
            free(rs);
            return TFB_ENOMEM;
        }
        const char *name = tfb_run_name(run);
        if (tfb_vec_need(&l->runs, l->runs.n + 1) < 0 ||
            tfb_strtab_put(&l->run_idx, name, strlen(name), rs) < 0) {
            free(rs->dir);
            free(rs);
            return TFB_ENOMEM;
        }
        l->runs.v[l->runs.n++] = rs;
    }
    size_t before = rs->files.n;
    for (size_t i = 0; i < n_events; i++) {
        const char *name = strrchr(events[i]->path, '/');
        rc = add_file(rs, events[i]->path, name ? name + 1 : events[i]->path,
                      events[i]->st.size);
        if (rc < 0)
            return rc;
    }
    if (rs->files.n != before) {
        qsort(rs->files.v, rs->files.n, sizeof *rs->files.v, cmp_file);
        /* A run gains files rarely (a restart): room for exactly these,
         * not a vector's first 4 KiB, which was 30 % of a 500-point run. */
        (void)tfb_vec_setcap(&rs->files, rs->files.n);
    }
    char **tp = calloc(n_traces ? n_traces : 1, sizeof *tp);
    if (!tp)
        return TFB_ENOMEM;
    for (size_t i = 0; i < n_traces; i++) {
        /* a trace store in a bucket is read from a local copy */
        rc = tfb_storage_local_path(l->storage, traces[i]->path, &tp[i]);
        if (rc == TFB_ENOMEM) {
            tfb_strv_free(tp, n_traces);
            return rc;
        }
        if (rc < 0 && !(tp[i] = tfb_strdup(traces[i]->path))) {
            tfb_strv_free(tp, n_traces);
            return TFB_ENOMEM;
        }
    }
    rc = tfb_run_set_trace_files(run, tp, n_traces);
    tfb_strv_free(tp, n_traces);
    return rc;
}

/* Length of the directory part of an entry's relative name (0 for the
 * logdir itself). */
static size_t dir_len(const char *rel)
{
    const char *slash = strrchr(rel, '/');
    return slash ? (size_t)(slash - rel) : 0;
}

/* Entries grouped by directory (then by name): each run's files are
 * together, in name order. */
static int cmp_entry(const void *a, const void *b)
{
    const tfb_storage_entry *x = a, *y = b;
    size_t dx = dir_len(x->rel), dy = dir_len(y->rel);
    size_t m = dx < dy ? dx : dy;
    int c = memcmp(x->rel, y->rel, m);
    if (c)
        return c;
    if (dx != dy)
        return dx < dy ? -1 : 1;
    return strcmp(x->rel + dx, y->rel + dy);
}

/* The names a run is made of: event files (any kind of file: one that is
 * not regular is listed to say why it is not read) and trace files. */
static int wanted_name(const char *name, void *arg)
{
    (void)arg;
    return strstr(name, "tfevents") != NULL || is_trace_name(name);
}

/* One flat listing of the logdir (one request for a bucket, a walk for
 * local files), grouped into runs: a directory holding event or trace
 * files. Files named like event files that are not regular (a FIFO, a
 * link to a device) are listed too, so that runs_info and the report say
 * why they are not read (read_file never opens them). */
static int scan(tfb_loader *l)
{
    if (atomic_load(&l->stop))
        return 0;
    const char *logdir = tfb_store_logdir(l->store);
    tfb_storage_entry *e = NULL;
    size_t n = 0;
    int too_deep = 0;
    int rc = l->storage->ops->list(l->storage, logdir, MAX_DEPTH,
                                   wanted_name, NULL, &e, &n, &too_deep);
    if (rc < 0)
        return rc;
    if (too_deep && !l->deep_noted && l->opts.log)
        fprintf(l->opts.log, "tfboard: %s has directories more than %d "
                             "directories below the logdir; they and what "
                             "is under them are not scanned\n",
                logdir, MAX_DEPTH);
    l->deep_noted |= too_deep;
    if (n > 1)
        qsort(e, n, sizeof *e, cmp_entry);
    const tfb_storage_entry **ev = malloc((n ? n : 1) * sizeof *ev);
    const tfb_storage_entry **tr = malloc((n ? n : 1) * sizeof *tr);
    if (!ev || !tr)
        rc = TFB_ENOMEM;
    for (size_t i = 0; rc == 0 && i < n;) {
        size_t dl = dir_len(e[i].rel), k = i, ne = 0, nt = 0;
        for (; k < n && dir_len(e[k].rel) == dl &&
               memcmp(e[k].rel, e[i].rel, dl) == 0;
             k++) {
            const char *name = e[k].rel + (dl ? dl + 1 : 0);
            if (strstr(name, "tfevents"))
                ev[ne++] = &e[k];
            else if (e[k].st.regular && is_trace_name(name))
                tr[nt++] = &e[k];
        }
        if (ne || nt) {
            char *rel = dl ? tfb_strndup(e[i].rel, dl) : tfb_strdup(".");
            char *dir = rel ? tfb_storage_join(logdir, rel) : NULL;
            if (!rel || !dir)
                rc = TFB_ENOMEM;
            else {
                uint64_t t0 = now_ns();
                rc = scan_one_dir(l, dir, rel, ev, ne, tr, nt);
                l->prof.runs_ns += now_ns() - t0;
            }
            free(rel);
            free(dir);
        }
        i = k;
    }
    free(ev);
    free(tr);
    tfb_storage_entries_free(e, n);
    return rc;
}

/* ---- reading -------------------------------------------------------- */

typedef struct worker_buf {
    TFB_VEC(tfb_bucket) buckets; /* a histogram's, decoded */
    TFB_VEC(tfb_hist_bucket) kept; /* the same, as the store keeps them */
    /* The read buffer lent to each file's reader in turn (reader_source.h):
     * one per worker, not one per file and pass. */
    uint8_t *rbuf;
    size_t rcap;
    /* This worker's helper (loader_split.h) when the pass has fewer runs
     * than threads: every scalar append goes through it. NULL: none. */
    tfb_loader_split *split;
    tfb_load_profile prof; /* this worker's, added to the loader's at its end */
    unsigned sample;       /* values since the last sampled one */
    uint64_t values;       /* values ingested */
    uint64_t idx_samples, idx_sample_ns; /* the samples kept, their time */
    uint64_t clock_ns;     /* the loader's clock_ns */
    uint64_t made_ns;      /* tags + series creation so far (not sampled) */
    uint64_t loop_ns;      /* read loops less their reads: parse + index */
} worker_buf;

/* The worker's read buffer, and the size past which a lent buffer that
 * grew (a huge record) is not kept. */
#define READ_BUF ((size_t)1 << 20)
#define KEEP_READ_BUF ((size_t)8 << 20)

static void publish_progress(tfb_loader *l, int done)
{
    tfb_load_progress p = {0};
    p.files_total = l->files_total;
    p.files_done = atomic_load(&l->files_done);
    if (p.files_done > p.files_total)
        p.files_done = p.files_total;
    p.bytes_total = l->bytes_total;
    p.bytes_done = atomic_load(&l->bytes_done);
    if (p.bytes_done > p.bytes_total)
        p.bytes_done = p.bytes_total;
    p.points = atomic_load(&l->points);
    p.done = done || l->first_done;
    p.reloads = l->reloads;
    p.profile = l->prof_pub;
    tfb_store_set_progress(l->store, &p);
}

static tfb_series *series_for(run_state *rs, worker_buf *wb, tag_entry *e,
                              tfb_series_kind kind, const tfb_value *v)
{
    if (e->series[kind])
        return e->series[kind];
    uint64_t t0 = now_ns();
    tfb_series *s = NULL;
    const char *plugin = e->plugin ? e->plugin : "";
    /* The U+FFFD rule of utf8.h: the tag listed is the tag queried. */
    const char *tag = e->tag;
    size_t tag_len = e->len;
    char *clean = NULL;
    if (!tfb_utf8_valid(tag, tag_len)) {
        clean = tfb_utf8_clean(tag, tag_len, &tag_len);
        if (!clean)
            return NULL;
        tag = clean;
        rs->bad_utf8_tags++;
    }
    int rc = tfb_run_get_series(rs->run, kind, tag, tag_len, plugin,
                                strlen(plugin), v->display_name.ptr,
                                v->display_name.len, v->description.ptr,
                                v->description.len, &s);
    free(clean);
    uint64_t dt = now_ns() - t0;
    wb->prof.series_ns += dt;
    wb->made_ns += dt;
    if (rc < 0)
        return NULL;
    e->series[kind] = s;
    return s;
}

/* ---- the store's own kinds of value, one per value type ---- */

/* Stores one value of tag e; returns the points kept. */
typedef uint64_t (*ingest_fn)(run_state *rs, worker_buf *wb, tag_entry *e,
                              const tfb_value *v, const tfb_event *ev);

static uint64_t ingest_scalar(run_state *rs, worker_buf *wb, tag_entry *e,
                              const tfb_value *v, const tfb_event *ev)
{
    tfb_series *s = series_for(rs, wb, e, TFB_SERIES_SCALAR, v);
    if (s && wb->split) /* appended by the helper; refusals come back at
                         * the drain */
        return tfb_loader_split_push(wb->split, s, ev->step, ev->wall_time,
                                     v->scalar) == 0;
    return s && tfb_series_append_scalar(s, ev->step, ev->wall_time,
                                         v->scalar) == 0;
}

static uint64_t ingest_histogram(run_state *rs, worker_buf *wb, tag_entry *e,
                                 const tfb_value *v, const tfb_event *ev)
{
    double mn = NAN, mx = NAN, num = NAN, sum = NAN;
    if (tfb_vec_need(&wb->buckets, 64) < 0)
        return 0;
    wb->buckets.v[0].size = sizeof(tfb_bucket); /* tfboard.h's rule */
    int64_t nb = tfb_value_histogram(v, wb->buckets.v, wb->buckets.cap, &mn,
                                     &mx, &num, &sum);
    if (nb < 0)
        return 0;
    if ((size_t)nb > wb->buckets.cap) {
        if (tfb_vec_need(&wb->buckets, (size_t)nb) < 0)
            return 0;
        nb = tfb_value_histogram(v, wb->buckets.v, wb->buckets.cap, &mn, &mx,
                                 &num, &sum);
        if (nb < 0 || (size_t)nb > wb->buckets.cap)
            return 0;
    }
    if (tfb_vec_need(&wb->kept, (size_t)nb) < 0)
        return 0;
    for (int64_t i = 0; i < nb; i++)
        wb->kept.v[i] = (tfb_hist_bucket){wb->buckets.v[i].left,
                                          wb->buckets.v[i].right,
                                          wb->buckets.v[i].count};
    tfb_series *s = series_for(rs, wb, e, TFB_SERIES_HISTOGRAM, v);
    return s && tfb_series_append_histogram(s, ev->step, ev->wall_time, mn,
                                            mx, num, sum, wb->kept.v,
                                            (size_t)nb) == 0;
}

/* String 0, or a vector/matrix of strings as a pipe table. */
static uint64_t ingest_text(run_state *rs, worker_buf *wb, tag_entry *e,
                            const tfb_value *v, const tfb_event *ev)
{
    tfb_strview t;
    char *owned;
    tfb_text_tensor(v, &t, &owned);
    tfb_series *s = series_for(rs, wb, e, TFB_SERIES_TEXT, v);
    int ok = s && tfb_series_append_text(s, ev->step, ev->wall_time, t.ptr,
                                         t.len) == 0;
    free(owned);
    return ok;
}

static uint64_t ingest_numerics(run_state *rs, worker_buf *wb, tag_entry *e,
                                const tfb_value *v, const tfb_event *ev)
{
    tfb_series *s = series_for(rs, wb, e, TFB_SERIES_NUMERICS, v);
    tfb_numerics_point c = {v->numerics.nan, v->numerics.pos_inf,
                            v->numerics.neg_inf};
    return s && tfb_series_append_numerics(s, ev->step, ev->wall_time,
                                           &c) == 0;
}

/* A value of a plugin the store has no series for (hparams,
 * tfboard_rank): the latest per tag, for that plugin to decode. */
static uint64_t ingest_record(run_state *rs, worker_buf *wb, tag_entry *e,
                              const tfb_value *v, const tfb_event *ev)
{
    (void)wb;
    return e->plugin && e->plugin_len &&
           tfb_run_put_record(rs->run, e->plugin, e->plugin_len, e->tag,
                              e->len, ev->step, ev->wall_time,
                              v->plugin_content.ptr, v->plugin_content.len,
                              v->tensor, v->tensor ? v->tensor_len : 0) == 0;
}

/* By value type; an image that is no media (a type without a plugin)
 * keeps nothing. */
static const ingest_fn by_type[] = {
    [TFB_VALUE_UNKNOWN] = ingest_record,
    [TFB_VALUE_SCALAR] = ingest_scalar,
    [TFB_VALUE_HISTOGRAM] = ingest_histogram,
    [TFB_VALUE_TEXT] = ingest_text,
    [TFB_VALUE_NUMERICS] = ingest_numerics,
    [TFB_VALUE_TENSOR] = ingest_record,
};

/* The tag's plugin is known (from its first value): its decoder, once. */
static void set_plugin(run_state *rs, tag_entry *e, const char *plugin,
                       size_t len)
{
    if (!(e->plugin = tfb_strndup(plugin, len)))
        return;
    e->plugin_len = len;
    e->dec = tfb_value_decoder_find(plugin, len);
    if (e->dec)
        e->dec_state = tfb_run_decoder_state(rs->run, e->dec);
}

/* A's bytes equal B's, both n long: inline for the short tags a run's
 * values carry (the library memcmp's call and set-up were 5 % of a
 * one-file load, comparing 7-byte tags). */
static inline int same_bytes(const char *a, const char *b, size_t n)
{
    if (n <= 16) {
        uint64_t x, y;
        if (n >= 8) { /* first and last 8, overlapping */
            memcpy(&x, a, 8), memcpy(&y, b, 8);
            uint64_t d = x ^ y;
            memcpy(&x, a + n - 8, 8), memcpy(&y, b + n - 8, 8);
            return (d | (x ^ y)) == 0;
        }
        uint32_t u, w;
        if (n >= 4) {
            memcpy(&u, a, 4), memcpy(&w, b, 4);
            uint32_t d = u ^ w;
            memcpy(&u, a + n - 4, 4), memcpy(&w, b + n - 4, 4);
            return (d | (u ^ w)) == 0;
        }
        for (size_t i = 0; i < n; i++)
            if (a[i] != b[i])
                return 0;
        return 1;
    }
    return memcmp(a, b, n) == 0;
}

/* The entry of a value's tag (len > 0): the one that followed the
 * previous value's last time, else the table's. NULL: out of memory. */
static inline tag_entry *resolve_tag(run_state *rs, worker_buf *wb,
                                     const char *tag, size_t len)
{
    tag_entry *e = rs->last ? rs->last->succ : NULL;
    if (!e || e->len != len || !same_bytes(e->tag, tag, len)) {
        uint64_t t0 = now_ns();
        e = tag_lookup(rs, tag, len);
        uint64_t dt = now_ns() - t0;
        wb->prof.tags_ns += dt;
        wb->made_ns += dt;
        if (!e)
            return NULL;
        if (rs->last)
            rs->last->succ = e;
    }
    rs->last = e;
    return e;
}

/* One value of tag e to the first kind that takes it (value_decoder.h):
 * its plugin's decoder, the media index, the store's kind of its type. */
static uint64_t ingest_entry(run_state *rs, worker_buf *wb, tag_entry *e,
                             tfb_value *v, const tfb_event *ev)
{
    if (v->plugin_name.len) {
        if (!e->plugin)
            set_plugin(rs, e, v->plugin_name.ptr, v->plugin_name.len);
    } else if (e->plugin) {
        /* Writers put metadata on a tag's first value only. */
        tfb_value_apply_plugin(v, e->plugin, e->plugin_len);
    }
    if (e->dec && e->dec_state) {
        tfb_decoded_value d = {rs->run, e->dec_state, rs->cur_path, ev, v,
                               e->tag, e->len};
        int m = e->dec->decode(&d);
        if (m != TFB_ENOENT)
            return m > 0 ? (uint64_t)m : 0;
    }
    if (tfb_media_is_image(v, e->plugin, e->plugin_len)) {
        /* Images are indexed (file, offset, length), not stored. */
        int m = tfb_media_index_add(tfb_run_media_to_add(rs->run), rs->cur_path, ev,
                                    v, e->plugin, e->plugin_len);
        return m > 0 ? (uint64_t)m : 0;
    }
    if ((size_t)v->kind < sizeof by_type / sizeof *by_type &&
        by_type[v->kind])
        return by_type[v->kind](rs, wb, e, v, ev);
    return 0;
}

static uint64_t ingest_value_now(run_state *rs, worker_buf *wb,
                                 tfb_value *v, const tfb_event *ev)
{
    if (v->tag.len == 0) {
        /* Neither a tag nor a node name: nothing to list it under. */
        rs->empty_tag_values++;
        return 0;
    }
    tag_entry *e = resolve_tag(rs, wb, v->tag.ptr, v->tag.len);
    return e ? ingest_entry(rs, wb, e, v, ev) : 0;
}

/* ingest_value_now, timed on one value in TFB_LOAD_PROFILE_SAMPLE for the
 * profile's index time (less the tags and series made meanwhile, which
 * are counted whole). */
static uint64_t ingest_value(run_state *rs, worker_buf *wb, tfb_value *v,
                             const tfb_event *ev)
{
    wb->values++;
    if (++wb->sample < TFB_LOAD_PROFILE_SAMPLE)
        return ingest_value_now(rs, wb, v, ev);
    wb->sample = 0;
    uint64_t t0 = now_ns(), m0 = wb->made_ns;
    uint64_t pts = ingest_value_now(rs, wb, v, ev);
    uint64_t dt = now_ns() - t0 - (wb->made_ns - m0);
    if (dt < TFB_LOAD_PROFILE_OUTLIER_NS) {
        wb->idx_samples++;
        wb->idx_sample_ns += dt > wb->clock_ns ? dt - wb->clock_ns : 0;
    }
    return pts;
}

/* A value tfb_summary_next_simple took (a tag and a simple_value, nothing
 * else), without a tfb_value: what ingest_value does with these bytes,
 * whose tfb_value would have kind SCALAR, no plugin, no tensor. Such a
 * value is no media (no tensor, not an image or audio) and applying the
 * tag's plugin to it changes nothing (apply_plugin needs a tensor), so
 * once its tag has a scalar series and no plugin decoder, the point goes
 * straight to that series. Anything else (the tag's first value, a
 * decoder) returns -1 with the tag resolved into *out: the caller
 * decodes the value whole and gives it to ingest_entry. */
static inline int64_t ingest_simple(run_state *rs, worker_buf *wb,
                                    tfb_strview tag, float x,
                                    const tfb_event *ev, tag_entry **out)
{
    tag_entry *e = resolve_tag(rs, wb, tag.ptr, tag.len);
    *out = e;
    if (!e)
        return 0;
    tfb_series *s = e->series[TFB_SERIES_SCALAR];
    if (!s || (e->dec && e->dec_state))
        return -1;
    if (wb->split)
        return tfb_loader_split_push(wb->split, s, ev->step, ev->wall_time,
                                     (double)x) == 0;
    return tfb_series_append_scalar(s, ev->step, ev->wall_time, (double)x) ==
           0;
}

/* A summary's values, each ingested; the values that are a tag and a
 * simple_value only (tf.summary.scalar's, after a tag's first step) take
 * ingest_simple, timed as ingest_value times the others. Returns the
 * points kept. */
static uint64_t ingest_summary(run_state *rs, worker_buf *wb,
                               const tfb_event *ev)
{
    uint64_t points = 0;
    size_t pos = 0;
    tfb_value v; /* every field is set by tfb_summary_next */
    v.size = sizeof v;
    while (pos < ev->summary_len) { /* tfb_summary_next's end, as it
                                      * finds it */
        size_t at = pos;
        tfb_strview tag;
        float x;
        if (tfb_summary_next_simple(ev->summary, ev->summary_len, &pos, &tag,
                                    &x) &&
            tag.len) {
            wb->values++;
            int timed = ++wb->sample >= TFB_LOAD_PROFILE_SAMPLE;
            uint64_t t0 = 0, m0 = wb->made_ns;
            if (timed) {
                wb->sample = 0;
                t0 = now_ns();
            }
            tag_entry *e;
            int64_t m = ingest_simple(rs, wb, tag, x, ev, &e);
            if (m < 0) {
                /* The same bytes, decoded whole: the one path a tag's
                 * first value (its series made) or a decoder takes. */
                pos = at;
                if (tfb_summary_next(ev->summary, ev->summary_len, &pos,
                                     &v) != 1)
                    break; /* cannot be: the bytes were checked */
                m = (int64_t)ingest_entry(rs, wb, e, &v, ev);
            }
            points += (uint64_t)m;
            if (timed) {
                uint64_t dt = now_ns() - t0 - (wb->made_ns - m0);
                if (dt < TFB_LOAD_PROFILE_OUTLIER_NS) {
                    wb->idx_samples++;
                    wb->idx_sample_ns +=
                        dt > wb->clock_ns ? dt - wb->clock_ns : 0;
                }
            }
            continue;
        }
        pos = at;
        if (tfb_summary_next(ev->summary, ev->summary_len, &pos, &v) != 1)
            break;
        points += ingest_value(rs, wb, &v, ev);
    }
    return points;
}

static void close_readers(run_state *rs)
{
    for (size_t i = 0; i < rs->files.n; i++) {
        tfb_reader_close(rs->files.v[i].reader);
        rs->files.v[i].reader = NULL;
        rs->files.v[i].parked = 0;
        rs->files.v[i].done = 0;
        rs->files.v[i].gone = 0;
        rs->files.v[i].waiting = 0;
        memset(&rs->files.v[i].stats, 0, sizeof rs->files.v[i].stats);
    }
}

static void report_error(tfb_loader *l, file_state *f, int rc)
{
    const char *d = tfb_storage_error_detail();
    if (rc != f->error && rc < 0 && l->opts.log)
        fprintf(l->opts.log, "tfboard: cannot read %s: %s%s%s\n", f->path,
                tfb_strerror(rc), *d ? ": " : "", d);
    f->error = rc;
    /* whole characters only: the note is shown as text */
    free(f->detail);
    f->detail = NULL;
    if (rc < 0 && *d && (f->detail = malloc(DETAIL_MAX)) != NULL)
        tfb_utf8_copy(f->detail, DETAIL_MAX, d);
    tfb_storage_set_error_detail(NULL);
}

/* Takes the read buffer back from the reader, for the worker's next
 * file. */
static void reclaim_buffer(worker_buf *wb, tfb_reader *r)
{
    uint8_t *b;
    size_t c;
    if (!tfb_reader_reclaim_buffer(r, &b, &c))
        return;
    if (wb->rbuf || c > KEEP_READ_BUF) {
        free(b); /* one is enough; a huge one is not kept */
        return;
    }
    wb->rbuf = b;
    wb->rcap = c;
}

/* A spare thread of this pass (fewer runs than threads, or a worker that
 * ran out of runs) becomes this worker's helper (loader_split.h); with
 * none, or no thread to be had, it appends by itself as with one thread.
 * Asked at a worker's start, at each file and at each CHUNK_EVENTS batch,
 * where nothing is queued. */
static void claim_helper(tfb_loader *l, worker_buf *wb)
{
    if (wb->split)
        return;
    int n = atomic_load(&l->spare);
    while (n > 0 && !atomic_compare_exchange_weak(&l->spare, &n, n - 1))
        ;
    if (n > 0 && tfb_loader_split_start(&wb->split, &l->points) < 0) {
        wb->split = NULL;
        atomic_fetch_add(&l->spare, 1);
    }
}

/* Reads what is new in one file. Returns 1 when the run must be reset
 * (file replaced), else 0. */
static int read_file(tfb_loader *l, run_state *rs, file_state *f,
                     worker_buf *wb, double *first, double *last,
                     int64_t *max_step)
{
    tfb_storage_set_error_detail(NULL); /* none left from another file */
    tfb_storage_stat st;
    uint64_t t_stat = now_ns();
    wb->prof.files++;
    int src = l->storage->ops->stat(l->storage, f->path, &st);
    wb->prof.stat_ns += now_ns() - t_stat;
    if (src < 0) {
        if (src == TFB_ENOENT) {
            /* Deleted: keep its data, stop reading it. */
            if (f->reader) {
                tfb_reader_close(f->reader);
                f->reader = NULL;
            }
            f->parked = 0;
            f->gone = 1;
            return 0;
        }
        report_error(l, f, src);
        return 0;
    }
    if (!st.regular) {
        /* Replaced by a FIFO, a device, a link to /dev/zero: never read
         * it (an open could block, a read never end); keep what was
         * loaded from the real file, and say why no more comes. */
        if (f->reader) {
            tfb_reader_close(f->reader);
            f->reader = NULL;
        }
        f->parked = 0;
        f->gone = 1;
        report_error(l, f, TFB_ENOTFILE);
        return 0;
    }
    if (f->reader || f->parked || f->gone) {
        if (f->gone || strcmp(st.etag, f->etag) != 0 || st.size < f->done)
            return 1;
    }
    /* Waiting at the end of an object whose version and size are those
     * the last pass read to its end: in a bucket nothing new can be there
     * (objects are replaced, never written in place), so nothing is read;
     * a partial record at a live run's end would otherwise cost a GET
     * each reload. The next listing that shows a change reads on. */
    if ((f->reader || f->parked) && f->waiting &&
        l->storage->ops->immutable && st.size == f->waiting_size)
        return 0;
    /* Parked at its end and still that size: nothing new to read, no
     * reader to open. */
    if (f->parked && st.size == f->done) {
        f->size = st.size;
        return 0;
    }
    f->size = st.size;
    if (!f->reader && f->parked) {
        /* Resumed where the last pass stopped; another version there
         * (replaced between our stat and the open) reads the run again. */
        uint64_t t_open = now_ns();
        int rc = tfb_storage_reader_resume(l->storage, f->path, f->etag,
                                           &f->stats, &f->reader);
        wb->prof.open_ns += now_ns() - t_open;
        if (rc == 1)
            return 1;
        if (rc < 0) {
            report_error(l, f, rc);
            f->reader = NULL;
            return 0;
        }
        f->parked = 0;
    } else if (!f->reader) {
        uint64_t t_open = now_ns();
        int rc = tfb_storage_reader_open(l->storage, f->path, &f->reader);
        wb->prof.open_ns += now_ns() - t_open;
        if (rc < 0) {
            report_error(l, f, rc);
            f->reader = NULL;
            return 0;
        }
        memcpy(f->etag, st.etag, sizeof f->etag);
        f->done = 0;
    }
    claim_helper(l, wb);
    if (!wb->rbuf && (wb->rbuf = malloc(READ_BUF)) != NULL)
        wb->rcap = READ_BUF;
    if (wb->rbuf && tfb_reader_lend_buffer(f->reader, wb->rbuf, wb->rcap))
        wb->rbuf = NULL;
    tfb_event ev = {.size = sizeof ev};
    uint64_t points = 0;
    size_t events = 0;
    rs->cur_path = f->path;
    int rc = 0;
    uint64_t pass_left = PASS_FILE_BYTES;
    uint64_t at = f->done;
    int waiting = 0;
    uint64_t t_loop = now_ns(), read0 = tfb_storage_read_ns();
    for (;;) {
        /* One chunk at a time, so the stop flag is seen within one chunk
         * whatever the file holds (even garbage, where no event comes). */
        uint64_t chunk = pass_left < CHUNK_BYTES ? pass_left : CHUNK_BYTES;
        tfb_reader_set_limit(f->reader, chunk);
        while ((rc = tfb_reader_next(f->reader, &ev)) == 1) {
        if (ev.wall_time > 0 || ev.wall_time < 0) {
            if (isnan(*first) || ev.wall_time < *first)
                *first = ev.wall_time;
            if (isnan(*last) || ev.wall_time > *last)
                *last = ev.wall_time;
        } else if (isnan(*first)) {
            /* events with no wall time (proto3 default 0) still make the
             * run start somewhere */
            *first = *last = 0;
        }
        if (ev.step > *max_step)
            *max_step = ev.step;
        if (ev.kind == TFB_EVENT_SUMMARY) {
            points += ingest_summary(rs, wb, &ev);
        } else if (ev.kind == TFB_EVENT_GRAPH ||
                   ev.kind == TFB_EVENT_RUN_METADATA) {
            /* Kept as a locator, read back when asked (event_blobs.h). */
            points += tfb_event_blob_note(rs->run, f->path, &ev) == 0;
        }
        if (++events == CHUNK_EVENTS) {
            events = 0;
            tfb_reader_stats s;
            tfb_reader_stats_init(&s);
            if (tfb_reader_get_stats(f->reader, &s) == 0 &&
                s.offset > f->done) {
                atomic_fetch_add(&l->bytes_done, s.offset - f->done);
                f->done = s.offset;
            }
            /* the batch's points in the run's generation: one atomic a
             * batch, not one a point (store.h); with a helper, by the
             * helper once they are in their series, the generation never
             * ahead of them (loader_split.h) */
            if (wb->split) {
                tfb_loader_split_publish(wb->split, rs->run, points);
            } else {
                atomic_fetch_add(&l->points, points);
                if (points)
                    tfb_run_points_published(rs->run);
            }
            points = 0;
            publish_progress(l, 0);
            if (atomic_load(&l->stop))
                break;
            claim_helper(l, wb);
        }
        }
        if (rc != 0 || atomic_load(&l->stop))
            break;
        tfb_reader_stats cs;
        tfb_reader_stats_init(&cs);
        if (tfb_reader_get_stats(f->reader, &cs) < 0)
            break;
        uint64_t used = cs.offset > at ? cs.offset - at : 0;
        at = cs.offset;
        /* Stopped short of the chunk: the end of what the file holds (or a
         * record still being written). */
        if (used < chunk || cs.offset >= cs.file_size) {
            waiting = 1;
            break;
        }
        if (used >= pass_left) {
            /* This pass's share is spent: the next pass (at once) goes
             * on from here, after every other run had its turn. */
            atomic_store(&l->more, 1);
            break;
        }
        pass_left -= used;
    }
    uint64_t reads = tfb_storage_read_ns() - read0;
    wb->prof.read_ns += reads;
    wb->loop_ns += now_ns() - t_loop - reads;
    points -= tfb_loader_split_drain(wb->split);
    atomic_fetch_add(&l->points, points);
    if (points)
        tfb_run_points_published(rs->run);
    if (rc < 0)
        report_error(l, f, rc);
    else if (f->error)
        f->error = 0;
    tfb_reader_stats s;
    tfb_reader_stats_init(&s);
    if (tfb_reader_get_stats(f->reader, &s) == 0) {
        if (s.offset > f->done)
            atomic_fetch_add(&l->bytes_done, s.offset - f->done);
        if (s.replaced && !f->stats.replaced) {
            f->stats = s;
            reclaim_buffer(wb, f->reader);
            return 1;
        }
        f->done = s.offset;
        f->stats = s;
    }
    f->waiting = waiting;
    f->waiting_size = f->size;
    /* Only files being read hold a descriptor: 5,000 runs must not take
     * 5,000 descriptors (the HTTP side needs them to accept). */
    tfb_reader_release_fd(f->reader);
    reclaim_buffer(wb, f->reader);
    if (waiting && rc == 0) {
        /* At its end: no reader kept until it grows (file_state). */
        tfb_reader_close(f->reader);
        f->reader = NULL;
        f->parked = 1;
    }
    return 0;
}

/* The run's notes about values it could not list as they were. */
static void publish_notes(run_state *rs)
{
    char text[400];
    /* A file that cannot be read now (a network fault, 403 on a bucket
     * path): said on the run; what was loaded from it stays served. */
    const file_state *bad = NULL;
    size_t n_bad = 0;
    for (size_t i = 0; i < rs->files.n; i++)
        if (rs->files.v[i].error < 0 && !n_bad++)
            bad = &rs->files.v[i];
    if (bad) {
        snprintf(text, sizeof text,
                 "%zu file%s could not be read at the last reload (%s: %s); "
                 "what was loaded before is still shown",
                 n_bad, n_bad == 1 ? "" : "s",
                 bad->detail ? bad->detail : bad->path,
                 tfb_strerror(bad->error));
        tfb_run_set_note(rs->run, "read_error", text);
    } else {
        tfb_run_set_note(rs->run, "read_error", NULL);
    }
    if (rs->empty_tag_values != rs->noted_empty) {
        snprintf(text, sizeof text,
                 "%llu value%s with an empty tag (and no node name) could "
                 "not be listed and were left out",
                 (unsigned long long)rs->empty_tag_values,
                 rs->empty_tag_values == 1 ? "" : "s");
        if (tfb_run_set_note(rs->run, "empty_tags", text) == 0)
            rs->noted_empty = rs->empty_tag_values;
    }
    if (rs->bad_utf8_tags != rs->noted_utf8) {
        snprintf(text, sizeof text,
                 "%llu tag%s not valid UTF-8: invalid bytes are shown (and "
                 "queried) as U+FFFD",
                 (unsigned long long)rs->bad_utf8_tags,
                 rs->bad_utf8_tags == 1 ? " is" : "s are");
        if (tfb_run_set_note(rs->run, "utf8_tags", text) == 0)
            rs->noted_utf8 = rs->bad_utf8_tags;
    }
}

/* Loading once, a run read to the end of every file needs its tag table
 * no more: freed now (not at the pass's end), so the next run this worker
 * reads reuses its memory, ~1 KB a 5-tag run (2 B of each of its points in
 * a 100,000-run sweep). Should a file grow before the pass ends (another
 * run's big file makes more passes), its tags are restored from the
 * store (tag_restore). */
static void drop_tags(tfb_loader *l, run_state *rs)
{
    if (!l->has_thread || l->opts.reload_interval > 0)
        return;
    for (size_t i = 0; i < rs->files.n; i++) {
        const file_state *f = &rs->files.v[i];
        if (!f->parked && !f->gone && f->error == 0)
            return; /* more to read at the next pass */
    }
    tags_free(rs);
    rs->last = NULL;
    rs->tags_dropped = 1;
}

static void load_run(tfb_loader *l, run_state *rs, worker_buf *wb)
{
    for (int attempt = 0; attempt < 3; attempt++) {
        double first = NAN, last = NAN;
        int64_t max_step = INT64_MIN;
        int reset = 0;
        for (size_t i = 0; i < rs->files.n && !atomic_load(&l->stop); i++) {
            file_state *f = &rs->files.v[i];
            uint64_t q0, b0, q1, b1;
            tfb_storage_counted(&q0, &b0);
            int again = read_file(l, rs, f, wb, &first, &last, &max_step);
            tfb_storage_counted(&q1, &b1);
            f->requests = q1 - q0;
            f->request_bytes = b1 - b0;
            if (again) {
                reset = 1;
                break;
            }
            if (f->size && f->done >= f->size)
                atomic_fetch_add(&l->files_done, 1);
        }
        if (!isnan(first))
            tfb_run_note_event(rs->run, first, max_step);
        if (!isnan(last))
            tfb_run_note_event(rs->run, last, max_step);
        if (!reset)
            break;
        /* A file was replaced or truncated: drop what the run holds and
         * read every file of it again from the start. */
        close_readers(rs);
        for (size_t i = 0; i < rs->tags.cap; i++) {
            tag_entry *e = rs->tags.slots[i].val;
            if (rs->tags.slots[i].hash && e)
                memset(e->series, 0, sizeof e->series);
        }
        tfb_run_reset(rs->run);
    }
    uint64_t t_fin = now_ns();
    wb->prof.runs++;
    drop_tags(l, rs);
    publish_notes(rs);
    /* Publish file infos and release spare capacity. */
    tfb_file_info *fi = calloc(rs->files.n ? rs->files.n : 1, sizeof *fi);
    if (fi) {
        for (size_t i = 0; i < rs->files.n; i++) {
            fi[i].path = rs->files.v[i].path;
            fi[i].stats = rs->files.v[i].stats;
            fi[i].error = rs->files.v[i].error;
            fi[i].requests = rs->files.v[i].requests;
            fi[i].request_bytes = rs->files.v[i].request_bytes;
        }
        (void)tfb_run_set_files(rs->run, fi, rs->files.n);
        free(fi);
    }
    for (int k = 0; k < TFB_SERIES_KIND_COUNT; k++) {
        tfb_series **v;
        size_t n;
        if (tfb_run_series(rs->run, (tfb_series_kind)k, &v, &n) == 0) {
            for (size_t i = 0; i < n; i++)
                tfb_series_trim(v[i]);
            free(v);
        }
    }
    wb->prof.finish_ns += now_ns() - t_fin;
}

/* This worker's profile into the loader's; parse is what the read loops
 * took beyond the (estimated) index and the tags and series made. */
static void add_profile(tfb_loader *l, worker_buf *wb)
{
    tfb_load_profile *p = &wb->prof;
    if (wb->idx_samples)
        p->index_ns = (uint64_t)((double)wb->idx_sample_ns /
                                 (double)wb->idx_samples * (double)wb->values);
    uint64_t other = p->index_ns + p->tags_ns + p->series_ns;
    p->parse_ns = wb->loop_ns > other ? wb->loop_ns - other : 0;
    pthread_mutex_lock(&l->lock);
    tfb_load_profile *t = &l->prof;
    t->files += p->files;
    t->runs += p->runs;
    t->stat_ns += p->stat_ns;
    t->open_ns += p->open_ns;
    t->read_ns += p->read_ns;
    t->parse_ns += p->parse_ns;
    t->index_ns += p->index_ns;
    t->tags_ns += p->tags_ns;
    t->series_ns += p->series_ns;
    t->finish_ns += p->finish_ns;
    t->progress_ns += p->progress_ns;
    pthread_mutex_unlock(&l->lock);
}

static void *worker_main(void *arg)
{
    tfb_loader *l = arg;
    worker_buf wb = {0};
    wb.clock_ns = l->clock_ns;
    claim_helper(l, &wb);
    for (;;) {
        size_t i = atomic_fetch_add(&l->next_run, 1);
        if (i >= l->runs.n || atomic_load(&l->stop))
            break;
        load_run(l, l->runs.v[i], &wb);
        uint64_t t0 = now_ns();
        publish_progress(l, 0);
        wb.prof.progress_ns += now_ns() - t0;
    }
    /* No run left for this thread: its core, and its helper's, go to a
     * worker still reading (one large run among small ones). */
    atomic_fetch_add(&l->spare, wb.split ? 2 : 1);
    tfb_loader_split_stop(wb.split);
    add_profile(l, &wb);
    tfb_vec_free(&wb.buckets);
    tfb_vec_free(&wb.kept);
    free(wb.rbuf);
    return NULL;
}

static int cpu_count(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > 64 ? 64 : (int)n;
}

/* Frees every run's loader state (its files, readers and tag table); the
 * runs in the store stay. */
static void runs_free(tfb_loader *l)
{
    for (size_t i = 0; i < l->runs.n; i++) {
        run_state *rs = l->runs.v[i];
        for (size_t k = 0; k < rs->files.n; k++) {
            tfb_reader_close(rs->files.v[k].reader);
            free(rs->files.v[k].path);
            free(rs->files.v[k].detail);
        }
        tfb_vec_free(&rs->files);
        tags_free(rs);
        free(rs->dir);
        free(rs);
    }
    tfb_vec_free(&l->runs);
    tfb_strtab_free(&l->run_idx);
}

/* One scan and read of every run; files over their pass budget set
 * l->more, and the caller runs another pass at once. */
static int one_pass(tfb_loader *l)
{
    atomic_store(&l->more, 0);
    uint64_t t_scan = now_ns();
    int rc = scan(l);
    l->prof.scan_ns += now_ns() - t_scan;
    if (rc < 0 && rc != TFB_ENOENT)
        return rc;
    /* Totals for the progress bar: sizes as the listing gave them. */
    uint64_t bytes = 0, files = 0, done_bytes = 0;
    for (size_t i = 0; i < l->runs.n; i++)
        for (size_t k = 0; k < l->runs.v[i]->files.n; k++) {
            file_state *f = &l->runs.v[i]->files.v[k];
            uint64_t sz = f->gone ? f->done : f->listed;
            bytes += sz > f->done ? sz : f->done;
            done_bytes += f->done;
            files++;
        }
    l->bytes_total = bytes;
    l->files_total = files;
    atomic_store(&l->bytes_done, done_bytes);
    atomic_store(&l->files_done, 0);
    atomic_store(&l->next_run, 0);
    publish_progress(l, 0);

    int nt = l->opts.threads > 0 ? l->opts.threads : cpu_count();
    /* Threads beyond one a run help the workers instead (loader_split.h):
     * one huge run is read by two cores. */
    int spare = 0;
    if ((size_t)nt > l->runs.n) {
        spare = l->runs.n ? nt - (int)l->runs.n : 0;
        nt = (int)l->runs.n;
    }
    atomic_store(&l->spare, spare);
    pthread_t th[64];
    int started = 0;
    for (int i = 1; i < nt && i < 64; i++)
        if (pthread_create(&th[started], NULL, worker_main, l) == 0)
            started++;
    worker_main(l);
    for (int i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    l->prof.passes++;
    pthread_mutex_lock(&l->lock);
    l->prof_pub = l->prof;
    pthread_mutex_unlock(&l->lock);
    uint64_t end_bytes = atomic_load(&l->bytes_done);
    l->pass_new_bytes = end_bytes > done_bytes ? end_bytes - done_bytes : 0;
    int more = atomic_load(&l->more) && !atomic_load(&l->stop);
    if (more) {
        /* Not done yet: progress stays "loading"; the next pass follows. */
        publish_progress(l, 0);
        return rc == TFB_ENOENT ? rc : 0;
    }
    if (l->has_thread && l->opts.reload_interval <= 0) {
        /* Loading once: no pass follows, so what only a next pass needs
         * (readers, each run's files and tag table: 1.7 KB a run, 3 B of
         * each point of a 500-point run) goes now, before the progress
         * says done. The store keeps everything served. */
        runs_free(l);
    }
    tfb_storage_status info;
    if (tfb_storage_info(l->storage, &info) == 0)
        tfb_store_set_storage_info(l->store, &info);
    l->first_done = 1;
    l->reloads++;
    atomic_store(&l->files_done, l->files_total);
    publish_progress(l, 1);
    tfb_store_bump_generation(l->store);
    return rc == TFB_ENOENT ? rc : 0;
}

int tfb_loader_pass(tfb_loader *l)
{
    int rc;
    do
        rc = one_pass(l);
    while (rc >= 0 && atomic_load(&l->more) && !atomic_load(&l->stop));
    return rc;
}

static void *loader_main(void *arg)
{
    tfb_loader *l = arg;
    for (;;) {
        int rc = one_pass(l);
        if (rc >= 0 && atomic_load(&l->more) && !atomic_load(&l->stop))
            continue; /* a big file goes on at once */
        /* Say it once when the logdir goes away, not at every reload. */
        if (rc == TFB_ENOENT && !l->logdir_missing && l->opts.log)
            fprintf(l->opts.log, "tfboard: logdir %s is not readable; "
                                 "serving what was loaded\n",
                    tfb_store_logdir(l->store));
        l->logdir_missing = rc == TFB_ENOENT;
        if (l->opts.reload_interval <= 0 || atomic_load(&l->stop))
            break;
        /* Object storage bills requests: while nothing changes, the
         * listing comes less often (up to 8 intervals apart); new bytes
         * or a reload asked for from the page bring it back at once. */
        double factor = 1;
        if (strcmp(l->storage->ops->name, "local") != 0) {
            l->idle_passes = l->pass_new_bytes ? 0 : l->idle_passes + 1;
            factor = l->idle_passes >= 4 ? 8 : (double)(1u << l->idle_passes);
            if (l->idle_passes == 0)
                factor = 1;
        }
        /* On CLOCK_MONOTONIC: a wall clock set back cannot stall the
         * reload. */
        double ms = l->opts.reload_interval * 1000.0 * factor;
        long long due = tfb_mono_now_ns() +
                        (long long)((ms >= 4e9 ? 4e9 : ms) * 1e6);
        /* A forced pass waits out the spacing since the last one. */
        double sp = l->opts.reload_interval < RELOAD_SPACING_S
                        ? l->opts.reload_interval
                        : RELOAD_SPACING_S;
        pthread_mutex_lock(&l->lock);
        while (!atomic_load(&l->stop)) {
            long long now = tfb_mono_now_ns(), until = due;
            if (l->kicked) {
                long long ready =
                    l->kick_pass_ns ? l->kick_pass_ns + (long long)(sp * 1e9)
                                    : now;
                if (ready < until)
                    until = ready;
            }
            if (now >= until)
                break;
            struct timespec ts;
            long long left_ms = (until - now + 999999) / 1000000;
            tfb_deadline_after_ms(&ts, (unsigned)left_ms);
            pthread_cond_timedwait(&l->cond, &l->lock, &ts);
        }
        if (l->kicked) {
            l->idle_passes = 0;
            l->kick_pass_ns = tfb_mono_now_ns();
        }
        l->kicked = 0;
        pthread_mutex_unlock(&l->lock);
        if (atomic_load(&l->stop))
            break;
    }
    return NULL;
}

int tfb_loader_create(tfb_loader **out, tfb_store *store,
                      const tfb_loader_opts *opts)
{
    return tfb_loader_create_on(out, store, opts, NULL);
}

int tfb_loader_create_on(tfb_loader **out, tfb_store *store,
                         const tfb_loader_opts *opts, tfb_storage *storage)
{
    if (!out || !store)
        return TFB_EINVAL;
    tfb_loader *l = calloc(1, sizeof *l);
    if (!l)
        return TFB_ENOMEM;
    l->clock_ns = clock_cost_ns();
    l->store = store;
    if (opts)
        l->opts = *opts;
    l->storage = storage;
    if (!l->storage) {
        int rc = tfb_storage_local_create(&l->storage, l->opts.log);
        if (rc < 0) {
            free(l);
            return rc;
        }
        l->own_storage = 1;
    }
    pthread_mutex_init(&l->lock, NULL);
    tfb_cond_init_monotonic(&l->cond);
    *out = l;
    return 0;
}

int tfb_loader_start(tfb_loader **out, tfb_store *store,
                     const tfb_loader_opts *opts)
{
    return tfb_loader_start_on(out, store, opts, NULL);
}

/* tfb_store_request_reload's hook: wakes the loader thread. */
static void kick(void *ctx)
{
    tfb_loader *l = ctx;
    pthread_mutex_lock(&l->lock);
    l->kicked = 1;
    pthread_cond_broadcast(&l->cond);
    pthread_mutex_unlock(&l->lock);
}

int tfb_loader_start_on(tfb_loader **out, tfb_store *store,
                        const tfb_loader_opts *opts, tfb_storage *storage)
{
    tfb_loader *l;
    int rc = tfb_loader_create_on(&l, store, opts, storage);
    if (rc < 0)
        return rc;
    if (l->opts.reload_interval > 0)
        tfb_store_set_reload_hook(store, kick, l);
    l->has_thread = 1; /* before the thread reads it */
    if (pthread_create(&l->thread, NULL, loader_main, l) != 0) {
        l->has_thread = 0;
        tfb_loader_stop(l);
        return TFB_ENOMEM;
    }
    *out = l;
    return 0;
}

void tfb_loader_stop(tfb_loader *l)
{
    if (!l)
        return;
    if (l->has_thread) {
        tfb_store_set_reload_hook(l->store, NULL, NULL);
        /* a GET on a slow network must not hold the stop back */
        tfb_storage_cancel(l->storage);
        pthread_mutex_lock(&l->lock);
        atomic_store(&l->stop, 1);
        pthread_cond_broadcast(&l->cond);
        pthread_mutex_unlock(&l->lock);
        pthread_join(l->thread, NULL);
    }
    runs_free(l);
    if (l->own_storage)
        tfb_storage_destroy(l->storage);
    pthread_mutex_destroy(&l->lock);
    pthread_cond_destroy(&l->cond);
    free(l);
}
