/*
 * writer_segments.h - an event writer whose run_dir is a bucket
 * ("s3://bucket/prefix/run", "gs://..."): the writer's file is a local
 * segment in a spool directory, closed and replaced every
 * segment_seconds or segment_bytes; closed segments are uploaded in order
 * by an upload thread of their own (objstore/), so the training thread
 * never waits on the network. See tfb_writer_opts in tfboard.h.
 *
 * Thread-safety: tfb_seg_* calls come from the writer's background
 * thread (rotate, admit) and from tfb_writer_open/close; the upload
 * thread is internal. tfb_seg_sticky and tfb_seg_dropped may be called
 * from any thread.
 */
#ifndef TFB_WRITER_SEGMENTS_H
#define TFB_WRITER_SEGMENTS_H

#include <stddef.h>
#include <stdint.h>

#include "tfboard.h"

typedef struct tfb_seg tfb_seg;

/* Makes the spool directory (*spool_dir, malloc'd: the writer's local
 * run directory) and starts the upload thread for url; opts are the
 * writer's (already defaulted). */
int tfb_seg_open(tfb_seg **out, const char *url, const tfb_writer_opts *opts,
                 char **spool_dir);
/* The writer created its first segment file at path (fd) and wrote
 * header_bytes (file_version and rank records) to it. */
void tfb_seg_first(tfb_seg *s, const char *path, size_t header_bytes);
/* May the writer append n more bytes? 0: yes; TFB_EDROPPED: the spool
 * is over its bound (the caller drops them, counting the records). */
int tfb_seg_admit(tfb_seg *s, size_t n);
/* After n bytes went into the segment (n = 0: a timer tick): closes the
 * segment when due, hands it to the upload thread and puts a new one in
 * *fd (with its file_version record). force: close it whatever its age. */
int tfb_seg_rotate(tfb_seg *s, int *fd, size_t n, int force);
/* Closes the last segment (fd), uploads it and every other file of the
 * spool, waits up to close_timeout_ms, stops the thread and frees s.
 * Returns the sticky error, or TFB_EIO when something stayed behind. */
int tfb_seg_close(tfb_seg *s, int fd);
int tfb_seg_sticky(tfb_seg *s); /* NULL-safe: 0 */
/* segment_seconds in ms: the writer flushes at least this often, so a
 * segment is closed on time even with a long flush interval. */
unsigned tfb_seg_period_ms(const tfb_seg *s);
/* Framed records in len bytes of sealed records (the ones dropped). */
uint64_t tfb_count_records(const uint8_t *buf, size_t len);

#endif
