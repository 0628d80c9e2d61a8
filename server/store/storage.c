/*
 * storage.c - what every storage backend shares: freeing, and a
 * tfb_reader over any backend (storage.h), so the reader's record
 * framing and replacement rules need one implementation.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "base/utf8.h"
#include "collector/reader_source.h"
#include "store/storage.h"

#include "base/deadline.h"

void tfb_storage_destroy(tfb_storage *s)
{
    if (s)
        s->ops->destroy(s);
}

void tfb_storage_cancel(tfb_storage *s)
{
    if (s && s->ops->cancel)
        s->ops->cancel(s);
}

int tfb_storage_info(tfb_storage *s, tfb_storage_status *out)
{
    memset(out, 0, sizeof *out);
    if (!s || !s->ops->info)
        return TFB_ENOENT;
    return s->ops->info(s, out);
}

char *tfb_storage_join(const char *dir, const char *name)
{
    if (strcmp(name, ".") == 0)
        return strdup(dir);
    size_t ld = strlen(dir), ln = strlen(name);
    char *p = malloc(ld + ln + 2);
    if (!p)
        return NULL;
    memcpy(p, dir, ld);
    p[ld] = '/';
    memcpy(p + ld + 1, name, ln + 1);
    return p;
}

int tfb_storage_local_path(tfb_storage *s, const char *path, char **out)
{
    if (s->ops->local_copy)
        return s->ops->local_copy(s, path, out);
    *out = strdup(path);
    return *out ? 0 : TFB_ENOMEM;
}

static _Thread_local char g_detail[TFB_STORAGE_ERROR_MAX];

void tfb_storage_set_error_detail(const char *msg)
{
    tfb_utf8_copy(g_detail, sizeof g_detail, msg ? msg : "");
}

const char *tfb_storage_error_detail(void)
{
    return g_detail;
}

static _Thread_local uint64_t g_requests, g_bytes;

void tfb_storage_count(uint64_t requests, uint64_t bytes)
{
    g_requests += requests;
    g_bytes += bytes;
}

void tfb_storage_counted(uint64_t *requests, uint64_t *bytes)
{
    *requests = g_requests;
    *bytes = g_bytes;
}


void tfb_storage_entries_free(tfb_storage_entry *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i].path);
    free(v);
}

/* ---- a backend's object as a tfb_reader_source ---------------------- */

typedef struct storage_source {
    tfb_storage *s;
    char *path;
    tfb_storage_file *f;
    /* tfb_storage_reader_resume: the version expected at the first open
     * (NULL after it), and whether the object opened was another one */
    const char *expect_etag;
    int other_version;
} storage_source;

static tfb_object_id id_of(const tfb_storage_stat *st)
{
    size_t n = strnlen(st->etag, sizeof st->etag);
    tfb_object_id id = {tfb_hash_bytes(st->etag, n), n};
    return id;
}

static void src_release(void *ctx)
{
    storage_source *c = ctx;
    if (c->f)
        c->s->ops->close(c->f);
    c->f = NULL;
}

static int src_open(void *ctx, tfb_object_id *id, uint64_t *size)
{
    storage_source *c = ctx;
    src_release(c);
    tfb_storage_stat st;
    int rc = c->s->ops->open(c->s, c->path, &c->f, &st);
    if (rc < 0) {
        c->f = NULL;
        return rc;
    }
    if (c->expect_etag && strcmp(st.etag, c->expect_etag) != 0)
        c->other_version = 1;
    c->expect_etag = NULL;
    *id = id_of(&st);
    *size = st.size;
    return 0;
}

static int src_stat(void *ctx, tfb_object_id *id, uint64_t *size)
{
    storage_source *c = ctx;
    tfb_storage_stat st;
    int rc = c->s->ops->stat(c->s, c->path, &st);
    if (rc < 0)
        return rc;
    if (!st.regular)
        return TFB_ENOTFILE;
    *id = id_of(&st);
    *size = st.size;
    return 0;
}

/* Time this thread spent in reads (tfb_storage_read_ns): a few reads a
 * file, so the clock costs nothing next to them. */
static _Thread_local uint64_t g_read_ns;

uint64_t tfb_storage_read_ns(void)
{
    return g_read_ns;
}

static long src_read(void *ctx, uint64_t off, void *buf, size_t len)
{
    storage_source *c = ctx;
    if (!c->f)
        return TFB_EINVAL;
    long long t0 = tfb_mono_now_ns();
    long n = c->s->ops->read(c->f, off, buf, len);
    g_read_ns += (uint64_t)(tfb_mono_now_ns() - t0);
    return n;
}

static void src_destroy(void *ctx)
{
    storage_source *c = ctx;
    src_release(c);
    free(c->path);
    free(c);
}

static int reader_open(tfb_storage *s, const char *path,
                       const char *expect_etag, storage_source **ctx,
                       tfb_reader **out)
{
    storage_source *c = calloc(1, sizeof *c);
    if (!c)
        return TFB_ENOMEM;
    c->s = s;
    c->path = strdup(path);
    if (!c->path) {
        free(c);
        return TFB_ENOMEM;
    }
    c->expect_etag = expect_etag;
    *ctx = c;
    tfb_reader_source src = {c, src_open, src_stat, src_read, src_release,
                             src_destroy};
    return tfb_reader_open_source(out, &src);
}

int tfb_storage_reader_open(tfb_storage *s, const char *path,
                            tfb_reader **out)
{
    storage_source *c;
    return reader_open(s, path, NULL, &c, out);
}

int tfb_storage_reader_resume(tfb_storage *s, const char *path,
                              const char *etag, const tfb_reader_stats *prev,
                              tfb_reader **out)
{
    storage_source *c;
    tfb_reader *r;
    int rc = reader_open(s, path, etag, &c, &r);
    if (rc < 0)
        return rc;
    if (c->other_version || tfb_reader_resume(r, prev) < 0) {
        /* replaced (or truncated) since the version that was read */
        tfb_reader_close(r);
        return 1;
    }
    *out = r;
    return 0;
}
