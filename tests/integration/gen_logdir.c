/*
 * gen_logdir - writes test logdirs with libtfboard's writer, for the
 * integration tests and the server benchmark.
 *
 *   gen_logdir basic DIR
 *       DIR/run_a        loss (100 steps, 1/(step+1)), acc (step/100),
 *                        weird (10 steps: NaN at 5, +Inf at 7, -Inf at 8),
 *                        weights histogram at steps 0, 10, 20,
 *                        notes text at steps 0 and 1 (markup and quotes),
 *                        a numerics record (2 NaN, 1 +Inf) at step 3
 *       DIR/sub/run_b    loss (50 steps, 2.0 - step/100)
 *       DIR/traces_only  a file named host.1.trace.sqlite, no events
 *   gen_logdir scalars DIR RUNS TAGS STEPS
 *       RUNS runs run000.. each with TAGS tags tag00/t.. of STEPS steps
 *       (value = sin-like, deterministic), for benchmarks.
 *
 * Prints nothing on success; exits 1 with a message on failure.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tfboard.h"

static int check(int rc, const char *what)
{
    if (rc < 0) {
        fprintf(stderr, "gen_logdir: %s: %s\n", what, tfb_strerror(rc));
        exit(1);
    }
    return rc;
}

static void join(char *out, size_t n, const char *a, const char *b)
{
    snprintf(out, n, "%s/%s", a, b);
}

static int gen_basic(const char *dir)
{
    char path[4096];
    tfb_writer *w;
    join(path, sizeof path, dir, "run_a");
    check(tfb_writer_open(&w, path, NULL), "open run_a");
    const double t0 = 1700000000.0;
    for (int s = 0; s < 100; s++) {
        check(tfb_scalar_at(w, "loss", 1.0 / (s + 1), s, t0 + s * 0.5),
              "loss");
        check(tfb_scalar_at(w, "acc", s / 100.0, s, t0 + s * 0.5), "acc");
    }
    for (int s = 0; s < 10; s++) {
        double v = s;
        if (s == 5)
            v = NAN;
        else if (s == 7)
            v = INFINITY;
        else if (s == 8)
            v = -INFINITY;
        check(tfb_scalar_at(w, "weird", v, s, t0 + s), "weird");
    }
    float vals[1000];
    for (int s = 0; s <= 20; s += 10) {
        for (int i = 0; i < 1000; i++)
            vals[i] = (float)((i - 500) / 100.0 + s);
        check(tfb_histogram(w, "weights", vals, 1000, s), "histogram");
    }
    check(tfb_text(w, "notes", "<img src=x onerror=alert(1)>", 0), "text");
    check(tfb_text(w, "notes", "line one\nline \"two\" & </script>", 1),
          "text");
    float bad[4] = {NAN, NAN, INFINITY, 1.0f};
    check((int)tfb_check_numerics(w, "layer1/grad", bad, 4, 3), "numerics");
    check(tfb_writer_close(w), "close run_a");

    join(path, sizeof path, dir, "sub/run_b");
    check(tfb_writer_open(&w, path, NULL), "open run_b");
    for (int s = 0; s < 50; s++)
        check(tfb_scalar_at(w, "loss", 2.0 - s / 100.0, s, t0 + 1000 + s),
              "loss");
    check(tfb_writer_close(w), "close run_b");

    join(path, sizeof path, dir, "traces_only");
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "%s/host.1.trace.sqlite", path);
    char mk[4200];
    snprintf(mk, sizeof mk, "mkdir -p '%s'", path);
    if (system(mk) != 0)
        return 1;
    FILE *f = fopen(cmd, "wb");
    if (!f)
        return 1;
    fclose(f);
    return 0;
}

static int gen_scalars(const char *dir, int runs, int tags, int steps)
{
    char path[4096], tag[64];
    for (int r = 0; r < runs; r++) {
        snprintf(path, sizeof path, "%s/run%03d", dir, r);
        tfb_writer *w;
        tfb_writer_opts o;
        tfb_writer_opts_init(&o);
        o.queue_bytes = 64 << 20;
        check(tfb_writer_open(&w, path, &o), "open");
        for (int s = 0; s < steps; s++)
            for (int t = 0; t < tags; t++) {
                snprintf(tag, sizeof tag, "tag%02d/t", t);
                double v = sin(s * 0.001 * (t + 1)) + r * 0.01;
                check(tfb_scalar_at(w, tag, v, s, 1700000000.0 + r +
                                                      s * 0.01),
                      "scalar");
            }
        check(tfb_writer_close(w), "close");
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "basic") == 0)
        return gen_basic(argv[2]);
    if (argc == 6 && strcmp(argv[1], "scalars") == 0)
        return gen_scalars(argv[2], atoi(argv[3]), atoi(argv[4]),
                           atoi(argv[5]));
    fprintf(stderr, "usage: gen_logdir basic DIR | scalars DIR RUNS TAGS "
                    "STEPS\n");
    return 2;
}
