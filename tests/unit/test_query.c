/*
 * test_query.c - the query layer (server/query/query.h, issue 30): each
 * run-side table against answers worked out by hand on a logdir written
 * here (NaN and Inf included), xBestIndex's plan and the rows it reads,
 * runs_wide and the run filter (valid, invalid and hostile expressions),
 * the authorizer (each refused statement), and the time, row and memory
 * limits.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "query/query.h"
#include "query/query_mem.h"
#include "analysis/run_status.h"
#include "store/loader.h"
#include "store/store.h"
#include "tfboard.h"
#include "test_util.h"

static char *g_dir;
static tfb_store *g_store;

static tfb_writer *open_run(const char *name)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", g_dir, name);
    tfb_writer_opts o;
    tfb_writer_opts_init(&o);
    tfb_writer *w;
    assert_int_equal(tfb_writer_open(&w, path, &o), 0);
    return w;
}

static void hp_num(tfb_writer *w, double lr, const char *opt)
{
    tfb_hparam hp[] = {
        {.size = sizeof(tfb_hparam), .name = "lr", .type = TFB_HPARAM_NUMBER,
         .number = lr},
        {.size = sizeof(tfb_hparam), .name = "opt", .type = TFB_HPARAM_STRING,
         .str = opt},
    };
    assert_int_equal(tfb_hparams(w, hp, 2), 0);
}

/* run a: lr 0.1 adam; loss 4,3,2,1,0.5 at steps 0..4; acc with NaN at 2
 *        and +Inf at 3; a histogram of {1,2,3} at step 0; a text at 1.
 * run b: lr 0.001 sgd; loss 8,7,6 at steps 0,10,20.
 * run c: no hparams; loss 0.25 at step 5. */
static int setup(void **state)
{
    (void)state;
    g_dir = tu_mkdtemp();
    tfb_writer *w = open_run("a");
    hp_num(w, 0.1, "adam");
    const double loss_a[] = {4, 3, 2, 1, 0.5};
    for (int i = 0; i < 5; i++)
        assert_int_equal(tfb_scalar(w, "loss", loss_a[i], i), 0);
    const double acc[] = {0.5, 0.75, NAN, INFINITY, 0.875};
    for (int i = 0; i < 5; i++)
        assert_int_equal(tfb_scalar(w, "acc", acc[i], i), 0);
    const float hv[] = {1, 2, 3};
    assert_int_equal(tfb_histogram(w, "w", hv, 3, 0), 0);
    assert_int_equal(tfb_text(w, "note", "hello", 1), 0);
    assert_int_equal(tfb_writer_close(w), 0);
    w = open_run("b");
    hp_num(w, 0.001, "sgd");
    for (int i = 0; i < 3; i++)
        assert_int_equal(tfb_scalar(w, "loss", 8 - i, i * 10), 0);
    assert_int_equal(tfb_writer_close(w), 0);
    w = open_run("c");
    assert_int_equal(tfb_scalar(w, "loss", 0.25, 5), 0);
    assert_int_equal(tfb_writer_close(w), 0);

    assert_int_equal(tfb_store_create(&g_store, g_dir), 0);
    tfb_loader *l;
    tfb_loader_opts lo = {0, 1, NULL};
    assert_int_equal(tfb_loader_create(&l, g_store, &lo), 0);
    assert_int_equal(tfb_loader_pass(l), 0);
    tfb_loader_stop(l);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    tfb_store_destroy(g_store);
    tu_rmtree(g_dir);
    free(g_dir);
    return 0;
}

/* The answer as text: rows joined by '\n', values by '|', NULL as
 * "NULL", reals with %.17g. */
typedef struct text_out {
    char buf[8192];
    size_t n;
    int ncol;
} text_out;

static int out_cols(void *ctx, int ncol, const char *const *names)
{
    (void)names;
    ((text_out *)ctx)->ncol = ncol;
    return 0;
}

static int out_row(void *ctx, sqlite3_stmt *st)
{
    text_out *o = ctx;
    for (int i = 0; i < o->ncol; i++) {
        char v[128];
        switch (sqlite3_column_type(st, i)) {
        case SQLITE_NULL: snprintf(v, sizeof v, "NULL"); break;
        case SQLITE_INTEGER:
            snprintf(v, sizeof v, "%lld", (long long)sqlite3_column_int64(st, i));
            break;
        case SQLITE_FLOAT:
            snprintf(v, sizeof v, "%.17g", sqlite3_column_double(st, i));
            break;
        default:
            snprintf(v, sizeof v, "%s", (const char *)sqlite3_column_text(st, i));
        }
        o->n += (size_t)snprintf(o->buf + o->n, sizeof o->buf - o->n, "%s%s",
                                 i ? "|" : (o->n ? "\n" : ""), v);
    }
    return 0;
}

static tfb_query *open_q(void)
{
    tfb_query *q;
    assert_int_equal(tfb_query_open(g_store, &q), 0);
    return q;
}

/* Runs sql; asserts success; returns the text (static). */
static const char *ask(tfb_query *q, const char *sql)
{
    static text_out o;
    memset(&o, 0, sizeof o);
    char err[256];
    int off;
    int rc = tfb_query_exec(q, sql, NULL, out_cols, out_row, &o, NULL, err,
                            sizeof err, &off);
    if (rc != 0)
        fail_msg("%s: %s (%d at %d)", sql, err, rc, off);
    return o.buf;
}

static int ask_err(tfb_query *q, const char *sql, const tfb_query_limits *lim,
                   char *err, size_t cap, int *off)
{
    text_out o;
    memset(&o, 0, sizeof o);
    return tfb_query_exec(q, sql, lim, out_cols, out_row, &o, NULL, err, cap,
                          off);
}

static void tables(void **state)
{
    (void)state;
    tfb_query *q = open_q();
    assert_string_equal(ask(q, "SELECT run, steps FROM runs ORDER BY run"),
                        "a|4\nb|20\nc|5");
    assert_string_equal(
        ask(q, "SELECT run, name, value, type FROM hparams ORDER BY run, name"),
        "a|lr|0.10000000000000001|number\na|opt|adam|string\n"
        "b|lr|0.001|number\nb|opt|sgd|string");
    /* NaN reads as NULL (SQLite has no NaN), +Inf as Inf */
    assert_string_equal(
        ask(q, "SELECT step, value FROM scalars WHERE run = 'a' AND tag = 'acc'"
               " ORDER BY step"),
        "0|0.5\n1|0.75\n2|NULL\n3|inf\n4|0.875");
    assert_string_equal(ask(q, "SELECT count(*), sum(value) FROM scalars"
                               " WHERE tag = 'loss'"),
                        "9|31.75");
    assert_string_equal(ask(q, "SELECT run, min(value) FROM scalars WHERE"
                               " tag = 'loss' GROUP BY run ORDER BY run"),
                        "a|0.5\nb|6\nc|0.25");
    /* min/max over finite values; nonfinite counts NaN and Inf */
    assert_string_equal(
        ask(q, "SELECT tag, count, first, last, min, max, last_step, nonfinite"
               " FROM scalar_stats WHERE run = 'a' ORDER BY tag"),
        "acc|5|0.5|0.875|0.5|0.875|4|2\nloss|5|4|0.5|0.5|4|4|0");
    assert_string_equal(
        ask(q, "SELECT run, tag, step, num, sum, n_buckets > 0,"
               " json_array_length(buckets) = n_buckets FROM histograms"),
        "a|w|0|3|6|1|1");
    assert_string_equal(ask(q, "SELECT sum(count) FROM histogram_buckets"
                               " WHERE run = 'a' AND tag = 'w'"),
                        "3");
    assert_string_equal(ask(q, "SELECT run, tag, step, bytes, text FROM texts"),
                        "a|note|1|5|hello");
    assert_string_equal(ask(q, "SELECT count(*) FROM images"), "0");
    assert_string_equal(ask(q, "SELECT count(*) FROM steps"), "0");
    /* step ranges */
    assert_string_equal(ask(q, "SELECT group_concat(step) FROM scalars WHERE"
                               " run = 'b' AND tag = 'loss' AND step > 0 AND"
                               " step <= 20"),
                        "10,20");
    assert_string_equal(ask(q, "SELECT value FROM scalars WHERE run = 'b' AND"
                               " step = 10"),
                        "7");
    tfb_query_close(q);
}

/* xBestIndex: run and tag equality read one series; the plan says so. */
static void plan_and_rows(void **state)
{
    (void)state;
    tfb_query *q = open_q();
    const char *plan = ask(q, "EXPLAIN QUERY PLAN SELECT value FROM scalars"
                              " WHERE run = 'a' AND tag = 'loss'");
    /* idxNum 3 = run and tag taken by the table */
    assert_non_null(strstr(plan, "VIRTUAL TABLE INDEX 3:"));
    ask(q, "SELECT value FROM scalars WHERE run = 'a' AND tag = 'loss'");
    assert_int_equal(tfb_query_rows_touched(q), 5);
    ask(q, "SELECT value FROM scalars WHERE tag = 'loss'");
    assert_int_equal(tfb_query_rows_touched(q), 9);
    ask(q, "SELECT value FROM scalars");
    assert_int_equal(tfb_query_rows_touched(q), 14);
    plan = ask(q, "EXPLAIN QUERY PLAN SELECT value FROM scalars WHERE step"
                  " BETWEEN 1 AND 2");
    assert_non_null(strstr(plan, "VIRTUAL TABLE INDEX 12:"));
    plan = ask(q, "EXPLAIN QUERY PLAN SELECT * FROM runs_wide WHERE run = 'b'");
    assert_non_null(strstr(plan, "VIRTUAL TABLE INDEX 1:"));
    ask(q, "SELECT run FROM runs_wide WHERE run = 'b'");
    assert_int_equal(tfb_query_rows_touched(q), 1);
    tfb_query_close(q);
}

static void wide_and_filter(void **state)
{
    (void)state;
    tfb_query *q = open_q();
    assert_string_equal(
        ask(q, "SELECT run, lr, opt, \"loss.last\", \"loss.min\","
               " \"acc.last\", \"acc.min\" FROM runs_wide ORDER BY run"),
        "a|0.10000000000000001|adam|0.5|0.5|0.875|0.5\n"
        "b|0.001|sgd|6|6|NULL|NULL\nc|NULL|NULL|0.25|0.25|NULL|NULL");
    char **names;
    size_t n;
    char err[256];
    int off;
    assert_int_equal(tfb_query_filter_runs(q, "lr > 0.01 OR \"loss.last\" < 0.3",
                                           NULL, &names, &n, err, sizeof err,
                                           &off), 0);
    assert_int_equal(n, 2);
    int a = 0, c = 0;
    for (size_t i = 0; i < n; i++) {
        a += strcmp(names[i], "a") == 0;
        c += strcmp(names[i], "c") == 0;
    }
    assert_true(a == 1 && c == 1);
    tfb_query_names_free(names, n);
    assert_int_equal(tfb_query_filter_runs(q, "opt = 'sgd' -- a comment", NULL,
                                           &names, &n, err, sizeof err, &off), 0);
    assert_int_equal(n, 1);
    assert_string_equal(names[0], "b");
    tfb_query_names_free(names, n);
    /* invalid: SQLite's message and where, relative to the expression */
    assert_int_equal(tfb_query_filter_runs(q, "lr > > 1", NULL, &names, &n, err,
                                           sizeof err, &off), TFB_EINVAL);
    assert_non_null(strstr(err, "syntax error"));
    assert_int_equal(off, 5);
    assert_int_equal(tfb_query_filter_runs(q, "nope < 1", NULL, &names, &n, err,
                                           sizeof err, &off), TFB_EINVAL);
    assert_non_null(strstr(err, "no such column: nope"));
    assert_int_equal(off, 0);
    /* hostile: cannot close the WHERE and go on */
    const char *hostile[] = {
        "1) UNION SELECT name FROM hparams WHERE (1",
        "1; DROP TABLE runs",
        "1 /* unterminated",
        "'unterminated",
        "(1",
        "",
        "   ",
    };
    for (size_t i = 0; i < sizeof hostile / sizeof hostile[0]; i++) {
        names = NULL;
        assert_int_equal(tfb_query_filter_runs(q, hostile[i], NULL, &names, &n,
                                               err, sizeof err, &off),
                         TFB_EINVAL);
        assert_null(names);
        assert_true(off >= 0);
    }
    tfb_query_close(q);
}

static void authorizer(void **state)
{
    (void)state;
    tfb_query *q = open_q();
    const char *refused[] = {
        "ATTACH DATABASE '/tmp/tfb_query_attack.db' AS x",
        "DETACH DATABASE temp",
        "PRAGMA writable_schema = 1",
        "PRAGMA temp_store = FILE",
        "PRAGMA journal_mode",
        "SELECT load_extension('/tmp/x.so')",
        "SELECT fts3_tokenizer('simple')",
        "CREATE TABLE t(x)",
        "CREATE TEMP TABLE t(x)",
        "CREATE VIEW v AS SELECT 1",
        "CREATE VIRTUAL TABLE temp.x USING tfb_runs_wide",
        "DROP TABLE temp.runs_wide",
        "INSERT INTO scalars VALUES ('a', 'x', 1, 1, 1)",
        "DELETE FROM scalars",
        "UPDATE runs SET run = 'x'",
        "UPDATE sqlite_master SET sql = 'x'",
        "BEGIN",
        "SAVEPOINT s",
        "VACUUM INTO '/tmp/tfb_query_attack.db'",
        "ANALYZE",
        "REINDEX",
        "ALTER TABLE runs RENAME TO r2",
    };
    char err[256];
    int off;
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        int rc = ask_err(q, refused[i], NULL, err, sizeof err, &off);
        if (rc != TFB_EACCES)
            fail_msg("%s: %d %s", refused[i], rc, err);
        assert_non_null(strstr(err, "not allowed"));
    }
    /* what stays allowed */
    assert_string_equal(ask(q, "SELECT count(*) FROM pragma_table_info('scalars')"),
                        "5");
    assert_string_equal(ask(q, "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL"
                               " SELECT x + 1 FROM c WHERE x < 3)"
                               " SELECT sum(x) FROM c"),
                        "6");
    /* one statement only */
    assert_int_equal(ask_err(q, "SELECT 1; SELECT 2", NULL, err, sizeof err, &off),
                     TFB_EINVAL);
    assert_int_equal(off, 10);
    /* a syntax error gives SQLite's message and position */
    assert_int_equal(ask_err(q, "SELECT run FROM runs WHERE", NULL, err,
                             sizeof err, &off), TFB_EINVAL);
    assert_non_null(strstr(err, "incomplete input"));
    assert_int_equal(ask_err(q, "SELECT nope FROM runs", NULL, err, sizeof err,
                             &off), TFB_EINVAL);
    assert_int_equal(off, 7);
    FILE *f = fopen("/tmp/tfb_query_attack.db", "r");
    assert_null(f);
    tfb_query_close(q);
}

static void limits(void **state)
{
    (void)state;
    tfb_query *q = open_q();
    char err[256];
    int off, trunc;
    /* time: an endless recursive CTE is interrupted */
    tfb_query_limits lt = {.timeout_ms = 200};
    assert_int_equal(ask_err(q, "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL"
                                " SELECT x + 1 FROM c) SELECT count(*) FROM c",
                             &lt, err, sizeof err, &off), TFB_ETIMEDOUT);
    assert_non_null(strstr(err, "time limit"));
    /* rows */
    tfb_query_limits lr = {.max_rows = 3};
    text_out o;
    memset(&o, 0, sizeof o);
    assert_int_equal(tfb_query_exec(q, "SELECT * FROM scalars", &lr, out_cols,
                                    out_row, &o, &trunc, err, sizeof err, &off),
                     0);
    assert_int_equal(trunc, 1);
    assert_int_equal(tfb_query_exec(q, "SELECT * FROM runs", &lr, out_cols,
                                    out_row, &o, &trunc, err, sizeof err, &off),
                     0);
    assert_int_equal(trunc, 0);
    /* memory: DISTINCT over 2 million strings of 100 bytes holds far
     * more than 8 MiB */
    assert_true(tfb_query_mem_installed());
    tfb_query_limits lm = {.max_mem = 8 << 20};
    assert_int_equal(ask_err(q, "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL"
                                " SELECT x + 1 FROM c LIMIT 2000000)"
                                " SELECT count(*) FROM (SELECT DISTINCT"
                                " printf('%100d', x) FROM c)",
                             &lm, err, sizeof err, &off), TFB_ETOOBIG);
    assert_non_null(strstr(err, "memory limit"));
    /* a string past TFB_QUERY_MAX_LENGTH is refused before allocation */
    assert_int_equal(ask_err(q, "SELECT length(randomblob(1e9))", NULL, err,
                             sizeof err, &off), TFB_ETOOBIG);
    /* and the connection still answers */
    assert_string_equal(ask(q, "SELECT count(*) FROM runs"), "3");
    tfb_query_close(q);
}

/* spikes and alerts, on a logdir of their own (the loss watch needs the
 * loss tags configured before its store is made):
 *  s:  train/loss 10 - 0.01 i at steps 0..39, 20 at step 40, 9.6 at 41
 *      (a spike at 40 over the level 9.805 = the median of the 40 values
 *      before it, recovered at 41: 9.6 <= level + 0.2 (peak - level));
 *  o:  the same without step 41 (the spike is still open);
 *  n:  loss 1, 0.5; acc 0.5, NaN at steps 0, 1 (non-finite at acc 1);
 *  bl: loss 1, 0.01, 20 (20 > 10 x 1 and > 100 x 0.01: blew up at 2).
 * z at the spike: the changes before it are all -0.01 (MAD ~0 in float),
 * so scale = 1e-3 x level and z = (20 - 9.61 + 0.01) / 0.009805 = 1061. */
static void spikes_and_alerts(void **state)
{
    (void)state;
    assert_int_equal(tfb_run_status_configure(TFB_STALL_AFTER_DEFAULT, NULL),
                     0);
    char *saved = g_dir;
    g_dir = tu_mkdtemp();
    for (int k = 0; k < 2; k++) {
        tfb_writer *w = open_run(k ? "o" : "s");
        for (int i = 0; i < 40; i++)
            assert_int_equal(tfb_scalar(w, "train/loss", 10 - 0.01 * i, i), 0);
        assert_int_equal(tfb_scalar(w, "train/loss", 20, 40), 0);
        if (!k)
            assert_int_equal(tfb_scalar(w, "train/loss", 9.6, 41), 0);
        assert_int_equal(tfb_writer_close(w), 0);
    }
    tfb_writer *w = open_run("n");
    assert_int_equal(tfb_scalar(w, "loss", 1, 0), 0);
    assert_int_equal(tfb_scalar(w, "loss", 0.5, 1), 0);
    assert_int_equal(tfb_scalar(w, "acc", 0.5, 0), 0);
    assert_int_equal(tfb_scalar(w, "acc", NAN, 1), 0);
    assert_int_equal(tfb_writer_close(w), 0);
    w = open_run("bl");
    const double bl[] = {1, 0.01, 20};
    for (int i = 0; i < 3; i++)
        assert_int_equal(tfb_scalar(w, "loss", bl[i], i), 0);
    assert_int_equal(tfb_writer_close(w), 0);

    /* S: a run whose name equals s's but for case, written last (runs
     * come in first wall time order: s and S are not next to each other) */
    w = open_run("S");
    assert_int_equal(tfb_scalar(w, "acc", 1, 0), 0);
    assert_int_equal(tfb_writer_close(w), 0);

    tfb_store *st;
    assert_int_equal(tfb_store_create(&st, g_dir), 0);
    tfb_loader *l;
    tfb_loader_opts lo = {0, 1, NULL};
    assert_int_equal(tfb_loader_create(&l, st, &lo), 0);
    assert_int_equal(tfb_loader_pass(l), 0);
    tfb_query *q;
    assert_int_equal(tfb_query_open(st, &q), 0);

    assert_string_equal(
        ask(q, "SELECT run, tag, step, value, round(level, 3), peak_step,"
               " peak, state, end_step, z > 6 FROM spikes ORDER BY run"),
        "o|train/loss|40|20|9.8049999999999997|40|20|open|40|1\n"
        "s|train/loss|40|20|9.8049999999999997|40|20|recovered|41|1");
    /* run and tag taken by the table: one series read */
    const char *plan = ask(q, "EXPLAIN QUERY PLAN SELECT * FROM spikes WHERE"
                              " run = 's' AND tag = 'train/loss'");
    assert_non_null(strstr(plan, "VIRTUAL TABLE INDEX 3:"));
    assert_string_equal(ask(q, "SELECT state FROM spikes WHERE run = 's' AND"
                               " tag = 'train/loss' AND step >= 40"),
                        "recovered");
    assert_int_equal(tfb_query_rows_touched(q), 1);
    assert_string_equal(ask(q, "SELECT count(*) FROM spikes WHERE step < 40"),
                        "0");

    assert_string_equal(
        ask(q, "SELECT run, rule, tag, step, message FROM alerts"
               " ORDER BY run, rule"),
        "bl|diverged|loss|2|loss blew up at step 2\n"
        "n|nonfinite|acc|1|NaN/Inf in acc at step 1\n"
        "o|loss_spike|train/loss|40|train/loss spiked to 20 (level 9.805, z "
        "1061) at step 40, open\n"
        "o|spike_open|train/loss|40|train/loss has not recovered from its "
        "spike at step 40 (20, level 9.805)\n"
        "s|loss_spike|train/loss|40|train/loss spiked to 20 (level 9.805, z "
        "1061) at step 40, recovered");

    /* GROUP BY run is taken by the table (no sort: a run's rows come
     * together), GROUP BY run COLLATE NOCASE is not (s and S are one
     * group but not next to each other) */
    plan = ask(q, "EXPLAIN QUERY PLAN SELECT run, count(*) FROM scalars"
                  " GROUP BY run");
    assert_null(strstr(plan, "TEMP B-TREE"));
    assert_string_equal(ask(q, "SELECT run, count(*) FROM scalars GROUP BY run"
                               " ORDER BY run"),
                        "S|1\nbl|3\nn|4\no|41\ns|42");
    assert_string_equal(ask(q, "SELECT lower(run), count(*) FROM scalars"
                               " GROUP BY run COLLATE NOCASE ORDER BY 1"),
                        "bl|3\nn|4\no|41\ns|43");

    /* The per-connection memo (a finished run's status, its hparams)
     * follows the store: s is finished, then its writer comes back with
     * hparams and does not close (this process is alive): running. */
    assert_string_equal(ask(q, "SELECT status FROM runs_wide WHERE run = 's'"),
                        "finished");
    assert_string_equal(ask(q, "SELECT status FROM runs WHERE run = 's'"),
                        "finished");
    w = open_run("s");
    hp_num(w, 0.5, "adam");
    assert_int_equal(tfb_scalar(w, "train/loss", 9.5, 42), 0);
    assert_int_equal(tfb_flush(w), 0);
    assert_int_equal(tfb_loader_pass(l), 0);
    assert_string_equal(ask(q, "SELECT status, lr FROM runs_wide WHERE"
                               " run = 's'"),
                        "running|0.5");
    assert_string_equal(ask(q, "SELECT status FROM runs WHERE run = 's'"),
                        "running");
    assert_int_equal(tfb_writer_close(w), 0);
    tfb_loader_stop(l);
    tfb_query_close(q);
    tfb_store_destroy(st);
    tfb_loss_tags_forget();
    tu_rmtree(g_dir);
    free(g_dir);
    g_dir = saved;
}

/* The memo's rows (query_runmemo.c) follow each run's own generation: a
 * warm statement reads ready-made values (no point read), a run that
 * changed is worked out again (never served stale), and the runs that did
 * not change are not. p's writer stays open: p is live. */
static void wide_memo(void **state)
{
    (void)state;
    char *saved = g_dir;
    g_dir = tu_mkdtemp();
    tfb_writer *wp = open_run("p");
    hp_num(wp, 0.1, "adam");
    /* p's points at old wall times (the writer's own events are at now):
     * a point logged between them later moves none of p's times */
    assert_int_equal(tfb_scalar_at(wp, "loss", 5, 0, 1000.0), 0);
    assert_int_equal(tfb_scalar_at(wp, "loss", 4, 1, 1001.0), 0);
    assert_int_equal(tfb_flush(wp), 0);
    tfb_writer *w = open_run("q");
    hp_num(w, 0.2, "sgd");
    assert_int_equal(tfb_scalar(w, "loss", 3, 0), 0);
    assert_int_equal(tfb_writer_close(w), 0);

    tfb_store *st;
    assert_int_equal(tfb_store_create(&st, g_dir), 0);
    tfb_loader *l;
    tfb_loader_opts lo = {0, 1, NULL};
    assert_int_equal(tfb_loader_create(&l, st, &lo), 0);
    assert_int_equal(tfb_loader_pass(l), 0);
    tfb_query *q;
    assert_int_equal(tfb_query_open(st, &q), 0);
    const char *rows = "SELECT run, lr, \"loss.last\", \"loss.min\" FROM"
                       " runs_wide ORDER BY run";
    assert_string_equal(ask(q, rows),
                        "p|0.10000000000000001|4|4\nq|0.20000000000000001|3|3");
    char **names;
    size_t n;
    char err[256];
    int off;
    assert_int_equal(tfb_query_filter_runs(q, "\"loss.last\" < 3.5", NULL,
                                           &names, &n, err, sizeof err, &off),
                     0);
    assert_int_equal(n, 1);
    assert_string_equal(names[0], "q");
    tfb_query_names_free(names, n);
    /* warm: the rows are ready, no point is read (2 = the rows scanned) */
    assert_string_equal(ask(q, "SELECT \"loss.last\" FROM runs_wide"),
                        "4\n3");
    assert_int_equal(tfb_query_rows_touched(q), 2);

    /* p logs a new last value and minimum */
    assert_int_equal(tfb_scalar_at(wp, "loss", 1, 2, 1002.0), 0);
    assert_int_equal(tfb_flush(wp), 0);
    assert_int_equal(tfb_loader_pass(l), 0);
    /* p's row alone is worked out again: one point read, q's kept */
    assert_string_equal(ask(q, "SELECT \"loss.last\" FROM runs_wide"),
                        "1\n3");
    assert_int_equal(tfb_query_rows_touched(q), 3);
    assert_string_equal(ask(q, rows),
                        "p|0.10000000000000001|1|1\nq|0.20000000000000001|3|3");
    assert_int_equal(tfb_query_filter_runs(q, "\"loss.last\" < 3.5", NULL,
                                           &names, &n, err, sizeof err, &off),
                     0);
    assert_int_equal(n, 2);
    tfb_query_names_free(names, n);
    assert_string_equal(ask(q, "SELECT \"loss.min\" FROM runs_wide WHERE"
                               " run = 'p'"),
                        "1");
    /* p logs step 1 again (a restart) at a wall time inside its span:
     * its times, series list and files stay, only its points change (the
     * loader's batch moves p's generation, not a time or a series) */
    uint64_t gen = tfb_run_generation(tfb_store_find_run(st, "p"));
    assert_int_equal(tfb_scalar_at(wp, "loss", 0.25, 1, 1001.5), 0);
    assert_int_equal(tfb_flush(wp), 0);
    assert_int_equal(tfb_loader_pass(l), 0);
    assert_string_equal(ask(q, "SELECT \"loss.last\", \"loss.min\" FROM"
                               " runs_wide WHERE run = 'p'"),
                        "0.25|0.25");
    assert_true(tfb_run_generation(tfb_store_find_run(st, "p")) > gen);
    assert_int_equal(tfb_query_filter_runs(q, "\"loss.last\" < 0.5", NULL,
                                           &names, &n, err, sizeof err, &off),
                     0);
    assert_int_equal(n, 1);
    assert_string_equal(names[0], "p");
    tfb_query_names_free(names, n);
    /* new hparams for p: its cached values go with them */
    hp_num(wp, 0.5, "adam");
    assert_int_equal(tfb_flush(wp), 0);
    assert_int_equal(tfb_loader_pass(l), 0);
    assert_string_equal(ask(q, "SELECT run, lr FROM runs_wide WHERE lr > 0.15"
                               " ORDER BY run"),
                        "p|0.5\nq|0.20000000000000001");
    /* a run added: the name-ordered list is made again */
    w = open_run("o");
    assert_int_equal(tfb_scalar(w, "loss", 2, 0), 0);
    assert_int_equal(tfb_writer_close(w), 0);
    assert_int_equal(tfb_loader_pass(l), 0);
    assert_string_equal(ask(q, "SELECT run, \"loss.last\" FROM runs_wide"),
                        "o|2\np|0.25\nq|3");

    assert_int_equal(tfb_writer_close(wp), 0);
    tfb_loader_stop(l);
    tfb_query_close(q);
    tfb_store_destroy(st);
    tu_rmtree(g_dir);
    free(g_dir);
    g_dir = saved;
}

/* runs_wide checks comparisons of hparam and tag columns itself (the
 * plan says so) and skips only the runs SQLite would reject: NULL values,
 * text against numbers, text and huge integers on the right all answer
 * as SQLite's own rules say. */
static void wide_checks(void **state)
{
    (void)state;
    tfb_query *q = open_q();
    const char *plan = ask(q, "EXPLAIN QUERY PLAN SELECT run FROM runs_wide"
                              " WHERE lr > 0.01 AND \"loss.last\" < 5");
    assert_non_null(strstr(plan, "VIRTUAL TABLE INDEX 2:#"));
    static const struct {
        const char *where, *runs;
    } cases[] = {
        {"lr > 0.01", "a"},
        {"lr = 0.001", "b"},
        {"lr < 1", "a\nb"},                  /* c's NULL never passes */
        {"lr >= 0.1 AND \"loss.last\" <= 0.5", "a"},
        {"\"loss.last\" < 0.3", "c"},
        {"\"acc.last\" >= 0.875", "a"},
        {"opt > 0", "a\nb"},                 /* text > any number */
        {"opt < 0", ""},
        {"lr < '1'", "a\nb"},                /* a number < any text */
        {"lr > NULL", ""},
        {"lr < 9007199254740993", "a\nb"},   /* past a double: SQLite's */
        {"lr > 0.01 OR \"loss.last\" < 0.3", "a\nc"}, /* no check */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char sql[256];
        snprintf(sql, sizeof sql,
                 "SELECT run FROM runs_wide WHERE %s ORDER BY run",
                 cases[i].where);
        const char *got = ask(q, sql);
        if (strcmp(got, cases[i].runs))
            fail_msg("%s: got '%s', want '%s'", cases[i].where, got,
                     cases[i].runs);
    }
    /* every run is still examined once */
    assert_string_equal(ask(q, "SELECT run FROM runs_wide WHERE lr > 0.01"),
                        "a");
    assert_int_equal(tfb_query_rows_touched(q), 3);
    tfb_query_close(q);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(tables),
        cmocka_unit_test(plan_and_rows),
        cmocka_unit_test(wide_and_filter),
        cmocka_unit_test(authorizer),
        cmocka_unit_test(limits),
        cmocka_unit_test(spikes_and_alerts),
        cmocka_unit_test(wide_memo),
        cmocka_unit_test(wide_checks),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
