/*
 * test_ranks_trace.c - distributed jobs through the GPU tracer, with the
 * stand-in libcupti (argv[1]; no GPU needed): the trace store of a rank's
 * writer names the rank in META (from the writer's options, not only
 * $RANK), and tfb_comm_begin/end spans land in TFB_HOST_SPANS as kind
 * "comm" next to the step spans.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <dlfcn.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "test_util.h"
#include "tfboard.h"

static const char *g_fake_path;

static char *trace_file(const char *dir)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    char *found = NULL;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strstr(e->d_name, ".trace.sqlite") &&
            !strstr(e->d_name, "-wal") && !strstr(e->d_name, "-shm")) {
            size_t n = strlen(dir) + strlen(e->d_name) + 2;
            free(found);
            found = malloc(n);
            snprintf(found, n, "%s/%s", dir, e->d_name);
        }
    closedir(d);
    return found;
}

static void q_text(sqlite3 *db, const char *sql, char *out, size_t cap)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        fail_msg("prepare failed: %s: %s", sql, sqlite3_errmsg(db));
    out[0] = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        const unsigned char *t = sqlite3_column_text(st, 0);
        snprintf(out + strlen(out), cap - strlen(out), "%s;",
                 t ? (const char *)t : "NULL");
    }
    sqlite3_finalize(st);
}

static void test_rank_in_trace(void **state)
{
    (void)state;
    unsetenv("RANK");
    char *logdir = tu_mkdtemp();
    tfb_writer_opts wo;
    tfb_writer_opts_init(&wo);
    wo.rank = 5;
    wo.world_size = 8;
    wo.local_rank = 1;
    wo.job = "tracejob";
    tfb_writer *w;
    assert_int_equal(tfb_writer_open_rank(&w, logdir, &wo), 0);
    tfb_gpu_opts o;
    tfb_gpu_opts_init(&o);
    o.cupti_path = g_fake_path;
    o.flush_interval_ms = 10;
    int rc = tfb_gpu_trace_start(w, &o);
    if (rc)
        fail_msg("start: %s: %s", tfb_strerror(rc), tfb_gpu_trace_error(w));
    for (int s = 0; s < 3; s++) {
        assert_int_equal(tfb_step_begin(w, s), 0);
        assert_int_equal(tfb_comm_begin(w, "allreduce"), 0);
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
        assert_int_equal(tfb_comm_end(w), 0);
        assert_int_equal(tfb_step_end(w), 0);
    }
    assert_int_equal(tfb_gpu_trace_stop(w), 0);
    char dir[1024];
    snprintf(dir, sizeof dir, "%s", tfb_writer_run_dir(w));
    assert_int_equal(tfb_writer_close(w), 0);
    char *path = trace_file(dir);
    assert_non_null(path);
    sqlite3 *db;
    assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL),
                     SQLITE_OK);
    char buf[512];
    q_text(db, "SELECT key || '=' || value FROM META WHERE key IN "
               "('rank','world_size','local_rank','job') ORDER BY key",
           buf, sizeof buf);
    assert_string_equal(buf, "job=tracejob;local_rank=1;rank=5;world_size=8;");
    q_text(db, "SELECT kind || ':' || COUNT(*) || ':' || "
               "SUM(\"end\" - start >= 1000000) FROM TFB_HOST_SPANS "
               "GROUP BY kind ORDER BY kind",
           buf, sizeof buf);
    assert_string_equal(buf, "comm:3:3;step:3:3;");
    sqlite3_close(db);
    free(path);
    tu_rmtree(logdir);
    free(logdir);
}

int main(int argc, char **argv)
{
    void *real = dlopen("libcupti.so.13", RTLD_NOW | RTLD_LOCAL);
    if (!real) {
        fprintf(stderr, "skip: no libcupti.so.13\n");
        return 77;
    }
    if (argc < 2) {
        fprintf(stderr, "usage: %s FAKE_CUPTI_SO\n", argv[0]);
        return 2;
    }
    g_fake_path = argv[1];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rank_in_trace),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
