/*
 * test_precursors.c - what a loss spike's precursors say (analysis/precursors.h)
 * and which batches it lists, on runs written with libtfboard and loaded
 * into a store, spikes found by the alerts plugin's incremental detectors
 * (plugins/alerts/alerts_spikes.h):
 *  - a learning-rate change a few steps before the spike is listed;
 *  - an input-pipeline stall (pipeline/input_ms) before it is listed;
 *  - an lr schedule's steps alone (the loss falls faster at each decay)
 *    fire no spike;
 *  - the batch ids are those tfb_step_batch logged at the writer's current
 *    step (the open tfb_step_begin step, else the highest logged);
 *  - points that arrive later are read incrementally: a spike in appended
 *    data is found, the earlier one is not found twice;
 *  - the run status's blow-up rule and the spikes come from the store's
 *    loss watch, so forgetting every kept alert state changes neither;
 *  - a user rule on the loss leaves its spike as it is.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "store/loader.h"
#include "analysis/precursors.h"
#include "analysis/run_status.h"
#include "store/store.h"
#include "plugins/alerts/alerts_feed.h"
#include "plugins/alerts/alerts_rules.h"
#include "plugins/alerts/alerts_spikes.h"
#include "tfboard.h"
#include "test_util.h"

/* uniform in [-1, 1) */
static double noise(void)
{
    return 2 * tu_uniform() - 1;
}

typedef struct scenario {
    int steps;
    int spike_at;        /* the loss is 4x here (recovers next step); 0 */
    int lr_change_at;    /* lr 0.01 -> 0.1 here; 0 */
    int stall_at;        /* pipeline/input_ms 80 here (else ~2); 0 */
    int lr_decays;       /* lr / 10 and the loss 30 % down at 1/3, 2/3 */
    int pipeline;        /* steps inside tfb_step_begin .. tfb_step_end */
    int blow_up_from;    /* the loss grows 5 % a step from here; 0 */
} scenario;

static void write_run(const char *dir, const scenario *sc, int from)
{
    tfb_writer *w;
    assert_int_equal(tfb_writer_open(&w, dir, NULL), 0);
    double lr = 0.01, scale = 1;
    for (int s = from; s < from + sc->steps; s++) {
        if (sc->pipeline)
            assert_int_equal(tfb_step_begin(w, s), 0);
        char id[32];
        snprintf(id, sizeof id, s == sc->spike_at ? "bad:%d" : "ok:%d", s);
        if (sc->pipeline)
            assert_int_equal(tfb_step_batch(w, id), 0); /* the open step */
        if (sc->lr_change_at && s == sc->lr_change_at)
            lr = 0.1;
        if (sc->lr_decays && (s == sc->steps / 3 || s == 2 * sc->steps / 3)) {
            lr /= 10;
            scale *= 0.7;
        }
        double loss = scale * (1.0 + 0.01 * noise());
        if (sc->blow_up_from && s >= sc->blow_up_from)
            loss *= pow(1.05, s - sc->blow_up_from);
        if (s == sc->spike_at)
            loss *= 4;
        tfb_scalar(w, "loss", loss, s);
        if (!sc->pipeline) /* after the step's first value: this step */
            assert_int_equal(tfb_step_batch(w, id), 0);
        tfb_scalar(w, "lr", lr, s);
        tfb_scalar(w, TFB_TAG_INPUT_MS,
                   s == sc->stall_at ? 80 : 2 * (1 + 0.05 * noise()), s);
        tfb_scalar(w, "grad_norm/global", 1 + 0.05 * noise(), s);
        if (sc->pipeline)
            assert_int_equal(tfb_step_end(w), 0);
    }
    assert_int_equal(tfb_writer_close(w), 0);
}

typedef struct loaded {
    char *root;
    tfb_store *st;
    tfb_loader *l;
    tfb_run *run;
} loaded;

static void load(loaded *x)
{
    tfb_loader_opts o = {0, 1, NULL};
    /* the loss watch is the analysis layer's store observer, installed
     * with the loss tags (as the server does once its options are read) */
    assert_int_equal(tfb_loss_tags_configure(NULL), 0);
    assert_int_equal(tfb_store_create(&x->st, x->root), 0);
    assert_int_equal(tfb_loader_create(&x->l, x->st, &o), 0);
    assert_int_equal(tfb_loader_pass(x->l), 0);
    x->run = tfb_store_find_run(x->st, "r");
    assert_non_null(x->run);
}

static void unload(loaded *x)
{
    tfb_loader_stop(x->l);
    tfb_store_destroy(x->st);
    tfb_alerts_reset();
    tu_rmtree(x->root);
    free(x->root);
}

static loaded run_of(const scenario *sc)
{
    loaded x = {0};
    x.root = tu_mkdtemp();
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/r", x.root);
    write_run(dir, sc, 1);
    load(&x);
    return x;
}

static void lr_change_is_listed(void **state)
{
    (void)state;
    scenario sc = {.steps = 300, .spike_at = 205, .lr_change_at = 200};
    loaded x = run_of(&sc);
    tfb_alert_spike *sp;
    size_t n;
    assert_int_equal(tfb_alert_spikes(x.run, &sp, &n), 0);
    assert_int_equal(n, 1);
    assert_int_equal(sp[0].spike.step, 205);
    assert_int_equal(sp[0].spike.state, TFB_SPIKE_RECOVERED);
    assert_true(sp[0].pre.lr);
    assert_int_equal(sp[0].pre.lr_step, 200);
    assert_true(fabs(sp[0].pre.lr_before - 0.01) < 1e-6);
    assert_true(fabs(sp[0].pre.lr_after - 0.1) < 1e-6);
    assert_false(sp[0].pre.stall);
    assert_false(sp[0].pre.grad);
    char why[512];
    tfb_precursors_text(&sp[0].pre, why, sizeof why);
    assert_non_null(strstr(why, "lr 0.01 -> 0.1 at step 200"));
    free(sp);
    unload(&x);
}

/* The same spike without the change: no lr precursor (the test above
 * cannot pass by a detector that always says so). An lr change more than
 * k steps before the spike is not one either. */
static void lr_change_outside_the_window_is_not(void **state)
{
    (void)state;
    scenario sc = {.steps = 300, .spike_at = 205,
                   .lr_change_at = 205 - TFB_PRECURSOR_K_DEFAULT - 10};
    loaded x = run_of(&sc);
    tfb_alert_spike *sp;
    size_t n;
    assert_int_equal(tfb_alert_spikes(x.run, &sp, &n), 0);
    assert_int_equal(n, 1);
    assert_false(sp[0].pre.lr);
    free(sp);
    unload(&x);
}

static void input_stall_is_listed(void **state)
{
    (void)state;
    scenario sc = {.steps = 300, .spike_at = 205, .stall_at = 203};
    loaded x = run_of(&sc);
    tfb_alert_spike *sp;
    size_t n;
    assert_int_equal(tfb_alert_spikes(x.run, &sp, &n), 0);
    assert_int_equal(n, 1);
    assert_int_equal(sp[0].spike.step, 205);
    assert_true(sp[0].pre.stall);
    assert_int_equal(sp[0].pre.stall_step, 203);
    assert_true(fabs(sp[0].pre.stall_ms - 80) < 1e-3);
    assert_true(sp[0].pre.stall_baseline_ms > 1.8 &&
                sp[0].pre.stall_baseline_ms < 2.2);
    assert_false(sp[0].pre.lr);
    char why[512];
    tfb_precursors_text(&sp[0].pre, why, sizeof why);
    assert_non_null(strstr(why, "input stall at step 203 (80 ms"));
    free(sp);
    unload(&x);
}

static void lr_schedule_alone_fires_nothing(void **state)
{
    (void)state;
    scenario sc = {.steps = 900, .lr_decays = 1};
    loaded x = run_of(&sc);
    tfb_alert_spike *sp;
    size_t n;
    assert_int_equal(tfb_alert_spikes(x.run, &sp, &n), 0);
    assert_int_equal(n, 0);
    free(sp);
    /* nor does the whole evaluation raise a spike or divergence alert */
    tfb_alert_event *ev;
    size_t ne;
    assert_int_equal(tfb_alerts_poll(x.st, 0, &ev, &ne), 0);
    for (size_t i = 0; i < ne; i++) {
        assert_string_not_equal(ev[i].rule, "loss_spike");
        assert_string_not_equal(ev[i].rule, "diverged");
    }
    free(ev);
    unload(&x);
}

/* The batch ids are the ones logged at the spike's step, whichever way
 * tfb_step_batch found its current step. */
static void batch_ids_at_the_current_step(void **state)
{
    (void)state;
    for (int pipeline = 0; pipeline < 2; pipeline++) {
        scenario sc = {.steps = 300, .spike_at = 205, .pipeline = pipeline};
        loaded x = run_of(&sc);
        tfb_alert_spike *sp;
        size_t n;
        assert_int_equal(tfb_alert_spikes(x.run, &sp, &n), 0);
        assert_int_equal(n, 1);
        assert_int_equal(sp[0].pre.n_batches, 1);
        assert_int_equal(sp[0].pre.batch_step[0], 205);
        assert_string_equal(sp[0].pre.batch_id[0], "bad:205");
        free(sp);
        /* every step's id sits at its own step */
        tfb_series *b = tfb_run_find_series(x.run, TFB_SERIES_TEXT,
                                            TFB_TAG_BATCH_ID);
        assert_non_null(b);
        tfb_series_view v;
        tfb_series_read_begin(b, &v);
        assert_int_equal(v.count, 300);
        for (size_t i = 0; i < v.count; i++) {
            char want[32];
            snprintf(want, sizeof want, v.step[i] == 205 ? "bad:%d" : "ok:%d",
                     (int)v.step[i]);
            assert_int_equal(v.step[i], (int64_t)i + 1);
            assert_int_equal(v.text_len[i], strlen(want));
            assert_memory_equal(v.text_data + v.text_off[i], want,
                                strlen(want));
        }
        tfb_series_read_end(b);
        unload(&x);
    }
}

/* A spike in points that arrive after the first evaluation is found by
 * the same detector, fed only the new points; the first is listed once. */
static void appended_points_are_read_incrementally(void **state)
{
    (void)state;
    scenario sc = {.steps = 300, .spike_at = 205};
    loaded x = run_of(&sc);
    tfb_alert_spike *sp;
    size_t n;
    assert_int_equal(tfb_alert_spikes(x.run, &sp, &n), 0);
    assert_int_equal(n, 1);
    free(sp);
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/r", x.root);
    scenario more = {.steps = 300, .spike_at = 450, .lr_change_at = 446};
    write_run(dir, &more, 301);
    assert_int_equal(tfb_loader_pass(x.l), 0);
    assert_int_equal(tfb_alert_spikes(x.run, &sp, &n), 0);
    assert_int_equal(n, 2);
    assert_int_equal(sp[0].spike.step, 205);
    assert_false(sp[0].pre.lr);
    assert_int_equal(sp[1].spike.step, 450);
    assert_true(sp[1].pre.lr);
    assert_int_equal(sp[1].pre.lr_step, 446);
    free(sp);
    unload(&x);
}

/* The status's blow-up rule reads the store's loss watch: the same answer
 * before and after every kept alert state is forgotten, and before and
 * after the spikes are read. The loss grows 1.05x a step from step 100 to
 * 300 (17,000x, no NaN). */
static void blow_up_from_the_loss_watch(void **state)
{
    (void)state;
    scenario sc = {.steps = 300, .blow_up_from = 100};
    loaded x = run_of(&sc);
    tfb_run_status alone, fed;
    assert_int_equal(tfb_run_status_get(x.run, 0, &alone), 0);
    assert_int_equal(alone.state, TFB_RUN_DIVERGED);
    assert_string_equal(alone.diverged_why, "loss blow-up");
    assert_int_equal(alone.diverged_step, 300);
    tfb_alerts_reset(); /* forgets the status's scan too */
    tfb_alert_spike *sp;
    size_t n;
    assert_int_equal(tfb_alert_spikes(x.run, &sp, &n), 0);
    free(sp);
    assert_int_equal(tfb_run_status_get(x.run, 0, &fed), 0);
    assert_int_equal(fed.state, TFB_RUN_DIVERGED);
    assert_string_equal(fed.diverged_why, "loss blow-up");
    assert_int_equal(fed.diverged_step, 300);
    unload(&x);
    /* a healthy run is not diverged either way */
    scenario ok = {.steps = 300};
    x = run_of(&ok);
    assert_int_equal(tfb_alert_spikes(x.run, &sp, &n), 0);
    free(sp);
    assert_int_equal(tfb_run_status_get(x.run, 0, &fed), 0);
    assert_int_equal(fed.state, TFB_RUN_FINISHED);
    assert_true(fed.step_interval >= 0);
    /* the state alone: the same state, the interval not worked out */
    tfb_run_status judged;
    assert_int_equal(tfb_run_status_judge(x.run, 0, &judged), 0);
    assert_int_equal(judged.state, TFB_RUN_FINISHED);
    assert_true(isnan(judged.step_interval));
    unload(&x);
}

/* A user rule on the loss reads the points the store's watch has seen:
 * the spike is found once, at its step, with its precursors, as without
 * the rule. */
static void rule_on_the_loss_leaves_its_spike(void **state)
{
    (void)state;
    tfb_alert_rule rule;
    char err[256];
    assert_int_equal(tfb_alert_rule_parse("loss>100 for 5 steps", &rule, err,
                                          sizeof err), 0);
    assert_int_equal(tfb_alerts_configure(&rule, 1, 50), 0);
    scenario sc = {.steps = 300, .spike_at = 205, .lr_change_at = 200};
    loaded x = run_of(&sc);
    tfb_alert_event *ev;
    size_t ne, spikes = 0;
    assert_int_equal(tfb_alerts_poll(x.st, 0, &ev, &ne), 0);
    for (size_t i = 0; i < ne; i++) {
        assert_string_not_equal(ev[i].rule, "loss>100 for 5 steps");
        if (!strcmp(ev[i].rule, "loss_spike")) {
            spikes++;
            assert_int_equal(ev[i].step, 205);
            assert_non_null(strstr(ev[i].message, "lr 0.01 -> 0.1"));
        }
    }
    free(ev);
    assert_int_equal(spikes, 1);
    tfb_alert_spike *sp;
    size_t n;
    assert_int_equal(tfb_alert_spikes(x.run, &sp, &n), 0);
    assert_int_equal(n, 1);
    assert_int_equal(sp[0].spike.step, 205);
    free(sp);
    tfb_run_status st;
    assert_int_equal(tfb_run_status_get(x.run, 0, &st), 0);
    assert_int_equal(st.state, TFB_RUN_FINISHED);
    unload(&x);
    assert_int_equal(tfb_alerts_configure(NULL, 0, 50), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(lr_change_is_listed),
        cmocka_unit_test(lr_change_outside_the_window_is_not),
        cmocka_unit_test(input_stall_is_listed),
        cmocka_unit_test(lr_schedule_alone_fires_nothing),
        cmocka_unit_test(batch_ids_at_the_current_step),
        cmocka_unit_test(appended_points_are_read_incrementally),
        cmocka_unit_test(blow_up_from_the_loss_watch),
        cmocka_unit_test(rule_on_the_loss_leaves_its_spike),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
