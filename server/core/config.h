/*
 * config.h - what the server is started with: the parsed command line of
 * `tfboard` (serve mode; server/cli.c's tfb_cli_parse_serve, defaults
 * there too). Dashboards declare their own options in their descriptor
 * (plugin.h); this header names no plugin.
 *
 * Thread-safety: filled once before any thread starts, read-only
 * afterwards, so any thread may read it without a lock.
 */
#ifndef TFB_SERVER_CONFIG_H
#define TFB_SERVER_CONFIG_H

#include <stdio.h>

#define TFB_CONFIG_MAX_ALLOW_HOSTS 16

typedef struct tfb_config {
    const char *logdir;      /* --logdir DIR (required); points into argv */
    const char *host;        /* --host ADDR; default "127.0.0.1" */
    int bind_all;            /* --bind_all: listen on every address */
    int port;                /* --port N; default 6006; 0 = pick a free one */
    double reload_interval;  /* --reload_interval S; default 5; 0 = load once */
    const char *webui_dir;   /* --webui_dir DIR; NULL = embedded assets */
    int load_threads;        /* --load_threads N; 0 = one per CPU */
    int http_threads;        /* --http_threads N; 0 = 8 per CPU, 32..128 */
    int quiet;               /* --quiet: no messages but errors */
    /* --allow_host NAME (repeatable): Host header values accepted besides
     * the bound address, localhost, 127.0.0.1 and ::1 (DNS rebinding:
     * other Hosts get 403 unless --bind_all). */
    const char *allow_hosts[TFB_CONFIG_MAX_ALLOW_HOSTS];
    int n_allow_hosts;
    int max_conn_per_client; /* --max_connections_per_client N; default 64 */
    double request_timeout;  /* --request_timeout S: a request must arrive
                                whole within S seconds of the connection
                                (or of the last answer); default 30 */
    const char *cache_dir;   /* --cache_dir DIR: the columnar trace cache
                                (trace_cachedir.h); NULL = the default
                                ($XDG_CACHE_HOME/tfboard), "" = none */
    /* Access (README "Sharing a server"; core/http_auth.h). A server not
     * bound to loopback needs a token unless no_auth; token NULL then
     * means tfboard makes one up and prints it in the URL. */
    const char *token;       /* --token T, else $TFBOARD_TOKEN, else NULL */
    int no_auth;             /* --no_auth: no token, whatever the address */
    const char *tls_cert;    /* --tls_cert FILE (PEM): serve HTTPS */
    const char *tls_key;     /* --tls_key FILE (PEM); with tls_cert */
} tfb_config;

#endif
