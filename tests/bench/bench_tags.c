/*
 * bench_tags.c - loading one run with very many distinct tags (issue 10
 * item 5: tag registration was quadratic; 200 k tags took minutes).
 *
 *   bench_tags [N ...]   tag counts (default 25000 100000 1000000)
 *   TMPDIR               where the logdirs go (default /tmp)
 *
 * For each N: writes one run with N scalar tags of one point each through
 * libtfboard's writer, then times one loader pass into a fresh store (the
 * work `tfboard --logdir` does before the run's tags can be listed) and
 * one tag listing plus N lookups. Prints a table; never fails on a time.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "store/loader.h"
#include "store/store.h"
#include "tfboard.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void tag_name(char *out, size_t n, long i)
{
    static const char *const leaf[4] = {"grad_norm", "weight_norm", "loss",
                                        "lr"};
    snprintf(out, n, "model/layer%07ld/%s", i / 4, leaf[i % 4]);
}

static int check(int rc, const char *what)
{
    if (rc < 0) {
        fprintf(stderr, "bench_tags: %s: %s\n", what, tfb_strerror(rc));
        exit(1);
    }
    return rc;
}

static void rm_rf(const char *dir)
{
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "bench_tags: could not remove %s\n", dir);
}

static void one(long n)
{
    const char *tmp = getenv("TMPDIR");
    char dir[1024], run[1100], tag[128];
    snprintf(dir, sizeof dir, "%s/bench_tags.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        exit(1);
    }
    snprintf(run, sizeof run, "%s/run", dir);

    double t0 = now_s();
    tfb_writer_opts o;
    tfb_writer_opts_init(&o);
    o.queue_bytes = 32 << 20;
    tfb_writer *w;
    check(tfb_writer_open(&w, run, &o), "open");
    for (long i = 0; i < n; i++) {
        tag_name(tag, sizeof tag, i);
        check(tfb_scalar_at(w, tag, (double)i, i, 1.7e9 + (double)i), "scalar");
    }
    check(tfb_writer_close(w), "close");
    double t_gen = now_s() - t0;

    tfb_store *st;
    check(tfb_store_create(&st, dir), "store");
    tfb_loader *l;
    tfb_loader_opts lo = {0, 1, NULL};
    check(tfb_loader_create(&l, st, &lo), "loader");
    t0 = now_s();
    check(tfb_loader_pass(l), "pass");
    double t_load = now_s() - t0;
    tfb_load_progress p;
    tfb_store_progress(st, &p);

    t0 = now_s();
    tfb_run *r = tfb_store_find_run(st, "run");
    tfb_series **v = NULL;
    size_t ns = 0;
    if (!r || tfb_run_series(r, TFB_SERIES_SCALAR, &v, &ns) < 0 ||
        ns != (size_t)n) {
        fprintf(stderr, "bench_tags: %zu of %ld tags loaded\n", ns, n);
        exit(1);
    }
    long found = 0;
    for (long i = 0; i < n; i++) {
        tag_name(tag, sizeof tag, i);
        found += tfb_run_find_series(r, TFB_SERIES_SCALAR, tag) == v[i];
    }
    double t_find = now_s() - t0;
    free(v);
    if (found != n) {
        fprintf(stderr, "bench_tags: %ld of %ld tags found\n", found, n);
        exit(1);
    }
    printf("%9ld tags  %7.1f MB  write %6.2f s  load %8.3f s  "
           "(%6.2f us/tag)  list+find all %6.3f s\n",
           n, (double)p.bytes_total / 1e6, t_gen, t_load,
           t_load * 1e6 / (double)n, t_find);
    fflush(stdout);
    tfb_loader_stop(l);
    tfb_store_destroy(st);
    rm_rf(dir);
}

int main(int argc, char **argv)
{
    static const long defaults[] = {25000, 100000, 1000000};
    printf("bench_tags: one run, N distinct scalar tags, one point each\n");
    if (argc > 1) {
        for (int i = 1; i < argc; i++)
            one(atol(argv[i]));
    } else {
        for (size_t i = 0; i < sizeof defaults / sizeof *defaults; i++)
            one(defaults[i]);
    }
    return 0;
}
