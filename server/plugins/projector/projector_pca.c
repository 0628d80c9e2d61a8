/*
 * projector_pca.c - PCA by covariance + subspace iteration (see
 * projector_pca.h). Doubles throughout: float32 inputs, but a sum over
 * 100,000 rows in float loses the small components.
 */
#include "plugins/projector/projector_pca.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tfboard.h"

/* Extra vectors iterated beyond k: the gap they leave makes the top k
 * converge faster (randomized SVD's usual oversampling). */
#define PCA_OVERSAMPLE 8

/* Centred rows added to the covariance per pass over it. */
#define PCA_BLOCK 4

static int row_finite(const float *r, uint32_t d)
{
    for (uint32_t j = 0; j < d; j++)
        if (!isfinite(r[j]))
            return 0;
    return 1;
}

/* cov += sum of the outer products of the n (<= PCA_BLOCK) rows in r
 * (upper triangle only). */
static void add_block(double *cov, uint32_t d, const double *r, size_t n)
{
    const double *r0 = r, *r1 = r + d, *r2 = r + 2 * (size_t)d,
                 *r3 = r + 3 * (size_t)d;
    for (uint32_t i = 0; i < d; i++) {
        double *ci = cov + (size_t)i * d;
        if (n == PCA_BLOCK) {
            double a0 = r0[i], a1 = r1[i], a2 = r2[i], a3 = r3[i];
            for (uint32_t j = i; j < d; j++)
                ci[j] += a0 * r0[j] + a1 * r1[j] + a2 * r2[j] + a3 * r3[j];
        } else {
            for (size_t b = 0; b < n; b++) {
                const double *rb = r + b * d;
                double a = rb[i];
                for (uint32_t j = i; j < d; j++)
                    ci[j] += a * rb[j];
            }
        }
    }
}

/* Orthonormalizes the l columns of q (d x l, column j at q + j*d) by
 * modified Gram-Schmidt, twice for stability; a column that vanishes is
 * replaced by a unit vector. */
static void orthonormalize(double *q, uint32_t d, uint32_t l)
{
    for (int pass = 0; pass < 2; pass++) {
        for (uint32_t j = 0; j < l; j++) {
            double *v = q + (size_t)j * d;
            for (uint32_t i = 0; i < j; i++) {
                const double *u = q + (size_t)i * d;
                double dot = 0;
                for (uint32_t t = 0; t < d; t++)
                    dot += u[t] * v[t];
                for (uint32_t t = 0; t < d; t++)
                    v[t] -= dot * u[t];
            }
            double nrm = 0;
            for (uint32_t t = 0; t < d; t++)
                nrm += v[t] * v[t];
            nrm = sqrt(nrm);
            if (nrm < 1e-300) {
                memset(v, 0, d * sizeof *v);
                v[j % d] = 1;
                continue; /* made orthogonal on the next pass */
            }
            for (uint32_t t = 0; t < d; t++)
                v[t] /= nrm;
        }
    }
}

/* Eigen-decomposition of the symmetric l x l matrix a (destroyed) by
 * cyclic Jacobi: eigenvalues in w, eigenvectors as columns of v. */
static void jacobi(double *a, uint32_t l, double *w, double *v)
{
    for (uint32_t i = 0; i < l; i++)
        for (uint32_t j = 0; j < l; j++)
            v[i * l + j] = i == j;
    for (int sweep = 0; sweep < 100; sweep++) {
        double off = 0;
        for (uint32_t i = 0; i < l; i++)
            for (uint32_t j = i + 1; j < l; j++)
                off += a[i * l + j] * a[i * l + j];
        if (off < 1e-30)
            break;
        for (uint32_t p = 0; p < l; p++) {
            for (uint32_t q = p + 1; q < l; q++) {
                double apq = a[p * l + q];
                if (fabs(apq) < 1e-300)
                    continue;
                double theta = (a[q * l + q] - a[p * l + p]) / (2 * apq);
                double t = (theta >= 0 ? 1 : -1) /
                           (fabs(theta) + sqrt(theta * theta + 1));
                double c = 1 / sqrt(t * t + 1), s = t * c;
                for (uint32_t k = 0; k < l; k++) {
                    double akp = a[k * l + p], akq = a[k * l + q];
                    a[k * l + p] = c * akp - s * akq;
                    a[k * l + q] = s * akp + c * akq;
                }
                for (uint32_t k = 0; k < l; k++) {
                    double apk = a[p * l + k], aqk = a[q * l + k];
                    a[p * l + k] = c * apk - s * aqk;
                    a[q * l + k] = s * apk + c * aqk;
                }
                for (uint32_t k = 0; k < l; k++) {
                    double vkp = v[k * l + p], vkq = v[k * l + q];
                    v[k * l + p] = c * vkp - s * vkq;
                    v[k * l + q] = s * vkp + c * vkq;
                }
            }
        }
    }
    for (uint32_t i = 0; i < l; i++)
        w[i] = a[i * l + i];
}

/* y = C x for the symmetric d x d matrix c (full storage). */
static void symv(const double *c, uint32_t d, const double *x, double *y)
{
    for (uint32_t i = 0; i < d; i++) {
        const double *ci = c + (size_t)i * d;
        double s = 0;
        for (uint32_t j = 0; j < d; j++)
            s += ci[j] * x[j];
        y[i] = s;
    }
}

void tfb_projector_pca_free(tfb_projector_pca *p)
{
    if (!p)
        return;
    free(p->components);
    free(p->variance);
    free(p->ratio);
    free(p->mean);
    memset(p, 0, sizeof *p);
}

int tfb_projector_pca_run(const float *x, uint64_t rows, uint32_t dim,
                          uint32_t k, tfb_projector_pca *out)
{
    memset(out, 0, sizeof *out);
    if (!dim || !rows || dim > TFB_PROJECTOR_PCA_MAX_DIM || !k)
        return TFB_EINVAL;
    if (k > TFB_PROJECTOR_PCA_COMPONENTS)
        k = TFB_PROJECTOR_PCA_COMPONENTS;
    if (k > dim)
        k = dim;
    uint32_t l = k + PCA_OVERSAMPLE < dim ? k + PCA_OVERSAMPLE : dim;
    /* Rows taken: all, or every stride-th, within the work bound. */
    uint64_t per_row = (uint64_t)dim * (dim + 1) / 2;
    uint64_t max_rows = TFB_PROJECTOR_PCA_WORK / per_row;
    if (max_rows < 2)
        max_rows = 2;
    uint64_t stride = rows > max_rows ? (rows + max_rows - 1) / max_rows : 1;

    double *mean = calloc(dim, sizeof *mean);
    double *cov = calloc((size_t)dim * dim, sizeof *cov);
    double *row = malloc((size_t)PCA_BLOCK * dim * sizeof *row);
    double *q = malloc((size_t)dim * l * sizeof *q);
    double *z = malloc((size_t)dim * l * sizeof *z);
    double *b = malloc((size_t)l * l * sizeof *b);
    double *w = malloc(l * sizeof *w);
    double *v = malloc((size_t)l * l * sizeof *v);
    double *prev = calloc(l, sizeof *prev);
    int rc = TFB_ENOMEM;
    if (!mean || !cov || !row || !q || !z || !b || !w || !v || !prev)
        goto done;

    /* The mean of the rows used (finite rows only). */
    uint64_t used = 0, skipped = 0;
    for (uint64_t r = 0; r < rows; r += stride) {
        const float *xr = x + r * dim;
        if (!row_finite(xr, dim)) {
            skipped++;
            continue;
        }
        for (uint32_t j = 0; j < dim; j++)
            mean[j] += xr[j];
        used++;
    }
    /* Rows skipped outside the sample are counted too, so the note says
     * how many points PCA left out of the whole. */
    if (stride > 1) {
        skipped = 0;
        for (uint64_t r = 0; r < rows; r++)
            skipped += !row_finite(x + r * dim, dim);
    }
    if (!used) {
        rc = TFB_EINVAL;
        goto done;
    }
    for (uint32_t j = 0; j < dim; j++)
        mean[j] /= (double)used;

    /* Upper triangle of sum (x - mean)(x - mean)^T, PCA_BLOCK rows at a
     * time: each pass over the triangle (dim^2 / 2 doubles, larger than
     * L1 past dim 64) then serves several rows. */
    size_t filled = 0;
    for (uint64_t r = 0; r < rows; r += stride) {
        const float *xr = x + r * dim;
        if (!row_finite(xr, dim))
            continue;
        double *dst = row + filled * dim;
        for (uint32_t j = 0; j < dim; j++)
            dst[j] = xr[j] - mean[j];
        if (++filled == PCA_BLOCK) {
            add_block(cov, dim, row, filled);
            filled = 0;
        }
    }
    if (filled)
        add_block(cov, dim, row, filled);
    double denom = used > 1 ? (double)(used - 1) : 1.0;
    double total = 0;
    for (uint32_t i = 0; i < dim; i++) {
        for (uint32_t j = i; j < dim; j++) {
            double c = cov[(size_t)i * dim + j] / denom;
            cov[(size_t)i * dim + j] = c;
            cov[(size_t)j * dim + i] = c;
        }
        total += cov[(size_t)i * dim + i];
    }

    /* Subspace iteration from a fixed start (answers repeat exactly):
     * Q <- orth(C Q), then Rayleigh-Ritz on Q^T C Q. */
    uint64_t seed = 0x9E3779B97F4A7C15ull;
    for (size_t i = 0; i < (size_t)dim * l; i++) {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        q[i] = (double)(seed >> 11) / 9007199254740992.0 - 0.5;
    }
    orthonormalize(q, dim, l);
    uint32_t it;
    for (it = 1; it <= TFB_PROJECTOR_PCA_ITERS; it++) {
        for (uint32_t c = 0; c < l; c++)
            symv(cov, dim, q + (size_t)c * dim, z + (size_t)c * dim);
        /* Ritz values: B = Q^T C Q = Q^T Z. */
        for (uint32_t a = 0; a < l; a++)
            for (uint32_t c = 0; c < l; c++) {
                double s = 0;
                const double *qa = q + (size_t)a * dim,
                             *zc = z + (size_t)c * dim;
                for (uint32_t t = 0; t < dim; t++)
                    s += qa[t] * zc[t];
                b[a * l + c] = s;
            }
        for (uint32_t a = 0; a < l; a++) /* symmetrize rounding */
            for (uint32_t c = a + 1; c < l; c++) {
                double m = 0.5 * (b[a * l + c] + b[c * l + a]);
                b[a * l + c] = b[c * l + a] = m;
            }
        jacobi(b, l, w, v);
        /* Converged when the top k Ritz values stop moving. */
        double move = 0, scale = 1e-300;
        for (uint32_t a = 0; a < l; a++)
            scale = fmax(scale, fabs(w[a]));
        /* Jacobi's order may change between iterations: compare the
         * values sorted (l is at most k + PCA_OVERSAMPLE). */
        double sorted[TFB_PROJECTOR_PCA_COMPONENTS + PCA_OVERSAMPLE];
        memcpy(sorted, w, l * sizeof *w);
        for (uint32_t a = 1; a < l; a++)
            for (uint32_t c = a; c > 0 && sorted[c - 1] < sorted[c]; c--) {
                double t = sorted[c];
                sorted[c] = sorted[c - 1];
                sorted[c - 1] = t;
            }
        for (uint32_t a = 0; a < k; a++) {
            move = fmax(move, fabs(sorted[a] - prev[a]));
            prev[a] = sorted[a];
        }
        memcpy(q, z, (size_t)dim * l * sizeof *q);
        orthonormalize(q, dim, l);
        if (l == dim || (it > 2 && move <= 1e-10 * scale))
            break;
    }
    if (it > TFB_PROJECTOR_PCA_ITERS)
        it = TFB_PROJECTOR_PCA_ITERS;

    /* The Ritz vectors of the last B: rotate the basis the B was built
     * on. That basis was overwritten by orth(Z); rebuild B on the new Q
     * for a consistent pair (one more product). */
    for (uint32_t c = 0; c < l; c++)
        symv(cov, dim, q + (size_t)c * dim, z + (size_t)c * dim);
    for (uint32_t a = 0; a < l; a++)
        for (uint32_t c = 0; c < l; c++) {
            double s = 0;
            for (uint32_t t = 0; t < dim; t++)
                s += q[(size_t)a * dim + t] * z[(size_t)c * dim + t];
            b[a * l + c] = s;
        }
    for (uint32_t a = 0; a < l; a++)
        for (uint32_t c = a + 1; c < l; c++) {
            double m = 0.5 * (b[a * l + c] + b[c * l + a]);
            b[a * l + c] = b[c * l + a] = m;
        }
    jacobi(b, l, w, v);

    out->components = malloc((size_t)k * dim * sizeof *out->components);
    out->variance = malloc(k * sizeof *out->variance);
    out->ratio = malloc(k * sizeof *out->ratio);
    out->mean = malloc(dim * sizeof *out->mean);
    if (!out->components || !out->variance || !out->ratio || !out->mean) {
        tfb_projector_pca_free(out);
        goto done;
    }
    /* Top k by eigenvalue (l is small: selection by repeated max). */
    int taken[TFB_PROJECTOR_PCA_COMPONENTS + PCA_OVERSAMPLE] = {0};
    for (uint32_t c = 0; c < k; c++) {
        uint32_t best = 0;
        double bw = -INFINITY;
        for (uint32_t a = 0; a < l; a++)
            if (!taken[a] && w[a] > bw) {
                bw = w[a];
                best = a;
            }
        taken[best] = 1;
        double *u = z; /* scratch: the component in doubles */
        for (uint32_t t = 0; t < dim; t++) {
            double s = 0;
            for (uint32_t a = 0; a < l; a++)
                s += q[(size_t)a * dim + t] * v[a * l + best];
            u[t] = s;
        }
        /* Sign fixed so the largest coordinate is positive: the same
         * data gives the same picture. */
        uint32_t big = 0;
        for (uint32_t t = 1; t < dim; t++)
            if (fabs(u[t]) > fabs(u[big]))
                big = t;
        double sign = u[big] < 0 ? -1 : 1;
        for (uint32_t t = 0; t < dim; t++)
            out->components[(size_t)c * dim + t] = (float)(sign * u[t]);
        out->variance[c] = bw > 0 ? bw : 0;
        out->ratio[c] = total > 0 ? out->variance[c] / total : 0;
    }
    for (uint32_t j = 0; j < dim; j++)
        out->mean[j] = (float)mean[j];
    out->k = k;
    out->dim = dim;
    out->total_variance = total;
    out->rows_used = used;
    out->rows_skipped = skipped;
    out->iterations = it;
    rc = 0;
done:
    free(mean);
    free(cov);
    free(row);
    free(q);
    free(z);
    free(b);
    free(w);
    free(v);
    free(prev);
    return rc;
}

float *tfb_projector_pca_project(const tfb_projector_pca *p, const float *x,
                                 uint64_t rows)
{
    if (rows && (uint64_t)p->k > SIZE_MAX / sizeof(float) / rows)
        return NULL;
    float *out = malloc((size_t)(rows * p->k) * sizeof *out + 1);
    double *c = malloc((size_t)p->dim * sizeof *c);
    if (!out || !c) {
        free(out);
        free(c);
        return NULL;
    }
    for (uint64_t r = 0; r < rows; r++) {
        const float *xr = x + r * p->dim;
        int fin = row_finite(xr, p->dim);
        if (fin)
            for (uint32_t t = 0; t < p->dim; t++)
                c[t] = (double)xr[t] - p->mean[t];
        for (uint32_t a = 0; a < p->k; a++) {
            if (!fin) {
                out[r * p->k + a] = NAN;
                continue;
            }
            const float *u = p->components + (size_t)a * p->dim;
            double s = 0;
            for (uint32_t t = 0; t < p->dim; t++)
                s += c[t] * u[t];
            out[r * p->k + a] = (float)s;
        }
    }
    free(c);
    return out;
}
