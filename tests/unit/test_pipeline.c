/*
 * test_pipeline.c - the step-timing calls: argument and order checks, and
 * the pipeline/step_ms and pipeline/input_ms scalars they log, read back
 * from the event file with the library's own reader.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "test_util.h"
#include "tfboard.h"
#include "collector/trace_store.h"

#define MAX_STEPS 16

typedef struct logged {
    int seen_step[MAX_STEPS], seen_input[MAX_STEPS];
    double step_ms[MAX_STEPS], input_ms[MAX_STEPS];
    int other; /* any other pipeline/ tag */
} logged;

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

static void read_back(const char *path, logged *out)
{
    memset(out, 0, sizeof *out);
    tfb_reader *r;
    assert_int_equal(tfb_reader_open(&r, path), 0);
    tfb_event ev;
    int rc;
    while ((rc = tfb_reader_next(r, &ev)) == 1) {
        if (ev.kind != TFB_EVENT_SUMMARY)
            continue;
        size_t pos = 0;
        tfb_value v;
        while (tfb_summary_next(ev.summary, ev.summary_len, &pos, &v) == 1) {
            if (v.kind != TFB_VALUE_SCALAR)
                continue;
            int is_step = v.tag.len == strlen("pipeline/step_ms") &&
                          !memcmp(v.tag.ptr, "pipeline/step_ms", v.tag.len);
            int is_input = v.tag.len == strlen("pipeline/input_ms") &&
                           !memcmp(v.tag.ptr, "pipeline/input_ms", v.tag.len);
            if (!is_step && !is_input) {
                if (v.tag.len >= 9 && !memcmp(v.tag.ptr, "pipeline/", 9))
                    out->other++;
                continue;
            }
            assert_true(ev.step >= 0 && ev.step < MAX_STEPS);
            if (is_step) {
                out->seen_step[ev.step]++;
                out->step_ms[ev.step] = v.scalar;
            } else {
                out->seen_input[ev.step]++;
                out->input_ms[ev.step] = v.scalar;
            }
        }
    }
    assert_int_equal(rc, 0);
    tfb_reader_close(r);
}

static void test_null_writer(void **state)
{
    (void)state;
    assert_int_equal(tfb_step_begin(NULL, 0), TFB_EINVAL);
    assert_int_equal(tfb_input_begin(NULL), TFB_EINVAL);
    assert_int_equal(tfb_input_end(NULL), TFB_EINVAL);
    assert_int_equal(tfb_step_end(NULL), TFB_EINVAL);
}

static void test_out_of_order(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp();
    tfb_writer *w;
    assert_int_equal(tfb_writer_open(&w, dir, NULL), 0);

    /* Nothing may come before the first step_begin. */
    assert_int_equal(tfb_input_begin(w), TFB_ESTATE);
    assert_int_equal(tfb_input_end(w), TFB_ESTATE);
    assert_int_equal(tfb_step_end(w), TFB_ESTATE);

    assert_int_equal(tfb_step_begin(w, 0), 0);
    assert_int_equal(tfb_step_begin(w, 1), TFB_ESTATE);
    assert_int_equal(tfb_input_end(w), TFB_ESTATE);
    assert_int_equal(tfb_input_begin(w), 0);
    assert_int_equal(tfb_input_begin(w), TFB_ESTATE);
    /* A step cannot end while its input wait is open. */
    assert_int_equal(tfb_step_end(w), TFB_ESTATE);
    assert_int_equal(tfb_input_end(w), 0);
    assert_int_equal(tfb_step_end(w), 0);
    assert_int_equal(tfb_step_end(w), TFB_ESTATE);
    assert_int_equal(tfb_input_begin(w), TFB_ESTATE);

    /* The rejected calls left the state machine where it was: the next
     * step runs normally. */
    assert_int_equal(tfb_step_begin(w, 1), 0);
    assert_int_equal(tfb_step_end(w), 0);

    char *path = strdup(tfb_writer_path(w));
    assert_int_equal(tfb_writer_close(w), 0);
    logged l;
    read_back(path, &l);
    assert_int_equal(l.seen_step[0], 1);
    assert_int_equal(l.seen_input[0], 1);
    assert_int_equal(l.seen_step[1], 1);
    assert_int_equal(l.seen_input[1], 1);
    assert_int_equal(l.seen_step[2], 0);
    assert_int_equal(l.other, 0);
    free(path);
    tu_rmtree(dir);
    free(dir);
}

/* Two input waits of at least 3 ms inside step 0, none in step 1, one in
 * step 2. Sleeping never returns early, so the sums have lower bounds that
 * do not depend on machine speed. */
static void test_scalars_logged(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp();
    tfb_writer *w;
    assert_int_equal(tfb_writer_open(&w, dir, NULL), 0);

    assert_int_equal(tfb_step_begin(w, 0), 0);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(tfb_input_begin(w), 0);
        sleep_ms(3);
        assert_int_equal(tfb_input_end(w), 0);
        sleep_ms(1); /* "compute" between the waits is not input time */
    }
    assert_int_equal(tfb_step_end(w), 0);

    assert_int_equal(tfb_step_begin(w, 1), 0);
    sleep_ms(2);
    assert_int_equal(tfb_step_end(w), 0);

    assert_int_equal(tfb_step_begin(w, 2), 0);
    assert_int_equal(tfb_input_begin(w), 0);
    sleep_ms(5);
    assert_int_equal(tfb_input_end(w), 0);
    assert_int_equal(tfb_step_end(w), 0);

    char *path = strdup(tfb_writer_path(w));
    assert_int_equal(tfb_writer_close(w), 0);

    logged l;
    read_back(path, &l);
    for (int s = 0; s < 3; s++) {
        assert_int_equal(l.seen_step[s], 1);
        assert_int_equal(l.seen_input[s], 1);
        assert_true(l.input_ms[s] <= l.step_ms[s]);
    }
    assert_true(l.input_ms[0] >= 6.0);
    /* The waits exclude the 2 ms of compute between and after them. */
    assert_true(l.step_ms[0] >= l.input_ms[0] + 2.0);
    assert_true(l.input_ms[1] == 0.0);
    assert_true(l.step_ms[1] >= 2.0);
    assert_true(l.input_ms[2] >= 5.0);
    assert_int_equal(l.seen_step[3], 0);
    free(path);
    tu_rmtree(dir);
    free(dir);
}

/* tfb_flush covers the step scalars too: once it returns they are in the
 * file, although the writer is still open. */
static void test_flush_includes_steps(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp();
    tfb_writer *w;
    assert_int_equal(tfb_writer_open(&w, dir, NULL), 0);
    for (int s = 0; s < 5; s++) {
        assert_int_equal(tfb_step_begin(w, s), 0);
        assert_int_equal(tfb_step_end(w), 0);
    }
    assert_int_equal(tfb_flush(w), 0);
    logged l;
    read_back(tfb_writer_path(w), &l);
    for (int s = 0; s < 5; s++) {
        assert_int_equal(l.seen_step[s], 1);
        assert_int_equal(l.seen_input[s], 1);
    }
    assert_int_equal(tfb_writer_close(w), 0);
    tu_rmtree(dir);
    free(dir);
}

/* Closing in the middle of a step frees the state (ASan checks the leak)
 * and logs nothing for the unfinished step. */
static void test_close_mid_step(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp();
    tfb_writer *w;
    assert_int_equal(tfb_writer_open(&w, dir, NULL), 0);
    assert_int_equal(tfb_step_begin(w, 0), 0);
    assert_int_equal(tfb_step_end(w), 0);
    assert_int_equal(tfb_step_begin(w, 1), 0);
    assert_int_equal(tfb_input_begin(w), 0);
    char *path = strdup(tfb_writer_path(w));
    assert_int_equal(tfb_writer_close(w), 0);
    logged l;
    read_back(path, &l);
    assert_int_equal(l.seen_step[0], 1);
    assert_int_equal(l.seen_step[1], 0);
    assert_int_equal(l.seen_input[1], 0);
    free(path);
    tu_rmtree(dir);
    free(dir);
}

/* Many steps: every one is logged exactly once with input <= step. */
static void test_many_steps(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp();
    tfb_writer *w;
    assert_int_equal(tfb_writer_open(&w, dir, NULL), 0);
    for (int s = 0; s < MAX_STEPS; s++) {
        assert_int_equal(tfb_step_begin(w, s), 0);
        assert_int_equal(tfb_input_begin(w), 0);
        assert_int_equal(tfb_input_end(w), 0);
        assert_int_equal(tfb_step_end(w), 0);
    }
    char *path = strdup(tfb_writer_path(w));
    assert_int_equal(tfb_writer_close(w), 0);
    logged l;
    read_back(path, &l);
    for (int s = 0; s < MAX_STEPS; s++) {
        assert_int_equal(l.seen_step[s], 1);
        assert_int_equal(l.seen_input[s], 1);
        assert_true(l.input_ms[s] >= 0.0);
        assert_true(l.input_ms[s] <= l.step_ms[s]);
    }
    free(path);
    tu_rmtree(dir);
    free(dir);
}


static int64_t real_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* While a trace store is attached to the writer (as GPU tracing does), the
 * step and input spans land in TFB_HOST_SPANS on the realtime clock, each
 * input span inside its step span. Without one, nothing is offered. */
static void test_spans_in_trace_store(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp();
    tfb_writer *w;
    assert_int_equal(tfb_writer_open(&w, dir, NULL), 0);

    /* A step before any store: no span anywhere, timing still works. */
    assert_int_equal(tfb_step_begin(w, 100), 0);
    assert_int_equal(tfb_step_end(w), 0);

    tfb_trace_store_opts o = {0};
    o.file_name = "spans.trace.sqlite";
    tfb_trace_store *ts;
    assert_int_equal(tfb_trace_store_open(&ts, dir, &o), 0);
    assert_int_equal(tfb_trace_store_attach(w, ts), 0);
    /* The probe pause after step 100 must not hide these steps: wait it
     * out (spans start within PROBE_MS of a trace starting). */
    sleep_ms(120);
    int64_t t0 = real_now_ns();
    for (int s = 0; s < 5; s++) {
        assert_int_equal(tfb_step_begin(w, s), 0);
        assert_int_equal(tfb_input_begin(w), 0);
        sleep_ms(1);
        assert_int_equal(tfb_input_end(w), 0);
        assert_int_equal(tfb_step_end(w), 0);
    }
    int64_t t1 = real_now_ns();
    assert_int_equal(tfb_trace_store_attach(w, NULL), 0);
    char path[4096];
    snprintf(path, sizeof path, "%s", tfb_trace_store_path(ts));
    assert_int_equal(tfb_trace_store_close(ts), 0);
    assert_int_equal(tfb_writer_close(w), 0);

    sqlite3 *db;
    assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL),
                     SQLITE_OK);
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(db,
        "SELECT s.step, s.start, s.end, i.start, i.end FROM TFB_HOST_SPANS s "
        "JOIN TFB_HOST_SPANS i ON i.step = s.step AND i.kind = 'input' "
        "WHERE s.kind = 'step' ORDER BY s.step", -1, &st, NULL), SQLITE_OK);
    int rows = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        int64_t step = sqlite3_column_int64(st, 0);
        int64_t ss = sqlite3_column_int64(st, 1), se = sqlite3_column_int64(st, 2);
        int64_t is = sqlite3_column_int64(st, 3), ie = sqlite3_column_int64(st, 4);
        assert_int_equal(step, rows);
        assert_true(ss <= is && is < ie && ie <= se);
        assert_true(ie - is >= 1000000); /* the 1 ms sleep */
        /* On the realtime clock (CUPTI's): allow for the offset rounding. */
        assert_true(ss >= t0 - 1000000 && se <= t1 + 1000000);
        rows++;
    }
    sqlite3_finalize(st);
    assert_int_equal(rows, 5);
    assert_int_equal(sqlite3_prepare_v2(db,
        "SELECT count(*) FROM TFB_HOST_SPANS", -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_int_equal(sqlite3_column_int(st, 0), 10); /* not step 100's */
    sqlite3_finalize(st);
    sqlite3_close(db);
    tu_rmtree(dir);
    free(dir);
}

/* Far more steps than the ring between the step timer and its helper
 * thread holds, as fast as possible: the ring fills, steps fall back to
 * logging themselves, the helper drains concurrently, and still every
 * step is in the file exactly once with both scalars. */
static void test_ring_overflow(void **state)
{
    (void)state;
    enum { STEPS = 20000 };
    char *dir = tu_mkdtemp();
    tfb_writer *w;
    assert_int_equal(tfb_writer_open(&w, dir, NULL), 0);
    for (int s = 0; s < STEPS; s++) {
        assert_int_equal(tfb_step_begin(w, s), 0);
        assert_int_equal(tfb_step_end(w), 0);
    }
    char *path = strdup(tfb_writer_path(w));
    assert_int_equal(tfb_writer_close(w), 0);

    unsigned char *seen = calloc(STEPS, 1);
    assert_non_null(seen);
    tfb_reader *r;
    assert_int_equal(tfb_reader_open(&r, path), 0);
    tfb_event ev;
    while (tfb_reader_next(r, &ev) == 1) {
        if (ev.kind != TFB_EVENT_SUMMARY)
            continue;
        size_t pos = 0;
        tfb_value v;
        while (tfb_summary_next(ev.summary, ev.summary_len, &pos, &v) == 1) {
            if (v.kind != TFB_VALUE_SCALAR || v.tag.len < 9 ||
                memcmp(v.tag.ptr, "pipeline/", 9))
                continue;
            assert_true(ev.step >= 0 && ev.step < STEPS);
            int bit = v.tag.ptr[9] == 's' ? 1 : 2; /* step_ms / input_ms */
            assert_false(seen[ev.step] & bit);
            seen[ev.step] |= (unsigned char)bit;
            /* The wall time is the step's own, not the drain's: sane. */
            assert_true(ev.wall_time > 1e9);
        }
    }
    tfb_reader_close(r);
    for (int s = 0; s < STEPS; s++)
        if (seen[s] != 3)
            fail_msg("step %d logged as %d", s, seen[s]);
    free(seen);
    free(path);
    tu_rmtree(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_null_writer),
        cmocka_unit_test(test_out_of_order),
        cmocka_unit_test(test_scalars_logged),
        cmocka_unit_test(test_flush_includes_steps),
        cmocka_unit_test(test_close_mid_step),
        cmocka_unit_test(test_many_steps),
        cmocka_unit_test(test_spans_in_trace_store),
        cmocka_unit_test(test_ring_overflow),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
