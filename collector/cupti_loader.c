/*
 * cupti_loader.c - finds libcupti at run time (dlopen), resolves the
 * functions we call, checks its version against our headers, and maps CUPTI
 * results to TFB_E* codes. The library links no CUDA at build time, so it
 * runs where no GPU or CUDA exists.
 */
#include "collector/cupti_internal.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *open_cupti(const char *path, char *msg, size_t msg_len)
{
    const char *tried[4];
    int n = 0;
    const char *env = getenv("TFB_CUPTI_PATH");
    /* A path the user named is the only one tried: falling back to another
     * CUPTI would hide their mistake. */
    if (path && *path) {
        tried[n++] = path;
    } else if (env && *env) {
        tried[n++] = env;
    } else {
        tried[n++] = "libcupti.so.13";
        tried[n++] = "libcupti.so";
    }
    const char *last_err = "not found";
    for (int i = 0; i < n; i++) {
        /* RTLD_LOCAL: CUPTI's symbols must not satisfy anyone else's. */
        void *h = dlopen(tried[i], RTLD_NOW | RTLD_LOCAL);
        if (h)
            return h;
        const char *e = dlerror();
        if (e)
            last_err = e;
    }
    snprintf(msg, msg_len, "cannot load CUPTI (tried %s%s%s%s%s): %s",
             tried[0], n > 1 ? ", " : "", n > 1 ? tried[1] : "",
             n > 2 ? ", " : "", n > 2 ? tried[2] : "", last_err);
    return NULL;
}

#define RESOLVE(field, sym, required)                                         \
    do {                                                                      \
        void *p_ = dlsym(h, sym);                                             \
        if (!p_ && (required)) {                                              \
            snprintf(msg, msg_len, "CUPTI library lacks %s", sym);            \
            return TFB_ENOCUPTI;                                              \
        }                                                                     \
        memcpy(&api->field, &p_, sizeof p_);                                  \
    } while (0)

static int resolve(tfb_cupti_api *api, void *h, char *msg, size_t msg_len)
{
    RESOLVE(GetVersion, "cuptiGetVersion", 1);
    RESOLVE(GetResultString, "cuptiGetResultString", 1);
    RESOLVE(ActivityEnable, "cuptiActivityEnable", 1);
    RESOLVE(ActivityDisable, "cuptiActivityDisable", 1);
    RESOLVE(ActivityRegisterCallbacks, "cuptiActivityRegisterCallbacks", 1);
    RESOLVE(ActivityFlushAll, "cuptiActivityFlushAll", 1);
    RESOLVE(ActivityGetNextRecord, "cuptiActivityGetNextRecord", 1);
    RESOLVE(ActivityGetNumDroppedRecords,
            "cuptiActivityGetNumDroppedRecords", 1);
    RESOLVE(Finalize, "cuptiFinalize", 1);
    RESOLVE(GetTimestamp, "cuptiGetTimestamp", 1);
    RESOLVE(ActivityEnableRuntimeApi, "cuptiActivityEnableRuntimeApi", 0);
    RESOLVE(GetCallbackName, "cuptiGetCallbackName", 0);
    return 0;
}

static void find_demangler(tfb_cupti_api *api)
{
    /* Kernel names come mangled; demangle with the C++ runtime when one is
     * present (the training program's own, else libstdc++). */
    void *p = dlsym(RTLD_DEFAULT, "__cxa_demangle");
    if (!p) {
        void *h = dlopen("libstdc++.so.6", RTLD_NOW | RTLD_LOCAL);
        if (h)
            p = dlsym(h, "__cxa_demangle");
    }
    memcpy(&api->demangle, &p, sizeof p);
}

int tfb_cupti_load(tfb_cupti_api *api, const char *path, char *msg,
                   size_t msg_len)
{
    if (!api || !msg || !msg_len)
        return TFB_EINVAL;
    memset(api, 0, sizeof *api);
    msg[0] = '\0';
    void *h = open_cupti(path, msg, msg_len);
    if (!h)
        return TFB_ENOCUPTI;
    int err = resolve(api, h, msg, msg_len);
    if (err) {
        dlclose(h);
        return err;
    }
    uint32_t v = 0;
    CUptiResult r = api->GetVersion(&v);
    /* Records are read through our headers' structs (fields in place,
     * walked by the library's own size): a library of the same major that
     * is not older keeps those layouts. */
    if (r != CUPTI_SUCCESS || v < CUPTI_API_VERSION ||
        v / 10000 != CUPTI_API_VERSION / 10000) {
        snprintf(msg, msg_len,
                 "CUPTI API version %u does not match the headers tfboard "
                 "was built with (%u)",
                 (unsigned)v, (unsigned)CUPTI_API_VERSION);
        dlclose(h);
        return TFB_ECUPTIVERSION;
    }
    api->handle = h;
    api->version = v;
    find_demangler(api);
    return 0;
}

const char *tfb_cupti_result_name(const tfb_cupti_api *api, CUptiResult r)
{
    const char *s = NULL;
    if (api && api->GetResultString &&
        api->GetResultString(r, &s) == CUPTI_SUCCESS && s)
        return s;
    return "CUPTI_ERROR (unnamed)";
}

int tfb_cupti_map_error(CUptiResult r)
{
    switch (r) {
    case CUPTI_SUCCESS:
        return 0;
    case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
    case CUPTI_ERROR_HARDWARE_BUSY:
    case CUPTI_ERROR_OLD_PROFILER_API_INITIALIZED:
        return TFB_EBUSY;
    case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES:
        return TFB_EACCES;
    case CUPTI_ERROR_OUT_OF_MEMORY:
        return TFB_ENOMEM;
    default:
        /* NOT_INITIALIZED, UNKNOWN, INVALID_DEVICE, NOT_SUPPORTED...: what
         * CUPTI answers without a driver or a usable device. */
        return TFB_ENOGPU;
    }
}
