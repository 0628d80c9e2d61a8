/*
 * trace_file.h - reading a whole trace file that may be gzip'ed (Kineto's
 * *.pt.trace.json.gz), with a cap on what it inflates to: a 4 MB .gz can
 * hold gigabytes of zeros, and reading it whole would take that much
 * memory.
 *
 * Thread-safety: any thread.
 */
#ifndef TFB_SERVER_TRACE_FILE_H
#define TFB_SERVER_TRACE_FILE_H

#include <stddef.h>

/* Largest text a trace file may inflate to (1 GiB); the Kineto traces of
 * long runs stay far below it, a decompression bomb does not. */
#define TFB_TRACE_MAX_TEXT_BYTES ((size_t)1 << 30)
/* ...nor past 64 MiB to more than this many times its size on disk. */
#define TFB_TRACE_MAX_RATIO 200

/* Reads path whole (plain or gzip), NUL-terminated, into *out (malloc'd;
 * *len bytes without the NUL). At most max bytes of text, and past
 * 64 MiB at most TFB_TRACE_MAX_RATIO times the file's size: past either,
 * TFB_ETOOBIG and nothing is returned. TFB_ENOENT / TFB_EIO when it
 * cannot be opened, TFB_ECORRUPT for a damaged .gz, TFB_ENOMEM. */
int tfb_trace_read_text(const char *path, size_t max, char **out, size_t *len);

/* A text that changes when any of the files (or, for *.sqlite, its WAL)
 * changes size or mtime: the key under which a loaded trace is cached.
 * malloc'd; NULL on ENOMEM. */
char *tfb_trace_files_signature(char *const *files, size_t n);

#endif
