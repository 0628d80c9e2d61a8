/*
 * gen_images_logdir.c - the Images tab's browser test logdir, written with
 * libtfboard's tfb_image: runs alpha and beta, each with
 *   samples/gradient  48x64 RGB, steps 0, 5, 10, ..., 45 (colour by step)
 *   masks/small       8x8 gray (for the pixelated toggle), same steps
 *   many/tNNN         N_MANY tags of one small image each (lazy loading)
 * and in run alpha one damaged PNG (cut short) under broken/cut; and a PR
 * curve pr/class0 (tfb_pr_curve, 11 thresholds) at steps 0, 10, 20 whose
 * predictions get better with the step (beta better than alpha).
 *
 *   gen_images_logdir DIR [N_MANY]   (default 150)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tfboard.h"

static void check(int rc, const char *what)
{
    if (rc < 0) {
        fprintf(stderr, "gen_images_logdir: %s: %s\n", what,
                tfb_strerror(rc));
        exit(1);
    }
}

static void run(const char *dir, const char *name, int shade, int n_many)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    tfb_writer *w;
    check(tfb_writer_open(&w, path, NULL), "open");
    static uint8_t px[48 * 64 * 3], mask[8 * 8];
    for (int step = 0; step < 50; step += 5) {
        for (int y = 0; y < 48; y++)
            for (int x = 0; x < 64; x++) {
                uint8_t *p = px + (y * 64 + x) * 3;
                p[0] = (uint8_t)(x * 4);
                p[1] = (uint8_t)(y * 5);
                p[2] = (uint8_t)(step * 5 + shade);
            }
        check(tfb_image(w, "samples/gradient", px, 48, 64, 3, step), "rgb");
        for (int i = 0; i < 64; i++)
            mask[i] = (uint8_t)(((i + i / 8 + step / 5) & 1) ? 255 : 0);
        check(tfb_image(w, "masks/small", mask, 8, 8, 1, step), "mask");
    }
    for (int t = 0; t < n_many; t++) {
        char tag[32];
        snprintf(tag, sizeof tag, "many/t%03d", t);
        for (int i = 0; i < 16 * 16 * 3; i++)
            px[i] = (uint8_t)(t * 7 + i + shade);
        check(tfb_image(w, tag, px, 16, 16, 3, 0), "many");
    }
    float labels[200], pred[200];
    for (int step = 0; step <= 20; step += 10) {
        uint32_t seed = 7u + (uint32_t)shade;
        for (int i = 0; i < 200; i++) {
            seed = seed * 1103515245u + 12345u;
            float noise = (float)((seed >> 8) & 0xffff) / 65536.0f;
            labels[i] = (float)(i % 2);
            float sep = 0.1f + 0.02f * (float)step + (shade ? 0.2f : 0.0f);
            float p = noise * (1.0f - sep) + (i % 2 ? sep : 0.0f);
            pred[i] = p > 1 ? 1 : p;
        }
        check(tfb_pr_curve(w, "pr/class0", labels, pred, 200, 11, step),
              "pr");
    }
    if (shade == 0) {
        /* A PNG cut short: the writer takes it (its header reads), the
         * server refuses to serve it and the card says why. */
        check(tfb_flush(w), "flush");
        static const uint8_t cut[] = {
            0x89, 'P', 'N', 'G', 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 'I',
            'H', 'D', 'R', 0, 0, 0, 4, 0, 0, 0, 4, 8, 2, 0, 0, 0, 0x26, 0x93,
            0x09, 0x29, 0, 0, 0, 20, 'I', 'D', 'A', 'T', 0x78, 0x9c};
        check(tfb_image_encoded(w, "broken/cut", cut, sizeof cut, 0), "cut");
    }
    check(tfb_writer_close(w), "close");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: gen_images_logdir DIR [N_MANY]\n");
        return 2;
    }
    int n_many = argc > 2 ? atoi(argv[2]) : 150;
    run(argv[1], "alpha", 0, n_many);
    run(argv[1], "beta", 120, n_many);
    return 0;
}
