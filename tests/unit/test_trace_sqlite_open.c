/*
 * test_trace_sqlite_open.c - the one way the trace layer opens a trace
 * SQLite file (server/trace/trace_sqlite_open.c): a path with characters
 * that mean something in a URI opens that very file; the connection is
 * read-only and immutable (nothing written, no -wal/-shm made next to the
 * file, even for a WAL-mode store); a missing file is TFB_ENOENT and a
 * file that is not SQLite TFB_ECORRUPT at its first read; the column
 * probe answers for the table named.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test_util.h"
#include "tfboard.h"
#include "trace/trace_sqlite_open.h"

static void make_db(const char *path, const char *sql)
{
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_close(db), SQLITE_OK);
}

static void test_odd_path_read_only(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp();
    char path[1024], side[1100];
    /* '?', '#', '%' and a space would end or change a file: URI. */
    snprintf(path, sizeof path, "%s/a?b#c%%41 d.sqlite", dir);
    make_db(path, "PRAGMA journal_mode=WAL;"
                  "CREATE TABLE T(x INTEGER, y TEXT); INSERT INTO T "
                  "VALUES (42, 'v');");
    sqlite3 *db = NULL;
    assert_int_equal(tfb_trace_sqlite_open(path, 1, &db), 0);
    assert_non_null(db);
    sqlite3_stmt *st = NULL;
    assert_int_equal(sqlite3_prepare_v2(db, "SELECT x FROM T", -1, &st, NULL),
                     SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_int_equal(sqlite3_column_int64(st, 0), 42);
    sqlite3_finalize(st);
    assert_int_equal(tfb_trace_sqlite_has_column(db, "T", "y"), 1);
    assert_int_equal(tfb_trace_sqlite_has_column(db, "T", "z"), 0);
    assert_int_equal(tfb_trace_sqlite_has_column(db, "U", "x"), 0);
    /* Read-only: a write is refused. */
    assert_int_not_equal(
        sqlite3_exec(db, "INSERT INTO T VALUES (1, 'w')", NULL, NULL, NULL),
        SQLITE_OK);
    sqlite3_close(db);
    snprintf(side, sizeof side, "%s-wal", path);
    assert_int_not_equal(access(side, F_OK), 0);
    snprintf(side, sizeof side, "%s-shm", path);
    assert_int_not_equal(access(side, F_OK), 0);
    /* The URI escapes what it must and nothing it need not. */
    char *u = tfb_trace_sqlite_uri("/x/a?b#c%d e.sqlite", 0);
    assert_string_equal(u, "file:/x/a%3Fb%23c%25d%20e.sqlite?mode=ro");
    free(u);
    tu_rmtree(dir);
    free(dir);
}

static void test_missing_and_not_sqlite(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp();
    char path[1024];
    snprintf(path, sizeof path, "%s/none.sqlite", dir);
    sqlite3 *db = (sqlite3 *)1;
    assert_int_equal(tfb_trace_sqlite_open(path, 1, &db), TFB_ENOENT);
    assert_null(db);
    assert_int_not_equal(access(path, F_OK), 0); /* not created */
    /* Text in a .sqlite: SQLite finds out at the first read. */
    snprintf(path, sizeof path, "%s/text.sqlite", dir);
    const char junk[] = "this is not a database, just some text, long "
                        "enough to fill a header and then some more.";
    assert_int_equal(tu_write_file(path, junk, sizeof junk), 0);
    if (tfb_trace_sqlite_open(path, 1, &db) == 0) {
        assert_int_equal(tfb_trace_sqlite_has_column(db, "T", "x"), 0);
        sqlite3_close(db);
    }
    tu_rmtree(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_odd_path_read_only),
        cmocka_unit_test(test_missing_and_not_sqlite),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
