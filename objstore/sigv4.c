/*
 * sigv4.c - AWS Signature Version 4 (see sigv4.h).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "objstore/sigv4.h"

/* A growable string; `bad` set once an allocation failed. */
typedef struct sbuf {
    char *p;
    size_t n, cap;
    int bad;
} sbuf;

static void sb_add(sbuf *b, const char *s, size_t n)
{
    if (b->bad)
        return;
    if (b->n + n + 1 > b->cap) {
        size_t nc = b->cap ? b->cap * 2 : 256;
        while (nc < b->n + n + 1)
            nc *= 2;
        char *np = realloc(b->p, nc);
        if (!np) {
            b->bad = 1;
            return;
        }
        b->p = np;
        b->cap = nc;
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = 0;
}

static void sb_str(sbuf *b, const char *s)
{
    sb_add(b, s, strlen(s));
}

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
    sbuf cr = {0}, sts = {0}, signed_h = {0}, auth = {0};
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

    sb_str(&cr, r->method);
    sb_str(&cr, "\n");
    sb_str(&cr, r->path);
    sb_str(&cr, "\n");
    for (size_t i = 0; i < r->n_query; i++) {
        if (i)
            sb_str(&cr, "&");
        sb_str(&cr, q[i].name);
        sb_str(&cr, "=");
        sb_str(&cr, q[i].value);
    }
    sb_str(&cr, "\n");
    for (size_t i = 0; i < r->n_headers; i++) {
        /* Repeated names: one line, values joined by commas. */
        if (i && strcmp(h[i].name, h[i - 1].name) == 0) {
            cr.n--; /* the newline */
            sb_str(&cr, ",");
        } else {
            if (signed_h.n)
                sb_str(&signed_h, ";");
            sb_str(&signed_h, h[i].name);
            sb_str(&cr, h[i].name);
            sb_str(&cr, ":");
        }
        sb_str(&cr, h[i].value);
        sb_str(&cr, "\n");
    }
    sb_str(&cr, "\n");
    sb_str(&cr, signed_h.p ? signed_h.p : "");
    sb_str(&cr, "\n");
    sb_str(&cr, r->payload_hash);
    if (cr.bad || signed_h.bad)
        goto done;

    char date[9];
    memcpy(date, r->amz_date, 8);
    date[8] = 0;
    char scope[256];
    snprintf(scope, sizeof scope, "%s/%s/%s/aws4_request", date, r->region,
             r->service);
    char crh[65];
    tfb_sigv4_sha256_hex(cr.p, cr.n, crh);
    sb_str(&sts, "AWS4-HMAC-SHA256\n");
    sb_str(&sts, r->amz_date);
    sb_str(&sts, "\n");
    sb_str(&sts, scope);
    sb_str(&sts, "\n");
    sb_str(&sts, crh);
    if (sts.bad)
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
    hmac(k4, 32, sts.p, sig);
    hex(sig, 32, out->signature);

    sb_str(&auth, "AWS4-HMAC-SHA256 Credential=");
    sb_str(&auth, r->access_key);
    sb_str(&auth, "/");
    sb_str(&auth, scope);
    sb_str(&auth, ", SignedHeaders=");
    sb_str(&auth, signed_h.p ? signed_h.p : "");
    sb_str(&auth, ", Signature=");
    sb_str(&auth, out->signature);
    if (auth.bad)
        goto done;
    out->canonical_request = cr.p;
    out->string_to_sign = sts.p;
    out->authorization = auth.p;
    cr.p = sts.p = auth.p = NULL;
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
    free(cr.p);
    free(sts.p);
    free(signed_h.p);
    free(auth.p);
    return rc;
}
