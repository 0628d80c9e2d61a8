/*
 * trace_sqlite_open.h - opening a trace SQLite file (our trace store or an
 * nsys export) the one way every reader of the trace layer does: the GPU
 * trace loader (trace_load_sqlite.c, and its runtime-call reader thread),
 * the memory-event loader (trace_load_memory.c) and the memory view's
 * NVTX and budget readers (trace_memory.c).
 *
 * A trace file is data from elsewhere, and SQLite files can compute: a
 * table name may be a VIEW over an endless recursive query, a trigger or a
 * generated column may run code. So a file is opened read-only, immutable
 * (no lock, no -wal/-shm file created, nothing written) unless it is a WAL
 * copy of ours (trace_walcopy.h), with an untrusted schema (schema code
 * may call only harmless functions), defensive mode (no writes to the
 * schema even through a bug of ours) and a 1 MiB value limit.
 *
 * Thread-safety: any thread; a connection is used by one thread
 * (SQLITE_OPEN_NOMUTEX).
 */
#ifndef TFB_SERVER_TRACE_SQLITE_OPEN_H
#define TFB_SERVER_TRACE_SQLITE_OPEN_H

#include <sqlite3.h>

/* The file: URI that opens path read-only (mode=ro), and immutable when
 * `immutable` is non-zero; every byte but [A-Za-z0-9/-_.~] is
 * %-escaped. malloc'd; NULL on ENOMEM. */
char *tfb_trace_sqlite_uri(const char *path, int immutable);

/* Opens path as above into *db. 0; TFB_ENOMEM; TFB_ENOENT when it cannot
 * be opened (missing, unreadable); TFB_ECORRUPT when SQLite refuses it
 * otherwise. *db is NULL on error (nothing to close). */
int tfb_trace_sqlite_open(const char *path, int immutable, sqlite3 **db);

/* What the file's schema holds under name (an identifier of ours, matched
 * as SQLite resolves names: ASCII case ignored): a plain table, a view, a
 * virtual table, or nothing (also when the schema cannot be read). The
 * loaders read plain tables only: the others can compute rows without
 * end. */
typedef enum {
    TFB_TRACE_SQLITE_NONE = 0,
    TFB_TRACE_SQLITE_TABLE,
    TFB_TRACE_SQLITE_VIEW,
    TFB_TRACE_SQLITE_VIRTUAL
} tfb_trace_sqlite_kind;

tfb_trace_sqlite_kind tfb_trace_sqlite_table_kind(sqlite3 *db,
                                                  const char *name);

/* sql prepared on db, or NULL when the file's schema does not allow it
 * (the readers read that as no rows). */
sqlite3_stmt *tfb_trace_sqlite_prepare(sqlite3 *db, const char *sql);

/* 1 when table (an identifier of ours, not from the file) has column
 * col, else 0. */
int tfb_trace_sqlite_has_column(sqlite3 *db, const char *table,
                                const char *col);

#endif
