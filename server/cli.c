/*
 * cli.c - `tfboard`: serve a logdir (its options: a table for core's
 * parser, core/options.h; then the token and TLS checks), `tfboard report
 * ...` (report/report.c), or `tfboard watch ...` (watch.c).
 */
#include <errno.h>
#include <malloc.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "tfboard.h"
#include "core/config.h"
#include "core/http_auth.h"
#include "core/options.h"
#include "core/plugin.h"
#include "core/http.h"
#include "store/loader.h"
#include "store/storage.h"
#include "store/store.h"
#include "report/report.h"
#include "plugins/registry.h"
#include "trace/trace.h"
#include "query_cli.h"
#include "watch.h"

/* ---- the serve command line (core/options.h) ---- */

static void config_defaults(tfb_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->host = "127.0.0.1";
    cfg->port = 6006;
    cfg->reload_interval = 5;
    cfg->max_conn_per_client = 64;
    cfg->request_timeout = 30;
}

/* --cache_dir: "" is a value here (no cache), unlike other strings. */
static int set_cache_dir(void *user, const char *const *v, char *why,
                         size_t why_len)
{
    (void)why;
    (void)why_len;
    *(const char **)user = v[0];
    return 0;
}

/* The token (from --token or $TFBOARD_TOKEN) and TLS options; messages
 * never include the token. */
static int check_access(tfb_config *cfg, FILE *err)
{
    const char *from = "--token";
    /* An explicit --no_auth outranks a token left in the environment. */
    if (!cfg->token && !cfg->no_auth) {
        const char *env = getenv("TFBOARD_TOKEN");
        if (env && *env) {
            cfg->token = env;
            from = "TFBOARD_TOKEN";
        }
    }
    char why[128];
    if (cfg->token && tfb_auth_token_valid(cfg->token, why, sizeof why) < 0) {
        fprintf(err, "tfboard: bad %s: %s\n", from, why);
        return TFB_EINVAL;
    }
    if (cfg->token && cfg->no_auth) {
        fprintf(err, "tfboard: %s and --no_auth contradict each other; "
                     "choose one\n", from);
        return TFB_EINVAL;
    }
    if (!cfg->tls_cert != !cfg->tls_key) {
        fprintf(err, "tfboard: HTTPS needs both --tls_cert FILE and "
                     "--tls_key FILE\n");
        return TFB_EINVAL;
    }
    return 0;
}

int tfb_cli_parse_serve(tfb_config *cfg, int argc, char **argv, FILE *out,
                        FILE *err)
{
    config_defaults(cfg);
    int version = 0;
    const tfb_option opts[] = {
        {"logdir", "DIR", "directory of runs (required), or a bucket:\n"
         "s3://bucket/prefix, gs://bucket/prefix", TFB_OPT_STRING,
         .dest = &cfg->logdir},
        {"port", "N", "port to listen on; 0 = any free port", TFB_OPT_INT,
         "6006", 0, 65535, &cfg->port},
        {"host", "ADDR", "address to listen on", TFB_OPT_STRING, "127.0.0.1",
         .dest = &cfg->host},
        {"bind_all", NULL, "listen on every address (IPv4 and IPv6)",
         TFB_OPT_FLAG, .dest = &cfg->bind_all},
        {"reload_interval", "S", "seconds between reloads; 0 = load once",
         TFB_OPT_DOUBLE, "5", 0, HUGE_VAL, &cfg->reload_interval},
        {"webui_dir", "DIR", "serve the web UI from DIR instead of the "
         "embedded copy", TFB_OPT_STRING, .dest = &cfg->webui_dir},
        {"load_threads", "N", "threads that load runs", TFB_OPT_INT,
         "one per CPU", 0, 64, &cfg->load_threads},
        {"http_threads", "N", "threads that answer requests, so downloads "
         "leave threads free", TFB_OPT_INT, "8 per CPU, 32 to 128", 0, 256,
         &cfg->http_threads},
        {"allow_host", "NAME", "also accept requests whose Host header is "
         "NAME (others than the bound address and localhost get 403, "
         "against DNS rebinding; --bind_all accepts any; repeatable)",
         TFB_OPT_STRINGS, .max = TFB_CONFIG_MAX_ALLOW_HOSTS,
         .dest = cfg->allow_hosts},
        {"max_connections_per_client", "N", "connections one address may "
         "hold", TFB_OPT_INT, "64", 1, 100000, &cfg->max_conn_per_client},
        {"request_timeout", "S", "a request must arrive whole within S "
         "seconds", TFB_OPT_DOUBLE, "30", 0.1, HUGE_VAL,
         &cfg->request_timeout},
        {"cache_dir", "DIR", "where GPU traces are cached after their first "
         "load; \"\" = no cache; never inside the logdir; s3://bucket/"
         "prefix (or gs://) shares them with every server over the bucket",
         TFB_OPT_CALL, "$XDG_CACHE_HOME/tfboard, else ~/.cache/tfboard",
         .dest = &(tfb_opt_call){set_cache_dir, &cfg->cache_dir, 1}},
        {"token", "T", "the access token (better: set TFBOARD_TOKEN=T, "
         "which ps does not show); needed by every request. Default: "
         "none on loopback; made up and printed in the URL when bound to "
         "other addresses", TFB_OPT_STRING, .dest = &cfg->token},
        {"no_auth", NULL, "no token, even when bound to other addresses",
         TFB_OPT_FLAG, .dest = &cfg->no_auth},
        {"tls_cert", "FILE", "serve HTTPS with this PEM certificate (chain)",
         TFB_OPT_STRING, .dest = &cfg->tls_cert},
        {"tls_key", "FILE", "... and this PEM private key", TFB_OPT_STRING,
         .dest = &cfg->tls_key},
        {"quiet", NULL, "no messages but errors (a made-up token's URL is "
         "still printed: there is no other way to learn it)", TFB_OPT_FLAG,
         .dest = &cfg->quiet},
        {"version", NULL, "the version", TFB_OPT_FLAG, .dest = &version},
    };
    const tfb_command cmd = {
        .prog = "tfboard",
        .synopsis =
            "usage: tfboard --logdir DIR [options]\n"
            "       tfboard report --logdir DIR [report options]\n"
            "       tfboard watch --logdir DIR [watch options]\n"
            "\n"
            "Serves TensorBoard-style dashboards for the event files (and "
            "GPU\ntraces) found under DIR, recursively. Options are spelled "
            "--opt_name;\n--opt-name and --opt=value work too.\n",
        .opts = opts, .n_opts = sizeof opts / sizeof *opts};
    int rc = tfb_options_parse(&cmd, argc, argv, out, err);
    if (rc != 0)
        return rc;
    if (version) {
        fprintf(out, "tfboard %s\n", tfb_version());
        return 1;
    }
    while (cfg->n_allow_hosts < TFB_CONFIG_MAX_ALLOW_HOSTS &&
           cfg->allow_hosts[cfg->n_allow_hosts])
        cfg->n_allow_hosts++;
    if (check_access(cfg, err) < 0)
        return TFB_EINVAL;
    if (!cfg->logdir) {
        fprintf(err, "tfboard: --logdir DIR is required (see tfboard "
                     "--help)\n");
        return TFB_EINVAL;
    }
    return 0;
}

/* Whether the server listens on the loopback only. */
static int loopback_only(const tfb_config *cfg)
{
    return !cfg->bind_all && (!strcmp(cfg->host, "127.0.0.1") ||
                              !strcmp(cfg->host, "localhost") ||
                              !strcmp(cfg->host, "::1"));
}

/* Over SSH (SSH_CONNECTION: "client_ip client_port server_ip
 * server_port") a server on the loopback cannot be opened from the
 * browser on the user's own machine: say how to forward the port. The
 * host is the address the SSH client reached, else this machine's name. */
static void ssh_hint(const tfb_config *cfg, int port)
{
    const char *ssh = getenv("SSH_CONNECTION");
    if (cfg->quiet || !ssh || !*ssh || !loopback_only(cfg))
        return;
    char host[256] = "";
    char a[64], b[64], c[256];
    if (sscanf(ssh, "%63s %63s %255s", a, b, c) == 3)
        snprintf(host, sizeof host, "%s", c);
    else if (gethostname(host, sizeof host) != 0)
        snprintf(host, sizeof host, "HOST");
    host[sizeof host - 1] = 0;
    fprintf(stderr, "tfboard: this is an SSH session and the server "
                    "listens on the loopback only; on your own machine run\n"
                    "  ssh -L %d:127.0.0.1:%d %s\n"
                    "then open http://127.0.0.1:%d/ there (or use "
                    "--bind_all, which needs a token)\n",
            port, port, host, port);
}

static int serve(const tfb_config *cfg)
{
    struct stat st;
    int remote = strncmp(cfg->logdir, "s3://", 5) == 0 ||
                 strncmp(cfg->logdir, "gs://", 5) == 0;
    if (remote) {
        /* a bucket: checked by the first listing */
    } else if (stat(cfg->logdir, &st) != 0) {
        fprintf(stderr, "tfboard: logdir %s: %s\n", cfg->logdir,
                strerror(errno));
        return 1;
    }
    if (!remote && !S_ISDIR(st.st_mode)) {
        fprintf(stderr, "tfboard: logdir %s is not a directory\n",
                cfg->logdir);
        return 1;
    }
    /* Signals go to sigwait below, not to the pool threads. */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    signal(SIGPIPE, SIG_IGN);

    /* Before any trace load; a full cache file system must not kill us
     * (RLIMIT_FSIZE): the write fails and the trace is served uncached. */
    signal(SIGXFSZ, SIG_IGN);
    if (tfb_trace_colcache_configure(cfg->cache_dir, cfg->logdir, stderr) < 0)
        return 2;
    tfb_store *store;
    if (tfb_store_create(&store, cfg->logdir) < 0) {
        fprintf(stderr, "tfboard: out of memory\n");
        return 1;
    }
    tfb_server *srv;
    if (tfb_server_start(&srv, cfg, store, stderr) < 0) {
        tfb_store_destroy(store);
        return 1;
    }
    const char *host = cfg->host;
    char hn[256];
    if (cfg->bind_all) {
        if (gethostname(hn, sizeof hn) != 0)
            snprintf(hn, sizeof hn, "localhost");
        hn[sizeof hn - 1] = 0;
        host = hn;
    }
    int v6 = strchr(host, ':') != NULL;
    /* A token tfboard made up is printed in the URL, even with --quiet:
     * there is no other way to learn it. A chosen one (--token,
     * TFBOARD_TOKEN) is never printed. */
    const char *made = tfb_server_made_token(srv);
    if (!cfg->quiet || made) {
        char url[512];
        snprintf(url, sizeof url, "%s://%s%s%s:%d/%s%s",
                 tfb_server_is_tls(srv) ? "https" : "http", v6 ? "[" : "",
                 host, v6 ? "]" : "", tfb_server_port(srv),
                 made ? "?token=" : "", made ? made : "");
        if (cfg->quiet)
            printf("%s\n", url);
        else
            printf("tfboard %s serving %s at %s (Ctrl+C to quit%s)\n",
                   tfb_version(), cfg->logdir, url,
                   made || !tfb_server_needs_token(srv)
                       ? ""
                       : "; requests need the token given with --token or "
                         "TFBOARD_TOKEN");
        fflush(stdout);
    }
    ssh_hint(cfg, tfb_server_port(srv));

    tfb_loader_opts lo = {cfg->reload_interval, cfg->load_threads, stderr};
    tfb_loader *loader;
    tfb_storage *storage = NULL;
    char err[300] = "";
    if (tfb_storage_for(cfg->logdir, &storage, err, sizeof err, stderr) < 0) {
        fprintf(stderr, "tfboard: logdir %s: %s\n", cfg->logdir,
                err[0] ? err : "cannot open");
        tfb_server_stop(srv);
        tfb_store_destroy(store);
        return 1;
    }
    if (tfb_loader_start_on(&loader, store, &lo, storage) < 0) {
        fprintf(stderr, "tfboard: cannot start the loader\n");
        tfb_server_stop(srv);
        tfb_storage_destroy(storage);
        tfb_store_destroy(store);
        return 1;
    }
    /* The dashboards' background services (the alerts' delivery) run
     * beside the server until it stops. */
    (void)tfb_plugin_services_start(store, TFB_SERVICE_SERVE,
                                    cfg->reload_interval, stderr);
    int sig = 0;
    sigwait(&set, &sig);
    tfb_plugin_services_stop();
    if (!cfg->quiet)
        fprintf(stderr, "tfboard: stopping\n");
    /* requests to a bucket end now: nothing on the network holds the
     * exit back */
    tfb_storage_cancel(storage);
    tfb_server_stop(srv);
    int loads = tfb_trace_loads_stop(10000);
    if (loads > 0)
        fprintf(stderr, "tfboard: %d trace load(s) still running at exit\n",
                loads);
    tfb_loader_stop(loader);
    tfb_storage_destroy(storage);
    tfb_store_destroy(store);
    return 0;
}

/* The usual soft limit of 1,024 descriptors is far below the hard one:
 * take what we may, for many connections and big logdirs. */
static void raise_fd_limit(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
}

int tfb_cli_main(int argc, char **argv)
{
    raise_fd_limit();
    /* Core names no plugin: the built-in list is handed to it here. */
    int rc = tfb_builtin_plugins_init();
    if (rc < 0) {
        fprintf(stderr, "tfboard: bad plugin table: %s\n", tfb_strerror(rc));
        return 2;
    }
    if (argc >= 2 && strcmp(argv[1], "report") == 0) {
        return tfb_report_main(argc - 1, argv + 1);
    }
    if (argc >= 2 && strcmp(argv[1], "watch") == 0)
        return tfb_watch_main(argc - 1, argv + 1);
    if (argc >= 2 && strcmp(argv[1], "query") == 0)
        return tfb_query_main(argc - 1, argv + 1);
    if (argc >= 2 && strcmp(argv[1], "export") == 0)
        return tfb_export_main(argc - 1, argv + 1);
    /* Series arrays above 16 KiB get their own mappings: they grow with
     * mremap (no copy, no heap holes) and trimming gives pages back, which
     * keeps resident memory near 20 bytes a scalar point. A fixed threshold
     * also stops glibc from raising it after frees. */
    mallopt(M_MMAP_THRESHOLD, 16 * 1024);
    tfb_config cfg;
    rc = tfb_cli_parse_serve(&cfg, argc, argv, stdout, stderr);
    if (rc == 1)
        return 0;
    if (rc < 0)
        return 2;
    return serve(&cfg);
}
