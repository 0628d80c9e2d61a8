/*
 * http.c - libmicrohttpd glue: the listening socket, the thread pool and
 * the request callback (see http.h).
 *
 * We create and bind the socket ourselves and hand it to libmicrohttpd, so
 * that "port in use" and "address not available" reach the user as clear
 * messages, and --port 0 can report the port it got.
 */
#include "core/http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "base/deadline.h"
#include "collector/file_source.h"
#include "core/http_auth.h"
#include "core/http_internal.h"
#include "core/static_files.h"
#include "base/vec.h"

/* One open connection, for the request deadline: libmicrohttpd's own
 * timeout is an idle timeout, which a client sending a byte now and then
 * resets forever (and 4,096 such connections made the server
 * unreachable). */
typedef struct conn_track {
    int fd;
    int64_t deadline_ns; /* INT64_MAX while a request is being answered */
    struct conn_track *prev, *next;
} conn_track;

#define SOCKET_SNDBUF (512 * 1024)

struct tfb_server {
    struct MHD_Daemon *daemon;
    int fd;
    int port;
    const tfb_config *cfg;
    tfb_store *store;
    char *webui_root; /* realpath of --webui_dir, or NULL */
    tfb_auth *auth;   /* who may ask (http_auth.h) */
    /* Requests that arrived whole, until their answer is sent (see
     * send_answer): while there are any, streams step aside (parked, see
     * STREAM_BLOCK). */
    atomic_int waiting;
    pthread_mutex_t park_mu;
    struct stream_state *parked; /* suspended streams, newest first */
    atomic_int n_parked;
    int no_parking; /* stopping: MHD must not stop with suspended ones */
    /* Deferred answers (tfb_http_defer) not yet finished: their
     * connections are suspended, so the stop waits for them. */
    int n_later;
    pthread_cond_t later_cv; /* with park_mu: n_later fell to 0 */
    char *made_token; /* the token tfboard made up, or NULL */
    char *tls_cert, *tls_key; /* PEM text while serving HTTPS */
    /* the deadline reaper */
    pthread_mutex_t conn_mu;
    pthread_cond_t conn_cv;
    conn_track conns; /* list head */
    pthread_t reaper;
    int have_reaper, stopping;
    int64_t timeout_ns;
};

static int64_t mono_now_ns(void)
{
    return (int64_t)tfb_mono_now_ns();
}

static conn_track *track_of(struct MHD_Connection *c)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return ci ? ci->socket_context : NULL;
}

static void set_deadline(tfb_server *s, struct MHD_Connection *c,
                         int64_t deadline)
{
    conn_track *t = track_of(c);
    if (!t)
        return;
    pthread_mutex_lock(&s->conn_mu);
    t->deadline_ns = deadline;
    pthread_mutex_unlock(&s->conn_mu);
}

/* The headers are in: the answer may take as long as it takes (a long
 * download is not a slow client). */
static void conn_request_started(tfb_server *s, struct MHD_Connection *c)
{
    set_deadline(s, c, INT64_MAX);
}

/* Answered: the next request on this keep-alive connection must arrive
 * whole within the timeout too. */
static void conn_request_done(tfb_server *s, struct MHD_Connection *c)
{
    set_deadline(s, c, mono_now_ns() + s->timeout_ns);
}

static void on_connection(void *cls, struct MHD_Connection *c,
                          void **socket_context,
                          enum MHD_ConnectionNotificationCode code)
{
    tfb_server *s = cls;
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        conn_track *t = calloc(1, sizeof *t);
        const union MHD_ConnectionInfo *ci =
            MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
        if (!t || !ci) {
            free(t);
            *socket_context = NULL;
            return;
        }
        t->fd = ci->connect_fd;
        t->deadline_ns = mono_now_ns() + s->timeout_ns;
        /* Streamed answers are made as fast as the socket takes them: a
         * bounded send buffer keeps a stalled client from making us format
         * megabytes ahead (the kernel would autotune it to 4 MB). */
        int sndbuf = SOCKET_SNDBUF;
        setsockopt(t->fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof sndbuf);
        pthread_mutex_lock(&s->conn_mu);
        t->next = s->conns.next;
        t->prev = &s->conns;
        s->conns.next->prev = t;
        s->conns.next = t;
        pthread_mutex_unlock(&s->conn_mu);
        *socket_context = t;
    } else if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
        conn_track *t = *socket_context;
        if (!t)
            return;
        /* Unlinked before libmicrohttpd closes the fd, so the reaper never
         * shuts down a number that was reused. */
        pthread_mutex_lock(&s->conn_mu);
        t->prev->next = t->next;
        t->next->prev = t->prev;
        pthread_mutex_unlock(&s->conn_mu);
        free(t);
        *socket_context = NULL;
    }
}

/* Shuts down the connections whose request did not arrive in time;
 * libmicrohttpd then sees the end of the stream and closes them. */
static void unpark_stale(tfb_server *s, int64_t now_ns);

static void *reaper_main(void *arg)
{
    tfb_server *s = arg;
    pthread_mutex_lock(&s->conn_mu);
    while (!s->stopping) {
        int64_t now = mono_now_ns();
        for (conn_track *t = s->conns.next; t != &s->conns; t = t->next)
            if (t->deadline_ns <= now) {
                shutdown(t->fd, SHUT_RDWR);
                t->deadline_ns = INT64_MAX;
            }
        struct timespec ts;
        /* Parked streams are looked at often (unpark_stale). */
        tfb_deadline_after_ms(&ts, atomic_load(&s->n_parked) ? 10 : 250);
        pthread_cond_timedwait(&s->conn_cv, &s->conn_mu, &ts);
        pthread_mutex_unlock(&s->conn_mu);
        unpark_stale(s, mono_now_ns());
        pthread_mutex_lock(&s->conn_mu);
    }
    pthread_mutex_unlock(&s->conn_mu);
    return NULL;
}

static const char *mhd_query(void *ctx, const char *name)
{
    return MHD_lookup_connection_value((struct MHD_Connection *)ctx,
                                       MHD_GET_ARGUMENT_KIND, name);
}

typedef struct query_all_ctx {
    const char *name;
    const char **out;
    size_t max, n;
} query_all_ctx;

static enum MHD_Result query_all_one(void *cls, enum MHD_ValueKind kind,
                                     const char *key, const char *value)
{
    (void)kind;
    query_all_ctx *q = cls;
    if (key && strcmp(key, q->name) == 0) {
        if (q->n < q->max)
            q->out[q->n] = value ? value : "";
        q->n++;
    }
    return MHD_YES;
}

static size_t mhd_query_all(void *ctx, const char *name, const char **out,
                            size_t max)
{
    query_all_ctx q = {name, out, max, 0};
    MHD_get_connection_values((struct MHD_Connection *)ctx,
                              MHD_GET_ARGUMENT_KIND, query_all_one, &q);
    return q.n;
}

static int hexval(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Percent-decoding of the path and query values, in place. A decoded NUL
 * would silently cut the C string ("/index.html%00.js" would name
 * /index.html), so it becomes 0x01, which every consumer rejects. */
static size_t unescape(void *cls, struct MHD_Connection *c, char *s)
{
    (void)cls;
    (void)c;
    char *w = s;
    for (const char *r = s; *r; r++) {
        int h, l;
        if (r[0] == '%' && (h = hexval(r[1])) >= 0 && (l = hexval(r[2])) >= 0) {
            int v = h * 16 + l;
            *w++ = (char)(v ? v : 1);
            r += 2;
        } else {
            *w++ = *r;
        }
    }
    *w = 0;
    return (size_t)(w - s);
}

/* Fairness. Each pool thread takes its connections in turn, one block of
 * each streamed answer per turn, so a small request waits for a block of
 * every stream on its thread, and for the CPU the streams of the other
 * threads take. With 64 KiB blocks and 40 full CSV downloads, /data/runs
 * took 0.6 to 1.3 s (tests/bench/bench_fair.py). So blocks are 16 KiB (the
 * socket's send buffer, SOCKET_SNDBUF, still holds many; the download rate
 * went up), and while any other request waits for its answer, a stream
 * steps aside: it suspends its connection ("parks") and is resumed when no
 * request waits any more, or after PARK_MAX_NS, when it makes one block
 * before it may park again (so downloads progress under any load). */
#define STREAM_BLOCK (16 * 1024)
#define PARK_MAX_NS (50 * 1000000LL)

typedef struct stream_state {
    tfb_http_stream_fn fn;
    void *ctx;
    void (*free_ctx)(void *ctx);
    tfb_server *srv;
    struct MHD_Connection *conn;
    struct stream_state *next_parked; /* in srv->parked */
    int64_t parked_ns;
    int must_send; /* resumed by the clock: one block before parking */
} stream_state;

/* Resumes the parked streams (all, or those parked before before_ns);
 * called with park_mu held. */
static void unpark_locked(tfb_server *s, int64_t before_ns)
{
    for (stream_state **pp = &s->parked; *pp;) {
        stream_state *st = *pp;
        if (st->parked_ns >= before_ns) {
            pp = &st->next_parked;
            continue;
        }
        *pp = st->next_parked;
        st->next_parked = NULL;
        st->must_send = before_ns != INT64_MAX;
        atomic_fetch_sub(&s->n_parked, 1);
        MHD_resume_connection(st->conn);
    }
}

static void unpark_stale(tfb_server *s, int64_t now_ns)
{
    if (!atomic_load(&s->n_parked))
        return;
    pthread_mutex_lock(&s->park_mu);
    unpark_locked(s, now_ns - PARK_MAX_NS);
    pthread_mutex_unlock(&s->park_mu);
}

/* A request's answer is under way: when no other one waits, the parked
 * streams go on. The counts are sequentially consistent, and park() counts
 * itself before it looks at waiting: either it sees this request gone, or
 * this sees it parked and resumes it under the lock. */
static void done_waiting(tfb_server *s)
{
    if (atomic_fetch_sub(&s->waiting, 1) != 1 || !atomic_load(&s->n_parked))
        return;
    pthread_mutex_lock(&s->park_mu);
    if (atomic_load(&s->waiting) == 0)
        unpark_locked(s, INT64_MAX);
    pthread_mutex_unlock(&s->park_mu);
}

/* Suspends the stream's connection while other requests wait; returns 1
 * when it did (the callback then returns 0 and is called again once
 * resumed). */
static int park(stream_state *st)
{
    tfb_server *s = st->srv;
    if (st->must_send || !atomic_load(&s->waiting))
        return 0;
    pthread_mutex_lock(&s->park_mu);
    atomic_fetch_add(&s->n_parked, 1);
    if (s->no_parking || !atomic_load(&s->waiting)) {
        atomic_fetch_sub(&s->n_parked, 1);
        pthread_mutex_unlock(&s->park_mu);
        return 0;
    }
    MHD_suspend_connection(st->conn);
    st->parked_ns = mono_now_ns();
    st->next_parked = s->parked;
    s->parked = st;
    pthread_mutex_unlock(&s->park_mu);
    return 1;
}

static ssize_t stream_cb(void *cls, uint64_t pos, char *buf, size_t max)
{
    (void)pos;
    stream_state *st = cls;
    if (park(st))
        return 0;
    st->must_send = 0;
    long n = st->fn(st->ctx, buf, max);
    if (n < 0)
        return MHD_CONTENT_READER_END_WITH_ERROR;
    if (n == 0)
        return MHD_CONTENT_READER_END_OF_STREAM;
    return (ssize_t)n;
}

static void stream_free(void *cls)
{
    stream_state *st = cls;
    if (st->free_ctx)
        st->free_ctx(st->ctx);
    free(st);
}

static struct MHD_Response *make_response(tfb_http_resp *a, tfb_server *srv,
                                          struct MHD_Connection *c)
{
    if (!a->stream) {
        struct MHD_Response *r = MHD_create_response_from_buffer(
            a->len, a->body ? a->body : (void *)"", a->body ?
            MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT);
        if (r)
            a->body = NULL; /* owned by the response now */
        return r;
    }
    stream_state *st = calloc(1, sizeof *st);
    if (!st)
        return NULL;
    st->fn = a->stream;
    st->ctx = a->stream_ctx;
    st->free_ctx = a->stream_free;
    st->srv = srv;
    st->conn = c;
    struct MHD_Response *r = MHD_create_response_from_callback(
        MHD_SIZE_UNKNOWN, STREAM_BLOCK, stream_cb, st, stream_free);
    if (!r) {
        free(st);
        return NULL;
    }
    /* Owned by the response now: freed by stream_free. */
    a->stream = NULL;
    a->stream_ctx = NULL;
    a->stream_free = NULL;
    return r;
}

/* The request's state, from the URI log callback (called with the raw
 * URI, before anything is parsed) to the completion callback. */
typedef struct req_state {
    int too_long;
    int seen; /* on_request ran once (headers in) */
    /* PUT to a route that accepts it: the body, at most the route's
     * bound (tfb_route_find_put: TFB_HTTP_PUT_MAX, or
     * TFB_SELECTION_BODY_MAX for /data/selection; past that it is dropped
     * and the answer is 413). */
    TFB_VEC(char) body; /* NUL-terminated once non-empty */
    int body_too_big;
    tfb_server *srv;
    int waiting; /* counted in srv->waiting */
    /* Access (http_auth.h), judged once the headers are in. */
    tfb_auth_verdict auth;
    unsigned retry_after_s;
    char *raw_uri;         /* kept when it may hold ?token= (the redirect) */
    char *location;        /* the redirect's target, or NULL */
    char set_cookie[160];  /* a Set-Cookie value for the answer, or "" */
    struct tfb_http_later *later; /* a deferred answer (tfb_http_defer) */
} req_state;

/* A deferred answer: the connection is suspended from tfb_http_defer
 * until tfb_http_later_finish resumes it; libmicrohttpd then calls
 * on_request again, which sends `answer`. */
struct tfb_http_later {
    tfb_http_resp answer;
    tfb_server *srv;
    struct MHD_Connection *conn;
    atomic_int done;
};

static tfb_http_later *later_defer(const tfb_http_req *req);

static void stop_waiting(req_state *rs)
{
    if (rs && rs->waiting) {
        rs->waiting = 0;
        done_waiting(rs->srv);
    }
}

static enum MHD_Result send_answer(struct MHD_Connection *c,
                                   tfb_http_resp *a, int is_data,
                                   req_state *rs)
{
    /* Counted until sent, unless the answer is a stream (not what the
     * others wait for) or too large for the socket's buffer (a client that
     * does not read it would keep the streams parked). */
    if (a->stream || a->len > SOCKET_SNDBUF / 2)
        stop_waiting(rs);
    struct MHD_Response *r = make_response(a, rs->srv, c);
    if (!r) {
        tfb_http_resp_clear(a);
        return MHD_NO;
    }
    if (rs && rs->set_cookie[0])
        MHD_add_response_header(r, MHD_HTTP_HEADER_SET_COOKIE,
                                rs->set_cookie);
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
                            a->content_type ? a->content_type
                                            : "application/octet-stream");
    MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
    if (a->cache_control)
        MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL,
                                a->cache_control);
    else if (is_data)
        MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
    if (a->status == 405)
        MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
    if (a->status == 401)
        MHD_add_response_header(r, MHD_HTTP_HEADER_WWW_AUTHENTICATE,
                                "Bearer realm=\"tfboard\"");
    if (a->status == 429 && rs) {
        char secs[16];
        snprintf(secs, sizeof secs, "%u", rs->retry_after_s);
        MHD_add_response_header(r, MHD_HTTP_HEADER_RETRY_AFTER, secs);
    }
    if (rs && rs->location) {
        if (a->status == 303)
            MHD_add_response_header(r, MHD_HTTP_HEADER_LOCATION,
                                    rs->location);
        /* The address with the token goes nowhere else. */
        MHD_add_response_header(r, "Referrer-Policy", "no-referrer");
    }
    enum MHD_Result ret = MHD_queue_response(c, a->status ? a->status : 500,
                                             r);
    MHD_destroy_response(r);
    return ret;
}

/* Requests with more query parameters than this, or a longer URI, get 414
 * before libmicrohttpd parses them: each parameter takes room in the
 * connection's memory pool, and a pool that overflows left the client
 * without an answer. */
#define MAX_QUERY_PARAMS 256
#define MAX_URI_BYTES (16 * 1024)
#define CONN_MEMORY_LIMIT (1024 * 1024)

static void *on_uri(void *cls, const char *uri, struct MHD_Connection *c)
{
    (void)c;
    req_state *st = calloc(1, sizeof *st);
    if (!st)
        return NULL;
    st->srv = cls;
    size_t params = 0, len = 0;
    for (const char *p = uri; *p; p++, len++)
        params += *p == '&' || *p == '?';
    st->too_long = params > MAX_QUERY_PARAMS || len > MAX_URI_BYTES;
    if (!st->too_long && strstr(uri, "token="))
        st->raw_uri = strdup(uri); /* NULL: no redirect, still served */
    return st;
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    (void)toe;
    req_state *st = *con_cls;
    if (st) {
        stop_waiting(st);
        if (st->later) {
            tfb_http_resp_clear(&st->later->answer);
            free(st->later);
        }
        tfb_vec_free(&st->body);
        free(st->raw_uri);
        free(st->location);
    }
    free(st);
    *con_cls = NULL;
    conn_request_done(cls, c);
}

/* The host name of a "host[:port]" of n bytes ("[v6]:port" too) into
 * name; 0 when it does not fit or is malformed. */
static int host_name(const char *host, size_t n, char *name, size_t cap)
{
    if (n >= cap)
        return 0;
    memcpy(name, host, n);
    name[n] = 0;
    if (name[0] == '[') {
        char *end = strchr(name, ']');
        if (!end)
            return 0;
        *end = 0;
        memmove(name, name + 1, strlen(name + 1) + 1);
    } else {
        /* host:port; a bare IPv6 address (several colons) is left. */
        char *colon = strrchr(name, ':');
        if (colon && strchr(name, ':') == colon)
            *colon = 0;
    }
    return 1;
}

static int allowed_name(const tfb_config *cfg, const char *name)
{
    for (int i = 0; i < cfg->n_allow_hosts; i++)
        if (!strcasecmp(name, cfg->allow_hosts[i]))
            return 1;
    return 0;
}

/* DNS rebinding: a page on evil.example that resolves to 127.0.0.1 can
 * read the API unless the Host header is checked. Accepted: no Host
 * (HTTP/1.0), the bound address, localhost, 127.0.0.1, [::1], and each
 * --allow_host; with --bind_all, any. The port is ignored. */
static int host_allowed(const tfb_config *cfg, const char *host)
{
    if (!host || cfg->bind_all)
        return 1;
    char name[256];
    if (!host_name(host, strlen(host), name, sizeof name))
        return 0;
    return !strcasecmp(name, "localhost") || !strcmp(name, "127.0.0.1") ||
           !strcmp(name, "::1") || !strcasecmp(name, cfg->host) ||
           allowed_name(cfg, name);
}

/* Cross-site requests. A loopback server needs no token and a GET needs
 * no CORS preflight, so any page the user has open could make the browser
 * ask /data/reload (for a bucket, a billed listing each), a costly query
 * or an export: it cannot read the answer, but the work is done. No
 * /data route answers a request that the browser marks as sent by another
 * site (Sec-Fetch-Site: cross-site, which current browsers send) or whose
 * Origin is not this server (what older browsers send with a cross-origin
 * fetch or form). Our pages send neither, nor does a script (curl); pages
 * and assets still open from a link on another site. Same origin: the
 * Origin's host[:port] is the request's Host (behind a proxy that rewrites
 * Host, the proxy's public name given with --allow_host, any port); "null"
 * (a sandboxed frame, a file:// page) is foreign. Writes why into why and
 * returns 1 when the request is refused. */
static int cross_site(const tfb_config *cfg, struct MHD_Connection *c,
                      char *why, size_t why_len)
{
    const char *site =
        MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Sec-Fetch-Site");
    if (site && !strcasecmp(site, "cross-site")) {
        snprintf(why, why_len, "the browser sent it for a page of another "
                               "site (Sec-Fetch-Site: cross-site)");
        return 1;
    }
    const char *origin =
        MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Origin");
    if (!origin)
        return 0;
    const char *host = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
                                                   MHD_HTTP_HEADER_HOST);
    const char *auth = strstr(origin, "://");
    auth = auth ? auth + 3 : NULL;
    if (auth && !strchr(auth, '/')) {
        size_t n = strlen(auth);
        char name[256];
        if (host && strlen(host) == n && !strncasecmp(auth, host, n))
            return 0; /* same origin */
        if (host_name(auth, n, name, sizeof name) && allowed_name(cfg, name))
            return 0; /* a proxy's public name */
    }
    snprintf(why, why_len, "Origin %.100s is not this server (behind a "
                           "proxy, name its public host with --allow_host)",
             origin);
    return 1;
}

/* Judges the request's credentials once its headers are in (and counts a
 * wrong token once per request). */
static void judge_access(tfb_server *s, struct MHD_Connection *c,
                         req_state *rs)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    tfb_auth_creds cr = {
        MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "token"),
        MHD_lookup_connection_value(c, MHD_HEADER_KIND,
                                    MHD_HTTP_HEADER_COOKIE),
        MHD_lookup_connection_value(c, MHD_HEADER_KIND,
                                    MHD_HTTP_HEADER_AUTHORIZATION),
    };
    rs->auth = tfb_auth_check(s->auth, ci ? ci->client_addr : NULL, &cr,
                              mono_now_ns(), &rs->retry_after_s);
    if (rs->auth == TFB_AUTH_OK_QUERY &&
        !tfb_auth_set_cookie(s->auth, rs->set_cookie, sizeof rs->set_cookie))
        rs->set_cookie[0] = 0;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c,
                                  const char *url, const char *method,
                                  const char *version, const char *upload,
                                  size_t *upload_size, void **con_cls)
{
    tfb_http_resp a = {0};
    req_state *rs = *con_cls;
    if (!rs)
        return MHD_NO; /* out of memory in on_uri */
    tfb_server *s = cls;
    /* The first call comes with the headers only. Answering on it would be
     * an answer before the request was read, for which libmicrohttpd
     * closes the connection; answer on the next call and keep-alive works.
     */
    if (!rs->seen) {
        rs->seen = 1;
        conn_request_started(s, c);
        judge_access(s, c, rs);
        return MHD_YES;
    }
    if (rs->later) {
        /* Resumed by tfb_http_later_finish (or a spurious call while
         * suspended, which waits on). */
        if (!atomic_load(&rs->later->done))
            return MHD_YES;
        tfb_http_resp ans = rs->later->answer;
        free(rs->later);
        rs->later = NULL;
        return send_answer(c, &ans, 1, rs);
    }
    /* A request refused before its body is read (URI too long, Host not
     * allowed) still has its body drained first: an answer queued while
     * upload data is pending makes libmicrohttpd drop the connection, and
     * the client would get an empty reply instead of the reason. */
    int host_ok = host_allowed(s->cfg, MHD_lookup_connection_value(
                                           c, MHD_HEADER_KIND,
                                           MHD_HTTP_HEADER_HOST));
    int is_data = strncmp(url, "/data/", 6) == 0 || strcmp(url, "/data") == 0;
    char foreign[200];
    int cross = is_data && cross_site(s->cfg, c, foreign, sizeof foreign);
    if ((rs->too_long || !host_ok || cross) && *upload_size) {
        *upload_size = 0;
        return MHD_YES;
    }
    if (!*upload_size && !rs->waiting) {
        /* Whole (a body, if any, is in): its answer is made now. */
        rs->waiting = 1;
        atomic_fetch_add(&s->waiting, 1);
    }
    if (rs->too_long) {
        tfb_http_error(&a, 414, "request URI too long: at most %d query "
                                "parameters and %d bytes",
                       MAX_QUERY_PARAMS, MAX_URI_BYTES);
        return send_answer(c, &a, 1, rs);
    }
    if (!host_ok) {
        tfb_http_error(&a, 403, "Host header not allowed (DNS rebinding "
                                "protection); start tfboard with "
                                "--allow_host NAME or --bind_all");
        return send_answer(c, &a, 1, rs);
    }
    if (cross) {
        tfb_http_error(&a, 403, "cross-site request refused: %s; tfboard's "
                                "/data routes answer its own pages and "
                                "scripts only",
                       foreign);
        return send_answer(c, &a, 1, rs);
    }
    if (rs->auth == TFB_AUTH_LIMITED || rs->auth == TFB_AUTH_MISSING ||
        rs->auth == TFB_AUTH_WRONG) {
        /* Every route, asset and download; a body is read and dropped, so
         * the answer goes out on a connection that can be kept. */
        if (*upload_size) {
            *upload_size = 0;
            return MHD_YES;
        }
        if (rs->auth == TFB_AUTH_LIMITED)
            tfb_http_error(&a, 429, "too many wrong tokens from this "
                                    "address: try again in %u s",
                           rs->retry_after_s);
        else
            tfb_http_error(&a, 401, "this tfboard needs its access token: "
                                    "open the URL it printed (with "
                                    "?token=), or send the header "
                                    "Authorization: Bearer TOKEN");
        return send_answer(c, &a, 1, rs);
    }
    if (rs->auth == TFB_AUTH_OK_QUERY && !is_data &&
        (!strcmp(method, "GET") || !strcmp(method, "HEAD"))) {
        /* A page visit with ?token=: the cookie is set, and the browser
         * goes on to the same address without the token. */
        rs->location = tfb_auth_location(rs->raw_uri);
        if (!rs->location)
            return MHD_NO;
        const char *site = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
                                                       "Sec-Fetch-Site");
        if (site && !strcasecmp(site, "cross-site")) {
            /* A link on another site (a chat message): a SameSite=Strict
             * cookie is sent neither on that navigation nor on its
             * redirects, so the next address would be a 401. The browser
             * goes on from a page of ours instead, a same-site
             * navigation. */
            size_t len;
            char *page = tfb_auth_hop_page(rs->location, &len);
            if (!page)
                return MHD_NO;
            tfb_http_body_take(&a, 200, "text/html; charset=utf-8", page,
                               len);
        } else {
            tfb_http_text(&a, 303, "text/plain; charset=utf-8", "", 0);
        }
        return send_answer(c, &a, 1, rs);
    }
    size_t body_max = TFB_HTTP_PUT_MAX;
    tfb_http_handler put_h =
        strcmp(method, "PUT") == 0    ? tfb_route_find_put(url, &body_max)
        : strcmp(method, "POST") == 0 ? tfb_route_find_post(url, &body_max)
                                      : NULL;
    int is_put = put_h != NULL;
    if (is_put && *upload_size) {
        /* Collect the body, capped; keep draining past the cap so the
         * answer (413) goes out on a connection that can be kept. */
        size_t n = *upload_size;
        *upload_size = 0;
        if (rs->body_too_big)
            return MHD_YES;
        if (n > body_max - rs->body.n) {
            rs->body_too_big = 1;
            tfb_vec_free(&rs->body);
            return MHD_YES;
        }
        if (tfb_vec_need(&rs->body, rs->body.n + n + 1) < 0)
            return MHD_NO;
        memcpy(rs->body.v + rs->body.n, upload, n);
        rs->body.n += n;
        rs->body.v[rs->body.n] = '\0';
        return MHD_YES;
    }
    if (is_put) {
        const char *ct = MHD_lookup_connection_value(
            c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE);
        /* application/json only (parameters such as charset allowed): a
         * type a cross-site form cannot send without a preflight. */
        if (!ct || strncasecmp(ct, "application/json", 16) != 0 ||
            (ct[16] && ct[16] != ';' && ct[16] != ' ')) {
            tfb_http_error(&a, 415, "%s needs Content-Type: "
                                    "application/json", method);
            return send_answer(c, &a, 1, rs);
        }
        if (rs->body_too_big) {
            tfb_http_error(&a, 413, "body over %zu bytes", body_max);
            return send_answer(c, &a, 1, rs);
        }
        tfb_http_req req = {url,
                            mhd_query,
                            c,
                            s->store,
                            s->cfg,
                            method[1] == 'U' ? "PUT" : "POST",
                            rs->body.v ? rs->body.v : "",
                            rs->body.n,
                            mhd_query_all,
                            later_defer,
                            rs};
        int rc = put_h(&req, &a);
        if (rs->later) {
            /* Suspended by tfb_http_defer: answered on resumption. */
            tfb_http_resp_clear(&a);
            return MHD_YES;
        }
        if (!tfb_http_resp_is_set(&a))
            tfb_http_error(&a, 500, "internal error: %s", tfb_strerror(rc));
        return send_answer(c, &a, 1, rs);
    }
    if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0) {
        if (*upload_size) {
            *upload_size = 0; /* discard any body */
            return MHD_YES;
        }
        tfb_http_error(&a, 405, "method not allowed");
        return send_answer(c, &a, 1, rs);
    }
    (void)upload;
    (void)version;
    if (is_data) {
        tfb_http_req req = {url,    mhd_query, c,    s->store,    s->cfg,
                            method, NULL,      0,    mhd_query_all, later_defer,
                            rs};
        tfb_http_dispatch(&req, &a);
    } else {
        tfb_static_serve(s->webui_root, url, &a);
    }
    return send_answer(c, &a, is_data, rs);
}

/* Binds a listening socket for host:port; returns the fd or a negative
 * code after writing the reason to err. */
static int bind_socket(const tfb_config *cfg, FILE *err, int *port_out,
                       int *loopback_out)
{
    struct addrinfo hints, *res = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    hints.ai_family = AF_UNSPEC;
    char portstr[16];
    snprintf(portstr, sizeof portstr, "%d", cfg->port);
    const char *host = cfg->bind_all ? NULL : cfg->host;
    if (cfg->bind_all)
        hints.ai_family = AF_INET6; /* :: with dual stack, else 0.0.0.0 */
    int gai = getaddrinfo(host, portstr, &hints, &res);
    if (gai != 0 && cfg->bind_all) {
        hints.ai_family = AF_INET;
        gai = getaddrinfo(NULL, portstr, &hints, &res);
    }
    if (gai != 0) {
        fprintf(err, "tfboard: cannot resolve host '%s': %s\n",
                host ? host : "*", gai_strerror(gai));
        return TFB_EINVAL;
    }
    int fd = -1, last_errno = 0;
    for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC,
                    ai->ai_protocol);
        if (fd < 0) {
            last_errno = errno;
            continue;
        }
        int one = 1;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (ai->ai_family == AF_INET6) {
            int v6only = cfg->bind_all ? 0 : 1;
            setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &v6only, sizeof v6only);
        }
        if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 &&
            listen(fd, 1024) == 0)
            break;
        last_errno = errno;
        close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    if (fd < 0) {
        if (last_errno == EADDRINUSE)
            fprintf(err,
                    "tfboard: port %d is already in use on %s; pick another "
                    "with --port\n",
                    cfg->port, host ? host : "all addresses");
        else
            fprintf(err, "tfboard: cannot listen on %s port %d: %s\n",
                    host ? host : "all addresses", cfg->port,
                    strerror(last_errno));
        return TFB_EIO;
    }
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    int port = cfg->port;
    *loopback_out = 0;
    if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0) {
        *loopback_out = tfb_auth_is_loopback((struct sockaddr *)&ss);
        if (ss.ss_family == AF_INET)
            port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
        else if (ss.ss_family == AF_INET6)
            port = ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
    }
    *port_out = port;
    return fd;
}

/* At most 4,096 connections, and never so many that accepting them would
 * take the descriptors event files and traces need (a server at the fd
 * limit spins on EMFILE instead of answering). */
static unsigned connection_limit(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
        return 4096;
    rlim_t room = rl.rlim_cur > 256 ? rl.rlim_cur - 128 : rl.rlim_cur / 2;
    return room < 4096 ? (unsigned)room : 4096;
}

/* A PEM file's text, at most 1 MiB, NUL-terminated; NULL after writing
 * the reason to err. A regular file only, opened without blocking, as
 * the event files are (collector/file_source.h): this runs at start-up
 * with SIGINT and SIGTERM blocked (cli.c waits for them with sigwait), so
 * a FIFO with no writer would hang tfboard past Ctrl+C, and a device
 * would be read as if it were a key. */
static char *read_pem(const char *path, const char *opt, FILE *err)
{
    enum { PEM_MAX = 1 << 20 };
    int fd;
    struct stat st;
    int orc = tfb_file_open_regular(path, &fd, &st);
    if (orc < 0) {
        fprintf(err, "tfboard: %s %s: %s\n", opt, path,
                orc == TFB_ENOTFILE ? "not a regular file (a PEM file is "
                                      "read whole at start-up)"
                                    : tfb_strerror(orc));
        return NULL;
    }
    char *buf = malloc(PEM_MAX + 1);
    size_t n = 0;
    ssize_t r = 0;
    while (buf && n < PEM_MAX &&
           ((r = read(fd, buf + n, PEM_MAX - n)) > 0 ||
            (r < 0 && errno == EINTR)))
        n += r > 0 ? (size_t)r : 0;
    int read_errno = r < 0 ? errno : 0;
    close(fd);
    if (!buf) {
        fprintf(err, "tfboard: out of memory\n");
        return NULL;
    }
    buf[n] = 0;
    const char *why = read_errno ? strerror(read_errno)
                      : n == PEM_MAX ? "larger than 1 MiB"
                      : !strstr(buf, "-----BEGIN ") ? "not a PEM file"
                                                    : NULL;
    if (why) {
        fprintf(err, "tfboard: %s %s: %s\n", opt, path, why);
        free(buf);
        return NULL;
    }
    return buf;
}

/* Reads --tls_cert/--tls_key, after checking that this libmicrohttpd can
 * serve HTTPS. Returns 0 (also without TLS) or a negative code after
 * writing the reason to err. */
static int load_tls(tfb_server *s, const tfb_config *cfg, FILE *err)
{
    if (!cfg->tls_cert)
        return 0;
    if (MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES) {
        fprintf(err, "tfboard: this libmicrohttpd was built without TLS "
                     "(GnuTLS), so --tls_cert cannot be served; install "
                     "one with HTTPS support or put a TLS proxy in front\n");
        return TFB_EINVAL;
    }
    s->tls_cert = read_pem(cfg->tls_cert, "--tls_cert", err);
    s->tls_key = s->tls_cert ? read_pem(cfg->tls_key, "--tls_key", err)
                             : NULL;
    return s->tls_key ? 0 : TFB_EINVAL;
}

/* Whether requests need a token (http_auth.h): always with --token or
 * TFBOARD_TOKEN; never with --no_auth; else when the bound address is not
 * loopback, with one made up here for the banner to print. */
static int setup_auth(tfb_server *s, const tfb_config *cfg, int loopback,
                      FILE *err)
{
    const char *token = cfg->no_auth ? NULL : cfg->token;
    char made[TFB_AUTH_GEN_LEN + 1];
    if (!cfg->no_auth && !token && !loopback) {
        if (tfb_auth_token_generate(made) < 0) {
            fprintf(err, "tfboard: cannot read /dev/urandom to make an "
                         "access token\n");
            return TFB_EIO;
        }
        s->made_token = strdup(made);
        memset(made, 0, sizeof made);
        if (!s->made_token)
            return TFB_ENOMEM;
        token = s->made_token;
    }
    int rc = tfb_auth_create(&s->auth, token, s->port, cfg->tls_cert != NULL);
    if (rc < 0)
        fprintf(err, "tfboard: cannot set up the access token: %s\n",
                tfb_strerror(rc));
    return rc;
}

static void free_server(tfb_server *s)
{
    pthread_mutex_destroy(&s->park_mu);
    pthread_cond_destroy(&s->later_cv);
    tfb_auth_destroy(s->auth);
    if (s->made_token) {
        memset(s->made_token, 0, strlen(s->made_token));
        free(s->made_token);
    }
    if (s->tls_key) {
        memset(s->tls_key, 0, strlen(s->tls_key));
        free(s->tls_key);
    }
    free(s->tls_cert);
    free(s->webui_root);
    free(s);
}

/* Each pool thread serves its connections in turn, so a thread that holds
 * a streamed download is busy for as long as it lasts, and a small request
 * is answered at once only by a thread that holds none: more threads than
 * the downloads a team runs at once (40 full CSV downloads left /data/runs
 * at 1.3 s with one thread per CPU). Idle threads cost a stack and an
 * epoll descriptor. 8 per CPU, 32 to 128. */
static unsigned default_http_threads(void)
{
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    long t = ncpu > 0 ? 8 * ncpu : 32;
    return t < 32 ? 32 : t > 128 ? 128 : (unsigned)t;
}

static void stop_reaper(tfb_server *s)
{
    pthread_mutex_lock(&s->conn_mu);
    s->stopping = 1;
    pthread_cond_signal(&s->conn_cv);
    pthread_mutex_unlock(&s->conn_mu);
    if (s->have_reaper)
        pthread_join(s->reaper, NULL);
    s->have_reaper = 0;
    pthread_mutex_destroy(&s->conn_mu);
    pthread_cond_destroy(&s->conn_cv);
}

int tfb_server_start(tfb_server **out, const tfb_config *cfg,
                     tfb_store *store, FILE *err)
{
    tfb_server *s = calloc(1, sizeof *s);
    if (!s)
        return TFB_ENOMEM;
    s->cfg = cfg;
    s->store = store;
    s->fd = -1;
    pthread_mutex_init(&s->park_mu, NULL);
    pthread_cond_init(&s->later_cv, NULL);
    if (cfg->webui_dir) {
        s->webui_root = realpath(cfg->webui_dir, NULL);
        if (!s->webui_root) {
            fprintf(err, "tfboard: --webui_dir %s: %s\n", cfg->webui_dir,
                    strerror(errno));
            free_server(s);
            return TFB_ENOENT;
        }
    }
    int loopback = 0;
    int fd = bind_socket(cfg, err, &s->port, &loopback);
    if (fd < 0) {
        free_server(s);
        return fd;
    }
    int rc = load_tls(s, cfg, err);
    if (rc == 0)
        rc = setup_auth(s, cfg, loopback, err);
    if (rc < 0) {
        close(fd);
        free_server(s);
        return rc;
    }
    s->fd = fd;
    atomic_init(&s->waiting, 0);
    atomic_init(&s->n_parked, 0);
    s->timeout_ns = (int64_t)(cfg->request_timeout * 1e9);
    s->conns.next = s->conns.prev = &s->conns;
    pthread_mutex_init(&s->conn_mu, NULL);
    tfb_cond_init_monotonic(&s->conn_cv);
    s->have_reaper = pthread_create(&s->reaper, NULL, reaper_main, s) == 0;
    unsigned threads = cfg->http_threads > 0 ? (unsigned)cfg->http_threads
                                             : default_http_threads();
    struct MHD_OptionItem tls_opts[] = {
        {MHD_OPTION_HTTPS_MEM_KEY, 0, s->tls_key},
        {MHD_OPTION_HTTPS_MEM_CERT, 0, s->tls_cert},
        {MHD_OPTION_END, 0, NULL},
    };
    s->daemon = MHD_start_daemon(
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL |
            MHD_ALLOW_SUSPEND_RESUME |
            (s->tls_cert ? MHD_USE_TLS : 0),
        0, NULL, NULL,
        on_request, s, MHD_OPTION_LISTEN_SOCKET, fd,
        MHD_OPTION_THREAD_POOL_SIZE, threads,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)60,
        MHD_OPTION_CONNECTION_LIMIT, connection_limit(),
        MHD_OPTION_PER_IP_CONNECTION_LIMIT,
        (unsigned)cfg->max_conn_per_client,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)CONN_MEMORY_LIMIT,
        MHD_OPTION_NOTIFY_CONNECTION, on_connection, s,
        MHD_OPTION_URI_LOG_CALLBACK, on_uri, s,
        MHD_OPTION_NOTIFY_COMPLETED, on_completed, s,
        MHD_OPTION_UNESCAPE_CALLBACK, unescape, (void *)NULL,
        MHD_OPTION_ARRAY, s->tls_cert ? tls_opts : tls_opts + 2,
        MHD_OPTION_END);
    if (!s->daemon) {
        fprintf(err, "tfboard: the HTTP server could not start%s\n",
                s->tls_cert ? " (are --tls_cert and --tls_key a PEM "
                              "certificate and its private key?)"
                            : "");
        close(fd);
        stop_reaper(s);
        free_server(s);
        return TFB_EIO;
    }
    s->fd = -1; /* libmicrohttpd closes the listening socket at stop */
    *out = s;
    return 0;
}

int tfb_server_port(const tfb_server *s)
{
    return s->port;
}

static tfb_http_later *later_defer(const tfb_http_req *req)
{
    req_state *rs = req->later_ctx;
    if (!rs || rs->later)
        return NULL;
    tfb_server *s = rs->srv;
    tfb_http_later *l = calloc(1, sizeof *l);
    if (!l)
        return NULL;
    pthread_mutex_lock(&s->park_mu);
    if (s->no_parking) { /* stopping: answer at once */
        pthread_mutex_unlock(&s->park_mu);
        free(l);
        return NULL;
    }
    s->n_later++;
    pthread_mutex_unlock(&s->park_mu);
    l->srv = s;
    l->conn = req->query_ctx;
    rs->later = l;
    /* Suspended now, before any other thread can finish it (a resume
     * must follow its suspend); a deferred request is no longer one that
     * the streams step aside for (it may take seconds). */
    MHD_suspend_connection(l->conn);
    stop_waiting(rs);
    return l;
}

tfb_http_resp *tfb_http_later_resp(tfb_http_later *l)
{
    return &l->answer;
}

void tfb_http_later_finish(tfb_http_later *l)
{
    /* Read before `done`: from then on the HTTP thread may send the
     * answer and free l. */
    tfb_server *s = l->srv;
    struct MHD_Connection *c = l->conn;
    if (!tfb_http_resp_is_set(&l->answer))
        tfb_http_error(&l->answer, 500, "internal error: no answer");
    pthread_mutex_lock(&s->park_mu);
    atomic_store(&l->done, 1);
    MHD_resume_connection(c);
    if (--s->n_later == 0)
        pthread_cond_broadcast(&s->later_cv);
    pthread_mutex_unlock(&s->park_mu);
}

void tfb_server_stop(tfb_server *s)
{
    if (!s)
        return;
    if (s->daemon) {
        /* libmicrohttpd must not stop with suspended connections: the
         * deferred answers are finished (their owners bound them) and
         * the parked streams resumed. */
        pthread_mutex_lock(&s->park_mu);
        s->no_parking = 1;
        while (s->n_later > 0)
            pthread_cond_wait(&s->later_cv, &s->park_mu);
        unpark_locked(s, INT64_MAX);
        pthread_mutex_unlock(&s->park_mu);
        MHD_stop_daemon(s->daemon);
    }
    stop_reaper(s);
    if (s->fd >= 0)
        close(s->fd);
    free_server(s);
}

const char *tfb_server_made_token(const tfb_server *s)
{
    return s->made_token;
}

int tfb_server_needs_token(const tfb_server *s)
{
    return tfb_auth_required(s->auth);
}

int tfb_server_is_tls(const tfb_server *s)
{
    return s->tls_cert != NULL;
}
