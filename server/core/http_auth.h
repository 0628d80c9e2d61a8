/*
 * http_auth.h - the access token of a shared server: who may ask, how
 * fast a wrong guess may be repeated, and where a visit with the token goes
 * next.
 *
 * A server bound to anything but loopback answers only requests that
 * carry the token (README "Sharing a server"): as ?token= (a page visit;
 * the answer then sets a cookie), as the cookie, or as an
 * `Authorization: Bearer T` / `Authorization: token T` header (scripts).
 * The cookie holds a random secret of this process, not the token, so a
 * token seen in a browser's history is not a session and a restart ends
 * every session.
 *
 * Wrong tokens (in the query or a header) are counted per client address
 * (an IPv6 client by its /64): after TFB_AUTH_FREE_FAILURES of them the
 * address must wait, 1 s doubling with each further failure up to 5
 * minutes; a token from it meanwhile is not even compared and gets 429
 * with the seconds left. A wrong cookie (a stale one after a restart) is
 * a 401 but no failure: it is a 256-bit secret, and a browser sends it
 * with every asset. A valid cookie is accepted while the address waits,
 * so a guesser behind the same proxy cannot lock out those signed in.
 *
 * Nothing here logs, and no error text contains the token.
 *
 * Thread-safety: tfb_auth_check may be called from many threads at once
 * (the failure table has its own lock); create/destroy from one thread.
 */
#ifndef TFB_SERVER_HTTP_AUTH_H
#define TFB_SERVER_HTTP_AUTH_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

typedef struct tfb_auth tfb_auth;

/* Wrong tokens an address may send before it must wait. */
#define TFB_AUTH_FREE_FAILURES 5
/* A generated token: 32 random bytes as 64 hex digits, and the NUL. */
#define TFB_AUTH_TOKEN_MAX 257
#define TFB_AUTH_GEN_LEN 64

typedef enum tfb_auth_verdict {
    TFB_AUTH_OK,        /* no token needed, or a valid cookie or header */
    TFB_AUTH_OK_QUERY,  /* a valid ?token=: set the cookie */
    TFB_AUTH_MISSING,   /* no credentials, or a stale cookie: 401 */
    TFB_AUTH_WRONG,     /* a wrong token (counted): 401 */
    TFB_AUTH_LIMITED,   /* this address must wait: 429 */
} tfb_auth_verdict;

/* What a request presented; any may be NULL. */
typedef struct tfb_auth_creds {
    const char *query_token;   /* the decoded ?token= value */
    const char *cookie;        /* the whole Cookie header */
    const char *authorization; /* the Authorization header */
} tfb_auth_creds;

/* token NULL: every request is allowed (loopback default, --no_auth).
 * Else token is copied; port names the cookie (browsers share cookies
 * across the ports of a host); secure adds the Secure attribute (TLS).
 * Returns 0, TFB_ENOMEM, or TFB_EIO when no random bytes can be read. */
int tfb_auth_create(tfb_auth **out, const char *token, int port, int secure);
/* NULL-safe. */
void tfb_auth_destroy(tfb_auth *a);

/* 1 when requests need the token. */
int tfb_auth_required(const tfb_auth *a);

/* Judges one request from client (its socket address; NULL counts as one
 * unknown address) at now_ns (a monotonic clock). For TFB_AUTH_LIMITED,
 * *retry_after_s gets the whole seconds to wait (at least 1). */
tfb_auth_verdict tfb_auth_check(tfb_auth *a, const struct sockaddr *client,
                                const tfb_auth_creds *creds, int64_t now_ns,
                                unsigned *retry_after_s);

/* The Set-Cookie header value for a request that sent a valid token.
 * Returns its length, or 0 when it does not fit cap. */
size_t tfb_auth_set_cookie(const tfb_auth *a, char *out, size_t cap);

/* Where a page visited with ?token= goes once the cookie is set: raw (the
 * request's raw URI, or NULL) without its token parameters, so the token
 * leaves the address bar and the history. A path that would name another
 * host ("//host", "/\host") becomes "/". malloc'd; NULL when out of
 * memory. */
char *tfb_auth_location(const char *raw);

/* The HTML page (no script) that sends a browser on to loc, HTML-escaped,
 * for a visit another site started: a SameSite=Strict cookie goes neither
 * with that navigation nor with its redirects, but with a navigation a
 * page of ours starts. malloc'd, *len bytes; NULL when out of memory. */
char *tfb_auth_hop_page(const char *loc, size_t *len);

/* Writes a new token (TFB_AUTH_GEN_LEN hex digits from /dev/urandom) to
 * out, which must hold TFB_AUTH_GEN_LEN + 1 bytes. Returns 0 or TFB_EIO. */
int tfb_auth_token_generate(char *out);

/* Checks a chosen token: 8 to 256 printable ASCII characters, no space.
 * Returns 0, or TFB_EINVAL with the reason (never the token) in why. */
int tfb_auth_token_valid(const char *token, char *why, size_t cap);

/* 1 when addr is a loopback address (127.0.0.0/8, ::1, or ::ffff:127.x). */
int tfb_auth_is_loopback(const struct sockaddr *addr);

/* 1 when a and b are equal, in a time that depends on b's length only
 * (b is the secret). */
int tfb_auth_equal(const char *a, const char *b);

#endif
