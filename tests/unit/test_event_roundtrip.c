/* test_event_roundtrip.c - every kind the writer logs reads back exactly. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collector/histogram.h"
#include "collector/writer_internal.h"
#include "test_util.h"
#include "tfboard.h"

typedef struct fixture {
    char *dir;
    tfb_writer *w;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    f->dir = tu_mkdtemp();
    char run[600];
    snprintf(run, sizeof run, "%s/a/b/run1", f->dir); /* parents created */
    assert_int_equal(tfb_writer_open(&f->w, run, NULL), 0);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    tfb_writer_close(f->w);
    tu_rmtree(f->dir);
    free(f->dir);
    free(f);
    return 0;
}

static int sv_eq(tfb_strview s, const char *c)
{
    return s.len == strlen(c) && memcmp(s.ptr, c, s.len) == 0;
}

/* Reads the next summary value of the file (skipping non-summary events). */
static int next_value(tfb_reader *r, tfb_event *ev, tfb_value *v)
{
    while (tfb_reader_next(r, ev) == 1) {
        if (ev->kind != TFB_EVENT_SUMMARY)
            continue;
        size_t pos = 0;
        int rc = tfb_summary_next(ev->summary, ev->summary_len, &pos, v);
        assert_int_equal(rc, 1);
        return 1;
    }
    return 0;
}

static tfb_reader *reopen(fixture *f)
{
    assert_int_equal(tfb_flush(f->w), 0);
    tfb_reader *r;
    assert_int_equal(tfb_reader_open(&r, tfb_writer_path(f->w)), 0);
    tfb_event ev = {.size = sizeof ev};
    assert_int_equal(tfb_reader_next(r, &ev), 1);
    assert_int_equal(ev.kind, TFB_EVENT_FILE_VERSION);
    assert_true(sv_eq(ev.file_version, "brain.Event:2"));
    assert_true(ev.wall_time > 1.6e9);
    return r;
}

static void scalars(void **state)
{
    fixture *f = *state;
    assert_int_equal(tfb_scalar(f->w, "loss", 0.5, 0), 0);
    assert_int_equal(tfb_scalar(f->w, "loss", 0.25, 1), 0);
    assert_int_equal(tfb_scalar(f->w, "acc", 1e30, -7), 0);
    assert_int_equal(tfb_scalar_at(f->w, "loss", NAN, 1LL << 40, 1234.5), 0);
    assert_int_equal(tfb_scalar(f->w, "loss", -INFINITY, 3), 0);
    tfb_reader *r = reopen(f);
    tfb_event ev = {.size = sizeof ev};
    tfb_value v = {.size = sizeof v};
    assert_true(next_value(r, &ev, &v));
    assert_true(sv_eq(v.tag, "loss"));
    assert_true(sv_eq(v.plugin_name, "scalars")); /* first value only */
    assert_int_equal(v.kind, TFB_VALUE_SCALAR);
    assert_true(v.scalar == 0.5);
    assert_int_equal(ev.step, 0);
    assert_true(next_value(r, &ev, &v));
    assert_int_equal(v.plugin_name.len, 0);
    assert_true(v.scalar == 0.25);
    assert_int_equal(ev.step, 1);
    assert_true(next_value(r, &ev, &v));
    assert_true(sv_eq(v.tag, "acc"));
    assert_true(sv_eq(v.plugin_name, "scalars"));
    assert_true(v.scalar == (double)1e30f);
    assert_int_equal(ev.step, -7);
    assert_true(next_value(r, &ev, &v));
    assert_true(isnan(v.scalar));
    assert_true(ev.step == (1LL << 40));
    assert_true(ev.wall_time == 1234.5);
    assert_true(next_value(r, &ev, &v));
    assert_true(isinf(v.scalar) && v.scalar < 0);
    assert_int_equal(tfb_reader_next(r, &ev), 0);
    tfb_reader_close(r);
}

/* One buffer reused for several tags (as snprintf loops do): the writer's
 * tag cache must notice the new content, shorter or longer. */
static void reused_tag_buffer(void **state)
{
    fixture *f = *state;
    char buf[32];
    const char *names[] = {"layer/a", "layer/b", "layer", "layer/ab", "layer/a"};
    for (int i = 0; i < 5; i++) {
        strcpy(buf, names[i]);
        assert_int_equal(tfb_scalar(f->w, buf, i, i), 0);
    }
    tfb_reader *r = reopen(f);
    tfb_event ev = {.size = sizeof ev};
    tfb_value v = {.size = sizeof v};
    for (int i = 0; i < 5; i++) {
        assert_true(next_value(r, &ev, &v));
        assert_true(sv_eq(v.tag, names[i]));
        assert_true(v.scalar == i);
        /* metadata on each tag's first value only */
        assert_int_equal(v.plugin_name.len != 0, i != 4);
    }
    tfb_reader_close(r);
}

static void text(void **state)
{
    fixture *f = *state;
    const char *msg = "héllo <b>world</b>\nline 2";
    assert_int_equal(tfb_text(f->w, "notes/a", msg, 5), 0);
    assert_int_equal(tfb_text(f->w, "notes/a", "", 6), 0);
    tfb_reader *r = reopen(f);
    tfb_event ev = {.size = sizeof ev};
    tfb_value v = {.size = sizeof v};
    tfb_strview s;
    assert_true(next_value(r, &ev, &v));
    assert_int_equal(v.kind, TFB_VALUE_TEXT);
    assert_true(sv_eq(v.plugin_name, "text"));
    assert_int_equal(tfb_value_string(&v, 0, &s), 1);
    assert_true(sv_eq(s, msg));
    assert_int_equal(tfb_value_string(&v, 1, &s), 0);
    assert_true(next_value(r, &ev, &v));
    /* No metadata on the second value: the tag's plugin must be applied. */
    assert_int_equal(v.kind, TFB_VALUE_UNKNOWN);
    tfb_value_apply_plugin(&v, "text", 4);
    assert_int_equal(v.kind, TFB_VALUE_TEXT);
    assert_int_equal(tfb_value_string(&v, 0, &s), 1);
    assert_int_equal(s.len, 0);
    tfb_reader_close(r);
}

static size_t brute_bucket(const double *lim, size_t n, double x)
{
    size_t b = 0;
    while (b + 1 < n && lim[b] <= x)
        b++;
    return b;
}

static void histogram(void **state)
{
    fixture *f = *state;
    enum { N = 20000 };
    float *vals = malloc(N * sizeof *vals);
    unsigned s = 12345;
    for (int i = 0; i < N; i++) {
        s = s * 1103515245u + 12345u;
        double u = (s >> 8) / 16777216.0;
        vals[i] = (float)((u - 0.5) * pow(10, (int)(s % 17) - 8));
    }
    vals[0] = 0.0f;
    vals[1] = -0.0f;
    vals[2] = FLT_MAX;
    vals[3] = -FLT_MAX;
    vals[4] = 1e-45f; /* denormal */
    vals[5] = 1e-12f;
    vals[6] = NAN;
    vals[7] = INFINITY;
    assert_int_equal(tfb_histogram(f->w, "w/layer1", vals, N, 10), 0);

    /* Reference: each finite value's bucket by linear search. */
    size_t nl;
    const double *lim = tfb_histo_default_limits(&nl);
    assert_true(nl > 1500 && nl < 1600);
    double *ref = calloc(nl, sizeof *ref);
    double mn = INFINITY, mx = -INFINITY, num = 0;
    for (int i = 0; i < N; i++) {
        if (!isfinite(vals[i]))
            continue;
        ref[brute_bucket(lim, nl, vals[i])]++;
        mn = fmin(mn, vals[i]);
        mx = fmax(mx, vals[i]);
        num++;
    }

    tfb_reader *r = reopen(f);
    tfb_event ev = {.size = sizeof ev};
    tfb_value v = {.size = sizeof v};
    assert_true(next_value(r, &ev, &v));
    assert_int_equal(v.kind, TFB_VALUE_HISTOGRAM);
    assert_true(sv_eq(v.plugin_name, "histograms"));
    double hmin, hmax, hnum, hsum;
    int64_t k = tfb_value_histogram(&v, NULL, 0, &hmin, &hmax, &hnum, &hsum);
    assert_true(k > 10);
    tfb_bucket *b = calloc((size_t)k, sizeof *b);
    assert_non_null(b);
    b[0].size = sizeof *b;
    assert_int_equal(tfb_value_histogram(&v, b, (size_t)k, NULL, NULL, NULL,
                                         NULL), k);
    assert_true(hmin == mn && hmax == mx && hnum == num);
    /* The encoded buckets are TF's: non-empty ones plus collapsed empty
     * runs. Expand them back to per-limit counts and compare. */
    double total = 0;
    size_t li = 0;
    for (int64_t i = 0; i < k; i++) {
        total += b[i].count;
        if (b[i].count > 0) {
            double limit = i + 1 < k ? b[i].right : lim[nl - 1];
            while (li < nl && lim[li] != limit)
                li++;
            if (i + 1 < k) {
                assert_true(li < nl);
                assert_true(ref[li] == b[i].count);
            }
        }
    }
    assert_true(total == num);
    /* The non-finite values produced a numerics record. */
    assert_true(next_value(r, &ev, &v));
    assert_int_equal(v.kind, TFB_VALUE_NUMERICS);
    assert_true(sv_eq(v.tag, "w/layer1"));
    assert_int_equal(v.numerics.nan, 1);
    assert_int_equal(v.numerics.pos_inf, 1);
    assert_int_equal(v.numerics.neg_inf, 0);
    assert_int_equal(ev.step, 10);
    free(b);
    free(ref);
    free(vals);
    tfb_reader_close(r);
}

static void histogram_edges(void **state)
{
    (void)state;
    size_t nl;
    const double *lim = tfb_histo_default_limits(&nl);
    /* Values on and around every limit land where upper_bound says. */
    for (size_t i = 1; i + 1 < nl; i++) {
        double xs[3] = {lim[i], nextafter(lim[i], -INFINITY),
                        nextafter(lim[i], INFINITY)};
        for (int j = 0; j < 3; j++) {
            tfb_histo h;
            assert_int_equal(tfb_histo_build_f64(&h, &xs[j], 1), 0);
            size_t want = brute_bucket(lim, nl, xs[j]);
            int found = 0;
            for (size_t q = 0; q < h.n; q++)
                if (h.counts[q] == 1) {
                    assert_true(h.limits[q] == lim[want]);
                    found = 1;
                }
            assert_true(found);
            tfb_histo_free(&h);
        }
    }
    /* The float path: the floats nearest each limit, on both sides. */
    for (size_t i = 1; i + 1 < nl; i++) {
        float f0 = (float)lim[i];
        float xs[3] = {f0, nextafterf(f0, -INFINITY), nextafterf(f0, INFINITY)};
        tfb_histo h;
        assert_int_equal(tfb_histo_build_f32(&h, xs, 3), 0);
        double total = 0;
        for (size_t q = 0; q < h.n; q++)
            total += h.counts[q];
        assert_true(total == 3);
        for (int j = 0; j < 3; j++) {
            size_t want = brute_bucket(lim, nl, xs[j]);
            int found = 0;
            for (size_t q = 0; q < h.n; q++)
                found |= h.limits[q] == lim[want] && h.counts[q] >= 1;
            assert_true(found);
        }
        tfb_histo_free(&h);
    }
    tfb_histo h;
    assert_int_equal(tfb_histo_build_f32(&h, NULL, 0), 0);
    assert_true(h.num == 0 && h.n == 1 && h.counts[0] == 0);
    tfb_histo_free(&h);
}

static void histogram_f64(void **state)
{
    fixture *f = *state;
    double vals[] = {1.0, 2.0, 3.0, 1e300, -1e300};
    assert_int_equal(tfb_histogram_f64(f->w, "d", vals, 5, 1), 0);
    tfb_reader *r = reopen(f);
    tfb_event ev = {.size = sizeof ev};
    tfb_value v = {.size = sizeof v};
    assert_true(next_value(r, &ev, &v));
    double mn, mx, num, sum;
    assert_true(tfb_value_histogram(&v, NULL, 0, &mn, &mx, &num, &sum) > 0);
    assert_true(mn == -1e300 && mx == 1e300 && num == 5 && isfinite(sum));
    tfb_reader_close(r);
}

static void numerics_record(void **state)
{
    fixture *f = *state;
    tfb_nonfinite_counts c = {sizeof c, 3, 0, 1u << 20};
    assert_int_equal(tfb_writer_numerics_record(f->w, "g", 99, &c), 0);
    tfb_reader *r = reopen(f);
    tfb_event ev = {.size = sizeof ev};
    tfb_value v = {.size = sizeof v};
    assert_true(next_value(r, &ev, &v));
    assert_int_equal(v.kind, TFB_VALUE_NUMERICS);
    assert_true(sv_eq(v.plugin_name, TFB_NUMERICS_PLUGIN));
    assert_int_equal(v.numerics.nan, 3);
    assert_int_equal(v.numerics.neg_inf, 1u << 20);
    tfb_reader_close(r);
}

static int g_calls;
static void on_nf(void *user, const char *tag, int64_t step, uint64_t nan,
                  uint64_t pinf, uint64_t ninf)
{
    (void)ninf;
    (void)pinf;
    (void)nan;
    assert_ptr_equal(user, &g_calls);
    assert_string_equal(tag, "loss");
    assert_int_equal(step, 4);
    g_calls++;
}

static void nonfinite_callback_once(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp();
    tfb_writer_opts o;
    tfb_writer_opts_init(&o);
    o.on_nonfinite = on_nf;
    o.on_nonfinite_user = &g_calls;
    tfb_writer *w;
    assert_int_equal(tfb_writer_open(&w, dir, &o), 0);
    g_calls = 0;
    tfb_scalar(w, "loss", 1.0, 3);
    tfb_scalar(w, "loss", NAN, 4);
    tfb_scalar(w, "loss", INFINITY, 5);
    assert_int_equal(g_calls, 1);
    assert_int_equal(tfb_writer_close(w), 0);
    tu_rmtree(dir);
    free(dir);
}

static void bad_args(void **state)
{
    fixture *f = *state;
    tfb_writer *w;
    assert_int_equal(tfb_writer_open(NULL, "x", NULL), TFB_EINVAL);
    assert_int_equal(tfb_writer_open(&w, "", NULL), TFB_EINVAL);
    assert_int_equal(tfb_scalar(NULL, "a", 1, 1), TFB_EINVAL);
    assert_int_equal(tfb_scalar(f->w, NULL, 1, 1), TFB_EINVAL);
    assert_int_equal(tfb_histogram(f->w, "h", NULL, 3, 1), TFB_EINVAL);
    assert_int_equal(tfb_text(f->w, "t", NULL, 1), TFB_EINVAL);
    assert_int_equal(tfb_writer_close(NULL), 0);
    tfb_reader_close(NULL);
    tfb_reader *r;
    assert_int_equal(tfb_reader_open(&r, "/nonexistent/x"), TFB_ENOENT);
    /* A path under a regular file cannot become a run directory. */
    char p[700];
    snprintf(p, sizeof p, "%s/sub", tfb_writer_path(f->w));
    assert_true(tfb_writer_open(&w, p, NULL) < 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(scalars, setup, teardown),
        cmocka_unit_test_setup_teardown(reused_tag_buffer, setup, teardown),
        cmocka_unit_test_setup_teardown(text, setup, teardown),
        cmocka_unit_test_setup_teardown(histogram, setup, teardown),
        cmocka_unit_test(histogram_edges),
        cmocka_unit_test_setup_teardown(histogram_f64, setup, teardown),
        cmocka_unit_test_setup_teardown(numerics_record, setup, teardown),
        cmocka_unit_test(nonfinite_callback_once),
        cmocka_unit_test_setup_teardown(bad_args, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
