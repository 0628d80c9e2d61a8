/*
 * test_alerts_feed.c - an evaluation of many runs at once
 * (plugins/alerts/alerts_feed.h): enough runs that the evaluation works
 * them out on several threads (at least 64, on a machine with more than
 * one core), and still each run's spike is logged once, in the store's
 * run order, at its own step, with the wall time logged at that step
 * (step_wall) for the first TFB_ALERTS_STEP_WALL_LOOKUPS events of the
 * pass and none past them (the bound); a second evaluation with nothing
 * new logs nothing.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "analysis/run_status.h"
#include "store/store.h"
#include "plugins/alerts/alerts_feed.h"
#include "tfboard.h"
#include "test_util.h"

enum { RUNS = 200, STEPS = 300 };

static void many_runs_log_in_run_order(void **state)
{
    (void)state;
    assert_int_equal(tfb_run_status_configure(TFB_STALL_AFTER_DEFAULT, NULL),
                     0);
    assert_int_equal(tfb_alerts_configure(NULL, 0, 50), 0);
    tfb_alerts_reset();
    tfb_store *st;
    assert_int_equal(tfb_store_create(&st, "/nonexistent"), 0);
    for (int r = 0; r < RUNS; r++) {
        char name[32];
        snprintf(name, sizeof name, "run%03d", r);
        tfb_run *run;
        assert_int_equal(tfb_store_get_run(st, name, &run), 0);
        tfb_series *s;
        assert_int_equal(tfb_run_get_series(run, TFB_SERIES_SCALAR, "loss",
                                            4, "scalars", 7, NULL, 0, NULL,
                                            0, &s), 0);
        for (int t = 0; t < STEPS; t++) {
            double x = 1 + 0.02 * (tu_uniform() - 0.5);
            if (t == 100 + r % 150) /* each run spikes at its own step */
                x *= 4;
            assert_int_equal(tfb_series_append_scalar(s, t, 1.7e9 + t, x),
                             0);
        }
        tfb_series_trim(s);
    }
    tfb_run **runs;
    size_t nr;
    assert_int_equal(tfb_store_runs(st, &runs, &nr), 0);
    assert_int_equal(nr, RUNS);
    tfb_alert_event *ev;
    size_t n;
    assert_int_equal(tfb_alerts_poll(st, 1.7e9 + STEPS, &ev, &n), 0);
    assert_int_equal(n, RUNS);
    for (size_t i = 0; i < n; i++) {
        assert_string_equal(ev[i].run, tfb_run_name(runs[i]));
        assert_string_equal(ev[i].rule, "loss_spike");
        int r = atoi(tfb_run_name(runs[i]) + 3);
        assert_int_equal(ev[i].step, 100 + r % 150);
        assert_int_equal(ev[i].fired, 1);
        assert_true(ev[i].seq == i + 1);
        if (i < TFB_ALERTS_STEP_WALL_LOOKUPS)
            assert_true(ev[i].step_wall == 1.7e9 + (double)ev[i].step);
        else
            assert_true(isnan(ev[i].step_wall));
    }
    free(ev);
    assert_int_equal(tfb_alerts_poll(st, 1.7e9 + STEPS, &ev, &n), 0);
    assert_int_equal(n, 0);
    free(ev);
    free(runs);
    tfb_alerts_reset();
    tfb_store_destroy(st);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(many_runs_log_in_run_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
