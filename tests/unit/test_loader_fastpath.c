/*
 * test_loader_fastpath.c - the loader's short cuts on one huge run
 * (issue 28, item 3) change no answer:
 *
 *  - tfb_summary_next_simple takes only bytes that tfb_summary_next reads
 *    as the same tag and scalar with every other field empty (edges of
 *    the one-byte lengths, and random damage of such values);
 *  - a run whose scalar values take that path loads as the same run whose
 *    values cannot (each carries a node_name besides its tag, which
 *    changes nothing else): tags first seen with metadata, a plugin with
 *    a value decoder, steps going back, non-finite values, tags out of
 *    their usual order, empty tags, with a helper thread (loader_split.h)
 *    over several 65,536-event batches;
 *  - a helper's publish mark (tfb_loader_split_publish) moves the run's
 *    generation only once every point before it is in its series, and
 *    takes the points the store refused from its count.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "collector/event_decode.h"
#include "store/loader.h"
#include "store/loader_split.h"
#include "store/store.h"
#include "store/value_decoder.h"
#include "tfboard.h"
#include "test_util.h"

/* ---- protobuf bytes, by hand ---- */

typedef struct buf {
    uint8_t *p;
    size_t n, cap;
} buf;

static void put(buf *b, const void *d, size_t n)
{
    if (b->n + n > b->cap) {
        b->cap = (b->n + n) * 2 + 64;
        b->p = realloc(b->p, b->cap);
        assert_non_null(b->p);
    }
    memcpy(b->p + b->n, d, n);
    b->n += n;
}

static void put_byte(buf *b, uint8_t c)
{
    put(b, &c, 1);
}

static void put_varint(buf *b, uint64_t v)
{
    while (v >= 0x80) {
        put_byte(b, (uint8_t)(v | 0x80));
        v >>= 7;
    }
    put_byte(b, (uint8_t)v);
}

static void put_len(buf *b, uint8_t key, const void *d, size_t n)
{
    put_byte(b, key);
    put_varint(b, n);
    put(b, d, n);
}

/* One Summary.Value: tag, simple_value, metadata (plugin name, display
 * name) when given, and a node_name when `node` (ignored next to a tag,
 * but no longer the bytes tfb_summary_next_simple takes). */
static void put_value(buf *out, const char *tag, float x, const char *plugin,
                      const char *display, const char *node)
{
    buf v = {0}, md = {0}, pd = {0};
    put_len(&v, 0x0a, tag, strlen(tag));
    put_byte(&v, 0x15);
    put(&v, &x, 4);
    if (plugin || display) {
        if (plugin) {
            put_len(&pd, 0x0a, plugin, strlen(plugin));
            put_len(&md, 0x0a, pd.p, pd.n);
        }
        if (display)
            put_len(&md, 0x12, display, strlen(display));
        put_len(&v, 0x4a, md.p, md.n);
    }
    if (node)
        put_len(&v, 0x3a, node, strlen(node));
    put_len(out, 0x0a, v.p, v.n);
    free(v.p);
    free(md.p);
    free(pd.p);
}

/* One TFRecord of an Event {wall_time, step, summary}. */
static void put_record(buf *file, double wall, int64_t step, const buf *sum)
{
    buf ev = {0};
    put_byte(&ev, 0x09);
    put(&ev, &wall, 8);
    put_byte(&ev, 0x10);
    put_varint(&ev, (uint64_t)step);
    put_len(&ev, 0x2a, sum->p, sum->n);
    uint8_t head[12];
    uint64_t len = ev.n;
    memcpy(head, &len, 8);
    uint32_t c = tfb_masked_crc32c(head, 8);
    memcpy(head + 8, &c, 4);
    put(file, head, 12);
    put(file, ev.p, ev.n);
    c = tfb_masked_crc32c(ev.p, ev.n);
    put(file, &c, 4);
    free(ev.p);
}

/* ---- the decoder's short cut ---- */

/* Where tfb_summary_next_simple takes the bytes, tfb_summary_next must
 * read them the same way. Returns whether the short cut took them. */
static int check_same(const uint8_t *p, size_t n)
{
    size_t pos_s = 0, pos_g = 0;
    tfb_strview tag;
    float x;
    int s = tfb_summary_next_simple(p, n, &pos_s, &tag, &x);
    if (!s) {
        assert_int_equal(pos_s, 0);
        return 0;
    }
    tfb_value v;
    v.size = sizeof v;
    assert_int_equal(tfb_summary_next(p, n, &pos_g, &v), 1);
    assert_int_equal(pos_s, pos_g);
    assert_int_equal(v.kind, TFB_VALUE_SCALAR);
    assert_int_equal(v.tag.len, tag.len);
    assert_ptr_equal(v.tag.ptr, tag.ptr);
    assert_memory_equal(&v.scalar, &(double){(double)x}, sizeof(double));
    assert_int_equal(v.plugin_name.len, 0);
    assert_int_equal(v.display_name.len, 0);
    assert_int_equal(v.description.len, 0);
    assert_int_equal(v.plugin_content.len, 0);
    assert_null(v.tensor);
    assert_null(v.histo);
    assert_null(v.audio);
    return 1;
}

static void simple_matches_general(void **state)
{
    (void)state;
    char tag[200];
    /* every tag length around the one-byte limits: taken up to 120 (the
     * value's length, tag + 7, still one byte), never past */
    for (size_t t = 0; t < 140; t++) {
        memset(tag, 'a' + (int)(t % 26), t);
        tag[t] = 0;
        buf b = {0};
        put_value(&b, tag, 1.5f + (float)t, NULL, NULL, NULL);
        put_byte(&b, 0x0a); /* a next value's first byte after it */
        int took = check_same(b.p, b.n - 1);
        assert_int_equal(took, t <= 120);
        assert_int_equal(check_same(b.p, b.n), t <= 120);
        free(b.p);
    }
    /* a 121-byte tag behind a value length of 128 in one byte: 0x80
     * starts a two-byte varint (0x80 0x0a: 1,280), no length of 128 */
    uint8_t crafted[4 + 121 + 5] = {0x0a, 0x80, 0x0a, 121};
    memset(crafted + 4, 'z', 121);
    crafted[4 + 121] = 0x15;
    assert_false(check_same(crafted, sizeof crafted));
    /* what the short cut must leave to the general path */
    buf b = {0};
    put_value(&b, "loss", 2.0f, "scalars", NULL, NULL);
    assert_false(check_same(b.p, b.n));
    b.n = 0;
    put_value(&b, "loss", 2.0f, NULL, NULL, "node");
    assert_false(check_same(b.p, b.n));
    b.n = 0;
    put_value(&b, "loss", 2.0f, NULL, NULL, NULL);
    assert_true(check_same(b.p, b.n));
    assert_false(check_same(b.p, b.n - 1)); /* cut short */
    /* random damage of simple values (and of one byte more) */
    uint8_t good[64], m[64];
    size_t gn = b.n;
    memcpy(good, b.p, gn);
    srand(28);
    int taken = 0;
    for (int i = 0; i < 200000; i++) {
        memcpy(m, good, gn);
        size_t n = gn + (size_t)(rand() % 3);
        for (size_t k = gn; k < n; k++)
            m[k] = (uint8_t)rand();
        int flips = 1 + rand() % 3;
        for (int f = 0; f < flips; f++)
            m[rand() % n] = (uint8_t)rand();
        taken += check_same(m, n);
    }
    assert_true(taken > 0);
    free(b.p);
}

/* ---- the loader: short cut or not, the same run ---- */

#define DEC_PLUGIN "wl_fastpath_dec"

typedef struct dec_state {
    uint64_t calls, kept;
    double sum;
} dec_state;

/* Takes every third value of its plugin's tags; the others go on to the
 * store's scalars (TFB_ENOENT). */
static int dec_decode(const tfb_decoded_value *d)
{
    dec_state *s = d->state;
    s->calls++;
    if (s->calls % 3)
        return TFB_ENOENT;
    s->kept++;
    s->sum += d->v->scalar * (double)d->ev->step;
    return 1;
}

static void *dec_new(void)
{
    return calloc(1, sizeof(dec_state));
}

static void dec_reset(void *s)
{
    memset(s, 0, sizeof(dec_state));
}

static const tfb_value_decoder g_dec = {DEC_PLUGIN, dec_decode, dec_new,
                                        dec_reset, free};

/* 150,000 events (past two 65,536-event batches) of one run: `slow`
 * gives every value a node_name, so none takes the short cut. */
static void write_run(const char *dir, int slow)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/run", dir);
    assert_int_equal(mkdir(path, 0755), 0);
    snprintf(path, sizeof path, "%s/run/events.out.tfevents.1.test", dir);
    char long120[121], long121[122];
    memset(long120, 'x', 120);
    long120[120] = 0;
    memset(long121, 'y', 121);
    long121[121] = 0;
    const char *tags[] = {"loss", "acc", "dec/x", long120, long121, "lr"};
    const char *node = slow ? "a_node" : NULL;
    buf file = {0}, sum = {0};
    int64_t step = 0;
    for (int i = 0; i < 150000; i++) {
        sum.n = 0;
        /* steps go back twice (TensorBoard's purge) */
        step = i == 60000 ? 100 : i == 120000 ? 59000 : step + 1;
        int k = i % 6;
        if (i >= 6 && i % 997 == 0) /* now and then out of order */
            k = (k + 3) % 6;
        float x = (float)((i * 7919) % 1000) / 8.0f;
        if (i % 5003 == 0)
            x = NAN;
        else if (i % 7001 == 0)
            x = -INFINITY;
        const char *plugin = NULL, *display = NULL;
        if (i < 6) { /* each tag's first value: its metadata */
            plugin = k == 2 ? DEC_PLUGIN : k == 5 ? NULL : "scalars";
            display = k == 0 ? "Loss" : NULL;
        }
        put_value(&sum, tags[k], x, plugin, display, node);
        if (i % 11 == 0) /* a second value in the event, another tag */
            put_value(&sum, tags[(k + 1) % 6], x + 1, NULL, NULL, node);
        if (i % 4001 == 0) /* a value with neither tag nor node name */
            put_value(&sum, "", x, NULL, NULL, NULL);
        put_record(&file, 1.6e9 + i * 0.25, step, &sum);
    }
    assert_int_equal(tu_write_file(path, file.p, file.n), 0);
    free(file.p);
    free(sum.p);
}

typedef struct loaded {
    char *dir;
    tfb_store *st;
    tfb_run *run;
    uint64_t points;
} loaded;

static void load(loaded *out, int slow)
{
    out->dir = tu_mkdtemp();
    write_run(out->dir, slow);
    assert_int_equal(tfb_store_create(&out->st, out->dir), 0);
    tfb_loader *l;
    /* two threads, one run: the second becomes its helper */
    tfb_loader_opts lo = {0, 2, NULL};
    assert_int_equal(tfb_loader_create(&l, out->st, &lo), 0);
    assert_int_equal(tfb_loader_pass(l), 0);
    tfb_load_progress p;
    tfb_store_progress(out->st, &p);
    out->points = p.points;
    tfb_loader_stop(l);
    out->run = tfb_store_find_run(out->st, "run");
    assert_non_null(out->run);
}

static void unload(loaded *x)
{
    tfb_store_destroy(x->st);
    tu_rmtree(x->dir);
    free(x->dir);
}

static void same_series(tfb_series *a, tfb_series *b)
{
    assert_non_null(b);
    assert_string_equal(tfb_series_tag(a), tfb_series_tag(b));
    assert_string_equal(tfb_series_plugin(a), tfb_series_plugin(b));
    assert_string_equal(tfb_series_display_name(a),
                        tfb_series_display_name(b));
    tfb_series_view va, vb;
    tfb_series_read_begin(a, &va);
    tfb_series_read_begin(b, &vb);
    assert_true(va.count > 0);
    assert_int_equal(va.count, vb.count);
    for (size_t i = 0; i < va.count; i++) {
        assert_int_equal(va.step[i], vb.step[i]);
        assert_memory_equal(&va.wall[i], &vb.wall[i], sizeof(double));
        assert_memory_equal(&va.value[i], &vb.value[i], sizeof(float));
    }
    assert_int_equal(va.nonfinite.points, vb.nonfinite.points);
    assert_int_equal(va.nonfinite.nan, vb.nonfinite.nan);
    assert_int_equal(va.nonfinite.neg_inf, vb.nonfinite.neg_inf);
    tfb_series_read_end(b);
    tfb_series_read_end(a);
}

static void fast_load_equals_general(void **state)
{
    (void)state;
    (void)tfb_value_decoder_register(&g_dec); /* once a process */
    loaded fast, slow;
    load(&fast, 0);
    load(&slow, 1);
    assert_true(fast.points > 150000);
    assert_int_equal(fast.points, slow.points);
    tfb_series **va, **vb;
    size_t na, nb;
    assert_int_equal(tfb_run_series(fast.run, TFB_SERIES_SCALAR, &va, &na),
                     0);
    assert_int_equal(tfb_run_series(slow.run, TFB_SERIES_SCALAR, &vb, &nb),
                     0);
    assert_int_equal(na, 6);
    assert_int_equal(na, nb);
    for (size_t i = 0; i < na; i++)
        same_series(va[i], vb[i]);
    free(va);
    free(vb);
    assert_string_equal(tfb_series_display_name(tfb_run_find_series(
                            fast.run, TFB_SERIES_SCALAR, "loss")),
                        "Loss");
    /* the decoder saw every value of its tag, on either path */
    dec_state *da = tfb_run_decoder_state(fast.run, &g_dec);
    dec_state *db = tfb_run_decoder_state(slow.run, &g_dec);
    assert_non_null(da);
    assert_non_null(db);
    assert_true(da->calls > 20000);
    assert_int_equal(da->calls, db->calls);
    assert_int_equal(da->kept, db->kept);
    assert_memory_equal(&da->sum, &db->sum, sizeof(double));
    /* and the note about values with no tag */
    char **ta, **tb;
    size_t ma, mb;
    assert_int_equal(tfb_run_notes(fast.run, &ta, &ma), 0);
    assert_int_equal(tfb_run_notes(slow.run, &tb, &mb), 0);
    assert_int_equal(ma, mb);
    assert_true(ma >= 1);
    for (size_t i = 0; i < ma; i++)
        assert_string_equal(ta[i], tb[i]);
    tfb_strv_free(ta, ma);
    tfb_strv_free(tb, mb);
    unload(&fast);
    unload(&slow);
}

/* ---- the helper's publish marks ---- */

static void publish_after_points(void **state)
{
    (void)state;
    tfb_store *st;
    assert_int_equal(tfb_store_create(&st, "/nonexistent"), 0);
    tfb_run *r;
    assert_int_equal(tfb_store_get_run(st, "a", &r), 0);
    tfb_series *s, *h;
    assert_int_equal(tfb_run_get_series(r, TFB_SERIES_SCALAR, "x", 1,
                                        "scalars", 7, NULL, 0, NULL, 0, &s),
                     0);
    /* a scalar appended to a histogram series is refused */
    assert_int_equal(tfb_run_get_series(r, TFB_SERIES_HISTOGRAM, "h", 1,
                                        "histograms", 10, NULL, 0, NULL, 0,
                                        &h),
                     0);
    atomic_uint_fast64_t points = 0;
    tfb_loader_split *sp;
    assert_int_equal(tfb_loader_split_start(&sp, &points), 0);
    enum { N = 300000 };
    for (int round = 1; round <= 3; round++) {
        uint64_t g0 = tfb_run_generation(r);
        for (int i = 0; i < N; i++)
            tfb_loader_split_push(sp, s, (int64_t)(round - 1) * N + i, 1.0,
                                  (double)i);
        tfb_loader_split_publish(sp, r, N);
        /* the worker reads on; once the generation moves, every point
         * published is there */
        while (tfb_run_generation(r) == g0)
            ;
        assert_int_equal(tfb_series_count(s), (size_t)round * N);
        assert_int_equal(atomic_load(&points), (uint64_t)round * N);
    }
    /* refusals come off the next mark's count */
    uint64_t g0 = tfb_run_generation(r);
    tfb_loader_split_push(sp, h, 1, 1.0, 1.0);
    tfb_loader_split_push(sp, s, 3 * N, 1.0, 1.0);
    tfb_loader_split_push(sp, h, 2, 1.0, 1.0);
    tfb_loader_split_publish(sp, r, 3);
    assert_int_equal(tfb_loader_split_drain(sp), 0);
    assert_int_equal(atomic_load(&points), 3 * N + 1);
    assert_int_equal(tfb_run_generation(r), g0 + 1);
    /* a batch the store refused whole: counted, no generation */
    tfb_loader_split_push(sp, h, 3, 1.0, 1.0);
    tfb_loader_split_publish(sp, r, 1);
    assert_int_equal(tfb_loader_split_drain(sp), 0);
    assert_int_equal(atomic_load(&points), 3 * N + 1);
    assert_int_equal(tfb_run_generation(r), g0 + 1);
    /* after the last mark, the drain says what was refused */
    tfb_loader_split_push(sp, h, 4, 1.0, 1.0);
    tfb_loader_split_push(sp, h, 5, 1.0, 1.0);
    assert_int_equal(tfb_loader_split_drain(sp), 2);
    tfb_loader_split_stop(sp);
    assert_int_equal(tfb_series_count(s), 3 * N + 1);
    tfb_store_destroy(st);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(simple_matches_general),
        cmocka_unit_test(fast_load_equals_general),
        cmocka_unit_test(publish_after_points),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
