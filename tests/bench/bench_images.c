/*
 * bench_images.c - images (issue 22): what tfb_image costs the caller, how
 * fast the background thread encodes, and what the server's index costs
 * per image.
 *
 *   bench_images [N_CALLS [N_INDEXED]]   defaults 1000 and 200000
 *   TMPDIR                               where the files go (default /tmp)
 *
 * 1. N_CALLS tfb_image calls of 256x256x3 random-ish pixels (a gradient
 *    plus noise: PNG neither trivial nor incompressible); each call is
 *    timed: median, p99 and max (target: the copy, <= 50 us). Paced
 *    (each call after the previous image is encoded), then bursts: a
 *    first burst on a new writer (its buffers all fresh memory), then,
 *    once it is encoded, a second burst on the same writer (a loop that
 *    logs a batch of images every few hundred steps: the writer's pool
 *    gives back the first burst's buffers, warm).
 *    Beside them, the floor: a bare memcpy of the same 192 KB into fresh
 *    memory (each buffer newly mapped: its pages fault in as the copy
 *    touches them) and into warm memory, so that "the copy" is measured
 *    on this machine rather than assumed.
 * 2. The encoding rate: images and pixel MB per second from the first
 *    call to tfb_flush's return (the flush waits for the encoder).
 * 3. N_INDEXED tiny PNGs (tfb_image_encoded) in one run, loaded into a
 *    store: heap bytes (mallinfo2) per indexed image, against 64 B.
 * Prints figures; never fails on a time.
 */
#include <malloc.h>
#include <sys/mman.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "store/loader.h"
#include "store/media_index.h"
#include "store/store.h"
#include "tfboard.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void check(int rc, const char *what)
{
    if (rc < 0) {
        fprintf(stderr, "bench_images: %s: %s\n", what, tfb_strerror(rc));
        exit(1);
    }
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void rm_rf(const char *dir)
{
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "bench_images: could not remove %s\n", dir);
}

/* The image: 256x256 RGB. */
enum { H = 256, W = 256, C = 3 };

static void print_calls(double *t, int n, const char *what, int dropped)
{
    qsort(t, (size_t)n, sizeof *t, cmp_d);
    printf("tfb_image 256x256x3, %d calls, %s: caller median %.1f us, p99 "
           "%.1f us, max %.1f us (target <= 50 us); %d refused (queue "
           "full)\n", n, what, t[n / 2], t[(size_t)n * 99 / 100], t[n - 1],
           dropped);
}

/* n timed calls; returns how many were refused (queue full). */
static int timed_calls(tfb_writer *w, const uint8_t *px, int n, double *t,
                       int paced, int64_t step0)
{
    int dropped = 0;
    for (int i = 0; i < n; i++) {
        double a = now_s();
        int rc = tfb_image(w, "bench/img", px, H, W, C, step0 + i);
        t[i] = (now_s() - a) * 1e6;
        if (rc == TFB_EDROPPED)
            dropped++;
        else
            check(rc, "tfb_image");
        if (paced)
            check(tfb_flush(w), "flush");
    }
    return dropped;
}

/* paced: each call waits (untimed) for the previous image's encoding,
 * as a loop that logs an image every few steps sees it; burst: calls
 * back to back, far ahead of the encoder: first on a new writer, then
 * again once the first burst is encoded. */
static void caller_cost(const char *dir, int n, int paced)
{
    uint8_t *px = malloc((size_t)H * W * C);
    uint32_t seed = 12345;
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++)
            for (int c = 0; c < C; c++) {
                seed = seed * 1103515245u + 12345u;
                px[((size_t)y * W + x) * C + c] =
                    (uint8_t)(x + y * c + ((seed >> 16) & 15));
            }
    char run[1100];
    snprintf(run, sizeof run, "%s/caller%d", dir, paced);
    tfb_writer *w;
    check(tfb_writer_open(&w, run, NULL), "open");
    double *t = malloc((size_t)n * sizeof *t);
    double t0 = now_s();
    int dropped = timed_calls(w, px, n, t, paced, 0);
    double t_calls = now_s() - t0;
    check(tfb_flush(w), "flush");
    double t_all = now_s() - t0;
    tfb_writer_stats st;
    tfb_writer_stats_init(&st);
    check(tfb_writer_get_stats(w, &st), "stats");
    print_calls(t, n, paced ? "paced" : "first burst (new writer)", dropped);
    if (!paced) {
        int enc = n - dropped;
        printf("encoding: %d images in %.2f s after %.2f s of calls: %.0f "
               "images/s, %.1f MB/s of pixels, %.1f KB per PNG\n",
               enc, t_all, t_calls, enc / t_all,
               enc * (double)(H * W * C) / t_all / 1e6,
               enc ? (double)st.bytes_written / enc / 1e3 : 0.0);
        dropped = timed_calls(w, px, n, t, 0, n);
        check(tfb_flush(w), "flush");
        print_calls(t, n, "second burst (same writer)", dropped);
    }
    check(tfb_writer_close(w), "close");
    free(t);
    free(px);
}

static void index_cost(const char *dir, long n)
{
    /* A valid 1x1 gray PNG (67 bytes). */
    static const uint8_t png1[] = {
        0x89, 'P', 'N', 'G', 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 'I', 'H',
        'D', 'R', 0, 0, 0, 1, 0, 0, 0, 1, 8, 0, 0, 0, 0, 0x3a, 0x7e, 0x9b,
        0x55, 0, 0, 0, 10, 'I', 'D', 'A', 'T', 0x78, 0x9c, 0x63, 0x68, 0,
        0, 0, 0x82, 0, 0x81, 0x77, 0xcd, 0x72, 0xb6, 0, 0, 0, 0, 'I', 'E',
        'N', 'D', 0xae, 0x42, 0x60, 0x82};
    char logdir[1100], run[1200];
    snprintf(logdir, sizeof logdir, "%s/index", dir);
    snprintf(run, sizeof run, "%s/run", logdir);
    tfb_writer_opts o;
    tfb_writer_opts_init(&o);
    o.queue_bytes = 32 << 20;
    tfb_writer *w;
    check(tfb_writer_open(&w, run, &o), "open");
    for (long i = 0; i < n; i++)
        check(tfb_image_encoded(w, "frames", png1, sizeof png1, i), "encoded");
    check(tfb_writer_close(w), "close");

    tfb_store *s;
    check(tfb_store_create(&s, logdir), "store");
    tfb_loader *l;
    tfb_loader_opts lo = {0, 1, NULL};
    check(tfb_loader_create(&l, s, &lo), "loader");
    /* A first pass over an empty copy would be fairer for the run's own
     * state; it is a few KB against n * 48 B, so it is simply counted. */
    struct mallinfo2 m0 = mallinfo2();
    double t0 = now_s();
    check(tfb_loader_pass(l), "pass");
    double t_load = now_s() - t0;
    struct mallinfo2 m1 = mallinfo2();
    tfb_run *r = tfb_store_find_run(s, "run");
    uint64_t got = r ? tfb_media_count(tfb_run_media(r), TFB_MEDIA_IMAGE) : 0;
    double per = (double)(m1.uordblks - m0.uordblks) / (double)n;
    printf("index: %ld images loaded in %.3f s (%.2f us each), %llu "
           "indexed, %.1f heap bytes per image (target <= 64; entry %zu B)\n",
           n, t_load, t_load * 1e6 / (double)n, (unsigned long long)got, per,
           sizeof(tfb_media_entry));
    tfb_loader_stop(l);
    tfb_store_destroy(s);
}

/* The copy alone: n memcpy's of one image into fresh mappings, then
 * again into the same (now warm) mappings. */
static void copy_floor(int n)
{
    size_t bytes = 256 * 256 * 3;
    uint8_t *src = malloc(bytes);
    double *fresh = malloc((size_t)n * sizeof *fresh);
    double *warm = malloc((size_t)n * sizeof *warm);
    uint8_t **bufs = calloc((size_t)n, sizeof *bufs);
    if (!src || !fresh || !warm || !bufs) {
        fprintf(stderr, "bench_images: out of memory\n");
        exit(1);
    }
    for (size_t i = 0; i < bytes; i++)
        src[i] = (uint8_t)(i * 31);
    int got = 0;
    for (; got < n; got++) {
        double t0 = now_s();
        void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
            break;
        memcpy(p, src, bytes);
        fresh[got] = (now_s() - t0) * 1e6;
        bufs[got] = p;
    }
    for (int i = 0; i < got; i++) {
        double t0 = now_s();
        memcpy(bufs[i], src, bytes);
        warm[i] = (now_s() - t0) * 1e6;
    }
    if (got) {
        qsort(fresh, (size_t)got, sizeof *fresh, cmp_d);
        qsort(warm, (size_t)got, sizeof *warm, cmp_d);
        printf("the copy alone, 192 KB memcpy x %d: into fresh memory median "
               "%.1f us, into warm memory median %.1f us\n", got,
               fresh[got / 2], warm[got / 2]);
    }
    for (int i = 0; i < got; i++)
        munmap(bufs[i], bytes);
    free(src);
    free(fresh);
    free(warm);
    free(bufs);
}

int main(int argc, char **argv)
{
    int calls = argc > 1 ? atoi(argv[1]) : 1000;
    long indexed = argc > 2 ? atol(argv[2]) : 200000;
    const char *tmp = getenv("TMPDIR");
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/bench_images.XXXXXX",
             tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    caller_cost(dir, calls > 0 ? calls / 4 + 1 : 1, 1);
    caller_cost(dir, calls > 0 ? calls : 1, 0);
    copy_floor(calls > 0 ? calls : 1);
    index_cost(dir, indexed > 0 ? indexed : 1);
    rm_rf(dir);
    return 0;
}
