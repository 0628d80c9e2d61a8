/*
 * comm_bandwidth.c - achieved NCCL bandwidth (comm_bandwidth.h): kinds,
 * nccl-tests' factors, size buckets, and a run's rows from its traces'
 * collectives or from the collector's comm/collectives record.
 */
#include "analysis/comm_bandwidth.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/gpu_peaks.h"
#include "tfboard.h"
#include "trace/trace.h"

/* ------------------------------------------------------------------------
 * Kinds, factors, buckets
 * ---------------------------------------------------------------------- */

/* A name folded for matching: lower-case letters and digits only, at most
 * NAME_FOLD bytes (the longest prefix matched is 14). */
#define NAME_FOLD 48

static int starts(const char *s, const char *p)
{
    return strncmp(s, p, strlen(p)) == 0;
}

tfb_coll_kind tfb_coll_kind_parse(const char *name, size_t len)
{
    if (!name)
        return TFB_COLL_OTHER;
    char f[NAME_FOLD + 1];
    size_t n = 0;
    for (size_t i = 0; i < len && n < NAME_FOLD; i++) {
        unsigned char c = (unsigned char)name[i];
        if (isalnum(c))
            f[n++] = (char)tolower(c);
    }
    f[n] = '\0';
    const char *s = f;
    /* What names the caller, not the collective: "c10d::", "nccl:",
     * NCCL's kernel prefixes. */
    if (starts(s, "c10d"))
        s += 4;
    if (starts(s, "nccl"))
        s += 4;
    if (starts(s, "devkernel"))
        s += 9;
    else if (starts(s, "kernel"))
        s += 6;
    static const struct {
        const char *prefix;
        tfb_coll_kind kind;
    } P[] = {
        /* reducescatter before reduce */
        {"allreduce", TFB_COLL_ALL_REDUCE},
        {"allgather", TFB_COLL_ALL_GATHER},
        {"reducescatter", TFB_COLL_REDUCE_SCATTER},
        {"alltoall", TFB_COLL_ALL_TO_ALL},
        {"broadcast", TFB_COLL_BROADCAST},
        {"reduce", TFB_COLL_REDUCE},
        {"sendrecv", TFB_COLL_SEND_RECV},
        {"send", TFB_COLL_SEND_RECV},
        {"recv", TFB_COLL_SEND_RECV},
    };
    for (size_t i = 0; i < sizeof P / sizeof *P; i++)
        if (starts(s, P[i].prefix))
            return P[i].kind;
    return TFB_COLL_OTHER;
}

const char *tfb_coll_kind_name(tfb_coll_kind k)
{
    static const char *const N[TFB_COLL_KIND_COUNT] = {
        "all_reduce", "all_gather", "reduce_scatter", "broadcast",
        "reduce",     "all_to_all", "send_recv",      "other",
    };
    return (unsigned)k < TFB_COLL_KIND_COUNT ? N[k] : "other";
}

double tfb_coll_busbw_factor(tfb_coll_kind k, int n)
{
    if (n < 1)
        return NAN;
    double d = n;
    switch (k) {
    case TFB_COLL_ALL_REDUCE:
        return 2.0 * (d - 1.0) / d;
    case TFB_COLL_ALL_GATHER:
    case TFB_COLL_REDUCE_SCATTER:
    case TFB_COLL_ALL_TO_ALL:
        return (d - 1.0) / d;
    case TFB_COLL_BROADCAST:
    case TFB_COLL_REDUCE:
    case TFB_COLL_SEND_RECV:
        return 1.0;
    default:
        return NAN;
    }
}

uint64_t tfb_coll_bucket(uint64_t bytes)
{
    return bytes ? (uint64_t)1 << (63 - __builtin_clzll(bytes)) : 0;
}

/* ------------------------------------------------------------------------
 * Grouping: one accumulator per (kind, bucket)
 * ---------------------------------------------------------------------- */
#define NBUCKET 65 /* bucket 0, then 2^0 .. 2^63 */

typedef struct acc {
    uint64_t count, bytes;
    double seconds;
    double bus_bytes; /* sum of bytes x factor; NaN once a factor is */
    int unknown;      /* a collective of unknown size is in it */
} acc;

typedef struct grouping {
    acc a[TFB_COLL_KIND_COUNT][NBUCKET];
} grouping;

static int bucket_index(uint64_t lo)
{
    return lo ? 64 - __builtin_clzll(lo) : 0;
}

static void add(grouping *g, tfb_coll_kind k, uint64_t bucket_lo,
                uint64_t count, uint64_t bytes, double seconds, int n_ranks,
                int known)
{
    acc *a = &g->a[k][bucket_index(bucket_lo)];
    a->count += count;
    a->bytes += bytes;
    a->seconds += seconds;
    a->bus_bytes += (double)bytes * tfb_coll_busbw_factor(k, n_ranks);
    if (!known)
        a->unknown = 1;
}

static int emit(const grouping *g, int32_t rank, double link_gbps,
                const char *source, tfb_coll_row **rows, size_t *n)
{
    size_t m = 0;
    for (int k = 0; k < TFB_COLL_KIND_COUNT; k++)
        for (int b = 0; b < NBUCKET; b++)
            m += g->a[k][b].count > 0;
    *rows = NULL;
    *n = 0;
    if (!m)
        return 0;
    tfb_coll_row *v = calloc(m, sizeof *v);
    if (!v)
        return TFB_ENOMEM;
    size_t i = 0;
    for (int k = 0; k < TFB_COLL_KIND_COUNT; k++)
        for (int b = 0; b < NBUCKET; b++) {
            const acc *a = &g->a[k][b];
            if (!a->count)
                continue;
            tfb_coll_row *r = &v[i++];
            r->rank = rank;
            r->kind = (tfb_coll_kind)k;
            r->bucket_lo = b ? (uint64_t)1 << (b - 1) : 0;
            r->count = a->count;
            r->bytes = a->bytes;
            r->seconds = a->seconds;
            int ok = a->seconds > 0 && a->bytes > 0 && !a->unknown;
            r->algbw_gbps = ok ? (double)a->bytes / a->seconds / 1e9 : NAN;
            r->busbw_gbps = ok ? a->bus_bytes / a->seconds / 1e9 : NAN;
            r->link_gbps = link_gbps > 0 ? link_gbps : NAN;
            r->link_pct = r->busbw_gbps / r->link_gbps * 100.0;
            r->below = r->bucket_lo >= TFB_COLL_BELOW_MIN_BYTES &&
                       isfinite(r->link_pct) &&
                       r->link_pct < TFB_COLL_BELOW_PCT;
            snprintf(r->source, sizeof r->source, "%s", source);
        }
    *rows = v;
    *n = m;
    return 0;
}

/* The link's peak of a device name from the peak table; 0 unknown. */
static double link_of(const char *device)
{
    const tfb_gpu_peak *p = device && *device ? tfb_gpu_peak_find(device)
                                              : NULL;
    return p && p->link_gbps > 0 ? p->link_gbps : 0;
}

/* ------------------------------------------------------------------------
 * From a trace
 * ---------------------------------------------------------------------- */
int tfb_coll_trace_rows(const tfb_trace *t, int32_t rank, int32_t world_size,
                        double link_gbps, tfb_coll_row **rows, size_t *n)
{
    if (!t || !rows || !n)
        return TFB_EINVAL;
    size_t nc;
    const tfb_trace_collective *c = tfb_trace_collectives(t, &nc);
    grouping *g = calloc(1, sizeof *g);
    if (!g)
        return TFB_ENOMEM;
    if (world_size <= 0 && t->dist.present && t->dist.world_size > 0 &&
        t->dist.world_size <= INT32_MAX)
        world_size = (int32_t)t->dist.world_size;
    if (!(link_gbps > 0))
        for (size_t d = 0; d < t->ndevices && !(link_gbps > 0); d++)
            link_gbps = link_of(tfb_trace_str(t, t->devices[d].name, NULL));
    for (size_t i = 0; i < nc; i++) {
        const char *name = tfb_trace_str(t, c[i].name, NULL);
        tfb_coll_kind k =
            tfb_coll_kind_parse(name, name ? strlen(name) : 0);
        int nr = c[i].group_size > 0 ? c[i].group_size : world_size;
        add(g, k, tfb_coll_bucket(c[i].bytes), 1, c[i].bytes,
            (double)(c[i].end - c[i].start) * 1e-9, nr, c[i].bytes > 0);
    }
    int rc = emit(g, rank, link_gbps, "trace", rows, n);
    free(g);
    return rc;
}

/* ------------------------------------------------------------------------
 * From the collector's record
 * ---------------------------------------------------------------------- */

/* A decimal uint64 field ending at a tab or the line's end: 1 and past
 * it, else 0. */
static int field_u64(const char **p, const char *end, uint64_t *out)
{
    const char *s = *p;
    uint64_t v = 0;
    if (s >= end || !isdigit((unsigned char)*s))
        return 0;
    for (; s < end && isdigit((unsigned char)*s); s++) {
        if (v > (UINT64_MAX - 9) / 10)
            return 0;
        v = v * 10 + (uint64_t)(*s - '0');
    }
    if (s < end && *s != '\t')
        return 0;
    *out = v;
    *p = s < end ? s + 1 : s;
    return 1;
}

int tfb_coll_record_rows(const char *text, size_t len, int32_t rank,
                         int32_t n_ranks, double link_gbps,
                         tfb_coll_row **rows, size_t *n)
{
    if (!rows || !n || (!text && len))
        return TFB_EINVAL;
    grouping *g = calloc(1, sizeof *g);
    if (!g)
        return TFB_ENOMEM;
    const char *p = text, *end = text + len;
    int version_ok = 0;
    while (p && p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end;
        if (!version_ok) {
            /* The first line says the format; another version's lines
             * are not read as this one's. */
            version_ok = le - p == 9 && memcmp(p, "version=1", 9) == 0;
            if (!version_ok)
                break;
        } else {
            const char *tab = memchr(p, '\t', (size_t)(le - p));
            uint64_t lo, count, bytes, ns;
            const char *q = tab ? tab + 1 : le;
            if (tab && field_u64(&q, le, &lo) && field_u64(&q, le, &count) &&
                field_u64(&q, le, &bytes) && field_u64(&q, le, &ns) &&
                lo == tfb_coll_bucket(lo) && count > 0) {
                tfb_coll_kind k = tfb_coll_kind_parse(p, (size_t)(tab - p));
                add(g, k, lo, count, bytes, (double)ns * 1e-9, n_ranks, 1);
            }
        }
        p = nl ? nl + 1 : end;
    }
    int rc = emit(g, rank, link_gbps, "host", rows, n);
    free(g);
    return rc;
}

/* ------------------------------------------------------------------------
 * A run
 * ---------------------------------------------------------------------- */

/* The text of a record's rank-0 string tensor, malloc'd (NUL-terminated),
 * or NULL. */
static char *record_text(const tfb_plugin_record *rec, size_t *len)
{
    tfb_value v = {.size = sizeof v};
    v.kind = TFB_VALUE_TENSOR;
    v.tensor = rec->tensor;
    v.tensor_len = rec->tensor_len;
    tfb_strview s;
    if (tfb_value_string(&v, 0, &s) != 1)
        return NULL;
    char *o = malloc(s.len + 1);
    if (!o)
        return NULL;
    memcpy(o, s.ptr, s.len);
    o[s.len] = '\0';
    *len = s.len;
    return o;
}

/* The latest record of (plugin, tag) as text, malloc'd, or NULL. */
static char *run_record_text(tfb_run *r, const char *plugin, const char *tag,
                             size_t *len)
{
    tfb_plugin_record *recs;
    size_t n;
    if (tfb_run_records(r, plugin, &recs, &n) < 0)
        return NULL;
    char *o = NULL;
    for (size_t i = 0; i < n && !o; i++)
        if (!strcmp(recs[i].tag, tag))
            o = record_text(&recs[i], len);
    tfb_plugin_records_free(recs, n);
    return o;
}

/* The rank record's rank and world size (-1 / 0 when none). */
static void rank_of(tfb_run *r, int32_t *rank, int32_t *world)
{
    *rank = -1;
    *world = 0;
    tfb_plugin_record *recs;
    size_t n;
    if (tfb_run_records(r, TFB_RANK_PLUGIN, &recs, &n) < 0)
        return;
    for (size_t i = 0; i < n; i++) {
        tfb_value v = {.size = sizeof v};
        v.kind = TFB_VALUE_TENSOR;
        v.plugin_name.ptr = recs[i].plugin;
        v.plugin_name.len = strlen(recs[i].plugin);
        v.tensor = recs[i].tensor;
        v.tensor_len = recs[i].tensor_len;
        tfb_rank_info ri = {.size = sizeof ri};
        if (tfb_value_rank_info(&v, &ri) == 0) {
            *rank = ri.rank;
            *world = ri.world_size;
            break;
        }
    }
    tfb_plugin_records_free(recs, n);
}

/* The device name of the perf/work record (device=...), malloc'd, or
 * NULL. */
static char *perf_device(tfb_run *r)
{
    size_t len;
    char *text = run_record_text(r, "tfboard_perf", "perf/work", &len);
    if (!text)
        return NULL;
    char *o = NULL;
    for (char *p = text; p && *p && !o;) {
        char *nl = strchr(p, '\n');
        if (nl)
            *nl = '\0';
        if (starts(p, "device=") && p[7])
            o = strdup(p + 7);
        p = nl ? nl + 1 : NULL;
    }
    free(text);
    return o;
}

int tfb_coll_run_rows(tfb_run *r, double link_gbps, tfb_coll_row **rows,
                      size_t *n)
{
    if (!r || !rows || !n)
        return TFB_EINVAL;
    *rows = NULL;
    *n = 0;
    int32_t rank, world;
    rank_of(r, &rank, &world);
    tfb_trace *t = NULL;
    /* A failed load is a run without trace collectives: the host record
     * still answers. */
    (void)tfb_trace_of_run_err(tfb_run_store(r), r, &t, NULL, 0);
    size_t nc = 0;
    if (t)
        tfb_trace_collectives(t, &nc);
    int rc;
    if (nc) {
        if (rank < 0 && t->dist.present && t->dist.rank >= 0 &&
            t->dist.rank <= INT32_MAX)
            rank = (int32_t)t->dist.rank;
        double link = link_gbps;
        if (!(link > 0)) {
            /* The trace's device names first; else the collector's. */
            for (size_t d = 0; d < t->ndevices && !(link > 0); d++)
                link = link_of(tfb_trace_str(t, t->devices[d].name, NULL));
            if (!(link > 0)) {
                char *dev = perf_device(r);
                link = link_of(dev);
                free(dev);
            }
        }
        int32_t nr = t->dist.present && t->dist.world_size > 0 &&
                             t->dist.world_size <= INT32_MAX
                         ? (int32_t)t->dist.world_size
                         : world;
        rc = tfb_coll_trace_rows(t, rank, nr, link, rows, n);
        tfb_trace_release(t);
        return rc;
    }
    tfb_trace_release(t);
    size_t len = 0;
    char *text = run_record_text(r, TFB_COLL_RECORD_PLUGIN, TFB_COLL_RECORD_TAG,
                                 &len);
    if (!text)
        return 0;
    double link = link_gbps;
    if (!(link > 0)) {
        char *dev = perf_device(r);
        link = link_of(dev);
        free(dev);
    }
    rc = tfb_coll_record_rows(text, len, rank, world, link, rows, n);
    free(text);
    return rc;
}
