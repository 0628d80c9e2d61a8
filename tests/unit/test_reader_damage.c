/*
 * test_reader_damage.c - the reader on damaged and growing files: cut at
 * every byte offset, every single-bit flip, garbage between records, a file
 * appended in random chunks, a file truncated or replaced under it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test_util.h"
#include "tfboard.h"

typedef struct sample {
    char *dir;
    uint8_t *data;
    size_t len;
    uint64_t *ends; /* end offset of each record */
    uint64_t *starts;
    size_t n;       /* records */
} sample;

static int make_sample(void **state)
{
    sample *s = calloc(1, sizeof *s);
    s->dir = tu_mkdtemp();
    tfb_writer *w;
    assert_int_equal(tfb_writer_open(&w, s->dir, NULL), 0);
    float vals[100];
    for (int i = 0; i < 100; i++)
        vals[i] = (float)(i - 50) * 0.1f;
    for (int step = 0; step < 40; step++) {
        tfb_scalar(w, "loss", 1.0 / (step + 1), step);
        if (step % 10 == 0)
            tfb_histogram(w, "w", vals, 100, step);
        if (step % 13 == 0)
            tfb_text(w, "note", "some text", step);
    }
    char *path = strdup(tfb_writer_path(w));
    assert_int_equal(tfb_writer_close(w), 0);
    s->data = tu_read_file(path, &s->len);
    assert_non_null(s->data);
    tfb_reader *r;
    assert_int_equal(tfb_reader_open(&r, path), 0);
    tfb_event ev = {.size = sizeof ev};
    s->ends = calloc(200, sizeof *s->ends);
    s->starts = calloc(200, sizeof *s->starts);
    while (tfb_reader_next(r, &ev) == 1) {
        tfb_reader_stats st;
        tfb_reader_stats_init(&st);
        tfb_reader_get_stats(r, &st);
        s->starts[s->n] = ev.offset;
        s->ends[s->n++] = st.offset;
    }
    assert_int_equal(s->ends[s->n - 1], s->len);
    tfb_reader_close(r);
    free(path);
    *state = s;
    return 0;
}

static int free_sample(void **state)
{
    sample *s = *state;
    tu_rmtree(s->dir);
    free(s->dir);
    free(s->data);
    free(s->ends);
    free(s->starts);
    free(s);
    return 0;
}

static void read_all(const char *path, size_t *records, tfb_reader_stats *st)
{
    tfb_reader *r;
    assert_int_equal(tfb_reader_open(&r, path), 0);
    tfb_event ev = {.size = sizeof ev};
    int rc;
    size_t n = 0;
    while ((rc = tfb_reader_next(r, &ev)) == 1) {
        if (ev.kind == TFB_EVENT_SUMMARY) {
            size_t pos = 0;
            tfb_value v = {.size = sizeof v};
            while (tfb_summary_next(ev.summary, ev.summary_len, &pos, &v) == 1)
                ;
        }
        n++;
    }
    assert_int_equal(rc, 0);
    tfb_reader_get_stats(r, st);
    tfb_reader_close(r);
    *records = n;
}

static void cut_at_every_offset(void **state)
{
    sample *s = *state;
    char path[600];
    snprintf(path, sizeof path, "%s/cut.tfevents", s->dir);
    for (size_t cut = 0; cut <= s->len; cut++) {
        assert_int_equal(tu_write_file(path, s->data, cut), 0);
        size_t n;
        tfb_reader_stats st;
        tfb_reader_stats_init(&st);
        read_all(path, &n, &st);
        size_t want = 0;
        while (want < s->n && s->ends[want] <= cut)
            want++;
        assert_int_equal(n, want);
        assert_int_equal(st.corrupt_records, 0);
        assert_int_equal(st.resyncs, 0);
        uint64_t boundary = want ? s->ends[want - 1] : 0;
        assert_int_equal(st.offset, boundary);
        assert_int_equal(st.truncated_tail, cut != boundary);
    }
}

static void flip_every_bit(void **state)
{
    sample *s = *state;
    char path[600];
    snprintf(path, sizeof path, "%s/flip.tfevents", s->dir);
    uint8_t *copy = malloc(s->len);
    /* Every byte, one bit each (the bit moves along), covers headers,
     * CRCs and payloads of every record kind. */
    for (size_t i = 0; i < s->len; i++) {
        memcpy(copy, s->data, s->len);
        copy[i] ^= (uint8_t)(1u << (i % 8));
        assert_int_equal(tu_write_file(path, copy, s->len), 0);
        size_t n;
        tfb_reader_stats st;
        tfb_reader_stats_init(&st);
        read_all(path, &n, &st);
        size_t hit = 0;
        while (s->ends[hit] <= i)
            hit++;
        assert_int_equal(n, s->n - 1); /* exactly the damaged one is lost */
        assert_true(st.corrupt_records + st.resyncs >= 1);
        assert_true(st.n_offsets >= 1);
        assert_int_equal(st.corruption_offsets[0], s->starts[hit]);
        /* After a damaged header near the end, fewer than 12 bytes may be
         * left unread: they could be a header still being written. */
        assert_true(st.offset + 11 >= s->len && st.offset <= s->len);
    }
    free(copy);
}

static void garbage_between_records(void **state)
{
    sample *s = *state;
    char path[600];
    snprintf(path, sizeof path, "%s/junk.tfevents", s->dir);
    size_t mid = s->ends[s->n / 2];
    uint8_t junk[777];
    for (size_t i = 0; i < sizeof junk; i++)
        junk[i] = (uint8_t)(i * 37 + 11);
    uint8_t *buf = malloc(s->len + sizeof junk);
    memcpy(buf, s->data, mid);
    memcpy(buf + mid, junk, sizeof junk);
    memcpy(buf + mid + sizeof junk, s->data + mid, s->len - mid);
    assert_int_equal(tu_write_file(path, buf, s->len + sizeof junk), 0);
    size_t n;
    tfb_reader_stats st;
    tfb_reader_stats_init(&st);
    read_all(path, &n, &st);
    assert_int_equal(n, s->n);
    assert_int_equal(st.resyncs, 1);
    assert_int_equal(st.bytes_skipped, sizeof junk);
    assert_int_equal(st.corruption_offsets[0], mid);
    free(buf);
}

static void appended_in_chunks(void **state)
{
    sample *s = *state;
    char path[600];
    snprintf(path, sizeof path, "%s/grow.tfevents", s->dir);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    tfb_reader *r;
    assert_int_equal(tfb_reader_open(&r, path), 0);
    size_t written = 0, n = 0;
    unsigned seed = 7;
    tfb_event ev = {.size = sizeof ev};
    while (written < s->len) {
        seed = seed * 1103515245u + 12345u;
        size_t chunk = 1 + (seed >> 16) % 97;
        if (chunk > s->len - written)
            chunk = s->len - written;
        fwrite(s->data + written, 1, chunk, f);
        fflush(f);
        written += chunk;
        int rc;
        while ((rc = tfb_reader_next(r, &ev)) == 1) {
            assert_int_equal(ev.offset, s->starts[n]);
            n++;
        }
        assert_int_equal(rc, 0);
    }
    fclose(f);
    assert_int_equal(n, s->n);
    tfb_reader_stats st;
    tfb_reader_stats_init(&st);
    tfb_reader_get_stats(r, &st);
    assert_int_equal(st.corrupt_records + st.resyncs, 0);
    tfb_reader_close(r);
}

static void truncated_then_rewritten(void **state)
{
    sample *s = *state;
    char path[600], tmp[600];
    snprintf(path, sizeof path, "%s/repl.tfevents", s->dir);
    snprintf(tmp, sizeof tmp, "%s/repl.tmp", s->dir);
    assert_int_equal(tu_write_file(path, s->data, s->len), 0);
    tfb_reader *r;
    assert_int_equal(tfb_reader_open(&r, path), 0);
    tfb_event ev = {.size = sizeof ev};
    size_t n = 0;
    while (tfb_reader_next(r, &ev) == 1)
        n++;
    assert_int_equal(n, s->n);
    /* Shrunk in place: reading starts over. */
    assert_int_equal(tu_write_file(path, s->data, s->ends[2]), 0);
    n = 0;
    while (tfb_reader_next(r, &ev) == 1)
        n++;
    assert_int_equal(n, 3);
    tfb_reader_stats st;
    tfb_reader_stats_init(&st);
    tfb_reader_get_stats(r, &st);
    assert_int_equal(st.replaced, 1);
    /* Replaced by another file of the same name (rename over it). */
    assert_int_equal(tu_write_file(tmp, s->data, s->ends[5]), 0);
    assert_int_equal(rename(tmp, path), 0);
    n = 0;
    while (tfb_reader_next(r, &ev) == 1)
        n++;
    assert_int_equal(n, 6);
    tfb_reader_close(r);
}

static void summary_garbage(void **state)
{
    (void)state;
    /* Random bytes as a Summary: never a crash, an error or values. */
    uint8_t buf[256];
    unsigned seed = 99;
    for (int round = 0; round < 20000; round++) {
        size_t n = (size_t)(round % 256);
        for (size_t i = 0; i < n; i++) {
            seed = seed * 1103515245u + 12345u;
            buf[i] = (uint8_t)(seed >> 16);
        }
        size_t pos = 0;
        tfb_value v = {.size = sizeof v};
        int rc, guard = 0;
        while ((rc = tfb_summary_next(buf, n, &pos, &v)) == 1 && guard++ < 300) {
            tfb_bucket b[4] = {{.size = sizeof(tfb_bucket)}};
            tfb_value_histogram(&v, b, 4, NULL, NULL, NULL, NULL);
            tfb_strview sv;
            tfb_value_string(&v, 0, &sv);
            double d;
            tfb_value_tensor_scalar(&v, &d);
        }
        assert_true(rc <= 1);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(cut_at_every_offset, make_sample, free_sample),
        cmocka_unit_test_setup_teardown(flip_every_bit, make_sample, free_sample),
        cmocka_unit_test_setup_teardown(garbage_between_records, make_sample, free_sample),
        cmocka_unit_test_setup_teardown(appended_in_chunks, make_sample, free_sample),
        cmocka_unit_test_setup_teardown(truncated_then_rewritten, make_sample, free_sample),
        cmocka_unit_test(summary_garbage),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
