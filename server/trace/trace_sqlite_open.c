/*
 * trace_sqlite_open.c - opening trace SQLite files read-only and hardened
 * (trace_sqlite_open.h): the URI, the connection's settings, the probes
 * the loaders use to refuse views and virtual tables and to read files
 * with older or trimmed schemas, and preparing their statements.
 */
#include "trace/trace_sqlite_open.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tfboard.h"

char *tfb_trace_sqlite_uri(const char *path, int immutable)
{
    size_t n = strlen(path);
    char *u = malloc(n * 3 + 64);
    if (!u)
        return NULL;
    char *o = u;
    o += sprintf(o, "file:");
    for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
        if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
            (*p >= '0' && *p <= '9') || strchr("/-_.~", *p))
            *o++ = (char)*p;
        else
            o += sprintf(o, "%%%02X", *p);
    }
    strcpy(o, immutable ? "?mode=ro&immutable=1" : "?mode=ro");
    return u;
}

int tfb_trace_sqlite_open(const char *path, int immutable, sqlite3 **db)
{
    *db = NULL;
    char *uri = tfb_trace_sqlite_uri(path, immutable);
    if (!uri)
        return TFB_ENOMEM;
    sqlite3 *d = NULL;
    int rc = sqlite3_open_v2(uri, &d,
                             SQLITE_OPEN_READONLY | SQLITE_OPEN_URI |
                                 SQLITE_OPEN_NOMUTEX,
                             NULL);
    free(uri);
    if (rc != SQLITE_OK) {
        sqlite3_close(d);
        return rc == SQLITE_CANTOPEN ? TFB_ENOENT
               : rc == SQLITE_NOMEM  ? TFB_ENOMEM
                                     : TFB_ECORRUPT;
    }
    sqlite3_db_config(d, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, (int *)NULL);
    sqlite3_db_config(d, SQLITE_DBCONFIG_DEFENSIVE, 1, (int *)NULL);
    sqlite3_limit(d, SQLITE_LIMIT_LENGTH, 1 << 20);
    *db = d;
    return 0;
}

sqlite3_stmt *tfb_trace_sqlite_prepare(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *st = NULL; /* left NULL on an error */
    sqlite3_prepare_v2(db, sql, -1, &st, NULL);
    return st;
}

int tfb_trace_sqlite_has_column(sqlite3 *db, const char *table,
                                const char *col)
{
    sqlite3_stmt *st = NULL;
    int found = 0;
    if (sqlite3_prepare_v2(db, "SELECT name FROM pragma_table_info(?1)", -1,
                           &st, NULL) == SQLITE_OK) {
        sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
        while (!found && sqlite3_step(st) == SQLITE_ROW) {
            const unsigned char *n = sqlite3_column_text(st, 0);
            found = n && strcmp((const char *)n, col) == 0;
        }
    }
    sqlite3_finalize(st);
    return found;
}

tfb_trace_sqlite_kind tfb_trace_sqlite_table_kind(sqlite3 *db,
                                                  const char *name)
{
    sqlite3_stmt *st = NULL;
    tfb_trace_sqlite_kind k = TFB_TRACE_SQLITE_NONE;
    if (sqlite3_prepare_v2(db,
                           "SELECT type, sql FROM sqlite_master WHERE name = ?"
                           " COLLATE NOCASE",
                           -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
        /* Rows of other types (an index of that name) are passed over. */
        while (k == TFB_TRACE_SQLITE_NONE && sqlite3_step(st) == SQLITE_ROW) {
            const char *ty = (const char *)sqlite3_column_text(st, 0);
            const char *sql = (const char *)sqlite3_column_text(st, 1);
            if (ty && !strcmp(ty, "view"))
                k = TFB_TRACE_SQLITE_VIEW;
            else if (ty && !strcmp(ty, "table"))
                k = sql && !sqlite3_strnicmp(sql, "CREATE VIRTUAL", 14)
                        ? TFB_TRACE_SQLITE_VIRTUAL
                        : TFB_TRACE_SQLITE_TABLE;
        }
    }
    sqlite3_finalize(st);
    return k;
}
