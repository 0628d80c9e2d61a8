/*
 * http_auth.c - the access token and the wrong-token limiter (see
 * http_auth.h).
 */
#include "core/http_auth.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "tfboard.h"

#define SECRET_BYTES 32
#define LOCK_BASE_NS 1000000000LL       /* the first wait: 1 s */
#define LOCK_MAX_NS (300 * 1000000000LL) /* at most 5 minutes */
/* An address whose last failure is this old starts afresh. */
#define FORGET_NS (15 * 60 * 1000000000LL)
/* Addresses remembered at once; past that the stalest is forgotten (an
 * attacker with many addresses gains little: each still gets
 * TFB_AUTH_FREE_FAILURES guesses at most). */
#define MAX_CLIENTS 4096
#define KEY_MAX 48

typedef struct failures {
    char key[KEY_MAX];   /* the client address (IPv6: its /64) */
    unsigned count;      /* wrong tokens since the slate was clean */
    int64_t last_ns;     /* the last wrong token */
    int64_t until_ns;    /* no token is compared before this */
} failures;

struct tfb_auth {
    char *token; /* NULL: no token needed */
    char cookie_name[32];
    char cookie_value[2 * SECRET_BYTES + 1];
    int secure;
    pthread_mutex_t mu;
    failures *tab;
    size_t n;
};

static int read_random(unsigned char *out, size_t n)
{
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return TFB_EIO;
    size_t got = 0;
    while (got < n) {
        ssize_t r = read(fd, out + got, n - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    close(fd);
    return got == n ? 0 : TFB_EIO;
}

static void to_hex(const unsigned char *b, size_t n, char *out)
{
    static const char hx[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = hx[b[i] >> 4];
        out[2 * i + 1] = hx[b[i] & 15];
    }
    out[2 * n] = 0;
}

int tfb_auth_token_generate(char *out)
{
    unsigned char b[TFB_AUTH_GEN_LEN / 2];
    int rc = read_random(b, sizeof b);
    if (rc < 0)
        return rc;
    to_hex(b, sizeof b, out);
    memset(b, 0, sizeof b);
    return 0;
}

int tfb_auth_token_valid(const char *token, char *why, size_t cap)
{
    size_t n = strlen(token);
    if (n < 8 || n >= TFB_AUTH_TOKEN_MAX) {
        snprintf(why, cap, "the token must be 8 to %d characters long "
                           "(it has %zu)", TFB_AUTH_TOKEN_MAX - 1, n);
        return TFB_EINVAL;
    }
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)token[i] <= ' ' || (unsigned char)token[i] > '~') {
            snprintf(why, cap, "the token must be printable ASCII without "
                               "spaces (character %zu is not)", i + 1);
            return TFB_EINVAL;
        }
    return 0;
}

int tfb_auth_equal(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    /* Every byte of the secret is looked at whatever a holds; a shorter
     * a is read as zeros past its end. */
    unsigned diff = la != lb;
    for (size_t i = 0; i < lb; i++) {
        unsigned char x = i < la ? (unsigned char)a[i] : 0;
        diff |= x ^ (unsigned char)b[i];
    }
    return diff == 0;
}

int tfb_auth_is_loopback(const struct sockaddr *addr)
{
    if (!addr)
        return 0;
    if (addr->sa_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)addr;
        return (ntohl(in->sin_addr.s_addr) >> 24) == 127;
    }
    if (addr->sa_family == AF_INET6) {
        const struct in6_addr *a6 =
            &((const struct sockaddr_in6 *)addr)->sin6_addr;
        if (IN6_IS_ADDR_LOOPBACK(a6))
            return 1;
        return IN6_IS_ADDR_V4MAPPED(a6) && a6->s6_addr[12] == 127;
    }
    return 0;
}

int tfb_auth_create(tfb_auth **out, const char *token, int port, int secure)
{
    tfb_auth *a = calloc(1, sizeof *a);
    if (!a)
        return TFB_ENOMEM;
    pthread_mutex_init(&a->mu, NULL);
    a->secure = secure;
    snprintf(a->cookie_name, sizeof a->cookie_name, "tfboard_%d", port);
    if (token) {
        unsigned char b[SECRET_BYTES];
        int rc = read_random(b, sizeof b);
        if (rc < 0) {
            tfb_auth_destroy(a);
            return rc;
        }
        to_hex(b, sizeof b, a->cookie_value);
        memset(b, 0, sizeof b);
        a->token = strdup(token);
        a->tab = calloc(MAX_CLIENTS, sizeof *a->tab);
        if (!a->token || !a->tab) {
            tfb_auth_destroy(a);
            return TFB_ENOMEM;
        }
    }
    *out = a;
    return 0;
}

void tfb_auth_destroy(tfb_auth *a)
{
    if (!a)
        return;
    if (a->token) {
        memset(a->token, 0, strlen(a->token));
        free(a->token);
    }
    memset(a->cookie_value, 0, sizeof a->cookie_value);
    free(a->tab);
    pthread_mutex_destroy(&a->mu);
    free(a);
}

int tfb_auth_required(const tfb_auth *a)
{
    return a && a->token;
}

size_t tfb_auth_set_cookie(const tfb_auth *a, char *out, size_t cap)
{
    /* No Max-Age: a session cookie, and the secret dies with the process
     * anyway. Strict: no other site can make a browser send it. */
    int n = snprintf(out, cap, "%s=%s; Path=/; HttpOnly; SameSite=Strict%s",
                     a->cookie_name, a->cookie_value,
                     a->secure ? "; Secure" : "");
    return n > 0 && (size_t)n < cap ? (size_t)n : 0;
}

/* The limiter's key for an address: IPv4 (also v4-mapped) as dotted
 * quad; IPv6 by its /64, which one host usually holds whole. */
static void client_key(const struct sockaddr *addr, char *key)
{
    if (addr && addr->sa_family == AF_INET) {
        inet_ntop(AF_INET, &((const struct sockaddr_in *)addr)->sin_addr, key,
                  KEY_MAX);
        return;
    }
    if (addr && addr->sa_family == AF_INET6) {
        const struct in6_addr *a6 =
            &((const struct sockaddr_in6 *)addr)->sin6_addr;
        if (IN6_IS_ADDR_V4MAPPED(a6)) {
            inet_ntop(AF_INET, a6->s6_addr + 12, key, KEY_MAX);
            return;
        }
        struct in6_addr net = *a6;
        memset(net.s6_addr + 8, 0, 8);
        inet_ntop(AF_INET6, &net, key, KEY_MAX - 4);
        strcat(key, "/64");
        return;
    }
    strcpy(key, "?");
}

/* The entry for key, made when make is set (the stalest one is reused
 * when the table is full). Called with a->mu held. */
static failures *lookup(tfb_auth *a, const char *key, int make,
                        int64_t now_ns)
{
    failures *oldest = NULL;
    for (size_t i = 0; i < a->n; i++) {
        failures *f = &a->tab[i];
        if (!strcmp(f->key, key))
            return f;
        if (!oldest || f->last_ns < oldest->last_ns)
            oldest = f;
    }
    if (!make)
        return NULL;
    failures *f = a->n < MAX_CLIENTS ? &a->tab[a->n++] : oldest;
    memset(f, 0, sizeof *f);
    snprintf(f->key, sizeof f->key, "%s", key);
    f->last_ns = now_ns;
    return f;
}

/* The token after "Bearer " or "token " (any case, any spaces), or NULL. */
static const char *header_token(const char *h)
{
    if (!h)
        return NULL;
    while (*h == ' ')
        h++;
    size_t skip = !strncasecmp(h, "Bearer ", 7) ? 7
                  : !strncasecmp(h, "token ", 6) ? 6
                                                 : 0;
    if (!skip)
        return NULL;
    h += skip;
    while (*h == ' ')
        h++;
    return h;
}

/* 1 when the Cookie header holds our cookie with the right secret, 0 when
 * it is absent or stale. */
static int cookie_ok(const tfb_auth *a, const char *cookie)
{
    if (!cookie)
        return 0;
    size_t nl = strlen(a->cookie_name);
    for (const char *p = cookie; *p;) {
        while (*p == ' ' || *p == ';')
            p++;
        const char *end = strchr(p, ';');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len > nl && p[nl] == '=' && !strncmp(p, a->cookie_name, nl)) {
            char v[2 * SECRET_BYTES + 2];
            size_t vl = len - nl - 1;
            if (vl >= sizeof v)
                vl = sizeof v - 1; /* too long: cannot match */
            memcpy(v, p + nl + 1, vl);
            v[vl] = 0;
            if (tfb_auth_equal(v, a->cookie_value))
                return 1;
        }
        p += len;
    }
    return 0;
}

tfb_auth_verdict tfb_auth_check(tfb_auth *a, const struct sockaddr *client,
                                const tfb_auth_creds *creds, int64_t now_ns,
                                unsigned *retry_after_s)
{
    if (!tfb_auth_required(a))
        return TFB_AUTH_OK;
    if (cookie_ok(a, creds->cookie))
        /* Signed in already; a right ?token= still takes the token out of
         * the address bar (a wrong one there is no guess worth counting:
         * the cookie shows the token is known). */
        return creds->query_token && tfb_auth_equal(creds->query_token,
                                                    a->token)
                   ? TFB_AUTH_OK_QUERY
                   : TFB_AUTH_OK;
    const char *hdr = header_token(creds->authorization);
    const char *tok = creds->query_token ? creds->query_token : hdr;
    if (!tok || !*tok)
        return TFB_AUTH_MISSING;

    char key[KEY_MAX];
    client_key(client, key);
    pthread_mutex_lock(&a->mu);
    failures *f = lookup(a, key, 0, now_ns);
    if (f && now_ns - f->last_ns > FORGET_NS)
        f->count = 0, f->until_ns = 0;
    if (f && now_ns < f->until_ns) {
        int64_t left = f->until_ns - now_ns;
        *retry_after_s = (unsigned)((left + 999999999) / 1000000000);
        pthread_mutex_unlock(&a->mu);
        return TFB_AUTH_LIMITED;
    }
    /* Compared under the lock too: one address cannot race many guesses
     * past the count. */
    int ok = tfb_auth_equal(tok, a->token);
    if (ok && hdr && creds->query_token && !tfb_auth_equal(hdr, a->token))
        ok = 0; /* two tokens, one wrong: a guess all the same */
    if (ok) {
        if (f)
            f->count = 0;
        pthread_mutex_unlock(&a->mu);
        return creds->query_token ? TFB_AUTH_OK_QUERY : TFB_AUTH_OK;
    }
    if (!f)
        f = lookup(a, key, 1, now_ns);
    f->count++;
    f->last_ns = now_ns;
    if (f->count >= TFB_AUTH_FREE_FAILURES) {
        unsigned extra = f->count - TFB_AUTH_FREE_FAILURES;
        int64_t wait = extra >= 9 ? LOCK_MAX_NS : LOCK_BASE_NS << extra;
        f->until_ns = now_ns + (wait < LOCK_MAX_NS ? wait : LOCK_MAX_NS);
    }
    pthread_mutex_unlock(&a->mu);
    return TFB_AUTH_WRONG;
}

char *tfb_auth_location(const char *raw)
{
    if (!raw)
        return strdup("/");
    size_t n = strlen(raw);
    char *out = malloc(n + 2);
    if (!out)
        return NULL;
    const char *q = strchr(raw, '?');
    size_t pl = q ? (size_t)(q - raw) : n, w;
    /* "//host/..." (and "/\host" for some browsers) names another host:
     * never send a visitor there. */
    if (pl == 0 || raw[0] != '/' || raw[1] == '/' || raw[1] == '\\') {
        out[0] = '/';
        w = 1;
    } else {
        memcpy(out, raw, pl);
        w = pl;
    }
    char sep = '?';
    for (const char *p = q ? q + 1 : ""; *p;) {
        const char *e = strchr(p, '&');
        size_t l = e ? (size_t)(e - p) : strlen(p);
        int is_token = l >= 5 && !strncmp(p, "token", 5) &&
                       (l == 5 || p[5] == '=');
        if (l && !is_token) {
            out[w++] = sep;
            memcpy(out + w, p, l);
            w += l;
            sep = '&';
        }
        p += l;
        if (*p == '&')
            p++;
    }
    out[w] = 0;
    return out;
}

char *tfb_auth_hop_page(const char *loc, size_t *len)
{
    size_t n = strlen(loc);
    char *esc = malloc(6 * n + 1), *w = esc;
    if (!esc)
        return NULL;
    for (const char *p = loc; *p; p++) {
        const char *rep = *p == '&'    ? "&amp;"
                          : *p == '<'  ? "&lt;"
                          : *p == '>'  ? "&gt;"
                          : *p == '"'  ? "&quot;"
                          : *p == '\'' ? "&#39;"
                                       : NULL;
        if (rep) {
            memcpy(w, rep, strlen(rep));
            w += strlen(rep);
        } else {
            *w++ = *p;
        }
    }
    *w = 0;
    size_t cap = 2 * (size_t)(w - esc) + 200;
    char *page = malloc(cap);
    if (page) {
        int k = snprintf(page, cap,
                         "<!doctype html><meta http-equiv=\"refresh\" "
                         "content=\"0;url=%s\"><title>tfboard</title>"
                         "<link rel=\"icon\" href=\"/favicon.svg\">"
                         "<a href=\"%s\">tfboard</a>\n",
                         esc, esc);
        *len = (size_t)k;
    }
    free(esc);
    return page;
}
