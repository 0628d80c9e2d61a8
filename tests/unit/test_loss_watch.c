/*
 * test_loss_watch.c - the loss watch the store keeps for each loss series
 * (analysis/loss_watch.h, analysis/loss_tags.h, tfb_series_loss_watch):
 *  - its spikes and blow-up figures equal a detector fed every point
 *    directly, whether the points are sealed in blocks, still in the tail
 *    or trimmed, and after a reset (file replaced) the watch starts over;
 *  - tfb_spike_detector_push_n gives exactly what point-by-point pushes
 *    give (spikes and state);
 *  - which tags are losses: the default, a configured regex, "" (none), a
 *    bad regex (refused, the setting kept);
 *  - a reader takes snapshots while the loader appends (ThreadSanitizer
 *    checks the locking in the tsan pass).
 */
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "analysis/loss_tags.h"
#include "analysis/loss_watch.h"
#include "store/store.h"
#include "tfboard.h"
#include "test_util.h"

/* A noisy falling loss with spikes (one recovers, one diverges to NaN
 * late) and a blow-up from `blow` on when blow > 0. */
static double loss_at(int t, int blow)
{
    double x =
        (2 * exp(-t / 700.0) + 0.3) * (1 + 0.03 * (tu_uniform() - 0.5));
    if (t == 900 || t == 2400)
        x *= 4;
    if (blow && t >= blow)
        x *= pow(1.05, t - blow);
    if (t == 4990)
        x = NAN;
    return x;
}

static tfb_series *series_of(tfb_store *st, const char *tag)
{
    tfb_run *r;
    assert_int_equal(tfb_store_get_run(st, "run", &r), 0);
    tfb_series *s;
    assert_int_equal(tfb_run_get_series(r, TFB_SERIES_SCALAR, tag,
                                        strlen(tag), "scalars", 7, NULL, 0,
                                        NULL, 0, &s), 0);
    return s;
}

static void same_spikes(const tfb_spike_detector *a,
                        const tfb_spike_detector *b)
{
    assert_int_equal(a->spikes.n, b->spikes.n);
    for (size_t i = 0; i < a->spikes.n; i++) {
        const tfb_spike *x = &a->spikes.v[i], *y = &b->spikes.v[i];
        assert_true(x->step == y->step && x->state == y->state &&
                    x->end_step == y->end_step &&
                    x->peak_step == y->peak_step);
        assert_true(x->value == y->value && x->level == y->level &&
                    x->z == y->z);
    }
    assert_true(a->points == b->points);
}

/* The watch through the store, at every stage, against a detector fed
 * each point as the charts show it (rounded to float). */
static void watch_matches_a_direct_detector(void **state)
{
    (void)state;
    assert_int_equal(tfb_loss_tags_configure(NULL), 0);
    tfb_store *st;
    assert_int_equal(tfb_store_create(&st, "/nonexistent"), 0);
    tfb_series *s = series_of(st, "train/loss");
    tfb_spike_detector ref;
    tfb_spike_detector_init(&ref, NULL);
    const size_t checks[] = {10, 255, 256, 700, 1500, 3001, 5000};
    size_t c = 0;
    for (int t = 0; t < 5000; t++) {
        double x = loss_at(t, 0);
        assert_int_equal(tfb_series_append_scalar(s, t, 1.7e9 + t, x), 0);
        assert_int_equal(tfb_spike_detector_push(&ref, t, (float)x), 0);
        if ((size_t)t + 1 == checks[c]) {
            if (c % 2)
                tfb_series_trim(s); /* sealed, short last block */
            tfb_loss_watch w;
            assert_int_equal(tfb_series_loss_watch(s, &w), 0);
            same_spikes(&w.det, &ref);
            tfb_loss_watch_free(&w);
            c++;
        }
    }
    tfb_loss_watch w;
    assert_int_equal(tfb_series_loss_watch(s, &w), 0);
    assert_int_equal(w.det.spikes.n, 2);
    assert_int_equal(w.det.spikes.v[0].step, 900);
    assert_int_equal(w.det.spikes.v[0].state, TFB_SPIKE_RECOVERED);
    int64_t at;
    assert_int_equal(tfb_loss_watch_blew_up(&w, &at), 0);
    tfb_loss_watch_free(&w);
    tfb_spike_detector_free(&ref);

    /* A reset (the file replaced) starts the watch over: a blow-up in
     * the new points is the only thing it knows. */
    tfb_run_reset(tfb_series_run(s));
    assert_int_equal(tfb_series_loss_watch(s, &w), 0);
    assert_int_equal(w.det.spikes.n, 0);
    assert_true(w.det.points == 0);
    tfb_loss_watch_free(&w);
    for (int t = 0; t < 400; t++)
        assert_int_equal(tfb_series_append_scalar(s, t, 1.7e9 + t,
                                                  loss_at(t, 100)), 0);
    tfb_series_trim(s);
    assert_int_equal(tfb_series_loss_watch(s, &w), 0);
    assert_int_equal(tfb_loss_watch_blew_up(&w, &at), 1);
    assert_int_equal(at, 399);
    assert_true(w.det.points == 400);
    tfb_loss_watch_free(&w);
    /* not a loss: no watch */
    assert_int_equal(tfb_series_loss_watch(series_of(st, "accuracy"), &w),
                     TFB_ENOENT);
    tfb_store_destroy(st);
}

/* push_n and n pushes: the same spikes and the same state after, on
 * curves with spikes, a flat stretch, non-finite points and a late
 * divergence, in batches of every size. */
static void push_n_equals_pushes(void **state)
{
    (void)state;
    enum { N = 6000 };
    static int64_t step[N];
    static float x[N];
    for (int t = 0; t < N; t++) {
        step[t] = t;
        x[t] = (float)loss_at(t % 5000, t > 5500 ? 5500 : 0);
        if (t > 3000 && t < 3100)
            x[t] = 0.5f; /* flat: a zero MAD */
        if (t == 3500)
            x[t] = INFINITY;
        if (t == 3600)
            x[t] = -INFINITY;
    }
    const size_t batch[] = {1, 2, 63, 64, 65, 256, 1000, N};
    for (size_t b = 0; b < sizeof batch / sizeof batch[0]; b++) {
        tfb_spike_detector one, many;
        tfb_spike_detector_init(&one, NULL);
        tfb_spike_detector_init(&many, NULL);
        for (int t = 0; t < N; t++)
            assert_int_equal(tfb_spike_detector_push(&one, t, x[t]), 0);
        for (size_t at = 0; at < N; at += batch[b]) {
            size_t k = N - at < batch[b] ? N - at : batch[b];
            assert_int_equal(tfb_spike_detector_push_n(&many, step + at,
                                                       x + at, k), 0);
        }
        same_spikes(&one, &many);
        assert_true(one.spikes.n >= 2);
        assert_true(one.m == many.m && one.mad_scale == many.mad_scale);
        assert_true(one.di == many.di && one.vi == many.vi &&
                    one.stale == many.stale && one.dead == many.dead);
        assert_memory_equal(one.diffs, many.diffs, sizeof one.diffs);
        assert_memory_equal(one.vals, many.vals, sizeof one.vals);
        tfb_spike_detector_free(&one);
        tfb_spike_detector_free(&many);
    }
}

/* The blow-up scan skips non-finite values: a +inf or NaN first is
 * neither the first value nor the smallest positive one. */
static void blow_up_skips_non_finite(void **state)
{
    (void)state;
    tfb_loss_watch w;
    tfb_loss_watch_init(&w);
    int64_t st[300];
    double v[300];
    for (int i = 0; i < 300; i++) {
        st[i] = i;
        v[i] = 1 + i * 10.0; /* 1 .. 2991 */
    }
    v[0] = INFINITY;
    v[1] = NAN;
    v[2] = 1;
    assert_int_equal(tfb_loss_watch_push(&w, st, v, 300), 0);
    assert_true(w.first == 1 && w.min == 1 && w.last == 2991);
    int64_t at;
    assert_int_equal(tfb_loss_watch_blew_up(&w, &at), 1);
    assert_int_equal(at, 299);
    tfb_loss_watch_free(&w);
}

static void which_tags_are_losses(void **state)
{
    (void)state;
    assert_int_equal(tfb_loss_tags_configure(NULL), 0);
    assert_true(tfb_loss_tag("train/Loss", 10));
    assert_false(tfb_loss_tag("accuracy", 8));
    assert_true(tfb_loss_tag("train/Loss", 10)); /* kept answer */
    assert_int_equal(tfb_loss_tags_configure("^(train|val)/nll$"), 0);
    assert_false(tfb_loss_tag("train/Loss", 10));
    assert_true(tfb_loss_tag("val/nll", 7));
    assert_false(tfb_loss_tag("val/nll2", 8));
    /* a bad regex is refused and the setting stays */
    assert_int_equal(tfb_loss_tags_configure("(unclosed"), TFB_EINVAL);
    assert_true(tfb_loss_tag("val/nll", 7));
    /* "": no tag is a loss, so a store watches nothing */
    assert_int_equal(tfb_loss_tags_configure(""), 0);
    assert_false(tfb_loss_tag("loss", 4));
    tfb_store *st;
    assert_int_equal(tfb_store_create(&st, "/nonexistent"), 0);
    tfb_loss_watch w;
    assert_int_equal(tfb_series_loss_watch(series_of(st, "loss"), &w),
                     TFB_ENOENT);
    tfb_store_destroy(st);
    assert_int_equal(tfb_loss_tags_configure(NULL), 0);
    tfb_loss_tags_forget();
}

typedef struct race {
    tfb_series *s;
    _Atomic int done;
} race;

static void *reader(void *arg)
{
    race *r = arg;
    uint64_t last = 0;
    while (!r->done) {
        tfb_loss_watch w;
        if (tfb_series_loss_watch(r->s, &w) == 0) {
            /* snapshots never go back */
            if (w.det.points < last)
                return (void *)1;
            last = w.det.points;
            tfb_loss_watch_free(&w);
        }
    }
    return NULL;
}

static void snapshots_while_loading(void **state)
{
    (void)state;
    assert_int_equal(tfb_loss_tags_configure(NULL), 0);
    tfb_store *st;
    assert_int_equal(tfb_store_create(&st, "/nonexistent"), 0);
    race r = {series_of(st, "loss"), 0};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, reader, &r), 0);
    for (int t = 0; t < 20000; t++) {
        assert_int_equal(tfb_series_append_scalar(r.s, t, 1.7e9 + t,
                                                  loss_at(t % 4000, 0)), 0);
        if (t % 3000 == 0)
            tfb_series_trim(r.s);
    }
    r.done = 1;
    void *bad;
    pthread_join(th, &bad);
    assert_null(bad);
    tfb_loss_watch w;
    assert_int_equal(tfb_series_loss_watch(r.s, &w), 0);
    assert_true(w.det.points == 20000);
    tfb_loss_watch_free(&w);
    tfb_store_destroy(st);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(watch_matches_a_direct_detector),
        cmocka_unit_test(push_n_equals_pushes),
        cmocka_unit_test(blow_up_skips_non_finite),
        cmocka_unit_test(which_tags_are_losses),
        cmocka_unit_test(snapshots_while_loading),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
