/*
 * gen_charts_logdir.c - the logdir of the Scalars multi-tag and HParams
 * browser tests (issue 27, "charts a user would open first" and "HParams
 * that reads true"), written with libtfboard so the values are exact.
 *
 * Usage: gen_charts_logdir OUTDIR
 *   sweep/lr=<lr>   for lr in 1e-05 3e-05 0.0001 0.0003 0.001 0.01 0.1:
 *                   hparams learning_rate = lr (a log-uniform sweep),
 *                   batch_size 32/64/128 (by position), momentum 0.9 (one
 *                   value in every run), optimizer_with_a_long_name "adam",
 *                   weight_decay_regularisation_strength 0.0001*(i+1);
 *                   metrics loss and accuracy. Scalars every 5 steps of
 *                   0..50: loss = L_i (1 + 1/(1 + step)), final L_i in
 *                   0.012 0.015 0.02 0.03 0.05 0.4 40 (spans decades, bunched
 *                   at the low end); accuracy = 0.5 + 0.04 i + step/1000;
 *                   grad/layer_00 .. grad/layer_24 = (k + 1) / 1000 + i/1e4.
 *   sweep/no_bs     as lr=0.001 (i = 4) but WITHOUT batch_size.
 *   sweep/diverged  lr 1.0, batch_size 64: its loss is NaN from step 30.
 *   Every run also writes the custom-scalars layout (category "Training":
 *   chart "loss and accuracy" = [loss, accuracy]; chart "gradients" = the
 *   25 grad/layer_* tags). Wall times 1.7e9 + step.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tfboard.h"

#define NGRAD 25

static int failed;

static void check(int rc, const char *what)
{
    if (rc < 0) {
        fprintf(stderr, "gen_charts_logdir: %s: %s\n", what, tfb_strerror(rc));
        failed = 1;
    }
}

/* Appends a length-delimited protobuf field (length as a varint) at `at`
 * of out (cap bytes); returns the new end, or cap + 1 when it overflows. */
static size_t pb_ld(uint8_t *out, size_t cap, size_t at, int field,
                    const void *p, size_t len)
{
    if (at > cap || cap - at < len + 6)
        return cap + 1;
    out[at++] = (uint8_t)(field << 3 | 2);
    size_t v = len;
    do {
        out[at++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
        v >>= 7;
    } while (v);
    memcpy(out + at, p, len);
    return at + len;
}

/* tensorboard.Chart{title=1, multiline=2{tag=1}} appended as field 2 of a
 * Category. */
static size_t pb_chart(uint8_t *out, size_t cap, size_t at, const char *title,
                       const char *const *tags, int n)
{
    uint8_t ml[1024], ch[1100];
    size_t m = 0, c = 0;
    for (int i = 0; i < n; i++)
        m = pb_ld(ml, sizeof ml, m, 1, tags[i], strlen(tags[i]));
    c = pb_ld(ch, sizeof ch, c, 1, title, strlen(title));
    c = pb_ld(ch, sizeof ch, c, 2, ml, m);
    return pb_ld(out, cap, at, 2, ch, c);
}

static char grad_tags[NGRAD][32];

static void layout(tfb_writer *w)
{
    static const char *const t1[] = {"loss", "accuracy"};
    const char *t2[NGRAD];
    for (int k = 0; k < NGRAD; k++)
        t2[k] = grad_tags[k];
    uint8_t cat[1400], lay[1500];
    size_t c = pb_ld(cat, sizeof cat, 0, 1, "Training", 8);
    c = pb_chart(cat, sizeof cat, c, "loss and accuracy", t1, 2);
    c = pb_chart(cat, sizeof cat, c, "gradients", t2, NGRAD);
    size_t n = pb_ld(lay, sizeof lay, 0, 2, cat, c);
    if (c > sizeof cat || n > sizeof lay) {
        fprintf(stderr, "gen_charts_logdir: layout too big\n");
        failed = 1;
        return;
    }
    check(tfb_custom_scalars_layout(w, lay, n), "layout");
}

static void run(const char *dir, const char *name, int i, double lr,
                int with_bs, long nan_from)
{
    static const double final_loss[] = {0.012, 0.015, 0.02, 0.03,
                                        0.05, 0.4, 40};
    static const double bs[] = {32, 64, 128};
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    tfb_writer_opts o;
    tfb_writer_opts_init(&o);
    tfb_writer *w;
    check(tfb_writer_open(&w, path, &o), "open");
    if (!w)
        return;
    tfb_hparam hp[5];
    int n = 0;
    hp[n++] = (tfb_hparam){.size = sizeof(tfb_hparam), .name = "learning_rate",
                           .type = TFB_HPARAM_NUMBER, .number = lr};
    if (with_bs)
        hp[n++] = (tfb_hparam){.size = sizeof(tfb_hparam), .name = "batch_size",
                               .type = TFB_HPARAM_NUMBER, .number = bs[i % 3]};
    hp[n++] = (tfb_hparam){.size = sizeof(tfb_hparam), .name = "momentum",
                           .type = TFB_HPARAM_NUMBER, .number = 0.9};
    hp[n++] = (tfb_hparam){.size = sizeof(tfb_hparam),
                           .name = "optimizer_with_a_long_name",
                           .type = TFB_HPARAM_STRING, .str = "adam"};
    hp[n++] = (tfb_hparam){.size = sizeof(tfb_hparam),
                           .name = "weight_decay_regularisation_strength",
                           .type = TFB_HPARAM_NUMBER,
                           .number = 0.0001 * (i + 1)};
    const char *metrics[] = {"loss", "accuracy"};
    check(tfb_hparams_with_metrics(w, hp, n, metrics, 2), "hparams");
    layout(w);
    double L = final_loss[i % 7];
    for (int s = 0; s <= 50; s += 5) {
        double wall = 1.7e9 + s;
        double loss = nan_from >= 0 && s >= nan_from ? NAN
                                                     : L * (1 + 1.0 / (1 + s));
        check(tfb_scalar_at(w, "loss", loss, s, wall), "loss");
        check(tfb_scalar_at(w, "accuracy", 0.5 + 0.04 * i + s / 1000.0, s,
                            wall), "accuracy");
        for (int k = 0; k < NGRAD; k++)
            check(tfb_scalar_at(w, grad_tags[k], (k + 1) / 1000.0 + i / 1e4,
                                s, wall), "grad");
    }
    check(tfb_hparams_end(w, TFB_HPARAMS_SUCCESS), "end");
    check(tfb_writer_close(w), "close");
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: gen_charts_logdir OUTDIR\n");
        return 2;
    }
    for (int k = 0; k < NGRAD; k++)
        snprintf(grad_tags[k], sizeof grad_tags[k], "grad/layer_%02d", k);
    static const double lrs[] = {1e-05, 3e-05, 0.0001, 0.0003, 0.001, 0.01, 0.1};
    for (int i = 0; i < 7; i++) {
        char name[64];
        snprintf(name, sizeof name, "sweep/lr=%g", lrs[i]);
        run(argv[1], name, i, lrs[i], 1, -1);
    }
    run(argv[1], "sweep/no_bs", 4, 0.001, 0, -1);
    run(argv[1], "sweep/diverged", 1, 1.0, 1, 30);
    return failed;
}
