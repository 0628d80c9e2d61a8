/*
 * test_many_runs.c - a sweep's many small runs (issue 28 item 1, the CI
 * size of the 100,000-run bench): 2,000 runs x 5 tags x 20 steps load with
 * exactly their points; a reload after appending to 10 runs' files and
 * adding 10 runs sees exactly the new points. Between passes the loader
 * keeps no reader for a file read to its end (loader.c, file_state
 * `parked`): the next pass resumes a new reader at the old offset, so a
 * wrong offset shows here as points read twice or lost. A record cut in
 * two by the writer (half at one reload, the rest at the next) is read
 * once, whole. The loader's profile (store.h, tfb_load_profile) counts
 * every file read.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/loader.h"
#include "store/store.h"
#include "tfboard.h"
#include "test_util.h"

#define RUNS 2000
#define TAGS 5
#define STEPS 20
#define GROWN 10  /* runs whose file grows */
#define ADDED 10  /* runs added before the reload */
#define MORE 7    /* steps appended to a grown run */

static double value_of(int run, int tag, int step)
{
    return run * 0.5 + tag * 100 + step;
}

/* Writes steps [from, to) of run `run` into a new event file under
 * dir/name; returns that file's path (malloc'd). */
static char *write_run(const char *dir, const char *name, int run, int from,
                       int to)
{
    char path[4096], tag[32];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    tfb_writer_opts o;
    tfb_writer_opts_init(&o);
    o.queue_bytes = 64 * 1024; /* a run is a few KB */
    tfb_writer *w;
    assert_int_equal(tfb_writer_open(&w, path, &o), 0);
    for (int s = from; s < to; s++)
        for (int t = 0; t < TAGS; t++) {
            snprintf(tag, sizeof tag, "tag%d/t", t);
            assert_int_equal(tfb_scalar_at(w, tag, value_of(run, t, s), s,
                                           1.7e9 + run + s),
                             0);
        }
    assert_int_equal(tfb_writer_close(w), 0);
    char *f = tu_find_event_file(path);
    assert_non_null(f);
    return f;
}

static void append_bytes(const char *path, const uint8_t *b, size_t n)
{
    FILE *f = fopen(path, "ab");
    assert_non_null(f);
    assert_int_equal(fwrite(b, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
}

/* Every scalar series of run `name` holds steps [0, steps) with their
 * values, each once. */
static void check_run(tfb_store *st, int run, const char *name, int steps)
{
    tfb_run *r = tfb_store_find_run(st, name);
    assert_non_null(r);
    char tag[32];
    for (int t = 0; t < TAGS; t++) {
        snprintf(tag, sizeof tag, "tag%d/t", t);
        tfb_series *s = tfb_run_find_series(r, TFB_SERIES_SCALAR, tag);
        assert_non_null(s);
        tfb_series_view v;
        tfb_series_read_begin(s, &v);
        if (v.count != (size_t)steps)
            fail_msg("%s %s: %zu points, %d expected", name, tag, v.count,
                     steps);
        for (int i = 0; i < steps; i++) {
            assert_int_equal(v.step[i], i);
            assert_true(v.value[i] == (float)value_of(run, t, i));
        }
        tfb_series_read_end(s);
    }
}

static uint64_t records_of(tfb_store *st, const char *name)
{
    tfb_file_info *fi;
    size_t n;
    assert_int_equal(tfb_run_files(tfb_store_find_run(st, name), &fi, &n), 0);
    uint64_t rec = 0;
    for (size_t i = 0; i < n; i++)
        rec += fi[i].stats.records;
    tfb_file_infos_free(fi, n);
    return rec;
}

static void many_runs_reload(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp();
    char *scratch = tu_mkdtemp();
    char name[64];
    char **files = calloc(RUNS, sizeof *files);
    assert_non_null(files);
    for (int i = 0; i < RUNS; i++) {
        snprintf(name, sizeof name, "run%05d", i);
        files[i] = write_run(dir, name, i, 0, STEPS);
    }

    tfb_store *st;
    assert_int_equal(tfb_store_create(&st, dir), 0);
    tfb_loader *l;
    tfb_loader_opts lo = {0, 2, NULL};
    assert_int_equal(tfb_loader_create(&l, st, &lo), 0);
    assert_int_equal(tfb_loader_pass(l), 0);
    assert_int_equal(tfb_store_run_count(st), RUNS);
    for (int i = 0; i < RUNS; i++) {
        snprintf(name, sizeof name, "run%05d", i);
        check_run(st, i, name, STEPS);
    }
    tfb_load_progress p;
    tfb_store_progress(st, &p);
    assert_true(p.done);
    assert_int_equal(p.files_done, RUNS);
    assert_int_equal(p.profile.files, RUNS);
    assert_int_equal(p.profile.runs, RUNS);
    uint64_t rec0 = records_of(st, "run00000");

    /* 10 runs grow: steps STEPS.. written by another writer, its records
     * appended to the run's own file (the next run's first records, as a
     * writer that reopened would add them); the first grown run gets only
     * the first half of its new bytes now, the rest after a reload. */
    uint8_t *cut_rest = NULL;
    size_t cut_len = 0;
    for (int g = 0; g < GROWN; g++) {
        int i = g * (RUNS / GROWN) + 3;
        snprintf(name, sizeof name, "more%05d", i);
        char *more = write_run(scratch, name, i, STEPS, STEPS + MORE);
        size_t n;
        uint8_t *b = tu_read_file(more, &n);
        assert_non_null(b);
        if (g == 0) {
            /* cut inside a record: the reader must wait at its start */
            size_t half = n / 2 + 3;
            append_bytes(files[i], b, half);
            cut_rest = malloc(n - half);
            assert_non_null(cut_rest);
            memcpy(cut_rest, b + half, n - half);
            cut_len = n - half;
        } else {
            append_bytes(files[i], b, n);
        }
        free(b);
        free(more);
    }
    for (int a = 0; a < ADDED; a++) {
        snprintf(name, sizeof name, "run%05d", RUNS + a);
        free(write_run(dir, name, RUNS + a, 0, STEPS));
    }
    assert_int_equal(tfb_loader_pass(l), 0);
    assert_int_equal(tfb_store_run_count(st), RUNS + ADDED);
    for (int i = 0; i < RUNS + ADDED; i++) {
        if (i == 3)
            continue; /* the cut one, below */
        snprintf(name, sizeof name, "run%05d", i);
        int grown = i < RUNS && i % (RUNS / GROWN) == 3;
        check_run(st, i, name, grown ? STEPS + MORE : STEPS);
    }
    /* the cut run: what came whole so far, nothing twice */
    tfb_run *cut = tfb_store_find_run(st, "run00003");
    tfb_series *s0 = tfb_run_find_series(cut, TFB_SERIES_SCALAR, "tag0/t");
    size_t partial = tfb_series_count(s0);
    assert_true(partial >= STEPS && partial < STEPS + MORE);
    /* the records count goes on from the first pass's, never restarts */
    assert_true(records_of(st, "run00003") > records_of(st, "run00000"));
    assert_int_equal(records_of(st, "run00000"), rec0);

    append_bytes(files[3], cut_rest, cut_len);
    assert_int_equal(tfb_loader_pass(l), 0);
    check_run(st, 3, "run00003", STEPS + MORE);
    for (int i = 0; i < RUNS; i += 97) {
        snprintf(name, sizeof name, "run%05d", i);
        int grown = i % (RUNS / GROWN) == 3;
        check_run(st, i, name, grown ? STEPS + MORE : STEPS);
    }
    tfb_store_progress(st, &p);
    assert_int_equal(p.profile.passes, 3);
    assert_int_equal(p.profile.files, 3 * RUNS + 2 * ADDED);

    tfb_loader_stop(l);
    tfb_store_destroy(st);
    for (int i = 0; i < RUNS; i++)
        free(files[i]);
    free(files);
    free(cut_rest);
    tu_rmtree(dir);
    tu_rmtree(scratch);
    free(dir);
    free(scratch);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(many_runs_reload),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
