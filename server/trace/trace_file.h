/*
 * trace_file.h - a run's trace files as files: which reader each goes to
 * (by its name), reading one whole that may be gzip'ed (Kineto's
 * *.pt.trace.json.gz), with a cap on what it inflates to (a 4 MB .gz can
 * hold gigabytes of zeros, and reading it whole would take that much
 * memory), and the signature of a set of them.
 *
 * Thread-safety: any thread.
 */
#ifndef TFB_SERVER_TRACE_FILE_H
#define TFB_SERVER_TRACE_FILE_H

#include <stddef.h>

/* Which reader a trace file goes to, by its name: *.sqlite (our trace
 * stores, nsys exports) or *.pt.trace.json[.gz] (Kineto); any other file
 * is not read. */
typedef enum {
    TFB_TRACE_FILE_OTHER = 0,
    TFB_TRACE_FILE_SQLITE,
    TFB_TRACE_FILE_KINETO
} tfb_trace_file_kind;

tfb_trace_file_kind tfb_trace_file_kind_of(const char *path);
/* 1 when s ends with suf. */
int tfb_trace_has_suffix(const char *s, const char *suf);
/* What follows path's last '/': the loaders' messages name a file by it. */
const char *tfb_trace_file_name(const char *path);

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
 * A local copy of a bucket's object (storage.h's origins) counts by the
 * version its listing named, fetched or not (its file changes only when
 * a load fetches it). malloc'd; NULL on ENOMEM. */
char *tfb_trace_files_signature(char *const *files, size_t n);

/* Makes every file that is a local copy of a bucket's object hold its
 * bytes (tfb_storage_copy_ready: fetched now if not yet), before a
 * reader opens it; local files cost nothing. 0, or the first failure,
 * with a message naming the file and the request in err. */
int tfb_trace_files_fetch(char *const *files, size_t n, char *err,
                          size_t errcap);

#endif
