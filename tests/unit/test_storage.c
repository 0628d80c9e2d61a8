/* test_storage.c - the storage interface's local backend (listing rules,
 * versions, regular files only) and the reader over it: records cut by
 * buffer ends (read again by offset, never moved) and lent buffers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "collector/reader_source.h"
#include "store/storage.h"
#include "test_util.h"

static char *join(const char *a, const char *b)
{
    char *p = malloc(strlen(a) + strlen(b) + 2);
    sprintf(p, "%s/%s", a, b);
    return p;
}

static void put(const char *dir, const char *rel, size_t bytes)
{
    char *p = join(dir, rel);
    char *buf = calloc(1, bytes ? bytes : 1);
    assert_int_equal(tu_write_file(p, buf, bytes), 0);
    free(buf);
    free(p);
}

static void mkd(const char *dir, const char *rel)
{
    char *p = join(dir, rel);
    assert_int_equal(mkdir(p, 0755), 0);
    free(p);
}

static const tfb_storage_entry *find(const tfb_storage_entry *e, size_t n,
                                     const char *rel)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(e[i].rel, rel) == 0)
            return &e[i];
    return NULL;
}

static int only_tfevents(const char *name, void *arg)
{
    (void)arg;
    return strstr(name, "tfevents") != NULL;
}

static void test_local_list(void **state)
{
    (void)state;
    char *d = tu_mkdtemp();
    mkd(d, "a");
    mkd(d, "a/b");
    put(d, "a/events.out.tfevents.1", 100);
    put(d, "a/b/notes.txt", 7);
    char *fifo = join(d, "events.out.tfevents.fifo");
    assert_int_equal(mkfifo(fifo, 0644), 0);
    char *ln = join(d, "linked.tfevents");
    assert_int_equal(symlink("a/events.out.tfevents.1", ln), 0);
    char *ld = join(d, "dirlink");
    assert_int_equal(symlink("a", ld), 0);
    mkd(d, "x");
    mkd(d, "x/y");
    mkd(d, "x/y/z");
    put(d, "x/y/z/deep", 1);
    put(d, "x/y/shallow", 2);

    tfb_storage *s;
    assert_int_equal(tfb_storage_local_create(&s, NULL), 0);
    tfb_storage_entry *e;
    size_t n;
    int too_deep = -1;
    assert_int_equal(s->ops->list(s, d, 2, NULL, NULL, &e, &n, &too_deep), 0);
    assert_int_equal(too_deep, 1); /* x/y/z is 3 below */
    assert_int_equal(n, 7); /* + dirlink/: a link inside the logdir */
    const tfb_storage_entry *ev = find(e, n, "a/events.out.tfevents.1");
    assert_non_null(ev);
    assert_int_equal(ev->st.size, 100);
    assert_true(ev->st.regular);
    assert_string_equal(ev->path + strlen(d), "/a/events.out.tfevents.1");
    assert_int_equal(find(e, n, "a/b/notes.txt")->st.size, 7);
    assert_int_equal(find(e, n, "x/y/shallow")->st.size, 2);
    /* the FIFO is listed, as not regular; the link reads as its file */
    assert_false(find(e, n, "events.out.tfevents.fifo")->st.regular);
    const tfb_storage_entry *lk = find(e, n, "linked.tfevents");
    assert_true(lk->st.regular);
    assert_string_equal(lk->st.etag, ev->st.etag);
    /* a link to a directory inside the logdir is walked as that
     * directory (server/store/dir_links.h); too deep is left out */
    assert_non_null(find(e, n, "dirlink/events.out.tfevents.1"));
    assert_non_null(find(e, n, "dirlink/b/notes.txt"));
    assert_null(find(e, n, "x/y/z/deep"));
    tfb_storage_entries_free(e, n);

    /* the FIFO is never opened for reading (the open would block) */
    tfb_storage_file *f;
    tfb_storage_stat st;
    assert_int_equal(s->ops->open(s, fifo, &f, &st), TFB_ENOTFILE);
    tfb_reader *r;
    assert_int_equal(tfb_storage_reader_open(s, fifo, &r), TFB_ENOTFILE);
    char *missing = join(d, "nope");
    assert_int_equal(s->ops->stat(s, missing, &st), TFB_ENOENT);
    assert_int_equal(s->ops->list(s, missing, 4, NULL, NULL, &e, &n, NULL),
                     TFB_ENOENT);
    /* a name filter: only what it keeps, directories still walked */
    assert_int_equal(s->ops->list(s, d, 8, only_tfevents, NULL, &e, &n, NULL),
                     0);
    assert_int_equal(n, 4); /* a/, dirlink/, the FIFO, the linked file */
    assert_non_null(find(e, n, "a/events.out.tfevents.1"));
    assert_non_null(find(e, n, "dirlink/events.out.tfevents.1"));
    assert_non_null(find(e, n, "events.out.tfevents.fifo"));
    assert_non_null(find(e, n, "linked.tfevents"));
    tfb_storage_entries_free(e, n);

    /* a replaced file is a new version */
    char *p = join(d, "a/events.out.tfevents.1");
    tfb_storage_stat before, after;
    assert_int_equal(s->ops->stat(s, p, &before), 0);
    put(d, "a/new", 100);
    char *np = join(d, "a/new");
    assert_int_equal(rename(np, p), 0);
    assert_int_equal(s->ops->stat(s, p, &after), 0);
    assert_int_equal(after.size, 100);
    assert_string_not_equal(before.etag, after.etag);
    /* reads by offset */
    assert_int_equal(s->ops->open(s, p, &f, &st), 0);
    char buf[64];
    assert_int_equal(s->ops->read(f, 90, buf, sizeof buf), 10);
    assert_int_equal(s->ops->read(f, 100, buf, sizeof buf), 0);
    s->ops->close(f);

    tfb_storage_destroy(s);
    free(np);
    free(p);
    free(missing);
    free(fifo);
    free(ln);
    free(ld);
    tu_rmtree(d);
    free(d);
}

/* Writes n scalars (steps 0..n-1, tag of growing length so records differ
 * in size) into dir; returns the event file's path. */
static char *write_events(const char *dir, int n)
{
    tfb_writer *w;
    assert_int_equal(tfb_writer_open(&w, dir, NULL), 0);
    char tag[64];
    for (int i = 0; i < n; i++) {
        snprintf(tag, sizeof tag, "t%.*s", i % 40, "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");
        assert_int_equal(tfb_scalar_at(w, tag, i * 0.5, i, 1000.0 + i), 0);
    }
    assert_int_equal(tfb_writer_close(w), 0);
    char *p = tu_find_event_file(dir);
    assert_non_null(p);
    return p;
}

/* Every event through r: steps must run 0..n-1 with their values. */
static void read_all(tfb_reader *r, int n)
{
    tfb_event ev = {.size = sizeof ev};
    int next = 0, rc;
    while ((rc = tfb_reader_next(r, &ev)) == 1) {
        if (ev.kind != TFB_EVENT_SUMMARY)
            continue;
        size_t pos = 0;
        tfb_value v = {.size = sizeof v};
        assert_int_equal(tfb_summary_next(ev.summary, ev.summary_len, &pos,
                                          &v), 1);
        if (tu_is_run_end(&v))
            continue;
        assert_int_equal(ev.step, next);
        assert_true(v.scalar == next * 0.5);
        next++;
    }
    assert_int_equal(rc, 0);
    assert_int_equal(next, n);
    tfb_reader_stats st;
    tfb_reader_stats_init(&st);
    assert_int_equal(tfb_reader_get_stats(r, &st), 0);
    assert_int_equal(st.corrupt_records, 0);
    assert_int_equal(st.resyncs, 0);
}

static void test_reader_over_storage(void **state)
{
    (void)state;
    char *d = tu_mkdtemp();
    enum { N = 120000 }; /* several MiB: records cut by buffer ends */
    char *p = write_events(d, N);
    tfb_storage *s;
    assert_int_equal(tfb_storage_local_create(&s, NULL), 0);
    tfb_reader *r;
    assert_int_equal(tfb_storage_reader_open(s, p, &r), 0);
    read_all(r, N);
    /* at the end, the reader holds no buffer */
    tfb_reader_stats st;
    tfb_reader_stats_init(&st);
    assert_int_equal(tfb_reader_get_stats(r, &st), 0);
    assert_int_equal(st.buffer_bytes, 0);
    tfb_reader_close(r);

    /* A tiny lent buffer (it grows as reads fill it): records are cut by
     * its end again and again and read again from their offsets; the
     * events are the same. */
    assert_int_equal(tfb_storage_reader_open(s, p, &r), 0);
    uint8_t *buf = malloc(64);
    assert_int_equal(tfb_reader_lend_buffer(r, buf, 64), 1);
    read_all(r, N);
    uint8_t *back = NULL;
    size_t cap = 0;
    assert_int_equal(tfb_reader_reclaim_buffer(r, &back, &cap), 1);
    assert_non_null(back);
    assert_true(cap >= 64);
    /* nothing left to reclaim */
    assert_int_equal(tfb_reader_reclaim_buffer(r, &buf, &cap), 0);
    tfb_reader_close(r);

    /* the plain reader (local file source) reads the same */
    assert_int_equal(tfb_reader_open(&r, p), 0);
    assert_int_equal(tfb_reader_lend_buffer(r, back, cap), 1);
    read_all(r, N);
    tfb_reader_close(r); /* frees the lent buffer it still holds */

    tfb_storage_destroy(s);
    free(p);
    tu_rmtree(d);
    free(d);
}

/* A half-written record at the end: the loader takes its buffer back
 * between passes (the partial bytes are dropped), and the record is read
 * whole, by offset, once the rest arrives. */
static void test_partial_record_reclaimed(void **state)
{
    (void)state;
    char *d = tu_mkdtemp();
    enum { N = 3000 };
    char *p = write_events(d, N);
    size_t len;
    uint8_t *all = tu_read_file(p, &len);
    assert_non_null(all);
    char *q = malloc(strlen(d) + 32);
    sprintf(q, "%s/events.out.tfevents.partial", d);
    assert_int_equal(tu_write_file(q, all, len - 10), 0);
    tfb_storage *s;
    assert_int_equal(tfb_storage_local_create(&s, NULL), 0);
    tfb_reader *r;
    assert_int_equal(tfb_storage_reader_open(s, q, &r), 0);
    uint8_t *buf = malloc(4096);
    size_t cap = 4096;
    assert_int_equal(tfb_reader_lend_buffer(r, buf, cap), 1);
    tfb_event ev = {.size = sizeof ev};
    int n = 0, rc;
    while ((rc = tfb_reader_next(r, &ev)) == 1)
        n += ev.kind == TFB_EVENT_SUMMARY;
    assert_int_equal(rc, 0);
    assert_int_equal(n, N); /* the cut record is the end-of-run one */
    tfb_reader_stats st;
    tfb_reader_stats_init(&st);
    assert_int_equal(tfb_reader_get_stats(r, &st), 0);
    assert_int_equal(st.truncated_tail, 1);
    assert_true(st.buffer_bytes > 0);
    uint64_t at = st.offset;
    assert_int_equal(tfb_reader_reclaim_buffer(r, &buf, &cap), 1);
    tfb_reader_release_fd(r);
    tfb_reader_stats_init(&st);
    assert_int_equal(tfb_reader_get_stats(r, &st), 0);
    assert_int_equal(st.buffer_bytes, 0);
    assert_int_equal(st.offset, at);
    /* the writer finishes the record */
    FILE *f = fopen(q, "ab");
    assert_non_null(f);
    assert_int_equal(fwrite(all + len - 10, 1, 10, f), 10);
    fclose(f);
    assert_int_equal(tfb_reader_lend_buffer(r, buf, cap), 1);
    assert_int_equal(tfb_reader_next(r, &ev), 1);
    assert_int_equal(ev.kind, TFB_EVENT_SUMMARY);
    assert_int_equal(ev.step, 0); /* the end-of-run record */
    assert_int_equal(tfb_reader_next(r, &ev), 0);
    tfb_reader_stats_init(&st);
    assert_int_equal(tfb_reader_get_stats(r, &st), 0);
    assert_int_equal(st.corrupt_records, 0);
    assert_int_equal(st.offset, len);
    tfb_reader_close(r);
    tfb_storage_destroy(s);
    free(all);
    free(q);
    free(p);
    tu_rmtree(d);
    free(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_local_list),
        cmocka_unit_test(test_reader_over_storage),
        cmocka_unit_test(test_partial_record_reclaimed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
