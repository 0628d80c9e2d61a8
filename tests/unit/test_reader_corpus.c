/*
 * test_reader_corpus.c - every file of ../shared/testdata/tfevents (written
 * by TensorFlow 1 and 2, Keras, PyTorch, tensorboardX, CatBoost, Guild,
 * Lingvo) decodes with the records, tags and counts of its SOURCES.md.
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

#include "test_util.h"
#include "tfboard.h"

typedef struct expect {
    const char *path;
    unsigned records;   /* complete records */
    unsigned tags;      /* distinct tags */
    unsigned scalars;   /* values that decode to a scalar */
    unsigned histos;
    unsigned images;
    unsigned tensors;   /* other tensors (string tensors of other plugins) */
    int64_t max_step;
    int truncated;
} expect;

static const expect corpus[] = {
    {"lingvo/events.out.tfevents.test", 361, 7, 2520, 0, 0, 0, 185200, 0},
    {"wandb/fixtures/events.out.tfevents.111.complex.localdomain", 785, 51,
     747, 36, 0, 1, 937, 0},
    {"wandb/fixtures/events.out.tfevents.111.simple.localdomain", 4, 3, 1, 1,
     1, 0, 20000, 0},
    {"wandb/catboost_info/learn/events.out.tfevents", 10, 1, 10, 0, 0, 0, 9, 0},
    {"tensorboard_reducer/strict/run_1/events.out.tfevents.1622543341.janoshs-mbp.lan.86862.0",
     101, 1, 100, 0, 0, 0, 495, 0},
    {"tensorboard_reducer/strict/run_2/events.out.tfevents.1622543341.janoshs-mbp.lan.86862.1",
     101, 1, 100, 0, 0, 0, 495, 0},
    {"tensorboard_reducer/strict/run_3/events.out.tfevents.1622543341.janoshs-mbp.lan.86862.2",
     101, 1, 100, 0, 0, 0, 495, 0},
    {"morvan_tutorials/tf15_tensorboard/logs/events.out.tfevents.1494075549.Morvan",
     23, 7, 20, 120, 0, 0, 950, 0},
    {"morvan_tutorials/tf20_RNN2.2/logs/events.out.tfevents.1490697588.Morvan",
     2, 0, 0, 0, 0, 0, 0, 1},
    {"tfx_iris_keras/model_run/8/train/events.out.tfevents.1598485465.penguin.1486.6519.v2",
     244, 6, 240, 0, 0, 2, 100, 0},
    {"tfx_iris_keras/model_run/8/train/events.out.tfevents.1598485465.penguin.profile-empty",
     1, 0, 0, 0, 0, 0, 0, 0},
    {"tfx_iris_keras/model_run/8/validation/events.out.tfevents.1598485465.penguin.1486.7304.v2",
     41, 2, 40, 0, 0, 0, 19, 0},
    {"katib/logs/train/events.out.tfevents.1637681485.2d662933d616.19.0.v2", 21,
     2, 20, 0, 0, 0, 9, 0},
    {"katib/logs/test/events.out.tfevents.1637681485.2d662933d616.19.1.v2", 21,
     2, 20, 0, 0, 0, 9, 0},
    {"guild/filter-runs/fa6f74adb50a4abb8f49840993f081f7/events.out.tfevents.1662041973.calusa.97126.0",
     2, 1, 1, 0, 0, 0, 0, 0},
};

#define MAX_TAGS 64

static void check_file(const expect *e)
{
    char rel[512];
    snprintf(rel, sizeof rel, "tfevents/%s", e->path);
    char *path = tu_testdata(rel);
    assert_non_null(path);
    tfb_reader *r;
    assert_int_equal(tfb_reader_open(&r, path), 0);
    char tags[MAX_TAGS][128];
    char plugins[MAX_TAGS][64];
    unsigned ntags = 0, records = 0, scalars = 0, histos = 0, images = 0,
             tensors = 0;
    int64_t max_step = 0;
    tfb_event ev = {.size = sizeof ev};
    int rc;
    while ((rc = tfb_reader_next(r, &ev)) == 1) {
        records++;
        if (ev.step > max_step)
            max_step = ev.step;
        if (ev.kind != TFB_EVENT_SUMMARY)
            continue;
        size_t pos = 0;
        tfb_value v = {.size = sizeof v};
        while ((rc = tfb_summary_next(ev.summary, ev.summary_len, &pos, &v)) == 1) {
            assert_true(v.tag.len > 0 && v.tag.len < 128);
            unsigned t;
            for (t = 0; t < ntags; t++)
                if (strlen(tags[t]) == v.tag.len &&
                    !memcmp(tags[t], v.tag.ptr, v.tag.len))
                    break;
            if (t == ntags) {
                assert_true(ntags < MAX_TAGS);
                memcpy(tags[t], v.tag.ptr, v.tag.len);
                tags[t][v.tag.len] = 0;
                plugins[t][0] = 0;
                ntags++;
            }
            /* Remember each tag's plugin, as a server does. */
            if (v.plugin_name.len && v.plugin_name.len < 64) {
                memcpy(plugins[t], v.plugin_name.ptr, v.plugin_name.len);
                plugins[t][v.plugin_name.len] = 0;
            } else if (v.kind == TFB_VALUE_UNKNOWN) {
                tfb_value_apply_plugin(&v, plugins[t], strlen(plugins[t]));
            }
            switch (v.kind) {
            case TFB_VALUE_SCALAR:
                assert_false(isnan(v.scalar));
                scalars++;
                break;
            case TFB_VALUE_HISTOGRAM: {
                double num;
                int64_t k = tfb_value_histogram(&v, NULL, 0, NULL, NULL, &num,
                                                NULL);
                assert_true(k > 0);
                tfb_bucket *b = calloc((size_t)k, sizeof *b);
                assert_non_null(b);
                b[0].size = sizeof *b;
                assert_int_equal(tfb_value_histogram(&v, b, (size_t)k, NULL,
                                                     NULL, NULL, NULL), k);
                double total = 0;
                for (int64_t i = 0; i < k; i++) {
                    /* TensorBoard's conversion can give the last, empty,
                     * bucket right = max < left; filled ones are sane. */
                    if (b[i].count > 0)
                        assert_true(b[i].left <= b[i].right);
                    total += b[i].count;
                }
                assert_true(fabs(total - num) <= 1e-9 * fmax(1, num));
                free(b);
                histos++;
                break;
            }
            case TFB_VALUE_IMAGE:
                assert_int_equal(v.image_width, 28);
                assert_int_equal(v.image_height, 28);
                assert_true(v.image_data.len > 8 &&
                            !memcmp(v.image_data.ptr, "\x89PNG", 4));
                images++;
                break;
            case TFB_VALUE_TENSOR: {
                tfb_strview s;
                /* keras's graph_keras_model holds the model JSON; the
                 * run-metadata tensor of batch_2 holds an empty string. */
                assert_int_equal(tfb_value_string(&v, 0, &s), 1);
                if (v.tag.len == 5 && !memcmp(v.tag.ptr, "keras", 5))
                    assert_true(s.len > 100 && s.ptr[0] == '{');
                tensors++;
                break;
            }
            default:
                fail_msg("%s: tag %s: unexpected kind %d", e->path, tags[t],
                         v.kind);
            }
        }
        assert_int_equal(rc, 0);
    }
    assert_int_equal(rc, 0);
    tfb_reader_stats st;
    tfb_reader_stats_init(&st);
    assert_int_equal(tfb_reader_get_stats(r, &st), 0);
    assert_int_equal(records, e->records);
    assert_int_equal(ntags, e->tags);
    assert_int_equal(scalars, e->scalars);
    assert_int_equal(histos, e->histos);
    assert_int_equal(images, e->images);
    assert_int_equal(tensors, e->tensors);
    assert_true(max_step == e->max_step);
    assert_int_equal(st.truncated_tail, e->truncated);
    assert_int_equal(st.corrupt_records, 0);
    assert_int_equal(st.resyncs, 0);
    if (e->truncated)
        assert_int_equal(st.offset, 135552); /* where the partial record starts */
    else
        assert_int_equal(st.offset, st.file_size);
    tfb_reader_close(r);
    free(path);
}

static void corpus_files(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof corpus / sizeof corpus[0]; i++)
        check_file(&corpus[i]);
}

/* TF2 scalars are float tensors: check exact values against the bytes. */
static void katib_tensor_values(void **state)
{
    (void)state;
    char *path = tu_testdata("tfevents/katib/logs/train/events.out.tfevents.1637681485.2d662933d616.19.0.v2");
    tfb_reader *r;
    assert_int_equal(tfb_reader_open(&r, path), 0);
    tfb_event ev = {.size = sizeof ev};
    int n = 0;
    while (tfb_reader_next(r, &ev) == 1) {
        if (ev.kind != TFB_EVENT_SUMMARY)
            continue;
        size_t pos = 0;
        tfb_value v = {.size = sizeof v};
        assert_int_equal(tfb_summary_next(ev.summary, ev.summary_len, &pos, &v), 1);
        assert_int_equal(v.kind, TFB_VALUE_SCALAR);
        double d;
        assert_int_equal(tfb_value_tensor_scalar(&v, &d), 0);
        assert_true(d == v.scalar);
        /* Float32 content: the double must be exactly representable. */
        assert_true((double)(float)d == d);
        assert_true(d >= 0 && d < 100);
        n++;
    }
    assert_int_equal(n, 20);
    tfb_reader_close(r);
    free(path);
}

int main(void)
{
    char *probe = tu_testdata("tfevents/SOURCES.md");
    if (!probe) {
        fprintf(stderr, "../shared/testdata absent: skipping\n");
        return 77;
    }
    free(probe);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(corpus_files),
        cmocka_unit_test(katib_tensor_values),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
