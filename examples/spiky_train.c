/*
 * spiky_train.c - a training run with loss spikes from bad batches
 * (issue 23): what `tfboard watch` and the Alerts tab find and trace.
 *
 *   spiky_train --logdir DIR [--name RUN] [--steps N] [--step-ms MS]
 *               [--bad-batch ID ...] [--diverge-at STEP]
 *
 * The loss falls as a real one does (with minibatch noise); the learning
 * rate decays by 10x at 60 % of the steps (must not look like a spike).
 * The data loader serves batches "shard<k>:<offset>" (tfb_step_batch,
 * after the step's loss: the id names the step just logged);
 * some batches are bad (the defaults: three of them, at steps 150, 307
 * and 434 of 600): the loss jumps on them, after fc2's gradient norm,
 * then fc1's, grew in the two steps before; the loss recovers at once. --diverge-at S makes the run blow up
 * from step S instead (gradient norms grow 10x a step, then NaN).
 * --step-ms slows each step down, to watch it live.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tfboard.h"

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static double uniform(void)
{
    rng ^= rng >> 12;
    rng ^= rng << 25;
    rng ^= rng >> 27;
    return ((rng * 2685821657736338717ull) >> 11) * (1.0 / 9007199254740992.0);
}
static double gauss(void)
{
    double u = uniform(), v = uniform();
    return sqrt(-2 * log(u > 1e-300 ? u : 1e-300)) * cos(6.283185307179586 * v);
}

int main(int argc, char **argv)
{
    const char *logdir = NULL, *name = "spiky";
    long steps = 600, step_ms = 0, diverge_at = -1;
    const char *bad[16];
    int n_bad = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--logdir") && v)
            logdir = argv[++i];
        else if (!strcmp(a, "--name") && v)
            name = argv[++i];
        else if (!strcmp(a, "--steps") && v)
            steps = atol(argv[++i]);
        else if (!strcmp(a, "--step-ms") && v)
            step_ms = atol(argv[++i]);
        else if (!strcmp(a, "--diverge-at") && v)
            diverge_at = atol(argv[++i]);
        else if (!strcmp(a, "--bad-batch") && v && n_bad < 16)
            bad[n_bad++] = argv[++i];
        else {
            fprintf(stderr, "usage: spiky_train --logdir DIR [--name RUN] "
                            "[--steps N] [--step-ms MS] [--bad-batch ID ...] "
                            "[--diverge-at STEP]\n");
            return 2;
        }
    }
    if (!logdir) {
        fprintf(stderr, "spiky_train: --logdir is required\n");
        return 2;
    }
    if (n_bad == 0) { /* the defaults: served at steps 150, 300 and 420 */
        bad[n_bad++] = "shard1:4800";
        bad[n_bad++] = "shard2:9600";
        bad[n_bad++] = "shard3:13440";
    }
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/%s", logdir, name);
    tfb_writer *w;
    int rc = tfb_writer_open(&w, dir, NULL);
    if (rc < 0) {
        fprintf(stderr, "spiky_train: %s: %s\n", dir, tfb_strerror(rc));
        return 1;
    }
    struct timespec d = {step_ms / 1000, (step_ms % 1000) * 1000000L};
    double lr = 0.1, grad_scale = 1;
    int bad_in = -1; /* steps until a bad batch reaches the loss */
    for (long s = 1; s <= steps; s++) {
        if (s == steps * 6 / 10)
            lr = 0.01;
        /* The loader: 32 samples a batch, four shards in turn; the bad
         * batches are served at steps 150, 300, 420 (scaled to --steps). */
        char id[64];
        long shard = s % 4, off = (s / 4) * 128;
        snprintf(id, sizeof id, "shard%ld:%ld", shard, off);
        for (int b = 0; b < n_bad; b++) {
            long at = (b == 0 ? 150 : b == 1 ? 300 : 420) * steps / 600 +
                      b * 7;
            if (s == at - 2)
                bad_in = 2; /* instability builds up two steps before */
            if (s == at)
                snprintf(id, sizeof id, "%s", bad[b]);
        }
        double loss = 2.0 * exp(-s / 200.0) + 0.3;
        loss *= 1 + 0.02 * gauss();
        double fc1 = 0.5 * (1 + 0.05 * gauss()), fc2 = 0.8 * (1 + 0.05 * gauss());
        if (bad_in >= 0) {
            /* The bad batch: fc2's gradient first, then the loss. */
            fc2 *= bad_in == 2 ? 40 : 15;
            fc1 *= bad_in == 2 ? 1 : 10;
            if (bad_in == 0)
                loss *= 3.5;
            bad_in--;
        }
        if (diverge_at > 0 && s >= diverge_at) {
            grad_scale *= 10;
            fc2 *= grad_scale * 3;
            fc1 *= grad_scale;
            loss *= grad_scale;
        }
        double global = sqrt(fc1 * fc1 + fc2 * fc2);
        if (diverge_at > 0 && s >= diverge_at + 5)
            loss = global = fc1 = fc2 = NAN;
        tfb_scalar(w, "loss", loss, s);
        /* The batch this step trained on, at the writer's current step:
         * the highest logged so far, this step's (inside tfb_step_begin ..
         * tfb_step_end it would be the open step). */
        tfb_step_batch(w, id);
        tfb_scalar(w, "lr", lr, s);
        tfb_scalar(w, "grad_norm/fc1", fc1, s);
        tfb_scalar(w, "grad_norm/fc2", fc2, s);
        tfb_scalar(w, "grad_norm/global", global, s);
        if (step_ms > 0) {
            nanosleep(&d, NULL);
            if (s % 10 == 0)
                tfb_flush(w);
        }
        if (!isfinite(loss)) {
            fprintf(stderr, "spiky_train: loss is not finite at step %ld\n",
                    s);
            tfb_writer_close_reason(w, "loss is not finite");
            return 1;
        }
    }
    return tfb_writer_close_reason(w, "completed") < 0;
}
