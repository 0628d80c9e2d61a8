/*
 * trace_file.c - a run's trace files as files (trace_file.h): their kind
 * by name, reading one whole, gzip'ed or not, with a cap on its inflated
 * size, and the signature of a set of them.
 */
#include "trace/trace_file.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include "tfboard.h"
#include "base/vec.h"
#include "store/storage.h"

int tfb_trace_has_suffix(const char *s, const char *suf)
{
    size_t n = strlen(s), m = strlen(suf);
    return n >= m && strcmp(s + n - m, suf) == 0;
}

tfb_trace_file_kind tfb_trace_file_kind_of(const char *path)
{
    if (tfb_trace_has_suffix(path, ".sqlite"))
        return TFB_TRACE_FILE_SQLITE;
    if (tfb_trace_has_suffix(path, ".pt.trace.json") ||
        tfb_trace_has_suffix(path, ".pt.trace.json.gz"))
        return TFB_TRACE_FILE_KINETO;
    return TFB_TRACE_FILE_OTHER;
}

const char *tfb_trace_file_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

int tfb_trace_read_text(const char *path, size_t max, char **out, size_t *len)
{
    /* gzread passes uncompressed files through unchanged. */
    struct stat st;
    if (stat(path, &st) != 0)
        return errno == ENOENT ? TFB_ENOENT : TFB_EIO;
    /* JSON traces compress 5-30x; far more is a bomb, refused early (past
     * 64 MiB) instead of at the absolute cap. */
    uint64_t ratio_cap = (uint64_t)st.st_size * TFB_TRACE_MAX_RATIO;
    gzFile f = gzopen(path, "rb");
    if (!f)
        return errno == ENOENT ? TFB_ENOENT : TFB_EIO;
    /* The text grows by doubling up to max (+ 1 for the NUL). */
    TFB_VEC(char) buf = {0};
    size_t lim = (size_t)1 << 16;
    int rc = tfb_vec_need(&buf, lim + 1) < 0 ? TFB_ENOMEM : 0;
    while (rc == 0) {
        if (buf.n == lim) {
            if (lim >= max) {
                rc = TFB_ETOOBIG;
                break;
            }
            lim = lim * 2 < max ? lim * 2 : max;
            if (tfb_vec_need(&buf, lim + 1) < 0) {
                rc = TFB_ENOMEM;
                break;
            }
        }
        size_t room = lim - buf.n;
        int r = gzread(f, buf.v + buf.n,
                       (unsigned)(room > (1u << 30) ? 1u << 30 : room));
        if (r < 0) {
            rc = TFB_ECORRUPT; /* a damaged .gz */
            break;
        }
        if (r == 0)
            break;
        buf.n += (size_t)r;
        if (buf.n > ((size_t)64 << 20) && buf.n > ratio_cap) {
            rc = TFB_ETOOBIG;
            break;
        }
    }
    gzclose(f);
    if (rc < 0) {
        tfb_vec_free(&buf);
        return rc;
    }
    buf.v[buf.n] = '\0';
    *out = buf.v;
    *len = buf.n;
    return 0;
}

typedef TFB_VEC(char) text;

/* Appends "path|size|mtime_ns|" to sig (kept NUL-terminated), or
 * "path|size|=etag|" for a copy of a bucket's object; -1 on ENOMEM. */
static int sig_add(text *sig, const char *path)
{
    struct stat st;
    char buf[128];
    long long size = -1, mt = -1;
    tfb_storage_origin o;
    int k;
    if (tfb_storage_origin_get(path, &o) == 0) {
        /* by the version listed: its copy is fetched only by the load
         * that needs its bytes, which must not make the next request
         * load it again */
        k = snprintf(buf, sizeof buf, "|%llu|=%.*s|",
                     (unsigned long long)o.size, 64, o.etag);
        tfb_storage_origin_free(&o);
    } else {
        if (stat(path, &st) == 0) {
            size = (long long)st.st_size;
            mt = (long long)st.st_mtim.tv_sec * 1000000000LL +
                 st.st_mtim.tv_nsec;
        }
        k = snprintf(buf, sizeof buf, "|%lld|%lld|", size, mt);
    }
    if (k < 0 || (size_t)k >= sizeof buf)
        return -1;
    size_t pl = strlen(path);
    if (tfb_vec_need(sig, sig->n + pl + (size_t)k + 1) < 0)
        return -1;
    memcpy(sig->v + sig->n, path, pl);
    memcpy(sig->v + sig->n + pl, buf, (size_t)k + 1);
    sig->n += pl + (size_t)k;
    return 0;
}

char *tfb_trace_files_signature(char *const *files, size_t n)
{
    text sig = {0};
    int err = tfb_vec_need(&sig, 1);
    if (!err)
        sig.v[0] = '\0';
    for (size_t i = 0; i < n && !err; i++) {
        err = sig_add(&sig, files[i]);
        size_t pl = strlen(files[i]);
        if (!err && tfb_trace_file_kind_of(files[i]) == TFB_TRACE_FILE_SQLITE) {
            char *wal = malloc(pl + 5);
            if (!wal) {
                err = -1;
                break;
            }
            memcpy(wal, files[i], pl);
            memcpy(wal + pl, "-wal", 5);
            err = sig_add(&sig, wal);
            free(wal);
        }
    }
    if (err) {
        tfb_vec_free(&sig);
        return NULL;
    }
    return sig.v;
}

int tfb_trace_files_fetch(char *const *files, size_t n, char *err,
                          size_t errcap)
{
    for (size_t i = 0; i < n; i++) {
        int rc = tfb_storage_copy_ready(files[i]);
        if (rc < 0) {
            const char *d = tfb_storage_error_detail();
            if (err && errcap)
                snprintf(err, errcap, "%s: fetching it from the bucket: %s",
                         tfb_trace_file_name(files[i]),
                         d && d[0] ? d : tfb_strerror(rc));
            return rc;
        }
    }
    return 0;
}
