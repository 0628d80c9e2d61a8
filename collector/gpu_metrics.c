/*
 * gpu_metrics.c - always-on GPU metrics from NVML (issue 13).
 *
 * NVML is dlopen'ed (never linked: the library must load on machines
 * without a driver) and its few functions are declared here with their
 * stable C signatures (no nvml.h on build machines). One sampler thread per
 * writer wakes every interval on CLOCK_MONOTONIC (wall-clock jumps neither
 * stall nor rush it), reads each device and logs scalars through the
 * writer, so the training thread never pays for it.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "collector/abi.h"
#include "base/deadline.h"
#include "collector/writer_internal.h"

/* ------------------------------------------------------------------------
 * NVML's ABI (the parts we call). nvmlReturn_t is an int enum, 0 = success.
 * ---------------------------------------------------------------------- */
typedef int nvml_ret;
typedef struct nvml_device_st *nvml_device;
typedef struct {
    unsigned int gpu, memory; /* percent */
} nvml_utilization;
typedef struct {
    unsigned long long total, free, used; /* bytes */
} nvml_memory;

#define NVML_SUCCESS 0
#define NVML_ERROR_NO_PERMISSION 4
#define NVML_TEMPERATURE_GPU 0
#define NVML_CLOCK_SM 1
#define NVML_NAME_LEN 96 /* NVML_DEVICE_NAME_V2_BUFFER_SIZE */

typedef struct nvml_api {
    void *handle;
    nvml_ret (*Init)(void);
    nvml_ret (*Shutdown)(void);
    nvml_ret (*GetCount)(unsigned int *);
    nvml_ret (*GetHandle)(unsigned int, nvml_device *);
    nvml_ret (*GetName)(nvml_device, char *, unsigned int);
    nvml_ret (*GetUtil)(nvml_device, nvml_utilization *);
    nvml_ret (*GetMemory)(nvml_device, nvml_memory *);
    nvml_ret (*GetPower)(nvml_device, unsigned int *);
    nvml_ret (*GetTemp)(nvml_device, int, unsigned int *);
    nvml_ret (*GetClock)(nvml_device, int, unsigned int *);
    const char *(*ErrorString)(nvml_ret); /* optional */
} nvml_api;

/* ------------------------------------------------------------------------
 * State
 * ---------------------------------------------------------------------- */
#define MAX_DEVICES 64
#define N_METRICS 7

typedef struct dev_state {
    nvml_device h;
    char name[NVML_NAME_LEN];
    /* Tags built once: "gpu/<dev>/<metric>". */
    char tags[N_METRICS][48];
} dev_state;

typedef struct tfb_gpu_metrics {
    tfb_writer *w;
    pid_t owner; /* the process that started it (fork, see header) */
    nvml_api api;
    int64_t interval_ns;
    unsigned ndev;
    dev_state dev[MAX_DEVICES];

    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv; /* CLOCK_MONOTONIC */
    int stop;
    tfb_gpu_metrics_stats stats; /* under mu */
    int64_t seq;                 /* sampler thread only */

    struct tfb_gpu_metrics *next; /* g_list */
} tfb_gpu_metrics;

/* Samplers by writer. A list rather than a writer field: the writer keeps
 * no state for us, and there are few writers. */
static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static tfb_gpu_metrics *g_list;
static char g_err[512];

/* fork() while another thread holds g_mu would leave it locked forever in
 * the child; holding it across fork keeps the child's start/stop usable. */
static pthread_once_t g_atfork_once = PTHREAD_ONCE_INIT;
static void atfork_prepare(void) { pthread_mutex_lock(&g_mu); }
static void atfork_release(void) { pthread_mutex_unlock(&g_mu); }
static void atfork_register(void)
{
    pthread_atfork(atfork_prepare, atfork_release, atfork_release);
}

static const char *const k_metric[N_METRICS] = {
    TFB_TAG_GPU_SM_UTIL, TFB_TAG_GPU_MEM_UTIL, TFB_TAG_GPU_MEM_USED,
    TFB_TAG_GPU_MEM_TOTAL, TFB_TAG_GPU_POWER, TFB_TAG_GPU_TEMP,
    TFB_TAG_GPU_SM_CLOCK,
};
enum { M_SM_UTIL, M_MEM_UTIL, M_MEM_USED, M_MEM_TOTAL, M_POWER, M_TEMP,
       M_SM_CLOCK };

void tfb_gpu_metrics_opts_init(tfb_gpu_metrics_opts *opts)
{
    if (!opts)
        return;
    memset(opts, 0, sizeof *opts);
    opts->size = sizeof *opts;
    opts->interval_ms = 500;
}

void tfb_gpu_metrics_stats_init(tfb_gpu_metrics_stats *out)
{
    if (!out)
        return;
    memset(out, 0, sizeof *out);
    out->size = sizeof *out;
}

const char *tfb_gpu_metrics_error(void)
{
    return g_err;
}

/* g_err is written only under g_mu (start runs under it). */
static void set_err(const char *fmt, const char *a, const char *b)
{
    snprintf(g_err, sizeof g_err, fmt, a, b);
}

static const char *nvml_err(const nvml_api *api, nvml_ret r, char *buf,
                            size_t cap)
{
    const char *s = api->ErrorString ? api->ErrorString(r) : NULL;
    if (s)
        return s;
    snprintf(buf, cap, "nvmlReturn %d", r);
    return buf;
}

/* ------------------------------------------------------------------------
 * Loading
 * ---------------------------------------------------------------------- */
static int load_nvml(nvml_api *api, const char *path)
{
    memset(api, 0, sizeof *api);
    if (!path || !*path)
        path = getenv("TFB_NVML_PATH");
    if (!path || !*path)
        path = "libnvidia-ml.so.1";
    dlerror();
    api->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!api->handle) {
        const char *e = dlerror();
        set_err("cannot load %s: %s", path, e ? e : "dlopen failed");
        return TFB_ENONVML;
    }
    static const char *const names[] = {
        "nvmlInit_v2", "nvmlShutdown", "nvmlDeviceGetCount_v2",
        "nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetName",
        "nvmlDeviceGetUtilizationRates", "nvmlDeviceGetMemoryInfo",
        "nvmlDeviceGetPowerUsage", "nvmlDeviceGetTemperature",
        "nvmlDeviceGetClockInfo",
    };
    void *fn[sizeof names / sizeof names[0]];
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        fn[i] = dlsym(api->handle, names[i]);
        if (!fn[i]) {
            set_err("%s lacks %s", path, names[i]);
            dlclose(api->handle);
            api->handle = NULL;
            return TFB_ENONVML;
        }
    }
    /* Object pointer to function pointer: the POSIX dlsym idiom. */
    memcpy(&api->Init, &fn[0], sizeof fn[0]);
    memcpy(&api->Shutdown, &fn[1], sizeof fn[1]);
    memcpy(&api->GetCount, &fn[2], sizeof fn[2]);
    memcpy(&api->GetHandle, &fn[3], sizeof fn[3]);
    memcpy(&api->GetName, &fn[4], sizeof fn[4]);
    memcpy(&api->GetUtil, &fn[5], sizeof fn[5]);
    memcpy(&api->GetMemory, &fn[6], sizeof fn[6]);
    memcpy(&api->GetPower, &fn[7], sizeof fn[7]);
    memcpy(&api->GetTemp, &fn[8], sizeof fn[8]);
    memcpy(&api->GetClock, &fn[9], sizeof fn[9]);
    void *es = dlsym(api->handle, "nvmlErrorString");
    if (es)
        memcpy(&api->ErrorString, &es, sizeof es);
    return 0;
}

/* ------------------------------------------------------------------------
 * Sampling (sampler thread, and once in start)
 * ---------------------------------------------------------------------- */
static void sample_once(tfb_gpu_metrics *m)
{
    double wall = (double)tfb_now_ns() / 1e9;
    int64_t step = m->seq++;
    uint64_t read_err = 0, log_err = 0;
    for (unsigned d = 0; d < m->ndev; d++) {
        dev_state *ds = &m->dev[d];
        double v[N_METRICS];
        int have[N_METRICS] = {0};
        nvml_utilization u;
        if (m->api.GetUtil(ds->h, &u) == NVML_SUCCESS) {
            v[M_SM_UTIL] = u.gpu;
            v[M_MEM_UTIL] = u.memory;
            have[M_SM_UTIL] = have[M_MEM_UTIL] = 1;
        } else {
            read_err++;
        }
        nvml_memory mem;
        if (m->api.GetMemory(ds->h, &mem) == NVML_SUCCESS) {
            v[M_MEM_USED] = (double)mem.used;
            v[M_MEM_TOTAL] = (double)mem.total;
            have[M_MEM_USED] = have[M_MEM_TOTAL] = 1;
        } else {
            read_err++;
        }
        unsigned int x;
        if (m->api.GetPower(ds->h, &x) == NVML_SUCCESS) {
            v[M_POWER] = x / 1000.0; /* mW -> W */
            have[M_POWER] = 1;
        } else {
            read_err++;
        }
        if (m->api.GetTemp(ds->h, NVML_TEMPERATURE_GPU, &x) == NVML_SUCCESS) {
            v[M_TEMP] = x;
            have[M_TEMP] = 1;
        } else {
            read_err++;
        }
        if (m->api.GetClock(ds->h, NVML_CLOCK_SM, &x) == NVML_SUCCESS) {
            v[M_SM_CLOCK] = x;
            have[M_SM_CLOCK] = 1;
        } else {
            read_err++;
        }
        for (int k = 0; k < N_METRICS; k++)
            if (have[k] && tfb_scalar_at(m->w, ds->tags[k], v[k], step, wall))
                log_err++;
    }
    pthread_mutex_lock(&m->mu);
    m->stats.samples++;
    m->stats.read_errors += read_err;
    m->stats.log_errors += log_err;
    pthread_mutex_unlock(&m->mu);
}

static void *sampler_main(void *arg)
{
    tfb_gpu_metrics *m = arg;
    struct timespec next;
    clock_gettime(CLOCK_MONOTONIC, &next);
    for (;;) {
        /* Fixed-rate schedule; after a long stall (suspend, overload) it
         * restarts from now rather than firing a burst of samples. */
        int64_t ns = next.tv_nsec + m->interval_ns;
        next.tv_sec += (time_t)(ns / 1000000000);
        next.tv_nsec = (long)(ns % 1000000000);
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec > next.tv_sec + 1)
            next = now;
        pthread_mutex_lock(&m->mu);
        while (!m->stop) {
            int r = pthread_cond_timedwait(&m->cv, &m->mu, &next);
            if (r == ETIMEDOUT)
                break;
        }
        int stop = m->stop;
        pthread_mutex_unlock(&m->mu);
        if (stop)
            break;
        sample_once(m);
    }
    return NULL;
}

/* ------------------------------------------------------------------------
 * Start / stop
 * ---------------------------------------------------------------------- */
static tfb_gpu_metrics **find_slot(tfb_writer *w)
{
    tfb_gpu_metrics **pp = &g_list;
    while (*pp && (*pp)->w != w)
        pp = &(*pp)->next;
    return pp;
}

static int map_init_error(nvml_ret r)
{
    return r == NVML_ERROR_NO_PERMISSION ? TFB_EACCES : TFB_ENOGPU;
}

static void metrics_on_close(tfb_writer *w);

int tfb_gpu_metrics_start(tfb_writer *w, const tfb_gpu_metrics_opts *opts)
{
    if (!w)
        return TFB_EINVAL;
    tfb_gpu_metrics_opts o;
    tfb_gpu_metrics_opts_init(&o);
    if (opts && tfb_abi_read(&o, sizeof o, opts) < 0)
        return TFB_EINVAL;
    if (o.interval_ms == 0)
        o.interval_ms = 500;

    pthread_once(&g_atfork_once, atfork_register);
    pthread_mutex_lock(&g_mu);
    tfb_gpu_metrics **slot = find_slot(w);
    if (*slot && (*slot)->owner == getpid()) {
        pthread_mutex_unlock(&g_mu);
        return TFB_ESTATE;
    }
    if (*slot) {
        /* Inherited through fork: forget it (see the header). */
        *slot = (*slot)->next;
        slot = find_slot(w);
    }
    g_err[0] = 0;
    tfb_gpu_metrics *m = calloc(1, sizeof *m);
    if (!m) {
        pthread_mutex_unlock(&g_mu);
        return TFB_ENOMEM;
    }
    m->w = w;
    m->owner = getpid();
    m->interval_ns = (int64_t)o.interval_ms * 1000000;
    int rc = load_nvml(&m->api, o.nvml_path);
    char eb[32];
    if (!rc) {
        nvml_ret r = m->api.Init();
        if (r != NVML_SUCCESS) {
            set_err("nvmlInit_v2 failed: %s%s", nvml_err(&m->api, r, eb,
                                                           sizeof eb), "");
            rc = map_init_error(r);
            free(m); /* the library stays loaded: see stop */
            pthread_mutex_unlock(&g_mu);
            return rc;
        }
        unsigned int n = 0;
        r = m->api.GetCount(&n);
        if (r != NVML_SUCCESS || n == 0) {
            set_err("nvmlDeviceGetCount_v2: %s%s",
                    r != NVML_SUCCESS ? nvml_err(&m->api, r, eb, sizeof eb)
                                      : "no device",
                    "");
            rc = r != NVML_SUCCESS ? map_init_error(r) : TFB_ENOGPU;
        }
        if (n > MAX_DEVICES)
            n = MAX_DEVICES;
        for (unsigned d = 0; !rc && d < n; d++) {
            dev_state *ds = &m->dev[d];
            r = m->api.GetHandle(d, &ds->h);
            if (r != NVML_SUCCESS) {
                set_err("nvmlDeviceGetHandleByIndex_v2: %s%s",
                        nvml_err(&m->api, r, eb, sizeof eb), "");
                rc = map_init_error(r);
                break;
            }
            if (m->api.GetName(ds->h, ds->name, sizeof ds->name) !=
                NVML_SUCCESS)
                snprintf(ds->name, sizeof ds->name, "GPU %u", d);
            ds->name[sizeof ds->name - 1] = 0;
            for (int k = 0; k < N_METRICS; k++)
                snprintf(ds->tags[k], sizeof ds->tags[k], "%s%u/%s",
                         TFB_TAG_GPU_PREFIX, d, k_metric[k]);
        }
        if (rc) {
            m->api.Shutdown();
        } else {
            m->ndev = n;
        }
    }
    if (rc) {
        /* A library without NVML's functions was closed by load_nvml; one
         * that ran nvmlInit stays loaded (see stop). */
        free(m);
        pthread_mutex_unlock(&g_mu);
        return rc;
    }
    m->stats.devices = m->ndev;
    pthread_mutex_init(&m->mu, NULL);
    tfb_cond_init_monotonic(&m->cv);
    for (unsigned d = 0; d < m->ndev; d++) {
        char tag[48];
        snprintf(tag, sizeof tag, "%s%u/%s", TFB_TAG_GPU_PREFIX, d,
                 TFB_TAG_GPU_NAME);
        tfb_text(w, tag, m->dev[d].name, 0);
    }
    sample_once(m);
    if (pthread_create(&m->thread, NULL, sampler_main, m) != 0) {
        set_err("%s%s", "cannot start the sampler thread", "");
        pthread_cond_destroy(&m->cv);
        pthread_mutex_destroy(&m->mu);
        m->api.Shutdown();
        free(m);
        pthread_mutex_unlock(&g_mu);
        return TFB_ENOMEM;
    }
    m->next = NULL;
    *slot = m;
    pthread_mutex_unlock(&g_mu);
    tfb_writer_set_hooks(w, TFB_WRITER_MOD_METRICS, NULL, metrics_on_close);
    return 0;
}

int tfb_gpu_metrics_stop(tfb_writer *w)
{
    if (!w)
        return TFB_EINVAL;
    pthread_mutex_lock(&g_mu);
    tfb_gpu_metrics **slot = find_slot(w);
    tfb_gpu_metrics *m = *slot;
    if (m)
        *slot = m->next;
    pthread_mutex_unlock(&g_mu);
    if (!m)
        return 0;
    if (m->owner != getpid()) {
        /* A forked child: the thread is not ours and its mutex may have
         * been copied locked. Touch nothing; the memory stays (small). */
        return 0;
    }
    pthread_mutex_lock(&m->mu);
    m->stop = 1;
    pthread_cond_signal(&m->cv);
    pthread_mutex_unlock(&m->mu);
    pthread_join(m->thread, NULL);
    m->api.Shutdown();
    /* Never dlclosed once initialized (as CUPTI): the driver library may
     * keep exit handlers or threads; a later start dlopens it again
     * (refcounted, no reload). */
    pthread_cond_destroy(&m->cv);
    pthread_mutex_destroy(&m->mu);
    free(m);
    return 0;
}

int tfb_gpu_metrics_get_stats(tfb_writer *w, tfb_gpu_metrics_stats *out)
{
    if (!w || !out)
        return TFB_EINVAL;
    tfb_gpu_metrics_stats st;
    tfb_gpu_metrics_stats_init(&st);
    pthread_mutex_lock(&g_mu);
    tfb_gpu_metrics *m = *find_slot(w);
    if (m && m->owner == getpid()) {
        pthread_mutex_lock(&m->mu);
        st = m->stats;
        pthread_mutex_unlock(&m->mu);
        st.size = sizeof st;
    }
    pthread_mutex_unlock(&g_mu);
    return tfb_abi_write(out, &st, sizeof st);
}

static void metrics_on_close(tfb_writer *w)
{
    tfb_gpu_metrics_stop(w);
}
