/*
 * perf_work.c - perf/... scalars, energy per step, and the perf/work and
 * comm/collectives records, for the pipeline's helper thread
 * (perf_work.h).
 */
#include "collector/perf_work.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/gpu_peaks.h"
#include "collector/gpu_metrics_internal.h"
#include "collector/writer_internal.h"

/* Size buckets of the comm table: 0 bytes, then [2^k, 2^(k+1)) for k =
 * 0..63. */
#define COMM_BUCKETS 65
#define DEVICE_NAME_MAX 96 /* NVML_DEVICE_NAME_V2_BUFFER_SIZE */

enum { AMT_FLOPS, AMT_SAMPLES, AMT_TOKENS, AMT_COUNT };
enum amt_state { AMT_NONE = 0, AMT_CONST, AMT_VARIES };

typedef struct comm_cell {
    uint64_t count, bytes;
    int64_t ns;
} comm_cell;

struct tfb_perf {
    tfb_writer *w;
    tfb_work_opts o;

    /* perf/work */
    int have_work; /* a step with work was seen */
    struct {
        enum amt_state state;
        double v;
    } amt[AMT_COUNT];
    char device[DEVICE_NAME_MAX];
    int nvml_device; /* device is NVML's (it wins over opts.device) */
    double peak;           /* 0 = unknown */
    const char *peak_source; /* "opts", "table", "unknown" */
    int work_changed, work_written;
    int64_t work_last_ns;

    /* comm/collectives */
    comm_cell *cells; /* [TFB_COMM_NAMES_MAX][COMM_BUCKETS], on first use */
    const char *names[TFB_COMM_NAMES_MAX];
    int comm_changed;
    int64_t comm_last_ns;
};

tfb_perf *tfb_perf_create(tfb_writer *w)
{
    tfb_perf *pf = calloc(1, sizeof *pf);
    if (!pf)
        return NULL;
    pf->w = w;
    tfb_writer_work_opts(w, &pf->o);
    pf->peak_source = "unknown";
    pf->work_last_ns = pf->comm_last_ns = tfb_mono_now_ns();
    return pf;
}

void tfb_perf_free(tfb_perf *pf)
{
    if (!pf)
        return;
    free(pf->cells);
    free(pf);
}

uint64_t tfb_perf_bucket_lo(uint64_t bytes)
{
    if (bytes == 0)
        return 0;
    return (uint64_t)1 << (63 - __builtin_clzll(bytes));
}

static unsigned bucket_index(uint64_t bytes)
{
    return bytes == 0 ? 0 : (unsigned)(64 - __builtin_clzll(bytes));
}

/* The peak in use: opts, else the table's entry for the device and dtype;
 * 0 = unknown (never a guess). Notes a change for the record. */
static void resolve_peak(tfb_perf *pf)
{
    double peak = 0;
    const char *src = "unknown";
    if (!pf->nvml_device) {
        char nv[DEVICE_NAME_MAX];
        if (tfb_gpu_metrics_device_name(pf->w, nv, sizeof nv)) {
            snprintf(pf->device, sizeof pf->device, "%s", nv);
            pf->nvml_device = 1;
        } else if (!pf->device[0] && pf->o.device && pf->o.device[0]) {
            snprintf(pf->device, sizeof pf->device, "%s", pf->o.device);
        }
    }
    if (pf->o.peak_tflops > 0) {
        peak = pf->o.peak_tflops;
        src = "opts";
    } else if (pf->o.dtype >= 0 && pf->device[0]) {
        const tfb_gpu_peak *e = tfb_gpu_peak_find(pf->device);
        if (e && e->tflops[pf->o.dtype] > 0) {
            peak = e->tflops[pf->o.dtype];
            src = "table";
        }
    }
    if (peak != pf->peak || strcmp(src, pf->peak_source) != 0)
        pf->work_changed = 1;
    pf->peak = peak;
    pf->peak_source = src;
}

static void note_amount(tfb_perf *pf, int k, double v)
{
    if (pf->amt[k].state == AMT_NONE) {
        pf->amt[k].state = AMT_CONST;
        pf->amt[k].v = v;
        pf->work_changed = 1;
    } else if (pf->amt[k].state == AMT_CONST && pf->amt[k].v != v) {
        pf->amt[k].state = AMT_VARIES;
        pf->work_changed = 1;
    }
}

void tfb_perf_step_done(tfb_perf *pf, const tfb_perf_step *s)
{
    tfb_writer *w = pf->w;
    double t = s->step_s;
    int work = s->flops > 0 || s->samples > 0 || s->tokens > 0;
    if (work)
        resolve_peak(pf);
    if (work && t > 0) {
        if (s->samples > 0)
            tfb_scalar_at(w, TFB_TAG_PERF_SAMPLES_PER_S, s->samples / t,
                          s->step, s->wall);
        if (s->tokens > 0)
            tfb_scalar_at(w, TFB_TAG_PERF_TOKENS_PER_S, s->tokens / t,
                          s->step, s->wall);
        if (s->flops > 0) {
            double tflops = s->flops / t / 1e12;
            tfb_scalar_at(w, TFB_TAG_PERF_TFLOPS, tflops, s->step, s->wall);
            if (pf->peak > 0)
                tfb_scalar_at(w, TFB_TAG_PERF_MFU, tflops / pf->peak * 100,
                              s->step, s->wall);
        }
    }
    if (work) {
        pf->have_work = 1;
        note_amount(pf, AMT_FLOPS, s->flops);
        note_amount(pf, AMT_SAMPLES, s->samples);
        note_amount(pf, AMT_TOKENS, s->tokens);
    }
    double joules = 0;
    if (s->energy &&
        tfb_gpu_metrics_step_energy(w, s->step, s->wall, t, &joules) > 0) {
        tfb_scalar_at(w, TFB_TAG_PERF_ENERGY_J, joules, s->step, s->wall);
        if (s->samples > 0)
            tfb_scalar_at(w, TFB_TAG_PERF_J_PER_SAMPLE, joules / s->samples,
                          s->step, s->wall);
        if (s->tokens > 0)
            tfb_scalar_at(w, TFB_TAG_PERF_J_PER_TOKEN, joules / s->tokens,
                          s->step, s->wall);
    }
}

void tfb_perf_comm(tfb_perf *pf, unsigned name_id, const char *name,
                   uint64_t bytes, int64_t ns)
{
    if (name_id >= TFB_COMM_NAMES_MAX)
        return;
    if (!pf->cells) {
        pf->cells = calloc((size_t)TFB_COMM_NAMES_MAX * COMM_BUCKETS,
                           sizeof *pf->cells);
        if (!pf->cells)
            return; /* the table is a report: it is left out, never the
                       training */
    }
    pf->names[name_id] = name;
    comm_cell *c = &pf->cells[name_id * COMM_BUCKETS + bucket_index(bytes)];
    c->count++;
    c->bytes += bytes;
    c->ns += ns > 0 ? ns : 0;
    pf->comm_changed = 1;
}

static void put_amount(tfb_buf *b, const char *key, enum amt_state st,
                       double v)
{
    char line[96];
    if (st == AMT_VARIES)
        snprintf(line, sizeof line, "%s=varies\n", key);
    else
        snprintf(line, sizeof line, "%s=%.17g\n", key,
                 st == AMT_CONST ? v : 0.0);
    tfb_buf_puts(b, line);
}

static void write_work(tfb_perf *pf)
{
    tfb_buf b = {0};
    char line[160];
    tfb_buf_puts(&b, "version=1\n");
    put_amount(&b, "flops_per_step", pf->amt[AMT_FLOPS].state,
               pf->amt[AMT_FLOPS].v);
    put_amount(&b, "samples_per_step", pf->amt[AMT_SAMPLES].state,
               pf->amt[AMT_SAMPLES].v);
    put_amount(&b, "tokens_per_step", pf->amt[AMT_TOKENS].state,
               pf->amt[AMT_TOKENS].v);
    snprintf(line, sizeof line, "dtype=%s\n",
             pf->o.dtype >= 0 ? tfb_peak_dtype_name((tfb_peak_dtype)pf->o.dtype)
                              : "unknown");
    tfb_buf_puts(&b, line);
    if (pf->peak > 0)
        snprintf(line, sizeof line, "peak_tflops=%.17g\n", pf->peak);
    else
        snprintf(line, sizeof line, "peak_tflops=unknown\n");
    tfb_buf_puts(&b, line);
    snprintf(line, sizeof line, "peak_source=%s\n", pf->peak_source);
    tfb_buf_puts(&b, line);
    /* One line per key: a name's control bytes (never in NVML's) become
     * blanks. */
    char dev[DEVICE_NAME_MAX];
    snprintf(dev, sizeof dev, "%s", pf->device);
    for (char *c = dev; *c; c++)
        if ((unsigned char)*c < 0x20)
            *c = ' ';
    snprintf(line, sizeof line, "device=%s\n", dev);
    tfb_buf_puts(&b, line);
    if (!b.failed)
        tfb_writer_plugin_text(pf->w, TFB_PERF_PLUGIN, TFB_PERF_WORK_TAG, b.v,
                               b.n, tfb_now_wall());
    tfb_buf_free(&b);
}

static void write_comm(tfb_perf *pf)
{
    tfb_buf b = {0};
    char line[TFB_COMM_NAME_MAX + 96];
    tfb_buf_puts(&b, "version=1\n");
    for (unsigned id = 0; id < TFB_COMM_NAMES_MAX; id++) {
        for (unsigned k = 0; k < COMM_BUCKETS; k++) {
            const comm_cell *c = &pf->cells[id * COMM_BUCKETS + k];
            if (!c->count)
                continue;
            uint64_t lo = k == 0 ? 0 : (uint64_t)1 << (k - 1);
            snprintf(line, sizeof line, "%s\t%llu\t%llu\t%llu\t%lld\n",
                     pf->names[id] ? pf->names[id] : "other",
                     (unsigned long long)lo, (unsigned long long)c->count,
                     (unsigned long long)c->bytes, (long long)c->ns);
            tfb_buf_puts(&b, line);
        }
    }
    if (!b.failed)
        tfb_writer_plugin_text(pf->w, TFB_COMM_PLUGIN,
                               TFB_COMM_COLLECTIVES_TAG, b.v, b.n,
                               tfb_now_wall());
    tfb_buf_free(&b);
}

void tfb_perf_records(tfb_perf *pf, int force)
{
    int64_t now = tfb_mono_now_ns();
    if (pf->have_work && pf->work_changed &&
        (force || !pf->work_written ||
         now - pf->work_last_ns >= (int64_t)TFB_PERF_RECORD_PERIOD_MS * 1000000)) {
        write_work(pf);
        pf->work_changed = 0;
        pf->work_written = 1;
        pf->work_last_ns = now;
    }
    if (pf->cells && pf->comm_changed &&
        (force ||
         now - pf->comm_last_ns >= (int64_t)TFB_COMM_RECORD_PERIOD_MS * 1000000)) {
        write_comm(pf);
        pf->comm_changed = 0;
        pf->comm_last_ns = now;
    }
}
