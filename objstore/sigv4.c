/*
 * sigv4.c - AWS Signature Version 4 (see sigv4.h).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "base/buf.h"
#include "objstore/sigv4.h"

static void hex(const unsigned char *d, size_t n, char *out)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = digits[d[i] >> 4];
        out[2 * i + 1] = digits[d[i] & 15];
    }
    out[2 * n] = 0;
}

void tfb_sigv4_sha256_hex(const void *data, size_t n, char out[65])
{
    unsigned char md[32];
    unsigned int len = 0;
    EVP_Digest(data, n, md, &len, EVP_sha256(), NULL);
    hex(md, 32, out);
}

static void hmac(const void *key, size_t kn, const char *msg,
                 unsigned char out[32])
{
    unsigned int len = 32;
    HMAC(EVP_sha256(), key, (int)kn, (const unsigned char *)msg, strlen(msg),
         out, &len);
}

static int unreserved(unsigned char c)
{
    return isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~';
}

char *tfb_sigv4_encode(const char *s, size_t n, int keep_slash)
{
    char *out = malloc(3 * n + 1), *o = out;
    if (!out)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (unreserved(c) || (keep_slash && c == '/')) {
            *o++ = (char)c;
        } else {
            snprintf(o, 4, "%%%02X", c);
            o += 3;
        }
    }
    *o = 0;
    return out;
}

typedef struct enc_kv {
    char *name, *value;
} enc_kv;

static int cmp_kv(const void *a, const void *b)
{
    const enc_kv *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    return c ? c : strcmp(x->value, y->value);
}

/* Lower-case name, value trimmed with inner space runs folded. */
typedef struct canon_hdr {
    char *name, *value;
} canon_hdr;

static int cmp_hdr(const void *a, const void *b)
{
    return strcmp(((const canon_hdr *)a)->name, ((const canon_hdr *)b)->name);
}

static char *fold_value(const char *v)
{
    size_t n = strlen(v);
    char *o = malloc(n + 1), *w = o;
    if (!o)
        return NULL;
    const char *p = v;
    while (*p == ' ' || *p == '\t')
        p++;
    int space = 0;
    for (; *p; p++) {
        if (*p == ' ' || *p == '\t') {
            space = 1;
            continue;
        }
        if (space && w != o)
            *w++ = ' ';
        space = 0;
        *w++ = *p;
    }
    *w = 0;
    return o;
}

void tfb_sigv4_out_free(tfb_sigv4_out *out)
{
    if (!out)
        return;
    free(out->canonical_request);
    free(out->string_to_sign);
    free(out->authorization);
    memset(out, 0, sizeof *out);
}

int tfb_sigv4_sign(const tfb_sigv4_req *r, tfb_sigv4_out *out)
{
    memset(out, 0, sizeof *out);
    if (!r->method || !r->path || !r->payload_hash || !r->amz_date ||
        strlen(r->amz_date) < 8 || !r->region || !r->service ||
        !r->access_key || !r->secret_key)
        return -1;
    int rc = -1;
    enc_kv *q = calloc(r->n_query ? r->n_query : 1, sizeof *q);
    canon_hdr *h = calloc(r->n_headers ? r->n_headers : 1, sizeof *h);
    tfb_buf cr = {0}, sts = {0}, signed_h = {0}, auth = {0};
    if (!q || !h)
        goto done;
    for (size_t i = 0; i < r->n_query; i++) {
        const char *v = r->query[i].value ? r->query[i].value : "";
        q[i].name = tfb_sigv4_encode(r->query[i].name,
                                     strlen(r->query[i].name), 0);
        q[i].value = tfb_sigv4_encode(v, strlen(v), 0);
        if (!q[i].name || !q[i].value)
            goto done;
    }
    qsort(q, r->n_query, sizeof *q, cmp_kv);
    for (size_t i = 0; i < r->n_headers; i++) {
        h[i].name = strdup(r->headers[i].name);
        h[i].value = fold_value(r->headers[i].value);
        if (!h[i].name || !h[i].value)
            goto done;
        for (char *c = h[i].name; *c; c++)
            *c = (char)tolower((unsigned char)*c);
    }
    qsort(h, r->n_headers, sizeof *h, cmp_hdr);

    tfb_buf_puts(&cr, r->method);
    tfb_buf_puts(&cr, "\n");
    tfb_buf_puts(&cr, r->path);
    tfb_buf_puts(&cr, "\n");
    for (size_t i = 0; i < r->n_query; i++) {
        if (i)
            tfb_buf_puts(&cr, "&");
        tfb_buf_puts(&cr, q[i].name);
        tfb_buf_puts(&cr, "=");
        tfb_buf_puts(&cr, q[i].value);
    }
    tfb_buf_puts(&cr, "\n");
    for (size_t i = 0; i < r->n_headers; i++) {
        /* Repeated names: one line, values joined by commas. */
        if (i && strcmp(h[i].name, h[i - 1].name) == 0) {
            cr.n--; /* the newline */
            tfb_buf_puts(&cr, ",");
        } else {
            if (signed_h.n)
                tfb_buf_puts(&signed_h, ";");
            tfb_buf_puts(&signed_h, h[i].name);
            tfb_buf_puts(&cr, h[i].name);
            tfb_buf_puts(&cr, ":");
        }
        tfb_buf_puts(&cr, h[i].value);
        tfb_buf_puts(&cr, "\n");
    }
    tfb_buf_puts(&cr, "\n");
    tfb_buf_puts(&cr, signed_h.v ? signed_h.v : "");
    tfb_buf_puts(&cr, "\n");
    tfb_buf_puts(&cr, r->payload_hash);
    if (cr.failed || signed_h.failed)
        goto done;

    char date[9];
    memcpy(date, r->amz_date, 8);
    date[8] = 0;
    char scope[256];
    snprintf(scope, sizeof scope, "%s/%s/%s/aws4_request", date, r->region,
             r->service);
    char crh[65];
    tfb_sigv4_sha256_hex(cr.v, cr.n, crh);
    tfb_buf_puts(&sts, "AWS4-HMAC-SHA256\n");
    tfb_buf_puts(&sts, r->amz_date);
    tfb_buf_puts(&sts, "\n");
    tfb_buf_puts(&sts, scope);
    tfb_buf_puts(&sts, "\n");
    tfb_buf_puts(&sts, crh);
    if (sts.failed)
        goto done;

    /* Signing key: HMAC chain over date, region, service, aws4_request. */
    size_t sl = strlen(r->secret_key);
    char *k0 = malloc(sl + 5);
    if (!k0)
        goto done;
    memcpy(k0, "AWS4", 4);
    memcpy(k0 + 4, r->secret_key, sl + 1);
    unsigned char k1[32], k2[32], k3[32], k4[32], sig[32];
    hmac(k0, sl + 4, date, k1);
    /* the secret is not left in freed memory */
    memset(k0, 0, sl + 4);
    free(k0);
    hmac(k1, 32, r->region, k2);
    hmac(k2, 32, r->service, k3);
    hmac(k3, 32, "aws4_request", k4);
    hmac(k4, 32, sts.v, sig);
    hex(sig, 32, out->signature);

    tfb_buf_puts(&auth, "AWS4-HMAC-SHA256 Credential=");
    tfb_buf_puts(&auth, r->access_key);
    tfb_buf_puts(&auth, "/");
    tfb_buf_puts(&auth, scope);
    tfb_buf_puts(&auth, ", SignedHeaders=");
    tfb_buf_puts(&auth, signed_h.v ? signed_h.v : "");
    tfb_buf_puts(&auth, ", Signature=");
    tfb_buf_puts(&auth, out->signature);
    if (auth.failed)
        goto done;
    out->canonical_request = tfb_buf_take(&cr);
    out->string_to_sign = tfb_buf_take(&sts);
    out->authorization = tfb_buf_take(&auth);
    rc = 0;
done:
    if (q)
        for (size_t i = 0; i < r->n_query; i++) {
            free(q[i].name);
            free(q[i].value);
        }
    if (h)
        for (size_t i = 0; i < r->n_headers; i++) {
            free(h[i].name);
            free(h[i].value);
        }
    free(q);
    free(h);
    tfb_buf_free(&cr);
    tfb_buf_free(&sts);
    tfb_buf_free(&signed_h);
    tfb_buf_free(&auth);
    return rc;
}
