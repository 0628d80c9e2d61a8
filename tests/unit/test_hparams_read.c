/*
 * test_hparams_read.c - the server's read side of hparams (issue 12):
 * libtfboard's tfb_hparams records read back through the store into typed
 * values; the experiment over all runs; malformed content is counted, not
 * fatal; run groups (regex and hparam) with the stated alignment rule on
 * hand-made runs with unaligned steps and a NaN in one seed; a sub-run's
 * metric found in its parent run (PyTorch's add_hparams layout).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/hparams_analysis.h"
#include "plugins/hparams/hparams_groups.h"
#include "store/loader.h"
#include "store/store.h"
#include "tfboard.h"
#include "test_util.h"

static tfb_writer *open_run(const char *dir, const char *name)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    tfb_writer_opts o;
    tfb_writer_opts_init(&o);
    tfb_writer *w;
    assert_int_equal(tfb_writer_open(&w, path, &o), 0);
    return w;
}

static tfb_store *load(const char *dir)
{
    tfb_store *st;
    assert_int_equal(tfb_store_create(&st, dir), 0);
    tfb_loader *l;
    tfb_loader_opts lo = {0, 1, NULL};
    assert_int_equal(tfb_loader_create(&l, st, &lo), 0);
    assert_int_equal(tfb_loader_pass(l), 0);
    tfb_loader_stop(l);
    return st;
}

static void ours_read_back(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp();
    tfb_writer *w = open_run(dir, "a");
    tfb_hparam hp[] = {
        {.size = sizeof(tfb_hparam), .name = "lr", .type = TFB_HPARAM_NUMBER, .number = 0.125},
        {.size = sizeof(tfb_hparam), .name = "act", .type = TFB_HPARAM_STRING, .str = "relu"},
        {.size = sizeof(tfb_hparam), .name = "bn", .type = TFB_HPARAM_BOOL, .boolean = 0},
    };
    const char *metrics[] = {"loss"};
    assert_int_equal(tfb_hparams_with_metrics(w, hp, 3, metrics, 1), 0);
    for (int i = 0; i < 5; i++)
        assert_int_equal(tfb_scalar(w, "loss", 5.0 - i, i), 0);
    assert_int_equal(tfb_hparams_end(w, TFB_HPARAMS_FAILURE), 0);
    assert_int_equal(tfb_writer_close(w), 0);
    /* a run without hparams */
    w = open_run(dir, "b");
    assert_int_equal(tfb_scalar(w, "loss", 1.0, 0), 0);
    assert_int_equal(tfb_writer_close(w), 0);

    tfb_store *st = load(dir);
    tfb_run *a = tfb_store_find_run(st, "a"), *b = tfb_store_find_run(st, "b");
    assert_non_null(a);
    assert_non_null(b);
    assert_int_equal(tfb_run_has_hparams(st, a), 1);
    assert_int_equal(tfb_run_has_hparams(st, b), 0);

    tfb_hparams_set h;
    assert_int_equal(tfb_run_hparams(st, a, &h), 0);
    assert_true(h.has_start && h.has_end && h.has_experiment);
    assert_int_equal(h.n_bad, 0);
    assert_int_equal(h.n_hparams, 3);
    const tfb_hparam_value *v = tfb_hparams_find(&h, "lr");
    assert_non_null(v);
    assert_int_equal(v->kind, TFB_HPV_NUMBER);
    assert_true(v->number == 0.125);
    v = tfb_hparams_find(&h, "act");
    assert_int_equal(v->kind, TFB_HPV_STRING);
    assert_string_equal(v->str, "relu");
    v = tfb_hparams_find(&h, "bn");
    assert_int_equal(v->kind, TFB_HPV_BOOL);
    assert_int_equal(v->boolean, 0);
    assert_null(tfb_hparams_find(&h, "nope"));
    assert_int_equal(h.status, TFB_HPS_FAILURE);
    assert_false(isnan(h.start_time));
    assert_false(isnan(h.end_time));
    assert_int_equal(h.n_infos, 3);
    assert_string_equal(h.infos[0].name, "lr");
    assert_int_equal(h.infos[0].type, 3);
    assert_int_equal(h.infos[1].type, 1);
    assert_int_equal(h.infos[2].type, 2);
    assert_int_equal(h.n_metrics, 1);
    assert_string_equal(h.metrics[0].tag, "loss");
    tfb_hparams_set_free(&h);

    assert_int_equal(tfb_run_hparams(st, b, &h), 0);
    assert_false(h.has_start || h.has_end || h.has_experiment);
    tfb_hparams_set_free(&h);

    tfb_hparams_experiment e;
    assert_int_equal(tfb_hparams_experiment_get(st, &e), 0);
    assert_int_equal(e.n_runs, 1);
    assert_int_equal(e.n_experiments, 1);
    assert_int_equal(e.n_columns, 3);
    assert_string_equal(e.columns[0].name, "lr");
    assert_int_equal(e.columns[0].n_values, 1);
    assert_true(e.columns[0].min_seen == 0.125);
    assert_int_equal(e.n_metrics, 1);
    tfb_hparams_experiment_free(&e);

    tfb_metric_summary m;
    assert_int_equal(tfb_run_metric_summary(st, a, "loss", &m), 0);
    assert_int_equal(m.count, 5);
    assert_true(m.last == 1.0 && m.min == 1.0 && m.max == 5.0);
    assert_int_equal(m.last_step, 4);
    assert_int_equal(tfb_run_metric_summary(st, a, "nope", &m), TFB_ENOENT);

    tfb_store_destroy(st);
    tu_rmtree(dir);
    free(dir);
}

static void decode_rejects_garbage(void **state)
{
    (void)state;
    tfb_hparams_set h;
    memset(&h, 0, sizeof h);
    h.start_time = h.end_time = h.exp_time_created = NAN;
    /* truncated length */
    const uint8_t bad1[] = {0x1a, 0x10, 0x0a};
    assert_int_equal(tfb_hparams_decode(bad1, sizeof bad1, &h), TFB_EINVAL);
    /* no part at all: only version */
    const uint8_t bad2[] = {0x08, 0x00};
    assert_int_equal(tfb_hparams_decode(bad2, sizeof bad2, &h), TFB_EINVAL);
    /* session_start_info with a map entry whose value has a wrong wire
     * type for number_value (varint instead of fixed64) */
    const uint8_t bad3[] = {0x1a, 0x09, 0x0a, 0x07, 0x0a, 0x01, 'x',
                            0x12, 0x02, 0x10, 0x01};
    assert_int_equal(tfb_hparams_decode(bad3, sizeof bad3, &h), TFB_EINVAL);
    assert_false(h.has_start);
    /* the same entry done right: x = true */
    const uint8_t good[] = {0x1a, 0x09, 0x0a, 0x07, 0x0a, 0x01, 'x',
                            0x12, 0x02, 0x20, 0x01};
    assert_int_equal(tfb_hparams_decode(good, sizeof good, &h), 0);
    assert_true(h.has_start);
    assert_int_equal(h.n_hparams, 1);
    assert_int_equal(h.hparams[0].value.kind, TFB_HPV_BOOL);
    assert_string_equal(h.group_name, "");
    tfb_hparams_set_free(&h);
}

/* One run: name, hparams lr/seed, loss points (steps, values). */
static void group_run(const char *dir, const char *name, double lr, int seed,
                      const int64_t *steps, const double *vals, size_t n)
{
    tfb_writer *w = open_run(dir, name);
    tfb_hparam hp[] = {
        {.size = sizeof(tfb_hparam), .name = "lr", .type = TFB_HPARAM_NUMBER, .number = lr},
        {.size = sizeof(tfb_hparam), .name = "seed", .type = TFB_HPARAM_NUMBER, .number = seed},
    };
    assert_int_equal(tfb_hparams(w, hp, 2), 0);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(tfb_scalar(w, "loss", vals[i], steps[i]), 0);
    assert_int_equal(tfb_writer_close(w), 0);
}

static void check_point(const tfb_group_point *p, int64_t step, double mean,
                        double mn, double mx, double sd, unsigned n,
                        unsigned nonfinite)
{
    assert_int_equal(p->step, step);
    assert_int_equal(p->n, n);
    assert_int_equal(p->nonfinite, nonfinite);
    assert_true(fabs(p->mean - mean) < 1e-12);
    assert_true(fabs(p->min - mn) < 1e-12);
    assert_true(fabs(p->max - mx) < 1e-12);
    assert_true(fabs(p->std - sd) < 1e-12);
}

static void check_groups(const tfb_run_groups *g)
{
    assert_int_equal(g->n_groups, 2);
    const tfb_run_group *a = &g->groups[0], *b = &g->groups[1];
    assert_string_equal(a->key, "0.1");
    assert_string_equal(b->key, "0.2");
    assert_int_equal(a->runs.n, 2);
    assert_int_equal(b->runs.n, 1);
    /* group 0.1: seed 1 at steps 0,10,20 (1,2,3); seed 2 at 5,15 (10,NaN).
     * Grid = union {0,5,10,15,20}; carry forward within each run's span. */
    assert_int_equal(a->n_points, 5);
    check_point(&a->points[0], 0, 1, 1, 1, 0, 1, 0);      /* seed 2 not started */
    check_point(&a->points[1], 5, 5.5, 1, 10, 4.5, 2, 0); /* seed 1 carried */
    check_point(&a->points[2], 10, 6, 2, 10, 4, 2, 0);    /* seed 2 carried */
    check_point(&a->points[3], 15, 2, 2, 2, 0, 1, 1);     /* NaN left out */
    check_point(&a->points[4], 20, 3, 3, 3, 0, 1, 0);     /* seed 2 ended */
    assert_int_equal(b->n_points, 2);
    check_point(&b->points[0], 0, 4, 4, 4, 0, 1, 0);
    check_point(&b->points[1], 10, 5, 5, 5, 0, 1, 0);
}

static void groups_rule(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp();
    group_run(dir, "lr=0.1,seed=1", 0.1, 1, (int64_t[]){0, 10, 20},
              (double[]){1, 2, 3}, 3);
    group_run(dir, "lr=0.1,seed=2", 0.1, 2, (int64_t[]){5, 15},
              (double[]){10, NAN}, 2);
    group_run(dir, "lr=0.2,seed=1", 0.2, 1, (int64_t[]){0, 10},
              (double[]){4, 5}, 2);
    group_run(dir, "other", 0.3, 1, (int64_t[]){0}, (double[]){7}, 1);
    /* a run without hparams and without the tag's pattern */
    tfb_writer *w = open_run(dir, "nohp");
    assert_int_equal(tfb_scalar(w, "loss", 9, 0), 0);
    assert_int_equal(tfb_writer_close(w), 0);
    tfb_store *st = load(dir);

    tfb_run_groups g;
    char err[200];
    assert_int_equal(tfb_run_groups_compute(st, "loss", "regex:lr=([0-9.]+)",
                                            NULL, 0, &g, err, sizeof err),
                     0);
    check_groups(&g);
    assert_int_equal(g.n_left_out, 2); /* other, nohp */
    tfb_run_groups_free(&g);

    /* by hparam: same groups, restricted to the named runs */
    const char *only[] = {"lr=0.1,seed=1", "lr=0.1,seed=2", "lr=0.2,seed=1",
                          "nohp"};
    assert_int_equal(tfb_run_groups_compute(st, "loss", "hparam:lr", only, 4,
                                            &g, err, sizeof err),
                     0);
    check_groups(&g);
    assert_int_equal(g.n_left_out, 1); /* nohp has no lr */
    tfb_run_groups_free(&g);

    /* a pattern without a capture group: the whole match is the key */
    assert_int_equal(tfb_run_groups_compute(st, "loss", "regex:seed=[0-9]",
                                            NULL, 0, &g, err, sizeof err),
                     0);
    assert_int_equal(g.n_groups, 2);
    assert_string_equal(g.groups[0].key, "seed=1");
    assert_int_equal(g.groups[0].runs.n, 2);
    tfb_run_groups_free(&g);

    assert_int_equal(tfb_run_groups_compute(st, "loss", "regex:(", NULL, 0,
                                            &g, err, sizeof err),
                     TFB_EINVAL);
    assert_non_null(strstr(err, "regex"));
    tfb_run_groups_free(&g);
    assert_int_equal(tfb_run_groups_compute(st, "loss", "seed", NULL, 0, &g,
                                            err, sizeof err),
                     TFB_EINVAL);
    tfb_run_groups_free(&g);
    /* a tag nobody has: no groups */
    assert_int_equal(tfb_run_groups_compute(st, "nope", "hparam:lr", NULL, 0,
                                            &g, err, sizeof err),
                     0);
    assert_int_equal(g.n_groups, 0);
    tfb_run_groups_free(&g);

    tfb_store_destroy(st);
    tu_rmtree(dir);
    free(dir);
}

/* PyTorch: hparams in <run>/<time>, the training curve in <run>. */
static void metric_from_parent(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp();
    tfb_writer *w = open_run(dir, "exp1");
    for (int i = 0; i < 3; i++)
        assert_int_equal(tfb_scalar(w, "loss", 3.0 - i, i), 0);
    assert_int_equal(tfb_writer_close(w), 0);
    w = open_run(dir, "exp1/1700000000.5");
    tfb_hparam hp[] = {{.size = sizeof(tfb_hparam), .name = "lr", .type = TFB_HPARAM_NUMBER, .number = 1}};
    assert_int_equal(tfb_hparams(w, hp, 1), 0);
    assert_int_equal(tfb_scalar(w, "hparam/acc", 0.9, 0), 0);
    assert_int_equal(tfb_writer_close(w), 0);
    tfb_store *st = load(dir);
    tfb_run *sub = tfb_store_find_run(st, "exp1/1700000000.5");
    assert_non_null(sub);
    tfb_metric_summary m;
    assert_int_equal(tfb_run_metric_summary(st, sub, "loss", &m), 0);
    assert_string_equal(m.run, "exp1");
    assert_true(m.last == 1.0);
    assert_int_equal(tfb_run_metric_summary(st, sub, "hparam/acc", &m), 0);
    assert_string_equal(m.run, "exp1/1700000000.5");
    tfb_store_destroy(st);
    tu_rmtree(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ours_read_back),
        cmocka_unit_test(decode_rejects_garbage),
        cmocka_unit_test(groups_rule),
        cmocka_unit_test(metric_from_parent),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
