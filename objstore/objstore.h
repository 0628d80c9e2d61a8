/*
 * objstore.h - a small S3 REST client shared by libtfboard (uploads of
 * event-file segments) and the server (reading logdirs in buckets):
 * ListObjectsV2 with continuation tokens, GET with Range (in parallel for
 * big reads), HEAD, PUT and multipart upload, for s3:// (AWS or any
 * S3-compatible endpoint) and gs:// (Google Cloud Storage's XML API with
 * HMAC keys).
 *
 * Transport: libcurl, one multi handle driven by the client's own thread,
 * so connections are kept alive and shared by every caller. Every request
 * is signed with SigV4 (sigv4.h) unless no credentials were found
 * (anonymous: public buckets), has connect and stall timeouts and an
 * overall deadline (TFB_OS_MIN_RATE), and is retried with exponential
 * backoff and jitter on network errors, 5xx, 429/503 throttling and a
 * passed deadline; 403 and 404 are answered at once. Secrets never go
 * into an error message or a log line.
 *
 * Errors: negative TFB_E* codes (TFB_ENOENT 404, TFB_EACCES 401/403,
 * TFB_EIO for the rest, TFB_ECLOSED after tfb_os_cancel), with a line for
 * a user in tfb_os_error.msg when the caller passes one.
 *
 * Thread-safety: every function may be called from any number of threads
 * on one client, except tfb_os_destroy (after every call returned).
 */
#ifndef TFB_OBJSTORE_H
#define TFB_OBJSTORE_H

#include <stddef.h>
#include <stdint.h>

#include "objstore/config.h"

typedef struct tfb_os tfb_os;

#define TFB_OS_ETAG_MAX 64

typedef struct tfb_os_error {
    long status;    /* HTTP status of the last attempt; 0: no answer */
    int attempts;   /* attempts made */
    char msg[300];  /* "GET s3://b/k: HTTP 503 SlowDown after 5 attempts" */
} tfb_os_error;

/* Bounds on what an endpoint may answer (README, "Logdirs in a bucket",
 * says why each value). A request's deadline is the connect timeout plus
 * the stall timeout plus its expected bytes (sent, and received: the
 * Content-Length once known, else the most it may receive) at
 * TFB_OS_MIN_RATE: an endpoint that trickles bytes, never stalling, still
 * ends in an error that is retried and then reported. */
#define TFB_OS_MIN_RATE ((uint64_t)64 << 10)  /* bytes/s */
/* The largest XML answer read (a ListObjectsV2 page, a multipart
 * answer): a page of 1,000 keys of S3's longest (1,024 bytes) is about
 * 1.3 MB. A longer answer fails at once, without a retry. */
#define TFB_OS_XML_MAX ((size_t)4 << 20)
/* Keys a ListObjectsV2 page is asked for, and the most it may hold. */
#define TFB_OS_LIST_PAGE_KEYS 1000
/* Pages one listing follows: 10 million objects. */
#define TFB_OS_LIST_MAX_PAGES 10000

typedef struct tfb_os_stats {
    uint64_t requests; /* attempts sent, retries included */
    uint64_t lists, gets, heads, puts;
    uint64_t bytes_in, bytes_out;
    uint64_t retries, failures;
    uint64_t skipped; /* listed keys outside the prefix asked for */
} tfb_os_stats;

typedef struct tfb_os_object {
    char *key; /* malloc'd (tfb_os_objects_free) */
    uint64_t size;
    int64_t mtime_ns;
    char etag[TFB_OS_ETAG_MAX];
} tfb_os_object;

/* Splits "s3://bucket/key..." or "gs://..." into its scheme ("s3"/"gs"),
 * bucket and key (malloc'd; key may be ""). -1 when url is not one. */
int tfb_os_parse_url(const char *url, char scheme[3], char **bucket,
                     char **key);
/* 1 when path starts with s3:// or gs://. */
int tfb_os_is_url(const char *path);

/* A client with the settings tfb_os_config_load finds for scheme (copied;
 * the caller frees its own). -1 with a message in err on failure. */
int tfb_os_create(tfb_os **out, const char *scheme, char *err,
                  size_t errlen);
int tfb_os_create_with(tfb_os **out, const tfb_os_config *cfg);
/* Makes every request in flight, and every later one, fail at once with
 * TFB_ECLOSED (shutdown: no request may hold it back). */
void tfb_os_cancel(tfb_os *c);
void tfb_os_destroy(tfb_os *c); /* NULL-safe */
void tfb_os_get_stats(tfb_os *c, tfb_os_stats *out);
/* The scheme the client was made for ("s3" or "gs"), for messages. */
const char *tfb_os_scheme(const tfb_os *c);
int tfb_os_anonymous(const tfb_os *c);

/* Every object whose key starts with prefix, all pages (1,000 keys a
 * request), into a malloc'd array. A key the store lists that does not
 * start with prefix is skipped (counted in tfb_os_stats.skipped). The
 * listing fails (TFB_EIO, with the reason in e->msg) when a page is
 * longer than TFB_OS_XML_MAX or holds more than TFB_OS_LIST_PAGE_KEYS
 * keys, when the store answers a continuation token it gave before (a
 * listing that would never end), or past TFB_OS_LIST_MAX_PAGES pages. */
int tfb_os_list(tfb_os *c, const char *bucket, const char *prefix,
                tfb_os_object **out, size_t *n, tfb_os_error *e);
void tfb_os_objects_free(tfb_os_object *v, size_t n);

/* Size, ETag and time of one object (HEAD). */
int tfb_os_head(tfb_os *c, const char *bucket, const char *key,
                tfb_os_object *out, tfb_os_error *e);

/* Reads up to len bytes at off: the bytes read, 0 when off is at or past
 * the end (416: no new bytes), or a negative code. Reads of more than
 * 8 MiB are split into ranges fetched in parallel. etag (may be NULL)
 * receives the object's ETag. */
long tfb_os_get(tfb_os *c, const char *bucket, const char *key, uint64_t off,
                void *buf, size_t len, char etag[TFB_OS_ETAG_MAX],
                tfb_os_error *e);

/* Conditions on a request (tfb_os_get_cond, tfb_os_put_file_cond), so
 * that writers sharing a key never undo each other's work and a reader
 * never mixes two versions of an object. */
typedef struct tfb_os_cond {
    /* The object must be this version (its ETag, as the store gave it):
     * a GET of ranges of a replaced object fails with TFB_ESTATE instead
     * of returning bytes of two versions; a PUT replaces that version
     * only (TFB_ESTATE when it is another one now). NULL: any. */
    const char *if_match;
    /* PUT: only when no object has the key (If-None-Match: *). When one
     * has, or another conditional write races this one for the key (S3
     * answers 409), the call fails with TFB_EEXIST: the other writer
     * won. Ignored when if_match is set. */
    int if_none_match;
    /* CLOCK_MONOTONIC ns (base/deadline.h): no attempt runs past it and
     * no retry starts after it (the call then fails); 0: none beyond each
     * request's own deadline. */
    long long deadline_ns;
} tfb_os_cond;

/* tfb_os_head under cond (may be NULL: tfb_os_head): its deadline
 * bounds the whole call, retries included; if_match is sent as is. */
int tfb_os_head_cond(tfb_os *c, const char *bucket, const char *key,
                     const tfb_os_cond *cond, tfb_os_object *out,
                     tfb_os_error *e);

/* tfb_os_get under cond (may be NULL: tfb_os_get). */
long tfb_os_get_cond(tfb_os *c, const char *bucket, const char *key,
                     uint64_t off, void *buf, size_t len,
                     const tfb_os_cond *cond, char etag[TFB_OS_ETAG_MAX],
                     tfb_os_error *e);

/* Writes the len bytes at off of the object to the file fd (at offsets
 * 0..len) as they arrive, as `parts` ranged GETs in parallel (1..16): no
 * buffer of their size. The bytes written (fewer when the object is
 * shorter), or a negative code (TFB_ESTATE: cond's if_match failed). */
long long tfb_os_get_to_fd(tfb_os *c, const char *bucket, const char *key,
                           uint64_t off, uint64_t len, int fd, size_t parts,
                           const tfb_os_cond *cond, tfb_os_error *e);

/* Stores len bytes as the object key (replacing it). */
int tfb_os_put(tfb_os *c, const char *bucket, const char *key,
               const void *data, size_t len, tfb_os_error *e);
/* Stores the file at path as key: one PUT up to part_bytes, else a
 * multipart upload of part_bytes parts (at least 5 MiB; 0 = 8 MiB), its
 * parts sent in parallel, aborted on failure. */
int tfb_os_put_file(tfb_os *c, const char *bucket, const char *key,
                    const char *path, size_t part_bytes, tfb_os_error *e);
/* tfb_os_put_file under cond (for a multipart upload the condition goes
 * on its completion, where S3 checks it), reading the file as it sends
 * it: memory holds 4 parts at most, never the whole file. A file that
 * changes size while it is sent fails (TFB_EIO) and is not stored. */
int tfb_os_put_file_cond(tfb_os *c, const char *bucket, const char *key,
                         const char *path, size_t part_bytes,
                         const tfb_os_cond *cond, tfb_os_error *e);

#endif
