/*
 * test_clock_step.c - setting the wall clock back must not stall any
 * periodic work: the writer's flush, the pipeline drainer, the trace
 * store's commit, the server loader's reload.
 *
 * No root is needed to change the real clock: this executable is linked
 * with -Wl,--wrap=clock_gettime, so every clock_gettime call of the test
 * and of the libraries linked into it goes to __wrap_clock_gettime below.
 * While `g_step` is on, CLOCK_REALTIME reads one hour ahead of the
 * kernel's clock; CLOCK_MONOTONIC is untouched. The kernel's futex waits
 * (pthread_cond_timedwait) still use the real clock. That is the state
 * right after the wall clock was set back by an hour: deadlines computed
 * from CLOCK_REALTIME lie an hour in the kernel's future, so code that
 * waits on them stalls for an hour; deadlines on CLOCK_MONOTONIC do not.
 *
 * Each check waits up to GIVE_UP_S for the periodic work (whose period is
 * 20-50 ms) to happen; that bound only ends a stalled run, it measures
 * nothing.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "store/loader.h"
#include "store/store.h"
#include "tfboard.h"
#include "collector/trace_store.h"
#include "collector/writer_internal.h" /* tfb_now_ns */
#include "test_util.h"

#define GIVE_UP_S 20

static atomic_int g_step;

int __real_clock_gettime(clockid_t clk, struct timespec *ts);
int __wrap_clock_gettime(clockid_t clk, struct timespec *ts);

int __wrap_clock_gettime(clockid_t clk, struct timespec *ts)
{
    int rc = __real_clock_gettime(clk, ts);
    if (rc == 0 && clk == CLOCK_REALTIME && atomic_load(&g_step))
        ts->tv_sec += 3600;
    return rc;
}

/* Seconds on CLOCK_MONOTONIC (untouched by the wrapper). */
static double mono_s(void)
{
    struct timespec ts;
    __real_clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void nap(void) { usleep(5000); }

/* The wrapper must really be in the path of the libraries' calls, or the
 * tests below would prove nothing. */
static void wrapper_active(void **state)
{
    (void)state;
    struct timespec a, b;
    __real_clock_gettime(CLOCK_REALTIME, &a);
    atomic_store(&g_step, 1);
    int64_t lib = tfb_now_ns(); /* the collector's CLOCK_REALTIME read */
    clock_gettime(CLOCK_REALTIME, &b);
    atomic_store(&g_step, 0);
    assert_true(b.tv_sec >= a.tv_sec + 3599);
    assert_true(lib / 1000000000 >= (int64_t)a.tv_sec + 3599);
}

/* 1 when the event file in dir holds a value with this tag. */
static int file_has_tag(const char *dir, const char *tag)
{
    char *path = tu_find_event_file(dir);
    if (!path)
        return 0;
    tfb_reader *r;
    int found = 0;
    if (tfb_reader_open(&r, path) == 0) {
        tfb_event ev = {.size = sizeof ev};
        while (!found && tfb_reader_next(r, &ev) == 1) {
            if (ev.kind != TFB_EVENT_SUMMARY)
                continue;
            size_t pos = 0;
            tfb_value v = {.size = sizeof v};
            while (tfb_summary_next(ev.summary, ev.summary_len, &pos, &v) == 1)
                if (v.tag.len == strlen(tag) &&
                    memcmp(v.tag.ptr, tag, v.tag.len) == 0)
                    found = 1;
        }
        tfb_reader_close(r);
    }
    free(path);
    return found;
}

static int wait_tag(const char *dir, const char *tag)
{
    double t0 = mono_s();
    while (mono_s() - t0 < GIVE_UP_S) {
        if (file_has_tag(dir, tag))
            return 1;
        nap();
    }
    return 0;
}

/* The writer flushes a logged scalar within its flush interval, without
 * tfb_flush, although the clock was set back. */
static void writer_flush(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp();
    atomic_store(&g_step, 1);
    tfb_writer_opts o;
    tfb_writer_opts_init(&o);
    o.flush_interval_ms = 20;
    tfb_writer *w;
    assert_int_equal(tfb_writer_open(&w, dir, &o), 0);
    usleep(50000); /* the flush thread is in its timed wait now */
    assert_int_equal(tfb_scalar(w, "clock/x", 1.0, 1), 0);
    int ok = wait_tag(dir, "clock/x");
    atomic_store(&g_step, 0);
    assert_int_equal(tfb_writer_close(w), 0);
    assert_true(ok);
    tu_rmtree(dir);
    free(dir);
}

/* The pipeline's drainer moves finished steps into the writer every few
 * ms (and the writer flushes them), without tfb_flush or close. */
static void pipeline_drain(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp();
    atomic_store(&g_step, 1);
    tfb_writer_opts o;
    tfb_writer_opts_init(&o);
    o.flush_interval_ms = 20;
    tfb_writer *w;
    assert_int_equal(tfb_writer_open(&w, dir, &o), 0);
    for (int s = 0; s < 3; s++) {
        assert_int_equal(tfb_step_begin(w, s), 0);
        assert_int_equal(tfb_input_begin(w), 0);
        assert_int_equal(tfb_input_end(w), 0);
        assert_int_equal(tfb_step_end(w), 0);
        usleep(30000); /* the drainer waits between steps */
    }
    int ok = wait_tag(dir, "pipeline/step_ms");
    atomic_store(&g_step, 0);
    assert_int_equal(tfb_writer_close(w), 0);
    assert_true(ok);
    tu_rmtree(dir);
    free(dir);
}

/* The trace store commits queued rows every commit interval, without
 * tfb_trace_store_flush. */
static void trace_store_commit(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp();
    atomic_store(&g_step, 1);
    tfb_trace_store_opts o = {0};
    o.commit_interval_ms = 20;
    o.file_name = "t.sqlite";
    tfb_trace_store *s;
    assert_int_equal(tfb_trace_store_open(&s, dir, &o), 0);
    usleep(50000); /* the commit thread is in its timed wait now */
    assert_int_equal(tfb_trace_store_meta(s, "clock", "stepped"), 0);
    assert_true(tfb_trace_store_intern(s, "kernel") >= 0);
    tfb_trace_store_stats st;
    tfb_trace_store_get_stats(s, &st);
    uint64_t queued = st.rows_queued;
    int ok = 0;
    double t0 = mono_s();
    while (!ok && mono_s() - t0 < GIVE_UP_S) {
        tfb_trace_store_get_stats(s, &st);
        ok = st.rows_written >= queued;
        if (!ok)
            nap();
    }
    atomic_store(&g_step, 0);
    assert_int_equal(tfb_trace_store_close(s), 0);
    assert_true(ok);
    tu_rmtree(dir);
    free(dir);
}

/* The server's loader notices a new run within its reload interval. */
static void loader_reload(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp();
    char run[4096];
    snprintf(run, sizeof run, "%s/first", dir);
    tfb_writer *w;
    assert_int_equal(tfb_writer_open(&w, run, NULL), 0);
    assert_int_equal(tfb_scalar(w, "a", 1.0, 0), 0);
    assert_int_equal(tfb_writer_close(w), 0);

    atomic_store(&g_step, 1);
    tfb_store *st;
    assert_int_equal(tfb_store_create(&st, dir), 0);
    tfb_loader_opts lo = {0.02, 1, NULL};
    tfb_loader *l;
    assert_int_equal(tfb_loader_start(&l, st, &lo), 0);
    tfb_load_progress p;
    double t0 = mono_s();
    do {
        nap();
        tfb_store_progress(st, &p);
    } while (!p.done && mono_s() - t0 < GIVE_UP_S);
    assert_true(p.done);
    usleep(50000); /* the loader is in its timed wait now */
    snprintf(run, sizeof run, "%s/second", dir);
    assert_int_equal(tfb_writer_open(&w, run, NULL), 0);
    assert_int_equal(tfb_scalar(w, "b", 2.0, 0), 0);
    assert_int_equal(tfb_writer_close(w), 0);
    int ok = 0;
    t0 = mono_s();
    while (!ok && mono_s() - t0 < GIVE_UP_S) {
        tfb_run *r = tfb_store_find_run(st, "second");
        ok = r && tfb_run_find_series(r, TFB_SERIES_SCALAR, "b");
        if (!ok)
            nap();
    }
    atomic_store(&g_step, 0);
    tfb_loader_stop(l);
    tfb_store_destroy(st);
    assert_true(ok);
    tu_rmtree(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(wrapper_active),
        cmocka_unit_test(writer_flush),
        cmocka_unit_test(pipeline_drain),
        cmocka_unit_test(trace_store_commit),
        cmocka_unit_test(loader_reload),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
