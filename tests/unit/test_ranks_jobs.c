/*
 * test_ranks_jobs.c - the ranks plugin between the store and the analysis
 * (server/analysis/ranks_jobs.h): jobs from rank records and rank-N
 * directories, empty rank directories, and each rank's steps joined from
 * its three series. The store is filled through its writer side, as the
 * loader fills it.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "analysis/ranks_jobs.h"
#include "store/store.h"
#include "test_util.h"
#include "tfboard.h"

/* A rank record's TensorProto: dtype DT_STRING (7), string_val = text. */
static void put_rank(tfb_run *r, const char *job, int rank, int world)
{
    char text[256];
    int n = snprintf(text, sizeof text,
                     "version=1\njob=%s\nrank=%d\nworld_size=%d\n"
                     "local_rank=-1\nhost=h%d\n",
                     job, rank, world, rank);
    uint8_t t[300];
    size_t k = 0;
    t[k++] = 0x08; /* field 1, varint */
    t[k++] = 7;
    t[k++] = 0x42; /* field 8, length-delimited */
    t[k++] = (uint8_t)n;
    memcpy(t + k, text, (size_t)n);
    k += (size_t)n;
    assert_int_equal(tfb_run_put_record(r, TFB_RANK_PLUGIN,
                                        strlen(TFB_RANK_PLUGIN), TFB_RANK_TAG,
                                        strlen(TFB_RANK_TAG), 0, 1.0, "", 0,
                                        t, k),
                     0);
}

static tfb_run *run_of(tfb_store *s, const char *name)
{
    tfb_run *r;
    assert_int_equal(tfb_store_get_run(s, name, &r), 0);
    return r;
}

static tfb_series *scalar(tfb_run *r, const char *tag)
{
    tfb_series *s;
    assert_int_equal(tfb_run_get_series(r, TFB_SERIES_SCALAR, tag,
                                        strlen(tag), "scalars", 7, "", 0, "",
                                        0, &s),
                     0);
    return s;
}

static void test_jobs(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp();
    char p[1024];
    /* On disk: the rank directories (empty ones are found there). */
    const char *dirs[] = {"ddp", "ddp/rank-00000", "ddp/rank-00001",
                          "ddp/rank-00002", "ddp/rank-00007",
                          "old",  "old/rank-3",     "old/rank-10",
                          "plain"};
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, dirs[i]);
        assert_int_equal(mkdir(p, 0755), 0);
    }
    tfb_store *s;
    assert_int_equal(tfb_store_create(&s, dir), 0);
    /* ddp: ranks 1 and 0 with records; rank-00002 without one joins its
     * siblings' job with the rank from its name; rank-00007 holds nothing. */
    put_rank(run_of(s, "ddp/rank-00001"), "ddp", 1, 4);
    put_rank(run_of(s, "ddp/rank-00000"), "ddp", 0, 4);
    run_of(s, "ddp/rank-00002");
    /* A rank of job ddp written elsewhere still joins it. */
    put_rank(run_of(s, "elsewhere/node3"), "ddp", 3, 4);
    /* old: rank-N directories only, named by their parent. */
    run_of(s, "old/rank-10");
    run_of(s, "old/rank-3");
    /* Not a rank. */
    run_of(s, "plain");
    run_of(s, "rank-x");

    assert_true(tfb_ranks_run_is_rank(tfb_store_find_run(s, "old/rank-3")));
    assert_true(
        tfb_ranks_run_is_rank(tfb_store_find_run(s, "elsewhere/node3")));
    assert_false(tfb_ranks_run_is_rank(tfb_store_find_run(s, "plain")));
    assert_false(tfb_ranks_run_is_rank(tfb_store_find_run(s, "rank-x")));

    tfb_ranks_job *jobs;
    size_t nj;
    assert_int_equal(tfb_ranks_find_jobs(s, &jobs, &nj), 0);
    assert_int_equal(nj, 2);
    assert_string_equal(jobs[0].name, "ddp");
    assert_string_equal(jobs[1].name, "old");
    const tfb_ranks_job *d = &jobs[0];
    assert_int_equal(d->n_members, 4);
    static const char *const want[] = {"ddp/rank-00000", "ddp/rank-00001",
                                       "ddp/rank-00002", "elsewhere/node3"};
    for (int i = 0; i < 4; i++) {
        assert_string_equal(d->members[i].run_name, want[i]);
        assert_int_equal(d->members[i].rank, i);
        assert_int_equal(d->members[i].world_size, i == 2 ? 0 : 4);
        assert_int_equal(d->members[i].has_record, i != 2);
    }
    assert_string_equal(d->members[3].host, "h3");
    assert_int_equal(d->n_empty_dirs, 1);
    assert_string_equal(d->empty_dirs[0], "ddp/rank-00007");
    char note[512];
    tfb_ranks_empty_dir_note(d, 0, note, sizeof note);
    assert_non_null(strstr(note, "ddp/rank-00007 holds no event file"));
    const tfb_ranks_job *o = &jobs[1];
    assert_int_equal(o->n_members, 2);
    assert_int_equal(o->members[0].rank, 3); /* by number, not by name */
    assert_int_equal(o->members[1].rank, 10);
    assert_int_equal(o->n_empty_dirs, 0);
    assert_ptr_equal(tfb_ranks_job_find(jobs, nj, "old"), o);
    assert_null(tfb_ranks_job_find(jobs, nj, "nope"));
    assert_ptr_equal(tfb_ranks_job_of_run(jobs, nj,
                                          tfb_store_find_run(s, "old/rank-3")),
                     o);
    assert_null(
        tfb_ranks_job_of_run(jobs, nj, tfb_store_find_run(s, "plain")));
    tfb_ranks_jobs_free(jobs, nj);
    tfb_store_destroy(s);
    tu_rmtree(dir);
    free(dir);
}

static void test_collect(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp();
    tfb_store *s;
    assert_int_equal(tfb_store_create(&s, dir), 0);
    tfb_run *r = run_of(s, "rank-00000");
    tfb_ranks_step *st;
    size_t n;
    /* No step_ms: nothing. */
    assert_int_equal(tfb_ranks_collect(r, &st, &n), 0);
    assert_int_equal(n, 0);
    assert_null(st);
    tfb_series *sm = scalar(r, TFB_TAG_STEP_MS);
    tfb_series *im = scalar(r, TFB_TAG_INPUT_MS);
    tfb_series *cm = scalar(r, TFB_TAG_COMM_MS);
    for (int i = 0; i < 5; i++)
        assert_int_equal(
            tfb_series_append_scalar(sm, i, 100.0 + i, 10.0 + i), 0);
    /* input: out of order, step 2 missing, step 3 logged twice. */
    assert_int_equal(tfb_series_append_scalar(im, 4, 0, 4.0), 0);
    assert_int_equal(tfb_series_append_scalar(im, 0, 0, 0.5), 0);
    assert_int_equal(tfb_series_append_scalar(im, 3, 0, 3.0), 0);
    assert_int_equal(tfb_series_append_scalar(im, 1, 0, 1.0), 0);
    assert_int_equal(tfb_series_append_scalar(im, 3, 0, 3.5), 0);
    /* comm: in order, only from step 2. */
    for (int i = 2; i < 5; i++)
        assert_int_equal(tfb_series_append_scalar(cm, i, 0, 0.25 * i), 0);
    assert_int_equal(tfb_ranks_collect(r, &st, &n), 0);
    assert_int_equal(n, 5);
    static const double input[] = {0.5, 1.0, NAN, 3.5, 4.0};
    for (int i = 0; i < 5; i++) {
        assert_int_equal(st[i].step, i);
        assert_true(st[i].step_ms == 10.0 + i);
        assert_true(st[i].wall_end == 100.0 + i);
        if (isnan(input[i]))
            assert_true(isnan(st[i].input_ms));
        else
            assert_true(st[i].input_ms == input[i]);
        if (i < 2)
            assert_true(isnan(st[i].comm_ms));
        else
            assert_true(st[i].comm_ms == 0.25 * i);
    }
    free(st);
    tfb_store_destroy(s);
    tu_rmtree(dir);
    free(dir);
}

/* The job analysis through the store, and the sentence. */
static void test_analyze_and_sentence(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp();
    tfb_store *s;
    assert_int_equal(tfb_store_create(&s, dir), 0);
    for (int rk = 0; rk < 4; rk++) {
        char name[64];
        snprintf(name, sizeof name, "j/rank-%05d", rk);
        tfb_run *r = run_of(s, name);
        put_rank(r, "j", rk, 4);
        tfb_series *sm = scalar(r, TFB_TAG_STEP_MS);
        tfb_series *cm = scalar(r, TFB_TAG_COMM_MS);
        for (int i = 0; i < 40; i++) {
            /* Rank 2 computes 10 ms, the others 8; all steps take 12. */
            double own = rk == 2 ? 10.0 : 8.0;
            assert_int_equal(tfb_series_append_scalar(sm, i, 1.0 + i, 12.0),
                             0);
            assert_int_equal(
                tfb_series_append_scalar(cm, i, 1.0 + i, 12.0 - own), 0);
        }
    }
    tfb_ranks_job *jobs;
    size_t nj;
    assert_int_equal(tfb_ranks_find_jobs(s, &jobs, &nj), 0);
    assert_int_equal(nj, 1);
    tfb_ranks_result *res;
    assert_int_equal(tfb_ranks_job_analyze(&jobs[0], NULL, &res), 0);
    assert_int_equal(res->n_stragglers, 1);
    assert_int_equal(res->ranks[res->stragglers[0]].rank, 2);
    char buf[256];
    tfb_ranks_straggler_sentence(res, 0, buf, sizeof buf);
    /* 10 / 8 - 1 = 25 %; the others spend 4 of 12 ms in comm = 33 %. */
    assert_string_equal(buf, "rank 2 is 25 % slower than the median rank; "
                             "the other ranks spend 33 % of each step "
                             "waiting in communication");
    tfb_ranks_straggler_sentence(res, 5, buf, sizeof buf);
    assert_string_equal(buf, "");
    tfb_ranks_result_free(res);
    tfb_ranks_jobs_free(jobs, nj);
    tfb_store_destroy(s);
    tu_rmtree(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_jobs),
        cmocka_unit_test(test_collect),
        cmocka_unit_test(test_analyze_and_sentence),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
