/*
 * query_trace_driver.c - runs SQL over the trace tables of a logdir, for
 * test_query_trace_tables.py: query_trace_driver LOGDIR SQL...
 * Loads LOGDIR (a directory or an s3:// URL) once as `tfboard report`
 * does, opens an SQLite connection of its own with the trace tables
 * registered (query_trace_tables.h), and for each SQL prints its rows,
 * one a line, values separated by '|' (NULL as "NULL"), then "--"; a
 * statement SQLite refuses prints "ERROR: <message>" instead of rows.
 */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>

#include "query/query_trace_tables.h"
#include "report/report_load.h"
#include "store/store.h"
#include "trace/trace.h"

static void print_value(sqlite3_stmt *st, int i)
{
    switch (sqlite3_column_type(st, i)) {
    case SQLITE_NULL:
        fputs("NULL", stdout);
        break;
    case SQLITE_INTEGER:
        printf("%lld", (long long)sqlite3_column_int64(st, i));
        break;
    case SQLITE_FLOAT:
        printf("%.17g", sqlite3_column_double(st, i));
        break;
    default:
        fputs((const char *)sqlite3_column_text(st, i), stdout);
        break;
    }
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: query_trace_driver LOGDIR SQL...\n");
        return 2;
    }
    /* built traces, never another test's cached ones */
    tfb_trace_colcache_configure("", NULL, NULL);
    tfb_store *store = NULL;
    if (tfb_report_open(argv[1], 1, &store) < 0)
        return 2;
    sqlite3 *db = NULL;
    if (sqlite3_open(":memory:", &db) != SQLITE_OK ||
        tfb_query_trace_tables_register(db, store) < 0) {
        fprintf(stderr, "query_trace_driver: cannot open SQLite\n");
        return 2;
    }
    for (int a = 2; a < argc; a++) {
        sqlite3_stmt *st = NULL;
        int rc = sqlite3_prepare_v2(db, argv[a], -1, &st, NULL);
        while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
            for (int i = 0; i < sqlite3_column_count(st); i++) {
                if (i)
                    putchar('|');
                print_value(st, i);
            }
            putchar('\n');
            rc = SQLITE_OK;
        }
        if (rc != SQLITE_DONE)
            printf("ERROR: %s\n", sqlite3_errmsg(db));
        sqlite3_finalize(st);
        puts("--");
    }
    sqlite3_close(db);
    tfb_store_destroy(store);
    return 0;
}
