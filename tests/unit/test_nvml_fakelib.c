/*
 * test_nvml_fakelib.c - a stand-in NVML (a system library, like the test
 * libcupti) for tests on machines without a GPU: the functions
 * collector/gpu_metrics.c calls, with the real signatures and known values.
 *
 * Device d (TFB_FAKE_NVML_DEVICES devices, default 2):
 *   name "Fake GPU <d>", utilization gpu 40 + d %, memory 20 + d %,
 *   memory total 80 GiB, used (d + 1) GiB, power 250000 + 1000 d mW,
 *   temperature 60 + d C, SM clock 1500 + 10 d MHz.
 * TFB_FAKE_NVML_FAIL: "init" (nvmlInit_v2 returns 9, driver not loaded),
 * "noperm" (init returns 4), "power" (nvmlDeviceGetPowerUsage returns 3,
 * not supported), "energy" (nvmlDeviceGetTotalEnergyConsumption returns 3).
 * TFB_FAKE_NVML_NAME: the name of every (whole) device instead, e.g. a real
 * one the peak table knows.
 * Energy (issue 29): the total-energy counter of device d reads
 * (300 + d) W x the CLOCK_MONOTONIC time since the process loaded this
 * library, in mJ; a build with -DTFB_FAKE_NVML_NO_ENERGY lacks the
 * function altogether (a pre-Volta driver), so the sampler's fallback,
 * power x time, gives 250 + d W instead: a test tells the two apart.
 * UUIDs: device d is "GPU-<d+1 as 8 hex digits>-0000-4000-8000-
 * 000000000000". TFB_FAKE_NVML_MIG=1: device 1 is in MIG mode with two
 * instances, "MIG-<d+1 as 8 hex>-0000-4000-8000-00000000000<i>" (i = 1,
 * 2), found by nvmlDeviceGetHandleByUUID only (as CUDA_VISIBLE_DEVICES
 * names them); on a MIG handle utilization, power and energy are not
 * supported (3), as on real MIG instances.
 * tfb_fake_nvml_counts() reports init/shutdown calls and samples (memory
 * info calls), for the tests.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define API __attribute__((visibility("default")))

typedef struct fake_dev {
    unsigned idx;
    int mig; /* 0: a whole GPU; i > 0: MIG instance i of GPU idx */
} fake_dev;
typedef fake_dev *nvmlDevice_t;
typedef struct {
    unsigned int gpu, memory;
} nvmlUtilization_t;
typedef struct {
    unsigned long long total, free, used;
} nvmlMemory_t;

static fake_dev g_devs[16];
static fake_dev g_migs[2] = {{1, 1}, {1, 2}};
static struct timespec g_t0;

__attribute__((constructor)) static void fake_load(void)
{
    clock_gettime(CLOCK_MONOTONIC, &g_t0);
}
static atomic_int g_inits, g_shutdowns, g_mem_calls;

static int fail_is(const char *what)
{
    const char *f = getenv("TFB_FAKE_NVML_FAIL");
    return f && strcmp(f, what) == 0;
}

static unsigned ndev(void)
{
    const char *e = getenv("TFB_FAKE_NVML_DEVICES");
    unsigned n = e ? (unsigned)atoi(e) : 2;
    return n > 16 ? 16 : n;
}

API int nvmlInit_v2(void);
API int nvmlShutdown(void);
API int nvmlDeviceGetCount_v2(unsigned int *n);
API int nvmlDeviceGetHandleByIndex_v2(unsigned int i, nvmlDevice_t *d);
API int nvmlDeviceGetName(nvmlDevice_t d, char *name, unsigned int len);
API int nvmlDeviceGetUtilizationRates(nvmlDevice_t d, nvmlUtilization_t *u);
API int nvmlDeviceGetMemoryInfo(nvmlDevice_t d, nvmlMemory_t *m);
API int nvmlDeviceGetPowerUsage(nvmlDevice_t d, unsigned int *mw);
API int nvmlDeviceGetTemperature(nvmlDevice_t d, int sensor, unsigned int *t);
API int nvmlDeviceGetClockInfo(nvmlDevice_t d, int type, unsigned int *mhz);
API const char *nvmlErrorString(int r);
API int nvmlDeviceGetUUID(nvmlDevice_t d, char *uuid, unsigned int len);
API int nvmlDeviceGetHandleByUUID(const char *uuid, nvmlDevice_t *d);
API int nvmlDeviceGetIndex(nvmlDevice_t d, unsigned int *i);
API int nvmlDeviceIsMigDeviceHandle(nvmlDevice_t d, unsigned int *is_mig);
API int nvmlDeviceGetDeviceHandleFromMigDeviceHandle(nvmlDevice_t mig,
                                                     nvmlDevice_t *d);
#ifndef TFB_FAKE_NVML_NO_ENERGY
API int nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t d,
                                            unsigned long long *mj);
#endif
API void tfb_fake_nvml_counts(int *inits, int *shutdowns, int *samples);

int nvmlInit_v2(void)
{
    if (fail_is("init"))
        return 9; /* NVML_ERROR_DRIVER_NOT_LOADED */
    if (fail_is("noperm"))
        return 4; /* NVML_ERROR_NO_PERMISSION */
    atomic_fetch_add(&g_inits, 1);
    return 0;
}

int nvmlShutdown(void)
{
    atomic_fetch_add(&g_shutdowns, 1);
    return 0;
}

int nvmlDeviceGetCount_v2(unsigned int *n)
{
    *n = ndev();
    return 0;
}

int nvmlDeviceGetHandleByIndex_v2(unsigned int i, nvmlDevice_t *d)
{
    if (i >= ndev())
        return 2; /* NVML_ERROR_INVALID_ARGUMENT */
    g_devs[i].idx = i;
    *d = &g_devs[i];
    return 0;
}

int nvmlDeviceGetName(nvmlDevice_t d, char *name, unsigned int len)
{
    const char *n = getenv("TFB_FAKE_NVML_NAME");
    if (d->mig)
        snprintf(name, len, "Fake GPU %u MIG 3g.40gb", d->idx);
    else if (n && *n)
        snprintf(name, len, "%s", n);
    else
        snprintf(name, len, "Fake GPU %u", d->idx);
    return 0;
}

static int mig_mode(void)
{
    const char *e = getenv("TFB_FAKE_NVML_MIG");
    return e && strcmp(e, "1") == 0 && ndev() > 1;
}

int nvmlDeviceGetUUID(nvmlDevice_t d, char *uuid, unsigned int len)
{
    if (d->mig)
        snprintf(uuid, len, "MIG-%08x-0000-4000-8000-%012x", d->idx + 1,
                 (unsigned)d->mig);
    else
        snprintf(uuid, len, "GPU-%08x-0000-4000-8000-000000000000",
                 d->idx + 1);
    return 0;
}

int nvmlDeviceGetHandleByUUID(const char *uuid, nvmlDevice_t *d)
{
    char buf[96];
    for (unsigned i = 0; i < ndev(); i++) {
        g_devs[i].idx = i;
        nvmlDeviceGetUUID(&g_devs[i], buf, sizeof buf);
        if (strcmp(buf, uuid) == 0) {
            *d = &g_devs[i];
            return 0;
        }
    }
    for (unsigned i = 0; mig_mode() && i < 2; i++) {
        nvmlDeviceGetUUID(&g_migs[i], buf, sizeof buf);
        if (strcmp(buf, uuid) == 0) {
            *d = &g_migs[i];
            return 0;
        }
    }
    return 6; /* NVML_ERROR_NOT_FOUND */
}

int nvmlDeviceGetIndex(nvmlDevice_t d, unsigned int *i)
{
    if (d->mig)
        return 2;
    *i = d->idx;
    return 0;
}

int nvmlDeviceIsMigDeviceHandle(nvmlDevice_t d, unsigned int *is_mig)
{
    *is_mig = d->mig != 0;
    return 0;
}

int nvmlDeviceGetDeviceHandleFromMigDeviceHandle(nvmlDevice_t mig,
                                                 nvmlDevice_t *d)
{
    if (!mig->mig)
        return 2;
    g_devs[mig->idx].idx = mig->idx;
    *d = &g_devs[mig->idx];
    return 0;
}

#ifndef TFB_FAKE_NVML_NO_ENERGY
int nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t d,
                                        unsigned long long *mj)
{
    if (d->mig || fail_is("energy"))
        return 3; /* NVML_ERROR_NOT_SUPPORTED */
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    double s = (double)(t.tv_sec - g_t0.tv_sec) +
               (double)(t.tv_nsec - g_t0.tv_nsec) / 1e9;
    *mj = (unsigned long long)((300.0 + d->idx) * s * 1000.0);
    return 0;
}
#endif

int nvmlDeviceGetUtilizationRates(nvmlDevice_t d, nvmlUtilization_t *u)
{
    if (d->mig)
        return 3;
    u->gpu = 40 + d->idx;
    u->memory = 20 + d->idx;
    return 0;
}

int nvmlDeviceGetMemoryInfo(nvmlDevice_t d, nvmlMemory_t *m)
{
    atomic_fetch_add(&g_mem_calls, 1);
    m->total = 80ULL << 30;
    m->used = (unsigned long long)(d->idx + 1) << 30;
    m->free = m->total - m->used;
    return 0;
}

int nvmlDeviceGetPowerUsage(nvmlDevice_t d, unsigned int *mw)
{
    if (fail_is("power") || d->mig)
        return 3; /* NVML_ERROR_NOT_SUPPORTED */
    *mw = 250000 + 1000 * d->idx;
    return 0;
}

int nvmlDeviceGetTemperature(nvmlDevice_t d, int sensor, unsigned int *t)
{
    if (sensor != 0)
        return 2;
    *t = 60 + d->idx;
    return 0;
}

int nvmlDeviceGetClockInfo(nvmlDevice_t d, int type, unsigned int *mhz)
{
    if (type != 1) /* NVML_CLOCK_SM */
        return 2;
    *mhz = 1500 + 10 * d->idx;
    return 0;
}

const char *nvmlErrorString(int r)
{
    switch (r) {
    case 4:
        return "Insufficient Permissions";
    case 9:
        return "Driver Not Loaded";
    default:
        return "Unknown Error";
    }
}

void tfb_fake_nvml_counts(int *inits, int *shutdowns, int *samples)
{
    *inits = atomic_load(&g_inits);
    *shutdowns = atomic_load(&g_shutdowns);
    *samples = atomic_load(&g_mem_calls);
}
