/* test_scalar_codec.c - the store's compact scalar encoding: random and
 * adversarial series round-trip bit for bit (through the block codec and
 * through the store, across seals, trims and resets), and a regular
 * series costs at most 16 bytes a point by the store's own accounting.
 * Pieces decoded without a pin (tfb_series_scalar_range) match too. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "store/scalar_codec.h"
#include "store/store.h"
#include "test_util.h"

static uint64_t rng = 0x9e3779b97f4a7c15u;

static uint64_t next_u64(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static double bits_double(uint64_t u)
{
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

static uint64_t double_bits(double d)
{
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    return u;
}

/* Kinds of series the generator makes; each stresses one column form. */
enum {
    SHAPE_REGULAR,      /* stride steps, even walls, float values */
    SHAPE_CLOCK,        /* walls of a real clock: jittered, float64 */
    SHAPE_BACKWARDS,    /* steps going back and repeating */
    SHAPE_EXTREMES,     /* INT64_MIN/MAX steps, huge jumps */
    SHAPE_WILD_WALLS,   /* NaN/Inf/-0.0/subnormal walls, far apart */
    SHAPE_WILD_VALUES,  /* NaN payloads, Inf, -0.0, doubles not floats */
    SHAPE_RANDOM_BITS,  /* every column random bits */
    SHAPE_FIXED_RATE,   /* a writer at 100 Hz: walls 0.01 s apart, whose
                         * ticks differ by 41943 or 41944 */
    SHAPE_COUNT
};

static void make_series(int shape, size_t n, int64_t *step, double *wall,
                        double *value)
{
    static const int64_t ext[] = {INT64_MIN, INT64_MAX, 0, -1, 1,
                                  INT64_MIN + 1, INT64_MAX - 1};
    static const double wild[] = {NAN, INFINITY, -INFINITY, -0.0, 0.0,
                                  4.9e-324, -4.9e-324, 1.7976931348623157e308,
                                  -1.7976931348623157e308, 2.2250738585072014e-308};
    double w = 1.7e9 + (double)(next_u64() % 1000000) / 7.0;
    for (size_t i = 0; i < n; i++) {
        uint64_t r = next_u64();
        switch (shape) {
        case SHAPE_REGULAR:
            step[i] = 100 + (int64_t)i * 10;
            wall[i] = 1.7e9 + (double)i * 0.25;
            value[i] = (float)((double)(r % 100000) / 1000.0);
            break;
        case SHAPE_CLOCK:
            w += 0.05 + (double)(r % 1000) * 1e-6;
            step[i] = (int64_t)i;
            wall[i] = w;
            value[i] = (double)(r % 1000000) / 3.0; /* not floats */
            break;
        case SHAPE_BACKWARDS:
            step[i] = (int64_t)(r % 50) - 25;
            wall[i] = 1.7e9 - (double)(r % 100000) * 0.001;
            value[i] = (float)(r % 7);
            break;
        case SHAPE_EXTREMES:
            step[i] = (r & 3) ? ext[r % 7] : (int64_t)r;
            wall[i] = (r & 8) ? 1.7e9 : 1.7e9 + (double)(r % 1000) * 1e9;
            value[i] = (r & 16) ? (double)(int64_t)r : 1e300;
            break;
        case SHAPE_WILD_WALLS:
            step[i] = (int64_t)i;
            wall[i] = (r & 1) ? wild[r % 10] : bits_double(next_u64());
            value[i] = 1.5;
            break;
        case SHAPE_WILD_VALUES:
            step[i] = (int64_t)i * 3;
            wall[i] = 1.7e9 + (double)i;
            switch (r % 8) {
            case 0: value[i] = NAN; break;
            case 1: value[i] = bits_double(0x7ff0000000000001u); break;
            case 2: value[i] = bits_double(0xfff8000000000123u); break;
            case 3: value[i] = -0.0; break;
            case 4: value[i] = -INFINITY; break;
            case 5: value[i] = 0.1; break;       /* a double, no float */
            case 6: value[i] = (float)0.1; break;
            default: value[i] = 1e-310; break;  /* subnormal double */
            }
            break;
        case SHAPE_FIXED_RATE:
            step[i] = (int64_t)i;
            wall[i] = 1700000000.0 + (double)i * 0.01;
            value[i] = (float)sin((double)i * 0.001);
            break;
        default:
            step[i] = (int64_t)r;
            wall[i] = bits_double(next_u64());
            value[i] = bits_double(next_u64());
            break;
        }
    }
}

/* Every column of the block codec gives back the identical bits. */
static void test_codec_round_trip(void **state)
{
    (void)state;
    enum { N = TFB_SCALAR_BLOCK };
    int64_t step[N], dstep[N];
    double wall[N], value[N], dwall[N], dv64[N];
    float dv32[N];
    static uint8_t buf[TFB_SCALAR_BLOCK_MAX(N)];
    for (int round = 0; round < 400; round++) {
        int shape = round % SHAPE_COUNT;
        size_t n = 1 + next_u64() % N;
        if (round % 5 == 0)
            n = N;
        make_series(shape, n, step, wall, value);
        size_t len = tfb_scalar_block_encode(buf, step, wall, value, n);
        assert_true(len <= TFB_SCALAR_BLOCK_MAX(n));
        assert_int_equal(tfb_scalar_block_count(buf), n);
        const uint8_t *end =
            tfb_scalar_block_decode(buf, dstep, dwall, dv32, dv64);
        assert_ptr_equal(end, buf + len);
        assert_ptr_equal(tfb_scalar_block_next(buf), buf + len);
        /* without the walls (their ticks skipped, not decoded): the same
         * steps and values, and the same end */
        int64_t nstep[N];
        float nv32[N];
        assert_ptr_equal(tfb_scalar_block_decode(buf, nstep, NULL, nv32,
                                                 NULL), buf + len);
        assert_memory_equal(nstep, step, n * sizeof *step);
        assert_memory_equal(nv32, dv32, n * sizeof *nv32);
        for (size_t i = 0; i < n; i++) {
            assert_true(dstep[i] == step[i]);
            assert_true(double_bits(dwall[i]) == double_bits(wall[i]));
            assert_true(double_bits(dv64[i]) == double_bits(value[i]));
            float f = (float)value[i];
            assert_memory_equal(&dv32[i], &f, sizeof f);
        }
        if (shape == SHAPE_REGULAR && n == N)
            assert_true(len <= 4 * n + 40); /* steps, walls: strides */
        /* the ticks' deltas take 3 bytes, their differences 1 */
        if (shape == SHAPE_FIXED_RATE && n == N)
            assert_true(len <= 5 * n + 40);
    }
}

static tfb_series *new_series(tfb_store *st, const char *tag)
{
    tfb_run *r;
    assert_int_equal(tfb_store_get_run(st, "run", &r), 0);
    tfb_series *s;
    assert_int_equal(tfb_run_get_series(r, TFB_SERIES_SCALAR, tag,
                                        strlen(tag), "scalars", 7, NULL, 0,
                                        NULL, 0, &s), 0);
    return s;
}

static void check_view(tfb_series *s, const int64_t *step,
                       const double *wall, const double *value, size_t n)
{
    tfb_series_view v;
    tfb_series_read_begin(s, &v);
    assert_int_equal(v.count, n);
    int any_f64 = 0;
    for (size_t i = 0; i < n; i++) {
        assert_true(v.step[i] == step[i]);
        assert_true(double_bits(v.wall[i]) == double_bits(wall[i]));
        float f = (float)value[i];
        assert_memory_equal(&v.value[i], &f, sizeof f);
        double back = f;
        if (double_bits(back) != double_bits(value[i]))
            any_f64 = 1;
    }
    if (any_f64) {
        assert_non_null(v.value64);
        for (size_t i = 0; i < n; i++)
            assert_true(double_bits(v.value64[i]) == double_bits(value[i]));
    } else if (v.value64) {
        for (size_t i = 0; i < n; i++)
            assert_true(double_bits(v.value64[i]) == double_bits(value[i]));
    }
    tfb_series_read_end(s);
    /* Pieces decoded without a pin: from every kind of position (block
     * starts and ends, inside the raw tail, past the end). */
    int64_t rs[600];
    double rw[600], r64[600];
    float r32[600];
    for (int q = 0; q < 12; q++) {
        size_t from = q < 4 ? (size_t)q * 255 : next_u64() % (n + 2);
        size_t want = 1 + next_u64() % 600;
        size_t got = tfb_series_scalar_range(s, from, want, rs, rw, r32,
                                             r64);
        size_t expect = from >= n ? 0 : (n - from < want ? n - from : want);
        assert_int_equal(got, expect);
        for (size_t i = 0; i < got; i++) {
            assert_true(rs[i] == step[from + i]);
            assert_true(double_bits(rw[i]) == double_bits(wall[from + i]));
            assert_true(double_bits(r64[i]) == double_bits(value[from + i]));
            float f = (float)value[from + i];
            assert_memory_equal(&r32[i], &f, sizeof f);
        }
    }
}

/* The points of s with steps in [lo, hi] (tfb_series_scalar_in_steps)
 * are exactly those a filter over the expected points keeps, in order,
 * with their positions; a cap keeps the first ones and says so. The only
 * columns these calls decode differently are the ones asked for, so
 * single columns of tfb_series_scalar_range are checked too. */
static void check_in_steps(tfb_series *s, const int64_t *step,
                           const double *value, size_t n)
{
    enum { CAP = 6000 };
    static int64_t got_s[CAP];
    static float got_v[CAP];
    static size_t got_i[CAP];
    for (int q = 0; q < 8; q++) {
        int64_t lo, hi;
        if (q == 0) {
            lo = INT64_MIN;
            hi = INT64_MAX;
        } else if (n && q < 6) {
            int64_t a = step[next_u64() % n];
            int64_t w = (int64_t)(next_u64() % 300);
            lo = a;
            hi = a > INT64_MAX - w ? INT64_MAX : a + w;
        } else {
            lo = (int64_t)next_u64();
            hi = (int64_t)next_u64();
            if (lo > hi) {
                int64_t t = lo;
                lo = hi;
                hi = t;
            }
        }
        size_t cap = q == 7 ? 3 : CAP;
        int more = -1;
        size_t k = tfb_series_scalar_in_steps(s, lo, hi, got_s, got_v, got_i,
                                              cap, &more);
        size_t j = 0, matched = 0;
        for (size_t i = 0; i < n; i++) {
            if (step[i] < lo || step[i] > hi)
                continue;
            matched++;
            if (j == cap)
                continue;
            assert_true(j < k);
            assert_int_equal(got_i[j], i);
            assert_true(got_s[j] == step[i]);
            float f = (float)value[i];
            assert_memory_equal(&got_v[j], &f, sizeof f);
            j++;
        }
        assert_int_equal(k, j);
        assert_int_equal(more, matched > cap);
    }
    if (n) { /* one column at a time */
        size_t from = next_u64() % n, want = n - from < 300 ? n - from : 300;
        static int64_t rs[300];
        static float r32[300];
        assert_int_equal(tfb_series_scalar_range(s, from, want, rs, NULL,
                                                 NULL, NULL), want);
        assert_int_equal(tfb_series_scalar_range(s, from, want, NULL, NULL,
                                                 r32, NULL), want);
        for (size_t i = 0; i < want; i++) {
            assert_true(rs[i] == step[from + i]);
            float f = (float)value[from + i];
            assert_memory_equal(&r32[i], &f, sizeof f);
        }
    }
}

/* A block's step span from its header: a stride's ends; nothing for
 * deltas or for a stride that wraps around int64. */
static void test_block_step_span(void **state)
{
    (void)state;
    static uint8_t buf[TFB_SCALAR_BLOCK_MAX(TFB_SCALAR_BLOCK)];
    int64_t st[4];
    double wall[4] = {1, 2, 3, 4}, val[4] = {1, 2, 3, 4};
    int64_t lo, hi, back[4];
    const int64_t up[4] = {10, 13, 16, 19}, down[4] = {5, 3, 1, -1},
                  deltas[4] = {1, 2, 4, 8},
                  wrap[4] = {INT64_MAX - 1, INT64_MAX, INT64_MIN,
                             INT64_MIN + 1};
    memcpy(st, up, sizeof st);
    tfb_scalar_block_encode(buf, st, wall, val, 4);
    assert_int_equal(tfb_scalar_block_step_span(buf, &lo, &hi), 1);
    assert_true(lo == 10 && hi == 19);
    assert_int_equal(tfb_scalar_block_steps(buf, back), 4);
    assert_memory_equal(back, up, sizeof back);
    memcpy(st, down, sizeof st);
    tfb_scalar_block_encode(buf, st, wall, val, 4);
    assert_int_equal(tfb_scalar_block_step_span(buf, &lo, &hi), 1);
    assert_true(lo == -1 && hi == 5);
    memcpy(st, deltas, sizeof st);
    tfb_scalar_block_encode(buf, st, wall, val, 4);
    assert_int_equal(tfb_scalar_block_step_span(buf, &lo, &hi), 0);
    assert_int_equal(tfb_scalar_block_steps(buf, back), 4);
    assert_memory_equal(back, deltas, sizeof back);
    memcpy(st, wrap, sizeof st);
    tfb_scalar_block_encode(buf, st, wall, val, 4);
    assert_int_equal(tfb_scalar_block_step_span(buf, &lo, &hi), 0);
    assert_int_equal(tfb_scalar_block_steps(buf, back), 4);
    assert_memory_equal(back, wrap, sizeof back);
}

/* Through the store: appends of mixed shapes, trimmed at odd counts (a
 * short last block is re-encoded with the next points), pinned at every
 * stage; then a reset and a second fill. */
static void test_store_round_trip(void **state)
{
    (void)state;
    enum { N = 5000 };
    int64_t *step = malloc(N * sizeof *step);
    double *wall = malloc(N * sizeof *wall);
    double *value = malloc(N * sizeof *value);
    assert_non_null(step);
    assert_non_null(wall);
    assert_non_null(value);
    tfb_store *st;
    assert_int_equal(tfb_store_create(&st, "/nonexistent"), 0);
    for (int shape = 0; shape < SHAPE_COUNT + 1; shape++) {
        char tag[16];
        snprintf(tag, sizeof tag, "t%d", shape);
        tfb_series *s = new_series(st, tag);
        /* the last series mixes every shape, 37 points at a time */
        for (size_t i = 0; i < N; i += 37) {
            size_t m = N - i < 37 ? N - i : 37;
            make_series(shape < SHAPE_COUNT ? shape : (int)(i / 37) %
                        SHAPE_COUNT, m, step + i, wall + i, value + i);
        }
        size_t done = 0;
        const size_t trims[] = {1, 2, 255, 256, 257, 300, 1000, 1001, 2049,
                                4999, N};
        for (size_t t = 0; t < sizeof trims / sizeof trims[0]; t++) {
            for (; done < trims[t]; done++)
                assert_int_equal(tfb_series_append_scalar(s, step[done],
                                 wall[done], value[done]), 0);
            check_view(s, step, wall, value, done);
            check_in_steps(s, step, value, done);
            tfb_series_trim(s);
            check_view(s, step, wall, value, done);
            check_in_steps(s, step, value, done);
        }
        assert_int_equal(tfb_series_count(s), N);
    }
    /* A reset empties every series; a second fill decodes alone. */
    tfb_run *r = tfb_store_find_run(st, "run");
    tfb_run_reset(r);
    tfb_series *s = tfb_run_find_series(r, TFB_SERIES_SCALAR, "t0");
    check_view(s, step, wall, value, 0);
    make_series(SHAPE_WILD_VALUES, 700, step, wall, value);
    for (size_t i = 0; i < 700; i++)
        assert_int_equal(tfb_series_append_scalar(s, step[i], wall[i],
                                                  value[i]), 0);
    check_view(s, step, wall, value, 700);
    tfb_series_trim(s);
    check_view(s, step, wall, value, 700);
    tfb_store_destroy(st);
    free(step);
    free(wall);
    free(value);
}

/* Long series whose steps are in order read by bisection over the block
 * index (and reads from the middle go straight to their block): the
 * same points as a filter over what was appended, for a stride, for
 * rising steps with gaps and repeats (delta blocks), for a falling stride
 * (never in order: scanned), and for a series that falls out of order
 * late (its flag set when that point is sealed). */
static void test_sorted_reads(void **state)
{
    (void)state;
    enum { N = 20000 };
    int64_t *step = malloc(N * sizeof *step);
    double *wall = malloc(N * sizeof *wall);
    double *value = malloc(N * sizeof *value);
    assert_non_null(step);
    assert_non_null(wall);
    assert_non_null(value);
    tfb_store *st;
    assert_int_equal(tfb_store_create(&st, "/nonexistent"), 0);
    for (int kind = 0; kind < 4; kind++) {
        char tag[16];
        snprintf(tag, sizeof tag, "sorted%d", kind);
        tfb_series *s = new_series(st, tag);
        int64_t at = -5000;
        for (size_t i = 0; i < N; i++) {
            uint64_t r = next_u64();
            switch (kind) {
            case 0: at = (int64_t)i * 7 - 3000; break;
            case 1: at += (int64_t)(r % 4); break; /* repeats and gaps */
            case 2: at = 1000000 - (int64_t)i * 3; break;
            default: at = i == 15000 ? 5 : (int64_t)i; break;
            }
            step[i] = at;
            wall[i] = 1.7e9 + (double)i;
            value[i] = (float)(r % 1000);
            assert_int_equal(tfb_series_append_scalar(s, step[i], wall[i],
                                                      value[i]), 0);
            /* read while some points wait in the tail, and after seals */
            if (i == 9000 || i == 15100)
                check_in_steps(s, step, value, i + 1);
        }
        tfb_series_trim(s);
        for (int rep = 0; rep < 20; rep++)
            check_in_steps(s, step, value, N);
    }
    tfb_store_destroy(st);
    free(step);
    free(wall);
    free(value);
}

/* Several series pinned at once on one thread, released out of order. */
static void test_nested_pins(void **state)
{
    (void)state;
    tfb_store *st;
    assert_int_equal(tfb_store_create(&st, "/nonexistent"), 0);
    tfb_series *a = new_series(st, "a"), *b = new_series(st, "b"),
               *c = new_series(st, "c");
    for (int i = 0; i < 600; i++) {
        tfb_series_append_scalar(a, i, 1.0 + i, i);
        tfb_series_append_scalar(b, -i, 2.0 + i, 0.5 * i);
        tfb_series_append_scalar(c, 2 * i, 3.0 + i, -i);
    }
    tfb_series_view va, vb, vc;
    tfb_series_read_begin(a, &va);
    tfb_series_read_begin(b, &vb);
    tfb_series_read_begin(c, &vc);
    tfb_series_read_end(b);
    assert_true(va.step[599] == 599 && va.value[599] == 599.0f);
    assert_true(vc.step[599] == 1198 && vc.wall[599] == 602.0);
    tfb_series_read_end(a);
    assert_true(vc.value[10] == -10.0f);
    tfb_series_read_end(c);
    tfb_store_destroy(st);
}

/* Bytes per point by the store's own accounting, on regular series of a
 * sweep's size and of a long run, and on a clock-timed float32 series. */
static void test_bytes_per_point(void **state)
{
    (void)state;
    enum { N = 100000 };
    int64_t *step = malloc(N * sizeof *step);
    double *wall = malloc(N * sizeof *wall);
    double *value = malloc(N * sizeof *value);
    assert_non_null(step);
    assert_non_null(wall);
    assert_non_null(value);
    tfb_store *st;
    assert_int_equal(tfb_store_create(&st, "/nonexistent"), 0);
    const size_t sizes[] = {200, 10000, N};
    for (size_t k = 0; k < 3; k++) {
        for (int shape = SHAPE_REGULAR; shape <= SHAPE_CLOCK; shape++) {
            char tag[32];
            snprintf(tag, sizeof tag, "s%zu_%d", k, shape);
            tfb_series *s = new_series(st, tag);
            make_series(shape, sizes[k], step, wall, value);
            for (size_t i = 0; i < sizes[k]; i++) {
                /* simple_value is float32 on disk */
                double v = (double)(float)value[i];
                assert_int_equal(tfb_series_append_scalar(s, step[i],
                                                          wall[i], v), 0);
                if (i == sizes[k] / 2)
                    tfb_series_trim(s); /* a pass ends mid-series */
            }
            tfb_series_trim(s);
            double bpp = (double)tfb_series_bytes(s) / (double)sizes[k];
            print_message("%s: %zu points, %.2f B a point\n",
                          shape == SHAPE_REGULAR ? "regular" : "clock",
                          sizes[k], bpp);
            assert_true(bpp <= 16.0);
            if (shape == SHAPE_REGULAR)
                assert_true(bpp <= 6.0);
        }
    }
    tfb_store_destroy(st);
    free(step);
    free(wall);
    free(value);
}

/* A series of one block holds its encoded block and nothing else once
 * trimmed (a sweep's 500,000 series of 100 points): no block index, no
 * tail. Its bytes are those of the block the codec makes of its points. */
static void test_one_block_holds_only_its_block(void **state)
{
    (void)state;
    enum { N = 100 };
    int64_t step[N];
    double wall[N], value[N];
    static uint8_t buf[TFB_SCALAR_BLOCK_MAX(N)];
    make_series(SHAPE_FIXED_RATE, N, step, wall, value);
    size_t len = tfb_scalar_block_encode(buf, step, wall, value, N);
    tfb_store *st;
    assert_int_equal(tfb_store_create(&st, "/nonexistent"), 0);
    tfb_series *s = new_series(st, "one_block");
    for (size_t i = 0; i < N; i++)
        assert_int_equal(tfb_series_append_scalar(s, step[i], wall[i],
                                                  value[i]), 0);
    tfb_series_trim(s);
    assert_int_equal(tfb_series_bytes(s), len);
    /* and it reads back whole, from its start and from its middle */
    int64_t rs[N];
    double rw[N];
    assert_int_equal(tfb_series_scalar_range(s, 0, N, rs, rw, NULL, NULL),
                     N);
    assert_memory_equal(rs, step, sizeof rs);
    assert_memory_equal(rw, wall, sizeof rw);
    assert_int_equal(tfb_series_scalar_range(s, 60, N, rs, NULL, NULL,
                                             NULL), N - 60);
    assert_memory_equal(rs, step + 60, (N - 60) * sizeof *rs);
    tfb_store_destroy(st);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_codec_round_trip),
        cmocka_unit_test(test_store_round_trip),
        cmocka_unit_test(test_sorted_reads),
        cmocka_unit_test(test_block_step_span),
        cmocka_unit_test(test_nested_pins),
        cmocka_unit_test(test_bytes_per_point),
        cmocka_unit_test(test_one_block_holds_only_its_block),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
