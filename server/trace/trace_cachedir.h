/*
 * trace_cachedir.h - the trace cache directory: where the columnar trace
 * cache files (trace_colcache.h) live and which one belongs to a load.
 *
 * Where: tfb_trace_colcache_configure (trace.h; --cache_dir; default
 * $XDG_CACHE_HOME/tfboard, else ~/.cache/tfboard), never inside the
 * logdir. One file per set of source files: trace-<hash of their real
 * paths>.tfbc, so a changed source replaces its own cache file.
 *
 * Keys: a load's sources are signed when it begins (for each file its
 * real path, size, mtime ns, inode and device; for a *.sqlite also its
 * -wal's; and the format version). The cache file is used only when its
 * stored signature equals that one, and a trace is saved only when the
 * signature taken after the build still equals it.
 *
 * Sharing: several servers may share the directory (writes are atomic
 * renames; the last one wins). A directory that cannot be made or
 * written, or that fills up, only means no cache: the trace is served
 * from its sources, unchanged. Saving also sweeps the directory: temp
 * files and WAL copies a day old, cache files of sources that are gone.
 *
 * Thread-safety: configure before any load starts; everything else from
 * any thread.
 */
#ifndef TFB_SERVER_TRACE_CACHEDIR_H
#define TFB_SERVER_TRACE_CACHEDIR_H

#include <stddef.h>
#include <stdint.h>

#include "trace/trace.h"

/* The directory in use (NULL: no cache). Valid until the next configure. */
const char *tfb_trace_colcache_dir(void);

/* Writes a line (printf-style) to the stream given to
 * tfb_trace_colcache_configure (the server's stderr), if any: what the
 * cache refused to do and why. */
void tfb_trace_colcache_log(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

/* The default directory, or NULL when neither XDG_CACHE_HOME (absolute)
 * nor HOME is set (malloc'd). */
char *tfb_trace_colcache_default_dir(void);

/* What a load's sources were when it began: their signature and the
 * cache file that belongs to them. */
typedef struct tfb_trace_colcache_key tfb_trace_colcache_key;

/* Looks up the cache of these sources. 0: *out is the mapped trace (one
 * reference). Else the sources must be read: *key (NULL when there is no
 * cache directory or a source cannot be stat'ed) is handed to
 * tfb_trace_colcache_save after the build. A cached trace whose build read
 * more than max_rows rows (0: no limit) is not used, so a smaller budget
 * fails as it would have. Copies of a bucket's objects (storage.h) are
 * looked up in a cache in a bucket without being fetched; the caller
 * fetches them (tfb_trace_files_fetch) before it reads them, then calls
 * tfb_trace_colcache_key_fetched. */
int tfb_trace_colcache_load(char *const *paths, size_t n, uint64_t max_rows,
                            tfb_trace **out, tfb_trace_colcache_key **key);

/* After the caller fetched the sources of *key: takes their local
 * signature (what save checks), or frees *key (NULL: no cache) when a
 * copy is not the version the key names (replaced since its listing). A
 * no-op for a local key. */
void tfb_trace_colcache_key_fetched(tfb_trace_colcache_key **key);

/* Writes t (built from key's sources, reading `rows` rows) as their cache
 * file, unless a source changed since the key was taken (TFB_ESTATE).
 * Errors only mean no cache file. key may be NULL (0). */
int tfb_trace_colcache_save(const tfb_trace_colcache_key *key,
                            const tfb_trace *t, uint64_t rows);

/* Maps the cache file that tfb_trace_colcache_save just wrote for key (the
 * server swaps it in for the built trace: same answers, a fraction of the
 * resident memory). 0 and *out, or an error of tfb_trace_colcache_read_file. */
int tfb_trace_colcache_map(const tfb_trace_colcache_key *key, tfb_trace **out);

void tfb_trace_colcache_key_free(tfb_trace_colcache_key *key);

#endif
