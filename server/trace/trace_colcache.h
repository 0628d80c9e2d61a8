/*
 * trace_colcache.h - the columnar trace cache: a built GPU trace (spans,
 * lanes and their window trees, kernel descriptions, values, runtime
 * calls, devices, strings and the aggregates) written once as one file in
 * the cache directory, and memory-mapped back on the next load of the
 * same source files (a server restart), so that reopening a 10 M-kernel
 * trace costs a checksum pass instead of a SQLite read.
 *
 * Where: one directory (tfb_colcache_configure: --cache_dir, default
 * $XDG_CACHE_HOME/tfboard, else ~/.cache/tfboard), never inside the
 * logdir. One file per set of source files: trace-<hash of their
 * paths>.tfbc, so a changed source replaces its own cache file.
 *
 * Format (docs/trace-cache.md): a fixed header (magic, format version,
 * byte order, the sizes of the in-memory structs it stores, file size,
 * CRC-32C of the whole file, counts and extents, a table of columns:
 * offset and length), then the columns, each 64-byte aligned: the source
 * signature (path, size, mtime ns, inode, device of every file and of a
 * store's -wal), spans, lanes, trees, kinfo, values, calls, calls by
 * correlation, devices, string offsets and bytes, device summaries, busy
 * intervals, kernel statistics. Spans, calls, trees and strings are used
 * in place (mapped); only the small tables are copied.
 *
 * Safety: a file is trusted only after its magic, version, byte order,
 * struct sizes, size, every column's bounds, the signature of the sources
 * as they are now, the owner (our euid) and the CRC over all its bytes
 * check out; else it is ignored and rewritten from the source. Files are
 * written to a mkstemp() temp file in the cache directory, fsync'ed and
 * renamed over the old one: readers see the old file or the new one,
 * never a part, and several servers may share a directory (the last
 * rename wins; a mapped file stays valid after it is replaced). A cache
 * directory that cannot be made or written, or that fills up, only means
 * no cache: the trace is served from the source, unchanged.
 *
 * Thread-safety: configure before any load starts; everything else may
 * be called from any thread.
 */
#ifndef TFB_SERVER_TRACE_COLCACHE_H
#define TFB_SERVER_TRACE_COLCACHE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "gpu_trace.h"

/* Bumped whenever the layout of the file or of a struct it stores changes
 * in a way the struct-size check would not see. */
#define TFB_COLCACHE_VERSION 1

/* Sets the cache directory. dir NULL: the default ($XDG_CACHE_HOME/tfboard
 * or $HOME/.cache/tfboard); dir "": no cache. The directory is made (0700)
 * when missing. A directory inside logdir (logdir may be NULL) is refused:
 * explicit, TFB_EINVAL with a message on err; the default, caching off
 * with a message. A directory that cannot be made: caching off, message,
 * 0 (the server serves from the sources). Call before loads start. */
int tfb_colcache_configure(const char *dir, const char *logdir, FILE *err);

/* The directory in use (NULL: no cache). Valid until the next configure. */
const char *tfb_colcache_dir(void);

/* The default directory, or NULL when neither XDG_CACHE_HOME nor HOME is
 * set (malloc'd). */
char *tfb_colcache_default_dir(void);

/* ---- the cache of a load ------------------------------------------------ */

/* What a load's sources were when it began: their signature and the
 * cache file that belongs to them. */
typedef struct tfb_colcache_key tfb_colcache_key;

/* Looks up the cache of these sources. 0: *out is the mapped trace (one
 * reference; tfb_gpu_trace_free / release as any trace). Else the
 * sources must be read: *key (may be NULL when there is no cache or a
 * source cannot be stat'ed) is handed to tfb_colcache_save after the
 * build. A cached trace whose build read more than max_rows rows (0: no
 * limit) is not used, so a smaller budget fails as it would have. */
int tfb_colcache_load(char *const *paths, size_t n, uint64_t max_rows,
                      tfb_gpu_trace **out, tfb_colcache_key **key);

/* Writes t (built from key's sources, reading `rows` rows) as their cache
 * file, unless a source changed since the key was taken. Errors only mean
 * no cache file (0, or the negative code, for tests). key may be NULL. */
int tfb_colcache_save(const tfb_colcache_key *key, const tfb_gpu_trace *t,
                      uint64_t rows);

/* Maps the cache file that tfb_colcache_save just wrote for key (the
 * server swaps it in for the built trace: same answers, a fraction of the
 * resident memory). 0 and *out, or an error of tfb_colcache_read_file. */
int tfb_colcache_map(const tfb_colcache_key *key, tfb_gpu_trace **out);

void tfb_colcache_key_free(tfb_colcache_key *key);

/* ---- one file (tests, tools) --------------------------------------------- */

/* Writes t as a cache file at path (atomically: temp file in path's
 * directory, fsync, rename), with the source signature sig. 0,
 * TFB_ENOMEM, TFB_EIO / TFB_ENOSPC / TFB_EACCES / TFB_ETOOBIG. */
int tfb_colcache_write_file(const char *path, const char *sig,
                            const tfb_gpu_trace *t, uint64_t rows);

/* Maps a cache file back. 0 and *out; TFB_ENOENT (no file), TFB_ECORRUPT
 * (anything wrong: magic, version, sizes, checksum, bounds, owner),
 * TFB_ESTATE (a valid file of other sources: sig differs, or more rows
 * than max_rows), TFB_ENOMEM. *rows (may be NULL) gets the rows of its
 * build. */
int tfb_colcache_read_file(const char *path, const char *sig,
                           uint64_t max_rows, tfb_gpu_trace **out,
                           uint64_t *rows);

/* ---- WAL stores ------------------------------------------------------------ */

/* A trace store whose newest data is still in its -wal file (a writer that
 * crashed before its checkpoint) cannot be read in full immutably: when
 * path has a non-empty -wal, both are copied into the cache directory and
 * the copy's path is returned (malloc'd), to be opened there read-only
 * but not immutable (SQLite then reads the WAL). NULL when there is no
 * WAL data or no cache directory, or the copy failed (the caller opens
 * the original immutable, as without a cache). */
char *tfb_colcache_wal_copy(const char *path);

/* Removes a copy made by tfb_colcache_wal_copy (and its -wal, -shm) and
 * frees the path. NULL-safe. */
void tfb_colcache_wal_drop(char *copy);

#endif
