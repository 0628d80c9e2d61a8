/*
 * bench_collector.c - libtfboard's writer and reader against DESIGN.md's
 * targets, and against the fprintf logging C training code does by hand.
 * Prints a table; never fails on a time.
 *
 *   TFB_BENCH_MB   size of the reader benchmark's file (default 1024)
 *   TMPDIR         where the files go (default /tmp)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "collector/histogram.h"
#include "tfboard.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_double);
    return v[n / 2];
}

static char g_dir[512];

/* Median ns per call over batches of 1000 calls, measured in ROUNDS
 * rounds. On a shared VM other guests steal whole time slices (up to 50 %
 * steal seen here), which only ever adds time: the lowest round median is
 * the cost itself, the highest shows the interference. */
#define ROUNDS 7
typedef struct spread {
    double lo, hi;
} spread;

static spread bench_scalar_ns(void)
{
    spread r = {1e30, 0};
    char run[600];
    snprintf(run, sizeof run, "%s/scalar", g_dir);
    tfb_writer *w;
    if (tfb_writer_open(&w, run, NULL))
        return r;
    enum { BATCHES = 300, PER = 1000 };
    double *t = malloc(BATCHES * sizeof *t);
    int64_t step = 0;
    for (int round = 0; round < ROUNDS; round++) {
        for (int b = 0; b < BATCHES; b++) {
            double t0 = now_s();
            for (int i = 0; i < PER; i++, step++)
                tfb_scalar(w, "train/loss", 1.0 / (double)(step + 1), step);
            t[b] = (now_s() - t0) / PER * 1e9;
        }
        double m = median(t, BATCHES);
        r.lo = m < r.lo ? m : r.lo;
        r.hi = m > r.hi ? m : r.hi;
    }
    free(t);
    tfb_writer_close(w);
    return r;
}

static spread bench_fprintf_ns(void)
{
    spread r = {1e30, 0};
    char path[600];
    snprintf(path, sizeof path, "%s/fprintf.log", g_dir);
    FILE *f = fopen(path, "w");
    if (!f)
        return r;
    enum { BATCHES = 300, PER = 1000 };
    double *t = malloc(BATCHES * sizeof *t);
    long step = 0;
    for (int round = 0; round < ROUNDS; round++) {
        for (int b = 0; b < BATCHES; b++) {
            double t0 = now_s();
            for (int i = 0; i < PER; i++, step++)
                fprintf(f, "step %ld loss %f\n", step, 1.0 / (double)(step + 1));
            t[b] = (now_s() - t0) / PER * 1e9;
        }
        double m = median(t, BATCHES);
        r.lo = m < r.lo ? m : r.lo;
        r.hi = m > r.hi ? m : r.hi;
    }
    free(t);
    fclose(f);
    return r;
}

static double bench_sustained(long n, double *mbps)
{
    char run[600];
    snprintf(run, sizeof run, "%s/sustained", g_dir);
    tfb_writer *w;
    if (tfb_writer_open(&w, run, NULL))
        return -1;
    double t0 = now_s();
    for (long s = 0; s < n; s++)
        tfb_scalar(w, "train/loss", 1.0 / (double)(s + 1), s);
    tfb_flush(w);
    double dt = now_s() - t0;
    tfb_writer_stats st;
    tfb_writer_stats_init(&st);
    tfb_writer_get_stats(w, &st);
    *mbps = (double)st.bytes_written / dt / 1e6;
    tfb_writer_close(w);
    return (double)n / dt;
}

static double bench_histogram_ms(double *build_ms)
{
    enum { N = 1000000, REPS = 30 };
    float *v = malloc(N * sizeof *v);
    unsigned s = 1;
    for (int i = 0; i < N; i++) {
        s = s * 1103515245u + 12345u;
        v[i] = ((float)(s >> 8) / 16777216.0f - 0.5f) * 4.0f;
    }
    char run[600];
    snprintf(run, sizeof run, "%s/histo", g_dir);
    tfb_writer *w;
    if (tfb_writer_open(&w, run, NULL))
        return -1;
    double t[REPS], tb[REPS];
    /* The fastest repetition: interference only adds (see ROUNDS). */
    for (int r = 0; r < REPS; r++) {
        double t0 = now_s();
        tfb_histogram(w, "weights", v, N, r);
        t[r] = (now_s() - t0) * 1e3;
        tfb_histo h;
        t0 = now_s();
        tfb_histo_build_f32(&h, v, N);
        tb[r] = (now_s() - t0) * 1e3;
        tfb_histo_free(&h);
    }
    tfb_writer_close(w);
    free(v);
    qsort(tb, REPS, sizeof *tb, cmp_double);
    qsort(t, REPS, sizeof *t, cmp_double);
    *build_ms = tb[0];
    return t[0];
}

/* Writes a scalar-heavy file of about mb megabytes (50 tags, like a real
 * run), then reads it twice (the second from the page cache). */
static void bench_reader(long mb, double *mbps, double *evps, double *sz_mb)
{
    char run[600];
    snprintf(run, sizeof run, "%s/reader", g_dir);
    tfb_writer *w;
    if (tfb_writer_open(&w, run, NULL))
        return;
    char tags[50][32];
    for (int i = 0; i < 50; i++)
        snprintf(tags[i], sizeof tags[i], "group%d/metric_%d", i % 5, i);
    tfb_writer_stats st;
    tfb_writer_stats_init(&st);
    for (int64_t s = 0;; s++) {
        for (int i = 0; i < 50; i++)
            tfb_scalar(w, tags[i], (double)s * 0.001 + i, s);
        if (s % 1000 == 0) {
            tfb_writer_get_stats(w, &st);
            if (st.bytes_written + 8u * 1024 * 1024 >= (uint64_t)mb << 20)
                break;
        }
    }
    char *path = strdup(tfb_writer_path(w));
    tfb_writer_close(w);
    struct stat fs;
    stat(path, &fs);
    *sz_mb = (double)fs.st_size / 1e6;
    /* The first pass warms the page cache; the best of the others counts. */
    *mbps = *evps = 0;
    for (int pass = 0; pass < 4; pass++) {
        tfb_reader *r;
        if (tfb_reader_open(&r, path))
            break;
        tfb_event ev;
        long events = 0;
        double sum = 0;
        double t0 = now_s();
        while (tfb_reader_next(r, &ev) == 1) {
            events++;
            if (ev.kind != TFB_EVENT_SUMMARY)
                continue;
            size_t pos = 0;
            tfb_value v;
            while (tfb_summary_next(ev.summary, ev.summary_len, &pos, &v) == 1)
                sum += v.scalar;
        }
        double dt = now_s() - t0;
        tfb_reader_close(r);
        if (pass > 0 && (double)fs.st_size / dt / 1e6 > *mbps) {
            *mbps = (double)fs.st_size / dt / 1e6;
            *evps = (double)events / dt;
        }
        if (sum == 42.4242)
            printf(" ");
    }
    unlink(path);
    free(path);
}

int main(void)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(g_dir, sizeof g_dir, "%s/tfb-bench.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(g_dir)) {
        perror("mkdtemp");
        return 1;
    }
    const char *mbs = getenv("TFB_BENCH_MB");
    long mb = mbs ? atol(mbs) : 1024;

    spread scalar_ns = bench_scalar_ns();
    spread fprintf_ns = bench_fprintf_ns();
    double mbps_w = 0;
    double sustained = bench_sustained(20000000, &mbps_w);
    double build_ms = 0;
    double histo_ms = bench_histogram_ms(&build_ms);
    double rmbps = 0, revps = 0, rsize = 0;
    bench_reader(mb, &rmbps, &revps, &rsize);

    printf("\nlibtfboard collector benchmarks (one calling thread)\n");
    printf("%-44s %14s %16s\n", "what", "measured", "target");
    printf("%-44s %11.1f ns %16s   (rounds up to %.1f)\n",
           "tfb_scalar on the calling thread (median)", scalar_ns.lo,
           "<= 50 ns", scalar_ns.hi);
    printf("%-44s %11.1f ns %16s   (rounds up to %.1f)\n",
           "fprintf(step, loss) to a file (median)", fprintf_ns.lo,
           "(baseline)", fprintf_ns.hi);
    printf("%-44s %12.2fx %16s\n", "tfb_scalar cost / fprintf cost",
           scalar_ns.lo / fprintf_ns.lo, "<= 0.5x");
    printf("%-44s %10.2f M/s %16s\n", "sustained scalars into the file",
           sustained / 1e6, ">= 5 M/s");
    printf("%-44s %9.0f MB/s %16s\n", "  (bytes to disk)", mbps_w, "");
    printf("%-44s %11.2f ms %16s\n", "tfb_histogram of 1 M floats (fastest of 30)",
           histo_ms, "<= 2 ms");
    printf("%-44s %11.2f ms %16s\n", "  of which building the buckets",
           build_ms, "");
    printf("%-44s %9.0f MB/s %16s\n", "reader, page cache (best of 3 passes)", rmbps, ">= 1000 MB/s");
    printf("%-44s %10.2f M/s %16s\n", "reader events/s", revps / 1e6, ">= 10 M/s");
    printf("%-44s %11.0f MB\n", "  (file size)", rsize);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", g_dir);
    return 0;
}
