/*
 * sigv4.h - AWS Signature Version 4 (header form) over OpenSSL's
 * SHA-256 and HMAC-SHA256: canonical request, string to sign, signature
 * and the Authorization header value. Written here rather than taken from
 * libcurl's CURLOPT_AWS_SIGV4, which on Debian 12's curl 7.88 neither
 * sorts nor encodes the query and sends no x-amz-content-sha256.
 *
 * Pure functions: thread-safe, no global state.
 */
#ifndef TFB_OBJSTORE_SIGV4_H
#define TFB_OBJSTORE_SIGV4_H

#include <stddef.h>

typedef struct tfb_sigv4_kv {
    const char *name;
    const char *value;
} tfb_sigv4_kv;

typedef struct tfb_sigv4_req {
    const char *method;
    /* The path as sent, already URI-encoded (tfb_sigv4_encode with
     * keep_slash): S3 signs it as it is, never normalised or encoded
     * twice. */
    const char *path;
    /* Query parameters, raw (not encoded), in any order: the signer
     * encodes and sorts them. */
    const tfb_sigv4_kv *query;
    size_t n_query;
    /* Headers to sign, any case and order; values are trimmed and inner
     * runs of spaces folded. Must hold host and x-amz-date. */
    const tfb_sigv4_kv *headers;
    size_t n_headers;
    const char *payload_hash; /* hex SHA-256 of the body, or UNSIGNED-PAYLOAD */
    const char *amz_date;     /* YYYYMMDDTHHMMSSZ */
    const char *region;
    const char *service;
    const char *access_key;
    const char *secret_key;
} tfb_sigv4_req;

typedef struct tfb_sigv4_out {
    char *canonical_request;  /* malloc'd */
    char *string_to_sign;     /* malloc'd */
    char signature[65];       /* hex */
    char *authorization;      /* malloc'd Authorization header value */
} tfb_sigv4_out;

/* Signs r into *out (free with tfb_sigv4_out_free). 0, or -1 when out of
 * memory or a required field is missing. */
int tfb_sigv4_sign(const tfb_sigv4_req *r, tfb_sigv4_out *out);
void tfb_sigv4_out_free(tfb_sigv4_out *out);

/* RFC 3986 percent-encoding of n bytes of s (unreserved A-Z a-z 0-9 - . _ ~
 * kept; '/' kept when keep_slash), upper-case hex; malloc'd, NULL when out
 * of memory. */
char *tfb_sigv4_encode(const char *s, size_t n, int keep_slash);

/* Hex SHA-256 of n bytes into hex[65]. */
void tfb_sigv4_sha256_hex(const void *data, size_t n, char hex[65]);

/* The hex SHA-256 of an empty body. */
#define TFB_SIGV4_EMPTY_SHA256                                                \
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

#endif
