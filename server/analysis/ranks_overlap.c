/*
 * ranks_overlap.c - the GPU side of a rank: the NCCL kernel classifier,
 * HTA's temporal breakdown and communication/computation overlap, by one
 * sweep over the sorted start and end times of each class on each device.
 *
 * Counting active intervals per class (not a per-stream state) makes the
 * sweep correct for any number of overlapping streams: an instant is
 * "compute" while at least one compute interval is open, whatever else
 * runs. Starts and ends are sorted separately with a radix sort, so the
 * cost is a few linear passes per class (8 ranks x 1 M kernels in well
 * under a second).
 */
#include "analysis/ranks_analysis.h"
#include "analysis/ranks_internal.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tfboard.h"
#include "base/vec.h"

tfb_ranks_class tfb_ranks_classify_kernel(const char *name)
{
    if (!name)
        return TFB_RANKS_COMPUTE;
    for (const char *p = name; *p; p++) {
        if ((p[0] | 0x20) == 'n' && (p[1] | 0x20) == 'c' &&
            (p[2] | 0x20) == 'c' && (p[3] | 0x20) == 'l')
            return TFB_RANKS_COMM;
        /* p[1..3] may be the terminator: (0 | 0x20) is ' ', never a
         * letter, so the test stops there. */
    }
    return TFB_RANKS_COMPUTE;
}

#define NCLS 3

typedef struct device_acc {
    int64_t busy[NCLS]; /* exclusive: compute > comm > memory */
    int64_t comm_union, overlap;
} device_acc;

/* One device: s[c], e[c] sorted starts and ends of class c (n[c] each). */
static void sweep(int64_t *const s[NCLS], int64_t *const e[NCLS],
                  const size_t n[NCLS], device_acc *acc)
{
    size_t is[NCLS] = {0}, ie[NCLS] = {0};
    int64_t open[NCLS] = {0};
    int64_t prev = 0;
    int started = 0;
    for (;;) {
        int64_t t = INT64_MAX;
        int any = 0;
        for (int c = 0; c < NCLS; c++) {
            if (is[c] < n[c] && s[c][is[c]] < t) {
                t = s[c][is[c]];
                any = 1;
            }
            if (ie[c] < n[c] && e[c][ie[c]] < t) {
                t = e[c][ie[c]];
                any = 1;
            }
        }
        if (!any)
            break;
        if (started && t > prev) {
            int64_t dt = t - prev;
            if (open[TFB_RANKS_COMPUTE])
                acc->busy[TFB_RANKS_COMPUTE] += dt;
            else if (open[TFB_RANKS_COMM])
                acc->busy[TFB_RANKS_COMM] += dt;
            else if (open[TFB_RANKS_MEMORY])
                acc->busy[TFB_RANKS_MEMORY] += dt;
            if (open[TFB_RANKS_COMM]) {
                acc->comm_union += dt;
                if (open[TFB_RANKS_COMPUTE])
                    acc->overlap += dt;
            }
        }
        started = 1;
        prev = t;
        for (int c = 0; c < NCLS; c++) {
            while (is[c] < n[c] && s[c][is[c]] == t) {
                open[c]++;
                is[c]++;
            }
            while (ie[c] < n[c] && e[c][ie[c]] == t) {
                open[c]--;
                ie[c]++;
            }
        }
    }
}

static int valid(const tfb_ranks_interval *v)
{
    return v->end >= v->start && v->cls >= 0 && v->cls < NCLS;
}

int tfb_ranks_gpu_breakdown(const tfb_ranks_interval *iv, size_t n,
                            tfb_ranks_gpu *out, size_t *bad_out)
{
    if (!out || (!iv && n))
        return TFB_EINVAL;
    tfb_ranks_gpu g;
    memset(&g, 0, sizeof g);
    g.has_trace = 1;
    g.busy_pct = NAN;
    g.overlap = NAN;
    size_t bad = 0;
    /* Devices (few per rank) and the span. */
    TFB_VEC(int32_t) dv = {0};
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (size_t i = 0; i < n; i++) {
        if (!valid(&iv[i])) {
            bad++;
            continue;
        }
        lo = iv[i].start < lo ? iv[i].start : lo;
        hi = iv[i].end > hi ? iv[i].end : hi;
        size_t d = 0;
        while (d < dv.n && dv.v[d] != iv[i].device)
            d++;
        if (d == dv.n && tfb_vec_push(&dv, iv[i].device) < 0) {
            tfb_vec_free(&dv);
            return TFB_ENOMEM;
        }
    }
    g.n_intervals = n - bad;
    g.n_devices = (int)dv.n;
    if (g.n_intervals == 0) {
        tfb_vec_free(&dv);
        *out = g;
        if (bad_out)
            *bad_out = bad;
        return 0;
    }
    g.span_ns = hi - lo;
    int64_t *starts = malloc(g.n_intervals * sizeof *starts);
    int64_t *ends = malloc(g.n_intervals * sizeof *ends);
    int64_t *tmp = malloc(g.n_intervals * sizeof *tmp);
    if (!starts || !ends || !tmp) {
        free(starts);
        free(ends);
        free(tmp);
        tfb_vec_free(&dv);
        return TFB_ENOMEM;
    }
    for (size_t d = 0; d < dv.n; d++) {
        /* This device's intervals, grouped by class. */
        size_t cnt[NCLS] = {0};
        for (size_t i = 0; i < n; i++)
            if (valid(&iv[i]) && iv[i].device == dv.v[d])
                cnt[iv[i].cls]++;
        size_t off[NCLS], fill[NCLS];
        off[0] = 0;
        for (int c = 1; c < NCLS; c++)
            off[c] = off[c - 1] + cnt[c - 1];
        memcpy(fill, off, sizeof fill);
        for (size_t i = 0; i < n; i++) {
            if (!valid(&iv[i]) || iv[i].device != dv.v[d])
                continue;
            size_t k = fill[iv[i].cls]++;
            starts[k] = iv[i].start;
            ends[k] = iv[i].end;
        }
        int64_t *s[NCLS], *e[NCLS];
        for (int c = 0; c < NCLS; c++) {
            s[c] = starts + off[c];
            e[c] = ends + off[c];
            tfb_ranks_sort_i64(s[c], tmp, cnt[c]);
            tfb_ranks_sort_i64(e[c], tmp, cnt[c]);
        }
        device_acc acc;
        memset(&acc, 0, sizeof acc);
        sweep(s, e, cnt, &acc);
        g.compute_ns += acc.busy[TFB_RANKS_COMPUTE];
        g.comm_ns += acc.busy[TFB_RANKS_COMM];
        g.memory_ns += acc.busy[TFB_RANKS_MEMORY];
        g.idle_ns += g.span_ns - acc.busy[0] - acc.busy[1] - acc.busy[2];
        g.comm_union_ns += acc.comm_union;
        g.overlap_ns += acc.overlap;
    }
    free(starts);
    free(ends);
    free(tmp);
    size_t ndev = dv.n;
    tfb_vec_free(&dv);
    int64_t total = g.span_ns * (int64_t)ndev;
    if (total > 0)
        g.busy_pct = 100.0 * (1.0 - (double)g.idle_ns / (double)total);
    if (g.comm_union_ns > 0)
        g.overlap = (double)g.overlap_ns / (double)g.comm_union_ns;
    *out = g;
    if (bad_out)
        *bad_out = bad;
    return 0;
}
