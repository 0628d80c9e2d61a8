/*
 * cupti_records.c - walks completed CUPTI activity buffers with the loaded
 * library's cuptiActivityGetNextRecord (never by sizeof: record structs
 * grow with each toolkit) and turns each record into a trace-store row in
 * the Nsight Systems export layout. Names are interned once (kernel names
 * cached by pointer: CUPTI shares one name string across a kernel's
 * records), so the per-record cost is a few stores into a row batch.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collector/cupti_internal.h"
#include "base/str.h"
#include "base/strtab.h"
#include "base/vec.h"

#define ROW_BATCH 4096
#define API_NAME_CACHE 1024
#define MAX_OPEN_MARKERS 4096
#define MAX_CONTEXTS 256

typedef struct name_entry {
    const char *ptr; /* CUPTI's pointer; its bytes are the entry's key */
    char *copy;      /* its text, to detect a reused pointer */
    int64_t demangled, shortname, mangled;
} name_entry;

typedef struct open_marker {
    uint32_t id;
    int64_t start;
    int64_t text_id;
    int64_t tid;
} open_marker;

struct tfb_cupti_proc {
    const tfb_cupti_api *api;
    tfb_trace_store *store;
    tfb_gpu_util *util;
    int64_t global_pid;

    tfb_trace_row rows[ROW_BATCH];
    size_t nrows;

    /* Kernel names by CUPTI's pointer: the key is the pointer's own bytes
     * (in the entry), so a lookup hashes 8 bytes, not the name. */
    tfb_strtab names;
    TFB_VEC(name_entry *) name_entries; /* every entry, to free them */
    int64_t rt_names[API_NAME_CACHE];  /* runtime cbid -> StringIds id */
    int64_t drv_names[API_NAME_CACHE]; /* driver cbid -> StringIds id */

    open_marker markers[MAX_OPEN_MARKERS];
    size_t nmarkers;

    struct {
        uint32_t ctx, dev;
    } ctxdev[MAX_CONTEXTS];
    size_t nctx;

    tfb_cupti_counts counts;
};

int tfb_cupti_proc_new(tfb_cupti_proc **out, const tfb_cupti_api *api,
                       tfb_trace_store *store, tfb_gpu_util *util)
{
    if (!out || !api || !api->ActivityGetNextRecord || !store)
        return TFB_EINVAL;
    tfb_cupti_proc *p = calloc(1, sizeof *p);
    if (!p)
        return TFB_ENOMEM;
    p->api = api;
    p->store = store;
    p->util = util;
    p->global_pid = (int64_t)getpid() << 24; /* nsys's globalPid layout */
    for (size_t i = 0; i < API_NAME_CACHE; i++)
        p->rt_names[i] = p->drv_names[i] = -1;
    *out = p;
    return 0;
}

void tfb_cupti_proc_free(tfb_cupti_proc *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->name_entries.n; i++) {
        free(p->name_entries.v[i]->copy);
        free(p->name_entries.v[i]);
    }
    tfb_vec_free(&p->name_entries);
    tfb_strtab_free(&p->names);
    free(p);
}

void tfb_cupti_proc_counts(const tfb_cupti_proc *p, tfb_cupti_counts *out)
{
    if (p && out)
        *out = p->counts;
}

static int flush_rows(tfb_cupti_proc *p)
{
    if (!p->nrows)
        return 0;
    /* Our own thread: waiting for room is fine, losing records is not. */
    int err = tfb_trace_store_push(p->store, p->rows, p->nrows, 1);
    p->nrows = 0;
    return err;
}

static tfb_trace_row *next_row(tfb_cupti_proc *p, tfb_trace_table t,
                               int *err)
{
    if (p->nrows == ROW_BATCH) {
        int e = flush_rows(p);
        if (e && !*err)
            *err = e;
    }
    tfb_trace_row *r = &p->rows[p->nrows++];
    r->table = t;
    r->text = r->text2 = NULL;
    return r;
}

/* ------------------------------------------------------------------------
 * Names
 * ---------------------------------------------------------------------- */
void tfb_cupti_short_name(const char *dem, char *out, size_t cap)
{
    if (!cap)
        return;
    /* End of the name proper: the '(' of the parameter list at template
     * depth 0 (operator() aside: rare in kernels). */
    size_t len = strlen(dem), end = len;
    int depth = 0;
    for (size_t i = 0; i < len; i++) {
        char c = dem[i];
        if (c == '<')
            depth++;
        else if (c == '>' && depth > 0)
            depth--;
        else if (c == '(' && depth == 0 && i > 0) {
            end = i;
            break;
        }
    }
    /* Strip a trailing template argument list. */
    size_t e = end;
    if (e > 0 && dem[e - 1] == '>') {
        int d = 0;
        size_t i = e;
        while (i > 0) {
            i--;
            if (dem[i] == '>')
                d++;
            else if (dem[i] == '<' && --d == 0)
                break;
        }
        if (i > 0)
            e = i;
    }
    /* Start: after the last "::" or space at depth 0 before e. */
    size_t b = 0;
    depth = 0;
    for (size_t i = 0; i < e; i++) {
        char c = dem[i];
        if (c == '<')
            depth++;
        else if (c == '>' && depth > 0)
            depth--;
        else if (depth == 0 && c == ':' && i + 1 < e && dem[i + 1] == ':') {
            b = i + 2;
            i++;
        } else if (depth == 0 && c == ' ')
            b = i + 1;
    }
    if (b >= e) {
        b = 0;
        e = len;
    }
    size_t n = e - b;
    if (n >= cap)
        n = cap - 1;
    memcpy(out, dem + b, n);
    out[n] = '\0';
}

/* The ids for a kernel name (demangled, short, mangled). */
static const name_entry *kernel_names(tfb_cupti_proc *p, const char *name,
                                      int *err)
{
    static const name_entry unknown_fail = {NULL, NULL, -1, -1, -1};
    if (!name)
        name = "<unknown kernel>";
    const name_entry *hit =
        tfb_strtab_get(&p->names, (const char *)&name, sizeof name);
    if (hit && strcmp(hit->copy, name) == 0)
        return hit;
    /* New (or a reused pointer, whose new entry replaces the old one in
     * names): make room first, so the insert below cannot fail. */
    name_entry *ne = malloc(sizeof *ne);
    if (!ne ||
        tfb_vec_need(&p->name_entries, p->name_entries.n + 1) < 0 ||
        tfb_strtab_reserve(&p->names, p->names.count + 1) < 0) {
        free(ne);
        *err = TFB_ENOMEM;
        return &unknown_fail;
    }
    char *dem = NULL;
    int status = -1;
    if (p->api->demangle && name[0] == '_' && name[1] == 'Z')
        dem = p->api->demangle(name, NULL, NULL, &status);
    const char *full = (dem && status == 0) ? dem : name;
    char shortbuf[512];
    tfb_cupti_short_name(full, shortbuf, sizeof shortbuf);
    ne->ptr = name;
    ne->copy = tfb_strdup(name);
    ne->demangled = tfb_trace_store_intern(p->store, full);
    ne->shortname = tfb_trace_store_intern(p->store, shortbuf);
    ne->mangled = tfb_trace_store_intern(p->store, name);
    free(dem);
    if (!ne->copy || ne->demangled < 0 || ne->shortname < 0 ||
        ne->mangled < 0) {
        free(ne->copy);
        free(ne);
        *err = TFB_ENOMEM;
        return &unknown_fail;
    }
    tfb_strtab_put(&p->names, (const char *)&ne->ptr, sizeof ne->ptr, ne);
    p->name_entries.v[p->name_entries.n++] = ne;
    return ne;
}

static int64_t api_name(tfb_cupti_proc *p, int driver, uint32_t cbid)
{
    int64_t *cache = driver ? p->drv_names : p->rt_names;
    if (cbid < API_NAME_CACHE && cache[cbid] >= 0)
        return cache[cbid];
    const char *nm = NULL;
    char buf[64];
    if (p->api->GetCallbackName &&
        p->api->GetCallbackName(driver ? CUPTI_CB_DOMAIN_DRIVER_API
                                       : CUPTI_CB_DOMAIN_RUNTIME_API,
                                cbid, &nm) == CUPTI_SUCCESS &&
        nm && *nm) {
        /* use the library's name */
    } else {
        snprintf(buf, sizeof buf, "%s_cbid_%u", driver ? "cu" : "cuda",
                 (unsigned)cbid);
        nm = buf;
    }
    int64_t id = tfb_trace_store_intern(p->store, nm);
    if (id >= 0 && cbid < API_NAME_CACHE)
        cache[cbid] = id;
    return id;
}

static uint32_t device_of_context(const tfb_cupti_proc *p, uint32_t ctx,
                                  int *found)
{
    for (size_t i = 0; i < p->nctx; i++)
        if (p->ctxdev[i].ctx == ctx) {
            *found = 1;
            return p->ctxdev[i].dev;
        }
    *found = 0;
    return 0;
}

static void learn_context(tfb_cupti_proc *p, uint32_t ctx, uint32_t dev)
{
    int found;
    device_of_context(p, ctx, &found);
    if (!found && p->nctx < MAX_CONTEXTS) {
        p->ctxdev[p->nctx].ctx = ctx;
        p->ctxdev[p->nctx].dev = dev;
        p->nctx++;
    }
}

/* ------------------------------------------------------------------------
 * Records
 * ---------------------------------------------------------------------- */
/* A record flushed before its activity finished has no end time yet. */
static int incomplete(tfb_cupti_proc *p, uint64_t start, uint64_t end)
{
    if (start != 0 && end >= start)
        return 0;
    p->counts.other++;
    return 1;
}

static void on_kernel(tfb_cupti_proc *p, const CUpti_ActivityKernel10 *k,
                      int *err)
{
    if (incomplete(p, k->start, k->end))
        return;
    const name_entry *ne = kernel_names(p, k->name, err);
    tfb_trace_row *r = next_row(p, TFB_TT_KERNEL, err);
    int64_t *c = r->c;
    c[TFB_K_START] = (int64_t)k->start;
    c[TFB_K_END] = (int64_t)k->end;
    c[TFB_K_DEVICE] = k->deviceId;
    c[TFB_K_CONTEXT] = k->contextId;
    c[TFB_K_STREAM] = k->streamId;
    c[TFB_K_CORRELATION] = k->correlationId;
    c[TFB_K_GLOBALPID] = p->global_pid;
    c[TFB_K_DEMANGLED] = ne->demangled;
    c[TFB_K_SHORTNAME] = ne->shortname;
    c[TFB_K_MANGLED] = ne->mangled;
    c[TFB_K_GRIDX] = k->gridX;
    c[TFB_K_GRIDY] = k->gridY;
    c[TFB_K_GRIDZ] = k->gridZ;
    c[TFB_K_BLOCKX] = k->blockX;
    c[TFB_K_BLOCKY] = k->blockY;
    c[TFB_K_BLOCKZ] = k->blockZ;
    c[TFB_K_REGISTERS] = k->registersPerThread;
    c[TFB_K_STATIC_SMEM] = k->staticSharedMemory;
    c[TFB_K_DYNAMIC_SMEM] = k->dynamicSharedMemory;
    c[TFB_K_LOCAL_MEM_PER_THREAD] = k->localMemoryPerThread;
    c[TFB_K_GRID_ID] = k->gridId;
    c[TFB_K_LAUNCH_TYPE] = k->launchType;
    c[TFB_K_GRAPH_NODE] = k->graphNodeId ? (int64_t)k->graphNodeId
                                         : TFB_TRACE_NULL;
    learn_context(p, k->contextId, k->deviceId);
    if (p->util &&
        tfb_gpu_util_add(p->util, k->deviceId, (int64_t)k->start,
                         (int64_t)k->end) == TFB_ENOMEM && !*err)
        *err = TFB_ENOMEM;
    p->counts.kernels++;
}

static void on_memcpy(tfb_cupti_proc *p, const CUpti_ActivityMemcpy6 *m,
                      int *err)
{
    if (incomplete(p, m->start, m->end))
        return;
    tfb_trace_row *r = next_row(p, TFB_TT_MEMCPY, err);
    int64_t *c = r->c;
    c[TFB_MC_START] = (int64_t)m->start;
    c[TFB_MC_END] = (int64_t)m->end;
    c[TFB_MC_DEVICE] = m->deviceId;
    c[TFB_MC_CONTEXT] = m->contextId;
    c[TFB_MC_STREAM] = m->streamId;
    c[TFB_MC_CORRELATION] = m->correlationId;
    c[TFB_MC_GLOBALPID] = p->global_pid;
    c[TFB_MC_BYTES] = (int64_t)m->bytes;
    c[TFB_MC_COPYKIND] = m->copyKind;
    c[TFB_MC_SRCKIND] = m->srcKind;
    c[TFB_MC_DSTKIND] = m->dstKind;
    c[TFB_MC_SRCDEVICE] = TFB_TRACE_NULL; /* Memcpy6 has no peer fields */
    c[TFB_MC_DSTDEVICE] = TFB_TRACE_NULL;
    c[TFB_MC_GRAPH_NODE] = m->graphNodeId ? (int64_t)m->graphNodeId
                                          : TFB_TRACE_NULL;
    learn_context(p, m->contextId, m->deviceId);
    p->counts.memcpys++;
}

static void on_memset(tfb_cupti_proc *p, const CUpti_ActivityMemset4 *m,
                      int *err)
{
    if (incomplete(p, m->start, m->end))
        return;
    tfb_trace_row *r = next_row(p, TFB_TT_MEMSET, err);
    int64_t *c = r->c;
    c[TFB_MS_START] = (int64_t)m->start;
    c[TFB_MS_END] = (int64_t)m->end;
    c[TFB_MS_DEVICE] = m->deviceId;
    c[TFB_MS_CONTEXT] = m->contextId;
    c[TFB_MS_STREAM] = m->streamId;
    c[TFB_MS_CORRELATION] = m->correlationId;
    c[TFB_MS_GLOBALPID] = p->global_pid;
    c[TFB_MS_VALUE] = m->value;
    c[TFB_MS_BYTES] = (int64_t)m->bytes;
    c[TFB_MS_MEMKIND] = m->memoryKind;
    c[TFB_MS_GRAPH_NODE] = m->graphNodeId ? (int64_t)m->graphNodeId
                                          : TFB_TRACE_NULL;
    learn_context(p, m->contextId, m->deviceId);
    p->counts.memsets++;
}

static void on_sync(tfb_cupti_proc *p, const CUpti_ActivitySynchronization2 *s,
                    int *err)
{
    tfb_trace_row *r = next_row(p, TFB_TT_SYNC, err);
    int64_t *c = r->c;
    int found;
    uint32_t dev = device_of_context(p, s->contextId, &found);
    c[TFB_SY_START] = (int64_t)s->start;
    c[TFB_SY_END] = (int64_t)s->end;
    c[TFB_SY_DEVICE] = found ? (int64_t)dev : TFB_TRACE_NULL;
    c[TFB_SY_CONTEXT] = s->contextId;
    /* CUPTI_SYNCHRONIZATION_INVALID_VALUE marks "no stream / no event". */
    c[TFB_SY_STREAM] = s->streamId == (uint32_t)-1 ? TFB_TRACE_NULL
                                                   : (int64_t)s->streamId;
    c[TFB_SY_CORRELATION] = s->correlationId;
    c[TFB_SY_GLOBALPID] = p->global_pid;
    c[TFB_SY_TYPE] = s->type;
    c[TFB_SY_EVENT] = s->cudaEventId == (uint32_t)-1 ? TFB_TRACE_NULL
                                                     : (int64_t)s->cudaEventId;
    p->counts.syncs++;
}

static void on_api(tfb_cupti_proc *p, const CUpti_ActivityAPI *a, int driver,
                   int *err)
{
    int64_t name = api_name(p, driver, a->cbid);
    if (name < 0 && !*err)
        *err = (int)name;
    tfb_trace_row *r = next_row(p, TFB_TT_RUNTIME, err);
    int64_t *c = r->c;
    c[TFB_RT_START] = (int64_t)a->start;
    c[TFB_RT_END] = (int64_t)a->end;
    c[TFB_RT_EVENTCLASS] = driver ? 0 : 1;
    c[TFB_RT_GLOBALTID] = ((int64_t)a->processId << 24) |
                          ((int64_t)a->threadId & 0xffffff);
    c[TFB_RT_CORRELATION] = a->correlationId;
    c[TFB_RT_NAMEID] = name < 0 ? 0 : name;
    c[TFB_RT_RETURN] = a->returnValue;
    c[TFB_RT_CBID] = a->cbid;
    p->counts.api_calls++;
}

static int64_t marker_tid(const CUpti_ActivityMarker2 *m)
{
    if (m->objectKind == CUPTI_ACTIVITY_OBJECT_THREAD ||
        m->objectKind == CUPTI_ACTIVITY_OBJECT_PROCESS)
        return ((int64_t)m->objectId.pt.processId << 24) |
               ((int64_t)m->objectId.pt.threadId & 0xffffff);
    return TFB_TRACE_NULL;
}

static void emit_nvtx(tfb_cupti_proc *p, int64_t start, int64_t end,
                      int type, uint32_t id, int64_t tid, int64_t text_id,
                      int *err)
{
    tfb_trace_row *r = next_row(p, TFB_TT_NVTX, err);
    int64_t *c = r->c;
    c[TFB_NV_START] = start;
    c[TFB_NV_END] = end;
    c[TFB_NV_EVENTTYPE] = type;
    c[TFB_NV_RANGEID] = id;
    c[TFB_NV_GLOBALTID] = tid;
    c[TFB_NV_TEXTID] = text_id;
    c[TFB_NV_DOMAINID] = 0;
    /* The text lives in StringIds via textId, as in nsys exports. */
}

static void on_marker(tfb_cupti_proc *p, const CUpti_ActivityMarker2 *m,
                      int *err)
{
    if (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS) {
        int64_t text_id = TFB_TRACE_NULL;
        if (m->name) {
            int64_t id = tfb_trace_store_intern(p->store, m->name);
            if (id >= 0)
                text_id = id;
            else if (!*err)
                *err = (int)id;
        }
        emit_nvtx(p, (int64_t)m->timestamp, TFB_TRACE_NULL, TFB_NVTX_MARK,
                  m->id, marker_tid(m), text_id, err);
        p->counts.markers++;
        return;
    }
    if (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_START) {
        if (p->nmarkers == MAX_OPEN_MARKERS) {
            /* A range that never ends: close the oldest where it began so
             * the table cannot grow without bound. */
            open_marker *o = &p->markers[0];
            emit_nvtx(p, o->start, o->start, TFB_NVTX_PUSHPOP_RANGE, o->id,
                      o->tid, o->text_id, err);
            memmove(&p->markers[0], &p->markers[1],
                    (MAX_OPEN_MARKERS - 1) * sizeof p->markers[0]);
            p->nmarkers--;
        }
        open_marker *o = &p->markers[p->nmarkers++];
        o->id = m->id;
        o->start = (int64_t)m->timestamp;
        o->tid = marker_tid(m);
        o->text_id = TFB_TRACE_NULL;
        if (m->name) {
            int64_t id = tfb_trace_store_intern(p->store, m->name);
            if (id >= 0)
                o->text_id = id;
            else if (!*err)
                *err = (int)id;
        }
        return;
    }
    if (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_END) {
        for (size_t i = p->nmarkers; i-- > 0;) {
            if (p->markers[i].id != m->id)
                continue;
            open_marker o = p->markers[i];
            memmove(&p->markers[i], &p->markers[i + 1],
                    (p->nmarkers - i - 1) * sizeof p->markers[0]);
            p->nmarkers--;
            emit_nvtx(p, o.start, (int64_t)m->timestamp,
                      TFB_NVTX_PUSHPOP_RANGE, o.id, o.tid, o.text_id, err);
            p->counts.markers++;
            return;
        }
    }
    /* An END without its START (tracing began inside the range), or a
     * sync marker: nothing to draw. */
    p->counts.other++;
}

static void on_overhead(tfb_cupti_proc *p, const CUpti_ActivityOverhead3 *o,
                        int *err)
{
    tfb_trace_row *r = next_row(p, TFB_TT_OVERHEAD, err);
    int64_t *c = r->c;
    c[TFB_OV_START] = (int64_t)o->start;
    c[TFB_OV_END] = (int64_t)o->end;
    c[TFB_OV_KIND] = o->overheadKind;
    c[TFB_OV_OBJECTKIND] = o->objectKind;
    if (o->objectKind == CUPTI_ACTIVITY_OBJECT_THREAD ||
        o->objectKind == CUPTI_ACTIVITY_OBJECT_PROCESS) {
        c[TFB_OV_GLOBALTID] = ((int64_t)o->objectId.pt.processId << 24) |
                              ((int64_t)o->objectId.pt.threadId & 0xffffff);
        c[TFB_OV_OBJECTID] = o->objectId.pt.threadId;
    } else {
        c[TFB_OV_GLOBALTID] = TFB_TRACE_NULL;
        c[TFB_OV_OBJECTID] = o->objectId.dcs.deviceId;
    }
    p->counts.overheads++;
}

static void on_device(tfb_cupti_proc *p, const CUpti_ActivityDevice5 *d,
                      int *err)
{
    tfb_trace_row *r = next_row(p, TFB_TT_GPU_INFO, err);
    int64_t *c = r->c;
    c[TFB_GI_ID] = d->id;
    c[TFB_GI_SMCOUNT] = d->numMultiprocessors;
    c[TFB_GI_TOTALMEMORY] = (int64_t)d->globalMemorySize;
    c[TFB_GI_CLOCKRATE] = d->coreClockRate;
    c[TFB_GI_COMPUTEMAJOR] = d->computeCapabilityMajor;
    c[TFB_GI_COMPUTEMINOR] = d->computeCapabilityMinor;
    c[TFB_GI_L2] = d->l2CacheSize;
    c[TFB_GI_MEMBW] = (int64_t)d->globalMemoryBandwidth;
    /* The row is pushed (and its text copied) before this buffer is given
     * back to CUPTI, so pointing at the record's name is safe. */
    r->text = d->name ? d->name : "GPU";
    if (p->util)
        tfb_gpu_util_add_device(p->util, d->id);
    p->counts.devices++;
}

/* ------------------------------------------------------------------------
 * GPU memory (issue 13): allocations/releases and pool changes.
 * ---------------------------------------------------------------------- */
static int64_t u64_col(uint64_t v)
{
    /* Device addresses and sizes fit in 63 bits; anything larger is kept
     * bit for bit (it reads back negative, never wraps into a wrong
     * positive). */
    return (int64_t)v;
}

static void on_memory(tfb_cupti_proc *p, const CUpti_ActivityMemory4 *m,
                      int *err)
{
    int64_t name_id = TFB_TRACE_NULL;
    if (m->name && m->name[0]) {
        /* Only static variables carry a name: rare, so no cache. */
        int64_t id = tfb_trace_store_intern(p->store, m->name);
        if (id >= 0)
            name_id = id;
        else if (!*err)
            *err = (int)id;
    }
    tfb_trace_row *r = next_row(p, TFB_TT_MEM_USAGE, err);
    int64_t *c = r->c;
    c[TFB_MU_START] = u64_col(m->timestamp);
    c[TFB_MU_GLOBALPID] = m->processId ? (int64_t)m->processId << 24
                                       : p->global_pid;
    c[TFB_MU_DEVICE] = m->deviceId;
    c[TFB_MU_CONTEXT] = m->contextId;
    c[TFB_MU_STREAM] = m->streamId;
    c[TFB_MU_CORRELATION] = m->correlationId;
    c[TFB_MU_ADDRESS] = u64_col(m->address);
    c[TFB_MU_PC] = m->PC ? u64_col(m->PC) : TFB_TRACE_NULL;
    c[TFB_MU_BYTES] = u64_col(m->bytes);
    c[TFB_MU_MEMKIND] = m->memoryKind;
    /* nsys numbering: 0 allocation, 1 deallocation; an invalid operation
     * is stored as -1 (the column is NOT NULL) so it counts as neither. */
    c[TFB_MU_OPERATION] =
        m->memoryOperationType == CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION
            ? TFB_MEM_OP_ALLOCATION
        : m->memoryOperationType == CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE
            ? TFB_MEM_OP_DEALLOCATION
            : -1;
    c[TFB_MU_NAME] = name_id;
    c[TFB_MU_ISASYNC] = m->isAsync;
    CUpti_ActivityMemoryPoolType pt = m->memoryPoolConfig.memoryPoolType;
    int local = pt == CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL;
    int imported = pt == CUPTI_ACTIVITY_MEMORY_POOL_TYPE_IMPORTED;
    c[TFB_MU_POOL_TYPE] = local || imported ? (int64_t)pt : TFB_TRACE_NULL;
    c[TFB_MU_POOL_ADDRESS] =
        local ? u64_col(m->memoryPoolConfig.address) : TFB_TRACE_NULL;
    c[TFB_MU_POOL_RELEASE_THRESHOLD] =
        local ? u64_col(m->memoryPoolConfig.releaseThreshold) : TFB_TRACE_NULL;
    c[TFB_MU_POOL_SIZE] =
        local ? u64_col(m->memoryPoolConfig.pool.size) : TFB_TRACE_NULL;
    c[TFB_MU_POOL_UTILIZED] =
        local ? u64_col(m->memoryPoolConfig.utilizedSize) : TFB_TRACE_NULL;
    c[TFB_MU_IMPORTED_POOL_ADDRESS] =
        imported ? u64_col(m->memoryPoolConfig.address) : TFB_TRACE_NULL;
    c[TFB_MU_IMPORTED_POOL_PID] =
        imported ? u64_col(m->memoryPoolConfig.pool.processId)
                 : TFB_TRACE_NULL;
    learn_context(p, m->contextId, m->deviceId);
    p->counts.memory++;
}

static void on_memory_pool(tfb_cupti_proc *p,
                           const CUpti_ActivityMemoryPool3 *m, int *err)
{
    tfb_trace_row *r = next_row(p, TFB_TT_MEM_POOL, err);
    int64_t *c = r->c;
    c[TFB_MP_START] = u64_col(m->timestamp);
    c[TFB_MP_GLOBALPID] = m->processId ? (int64_t)m->processId << 24
                                       : p->global_pid;
    c[TFB_MP_DEVICE] = m->deviceId;
    c[TFB_MP_CORRELATION] = m->correlationId;
    /* CUPTI's CUpti_ActivityMemoryPoolOperationType: 1 created,
     * 2 destroyed, 3 trimmed. */
    c[TFB_MP_OPERATION] = m->memoryPoolOperationType;
    c[TFB_MP_POOL_TYPE] = m->memoryPoolType;
    c[TFB_MP_ADDRESS] = u64_col(m->address);
    c[TFB_MP_SIZE] = u64_col(m->size);
    c[TFB_MP_RELEASE_THRESHOLD] = u64_col(m->releaseThreshold);
    c[TFB_MP_UTILIZED] = u64_col(m->utilizedSize);
    c[TFB_MP_MIN_BYTES_TO_KEEP] = u64_col((uint64_t)m->minBytesToKeep);
    c[TFB_MP_IS_MANAGED] = m->isManagedPool;
    p->counts.memory_pools++;
}

int64_t tfb_cupti_process_buffer(tfb_cupti_proc *p, uint8_t *buf,
                                 size_t valid)
{
    if (!p || (!buf && valid))
        return TFB_EINVAL;
    int err = 0;
    int64_t n = 0;
    CUpti_Activity *rec = NULL;
    while (valid &&
           p->api->ActivityGetNextRecord(buf, valid, &rec) == CUPTI_SUCCESS) {
        n++;
        switch (rec->kind) {
        case CUPTI_ACTIVITY_KIND_KERNEL:
        case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
            on_kernel(p, (const CUpti_ActivityKernel10 *)(void *)rec, &err);
            break;
        case CUPTI_ACTIVITY_KIND_MEMCPY:
            on_memcpy(p, (const CUpti_ActivityMemcpy6 *)(void *)rec, &err);
            break;
        case CUPTI_ACTIVITY_KIND_MEMSET:
            on_memset(p, (const CUpti_ActivityMemset4 *)(void *)rec, &err);
            break;
        case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
            on_sync(p, (const CUpti_ActivitySynchronization2 *)(void *)rec,
                    &err);
            break;
        case CUPTI_ACTIVITY_KIND_RUNTIME:
        case CUPTI_ACTIVITY_KIND_DRIVER:
            on_api(p, (const CUpti_ActivityAPI *)(void *)rec,
                   rec->kind == CUPTI_ACTIVITY_KIND_DRIVER, &err);
            break;
        case CUPTI_ACTIVITY_KIND_MARKER:
            on_marker(p, (const CUpti_ActivityMarker2 *)(void *)rec, &err);
            break;
        case CUPTI_ACTIVITY_KIND_OVERHEAD:
            on_overhead(p, (const CUpti_ActivityOverhead3 *)(void *)rec,
                        &err);
            break;
        case CUPTI_ACTIVITY_KIND_DEVICE:
            on_device(p, (const CUpti_ActivityDevice5 *)(void *)rec, &err);
            break;
        case CUPTI_ACTIVITY_KIND_MEMORY2:
            on_memory(p, (const CUpti_ActivityMemory4 *)(void *)rec, &err);
            break;
        case CUPTI_ACTIVITY_KIND_MEMORY_POOL:
            on_memory_pool(p, (const CUpti_ActivityMemoryPool3 *)(void *)rec,
                           &err);
            break;
        default:
            p->counts.other++;
            break;
        }
    }
    int e = flush_rows(p);
    if (!err)
        err = e;
    return err ? err : n;
}
