/*
 * test_hparams.c - the hparams plugin records, decoded by Google's protoc
 * against tests/proto/hparams.proto (written from REFERENCE.md's field
 * numbers, with the plugin content typed as HParamsPluginData), and read
 * back through our own reader.
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

static const char *protoc, *proto_dir;
static char *g_dir;

/* Writes a run with every kind of value, two metrics and the end record;
 * returns the event file's path (caller frees). */
static char *write_run(const char *sub)
{
    char dir[600];
    snprintf(dir, sizeof dir, "%s/%s", g_dir, sub);
    tfb_writer *w;
    assert_int_equal(tfb_writer_open(&w, dir, NULL), 0);
    tfb_hparam hp[] = {
        {.size = sizeof(tfb_hparam), .name = "lr", .type = TFB_HPARAM_NUMBER, .number = 0.25},
        {.size = sizeof(tfb_hparam), .name = "optimizer", .type = TFB_HPARAM_STRING, .str = "adam \"w\""},
        {.size = sizeof(tfb_hparam), .name = "nesterov", .type = TFB_HPARAM_BOOL, .boolean = 1},
        {.size = sizeof(tfb_hparam), .name = "amsgrad", .type = TFB_HPARAM_BOOL, .boolean = 0},
        {.size = sizeof(tfb_hparam), .name = "hidden", .type = TFB_HPARAM_NUMBER, .number = 64},
    };
    const char *metrics[] = {"hparam/loss", "hparam/accuracy"};
    assert_int_equal(tfb_hparams_with_metrics(w, hp, 5, metrics, 2), 0);
    assert_int_equal(tfb_scalar(w, "hparam/loss", 0.5, 0), 0);
    assert_int_equal(tfb_hparams_end(w, TFB_HPARAMS_FAILURE), 0);
    char *path = strdup(tfb_writer_path(w));
    assert_int_equal(tfb_writer_close(w), 0);
    return path;
}

static char *decode(const uint8_t *payload, size_t len)
{
    char in[700], out[700], cmd[2400];
    snprintf(in, sizeof in, "%s/payload.bin", g_dir);
    snprintf(out, sizeof out, "%s/payload.txt", g_dir);
    assert_int_equal(tu_write_file(in, payload, len), 0);
    snprintf(cmd, sizeof cmd,
             "'%s' --decode=tfbtest.HParamsEvent -I '%s' '%s/hparams.proto' "
             "< '%s' > '%s' 2>&1",
             protoc, proto_dir, proto_dir, in, out);
    int rc = system(cmd);
    size_t n = 0;
    uint8_t *txt = tu_read_file(out, &n);
    assert_non_null(txt);
    char *s = realloc(txt, n + 1);
    s[n] = 0;
    if (rc != 0)
        fail_msg("protoc rejected the record: %s", s);
    return s;
}

/* Each of want[] must occur in text, in this order. */
static void expect_seq(const char *text, const char *const *want)
{
    const char *at = text;
    for (; *want; want++) {
        const char *f = strstr(at, *want);
        if (!f)
            fail_msg("protoc output lacks [%s] (in order):\n%s", *want, text);
        at = f + strlen(*want);
    }
}

static void protoc_fields(void **state)
{
    (void)state;
    if (!protoc || !*protoc) {
        skip();
        return;
    }
    char *path = write_run("protoc");
    size_t len;
    uint8_t *data = tu_read_file(path, &len);
    assert_non_null(data);

    static const char *const exp[] = {
        "tag: \"_hparams_/experiment\"", "tensor {", "dtype: 1", "}",
        "metadata {", "plugin_data {", "plugin_name: \"hparams\"",
        "content {", "experiment {",
        "hparam_infos {", "name: \"lr\"", "type: 3", "}",
        "hparam_infos {", "name: \"optimizer\"", "type: 1", "}",
        "hparam_infos {", "name: \"nesterov\"", "type: 2", "}",
        "hparam_infos {", "name: \"amsgrad\"", "type: 2", "}",
        "hparam_infos {", "name: \"hidden\"", "type: 3", "}",
        "metric_infos {", "name {", "tag: \"hparam/loss\"", "}",
        "metric_infos {", "name {", "tag: \"hparam/accuracy\"", NULL};
    /* protoc prints map entries sorted by key. */
    static const char *const ssi[] = {
        "tag: \"_hparams_/session_start_info\"", "dtype: 1",
        "plugin_name: \"hparams\"", "session_start_info {",
        "hparams {", "key: \"amsgrad\"", "value {", "bool_value: false",
        "hparams {", "key: \"hidden\"", "number_value: 64",
        "hparams {", "key: \"lr\"", "number_value: 0.25",
        "hparams {", "key: \"nesterov\"", "bool_value: true",
        "hparams {", "key: \"optimizer\"", "string_value: \"adam \\\"w\\\"\"",
        "start_time_secs: ", NULL};
    static const char *const scalar[] = {"tag: \"hparam/loss\"",
                                         "simple_value: 0.5", NULL};
    static const char *const sei[] = {
        "tag: \"_hparams_/session_end_info\"", "dtype: 1",
        "plugin_name: \"hparams\"", "session_end_info {", "status: 2",
        "end_time_secs: ", NULL};
    static const char *const end[] = {"tag: \"tfboard/run_end\"", NULL};
    const char *const *want[] = {NULL, exp, ssi, scalar, sei, end};

    size_t off = 0, i = 0;
    while (off + 12 <= len) {
        uint64_t n = 0;
        memcpy(&n, data + off, 8);
        assert_true(i < 6);
        char *txt = decode(data + off + 12, (size_t)n);
        if (want[i])
            expect_seq(txt, want[i]);
        /* Version 0 and step 0 are proto3 defaults: left out, as
         * PyTorch's writer leaves them out. */
        if (i == 1 || i == 2 || i == 4) {
            assert_null(strstr(txt, "version:"));
            assert_null(strstr(txt, "step:"));
            assert_null(strstr(txt, "tensor_shape"));
        }
        free(txt);
        off += 12 + n + 4;
        i++;
    }
    assert_int_equal(i, 6); /* + the end-of-run record */
    assert_int_equal(off, len);
    free(data);
    free(path);
}

/* Many hyperparameters with long values (the message buffers grow), and
 * the unknown status (proto3 default: no status field). */
static void many_and_unknown_status(void **state)
{
    (void)state;
    if (!protoc || !*protoc) {
        skip();
        return;
    }
    char dir[600];
    snprintf(dir, sizeof dir, "%s/many", g_dir);
    tfb_writer *w;
    assert_int_equal(tfb_writer_open(&w, dir, NULL), 0);
    enum { N = 300 };
    static tfb_hparam hp[N];
    static char names[N][16];
    static char longval[5000];
    memset(longval, 'v', sizeof longval - 1);
    for (int i = 0; i < N; i++) {
        snprintf(names[i], sizeof names[i], "p%03d", i);
        hp[i].size = sizeof hp[i];
        hp[i].name = names[i];
        hp[i].type = i % 2 ? TFB_HPARAM_STRING : TFB_HPARAM_NUMBER;
        hp[i].str = longval;
        hp[i].number = i;
    }
    assert_int_equal(tfb_hparams(w, hp, N), 0);
    assert_int_equal(tfb_hparams_end(w, TFB_HPARAMS_UNKNOWN), 0);
    char *path = strdup(tfb_writer_path(w));
    assert_int_equal(tfb_writer_close(w), 0);

    size_t len;
    uint8_t *data = tu_read_file(path, &len);
    size_t off = 0, i = 0;
    while (off + 12 <= len) {
        uint64_t n = 0;
        memcpy(&n, data + off, 8);
        char *txt = decode(data + off + 12, (size_t)n);
        size_t count = 0;
        for (const char *p = txt; (p = strstr(p, i == 1 ? "hparam_infos {"
                                                        : "hparams {")); p++)
            count++;
        if (i == 1 || i == 2)
            assert_int_equal(count, N);
        if (i == 2) {
            expect_seq(txt, (const char *const[]){"key: \"p001\"",
                                                  "string_value: \"vvvv",
                                                  "key: \"p298\"",
                                                  "number_value: 298", NULL});
            assert_null(strstr(txt, "metric_infos"));
        }
        if (i == 3) {
            expect_seq(txt, (const char *const[]){"session_end_info {",
                                                  "end_time_secs", NULL});
            assert_null(strstr(txt, "status:"));
        }
        free(txt);
        off += 12 + n + 4;
        i++;
    }
    assert_int_equal(i, 5); /* + the end-of-run record */
    free(data);
    free(path);
}

static int strview_is(tfb_strview v, const char *s)
{
    return v.len == strlen(s) && !memcmp(v.ptr, s, v.len);
}

/* Our reader walks the records without an error and sees plugin hparams
 * on each of the three values. */
static void reader_sees_hparams(void **state)
{
    (void)state;
    char *path = write_run("reader");
    tfb_reader *r;
    assert_int_equal(tfb_reader_open(&r, path), 0);
    const char *tags[] = {"_hparams_/experiment",
                          "_hparams_/session_start_info", "hparam/loss",
                          "_hparams_/session_end_info"};
    size_t seen = 0;
    tfb_event ev = {.size = sizeof ev};
    int rc;
    while ((rc = tfb_reader_next(r, &ev)) == 1) {
        if (ev.kind != TFB_EVENT_SUMMARY)
            continue;
        size_t pos = 0;
        tfb_value v = {.size = sizeof v};
        int vr;
        while ((vr = tfb_summary_next(ev.summary, ev.summary_len, &pos,
                                      &v)) == 1) {
            if (tu_is_run_end(&v))
                continue;
            assert_true(seen < 4);
            assert_true(strview_is(v.tag, tags[seen]));
            if (seen == 2) {
                assert_int_equal(v.kind, TFB_VALUE_SCALAR);
            } else {
                assert_true(strview_is(v.plugin_name, "hparams"));
                assert_non_null(v.tensor);
                assert_int_not_equal(v.kind, TFB_VALUE_SCALAR);
            }
            seen++;
        }
        assert_int_equal(vr, 0);
    }
    assert_int_equal(rc, 0);
    assert_int_equal(seen, 4);
    tfb_reader_stats st;
    tfb_reader_stats_init(&st);
    assert_int_equal(tfb_reader_get_stats(r, &st), 0);
    assert_int_equal(st.corrupt_records, 0);
    tfb_reader_close(r);
    free(path);
}

/* Bad input is refused before anything is written. */
static void bad_input(void **state)
{
    (void)state;
    char dir[600];
    snprintf(dir, sizeof dir, "%s/bad", g_dir);
    tfb_writer *w;
    assert_int_equal(tfb_writer_open(&w, dir, NULL), 0);
    tfb_hparam ok = {.size = sizeof(tfb_hparam), .name = "a",
                     .type = TFB_HPARAM_NUMBER, .number = 1};
    tfb_hparam dup[] = {ok, ok};
    tfb_hparam noname = {.size = sizeof(tfb_hparam), .name = "",
                         .type = TFB_HPARAM_NUMBER};
    tfb_hparam nostr = {.size = sizeof(tfb_hparam), .name = "s",
                        .type = TFB_HPARAM_STRING};
    tfb_hparam badtype = {.size = sizeof(tfb_hparam), .name = "t",
                          .type = (tfb_hparam_type)9};
    const char *empty_tag[] = {""};
    assert_int_equal(tfb_hparams(NULL, &ok, 1), TFB_EINVAL);
    assert_int_equal(tfb_hparams(w, NULL, 1), TFB_EINVAL);
    assert_int_equal(tfb_hparams(w, dup, 2), TFB_EINVAL);
    assert_int_equal(tfb_hparams(w, &noname, 1), TFB_EINVAL);
    assert_int_equal(tfb_hparams(w, &nostr, 1), TFB_EINVAL);
    assert_int_equal(tfb_hparams(w, &badtype, 1), TFB_EINVAL);
    assert_int_equal(tfb_hparams_with_metrics(w, &ok, 1, NULL, 1), TFB_EINVAL);
    assert_int_equal(tfb_hparams_with_metrics(w, &ok, 1, empty_tag, 1),
                     TFB_EINVAL);
    assert_int_equal(tfb_hparams_end(w, (tfb_hparams_status)4), TFB_EINVAL);
    assert_int_equal(tfb_hparams_end(NULL, TFB_HPARAMS_SUCCESS), TFB_EINVAL);
    tfb_writer_stats st;
    tfb_writer_stats_init(&st);
    assert_int_equal(tfb_writer_get_stats(w, &st), 0);
    assert_int_equal(st.records_logged, 0);
    /* An empty set is valid (PyTorch accepts an empty dict). */
    assert_int_equal(tfb_hparams(w, NULL, 0), 0);
    assert_int_equal(tfb_writer_get_stats(w, &st), 0);
    assert_int_equal(st.records_logged, 2);
    assert_int_equal(tfb_writer_close(w), 0);
}

int main(void)
{
    protoc = getenv("TFB_PROTOC");
    proto_dir = getenv("TFB_PROTO_DIR");
    g_dir = tu_mkdtemp();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(protoc_fields),
        cmocka_unit_test(many_and_unknown_status),
        cmocka_unit_test(reader_sees_hparams),
        cmocka_unit_test(bad_input),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    tu_rmtree(g_dir);
    free(g_dir);
    return rc;
}
