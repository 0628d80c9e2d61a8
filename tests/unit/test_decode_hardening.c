/*
 * test_decode_hardening.c - crafted values that used to reach undefined
 * behaviour in event_decode.c (issue 10), and tfb_value_histogram's
 * buckets checked against TensorBoard 2.21's rule (drop the empty buckets
 * at both ends, then min and max are the outer edges), on hand-made
 * HistogramProtos and on every histogram of the real files in
 * $TFB_TESTDATA.
 *
 * Run under UBSan with halt_on_error=1 (tests/meson.build sets it), the
 * UB cases abort the test instead of passing quietly.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "test_util.h"
#include "tfboard.h"
#include "base/vec.h"

/* ---- a tiny protobuf encoder ---- */

typedef struct pbuf {
    uint8_t b[4096];
    size_t n;
} pbuf;

static void put_varint(pbuf *p, uint64_t x)
{
    while (x >= 0x80) {
        p->b[p->n++] = (uint8_t)(x | 0x80);
        x >>= 7;
    }
    p->b[p->n++] = (uint8_t)x;
}

static void put_key(pbuf *p, unsigned field, unsigned wt)
{
    put_varint(p, (uint64_t)field << 3 | wt);
}

static void put_bytes_field(pbuf *p, unsigned field, const void *d, size_t n)
{
    put_key(p, field, 2);
    put_varint(p, n);
    assert_true(p->n + n <= sizeof p->b);
    memcpy(p->b + p->n, d, n);
    p->n += n;
}

static void put_sub(pbuf *p, unsigned field, const pbuf *sub)
{
    put_bytes_field(p, field, sub->b, sub->n);
}

static void put_double(pbuf *p, unsigned field, double x)
{
    put_key(p, field, 1);
    memcpy(p->b + p->n, &x, 8);
    p->n += 8;
}

static void put_packed_doubles(pbuf *p, unsigned field, const double *x,
                               size_t n)
{
    put_bytes_field(p, field, x, n * 8);
}

static void put_packed_floats(pbuf *p, unsigned field, const float *x,
                              size_t n)
{
    put_bytes_field(p, field, x, n * 4);
}

/* Summary.Value{tag, metadata{plugin_data{plugin_name}}, tensor} decoded
 * with tfb_summary_next. */
static void decode_tensor_value(const char *plugin, const pbuf *tensor,
                                pbuf *summary, tfb_value *v)
{
    pbuf pd = {0}, md = {0}, val = {0};
    put_bytes_field(&pd, 1, plugin, strlen(plugin));
    put_sub(&md, 1, &pd);
    put_bytes_field(&val, 1, "t", 1);
    put_sub(&val, 9, &md);
    put_sub(&val, 8, tensor);
    summary->n = 0;
    put_sub(summary, 1, &val);
    size_t pos = 0;
    assert_int_equal(tfb_summary_next(summary->b, summary->n, &pos, v), 1);
}

/* TensorProto{dtype, shape dims, double_val packed}. */
static void tensor_f64(pbuf *t, const int64_t *dims, size_t rank,
                       const double *vals, size_t n)
{
    pbuf shape = {0};
    t->n = 0;
    put_key(t, 1, 0);
    put_varint(t, 2); /* DT_DOUBLE */
    for (size_t i = 0; i < rank; i++) {
        pbuf dim = {0};
        put_key(&dim, 1, 0);
        put_varint(&dim, (uint64_t)dims[i]);
        put_sub(&shape, 2, &dim);
    }
    put_sub(t, 2, &shape);
    if (n)
        put_packed_doubles(t, 6, vals, n);
}

/* ---- undefined behaviour: tensor shapes ---- */

/* Dims whose product overflows int64. 7 * 0x6DB6DB6DB6DB6DB7 wraps to
 * exactly 1, so before the fix (besides being UB) the tensor passed for a
 * scalar; 3 * -0x5555555555555555 wraps to 1 as well. */
static void overflowing_shape_is_not_a_scalar(void **state)
{
    (void)state;
    static const int64_t shapes[][3] = {
        {7, 0x6DB6DB6DB6DB6DB7LL, 0},
        {3, -0x5555555555555555LL, 0},
        {(int64_t)1 << 40, (int64_t)1 << 40, (int64_t)1 << 40},
        {INT64_MAX, 2, 0},
        {-1, -1, 0},
    };
    static const size_t ranks[] = {2, 2, 3, 2, 2};
    double one = 1.5;
    for (size_t i = 0; i < sizeof ranks / sizeof ranks[0]; i++) {
        pbuf t, s;
        tfb_value v = {.size = sizeof v};
        tensor_f64(&t, shapes[i], ranks[i], &one, 1);
        decode_tensor_value("scalars", &t, &s, &v);
        assert_int_equal(v.kind, TFB_VALUE_TENSOR);
        double x = 0;
        assert_int_equal(tfb_value_tensor_scalar(&v, &x), TFB_EINVAL);
        tfb_bucket b[4] = {{.size = sizeof(tfb_bucket)}};
        /* Not a [k,3] histogram either. */
        assert_true(tfb_value_histogram(&v, b, 4, NULL, NULL, NULL, NULL) < 0);
    }
    /* Real scalars still are: rank 0, and [1, 1]. */
    static const int64_t ones[] = {1, 1};
    for (size_t rank = 0; rank <= 2; rank += 2) {
        pbuf t, s;
        tfb_value v = {.size = sizeof v};
        tensor_f64(&t, ones, rank, &one, 1);
        decode_tensor_value("scalars", &t, &s, &v);
        assert_int_equal(v.kind, TFB_VALUE_SCALAR);
        assert_true(v.scalar == 1.5);
    }
}

/* ---- undefined behaviour: numerics counts stored as floats ---- */

static void numerics_f64(const double c[3], tfb_value *v)
{
    pbuf t, s;
    int64_t dim = 3;
    tensor_f64(&t, &dim, 1, c, 3);
    decode_tensor_value(TFB_NUMERICS_PLUGIN, &t, &s, v);
}

static void float_counts_saturate(void **state)
{
    (void)state;
    tfb_value v = {.size = sizeof v};
    /* +Inf and 1e30 cannot be uint64 counts: they saturate, and still
     * say "non-finite values seen". */
    const double c1[3] = {INFINITY, 1e30, 5};
    numerics_f64(c1, &v);
    assert_int_equal(v.kind, TFB_VALUE_NUMERICS);
    assert_true(v.numerics.nan == UINT64_MAX);
    assert_true(v.numerics.pos_inf == UINT64_MAX);
    assert_true(v.numerics.neg_inf == 5);

    /* The edges: 2^64 saturates, the largest double below it converts. */
    const double c2[3] = {18446744073709551616.0, 18446744073709549568.0,
                          9223372036854775808.0};
    numerics_f64(c2, &v);
    assert_int_equal(v.kind, TFB_VALUE_NUMERICS);
    assert_true(v.numerics.nan == UINT64_MAX);
    assert_true(v.numerics.pos_inf == 18446744073709549568ull);
    assert_true(v.numerics.neg_inf == 9223372036854775808ull);

    /* A float tensor (DT_FLOAT, float_val) with an Inf count. */
    pbuf t = {0}, shape = {0}, dim = {0}, s;
    put_key(&t, 1, 0);
    put_varint(&t, 1); /* DT_FLOAT */
    put_key(&dim, 1, 0);
    put_varint(&dim, 3);
    put_sub(&shape, 2, &dim);
    put_sub(&t, 2, &shape);
    const float f[3] = {0, INFINITY, 0};
    put_packed_floats(&t, 5, f, 3);
    decode_tensor_value(TFB_NUMERICS_PLUGIN, &t, &s, &v);
    assert_int_equal(v.kind, TFB_VALUE_NUMERICS);
    assert_true(v.numerics.pos_inf == UINT64_MAX);
    assert_true(v.numerics.nan + v.numerics.pos_inf + v.numerics.neg_inf > 0);

    /* Not counts at all: rejected (an ordinary tensor), never UB. */
    const double bad[][3] = {{NAN, 0, 0}, {0, -1, 0}, {0, 0, -INFINITY}};
    for (size_t i = 0; i < 3; i++) {
        numerics_f64(bad[i], &v);
        assert_int_equal(v.kind, TFB_VALUE_TENSOR);
    }
}

/* ---- histograms as TensorBoard shows them ---- */

typedef struct histo_case {
    double min, max;
    size_t n;
    double limits[8], counts[8];
} histo_case;

/* An expected bucket (tfb_bucket starts with its size). */
#define B(l, r, c) {sizeof(tfb_bucket), (l), (r), (c)}

static int64_t decode_histo(const histo_case *c, tfb_bucket *out, size_t cap,
                            double *mn, double *mx)
{
    pbuf h = {0}, val = {0}, s = {0};
    put_double(&h, 1, c->min);
    put_double(&h, 2, c->max);
    double num = 0, sum = 0;
    for (size_t i = 0; i < c->n; i++)
        num += c->counts[i];
    put_double(&h, 3, num);
    put_double(&h, 4, sum);
    put_packed_doubles(&h, 6, c->limits, c->n);
    put_packed_doubles(&h, 7, c->counts, c->n);
    put_bytes_field(&val, 1, "h", 1);
    put_sub(&val, 5, &h);
    put_sub(&s, 1, &val);
    size_t pos = 0;
    tfb_value v = {.size = sizeof v};
    assert_int_equal(tfb_summary_next(s.b, s.n, &pos, &v), 1);
    assert_int_equal(v.kind, TFB_VALUE_HISTOGRAM);
    return tfb_value_histogram(&v, out, cap, mn, mx, NULL, NULL);
}

static void expect_buckets(const histo_case *c, const tfb_bucket *want,
                           size_t nwant)
{
    tfb_bucket got[8] = {{.size = sizeof(tfb_bucket)}};
    double mn = -7, mx = -7;
    assert_int_equal(decode_histo(c, NULL, 0, NULL, NULL), (int64_t)nwant);
    assert_int_equal(decode_histo(c, got, 8, &mn, &mx), (int64_t)nwant);
    assert_true(mn == c->min && mx == c->max);
    for (size_t i = 0; i < nwant; i++) {
        assert_true(got[i].left == want[i].left);
        assert_true(got[i].right == want[i].right);
        assert_true(got[i].count == want[i].count);
        assert_true(got[i].left <= got[i].right);
        assert_int_equal(got[i].size, sizeof(tfb_bucket)); /* each gets it */
    }
}

static void histogram_all_empty(void **state)
{
    (void)state;
    histo_case c = {0, 0, 4, {-1, 0, 1, DBL_MAX}, {0, 0, 0, 0}};
    expect_buckets(&c, NULL, 0);
    histo_case none = {0, 0, 0, {0}, {0}};
    expect_buckets(&none, NULL, 0);
}

static void histogram_single_bucket(void **state)
{
    (void)state;
    /* Writers (ours, TF's) collapse each run of empty buckets into one
     * zero entry: the leading one ends at a limit below min. */
    histo_case c = {0.25, 0.75, 5, {-1, 0, 1, 2, DBL_MAX}, {0, 0, 3, 0, 0}};
    tfb_bucket want[] = {B(0.25, 0.75, 3)};
    expect_buckets(&c, want, 1);
}

static void histogram_empty_ends_inner_kept(void **state)
{
    (void)state;
    histo_case c = {-0.5, 1.5, 5, {-1, 0, 1, 2, DBL_MAX}, {0, 2, 0, 5, 0}};
    tfb_bucket want[] = {B(-0.5, 0, 2), B(0, 1, 0), B(1, 1.5, 5)};
    expect_buckets(&c, want, 3);
    /* cap below the count: the first cap buckets, the full count. */
    tfb_bucket two[2] = {{.size = sizeof(tfb_bucket)}};
    assert_int_equal(decode_histo(&c, two, 2, NULL, NULL), 3);
    assert_true(two[1].left == 0 && two[1].right == 1 && two[1].count == 0);
}

static void histogram_min_equals_max(void **state)
{
    (void)state;
    histo_case c = {3.0, 3.0, 4, {1, 3.3, 4, DBL_MAX}, {0, 6, 0, 0}};
    tfb_bucket want[] = {B(3.0, 3.0, 6)};
    expect_buckets(&c, want, 1);
}

static void histogram_no_empty_ends_unchanged(void **state)
{
    (void)state;
    histo_case c = {-3, 4, 3, {0, 1, DBL_MAX}, {1, 2, 4}};
    tfb_bucket want[] = {B(-3, 0, 1), B(0, 1, 2), B(1, 4, 4)};
    expect_buckets(&c, want, 3);
}

/* Our own writer's histograms read back with no backwards bucket, and
 * with non-empty first and last buckets. */
static void writer_histograms_never_backwards(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp();
    tfb_writer *w;
    assert_int_equal(tfb_writer_open(&w, dir, NULL), 0);
    float one[1] = {2.5f};
    float spread[5] = {-3, -0.001f, 0, 0.5f, 1000};
    float same[3] = {-7, -7, -7};
    assert_int_equal(tfb_histogram(w, "one", one, 1, 0), 0);
    assert_int_equal(tfb_histogram(w, "spread", spread, 5, 0), 0);
    assert_int_equal(tfb_histogram(w, "same", same, 3, 0), 0);
    assert_int_equal(tfb_histogram(w, "empty", NULL, 0, 0), 0);
    char *path = strdup(tfb_writer_path(w));
    assert_int_equal(tfb_writer_close(w), 0);
    tfb_reader *r;
    assert_int_equal(tfb_reader_open(&r, path), 0);
    tfb_event ev = {.size = sizeof ev};
    int seen = 0;
    while (tfb_reader_next(r, &ev) == 1) {
        size_t pos = 0;
        tfb_value v = {.size = sizeof v};
        if (ev.kind != TFB_EVENT_SUMMARY)
            continue;
        while (tfb_summary_next(ev.summary, ev.summary_len, &pos, &v) == 1) {
            if (v.kind != TFB_VALUE_HISTOGRAM)
                continue;
            tfb_bucket b[64] = {{.size = sizeof(tfb_bucket)}};
            double mn, mx, num;
            int64_t k = tfb_value_histogram(&v, b, 64, &mn, &mx, &num, NULL);
            assert_true(k >= 0 && k <= 64);
            seen++;
            if (num == 0) {
                assert_int_equal(k, 0);
                continue;
            }
            assert_true(k >= 1);
            assert_true(b[0].left == mn && b[k - 1].right == mx);
            assert_true(b[0].count > 0 && b[k - 1].count > 0);
            double total = 0;
            for (int64_t i = 0; i < k; i++) {
                assert_true(b[i].left <= b[i].right);
                total += b[i].count;
            }
            assert_true(total == num);
            if (v.tag.len == 3 && memcmp(v.tag.ptr, "one", 3) == 0) {
                assert_int_equal(k, 1);
                assert_true(b[0].left == 2.5 && b[0].right == 2.5);
            }
        }
    }
    assert_int_equal(seen, 4);
    tfb_reader_close(r);
    free(path);
    tu_rmtree(dir);
    free(dir);
}

/* ---- the real files ---- */

typedef struct corpus_counts {
    long files, protos, buckets, backwards;
} corpus_counts;

static void check_file(const char *path, corpus_counts *cc)
{
    tfb_reader *r;
    if (tfb_reader_open(&r, path) != 0)
        return;
    cc->files++;
    tfb_event ev = {.size = sizeof ev};
    TFB_VEC(tfb_bucket) b = {0};
    while (tfb_reader_next(r, &ev) == 1) {
        if (ev.kind != TFB_EVENT_SUMMARY)
            continue;
        size_t pos = 0;
        tfb_value v = {.size = sizeof v};
        while (tfb_summary_next(ev.summary, ev.summary_len, &pos, &v) == 1) {
            if (!v.histo) /* [k,3] tensors are shown row for row */
                continue;
            double mn, mx;
            int64_t k = tfb_value_histogram(&v, b.v, b.cap, &mn, &mx, NULL,
                                            NULL);
            if (k > (int64_t)b.cap) {
                assert_int_equal(tfb_vec_need(&b, (size_t)k), 0);
                b.v[0].size = sizeof(tfb_bucket);
                k = tfb_value_histogram(&v, b.v, b.cap, &mn, &mx, NULL, NULL);
            }
            assert_true(k >= 0);
            cc->protos++;
            cc->buckets += k;
            for (int64_t i = 0; i < k; i++)
                if (b.v[i].left > b.v[i].right) {
                    if (cc->backwards++ == 0)
                        print_message("backwards bucket in %s: [%g, %g]\n",
                                      path, b.v[i].left, b.v[i].right);
                }
            if (k > 0) {
                assert_true(b.v[0].count != 0 && b.v[k - 1].count != 0);
                assert_true(b.v[0].left == mn && b.v[k - 1].right == mx);
            }
        }
    }
    tfb_vec_free(&b);
    tfb_reader_close(r);
}

static void walk(const char *dir, corpus_counts *cc)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        size_t n = strlen(dir) + strlen(e->d_name) + 2;
        char *p = malloc(n);
        assert_non_null(p);
        snprintf(p, n, "%s/%s", dir, e->d_name);
        struct stat st;
        if (stat(p, &st) == 0) {
            if (S_ISDIR(st.st_mode))
                walk(p, cc);
            else if (strstr(e->d_name, "tfevents"))
                check_file(p, cc);
        }
        free(p);
    }
    closedir(d);
}

static void corpus_histograms_never_backwards(void **state)
{
    (void)state;
    char *root = tu_testdata("");
    if (!root)
        skip();
    corpus_counts cc = {0};
    walk(root, &cc);
    print_message("corpus: %ld files, %ld histogram protos, %ld buckets, "
                  "%ld backwards\n",
                  cc.files, cc.protos, cc.buckets, cc.backwards);
    assert_true(cc.files > 0);
    assert_int_equal(cc.backwards, 0);
    free(root);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(overflowing_shape_is_not_a_scalar),
        cmocka_unit_test(float_counts_saturate),
        cmocka_unit_test(histogram_all_empty),
        cmocka_unit_test(histogram_single_bucket),
        cmocka_unit_test(histogram_empty_ends_inner_kept),
        cmocka_unit_test(histogram_min_equals_max),
        cmocka_unit_test(histogram_no_empty_ends_unchanged),
        cmocka_unit_test(writer_histograms_never_backwards),
        cmocka_unit_test(corpus_histograms_never_backwards),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
