/*
 * gen_embedding.c - writes embeddings with tfb_embedding (issue 31) for
 * the projector's test_projector_writer.py, which reads them back through
 * the server's routes. Also checks the calls tfb_embedding must refuse
 * write nothing at all.
 *
 * usage: gen_embedding RUN_DIR
 *
 *   features/hidden at step 3: 10 x 4 values val(r, c) (below; one NaN,
 *       -0, FLT_MAX and a denormal among them), two label columns with a
 *       header, 5 x 4 gray images img(i, y, x)
 *   plain at step 0: 3 x 2 values (r * 2 + c) / 4, no labels nor images
 *   rgb at step 1: 5 x 2 values, one label column, 3 x 2 RGB images
 * The same call again for features/hidden adds no second config entry.
 * Exit 0 when every call returned what it should; a line on stderr and
 * exit 1 otherwise.
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tfboard.h"

static int failures;

static void expect(int got, int want, const char *what)
{
    if (got != want) {
        fprintf(stderr, "gen_embedding: %s: got %d (%s), want %d\n", what,
                got, tfb_strerror(got), want);
        failures++;
    }
}

/* The test computes the same values (test_projector_writer.py val). */
static float val(int r, int c)
{
    if (r == 2 && c == 1)
        return NAN;
    if (r == 3 && c == 0)
        return -0.0f;
    if (r == 4 && c == 2)
        return FLT_MAX;
    if (r == 5 && c == 3)
        return 1e-40f; /* denormal */
    if (r == 6 && c == 1)
        return 0.1f; /* not exact in binary: %.9g must bring it back */
    return (float)((r * 7 + c * 3) % 11 - 5) / 8.0f;
}

static int exists(const char *run, const char *rel)
{
    char p[4096];
    struct stat st;
    snprintf(p, sizeof p, "%s/%s", run, rel);
    return stat(p, &st) == 0;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: gen_embedding RUN_DIR\n");
        return 2;
    }
    const char *run = argv[1];
    tfb_writer *w;
    int rc = tfb_writer_open(&w, run, NULL);
    if (rc) {
        fprintf(stderr, "gen_embedding: open: %s\n", tfb_strerror(rc));
        return 1;
    }
    enum { R = 10, C = 4, IH = 5, IW = 4 };
    float mat[R * C];
    for (int r = 0; r < R; r++)
        for (int c = 0; c < C; c++)
            mat[r * C + c] = val(r, c);
    static const char *header[] = {"digit", "name"};
    static const char *names[] = {"zero", "one", "two", "three", "four",
                                  "five", "six", "seven", "eight", "nine"};
    const char *labels[R * 2];
    char digits[R][4];
    for (int r = 0; r < R; r++) {
        snprintf(digits[r], sizeof digits[r], "%d", r);
        labels[r * 2] = digits[r];
        labels[r * 2 + 1] = names[r];
    }
    uint8_t imgs[R * IH * IW];
    for (int i = 0; i < R; i++)
        for (int y = 0; y < IH; y++)
            for (int x = 0; x < IW; x++)
                imgs[(i * IH + y) * IW + x] =
                    (uint8_t)(i * 25 + y * 4 + x + 1);

    tfb_embedding_opts o;
    tfb_embedding_opts_init(&o);
    o.labels = labels;
    o.label_columns = 2;
    o.header = header;
    o.images = imgs;
    o.image_height = IH;
    o.image_width = IW;
    o.image_channels = 1;
    expect(tfb_embedding(w, "features/hidden", mat, R, C, 3, &o), 0,
           "features/hidden");
    /* Again: same files, and the config keeps one entry for it. */
    expect(tfb_embedding(w, "features/hidden", mat, R, C, 3, &o), 0,
           "features/hidden again");

    float plain[6];
    for (int i = 0; i < 6; i++)
        plain[i] = (float)i / 4.0f;
    expect(tfb_embedding(w, "plain", plain, 3, 2, 0, NULL), 0, "plain");

    float rgbm[10];
    for (int i = 0; i < 10; i++)
        rgbm[i] = (float)(i % 3);
    static const char *one_col[] = {"a", "b", "c", "d", "e"};
    uint8_t rgb[5 * 3 * 2 * 3];
    for (size_t i = 0; i < sizeof rgb; i++)
        rgb[i] = (uint8_t)(i * 3 + 7);
    tfb_embedding_opts o2;
    tfb_embedding_opts_init(&o2);
    o2.labels = one_col;
    o2.label_columns = 1;
    o2.images = rgb;
    o2.image_height = 3;
    o2.image_width = 2;
    o2.image_channels = 3;
    expect(tfb_embedding(w, "rgb", rgbm, 5, 2, 1, &o2), 0, "rgb");

    /* Refused: nothing is written for these tags. */
    tfb_embedding_opts bad = o;
    const char *tabbed[R * 2];
    memcpy(tabbed, labels, sizeof tabbed);
    tabbed[7] = "tab\there";
    bad.labels = tabbed;
    expect(tfb_embedding(w, "bad_tab", mat, R, C, 0, &bad), TFB_EINVAL,
           "a label with a tab");
    bad = o;
    bad.label_columns = 1; /* a header for one column */
    expect(tfb_embedding(w, "bad_header", mat, R, C, 0, &bad), TFB_EINVAL,
           "a header for one column");
    bad = o;
    bad.header = NULL; /* two columns need their names */
    expect(tfb_embedding(w, "bad_noheader", mat, R, C, 0, &bad), TFB_EINVAL,
           "two columns without a header");
    bad = o;
    bad.image_channels = 2;
    expect(tfb_embedding(w, "bad_channels", mat, R, C, 0, &bad), TFB_EINVAL,
           "2-channel images");
    bad = o;
    bad.image_width = TFB_EMBEDDING_SPRITE_MAX_SIDE / 2; /* 4 a row */
    expect(tfb_embedding(w, "bad_sprite", mat, R, C, 0, &bad), TFB_ETOOBIG,
           "a sprite past its side");
    expect(tfb_embedding(w, "bad_huge", mat, (size_t)1 << 20, (size_t)1 << 9,
                         0, NULL),
           TFB_ETOOBIG, "past TFB_EMBEDDING_MAX_VALUES");
    expect(tfb_embedding(w, "bad_step", mat, R, C, -1, NULL), TFB_EINVAL,
           "a negative step");
    expect(tfb_embedding(w, "", mat, R, C, 0, NULL), TFB_EINVAL,
           "an empty tag");
    expect(tfb_embedding(w, "..", mat, R, C, 7, NULL), TFB_EINVAL,
           "the tag \"..\" (the step's parent folder)");
    expect(tfb_embedding(w, ".", mat, R, C, 7, NULL), TFB_EINVAL,
           "the tag \".\"");
    if (exists(run, "00007") || exists(run, "tensors.tsv")) {
        fprintf(stderr, "gen_embedding: the tag \"..\" or \".\" wrote\n");
        failures++;
    }
    tfb_embedding_opts zero;
    memset(&zero, 0, sizeof zero);
    expect(tfb_embedding(w, "bad_size", mat, R, C, 0, &zero), TFB_EINVAL,
           "opts without size");
    static const char *refused[] = {"bad_tab", "bad_header", "bad_noheader",
                                    "bad_channels", "bad_sprite", "bad_huge",
                                    "bad_step", "bad_size"};
    char rel[64];
    for (size_t i = 0; i < sizeof refused / sizeof *refused; i++) {
        snprintf(rel, sizeof rel, "00000/%s", refused[i]);
        if (exists(run, rel)) {
            fprintf(stderr, "gen_embedding: %s was refused but written\n",
                    refused[i]);
            failures++;
        }
    }
    if (exists(run, "-0001")) {
        fprintf(stderr, "gen_embedding: a folder for step -1\n");
        failures++;
    }
    expect(tfb_writer_close(w), 0, "close");
    return failures ? 1 : 0;
}
