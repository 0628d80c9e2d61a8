/*
 * http.h - the HTTP server: a listening socket and libmicrohttpd's thread
 * pool (epoll), dispatching /data/... to the route table and everything
 * else to the web UI files.
 *
 * Thread-safety: start/stop from one thread;
 * requests are answered on the pool's threads.
 */
#ifndef TFB_SERVER_HTTP_H
#define TFB_SERVER_HTTP_H

#include <stdio.h>

#include "core/config.h"
#include "store/store.h"

typedef struct tfb_server tfb_server;

/* Binds cfg->host (or every address with bind_all) at cfg->port and
 * starts serving. On failure writes a clear message to err (port in use,
 * address not available, bad --webui_dir, unreadable --tls_cert) and
 * returns a negative code. Bound beyond loopback, requests need a token
 * (http_auth.h) unless cfg->no_auth. */
int tfb_server_start(tfb_server **out, const tfb_config *cfg,
                     tfb_store *store, FILE *err);
/* The port actually bound (useful with --port 0). */
int tfb_server_port(const tfb_server *s);
/* The access token tfboard made up (bound beyond loopback without
 * --token or --no_auth; http_auth.h), for the banner's URL; NULL when it
 * made none. Owned by s. */
const char *tfb_server_made_token(const tfb_server *s);
/* 1 when requests need a token (made up or chosen). */
int tfb_server_needs_token(const tfb_server *s);
/* 1 when serving HTTPS (--tls_cert/--tls_key). */
int tfb_server_is_tls(const tfb_server *s);
/* Stops serving and frees. NULL-safe. */
void tfb_server_stop(tfb_server *s);

#endif
