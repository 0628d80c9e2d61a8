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
 * not supported).
 * tfb_fake_nvml_counts() reports init/shutdown calls and samples (memory
 * info calls), for the tests.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define API __attribute__((visibility("default")))

typedef struct fake_dev {
    unsigned idx;
} fake_dev;
typedef fake_dev *nvmlDevice_t;
typedef struct {
    unsigned int gpu, memory;
} nvmlUtilization_t;
typedef struct {
    unsigned long long total, free, used;
} nvmlMemory_t;

static fake_dev g_devs[16];
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
    snprintf(name, len, "Fake GPU %u", d->idx);
    return 0;
}

int nvmlDeviceGetUtilizationRates(nvmlDevice_t d, nvmlUtilization_t *u)
{
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
    if (fail_is("power"))
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
