/*
 * trace_colcache.h - the columnar trace cache file: a built GPU trace
 * (spans, lanes and their window trees, kernel descriptions, values,
 * runtime calls, devices, strings and the aggregates) written as one file
 * and memory-mapped back, so that reopening a 10 M-kernel trace costs a
 * checksum pass instead of a SQLite read. Which file belongs to which
 * sources, and where they live: trace_cachedir.h. docs/trace-cache.md.
 *
 * Format: a fixed header (magic, format version, byte order, the sizes of
 * the in-memory structs it stores, file size, CRC-32C of the whole file,
 * counts and extents, a table of columns: offset and length), then the
 * columns, each 64-byte aligned: the source signature, spans, lanes,
 * trees, kinfo, values, calls, calls by correlation, devices, string
 * offsets and bytes, device summaries, busy intervals, kernel statistics,
 * the notes (categories not understood), the process groups and HTA's
 * idle breakdown per stream (the distributedInfo is in the header).
 * Spans, calls, trees, strings and busy intervals are used in place
 * (mapped read-only); only the small tables are copied.
 *
 * What is mapped is a private copy of the file (trace_filecopy.h: a
 * clone where the file system can), unlinked as soon as it is made: a
 * cache cleaner, `truncate` or `rsync --inplace` on the cache file while
 * its trace is in use cannot reach it (a mapping of the shared file
 * would die of SIGBUS past a new end). It costs the file's size on disk
 * (none on btrfs/XFS) while the trace is held, freed at the unmap.
 *
 * Safety: a file is used only after its owner (our euid), magic, version,
 * byte order, struct sizes, size, every column's bounds, the signature
 * and the CRC over all its bytes check out (on the private copy: what is
 * checked is what is mapped), and every lane, tree, string and
 * per-device table is in bounds. It is written to a mkstemp() temp
 * file beside its final name, fsync'ed and renamed: readers see the old
 * file or the new one, never a part; a mapped file stays valid after it
 * is replaced. Temp files of a process that exits mid-write are removed
 * at its exit.
 *
 * Thread-safety: any thread.
 */
#ifndef TFB_SERVER_TRACE_COLCACHE_H
#define TFB_SERVER_TRACE_COLCACHE_H

#include <stdint.h>

#include "trace/trace.h"

/* Bumped whenever the layout of the file or of a struct it stores changes
 * in a way the struct-size check would not see. */
#define TFB_TRACE_COLCACHE_VERSION 3

struct tfb_buf;

/* Starts a cache signature in b: the line naming this layout version, so
 * that a cache of another version never matches (the local cache
 * directory and the bucket both sign with it). b's failed flag says
 * whether it fit. */
void tfb_trace_colcache_sig_begin(struct tfb_buf *b);

/* Writes t as a cache file at path (atomically: temp file in path's
 * directory, fsync, rename), with the source signature sig and the rows
 * its build read. 0, TFB_EINVAL, TFB_ENOMEM, TFB_EIO / TFB_ENOSPC /
 * TFB_EACCES / TFB_ETOOBIG (a file-size limit); on error nothing is left
 * behind. */
int tfb_trace_colcache_write_file(const char *path, const char *sig,
                                  const tfb_trace *t, uint64_t rows);

/* Maps a private copy of a cache file (above). 0 and *out (one reference;
 * tfb_trace_free or release as any trace: t->release unmaps it);
 * TFB_ENOENT (no file), TFB_ECORRUPT (anything wrong: magic, version,
 * sizes, checksum, bounds, owner), TFB_ESTATE (a valid file of other
 * sources: sig differs, or more rows than max_rows, 0 = no limit),
 * TFB_ENOMEM; TFB_ETOOBIG / TFB_ENOSPC / TFB_EIO when the copy cannot be
 * made (no room: trace_filecopy.h). *rows (may be NULL) gets the rows of
 * its build. Whatever happens to the file afterwards, the trace stays as
 * it was read. */
int tfb_trace_colcache_read_file(const char *path, const char *sig,
                                 uint64_t max_rows, tfb_trace **out,
                                 uint64_t *rows);

/* The signature stored in a cache file whose header is sound (its CRC is
 * not checked: for sweeping only). *sig malloc'd. 0, TFB_ENOENT,
 * TFB_EIO, TFB_ECORRUPT, TFB_ENOMEM. */
int tfb_trace_colcache_file_sig(const char *path, char **sig);

#endif
