/*
 * test_media_index.c - the run's image index: images written with
 * tfb_image / tfb_image_encoded, loaded by the real loader, are listed by
 * tag and sample, read back byte for byte with tfb_media_read; a file
 * replaced under the loader resets the index; tfb_media_check refuses what
 * must not be served; tfb_image's limits; tfb_audio's clips (WAV) and
 * limits.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "store/loader.h"
#include "store/media_index.h"
#include "store/store.h"
#include "test_util.h"

static double tfb_now_wall_for_tests(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* A valid 1x1 gray PNG. */
static const uint8_t png1[] = {
    0x89, 'P', 'N', 'G', 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 'I', 'H', 'D',
    'R', 0, 0, 0, 1, 0, 0, 0, 1, 8, 0, 0, 0, 0, 0x3a, 0x7e, 0x9b, 0x55, 0, 0,
    0, 10, 'I', 'D', 'A', 'T', 0x78, 0x9c, 0x63, 0x68, 0, 0, 0, 0x82, 0,
    0x81, 0x77, 0xcd, 0x72, 0xb6, 0, 0, 0, 0, 'I', 'E', 'N', 'D', 0xae, 0x42,
    0x60, 0x82};

static tfb_store *load(const char *logdir)
{
    tfb_store *s;
    assert_int_equal(tfb_store_create(&s, logdir), 0);
    tfb_loader *l;
    tfb_loader_opts lo = {0, 1, NULL};
    assert_int_equal(tfb_loader_create(&l, s, &lo), 0);
    assert_int_equal(tfb_loader_pass(l), 0);
    tfb_loader_stop(l);
    return s;
}

static void index_and_read_back(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp();
    char run[600];
    snprintf(run, sizeof run, "%s/r", dir);
    tfb_writer *w;
    assert_int_equal(tfb_writer_open(&w, run, NULL), 0);
    uint8_t px[4 * 5 * 3];
    for (size_t i = 0; i < sizeof px; i++)
        px[i] = (uint8_t)i;
    for (int s = 0; s < 3; s++)
        assert_int_equal(tfb_image(w, "gen", px, 4, 5, 3, s * 10), 0);
    assert_int_equal(tfb_image_encoded(w, "given", png1, sizeof png1, 7), 0);
    assert_int_equal(tfb_writer_close(w), 0);

    tfb_store *st = load(dir);
    tfb_run *r = tfb_store_find_run(st, "r");
    assert_non_null(r);
    tfb_media_index *ix = tfb_run_media(r);
    assert_int_equal(tfb_media_count(ix, TFB_MEDIA_IMAGE), 4);
    tfb_media_tag_info *t;
    size_t nt;
    assert_int_equal(tfb_media_tags(ix, TFB_MEDIA_IMAGE, &t, &nt), 0);
    assert_int_equal(nt, 2);
    /* tfb_image_encoded's record may reach the file before the encoded
     * ones logged earlier (see tfboard.h): tags in either order. */
    int g = strcmp(t[0].tag, "gen") == 0 ? 0 : 1;
    assert_string_equal(t[g].tag, "gen");
    assert_int_equal(t[g].count, 3);
    assert_int_equal(t[g].samples, 1);
    assert_int_equal(t[g].last.step, 20);
    assert_string_equal(t[1 - g].tag, "given");
    tfb_media_tag_infos_free(t, nt);

    tfb_media_entry *e;
    size_t n;
    assert_int_equal(tfb_media_entries(ix, TFB_MEDIA_IMAGE, "gen", 0, &e, &n), 0);
    assert_int_equal(n, 3);
    assert_int_equal(e[1].step, 10);
    assert_int_equal(e[1].width, 5);
    assert_int_equal(e[1].height, 4);
    uint8_t *bytes;
    size_t len;
    assert_int_equal(tfb_media_read(ix, &e[1], &bytes, &len), 0);
    assert_int_equal(len, e[1].len);
    char why[200];
    assert_string_equal(tfb_media_check(bytes, len, why, sizeof why),
                        "image/png");
    free(bytes);
    free(e);
    tfb_media_entry one;
    assert_int_equal(tfb_media_find(ix, TFB_MEDIA_IMAGE, "given", 0, 0, &one), 0);
    assert_int_equal(tfb_media_read(ix, &one, &bytes, &len), 0);
    assert_int_equal(len, sizeof png1);
    assert_memory_equal(bytes, png1, len);
    free(bytes);
    assert_int_equal(tfb_media_find(ix, TFB_MEDIA_IMAGE, "given", 0, 1, &one), TFB_ENOENT);
    assert_int_equal(tfb_media_find(ix, TFB_MEDIA_IMAGE, "nope", 0, 0, &one), TFB_ENOENT);
    assert_int_equal(tfb_media_entries(ix, TFB_MEDIA_IMAGE, "nope", 0, &e, &n), TFB_ENOENT);

    /* An entry whose step does not match its record (a replaced file) is
     * refused, never answered with other bytes. */
    tfb_media_entry bad = one;
    bad.step = 8;
    assert_int_equal(tfb_media_read(ix, &bad, &bytes, &len), TFB_ECORRUPT);
    bad = one;
    bad.record_off += 1;
    assert_true(tfb_media_read(ix, &bad, &bytes, &len) < 0);

    /* A run reset (file replaced) forgets the images, keeps the tags. */
    tfb_run_reset(r);
    assert_int_equal(tfb_media_count(ix, TFB_MEDIA_IMAGE), 0);
    assert_int_equal(tfb_media_entries(ix, TFB_MEDIA_IMAGE, "gen", -1, &e, &n), 0);
    assert_int_equal(n, 0);
    free(e);
    tfb_store_destroy(st);
    tu_rmtree(dir);
    free(dir);
}

static void check_refuses(void **state)
{
    (void)state;
    char why[200];
    assert_null(tfb_media_check((const uint8_t *)"<html>", 6, why,
                                sizeof why));
    assert_non_null(strstr(why, "not a PNG"));
    assert_null(tfb_media_check(png1, 40, why, sizeof why));
    assert_non_null(strstr(why, "cut short"));
    uint8_t big[sizeof png1];
    memcpy(big, png1, sizeof png1);
    /* 100,000 x 100,000 */
    big[16] = 0, big[17] = 0x01, big[18] = 0x86, big[19] = 0xa0;
    memcpy(big + 20, big + 16, 4);
    assert_null(tfb_media_check(big, sizeof big, why, sizeof why));
    assert_non_null(strstr(why, "100000 x 100000"));
    static const uint8_t gif[] = {'G', 'I', 'F', '8', '9', 'a', 2, 0, 3, 0};
    assert_string_equal(tfb_media_check(gif, sizeof gif, why, sizeof why),
                        "image/gif");
    static const uint8_t jpg[] = {0xff, 0xd8, 0xff, 0xe0};
    assert_string_equal(tfb_media_sniff(jpg, 4), "image/jpeg");
    assert_null(tfb_media_sniff(jpg, 2));
}

static void writer_limits(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp();
    tfb_writer *w;
    assert_int_equal(tfb_writer_open(&w, dir, NULL), 0);
    uint8_t px[12] = {0};
    assert_int_equal(tfb_image(w, "t", px, 2, 2, 2, 0), TFB_EINVAL);
    assert_int_equal(tfb_image(w, "", px, 2, 2, 3, 0), TFB_EINVAL);
    assert_int_equal(tfb_image(w, "t", NULL, 2, 2, 3, 0), TFB_EINVAL);
    assert_int_equal(tfb_image(w, "t", px, 0, 2, 3, 0), TFB_EINVAL);
    assert_int_equal(tfb_image(w, "t", px, 70000, 1, 1, 0), TFB_ETOOBIG);
    assert_int_equal(tfb_image(w, "t", px, 10000, 10000, 1, 0), TFB_ETOOBIG);
    assert_int_equal(tfb_image_encoded(w, "t", "GIF89a", 6, 0), TFB_EINVAL);
    assert_int_equal(tfb_image(w, "t", px, 2, 2, 3, 0), 0);
    assert_int_equal(tfb_flush(w), 0);
    tfb_writer_stats ws;
    tfb_writer_stats_init(&ws);
    assert_int_equal(tfb_writer_get_stats(w, &ws), 0);
    assert_int_equal(ws.records_dropped, 0);
    assert_int_equal(tfb_writer_close(w), 0);
    tu_rmtree(dir);
    free(dir);
}

/* The _at variants put the given wall time on the record (the index keeps
 * it); the plain calls the time of the call. */
static void wall_time_variants(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp();
    char run[600];
    snprintf(run, sizeof run, "%s/r", dir);
    tfb_writer *w;
    assert_int_equal(tfb_writer_open(&w, run, NULL), 0);
    uint8_t px[2 * 3 * 3] = {0};
    float lab[4] = {0, 1, 1, 0}, pred[4] = {0.1f, 0.9f, 0.6f, 0.4f};
    double wt[4] = {1, 2, 3, 4};
    double t0 = tfb_now_wall_for_tests();
    assert_int_equal(tfb_image_at(w, "px", px, 2, 3, 3, 1, 1500000000.5), 0);
    assert_int_equal(tfb_image_encoded_at(w, "enc", png1, sizeof png1, 2,
                                          1500000001.25), 0);
    assert_int_equal(tfb_image(w, "now", px, 2, 3, 3, 3), 0);
    assert_int_equal(tfb_pr_curve_at(w, "pr", lab, pred, wt, 4, 5, 4,
                                     1500000002.0), 0);
    assert_int_equal(tfb_pr_curve_at(w, "pr", lab, pred, NULL, 4, 5, 5,
                                     1500000003.0), 0);
    assert_int_equal(tfb_pr_curve_at(w, "", lab, pred, NULL, 4, 5, 5, 0),
                     TFB_EINVAL);
    assert_int_equal(tfb_image_at(w, "px", px, 2, 3, 2, 1, 0), TFB_EINVAL);
    assert_int_equal(tfb_writer_close(w), 0);
    double t1 = tfb_now_wall_for_tests();

    tfb_store *st = load(dir);
    tfb_media_index *ix = tfb_run_media(tfb_store_find_run(st, "r"));
    tfb_media_entry e;
    assert_int_equal(tfb_media_find(ix, TFB_MEDIA_IMAGE, "px", 0, 0, &e), 0);
    assert_true(e.step == 1 && e.wall == 1500000000.5);
    assert_int_equal(tfb_media_find(ix, TFB_MEDIA_IMAGE, "enc", 0, 0, &e), 0);
    assert_true(e.step == 2 && e.wall == 1500000001.25);
    assert_int_equal(tfb_media_find(ix, TFB_MEDIA_IMAGE, "now", 0, 0, &e), 0);
    assert_true(e.wall >= t0 && e.wall <= t1);
    assert_int_equal(tfb_media_find(ix, TFB_MEDIA_PR_CURVE, "pr", 0, 0, &e), 0);
    assert_true(e.step == 4 && e.wall == 1500000002.0);
    assert_int_equal(tfb_media_find(ix, TFB_MEDIA_PR_CURVE, "pr", 0, 1, &e), 0);
    assert_true(e.step == 5 && e.wall == 1500000003.0);
    tfb_store_destroy(st);
    tu_rmtree(dir);
    free(dir);
}

static uint32_t rd_le(const uint8_t *p, int n)
{
    uint32_t v = 0;
    for (int i = n - 1; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

/* tfb_audio (issue 31): the clip is indexed as audio by the real loader
 * and read back as the WAV PyTorch writes (RIFF header of 44 bytes,
 * 16-bit PCM, its rate and channels; samples clipped, times 32767,
 * truncated, NaN silent); its limits, each a clear error. */
static void audio_clip(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp();
    char run[600];
    snprintf(run, sizeof run, "%s/r", dir);
    tfb_writer *w;
    assert_int_equal(tfb_writer_open(&w, run, NULL), 0);
    const float x[] = {0.0f, 0.5f, -0.5f, 1.0f, -1.0f, 2.0f, -3.0f, NAN,
                       0.25f, -0.0001f};
    const int16_t want[] = {0, 16383, -16383, 32767, -32767, 32767, -32767,
                            0, 8191, -3};
    assert_int_equal(tfb_audio(w, "s/mono", x, 10, 1, 16000.0, 5), 0);
    assert_int_equal(tfb_audio_at(w, "s/stereo", x, 5, 2, 44100.0, 6,
                                  1500000000.5), 0);
    /* Limits: tag, samples, channels, rate, size. */
    assert_int_equal(tfb_audio(NULL, "t", x, 1, 1, 8000, 0), TFB_EINVAL);
    assert_int_equal(tfb_audio(w, "", x, 1, 1, 8000, 0), TFB_EINVAL);
    assert_int_equal(tfb_audio(w, "t", NULL, 1, 1, 8000, 0), TFB_EINVAL);
    assert_int_equal(tfb_audio(w, "t", x, 1, 0, 8000, 0), TFB_EINVAL);
    assert_int_equal(tfb_audio(w, "t", x, 1, TFB_AUDIO_MAX_CHANNELS + 1,
                               8000, 0), TFB_EINVAL);
    assert_int_equal(tfb_audio(w, "t", x, 1, 1, 0.0, 0), TFB_EINVAL);
    assert_int_equal(tfb_audio(w, "t", x, 1, 1, 8000.5, 0), TFB_EINVAL);
    assert_int_equal(tfb_audio(w, "t", x, 1, 1, NAN, 0), TFB_EINVAL);
    assert_int_equal(tfb_audio(w, "t", x, 1, 1, TFB_AUDIO_MAX_RATE + 1, 0),
                     TFB_EINVAL);
    /* Refused before the samples are read: x is far shorter. */
    assert_int_equal(tfb_audio(w, "t", x, TFB_AUDIO_MAX_BYTES / 4 + 1, 2,
                               8000, 0), TFB_ETOOBIG);
    assert_int_equal(tfb_writer_close(w), 0);

    tfb_store *st = load(dir);
    tfb_media_index *ix = tfb_run_media(tfb_store_find_run(st, "r"));
    assert_int_equal(tfb_media_count(ix, TFB_MEDIA_AUDIO), 2);
    assert_int_equal(tfb_media_count(ix, TFB_MEDIA_IMAGE), 0);
    tfb_media_entry e;
    uint8_t *b;
    size_t n;
    assert_int_equal(tfb_media_find(ix, TFB_MEDIA_AUDIO, "s/mono", 0, 0, &e),
                     0);
    assert_int_equal(e.step, 5);
    assert_int_equal(tfb_media_read(ix, &e, &b, &n), 0);
    assert_int_equal(n, 44 + 20);
    assert_memory_equal(b, "RIFF", 4);
    assert_int_equal(rd_le(b + 4, 4), 36 + 20);
    assert_memory_equal(b + 8, "WAVEfmt ", 8);
    assert_int_equal(rd_le(b + 16, 4), 16);
    assert_int_equal(rd_le(b + 20, 2), 1);       /* PCM */
    assert_int_equal(rd_le(b + 22, 2), 1);       /* channels */
    assert_int_equal(rd_le(b + 24, 4), 16000);   /* rate */
    assert_int_equal(rd_le(b + 28, 4), 32000);   /* bytes per second */
    assert_int_equal(rd_le(b + 32, 2), 2);       /* block align */
    assert_int_equal(rd_le(b + 34, 2), 16);      /* bits */
    assert_memory_equal(b + 36, "data", 4);
    assert_int_equal(rd_le(b + 40, 4), 20);
    for (int i = 0; i < 10; i++)
        assert_int_equal((int16_t)rd_le(b + 44 + 2 * i, 2), want[i]);
    free(b);
    assert_int_equal(tfb_media_find(ix, TFB_MEDIA_AUDIO, "s/stereo", 0, 0,
                                    &e), 0);
    assert_true(e.step == 6 && e.wall == 1500000000.5);
    assert_int_equal(tfb_media_read(ix, &e, &b, &n), 0);
    assert_int_equal(n, 44 + 20);
    assert_int_equal(rd_le(b + 22, 2), 2);
    assert_int_equal(rd_le(b + 24, 4), 44100);
    assert_int_equal(rd_le(b + 28, 4), 44100 * 4);
    assert_int_equal(rd_le(b + 32, 2), 4);
    free(b);
    tfb_store_destroy(st);
    tu_rmtree(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(index_and_read_back),
        cmocka_unit_test(check_refuses),
        cmocka_unit_test(writer_limits),
        cmocka_unit_test(wall_time_variants),
        cmocka_unit_test(audio_clip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
