/*
 * transport.c - requests over one libcurl multi handle (transport.h).
 *
 * The multi handle belongs to the client's loop thread: callers build and
 * sign an easy handle, queue it and wait on the client's condition
 * variable; the loop adds queued handles, drives transfers and marks them
 * done. Connections stay in the multi handle's pool between requests, so
 * a reload of a logdir reuses them (keep-alive).
 */
#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>

#include "base/deadline.h"
#include "base/str.h"
#include "base/utf8.h"
#include "tfboard.h"
#include "objstore/transport.h"

typedef struct os_attempt {
    CURL *easy;
    struct curl_slist *hdrs;
    char *url;
    size_t body_off;
    CURLcode cc;
    int done;
    /* The deadline (CLOCK_MONOTONIC ns), from start: deadline_ms of the
     * bytes sent plus those expected back, which are down_max until a
     * Content-Length says how many (on_header). expired: ended by it. */
    long long start_ns, deadline_ns;
    uint64_t up_bytes, down_max;
    int expired;
    struct os_attempt *next; /* in the pending or active list */
    os_req *req;
    const struct tfb_os *c;
} os_attempt;

struct tfb_os {
    tfb_os_config cfg;
    char scheme[3];
    char *host; /* host[:port] of the endpoint */
    char *base; /* scheme://host[:port] */
    CURLM *multi;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv; /* attempts done; cancel */
    os_attempt *pending, *active;
    int stop, cancelled;
    atomic_uint_fast64_t st[10];
    unsigned seed;
};

enum { ST_REQ, ST_LIST, ST_GET, ST_HEAD, ST_PUT, ST_IN, ST_OUT, ST_RETRY,
       ST_FAIL, ST_SKIP };

static pthread_once_t g_curl_once = PTHREAD_ONCE_INIT;
static void curl_init_once(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
}

/* ---- the loop thread ------------------------------------------------- */

static void finish(tfb_os *c, os_attempt *a, CURLcode cc)
{
    curl_multi_remove_handle(c->multi, a->easy);
    a->cc = cc;
    a->done = 1;
}

/* How long a request of `bytes` (sent and received) may take in all: the
 * connect timeout and a stall's worth of waiting for the first byte, then
 * the bytes at TFB_OS_MIN_RATE. The stall timeout alone never ends a
 * transfer that trickles a byte a second. */
static long long deadline_ms(const tfb_os *c, uint64_t bytes)
{
    return (long long)c->cfg.connect_timeout_ms +
           (long long)c->cfg.stall_timeout_ms +
           (long long)(bytes * 1000 / TFB_OS_MIN_RATE);
}

static void set_deadline(const tfb_os *c, os_attempt *a, uint64_t down)
{
    a->deadline_ns =
        a->start_ns + deadline_ms(c, a->up_bytes + down) * 1000000;
    /* the caller's own bound on the whole call, when sooner */
    if (a->req->deadline_ns && a->req->deadline_ns < a->deadline_ns)
        a->deadline_ns = a->req->deadline_ns;
}

/* Ends the transfers whose deadline passed (CURLE_OPERATION_TIMEDOUT:
 * retried like a stall) and returns the milliseconds until the next
 * deadline, at most 1000 (the loop's usual wait). Under c->mu. */
static int end_expired(tfb_os *c, int *any)
{
    long long now = tfb_mono_now_ns(), next = now + 1000LL * 1000000;
    for (os_attempt **p = &c->active; *p;) {
        os_attempt *a = *p;
        if (!a->done && now >= a->deadline_ns) {
            a->expired = 1;
            finish(c, a, CURLE_OPERATION_TIMEDOUT);
            *p = a->next;
            *any = 1;
            continue;
        }
        if (a->deadline_ns < next)
            next = a->deadline_ns;
        p = &a->next;
    }
    long long ms = (next - now + 999999) / 1000000;
    return ms < 1 ? 1 : (int)ms;
}

static void *loop_main(void *arg)
{
    tfb_os *c = arg;
    for (;;) {
        pthread_mutex_lock(&c->mu);
        if (c->stop) {
            pthread_mutex_unlock(&c->mu);
            break;
        }
        while (c->pending) {
            os_attempt *a = c->pending;
            c->pending = a->next;
            a->next = c->active;
            c->active = a;
            a->start_ns = tfb_mono_now_ns();
            set_deadline(c, a, a->down_max);
            curl_multi_add_handle(c->multi, a->easy);
        }
        if (c->cancelled) {
            /* Shutdown: every transfer ends now. */
            for (os_attempt *a = c->active; a; a = a->next)
                if (!a->done)
                    finish(c, a, CURLE_ABORTED_BY_CALLBACK);
            c->active = NULL;
            pthread_cond_broadcast(&c->cv);
        }
        pthread_mutex_unlock(&c->mu);

        int running = 0;
        curl_multi_perform(c->multi, &running);
        CURLMsg *m;
        int left, any = 0;
        pthread_mutex_lock(&c->mu);
        while ((m = curl_multi_info_read(c->multi, &left))) {
            if (m->msg != CURLMSG_DONE)
                continue;
            os_attempt *a = NULL;
            curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&a);
            CURLcode cc = m->data.result;
            if (!a)
                continue;
            finish(c, a, cc);
            /* out of the active list */
            for (os_attempt **p = &c->active; *p; p = &(*p)->next)
                if (*p == a) {
                    *p = a->next;
                    break;
                }
            any = 1;
        }
        int wait_ms = end_expired(c, &any);
        if (any)
            pthread_cond_broadcast(&c->cv);
        pthread_mutex_unlock(&c->mu);
        curl_multi_poll(c->multi, NULL, 0, wait_ms, NULL);
    }
    return NULL;
}

/* ---- building one attempt -------------------------------------------- */

static size_t on_body(char *p, size_t sz, size_t nm, void *ud)
{
    os_req *r = ud;
    size_t n = sz * nm;
    long status = 0;
    curl_easy_getinfo(r->att->easy, CURLINFO_RESPONSE_CODE, &status);
    if (status >= 300) {
        /* An error document: kept apart (its <Code> names the error),
         * never in the caller's buffer. */
        size_t k = sizeof r->errbody - 1 - r->errbody_len;
        if (k > n)
            k = n;
        memcpy(r->errbody + r->errbody_len, p, k);
        r->errbody_len += k;
        r->errbody[r->errbody_len] = 0;
        return n;
    }
    if (r->to_fd) {
        if (r->resp_len + n > r->out_cap)
            return 0;
        for (size_t w = 0; w < n;) {
            ssize_t k = pwrite(r->fd, p + w, n - w,
                               (off_t)(r->fd_off + r->resp_len + w));
            if (k < 0 && errno == EINTR)
                continue;
            if (k <= 0)
                return 0; /* a full disk ends the transfer */
            w += (size_t)k;
        }
        r->resp_len += n;
        return n;
    }
    if (r->out) {
        if (r->resp_len + n > r->out_cap)
            return 0; /* more than asked for: an error, not an overflow */
    } else {
        /* An XML answer (a listing page) is bounded: a longer one fails
         * (no retry: the store would answer the same). */
        if (r->resp_len + n > TFB_OS_XML_MAX) {
            r->too_big = 1;
            return 0;
        }
        /* The bytes and a NUL after them (s3.c reads XML as a string). */
        if (tfb_vec_need(&r->grown, r->resp_len + n + 1) < 0)
            return 0;
        r->resp = r->grown.v;
    }
    memcpy(r->resp + r->resp_len, p, n);
    r->resp_len += n;
    if (!r->out)
        r->resp[r->resp_len] = 0;
    return n;
}

static const char *hdr_value(const char *line, size_t n, const char *name,
                             size_t *vlen)
{
    size_t k = strlen(name);
    if (n <= k || strncasecmp(line, name, k) != 0 || line[k] != ':')
        return NULL;
    const char *v = line + k + 1, *e = line + n;
    while (v < e && (*v == ' ' || *v == '\t'))
        v++;
    while (e > v && (e[-1] == '\r' || e[-1] == '\n' || e[-1] == ' '))
        e--;
    *vlen = (size_t)(e - v);
    return v;
}

static int64_t parse_http_date(const char *s, size_t n)
{
    char tmp[64];
    if (n >= sizeof tmp)
        return 0;
    memcpy(tmp, s, n);
    tmp[n] = 0;
    struct tm tm;
    memset(&tm, 0, sizeof tm);
    if (!strptime(tmp, "%a, %d %b %Y %H:%M:%S", &tm))
        return 0;
    return (int64_t)timegm(&tm) * 1000000000;
}

static size_t on_header(char *p, size_t sz, size_t nm, void *ud)
{
    os_req *r = ud;
    size_t n = sz * nm, vl;
    const char *v;
    if ((v = hdr_value(p, n, "etag", &vl))) {
        if (vl >= sizeof r->etag)
            vl = sizeof r->etag - 1;
        memcpy(r->etag, v, vl);
        r->etag[vl] = 0;
    } else if ((v = hdr_value(p, n, "content-length", &vl))) {
        r->content_length = strtoull(v, NULL, 10);
        long status = 0;
        curl_easy_getinfo(r->att->easy, CURLINFO_RESPONSE_CODE, &status);
        if (!r->out && !r->to_fd && r->kind != OS_HEAD && status < 300 &&
            r->content_length > TFB_OS_XML_MAX) {
            r->too_big = 1; /* refused before a byte of it is read */
            return 0;
        }
        /* The deadline now counts the bytes announced, not the most
         * that could come. */
        os_attempt *a = r->att;
        set_deadline(a->c, a, r->content_length < a->down_max
                                  ? r->content_length
                                  : a->down_max);
    } else if ((v = hdr_value(p, n, "last-modified", &vl))) {
        r->mtime_ns = parse_http_date(v, vl);
    }
    return n;
}

static size_t on_read(char *p, size_t sz, size_t nm, void *ud)
{
    os_attempt *a = ud;
    os_req *r = a->req;
    size_t n = sz * nm, left = r->body_len - a->body_off;
    if (n > left)
        n = left;
    memcpy(p, r->body + a->body_off, n);
    a->body_off += n;
    return n;
}

void tfb_os_describe(const tfb_os *c, const os_req *r, char *buf, size_t n)
{
    int k;
    if (r->kind == OS_LIST) {
        const char *prefix = "";
        for (size_t i = 0; i < r->n_query; i++)
            if (strcmp(r->query[i].name, "prefix") == 0)
                prefix = r->query[i].value;
        k = snprintf(buf, n, "LIST %s://%s/%s", c->scheme, r->bucket, prefix);
    } else {
        k = snprintf(buf, n, "%s %s://%s/%s", r->method, c->scheme, r->bucket,
                     r->key);
    }
    /* A long key is cut by the buffer: at a character boundary, so the
     * line stays UTF-8 wherever it is shown (stderr, /data/environment). */
    if (n && k >= (int)n)
        buf[tfb_utf8_cut(buf, n - 1)] = '\0';
}

static void amz_now(char out[17])
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(out, 17, "%Y%m%dT%H%M%SZ", &tm);
}

static int valid_vhost_bucket(const char *b)
{
    for (const char *p = b; *p; p++)
        if (!(islower((unsigned char)*p) || isdigit((unsigned char)*p) ||
              *p == '-'))
            return 0;
    return *b != 0;
}

static os_attempt *build(tfb_os *c, os_req *r)
{
    os_attempt *a = calloc(1, sizeof *a);
    if (!a)
        return NULL;
    a->req = r;
    a->c = c;
    /* what the deadline counts: the body sent, and at most this back */
    a->up_bytes = r->body ? r->body_len : 0;
    a->down_max = r->kind == OS_HEAD ? 0
                  : r->out || r->to_fd   ? r->out_cap
                                         : TFB_OS_XML_MAX;
    char *ekey = tfb_sigv4_encode(r->key, strlen(r->key), 1);
    char *path = NULL, *host = NULL, *qs = NULL;
    if (!ekey)
        goto fail;
    if (!c->cfg.path_style && valid_vhost_bucket(r->bucket)) {
        path = tfb_strfmt("/%s", ekey);
        host = tfb_strfmt("%s.%s", r->bucket, c->host);
    } else {
        path = tfb_strfmt("/%s/%s", r->bucket, ekey);
        host = tfb_strdup(c->host);
    }
    if (!path || !host)
        goto fail;
    /* The query as sent: names and values encoded, in the signer's
     * order (sorted), so what is signed is what goes out. */
    size_t qn = 1;
    char *encq[12] = {0};
    for (size_t i = 0; i < r->n_query; i++) {
        const char *v = r->query[i].value ? r->query[i].value : "";
        encq[2 * i] = tfb_sigv4_encode(r->query[i].name,
                                       strlen(r->query[i].name), 0);
        encq[2 * i + 1] = tfb_sigv4_encode(v, strlen(v), 0);
        if (!encq[2 * i] || !encq[2 * i + 1]) {
            for (size_t k = 0; k < 12; k++)
                free(encq[k]);
            goto fail;
        }
        qn += strlen(encq[2 * i]) + strlen(encq[2 * i + 1]) + 2;
    }
    qs = malloc(qn);
    if (!qs)
        goto fail;
    qs[0] = 0;
    for (size_t i = 0; i < r->n_query; i++) {
        if (i)
            strcat(qs, "&");
        strcat(qs, encq[2 * i]);
        strcat(qs, "=");
        strcat(qs, encq[2 * i + 1]);
    }
    for (size_t k = 0; k < 12; k++)
        free(encq[k]);
    const char *scheme_end = strstr(c->base, "://");
    a->url = tfb_strfmt("%.*s://%s%s%s%s", (int)(scheme_end - c->base),
                        c->base, host, path, r->n_query ? "?" : "", qs);
    if (!a->url)
        goto fail;

    char date[17];
    amz_now(date);
    const char *payload = "UNSIGNED-PAYLOAD";
    char body_hash[65];
    if (r->body && c->scheme[0] == 'g') {
        /* GCS's XML API wants the real hash on uploads */
        tfb_sigv4_sha256_hex(r->body, r->body_len, body_hash);
        payload = body_hash;
    }
    tfb_sigv4_kv h[7];
    size_t nh = 0;
    h[nh++] = (tfb_sigv4_kv){"host", host};
    h[nh++] = (tfb_sigv4_kv){"x-amz-content-sha256", payload};
    h[nh++] = (tfb_sigv4_kv){"x-amz-date", date};
    if (r->range[0])
        h[nh++] = (tfb_sigv4_kv){"range", r->range};
    if (r->if_match)
        h[nh++] = (tfb_sigv4_kv){"if-match", r->if_match};
    else if (r->if_none_match)
        h[nh++] = (tfb_sigv4_kv){"if-none-match", "*"};
    if (c->cfg.session_token)
        h[nh++] = (tfb_sigv4_kv){"x-amz-security-token",
                                 c->cfg.session_token};
    char line[4096];
    /* host comes from the URL; the rest as headers */
    for (size_t i = 1; i < nh; i++) {
        if (!c->cfg.access_key && i < 3)
            continue; /* anonymous: nothing signed */
        snprintf(line, sizeof line, "%s: %s", h[i].name, h[i].value);
        struct curl_slist *ns = curl_slist_append(a->hdrs, line);
        if (!ns)
            goto fail;
        a->hdrs = ns;
    }
    if (c->cfg.access_key) {
        tfb_sigv4_req sr = {r->method, path, r->query, r->n_query, h, nh,
                            payload, date, c->cfg.region, "s3",
                            c->cfg.access_key, c->cfg.secret_key};
        tfb_sigv4_out so;
        if (tfb_sigv4_sign(&sr, &so) < 0)
            goto fail;
        snprintf(line, sizeof line, "Authorization: %s", so.authorization);
        tfb_sigv4_out_free(&so);
        struct curl_slist *ns = curl_slist_append(a->hdrs, line);
        memset(line, 0, sizeof line);
        if (!ns)
            goto fail;
        a->hdrs = ns;
    }
    /* no "Expect: 100-continue" round trip on uploads; a POST body is
     * XML (curl would call it a form) */
    struct curl_slist *ns = curl_slist_append(
        a->hdrs, r->body && strcmp(r->method, "POST") == 0
                     ? "Content-Type: application/xml"
                     : "Content-Type:");
    if (!ns)
        goto fail;
    a->hdrs = ns;
    ns = curl_slist_append(a->hdrs, "Expect:");
    if (!ns)
        goto fail;
    a->hdrs = ns;

    CURL *e = a->easy = curl_easy_init();
    if (!e)
        goto fail;
    curl_easy_setopt(e, CURLOPT_URL, a->url);
    curl_easy_setopt(e, CURLOPT_PATH_AS_IS, 1L); /* keys with ".." */
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, a->hdrs);
    curl_easy_setopt(e, CURLOPT_PRIVATE, (char *)a);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, c->cfg.connect_timeout_ms);
    /* A stall (no byte for stall_timeout) ends the transfer; big ones
     * that keep moving are not cut. */
    long stall_s = (c->cfg.stall_timeout_ms + 999) / 1000;
    curl_easy_setopt(e, CURLOPT_LOW_SPEED_LIMIT, 1L);
    curl_easy_setopt(e, CURLOPT_LOW_SPEED_TIME, stall_s);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, r);
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, r);
    curl_easy_setopt(e, CURLOPT_USERAGENT, "tfboard/" TFB_VERSION_STRING);
    if (r->kind == OS_HEAD) {
        curl_easy_setopt(e, CURLOPT_NOBODY, 1L);
    } else if (r->body || strcmp(r->method, "PUT") == 0) {
        if (strcmp(r->method, "PUT") == 0) {
            curl_easy_setopt(e, CURLOPT_UPLOAD, 1L);
            curl_easy_setopt(e, CURLOPT_INFILESIZE_LARGE,
                             (curl_off_t)r->body_len);
            curl_easy_setopt(e, CURLOPT_READFUNCTION, on_read);
            curl_easy_setopt(e, CURLOPT_READDATA, a);
        } else {
            curl_easy_setopt(e, CURLOPT_POST, 1L);
            curl_easy_setopt(e, CURLOPT_POSTFIELDS, (const char *)r->body);
            curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE,
                             (curl_off_t)r->body_len);
        }
    } else if (strcmp(r->method, "POST") == 0) {
        curl_easy_setopt(e, CURLOPT_POST, 1L);
        curl_easy_setopt(e, CURLOPT_POSTFIELDS, "");
        curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)0);
    } else if (strcmp(r->method, "DELETE") == 0) {
        curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, "DELETE");
    }
    free(ekey);
    free(path);
    free(host);
    free(qs);
    return a;
fail:
    free(ekey);
    free(path);
    free(host);
    free(qs);
    curl_slist_free_all(a->hdrs);
    free(a->url);
    free(a);
    return NULL;
}

static void attempt_free(os_attempt *a)
{
    if (!a)
        return;
    if (a->easy)
        curl_easy_cleanup(a->easy);
    /* the signature header is not left readable in freed memory */
    for (struct curl_slist *s = a->hdrs; s; s = s->next)
        memset(s->data, 0, strlen(s->data));
    curl_slist_free_all(a->hdrs);
    free(a->url);
    free(a);
}

/* The <Code> of an S3 error document, for messages. */
static void error_code(const os_req *r, char *out, size_t n)
{
    out[0] = 0;
    const char *s = strstr(r->errbody, "<Code>");
    if (!s)
        return;
    s += 6;
    const char *e = strstr(s, "</Code>");
    if (!e || (size_t)(e - s) >= n)
        return;
    memcpy(out, s, (size_t)(e - s));
    out[e - s] = 0;
}

/* What an answer means: 0 done, 1 retry, or a negative code. */
static int classify(os_req *r, CURLcode cc)
{
    if (cc != CURLE_OK)
        return 1; /* reset, refused, timed out, cut short: try again */
    long s = r->status;
    if ((s >= 200 && s < 300) || (s == 416 && r->kind == OS_GET))
        return 0;
    if (s == 404)
        return TFB_ENOENT;
    if (s == 401 || s == 403)
        return TFB_EACCES;
    /* A condition that does not hold is an answer, not a fault: never
     * retried. 409 is S3's answer to a conditional write that raced
     * another one for the key (the other one wins). */
    if (s == 412 && r->if_match)
        return TFB_ESTATE;
    if ((s == 412 || s == 409) && r->if_none_match)
        return TFB_EEXIST;
    if (s >= 500 || s == 429 || s == 408)
        return 1;
    return TFB_EIO;
}

static int submit(tfb_os *c, os_attempt *a)
{
    pthread_mutex_lock(&c->mu);
    if (c->cancelled) {
        pthread_mutex_unlock(&c->mu);
        return TFB_ECLOSED;
    }
    a->next = c->pending;
    c->pending = a;
    pthread_mutex_unlock(&c->mu);
    curl_multi_wakeup(c->multi);
    return 0;
}

static long backoff_ms(tfb_os *c, int attempt)
{
    long base = c->cfg.backoff_ms << (attempt < 10 ? attempt : 10);
    if (base > 20000)
        base = 20000;
    /* full jitter: anywhere in [base/2, base] */
    unsigned r = rand_r(&c->seed);
    return base / 2 + (long)(r % (unsigned)(base / 2 + 1));
}

int tfb_os_exec(tfb_os *c, os_req *const *reqs, size_t n)
{
    int first = 0;
    int *left = calloc(n ? n : 1, sizeof *left); /* attempts left */
    int *state = calloc(n ? n : 1, sizeof *state); /* 1 running, 2 done */
    if (!left || !state) {
        free(left);
        free(state);
        return TFB_ENOMEM;
    }
    for (size_t i = 0; i < n; i++)
        left[i] = c->cfg.max_attempts;
    int attempt = 0;
    for (;;) {
        size_t started = 0;
        for (size_t i = 0; i < n; i++) {
            os_req *r = reqs[i];
            if (state[i] == 2)
                continue;
            r->resp_len = 0;
            r->errbody_len = 0;
            r->errbody[0] = 0;
            r->too_big = 0;
            r->status = 0;
            r->etag[0] = 0;
            if (r->out)
                r->resp = r->out;
            os_attempt *a = build(c, r);
            r->att = a; /* before the loop thread can call back */
            int rc = a ? submit(c, a) : TFB_ENOMEM;
            if (rc < 0) {
                attempt_free(a);
                r->rc = rc;
                snprintf(r->err.msg, sizeof r->err.msg, "%s",
                         tfb_strerror(rc));
                state[i] = 2;
                continue;
            }
            r->err.attempts++;
            atomic_fetch_add(&c->st[ST_REQ], 1);
            atomic_fetch_add(&c->st[r->kind == OS_LIST  ? ST_LIST
                                    : r->kind == OS_GET ? ST_GET
                                    : r->kind == OS_HEAD ? ST_HEAD
                                                         : ST_PUT],
                             1);
            state[i] = 1;
            started++;
        }
        if (!started)
            break;
        pthread_mutex_lock(&c->mu);
        for (size_t i = 0; i < n; i++)
            while (state[i] == 1 && !reqs[i]->att->done)
                pthread_cond_wait(&c->cv, &c->mu);
        pthread_mutex_unlock(&c->mu);
        int retry = 0;
        for (size_t i = 0; i < n; i++) {
            if (state[i] != 1)
                continue;
            os_req *r = reqs[i];
            os_attempt *a = r->att;
            r->att = NULL;
            curl_easy_getinfo(a->easy, CURLINFO_RESPONSE_CODE, &r->status);
            CURLcode cc = a->cc;
            curl_off_t up = 0;
            curl_easy_getinfo(a->easy, CURLINFO_SIZE_UPLOAD_T, &up);
            atomic_fetch_add(&c->st[ST_IN], r->resp_len);
            atomic_fetch_add(&c->st[ST_OUT], (uint64_t)up);
            int expired = a->expired;
            long long limit_s = (a->deadline_ns - a->start_ns) / 1000000000;
            attempt_free(a);
            char what[200], code[64];
            tfb_os_describe(c, r, what, sizeof what);
            int k = classify(r, cc);
            r->err.status = r->status;
            if (cc == CURLE_ABORTED_BY_CALLBACK && c->cancelled)
                k = TFB_ECLOSED;
            else if (r->too_big)
                k = TFB_EIO; /* the same answer again: not retried */
            /* no retry past the caller's deadline: it would end at once */
            if (k == 1 && r->deadline_ns &&
                (long long)tfb_mono_now_ns() >= r->deadline_ns)
                left[i] = 1;
            if (k == 1 && --left[i] > 0) {
                retry = 1;
                atomic_fetch_add(&c->st[ST_RETRY], 1);
                continue;
            }
            state[i] = 2;
            if (k == 0) {
                r->rc = 0;
                continue;
            }
            error_code(r, code, sizeof code);
            if (r->too_big)
                snprintf(r->err.msg, sizeof r->err.msg,
                         "%s: an answer longer than %zu MiB, the most a "
                         "listing page (an XML answer) may be",
                         what, TFB_OS_XML_MAX >> 20);
            else if (expired)
                snprintf(r->err.msg, sizeof r->err.msg,
                         "%s: no complete answer within its deadline "
                         "(%lld s) after %d attempt%s",
                         what, limit_s, r->err.attempts,
                         r->err.attempts == 1 ? "" : "s");
            else if (cc != CURLE_OK && k != TFB_ECLOSED)
                snprintf(r->err.msg, sizeof r->err.msg,
                         "%s: %s after %d attempt%s", what,
                         curl_easy_strerror(cc), r->err.attempts,
                         r->err.attempts == 1 ? "" : "s");
            else if (k == TFB_ECLOSED)
                snprintf(r->err.msg, sizeof r->err.msg, "%s: cancelled",
                         what);
            else
                snprintf(r->err.msg, sizeof r->err.msg,
                         "%s: HTTP %ld%s%s after %d attempt%s", what,
                         r->status, code[0] ? " " : "", code,
                         r->err.attempts, r->err.attempts == 1 ? "" : "s");
            r->rc = k == 1 ? TFB_EIO : k;
            atomic_fetch_add(&c->st[ST_FAIL], 1);
        }
        if (!retry)
            break;
        /* Backoff, cut short by tfb_os_cancel. */
        struct timespec ts;
        tfb_deadline_after_ms(&ts, (unsigned)backoff_ms(c, attempt++));
        pthread_mutex_lock(&c->mu);
        while (!c->cancelled &&
               pthread_cond_timedwait(&c->cv, &c->mu, &ts) == 0)
            ;
        pthread_mutex_unlock(&c->mu);
    }
    for (size_t i = 0; i < n; i++)
        if (reqs[i]->rc < 0 && !first)
            first = reqs[i]->rc;
    free(left);
    free(state);
    return first;
}

void tfb_os_count_skipped(tfb_os *c, uint64_t n)
{
    atomic_fetch_add(&c->st[ST_SKIP], n);
}

void tfb_os_req_free(os_req *r)
{
    if (!r)
        return;
    tfb_vec_free(&r->grown);
    r->resp = NULL;
}

/* ---- the client -------------------------------------------------------- */

static char *dup_s(const char *s)
{
    return s ? strdup(s) : NULL;
}

int tfb_os_create_with(tfb_os **out, const tfb_os_config *cfg)
{
    pthread_once(&g_curl_once, curl_init_once);
    tfb_os *c = calloc(1, sizeof *c);
    if (!c)
        return TFB_ENOMEM;
    c->cfg = *cfg;
    c->cfg.endpoint = dup_s(cfg->endpoint);
    c->cfg.region = dup_s(cfg->region);
    c->cfg.access_key = dup_s(cfg->access_key);
    c->cfg.secret_key = dup_s(cfg->secret_key);
    c->cfg.session_token = dup_s(cfg->session_token);
    snprintf(c->scheme, sizeof c->scheme, "%s",
             strstr(cfg->endpoint ? cfg->endpoint : "", "storage.googleapis")
                 ? "gs" : "s3");
    const char *ep = c->cfg.endpoint ? strstr(c->cfg.endpoint, "://") : NULL;
    if (!ep || !c->cfg.region) {
        tfb_os_config_free(&c->cfg);
        free(c);
        return TFB_EINVAL;
    }
    c->base = strdup(c->cfg.endpoint);
    c->host = strdup(ep + 3);
    char *slash = c->host ? strchr(c->host, '/') : NULL;
    if (slash)
        *slash = 0;
    c->seed = (unsigned)time(NULL) ^ (unsigned)(uintptr_t)c;
    c->multi = curl_multi_init();
    if (!c->base || !c->host || !c->multi) {
        tfb_os_destroy(c);
        return TFB_ENOMEM;
    }
    curl_multi_setopt(c->multi, CURLMOPT_MAX_HOST_CONNECTIONS, 16L);
    curl_multi_setopt(c->multi, CURLMOPT_MAXCONNECTS, 32L);
    pthread_mutex_init(&c->mu, NULL);
    tfb_cond_init_monotonic(&c->cv);
    if (pthread_create(&c->thread, NULL, loop_main, c) != 0) {
        pthread_mutex_destroy(&c->mu);
        pthread_cond_destroy(&c->cv);
        curl_multi_cleanup(c->multi);
        c->multi = NULL;
        tfb_os_destroy(c);
        return TFB_ENOMEM;
    }
    *out = c;
    return 0;
}

int tfb_os_create(tfb_os **out, const char *scheme, char *err, size_t errlen)
{
    tfb_os_config cfg;
    if (tfb_os_config_load(&cfg, scheme, err, errlen) < 0)
        return TFB_EINVAL;
    int rc = tfb_os_create_with(out, &cfg);
    tfb_os_config_free(&cfg);
    if (rc < 0)
        snprintf(err, errlen, "%s", tfb_strerror(rc));
    return rc;
}

void tfb_os_cancel(tfb_os *c)
{
    if (!c)
        return;
    pthread_mutex_lock(&c->mu);
    c->cancelled = 1;
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
    curl_multi_wakeup(c->multi);
}

void tfb_os_destroy(tfb_os *c)
{
    if (!c)
        return;
    if (c->multi && c->host && c->base) {
        pthread_mutex_lock(&c->mu);
        c->stop = 1;
        pthread_mutex_unlock(&c->mu);
        curl_multi_wakeup(c->multi);
        pthread_join(c->thread, NULL);
        pthread_mutex_destroy(&c->mu);
        pthread_cond_destroy(&c->cv);
    }
    if (c->multi)
        curl_multi_cleanup(c->multi);
    free(c->host);
    free(c->base);
    tfb_os_config_free(&c->cfg);
    free(c);
}

void tfb_os_get_stats(tfb_os *c, tfb_os_stats *o)
{
    o->requests = atomic_load(&c->st[ST_REQ]);
    o->lists = atomic_load(&c->st[ST_LIST]);
    o->gets = atomic_load(&c->st[ST_GET]);
    o->heads = atomic_load(&c->st[ST_HEAD]);
    o->puts = atomic_load(&c->st[ST_PUT]);
    o->bytes_in = atomic_load(&c->st[ST_IN]);
    o->bytes_out = atomic_load(&c->st[ST_OUT]);
    o->retries = atomic_load(&c->st[ST_RETRY]);
    o->failures = atomic_load(&c->st[ST_FAIL]);
    o->skipped = atomic_load(&c->st[ST_SKIP]);
}

const char *tfb_os_scheme(const tfb_os *c)
{
    return c->scheme;
}

int tfb_os_anonymous(const tfb_os *c)
{
    return c->cfg.access_key == NULL;
}
