/*
 * efficiency.c - throughput, MFU, goodput and energy of one run (the
 * rules and the definitions are in efficiency.h).
 */
#include "analysis/efficiency.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/hparams_analysis.h"
#include "base/str.h"
#include "base/vec.h"
#include "tfboard.h"
#include "trace/trace.h"

/* ---- formulas -------------------------------------------------------------- */

double tfb_eff_mfu_pct(double achieved_tflops, double peak_tflops)
{
    if (!(peak_tflops > 0) || !isfinite(peak_tflops) ||
        !isfinite(achieved_tflops))
        return NAN;
    return achieved_tflops / peak_tflops * 100.0;
}

double tfb_eff_flops_6nt(double params, double tokens)
{
    /* A decoder's training step: 2 N T FLOPs forward, 4 N T backward
     * (Kaplan et al. 2020, "Scaling Laws", section 2.1). */
    return 6.0 * params * tokens;
}

double tfb_eff_wh(double joules)
{
    return joules / 3600.0;
}

double tfb_eff_gco2(double joules, double gco2_per_kwh)
{
    if (!(gco2_per_kwh > 0) || !isfinite(gco2_per_kwh) || !isfinite(joules))
        return NAN;
    return joules / 3.6e6 * gco2_per_kwh;
}

/* s (len bytes) lower-cased into buf (cap > 0), NUL-ended; 0 when it does
 * not fit (no dtype name is that long). */
static int lower_copy(const char *s, size_t len, char *buf, size_t cap)
{
    if (len >= cap)
        return 0;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        buf[i] = c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
        if (!c)
            return 0;
    }
    buf[len] = 0;
    return 1;
}

int tfb_eff_dtype_guess(const char *s, size_t len, tfb_peak_dtype *out)
{
    char b[64];
    if (!s || !lower_copy(s, len, b, sizeof b))
        return TFB_EINVAL;
    if (tfb_peak_dtype_parse(b, out) == 0)
        return 0;
    /* Frameworks' spellings: Lightning's "bf16-mixed" / "16-mixed",
     * Composer's "amp_bf16", "torch.float8_e4m3fn", "float8"... bf16 is
     * tried before fp16 ("bfloat16" holds "float16"). */
    if (strstr(b, "bf16") || strstr(b, "bfloat16"))
        *out = TFB_PEAK_BF16;
    else if (strstr(b, "fp8") || strstr(b, "float8") || strstr(b, "e4m3") ||
             strstr(b, "e5m2"))
        *out = TFB_PEAK_FP8;
    else if (strstr(b, "tf32"))
        *out = TFB_PEAK_TF32;
    else if (strstr(b, "fp16") || strstr(b, "float16") ||
             strstr(b, "half") || strcmp(b, "16") == 0 ||
             strncmp(b, "16-", 3) == 0 || strstr(b, "amp_fp16"))
        *out = TFB_PEAK_FP16;
    else
        return TFB_EINVAL;
    return 0;
}

/* 1 when s names full fp32 ("fp32", "float32", "32-true", "32"): no
 * tensor-core peak in the table, so the peak is unknown. */
static int is_fp32(const char *s, size_t len)
{
    char b[64];
    if (!lower_copy(s, len, b, sizeof b))
        return 0;
    return strcmp(b, "fp32") == 0 || strcmp(b, "float32") == 0 ||
           strcmp(b, "torch.float32") == 0 || strcmp(b, "32") == 0 ||
           strcmp(b, "32-true") == 0 || strcmp(b, "float") == 0;
}

/* ---- reading the run ------------------------------------------------------- */

static int usable(double v)
{
    return isfinite(v) && v >= 0.0;
}

/* A scalar series by step (store.h: the last value of each step). */
static int by_step(tfb_run *r, const char *tag, tfb_step_value **v, size_t *n)
{
    return tfb_series_by_step(tfb_run_find_series(r, TFB_SERIES_SCALAR, tag),
                              v, n);
}

/* The value at step in v (sorted by step), or NaN. */
static double at_step(const tfb_step_value *v, size_t n, int64_t step)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (v[mid].step < step)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && v[lo].step == step ? v[lo].v : NAN;
}

static double point(const tfb_series_view *v, size_t i)
{
    return v->value64 ? v->value64[i] : (double)v->value[i];
}

/* Copies text into dst (cap bytes, NUL-ended), cut at a UTF-8 boundary. */
static void copy_text(char *dst, size_t cap, const char *s, size_t len)
{
    if (len >= cap) {
        len = cap - 1;
        while (len > 0 && ((unsigned char)s[len] & 0xC0) == 0x80)
            len--;
    }
    memcpy(dst, s, len);
    dst[len] = 0;
}

/* The perf/work record, parsed (tfboard.h's data contract). */
typedef struct perf_work {
    int has;
    double flops_per_step, samples_per_step, tokens_per_step; /* NaN: not a number */
    char dtype[16];
    double peak_tflops;            /* NaN unknown */
    char peak_source[16];
    char device[128];
} perf_work;

static double parse_num(const char *s, size_t len)
{
    char b[64];
    if (len == 0 || len >= sizeof b)
        return NAN;
    memcpy(b, s, len);
    b[len] = 0;
    char *end;
    double v = strtod(b, &end);
    return *end == 0 && usable(v) ? v : NAN;
}

static void parse_work(const char *s, size_t len, perf_work *w)
{
    const char *p = s, *end = s + len;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end;
        const char *eq = memchr(p, '=', (size_t)(le - p));
        if (eq) {
            size_t kl = (size_t)(eq - p), vl = (size_t)(le - eq - 1);
            const char *v = eq + 1;
#define KEY(k) (kl == sizeof(k) - 1 && memcmp(p, k, kl) == 0)
            if (KEY("flops_per_step"))
                w->flops_per_step = parse_num(v, vl);
            else if (KEY("samples_per_step"))
                w->samples_per_step = parse_num(v, vl);
            else if (KEY("tokens_per_step"))
                w->tokens_per_step = parse_num(v, vl);
            else if (KEY("peak_tflops"))
                w->peak_tflops = parse_num(v, vl);
            else if (KEY("dtype"))
                copy_text(w->dtype, sizeof w->dtype, v, vl);
            else if (KEY("peak_source"))
                copy_text(w->peak_source, sizeof w->peak_source, v, vl);
            else if (KEY("device"))
                copy_text(w->device, sizeof w->device, v, vl);
#undef KEY
        }
        p = le + 1;
    }
}

static int read_work(tfb_run *r, perf_work *w)
{
    memset(w, 0, sizeof *w);
    w->flops_per_step = w->samples_per_step = w->tokens_per_step = NAN;
    w->peak_tflops = NAN;
    tfb_plugin_record *recs;
    size_t n;
    int rc = tfb_run_records(r, TFB_EFF_PERF_PLUGIN, &recs, &n);
    if (rc < 0)
        return rc;
    for (size_t i = 0; i < n; i++) {
        if (strcmp(recs[i].tag, TFB_EFF_PERF_TAG) != 0)
            continue;
        tfb_value v = {.size = sizeof v};
        v.kind = TFB_VALUE_TENSOR;
        v.tensor = recs[i].tensor;
        v.tensor_len = recs[i].tensor_len;
        tfb_strview sv;
        if (tfb_value_string(&v, 0, &sv) != 1)
            continue;
        w->has = 1;
        parse_work(sv.ptr, sv.len, w);
    }
    tfb_plugin_records_free(recs, n);
    return 0;
}

/* "gpu/<dev>/<metric>": 1 when tag is one, for metric. */
static int gpu_tag(const char *tag, const char *metric)
{
    size_t pl = strlen(TFB_TAG_GPU_PREFIX), tl = strlen(tag),
           ml = strlen(metric);
    if (tl < pl + 2 + ml || memcmp(tag, TFB_TAG_GPU_PREFIX, pl) != 0)
        return 0;
    const char *suf = tag + tl - ml - 1;
    if (*suf != '/' || strcmp(suf + 1, metric) != 0)
        return 0;
    /* <dev> is one path component */
    return memchr(tag + pl, '/', (size_t)(suf - tag - pl)) == NULL;
}

/* The last text of series s into dst; 0 when none. */
static int last_text(tfb_series *s, char *dst, size_t cap)
{
    tfb_series_view v;
    tfb_series_read_begin(s, &v);
    int ok = 0;
    if (v.kind == TFB_SERIES_TEXT && v.count > 0) {
        size_t i = v.count - 1;
        const char *t = v.text_data + v.text_off[i];
        size_t len = v.text_len[i];
        const char *nul = memchr(t, 0, len);
        copy_text(dst, cap, t, nul ? (size_t)(nul - t) : len);
        ok = dst[0] != 0;
    }
    tfb_series_read_end(s);
    return ok;
}

/* What the texts gpu/<dev>/name and gpu/<dev>/energy_source say. */
static int read_gpu_texts(tfb_run *r, char *device, size_t dcap,
                          char *source, size_t scap)
{
    tfb_series **ss;
    size_t n;
    int rc = tfb_run_series(r, TFB_SERIES_TEXT, &ss, &n);
    if (rc < 0)
        return rc;
    int counter = 0, pxt = 0;
    size_t seen = 0;
    for (size_t i = 0; i < n && seen < 2 * TFB_EFF_MAX_DEVICES; i++) {
        const char *tag = tfb_series_tag(ss[i]);
        if (strncmp(tag, TFB_TAG_GPU_PREFIX, strlen(TFB_TAG_GPU_PREFIX)))
            continue;
        seen++;
        if (!device[0] && gpu_tag(tag, "name")) {
            last_text(ss[i], device, dcap);
        } else if (gpu_tag(tag, "energy_source")) {
            char b[32];
            if (last_text(ss[i], b, sizeof b)) {
                counter |= strcmp(b, "counter") == 0;
                pxt |= strcmp(b, "power_x_time") == 0;
            }
        }
    }
    free(ss);
    snprintf(source, scap, "%s",
             pxt ? "power_x_time" : counter ? "counter" : "");
    return 0;
}

/* Energy: the sum of every gpu/<dev>/energy_j point, else perf/energy_j;
 * NaN when neither holds a usable point. */
static int read_energy(tfb_run *r, double *out)
{
    *out = NAN;
    tfb_series **ss;
    size_t n;
    int rc = tfb_run_series(r, TFB_SERIES_SCALAR, &ss, &n);
    if (rc < 0)
        return rc;
    double sum = 0;
    size_t points = 0, devices = 0;
    for (size_t i = 0; i < n && devices < TFB_EFF_MAX_DEVICES; i++) {
        if (!gpu_tag(tfb_series_tag(ss[i]), "energy_j"))
            continue;
        devices++;
        tfb_series_view v;
        tfb_series_read_begin(ss[i], &v);
        for (size_t k = 0; k < v.count; k++) {
            double x = point(&v, k);
            if (usable(x)) {
                sum += x;
                points++;
            }
        }
        tfb_series_read_end(ss[i]);
    }
    free(ss);
    if (points == 0) {
        tfb_series *s = tfb_run_find_series(r, TFB_SERIES_SCALAR,
                                            TFB_EFF_TAG_ENERGY_J);
        if (s) {
            tfb_series_view v;
            tfb_series_read_begin(s, &v);
            for (size_t k = 0; k < v.count; k++) {
                double x = point(&v, k);
                if (usable(x)) {
                    sum += x;
                    points++;
                }
            }
            tfb_series_read_end(s);
        }
    }
    if (points > 0)
        *out = sum;
    return 0;
}

/* The first hparam of names[] that is a usable positive number. */
static double hp_number(const tfb_hparams_set *h, const char *const *names)
{
    for (size_t i = 0; names[i]; i++) {
        const tfb_hparam_value *v = tfb_hparams_find(h, names[i]);
        if (v && v->kind == TFB_HPV_NUMBER && usable(v->number) &&
            v->number > 0)
            return v->number;
        if (v && v->kind == TFB_HPV_STRING) {
            double x = parse_num(v->str, v->len);
            if (x > 0)
                return x;
        }
    }
    return NAN;
}

static const tfb_hparam_value *hp_string(const tfb_hparams_set *h,
                                         const char *const *names)
{
    for (size_t i = 0; names[i]; i++) {
        const tfb_hparam_value *v = tfb_hparams_find(h, names[i]);
        if (v && v->kind == TFB_HPV_STRING && v->len > 0)
            return v;
    }
    return NULL;
}

/* Everything the formulas need, gathered once. */
typedef struct eff_inputs {
    perf_work work;
    tfb_hparams_set hp;
    double params, hp_tokens;      /* from hparams; NaN absent */
    tfb_step_value *step_ms, *tflops, *mfu;
    size_t n_step, n_tflops, n_mfu;
    int flops_estimated;
    /* resolved */
    double peak;                   /* NaN unknown */
    char peak_source[16], device[128], dtype[16];
    int dtype_assumed;
} eff_inputs;

static void inputs_free(eff_inputs *in)
{
    tfb_hparams_set_free(&in->hp);
    free(in->step_ms);
    free(in->tflops);
    free(in->mfu);
}

static const char *const HP_PARAMS[] = {
    "n_params", "num_parameters", "num_params", "params", "model_params",
    "n_parameters", "parameters", "model_parameters", "param_count", NULL};
static const char *const HP_TOKENS[] = {"tokens_per_step", "tokens_per_batch",
                                        "tokens_per_iter", NULL};
static const char *const HP_BATCH[] = {"batch_size", "global_batch_size",
                                       "train_batch_size", NULL};
static const char *const HP_SEQ[] = {"seq_len", "context_length",
                                     "sequence_length", "max_seq_len",
                                     "block_size", "seq_length", NULL};
static const char *const HP_DTYPE[] = {"dtype", "precision",
                                       "mixed_precision", "torch_dtype",
                                       "amp_dtype", NULL};
static const char *const HP_DEVICE[] = {"gpu/device", "gpu", "device",
                                        "gpu_name", "device_name", NULL};

/* The dtype: perf/work's, else hparams', else bf16 assumed. */
static void resolve_dtype(eff_inputs *in, tfb_peak_dtype *dt, int *known)
{
    *known = 1;
    const char *w = in->work.dtype;
    if (w[0] && tfb_eff_dtype_guess(w, strlen(w), dt) == 0)
        goto named;
    const tfb_hparam_value *v = hp_string(&in->hp, HP_DTYPE);
    if (v && tfb_eff_dtype_guess(v->str, v->len, dt) == 0)
        goto named;
    if (v && is_fp32(v->str, v->len)) {
        *known = 0; /* fp32: no tensor-core peak */
        snprintf(in->dtype, sizeof in->dtype, "fp32");
        return;
    }
    /* HF TrainingArguments' flags: bf16 = true, fp16 = true, tf32 = true. */
    static const struct { const char *name; tfb_peak_dtype d; } FLAGS[] = {
        {"bf16", TFB_PEAK_BF16}, {"fp16", TFB_PEAK_FP16},
        {"fp8", TFB_PEAK_FP8}, {"tf32", TFB_PEAK_TF32}};
    for (size_t i = 0; i < sizeof FLAGS / sizeof FLAGS[0]; i++) {
        const tfb_hparam_value *f = tfb_hparams_find(&in->hp, FLAGS[i].name);
        if (f && ((f->kind == TFB_HPV_BOOL && f->boolean) ||
                  (f->kind == TFB_HPV_NUMBER && f->number == 1))) {
            *dt = FLAGS[i].d;
            goto named;
        }
    }
    *dt = TFB_PEAK_BF16;
    in->dtype_assumed = 1;
named:
    snprintf(in->dtype, sizeof in->dtype, "%s", tfb_peak_dtype_name(*dt));
}

/* The peak (efficiency.h: flag, perf/work, table by device and dtype). */
static void resolve_peak(eff_inputs *in, const tfb_eff_opts *o, tfb_run *r,
                         const char *trace_device, char *energy_source,
                         size_t scap, int *rc)
{
    in->peak = NAN;
    snprintf(in->peak_source, sizeof in->peak_source, "unknown");
    /* The device: perf/work, else gpu/<dev>/name, else hparams. */
    snprintf(in->device, sizeof in->device, "%s", in->work.device);
    *rc = read_gpu_texts(r, in->device, sizeof in->device, energy_source,
                         scap);
    if (*rc < 0)
        return;
    if (!in->device[0] && trace_device)
        copy_text(in->device, sizeof in->device, trace_device,
                  strlen(trace_device));
    if (!in->device[0]) {
        const tfb_hparam_value *v = hp_string(&in->hp, HP_DEVICE);
        if (v)
            copy_text(in->device, sizeof in->device, v->str,
                      strnlen(v->str, v->len));
    }
    tfb_peak_dtype dt;
    int known;
    resolve_dtype(in, &dt, &known);
    if (o && o->peak_tflops > 0 && isfinite(o->peak_tflops)) {
        in->peak = o->peak_tflops;
        snprintf(in->peak_source, sizeof in->peak_source, "flag");
        return;
    }
    if (usable(in->work.peak_tflops) && in->work.peak_tflops > 0) {
        in->peak = in->work.peak_tflops;
        const char *ps = in->work.peak_source;
        snprintf(in->peak_source, sizeof in->peak_source, "%s",
                 strcmp(ps, "table") == 0 ? "table" : "opts");
        return;
    }
    if (!known || !in->device[0])
        return;
    const tfb_gpu_peak *g = tfb_gpu_peak_find(in->device);
    if (g && g->tflops[dt] > 0) {
        in->peak = g->tflops[dt];
        snprintf(in->peak_source, sizeof in->peak_source, "table");
    }
}

/* FLOPs per step when perf/tflops is absent: perf/work's flops_per_step,
 * else 6 N T from hparams (flops_estimated set); 0 when neither. */
static double flops_per_step(eff_inputs *in)
{
    if (usable(in->work.flops_per_step) && in->work.flops_per_step > 0)
        return in->work.flops_per_step;
    if (isfinite(in->params) && isfinite(in->hp_tokens)) {
        in->flops_estimated = 1;
        return tfb_eff_flops_6nt(in->params, in->hp_tokens);
    }
    return 0;
}

static int gather(tfb_run *r, const tfb_eff_opts *o,
                  const char *trace_device, eff_inputs *in,
                  char *energy_source, size_t scap)
{
    memset(in, 0, sizeof *in);
    int rc = read_work(r, &in->work);
    if (rc == 0)
        rc = tfb_run_hparams(NULL, r, &in->hp);
    if (rc < 0)
        return rc;
    in->params = hp_number(&in->hp, HP_PARAMS);
    in->hp_tokens = hp_number(&in->hp, HP_TOKENS);
    if (!isfinite(in->hp_tokens)) {
        double b = hp_number(&in->hp, HP_BATCH), s = hp_number(&in->hp, HP_SEQ);
        in->hp_tokens = b * s; /* NaN when either is absent */
    }
    if ((rc = by_step(r, TFB_TAG_STEP_MS, &in->step_ms, &in->n_step)) < 0 ||
        (rc = by_step(r, TFB_EFF_TAG_TFLOPS, &in->tflops, &in->n_tflops)) <
            0 ||
        (rc = by_step(r, TFB_EFF_TAG_MFU, &in->mfu, &in->n_mfu)) < 0)
        return rc;
    resolve_peak(in, o, r, trace_device, energy_source, scap, &rc);
    return rc;
}

static double step_seconds(double ms)
{
    return usable(ms) && ms > 0 && ms <= TFB_EFF_MAX_STEP_MS ? ms / 1000.0
                                                             : NAN;
}

/* Per-step achieved TFLOP/s into out (a value a step, ordered by step):
 * perf/tflops, else flops per step / step time. */
static int tflops_series(eff_inputs *in, tfb_step_value **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    TFB_VEC(tfb_step_value) v = {0};
    if (in->n_tflops > 0) {
        for (size_t i = 0; i < in->n_tflops; i++)
            if (usable(in->tflops[i].v) && tfb_vec_push(&v, in->tflops[i]) < 0)
                goto oom;
    } else {
        double f = flops_per_step(in);
        for (size_t i = 0; f > 0 && i < in->n_step; i++) {
            double s = step_seconds(in->step_ms[i].v);
            if (!isfinite(s))
                continue;
            tfb_step_value x = in->step_ms[i];
            x.v = f / s / 1e12;
            if (tfb_vec_push(&v, x) < 0)
                goto oom;
        }
    }
    *out = v.v;
    *n = v.n;
    return 0;
oom:
    tfb_vec_free(&v);
    return TFB_ENOMEM;
}

/* Per-step MFU %: perf/mfu as logged, unless the flag sets the peak and
 * the achieved TFLOP/s are known (then achieved / flag); else achieved /
 * peak. n = 0 when neither is known. */
static int mfu_series(eff_inputs *in, const tfb_eff_opts *o,
                      tfb_step_value **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    int flag = o && o->peak_tflops > 0 && isfinite(o->peak_tflops);
    tfb_step_value *t = NULL;
    size_t nt = 0;
    if ((flag || in->n_mfu == 0) && isfinite(in->peak)) {
        if (tflops_series(in, &t, &nt) < 0)
            return TFB_ENOMEM;
        if (nt > 0) {
            for (size_t i = 0; i < nt; i++)
                t[i].v = tfb_eff_mfu_pct(t[i].v, in->peak);
            *out = t;
            *n = nt;
            return 0;
        }
        free(t);
    }
    TFB_VEC(tfb_step_value) v = {0};
    for (size_t i = 0; i < in->n_mfu; i++)
        if (usable(in->mfu[i].v) && tfb_vec_push(&v, in->mfu[i]) < 0) {
            tfb_vec_free(&v);
            return TFB_ENOMEM;
        }
    *out = v.v;
    *n = v.n;
    return 0;
}

int tfb_eff_mfu_series(tfb_run *r, const tfb_eff_opts *o, tfb_step_value **out,
                       size_t *n)
{
    *out = NULL;
    *n = 0;
    eff_inputs in;
    char src[16];
    int rc = gather(r, o, NULL, &in, src, sizeof src);
    if (rc == 0)
        rc = mfu_series(&in, o, out, n);
    inputs_free(&in);
    return rc;
}

static double mean_of(const tfb_step_value *v, size_t n)
{
    double s = 0;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (usable(v[i].v)) {
            s += v[i].v;
            k++;
        }
    return k ? s / (double)k : NAN;
}

/* Mean of a per-step rate series (NaN absent) and the work it did over the
 * steps with a step time: sum of rate x step seconds (NaN when none). */
static int rate_of(tfb_run *r, const char *tag, const eff_inputs *in,
                   double *mean, double *total)
{
    tfb_step_value *v;
    size_t n;
    int rc = by_step(r, tag, &v, &n);
    if (rc < 0)
        return rc;
    *mean = mean_of(v, n);
    double sum = 0;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        double s = step_seconds(at_step(in->step_ms, in->n_step, v[i].step));
        if (usable(v[i].v) && isfinite(s)) {
            sum += v[i].v * s;
            k++;
        }
    }
    *total = k ? sum : NAN;
    free(v);
    return 0;
}

/* The steps' spans for the goodput (every step_ms point: a step logged
 * again after a restart took wall time again) and the checkpoints. */
static int goodput_of_run(tfb_run *r, tfb_eff_goodput *out)
{
    tfb_step_value *in = NULL, *cm = NULL;
    size_t ni = 0, nc = 0;
    TFB_VEC(tfb_eff_step_span) st = {0};
    TFB_VEC(tfb_eff_ckpt_span) ck = {0};
    int rc = by_step(r, TFB_TAG_INPUT_MS, &in, &ni);
    if (rc == 0)
        rc = by_step(r, TFB_TAG_COMM_MS, &cm, &nc);
    tfb_series *s = tfb_run_find_series(r, TFB_SERIES_SCALAR, TFB_TAG_STEP_MS);
    if (rc == 0 && s) {
        tfb_series_view v;
        tfb_series_read_begin(s, &v);
        if (tfb_vec_need(&st, v.count) < 0)
            rc = TFB_ENOMEM;
        for (size_t i = 0; rc == 0 && i < v.count; i++) {
            double len = step_seconds(point(&v, i));
            if (!isfinite(len) || !isfinite(v.wall[i]))
                continue;
            double x = at_step(in, ni, v.step[i]) / 1000.0;
            double c = at_step(cm, nc, v.step[i]) / 1000.0;
            st.v[st.n++] = (tfb_eff_step_span){
                v.wall[i], len, usable(x) ? x : 0.0, usable(c) ? c : 0.0};
        }
        tfb_series_read_end(s);
    }
    s = tfb_run_find_series(r, TFB_SERIES_SCALAR, TFB_EFF_TAG_CHECKPOINT_MS);
    if (rc == 0 && s) {
        tfb_series_view v;
        tfb_series_read_begin(s, &v);
        if (tfb_vec_need(&ck, v.count) < 0)
            rc = TFB_ENOMEM;
        for (size_t i = 0; rc == 0 && i < v.count; i++) {
            double len = step_seconds(point(&v, i));
            if (isfinite(len) && isfinite(v.wall[i]))
                ck.v[ck.n++] = (tfb_eff_ckpt_span){v.wall[i], len};
        }
        tfb_series_read_end(s);
    }
    if (rc == 0)
        tfb_eff_goodput_of(st.v, st.n, ck.v, ck.n, tfb_run_first_wall(r), out);
    free(in);
    free(cm);
    tfb_vec_free(&st);
    tfb_vec_free(&ck);
    return rc;
}

static int has_scalar(tfb_run *r, const char *tag)
{
    tfb_series *s = tfb_run_find_series(r, TFB_SERIES_SCALAR, tag);
    return s && tfb_series_count(s) > 0;
}

int tfb_eff_run_compute(tfb_run *r, const tfb_eff_opts *o, tfb_eff_run *out)
{
    return tfb_eff_run_compute_dev(r, o, NULL, out);
}

int tfb_eff_run_compute_dev(tfb_run *r, const tfb_eff_opts *o,
                            const char *trace_device, tfb_eff_run *out)
{
    memset(out, 0, sizeof *out);
    out->samples_per_s = out->tokens_per_s = out->tflops = NAN;
    out->mfu_pct = out->peak_tflops = NAN;
    out->energy_j = out->energy_wh = out->gco2 = NAN;
    out->j_per_sample = out->j_per_token = NAN;
    out->goodput.goodput = NAN;
    eff_inputs in;
    int rc = gather(r, o, trace_device, &in, out->energy_source,
                    sizeof out->energy_source);
    if (rc < 0)
        goto done;
    double energy;
    if ((rc = read_energy(r, &energy)) < 0)
        goto done;
    if (in.n_step == 0 && in.n_tflops == 0 && in.n_mfu == 0 &&
        !isfinite(energy) && !has_scalar(r, TFB_EFF_TAG_SAMPLES_PER_S) &&
        !has_scalar(r, TFB_EFF_TAG_TOKENS_PER_S)) {
        rc = TFB_ENOENT;
        goto done;
    }
    for (size_t i = 0; i < in.n_step; i++)
        out->steps += isfinite(step_seconds(in.step_ms[i].v));
    double samples, tokens;
    if ((rc = rate_of(r, TFB_EFF_TAG_SAMPLES_PER_S, &in, &out->samples_per_s,
                      &samples)) < 0 ||
        (rc = rate_of(r, TFB_EFF_TAG_TOKENS_PER_S, &in, &out->tokens_per_s,
                      &tokens)) < 0)
        goto done;
    /* Without perf/tokens_per_s, the hparams' tokens per step over each
     * step's time (the same figure the 6 N T estimate uses). */
    if (!isfinite(out->tokens_per_s) && isfinite(in.hp_tokens) &&
        in.hp_tokens > 0) {
        double sum = 0;
        size_t k = 0;
        for (size_t i = 0; i < in.n_step; i++) {
            double s = step_seconds(in.step_ms[i].v);
            if (isfinite(s)) {
                sum += in.hp_tokens / s;
                k++;
            }
        }
        if (k) {
            out->tokens_per_s = sum / (double)k;
            tokens = in.hp_tokens * (double)k;
        }
    }
    tfb_step_value *v = NULL;
    size_t n = 0;
    if ((rc = tflops_series(&in, &v, &n)) < 0)
        goto done;
    out->tflops = mean_of(v, n);
    free(v);
    if ((rc = mfu_series(&in, o, &v, &n)) < 0)
        goto done;
    out->mfu_pct = mean_of(v, n);
    free(v);
    out->flops_estimated = in.n_tflops == 0 && in.flops_estimated;
    out->peak_tflops = in.peak;
    memcpy(out->peak_source, in.peak_source, sizeof out->peak_source);
    memcpy(out->device, in.device, sizeof out->device);
    memcpy(out->dtype, in.dtype, sizeof out->dtype);
    out->dtype_assumed = in.dtype_assumed;
    if ((rc = goodput_of_run(r, &out->goodput)) < 0)
        goto done;
    out->energy_j = energy;
    if (isfinite(energy)) {
        out->energy_wh = tfb_eff_wh(energy);
        out->gco2 = tfb_eff_gco2(energy, o ? o->grid_gco2_per_kwh : 0);
        if (samples > 0)
            out->j_per_sample = energy / samples;
        if (tokens > 0)
            out->j_per_token = energy / tokens;
    }
done:
    inputs_free(&in);
    return rc;
}

int tfb_eff_trace_device(tfb_store *s, tfb_run *r, int wait_ms, char *buf,
                         size_t cap)
{
    if (cap > 0)
        buf[0] = 0;
    tfb_trace *t = NULL;
    tfb_trace_status st;
    int rc = tfb_trace_get(s, r, wait_ms, &t, &st);
    if (rc < 0 || !t)
        return rc == TFB_ENOMEM ? rc : 0; /* no usable trace: unknown */
    int found = 0;
    for (size_t i = 0; i < t->ndevices && !found && cap > 0; i++) {
        const char *name = tfb_trace_str(t, t->devices[i].name, NULL);
        if (name && name[0]) {
            copy_text(buf, cap, name, strlen(name));
            found = 1;
        }
    }
    tfb_trace_release(t);
    return found;
}
