/*
 * pr_curve.c - tfb_pr_curve: TensorBoard's pr_curves tensor (see
 * tfboard.h, "PR curves"), computed here and written as one record.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "collector/event.h"
#include "collector/pb.h"
#include "tfboard.h"
#include "collector/writer_internal.h"

/* Serialises Event{wall_time, step, summary{value{tag, metadata{plugin
 * "pr_curves", content PrCurvePluginData{num_thresholds}}, tensor
 * DT_FLOAT [6, k] as packed float_val}}}; malloc'd. */
static uint8_t *pr_event(double wall, int64_t step, const char *tag,
                         size_t tag_len, const float *rows, int k,
                         size_t *out)
{
    size_t nf = (size_t)6 * (size_t)k;
    size_t dim0 = 2, dim1 = 1 + pb_varint_size((uint64_t)k);
    size_t shape = pb_len_field_size(dim0) + pb_len_field_size(dim1);
    size_t tensor = 2 + pb_len_field_size(shape) + pb_len_field_size(nf * 4);
    uint8_t content[11] = {0x10}; /* 2: num_thresholds */
    size_t content_len =
        (size_t)(pb_put_varint(content + 1, (uint64_t)k) - content);
    uint8_t *p, *buf = tfb_ev_plugin_event(wall, step, tag, tag_len,
                                           "pr_curves", content, content_len,
                                           tensor, &p, out);
    if (!buf)
        return NULL;
    *p++ = 0x08; /* dtype */
    *p++ = 1;    /* DT_FLOAT */
    p = pb_put_len(p, 2, shape);
    p = pb_put_len(p, 2, dim0);
    *p++ = 0x08;
    *p++ = 6;
    p = pb_put_len(p, 2, dim1);
    *p++ = 0x08;
    p = pb_put_varint(p, (uint64_t)k);
    p = pb_put_len(p, 5, nf * 4); /* float_val, packed */
    for (size_t i = 0; i < nf; i++)
        p = pb_put_float(p, rows[i]);
    return buf;
}

/* From the per-bucket weights of positives and negatives: the six rows. */
static int write_curve(tfb_writer *w, const char *tag, int k, double *tp_b,
                       double *fp_b, int64_t step, double wall)
{
    float *rows = malloc((size_t)6 * (size_t)k * sizeof *rows);
    if (!rows)
        return TFB_ENOMEM;
    double tp = 0, fp = 0;
    /* Reverse cumulative sums: at threshold i, the buckets >= i. */
    for (int i = k - 1; i >= 0; i--) {
        tp += tp_b[i];
        fp += fp_b[i];
        tp_b[i] = tp;
        fp_b[i] = fp;
    }
    for (int i = 0; i < k; i++) {
        double t = tp_b[i], f = fp_b[i];
        double tn = fp_b[0] - f, fn = tp_b[0] - t;
        rows[i] = (float)t;
        rows[k + i] = (float)f;
        rows[2 * k + i] = (float)tn;
        rows[3 * k + i] = (float)fn;
        rows[4 * k + i] = (float)(t / fmax(1e-7, t + f));
        rows[5 * k + i] = (float)(t / fmax(1e-7, t + fn));
    }
    size_t n;
    uint8_t *ev = pr_event(wall, step, tag, strlen(tag), rows, k, &n);
    free(rows);
    if (!ev)
        return TFB_ENOMEM;
    int rc = tfb_writer_log_event(w, ev, n);
    free(ev);
    return rc;
}

static int check_args(tfb_writer *w, const char *tag, const void *labels,
                      const void *predictions, size_t n, int *k)
{
    if (!w || !tag || !*tag || ((!labels || !predictions) && n) || *k < 2)
        return TFB_EINVAL;
    if (tfb_writer_forked(w))
        return TFB_EFORKED;
    if (*k > TFB_PR_MAX_THRESHOLDS)
        *k = TFB_PR_MAX_THRESHOLDS;
    return 0;
}

/* curve_f32 and curve_f64: one body for the two element types. Each pair
 * counts its weight (1 without weights) in the bucket of its prediction:
 * TP weight for a positive label, FP weight for a negative. The bucket is
 * computed in the element type, as NumPy multiplies an array of it (a
 * float32 array: in float). NaN and values outside [0, 1] fall in no
 * bucket. */
#define DEFINE_CURVE(NAME, T, FLOOR)                                          \
    static int NAME(tfb_writer *w, const char *tag, const T *labels,          \
                    const T *predictions, const double *weights, size_t n,    \
                    int num_thresholds, int64_t step, double wall)            \
    {                                                                         \
        int k = num_thresholds;                                               \
        int rc = check_args(w, tag, labels, predictions, n, &k);              \
        if (rc)                                                               \
            return rc;                                                        \
        double tp_b[TFB_PR_MAX_THRESHOLDS] = {0};                             \
        double fp_b[TFB_PR_MAX_THRESHOLDS] = {0};                             \
        const T scale = (T)(k - 1);                                           \
        for (size_t i = 0; i < n; i++) {                                      \
            T b = FLOOR(predictions[i] * scale);                              \
            if (!(b >= 0 && b <= scale))                                      \
                continue;                                                     \
            double wt = weights ? weights[i] : 1.0;                           \
            if (labels[i] != 0)                                               \
                tp_b[(int)b] += wt;                                           \
            else                                                              \
                fp_b[(int)b] += wt;                                           \
        }                                                                     \
        return write_curve(w, tag, k, tp_b, fp_b, step, wall);                \
    }

DEFINE_CURVE(curve_f32, float, floorf)
DEFINE_CURVE(curve_f64, double, floor)

int tfb_pr_curve(tfb_writer *w, const char *tag, const float *labels,
                 const float *predictions, size_t n, int num_thresholds,
                 int64_t step)
{
    return curve_f32(w, tag, labels, predictions, NULL, n, num_thresholds,
                     step, tfb_now_wall());
}

int tfb_pr_curve_f64(tfb_writer *w, const char *tag, const double *labels,
                     const double *predictions, size_t n, int num_thresholds,
                     int64_t step)
{
    return curve_f64(w, tag, labels, predictions, NULL, n, num_thresholds,
                     step, tfb_now_wall());
}

int tfb_pr_curve_at(tfb_writer *w, const char *tag, const float *labels,
                    const float *predictions, const double *weights,
                    size_t n, int num_thresholds, int64_t step,
                    double wall_time)
{
    return curve_f32(w, tag, labels, predictions, weights, n, num_thresholds,
                     step, wall_time);
}

int tfb_pr_curve_f64_at(tfb_writer *w, const char *tag, const double *labels,
                        const double *predictions, const double *weights,
                        size_t n, int num_thresholds, int64_t step,
                        double wall_time)
{
    return curve_f64(w, tag, labels, predictions, weights, n, num_thresholds,
                     step, wall_time);
}
