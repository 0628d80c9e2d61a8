/*
 * test_protoc.c - our hand-written encoder, checked by Google's own
 * decoder: every record the writer produces is decoded by
 * `protoc --decode=tensorflow.Event` against tests/proto/event.proto, and
 * the text must show exactly the fields we meant to write.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"
#include "tfboard.h"
#include "collector/writer_internal.h"

static const char *protoc, *proto_dir;
static char *g_dir;

/* Decodes record payload i of the file at path; returns protoc's text
 * output (caller frees) or NULL when protoc rejected it. */
static char *decode_record(const uint8_t *payload, size_t len)
{
    char in[700], out[700], cmd[2400];
    snprintf(in, sizeof in, "%s/payload.bin", g_dir);
    snprintf(out, sizeof out, "%s/payload.txt", g_dir);
    assert_int_equal(tu_write_file(in, payload, len), 0);
    snprintf(cmd, sizeof cmd,
             "'%s' --decode=tensorflow.Event -I '%s' '%s/event.proto' < '%s' > '%s' 2>&1",
             protoc, proto_dir, proto_dir, in, out);
    int rc = system(cmd);
    size_t n = 0;
    uint8_t *txt = tu_read_file(out, &n);
    if (!txt)
        return NULL;
    if (rc != 0) {
        fprintf(stderr, "protoc failed: %.*s\n", (int)n, (const char *)txt);
        free(txt);
        return NULL;
    }
    char *s = realloc(txt, n + 1);
    s[n] = 0;
    return s;
}

static void expect_in(const char *text, const char *want)
{
    if (!strstr(text, want))
        fail_msg("protoc output lacks [%s]:\n%s", want, text);
}

static void cross_check(void **state)
{
    (void)state;
    tfb_writer *w;
    assert_int_equal(tfb_writer_open(&w, g_dir, NULL), 0);
    assert_int_equal(tfb_scalar_at(w, "loss", 0.5, 7, 1700000000.25), 0);
    assert_int_equal(tfb_scalar_at(w, "loss", -2.0, -3, 1700000001.0), 0);
    float h[] = {1.0f, 2.0f, 2.0f, 100.0f};
    assert_int_equal(tfb_histogram(w, "weights", h, 4, 9), 0);
    assert_int_equal(tfb_text(w, "notes", "hello \"world\"", 11), 0);
    tfb_nonfinite_counts c = {sizeof c, 2, 1, 0};
    assert_int_equal(tfb_writer_numerics_record(w, "grads", 12, &c), 0);
    char *path = strdup(tfb_writer_path(w));
    assert_int_equal(tfb_writer_close_reason(w, "early stop: \"done\""), 0);

    size_t len;
    uint8_t *data = tu_read_file(path, &len);
    const char *expected[][7] = {
        {"file_version: \"brain.Event:2\"", NULL},
        {"wall_time: 1700000000.25", "step: 7", "tag: \"loss\"",
         "simple_value: 0.5", "plugin_name: \"scalars\"", NULL},
        {"step: -3", "simple_value: -2", NULL},
        {"tag: \"weights\"", "min: 1", "max: 100", "num: 4", "sum: 105",
         "plugin_name: \"histograms\""},
        {"tag: \"notes\"", "dtype: 7", "string_val: \"hello \\\"world\\\"\"",
         "plugin_name: \"text\"", NULL},
        {"tag: \"grads\"", "dtype: 9", "size: 3", "int64_val: 2",
         "plugin_name: \"tfboard_numerics\"", NULL},
        /* the end-of-run record: a string tensor of a plugin others skip */
        {"tag: \"tfboard/run_end\"", "dtype: 7",
         "string_val: \"early stop: \\\"done\\\"\"",
         "plugin_name: \"tfboard_run_end\"",
         "content: \"early stop: \\\"done\\\"\"", NULL},
    };
    size_t off = 0, i = 0;
    while (off + 12 <= len) {
        uint64_t n = 0;
        memcpy(&n, data + off, 8);
        assert_true(i < 7);
        char *txt = decode_record(data + off + 12, (size_t)n);
        assert_non_null(txt);
        for (int k = 0; k < 7 && expected[i][k]; k++)
            expect_in(txt, expected[i][k]);
        if (i == 2)
            assert_null(strstr(txt, "plugin_name")); /* first value only */
        if (i == 3) {
            expect_in(txt, "sum_squares: 10009");
            expect_in(txt, "bucket: 2");
            expect_in(txt, "bucket_limit:");
        }
        free(txt);
        off += 12 + n + 4;
        i++;
    }
    assert_int_equal(i, 7);
    assert_int_equal(off, len);
    free(data);
    free(path);
}

/* tfb_image and tfb_image_encoded write TensorFlow 2's image format:
 * a DT_STRING tensor of shape [3] = width, height, PNG, plugin "images". */
static void image_cross_check(void **state)
{
    (void)state;
    char dir[700];
    snprintf(dir, sizeof dir, "%s/img", g_dir);
    tfb_writer *w;
    assert_int_equal(tfb_writer_open(&w, dir, NULL), 0);
    uint8_t px[2 * 3 * 3];
    for (size_t i = 0; i < sizeof px; i++)
        px[i] = (uint8_t)(i * 13);
    assert_int_equal(tfb_image(w, "gen/rgb", px, 2, 3, 3, 5), 0);
    /* A 1x1 gray PNG from elsewhere, as its bytes. */
    static const uint8_t png1[] = {
        0x89, 'P', 'N', 'G', 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 'I', 'H',
        'D', 'R', 0, 0, 0, 1, 0, 0, 0, 1, 8, 0, 0, 0, 0, 0x3a, 0x7e, 0x9b,
        0x55, 0, 0, 0, 10, 'I', 'D', 'A', 'T', 0x78, 0x9c, 0x63, 0x68, 0,
        0, 0, 0x82, 0, 0x81, 0x77, 0xcd, 0x72, 0xb6, 0, 0, 0, 0, 'I', 'E',
        'N', 'D', 0xae, 0x42, 0x60, 0x82};
    assert_int_equal(tfb_image_encoded(w, "given", png1, sizeof png1, 6), 0);
    assert_int_equal(tfb_image_encoded(w, "given", "<html>", 6, 7),
                     TFB_EINVAL);
    char *path = strdup(tfb_writer_path(w));
    assert_int_equal(tfb_writer_close(w), 0);
    size_t len;
    uint8_t *data = tu_read_file(path, &len);
    size_t off = 0, i = 0;
    int seen_rgb = 0, seen_given = 0;
    while (off + 12 <= len) {
        uint64_t n = 0;
        memcpy(&n, data + off, 8);
        char *txt = decode_record(data + off + 12, (size_t)n);
        assert_non_null(txt);
        if (strstr(txt, "tag: \"gen/rgb\"")) {
            seen_rgb = 1;
            expect_in(txt, "step: 5");
            expect_in(txt, "dtype: 7");
            expect_in(txt, "size: 3");
            expect_in(txt, "string_val: \"3\"");  /* width */
            expect_in(txt, "string_val: \"2\"");  /* height */
            expect_in(txt, "string_val: \"\\211PNG");
            expect_in(txt, "plugin_name: \"images\"");
        } else if (strstr(txt, "tag: \"given\"")) {
            seen_given = 1;
            expect_in(txt, "step: 6");
            expect_in(txt, "string_val: \"1\"");
            expect_in(txt, "plugin_name: \"images\"");
            assert_null(strstr(txt, "step: 7"));
        }
        free(txt);
        off += 12 + n + 4;
        i++;
    }
    assert_int_equal(i, 4); /* file_version, the two images, the run's end */
    assert_true(seen_rgb && seen_given);
    free(data);
    free(path);
}

int main(void)
{
    protoc = getenv("TFB_PROTOC");
    proto_dir = getenv("TFB_PROTO_DIR");
    if (!protoc || !*protoc || !proto_dir) {
        fprintf(stderr, "protoc not found: skipping\n");
        return 77;
    }
    g_dir = tu_mkdtemp();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(cross_check),
        cmocka_unit_test(image_cross_check),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    tu_rmtree(g_dir);
    free(g_dir);
    return rc;
}
