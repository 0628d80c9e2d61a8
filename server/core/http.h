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
#include "core/store.h"

typedef struct tfb_server tfb_server;

/* Binds cfg->host (or every address with bind_all) at cfg->port and
 * starts serving. On failure writes a clear message to err (port in use,
 * address not available, bad --webui-dir) and returns a negative code. */
int tfb_server_start(tfb_server **out, const tfb_config *cfg,
                     tfb_store *store, FILE *err);
/* The port actually bound (useful with --port 0). */
int tfb_server_port(const tfb_server *s);
/* Stops serving and frees. NULL-safe. */
void tfb_server_stop(tfb_server *s);

#endif
