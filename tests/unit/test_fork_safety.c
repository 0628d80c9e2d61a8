/*
 * test_fork_safety.c - a writer inherited across fork() (issue 10): in the
 * child every call on it returns TFB_EFORKED at once and never blocks, the
 * child can open and use its own writer, and the parent loses nothing.
 * Also tfb_writer_closep (close twice is harmless).
 *
 * The child cannot use cmocka's asserts (they would unwind into the
 * parent's copy of the test runner): it checks with CHILD_CHECK and exits
 * with the failing line; alarm() kills it if any call hangs.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <pthread.h>
#include <time.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test_util.h"
#include "tfboard.h"

/* ThreadSanitizer does not support starting threads in a child of a
 * multi-threaded fork (it dies, or with die_after_fork=0 trips over the
 * parent's thread ids: "dup thread with used id"). Under TSan the child
 * therefore only checks the inherited writer; opening its own writer (a
 * new thread) is checked by the other builds. */
#if defined(__SANITIZE_THREAD__)
#define TSAN_BUILD 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define TSAN_BUILD 1
#endif
#endif
#ifndef TSAN_BUILD
#define TSAN_BUILD 0
#endif

/* AddressSanitizer (GCC 12's, Debian 12) does not hold its allocator's
 * size-class locks across fork: when a parent thread is inside malloc at
 * the fork, the child's first malloc of that size class waits forever
 * (seen: the child's pipeline thread stuck in
 * SizeClassAllocator64::GetFromAllocator, about one run in 60 on a loaded
 * machine). glibc's malloc takes its locks around fork, so the release
 * and no-CUDA builds check the child's own writer; under ASan the child
 * checks the inherited writer only, as under TSan. */
#if defined(__SANITIZE_ADDRESS__)
#define ASAN_BUILD 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ASAN_BUILD 1
#endif
#endif
#ifndef ASAN_BUILD
#define ASAN_BUILD 0
#endif

#define CHILD_CHECK(cond)                                                   \
    do {                                                                    \
        if (!(cond)) {                                                      \
            fprintf(stderr, "child check failed at line %d: %s\n",         \
                    __LINE__, #cond);                                       \
            _exit(1);                                                       \
        }                                                                   \
    } while (0)

/* Runs fn(arg) in a child with a hang guard of `secs`; checks it exited 0. */
static void run_in_child(void (*fn)(void *), void *arg, unsigned secs)
{
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        alarm(secs);
        fn(arg);
        _exit(0);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    if (WIFSIGNALED(status))
        fail_msg("child killed by signal %d%s", WTERMSIG(status),
                 WTERMSIG(status) == SIGALRM ? " (a call hung)" : "");
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

/* Scalars per tag prefix in one event file; checks there is no corrupt
 * record and that each counted tag's steps run 0, 1, 2, ... */
typedef struct tag_count {
    const char *tag;
    long n;
    int in_order;
} tag_count;

static int count_tags(const char *path, tag_count *tc, size_t ntc,
                      long *foreign)
{
    tfb_reader *r;
    if (tfb_reader_open(&r, path) != 0)
        return -1;
    tfb_event ev = {.size = sizeof ev};
    for (size_t i = 0; i < ntc; i++)
        tc[i].n = 0, tc[i].in_order = 1;
    *foreign = 0;
    while (tfb_reader_next(r, &ev) == 1) {
        if (ev.kind != TFB_EVENT_SUMMARY)
            continue;
        size_t pos = 0;
        tfb_value v = {.size = sizeof v};
        while (tfb_summary_next(ev.summary, ev.summary_len, &pos, &v) == 1) {
            size_t i;
            for (i = 0; i < ntc; i++)
                if (v.tag.len == strlen(tc[i].tag) &&
                    memcmp(v.tag.ptr, tc[i].tag, v.tag.len) == 0)
                    break;
            if (i == ntc) {
                if (v.tag.len >= 6 && memcmp(v.tag.ptr, "child/", 6) == 0)
                    (*foreign)++;
                continue;
            }
            if (ev.step != tc[i].n)
                tc[i].in_order = 0;
            tc[i].n++;
        }
    }
    tfb_reader_stats st;
    tfb_reader_stats_init(&st);
    tfb_reader_get_stats(r, &st);
    tfb_reader_close(r);
    return st.corrupt_records || st.resyncs || st.truncated_tail ? -2 : 0;
}

typedef struct bg_arg {
    tfb_writer *w;
    atomic_int stop;
    long logged; /* scalars accepted (returned 0) */
    int err;
} bg_arg;

/* Scalars the background logger writes at most (~40 MB of events): a
 * test killed mid-way (a timeout, a debugger) leaves a bounded file, not
 * one that grows at the logger's full speed until the disk is full. The
 * forks happen well within it (25,000-55,000 scalars in a
 * normal run). */
#define BG_MAX_SCALARS 1000000L

/* Logs as fast as it can, so that the writer's mutex is often held (and
 * its queue often full) at the moment of fork(). */
static void *bg_logger(void *p)
{
    bg_arg *a = p;
    while (!atomic_load(&a->stop)) {
        if (a->logged >= BG_MAX_SCALARS) {
            struct timespec ms = {0, 1000000};
            nanosleep(&ms, NULL);
            continue;
        }
        int rc = tfb_scalar(a->w, "bg", (double)a->logged, a->logged);
        if (rc != 0) {
            a->err = rc;
            break;
        }
        a->logged++;
    }
    return NULL;
}

typedef struct child_arg {
    tfb_writer *inherited;
    const char *child_dir;
} child_arg;

/* Everything a DataLoader worker might do with the training script's
 * writer, then a writer of its own. */
static void child_body(void *p)
{
    child_arg *a = p;
    tfb_writer *w = a->inherited;
    float f[4] = {1, 2, 3, 4};
    double d[4] = {1, 2, 3, 4};
    float bad[2] = {NAN, 1};
    tfb_tensor g = {sizeof g, "layer", f, 4};
    tfb_tensor_f64 g64 = {sizeof g64, "layer", d, 4};
    double norm = -1;
    tfb_writer_stats ws;
    tfb_writer_stats_init(&ws);
    tfb_gpu_stats gs;
    tfb_gpu_stats_init(&gs);

    /* Far more than the (4 KiB) queue holds: a child whose records went
     * into the queue would block here once it is full. */
    for (int i = 0; i < 20000; i++)
        CHILD_CHECK(tfb_scalar(w, "child/lost", 1.0, i) == TFB_EFORKED);
    CHILD_CHECK(tfb_scalar_at(w, "child/lost", 1.0, 0, 1.0) == TFB_EFORKED);
    CHILD_CHECK(tfb_histogram(w, "child/h", f, 4, 0) == TFB_EFORKED);
    CHILD_CHECK(tfb_histogram_f64(w, "child/h", d, 4, 0) == TFB_EFORKED);
    CHILD_CHECK(tfb_text(w, "child/t", "x", 0) == TFB_EFORKED);
    CHILD_CHECK(tfb_check_numerics(w, "child/n", f, 4, 0) == TFB_EFORKED);
    CHILD_CHECK(tfb_check_numerics(w, "child/n", bad, 2, 0) == TFB_EFORKED);
    CHILD_CHECK(tfb_check_numerics_f64(w, "child/n", d, 4, 0) == TFB_EFORKED);
    CHILD_CHECK(tfb_grad_norms(w, &g, 1, 0, &norm) == TFB_EFORKED);
    CHILD_CHECK(tfb_grad_norms_f64(w, &g64, 1, 0, &norm) == TFB_EFORKED);
    CHILD_CHECK(norm == -1); /* out-params only on success */
    CHILD_CHECK(tfb_flush(w) == TFB_EFORKED);
    CHILD_CHECK(tfb_writer_get_stats(w, &ws) == TFB_EFORKED);
    CHILD_CHECK(tfb_step_begin(w, 1) == TFB_EFORKED);
    CHILD_CHECK(tfb_input_begin(w) == TFB_EFORKED);
    CHILD_CHECK(tfb_input_end(w) == TFB_EFORKED);
    CHILD_CHECK(tfb_step_end(w) == TFB_EFORKED);
    CHILD_CHECK(tfb_gpu_trace_start(w, NULL) == TFB_EFORKED);
    CHILD_CHECK(tfb_gpu_trace_get_stats(w, &gs) == TFB_EFORKED);
    CHILD_CHECK(tfb_gpu_trace_stop(w) == TFB_EFORKED);
    CHILD_CHECK(strstr(tfb_gpu_trace_error(w), "fork") != NULL);
    CHILD_CHECK(tfb_writer_path(w) == NULL);
    CHILD_CHECK(tfb_writer_run_dir(w) == NULL);
    CHILD_CHECK(strstr(tfb_strerror(TFB_EFORKED), "fork") != NULL);

    if (TSAN_BUILD || ASAN_BUILD) {
        CHILD_CHECK(tfb_writer_closep(&a->inherited) == TFB_EFORKED);
        CHILD_CHECK(a->inherited == NULL);
        return;
    }

    /* The worker's own writer works as usual, pipeline timer included
     * (its helper thread is started here, in the child). */
    tfb_writer *own = NULL;
    CHILD_CHECK(tfb_writer_open(&own, a->child_dir, NULL) == 0);
    for (int i = 0; i < 1000; i++)
        CHILD_CHECK(tfb_scalar(own, "child/own", (double)i, i) == 0);
    for (int s = 0; s < 5; s++) {
        CHILD_CHECK(tfb_step_begin(own, s) == 0);
        CHILD_CHECK(tfb_input_begin(own) == 0);
        CHILD_CHECK(tfb_input_end(own) == 0);
        CHILD_CHECK(tfb_step_end(own) == 0);
    }
    CHILD_CHECK(tfb_flush(own) == 0);
    char *own_path = strdup(tfb_writer_path(own));
    CHILD_CHECK(own_path != NULL);
    CHILD_CHECK(tfb_writer_close(own) == 0);

    /* Closing the inherited writer frees the child's copy only. */
    CHILD_CHECK(tfb_writer_closep(&a->inherited) == TFB_EFORKED);
    CHILD_CHECK(a->inherited == NULL);
    CHILD_CHECK(tfb_writer_closep(&a->inherited) == 0);

    tag_count tc[2] = {{"child/own", 0, 0}, {"pipeline/step_ms", 0, 0}};
    long foreign = 0;
    CHILD_CHECK(count_tags(own_path, tc, 2, &foreign) == 0);
    CHILD_CHECK(tc[0].n == 1000 && tc[0].in_order);
    CHILD_CHECK(tc[1].n == 5 && tc[1].in_order);
    free(own_path);
}

static void inherited_writer_refuses_and_parent_keeps_all(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp();
    tfb_writer_opts o;
    tfb_writer_opts_init(&o);
    o.queue_bytes = 4096; /* small: the background logger often waits */
    tfb_writer *w = NULL;
    assert_int_equal(tfb_writer_open(&w, dir, &o), 0);

    /* The pipeline helper thread exists at fork time too. */
    long steps = 0;
    for (; steps < 3; steps++) {
        assert_int_equal(tfb_step_begin(w, steps), 0);
        assert_int_equal(tfb_step_end(w), 0);
    }
    bg_arg bg = {.w = w};
    atomic_init(&bg.stop, 0);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, bg_logger, &bg), 0);

    long parent_n = 0;
    for (int round = 0; round < 4; round++) {
        for (int i = 0; i < 500; i++, parent_n++)
            assert_int_equal(tfb_scalar(w, "parent", 1.0, parent_n), 0);
        char child_dir[4096];
        snprintf(child_dir, sizeof child_dir, "%s/child%d", dir, round);
        child_arg ca = {w, child_dir};
        run_in_child(child_body, &ca, 60);
        /* The child's closep cleared only its own copy of the pointer. */
        assert_non_null(ca.inherited);
        assert_int_equal(tfb_step_begin(w, steps), 0);
        assert_int_equal(tfb_step_end(w), 0);
        steps++;
    }
    for (int i = 0; i < 500; i++, parent_n++)
        assert_int_equal(tfb_scalar(w, "parent", 1.0, parent_n), 0);
    atomic_store(&bg.stop, 1);
    pthread_join(th, NULL);
    assert_int_equal(bg.err, 0);
    assert_int_equal(tfb_flush(w), 0);
    char *path = strdup(tfb_writer_path(w));
    assert_int_equal(tfb_writer_closep(&w), 0);
    assert_null(w);

    tag_count tc[3] = {{"parent", 0, 0}, {"bg", 0, 0},
                       {"pipeline/step_ms", 0, 0}};
    long foreign = -1;
    assert_int_equal(count_tags(path, tc, 3, &foreign), 0);
    assert_int_equal(tc[0].n, parent_n);
    assert_true(tc[0].in_order);
    assert_int_equal(tc[1].n, bg.logged);
    assert_true(tc[1].in_order);
    assert_int_equal(tc[2].n, steps);
    assert_int_equal(foreign, 0); /* nothing of the children's */
    free(path);
    tu_rmtree(dir);
    free(dir);
}

/* A child that only closes the inherited writer (the common DataLoader
 * case: nothing logged there) leaves the parent's writer working. */
static void close_only_child(void *p)
{
    tfb_writer *w = p;
    CHILD_CHECK(tfb_writer_close(w) == TFB_EFORKED);
}

static void child_close_leaves_parent_working(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp();
    tfb_writer *w = NULL;
    assert_int_equal(tfb_writer_open(&w, dir, NULL), 0);
    for (int i = 0; i < 100; i++)
        assert_int_equal(tfb_scalar(w, "parent", 1.0, i), 0);
    /* Queued, not yet written: the child must not write these bytes. */
    run_in_child(close_only_child, w, 30);
    for (int i = 100; i < 200; i++)
        assert_int_equal(tfb_scalar(w, "parent", 1.0, i), 0);
    char *path = strdup(tfb_writer_path(w));
    assert_int_equal(tfb_writer_close(w), 0);
    tag_count tc[1] = {{"parent", 0, 0}};
    long foreign;
    assert_int_equal(count_tags(path, tc, 1, &foreign), 0);
    assert_int_equal(tc[0].n, 200); /* each exactly once, in order */
    assert_true(tc[0].in_order);
    free(path);
    tu_rmtree(dir);
    free(dir);
}

static void closep_is_idempotent(void **state)
{
    (void)state;
    assert_int_equal(tfb_writer_closep(NULL), 0);
    tfb_writer *w = NULL;
    assert_int_equal(tfb_writer_closep(&w), 0);
    char *dir = tu_mkdtemp();
    assert_int_equal(tfb_writer_open(&w, dir, NULL), 0);
    assert_int_equal(tfb_scalar(w, "a", 1.0, 0), 0);
    char *path = strdup(tfb_writer_path(w));
    assert_int_equal(tfb_writer_closep(&w), 0);
    assert_null(w);
    assert_int_equal(tfb_writer_closep(&w), 0); /* second close: no-op */
    tag_count tc[1] = {{"a", 0, 0}};
    long foreign;
    assert_int_equal(count_tags(path, tc, 1, &foreign), 0);
    assert_int_equal(tc[0].n, 1);
    free(path);
    tu_rmtree(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(inherited_writer_refuses_and_parent_keeps_all),
        cmocka_unit_test(child_close_leaves_parent_working),
        cmocka_unit_test(closep_is_idempotent),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
