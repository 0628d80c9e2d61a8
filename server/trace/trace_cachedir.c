/*
 * trace_cachedir.c - the trace cache directory (trace_cachedir.h): where
 * it is, which cache file belongs to a load's sources and whether it is
 * still theirs, and what is swept out of it.
 */
#include "trace/trace_cachedir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/deadline.h"
#include "base/hash.h"
#include "objstore/objstore.h"
#include "tfboard.h"
#include "trace/trace_cachebucket.h"
#include "trace/trace_colcache.h"
#include "trace/trace_file.h"

/* ------------------------------------------------------------------------
 * The directory
 * ---------------------------------------------------------------------- */
static char *g_dir; /* NULL: no cache */
static FILE *g_log; /* configure's err: where the cache's notes go */

const char *tfb_trace_colcache_dir(void)
{
    return g_dir;
}

void tfb_trace_colcache_log(const char *fmt, ...)
{
    FILE *f = g_log;
    if (!f)
        return;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(f, fmt, ap);
    va_end(ap);
    fflush(f);
}

char *tfb_trace_colcache_default_dir(void)
{
    const char *x = getenv("XDG_CACHE_HOME");
    const char *home = getenv("HOME");
    char *out = NULL;
    /* The XDG spec: a relative XDG_CACHE_HOME is invalid and ignored. */
    if (x && x[0] == '/') {
        size_t n = strlen(x) + sizeof "/tfboard";
        out = malloc(n);
        if (out)
            snprintf(out, n, "%s/tfboard", x);
    } else if (home && home[0]) {
        size_t n = strlen(home) + sizeof "/.cache/tfboard";
        out = malloc(n);
        if (out)
            snprintf(out, n, "%s/.cache/tfboard", home);
    }
    return out;
}

/* mkdir -p, the last component 0700 (the cache holds what the traces
 * hold); 0 or -1 with errno. */
static int make_dirs(const char *dir)
{
    char *p = strdup(dir);
    if (!p) {
        errno = ENOMEM;
        return -1;
    }
    for (char *s = p + 1; *s; s++) {
        if (*s != '/')
            continue;
        *s = '\0';
        if (mkdir(p, 0755) != 0 && errno != EEXIST) {
            free(p);
            return -1;
        }
        *s = '/';
    }
    int rc = mkdir(p, 0700);
    free(p);
    if (rc != 0 && errno != EEXIST)
        return -1;
    struct stat st;
    if (stat(dir, &st) != 0)
        return -1;
    if (!S_ISDIR(st.st_mode)) {
        errno = ENOTDIR;
        return -1;
    }
    return 0;
}

/* 1 when a (a real path) is b or below it. */
static int is_within(const char *a, const char *b)
{
    size_t n = strlen(b);
    while (n > 1 && b[n - 1] == '/')
        n--;
    return strncmp(a, b, n) == 0 && (a[n] == '\0' || a[n] == '/');
}

/* The local spool of a cache in a bucket: the default directory's
 * spool/, else $TMPDIR/tfboard-spool-<uid> (malloc'd). */
static char *spool_dir(void)
{
    char *d = tfb_trace_colcache_default_dir();
    char *out = NULL;
    if (d) {
        size_t n = strlen(d) + sizeof "/spool";
        out = malloc(n);
        if (out)
            snprintf(out, n, "%s/spool", d);
    } else {
        const char *t = getenv("TMPDIR");
        if (!t || t[0] != '/')
            t = "/tmp";
        size_t n = strlen(t) + 48;
        out = malloc(n);
        if (out)
            snprintf(out, n, "%s/tfboard-spool-%u", t, (unsigned)geteuid());
    }
    free(d);
    return out;
}

int tfb_trace_colcache_configure(const char *dir, const char *logdir, FILE *err)
{
    free(g_dir);
    g_dir = NULL;
    g_log = err;
    int bucket = tfb_os_is_url(dir);
    int rc = tfb_trace_cachebucket_configure(bucket ? dir : NULL, err);
    if (rc < 0)
        return rc;
    if (dir && !dir[0])
        return 0; /* --cache_dir "": no cache */
    /* A bucket: its caches are fetched to, and written from, a local
     * spool (trace_cachebucket.h), which is also the directory of the
     * caches of local sources. */
    int explicit_dir = dir != NULL && !bucket;
    char *want = explicit_dir ? strdup(dir)
                 : bucket     ? spool_dir()
                              : tfb_trace_colcache_default_dir();
    if (!want)
        return explicit_dir ? TFB_ENOMEM : 0;
    if (make_dirs(want) != 0) {
        if (err)
            fprintf(err,
                    "tfboard: cache directory %s: %s (GPU traces are read "
                    "from their files each time)\n",
                    want, strerror(errno));
        free(want);
        return 0;
    }
    char *real = realpath(want, NULL);
    char *lreal = logdir ? realpath(logdir, NULL) : NULL;
    int inside = real && lreal && is_within(real, lreal);
    free(lreal);
    if (!real || inside) {
        if (err && inside)
            fprintf(err,
                    "tfboard: the cache directory %s is inside the logdir%s\n",
                    want,
                    explicit_dir ? "; choose another --cache_dir"
                                 : " (caching off; see --cache_dir)");
        free(real);
        free(want);
        return inside && explicit_dir ? TFB_EINVAL : 0;
    }
    free(want);
    g_dir = real;
    return 0;
}

/* ------------------------------------------------------------------------
 * Source signatures and cache file names
 * ---------------------------------------------------------------------- */
struct tfb_trace_colcache_key {
    char **paths;
    size_t n;
    char *sig;   /* what the cache file stores: the sources' signature */
    char *file;  /* the cache file */
    /* Sources that are copies of a bucket's objects, with a cache in a
     * bucket (bucket 1): sig is their bucket signature (objects, sizes,
     * ETags as listed), which needs no copy's bytes, and local_sig the
     * copies' local one, taken once they were fetched
     * (tfb_trace_colcache_key_fetched; NULL until then). bucket 0: a
     * local key, sig is that. */
    int bucket;
    char *local_sig;
    uint64_t src_bytes;
    /* the object found at this key was unsound: replaced by the rebuilt
     * cache, if it still is that version ("": store it new) */
    char replace_etag[TFB_OS_ETAG_MAX];
};

/* Appends "path\tsize\tmtime_ns\tino\tdev\n"; -1 when path cannot be
 * stat'ed and must exist (a missing -wal is written as absent). */
static int sig_file(tfb_buf *b, const char *path, int must)
{
    struct stat st;
    char num[160];
    tfb_buf_put(b, path, strlen(path));
    if (stat(path, &st) != 0) {
        if (must)
            return -1;
        tfb_buf_put(b, "\t-\n", 3);
        return 0;
    }
    int k = snprintf(num, sizeof num, "\t%lld\t%lld\t%llu\t%llu\n",
                     (long long)st.st_size,
                     (long long)st.st_mtim.tv_sec * 1000000000LL +
                         st.st_mtim.tv_nsec,
                     (unsigned long long)st.st_ino,
                     (unsigned long long)st.st_dev);
    tfb_buf_put(b, num, (size_t)k);
    return 0;
}

/* The signature of the sources now (malloc'd), NULL when one cannot be
 * stat'ed or on ENOMEM. */
static char *signature(char *const *paths, size_t n)
{
    tfb_buf b = {0};
    tfb_trace_colcache_sig_begin(&b);
    for (size_t i = 0; i < n; i++) {
        if (sig_file(&b, paths[i], 1) != 0) {
            tfb_buf_free(&b);
            return NULL;
        }
        if (tfb_trace_file_kind_of(paths[i]) == TFB_TRACE_FILE_SQLITE) {
            tfb_buf w = {0};
            tfb_buf_puts(&w, paths[i]);
            tfb_buf_puts(&w, "-wal");
            if (!w.failed)
                sig_file(&b, w.v, 0);
            b.failed |= w.failed;
            tfb_buf_free(&w);
        }
    }
    return tfb_buf_take(&b);
}

void tfb_trace_colcache_key_free(tfb_trace_colcache_key *key)
{
    if (!key)
        return;
    tfb_strv_free(key->paths, key->n);
    free(key->sig);
    free(key->local_sig);
    free(key->file);
    free(key);
}

/* The key of a load: real paths of the sources (so that two servers that
 * spell a logdir differently share the file), their signature, and the
 * cache file named by the hash of the paths. Copies of a bucket's objects
 * with a cache in a bucket: their bucket signature, and the cache file
 * named by its hash, without fetching any copy. NULL: no caching. */
static tfb_trace_colcache_key *key_new(char *const *paths, size_t n)
{
    const char *dir = g_dir;
    if (!dir || n == 0)
        return NULL;
    tfb_trace_colcache_key *k = calloc(1, sizeof *k);
    if (!k)
        return NULL;
    k->paths = calloc(n, sizeof *k->paths);
    if (!k->paths) {
        free(k);
        return NULL;
    }
    k->n = n;
    uint64_t h = 0x74666263u;
    /* Named by the objects (the copies' names differ from server to
     * server); the copies' names are absolute already and may not exist
     * yet. */
    char *bsig = tfb_trace_cachebucket_sig(paths, n, 0, &k->src_bytes);
    if (bsig) {
        k->bucket = 1;
        k->sig = bsig;
        h = tfb_trace_cachebucket_hash(bsig);
        for (size_t i = 0; i < n; i++)
            if (!(k->paths[i] = strdup(paths[i]))) {
                tfb_trace_colcache_key_free(k);
                return NULL;
            }
    } else {
        /* A local key stats its sources: copies of a bucket's objects
         * (a logdir in a bucket, the cache local) are fetched first. */
        if (tfb_trace_files_fetch(paths, n, NULL, 0) != 0) {
            tfb_trace_colcache_key_free(k);
            return NULL;
        }
        for (size_t i = 0; i < n; i++) {
            k->paths[i] = realpath(paths[i], NULL);
            if (!k->paths[i]) {
                tfb_trace_colcache_key_free(k);
                return NULL;
            }
            uint64_t ph = tfb_hash_str(k->paths[i]);
            h = (h ^ ph) * 0x100000001b3ull + (uint64_t)i;
        }
        k->sig = signature(k->paths, n);
    }
    size_t fl = strlen(dir) + 64;
    k->file = malloc(fl);
    if (!k->sig || !k->file) {
        tfb_trace_colcache_key_free(k);
        return NULL;
    }
    snprintf(k->file, fl, "%s/trace-%016llx.tfbc", dir, (unsigned long long)h);
    return k;
}

void tfb_trace_colcache_key_fetched(tfb_trace_colcache_key **key)
{
    tfb_trace_colcache_key *k = *key;
    if (!k || !k->bucket || k->local_sig)
        return;
    /* The copies fetched must be the versions the key names (an object
     * replaced since its listing is fetched as it is now): else the
     * trace built from them is not that key's cache. */
    uint64_t bytes;
    char *now = tfb_trace_cachebucket_sig(k->paths, k->n, 1, &bytes);
    if (now && strcmp(now, k->sig) == 0)
        k->local_sig = signature(k->paths, k->n);
    free(now);
    if (!k->local_sig) {
        tfb_trace_colcache_key_free(k);
        *key = NULL;
    }
}

/* ------------------------------------------------------------------------
 * Saving and loading
 * ---------------------------------------------------------------------- */
/* 1 when the cache file at path names a source file that no longer
 * exists: its signature's lines are "path\tsize\t..." ("path\t-" for an
 * absent -wal, which does not count). Unreadable files are left alone
 * (another server may be replacing them). */
static int orphaned(const char *path)
{
    char *s;
    if (tfb_trace_colcache_file_sig(path, &s) != 0)
        return 0;
    int gone = 0;
    char *line = strchr(s, '\n'); /* past the version line */
    while (line && !gone) {
        line++;
        char *end = strchr(line, '\n');
        char *tab = strchr(line, '\t');
        if (!end || !tab || tab > end)
            break;
        *tab = '\0';
        struct stat st;
        /* an object of a bucket (a cache in a bucket) is not looked up:
         * the spool's bound ages those files out */
        gone = tab[1] != '-' && !tfb_os_is_url(line) &&
               stat(line, &st) != 0 && errno == ENOENT;
        line = end;
    }
    free(s);
    return gone;
}

/* Temp files of writers that died (a crash between mkstemp and rename),
 * private copies of a reader that died before it unlinked one
 * (.tmp-tfbc-<file>-XXXXXX, trace_colcache.h) and WAL copies of loads
 * that died: removed when a day old, never the
 * files of a writer or load running now. Cache files of sources that were
 * deleted: removed, so the directory holds one file per existing traced
 * run. */
static void sweep_stale(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    time_t now = time(NULL);
    struct dirent *e;
    while ((e = readdir(d))) {
        struct stat st;
        if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
            !S_ISREG(st.st_mode))
            continue;
        if (strncmp(e->d_name, ".tmp-tfbc-", 10) == 0 ||
            strncmp(e->d_name, "wal-", 4) == 0) {
            if (now - st.st_mtime > 86400)
                unlinkat(dirfd(d), e->d_name, 0);
            continue;
        }
        if (strncmp(e->d_name, "trace-", 6) != 0 ||
            !tfb_trace_has_suffix(e->d_name, ".tfbc") || st.st_uid != geteuid())
            continue;
        size_t pl = strlen(dir) + strlen(e->d_name) + 2;
        char *p = malloc(pl);
        if (!p)
            continue;
        snprintf(p, pl, "%s/%s", dir, e->d_name);
        if (orphaned(p))
            unlinkat(dirfd(d), e->d_name, 0);
        free(p);
    }
    closedir(d);
}

int tfb_trace_colcache_save(const tfb_trace_colcache_key *key,
                            const tfb_trace *t, uint64_t rows)
{
    if (!key || !t)
        return 0;
    /* A source that changed while it was read: its trace may mix old and
     * new rows, and the next load reads it again anyway. */
    char *now = signature(key->paths, key->n);
    const char *then = key->bucket ? key->local_sig : key->sig;
    int same = now && then && strcmp(now, then) == 0;
    free(now);
    if (!same)
        return TFB_ESTATE;
    const char *slash = strrchr(key->file, '/');
    char *dir = slash ? strndup(key->file, (size_t)(slash - key->file))
                      : NULL;
    if (dir)
        sweep_stale(dir);
    int err = tfb_trace_colcache_write_file(key->file, key->sig, t, rows);
    if (!err && key->bucket) {
        /* the spool stays under its bound; then the bucket gets it for
         * the other replicas (a failed upload only means they build it
         * too) */
        if (dir)
            tfb_trace_cachebucket_spool_room(dir, 0);
        tfb_trace_cachebucket_put(key->sig, key->file, key->replace_etag);
    }
    free(dir);
    return err;
}

/* 1 when the cache file at path stores sig (a sound header: a file
 * refused for its rows, not for its sources). */
static int claims(const char *path, const char *sig)
{
    char *s;
    if (tfb_trace_colcache_file_sig(path, &s) != 0)
        return 0;
    int same = strcmp(s, sig) == 0;
    free(s);
    return same;
}

/* The cache of a bucket key from the bucket: fetched into k->file, then
 * checked whole before it is mapped (tfb_trace_colcache_read_file: size,
 * magic, version, CRC, the signature it claims). An unsound object is
 * noted in k->replace_etag, to be replaced by the rebuilt cache. */
static int load_from_bucket(tfb_trace_colcache_key *k, uint64_t max_rows,
                            tfb_trace **out)
{
    char etag[TFB_OS_ETAG_MAX];
    long long t0 = tfb_mono_now_ns();
    int rc = tfb_trace_cachebucket_fetch(k->sig, k->src_bytes, k->file, etag);
    if (rc == TFB_ETOOBIG || rc == TFB_ECORRUPT)
        memcpy(k->replace_etag, etag, sizeof etag);
    if (rc == TFB_ECORRUPT)
        tfb_trace_colcache_log(
            "tfboard: trace cache: the bucket's cache of %s is unsound (%s); "
            "the trace is read from its sources and the cache replaced\n",
            strrchr(k->file, '/') + 1, tfb_strerror(rc));
    if (rc < 0)
        return rc;
    long long t1 = tfb_mono_now_ns();
    uint64_t rows = 0;
    int err = tfb_trace_colcache_read_file(k->file, k->sig, max_rows, out,
                                           &rows);
    if (err == 0) {
        tfb_trace_cachebucket_downloaded();
        /* the split says what the store cost and what the check did */
        tfb_trace_colcache_log(
            "tfboard: trace cache: mapped %s, fetched from the bucket in "
            "%.2f s (download %.2f s, check and map %.2f s)\n",
            k->file, (double)(tfb_mono_now_ns() - t0) * 1e-9,
            (double)(t1 - t0) * 1e-9,
            (double)(tfb_mono_now_ns() - t1) * 1e-9);
        return 0;
    }
    if (err == TFB_ECORRUPT || (err == TFB_ESTATE && !claims(k->file, k->sig))) {
        /* truncated, damaged, of another format version or claiming
         * other sources: never trusted; the rebuilt cache replaces it */
        tfb_trace_cachebucket_rejected();
        memcpy(k->replace_etag, etag, sizeof etag);
        unlink(k->file);
        tfb_trace_colcache_log(
            "tfboard: trace cache: the bucket's cache %s is unsound (%s); "
            "the trace is read from its sources and the cache replaced\n",
            strrchr(k->file, '/') + 1, tfb_strerror(err));
    }
    return err;
}

int tfb_trace_colcache_load(char *const *paths, size_t n, uint64_t max_rows,
                            tfb_trace **out, tfb_trace_colcache_key **key)
{
    *key = NULL;
    *out = NULL;
    tfb_trace_colcache_key *k = key_new(paths, n);
    if (!k)
        return TFB_ENOENT;
    int err =
        tfb_trace_colcache_read_file(k->file, k->sig, max_rows, out, NULL);
    if (err == 0 && k->bucket)
        utimensat(AT_FDCWD, k->file, NULL, 0); /* used: the spool's LRU */
    /* Not in the spool (or unsound there): the bucket's, unless the file
     * is this very cache refused for the rows budget. */
    if (err != 0 && k->bucket &&
        !(err == TFB_ESTATE && claims(k->file, k->sig)))
        err = load_from_bucket(k, max_rows, out);
    if (err == 0) {
        tfb_trace_colcache_key_free(k);
        return 0;
    }
    *key = k;
    return err;
}

int tfb_trace_colcache_map(const tfb_trace_colcache_key *key, tfb_trace **out)
{
    if (!key || !out)
        return TFB_EINVAL;
    return tfb_trace_colcache_read_file(key->file, key->sig, 0, out, NULL);
}
