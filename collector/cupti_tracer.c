/*
 * cupti_tracer.c - the public GPU tracing API: loads CUPTI, enables the
 * activity kinds, serves activity buffers from a capped pool, hands
 * completed buffers to our own thread (which walks them into the trace
 * store, flushes CUPTI periodically and logs gpu/<device>/utilization),
 * and tears everything down (forced flush, cuptiFinalize) at stop.
 *
 * CUPTI's buffer callbacks carry no user pointer and CUPTI allows one
 * subscriber per process, so one tracer is active per process (g_active).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "collector/abi.h"
#include "collector/cupti_internal.h"
#include "base/deadline.h"
#include "collector/writer_internal.h"

typedef struct tfb_gpu_tracer tfb_gpu_tracer;

typedef struct done_buf {
    uint8_t *buf;
    size_t valid;
} done_buf;

struct tfb_gpu_tracer {
    tfb_writer *w;
    tfb_gpu_opts opts;
    char cupti_path[1024];
    tfb_cupti_api api;
    tfb_trace_store *store;
    tfb_gpu_util *util;
    tfb_cupti_proc *proc;
    int active;  /* CUPTI enabled and thread running */
    int started; /* thread created */
    int callbacks_registered;

    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int stop;
    /* Buffer pool: at most opts.max_buffers exist; free ones wait here. */
    uint8_t **free_bufs;
    size_t nfree;
    unsigned allocated;
    done_buf *done;
    size_t ndone;

    tfb_gpu_stats stats;
    char err[512];
};

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static tfb_gpu_tracer *g_active;
static pthread_once_t g_atfork_once = PTHREAD_ONCE_INIT;

/* fork(): g_mu is held across it (CUPTI's callbacks hold it only briefly),
 * so the child finds it free, and the child forgets the parent's tracer:
 * its thread, store and CUPTI subscription stay the parent's. */
static void tracer_prepare(void)
{
    pthread_mutex_lock(&g_mu);
}

static void tracer_parent(void)
{
    pthread_mutex_unlock(&g_mu);
}

static void tracer_child(void)
{
    g_active = NULL;
    pthread_mutex_unlock(&g_mu);
}

static void register_atfork(void)
{
    (void)pthread_atfork(tracer_prepare, tracer_parent, tracer_child);
}

/* ------------------------------------------------------------------------
 * CUPTI buffer callbacks (CUPTI's threads, or the flushing thread)
 * ---------------------------------------------------------------------- */
static void CUPTIAPI on_buffer_request(uint8_t **buffer, size_t *size,
                                       size_t *max_records)
{
    *buffer = NULL;
    *size = 0;
    *max_records = 0;
    pthread_mutex_lock(&g_mu);
    tfb_gpu_tracer *t = g_active;
    if (t) {
        pthread_mutex_lock(&t->mu);
        uint8_t *b = NULL;
        if (t->nfree)
            b = t->free_bufs[--t->nfree];
        else if (t->allocated < t->opts.max_buffers) {
            /* 8-byte alignment is CUPTI's requirement; a page is cheap. */
            b = aligned_alloc(4096, t->opts.buffer_bytes);
            if (b)
                t->allocated++;
        }
        /* NULL past the cap: CUPTI drops the records and counts them
         * (cuptiActivityGetNumDroppedRecords); memory stays bounded. */
        if (b) {
            *buffer = b;
            *size = t->opts.buffer_bytes;
        }
        pthread_mutex_unlock(&t->mu);
    }
    pthread_mutex_unlock(&g_mu);
}

static void CUPTIAPI on_buffer_complete(CUcontext ctx, uint32_t stream,
                                        uint8_t *buffer, size_t size,
                                        size_t valid)
{
    (void)size;
    pthread_mutex_lock(&g_mu);
    tfb_gpu_tracer *t = g_active;
    if (!t) {
        pthread_mutex_unlock(&g_mu);
        free(buffer);
        return;
    }
    size_t dropped = 0;
    if (t->api.ActivityGetNumDroppedRecords(ctx, stream, &dropped) !=
        CUPTI_SUCCESS)
        dropped = 0;
    pthread_mutex_lock(&t->mu);
    t->stats.records_dropped += dropped;
    if (buffer) {
        /* Never more buffers than the pool holds, so done[] has room. */
        t->done[t->ndone].buf = buffer;
        t->done[t->ndone].valid = valid;
        t->ndone++;
        pthread_cond_signal(&t->cv);
    }
    pthread_mutex_unlock(&t->mu);
    pthread_mutex_unlock(&g_mu);
}

/* ------------------------------------------------------------------------
 * Our thread
 * ---------------------------------------------------------------------- */
static void emit_util(void *user, uint32_t device, int64_t bucket,
                      int64_t bucket_end_ns, double busy)
{
    tfb_gpu_tracer *t = user;
    char tag[64];
    snprintf(tag, sizeof tag, TFB_TAG_GPU_PREFIX "%u/" TFB_TAG_GPU_UTILIZATION,
             (unsigned)device);
    tfb_scalar_at(t->w, tag, busy, bucket, (double)bucket_end_ns / 1e9);
}

static void set_sticky(tfb_gpu_tracer *t, int err)
{
    pthread_mutex_lock(&t->mu);
    if (!t->stats.sticky_error)
        t->stats.sticky_error = err;
    pthread_mutex_unlock(&t->mu);
}

static void process_done(tfb_gpu_tracer *t)
{
    for (;;) {
        pthread_mutex_lock(&t->mu);
        if (!t->ndone) {
            pthread_mutex_unlock(&t->mu);
            return;
        }
        done_buf d = t->done[0];
        memmove(&t->done[0], &t->done[1], (t->ndone - 1) * sizeof t->done[0]);
        t->ndone--;
        pthread_mutex_unlock(&t->mu);

        int64_t n = tfb_cupti_process_buffer(t->proc, d.buf, d.valid);
        if (n < 0)
            set_sticky(t, (int)n);
        tfb_cupti_counts c;
        tfb_cupti_proc_counts(t->proc, &c);
        pthread_mutex_lock(&t->mu);
        t->free_bufs[t->nfree++] = d.buf;
        t->stats.buffers_completed++;
        t->stats.kernels = c.kernels;
        t->stats.memcpys = c.memcpys;
        t->stats.memsets = c.memsets;
        t->stats.syncs = c.syncs;
        t->stats.api_calls = c.api_calls;
        t->stats.markers = c.markers;
        t->stats.overheads = c.overheads;
        t->stats.memory_events = c.memory;
        t->stats.memory_pool_events = c.memory_pools;
        pthread_mutex_unlock(&t->mu);
    }
}

static void *tracer_main(void *arg)
{
    tfb_gpu_tracer *t = arg;
    int64_t flush_ns = (int64_t)t->opts.flush_interval_ms * 1000000;
    int64_t util_ns = (int64_t)t->opts.utilization_interval_ms * 1000000;
    int64_t tick = flush_ns < util_ns ? flush_ns : util_ns;
    /* Scheduled on CLOCK_MONOTONIC, so a wall clock set back cannot
     * postpone a flush; the utilization buckets stay on CUPTI's clock. */
    int64_t next_flush = tfb_mono_now_ns() + flush_ns;
    int64_t next_util = tfb_mono_now_ns() + util_ns;
    for (;;) {
        pthread_mutex_lock(&t->mu);
        if (!t->ndone && !t->stop) {
            struct timespec ts;
            tfb_deadline_after_ms(&ts, (unsigned)(tick / 1000000));
            pthread_cond_timedwait(&t->cv, &t->mu, &ts);
        }
        int stop = t->stop;
        pthread_mutex_unlock(&t->mu);

        process_done(t);
        if (stop)
            break;
        int64_t now = tfb_mono_now_ns();
        if (now >= next_flush) {
            /* Completed records only (flag 0): never stalls the GPU. The
             * buffers come back through on_buffer_complete; they are walked
             * before the utilization below is computed. */
            t->api.ActivityFlushAll(0);
            next_flush = now + flush_ns;
            process_done(t);
        }
        if (now >= next_util) {
            /* One bucket of lag: records of the last bucket may still sit
             * in CUPTI's buffers. */
            tfb_gpu_util_emit_until(t->util, tfb_now_ns() - util_ns,
                                    emit_util, t);
            next_util = now + util_ns;
        }
    }
    tfb_gpu_util_finish(t->util, tfb_now_ns(), emit_util, t);
    return NULL;
}

/* ------------------------------------------------------------------------
 * Start / stop
 * ---------------------------------------------------------------------- */
/* Runtime calls worth a row: kernel launches, copies, memsets and the
 * synchronizing calls. Everything else (cudaGetDevice, cudaGetLastError,
 * cudaStreamQuery...) stays muted: they are frequent and say little. */
static const CUpti_CallbackId k_runtime_cbids[] = {
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunch_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_ptsz_v9000,
    CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000,
    CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_ptsz_v13000,
    CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000,
    CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_ptsz_v10000,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy2D_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyToSymbol_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyFromSymbol_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_ptsz_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy2DAsync_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy3D_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy3DAsync_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyPeer_v4000,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyPeerAsync_v4000,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyBatchAsync_v13000,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemset_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_ptsz_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemset2D_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_ptsz_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaEventSynchronize_v3020,
};

/* Kernels and copies are what tracing is for: without them start fails.
 * The others add detail; a platform that refuses one (e.g. MPS, older
 * drivers) still gets the rest, and the refusal is noted. */
static const CUpti_ActivityKind k_required[] = {
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, /* first: it decides GPU or not */
    CUPTI_ACTIVITY_KIND_MEMCPY,
};
static const CUpti_ActivityKind k_optional[] = {
    CUPTI_ACTIVITY_KIND_MEMSET,
    CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
    CUPTI_ACTIVITY_KIND_MARKER,
    CUPTI_ACTIVITY_KIND_OVERHEAD,
    CUPTI_ACTIVITY_KIND_DEVICE,
    /* GPU memory (issue 13): allocations/releases and pool changes. */
    CUPTI_ACTIVITY_KIND_MEMORY2,
    CUPTI_ACTIVITY_KIND_MEMORY_POOL,
};

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

static void disable_all(tfb_gpu_tracer *t)
{
    for (size_t i = 0; i < NELEM(k_required); i++)
        t->api.ActivityDisable(k_required[i]);
    for (size_t i = 0; i < NELEM(k_optional); i++)
        t->api.ActivityDisable(k_optional[i]);
    t->api.ActivityDisable(CUPTI_ACTIVITY_KIND_RUNTIME);
    if (t->api.ActivityEnableRuntimeApi)
        for (size_t i = 0; i < NELEM(k_runtime_cbids); i++)
            t->api.ActivityEnableRuntimeApi(k_runtime_cbids[i], 0);
}

static int enable_all(tfb_gpu_tracer *t)
{
    for (size_t i = 0; i < NELEM(k_required); i++) {
        CUptiResult r = t->api.ActivityEnable(k_required[i]);
        if (r != CUPTI_SUCCESS) {
            int code = tfb_cupti_map_error(r);
            snprintf(t->err, sizeof t->err,
                     "cuptiActivityEnable(kind %d) failed: %s%s",
                     (int)k_required[i], tfb_cupti_result_name(&t->api, r),
                     code == TFB_EBUSY    ? " (another profiler holds CUPTI)"
                     : code == TFB_ENOGPU ? " (no GPU or CUDA driver)"
                                          : "");
            return code;
        }
    }
    size_t len = 0;
    for (size_t i = 0; i < NELEM(k_optional); i++) {
        CUptiResult r = t->api.ActivityEnable(k_optional[i]);
        if (r != CUPTI_SUCCESS && len < sizeof t->err)
            len += (size_t)snprintf(t->err + len, sizeof t->err - len,
                                    "%skind %d not enabled: %s",
                                    len ? "; " : "", (int)k_optional[i],
                                    tfb_cupti_result_name(&t->api, r));
    }
    if (t->opts.record_runtime) {
        int ok = t->api.ActivityEnableRuntimeApi != NULL;
        for (size_t i = 0; ok && i < NELEM(k_runtime_cbids); i++)
            ok = t->api.ActivityEnableRuntimeApi(k_runtime_cbids[i], 1) ==
                 CUPTI_SUCCESS;
        if (!ok) {
            /* Older library: all runtime calls rather than none. */
            CUptiResult r = t->api.ActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME);
            if (r != CUPTI_SUCCESS && len < sizeof t->err)
                snprintf(t->err + len, sizeof t->err - len,
                         "%sruntime calls not recorded: %s", len ? "; " : "",
                         tfb_cupti_result_name(&t->api, r));
        }
    }
    return 0;
}

static void free_pool(tfb_gpu_tracer *t)
{
    for (size_t i = 0; i < t->nfree; i++)
        free(t->free_bufs[i]);
    for (size_t i = 0; i < t->ndone; i++)
        free(t->done[i].buf);
    free(t->free_bufs);
    free(t->done);
    t->free_bufs = NULL;
    t->done = NULL;
    t->nfree = t->ndone = 0;
    t->allocated = 0;
}

static void tracer_on_close(tfb_writer *w);

static tfb_gpu_tracer *get_tracer(tfb_writer *w, int create)
{
    struct tfb_gpu_tracer **slot = tfb_writer_gpu_slot(w);
    if (!slot)
        return NULL;
    if (!*slot && create) {
        tfb_gpu_tracer *t = calloc(1, sizeof *t);
        if (!t)
            return NULL;
        pthread_mutex_init(&t->mu, NULL);
        tfb_cond_init_monotonic(&t->cv);
        t->w = w;
        *slot = t;
        tfb_writer_set_hooks(w, TFB_WRITER_MOD_GPU, NULL, tracer_on_close);
    }
    return *slot;
}

/* Undoes a partial start. The CUPTI subscription is released with
 * cuptiFinalize so a later start (or another profiler) can subscribe. */
static void teardown(tfb_gpu_tracer *t)
{
    if (t->callbacks_registered) {
        disable_all(t);
        t->api.Finalize();
        t->callbacks_registered = 0;
    }
    pthread_mutex_lock(&g_mu);
    if (g_active == t)
        g_active = NULL;
    pthread_mutex_unlock(&g_mu);
    tfb_trace_store_attach(t->w, NULL);
    tfb_cupti_proc_free(t->proc);
    t->proc = NULL;
    tfb_gpu_util_free(t->util);
    t->util = NULL;
    int serr = tfb_trace_store_close(t->store);
    if (serr && !t->stats.sticky_error)
        t->stats.sticky_error = serr;
    t->store = NULL;
    free_pool(t);
}

int tfb_gpu_trace_start(tfb_writer *w, const tfb_gpu_opts *opts)
{
    if (!w)
        return TFB_EINVAL;
    if (tfb_writer_forked(w))
        return TFB_EFORKED;
    pthread_once(&g_atfork_once, register_atfork);
    tfb_gpu_tracer *t = get_tracer(w, 1);
    if (!t)
        return TFB_ENOMEM;
    if (t->active)
        return TFB_ESTATE;
    /* Utilization buckets count from the call, not from when loading
     * CUPTI and creating the store are done. */
    int64_t t_call = tfb_now_ns();
    t->err[0] = '\0';
    memset(&t->stats, 0, sizeof t->stats);
    tfb_gpu_opts_init(&t->opts);
    if (opts) {
        if (tfb_abi_read(&t->opts, sizeof t->opts, opts) < 0)
            return TFB_EINVAL;
        tfb_gpu_opts def;
        tfb_gpu_opts_init(&def);
        if (!t->opts.buffer_bytes)
            t->opts.buffer_bytes = def.buffer_bytes;
        if (!t->opts.max_buffers)
            t->opts.max_buffers = def.max_buffers;
        if (!t->opts.flush_interval_ms)
            t->opts.flush_interval_ms = def.flush_interval_ms;
        if (!t->opts.utilization_interval_ms)
            t->opts.utilization_interval_ms = def.utilization_interval_ms;
    }
    /* aligned_alloc wants a multiple of the alignment. */
    t->opts.buffer_bytes = (t->opts.buffer_bytes + 4095) & ~(size_t)4095;
    t->cupti_path[0] = '\0';
    if (t->opts.cupti_path) {
        snprintf(t->cupti_path, sizeof t->cupti_path, "%s", t->opts.cupti_path);
        t->opts.cupti_path = t->cupti_path;
    }

    int err = tfb_cupti_load(&t->api, t->opts.cupti_path, t->err,
                             sizeof t->err);
    if (err)
        return err;

    t->free_bufs = calloc(t->opts.max_buffers, sizeof *t->free_bufs);
    t->done = calloc(t->opts.max_buffers, sizeof *t->done);
    if (!t->free_bufs || !t->done) {
        free_pool(t);
        snprintf(t->err, sizeof t->err, "out of memory");
        return TFB_ENOMEM;
    }

    pthread_mutex_lock(&g_mu);
    if (g_active) {
        pthread_mutex_unlock(&g_mu);
        free_pool(t);
        snprintf(t->err, sizeof t->err,
                 "GPU tracing already runs on another writer of this process");
        return TFB_EBUSY;
    }
    g_active = t;
    pthread_mutex_unlock(&g_mu);

    t->stop = 0;
    CUptiResult r = t->api.ActivityRegisterCallbacks(on_buffer_request,
                                                     on_buffer_complete);
    if (r != CUPTI_SUCCESS) {
        snprintf(t->err, sizeof t->err,
                 "cuptiActivityRegisterCallbacks failed: %s",
                 tfb_cupti_result_name(&t->api, r));
        teardown(t);
        return tfb_cupti_map_error(r);
    }
    t->callbacks_registered = 1;
    err = enable_all(t);
    if (err) {
        teardown(t);
        return err;
    }

    err = tfb_trace_store_open(&t->store, tfb_writer_run_dir(w), NULL);
    if (err) {
        snprintf(t->err, sizeof t->err, "cannot create the trace store in %s: %s",
                 tfb_writer_run_dir(w), tfb_strerror(err));
        teardown(t);
        return err;
    }
    char buf[64];
    uint64_t cts = 0;
    snprintf(buf, sizeof buf, "%u", (unsigned)t->api.version);
    tfb_trace_store_meta(t->store, "cupti_version", buf);
    int64_t now = tfb_now_ns();
    if (t->api.GetTimestamp(&cts) == CUPTI_SUCCESS) {
        /* Both are CLOCK_REALTIME on Linux; recorded so a reader can
         * check (and correct) rather than assume. */
        snprintf(buf, sizeof buf, "%lld", (long long)((int64_t)cts - now));
        tfb_trace_store_meta(t->store, "clock_offset_ns", buf);
    }
    snprintf(buf, sizeof buf, "%lld", (long long)t_call);
    tfb_trace_store_meta(t->store, "trace_start_ns", buf);

    t->util = tfb_gpu_util_new(t_call, (int64_t)t->opts.utilization_interval_ms *
                                        1000000);
    err = t->util ? tfb_cupti_proc_new(&t->proc, &t->api, t->store, t->util)
                  : TFB_ENOMEM;
    if (!err)
        err = tfb_trace_store_attach(w, t->store);
    /* The writer's rank (opts or launcher environment, not just $RANK).
     * Best effort: META rows only queue, and a missing rank must not stop
     * tracing. */
    if (!err)
        (void)tfb_trace_store_rank_meta(t->store, w);
    if (!err && pthread_create(&t->thread, NULL, tracer_main, t) != 0)
        err = TFB_ENOMEM;
    if (err) {
        snprintf(t->err, sizeof t->err, "cannot start tracing: %s",
                 tfb_strerror(err));
        teardown(t);
        return err;
    }
    t->started = 1;
    t->active = 1;
    return 0;
}

int tfb_gpu_trace_stop(tfb_writer *w)
{
    if (!w)
        return TFB_EINVAL;
    if (tfb_writer_forked(w))
        return TFB_EFORKED; /* the tracer thread is the parent's */
    tfb_gpu_tracer *t = get_tracer(w, 0);
    if (!t || !t->active)
        return 0;
    /* No new records, then a forced flush: also the buffers still being
     * filled. They come back through on_buffer_complete before it
     * returns. */
    disable_all(t);
    t->api.ActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    /* Records dropped since the last completed buffer (no buffer came back
     * to ask about them). */
    size_t dropped = 0;
    if (t->api.ActivityGetNumDroppedRecords(NULL, 0, &dropped) == CUPTI_SUCCESS) {
        pthread_mutex_lock(&t->mu);
        t->stats.records_dropped += dropped;
        pthread_mutex_unlock(&t->mu);
    }
    pthread_mutex_lock(&t->mu);
    t->stop = 1;
    pthread_cond_signal(&t->cv);
    pthread_mutex_unlock(&t->mu);
    pthread_join(t->thread, NULL);
    t->started = 0;
    /* Without cuptiFinalize the CUPTI hooks stay in every launch
     * (pytorch#146604: a lasting 10-20 % slowdown). */
    t->api.Finalize();
    t->callbacks_registered = 0;
    int serr = tfb_trace_store_flush(t->store);
    if (serr && !t->stats.sticky_error)
        t->stats.sticky_error = serr;
    t->active = 0;
    teardown(t);
    return t->stats.sticky_error;
}

int tfb_gpu_trace_get_stats(tfb_writer *w, tfb_gpu_stats *out)
{
    if (!w || !out)
        return TFB_EINVAL;
    if (tfb_writer_forked(w))
        return TFB_EFORKED;
    tfb_gpu_tracer *t = get_tracer(w, 0);
    tfb_gpu_stats st;
    tfb_gpu_stats_init(&st);
    if (t) {
        pthread_mutex_lock(&t->mu);
        st = t->stats;
        pthread_mutex_unlock(&t->mu);
        st.size = sizeof st;
    }
    return tfb_abi_write(out, &st, sizeof st);
}

const char *tfb_gpu_trace_error(const tfb_writer *w)
{
    if (!w)
        return "";
    if (tfb_writer_forked(w))
        return tfb_strerror(TFB_EFORKED);
    struct tfb_gpu_tracer **slot = tfb_writer_gpu_slot((tfb_writer *)w);
    if (!slot || !*slot)
        return "";
    return (*slot)->err;
}

static void tracer_on_close(tfb_writer *w)
{
    struct tfb_gpu_tracer **slot = tfb_writer_gpu_slot(w);
    if (!slot || !*slot)
        return;
    if (tfb_writer_forked(w)) {
        /* A child of fork(): the tracer thread, CUPTI's subscription and
         * the trace store (an SQLite connection, which must not be closed
         * in a child: that could touch the parent's database files) are
         * the parent's. Only the buffer pool is freed, and only if no
         * thread held its lock at fork time (trylock never waits). */
        tfb_gpu_tracer *t = *slot;
        if (pthread_mutex_trylock(&t->mu) == 0) {
            free_pool(t);
            pthread_mutex_unlock(&t->mu);
            free(t);
        }
        *slot = NULL;
        return;
    }
    tfb_gpu_trace_stop(w);
    tfb_gpu_tracer *t = *slot;
    pthread_mutex_destroy(&t->mu);
    pthread_cond_destroy(&t->cv);
    free(t);
    *slot = NULL;
}
