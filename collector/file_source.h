/*
 * file_source.h - local files for readers (file_source.c): the one place
 * that opens an event file, so every local read keeps the same rules
 * (regular files only, opened without blocking, read by offset).
 * Internal to tfboard. Thread-safe (no shared state).
 */
#ifndef TFB_FILE_SOURCE_H
#define TFB_FILE_SOURCE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "collector/reader_source.h"

/* Opens path read-only with O_NONBLOCK (a FIFO would block a plain open
 * until a writer comes) and keeps it only when it is a regular file:
 * 0 with *fd and *st set, TFB_ENOTFILE, or the errno's code. */
int tfb_file_open_regular(const char *path, int *fd, struct stat *st);
/* pread, retried on EINTR: bytes read, 0 at the end, or a TFB_E* code. */
long tfb_file_pread(int fd, uint64_t off, void *buf, size_t len);

/* A local file as a reader source (path copied). */
int tfb_file_source_make(const char *path, tfb_reader_source *out);

#endif
