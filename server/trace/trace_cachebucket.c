/*
 * trace_cachebucket.c - the trace caches kept in a bucket
 * (trace_cachebucket.h): the client, the keys, the bounded download into
 * the local spool and the conditional upload.
 */
#include "trace/trace_cachebucket.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/deadline.h"
#include "base/errors.h"
#include "base/hash.h"
#include "base/vec.h"
#include "store/storage.h"
#include "tfboard.h"
#include "trace/trace_cachepack.h"
#include "trace/trace_colcache.h"
#include "trace/trace_filecopy.h"

static tfb_os *g_os;      /* NULL: off */
static char *g_bucket;    /* the bucket */
static char *g_prefix;    /* "prefix/" or "" */
static char g_scheme[3];
static FILE *g_log;
static atomic_uint_fast64_t g_st[4]; /* tfb_trace_cachebucket_stats order */
enum { ST_DOWN, ST_REJECT, ST_UP, ST_LOST };

static void note(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

/* A line on the server's stderr (never a secret: objstore's messages
 * name the request only). */
static void note(const char *fmt, ...)
{
    FILE *f = g_log;
    if (!f)
        return;
    va_list ap;
    va_start(ap, fmt);
    fputs("tfboard: trace cache: ", f);
    vfprintf(f, fmt, ap);
    fputc('\n', f);
    va_end(ap);
    fflush(f);
}

int tfb_trace_cachebucket_configure(const char *url, FILE *err)
{
    tfb_os_destroy(g_os);
    g_os = NULL;
    free(g_bucket);
    free(g_prefix);
    g_bucket = g_prefix = NULL;
    g_log = err;
    for (int i = 0; i < 4; i++)
        atomic_store(&g_st[i], 0);
    if (!url)
        return 0;
    char *bucket, *key;
    if (tfb_os_parse_url(url, g_scheme, &bucket, &key) < 0) {
        if (err)
            fprintf(err, "tfboard: --cache_dir %s is not an s3:// or gs:// "
                         "URL with a bucket\n", url);
        return TFB_EINVAL;
    }
    char why[300] = "";
    tfb_os *os;
    if (tfb_os_create(&os, g_scheme, why, sizeof why) < 0) {
        if (err)
            fprintf(err, "tfboard: --cache_dir %s: %s\n", url, why);
        free(bucket);
        free(key);
        return TFB_EINVAL;
    }
    /* "prefix/": the caches of prefix "a" are not those of "ab" */
    size_t kl = strlen(key);
    while (kl && key[kl - 1] == '/')
        key[--kl] = '\0';
    g_prefix = malloc(kl + 2);
    if (!g_prefix) {
        tfb_os_destroy(os);
        free(bucket);
        free(key);
        return TFB_ENOMEM;
    }
    snprintf(g_prefix, kl + 2, "%s%s", key, kl ? "/" : "");
    free(key);
    g_bucket = bucket;
    g_os = os;
    return 0;
}

int tfb_trace_cachebucket_on(void)
{
    return g_os != NULL;
}

uint64_t tfb_trace_cachebucket_hash(const char *sig)
{
    return tfb_hash_bytes(sig, strlen(sig));
}

/* The object's key (malloc'd): the cache's bucket form
 * (trace_cachepack.h) is named apart from a raw cache file, so a server
 * that stored raw files never meets a packed one under its name. */
static char *object_key(const char *sig)
{
    size_t n = strlen(g_prefix) + 40;
    char *k = malloc(n);
    if (k)
        snprintf(k, n, "%strace-%016llx.tfbc.zst", g_prefix,
                 (unsigned long long)tfb_trace_cachebucket_hash(sig));
    return k;
}

char *tfb_trace_cachebucket_sig(char *const *paths, size_t n,
                                int fetched, uint64_t *bytes)
{
    *bytes = 0;
    if (!g_os || n == 0)
        return NULL;
    tfb_buf b = {0};
    char num[96];
    int k;
    tfb_trace_colcache_sig_begin(&b);
    for (size_t i = 0; i < n; i++) {
        tfb_storage_origin o;
        struct stat st;
        if (tfb_storage_origin_get(paths[i], &o) != 0) {
            tfb_buf_free(&b);
            return NULL; /* a local file: no object to name it by */
        }
        /* A copy not fetched is named by the version its listing saw
         * (what a cache of it must have been built from); a fetched one
         * must still be the file made from that version (a newer copy is
         * renamed in before its note is updated). */
        int same = (!fetched && !o.fetched) ||
                   (o.fetched && stat(paths[i], &st) == 0 &&
                    (uint64_t)st.st_size == o.copy_size &&
                    (uint64_t)st.st_ino == o.copy_ino &&
                    (uint64_t)st.st_dev == o.copy_dev &&
                    (int64_t)st.st_mtim.tv_sec * 1000000000LL +
                            st.st_mtim.tv_nsec ==
                        o.copy_mtime_ns &&
                    o.copy_size == o.size);
        if (same) {
            tfb_buf_puts(&b, o.url);
            k = snprintf(num, sizeof num, "\t%llu\t",
                         (unsigned long long)o.size);
            tfb_buf_put(&b, num, (size_t)k);
            tfb_buf_puts(&b, o.etag);
            tfb_buf_puts(&b, "\n");
            *bytes += o.size;
        }
        tfb_storage_origin_free(&o);
        if (!same) {
            tfb_buf_free(&b);
            return NULL;
        }
    }
    return tfb_buf_take(&b);
}

/* ------------------------------------------------------------------------
 * The local spool
 * ---------------------------------------------------------------------- */
typedef struct spool_file {
    char *name;
    uint64_t bytes;
    int64_t mtime_ns;
} spool_file;

static int by_mtime(const void *a, const void *b)
{
    const spool_file *x = a, *y = b;
    return x->mtime_ns < y->mtime_ns ? -1 : x->mtime_ns > y->mtime_ns;
}

int tfb_trace_cachebucket_spool_room(const char *dir, uint64_t need)
{
    if (need > TFB_TRACE_SPOOL_MAX_BYTES)
        return TFB_ENOSPC;
    DIR *d = opendir(dir);
    if (!d)
        return TFB_EIO;
    TFB_VEC(spool_file) files = {0};
    uint64_t total = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        struct stat st;
        if (strncmp(e->d_name, "trace-", 6) != 0 ||
            fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
            !S_ISREG(st.st_mode))
            continue;
        spool_file f = {strdup(e->d_name), (uint64_t)st.st_blocks * 512,
                        (int64_t)st.st_mtim.tv_sec * 1000000000LL +
                            st.st_mtim.tv_nsec};
        if (!f.name || tfb_vec_push(&files, f) < 0) {
            free(f.name);
            break;
        }
        total += f.bytes;
    }
    /* Least recently used first: a hit touches its file (cachedir). A
     * file removed while mapped is safe: what is mapped is a private
     * copy (trace_colcache.h). */
    if (files.n)
        qsort(files.v, files.n, sizeof *files.v, by_mtime);
    for (size_t i = 0; i < files.n && total + need > TFB_TRACE_SPOOL_MAX_BYTES;
         i++)
        if (unlinkat(dirfd(d), files.v[i].name, 0) == 0)
            total -= files.v[i].bytes < total ? files.v[i].bytes : total;
    for (size_t i = 0; i < files.n; i++)
        free(files.v[i].name);
    tfb_vec_free(&files);
    closedir(d);
    return total + need > TFB_TRACE_SPOOL_MAX_BYTES ? TFB_ENOSPC : 0;
}

/* ------------------------------------------------------------------------
 * Download
 * ---------------------------------------------------------------------- */
/* The deadline of a transfer of bytes at rate (bytes/s) at least. */
static long long deadline_for(uint64_t bytes, uint64_t rate)
{
    return tfb_mono_now_ns() +
           ((long long)TFB_TRACE_BUCKET_GRACE_S + (long long)(bytes / rate)) *
               1000000000LL;
}

int tfb_trace_cachebucket_fetch(const char *sig, uint64_t src_bytes,
                                const char *dest, char *etag)
{
    etag[0] = '\0';
    if (!g_os)
        return TFB_ENOENT;
    char *key = object_key(sig);
    if (!key)
        return TFB_ENOMEM;
    tfb_os_object o;
    tfb_os_error e = {0};
    /* The lookup, retries included, within the download's grace: a
     * stalled store delays the load by that at most, then the trace is
     * read from its sources. */
    tfb_os_cond hc = {NULL, 0, deadline_for(0, TFB_TRACE_BUCKET_MIN_RATE)};
    int rc = tfb_os_head_cond(g_os, g_bucket, key, &hc, &o, &e);
    if (rc == TFB_EIO && tfb_mono_now_ns() >= hc.deadline_ns)
        rc = TFB_ETIMEDOUT;
    if (rc < 0) {
        if (rc != TFB_ENOENT)
            note("%s", e.msg[0] ? e.msg : tfb_strerror(rc));
        free(key);
        return rc;
    }
    snprintf(etag, TFB_OS_ETAG_MAX, "%s", o.etag);
    uint64_t max = src_bytes > (UINT64_MAX - TFB_TRACE_BUCKET_SIZE_SLACK) /
                                   TFB_TRACE_BUCKET_SIZE_RATIO
                       ? UINT64_MAX
                       : src_bytes * TFB_TRACE_BUCKET_SIZE_RATIO +
                             TFB_TRACE_BUCKET_SIZE_SLACK;
    if (o.size > max || o.size > TFB_TRACE_SPOOL_MAX_BYTES) {
        note("%s://%s/%s: %llu bytes, more than a cache of these sources "
             "may be (%llu); rebuilt and replaced",
             g_scheme, g_bucket, key, (unsigned long long)o.size,
             (unsigned long long)max);
        atomic_fetch_add(&g_st[ST_REJECT], 1);
        free(key);
        return TFB_ETOOBIG;
    }
    /* Two temp files beside dest (the spool), named as the cache
     * directory's sweep knows temp files (removed when a day old): the
     * packed object as downloaded, then the cache file it unpacks to. */
    const char *slash = strrchr(dest, '/');
    size_t dl = slash ? (size_t)(slash - dest) : 0;
    char *tmp = malloc(dl + 40);
    char *ztmp = malloc(dl + 40);
    char *dir = strndup(dest, dl);
    int fd = -1, zfd = -1;
    if (tmp && ztmp && dir) {
        tfb_trace_cachebucket_spool_room(dir, o.size);
        snprintf(ztmp, dl + 40, "%.*s/.tmp-tfbc-dl-XXXXXX", (int)dl, dest);
        zfd = mkstemp(ztmp);
        snprintf(tmp, dl + 40, "%.*s/.tmp-tfbc-dl-XXXXXX", (int)dl, dest);
        fd = zfd >= 0 ? mkstemp(tmp) : -1;
    }
    rc = !tmp || !ztmp || !dir ? TFB_ENOMEM : fd < 0 ? TFB_EIO : 0;
    if (rc == 0 && tfb_trace_copy_room(fd) < o.size)
        rc = TFB_ENOSPC;
    /* Streamed to the file (no buffer of its size) as ranges of
     * TFB_TRACE_BUCKET_RANGE in parallel, every one as the version
     * headed (a replacement meanwhile fails with TFB_ESTATE instead of
     * mixing two versions), within the time bound of its size. */
    tfb_os_cond cond = {etag, 0,
                        deadline_for(o.size, TFB_TRACE_BUCKET_MIN_RATE)};
    if (rc == 0) {
        uint64_t parts = (o.size + TFB_TRACE_BUCKET_RANGE - 1) /
                         TFB_TRACE_BUCKET_RANGE;
        memset(&e, 0, sizeof e);
        long long got = tfb_os_get_to_fd(g_os, g_bucket, key, 0, o.size, zfd,
                                         parts ? (size_t)parts : 1, &cond,
                                         &e);
        if (got < 0) {
            rc = (int)got;
            if (e.msg[0])
                note("%s", e.msg);
            if (rc == TFB_EIO && tfb_mono_now_ns() >= cond.deadline_ns)
                rc = TFB_ETIMEDOUT;
        } else if ((uint64_t)got != o.size) {
            rc = TFB_EIO; /* the transfer ended short of its HEAD's size */
        }
    }
    if (zfd >= 0 && close(zfd) != 0 && rc == 0)
        rc = TFB_EIO;
    /* Unpacked within the same bound as a raw download had: what the
     * object may make the server write and decode (trace_cachepack.h);
     * room made in the spool for what it declares, before a byte of it
     * is written. */
    long long t_unpack = tfb_mono_now_ns();
    uint64_t raw = 0;
    if (rc == 0) {
        uint64_t bound = max < TFB_TRACE_SPOOL_MAX_BYTES
                             ? max
                             : TFB_TRACE_SPOOL_MAX_BYTES;
        rc = tfb_trace_cachepack_size(ztmp, bound, &raw);
        if (rc == 0) {
            tfb_trace_cachebucket_spool_room(dir, o.size + raw);
            if (tfb_trace_copy_room(fd) < raw)
                rc = TFB_ENOSPC;
        }
        if (rc == 0)
            rc = tfb_trace_cachepack_unpack(ztmp, fd, raw, &raw);
        if (rc == TFB_ECORRUPT || rc == TFB_ETOOBIG) {
            note("%s://%s/%s: %s (%llu bytes packed); rebuilt and replaced",
                 g_scheme, g_bucket, key,
                 rc == TFB_ECORRUPT ? "not a sound packed cache"
                                    : "unpacks to more than a cache of "
                                      "these sources may be",
                 (unsigned long long)o.size);
            atomic_fetch_add(&g_st[ST_REJECT], 1);
        }
    }
    if (zfd >= 0)
        unlink(ztmp);
    if (fd >= 0 && close(fd) != 0 && rc == 0)
        rc = TFB_EIO;
    if (rc == 0 && rename(tmp, dest) != 0)
        rc = tfb_err_from_errno(errno);
    if (rc < 0 && fd >= 0)
        unlink(tmp);
    if (rc == 0)
        note("%s://%s/%s: %llu bytes unpacked from %llu in %.2f s", g_scheme,
             g_bucket, key, (unsigned long long)raw,
             (unsigned long long)o.size,
             (double)(tfb_mono_now_ns() - t_unpack) * 1e-9);
    if (rc == TFB_ETIMEDOUT)
        note("%s://%s/%s: not fetched within %llu s (%llu bytes at %llu "
             "MiB/s at least); read from its sources",
             g_scheme, g_bucket, key,
             (unsigned long long)(TFB_TRACE_BUCKET_GRACE_S +
                                  o.size / TFB_TRACE_BUCKET_MIN_RATE),
             (unsigned long long)o.size,
             (unsigned long long)(TFB_TRACE_BUCKET_MIN_RATE >> 20));
    free(tmp);
    free(ztmp);
    free(dir);
    free(key);
    return rc;
}

/* ------------------------------------------------------------------------
 * Upload
 * ---------------------------------------------------------------------- */
int tfb_trace_cachebucket_put(const char *sig, const char *file,
                              const char *replace_etag)
{
    if (!g_os)
        return 0;
    struct stat st;
    if (stat(file, &st) != 0)
        return tfb_err_from_errno(errno);
    char *key = object_key(sig);
    /* Packed (trace_cachepack.h) into a temp file beside the cache file,
     * named as the sweep knows temp files, removed once stored. */
    const char *slash = strrchr(file, '/');
    size_t dl = slash ? (size_t)(slash - file) : 0;
    char *ztmp = malloc(dl + 40);
    if (!key || !ztmp) {
        free(key);
        free(ztmp);
        return TFB_ENOMEM;
    }
    snprintf(ztmp, dl + 40, "%.*s%s.tmp-tfbc-up-XXXXXX", (int)dl, file,
             dl ? "/" : "");
    int zfd = mkstemp(ztmp);
    uint64_t packed = 0;
    long long t0 = tfb_mono_now_ns();
    int rc = zfd < 0 ? tfb_err_from_errno(errno) : 0;
    if (zfd >= 0)
        close(zfd);
    if (rc == 0)
        rc = tfb_trace_cachepack_pack(file, ztmp, &packed);
    double pack_s = (double)(tfb_mono_now_ns() - t0) * 1e-9;
    tfb_os_cond cond = {replace_etag && replace_etag[0] ? replace_etag
                                                        : NULL,
                        1, deadline_for(packed, TFB_TRACE_BUCKET_PUT_MIN_RATE)};
    tfb_os_error e = {0};
    if (rc == 0)
        rc = tfb_os_put_file_cond(g_os, g_bucket, key, ztmp, 0, &cond, &e);
    if (zfd >= 0)
        unlink(ztmp);
    if (rc == 0) {
        atomic_fetch_add(&g_st[ST_UP], 1);
        note("stored %s://%s/%s (%llu bytes, packed from %llu in %.2f s)%s",
             g_scheme, g_bucket, key, (unsigned long long)packed,
             (unsigned long long)st.st_size, pack_s,
             cond.if_match ? ", in place of an unsound one" : "");
    } else if (rc == TFB_EEXIST || rc == TFB_ESTATE) {
        /* Another replica stored its cache of the same sources first:
         * theirs stays, and is what every later load maps. */
        atomic_fetch_add(&g_st[ST_LOST], 1);
        note("%s://%s/%s: another server stored it first; its object is "
             "kept", g_scheme, g_bucket, key);
    } else {
        note("%s", e.msg[0] ? e.msg : tfb_strerror(rc));
    }
    free(ztmp);
    free(key);
    return rc;
}

void tfb_trace_cachebucket_rejected(void)
{
    atomic_fetch_add(&g_st[ST_REJECT], 1);
}

void tfb_trace_cachebucket_downloaded(void)
{
    atomic_fetch_add(&g_st[ST_DOWN], 1);
}

void tfb_trace_cachebucket_stats_get(tfb_trace_cachebucket_stats *out)
{
    out->downloads = atomic_load(&g_st[ST_DOWN]);
    out->rejected = atomic_load(&g_st[ST_REJECT]);
    out->uploads = atomic_load(&g_st[ST_UP]);
    out->lost_races = atomic_load(&g_st[ST_LOST]);
}
