/*
 * cli.c - `tfboard`: serve a logdir, `tfboard report ...`, or `tfboard
 * watch ...` (watch.c).
 */
#include <errno.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "tfboard.h"
#include "core/config.h"
#include "core/plugin.h"
#include "core/http.h"
#include "store/loader.h"
#include "store/storage.h"
#include "store/store.h"
#include "report/report.h"
#include "plugins/registry.h"
#include "trace/trace.h"
#include "watch.h"

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
    /* Series arrays above 16 KiB get their own mappings: they grow with
     * mremap (no copy, no heap holes) and trimming gives pages back, which
     * keeps resident memory near 20 bytes a scalar point. A fixed threshold
     * also stops glibc from raising it after frees. */
    mallopt(M_MMAP_THRESHOLD, 16 * 1024);
    tfb_config cfg;
    rc = tfb_config_parse(&cfg, argc, argv, stdout, stderr);
    if (rc == 1)
        return 0;
    if (rc < 0)
        return 2;
    return serve(&cfg);
}
