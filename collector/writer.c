/*
 * writer.c - the asynchronous event-file writer.
 *
 * Logging threads encode a whole framed record straight into the active
 * buffer under one short lock; a background thread swaps the active and
 * spare buffers and write()s the spare. So the caller never touches the
 * disk, and a record is either wholly in the file or not at all (the
 * reader treats a partial tail as "not yet written").
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/errors.h"
#include "base/gpu_peaks.h"
#include "collector/event.h"
#include "collector/fork_guard.h"
#include "collector/histogram.h"
#include "base/deadline.h"
#include "base/vec.h"
#include "collector/pb.h"
#include "collector/run_end.h"
#include "collector/tag_table.h"
#include "collector/wallclock.h"
#include "tfboard.h"
#include "collector/abi.h"
#include "collector/writer_internal.h"
#include "collector/writer_segments.h"
#include "objstore/objstore.h"

#define DEFAULT_QUEUE_BYTES (8u << 20)
#define DEFAULT_FLUSH_MS 2000u

/* A queue buffer: n bytes of framed records in v, of cap. */
typedef TFB_VEC(uint8_t) wbuf;

struct tfb_writer {
    pthread_mutex_t mu;
    pthread_cond_t cv_work;  /* the background thread waits here */
    pthread_cond_t cv_space; /* callers wait here for space or a flush */
    wbuf active, spare;
    uint64_t appended;     /* bytes ever appended to the queue */
    uint64_t written;      /* bytes of those handed to write() */
    uint64_t flush_target; /* tfb_flush asks for written >= this */
    int kicked;            /* the background thread was woken early */
    int closing;
    int sticky; /* first disk error; every later call returns it */
    int fd;
    pthread_t thread;
    tfb_writer_opts opts;
    char *path, *run_dir;
    tfb_tag_table tags;
    tfb_wallclock clock; /* read under mu */
    /* Tags are mostly string literals passed again and again: a cache keyed
     * by the tag's address skips hashing. An entry is trusted only after
     * its bytes compare equal, so a reused buffer cannot fool it. */
    struct {
        const char *ptr;  /* the caller's pointer */
        const char *copy; /* the table's copy of the tag (stable) */
        const uint8_t *field; /* its encoded field (stable) */
        size_t len, field_len;
    } tag_cache[64];
    uint64_t records_logged, records_dropped, bytes_written;
    /* The highest step of any value logged so far (under mu): the step
     * tfb_step_batch names outside tfb_step_begin .. tfb_step_end. */
    int64_t max_step;
    int have_step;
    struct tfb_gpu_tracer *gpu;
    struct tfb_pipeline *pipeline;
    struct tfb_media *media;
    struct {
        tfb_writer_hook on_flush, on_close;
    } hooks[TFB_WRITER_MOD_COUNT];
    unsigned fork_gen; /* tfb_fork_generation() at open; see fork_guard.h */
    tfb_rank_owned rank; /* distributed jobs (ranks.c) */
    tfb_seg *seg; /* run_dir in a bucket: segments (writer_segments.h) */
    int work_dtype; /* opts.dtype parsed at open: tfb_peak_dtype, -1 none */
    char work_device[96]; /* opts.device, copied at open */
};

/* w was inherited across fork(): its thread does not exist here and its
 * mutex may be held forever, so no call may lock it or wait for it. */
static inline int inherited(const tfb_writer *w)
{
    return w->fork_gen != tfb_fork_generation();
}

int tfb_writer_forked(const tfb_writer *w)
{
    return w && inherited(w);
}

static atomic_uint g_file_seq;

void tfb_writer_opts_init(tfb_writer_opts *o)
{
    if (!o)
        return;
    memset(o, 0, sizeof *o);
    o->size = sizeof *o;
    o->queue_bytes = DEFAULT_QUEUE_BYTES;
    o->flush_interval_ms = DEFAULT_FLUSH_MS;
    /* Distributed jobs: "unset", resolved at open (see tfboard.h). */
    o->rank = -1;
    o->world_size = 0;
    o->local_rank = -1;
}

/* mkdir -p: each missing parent is created; an existing directory is
 * fine. */
static int make_dirs(const char *dir)
{
    char *p = strdup(dir);
    if (!p)
        return TFB_ENOMEM;
    int rc = 0;
    for (char *s = p + 1;; s++) {
        if (*s == '/' || *s == 0) {
            char c = *s;
            *s = 0;
            if (mkdir(p, 0777) < 0 && errno != EEXIST) {
                rc = tfb_err_from_errno(errno);
                break;
            }
            *s = c;
            if (!c)
                break;
        }
    }
    free(p);
    if (rc == 0) {
        struct stat st;
        if (stat(dir, &st) < 0)
            return tfb_err_from_errno(errno);
        if (!S_ISDIR(st.st_mode))
            return TFB_ENOENT;
    }
    return rc;
}

static int write_all(int fd, const uint8_t *p, size_t n)
{
    while (n) {
        ssize_t k = write(fd, p, n);
        if (k < 0) {
            if (errno == EINTR)
                continue;
            return tfb_err_from_errno(errno);
        }
        if (k == 0)
            return TFB_EIO;
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

/* Creates the event file with a name no other writer can hold: O_EXCL
 * plus a per-process sequence number that moves on at each collision. */
static int create_file(tfb_writer *w)
{
    char host[256] = "localhost";
    if (gethostname(host, sizeof host - 1) < 0)
        strcpy(host, "localhost");
    host[sizeof host - 1] = 0;
    for (char *c = host; *c; c++)
        if (*c == '/')
            *c = '_';
    const char *suffix = w->opts.filename_suffix ? w->opts.filename_suffix : "";
    size_t cap = strlen(w->run_dir) + strlen(host) + strlen(suffix) + 96;
    w->path = malloc(cap);
    if (!w->path)
        return TFB_ENOMEM;
    for (int tries = 0; tries < 1000; tries++) {
        unsigned seq = atomic_fetch_add(&g_file_seq, 1);
        snprintf(w->path, cap, "%s/events.out.tfevents.%010lld.%s.%ld.%u%s",
                 w->run_dir, (long long)time(NULL), host, (long)getpid(), seq,
                 suffix);
        w->fd = open(w->path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        if (w->fd >= 0)
            return 0;
        if (errno != EEXIST)
            return tfb_err_from_errno(errno);
    }
    return TFB_EEXIST;
}

/* The file is gone from its directory (deleted file or directory): the
 * writes would vanish into an orphaned inode, so this counts as an error. */
static int file_deleted(int fd)
{
    struct stat st;
    return fstat(fd, &st) == 0 && st.st_nlink == 0;
}

static void *writer_thread(void *arg)
{
    tfb_writer *w = arg;
    struct timespec deadline;
    tfb_deadline_after_ms(&deadline, w->opts.flush_interval_ms);
    pthread_mutex_lock(&w->mu);
    for (;;) {
        int due = w->kicked || w->closing || w->flush_target > w->written ||
                  tfb_deadline_passed(&deadline);
        if (!due || w->active.n == 0) {
            if (w->closing && w->active.n == 0)
                break;
            if (tfb_deadline_passed(&deadline)) {
                /* Idle period over: look for a deleted file, then sleep
                 * another interval. */
                if (!w->sticky && file_deleted(w->fd))
                    w->sticky = TFB_ENOENT;
                if (w->seg && !w->sticky) {
                    /* a segment old enough goes up even when idle */
                    int fd = w->fd;
                    pthread_mutex_unlock(&w->mu);
                    int src = tfb_seg_rotate(w->seg, &fd, 0, 0);
                    pthread_mutex_lock(&w->mu);
                    w->fd = fd;
                    if (src && !w->sticky)
                        w->sticky = src;
                }
                tfb_deadline_after_ms(&deadline, w->opts.flush_interval_ms);
                if (w->sticky)
                    pthread_cond_broadcast(&w->cv_space);
            }
            if (w->active.n == 0 && w->flush_target > w->written) {
                w->written = w->appended; /* nothing left to write */
                pthread_cond_broadcast(&w->cv_space);
                continue;
            }
            pthread_cond_timedwait(&w->cv_work, &w->mu, &deadline);
            continue;
        }
        wbuf out = w->active;
        w->active = w->spare;
        w->spare = (wbuf){0};
        w->kicked = 0;
        uint64_t upto = w->appended;
        int sticky = w->sticky;
        pthread_mutex_unlock(&w->mu);

        /* CRCs are computed here, not on the logging threads. */
        if (!sticky)
            tfb_seal_records(out.v, out.n);
        uint64_t dropped = 0;
        if (!sticky && w->seg && tfb_seg_admit(w->seg, out.n) < 0) {
            /* The spool is full (the store has been down for long):
             * these records are dropped and counted; logging goes on. */
            dropped = tfb_count_records(out.v, out.n);
            out.n = 0;
        }
        int rc = sticky ? sticky : write_all(w->fd, out.v, out.n);
        if (!rc && file_deleted(w->fd))
            rc = TFB_ENOENT;
        if (!rc && w->seg)
            rc = tfb_seg_rotate(w->seg, &w->fd, out.n, 0);

        pthread_mutex_lock(&w->mu);
        w->records_dropped += dropped;
        if (rc && !w->sticky)
            w->sticky = rc;
        if (!rc)
            w->bytes_written += out.n;
        out.n = 0;
        w->spare = out;
        w->written = upto;
        tfb_deadline_after_ms(&deadline, w->opts.flush_interval_ms);
        pthread_cond_broadcast(&w->cv_space);
    }
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

int tfb_writer_resolve_rank(const tfb_writer_opts *opts, tfb_rank_owned *r)
{
    /* The rank fields are read through the caller's size (an older
     * caller's struct has none: they are then "unset"). */
    tfb_writer_opts full;
    tfb_writer_opts_init(&full);
    if (opts && tfb_abi_read(&full, sizeof full, opts) < 0)
        return TFB_EINVAL;
    return tfb_rank_resolve(&full, r);
}

int tfb_writer_open(tfb_writer **out, const char *run_dir,
                    const tfb_writer_opts *opts)
{
    if (!out || !run_dir || !*run_dir)
        return TFB_EINVAL;
    tfb_rank_owned r;
    int rc = tfb_writer_resolve_rank(opts, &r);
    return rc ? rc : tfb_writer_open_resolved(out, run_dir, opts, &r);
}

/* The work opts (tfboard.h "Work per step"): each amount >= 0 and
 * finite, a dtype the peak table knows (or none). The dtype string is the
 * caller's: parsed here, not kept. */
static int read_work_opts(tfb_writer *w)
{
    const double v[] = {w->opts.flops_per_step, w->opts.samples_per_step,
                        w->opts.tokens_per_step, w->opts.peak_tflops};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        if (!isfinite(v[i]) || v[i] < 0)
            return TFB_EINVAL;
    w->work_dtype = -1;
    if (w->opts.dtype && *w->opts.dtype) {
        tfb_peak_dtype d;
        if (tfb_peak_dtype_parse(w->opts.dtype, &d) < 0)
            return TFB_EINVAL;
        w->work_dtype = (int)d;
    }
    w->opts.dtype = NULL;
    if (w->opts.device)
        snprintf(w->work_device, sizeof w->work_device, "%s", w->opts.device);
    w->opts.device = NULL;
    return 0;
}

void tfb_writer_work_opts(const tfb_writer *w, tfb_work_opts *out)
{
    out->flops = w->opts.flops_per_step;
    out->samples = w->opts.samples_per_step;
    out->tokens = w->opts.tokens_per_step;
    out->peak_tflops = w->opts.peak_tflops;
    out->dtype = w->work_dtype;
    out->device = w->work_device;
}

int tfb_writer_open_resolved(tfb_writer **out, const char *run_dir,
                             const tfb_writer_opts *opts, tfb_rank_owned *r)
{
    if (!out || !run_dir || !*run_dir) {
        tfb_rank_owned_free(r);
        return TFB_EINVAL;
    }
    tfb_writer *w = calloc(1, sizeof *w);
    if (!w) {
        tfb_rank_owned_free(r);
        return TFB_ENOMEM;
    }
    w->rank = *r;
    w->fd = -1;
    tfb_fork_guard_init();
    w->fork_gen = tfb_fork_generation();
    tfb_writer_opts_init(&w->opts);
    if (opts) {
        if (tfb_abi_read(&w->opts, sizeof w->opts, opts) < 0) {
            free(w);
            return TFB_EINVAL;
        }
        if (!w->opts.queue_bytes)
            w->opts.queue_bytes = DEFAULT_QUEUE_BYTES;
        if (!w->opts.flush_interval_ms)
            w->opts.flush_interval_ms = DEFAULT_FLUSH_MS;
    }
    if (read_work_opts(w) < 0) {
        tfb_rank_owned_free(&w->rank);
        free(w);
        return TFB_EINVAL;
    }
    /* The suffix string is the caller's; keep our own copy. */
    char *suffix = NULL;
    if (w->opts.filename_suffix && !(suffix = strdup(w->opts.filename_suffix))) {
        tfb_rank_owned_free(&w->rank);
        free(w);
        return TFB_ENOMEM;
    }
    w->opts.filename_suffix = suffix;
    /* The caller's strings are not kept; the resolved copies are. */
    w->opts.job = w->rank.job;
    w->opts.host = w->rank.host;
    size_t half = w->opts.queue_bytes / 2;
    if (half < 4096)
        half = 4096;
    char *spool = NULL;
    if (tfb_os_is_url(run_dir)) {
        /* A bucket: the files go to a local spool, uploaded by segments. */
        int src = tfb_seg_open(&w->seg, run_dir, &w->opts, &spool);
        w->opts.spool_dir = NULL; /* the caller's string is not kept */
        if (src) {
            free(suffix);
            tfb_rank_owned_free(&w->rank);
            free(w);
            return src;
        }
        run_dir = spool;
        if (w->opts.flush_interval_ms > tfb_seg_period_ms(w->seg))
            w->opts.flush_interval_ms = tfb_seg_period_ms(w->seg);
    }
    w->run_dir = strdup(run_dir);
    free(spool);
    /* Exactly half each: the queue is the size asked for. */
    int rc = (!w->run_dir || tfb_vec_setcap(&w->active, half) < 0 ||
              tfb_vec_setcap(&w->spare, half) < 0)
                 ? TFB_ENOMEM
                 : 0;
    tfb_wallclock_init(&w->clock);
    if (!rc)
        rc = make_dirs(w->run_dir); /* run_dir may be the freed spool name */
    if (!rc)
        rc = create_file(w);
    if (!rc) {
        uint8_t rec[TFB_EV_FILE_VERSION_MAX];
        size_t n = tfb_ev_file_version_write(rec, tfb_now_wall());
        rc = write_all(w->fd, rec, n);
        w->bytes_written = n;
    }
    if (!rc && w->rank.rank >= 0) {
        /* Written here, like file_version, so it is the second record
         * whatever the caller logs first. */
        uint8_t *rrec;
        size_t rn;
        rc = tfb_rank_record(&w->rank, tfb_now_wall(), &rrec, &rn);
        if (!rc) {
            rc = write_all(w->fd, rrec, rn);
            free(rrec);
            if (!rc)
                w->bytes_written += rn;
        }
    }
    if (!rc && w->seg)
        tfb_seg_first(w->seg, w->path, (size_t)w->bytes_written);
    if (!rc) {
        /* Deadlines on CLOCK_MONOTONIC: a wall clock set back must not
         * stall the periodic flush. */
        pthread_mutex_init(&w->mu, NULL);
        tfb_cond_init_monotonic(&w->cv_work);
        tfb_cond_init_monotonic(&w->cv_space);
        /* The background thread takes no signals: they belong to the
         * training program's own threads. */
        sigset_t all, old;
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old);
        int e = pthread_create(&w->thread, NULL, writer_thread, w);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        if (e) {
            rc = TFB_ENOMEM;
            pthread_mutex_destroy(&w->mu);
            pthread_cond_destroy(&w->cv_work);
            pthread_cond_destroy(&w->cv_space);
        }
    }
    if (rc) {
        if (w->fd >= 0) {
            close(w->fd);
            unlink(w->path);
        }
        if (w->seg)
            tfb_seg_close(w->seg, -1);
        tfb_vec_free(&w->active);
        tfb_vec_free(&w->spare);
        free(w->run_dir);
        free(w->path);
        free(suffix);
        tfb_rank_owned_free(&w->rank);
        free(w);
        return rc;
    }
    *out = w;
    return 0;
}

void tfb_writer_set_hooks(tfb_writer *w, tfb_writer_module m,
                          tfb_writer_hook on_flush, tfb_writer_hook on_close)
{
    if (!w || (unsigned)m >= TFB_WRITER_MOD_COUNT)
        return;
    pthread_mutex_lock(&w->mu);
    w->hooks[m].on_flush = on_flush;
    w->hooks[m].on_close = on_close;
    pthread_mutex_unlock(&w->mu);
}

/* tfb_writer_close in a child of fork(): release what is certainly
 * consistent, without joining the thread (it does not exist here) and
 * without writing anything (the queued bytes are the parent's; its own
 * thread writes them to its file). */
static int close_inherited(tfb_writer *w)
{
    /* Each module checks the fork itself. The hooks are read without the
     * lock, which a thread of the parent may hold forever here. */
    for (int m = 0; m < TFB_WRITER_MOD_COUNT; m++)
        if (w->hooks[m].on_close)
            w->hooks[m].on_close(w);
    /* Only this process's copy of the descriptor: the parent's stays
     * open, and close() writes nothing. */
    close(w->fd);
    /* If no thread held the mutex at fork time, buffers and tag table are
     * consistent and can be freed; otherwise another thread was changing
     * them and they are left (a bounded leak in the child, never a crash).
     * trylock never waits. The condition variables are never destroyed:
     * glibc's destroy waits for waiters, which here are threads that are
     * gone. */
    if (pthread_mutex_trylock(&w->mu) == 0) {
        tfb_tag_table_free(&w->tags);
        tfb_vec_free(&w->active);
        tfb_vec_free(&w->spare);
        pthread_mutex_unlock(&w->mu);
        pthread_mutex_destroy(&w->mu);
    }
    free(w->run_dir);
    free(w->path);
    free((char *)w->opts.filename_suffix);
    free(w);
    return TFB_EFORKED;
}

int tfb_writer_closep(tfb_writer **pw)
{
    if (!pw || !*pw)
        return 0;
    tfb_writer *w = *pw;
    *pw = NULL;
    return tfb_writer_close(w);
}

int tfb_writer_close(tfb_writer *w)
{
    return tfb_writer_close_reason(w, NULL);
}

int tfb_writer_close_reason(tfb_writer *w, const char *reason)
{
    if (!w)
        return 0;
    if (inherited(w))
        return close_inherited(w);
    /* close is not concurrent with other calls on w: no lock needed to
     * read the hooks. */
    for (int m = 0; m < TFB_WRITER_MOD_COUNT; m++)
        if (w->hooks[m].on_close)
            w->hooks[m].on_close(w);
    /* The end-of-run record goes last, after what the modules flushed, so
     * that a reader knows the run finished (run_end.h). */
    uint8_t *end;
    size_t end_len;
    if (tfb_run_end_event(reason, tfb_now_wall(), &end, &end_len) == 0) {
        /* Never dropped, even with drop_when_full: it waits for room (close
         * is not concurrent with other calls on w, so the option may be
         * changed here). */
        w->opts.drop_when_full = 0;
        tfb_writer_log_event(w, end, end_len);
        free(end);
    }
    pthread_mutex_lock(&w->mu);
    w->closing = 1;
    pthread_cond_signal(&w->cv_work);
    pthread_cond_broadcast(&w->cv_space);
    pthread_mutex_unlock(&w->mu);
    pthread_join(w->thread, NULL);
    int rc = w->sticky;
    if (w->seg) {
        /* the last segment and the run's other files go up now */
        int src = tfb_seg_close(w->seg, w->fd);
        if (!rc)
            rc = src;
    } else if (close(w->fd) < 0 && !rc) {
        rc = tfb_err_from_errno(errno);
    }
    pthread_mutex_destroy(&w->mu);
    pthread_cond_destroy(&w->cv_work);
    pthread_cond_destroy(&w->cv_space);
    tfb_tag_table_free(&w->tags);
    tfb_vec_free(&w->active);
    tfb_vec_free(&w->spare);
    free(w->run_dir);
    free(w->path);
    free((char *)w->opts.filename_suffix);
    tfb_rank_owned_free(&w->rank);
    free(w);
    return rc;
}

int tfb_flush(tfb_writer *w)
{
    if (!w)
        return TFB_EINVAL;
    if (inherited(w))
        return TFB_EFORKED;
    tfb_writer_hook flush_hooks[TFB_WRITER_MOD_COUNT];
    pthread_mutex_lock(&w->mu);
    for (int m = 0; m < TFB_WRITER_MOD_COUNT; m++)
        flush_hooks[m] = w->hooks[m].on_flush;
    pthread_mutex_unlock(&w->mu);
    for (int m = 0; m < TFB_WRITER_MOD_COUNT; m++)
        if (flush_hooks[m])
            flush_hooks[m](w);
    pthread_mutex_lock(&w->mu);
    uint64_t target = w->appended;
    if (w->flush_target < target)
        w->flush_target = target;
    pthread_cond_signal(&w->cv_work);
    while (w->written < target && !w->sticky && !w->closing)
        pthread_cond_wait(&w->cv_space, &w->mu);
    int rc = w->sticky;
    pthread_mutex_unlock(&w->mu);
    return rc;
}

/* With w->mu held: room for `need` bytes at the end of the active buffer,
 * waiting (or dropping) while the queue is full. */
static int reserve_slow(tfb_writer *w, size_t need, uint8_t **dst);

static inline int reserve_locked(tfb_writer *w, size_t need, uint8_t **dst)
{
    if (w->active.n + need <= w->active.cap && !w->sticky && !w->closing) {
        *dst = w->active.v + w->active.n;
        return 0;
    }
    return reserve_slow(w, need, dst);
}

static int reserve_slow(tfb_writer *w, size_t need, uint8_t **dst)
{
    for (;;) {
        if (w->sticky)
            return w->sticky;
        if (w->closing)
            return TFB_ECLOSED;
        if (w->active.n + need <= w->active.cap)
            break;
        if (need > w->active.cap && w->active.n == 0) {
            /* A record larger than the queue: grow this buffer for it.
             * Rare (huge text); it keeps the size for later records. */
            if (tfb_vec_setcap(&w->active, need) < 0)
                return TFB_ENOMEM;
            break;
        }
        if (w->opts.drop_when_full) {
            w->records_dropped++;
            return TFB_EDROPPED;
        }
        w->kicked = 1;
        pthread_cond_signal(&w->cv_work);
        pthread_cond_wait(&w->cv_space, &w->mu);
    }
    *dst = w->active.v + w->active.n;
    return 0;
}

static void commit_locked(tfb_writer *w, size_t n)
{
    w->active.n += n;
    w->appended += n;
    w->records_logged++;
    /* Wake the background thread once the buffer is half full, so writing
     * overlaps with filling and callers rarely wait. */
    if (!w->kicked && w->active.n >= w->active.cap / 2) {
        w->kicked = 1;
        pthread_cond_signal(&w->cv_work);
    }
}

static inline void note_step_locked(tfb_writer *w, int64_t step)
{
    if (!w->have_step || step > w->max_step) {
        w->max_step = step;
        w->have_step = 1;
    }
}

int tfb_writer_max_step(tfb_writer *w, int64_t *step)
{
    if (inherited(w))
        return 0;
    pthread_mutex_lock(&w->mu);
    int have = w->have_step;
    *step = have ? w->max_step : 0;
    pthread_mutex_unlock(&w->mu);
    return have;
}

/* Encodes one value under the lock. meta_flag names the per-tag flag that
 * says the plugin metadata was already written for this tag. */
static int log_value(tfb_writer *w, tfb_ev_value *v, unsigned meta_flag,
                     double wall, int64_t step)
{
    if (inherited(w))
        return TFB_EFORKED;
    pthread_mutex_lock(&w->mu);
    tfb_tag_entry *e = NULL;
    if (meta_flag) {
        e = tfb_tag_table_get(&w->tags, v->tag, v->tag_len);
        if (!e) {
            pthread_mutex_unlock(&w->mu);
            return TFB_ENOMEM;
        }
        if (e->flags & meta_flag)
            v->plugin = NULL;
    }
    size_t need = tfb_ev_record_size(step, v);
    uint8_t *dst;
    int rc = reserve_locked(w, need, &dst);
    if (!rc) {
        tfb_ev_record_write(dst, wall, step, v);
        commit_locked(w, need);
        note_step_locked(w, step);
        /* Entries never move, even if reserve_locked waited and another
         * thread added tags meanwhile. */
        if (e)
            e->flags |= meta_flag;
    }
    pthread_mutex_unlock(&w->mu);
    return rc;
}

/* tag equals the n-byte string copy (which holds no NUL). Reads tag only up
 * to its first difference: a caller's shorter string is never read past its
 * terminator, as memcmp might. */
static inline int same_string(const char *copy, const char *tag, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (tag[i] != copy[i])
            return 0;
    return tag[n] == 0;
}

static inline unsigned cache_slot(const char *tag)
{
    return (unsigned)(((uintptr_t)tag >> 3) ^ ((uintptr_t)tag >> 9)) & 63;
}

/* The hot path. wall == NULL means "now", read under the lock from the
 * writer's TSC-backed clock. The record is encoded straight into the
 * queue: room for the largest possible record is reserved, the exact size
 * committed. */
static int log_scalar(tfb_writer *w, const char *tag, double value,
                      int64_t step, const double *wall)
{
    if (!w || !tag)
        return TFB_EINVAL;
    if (inherited(w))
        return TFB_EFORKED;
    float f = (float)value;
    unsigned slot = cache_slot(tag);
    pthread_mutex_lock(&w->mu);
    int with_meta;
    const char *copy;
    const uint8_t *field;
    size_t field_len, tag_len = w->tag_cache[slot].len;
    /* A hit needs the same pointer and the same bytes, terminator included
     * (so no strlen on the hot path). */
    if (w->tag_cache[slot].ptr == tag &&
        same_string(w->tag_cache[slot].copy, tag, tag_len)) {
        with_meta = 0; /* cached only once the metadata is in the queue */
        copy = w->tag_cache[slot].copy;
        field = w->tag_cache[slot].field;
        field_len = w->tag_cache[slot].field_len;
    } else {
        tag_len = strlen(tag);
        tfb_tag_entry *e = tfb_tag_table_get(&w->tags, tag, tag_len);
        if (!e) {
            pthread_mutex_unlock(&w->mu);
            return TFB_ENOMEM;
        }
        with_meta = !(e->flags & TFB_TAG_META_SCALAR);
        e->flags |= TFB_TAG_META_SCALAR; /* undone below on failure */
        copy = e->tag;
        field = e->field;
        field_len = e->field_len;
    }
    size_t most = TFB_EV_SCALAR_MAX(tag_len);
    uint8_t *dst;
    int rc = reserve_locked(w, most, &dst);
    if (rc == 0) {
        double t = wall ? *wall
                        : (double)tfb_wallclock_now(&w->clock) * 1e-9;
        size_t n = tfb_ev_scalar_write(dst, t, step, field, field_len,
                                       with_meta, f);
        commit_locked(w, n);
        note_step_locked(w, step);
        w->tag_cache[slot].ptr = tag;
        w->tag_cache[slot].copy = copy;
        w->tag_cache[slot].field = field;
        w->tag_cache[slot].len = tag_len;
        w->tag_cache[slot].field_len = field_len;
    } else if (with_meta) {
        /* Not written: the next value of this tag must carry the metadata.
         * (Look the entry up again: the table may have grown while
         * reserve_locked waited.) */
        tfb_tag_entry *e = tfb_tag_table_get(&w->tags, tag, tag_len);
        if (e)
            e->flags &= ~(unsigned)TFB_TAG_META_SCALAR;
    }
    pthread_mutex_unlock(&w->mu);
    if (!isfinite(f)) {
        tfb_nonfinite_counts c = {0};
        tfb_nonfinite_add(&c, f);
        tfb_writer_report_nonfinite(w, tag, step, &c);
    }
    return rc;
}

int tfb_scalar_at(tfb_writer *w, const char *tag, double value, int64_t step,
                  double wall_time)
{
    return log_scalar(w, tag, value, step, &wall_time);
}

int tfb_scalar(tfb_writer *w, const char *tag, double value, int64_t step)
{
    return log_scalar(w, tag, value, step, NULL);
}

static int log_histo(tfb_writer *w, const char *tag, tfb_histo *h,
                     int64_t step, double wall)
{
    tfb_ev_value v = {.kind = TFB_EV_HISTO,
                      .tag = tag,
                      .tag_len = strlen(tag),
                      .plugin = "histograms",
                      .plugin_len = 10,
                      .histo = h};
    int rc = log_value(w, &v, TFB_TAG_META_HISTO, wall, step);
    tfb_nonfinite_counts c = h->nonfinite;
    tfb_histo_free(h);
    if (!rc && (c.nan || c.pos_inf || c.neg_inf)) {
        rc = tfb_writer_numerics_record(w, tag, step, &c);
        tfb_writer_report_nonfinite(w, tag, step, &c);
    }
    return rc;
}

int tfb_histogram_at(tfb_writer *w, const char *tag, const float *values,
                     size_t n, int64_t step, double wall_time)
{
    if (!w || !tag || (!values && n))
        return TFB_EINVAL;
    if (inherited(w))
        return TFB_EFORKED;
    tfb_histo h;
    int rc = tfb_histo_build_f32(&h, values, n);
    return rc ? rc : log_histo(w, tag, &h, step, wall_time);
}

int tfb_histogram_f64_at(tfb_writer *w, const char *tag, const double *values,
                         size_t n, int64_t step, double wall_time)
{
    if (!w || !tag || (!values && n))
        return TFB_EINVAL;
    if (inherited(w))
        return TFB_EFORKED;
    tfb_histo h;
    int rc = tfb_histo_build_f64(&h, values, n);
    return rc ? rc : log_histo(w, tag, &h, step, wall_time);
}

/* The wall time is that of the call, taken before the histogram is built. */
int tfb_histogram(tfb_writer *w, const char *tag, const float *values,
                  size_t n, int64_t step)
{
    return tfb_histogram_at(w, tag, values, n, step, tfb_now_wall());
}

int tfb_histogram_f64(tfb_writer *w, const char *tag, const double *values,
                      size_t n, int64_t step)
{
    return tfb_histogram_f64_at(w, tag, values, n, step, tfb_now_wall());
}

static int log_text(tfb_writer *w, const char *tag, const char *utf8,
                    int64_t step, double wall)
{
    if (!w || !tag || !utf8)
        return TFB_EINVAL;
    tfb_ev_value v = {.kind = TFB_EV_STRING,
                      .tag = tag,
                      .tag_len = strlen(tag),
                      .plugin = "text",
                      .plugin_len = 4,
                      .str = utf8,
                      .str_len = strlen(utf8)};
    return log_value(w, &v, TFB_TAG_META_TEXT, wall, step);
}

int tfb_writer_plugin_text(tfb_writer *w, const char *plugin, const char *tag,
                           const char *text, size_t len, double wall)
{
    if (!w || !plugin || !tag || (!text && len))
        return TFB_EINVAL;
    tfb_ev_value v = {.kind = TFB_EV_STRING,
                      .tag = tag,
                      .tag_len = strlen(tag),
                      .plugin = plugin,
                      .plugin_len = strlen(plugin),
                      .str = text ? text : "",
                      .str_len = len};
    return log_value(w, &v, 0, wall, 0);
}

int tfb_text(tfb_writer *w, const char *tag, const char *utf8, int64_t step)
{
    return log_text(w, tag, utf8, step, tfb_now_wall());
}

int tfb_text_at(tfb_writer *w, const char *tag, const char *utf8,
                int64_t step, double wall_time)
{
    return log_text(w, tag, utf8, step, wall_time);
}

int tfb_writer_numerics_record(tfb_writer *w, const char *tag, int64_t step,
                               const tfb_nonfinite_counts *c)
{
    if (!w || !tag || !c)
        return TFB_EINVAL;
    int64_t vals[3] = {(int64_t)c->nan, (int64_t)c->pos_inf,
                       (int64_t)c->neg_inf};
    /* Always with metadata: these records are rare, and a reader must not
     * mistake them for another plugin that uses the same tag. */
    tfb_ev_value v = {.kind = TFB_EV_INT64_VEC,
                      .tag = tag,
                      .tag_len = strlen(tag),
                      .plugin = TFB_NUMERICS_PLUGIN,
                      .plugin_len = sizeof TFB_NUMERICS_PLUGIN - 1,
                      .i64 = vals,
                      .n_i64 = 3};
    return log_value(w, &v, 0, tfb_now_wall(), step);
}

void tfb_writer_report_nonfinite(tfb_writer *w, const char *tag, int64_t step,
                                 const tfb_nonfinite_counts *c)
{
    if (!w || !tag || !c || !w->opts.on_nonfinite || inherited(w))
        return;
    int first = 0;
    pthread_mutex_lock(&w->mu);
    tfb_tag_entry *e = tfb_tag_table_get(&w->tags, tag, strlen(tag));
    if (e && !(e->flags & TFB_TAG_NONFINITE)) {
        e->flags |= TFB_TAG_NONFINITE;
        first = 1;
    }
    pthread_mutex_unlock(&w->mu);
    if (first)
        w->opts.on_nonfinite(w->opts.on_nonfinite_user, tag, step, c->nan,
                             c->pos_inf, c->neg_inf);
}

void tfb_writer_stats_init(tfb_writer_stats *out)
{
    if (!out)
        return;
    memset(out, 0, sizeof *out);
    out->size = sizeof *out;
}

int tfb_writer_get_stats(tfb_writer *w, tfb_writer_stats *out)
{
    if (!w || !out)
        return TFB_EINVAL;
    if (inherited(w))
        return TFB_EFORKED;
    tfb_writer_stats st;
    tfb_writer_stats_init(&st);
    pthread_mutex_lock(&w->mu);
    st.records_logged = w->records_logged;
    st.records_dropped = w->records_dropped;
    st.bytes_written = w->bytes_written;
    st.sticky_error = w->sticky ? w->sticky : tfb_seg_sticky(w->seg);
    pthread_mutex_unlock(&w->mu);
    return tfb_abi_write(out, &st, sizeof st);
}

const char *tfb_writer_path(const tfb_writer *w)
{
    return w && !inherited(w) ? w->path : NULL;
}

const char *tfb_writer_run_dir(const tfb_writer *w)
{
    return w && !inherited(w) ? w->run_dir : NULL;
}

int tfb_writer_in_bucket(const tfb_writer *w)
{
    return w && w->seg != NULL;
}

struct tfb_gpu_tracer **tfb_writer_gpu_slot(tfb_writer *w)
{
    return &w->gpu;
}

struct tfb_pipeline **tfb_writer_pipeline_slot(tfb_writer *w)
{
    return &w->pipeline;
}

struct tfb_media **tfb_writer_media_slot(tfb_writer *w)
{
    return &w->media;
}

void tfb_writer_count_dropped(tfb_writer *w)
{
    pthread_mutex_lock(&w->mu);
    w->records_dropped++;
    pthread_mutex_unlock(&w->mu);
}

/* ---- Pre-serialized events (hparams.c) ---- */

int tfb_writer_log_event(tfb_writer *w, const uint8_t *event, size_t len)
{
    if (!w || (!event && len))
        return TFB_EINVAL;
    size_t need = len + TFB_RECORD_OVERHEAD;
    pthread_mutex_lock(&w->mu);
    uint8_t *dst;
    int rc = reserve_locked(w, need, &dst);
    if (!rc) {
        /* The length now, both CRCs later (tfb_seal_records, off the
         * logging thread), as for every other record. */
        pb_put_fixed64(dst, len);
        if (len)
            memcpy(dst + 12, event, len);
        commit_locked(w, need);
    }
    pthread_mutex_unlock(&w->mu);
    return rc;
}

const tfb_rank_owned *tfb_writer_rank(const tfb_writer *w)
{
    return &w->rank;
}
