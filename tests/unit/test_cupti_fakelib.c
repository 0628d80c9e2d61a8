/*
 * test_cupti_fakelib.c - a stand-in for libcupti, loaded by the tracer
 * through tfb_gpu_opts.cupti_path, so the whole tracing path (enable,
 * buffer pool, our thread, periodic flush, utilization scalars, stop,
 * finalize) runs on a machine without a GPU. It plays the part of NVIDIA's
 * library only: records queued by the test are handed over in buffers the
 * tracer supplies, exactly when the tracer calls cuptiActivityFlushAll, and
 * are walked with the REAL libcupti's cuptiActivityGetNextRecord.
 *
 * Control functions (fake_cupti_*) are reached by the test with dlsym on
 * the same dlopen'ed library.
 */
#include <cupti.h>
#include <stddef.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define API __attribute__((visibility("default")))
#define MAX_BYTES (1 << 20)
#define MAX_RECS 4096

/* Recursive: the tracer calls back into us (dropped counts) from the
 * completion callback we invoke under the lock. */
static pthread_mutex_t g_mu = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
static CUpti_BuffersCallbackRequestFunc g_req;
static CUpti_BuffersCallbackCompleteFunc g_done;
static unsigned char g_pending[MAX_BYTES];
static size_t g_len;
static size_t g_rec_off[MAX_RECS + 1];
static size_t g_nrec;
static size_t g_dropped;
static int g_enabled[64];
static int g_runtime_enabled;
static int g_finalized, g_flushes, g_forced;
static void *g_real;

typedef CUptiResult (*next_fn)(uint8_t *, size_t, CUpti_Activity **);

/* ---- control, for the test --------------------------------------------- */
API void fake_cupti_reset(void);
API int fake_cupti_queue(const void *rec, size_t size);
API void fake_cupti_state(int *enabled, int nkinds, int *runtime_ids,
                          int *finalized, int *flushes, int *forced);

API void fake_cupti_reset(void)
{
    pthread_mutex_lock(&g_mu);
    g_len = g_nrec = g_dropped = 0;
    memset(g_enabled, 0, sizeof g_enabled);
    g_runtime_enabled = g_finalized = g_flushes = g_forced = 0;
    pthread_mutex_unlock(&g_mu);
}

API int fake_cupti_queue(const void *rec, size_t size)
{
    pthread_mutex_lock(&g_mu);
    int ok = g_len + size <= MAX_BYTES && g_nrec < MAX_RECS;
    if (ok) {
        memcpy(g_pending + g_len, rec, size);
        g_rec_off[g_nrec++] = g_len;
        g_len += size;
    }
    pthread_mutex_unlock(&g_mu);
    return ok ? 0 : -1;
}

/* enabled[kind], runtime ids enabled, finalized, flushes, forced flushes */
API void fake_cupti_state(int *enabled, int nkinds, int *runtime_ids,
                          int *finalized, int *flushes, int *forced)
{
    pthread_mutex_lock(&g_mu);
    for (int i = 0; i < nkinds && i < 64; i++)
        enabled[i] = g_enabled[i];
    *runtime_ids = g_runtime_enabled;
    *finalized = g_finalized;
    *flushes = g_flushes;
    *forced = g_forced;
    pthread_mutex_unlock(&g_mu);
}

/* ---- the CUPTI entry points the tracer resolves -------------------------- */
API CUptiResult cuptiGetVersion(uint32_t *v)
{
    *v = CUPTI_API_VERSION;
    return CUPTI_SUCCESS;
}

API CUptiResult cuptiGetResultString(CUptiResult r, const char **s)
{
    *s = r == CUPTI_SUCCESS ? "CUPTI_SUCCESS" : "CUPTI_ERROR_FAKE";
    return CUPTI_SUCCESS;
}

API CUptiResult cuptiActivityEnable(CUpti_ActivityKind k)
{
    pthread_mutex_lock(&g_mu);
    if ((int)k >= 0 && (int)k < 64)
        g_enabled[k] = 1;
    pthread_mutex_unlock(&g_mu);
    return CUPTI_SUCCESS;
}

API CUptiResult cuptiActivityDisable(CUpti_ActivityKind k)
{
    pthread_mutex_lock(&g_mu);
    if ((int)k >= 0 && (int)k < 64)
        g_enabled[k] = 0;
    pthread_mutex_unlock(&g_mu);
    return CUPTI_SUCCESS;
}

API CUptiResult cuptiActivityEnableRuntimeApi(CUpti_CallbackId cbid,
                                              uint8_t enable)
{
    (void)cbid;
    pthread_mutex_lock(&g_mu);
    g_runtime_enabled += enable ? 1 : -1;
    pthread_mutex_unlock(&g_mu);
    return CUPTI_SUCCESS;
}

API CUptiResult cuptiActivityRegisterCallbacks(
    CUpti_BuffersCallbackRequestFunc req, CUpti_BuffersCallbackCompleteFunc done)
{
    pthread_mutex_lock(&g_mu);
    g_req = req;
    g_done = done;
    pthread_mutex_unlock(&g_mu);
    return CUPTI_SUCCESS;
}

/* Hands every queued record over in the tracer's buffers, as CUPTI does on
 * a flush; when the tracer refuses a buffer the rest are dropped. */
API CUptiResult cuptiActivityFlushAll(uint32_t flag)
{
    pthread_mutex_lock(&g_mu);
    g_flushes++;
    if (flag & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED)
        g_forced++;
    size_t i = 0;
    while (i < g_nrec && g_req && g_done) {
        uint8_t *buf = NULL;
        size_t size = 0, maxrec = 0;
        g_req(&buf, &size, &maxrec);
        if (!buf) {
            g_dropped += g_nrec - i;
            break;
        }
        size_t valid = 0;
        while (i < g_nrec) {
            size_t end = i + 1 < g_nrec ? g_rec_off[i + 1] : g_len;
            size_t n = end - g_rec_off[i];
            if (valid + n > size)
                break;
            memcpy(buf + valid, g_pending + g_rec_off[i], n);
            valid += n;
            i++;
        }
        g_done(NULL, 0, buf, size, valid);
        if (valid == 0)
            break; /* a record larger than a buffer: give up */
    }
    g_len = g_nrec = 0;
    pthread_mutex_unlock(&g_mu);
    return CUPTI_SUCCESS;
}

API CUptiResult cuptiActivityGetNextRecord(uint8_t *buf, size_t valid,
                                           CUpti_Activity **rec)
{
    if (!g_real)
        g_real = dlopen("libcupti.so.13", RTLD_NOW | RTLD_LOCAL);
    next_fn f = NULL;
    void *sym = g_real ? dlsym(g_real, "cuptiActivityGetNextRecord") : NULL;
    memcpy(&f, &sym, sizeof f);
    return f ? f(buf, valid, rec) : CUPTI_ERROR_NOT_INITIALIZED;
}

API CUptiResult cuptiActivityGetNumDroppedRecords(CUcontext ctx, uint32_t s,
                                                  size_t *n)
{
    (void)ctx;
    (void)s;
    pthread_mutex_lock(&g_mu);
    *n = g_dropped;
    g_dropped = 0;
    pthread_mutex_unlock(&g_mu);
    return CUPTI_SUCCESS;
}

API CUptiResult cuptiFinalize(void)
{
    pthread_mutex_lock(&g_mu);
    g_finalized++;
    g_req = NULL;
    g_done = NULL;
    pthread_mutex_unlock(&g_mu);
    return CUPTI_SUCCESS;
}

API CUptiResult cuptiGetTimestamp(uint64_t *ts)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    *ts = (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
    return CUPTI_SUCCESS;
}
