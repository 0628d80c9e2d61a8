/*
 * trace_cachebucket.h - the columnar trace caches (trace_colcache.h) kept
 * in a bucket (--cache_dir s3://bucket/prefix or gs://...), so that
 * replicas of a server over one bucket, and a restarted pod, map a cache
 * another one built instead of reading the trace again. docs/trace-cache.md
 * ("Caches in a bucket"); the bounds: server/API.md.
 *
 * Keys: a cache object is named by its sources' bucket signature (the
 * cache format version, then each source object's URL, size and ETag:
 * tfb_trace_cachebucket_sig), hashed: <prefix>/trace-<16 hex>.tfbc. The
 * file stores the whole signature (the key it claims) and is used only
 * when it equals the one asked for, so a hash collision, a copied or a
 * forged object is never mapped for another trace. A replaced source
 * (new ETag or size) or another format version is another key: its old
 * cache is never looked at.
 *
 * Writes are conditional (If-None-Match: *): two replicas that built the
 * same trace never overwrite each other; the loser (HTTP 412, or 409 for
 * a write that raced another) keeps the winner's object. An object found
 * unsound (truncated, corrupted, claiming another key, over the size
 * bound) is replaced by the rebuilt cache, conditionally on its ETag
 * (If-Match), so a sound object written meanwhile by another replica is
 * not overwritten.
 *
 * Downloads go to a temp file in the local spool (the cache directory
 * that holds the local files, tfb_trace_colcache_dir), under its byte
 * bound, and are renamed into place whole; the caller then checks the
 * file (size, magic, version, CRC-32C over all of it, the signature)
 * before it maps anything (tfb_trace_colcache_read_file).
 *
 * Thread-safety: configure before any load; the rest from any thread.
 */
#ifndef TFB_SERVER_TRACE_CACHEBUCKET_H
#define TFB_SERVER_TRACE_CACHEBUCKET_H

#include <stdint.h>
#include <stdio.h>

#include "objstore/objstore.h"

/* Bounds on what a cache in a bucket may cost a server (server/API.md
 * says why each value):
 *
 * The largest object downloaded for a trace: RATIO times its sources'
 * bytes, plus SLACK. A cache holds ~85 bytes a kernel, its SQLite source
 * ~100 and a gzip'ed Kineto source ~15: a cache is a few times its
 * sources at most. A hostile bucket cannot make the server download
 * more than that for one trace; a bigger object is rebuilt and replaced. */
#define TFB_TRACE_BUCKET_SIZE_RATIO 16
#define TFB_TRACE_BUCKET_SIZE_SLACK ((uint64_t)64 << 20)
/* A download is streamed to its file as ranged GETs of this many bytes
 * in parallel (at most 16): one HEAD and ceil(size / 256 MiB) GETs, each
 * retried at most AWS_MAX_ATTEMPTS times, so the size bound bounds the
 * requests, and no memory of its size is held. Large ranges: an S3 GET
 * streams at 100+ MB/s, and a local S3 such as moto reads the whole
 * object for every range it serves (85 MB: one GET 3.6 s, 16 ranges
 * 12.7 s, on the loaded machine here). */
#define TFB_TRACE_BUCKET_RANGE ((uint64_t)256 << 20)
/* Time: a download may take GRACE seconds plus its bytes at MIN_RATE
 * (10 s + 64 s for a 1 GiB cache): past that, it is dropped and the trace
 * read from its sources, which a link that slow would read faster. The
 * HEAD before it (the lookup) may take GRACE seconds, retries included. */
#define TFB_TRACE_BUCKET_GRACE_S 10
#define TFB_TRACE_BUCKET_MIN_RATE ((uint64_t)16 << 20) /* bytes/s */
/* An upload may take GRACE seconds plus its bytes at PUT_MIN_RATE (14 min
 * for 849 MB): it runs after the trace answered, on the load's thread,
 * and only delays the swap of the built trace for its mapped cache; a
 * slow store (a loaded machine's moto: 85 MB took over 15 s) must still
 * get it, a stalled one must not hold the thread for ever. */
#define TFB_TRACE_BUCKET_PUT_MIN_RATE ((uint64_t)1 << 20) /* bytes/s */
/* The local spool (cache files of bucket keys, downloads in progress):
 * at most this many bytes; the least recently used files go first. It
 * holds the largest trace the load budget allows (100 M rows, ~8.5 GB)
 * with room for the next one. */
#define TFB_TRACE_SPOOL_MAX_BYTES ((uint64_t)16 << 30)

/* Counts since configure, for the server's log and tests. */
typedef struct tfb_trace_cachebucket_stats {
    uint64_t downloads;     /* cache objects fetched and sound */
    uint64_t rejected;      /* fetched or headed, then refused */
    uint64_t uploads;       /* objects this server stored */
    uint64_t lost_races;    /* conditional writes another replica won */
} tfb_trace_cachebucket_stats;

/* url "s3://bucket/prefix" or "gs://...": the client (AWS settings, as a
 * logdir in a bucket). 0; TFB_EINVAL with a message on err (a bad URL or
 * settings). NULL url: off. */
int tfb_trace_cachebucket_configure(const char *url, FILE *err);
int tfb_trace_cachebucket_on(void);

/* The bucket signature of a load's sources (malloc'd): NULL when the
 * cache in the bucket does not apply (off, or a source is no copy of a
 * bucket's object with the version noted: storage.h's origins). A copy
 * not fetched yet counts by the version listed, unless fetched is 1:
 * then every copy must be fetched, and still be the file made from the
 * version noted. *bytes: the sources' bytes (the size bound's base). */
char *tfb_trace_cachebucket_sig(char *const *paths, size_t n, int fetched,
                                uint64_t *bytes);

/* The cache object of sig into the local file dest (replaced whole),
 * unpacked from its bucket form (trace_cachepack.h). 0: fetched (the
 * caller checks it before use); TFB_ENOENT: none; TFB_ETOOBIG: over the
 * size bound, packed or unpacked, and TFB_ECORRUPT: not a sound pack
 * (both unsound: *etag is set, to replace it, and counted as rejected);
 * TFB_ETIMEDOUT, TFB_ENOSPC (no room in the spool), TFB_EIO... *etag
 * (TFB_OS_ETAG_MAX) gets the object's ETag when there is one. */
int tfb_trace_cachebucket_fetch(const char *sig, uint64_t src_bytes,
                                const char *dest, char *etag);

/* Stores the local cache file of sig: new (If-None-Match: *), or in
 * place of the unsound object replace_etag (If-Match). 0; TFB_EEXIST:
 * another replica's object is there (kept); TFB_ESTATE: the unsound
 * object was replaced meanwhile (kept); other errors mean no upload. */
int tfb_trace_cachebucket_put(const char *sig, const char *file,
                              const char *replace_etag);

/* Notes what the caller's check of a fetched file found (the counts):
 * unsound (then replaced), or sound and mapped. */
void tfb_trace_cachebucket_rejected(void);
void tfb_trace_cachebucket_downloaded(void);

/* Makes room for need more bytes in the spool dir under
 * TFB_TRACE_SPOOL_MAX_BYTES, removing its least recently used cache
 * files (a cache hit touches its file). 0, or TFB_ENOSPC when need
 * alone is over the bound or room could not be made. */
int tfb_trace_cachebucket_spool_room(const char *dir, uint64_t need);

void tfb_trace_cachebucket_stats_get(tfb_trace_cachebucket_stats *out);

/* The hash that names sig's object and local file. */
uint64_t tfb_trace_cachebucket_hash(const char *sig);

#endif
