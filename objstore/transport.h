/*
 * transport.h - objstore's requests over libcurl: one multi handle on the
 * client's own thread, signing, timeouts, retries with backoff and
 * jitter. Internal to objstore/ (s3.c builds requests on it).
 */
#ifndef TFB_OBJSTORE_TRANSPORT_H
#define TFB_OBJSTORE_TRANSPORT_H

#include <stddef.h>
#include <stdint.h>

#include "base/vec.h"
#include "objstore/objstore.h"
#include "objstore/sigv4.h"

typedef enum os_kind { OS_LIST, OS_GET, OS_HEAD, OS_PUT } os_kind;

typedef struct os_req {
    /* ---- set by the caller ---- */
    os_kind kind;
    const char *method;
    const char *bucket;
    const char *key;          /* raw; "" for the bucket itself */
    tfb_sigv4_kv query[6];    /* raw */
    size_t n_query;
    char range[64];           /* "" = none */
    const uint8_t *body;      /* PUT/POST body; NULL = none */
    size_t body_len;
    /* Where the answer's body goes: a caller's buffer of out_cap bytes
     * (more is an error), or, with out NULL, `grown` below. */
    uint8_t *out;
    size_t out_cap;
    /* Or, with to_fd, written to the file fd at fd_off on as it arrives
     * (pwrite; a retry writes again from fd_off), at most out_cap bytes:
     * a big object streams to disk without a buffer of its size. */
    int to_fd, fd;
    uint64_t fd_off;
    /* Conditions (objstore.h, tfb_os_cond), signed as headers:
     * If-Match: if_match (a 412 answers TFB_ESTATE: the object is another
     * version now), If-None-Match: * when if_none_match (a 412, or S3's
     * 409 for a conditional write racing another, answers TFB_EEXIST). */
    const char *if_match;
    int if_none_match;
    /* CLOCK_MONOTONIC ns no attempt may run past, nor a retry start
     * after (0: only the transport's own deadline per attempt). */
    long long deadline_ns;
    /* ---- results ---- */
    uint8_t *resp;            /* out, or grown.v (tfb_os_req_free) */
    size_t resp_len;
    long status;
    char etag[TFB_OS_ETAG_MAX];
    uint64_t content_length;
    int64_t mtime_ns;
    char errbody[512];        /* the start of an error answer's body */
    size_t errbody_len;
    int too_big;              /* the answer passed TFB_OS_XML_MAX */
    int rc;                   /* 0 or a TFB_E* code */
    tfb_os_error err;
    /* ---- the transport's ---- */
    struct os_attempt *att;
    TFB_VEC(uint8_t) grown;   /* the body when out is NULL */
} os_req;

/* Runs n requests at once (each retried on its own), returning when all
 * are done; the first failure's code, or 0. */
int tfb_os_exec(tfb_os *c, os_req *const *reqs, size_t n);
void tfb_os_req_free(os_req *r); /* the grown response buffer */
/* Adds n to tfb_os_stats.skipped (listed keys outside the prefix). */
void tfb_os_count_skipped(tfb_os *c, uint64_t n);
/* "s3://bucket/key" for messages. */
void tfb_os_describe(const tfb_os *c, const os_req *r, char *buf,
                     size_t n);

#endif
