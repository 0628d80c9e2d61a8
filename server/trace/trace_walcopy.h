/*
 * trace_walcopy.h - trace stores whose newest data is still in their -wal
 * file (a writer that crashed before its checkpoint, seen from a
 * read-only mount). An immutable open (how trace files are read: no lock,
 * nothing written next to them) does not see that data, so such a store
 * is copied with its WAL into the cache directory (trace_cachedir.h) and
 * the copy opened there, read-only but not immutable: SQLite then reads
 * the WAL, checking each frame and stopping at the last whole commit.
 *
 * Thread-safety: any thread.
 */
#ifndef TFB_SERVER_TRACE_WALCOPY_H
#define TFB_SERVER_TRACE_WALCOPY_H

/* When path has a non-empty -wal and there is a cache directory: copies
 * the WAL, then the store (a checkpoint in between writes frames the WAL
 * copy also holds), as wal-XXXXXX and wal-XXXXXX-wal there, and returns
 * the copy's path (malloc'd). NULL when there is no WAL data or no cache
 * directory, or the copy failed (the caller opens the original immutable,
 * as without a cache; nothing is left behind). */
char *tfb_trace_wal_copy(const char *path);

/* Removes a copy made by tfb_trace_wal_copy (and its -wal, -shm) and
 * frees the path. NULL-safe. */
void tfb_trace_wal_drop(char *copy);

#endif
