/*
 * s3.c - the S3 operations objstore.h offers, as requests over
 * transport.c: ListObjectsV2 pages (a small XML reader for their few
 * fields), HEAD, ranged GETs (split and fetched in parallel when big),
 * PUT and multipart upload.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/hash.h"
#include "base/vec.h"
#include "tfboard.h"
#include "objstore/transport.h"

int tfb_os_is_url(const char *p)
{
    return p && (strncmp(p, "s3://", 5) == 0 || strncmp(p, "gs://", 5) == 0);
}

int tfb_os_parse_url(const char *url, char scheme[3], char **bucket,
                     char **key)
{
    if (!tfb_os_is_url(url))
        return -1;
    memcpy(scheme, url, 2);
    scheme[2] = 0;
    const char *b = url + 5, *slash = strchr(b, '/');
    size_t bl = slash ? (size_t)(slash - b) : strlen(b);
    if (bl == 0)
        return -1;
    *bucket = strndup(b, bl);
    *key = strdup(slash ? slash + 1 : "");
    if (!*bucket || !*key) {
        free(*bucket);
        free(*key);
        return -1;
    }
    return 0;
}

/* ---- XML: the few fields of ListObjectsV2 and multipart answers ------ */

/* Decodes XML character references and the five entities in place. */
static void xml_unescape(char *s)
{
    char *w = s;
    for (char *p = s; *p;) {
        if (*p != '&') {
            *w++ = *p++;
            continue;
        }
        char *semi = strchr(p, ';');
        if (!semi) {
            *w++ = *p++;
            continue;
        }
        size_t n = (size_t)(semi - p);
        unsigned long cp = 0;
        int ok = 1;
        if (n == 3 && !strncmp(p, "&lt", 3))
            cp = '<';
        else if (n == 3 && !strncmp(p, "&gt", 3))
            cp = '>';
        else if (n == 4 && !strncmp(p, "&amp", 4))
            cp = '&';
        else if (n == 5 && !strncmp(p, "&quot", 5))
            cp = '"';
        else if (n == 5 && !strncmp(p, "&apos", 5))
            cp = '\'';
        else if (n > 2 && p[1] == '#')
            cp = p[2] == 'x' ? strtoul(p + 3, NULL, 16)
                             : strtoul(p + 2, NULL, 10);
        else
            ok = 0;
        if (!ok || cp == 0 || cp > 0x10FFFF) {
            *w++ = *p++;
            continue;
        }
        /* UTF-8 */
        if (cp < 0x80) {
            *w++ = (char)cp;
        } else if (cp < 0x800) {
            *w++ = (char)(0xC0 | (cp >> 6));
            *w++ = (char)(0x80 | (cp & 0x3F));
        } else if (cp < 0x10000) {
            *w++ = (char)(0xE0 | (cp >> 12));
            *w++ = (char)(0x80 | ((cp >> 6) & 0x3F));
            *w++ = (char)(0x80 | (cp & 0x3F));
        } else {
            *w++ = (char)(0xF0 | (cp >> 18));
            *w++ = (char)(0x80 | ((cp >> 12) & 0x3F));
            *w++ = (char)(0x80 | ((cp >> 6) & 0x3F));
            *w++ = (char)(0x80 | (cp & 0x3F));
        }
        p = semi + 1;
    }
    *w = 0;
}

/* The first needle wholly inside [s, end), or NULL. Every search of an
 * answer stays inside the part it reads (one <Contents> entry, the page),
 * so a page costs time linear in its length: a search through the rest of
 * the document for each entry lacking a field was quadratic. The bytes
 * looked at end at the match (memchr, then memcmp of a short needle):
 * memmem's whole-range checks under the sanitizers would bring the
 * quadratic cost back for the search of each next entry. */
static const char *xml_find(const char *s, const char *end,
                            const char *needle)
{
    size_t nl = strlen(needle);
    while (s && s < end && (size_t)(end - s) >= nl) {
        const char *c = memchr(s, needle[0], (size_t)(end - s) - nl + 1);
        if (!c)
            return NULL;
        if (memcmp(c, needle, nl) == 0)
            return c;
        s = c + 1;
    }
    return NULL;
}

/* The text of the first <tag> inside [s, end), malloc'd, unescaped. */
static char *xml_field(const char *s, const char *end, const char *tag)
{
    char open[64], close[64];
    snprintf(open, sizeof open, "<%s>", tag);
    snprintf(close, sizeof close, "</%s>", tag);
    const char *a = xml_find(s, end, open);
    if (!a)
        return NULL;
    a += strlen(open);
    const char *b = xml_find(a, end, close);
    if (!b)
        return NULL;
    char *v = strndup(a, (size_t)(b - a));
    if (v)
        xml_unescape(v);
    return v;
}

static int64_t parse_iso_time(const char *s)
{
    struct tm tm;
    memset(&tm, 0, sizeof tm);
    const char *r = s ? strptime(s, "%Y-%m-%dT%H:%M:%S", &tm) : NULL;
    if (!r)
        return 0;
    int64_t ns = (int64_t)timegm(&tm) * 1000000000;
    if (*r == '.') {
        long frac = 0, scale = 100000000;
        for (r++; *r >= '0' && *r <= '9' && scale; r++, scale /= 10)
            frac += (*r - '0') * scale;
        ns += frac;
    }
    return ns;
}

static void copy_etag(char out[TFB_OS_ETAG_MAX], const char *v)
{
    snprintf(out, TFB_OS_ETAG_MAX, "%s", v ? v : "");
}

/* A request for method on bucket/key, nothing else set yet. */
static void req_init(os_req *r, os_kind kind, const char *method,
                     const char *bucket, const char *key)
{
    memset(r, 0, sizeof *r);
    r->kind = kind;
    r->method = method;
    r->bucket = bucket;
    r->key = key;
}

/* Runs the one request r; a failure's details go to *e (e may be NULL). */
static int exec_one(tfb_os *c, os_req *r, tfb_os_error *e)
{
    int rc = tfb_os_exec(c, &r, 1);
    if (rc < 0 && e)
        *e = r->err;
    return rc;
}

void tfb_os_objects_free(tfb_os_object *v, size_t n)
{
    for (size_t i = 0; v && i < n; i++)
        free(v[i].key);
    free(v);
}

typedef TFB_VEC(tfb_os_object) os_object_vec;

#define STR_(x) #x
#define STR(x) STR_(x)

/* One ListObjectsV2 page [s, end): its objects whose key starts with
 * prefix onto objs (the others counted in *skipped: a key outside the
 * prefix would become a run of another logdir, and one shorter than it
 * was read past its end), and the continuation token when the page says
 * more follow (*token, malloc'd; NULL at the last page). 0, TFB_ENOMEM,
 * or TFB_EIO with the reason in why. */
static int parse_page(const char *s, const char *end, const char *prefix,
                      os_object_vec *objs, uint64_t *skipped, char **token,
                      char *why, size_t whylen)
{
    size_t plen = strlen(prefix), keys = 0;
    *token = NULL;
    for (const char *p = s; (p = xml_find(p, end, "<Contents>"));) {
        /* the entry [a, e): its fields are looked for there only */
        const char *a = p, *e = xml_find(a, end, "</Contents>");
        if (!e)
            break;
        p = e + strlen("</Contents>");
        char *key = xml_field(a, e, "Key");
        if (!key)
            continue;
        if (++keys > TFB_OS_LIST_PAGE_KEYS) {
            free(key);
            snprintf(why, whylen,
                     "a page of more than the %d keys asked for",
                     TFB_OS_LIST_PAGE_KEYS);
            return TFB_EIO;
        }
        if (strncmp(key, prefix, plen) != 0) {
            free(key);
            (*skipped)++;
            continue;
        }
        tfb_os_object *o = tfb_vec_add(objs);
        if (!o) {
            free(key);
            return TFB_ENOMEM;
        }
        o->key = key;
        char *size = xml_field(a, e, "Size");
        char *etag = xml_field(a, e, "ETag");
        char *lm = xml_field(a, e, "LastModified");
        o->size = size ? strtoull(size, NULL, 10) : 0;
        copy_etag(o->etag, etag);
        o->mtime_ns = parse_iso_time(lm);
        free(size);
        free(etag);
        free(lm);
    }
    char *trunc = xml_field(s, end, "IsTruncated");
    if (trunc && strcmp(trunc, "true") == 0)
        *token = xml_field(s, end, "NextContinuationToken");
    free(trunc);
    return 0;
}

int tfb_os_list(tfb_os *c, const char *bucket, const char *prefix,
                tfb_os_object **out, size_t *n_out, tfb_os_error *e)
{
    os_object_vec objs = {0};
    TFB_VEC(uint64_t) seen = {0}; /* the tokens followed, hashed */
    char *token = NULL, why[160] = "", what[200] = "";
    uint64_t skipped = 0;
    int rc = 0;
    for (size_t page = 0;; page++) {
        os_req r;
        req_init(&r, OS_LIST, "GET", bucket, "");
        r.query[r.n_query++] = (tfb_sigv4_kv){"list-type", "2"};
        r.query[r.n_query++] = (tfb_sigv4_kv){"prefix", prefix};
        r.query[r.n_query++] =
            (tfb_sigv4_kv){"max-keys", STR(TFB_OS_LIST_PAGE_KEYS)};
        if (token)
            r.query[r.n_query++] =
                (tfb_sigv4_kv){"continuation-token", token};
        if (page == TFB_OS_LIST_MAX_PAGES) {
            tfb_os_describe(c, &r, what, sizeof what);
            snprintf(why, sizeof why,
                     "more than %d pages, the bound of a listing",
                     TFB_OS_LIST_MAX_PAGES);
            rc = TFB_EIO;
            break;
        }
        rc = exec_one(c, &r, e);
        if (rc < 0) {
            tfb_os_req_free(&r);
            break;
        }
        free(token);
        token = NULL;
        const char *s = r.resp ? (const char *)r.resp : "";
        rc = parse_page(s, s + r.resp_len, prefix, &objs, &skipped, &token,
                        why, sizeof why);
        if (rc == 0 && token) {
            /* A token seen before starts the same pages again: a listing
             * that would never end (and its objects pile up). */
            uint64_t h = tfb_hash_str(token);
            for (size_t i = 0; i < seen.n && rc == 0; i++)
                if (seen.v[i] == h) {
                    snprintf(why, sizeof why,
                             "page %zu gave a continuation token given "
                             "before (a listing that would never end)",
                             page + 1);
                    rc = TFB_EIO;
                }
            if (rc == 0 && tfb_vec_push(&seen, h) < 0)
                rc = TFB_ENOMEM;
        }
        if (why[0]) {
            tfb_os_describe(c, &r, what, sizeof what);
            if (e) {
                e->status = r.status;
                e->attempts = r.err.attempts;
            }
        }
        tfb_os_req_free(&r);
        if (rc < 0 || !token)
            break;
    }
    free(token);
    tfb_vec_free(&seen);
    if (skipped)
        tfb_os_count_skipped(c, skipped);
    if (rc < 0) {
        if (why[0] && e) {
            /* "LIST s3://b/p: why": a long prefix is cut, never why */
            int k = snprintf(e->msg, sizeof e->msg, "%.120s: ", what);
            snprintf(e->msg + k, sizeof e->msg - (size_t)k, "%s", why);
        }
        tfb_os_objects_free(objs.v, objs.n);
        return rc;
    }
    *out = objs.v;
    *n_out = objs.n;
    return 0;
}

/* Sets cond's headers and deadline on r (cond may be NULL). */
static void apply_cond(os_req *r, const tfb_os_cond *cond)
{
    if (!cond)
        return;
    r->if_match = cond->if_match;
    r->if_none_match = cond->if_match ? 0 : cond->if_none_match;
    r->deadline_ns = cond->deadline_ns;
}

int tfb_os_head(tfb_os *c, const char *bucket, const char *key,
                tfb_os_object *out, tfb_os_error *e)
{
    return tfb_os_head_cond(c, bucket, key, NULL, out, e);
}

int tfb_os_head_cond(tfb_os *c, const char *bucket, const char *key,
                     const tfb_os_cond *cond, tfb_os_object *out,
                     tfb_os_error *e)
{
    os_req r;
    req_init(&r, OS_HEAD, "HEAD", bucket, key);
    apply_cond(&r, cond);
    int rc = exec_one(c, &r, e);
    if (rc < 0) {
        tfb_os_req_free(&r);
        return rc;
    }
    memset(out, 0, sizeof *out);
    out->size = r.content_length;
    out->mtime_ns = r.mtime_ns;
    copy_etag(out->etag, r.etag);
    tfb_os_req_free(&r);
    return 0;
}

/* Big reads go as parallel ranges of this size. */
#define GET_PART ((size_t)4 << 20)
#define GET_PARALLEL_MIN ((size_t)8 << 20)
#define GET_MAX_PARTS 16

long tfb_os_get(tfb_os *c, const char *bucket, const char *key, uint64_t off,
                void *buf, size_t len, char etag[TFB_OS_ETAG_MAX],
                tfb_os_error *e)
{
    return tfb_os_get_cond(c, bucket, key, off, buf, len, NULL, etag, e);
}

long tfb_os_get_cond(tfb_os *c, const char *bucket, const char *key,
                     uint64_t off, void *buf, size_t len,
                     const tfb_os_cond *cond, char etag[TFB_OS_ETAG_MAX],
                     tfb_os_error *e)
{
    if (len == 0)
        return 0;
    size_t parts = 1;
    if (len >= GET_PARALLEL_MIN) {
        parts = (len + GET_PART - 1) / GET_PART;
        if (parts > GET_MAX_PARTS)
            parts = GET_MAX_PARTS;
    }
    size_t each = (len + parts - 1) / parts;
    os_req r[GET_MAX_PARTS], *rp[GET_MAX_PARTS] = {0};
    for (size_t i = 0; i < parts; i++) {
        os_req *q = &r[i];
        req_init(q, OS_GET, "GET", bucket, key);
        apply_cond(q, cond);
        size_t a = i * each, b = a + each < len ? a + each : len;
        snprintf(q->range, sizeof q->range, "bytes=%llu-%llu",
                 (unsigned long long)(off + a),
                 (unsigned long long)(off + b - 1));
        q->out = (uint8_t *)buf + a;
        q->out_cap = b - a;
        rp[i] = q;
    }
    int rc = tfb_os_exec(c, rp, parts);
    long got = 0;
    if (rc == 0) {
        /* The bytes are the leading parts that answered in full, then the
         * first short one: past the object's end the rest is 416. */
        for (size_t i = 0; i < parts; i++) {
            if (r[i].status == 416)
                break;
            got += (long)r[i].resp_len;
            if (r[i].resp_len < r[i].out_cap)
                break;
        }
        if (etag)
            copy_etag(etag, r[0].etag);
    } else if (e) {
        for (size_t i = 0; i < parts; i++)
            if (r[i].rc < 0) {
                *e = r[i].err;
                break;
            }
    }
    return rc < 0 ? rc : got;
}

long long tfb_os_get_to_fd(tfb_os *c, const char *bucket, const char *key,
                           uint64_t off, uint64_t len, int fd, size_t parts,
                           const tfb_os_cond *cond, tfb_os_error *e)
{
    if (len == 0)
        return 0;
    if (parts < 1)
        parts = 1;
    if (parts > GET_MAX_PARTS)
        parts = GET_MAX_PARTS;
    if (parts > len)
        parts = (size_t)len;
    uint64_t each = (len + parts - 1) / parts;
    os_req r[GET_MAX_PARTS], *rp[GET_MAX_PARTS] = {0};
    size_t n = 0;
    for (uint64_t a = 0; a < len; a += each, n++) {
        os_req *q = &r[n];
        uint64_t b = a + each < len ? a + each : len;
        req_init(q, OS_GET, "GET", bucket, key);
        apply_cond(q, cond);
        snprintf(q->range, sizeof q->range, "bytes=%llu-%llu",
                 (unsigned long long)(off + a),
                 (unsigned long long)(off + b - 1));
        q->to_fd = 1;
        q->fd = fd;
        q->fd_off = a;
        q->out_cap = (size_t)(b - a);
        rp[n] = q;
    }
    int rc = tfb_os_exec(c, rp, n);
    long long got = 0;
    if (rc == 0) {
        /* the leading parts that came whole, then the first short one */
        for (size_t i = 0; i < n; i++) {
            if (r[i].status == 416)
                break;
            got += (long long)r[i].resp_len;
            if (r[i].resp_len < r[i].out_cap)
                break;
        }
    } else if (e) {
        for (size_t i = 0; i < n; i++)
            if (r[i].rc < 0) {
                *e = r[i].err;
                break;
            }
    }
    return rc < 0 ? rc : got;
}

static int put_cond(tfb_os *c, const char *bucket, const char *key,
                    const void *data, size_t len, const tfb_os_cond *cond,
                    tfb_os_error *e)
{
    os_req r;
    req_init(&r, OS_PUT, "PUT", bucket, key);
    apply_cond(&r, cond);
    r.body = data ? data : (const uint8_t *)"";
    r.body_len = len;
    int rc = exec_one(c, &r, e);
    tfb_os_req_free(&r);
    return rc;
}

int tfb_os_put(tfb_os *c, const char *bucket, const char *key,
               const void *data, size_t len, tfb_os_error *e)
{
    return put_cond(c, bucket, key, data, len, NULL, e);
}

static int read_whole(const char *path, uint8_t **out, size_t *n)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT ? TFB_ENOENT : TFB_EIO;
    struct stat st;
    if (fstat(fd, &st) < 0) {
        close(fd);
        return TFB_EIO;
    }
    size_t sz = (size_t)st.st_size;
    uint8_t *b = malloc(sz ? sz : 1);
    if (!b) {
        close(fd);
        return TFB_ENOMEM;
    }
    size_t got = 0;
    while (got < sz) {
        ssize_t k = pread(fd, b + got, sz - got, (off_t)got);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            break;
        got += (size_t)k;
    }
    close(fd);
    *out = b;
    *n = got;
    return 0;
}

#define MULTIPART_MIN ((size_t)5 << 20)
#define MULTIPART_BATCH 4

/* What a multipart upload sends: bytes in memory, or a file read a batch
 * of parts at a time into buf (MULTIPART_BATCH parts). */
typedef struct put_src {
    const uint8_t *data; /* NULL: read from fd */
    int fd;
    uint8_t *buf;
} put_src;

/* Reads n bytes at off of the file into buf; 0 or TFB_EIO (a short read:
 * the file shrank while it was sent). */
static int read_at(int fd, uint8_t *buf, size_t n, uint64_t off)
{
    size_t got = 0;
    while (got < n) {
        ssize_t k = pread(fd, buf + got, n - got, (off_t)(off + got));
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return TFB_EIO;
        got += (size_t)k;
    }
    return 0;
}

static int multipart(tfb_os *c, const char *bucket, const char *key,
                     const put_src *src, size_t len, size_t part,
                     const tfb_os_cond *cond, tfb_os_error *e)
{
    os_req r;
    req_init(&r, OS_PUT, "POST", bucket, key);
    r.deadline_ns = cond ? cond->deadline_ns : 0;
    r.query[r.n_query++] = (tfb_sigv4_kv){"uploads", ""};
    int rc = exec_one(c, &r, e);
    char *upload_id = NULL;
    if (rc == 0 && r.resp) {
        const char *s = (const char *)r.resp;
        upload_id = xml_field(s, s + r.resp_len, "UploadId");
    }
    tfb_os_req_free(&r);
    if (rc < 0)
        return rc;
    if (!upload_id)
        return TFB_EIO;
    size_t nparts = (len + part - 1) / part;
    char (*etags)[TFB_OS_ETAG_MAX] = calloc(nparts, TFB_OS_ETAG_MAX);
    if (!etags) {
        free(upload_id);
        return TFB_ENOMEM;
    }
    for (size_t i = 0; rc == 0 && i < nparts; i += MULTIPART_BATCH) {
        os_req pr[MULTIPART_BATCH], *pp[MULTIPART_BATCH] = {0};
        char num[MULTIPART_BATCH][16];
        size_t k = 0;
        for (; k < MULTIPART_BATCH && i + k < nparts; k++) {
            os_req *q = &pr[k];
            req_init(q, OS_PUT, "PUT", bucket, key);
            snprintf(num[k], sizeof num[k], "%zu", i + k + 1);
            q->query[q->n_query++] = (tfb_sigv4_kv){"partNumber", num[k]};
            q->query[q->n_query++] = (tfb_sigv4_kv){"uploadId", upload_id};
            q->deadline_ns = cond ? cond->deadline_ns : 0;
            size_t a = (i + k) * part;
            q->body_len = a + part < len ? part : len - a;
            if (src->data) {
                q->body = src->data + a;
            } else {
                q->body = src->buf + k * part;
                if (rc == 0)
                    rc = read_at(src->fd, src->buf + k * part, q->body_len,
                                 a);
            }
            pp[k] = q;
        }
        if (rc < 0) {
            if (e)
                snprintf(e->msg, sizeof e->msg,
                         "the file to store as %s changed while it was sent",
                         key);
            break;
        }
        rc = tfb_os_exec(c, pp, k);
        for (size_t q = 0; q < k; q++) {
            copy_etag(etags[i + q], pr[q].etag);
            if (pr[q].rc < 0 && e && rc < 0)
                *e = pr[q].err;
            tfb_os_req_free(&pr[q]);
        }
    }
    if (rc == 0) {
        size_t cap = nparts * (TFB_OS_ETAG_MAX + 80) + 128, at = 0;
        char *xml = malloc(cap);
        if (!xml) {
            rc = TFB_ENOMEM;
        } else {
            at += (size_t)snprintf(xml + at, cap - at,
                                   "<CompleteMultipartUpload>");
            for (size_t i = 0; i < nparts; i++)
                at += (size_t)snprintf(xml + at, cap - at,
                                       "<Part><PartNumber>%zu</PartNumber>"
                                       "<ETag>%s</ETag></Part>",
                                       i + 1, etags[i]);
            at += (size_t)snprintf(xml + at, cap - at,
                                   "</CompleteMultipartUpload>");
            req_init(&r, OS_PUT, "POST", bucket, key);
            /* S3 checks a condition at the completion (not on the
             * parts): the object appears whole, or not at all */
            apply_cond(&r, cond);
            r.query[r.n_query++] = (tfb_sigv4_kv){"uploadId", upload_id};
            r.body = (const uint8_t *)xml;
            r.body_len = at;
            rc = exec_one(c, &r, NULL);
            if (rc < 0 && e)
                *e = r.err;
            /* S3 may answer 200 with an error document */
            if (rc == 0 && r.resp &&
                strstr((const char *)r.resp, "<Error>")) {
                rc = TFB_EIO;
                if (e)
                    *e = r.err;
            }
            tfb_os_req_free(&r);
            free(xml);
        }
    }
    if (rc < 0) {
        /* the parts are not left to be billed */
        req_init(&r, OS_PUT, "DELETE", bucket, key);
        r.query[r.n_query++] = (tfb_sigv4_kv){"uploadId", upload_id};
        exec_one(c, &r, NULL);
        tfb_os_req_free(&r);
    }
    free(etags);
    free(upload_id);
    return rc;
}

int tfb_os_put_file(tfb_os *c, const char *bucket, const char *key,
                    const char *path, size_t part_bytes, tfb_os_error *e)
{
    if (part_bytes == 0)
        part_bytes = (size_t)8 << 20;
    if (part_bytes < MULTIPART_MIN)
        part_bytes = MULTIPART_MIN;
    uint8_t *data;
    size_t n;
    int rc = read_whole(path, &data, &n);
    if (rc < 0) {
        if (e)
            snprintf(e->msg, sizeof e->msg, "cannot read %s: %s", path,
                     tfb_strerror(rc));
        return rc;
    }
    if (n <= part_bytes) {
        rc = tfb_os_put(c, bucket, key, data, n, e);
    } else {
        put_src src = {data, -1, NULL};
        rc = multipart(c, bucket, key, &src, n, part_bytes, NULL, e);
    }
    free(data);
    return rc;
}

int tfb_os_put_file_cond(tfb_os *c, const char *bucket, const char *key,
                         const char *path, size_t part_bytes,
                         const tfb_os_cond *cond, tfb_os_error *e)
{
    if (part_bytes == 0)
        part_bytes = (size_t)8 << 20;
    if (part_bytes < MULTIPART_MIN)
        part_bytes = MULTIPART_MIN;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0) {
        int rc = fd < 0 && errno == ENOENT ? TFB_ENOENT : TFB_EIO;
        if (fd >= 0)
            close(fd);
        if (e)
            snprintf(e->msg, sizeof e->msg, "cannot read %s: %s", path,
                     tfb_strerror(rc));
        return rc;
    }
    size_t n = (size_t)st.st_size;
    size_t nbuf = n <= part_bytes ? n : part_bytes * MULTIPART_BATCH;
    put_src src = {NULL, fd, malloc(nbuf ? nbuf : 1)};
    int rc = src.buf ? 0 : TFB_ENOMEM;
    if (rc == 0 && n <= part_bytes) {
        rc = read_at(fd, src.buf, n, 0);
        if (rc == 0)
            rc = put_cond(c, bucket, key, src.buf, n, cond, e);
        else if (e)
            snprintf(e->msg, sizeof e->msg, "cannot read %s: %s", path,
                     tfb_strerror(rc));
    } else if (rc == 0) {
        rc = multipart(c, bucket, key, &src, n, part_bytes, cond, e);
    }
    free(src.buf);
    close(fd);
    return rc;
}
