/*
 * projector_pca.h - principal components of an embedding, on the server:
 * the covariance of the (centred) rows, then block power iteration
 * (subspace iteration with Rayleigh-Ritz) for its top eigenvectors.
 *
 * Rows with a NaN or infinite value are left out (counted), so one bad
 * point does not turn every component into NaN.
 *
 * Ownership: a result owns its arrays (tfb_projector_pca_free).
 * Thread-safety: no shared state; one call uses one thread.
 */
#ifndef TFB_PLUGIN_PROJECTOR_PCA_H
#define TFB_PLUGIN_PROJECTOR_PCA_H

#include <stddef.h>
#include <stdint.h>

/* Components computed: TensorBoard's projector computes 10 and lets
 * people pick any 2 or 3 of them. */
#define TFB_PROJECTOR_PCA_COMPONENTS 10
/* Columns PCA takes: the covariance is dim x dim doubles (32 MiB at
 * 2048) and costs rows x dim^2 / 2 multiply-adds; past 2048 a request
 * would hold a thread for minutes. The tensor itself is still served. */
#define TFB_PROJECTOR_PCA_MAX_DIM 2048
/* Multiply-adds spent on the covariance: past it, an evenly spaced
 * sample of the rows is used (TensorBoard's projector samples 50,000
 * points). 2^31 keeps 100,000 x 128 whole (0.8 G) and one request under
 * a few seconds on one core. */
#define TFB_PROJECTOR_PCA_WORK ((uint64_t)1 << 31)
/* Power iterations at most (each one dim^2 x (k + 8)); converged
 * earlier when the Ritz values move less than 1e-10 relative. */
#define TFB_PROJECTOR_PCA_ITERS 200

typedef struct tfb_projector_pca {
    uint32_t k, dim;
    float *components;   /* k x dim, row-major, unit vectors */
    double *variance;    /* k: the variance along each component */
    double *ratio;       /* k: variance / total variance */
    float *mean;         /* dim */
    double total_variance;
    uint64_t rows_used;  /* rows in the covariance (sampled or all) */
    uint64_t rows_skipped; /* rows left out for a non-finite value */
    uint32_t iterations;
} tfb_projector_pca;

/* PCA of the rows x dim matrix x (row-major). k is cut to dim and to
 * TFB_PROJECTOR_PCA_COMPONENTS. 0, or
 * TFB_EINVAL (no finite row, dim past TFB_PROJECTOR_PCA_MAX_DIM),
 * TFB_ENOMEM. */
int tfb_projector_pca_run(const float *x, uint64_t rows, uint32_t dim,
                          uint32_t k, tfb_projector_pca *out);
void tfb_projector_pca_free(tfb_projector_pca *p);

/* The projections of every row onto the components: rows x k float32,
 * row-major ((x - mean) . component); a row with a non-finite value
 * projects to NaN. malloc'd, or NULL. */
float *tfb_projector_pca_project(const tfb_projector_pca *p, const float *x,
                                 uint64_t rows);

#endif
