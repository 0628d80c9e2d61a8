/*
 * trace_filecopy.h - the bounded file copies the trace layer makes in its
 * cache directory (trace_cachedir.h): a trace store and its -wal
 * (trace_walcopy.h), and the private copy a columnar cache file is mapped
 * from (trace_colcache.h).
 *
 * A copy costs what the source holds, never more: only its data is
 * written (SEEK_DATA / SEEK_HOLE find it; holes stay holes, so a 1 GiB
 * sparse file with 4 KiB of data costs 4 KiB), through copy_file_range
 * (a clone on file systems that can). It stops at a byte budget of its
 * caller, and at 1/TFB_TRACE_COPY_FREE_DIVISOR of the free space of the
 * file system it writes to, so that no file a logdir holds can make the
 * server fill its disk.
 *
 * Thread-safety: any thread.
 */
#ifndef TFB_SERVER_TRACE_FILECOPY_H
#define TFB_SERVER_TRACE_FILECOPY_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

/* A copy may take at most 1/2 of the space free on the destination's
 * file system when it starts. The cache shares that file system (by
 * default the user's home) with whatever else the user writes: a copy
 * never takes the last half of what is free, yet one as big as half of
 * it (an ordinary store on a disk with room) still goes through. */
#define TFB_TRACE_COPY_FREE_DIVISOR 2

/* The bytes a copy of the file of st writes: its allocated bytes
 * (st_blocks * 512), at most its size. */
uint64_t tfb_trace_copy_cost(const struct stat *st);

/* What a copy into the file system of fd may write now: its free space
 * (for an unprivileged user) / TFB_TRACE_COPY_FREE_DIVISOR; UINT64_MAX
 * when the file system does not say. */
uint64_t tfb_trace_copy_room(int fd);

/* Copies the file in (offset 0 to its size now) into out, an empty file:
 * the data ranges only, then out's size set to in's (holes kept). *used
 * counts the bytes of data written (it may come in non-zero: one budget
 * over several copies); the copy fails before writing past max (the
 * budget; UINT64_MAX: none) or past tfb_trace_copy_room(out). 0;
 * TFB_ETOOBIG (over the budget or the room: nothing is written when the
 * source's allocated bytes already are, else out holds a part); the
 * code of the errno of a failed read or write (TFB_ENOSPC, TFB_EIO...).
 * On an error the caller removes out. A source that shrinks during the
 * copy gives a shorter copy (its reader checks what it reads). */
int tfb_trace_copy_fd(int in, int out, uint64_t max, uint64_t *used);

/* Writes all n bytes of buf at off (pwrite may write fewer; EINTR is
 * retried). 0, or the code of the failed write's errno (a write of none
 * counts as TFB_ENOSPC). */
int tfb_trace_pwrite_full(int fd, const void *buf, size_t n, uint64_t off);

#endif
