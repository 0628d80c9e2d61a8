/*
 * report_load.c - one loader pass for `tfboard report` (report_load.h):
 * the pass runs on a thread of its own while the calling thread reports
 * progress, so small logdirs print nothing and large ones show they are
 * moving.
 */
#include "report/report_load.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "store/loader.h"
#include "store/storage.h"
#include "tfboard.h"

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

typedef struct load_job {
    tfb_loader *loader;
    int rc;
    atomic_int finished;
} load_job;

static void *load_thread(void *arg)
{
    load_job *job = arg;
    job->rc = tfb_loader_pass(job->loader);
    atomic_store(&job->finished, 1);
    return NULL;
}

static void storage_free(void *s)
{
    tfb_storage_destroy(s);
}

/* An s3:// or gs:// logdir: a bucket, not a directory. */
static int is_url(const char *logdir)
{
    return strncmp(logdir, "s3://", 5) == 0 || strncmp(logdir, "gs://", 5) == 0;
}

/* One loader pass on a thread of its own while this one reports progress:
 * silent for a second, then a line a second, so small logdirs print
 * nothing and large ones show they are moving. When the pass fails, why
 * gets the backend's own line about it, if it has one. */
static int load_once(tfb_store *store, int quiet, const char *prog, char *why,
                     size_t why_len)
{
    tfb_loader_opts lo = {.reload_interval = 0, .threads = 0,
                          .log = quiet ? NULL : stderr};
    load_job job = {.rc = 0};
    atomic_init(&job.finished, 0);
    /* local files, or a bucket for s3:// and gs:// logdirs */
    tfb_storage *storage = NULL;
    char err[300] = "";
    int rc = tfb_storage_for(tfb_store_logdir(store), &storage, err,
                             sizeof err, quiet ? NULL : stderr);
    if (rc < 0) {
        if (err[0])
            fprintf(stderr, "%s: %s\n", prog, err);
        return rc;
    }
    rc = tfb_loader_create_on(&job.loader, store, &lo, storage);
    if (rc < 0) {
        tfb_storage_destroy(storage);
        return rc;
    }
    pthread_t th;
    if (pthread_create(&th, NULL, load_thread, &job) != 0) {
        tfb_loader_stop(job.loader);
        tfb_storage_destroy(storage);
        return TFB_ENOMEM;
    }
    double t0 = mono_s(), next = t0 + 1.0;
    tfb_load_progress p;
    while (!atomic_load(&job.finished)) {
        struct timespec d = {0, 20 * 1000 * 1000};
        nanosleep(&d, NULL);
        double now = mono_s();
        if (!quiet && now >= next) {
            tfb_store_progress(store, &p);
            fprintf(stderr,
                    "%s: loading: %llu/%llu files, %.1f/%.1f MB, "
                    "%llu points (%.0f s)\n", prog,
                    (unsigned long long)p.files_done,
                    (unsigned long long)p.files_total,
                    (double)p.bytes_done / 1e6, (double)p.bytes_total / 1e6,
                    (unsigned long long)p.points, now - t0);
            next = now + 1.0;
        }
    }
    pthread_join(th, NULL);
    tfb_loader_stop(job.loader);
    /* A bucket that cannot be listed (403, a 503 storm, a refused
     * connection) reads to the loader as a missing logdir, so that a
     * server keeps what it loaded; a report has nothing to keep and says
     * what the request was answered instead. */
    tfb_storage_status st;
    if (job.rc < 0 && tfb_storage_info(storage, &st) == 0 &&
        st.last_error[0])
        snprintf(why, why_len, "%s", st.last_error);
    /* the report reads trace stores after this: a bucket's local copies
     * live as long as the store */
    tfb_store_own(store, storage, storage_free);
    if (!quiet && mono_s() - t0 >= 1.0) {
        tfb_store_progress(store, &p);
        fprintf(stderr, "%s: loaded %llu files, %llu points in "
                        "%.1f s\n", prog,
                (unsigned long long)p.files_done,
                (unsigned long long)p.points, mono_s() - t0);
    }
    return job.rc;
}

int tfb_report_open(const char *dir, int quiet, tfb_store **out)
{
    return tfb_report_open_as("tfboard report", dir, quiet, out);
}

int tfb_report_open_as(const char *prog, const char *dir, int quiet,
                       tfb_store **out)
{
    struct stat st;
    if (!is_url(dir) && (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))) {
        fprintf(stderr, "%s: %s: not a readable directory\n", prog, dir);
        return -1;
    }
    char why[TFB_STORAGE_ERROR_MAX] = "";
    int rc = tfb_store_create(out, dir);
    if (rc == 0) {
        rc = load_once(*out, quiet, prog, why, sizeof why);
        if (rc < 0)
            tfb_store_destroy(*out);
    }
    if (rc < 0) {
        fprintf(stderr, "%s: loading %s: %s\n", prog, dir,
                why[0] ? why : tfb_strerror(rc));
        return -1;
    }
    return 0;
}
