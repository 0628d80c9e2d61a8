/*
 * test_trace_colcache.c - the columnar trace cache file (trace_colcache.h):
 * a trace built here (four GPU lanes and a host lane, one long enough for
 * a three-level window tree, copies, memsets, calls out of correlation
 * order, named and unnamed kernels, two devices) written and mapped back
 * equals the built one in every field and in the routes' JSON; every
 * flipped byte, truncation, appended byte, wrong version, signature or
 * row budget is refused; writes are atomic; the cache key follows the
 * source (same path, new file = miss); the cache directory is refused
 * inside the logdir; a WAL store is copied whole, its holes kept (a
 * sparse -wal costs its data only) and never past the copy budget (the
 * store is then read without its WAL, the log says why, nothing is
 * cached); a mapped cache file truncated or rewritten in place changes
 * nothing the trace reads (it is a private copy: no SIGBUS).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "plugins/gpu/gpu_analysis.h"
#include "core/json.h"
#include "test_util.h"
#include "trace/trace_cachedir.h"
#include "trace/trace_colcache.h"
#include "trace/trace_internal.h"
#include "trace/trace_walcopy.h"

#define B INT64_C(1700000000000000000)

static tfb_trace *build(void)
{
    tfb_trace_builder *b;
    assert_int_equal(tfb_trace_builder_new(&b, NULL), 0);
    tfb_trace_builder_begin_file(b);
    int32_t gemm = tfb_trace_builder_str(b, "gemm<float>()", 13);
    int32_t relu = tfb_trace_builder_str(b, "relu \"x\" <b>", 12);
    int32_t dev0 = tfb_trace_builder_str(b, "Synthetic GPU", 13);
    int32_t launch = tfb_trace_builder_str(b, "cudaLaunchKernel", 16);
    assert_int_equal(tfb_trace_builder_device(b, 0, dev0, 132), 0);
    /* 700 kernels on device 0 stream 7 (a 3-level tree), some
     * overlapping; a few on stream 8 and device 1; one without a name. */
    for (int i = 0; i < 700; i++) {
        tfb_trace_span_in s;
        memset(&s, 0, sizeof s);
        s.kind = TFB_TRACE_KERNEL;
        s.start = B + 1000 * (i % 350) + (i / 350) * 10;
        s.end = s.start + 200 + 37 * (i % 11);
        s.correlation = 699 - i; /* calls out of correlation order */
        s.device = 0;
        s.stream = 7;
        s.name = i % 3 ? gemm : relu;
        s.grid[0] = 1 + i % 2;
        s.grid[1] = s.grid[2] = s.block[1] = s.block[2] = 1;
        s.block[0] = 128;
        s.registers = 32;
        s.shared_mem = 1024;
        assert_int_equal(tfb_trace_builder_span(b, &s), 0);
        tfb_trace_call c = {s.start - 500, s.start - 480, 699 - i, launch};
        assert_int_equal(tfb_trace_builder_call(b, &c), 0);
    }
    for (int i = 0; i < 5; i++) {
        tfb_trace_span_in s;
        memset(&s, 0, sizeof s);
        s.kind = (uint8_t)(i == 0 ? TFB_TRACE_MEMCPY
                           : i == 1 ? TFB_TRACE_MEMSET : TFB_TRACE_KERNEL);
        s.copy_kind = 1;
        s.bytes = 4096 * (i + 1);
        s.start = B + 5000 + 100 * i;
        s.end = s.start + 90;
        s.correlation = -1;
        s.device = i == 4 ? 1 : 0;
        s.stream = i == 4 ? 9 : 8;
        s.name = i == 3 ? -1 : relu;
        assert_int_equal(tfb_trace_builder_span(b, &s), 0);
    }
    tfb_trace_span_in h;
    memset(&h, 0, sizeof h);
    h.kind = TFB_TRACE_HOST_STEP;
    h.start = B;
    h.end = B + 400000;
    h.step = 3;
    h.device = -1;
    h.name = -1;
    assert_int_equal(tfb_trace_builder_span(b, &h), 0);
    /* What a Kineto file says of itself: device properties, a category
     * not understood, distributedInfo with a process group. */
    tfb_trace_device p = {0, -1, 80, 7, 0, 0, 34089730048};
    assert_int_equal(tfb_trace_builder_device_props(b, &p), 1);
    assert_int_equal(tfb_trace_builder_note(b, "npu_kernel", 10), 0);
    assert_int_equal(tfb_trace_builder_note(b, "npu_kernel", 10), 0);
    int32_t nccl = tfb_trace_builder_str(b, "nccl", 4);
    int32_t r = tfb_trace_builder_str(b, "0-127", 5);
    tfb_trace_dist dist = {3, 128, 1, nccl, 1};
    tfb_trace_pg pg = {-1, -1, nccl, r, 128};
    assert_int_equal(tfb_trace_builder_dist(b, &dist, &pg, 1), 0);
    tfb_trace_builder_end_file(b, 1);
    tfb_trace *t = NULL;
    assert_int_equal(tfb_trace_builder_finish(b, &t), 0);
    assert_int_equal(t->nnotes, 1);
    assert_int_equal(t->notes[0].events, 2);
    return t;
}

static char *json_of(const tfb_trace *t, int which)
{
    tfb_json j;
    tfb_json_init(&j);
    if (which == 0) {
        assert_int_equal(tfb_gpu_timeline_json(t, INT64_MIN, INT64_MAX, 50,
                                               &j), 0);
    } else if (which == 1) {
        assert_int_equal(tfb_gpu_timeline_json(t, B + 1000, B + 90000, 5000,
                                               &j), 0);
    } else if (which == 2) {
        assert_int_equal(tfb_gpu_chrome_trace_json(t, INT64_MIN, INT64_MAX,
                                                   1000000, &j), 0);
    } else {
        tfb_trace_summary s;
        tfb_trace_kernels k;
        assert_int_equal(tfb_trace_summarize(t, &s), 0);
        assert_int_equal(tfb_trace_kernel_stats(t, 0, &k), 0);
        tfb_json_object_begin(&j);
        tfb_json_key(&j, "s");
        tfb_gpu_summary_json(&j, &s, t);
        tfb_json_key(&j, "k");
        tfb_gpu_kernels_json(&j, &k);
        tfb_json_object_end(&j);
        tfb_trace_summary_free(&s);
        tfb_trace_kernels_free(&k);
    }
    char *out = tfb_json_take(&j, NULL);
    assert_non_null(out);
    return out;
}

static void assert_same_trace(const tfb_trace *a, const tfb_trace *b)
{
    assert_int_equal(a->nspans, b->nspans);
    assert_memory_equal(a->spans, b->spans, a->nspans * sizeof *a->spans);
    assert_int_equal(a->nlanes, b->nlanes);
    for (size_t i = 0; i < a->nlanes; i++) {
        const tfb_trace_lane *x = &a->lanes[i], *y = &b->lanes[i];
        assert_int_equal(x->device, y->device);
        assert_int_equal(x->stream, y->stream);
        assert_int_equal(x->host, y->host);
        assert_int_equal(x->off, y->off);
        assert_int_equal(x->n, y->n);
        assert_int_equal(x->levels, y->levels);
        size_t m = 0;
        for (size_t k = 0; k < x->levels; k++) {
            assert_int_equal(x->tree_off[k], y->tree_off[k]);
            assert_int_equal(x->tree_n[k], y->tree_n[k]);
            m += x->tree_n[k];
        }
        if (m)
            assert_memory_equal(x->tree, y->tree, m * sizeof *x->tree);
    }
    assert_int_equal(a->nkinfo, b->nkinfo);
    assert_memory_equal(a->kinfo, b->kinfo, a->nkinfo * sizeof *a->kinfo);
    assert_int_equal(a->nvalues, b->nvalues);
    assert_memory_equal(a->values, b->values, a->nvalues * sizeof *a->values);
    assert_int_equal(a->ncalls, b->ncalls);
    for (size_t i = 0; i < a->ncalls; i++) {
        assert_int_equal(a->calls[i].start, b->calls[i].start);
        assert_int_equal(a->calls[i].end, b->calls[i].end);
        assert_int_equal(a->calls[i].correlation, b->calls[i].correlation);
        assert_int_equal(a->calls[i].name, b->calls[i].name);
        assert_int_equal(a->calls_by_corr[i], b->calls_by_corr[i]);
    }
    assert_int_equal(a->ndevices, b->ndevices);
    assert_memory_equal(a->devices, b->devices,
                        a->ndevices * sizeof *a->devices);
    assert_int_equal(a->nstrings, b->nstrings);
    for (size_t i = 0; i < a->nstrings; i++)
        assert_string_equal(a->strings[i], b->strings[i]);
    assert_int_equal(a->start_ns, b->start_ns);
    assert_int_equal(a->end_ns, b->end_ns);
    assert_int_equal(a->first_ns, b->first_ns);
    assert_int_equal(a->files_read, b->files_read);
    assert_int_equal(a->files_skipped, b->files_skipped);
    assert_int_equal(a->spans_dropped, b->spans_dropped);
    /* What the trace says of itself (notes, distributedInfo). */
    assert_int_equal(a->nnotes, b->nnotes);
    if (a->nnotes)
        assert_memory_equal(a->notes, b->notes, a->nnotes * sizeof *a->notes);
    assert_int_equal(a->notes_more_events, b->notes_more_events);
    assert_memory_equal(&a->dist, &b->dist, sizeof a->dist);
    assert_int_equal(a->npgs, b->npgs);
    if (a->npgs)
        assert_memory_equal(a->pgs, b->pgs, a->npgs * sizeof *a->pgs);
    const tfb_trace_aggregates *x = a->agg, *y = b->agg;
    assert_non_null(x);
    assert_non_null(y);
    assert_int_equal(x->ndev, y->ndev);
    for (size_t d = 0; d < x->ndev; d++) {
        if (x->dev[d].name)
            assert_string_equal(x->dev[d].name, y->dev[d].name);
        else
            assert_null(y->dev[d].name);
        tfb_trace_device_summary p = x->dev[d], q = y->dev[d];
        p.name = q.name = NULL;
        /* Each points into its own aggregates: compared below. */
        p.streams = q.streams = NULL;
        assert_memory_equal(&p, &q, sizeof p);
        assert_int_equal(x->dev[d].nstreams, y->dev[d].nstreams);
        if (x->dev[d].nstreams)
            assert_memory_equal(x->dev[d].streams, y->dev[d].streams,
                                x->dev[d].nstreams *
                                    sizeof *x->dev[d].streams);
        assert_int_equal(x->nbusy[d], y->nbusy[d]);
        if (x->nbusy[d])
            assert_memory_equal(x->busy[d], y->busy[d],
                                x->nbusy[d] * 2 * sizeof(int64_t));
    }
    assert_int_equal(x->nkstats, y->nkstats);
    assert_true(x->nkstats >= 3); /* gemm, relu, <unknown> */
    for (size_t i = 0; i < x->nkstats; i++) {
        assert_string_equal(x->kstats[i].name, y->kstats[i].name);
        tfb_trace_kernel_stat p = x->kstats[i], q = y->kstats[i];
        p.name = q.name = NULL;
        assert_memory_equal(&p, &q, sizeof p);
    }
    assert_int_equal(x->ktotal, y->ktotal);
    for (int w = 0; w < 4; w++) {
        char *ja = json_of(a, w), *jb = json_of(b, w);
        assert_string_equal(ja, jb);
        free(ja);
        free(jb);
    }
}

static char *path_in(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = malloc(n);
    assert_non_null(p);
    snprintf(p, n, "%s/%s", dir, name);
    return p;
}

static size_t count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            n++;
    closedir(d);
    return n;
}

static void test_round_trip(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp();
    char *f = path_in(dir, "t.tfbc");
    tfb_trace *t = build();
    assert_true(t->lanes[0].levels >= 2);
    assert_int_equal(tfb_trace_colcache_write_file(f, "SIG", t, 1406), 0);
    /* Only the file itself: the temp file was renamed. */
    assert_int_equal(count_entries(dir), 1);
    tfb_trace *m = NULL;
    uint64_t rows = 0;
    assert_int_equal(tfb_trace_colcache_read_file(f, "SIG", 0, &m, &rows), 0);
    assert_int_equal(rows, 1406);
    assert_non_null(m->release);
    assert_same_trace(t, m);
    /* The spans are used in place, not copied. */
    assert_true(m->spans != t->spans);
    /* Another source, or a smaller row budget: not used. */
    tfb_trace *o = NULL;
    assert_int_equal(tfb_trace_colcache_read_file(f, "SIH", 0, &o, NULL),
                     TFB_ESTATE);
    assert_int_equal(tfb_trace_colcache_read_file(f, "SI", 0, &o, NULL),
                     TFB_ESTATE);
    assert_int_equal(tfb_trace_colcache_read_file(f, "SIG", 1405, &o, NULL),
                     TFB_ESTATE);
    assert_null(o);
    assert_int_equal(tfb_trace_colcache_read_file(f, "SIG", 1406, &o, NULL), 0);
    tfb_trace_free(o);
    tfb_trace_free(m);
    tfb_trace_free(t);
    char *none = path_in(dir, "none.tfbc");
    assert_int_equal(tfb_trace_colcache_read_file(none, "SIG", 0, &o, NULL),
                     TFB_ENOENT);
    free(none);
    free(f);
    tu_rmtree(dir);
    free(dir);
}

static void test_empty_trace(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp();
    char *f = path_in(dir, "e.tfbc");
    tfb_trace_builder *b;
    assert_int_equal(tfb_trace_builder_new(&b, NULL), 0);
    tfb_trace_builder_begin_file(b);
    tfb_trace_builder_end_file(b, 0);
    tfb_trace *t = NULL;
    assert_int_equal(tfb_trace_builder_finish(b, &t), 0);
    assert_int_equal(tfb_trace_colcache_write_file(f, "E", t, 0), 0);
    tfb_trace *m = NULL;
    assert_int_equal(tfb_trace_colcache_read_file(f, "E", 0, &m, NULL), 0);
    assert_int_equal(m->nspans, 0);
    assert_int_equal(m->files_skipped, 1);
    assert_int_equal(m->files_read, 0);
    char *ja = json_of(t, 0), *jb = json_of(m, 0);
    assert_string_equal(ja, jb);
    free(ja);
    free(jb);
    tfb_trace_free(m);
    tfb_trace_free(t);
    free(f);
    tu_rmtree(dir);
    free(dir);
}

/* Every damaged copy of a good file is refused. */
static void expect_refused(const char *f, const uint8_t *data, size_t len)
{
    assert_int_equal(tu_write_file(f, data, len), 0);
    tfb_trace *m = NULL;
    int rc = tfb_trace_colcache_read_file(f, "SIG", 0, &m, NULL);
    assert_null(m);
    /* A byte of the signature reads as another source's file (also not
     * used); any other damage is corruption. */
    assert_true(rc == TFB_ECORRUPT || rc == TFB_ESTATE);
}

static void test_damage_detected(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp();
    char *f = path_in(dir, "t.tfbc");
    char *g = path_in(dir, "bad.tfbc");
    tfb_trace *t = build();
    assert_int_equal(tfb_trace_colcache_write_file(f, "SIG", t, 7), 0);
    tfb_trace_free(t);
    size_t len = 0;
    uint8_t *good = tu_read_file(f, &len);
    assert_non_null(good);
    assert_true(len > 20000);
    uint8_t *bad = malloc(len + 1);
    assert_non_null(bad);
    size_t tried = 0;
    /* Every byte of the first 1 KiB (header, signature), then every
     * 61st byte (each column is hit). */
    for (size_t i = 0; i < len; i += i < 1024 ? 1 : 61) {
        memcpy(bad, good, len);
        bad[i] ^= (uint8_t)(1u << (i % 8));
        expect_refused(g, bad, len);
        tried++;
    }
    assert_true(tried > 1024);
    /* Truncations, and one byte too many. */
    size_t cuts[] = {0, 1, 7, 100, 200, len / 3, len / 2, len - 64, len - 1};
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++)
        expect_refused(g, good, cuts[i]);
    memcpy(bad, good, len);
    bad[len] = 0;
    expect_refused(g, bad, len + 1);
    /* A wrong version with a CRC that matches: the version check alone
     * refuses it. (The CRC is at byte 24, over the file with it zeroed.) */
    memcpy(bad, good, len);
    bad[8] ^= 1;
    memset(bad + 24, 0, 4);
    uint32_t crc = tfb_crc32c(0, bad, len);
    memcpy(bad + 24, &crc, 4);
    assert_int_equal(tu_write_file(g, bad, len), 0);
    tfb_trace *m = NULL;
    assert_int_equal(tfb_trace_colcache_read_file(g, "SIG", 0, &m, NULL),
                     TFB_ECORRUPT);
    /* The same recomputation on the good file reads: the test's CRC is
     * the file's. */
    memcpy(bad, good, len);
    memset(bad + 24, 0, 4);
    crc = tfb_crc32c(0, bad, len);
    assert_memory_equal(good + 24, &crc, 4);
    /* And the good file still reads. */
    assert_int_equal(tfb_trace_colcache_read_file(f, "SIG", 0, &m, NULL), 0);
    tfb_trace_free(m);
    free(bad);
    free(good);
    free(f);
    free(g);
    tu_rmtree(dir);
    free(dir);
}

static void test_write_failures(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp();
    char *f = path_in(dir, "no/such/dir/t.tfbc");
    tfb_trace *t = build();
    assert_true(tfb_trace_colcache_write_file(f, "SIG", t, 1) < 0);
    assert_int_equal(count_entries(dir), 0);
    tfb_trace_free(t);
    free(f);
    tu_rmtree(dir);
    free(dir);
}

static char *write_kineto(const char *dir, const char *name, int dur)
{
    char *p = path_in(dir, name);
    char text[512];
    int n = snprintf(text, sizeof text,
                     "{\"traceEvents\": [{\"ph\":\"X\",\"cat\":\"kernel\","
                     "\"name\":\"k\",\"pid\":0,\"tid\":1,\"ts\":1000,"
                     "\"dur\":%d}]}",
                     dur);
    assert_int_equal(tu_write_file(p, text, (size_t)n), 0);
    return p;
}

static void test_load_save_by_source(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp();
    char *logdir = path_in(dir, "logs");
    char *cache = path_in(dir, "cache");
    assert_int_equal(mkdir(logdir, 0755), 0);
    /* Inside the logdir: refused (explicit) or off (default). */
    char *inside = path_in(logdir, "c");
    assert_int_equal(tfb_trace_colcache_configure(inside, logdir, NULL),
                     TFB_EINVAL);
    assert_null(tfb_trace_colcache_dir());
    assert_int_equal(tfb_trace_colcache_configure("", logdir, NULL), 0);
    assert_null(tfb_trace_colcache_dir());
    assert_int_equal(tfb_trace_colcache_configure(cache, logdir, NULL), 0);
    assert_non_null(tfb_trace_colcache_dir());
    struct stat st;
    assert_int_equal(stat(cache, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0700);

    char *src = write_kineto(logdir, "a.pt.trace.json", 5);
    char *paths[1] = {src};
    tfb_trace *t = NULL;
    tfb_trace_colcache_key *k = NULL;
    assert_true(tfb_trace_colcache_load(paths, 1, 0, &t, &k) < 0);
    assert_null(t);
    assert_non_null(k);
    assert_int_equal(tfb_trace_load_files(paths, 1, &t), 0);
    assert_int_equal(tfb_trace_colcache_save(k, t, 1), 0);
    tfb_trace_colcache_key_free(k);
    tfb_trace *m = NULL;
    assert_int_equal(tfb_trace_colcache_load(paths, 1, 0, &m, &k), 0);
    assert_null(k);
    assert_non_null(m->release);
    assert_int_equal(m->nspans, 1);
    assert_int_equal(m->spans[0].end - m->spans[0].start, 5000);
    tfb_trace_free(m);
    tfb_trace_free(t);
    /* tfb_trace_load_files goes through the cache: a hit now. */
    assert_int_equal(tfb_trace_load_files(paths, 1, &t), 0);
    assert_non_null(t->release);
    tfb_trace_free(t);

    /* Another file at the same path (same size): a miss, and the trace
     * read is the new one; saving replaces the cache file. */
    char *tmp = write_kineto(logdir, "tmp", 7);
    assert_int_equal(rename(tmp, src), 0);
    free(tmp);
    assert_true(tfb_trace_colcache_load(paths, 1, 0, &m, &k) < 0);
    assert_non_null(k);
    tfb_trace_colcache_key_free(k);
    assert_int_equal(tfb_trace_load_files(paths, 1, &t), 0);
    assert_null(t->release); /* built */
    assert_int_equal(t->spans[0].end - t->spans[0].start, 7000);
    tfb_trace_free(t);
    assert_int_equal(tfb_trace_load_files(paths, 1, &t), 0);
    assert_non_null(t->release); /* mapped */
    assert_int_equal(t->spans[0].end - t->spans[0].start, 7000);
    tfb_trace_free(t);
    assert_int_equal(count_entries(cache), 1);

    /* A source that changes between the key and the save: not saved. */
    char *src2 = write_kineto(logdir, "b.pt.trace.json", 5);
    char *paths2[1] = {src2};
    assert_true(tfb_trace_colcache_load(paths2, 1, 0, &m, &k) < 0);
    assert_int_equal(tfb_trace_load_files(paths, 1, &t), 0);
    tmp = write_kineto(logdir, "tmp", 9);
    assert_int_equal(rename(tmp, src2), 0);
    assert_int_equal(tfb_trace_colcache_save(k, t, 1), TFB_ESTATE);
    tfb_trace_colcache_key_free(k);
    tfb_trace_free(t);
    assert_int_equal(count_entries(cache), 1);

    /* The cache file of a deleted source goes at the next save. */
    char *src3 = write_kineto(logdir, "c.pt.trace.json", 5);
    char *paths3[1] = {src3};
    assert_int_equal(tfb_trace_load_files(paths3, 1, &t), 0);
    tfb_trace_free(t);
    assert_int_equal(count_entries(cache), 2);
    assert_int_equal(unlink(src3), 0);
    free(tmp);
    tmp = write_kineto(logdir, "tmp", 8);
    assert_int_equal(rename(tmp, src), 0);
    assert_int_equal(tfb_trace_load_files(paths, 1, &t), 0);
    assert_null(t->release); /* built, and saved */
    tfb_trace_free(t);
    assert_int_equal(count_entries(cache), 1);
    assert_int_equal(tfb_trace_load_files(paths, 1, &t), 0);
    assert_non_null(t->release);
    tfb_trace_free(t);
    free(src3);

    assert_int_equal(tfb_trace_colcache_configure("", NULL, NULL), 0);
    free(tmp);
    free(src);
    free(src2);
    free(inside);
    free(logdir);
    free(cache);
    tu_rmtree(dir);
    free(dir);
}

static void test_default_dir(void **state)
{
    (void)state;
    setenv("XDG_CACHE_HOME", "/x/cache", 1);
    setenv("HOME", "/home/u", 1);
    char *d = tfb_trace_colcache_default_dir();
    assert_string_equal(d, "/x/cache/tfboard");
    free(d);
    /* A relative XDG_CACHE_HOME is invalid (the XDG spec): ignored. */
    setenv("XDG_CACHE_HOME", "rel", 1);
    d = tfb_trace_colcache_default_dir();
    assert_string_equal(d, "/home/u/.cache/tfboard");
    free(d);
    unsetenv("XDG_CACHE_HOME");
    d = tfb_trace_colcache_default_dir();
    assert_string_equal(d, "/home/u/.cache/tfboard");
    free(d);
    unsetenv("HOME");
    assert_null(tfb_trace_colcache_default_dir());
    /* No default: configure(NULL) turns the cache off, without failing. */
    assert_int_equal(tfb_trace_colcache_configure(NULL, NULL, NULL), 0);
    assert_null(tfb_trace_colcache_dir());
    /* The default inside the logdir: off, not an error. */
    char *dir = tu_mkdtemp();
    setenv("XDG_CACHE_HOME", dir, 1);
    assert_int_equal(tfb_trace_colcache_configure(NULL, dir, NULL), 0);
    assert_null(tfb_trace_colcache_dir());
    unsetenv("XDG_CACHE_HOME");
    tu_rmtree(dir);
    free(dir);
}

static void test_wal_copy(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp();
    char *cache = path_in(dir, "cache");
    char *db = path_in(dir, "s.sqlite");
    assert_int_equal(tfb_trace_colcache_configure(cache, NULL, NULL), 0);
    sqlite3 *w;
    assert_int_equal(sqlite3_open(db, &w), SQLITE_OK);
    assert_int_equal(sqlite3_exec(w,
                                  "PRAGMA journal_mode=WAL;"
                                  "PRAGMA wal_autocheckpoint=0;"
                                  "CREATE TABLE t(x);"
                                  "INSERT INTO t VALUES(42);",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    /* The writer is still open: every row is in the WAL only. */
    char *copy = NULL;
    assert_int_equal(tfb_trace_wal_copy(db, 0, &copy), 0);
    assert_non_null(copy);
    assert_true(strncmp(copy, cache, strlen(cache)) == 0);
    sqlite3 *r;
    char uri[2048];
    snprintf(uri, sizeof uri, "file:%s?mode=ro", copy);
    assert_int_equal(sqlite3_open_v2(uri, &r,
                                     SQLITE_OPEN_READONLY | SQLITE_OPEN_URI,
                                     NULL),
                     SQLITE_OK);
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(r, "SELECT x FROM t", -1, &st, NULL),
                     SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_int_equal(sqlite3_column_int(st, 0), 42);
    sqlite3_finalize(st);
    sqlite3_close(r);
    tfb_trace_wal_drop(copy);
    assert_int_equal(count_entries(cache), 0);
    sqlite3_close(w); /* checkpoints: no WAL data left */
    assert_int_equal(tfb_trace_wal_copy(db, 0, &copy), 0);
    assert_null(copy);
    /* No cache directory: no copy. */
    assert_int_equal(tfb_trace_colcache_configure("", NULL, NULL), 0);
    assert_int_equal(tfb_trace_wal_copy(db, 0, &copy), 0);
    assert_null(copy);
    free(db);
    free(cache);
    tu_rmtree(dir);
    free(dir);
}

/* The one row of table t read through SQLite from a WAL copy. */
static int read_copy_row(const char *copy)
{
    sqlite3 *r;
    char uri[2048];
    snprintf(uri, sizeof uri, "file:%s?mode=ro", copy);
    assert_int_equal(sqlite3_open_v2(uri, &r,
                                     SQLITE_OPEN_READONLY | SQLITE_OPEN_URI,
                                     NULL),
                     SQLITE_OK);
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(r, "SELECT x FROM t", -1, &st, NULL),
                     SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    int x = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(r);
    return x;
}

static uint64_t allocated(const char *path)
{
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    return (uint64_t)st.st_blocks * 512u;
}

/* Issue 32 item 6: a -wal of 256 MiB that holds a few KiB of data (the
 * rest a hole) is copied with its hole: the copy costs its data, not its
 * size (copied dense, a 70 GB one filled the disk), and reads the same. */
static void test_wal_copy_keeps_holes(void **state)
{
    (void)state;
    const off_t SPARSE = (off_t)256 << 20;
    char *dir = tu_mkdtemp();
    char *cache = path_in(dir, "cache");
    char *db = path_in(dir, "s.sqlite");
    char *wal = path_in(dir, "s.sqlite-wal");
    assert_int_equal(tfb_trace_colcache_configure(cache, NULL, NULL), 0);
    sqlite3 *w;
    assert_int_equal(sqlite3_open(db, &w), SQLITE_OK);
    assert_int_equal(sqlite3_exec(w,
                                  "PRAGMA journal_mode=WAL;"
                                  "PRAGMA wal_autocheckpoint=0;"
                                  "CREATE TABLE t(x);"
                                  "INSERT INTO t VALUES(42);",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    /* The writer's frames, a hole, a few bytes at the end. */
    int fd = open(wal, O_WRONLY);
    assert_true(fd >= 0);
    assert_int_equal(pwrite(fd, "tail", 4, SPARSE - 4), 4);
    close(fd);
    if (allocated(wal) >= (uint64_t)16 << 20) {
        /* A file system without holes: nothing to keep. */
        print_message("skipped: %s cannot hold a sparse file\n", dir);
    } else {
        char *copy = NULL;
        assert_int_equal(tfb_trace_wal_copy(db, 0, &copy), 0);
        assert_non_null(copy);
        size_t cl = strlen(copy) + 5;
        char *cwal = malloc(cl);
        assert_non_null(cwal);
        snprintf(cwal, cl, "%s-wal", copy);
        struct stat st;
        assert_int_equal(stat(cwal, &st), 0);
        assert_int_equal(st.st_size, SPARSE); /* the same file, */
        assert_true(allocated(cwal) < ((uint64_t)16 << 20)); /* its data */
        /* The tail was kept too. */
        char tail[4] = {0};
        fd = open(cwal, O_RDONLY);
        assert_true(fd >= 0);
        assert_int_equal(pread(fd, tail, 4, SPARSE - 4), 4);
        close(fd);
        assert_memory_equal(tail, "tail", 4);
        assert_int_equal(read_copy_row(copy), 42);
        tfb_trace_wal_drop(copy);
        free(cwal);
        assert_int_equal(count_entries(cache), 0);
    }
    sqlite3_close(w);
    assert_int_equal(tfb_trace_colcache_configure("", NULL, NULL), 0);
    free(wal);
    free(db);
    free(cache);
    tu_rmtree(dir);
    free(dir);
}

#define KTABLE                                                                \
    "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL(start INTEGER, end INTEGER, "    \
    "deviceId INTEGER, streamId INTEGER, correlationId INTEGER, "             \
    "demangledName TEXT);"

/* Issue 32 item 6: the copy of a store and its -wal stops at the copy
 * budget (a load budget, tfb_trace_set_copy_budget): past it the store is
 * read without its WAL, as without a cache directory, the log says why,
 * and that trace is not cached, so the next load with room reads it all. */
static void test_wal_copy_budget(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp();
    char *cache = path_in(dir, "cache");
    char *logdir = path_in(dir, "logs");
    char *db = path_in(logdir, "s.sqlite");
    assert_int_equal(mkdir(logdir, 0755), 0);
    FILE *log = tmpfile();
    assert_non_null(log);
    assert_int_equal(tfb_trace_colcache_configure(cache, logdir, log), 0);
    /* 2000 kernels, every row in the WAL (a writer that did not close). */
    sqlite3 *w;
    assert_int_equal(sqlite3_open(db, &w), SQLITE_OK);
    assert_int_equal(
        sqlite3_exec(w,
                     "PRAGMA journal_mode=WAL;"
                     "PRAGMA wal_autocheckpoint=0;" KTABLE
                     "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL "
                     "WITH RECURSIVE r(i) AS (SELECT 0 UNION ALL SELECT i + 1 "
                     "FROM r WHERE i + 1 < 2000) SELECT 1000 * i, "
                     "1000 * i + 500, 0, 1, i, 'k' FROM r;",
                     NULL, NULL, NULL),
        SQLITE_OK);
    char *paths[1] = {db};

    /* A budget below what the two files hold: no copy. */
    char *copy = NULL;
    assert_int_equal(tfb_trace_wal_copy(db, 4096, &copy), TFB_ETOOBIG);
    assert_null(copy);
    assert_int_equal(count_entries(cache), 0);
    tfb_trace_set_copy_budget(4096);
    tfb_trace *t = NULL;
    assert_int_equal(tfb_trace_load_files(paths, 1, &t), 0);
    /* Read immutable: its tables are all in the WAL, so no trace. */
    assert_int_equal(t->files_read, 0);
    assert_int_equal(t->nspans, 0);
    tfb_trace_free(t);
    assert_int_equal(count_entries(cache), 0); /* nothing cached */
    /* The log says which store and why. */
    char text[2048] = {0};
    rewind(log);
    size_t n = fread(text, 1, sizeof text - 1, log);
    assert_true(n > 0);
    assert_non_null(strstr(text, db));
    assert_non_null(strstr(text, "the copy budget"));

    /* With the default budget: read in full (through a copy), cached. */
    tfb_trace_set_copy_budget(0);
    assert_int_equal(tfb_trace_load_files(paths, 1, &t), 0);
    assert_int_equal(t->files_read, 1);
    assert_int_equal(t->nspans, 2000);
    assert_null(t->release); /* built from the sources */
    tfb_trace_free(t);
    assert_int_equal(count_entries(cache), 1); /* its cache file */
    sqlite3_close(w);
    assert_int_equal(tfb_trace_colcache_configure("", NULL, NULL), 0);
    fclose(log);
    free(db);
    free(logdir);
    free(cache);
    tu_rmtree(dir);
    free(dir);
}

/* Issue 32 item 7: a cache file truncated while its trace is mapped (a
 * cache cleaner, `truncate`) or rewritten in place (`rsync --inplace`)
 * changes nothing the mapped trace reads: what is mapped is a private
 * copy. (Mapped in place, the next read of the trace died of SIGBUS.) */
static void test_mapped_file_changed(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp();
    char *f = path_in(dir, "t.tfbc");
    tfb_trace *t = build();
    assert_int_equal(tfb_trace_colcache_write_file(f, "SIG", t, 1), 0);
    tfb_trace *a = NULL, *b = NULL;
    assert_int_equal(tfb_trace_colcache_read_file(f, "SIG", 0, &a, NULL), 0);
    assert_int_equal(tfb_trace_colcache_read_file(f, "SIG", 0, &b, NULL), 0);
    /* The copies have no name: the directory holds the cache file only. */
    assert_int_equal(count_entries(dir), 1);
    struct stat st;
    assert_int_equal(stat(f, &st), 0);
    size_t len = (size_t)st.st_size;
    /* A cleaner truncates it. */
    assert_int_equal(truncate(f, 0), 0);
    assert_same_trace(t, a);
    /* rsync --inplace writes other bytes over it. */
    uint8_t *junk = malloc(len);
    assert_non_null(junk);
    memset(junk, 0xa5, len);
    int fd = open(f, O_WRONLY);
    assert_true(fd >= 0);
    assert_int_equal(pwrite(fd, junk, len, 0), (ssize_t)len);
    close(fd);
    assert_same_trace(t, b);
    assert_same_trace(t, a);
    /* The file itself is refused now, as any damaged one. */
    tfb_trace *c = NULL;
    assert_int_equal(tfb_trace_colcache_read_file(f, "SIG", 0, &c, NULL),
                     TFB_ECORRUPT);
    assert_null(c);
    assert_int_equal(count_entries(dir), 1);
    tfb_trace_free(a);
    tfb_trace_free(b);
    tfb_trace_free(t);
    free(junk);
    free(f);
    tu_rmtree(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_empty_trace),
        cmocka_unit_test(test_damage_detected),
        cmocka_unit_test(test_write_failures),
        cmocka_unit_test(test_load_save_by_source),
        cmocka_unit_test(test_wal_copy),
        cmocka_unit_test(test_wal_copy_keeps_holes),
        cmocka_unit_test(test_wal_copy_budget),
        cmocka_unit_test(test_mapped_file_changed),
        cmocka_unit_test(test_default_dir),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
