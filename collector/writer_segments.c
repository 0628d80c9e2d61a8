/*
 * writer_segments.c - event files written to a bucket as segments
 * (writer_segments.h): a local spool, rotation by age and size, and one
 * upload thread per writer that sends closed segments in order, retrying
 * with backoff while the spool's bound holds.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/deadline.h"
#include "base/errors.h"
#include "base/str.h"
#include "collector/event.h"
#include "objstore/objstore.h"
#include "collector/writer_segments.h"

#define DEF_SEG_SECONDS 30u
#define DEF_SEG_BYTES ((size_t)64 << 20)
#define DEF_SPOOL_BYTES ((size_t)1 << 30)
#define DEF_CLOSE_MS 60000u
#define PART_BYTES ((size_t)8 << 20)

typedef struct seg_item {
    char *path; /* in the spool */
    char *key;  /* the object's key */
    uint64_t bytes;
    struct seg_item *next;
} seg_item;

struct tfb_seg {
    tfb_os *os;
    char *bucket, *prefix, *spool, *base;
    unsigned seq;          /* the current segment's number */
    char *cur_path;
    uint64_t cur_bytes, cur_header;
    long long cur_start;   /* monotonic ns */
    unsigned seg_seconds, close_ms;
    size_t seg_bytes, spool_bound;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    seg_item *head, *tail; /* closed segments waiting, in order */
    uint64_t queued;       /* their bytes */
    int closing, stop_now;
    atomic_int sticky;
    unsigned failures;
    int refused; /* the last upload got 403 or 404: waiting will not help */
};

static char *segment_name(const tfb_seg *s, unsigned seq)
{
    return tfb_strfmt("%s.%06u", s->base, seq);
}

/* Queues a closed file for upload (takes path). */
static int enqueue(tfb_seg *s, char *path, const char *name, uint64_t bytes)
{
    seg_item *it = calloc(1, sizeof *it);
    char *key = tfb_strfmt("%s%s%s", s->prefix, *s->prefix ? "/" : "", name);
    if (!it || !key) {
        free(it);
        free(key);
        free(path);
        return TFB_ENOMEM;
    }
    it->path = path;
    it->key = key;
    it->bytes = bytes;
    pthread_mutex_lock(&s->mu);
    if (s->tail)
        s->tail->next = it;
    else
        s->head = it;
    s->tail = it;
    s->queued += bytes;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
    return 0;
}

static void *upload_main(void *arg)
{
    tfb_seg *s = arg;
    pthread_mutex_lock(&s->mu);
    for (;;) {
        while (!s->head && !s->closing && !s->stop_now)
            pthread_cond_wait(&s->cv, &s->mu);
        if (s->stop_now || (!s->head && s->closing))
            break;
        seg_item *it = s->head;
        pthread_mutex_unlock(&s->mu);
        tfb_os_error e;
        memset(&e, 0, sizeof e);
        int rc = tfb_os_put_file(s->os, s->bucket, it->key, it->path,
                                 PART_BYTES, &e);
        pthread_mutex_lock(&s->mu);
        if (rc == 0) {
            s->head = it->next;
            if (!s->head)
                s->tail = NULL;
            s->queued -= it->bytes;
            unlink(it->path);
            free(it->path);
            free(it->key);
            free(it);
            s->failures = 0;
            s->refused = 0;
            pthread_cond_broadcast(&s->cv);
            continue;
        }
        s->refused = rc == TFB_EACCES || rc == TFB_ENOENT;
        pthread_cond_broadcast(&s->cv); /* close may stop waiting */
        if (s->stop_now)
            break;
        /* The store is down or refusing: the segment stays in the spool
         * and is tried again, less and less often (at most every 10 s). */
        if (s->failures++ == 0)
            fprintf(stderr, "tfboard: upload of %s failed (%s); retrying\n",
                    it->key, e.msg[0] ? e.msg : tfb_strerror(rc));
        unsigned ms = 250u << (s->failures < 6 ? s->failures : 6);
        if (ms > 10000)
            ms = 10000;
        struct timespec ts;
        tfb_deadline_after_ms(&ts, ms);
        while (!s->stop_now &&
               pthread_cond_timedwait(&s->cv, &s->mu, &ts) == 0)
            ;
    }
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

int tfb_seg_open(tfb_seg **out, const char *url, const tfb_writer_opts *o,
                 char **spool_dir)
{
    char scheme[3], *bucket, *key;
    if (tfb_os_parse_url(url, scheme, &bucket, &key) < 0)
        return TFB_EINVAL;
    tfb_seg *s = calloc(1, sizeof *s);
    if (!s) {
        free(bucket);
        free(key);
        return TFB_ENOMEM;
    }
    s->bucket = bucket;
    size_t kl = strlen(key);
    while (kl && key[kl - 1] == '/')
        key[--kl] = 0;
    s->prefix = key;
    s->seg_seconds = o->segment_seconds ? o->segment_seconds : DEF_SEG_SECONDS;
    s->seg_bytes = o->segment_bytes ? o->segment_bytes : DEF_SEG_BYTES;
    s->spool_bound = o->spool_bytes ? o->spool_bytes : DEF_SPOOL_BYTES;
    s->close_ms = o->close_timeout_ms ? o->close_timeout_ms : DEF_CLOSE_MS;
    const char *dir = o->spool_dir;
    if (!dir || !*dir)
        dir = getenv("TMPDIR");
    if (!dir || !*dir)
        dir = "/tmp";
    s->spool = tfb_strfmt("%s/tfboard-spool-XXXXXX", dir);
    char err[300] = "";
    int rc = s->spool ? 0 : TFB_ENOMEM;
    if (!rc && !mkdtemp(s->spool))
        rc = tfb_err_from_errno(errno);
    if (!rc && tfb_os_create(&s->os, scheme, err, sizeof err) < 0) {
        fprintf(stderr, "tfboard: %s: %s\n", url, err);
        rc = TFB_EINVAL;
    }
    if (!rc) {
        pthread_mutex_init(&s->mu, NULL);
        tfb_cond_init_monotonic(&s->cv);
        if (pthread_create(&s->thread, NULL, upload_main, s) != 0) {
            pthread_mutex_destroy(&s->mu);
            pthread_cond_destroy(&s->cv);
            rc = TFB_ENOMEM;
        }
    }
    if (rc) {
        tfb_os_destroy(s->os);
        if (s->spool)
            rmdir(s->spool);
        free(s->spool);
        free(s->bucket);
        free(s->prefix);
        free(s);
        return rc;
    }
    *spool_dir = strdup(s->spool);
    if (!*spool_dir) {
        tfb_seg_close(s, -1);
        return TFB_ENOMEM;
    }
    *out = s;
    return 0;
}

void tfb_seg_first(tfb_seg *s, const char *path, size_t header_bytes)
{
    const char *slash = strrchr(path, '/');
    s->base = strdup(slash ? slash + 1 : path);
    s->cur_path = strdup(path);
    s->cur_bytes = s->cur_header = header_bytes;
    s->cur_start = tfb_mono_now_ns();
    s->seq = 0;
}

int tfb_seg_admit(tfb_seg *s, size_t n)
{
    pthread_mutex_lock(&s->mu);
    int over = s->queued + s->cur_bytes + n > s->spool_bound;
    pthread_mutex_unlock(&s->mu);
    if (over) {
        int zero = 0;
        atomic_compare_exchange_strong(&s->sticky, &zero, TFB_EDROPPED);
        return TFB_EDROPPED;
    }
    return 0;
}

static int write_all(int fd, const uint8_t *p, size_t n)
{
    while (n) {
        ssize_t k = write(fd, p, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return k < 0 ? tfb_err_from_errno(errno) : TFB_EIO;
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

/* Closes the current segment and queues it (or drops it when it holds
 * nothing but its header and is not the run's first). */
static int close_current(tfb_seg *s, int fd)
{
    if (fd >= 0)
        close(fd);
    if (!s->cur_path)
        return 0;
    if (s->cur_bytes <= s->cur_header && s->seq > 0) {
        unlink(s->cur_path);
        free(s->cur_path);
        s->cur_path = NULL;
        return 0;
    }
    char *name = segment_name(s, s->seq);
    if (!name)
        return TFB_ENOMEM;
    int rc = enqueue(s, s->cur_path, name, s->cur_bytes);
    s->cur_path = NULL;
    free(name);
    return rc;
}

int tfb_seg_rotate(tfb_seg *s, int *fd, size_t n, int force)
{
    s->cur_bytes += n;
    if (s->cur_bytes <= s->cur_header)
        return 0; /* nothing logged in this segment yet */
    if (!force && s->cur_bytes < s->seg_bytes &&
        (tfb_mono_now_ns() - s->cur_start) / 1000000000 < s->seg_seconds)
        return 0;
    int rc = close_current(s, *fd);
    *fd = -1;
    if (rc < 0)
        return rc;
    s->seq++;
    char *name = segment_name(s, s->seq);
    char *path = name ? tfb_strfmt("%s/%s", s->spool, name) : NULL;
    free(name);
    if (!path)
        return TFB_ENOMEM;
    int nfd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (nfd < 0) {
        rc = tfb_err_from_errno(errno);
        free(path);
        return rc;
    }
    /* every segment starts like an event file: file_version first */
    uint8_t rec[TFB_EV_FILE_VERSION_MAX];
    size_t rn = tfb_ev_file_version_write(rec, tfb_now_wall());
    rc = write_all(nfd, rec, rn);
    if (rc < 0) {
        close(nfd);
        unlink(path);
        free(path);
        return rc;
    }
    *fd = nfd;
    s->cur_path = path;
    s->cur_bytes = s->cur_header = rn;
    s->cur_start = tfb_mono_now_ns();
    return 0;
}

/* Files of the spool not queued yet (GPU trace stores): queued too. */
static void queue_others(tfb_seg *s)
{
    DIR *d = opendir(s->spool);
    if (!d)
        return;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (de->d_name[0] == '.')
            continue;
        char *p = tfb_strfmt("%s/%s", s->spool, de->d_name);
        if (!p)
            break;
        struct stat st;
        int queued = 0;
        pthread_mutex_lock(&s->mu);
        for (seg_item *it = s->head; it; it = it->next)
            queued |= strcmp(it->path, p) == 0;
        pthread_mutex_unlock(&s->mu);
        if (queued || stat(p, &st) != 0 || !S_ISREG(st.st_mode)) {
            free(p);
            continue;
        }
        enqueue(s, p, de->d_name, (uint64_t)st.st_size);
    }
    closedir(d);
}

int tfb_seg_close(tfb_seg *s, int fd)
{
    if (!s)
        return 0;
    int rc = close_current(s, fd);
    queue_others(s);
    struct timespec dl;
    tfb_deadline_after_ms(&dl, s->close_ms);
    pthread_mutex_lock(&s->mu);
    s->closing = 1;
    pthread_cond_broadcast(&s->cv);
    /* Until everything is up, the deadline, or a refusal (no bucket,
     * no permission) that more time would not change. */
    while (s->head && !s->refused &&
           pthread_cond_timedwait(&s->cv, &s->mu, &dl) == 0)
        ;
    s->stop_now = 1;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
    tfb_os_cancel(s->os); /* an upload in flight ends now */
    pthread_join(s->thread, NULL);
    size_t left = 0;
    for (seg_item *it = s->head, *nx; it; it = nx) {
        nx = it->next;
        left++;
        free(it->path);
        free(it->key);
        free(it);
    }
    if (left) {
        fprintf(stderr, "tfboard: %zu file%s could not be uploaded to "
                        "%s://%s/%s; they stay in %s\n",
                left, left == 1 ? "" : "s", tfb_os_scheme(s->os), s->bucket,
                s->prefix, s->spool);
        if (!rc)
            rc = TFB_EIO;
    } else {
        rmdir(s->spool);
    }
    int st = atomic_load(&s->sticky);
    if (st)
        rc = st;
    tfb_os_destroy(s->os);
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->cv);
    free(s->cur_path);
    free(s->base);
    free(s->spool);
    free(s->bucket);
    free(s->prefix);
    free(s);
    return rc;
}

unsigned tfb_seg_period_ms(const tfb_seg *s)
{
    return s->seg_seconds > 4000000u ? 4000000000u : s->seg_seconds * 1000u;
}

int tfb_seg_sticky(tfb_seg *s)
{
    return s ? atomic_load(&s->sticky) : 0;
}

uint64_t tfb_count_records(const uint8_t *buf, size_t len)
{
    uint64_t n = 0;
    size_t at = 0;
    while (at + 12 <= len) {
        uint64_t rl;
        memcpy(&rl, buf + at, 8); /* little-endian hosts (x86, ARM) */
        if (rl > len - at - 12 || len - at - 12 - rl < 4)
            break;
        at += 12 + (size_t)rl + 4;
        n++;
    }
    return n;
}
