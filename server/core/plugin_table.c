/*
 * plugin_table.c - the one table of plugins, as core sees it (plugin.h).
 *
 * Core names no plugin: the built-in list (server/plugins/registry.c) is
 * handed in by the command line at start (tfb_plugin_table_init), and a
 * program may add its own plugins with tfb_plugin_register before or
 * after that. The built-in ones always come first, in their order, then
 * the registered ones in the order they came.
 *
 * Joining the table also registers a plugin's value decoders with the
 * store (store/value_decoder.h).
 *
 * A descriptor is read only as far as its own size says: a registered one
 * is copied into a whole, zero-filled tfb_plugin here, so a plugin built
 * against an older, smaller struct leaves the newer fields unset.
 *
 * Thread-safety: written only before the server starts; readers take no
 * lock. tfb_plugin_enabled's cache has its own lock.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/plugin.h"

#define TFB_MAX_BUILTIN 32
#define TFB_MAX_EXTRA 16

static const tfb_plugin *table[TFB_MAX_BUILTIN + TFB_MAX_EXTRA];
static size_t n_builtin, n_table;
/* Whole copies of the registered descriptors (see above). */
static tfb_plugin extra[TFB_MAX_EXTRA];
static size_t n_extra;
/* The services started (tfb_plugin_services_start), with their mode. */
static const tfb_plugin *started[TFB_MAX_BUILTIN + TFB_MAX_EXTRA];
static size_t n_started;
static tfb_service_mode started_mode;

const tfb_plugin *const *tfb_plugins(size_t *n)
{
    *n = n_table;
    return table;
}

const tfb_plugin *tfb_plugin_find(const char *name, size_t len)
{
    for (size_t i = 0; i < n_table; i++)
        if (strlen(table[i]->name) == len &&
            memcmp(table[i]->name, name, len) == 0)
            return table[i];
    return NULL;
}

static int valid_name(const char *s)
{
    if (!s || !*s)
        return 0;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') ||
              *s == '_'))
            return 0;
    return 1;
}

/* The checks every descriptor passes, on a whole copy. */
static int valid_plugin(const tfb_plugin *p)
{
    if (!valid_name(p->name) || !p->title || (p->n_routes && !p->routes) ||
        (p->n_put_routes && !p->put_routes) ||
        (p->n_options && !p->options) || (p->n_decoders && !p->decoders) ||
        (p->service && (!p->service->start || !p->service->stop)))
        return TFB_EINVAL;
    /* The page is the first asset: the listing's module_path is served. */
    if (p->assets && (!p->assets[0].path || !p->module ||
                      strcmp(p->assets[0].path + 1, p->module) != 0))
        return TFB_EINVAL;
    for (size_t i = 0; i < p->n_options; i++) {
        const tfb_option *o = &p->options[i];
        if (!valid_name(o->name) || !o->help || !o->dest ||
            o->type < TFB_OPT_FLAG || o->type > TFB_OPT_CALL)
            return TFB_EINVAL;
    }
    return 0;
}

const tfb_option *tfb_plugin_option_find(const char *name, size_t len)
{
    for (size_t i = 0; i < n_table; i++)
        for (size_t k = 0; k < table[i]->n_options; k++) {
            const char *o = table[i]->options[k].name;
            if (strlen(o) == len && !memcmp(o, name, len))
                return &table[i]->options[k];
        }
    return NULL;
}

/* 1 when one of p's options has a name another plugin's option has. */
static int option_taken(const tfb_plugin *p)
{
    for (size_t i = 0; i < p->n_options; i++)
        if (tfb_plugin_option_find(p->options[i].name,
                                   strlen(p->options[i].name)))
            return 1;
    return 0;
}

/* Reads the descriptor's version and size, and copies what its size
 * covers into *whole (zero beyond). */
static int read_descriptor(const tfb_plugin *p, tfb_plugin *whole)
{
    if (!p || p->size < TFB_PLUGIN_SIZE_V1 || p->version < 1 ||
        p->version > TFB_PLUGIN_VERSION)
        return TFB_EINVAL;
    memset(whole, 0, sizeof *whole);
    memcpy(whole, p, p->size < sizeof *whole ? p->size : sizeof *whole);
    return valid_plugin(whole);
}

/* Hands p's value decoders to the store (store/value_decoder.h). */
static int register_decoders(const tfb_plugin *p)
{
    for (size_t i = 0; i < p->n_decoders; i++) {
        int rc = tfb_value_decoder_register(&p->decoders[i]);
        if (rc < 0)
            return rc;
    }
    return 0;
}

static int name_taken(const char *name, const tfb_plugin *const *t,
                      size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(t[i]->name, name) == 0)
            return 1;
    return 0;
}

int tfb_plugin_table_init(const tfb_plugin *const *builtin, size_t n)
{
    if ((n && !builtin) || n > TFB_MAX_BUILTIN)
        return TFB_EINVAL;
    if (n_builtin)
        return TFB_EEXIST; /* handed in once */
    for (size_t i = 0; i < n; i++) {
        tfb_plugin whole;
        /* Built-in descriptors are compiled with this very header, so
         * they are used in place once they pass the checks. */
        int rc = read_descriptor(builtin[i], &whole);
        if (rc < 0)
            return rc;
        if (builtin[i]->size != sizeof(tfb_plugin) ||
            name_taken(whole.name, builtin, i))
            return TFB_EINVAL;
        for (size_t k = 0; k < n_extra; k++)
            if (strcmp(extra[k].name, whole.name) == 0)
                return TFB_EEXIST;
    }
    for (size_t i = 0; i < n; i++) {
        int rc = register_decoders(builtin[i]);
        if (rc < 0)
            return rc;
        table[i] = builtin[i];
    }
    for (size_t k = 0; k < n_extra; k++)
        table[n + k] = &extra[k];
    n_builtin = n;
    n_table = n + n_extra;
    return 0;
}

int tfb_plugin_register(const tfb_plugin *p)
{
    tfb_plugin whole;
    int rc = read_descriptor(p, &whole);
    if (rc < 0)
        return rc;
    if (tfb_plugin_find(whole.name, strlen(whole.name)) ||
        option_taken(&whole))
        return TFB_EEXIST;
    if (n_extra == TFB_MAX_EXTRA)
        return TFB_ENOMEM;
    if ((rc = register_decoders(&whole)) < 0)
        return rc;
    extra[n_extra] = whole;
    table[n_table++] = &extra[n_extra++];
    return 0;
}

/* tfb_plugin_enabled's answers for one store at one generation, every
 * plugin's from one scan: a plugin without data asks has_data of every
 * run (at 100,000 runs the listing took seconds, on every page load and
 * reload, issue 28); the answers hold until the store's generation moves.
 * Indexed as the table. */
static pthread_mutex_t enabled_mu = PTHREAD_MUTEX_INITIALIZER;
static const tfb_store *enabled_store;
static uint64_t enabled_gen;
static int enabled_known;
static unsigned char enabled_on[TFB_MAX_BUILTIN + TFB_MAX_EXTRA];

static size_t table_index(const tfb_plugin *p)
{
    for (size_t i = 0; i < n_table; i++)
        if (table[i] == p)
            return i;
    return SIZE_MAX;
}

static int warm_stopped(void);
/* The warm-up's lock and condition (below): warm_scanning is set while
 * its scan runs. */
static pthread_mutex_t warm_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t warm_cv = PTHREAD_COND_INITIALIZER;
static int warm_scanning;

/* Fills every plugin's answer in one pass over one copy of the run list
 * (each copy is sorted: one per plugin cost more than the asking).
 * Returns 0, or -1 when the warm-up (warm set) was told to stop. */
static int scan_all(tfb_store *s, unsigned char *on, int warm)
{
    memset(on, 0, n_table);
    size_t left = 0;
    for (size_t k = 0; k < n_table; k++) {
        if (!table[k]->has_data)
            on[k] = 2; /* enabled when the logdir has any run */
        else
            left++;
    }
    tfb_run **runs;
    size_t nr;
    if (tfb_store_runs(s, &runs, &nr) < 0) {
        memset(on, 0, n_table);
        return 0;
    }
    for (size_t k = 0; k < n_table; k++)
        if (on[k] == 2)
            on[k] = nr > 0;
    for (size_t i = 0; i < nr && left; i++) {
        if (warm && i % 1024 == 0 && warm_stopped()) {
            free(runs);
            return -1;
        }
        for (size_t k = 0; k < n_table; k++)
            if (table[k]->has_data && !on[k] && table[k]->has_data(s, runs[i])) {
                on[k] = 1;
                left--;
            }
    }
    free(runs);
    return 0;
}

/* The answers for store s now, scanned when the cache has none (warm: the
 * warm-up's scan, which stops when told). */
static int enabled_all(tfb_store *s, unsigned char *all, int warm)
{
    if (!warm) {
        /* A listing that comes while the warm-up scans waits for its
         * answers instead of scanning beside it. */
        pthread_mutex_lock(&warm_mu);
        while (warm_scanning)
            pthread_cond_wait(&warm_cv, &warm_mu);
        pthread_mutex_unlock(&warm_mu);
    }
    /* Read before the runs: data that lands during the scan moves the
     * generation past this one, so the next call scans again. */
    uint64_t gen = tfb_store_generation(s);
    pthread_mutex_lock(&enabled_mu);
    int hit = enabled_store == s && enabled_gen == gen && enabled_known;
    if (hit)
        memcpy(all, enabled_on, n_table);
    pthread_mutex_unlock(&enabled_mu);
    if (hit)
        return 0;
    if (scan_all(s, all, warm) < 0)
        return -1;
    pthread_mutex_lock(&enabled_mu);
    /* A newer generation's answers are never replaced by an older one's. */
    if (enabled_store != s || enabled_gen <= gen) {
        enabled_store = s;
        enabled_gen = gen;
        enabled_known = 1;
        memcpy(enabled_on, all, n_table);
    }
    pthread_mutex_unlock(&enabled_mu);
    return 0;
}

int tfb_plugin_enabled(const tfb_plugin *p, tfb_store *s)
{
    size_t k = table_index(p);
    if (k == SIZE_MAX) { /* not in the table: ask it alone */
        tfb_run **runs;
        size_t nr;
        if (tfb_store_runs(s, &runs, &nr) < 0)
            return 0;
        int on = 0;
        for (size_t i = 0; i < nr && !on; i++)
            on = p->has_data ? p->has_data(s, runs[i]) : 1;
        free(runs);
        return on;
    }
    unsigned char all[TFB_MAX_BUILTIN + TFB_MAX_EXTRA];
    (void)enabled_all(s, all, 0);
    return all[k];
}

/* The listing's warm-up (serve mode): once the first pass over the
 * logdir is done, a thread of its own asks tfb_plugin_enabled of every
 * plugin, so the first page load after it finds the answers in the cache
 * instead of scanning every run itself (seconds at 100,000 runs, before
 * the page can show anything). It polls the load's progress every
 * WARM_POLL_MS; tfb_plugin_services_stop ends and joins it. */
#define WARM_POLL_MS 50
static pthread_t warm_thread;
static int warm_running, warm_stop;

static int warm_stopped(void)
{
    pthread_mutex_lock(&warm_mu);
    int stop = warm_stop;
    pthread_mutex_unlock(&warm_mu);
    return stop;
}

static void *warm_main(void *arg)
{
    tfb_store *s = arg;
    pthread_mutex_lock(&warm_mu);
    for (;;) {
        tfb_load_progress p;
        tfb_store_progress(s, &p);
        if (warm_stop || p.done)
            break;
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += WARM_POLL_MS * 1000000L;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&warm_cv, &warm_mu, &ts);
    }
    pthread_mutex_unlock(&warm_mu);
    unsigned char all[TFB_MAX_BUILTIN + TFB_MAX_EXTRA];
    pthread_mutex_lock(&warm_mu);
    int go = !warm_stop;
    warm_scanning = go;
    pthread_mutex_unlock(&warm_mu);
    if (go)
        (void)enabled_all(s, all, 1);
    pthread_mutex_lock(&warm_mu);
    warm_scanning = 0;
    pthread_cond_broadcast(&warm_cv);
    pthread_mutex_unlock(&warm_mu);
    return NULL;
}

int tfb_plugin_services_start(tfb_store *s, tfb_service_mode mode,
                              double interval, FILE *log)
{
    started_mode = mode;
    if (mode == TFB_SERVICE_SERVE && !warm_running) {
        warm_stop = 0;
        /* without it the first listing scans, as before: no error */
        warm_running = pthread_create(&warm_thread, NULL, warm_main, s) == 0;
    }
    for (size_t i = 0; i < n_table; i++) {
        const tfb_plugin_service *sv = table[i]->service;
        if (!sv)
            continue;
        int rc = sv->start(s, mode, interval, log);
        if (rc < 0)
            return rc;
        started[n_started++] = table[i];
    }
    return 0;
}

void tfb_plugin_services_stop(void)
{
    if (warm_running) {
        pthread_mutex_lock(&warm_mu);
        warm_stop = 1;
        pthread_cond_broadcast(&warm_cv);
        pthread_mutex_unlock(&warm_mu);
        pthread_join(warm_thread, NULL);
        warm_running = 0;
    }
    while (n_started > 0)
        started[--n_started]->service->stop(started_mode);
}

int tfb_plugin_services_poll(tfb_store *s, double now,
                             void (*emit)(void *user,
                                          const tfb_service_event *e),
                             void *user)
{
    for (size_t i = 0; i < n_started; i++) {
        const tfb_plugin_service *sv = started[i]->service;
        int rc = sv->poll ? sv->poll(s, now, emit, user) : 0;
        if (rc < 0)
            return rc;
    }
    return 0;
}
