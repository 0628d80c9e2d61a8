/*
 * test_abi_sizes.c - every public struct starts with its size (checked at
 * compile time below), and an older caller's smaller struct is respected
 * by the functions that fill or read one (tfb_event, tfb_value,
 * tfb_rank_info, tfb_hparam, tfb_tensor, tfb_nonfinite_counts,
 * tfb_bucket): the library writes nothing past its size, reads nothing
 * past it (later fields read as unset) and keeps the size; a size of 0 is
 * TFB_EINVAL. Arrays are walked with their first element's size, also one
 * larger than the library's (a newer caller).
 *
 * Each "old" struct lives at the end of a heap block of exactly its size,
 * after a canary: under ASan any access past it fails the run, and
 * without ASan the canary bytes behind it (in a second, larger block)
 * must come back untouched.
 */
#include <setjmp.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"
#include "tfboard.h"

#define CANARY 0xA5

/* tfboard.h's convention: `size_t size` first, in every public struct. */
#define SIZE_FIRST(T)                                                         \
    _Static_assert(offsetof(T, size) == 0 &&                                  \
                       sizeof(((T *)0)->size) == sizeof(size_t),              \
                   #T " starts with its size")
SIZE_FIRST(tfb_writer_opts);
SIZE_FIRST(tfb_writer_stats);
SIZE_FIRST(tfb_hparam);
SIZE_FIRST(tfb_tensor);
SIZE_FIRST(tfb_tensor_f64);
SIZE_FIRST(tfb_nonfinite_counts);
SIZE_FIRST(tfb_rank_info);
SIZE_FIRST(tfb_gpu_opts);
SIZE_FIRST(tfb_gpu_stats);
SIZE_FIRST(tfb_gpu_metrics_opts);
SIZE_FIRST(tfb_gpu_metrics_stats);
SIZE_FIRST(tfb_event);
SIZE_FIRST(tfb_value);
SIZE_FIRST(tfb_reader_stats);
SIZE_FIRST(tfb_bucket);
SIZE_FIRST(tfb_embedding_opts);

/* A block of `size` bytes followed by `tail` canary bytes, zeroed, with
 * the size field set. */
static void *sized_block(size_t size, size_t tail)
{
    unsigned char *p = malloc(size + tail);
    assert_non_null(p);
    memset(p, 0, size);
    memset(p + size, CANARY, tail);
    memcpy(p, &size, sizeof size);
    return p;
}

static void assert_tail_untouched(const void *block, size_t size,
                                  size_t tail)
{
    const unsigned char *p = block;
    for (size_t i = 0; i < tail; i++)
        assert_int_equal(p[size + i], CANARY);
    size_t kept;
    memcpy(&kept, p, sizeof kept);
    assert_int_equal(kept, size); /* the caller's size is kept */
}

/* A run with one scalar, one text value and a rank record. */
static char *write_run(char **dir_out)
{
    char *dir = tu_mkdtemp();
    assert_non_null(dir);
    tfb_writer_opts o;
    tfb_writer_opts_init(&o);
    o.rank = 1;
    o.world_size = 2;
    o.local_rank = 1;
    o.job = "abi";
    tfb_writer *w;
    assert_int_equal(tfb_writer_open(&w, dir, &o), 0);
    assert_int_equal(tfb_scalar(w, "loss", 0.5, 7), 0);
    assert_int_equal(tfb_text(w, "note", "hello", 8), 0);
    assert_int_equal(tfb_writer_close(w), 0);
    *dir_out = dir;
    return tu_find_event_file(dir);
}

static void test_event_old_size(void **state)
{
    (void)state;
    char *dir, *path = write_run(&dir);
    assert_non_null(path);
    /* An older tfb_event: no summary, summary_len, offset. */
    const size_t old = offsetof(tfb_event, summary);
    const size_t tail = sizeof(tfb_event);
    tfb_reader *r;
    assert_int_equal(tfb_reader_open(&r, path), 0);
    tfb_event *small = sized_block(old, tail);
    assert_int_equal(tfb_reader_next(r, small), 1);
    assert_int_equal(small->kind, TFB_EVENT_FILE_VERSION);
    assert_true(small->file_version.len > 0);
    assert_tail_untouched(small, old, tail);
    /* The same in a block of exactly the old size (ASan sees overruns). */
    void *exact = sized_block(old, 0);
    int steps_seen = 0;
    int rc;
    while ((rc = tfb_reader_next(r, exact)) == 1) {
        /* Looked at through a whole copy: the block is only `old` long. */
        tfb_event seen = {0};
        memcpy(&seen, exact, old);
        steps_seen += seen.kind == TFB_EVENT_SUMMARY && seen.step == 7;
    }
    assert_int_equal(rc, 0);
    assert_true(steps_seen >= 1);
    free(exact);
    /* Size 0: refused, nothing written. */
    tfb_event zero;
    memset(&zero, 0, sizeof zero);
    assert_int_equal(tfb_reader_next(r, &zero), TFB_EINVAL);
    assert_int_equal(zero.wall_time, 0);
    tfb_reader_close(r);
    free(small);
    free(path);
    tu_rmtree(dir);
    free(dir);
}

/* Finds the summary value of tag `tag` with a whole tfb_event, then reads
 * it again into a tfb_value of size `vsize` (with `tail` canary bytes).
 * The value's views point into the reader's buffer: *rp stays open for
 * the caller to close after using them. */
static tfb_value *read_value_sized(const char *path, const char *tag,
                                   size_t vsize, size_t tail,
                                   tfb_reader **rp)
{
    tfb_reader *r;
    assert_int_equal(tfb_reader_open(&r, path), 0);
    *rp = r;
    tfb_event ev = {.size = sizeof ev};
    tfb_value *out = NULL;
    while (!out && tfb_reader_next(r, &ev) == 1) {
        if (ev.kind != TFB_EVENT_SUMMARY)
            continue;
        size_t pos = 0;
        tfb_value whole = {.size = sizeof whole};
        while (tfb_summary_next(ev.summary, ev.summary_len, &pos, &whole) ==
               1) {
            if (whole.tag.len != strlen(tag) ||
                memcmp(whole.tag.ptr, tag, whole.tag.len) != 0)
                continue;
            /* The same value again, into the small struct. */
            size_t pos2 = 0;
            out = sized_block(vsize, tail);
            do {
                assert_int_equal(tfb_summary_next(ev.summary, ev.summary_len,
                                                  &pos2, out),
                                 1);
            } while (out->tag.len != strlen(tag) ||
                     memcmp(out->tag.ptr, tag, out->tag.len) != 0);
            assert_tail_untouched(out, vsize, tail);
            break;
        }
    }
    return out;
}

static void test_value_old_size(void **state)
{
    (void)state;
    char *dir, *path = write_run(&dir);
    assert_non_null(path);
    /* tfb_value before plugin_content was added: the break the size
     * field exists for. */
    const size_t old = offsetof(tfb_value, plugin_content);
    const size_t tail = sizeof(tfb_value);
    tfb_reader *r;
    tfb_value *v = read_value_sized(path, "loss", old, tail, &r);
    assert_non_null(v);
    assert_int_equal(v->kind, TFB_VALUE_SCALAR);
    assert_true(v->scalar == 0.5);
    free(v);
    tfb_reader_close(r);

    /* A text value: the accessors read the small struct through its size
     * (a block of exactly the old size, so ASan sees any over-read). */
    v = read_value_sized(path, "note", old, 0, &r);
    assert_non_null(v);
    assert_int_equal(v->kind, TFB_VALUE_TEXT);
    tfb_strview s;
    assert_int_equal(tfb_value_string(v, 0, &s), 1);
    assert_int_equal(s.len, 5);
    assert_memory_equal(s.ptr, "hello", 5);
    tfb_value_apply_plugin(v, "text", 4);
    assert_int_equal(v->kind, TFB_VALUE_TEXT);
    double x;
    assert_int_equal(tfb_value_tensor_scalar(v, &x), TFB_EINVAL);
    free(v);
    tfb_reader_close(r);

    /* Even smaller: no raw sub-messages at all. The text's tensor is past
     * the size, so it reads as absent (no string), nothing is written
     * past the size. */
    const size_t older = offsetof(tfb_value, histo);
    v = read_value_sized(path, "note", older, tail, &r);
    assert_non_null(v);
    assert_int_equal(tfb_value_string(v, 0, &s), 0);
    tfb_value_apply_plugin(v, "scalars", 7);
    assert_tail_untouched(v, older, tail);
    free(v);
    tfb_reader_close(r);

    /* Size 0: refused. */
    tfb_value zero;
    memset(&zero, 0, sizeof zero);
    size_t pos = 0;
    static const uint8_t one_value[] = {0x0a, 0x02, 0x0a, 0x00};
    assert_int_equal(tfb_summary_next(one_value, sizeof one_value, &pos,
                                      &zero),
                     TFB_EINVAL);
    free(path);
    tu_rmtree(dir);
    free(dir);
}

static void test_rank_info_old_size(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp();
    tfb_writer_opts o;
    tfb_writer_opts_init(&o);
    o.rank = 1;
    o.world_size = 2;
    o.job = "abi";
    tfb_writer *w;
    assert_int_equal(tfb_writer_open(&w, dir, &o), 0);
    /* An older tfb_rank_info without host/host_len. */
    const size_t old = offsetof(tfb_rank_info, host);
    const size_t tail = sizeof(tfb_rank_info);
    tfb_rank_info *ri = sized_block(old, tail);
    assert_int_equal(tfb_writer_get_rank(w, ri), 0);
    assert_int_equal(ri->rank, 1);
    assert_int_equal(ri->world_size, 2);
    assert_int_equal(ri->job_len, 3);
    assert_tail_untouched(ri, old, tail);
    tfb_rank_info zero;
    memset(&zero, 0, sizeof zero);
    assert_int_equal(tfb_writer_get_rank(w, &zero), TFB_EINVAL);
    assert_int_equal(tfb_writer_close(w), 0);

    /* The decoder of the record, into the old struct. */
    char *path = tu_find_event_file(dir);
    assert_non_null(path);
    tfb_reader *r;
    assert_int_equal(tfb_reader_open(&r, path), 0);
    tfb_event ev = {.size = sizeof ev};
    int found = 0;
    memset((char *)ri + old, CANARY, tail);
    while (!found && tfb_reader_next(r, &ev) == 1) {
        size_t pos = 0;
        tfb_value v = {.size = sizeof v};
        while (tfb_summary_next(ev.summary, ev.summary_len, &pos, &v) == 1)
            if (tfb_value_rank_info(&v, ri) == 0)
                found = 1;
    }
    assert_true(found);
    assert_int_equal(ri->rank, 1);
    assert_tail_untouched(ri, old, tail);
    tfb_reader_close(r);
    free(ri);
    free(path);
    tu_rmtree(dir);
    free(dir);
}

/* An older tfb_hparam without `boolean`, as an array with the old stride:
 * both values arrive (the library walks the caller's stride, not its own
 * sizeof). Sizes that differ between elements, or 0, are refused. */
static void test_hparam_old_size(void **state)
{
    (void)state;
    const size_t old = offsetof(tfb_hparam, boolean);
    unsigned char *arr = calloc(2, old);
    assert_non_null(arr);
    tfb_hparam a = {.size = old, .name = "alpha", .type = TFB_HPARAM_NUMBER,
                    .number = 2.5};
    tfb_hparam b = {.size = old, .name = "beta", .type = TFB_HPARAM_STRING,
                    .str = "s-val"};
    memcpy(arr, &a, old);
    memcpy(arr + old, &b, old);

    char *dir = tu_mkdtemp();
    tfb_writer *w;
    assert_int_equal(tfb_writer_open(&w, dir, NULL), 0);
    assert_int_equal(tfb_hparams(w, (const tfb_hparam *)(void *)arr, 2), 0);
    /* Mixed sizes and a zero size: nothing is written. */
    tfb_hparam mixed[2] = {
        {.size = sizeof(tfb_hparam), .name = "x", .type = TFB_HPARAM_NUMBER},
        {.size = old, .name = "refused_y", .type = TFB_HPARAM_NUMBER}};
    assert_int_equal(tfb_hparams(w, mixed, 2), TFB_EINVAL);
    tfb_hparam unsized = {.name = "refused_z", .type = TFB_HPARAM_NUMBER};
    assert_int_equal(tfb_hparams(w, &unsized, 1), TFB_EINVAL);
    assert_int_equal(tfb_writer_close(w), 0);

    /* Both names and the string value are in the session-start record. */
    char *path = tu_find_event_file(dir);
    size_t len;
    uint8_t *bytes = tu_read_file(path, &len);
    assert_non_null(bytes);
    assert_non_null(memmem(bytes, len, "alpha", 5));
    assert_non_null(memmem(bytes, len, "beta", 4));
    assert_non_null(memmem(bytes, len, "s-val", 5));
    /* the refused calls' names (long enough that no CRC or wall time
     * holds them by chance, as the 2 bytes "\x01y" once did) */
    assert_null(memmem(bytes, len, "refused_y", 9));
    assert_null(memmem(bytes, len, "refused_z", 9));
    free(bytes);
    free(path);
    free(arr);
    tu_rmtree(dir);
    free(dir);
}

/* Gradient tensors walked with the caller's stride: a newer caller's
 * larger struct (a field past ours) gives the same norms; sizes of 0 or
 * unlike the first are refused. */
typedef struct newer_tensor {
    tfb_tensor t;
    double extra; /* a field this library does not know */
} newer_tensor;

static void test_tensor_stride(void **state)
{
    (void)state;
    float a[2] = {3, 4}, b[1] = {12};
    newer_tensor big[2] = {
        {{sizeof(newer_tensor), "a", a, 2}, 1e300},
        {{sizeof(newer_tensor), "b", b, 1}, -1e300}};
    double g = 0;
    assert_int_equal(tfb_grad_norms(NULL, &big[0].t, 2, 0, &g), 0);
    assert_true(g == 13); /* sqrt(5^2 + 12^2) */
    /* An older, smaller one: only `size` and `name` (no data, len): the
     * rest reads as unset, so the tensor is empty (norm 0) but named. */
    const size_t old = offsetof(tfb_tensor, data);
    unsigned char *small = sized_block(old, 0);
    const char *name = "s";
    memcpy(small + offsetof(tfb_tensor, name), &name, sizeof name);
    assert_int_equal(tfb_grad_norms(NULL, (const tfb_tensor *)(void *)small,
                                    1, 0, &g), 0);
    assert_true(g == 0);
    free(small);
    /* Mixed sizes, and a size of 0. */
    big[1].t.size = sizeof(tfb_tensor);
    g = 42;
    assert_int_equal(tfb_grad_norms(NULL, &big[0].t, 2, 0, &g), TFB_EINVAL);
    double d[1] = {2};
    tfb_tensor_f64 unset[1] = {{.name = "d", .data = d, .len = 1}};
    assert_int_equal(tfb_grad_norms_f64(NULL, unset, 1, 0, &g), TFB_EINVAL);
    assert_true(g == 42);
    unset[0].size = sizeof unset[0];
    assert_int_equal(tfb_grad_norms_f64(NULL, unset, 1, 0, &g), 0);
    assert_true(g == 2);
}

/* The counts through the caller's size: a struct that ends before pos_inf
 * gets nan only; nothing past it is written. */
static void test_nonfinite_counts_old_size(void **state)
{
    (void)state;
    float x[4] = {NAN, INFINITY, -INFINITY, NAN};
    const size_t old = offsetof(tfb_nonfinite_counts, pos_inf);
    const size_t tail = sizeof(tfb_nonfinite_counts);
    unsigned char *c = sized_block(old, tail);
    assert_int_equal(tfb_count_nonfinite(x, 4, (void *)c), 0);
    uint64_t nan;
    memcpy(&nan, c + offsetof(tfb_nonfinite_counts, nan), sizeof nan);
    assert_int_equal(nan, 2);
    assert_tail_untouched(c, old, tail);
    free(c);
    tfb_nonfinite_counts whole = {.size = sizeof whole};
    assert_int_equal(tfb_count_nonfinite(x, 4, &whole), 0);
    assert_true(whole.nan == 2 && whole.pos_inf == 1 && whole.neg_inf == 1);
    assert_int_equal(whole.size, sizeof whole);
}

/* A value of tag `tag` (a histogram) of the file at path, into *v; the
 * reader stays open for its views (close *rp after). */
static void read_value(const char *path, const char *tag, tfb_value *v,
                       tfb_reader **rp)
{
    tfb_reader *r;
    size_t vsize = sizeof *v;
    tfb_value *got = read_value_sized(path, tag, vsize, 0, &r);
    assert_non_null(got);
    memcpy(v, got, sizeof *v);
    free(got);
    *rp = r;
}

/* Buckets: out[0].size is the stride, each bucket written gets it, and
 * nothing past it is written (a newer caller's extra field, an older
 * caller's missing count); size 0 with cap > 0 is refused. */
typedef struct newer_bucket {
    tfb_bucket b;
    double extra;
} newer_bucket;

static void test_bucket_stride(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp();
    tfb_writer *w;
    assert_int_equal(tfb_writer_open(&w, dir, NULL), 0);
    float h[] = {1, 2, 2, 3, 50, 100};
    assert_int_equal(tfb_histogram(w, "h", h, 6, 1), 0);
    assert_int_equal(tfb_writer_close(w), 0);
    char *path = tu_find_event_file(dir);
    assert_non_null(path);
    tfb_reader *r;
    tfb_value v;
    read_value(path, "h", &v, &r);
    assert_int_equal(v.kind, TFB_VALUE_HISTOGRAM);
    int64_t k = tfb_value_histogram(&v, NULL, 0, NULL, NULL, NULL, NULL);
    assert_true(k >= 2 && k <= 64);
    tfb_bucket whole[64] = {{.size = sizeof(tfb_bucket)}};
    assert_int_equal(tfb_value_histogram(&v, whole, 64, NULL, NULL, NULL,
                                         NULL), k);

    newer_bucket big[64];
    memset(big, CANARY, sizeof big);
    big[0].b.size = sizeof(newer_bucket);
    assert_int_equal(tfb_value_histogram(&v, &big[0].b, 64, NULL, NULL, NULL,
                                         NULL), k);
    for (int64_t i = 0; i < k; i++) {
        assert_int_equal(big[i].b.size, sizeof(newer_bucket));
        assert_true(big[i].b.left == whole[i].left &&
                    big[i].b.right == whole[i].right &&
                    big[i].b.count == whole[i].count);
        unsigned char extra[sizeof(double)];
        memcpy(extra, &big[i].extra, sizeof extra);
        for (size_t j = 0; j < sizeof extra; j++)
            assert_int_equal(extra[j], CANARY);
    }

    /* An older bucket without count, in a block of exactly k of them. */
    const size_t old = offsetof(tfb_bucket, count);
    unsigned char *small = malloc((size_t)k * old);
    assert_non_null(small);
    memcpy(small, &old, sizeof old);
    assert_int_equal(tfb_value_histogram(&v, (tfb_bucket *)(void *)small,
                                         (size_t)k, NULL, NULL, NULL, NULL),
                     k);
    for (int64_t i = 0; i < k; i++) {
        tfb_bucket seen = {0};
        memcpy(&seen, small + (size_t)i * old, old);
        assert_int_equal(seen.size, old);
        assert_true(seen.left == whole[i].left &&
                    seen.right == whole[i].right);
    }
    free(small);

    tfb_bucket unset[4];
    memset(unset, 0, sizeof unset);
    assert_int_equal(tfb_value_histogram(&v, unset, 4, NULL, NULL, NULL,
                                         NULL), TFB_EINVAL);
    assert_true(unset[0].left == 0 && unset[0].count == 0);
    tfb_reader_close(r);
    free(path);
    tu_rmtree(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_event_old_size),
        cmocka_unit_test(test_value_old_size),
        cmocka_unit_test(test_rank_info_old_size),
        cmocka_unit_test(test_hparam_old_size),
        cmocka_unit_test(test_tensor_stride),
        cmocka_unit_test(test_nonfinite_counts_old_size),
        cmocka_unit_test(test_bucket_stride),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
