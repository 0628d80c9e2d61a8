/*
 * storage.h - where the loader's bytes come from: one small interface
 * over a logdir's storage, so a backend plugs in without touching the
 * loader's logic: storage_local.c (files), storage_s3.c (s3:// and gs://
 * buckets over objstore/). The loader lists, stats and reads through it
 * only.
 *
 * Paths are the loader's own strings: for local storage, file system
 * paths; a backend for buckets would take "s3://bucket/key". A listing is
 * flat (every object under a prefix, with sizes, times and ETags), the
 * shape of one ListObjectsV2 request, not a directory walk.
 *
 * Identity: each object's `etag` names its current version (device and
 * inode for a local file, the ETag in a bucket); a changed ETag means
 * "replaced": the loader reads it again from the start.
 *
 * Thread-safety: a tfb_storage may be used from many threads at once; a
 * tfb_storage_file belongs to one thread at a time. Ownership: entries
 * and files belong to the caller (tfb_storage_entries_free,
 * ops->close); the storage to its creator (tfb_storage_destroy).
 */
#ifndef TFB_SERVER_STORAGE_H
#define TFB_SERVER_STORAGE_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

#include "tfboard.h"

typedef struct tfb_storage tfb_storage;
typedef struct tfb_storage_file tfb_storage_file;

#define TFB_STORAGE_ETAG_MAX 64

typedef struct tfb_storage_stat {
    uint64_t size;
    int64_t mtime_ns;
    char etag[TFB_STORAGE_ETAG_MAX]; /* NUL-terminated version name */
    /* 1: an object to read (a regular file, or a link to one); 0: listed
     * but never to be opened (a FIFO or device: reading could block) */
    int regular;
} tfb_storage_stat;

typedef struct tfb_storage_entry {
    char *path; /* the full path (prefix joined with the relative name) */
    const char *rel; /* into path: the name relative to the prefix */
    tfb_storage_stat st;
} tfb_storage_entry;

/* What a backend of remote storage says of itself (ops->info), for
 * /data/environment and the report's messages. */
typedef struct tfb_storage_counts {
    /* requests sent (retries included), by kind; bytes received; retries;
     * requests that failed after their retries; listed keys skipped for
     * not starting with the logdir's prefix (a faulty or hostile
     * endpoint's: objstore.h) */
    uint64_t requests, lists, gets, heads, bytes, retries, failures,
        skipped_keys;
} tfb_storage_counts;

/* The last failed request's line, as the backend's client wrote it
 * ("GET s3://bucket/key: HTTP 403 AccessDenied after 1 attempt"; never a
 * secret), at most TFB_STORAGE_ERROR_MAX - 1 bytes, cut at a character
 * boundary (tfb_utf8_cut): room for the method, a URL with a long key
 * (which the client itself cuts short), the status, the S3 error code and
 * the attempts, and small enough for a banner line and a run's note. */
#define TFB_STORAGE_ERROR_MAX 300

typedef struct tfb_storage_status {
    char backend[8]; /* "s3", "gs" */
    int anonymous;   /* 1: unsigned requests (no credentials found) */
    uint64_t reloads; /* listings made */
    /* the requests of the last complete reload (its listing and reads),
     * and of the whole life of the storage */
    tfb_storage_counts last_reload, total;
    uint64_t errors; /* failed requests noted */
    char last_error[TFB_STORAGE_ERROR_MAX]; /* "" when none */
} tfb_storage_status;

/* Which listed names to keep (name: the last path component), so a
 * logdir full of checkpoints costs neither memory nor a stat each. */
typedef int (*tfb_storage_keep_fn)(const char *name, void *arg);

typedef struct tfb_storage_ops {
    const char *name; /* "local" */
    /* Every object under prefix (recursively, in no set order) whose name
     * keep() accepts (keep NULL: all), into a malloc'd array (free with
     * tfb_storage_entries_free). Local: links to directories are not
     * followed (no loops), directories deeper than max_depth are left out
     * and *too_deep set. TFB_ENOENT when the prefix itself cannot be
     * listed. */
    int (*list)(tfb_storage *s, const char *prefix, int max_depth,
                tfb_storage_keep_fn keep, void *keep_arg,
                tfb_storage_entry **out, size_t *n, int *too_deep);
    /* What path designates now; TFB_ENOENT when gone. */
    int (*stat)(tfb_storage *s, const char *path, tfb_storage_stat *out);
    /* Opens path for reading without blocking; TFB_ENOTFILE when it is
     * not a regular file. *st is what was opened. */
    int (*open)(tfb_storage *s, const char *path, tfb_storage_file **out,
                tfb_storage_stat *st);
    /* Reads up to len bytes at off into buf: bytes read, 0 at the end,
     * or a negative TFB_E* code. */
    long (*read)(tfb_storage_file *f, uint64_t off, void *buf, size_t len);
    void (*close)(tfb_storage_file *f); /* NULL-safe */
    void (*destroy)(tfb_storage *s);
    /* Optional (NULL for local files). cancel: every request in flight
     * and to come fails at once (shutdown must not wait on a network).
     * info: the backend, the requests each reload made and the last
     * fault (for /data/environment, written there by the JSON writer). */
    void (*cancel)(tfb_storage *s);
    int (*info)(tfb_storage *s, tfb_storage_status *out);
    /* Optional: the name of a local file to hold path's current bytes
     * (malloc'd), for readers that need a file (the GPU plugin's SQLite
     * trace stores). Fetches nothing: it notes which version the copy is
     * to hold (tfb_storage_origin_defer), and the copy is fetched (again
     * only when the object changed) when a reader first needs its bytes
     * (tfb_storage_copy_ready). A listing so costs no download, and a
     * trace whose cache is in a bucket never downloads its source. */
    int (*local_copy)(tfb_storage *s, const char *path, char **local);
    /* With local_copy: fetches path's copy (the version listed, or what
     * the object is now if it was replaced since) and notes it
     * (tfb_storage_origin_note); a copy already fetched at the version
     * listed costs nothing. Called by tfb_storage_copy_ready only. */
    int (*copy_fetch)(tfb_storage *s, const char *path);
    /* 1 when an object's bytes change only with what stat says of it
     * (etag, size): objects in a bucket are never written in place (one
     * that "grows" is a new, longer version). The loader then reads
     * nothing of an object that waits at a partial record until its
     * listing changes. 0 for local files, which a writer may change in
     * place at the same size (a preallocated file). */
    int immutable;
} tfb_storage_ops;

/* Every backend's handle starts with this. */
struct tfb_storage {
    const tfb_storage_ops *ops;
};

/* storage_local.c: the local file system. */
/* log: where the first listing says which links to directories it did
 * not follow (server/store/dir_links.h); NULL = quiet. */
int tfb_storage_local_create(tfb_storage **out, FILE *log);

/* storage_s3.c: "s3://bucket/prefix" or "gs://bucket/prefix" through
 * objstore/ (settings from the AWS environment, see README.md); -1 with a
 * message in err (never a secret) when the URL or settings are bad. */
int tfb_storage_s3_create(tfb_storage **out, const char *url, char *err,
                          size_t errlen);
/* The backend for a logdir: a bucket for s3:// and gs:// URLs, else
 * local files (log: where the local backend names the directory links it
 * does not follow; NULL = quiet). */
int tfb_storage_for(const char *logdir, tfb_storage **out, char *err,
                    size_t errlen, FILE *log);

/* storage_origin.c: what a local copy of an object (ops->local_copy's
 * file) holds or is to hold, so that a layer above can name the object
 * itself without its bytes (the trace layer keys the caches replicas
 * share through a bucket by it): the object's URL, its ETag as the store
 * gave it and its size, and, once fetched, what the copy's file was
 * (size, mtime, inode, device) when it was made, so that a reader can
 * tell the copy still is those bytes. The backend notes each copy it
 * names (deferred) and each it fetches, and forgets its notes when
 * destroyed. Process-wide; any thread. */
typedef struct tfb_storage_origin {
    char *url; /* "s3://bucket/key" (malloc'd: tfb_storage_origin_free) */
    char etag[TFB_STORAGE_ETAG_MAX];
    uint64_t size;
    /* 1: the file is fetched and copy_* say what it was; 0: named only
     * (the file may be absent, or an older version) */
    int fetched;
    uint64_t copy_size, copy_ino, copy_dev;
    int64_t copy_mtime_ns;
} tfb_storage_origin;
/* Notes that the file local (which must exist: its identity is taken
 * now) is a fetched copy of url at etag and size, replacing an older
 * note (and keeping its owner). */
int tfb_storage_origin_note(const char *local, const char *url,
                            const char *etag, uint64_t size);
/* Notes that local is to hold url at etag and size, fetched by owner
 * (ops->copy_fetch) when a reader asks for it (tfb_storage_copy_ready).
 * A note of that very version, already fetched, is kept as it is. */
int tfb_storage_origin_defer(const char *local, tfb_storage *owner,
                             const char *url, const char *etag,
                             uint64_t size);
/* Makes local hold the bytes its note names, fetching them now when
 * they are not there yet (the caller's thread waits; the backend's
 * request bounds apply). 0 also for a file with no note (a local file:
 * nothing to fetch); else the fetch's error (the thread's
 * tfb_storage_error_detail names the failed request). */
int tfb_storage_copy_ready(const char *local);
/* Drops every note of owner's and waits for its fetches in flight (the
 * owner cancels its requests first, so that is short): after it, no
 * thread calls into owner. */
void tfb_storage_origin_forget(tfb_storage *owner);
/* 0 and *out (free with tfb_storage_origin_free), TFB_ENOENT when local
 * is no copy noted (a local file), TFB_ENOMEM. */
int tfb_storage_origin_get(const char *local, tfb_storage_origin *out);
void tfb_storage_origin_drop(const char *local);
void tfb_storage_origin_free(tfb_storage_origin *o);

/* storage.c: generic helpers over any backend. */
void tfb_storage_cancel(tfb_storage *s); /* NULL-safe; no-op for local */
/* ops->info into *out: 0, or TFB_ENOENT for a backend without one
 * (local files). */
int tfb_storage_info(tfb_storage *s, tfb_storage_status *out);
/* dir/name, malloc'd for the caller (NULL on ENOMEM); name "." is dir
 * itself (a run in the logdir). Paths join alike on every backend. Any
 * thread. */
char *tfb_storage_join(const char *dir, const char *name);
/* A local file name for path: path itself for local storage, else
 * ops->local_copy's (malloc'd in both cases; a copy's bytes are there
 * only after tfb_storage_copy_ready). */
int tfb_storage_local_path(tfb_storage *s, const char *path, char **out);
/* A line about the last failure on this thread (a backend sets it with
 * the request and the answer; never a secret), for the run's note; "" when
 * none. The loader reads it right after the failing call. Kept to
 * TFB_STORAGE_ERROR_MAX - 1 bytes, cut at a character boundary. */
void tfb_storage_set_error_detail(const char *msg);
/* Requests a backend made on this thread, and their bytes: a backend
 * counts them (tfb_storage_count), the loader reads the totals before and
 * after each file to tell what that file cost. */
void tfb_storage_count(uint64_t requests, uint64_t bytes);
void tfb_storage_counted(uint64_t *requests, uint64_t *bytes);
const char *tfb_storage_error_detail(void);
/* Nanoseconds this thread spent in reads of readers' objects
 * (tfb_storage_reader_open): the loader's per-file profile (store.h,
 * tfb_load_profile). */
uint64_t tfb_storage_read_ns(void);
void tfb_storage_destroy(tfb_storage *s); /* NULL-safe */
void tfb_storage_entries_free(tfb_storage_entry *v, size_t n);
/* A tfb_reader over path (reader framing, corruption and replacement
 * rules over the backend's stat/open/read); errors as ops->open. */
int tfb_storage_reader_open(tfb_storage *s, const char *path,
                            tfb_reader **out);
/* A reader over path that goes on where an earlier one over the version
 * `etag` stopped (prev: its last stats; reader_source.h,
 * tfb_reader_resume): the loader closes the reader of a file read to its
 * end and resumes it at the next pass. Returns 0, 1 when the object opened
 * is not that version or holds less than prev->offset (replaced or
 * truncated: the caller reads it from its start; *out is not set), or
 * errors as ops->open. */
int tfb_storage_reader_resume(tfb_storage *s, const char *path,
                              const char *etag, const tfb_reader_stats *prev,
                              tfb_reader **out);

#endif
