/*
 * test_media_pool.c - tfb_image's buffer pool (collector/media.c, "Buffer
 * pool"): a burst after the encoder caught up is served from the pool
 * without a fresh buffer; images of several sizes from several threads,
 * through reused buffers, decode (libpng) to exactly the pixels logged;
 * the pool and the queue together stay within TFB_IMAGE_QUEUE_BYTES when
 * images far bigger than the pool change size, and a refused image is
 * counted as it was before the pool; buffers either side of the
 * malloc/mmap threshold are freed as they were allocated.
 */
#include <png.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "collector/media_internal.h"
#include "store/loader.h"
#include "store/media_index.h"
#include "store/store.h"
#include "test_util.h"

/* The pixels of image (seed, h, w, c): every byte depends on all four,
 * so a buffer reused with stale bytes or a wrong stride shows. */
static void fill(uint8_t *px, unsigned seed, int h, int w, int c)
{
    size_t n = (size_t)h * (size_t)w * (size_t)c;
    uint32_t x = seed * 2654435761u + (uint32_t)(h * 131 + w * 7 + c);
    for (size_t i = 0; i < n; i++) {
        x = x * 1103515245u + 12345u;
        px[i] = (uint8_t)(x >> 16);
    }
}

static tfb_media_pool_info pool_info(tfb_writer *w)
{
    tfb_media_pool_info in;
    assert_int_equal(tfb_media_pool_stats(w, &in), 0);
    return in;
}

static void second_burst_reuses(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp();
    tfb_writer *w;
    assert_int_equal(tfb_writer_open(&w, dir, NULL), 0);
    tfb_media_pool_info in = pool_info(w);
    assert_int_equal(in.fresh, 0); /* no image yet: no state at all */
    enum { H = 128, W = 128, C = 3 };
    uint8_t *px = malloc((size_t)H * W * C);
    fill(px, 1, H, W, C);
    for (int i = 0; i < 24; i++)
        assert_int_equal(tfb_image(w, "burst", px, H, W, C, i), 0);
    assert_int_equal(tfb_flush(w), 0);
    in = pool_info(w);
    /* Every buffer the burst used is back in the pool, none freed. */
    assert_true(in.fresh >= 1);
    assert_int_equal(in.pooled, in.fresh);
    assert_int_equal(in.queued_bytes, 0);
    assert_true(in.pool_bytes >= in.fresh * (size_t)(H * W * C));
    assert_true(in.pool_bytes <= TFB_IMAGE_QUEUE_BYTES);

    /* A burst of as many images as the pool holds (other tags, same
     * size) takes no fresh memory. */
    uint64_t fresh = in.fresh, reused = in.reused;
    size_t n = in.pooled;
    for (size_t i = 0; i < n; i++)
        assert_int_equal(tfb_image(w, i % 2 ? "b/odd" : "b/even", px, H, W,
                                   C, (int64_t)i), 0);
    in = pool_info(w);
    assert_int_equal(in.fresh, fresh);
    assert_int_equal(in.reused, reused + n);
    assert_int_equal(tfb_flush(w), 0);
    /* A smaller image fits a pooled buffer too (within a quarter). */
    assert_int_equal(tfb_image(w, "smaller", px, H - 8, W, C, 0), 0);
    assert_int_equal(pool_info(w).fresh, fresh);
    /* A much smaller one does not take a big buffer. */
    assert_int_equal(tfb_image(w, "tiny", px, 4, 4, C, 0), 0);
    assert_int_equal(pool_info(w).fresh, fresh + 1);
    assert_int_equal(tfb_writer_close(w), 0);
    free(px);
    tu_rmtree(dir);
    free(dir);
}

/* ---- several threads, several sizes, read back and decoded ---- */

enum { THREADS = 4, PER_THREAD = 30 };
static const int sizes[3][3] = {{40, 56, 3}, {96, 80, 4}, {17, 300, 1}};

typedef struct {
    tfb_writer *w;
    int id;
    int rc;
} worker_arg;

static void *worker(void *p)
{
    worker_arg *a = p;
    uint8_t *px = malloc(96 * 80 * 4 + 17 * 300);
    char tag[32];
    for (int i = 0; i < PER_THREAD && !a->rc; i++) {
        const int *s = sizes[(a->id + i) % 3];
        snprintf(tag, sizeof tag, "t%d/s%d", a->id, (a->id + i) % 3);
        fill(px, (unsigned)(a->id * 1000 + i), s[0], s[1], s[2]);
        a->rc = tfb_image(a->w, tag, px, s[0], s[1], s[2], i);
        if (i % 10 == 9 && !a->rc)
            a->rc = tfb_flush(a->w); /* lets the pool refill meanwhile */
    }
    free(px);
    return NULL;
}

/* Decodes a PNG to its 8-bit samples in the PNG's own channel count;
 * malloc'd. */
static uint8_t *decode_png(const uint8_t *b, size_t len, int *h, int *w,
                           int *c)
{
    png_image im;
    memset(&im, 0, sizeof im);
    im.version = PNG_IMAGE_VERSION;
    if (!png_image_begin_read_from_memory(&im, b, len))
        return NULL;
    *c = PNG_IMAGE_PIXEL_CHANNELS(im.format);
    *h = (int)im.height;
    *w = (int)im.width;
    uint8_t *out = malloc(PNG_IMAGE_SIZE(im));
    if (!png_image_finish_read(&im, NULL, out, 0, NULL)) {
        free(out);
        png_image_free(&im);
        return NULL;
    }
    return out;
}

static void threads_sizes_decode(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp();
    char run[600];
    snprintf(run, sizeof run, "%s/r", dir);
    tfb_writer *w;
    assert_int_equal(tfb_writer_open(&w, run, NULL), 0);
    pthread_t th[THREADS];
    worker_arg args[THREADS];
    for (int i = 0; i < THREADS; i++) {
        args[i] = (worker_arg){w, i, 0};
        assert_int_equal(pthread_create(&th[i], NULL, worker, &args[i]), 0);
    }
    for (int i = 0; i < THREADS; i++) {
        pthread_join(th[i], NULL);
        assert_int_equal(args[i].rc, 0);
    }
    assert_int_equal(tfb_flush(w), 0);
    tfb_media_pool_info in = pool_info(w);
    assert_int_equal(in.fresh + in.reused, THREADS * PER_THREAD);
    assert_true(in.reused > 0); /* the flushes made buffers come back */
    assert_int_equal(tfb_writer_close(w), 0);

    tfb_store *st;
    assert_int_equal(tfb_store_create(&st, dir), 0);
    tfb_loader *l;
    tfb_loader_opts lo = {0, 1, NULL};
    assert_int_equal(tfb_loader_create(&l, st, &lo), 0);
    assert_int_equal(tfb_loader_pass(l), 0);
    tfb_loader_stop(l);
    tfb_run *r = tfb_store_find_run(st, "r");
    assert_non_null(r);
    tfb_media_index *ix = tfb_run_media(r);
    assert_int_equal(tfb_media_count(ix, TFB_MEDIA_IMAGE),
                     THREADS * PER_THREAD);
    uint8_t *want = malloc(96 * 80 * 4 + 17 * 300);
    for (int t = 0; t < THREADS; t++)
        for (int k = 0; k < 3; k++) {
            char tag[32];
            snprintf(tag, sizeof tag, "t%d/s%d", t, k);
            tfb_media_entry *e;
            size_t n;
            assert_int_equal(tfb_media_entries(ix, TFB_MEDIA_IMAGE, tag, 0,
                                               &e, &n), 0);
            assert_int_equal(n, PER_THREAD / 3);
            for (size_t j = 0; j < n; j++) {
                uint8_t *bytes;
                size_t len;
                assert_int_equal(tfb_media_read(ix, &e[j], &bytes, &len), 0);
                int h, wd, c;
                uint8_t *got = decode_png(bytes, len, &h, &wd, &c);
                assert_non_null(got);
                const int *s = sizes[k];
                assert_int_equal(h, s[0]);
                assert_int_equal(wd, s[1]);
                assert_int_equal(c, s[2]);
                fill(want, (unsigned)(t * 1000 + (int)e[j].step), s[0], s[1],
                     s[2]);
                assert_memory_equal(got, want, (size_t)h * wd * c);
                free(got);
                free(bytes);
            }
            free(e);
        }
    free(want);
    tfb_store_destroy(st);
    tu_rmtree(dir);
    free(dir);
}

/* ---- the bound ---- */

static void bound_holds(tfb_writer *w)
{
    tfb_media_pool_info in = pool_info(w);
    assert_true(in.pool_bytes + in.queued_bytes <= TFB_IMAGE_QUEUE_BYTES);
}

/* n images of h x w RGBA, as fast as possible; returns how many were
 * refused (TFB_EDROPPED, the only other answer allowed). */
static int burst(tfb_writer *w, const uint8_t *px, int n, int h, int wd)
{
    int refused = 0;
    for (int i = 0; i < n; i++) {
        int rc = tfb_image(w, "big", px, h, wd, 4, i);
        if (rc == TFB_EDROPPED)
            refused++;
        else
            assert_int_equal(rc, 0);
        bound_holds(w);
    }
    return refused;
}

static void bound_with_big_images(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp();
    tfb_writer *w;
    assert_int_equal(tfb_writer_open(&w, dir, NULL), 0);
    /* 16 MiB images: 20 of them are more than the 256 MiB bound. Flat
     * pixels keep the encoding quick; the queue may or may not fill. */
    enum { SIDE = 2048 };
    uint8_t *px = calloc((size_t)SIDE * SIDE, 4);
    int refused = burst(w, px, 20, SIDE, SIDE);
    assert_int_equal(tfb_flush(w), 0);
    tfb_media_pool_info in = pool_info(w);
    assert_true(in.pooled >= 1);
    assert_true(in.pool_bytes <= TFB_IMAGE_QUEUE_BYTES);
    /* Another size: the pool gives way as the new images queue. */
    refused += burst(w, px, 20, SIDE - 600, SIDE);
    assert_int_equal(tfb_flush(w), 0);
    bound_holds(w);
    tfb_writer_stats ws;
    tfb_writer_stats_init(&ws);
    assert_int_equal(tfb_writer_get_stats(w, &ws), 0);
    assert_int_equal(ws.records_dropped, (uint64_t)refused);
    assert_int_equal(tfb_writer_close(w), 0);
    free(px);
    tu_rmtree(dir);
    free(dir);
}

/* Buffers on both sides of the size where jobs change from malloc to
 * mmap (64 KiB with the job's header): each one is freed the way it was
 * allocated (under ASan a mismatch shows as a leak or a bad free). Many
 * sizes also cycle the pool's classes. */
static void sizes_around_map_threshold(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp();
    tfb_writer *w;
    assert_int_equal(tfb_writer_open(&w, dir, NULL), 0);
    uint8_t *px = calloc(65535, 1);
    for (int wd = 65300; wd <= 65535; wd++) {
        assert_int_equal(tfb_image(w, "b", px, 1, wd, 1, wd), 0);
        if (wd % 8 == 0)
            assert_int_equal(tfb_flush(w), 0);
    }
    assert_int_equal(tfb_flush(w), 0);
    tfb_media_pool_info in = pool_info(w);
    assert_int_equal(in.fresh + in.reused, 65535 - 65300 + 1);
    assert_true(in.reused > 0);
    assert_int_equal(tfb_writer_close(w), 0);
    free(px);
    tu_rmtree(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(second_burst_reuses),
        cmocka_unit_test(threads_sizes_decode),
        cmocka_unit_test(bound_with_big_images),
        cmocka_unit_test(sizes_around_map_threshold),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
