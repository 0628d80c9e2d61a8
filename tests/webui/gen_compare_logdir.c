/*
 * gen_compare_logdir.c - the logdir of the compare-runs browser test
 * (issue 12), written with libtfboard so the expected values are exact.
 *
 * Usage: gen_compare_logdir OUTDIR
 *   lr=0.1,seed=1   hparams lr 0.1, seed 1, act "relu", metric loss/val;
 *                   loss/train at steps 0,10,..,100 = 1 + step/100;
 *                   loss/val every 20 steps from the first
 *   lr=0.1,seed=2   the same, seed 2, loss/train at 5,15,..,95 = 2 +
 *                   step/100, NaN at step 45
 *   lr=0.01,seed=1  lr 0.01, act "tanh", loss/train = 10 + step/100
 *   lr=0.01,seed=2  lr 0.01, act "tanh", loss/train = 12 + step/100
 * Status success for every run. Wall times 1.7e9 + step.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tfboard.h"

static int failed;

static void check(int rc, const char *what)
{
    if (rc < 0) {
        fprintf(stderr, "gen_compare_logdir: %s: %s\n", what, tfb_strerror(rc));
        failed = 1;
    }
}

static void run(const char *dir, double lr, int seed, const char *act,
                int first, double base, long nan_step)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/lr=%g,seed=%d", dir, lr, seed);
    tfb_writer_opts o;
    tfb_writer_opts_init(&o);
    tfb_writer *w;
    check(tfb_writer_open(&w, path, &o), "open");
    if (!w)
        return;
    tfb_hparam hp[] = {
        {.size = sizeof(tfb_hparam), .name = "lr", .type = TFB_HPARAM_NUMBER, .number = lr},
        {.size = sizeof(tfb_hparam), .name = "seed", .type = TFB_HPARAM_NUMBER, .number = seed},
        {.size = sizeof(tfb_hparam), .name = "act", .type = TFB_HPARAM_STRING, .str = act},
    };
    const char *metrics[] = {"loss/val"};
    check(tfb_hparams_with_metrics(w, hp, 3, metrics, 1), "hparams");
    for (int s = first; s <= 100; s += 10) {
        double v = s == nan_step ? NAN : base + s / 100.0;
        check(tfb_scalar_at(w, "loss/train", v, s, 1.7e9 + s), "train");
        if ((s - first) % 20 == 0)
            check(tfb_scalar_at(w, "loss/val", base + 0.5 + s / 200.0, s,
                                1.7e9 + s), "val");
    }
    check(tfb_hparams_end(w, TFB_HPARAMS_SUCCESS), "end");
    check(tfb_writer_close(w), "close");
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: gen_compare_logdir OUTDIR\n");
        return 2;
    }
    run(argv[1], 0.1, 1, "relu", 0, 1, -1);
    run(argv[1], 0.1, 2, "relu", 5, 2, 45);
    run(argv[1], 0.01, 1, "tanh", 0, 10, -1);
    run(argv[1], 0.01, 2, "tanh", 0, 12, -1);
    return failed;
}
