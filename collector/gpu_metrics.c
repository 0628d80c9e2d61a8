/*
 * gpu_metrics.c - always-on GPU metrics from NVML (issue 13).
 *
 * NVML is dlopen'ed (never linked: the library must load on machines
 * without a driver) and its few functions are declared here with their
 * stable C signatures (no nvml.h on build machines). One sampler thread per
 * writer wakes every interval on CLOCK_MONOTONIC (wall-clock jumps neither
 * stall nor rush it), reads each device and logs scalars through the
 * writer, so the training thread never pays for it.
 *
 * Only the job's GPUs are sampled: CUDA_VISIBLE_DEVICES (indices, GPU and
 * MIG UUIDs, gpu_visible.h) picks them, in its order, so gpu/<n>/ is CUDA
 * device n, and gpu/<n>/physical says which physical device it is.
 *
 * Energy per step (issue 29): the pipeline's helper thread, when it logs
 * a step, asks tfb_gpu_metrics_step_energy (gpu_metrics_internal.h) for
 * the step's joules; the training thread makes no NVML call. With NVML's
 * total-energy counter (Volta and newer), the counter is read then (at
 * most every ENERGY_READ_MIN_MS), the mean power between the last two
 * reads times the step time is the step's energy: with steps back to back
 * and the helper within its 10 ms drain period of each step end, that is
 * the counter's difference over the step. Without the counter (missing or
 * NOT_SUPPORTED), the power read then times the step time.
 */
#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "collector/abi.h"
#include "base/deadline.h"
#include "collector/gpu_metrics_internal.h"
#include "collector/gpu_visible.h"
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
#define NVML_ERROR_NOT_SUPPORTED 3
#define NVML_ERROR_NO_PERMISSION 4
#define NVML_UUID_LEN 96 /* NVML_DEVICE_UUID_V2_BUFFER_SIZE is 96 */
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
    /* Optional (older drivers lack some): the mapping of
     * CUDA_VISIBLE_DEVICES and MIG, and the energy counter. */
    nvml_ret (*GetUUID)(nvml_device, char *, unsigned int);
    nvml_ret (*GetByUUID)(const char *, nvml_device *);
    nvml_ret (*GetIndex)(nvml_device, unsigned int *);
    nvml_ret (*IsMig)(nvml_device, unsigned int *);
    nvml_ret (*MigParent)(nvml_device, nvml_device *);
    nvml_ret (*GetEnergy)(nvml_device, unsigned long long *); /* mJ */
} nvml_api;

/* ------------------------------------------------------------------------
 * State
 * ---------------------------------------------------------------------- */
#define MAX_DEVICES 64
#define N_METRICS 7
/* The energy counter is read at most this often: its unit is 1 mJ and
 * drivers refresh it every few ms, so closer reads give noise, not power
 * (20 ms at 300 W is 6,000 mJ: 0.02 % of rounding). */
#define ENERGY_READ_MIN_MS 20

enum energy_mode { ENERGY_NONE = 0, ENERGY_COUNTER, ENERGY_POWER };

typedef struct dev_state {
    nvml_device h;
    char name[NVML_NAME_LEN];
    /* Tags built once: "gpu/<dev>/<metric>". */
    char tags[N_METRICS][48];
    char energy_tag[48];
    /* "cuda=<n> nvml=<i> uuid=<GPU-...>[ mig=<MIG-...>]" */
    char physical[2 * NVML_UUID_LEN + 48];
    /* Energy: the helper thread's, under g_mu (step_energy). */
    enum energy_mode energy;
    unsigned long long e_last_mj; /* counter at e_last_ns */
    int64_t e_last_ns;            /* CLOCK_MONOTONIC of that read */
    double e_watts;               /* mean power between the last reads */
    int have_watts;
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
    static const char *const opt_names[] = {
        "nvmlDeviceGetUUID", "nvmlDeviceGetHandleByUUID",
        "nvmlDeviceGetIndex", "nvmlDeviceIsMigDeviceHandle",
        "nvmlDeviceGetDeviceHandleFromMigDeviceHandle",
        "nvmlDeviceGetTotalEnergyConsumption",
    };
    void *opt[sizeof opt_names / sizeof opt_names[0]];
    for (size_t i = 0; i < sizeof opt_names / sizeof opt_names[0]; i++)
        opt[i] = dlsym(api->handle, opt_names[i]);
    memcpy(&api->GetUUID, &opt[0], sizeof opt[0]);
    memcpy(&api->GetByUUID, &opt[1], sizeof opt[1]);
    memcpy(&api->GetIndex, &opt[2], sizeof opt[2]);
    memcpy(&api->IsMig, &opt[3], sizeof opt[3]);
    memcpy(&api->MigParent, &opt[4], sizeof opt[4]);
    memcpy(&api->GetEnergy, &opt[5], sizeof opt[5]);
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

/* ------------------------------------------------------------------------
 * The job's devices: CUDA_VISIBLE_DEVICES -> NVML handles
 * ---------------------------------------------------------------------- */
static void dev_uuid(const nvml_api *api, nvml_device h, char *buf,
                     size_t cap)
{
    buf[0] = 0;
    if (!api->GetUUID || api->GetUUID(h, buf, (unsigned)cap) != NVML_SUCCESS)
        snprintf(buf, cap, "unknown");
    buf[cap - 1] = 0;
}

/* The handle of one entry (n devices): NVML_SUCCESS or NVML's error. */
static nvml_ret resolve_entry(const nvml_api *api, unsigned n,
                              const tfb_visible_entry *e, nvml_device *h)
{
    if (!e->is_uuid)
        return e->index < n ? api->GetHandle(e->index, h) : 2;
    if (api->GetByUUID && api->GetByUUID(e->uuid, h) == NVML_SUCCESS)
        return NVML_SUCCESS;
    /* CUDA also takes a unique prefix of a GPU's UUID ("GPU-8932f937"). */
    if (strncmp(e->uuid, "GPU-", 4) != 0 || !api->GetUUID)
        return 6; /* NVML_ERROR_NOT_FOUND */
    int found = 0;
    size_t len = strlen(e->uuid);
    for (unsigned i = 0; i < n; i++) {
        nvml_device d;
        char u[NVML_UUID_LEN];
        if (api->GetHandle(i, &d) != NVML_SUCCESS ||
            api->GetUUID(d, u, sizeof u) != NVML_SUCCESS)
            continue;
        if (strncmp(u, e->uuid, len) == 0) {
            found++;
            *h = d;
        }
    }
    return found == 1 ? NVML_SUCCESS : 6;
}

/* ds->physical for CUDA ordinal `cuda`. */
static void describe(const nvml_api *api, unsigned cuda, dev_state *ds)
{
    nvml_device parent = ds->h;
    unsigned is_mig = 0;
    char mig[NVML_UUID_LEN] = "";
    if (api->IsMig && api->IsMig(ds->h, &is_mig) == NVML_SUCCESS && is_mig &&
        api->MigParent && api->MigParent(ds->h, &parent) == NVML_SUCCESS)
        dev_uuid(api, ds->h, mig, sizeof mig);
    else
        is_mig = 0;
    char uuid[NVML_UUID_LEN], idx[16] = "unknown";
    dev_uuid(api, parent, uuid, sizeof uuid);
    unsigned i;
    if (api->GetIndex && api->GetIndex(parent, &i) == NVML_SUCCESS)
        snprintf(idx, sizeof idx, "%u", i);
    snprintf(ds->physical, sizeof ds->physical, "cuda=%u nvml=%s uuid=%s%s%s",
             cuda, idx, uuid, is_mig ? " mig=" : "", mig);
}

/* How this device's energy is measured; the counter's first reading is
 * the baseline of the first step's. */
static void probe_energy(const nvml_api *api, dev_state *ds)
{
    unsigned long long mj;
    unsigned mw;
    if (api->GetEnergy && api->GetEnergy(ds->h, &mj) == NVML_SUCCESS) {
        ds->energy = ENERGY_COUNTER;
        ds->e_last_mj = mj;
        ds->e_last_ns = tfb_mono_now_ns();
    } else if (api->GetPower(ds->h, &mw) == NVML_SUCCESS) {
        ds->energy = ENERGY_POWER;
    } else {
        ds->energy = ENERGY_NONE;
    }
}

/* Fills m->dev with the job's devices (n = NVML's count): those
 * CUDA_VISIBLE_DEVICES names, in its order, else all. 0 or an error (with
 * g_err). Under g_mu. */
static int open_devices(tfb_gpu_metrics *m, unsigned n)
{
    tfb_visible_entry vis[MAX_DEVICES];
    const char *cvd = getenv("CUDA_VISIBLE_DEVICES");
    int nvis = 0;
    if (cvd) {
        nvis = tfb_visible_parse(cvd, vis, MAX_DEVICES);
    } else {
        for (unsigned d = 0; d < n; d++) {
            memset(&vis[d], 0, sizeof vis[d]);
            vis[d].index = d;
        }
        nvis = (int)n;
    }
    unsigned nd = 0;
    char eb[32];
    for (int i = 0; i < nvis; i++) {
        dev_state *ds = &m->dev[nd];
        nvml_ret r = resolve_entry(&m->api, n, &vis[i], &ds->h);
        if (r != NVML_SUCCESS) {
            if (!cvd) {
                set_err("nvmlDeviceGetHandleByIndex_v2: %s%s",
                        nvml_err(&m->api, r, eb, sizeof eb), "");
                return map_init_error(r);
            }
            break; /* CUDA ignores the rest of the list too */
        }
        if (m->api.GetName(ds->h, ds->name, sizeof ds->name) != NVML_SUCCESS)
            snprintf(ds->name, sizeof ds->name, "GPU %u", nd);
        ds->name[sizeof ds->name - 1] = 0;
        for (int k = 0; k < N_METRICS; k++)
            snprintf(ds->tags[k], sizeof ds->tags[k], "%s%u/%s",
                     TFB_TAG_GPU_PREFIX, nd, k_metric[k]);
        snprintf(ds->energy_tag, sizeof ds->energy_tag, "%s%u/%s",
                 TFB_TAG_GPU_PREFIX, nd, TFB_TAG_GPU_ENERGY);
        describe(&m->api, nd, ds);
        probe_energy(&m->api, ds);
        nd++;
    }
    if (nd == 0 && cvd) {
        set_err("CUDA_VISIBLE_DEVICES=\"%.200s\" names no device of this "
                "machine%s", cvd, "");
        return TFB_ENOGPU;
    }
    m->ndev = nd;
    return 0;
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
        if (!rc)
            rc = open_devices(m, n);
        if (rc)
            m->api.Shutdown();
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
        snprintf(tag, sizeof tag, "%s%u/%s", TFB_TAG_GPU_PREFIX, d,
                 TFB_TAG_GPU_PHYSICAL);
        tfb_text(w, tag, m->dev[d].physical, 0);
        if (m->dev[d].energy != ENERGY_NONE) {
            snprintf(tag, sizeof tag, "%s%u/%s", TFB_TAG_GPU_PREFIX, d,
                     TFB_TAG_GPU_ENERGY_SOURCE);
            tfb_text(w, tag,
                     m->dev[d].energy == ENERGY_COUNTER ? "counter"
                                                        : "power_x_time",
                     0);
        }
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

/* ------------------------------------------------------------------------
 * For the pipeline's helper thread (gpu_metrics_internal.h)
 * ---------------------------------------------------------------------- */
int tfb_gpu_metrics_step_energy(tfb_writer *w, int64_t step, double wall,
                                double step_s, double *total_j)
{
    *total_j = 0;
    if (!w || !(step_s >= 0) || !isfinite(step_s))
        return 0;
    pthread_mutex_lock(&g_mu);
    tfb_gpu_metrics *m = *find_slot(w);
    if (!m || m->owner != getpid()) {
        pthread_mutex_unlock(&g_mu);
        return 0;
    }
    int64_t now = tfb_mono_now_ns();
    int done = 0;
    uint64_t read_err = 0, log_err = 0;
    for (unsigned d = 0; d < m->ndev; d++) {
        dev_state *ds = &m->dev[d];
        double j = 0;
        int have = 0;
        if (ds->energy == ENERGY_COUNTER) {
            int64_t dt = now - ds->e_last_ns;
            unsigned long long mj;
            if (dt >= (int64_t)ENERGY_READ_MIN_MS * 1000000) {
                if (m->api.GetEnergy(ds->h, &mj) == NVML_SUCCESS) {
                    /* A counter that went back (driver reload) restarts
                     * the baseline. */
                    if (mj >= ds->e_last_mj) {
                        ds->e_watts = (double)(mj - ds->e_last_mj) / 1e3 /
                                      ((double)dt / 1e9);
                        ds->have_watts = 1;
                    }
                    ds->e_last_mj = mj;
                    ds->e_last_ns = now;
                } else {
                    read_err++;
                }
            }
            if (ds->have_watts) {
                j = ds->e_watts * step_s;
                have = 1;
            }
        } else if (ds->energy == ENERGY_POWER) {
            unsigned mw;
            if (m->api.GetPower(ds->h, &mw) == NVML_SUCCESS) {
                j = mw / 1000.0 * step_s;
                have = 1;
            } else {
                read_err++;
            }
        }
        if (!have)
            continue;
        if (tfb_scalar_at(w, ds->energy_tag, j, step, wall))
            log_err++;
        *total_j += j;
        done++;
    }
    pthread_mutex_lock(&m->mu);
    m->stats.read_errors += read_err;
    m->stats.log_errors += log_err;
    pthread_mutex_unlock(&m->mu);
    pthread_mutex_unlock(&g_mu);
    return done;
}

int tfb_gpu_metrics_device_name(tfb_writer *w, char *buf, size_t cap)
{
    if (!w || !buf || cap == 0)
        return 0;
    buf[0] = 0;
    int found = 0;
    pthread_mutex_lock(&g_mu);
    tfb_gpu_metrics *m = *find_slot(w);
    if (m && m->owner == getpid() && m->ndev > 0) {
        snprintf(buf, cap, "%s", m->dev[0].name);
        found = 1;
    }
    pthread_mutex_unlock(&g_mu);
    return found;
}
