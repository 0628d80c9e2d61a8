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

#include <stdint.h>

/* The copy budget of one store: the bytes of data (holes are not copied:
 * trace_filecopy.h) of a store and its -wal that may be copied, 8 GiB.
 * A legitimate WAL is small (our writer checkpoints every 4 MB,
 * docs/trace-store.md; SQLite's default is 16 MB), so the copy is about
 * the store, and 8 GiB holds the store of any trace the load's row budget
 * reads (100 M rows at about 56 bytes a row in our store - a kernel and
 * its launch call take 112 -: 5.6 GB); what a logdir holds only to fill
 * the server's disk stops there, or sooner at the room trace_filecopy.h
 * leaves. The loads' copy budget (tfb_trace_set_copy_budget) defaults to
 * it. */
#define TFB_TRACE_WAL_COPY_MAX_BYTES ((uint64_t)8 << 30)

/* When path has a non-empty -wal and there is a cache directory: copies
 * the WAL, then the store (a checkpoint in between writes frames the WAL
 * copy also holds), as wal-XXXXXX and wal-XXXXXX-wal there, and sets
 * *copy to the copy's path (malloc'd). Only their data is written (holes
 * kept), at most max_bytes of it (0: TFB_TRACE_WAL_COPY_MAX_BYTES) and
 * at most the room trace_filecopy.h leaves on the cache's file system.
 * 0 with *copy NULL: no WAL data or no cache directory. Negative, *copy
 * NULL, nothing left behind: the WAL has data that could not be copied -
 * TFB_ETOOBIG past the budget or the room (the server's log says so,
 * tfb_trace_colcache_log), else the copy's error. Either way without a
 * copy the caller opens the original immutable (its WAL's data unread),
 * as without a cache. */
int tfb_trace_wal_copy(const char *path, uint64_t max_bytes, char **copy);

/* Removes a copy made by tfb_trace_wal_copy (and its -wal, -shm) and
 * frees the path. NULL-safe. */
void tfb_trace_wal_drop(char *copy);

#endif
