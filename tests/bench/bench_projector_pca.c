/*
 * bench_projector_pca.c - the projector's server side on 100,000 points x
 * 128 dimensions (issue 31): parsing the tensors.tsv PyTorch writes, and
 * PCA (10 components). Prints times and the explained variance it found
 * against the variance planted in the data; never fails on a time.
 *
 * The data: 10 directions with variances 100, 81, ..., 1 plus unit-free
 * noise of variance 0.01 in every dimension, rotated by a fixed random
 * orthonormal basis, so the right answer is known.
 *
 * TFB_BENCH_POINTS / TFB_BENCH_DIM override the size.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "plugins/projector/projector_data.h"
#include "plugins/projector/projector_pca.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

static uint64_t rng = 88172645463325252ull;
static double uniform(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return ((double)(rng >> 11) + 0.5) / 9007199254740992.0;
}
static double gauss(void)
{
    return sqrt(-2 * log(uniform())) * cos(6.283185307179586 * uniform());
}

static size_t env_size(const char *name, size_t def)
{
    const char *v = getenv(name);
    return v && atol(v) > 0 ? (size_t)atol(v) : def;
}

int main(void)
{
    size_t n = env_size("TFB_BENCH_POINTS", 100000);
    size_t d = env_size("TFB_BENCH_DIM", 128);
    size_t planted = d < 10 ? d : 10;
    /* A random orthonormal basis (Gram-Schmidt of Gaussian vectors). */
    double *basis = malloc(planted * d * sizeof *basis);
    float *x = malloc(n * d * sizeof *x);
    if (!basis || !x)
        return 1;
    for (size_t a = 0; a < planted; a++) {
        double *u = basis + a * d;
        for (size_t t = 0; t < d; t++)
            u[t] = gauss();
        for (size_t b = 0; b < a; b++) {
            double dot = 0;
            for (size_t t = 0; t < d; t++)
                dot += u[t] * basis[b * d + t];
            for (size_t t = 0; t < d; t++)
                u[t] -= dot * basis[b * d + t];
        }
        double nrm = 0;
        for (size_t t = 0; t < d; t++)
            nrm += u[t] * u[t];
        for (size_t t = 0; t < d; t++)
            u[t] /= sqrt(nrm);
    }
    for (size_t r = 0; r < n; r++) {
        float *xr = x + r * d;
        for (size_t t = 0; t < d; t++)
            xr[t] = (float)(0.1 * gauss() + 3.0);
        for (size_t a = 0; a < planted; a++) {
            double s = (double)(10 - a) * gauss();
            for (size_t t = 0; t < d; t++)
                xr[t] += (float)(s * basis[a * d + t]);
        }
    }

    /* The TSV PyTorch's add_embedding writes (repr of each float). */
    size_t cap = n * d * 24 + 1, len = 0;
    char *tsv = malloc(cap);
    if (!tsv)
        return 1;
    for (size_t r = 0; r < n; r++)
        for (size_t t = 0; t < d; t++)
            len += (size_t)snprintf(tsv + len, cap - len, "%.9g%c",
                                    (double)x[r * d + t],
                                    t + 1 < d ? '\t' : '\n');
    double t0 = now();
    tfb_projector_tensor tt;
    char err[256];
    int rc = tfb_projector_parse_tensor(tsv, len, NULL, 0, &tt, err,
                                        sizeof err);
    double t_parse = now() - t0;
    if (rc) {
        fprintf(stderr, "parse: %s\n", err);
        return 1;
    }
    printf("tensors.tsv %zu x %zu (%.1f MB): parsed in %.3f s (%.0f MB/s)\n",
           n, d, len / 1e6, t_parse, len / 1e6 / t_parse);

    t0 = now();
    tfb_projector_pca p;
    rc = tfb_projector_pca_run(tt.data, tt.rows, tt.cols,
                               TFB_PROJECTOR_PCA_COMPONENTS, &p);
    double t_pca = now() - t0;
    if (rc) {
        fprintf(stderr, "pca failed: %d\n", rc);
        return 1;
    }
    printf("PCA, %u components: %.3f s (%u power iterations, %llu rows "
           "used)\n", p.k, t_pca, p.iterations,
           (unsigned long long)p.rows_used);
    double worst = 0;
    for (uint32_t a = 0; a < p.k && a < planted; a++) {
        double want = (double)(10 - a) * (10 - a) + 0.01;
        double dot = 0;
        for (size_t t = 0; t < d; t++)
            dot += p.components[a * d + t] * basis[a * d + t];
        printf("  component %u: variance %.3f (planted %.2f), "
               "ratio %.4f, |cos| to planted %.5f\n", a + 1, p.variance[a],
               want, p.ratio[a], fabs(dot));
        worst = fmax(worst, fabs(p.variance[a] - want) / want);
    }
    printf("largest relative variance error: %.4f (sampling noise ~ "
           "sqrt(2/n) = %.4f)\n", worst, sqrt(2.0 / (double)n));
    t0 = now();
    float *proj = tfb_projector_pca_project(&p, tt.data, tt.rows);
    printf("projection of every point on %u components: %.3f s\n", p.k,
           now() - t0);
    free(proj);
    tfb_projector_pca_free(&p);
    tfb_projector_tensor_free(&tt);
    free(tsv);
    free(x);
    free(basis);
    return 0;
}
