/*
 * health_norms.c - L2 norms of gradient tensors without overflow or
 * underflow, and tfb_grad_norms(), which logs them per layer and globally.
 *
 * float input: every square of a float is exact-range in double (FLT_MAX²
 * ≈ 1.2e77, the smallest denormal² ≈ 2e-90 is a normal double), and a sum of
 * 2^700 of them would still not overflow, so one plain pass in double is both
 * safe and precise. No scaling is ever needed.
 *
 * double input: the same plain pass is right for almost all real data. It
 * is wrong only when the sum overflowed (some |x| > ~1e154) or when it is so
 * small that squares may have rounded in the subnormal range. Only then do
 * we redo the work with exact power-of-two scaling (the idea of LAPACK's
 * scaled nrm2, in two passes: find the largest magnitude, then sum squares
 * of values scaled so that it becomes ~1).
 *
 * Several independent accumulators break the add dependency chain, so the
 * loops run at several elements per cycle without -ffast-math.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tfboard.h"
#include "collector/abi.h"
#include "collector/writer_internal.h"

#define NACC 8

static double sumsq_f32(const float *x, size_t n)
{
    double a[NACC] = {0};
    size_t i = 0;
    for (; i + NACC <= n; i += NACC)
        for (int k = 0; k < NACC; k++) {
            double v = (double)x[i + k];
            a[k] += v * v;
        }
    for (; i < n; i++) {
        double v = (double)x[i];
        a[0] += v * v;
    }
    return ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7]));
}

static double sumsq_f64(const double *x, size_t n)
{
    double a[NACC] = {0};
    size_t i = 0;
    for (; i + NACC <= n; i += NACC)
        for (int k = 0; k < NACC; k++)
            a[k] += x[i + k] * x[i + k];
    for (; i < n; i++)
        a[0] += x[i] * x[i];
    return ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7]));
}

/* The careful path for doubles: two passes with power-of-two scaling, which
 * is exact, so the only rounding is that of the sum itself. */
static double norm_f64_scaled(const double *x, size_t n)
{
    double big = 0.0;
    for (size_t i = 0; i < n; i++) {
        double m = fabs(x[i]);
        if (isnan(m))
            return NAN;
        if (m > big)
            big = m;
    }
    if (big == 0.0)
        return 0.0;
    if (isinf(big))
        return INFINITY;
    int e;
    (void)frexp(big, &e); /* big = f · 2^e, 0.5 <= f < 1 */
    /* 2^-e can lie outside the double range (e is in [-1073, 1024]), so the
     * scale is applied as two factors that each fit. */
    int e1 = -e / 2, e2 = -e - e1;
    double s1 = ldexp(1.0, e1), s2 = ldexp(1.0, e2);
    double a[4] = {0};
    size_t i = 0;
    for (; i + 4 <= n; i += 4)
        for (int k = 0; k < 4; k++) {
            double v = (x[i + k] * s1) * s2;
            a[k] += v * v;
        }
    for (; i < n; i++) {
        double v = (x[i] * s1) * s2;
        a[0] += v * v;
    }
    /* Squares lost to underflow here are below 2^-1022 against a largest
     * square >= 1/4: far under one rounding of the sum. */
    return ldexp(sqrt((a[0] + a[1]) + (a[2] + a[3])), e);
}

double tfb_l2_norm(const float *data, size_t len)
{
    if (data == NULL || len == 0)
        return 0.0;
    /* NaN in, NaN out; Inf in, Inf out: the double sum does both. */
    return sqrt(sumsq_f32(data, len));
}

double tfb_l2_norm_f64(const double *data, size_t len)
{
    if (data == NULL || len == 0)
        return 0.0;
    double s = sumsq_f64(data, len);
    if (isnan(s))
        return NAN;
    /* Below len · DBL_MIN, squares rounded in the subnormal range may add up
     * to more than one rounding of s: take the careful path. Above DBL_MAX
     * (Inf) the sum overflowed, or an input is Inf; the careful path tells
     * the two apart. */
    if (isinf(s) || s < (double)len * DBL_MIN)
        return norm_f64_scaled(data, len);
    return sqrt(s);
}

/* Logs grad_norm/<name> = norms[i] for each tensor and grad_norm/global.
 * Returns the first logging error, after trying every tag. */
static int log_norms(tfb_writer *w, const char **names,
                     const double *norms, size_t n, double global,
                     int64_t step)
{
    static const char prefix[] = TFB_TAG_GRAD_NORM_PREFIX;
    char small[256];
    int first_err = 0;
    for (size_t i = 0; i <= n; i++) {
        const char *name = i < n ? names[i] : "global";
        double v = i < n ? norms[i] : global;
        size_t nl = strlen(name);
        size_t need = sizeof prefix + nl;
        char *tag = need <= sizeof small ? small : malloc(need);
        if (tag == NULL) {
            if (first_err == 0)
                first_err = TFB_ENOMEM;
            continue;
        }
        memcpy(tag, prefix, sizeof prefix - 1);
        memcpy(tag + sizeof prefix - 1, name, nl + 1);
        int rc = tfb_scalar(w, tag, v, step);
        if (tag != small)
            free(tag);
        if (rc < 0 && first_err == 0)
            first_err = rc;
    }
    return first_err;
}

/* The common body of both variants once the per-tensor norms are known. */
static int finish(tfb_writer *w, const char **names, double *norms,
                  size_t n, int64_t step, double *global_norm)
{
    /* sqrt(Σ norm²) is itself an L2 norm: reuse the careful code, since the
     * norms of double tensors may each be near DBL_MAX. */
    double global = tfb_l2_norm_f64(norms, n);
    int rc = 0;
    if (w != NULL)
        rc = log_norms(w, names, norms, n, global, step);
    if (rc == 0 && global_norm != NULL)
        *global_norm = global;
    return rc;
}

/* Up to this many tensors, names and norms live on the stack. */
#define STACK_TENSORS 64

/* The two public variants differ only in the element type: they hand
 * these accessors to one body. Each gets element i of the caller's array
 * (tfboard.h: walked with the first element's size) as a whole struct of
 * ours; valid_at says 0 for a size of 0 or one unlike the first's. */
typedef struct tensor_list {
    const void *grads;
    const char *(*name_at)(const void *grads, size_t i);
    int (*valid_at)(const void *grads, size_t i);
    double (*norm_at)(const void *grads, size_t i);
} tensor_list;

/* Element i as a whole struct (in tmp when the caller's is smaller), or
 * NULL when its size is 0 or differs from element 0's. */
static const void *element(const void *grads, size_t i, void *tmp,
                           size_t tmp_size)
{
    size_t stride = tfb_abi_size(grads);
    const void *src = (const char *)grads + i * stride;
    if (tfb_abi_size(src) != stride)
        return NULL;
    return tfb_abi_view(tmp, tmp_size, src);
}

static const char *name_f32(const void *g, size_t i)
{
    tfb_tensor tmp;
    return ((const tfb_tensor *)element(g, i, &tmp, sizeof tmp))->name;
}

static int valid_f32(const void *g, size_t i)
{
    tfb_tensor tmp;
    const tfb_tensor *t = element(g, i, &tmp, sizeof tmp);
    return t && t->name && t->name[0] && (t->data || t->len == 0);
}

static double norm_f32(const void *g, size_t i)
{
    tfb_tensor tmp;
    const tfb_tensor *t = element(g, i, &tmp, sizeof tmp);
    return tfb_l2_norm(t->data, t->len);
}

static const char *name_f64(const void *g, size_t i)
{
    tfb_tensor_f64 tmp;
    return ((const tfb_tensor_f64 *)element(g, i, &tmp, sizeof tmp))->name;
}

static int valid_f64(const void *g, size_t i)
{
    tfb_tensor_f64 tmp;
    const tfb_tensor_f64 *t = element(g, i, &tmp, sizeof tmp);
    return t && t->name && t->name[0] && (t->data || t->len == 0);
}

static double norm_f64(const void *g, size_t i)
{
    tfb_tensor_f64 tmp;
    const tfb_tensor_f64 *t = element(g, i, &tmp, sizeof tmp);
    return tfb_l2_norm_f64(t->data, t->len);
}

static int grad_norms(tfb_writer *w, const tensor_list *l, size_t n,
                      int64_t step, double *global_norm)
{
    if (l->grads == NULL && n > 0)
        return TFB_EINVAL;
    if (tfb_writer_forked(w))
        return TFB_EFORKED; /* w is the parent's: see tfboard.h */
    for (size_t i = 0; i < n; i++)
        if (!l->valid_at(l->grads, i))
            return TFB_EINVAL;
    double norms_s[STACK_TENSORS];
    const char *names_s[STACK_TENSORS];
    double *norms = norms_s;
    const char **names = names_s;
    if (n > STACK_TENSORS) {
        norms = malloc(n * sizeof *norms);
        names = malloc(n * sizeof *names);
        if (norms == NULL || names == NULL) {
            free(norms);
            free(names);
            return TFB_ENOMEM;
        }
    }
    for (size_t i = 0; i < n; i++) {
        norms[i] = l->norm_at(l->grads, i);
        names[i] = l->name_at(l->grads, i);
    }
    int rc = finish(w, names, norms, n, step, global_norm);
    if (norms != norms_s) {
        free(norms);
        free(names);
    }
    return rc;
}

int tfb_grad_norms(tfb_writer *w, const tfb_tensor *grads, size_t n,
                   int64_t step, double *global_norm)
{
    tensor_list l = {grads, name_f32, valid_f32, norm_f32};
    return grad_norms(w, &l, n, step, global_norm);
}

int tfb_grad_norms_f64(tfb_writer *w, const tfb_tensor_f64 *grads, size_t n,
                       int64_t step, double *global_norm)
{
    tensor_list l = {grads, name_f64, valid_f64, norm_f64};
    return grad_norms(w, &l, n, step, global_norm);
}
