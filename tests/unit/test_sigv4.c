/* test_sigv4.c - objstore's SigV4 signer against AWS's published
 * Signature Version 4 test-suite vectors (service "service", us-east-1,
 * 2015-08-30T12:36:00Z, key AKIDEXAMPLE) and the S3 documentation's
 * GET-object example; and the settings loader (config.h) over the
 * environment and an AWS profile. botocore's signatures are compared in
 * test_sigv4_botocore.py through sigv4_tool. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "objstore/config.h"
#include "objstore/objstore.h"
#include "objstore/sigv4.h"

#define SUITE_SECRET "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
#define SUITE_DATE "20150830T123600Z"
#define HOST "example.amazonaws.com"

static void sign_suite(const char *method, const char *path,
                       const tfb_sigv4_kv *q, size_t nq,
                       const tfb_sigv4_kv *extra, size_t ne,
                       const char *want_auth, const char *want_sts_hash)
{
    tfb_sigv4_kv h[8];
    size_t nh = 0;
    h[nh++] = (tfb_sigv4_kv){"Host", HOST};
    h[nh++] = (tfb_sigv4_kv){"X-Amz-Date", SUITE_DATE};
    for (size_t i = 0; i < ne; i++)
        h[nh++] = extra[i];
    tfb_sigv4_req r = {method, path, q, nq, h, nh,
                       TFB_SIGV4_EMPTY_SHA256, SUITE_DATE, "us-east-1",
                       "service", "AKIDEXAMPLE", SUITE_SECRET};
    tfb_sigv4_out o;
    assert_int_equal(tfb_sigv4_sign(&r, &o), 0);
    assert_string_equal(o.authorization, want_auth);
    if (want_sts_hash) {
        /* the string to sign ends with the canonical request's hash */
        const char *nl = strrchr(o.string_to_sign, '\n');
        assert_non_null(nl);
        assert_string_equal(nl + 1, want_sts_hash);
    }
    tfb_sigv4_out_free(&o);
}

#define AUTH(sh, sig)                                                         \
    "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/"     \
    "aws4_request, SignedHeaders=" sh ", Signature=" sig

static void get_vanilla(void **state)
{
    (void)state;
    sign_suite("GET", "/", NULL, 0, NULL, 0,
               AUTH("host;x-amz-date", "5fa00fa31553b73ebf1942676e86291e8"
                                       "372ff2a2260956d9b8aae1d763fbf31"),
               "bb579772317eb040ac9ed261061d46c1f17a8133879d6129b6e1c252"
               "92927e63");
}

static void post_vanilla(void **state)
{
    (void)state;
    sign_suite("POST", "/", NULL, 0, NULL, 0,
               AUTH("host;x-amz-date", "5da7c1a2acd57cee7505fc6676e4e5446"
                                       "21c30862966e37dddb68e92efbe5d6b"),
               NULL);
}

static void get_vanilla_query_order_key_case(void **state)
{
    (void)state;
    /* given unsorted: the signer sorts */
    tfb_sigv4_kv q[] = {{"Param2", "value2"}, {"Param1", "value1"}};
    sign_suite("GET", "/", q, 2, NULL, 0,
               AUTH("host;x-amz-date", "b97d918cfa904a5beff61c982a1b6f458"
                                       "b799221646efd99d3219ec94cdf2500"),
               "816cd5b414d056048ba4f7c5386d6e0533120fb1fcfa93762cf0fc39"
               "e2cf19e0");
}

static void get_unreserved(void **state)
{
    (void)state;
    const char *raw = "/-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijk"
                      "lmnopqrstuvwxyz";
    char *path = tfb_sigv4_encode(raw, strlen(raw), 1);
    assert_string_equal(path, raw); /* nothing to encode */
    sign_suite("GET", path, NULL, 0, NULL, 0,
               AUTH("host;x-amz-date", "07ef7494c76fa4850883e2b006601f940"
                                       "f8a34d404d0cfa977f52a65bbf5f24f"),
               NULL);
    free(path);
}

static void post_header_value_case(void **state)
{
    (void)state;
    tfb_sigv4_kv h[] = {{"My-Header1", "VALUE1"}};
    sign_suite("POST", "/", NULL, 0, h, 1,
               AUTH("host;my-header1;x-amz-date",
                    "cdbc9802e29d2942e5e10b5bccfdd67c5f22c7c4e8ae67b53629e"
                    "fa58b974b7d"),
               NULL);
}

static void get_header_value_trim(void **state)
{
    (void)state;
    /* leading spaces trimmed, inner runs folded to one */
    tfb_sigv4_kv h[] = {{"My-Header1", " value1"},
                        {"My-Header2", "\"a   b   c\""}};
    sign_suite("GET", "/", NULL, 0, h, 2,
               AUTH("host;my-header1;my-header2;x-amz-date",
                    "acc3ed3afb60bb290fc8d2dd0098b9911fcaa05412b367055dee3"
                    "59757a9c736"),
               NULL);
}

/* The S3 API reference's "GET Object" example (range, content hash). */
static void s3_get_object_example(void **state)
{
    (void)state;
    tfb_sigv4_kv h[] = {
        {"Host", "examplebucket.s3.amazonaws.com"},
        {"Range", "bytes=0-9"},
        {"x-amz-content-sha256", TFB_SIGV4_EMPTY_SHA256},
        {"x-amz-date", "20130524T000000Z"},
    };
    tfb_sigv4_req r = {"GET", "/test.txt", NULL, 0, h, 4,
                       TFB_SIGV4_EMPTY_SHA256, "20130524T000000Z",
                       "us-east-1", "s3", "AKIAIOSFODNN7EXAMPLE",
                       "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"};
    tfb_sigv4_out o;
    assert_int_equal(tfb_sigv4_sign(&r, &o), 0);
    assert_string_equal(o.signature, "f0e8bdb87c964420e857bd35b5d6ed310bd44f"
                                     "0170aba48dd91039c6036bdb41");
    assert_non_null(strstr(o.authorization,
                           "SignedHeaders=host;range;x-amz-content-sha256;"
                           "x-amz-date"));
    tfb_sigv4_out_free(&o);
}

static void encoding(void **state)
{
    (void)state;
    char *a = tfb_sigv4_encode("a b+c/ü..", strlen("a b+c/ü.."), 1);
    assert_string_equal(a, "a%20b%2Bc/%C3%BC..");
    char *b = tfb_sigv4_encode("x/y=z", 5, 0);
    assert_string_equal(b, "x%2Fy%3Dz"); /* '/' encoded in the query */
    free(a);
    free(b);
}

/* ---- settings ---------------------------------------------------------- */

static void clear_env(void)
{
    const char *v[] = {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY",
                       "AWS_SESSION_TOKEN", "AWS_REGION",
                       "AWS_DEFAULT_REGION", "AWS_PROFILE",
                       "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3",
                       "S3_ENDPOINT", "S3_USE_HTTPS",
                       "AWS_SHARED_CREDENTIALS_FILE", "AWS_CONFIG_FILE"};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        unsetenv(v[i]);
}

static void config_env(void **state)
{
    (void)state;
    clear_env();
    setenv("HOME", "/nonexistent-home", 1);
    tfb_os_config c;
    char err[200];
    /* nothing set: anonymous, AWS's endpoint, virtual-hosted */
    assert_int_equal(tfb_os_config_load(&c, "s3", err, sizeof err), 0);
    assert_null(c.access_key);
    assert_string_equal(c.region, "us-east-1");
    assert_string_equal(c.endpoint, "https://s3.us-east-1.amazonaws.com");
    assert_int_equal(c.path_style, 0);
    tfb_os_config_free(&c);

    setenv("AWS_ACCESS_KEY_ID", "AK", 1);
    setenv("AWS_SECRET_ACCESS_KEY", "SK", 1);
    setenv("AWS_SESSION_TOKEN", "TOK", 1);
    setenv("AWS_DEFAULT_REGION", "eu-west-3", 1);
    setenv("S3_ENDPOINT", "minio.local:9000", 1);
    setenv("S3_USE_HTTPS", "0", 1);
    assert_int_equal(tfb_os_config_load(&c, "s3", err, sizeof err), 0);
    assert_string_equal(c.access_key, "AK");
    assert_string_equal(c.session_token, "TOK");
    assert_string_equal(c.region, "eu-west-3");
    assert_string_equal(c.endpoint, "http://minio.local:9000");
    assert_int_equal(c.path_style, 1);
    tfb_os_config_free(&c);

    /* AWS_ENDPOINT_URL wins over S3_ENDPOINT; AWS_REGION over DEFAULT */
    setenv("AWS_ENDPOINT_URL", "https://r2.example/", 1);
    setenv("AWS_REGION", "auto", 1);
    assert_int_equal(tfb_os_config_load(&c, "s3", err, sizeof err), 0);
    assert_string_equal(c.endpoint, "https://r2.example");
    assert_string_equal(c.region, "auto");
    tfb_os_config_free(&c);

    /* gs://: Google's XML API, path-style, region "auto" */
    assert_int_equal(tfb_os_config_load(&c, "gs", err, sizeof err), 0);
    assert_string_equal(c.endpoint, "https://storage.googleapis.com");
    assert_int_equal(c.path_style, 1);
    assert_string_equal(c.region, "auto");
    tfb_os_config_free(&c);

    /* a key id without its secret is refused, and the message says so
     * without any secret in it */
    unsetenv("AWS_SECRET_ACCESS_KEY");
    assert_int_equal(tfb_os_config_load(&c, "s3", err, sizeof err), -1);
    assert_non_null(strstr(err, "AWS_SECRET_ACCESS_KEY"));
    clear_env();
}

static void config_profile(void **state)
{
    (void)state;
    clear_env();
    char dir[] = "/tmp/tfb_sigv4_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char cred[300], conf[300];
    snprintf(cred, sizeof cred, "%s/credentials", dir);
    snprintf(conf, sizeof conf, "%s/config", dir);
    FILE *f = fopen(cred, "w");
    fprintf(f, "[default]\naws_access_key_id = DEF\naws_secret_access_key "
               "= DEFS\n\n[team]\naws_access_key_id=TEAM\n"
               "aws_secret_access_key = TEAMS\naws_session_token = TT\n");
    fclose(f);
    f = fopen(conf, "w");
    fprintf(f, "[default]\nregion = us-west-2\n[profile team]\nregion = "
               "ap-south-1\nendpoint_url = http://127.0.0.1:9\n");
    fclose(f);
    setenv("AWS_SHARED_CREDENTIALS_FILE", cred, 1);
    setenv("AWS_CONFIG_FILE", conf, 1);
    tfb_os_config c;
    char err[200];
    assert_int_equal(tfb_os_config_load(&c, "s3", err, sizeof err), 0);
    assert_string_equal(c.access_key, "DEF");
    assert_string_equal(c.region, "us-west-2");
    tfb_os_config_free(&c);
    setenv("AWS_PROFILE", "team", 1);
    assert_int_equal(tfb_os_config_load(&c, "s3", err, sizeof err), 0);
    assert_string_equal(c.access_key, "TEAM");
    assert_string_equal(c.secret_key, "TEAMS");
    assert_string_equal(c.session_token, "TT");
    assert_string_equal(c.region, "ap-south-1");
    assert_string_equal(c.endpoint, "http://127.0.0.1:9");
    tfb_os_config_free(&c);
    clear_env();
    unlink(cred);
    unlink(conf);
    rmdir(dir);
}

static void parse_url(void **state)
{
    (void)state;
    char sch[3], *b, *k;
    assert_int_equal(tfb_os_parse_url("s3://bkt/a/b c", sch, &b, &k), 0);
    assert_string_equal(sch, "s3");
    assert_string_equal(b, "bkt");
    assert_string_equal(k, "a/b c");
    free(b);
    free(k);
    assert_int_equal(tfb_os_parse_url("gs://bkt", sch, &b, &k), 0);
    assert_string_equal(k, "");
    free(b);
    free(k);
    assert_int_equal(tfb_os_parse_url("s3:///x", sch, &b, &k), -1);
    assert_int_equal(tfb_os_parse_url("/local/dir", sch, &b, &k), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(get_vanilla),
        cmocka_unit_test(post_vanilla),
        cmocka_unit_test(get_vanilla_query_order_key_case),
        cmocka_unit_test(get_unreserved),
        cmocka_unit_test(post_header_value_case),
        cmocka_unit_test(get_header_value_trim),
        cmocka_unit_test(s3_get_object_example),
        cmocka_unit_test(encoding),
        cmocka_unit_test(config_env),
        cmocka_unit_test(config_profile),
        cmocka_unit_test(parse_url),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
