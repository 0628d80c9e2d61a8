/*
 * eff_driver.c - loads a logdir through the server's real loader and store
 * and prints the efficiency analysis of each run (analysis/efficiency.h)
 * as one line of key=value pairs, for test_efficiency_run.py.
 *
 * usage: eff_driver LOGDIR [PEAK_TFLOPS [GRID_GCO2_PER_KWH]]
 * Output, one line a run, in the store's run order:
 *   run=NAME rc=N steps=N samples_per_s=X tokens_per_s=X tflops=X
 *   mfu_pct=X peak_tflops=X peak_source=S dtype=S dtype_assumed=0|1
 *   flops_estimated=0|1 wall_s=X productive_s=X input_s=X comm_s=X
 *   startup_s=X gap_s=X checkpoint_s=X goodput=X energy_j=X energy_wh=X
 *   gco2=X j_per_sample=X j_per_token=X energy_source=S mfu_steps=N
 *   device=TEXT (last: it may hold spaces)
 * NaN prints as "nan".
 */
#include <stdio.h>
#include <stdlib.h>

#include "analysis/efficiency.h"
#include "store/loader.h"
#include "store/store.h"

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: eff_driver LOGDIR [PEAK [GRID]]\n");
        return 2;
    }
    tfb_eff_opts o = {argc > 2 ? atof(argv[2]) : 0,
                      argc > 3 ? atof(argv[3]) : 0};
    tfb_store *st;
    tfb_loader *l;
    tfb_loader_opts lo = {0, 1, stderr};
    if (tfb_store_create(&st, argv[1]) < 0 ||
        tfb_loader_create(&l, st, &lo) < 0 || tfb_loader_pass(l) < 0) {
        fprintf(stderr, "cannot load %s\n", argv[1]);
        return 1;
    }
    tfb_loader_stop(l);
    tfb_run **runs;
    size_t n;
    if (tfb_store_runs(st, &runs, &n) < 0)
        return 1;
    for (size_t i = 0; i < n; i++) {
        /* the GPU trace's device name, as a caller holding the store
         * passes it (waiting for the load: a test) */
        char tdev[128];
        int has_dev =
            tfb_eff_trace_device(st, runs[i], -1, tdev, sizeof tdev) == 1;
        tfb_eff_run e;
        int rc = tfb_eff_run_compute_dev(runs[i], &o, has_dev ? tdev : NULL,
                                         &e);
        tfb_step_value *v;
        size_t nv = 0;
        if (tfb_eff_mfu_series(runs[i], &o, &v, &nv) == 0)
            free(v);
        const tfb_eff_goodput *g = &e.goodput;
        printf("run=%s rc=%d steps=%lld samples_per_s=%.17g tokens_per_s=%.17g "
               "tflops=%.17g mfu_pct=%.17g peak_tflops=%.17g peak_source=%s "
               "dtype=%s dtype_assumed=%d flops_estimated=%d wall_s=%.17g "
               "productive_s=%.17g input_s=%.17g comm_s=%.17g startup_s=%.17g "
               "gap_s=%.17g checkpoint_s=%.17g goodput=%.17g energy_j=%.17g "
               "energy_wh=%.17g gco2=%.17g j_per_sample=%.17g j_per_token=%.17g "
               "energy_source=%s mfu_steps=%zu device=%s\n",
               tfb_run_name(runs[i]), rc, (long long)e.steps, e.samples_per_s,
               e.tokens_per_s, e.tflops, e.mfu_pct, e.peak_tflops,
               e.peak_source[0] ? e.peak_source : "-",
               e.dtype[0] ? e.dtype : "-", e.dtype_assumed, e.flops_estimated,
               g->wall_s, g->productive_s, g->input_s, g->comm_s, g->startup_s,
               g->gap_s, g->checkpoint_s, g->goodput, e.energy_j, e.energy_wh,
               e.gco2, e.j_per_sample, e.j_per_token,
               e.energy_source[0] ? e.energy_source : "-", nv, e.device);
    }
    free(runs);
    tfb_store_destroy(st);
    return 0;
}
