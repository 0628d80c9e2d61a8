/*
 * storage_s3.c - a bucket as a tfb_storage (storage.h): "s3://bucket/
 * prefix" or "gs://bucket/prefix", over objstore/ (objstore.h).
 *
 * Requests are what costs on object storage, so a reload is one flat
 * ListObjectsV2 (a request per 1,000 objects) and nothing else unless an
 * object grew: stat and open answer from the last listing, and a read at
 * or past the listed size returns 0 without a GET. Objects cannot be
 * appended to: a writer that "grows" one replaces it with a longer
 * version (a new ETag). So the version the loader sees (stat.etag) is a
 * generation that moves on only when the listed ETag changed and the
 * size did not grow: a longer object is read on from the last offset, a
 * shorter (or same-sized, rewritten) one again from the start. The ops
 * say `immutable`: the loader reads nothing of an object it read to its
 * end (a partial record waiting there too) while it is listed unchanged.
 *
 * Reads fetch ahead (READ_AHEAD bytes, as 4 parallel ranges) into the
 * open file, so the reader's 1 MiB reads cost one GET per window.
 */
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/hash.h"
#include "objstore/objstore.h"
#include "store/storage.h"
#include "base/strtab.h"
#include "base/utf8.h"
#include "base/vec.h"

#define READ_AHEAD ((size_t)16 << 20)
/* A trace store's local copy is fetched as ranges of this size, in
 * parallel (at most 16), streamed to the file: one S3 GET streams at
 * 100+ MB/s, and a local S3 such as moto reads the whole object for
 * every range it serves (an 809 MB store in 32 MiB calls of 4 MiB ranges
 * took minutes there; 16 ranges of 85 MB 12.7 s, one GET 3.6 s). */
#define COPY_RANGE ((uint64_t)256 << 20)

typedef struct cached {
    uint64_t size;
    int64_t mtime_ns;
    char real_etag[TFB_OS_ETAG_MAX];
    uint64_t gen;
    uint64_t listed; /* the listing that saw it last (0: HEAD only) */
    /* local_copy: the copy's generation and size (0: none yet) */
    uint64_t copied_gen, copied_size;
    char path[]; /* the table's key (strtab never copies keys) */
} cached;

typedef struct s3_storage {
    tfb_storage base; /* first: storage.h's handle */
    tfb_os *os;
    char scheme[3];
    pthread_mutex_t mu;
    tfb_strtab cache; /* full path -> cached */
    char *listed_prefix; /* the last listing's path prefix */
    uint64_t list_serial;
    /* request counts: at the start of the last two listings */
    tfb_os_stats at_last_list, last_reload;
    uint64_t reloads;
    uint64_t errors;
    char last_error[TFB_STORAGE_ERROR_MAX];
    char *copies; /* local copies' directory (local_copy), made on demand */
    pthread_mutex_t copy_mu; /* one download at a time */
} s3_storage;

struct tfb_storage_file {
    s3_storage *s;
    char *bucket, *key, *path;
    uint64_t size;
    /* The file's bytes [ahead_off, ahead_off + ahead.n); room for at
     * least READ_AHEAD once the first read made it. */
    TFB_VEC(uint8_t) ahead;
    uint64_t ahead_off;
};

static void note_error(s3_storage *s, const tfb_os_error *e, int rc)
{
    pthread_mutex_lock(&s->mu);
    s->errors++;
    /* whole characters only: the line is shown as text (a key may be
     * anything UTF-8) */
    tfb_utf8_copy(s->last_error, sizeof s->last_error,
                  e && e->msg[0] ? e->msg : tfb_strerror(rc));
    pthread_mutex_unlock(&s->mu);
    tfb_storage_set_error_detail(e && e->msg[0] ? e->msg : NULL);
}

/* Records what the store says of path now (a listing or a HEAD), moving
 * the generation on when it was replaced. Under s->mu. */
static cached *remember(s3_storage *s, const char *path, uint64_t size,
                        int64_t mtime, const char *etag, uint64_t serial)
{
    size_t pl = strlen(path);
    cached *c = tfb_strtab_get(&s->cache, path, pl);
    if (!c) {
        c = calloc(1, sizeof *c + pl + 1);
        if (c)
            memcpy(c->path, path, pl + 1);
        if (!c || tfb_strtab_put(&s->cache, c->path, pl, c) < 0) {
            free(c);
            return NULL;
        }
        c->gen = 1;
    } else if (strcmp(c->real_etag, etag) != 0 && size <= c->size) {
        c->gen++; /* replaced: shorter, or rewritten at the same size */
    }
    c->size = size;
    c->mtime_ns = mtime;
    snprintf(c->real_etag, sizeof c->real_etag, "%s", etag);
    if (serial)
        c->listed = serial;
    return c;
}

/* Objects gone from the listing leave the cache (a bucket whose runs
 * come and go must not grow it for ever); HEAD-only entries (outside the
 * listed prefix) stay. Rebuilt only when a quarter or more is stale.
 * Under s->mu. */
static void prune(s3_storage *s, uint64_t serial, size_t listed)
{
    size_t stale = s->cache.count > listed ? s->cache.count - listed : 0;
    if (stale == 0 || stale * 4 < s->cache.count)
        return;
    tfb_strtab fresh = {0};
    if (tfb_strtab_reserve(&fresh, s->cache.count - stale + 1) < 0)
        return; /* kept as it is: correct, only bigger */
    for (size_t i = 0; i < s->cache.cap; i++) {
        cached *c = s->cache.slots[i].hash ? s->cache.slots[i].val : NULL;
        if (!c)
            continue;
        if (c->listed == serial || c->listed == 0)
            (void)tfb_strtab_put_h(&fresh, c->path, strlen(c->path),
                                   s->cache.slots[i].hash, c);
        else
            free(c);
    }
    tfb_strtab_free(&s->cache);
    s->cache = fresh;
}

static void fill(const cached *c, tfb_storage_stat *st)
{
    memset(st, 0, sizeof *st);
    st->size = c->size;
    st->mtime_ns = c->mtime_ns;
    snprintf(st->etag, sizeof st->etag, "g%llu", (unsigned long long)c->gen);
    st->regular = 1;
}

static int split(const char *path, char **bucket, char **key)
{
    char sch[3];
    return tfb_os_parse_url(path, sch, bucket, key) < 0 ? TFB_EINVAL : 0;
}

static int s3_list(tfb_storage *st, const char *prefix, int max_depth,
                   tfb_storage_keep_fn keep, void *keep_arg,
                   tfb_storage_entry **out, size_t *n_out, int *too_deep)
{
    s3_storage *s = (s3_storage *)st;
    char *bucket, *key;
    if (split(prefix, &bucket, &key) < 0)
        return TFB_EINVAL;
    /* The counts of the reload that ends here. */
    tfb_os_stats now;
    tfb_os_get_stats(s->os, &now);
    pthread_mutex_lock(&s->mu);
    if (s->reloads) {
        tfb_os_stats *a = &s->at_last_list, *d = &s->last_reload;
        d->requests = now.requests - a->requests;
        d->lists = now.lists - a->lists;
        d->gets = now.gets - a->gets;
        d->heads = now.heads - a->heads;
        d->bytes_in = now.bytes_in - a->bytes_in;
        d->retries = now.retries - a->retries;
        d->failures = now.failures - a->failures;
        d->skipped = now.skipped - a->skipped;
    }
    s->at_last_list = now;
    s->reloads++;
    pthread_mutex_unlock(&s->mu);

    /* "prefix/" so that run "a" does not take "ab"'s objects */
    size_t kl = strlen(key);
    char *kp = malloc(kl + 2);
    if (!kp) {
        free(bucket);
        free(key);
        return TFB_ENOMEM;
    }
    memcpy(kp, key, kl + 1);
    if (kl && kp[kl - 1] != '/')
        strcat(kp, "/");
    tfb_os_object *objs = NULL;
    size_t n = 0;
    tfb_os_error e = {0};
    int rc = tfb_os_list(s->os, bucket, kp, &objs, &n, &e);
    if (rc < 0) {
        note_error(s, &e, rc);
        free(bucket);
        free(key);
        free(kp);
        /* an unreachable bucket reads as a missing logdir: what was
         * loaded stays served */
        return rc == TFB_ENOMEM ? rc : TFB_ENOENT;
    }
    size_t pl = strlen(prefix);
    int strip = pl && prefix[pl - 1] == '/';
    tfb_storage_entry *v = calloc(n ? n : 1, sizeof *v);
    size_t m = 0;
    pthread_mutex_lock(&s->mu);
    uint64_t serial = ++s->list_serial;
    free(s->listed_prefix);
    s->listed_prefix = strdup(prefix);
    for (size_t i = 0; v && i < n; i++) {
        const char *rel = objs[i].key + strlen(kp);
        if (!*rel || rel[strlen(rel) - 1] == '/')
            continue; /* "directory" markers */
        const char *base = strrchr(rel, '/');
        if (keep && !keep(base ? base + 1 : rel, keep_arg))
            continue; /* checkpoints and the like: not kept, not cached */
        int depth = 0;
        for (const char *c = rel; *c; c++)
            depth += *c == '/';
        if (depth > max_depth) {
            if (too_deep)
                *too_deep = 1;
            continue;
        }
        size_t rl = strlen(rel);
        char *full = malloc(pl + rl + 2);
        if (!full) {
            rc = TFB_ENOMEM;
            break;
        }
        memcpy(full, prefix, pl - (size_t)strip);
        full[pl - (size_t)strip] = '/';
        memcpy(full + pl - (size_t)strip + 1, rel, rl + 1);
        cached *c = remember(s, full, objs[i].size, objs[i].mtime_ns,
                             objs[i].etag, serial);
        if (!c) {
            free(full);
            rc = TFB_ENOMEM;
            break;
        }
        v[m].path = full;
        v[m].rel = full + pl - (size_t)strip + 1;
        fill(c, &v[m].st);
        m++;
    }
    if (rc == 0)
        prune(s, serial, m);
    pthread_mutex_unlock(&s->mu);
    tfb_os_objects_free(objs, n);
    free(bucket);
    free(key);
    free(kp);
    if (!v || rc < 0) {
        tfb_storage_entries_free(v, m);
        return v ? rc : TFB_ENOMEM;
    }
    *out = v;
    *n_out = m;
    return 0;
}

static int s3_stat(tfb_storage *st, const char *path, tfb_storage_stat *out)
{
    s3_storage *s = (s3_storage *)st;
    pthread_mutex_lock(&s->mu);
    cached *c = tfb_strtab_get(&s->cache, path, strlen(path));
    int under = s->listed_prefix &&
                strncmp(path, s->listed_prefix, strlen(s->listed_prefix)) ==
                    0;
    if (c && c->listed == s->list_serial) {
        fill(c, out);
        pthread_mutex_unlock(&s->mu);
        return 0;
    }
    pthread_mutex_unlock(&s->mu);
    if (under)
        return TFB_ENOENT; /* not in the last listing: gone, no HEAD */
    char *bucket, *key;
    if (split(path, &bucket, &key) < 0)
        return TFB_EINVAL;
    tfb_os_object o;
    tfb_os_error e = {0};
    int rc = tfb_os_head(s->os, bucket, key, &o, &e);
    tfb_storage_count(1, 0);
    free(bucket);
    free(key);
    if (rc < 0) {
        if (rc != TFB_ENOENT)
            note_error(s, &e, rc);
        return rc;
    }
    pthread_mutex_lock(&s->mu);
    c = remember(s, path, o.size, o.mtime_ns, o.etag, 0);
    if (c)
        fill(c, out);
    pthread_mutex_unlock(&s->mu);
    return c ? 0 : TFB_ENOMEM;
}

static int s3_open(tfb_storage *st, const char *path, tfb_storage_file **out,
                   tfb_storage_stat *sst)
{
    s3_storage *s = (s3_storage *)st;
    int rc = s3_stat(st, path, sst);
    if (rc < 0)
        return rc;
    tfb_storage_file *f = calloc(1, sizeof *f);
    if (!f)
        return TFB_ENOMEM;
    f->s = s;
    f->size = sst->size;
    f->path = strdup(path);
    if (!f->path || split(path, &f->bucket, &f->key) < 0) {
        free(f->path);
        free(f);
        return TFB_ENOMEM;
    }
    *out = f;
    return 0;
}

static long s3_read(tfb_storage_file *f, uint64_t off, void *buf, size_t len)
{
    if (off >= f->size)
        return 0; /* nothing new was listed: no request */
    if (len > f->size - off)
        len = (size_t)(f->size - off);
    if (!(off >= f->ahead_off && off < f->ahead_off + f->ahead.n)) {
        size_t want = READ_AHEAD;
        if (want < len)
            want = len;
        if (want > f->size - off)
            want = (size_t)(f->size - off);
        /* READ_AHEAD at least, so a file read in small steps allocates
         * once. */
        f->ahead.n = 0;
        if (tfb_vec_need(&f->ahead, want > READ_AHEAD ? want : READ_AHEAD) <
            0)
            return TFB_ENOMEM;
        tfb_os_error e = {0};
        long got = tfb_os_get(f->s->os, f->bucket, f->key, off, f->ahead.v,
                              want, NULL, &e);
        tfb_storage_count(e.attempts ? (uint64_t)e.attempts : 1,
                          got > 0 ? (uint64_t)got : 0);
        if (got < 0) {
            note_error(f->s, &e, (int)got);
            return got;
        }
        f->ahead_off = off;
        f->ahead.n = (size_t)got;
        if (got == 0)
            return 0;
    }
    size_t at = (size_t)(off - f->ahead_off), n = f->ahead.n - at;
    if (n > len)
        n = len;
    memcpy(buf, f->ahead.v + at, n);
    return (long)n;
}

static void s3_close(tfb_storage_file *f)
{
    if (!f)
        return;
    tfb_vec_free(&f->ahead);
    free(f->bucket);
    free(f->key);
    free(f->path);
    free(f);
}

/* The copy's name: the object's path hashed (one file per object), then
 * its base name (the GPU plugin tells trace formats by their ending). */
static char *copy_name(const s3_storage *s, const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t n = strlen(s->copies) + strlen(base) + 24;
    char *p = malloc(n);
    if (p)
        snprintf(p, n, "%s/%016llx-%s", s->copies,
                 (unsigned long long)tfb_hash_bytes(path, strlen(path)),
                 base);
    return p;
}

/* The copies' directory, made at first use (s->mu held, never copy_mu,
 * which a download holds: a listing must not wait for one): absolute, so
 * that the trace layer can name a copy before it exists. */
static int copies_dir(s3_storage *s)
{
    if (s->copies)
        return 0;
    const char *tmp = getenv("TMPDIR");
    size_t n = strlen(tmp && *tmp ? tmp : "/tmp") + 32;
    char *d = malloc(n);
    if (!d)
        return TFB_ENOMEM;
    snprintf(d, n, "%s/tfboard-copies-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    char *real = mkdtemp(d) ? realpath(d, NULL) : NULL;
    if (!real) {
        free(d);
        return TFB_EIO;
    }
    free(d);
    s->copies = real;
    return 0;
}

/* Names path's copy and notes the version listed for it, fetching
 * nothing (storage.h: the copy is fetched by s3_copy_fetch when a reader
 * needs its bytes; a trace whose cache is in a bucket never does). */
static int s3_local_copy(tfb_storage *st, const char *path, char **out)
{
    s3_storage *s = (s3_storage *)st;
    tfb_storage_stat sst;
    int rc = s3_stat(st, path, &sst); /* from the listing */
    if (rc < 0)
        return rc;
    pthread_mutex_lock(&s->mu);
    rc = copies_dir(s);
    char *name = rc == 0 ? copy_name(s, path) : NULL;
    if (!name) {
        pthread_mutex_unlock(&s->mu);
        return rc < 0 ? rc : TFB_ENOMEM;
    }
    cached *c = tfb_strtab_get(&s->cache, path, strlen(path));
    uint64_t size = c ? c->size : 0;
    char etag[TFB_OS_ETAG_MAX] = "";
    if (c)
        memcpy(etag, c->real_etag, sizeof etag);
    pthread_mutex_unlock(&s->mu);
    rc = c ? tfb_storage_origin_defer(name, st, path, etag, size)
           : TFB_ENOENT;
    if (rc < 0) {
        free(name);
        return rc;
    }
    *out = name;
    return 0;
}

/* Fetches path's copy (storage.h, copy_fetch): the version listed
 * (If-Match its ETag), or what the object is now when it was replaced
 * since; nothing when the copy is that version already. One download at
 * a time (copy_mu): the trace and host loads of a run both ask. */
static int s3_copy_fetch(tfb_storage *st, const char *path)
{
    s3_storage *s = (s3_storage *)st;
    pthread_mutex_lock(&s->copy_mu);
    pthread_mutex_lock(&s->mu);
    int rc = copies_dir(s);
    char *name = rc == 0 ? copy_name(s, path) : NULL;
    if (!name) {
        pthread_mutex_unlock(&s->mu);
        pthread_mutex_unlock(&s->copy_mu);
        return rc < 0 ? rc : TFB_ENOMEM;
    }
    cached *c = tfb_strtab_get(&s->cache, path, strlen(path));
    int listed = c != NULL;
    /* fetched already at the version listed (an empty object too) */
    int fresh = c && c->copied_gen == c->gen &&
                c->copied_size == c->size &&
                (c->copied_size != 0 || c->size == 0);
    uint64_t gen = c ? c->gen : 0, size = c ? c->size : 0;
    /* the version listed: the copy is fetched as that one (If-Match), so
     * the note below names the bytes it holds */
    char etag[TFB_OS_ETAG_MAX] = "";
    if (c)
        memcpy(etag, c->real_etag, sizeof etag);
    pthread_mutex_unlock(&s->mu);
    struct stat fst;
    if (!listed || (fresh && stat(name, &fst) == 0)) {
        /* fetched already (a second reader of the run), or no longer
         * listed */
        if (listed && etag[0])
            (void)tfb_storage_origin_note(name, path, etag, size);
        pthread_mutex_unlock(&s->copy_mu);
        free(name);
        return listed ? 0 : TFB_ENOENT;
    }
    /* Fetched whole into a temporary name, then renamed: a reader never
     * sees half a copy. */
    size_t tl = strlen(name) + 8;
    char *tmpn = malloc(tl);
    int fd = -1;
    if (tmpn) {
        snprintf(tmpn, tl, "%s.part", name);
        fd = open(tmpn, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    }
    char *bucket = NULL, *key = NULL;
    rc = !tmpn ? TFB_ENOMEM : fd < 0 ? TFB_EIO : split(path, &bucket, &key);
    /* Streamed to the file as COPY_RANGE ranges in parallel: no buffer,
     * and few requests (see COPY_RANGE). */
    tfb_os_cond cond = {etag[0] ? etag : NULL, 0, 0};
    while (rc == 0 && size) {
        tfb_os_error e = {0};
        uint64_t parts = (size + COPY_RANGE - 1) / COPY_RANGE;
        long long got = tfb_os_get_to_fd(s->os, bucket, key, 0, size, fd,
                                         (size_t)parts, &cond, &e);
        tfb_storage_count(e.attempts ? (uint64_t)e.attempts : parts,
                          got > 0 ? (uint64_t)got : 0);
        if (got == TFB_ESTATE && cond.if_match) {
            /* replaced since it was listed: fetched again as whatever it
             * is now, and noted as no known version */
            cond.if_match = NULL;
            etag[0] = '\0';
            if (ftruncate(fd, 0) != 0)
                rc = TFB_EIO;
            continue;
        }
        if (got < 0) {
            note_error(s, &e, (int)got);
            rc = (int)got;
        } else if (ftruncate(fd, (off_t)got) != 0) {
            rc = TFB_EIO; /* shorter than listed: what there is */
        }
        break;
    }
    free(bucket);
    free(key);
    if (fd >= 0 && close(fd) != 0 && rc == 0)
        rc = TFB_EIO;
    if (rc == 0 && rename(tmpn, name) != 0)
        rc = TFB_EIO;
    if (rc < 0 && tmpn)
        unlink(tmpn);
    free(tmpn);
    if (rc == 0) {
        pthread_mutex_lock(&s->mu);
        c = tfb_strtab_get(&s->cache, path, strlen(path));
        if (c) {
            c->copied_gen = gen;
            c->copied_size = size;
        }
        pthread_mutex_unlock(&s->mu);
        /* Which object the copy holds (its bytes were fetched as that
         * ETag), for the caches replicas share through a bucket: keyed by
         * the object, never by this copy's local name. */
        if (etag[0])
            (void)tfb_storage_origin_note(name, path, etag, size);
        else
            tfb_storage_origin_drop(name);
    }
    pthread_mutex_unlock(&s->copy_mu);
    free(name);
    return rc;
}

/* Removes the local copies and their directory. */
static void remove_copies(s3_storage *s)
{
    if (!s->copies)
        return;
    DIR *d = opendir(s->copies);
    struct dirent *de;
    while (d && (de = readdir(d))) {
        if (de->d_name[0] == '.')
            continue;
        size_t n = strlen(s->copies) + strlen(de->d_name) + 2;
        char *p = malloc(n);
        if (p) {
            snprintf(p, n, "%s/%s", s->copies, de->d_name);
            unlink(p);
            free(p);
        }
    }
    if (d)
        closedir(d);
    rmdir(s->copies);
    free(s->copies);
}

static void s3_destroy(tfb_storage *st)
{
    s3_storage *s = (s3_storage *)st;
    /* no load is left fetching a copy (those in flight fail at once)
     * when the copies go */
    tfb_os_cancel(s->os);
    tfb_storage_origin_forget(st);
    remove_copies(s);
    pthread_mutex_destroy(&s->copy_mu);
    tfb_os_destroy(s->os);
    for (size_t i = 0; i < s->cache.cap; i++)
        if (s->cache.slots[i].hash)
            free(s->cache.slots[i].val);
    tfb_strtab_free(&s->cache);
    free(s->listed_prefix);
    pthread_mutex_destroy(&s->mu);
    free(s);
}

static void s3_cancel(tfb_storage *st)
{
    tfb_os_cancel(((s3_storage *)st)->os);
}

static void put_counts(tfb_storage_counts *o, const tfb_os_stats *t)
{
    o->requests = t->requests;
    o->lists = t->lists;
    o->gets = t->gets;
    o->heads = t->heads;
    o->bytes = t->bytes_in;
    o->retries = t->retries;
    o->failures = t->failures;
    o->skipped_keys = t->skipped;
}

/* The backend, the requests of the last reload and of all, and the last
 * fault, for /data/environment (core writes them with its JSON writer:
 * the store layer writes no JSON). */
static int s3_info(tfb_storage *st, tfb_storage_status *out)
{
    s3_storage *s = (s3_storage *)st;
    tfb_os_stats tot;
    tfb_os_get_stats(s->os, &tot);
    memset(out, 0, sizeof *out);
    pthread_mutex_lock(&s->mu);
    snprintf(out->backend, sizeof out->backend, "%s", s->scheme);
    out->anonymous = tfb_os_anonymous(s->os);
    out->reloads = s->reloads;
    put_counts(&out->last_reload, &s->last_reload);
    put_counts(&out->total, &tot);
    out->errors = s->errors;
    memcpy(out->last_error, s->last_error, sizeof out->last_error);
    pthread_mutex_unlock(&s->mu);
    return 0;
}

static const tfb_storage_ops s3_ops = {
    "s3",     s3_list,    s3_stat,   s3_open,  s3_read,
    s3_close, s3_destroy, s3_cancel, s3_info,  s3_local_copy,
    s3_copy_fetch,
    1 /* immutable: objects are replaced whole, never written in place */,
};

int tfb_storage_s3_create(tfb_storage **out, const char *url, char *err,
                          size_t errlen)
{
    char sch[3], *bucket, *key;
    if (tfb_os_parse_url(url, sch, &bucket, &key) < 0) {
        snprintf(err, errlen, "%s is not an s3:// or gs:// URL", url);
        return TFB_EINVAL;
    }
    free(bucket);
    free(key);
    s3_storage *s = calloc(1, sizeof *s);
    if (!s)
        return TFB_ENOMEM;
    int rc = tfb_os_create(&s->os, sch, err, errlen);
    if (rc < 0) {
        free(s);
        return rc;
    }
    s->base.ops = &s3_ops;
    memcpy(s->scheme, sch, 3);
    pthread_mutex_init(&s->mu, NULL);
    pthread_mutex_init(&s->copy_mu, NULL);
    *out = &s->base;
    return 0;
}
