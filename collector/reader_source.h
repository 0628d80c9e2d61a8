/*
 * reader_source.h - where a tfb_reader gets its bytes: a small table of
 * functions over one stored object (a local file, later an object in a
 * bucket), so the record framing, corruption handling and replacement
 * rules of reader.c work over any storage. Internal to tfboard (the
 * server's storage layer, server/store/storage.h, supplies sources).
 *
 * An object has an identity (tfb_object_id: device and inode of a local
 * file, a hash of an ETag in a bucket) that changes when it is replaced.
 * Bytes are read by offset into the caller's buffer (pread-like), so the
 * reader never keeps a file position and never moves bytes it holds: a
 * record cut by the end of its buffer is read again from its offset.
 *
 * Thread-safety: a source belongs to its one reader.
 */
#ifndef TFB_READER_SOURCE_H
#define TFB_READER_SOURCE_H

#include <stddef.h>
#include <stdint.h>

#include "tfboard.h"

typedef struct tfb_object_id {
    uint64_t a, b;
} tfb_object_id;

typedef struct tfb_reader_source {
    void *ctx;
    /* Opens (or opens again after release) the object: its identity and
     * size now. Never blocks; TFB_ENOTFILE for what is not a regular file
     * (FIFO, device); TFB_ENOENT when it is gone. */
    int (*open)(void *ctx, tfb_object_id *id, uint64_t *size);
    /* Identity and size of what the name designates now, without opening
     * it (to tell a replacement); TFB_ENOENT when gone. */
    int (*stat)(void *ctx, tfb_object_id *id, uint64_t *size);
    /* Reads up to len bytes at off of the opened object into buf: bytes
     * read, 0 at the end, or a negative TFB_E* code. */
    long (*read_at)(void *ctx, uint64_t off, void *buf, size_t len);
    /* Drops what an open object holds (a descriptor); open() comes
     * before the next read_at. */
    void (*release)(void *ctx);
    /* Frees ctx (after release). */
    void (*destroy)(void *ctx);
} tfb_reader_source;

/* A reader over src (taken: destroyed by tfb_reader_close, and on error
 * here). Nothing is read until tfb_reader_next; `path` names the object
 * in messages only. */
int tfb_reader_open_source(tfb_reader **out, const tfb_reader_source *src);

/* One buffer for many readers read in turn (the loader's workers read
 * thousands of small files; a buffer each, allocated and freed per pass,
 * cost more in page faults than the reading): lend_buffer gives a reader
 * that holds none the caller's malloc'd buffer of cap bytes (the reader
 * may realloc it) and returns 1 (0: the reader has one; the caller keeps
 * its buffer); reclaim_buffer takes it (or the reader's own) back,
 * returning 1 (0: the reader holds none). What it held of a partial
 * record is read again, by offset, when the record is complete: a reader
 * between passes holds no buffer, even at a half-written record (10,000
 * live runs would otherwise hold 1 MiB each). */
int tfb_reader_lend_buffer(tfb_reader *r, uint8_t *buf, size_t cap);
int tfb_reader_reclaim_buffer(tfb_reader *r, uint8_t **buf, size_t *cap);

/* A reader closed between passes, opened again where it stood: the
 * server's loader keeps no reader for a file read to its end (a sweep's
 * 100,000 files would hold 100,000 of them), only the last stats, and a
 * new reader resumes with them. Call right after tfb_reader_open_source,
 * before any tfb_reader_next: reading goes on at prev->offset (the start of
 * the next record, or of a partial one) and the stats go on from prev's
 * (records, corruptions; the buffer it held is not counted). TFB_EINVAL
 * when prev is NULL, has no size, or lies past what the object holds: a
 * file truncated below that offset must be read again from its start. */
int tfb_reader_resume(tfb_reader *r, const tfb_reader_stats *prev);


#endif
