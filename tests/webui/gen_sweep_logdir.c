/*
 * gen_sweep_logdir.c - a hyperparameter sweep for the many-runs browser
 * test and benchmark (issue 18), written with libtfboard.
 *
 * Usage: gen_sweep_logdir OUTDIR [RUNS [STEPS]]   (default 2000 runs, 100 steps)
 *   Runs trial-00000 .. trial-NNNNN, each with hparams
 *     lr        1e-5 .. 1e-1, log-uniform (spans four decades: a log axis)
 *     batch     32, 64, 128, 256 or 512
 *     dropout   0 .. 0.5, uniform
 *     optimizer "adam", "sgd" or "rmsprop"
 *   and metric tag loss/val; scalars at steps 0..STEPS-1
 *     loss/train  floor + (2 - floor) * exp(-step * rate) + noise, floor
 *                 and rate from the hparams (a low lr learns slowly, a high
 *                 one plateaus high), every step
 *     loss/val    loss/train + 0.05, every 10 steps
 *     accuracy    1 - loss/val / 2.5, every 10 steps
 *     loss/aux    0.5 + 0.5 exp(-step / 20) + noise, every 10 steps; at
 *                 step 0 every 9th run logs a spike up (1,000 .. 12,000)
 *                 and every 13th one down (-2,000): the first band view
 *                 of a real sweep (issue 27), where p5/p95 at step 0 are
 *                 thousands while the median moves between 1 and 0.5
 *   Every 97th run diverges: loss/train is NaN from step STEPS/2 on.
 *   Values are a deterministic function of the run index (no rand()), so
 *   every run of the generator writes the same logdir. Wall time
 *   1.7e9 + run + step.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "tfboard.h"

static int failed;

static void check(int rc, const char *what)
{
    if (rc < 0 && !failed) {
        fprintf(stderr, "gen_sweep_logdir: %s: %s\n", what, tfb_strerror(rc));
        failed = 1;
    }
}

/* A uniform number in [0, 1) from (run, salt): splitmix64. */
static double unit(unsigned long long run, unsigned long long salt)
{
    unsigned long long z = run * 0x9e3779b97f4a7c15ULL + salt * 0xbf58476d1ce4e5b9ULL + 1;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return (double)(z >> 11) / 9007199254740992.0;
}

static void run(const char *dir, int i, int steps)
{
    static const char *opts[] = {"adam", "sgd", "rmsprop"};
    char path[4096];
    snprintf(path, sizeof path, "%s/trial-%05d", dir, i);
    tfb_writer_opts o;
    tfb_writer_opts_init(&o);
    /* A run is about 12 KB: a small queue spares thousands of 8 MiB ones
     * (page faults, and MALLOC_PERTURB_ filling each under meson test). */
    o.queue_bytes = 64 * 1024;
    tfb_writer *w;
    check(tfb_writer_open(&w, path, &o), "open");
    if (!w)
        return;
    double lr = pow(10, -5 + 4 * unit(i, 1));
    double batch = 32 << (int)(unit(i, 2) * 5);
    double dropout = 0.5 * unit(i, 3);
    const char *opt = opts[(int)(unit(i, 4) * 3)];
    tfb_hparam hp[] = {
        {.size = sizeof(tfb_hparam), .name = "lr", .type = TFB_HPARAM_NUMBER, .number = lr},
        {.size = sizeof(tfb_hparam), .name = "batch", .type = TFB_HPARAM_NUMBER, .number = batch},
        {.size = sizeof(tfb_hparam), .name = "dropout", .type = TFB_HPARAM_NUMBER, .number = dropout},
        {.size = sizeof(tfb_hparam), .name = "optimizer", .type = TFB_HPARAM_STRING, .str = opt},
    };
    const char *metrics[] = {"loss/val"};
    check(tfb_hparams_with_metrics(w, hp, 4, metrics, 1), "hparams");
    /* Best near lr = 1e-3: the floor grows with the distance in decades. */
    double d = log10(lr) + 3;
    double floor_ = 0.15 + 0.12 * d * d + 0.2 * dropout + (opt[0] == 's' ? 0.1 : 0);
    double rate = 3.0 * lr / (lr + 1e-3) / steps * 8;
    int diverge = i % 97 == 0;
    for (int s = 0; s < steps; s++) {
        double noise = 0.04 * (unit(i, 100 + (unsigned long long)s) - 0.5);
        double v = floor_ + (2 - floor_) * exp(-s * rate) + noise;
        double train = diverge && s >= steps / 2 ? NAN : v;
        double wall = 1.7e9 + i + s;
        check(tfb_scalar_at(w, "loss/train", train, s, wall), "loss/train");
        if (s % 10 == 0) {
            check(tfb_scalar_at(w, "loss/val", v + 0.05, s, wall), "loss/val");
            check(tfb_scalar_at(w, "accuracy", 1 - (v + 0.05) / 2.5, s, wall),
                  "accuracy");
            double aux = 0.5 + 0.5 * exp(-s / 20.0) + noise;
            if (s == 0 && i % 9 == 0)
                aux = 1000 + 11000 * unit(i, 5);
            else if (s == 0 && i % 13 == 0)
                aux = -2000;
            check(tfb_scalar_at(w, "loss/aux", aux, s, wall), "loss/aux");
        }
    }
    check(tfb_hparams_end(w, TFB_HPARAMS_SUCCESS), "end");
    check(tfb_writer_close(w), "close");
}

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 4) {
        fprintf(stderr, "usage: gen_sweep_logdir OUTDIR [RUNS [STEPS]]\n");
        return 2;
    }
    int runs = argc > 2 ? atoi(argv[2]) : 2000;
    int steps = argc > 3 ? atoi(argv[3]) : 100;
    if (runs < 1 || runs > 100000 || steps < 2 || steps > 1000000) {
        fprintf(stderr, "gen_sweep_logdir: RUNS 1..100000, STEPS 2..1000000\n");
        return 2;
    }
    for (int i = 0; i < runs && !failed; i++)
        run(argv[1], i, steps);
    return failed;
}
