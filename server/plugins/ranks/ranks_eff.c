/*
 * ranks_eff.c - each rank's efficiency for the per-rank table: MFU and
 * energy (analysis/efficiency.h) and the bus bandwidth of its collectives
 * (analysis/comm_bandwidth.h), with the efficiency flags (--peak_tflops,
 * --grid_gco2_per_kwh, --link_gbps) as the dashboard that declares them
 * holds them (read through core's option table, never by its name).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/comm_bandwidth.h"
#include "analysis/efficiency.h"
#include "base/errors.h"
#include "core/plugin.h"
#include "plugins/ranks/ranks_job.h"
#include "trace/trace.h"

static double option_double(const char *name)
{
    const tfb_option *o = tfb_plugin_option_find(name, strlen(name));
    return o && o->type == TFB_OPT_DOUBLE && o->dest ? *(double *)o->dest
                                                     : 0.0;
}

/* A rank's bus bandwidth over all its collectives: each row's busbw
 * weighted by its time (so Σ bytes x factor / Σ seconds), rows whose
 * factor is unknown left out; NaN when none is left. */
static double rank_busbw(const tfb_coll_row *rows, size_t n)
{
    double w = 0, t = 0;
    for (size_t i = 0; i < n; i++)
        if (isfinite(rows[i].busbw_gbps) && rows[i].seconds > 0) {
            w += rows[i].busbw_gbps * rows[i].seconds;
            t += rows[i].seconds;
        }
    return t > 0 ? w / t : NAN;
}

/* One rank's row; NaN: unknown (null in the JSON). */
typedef struct rank_eff {
    int64_t rank;
    const char *run;
    double mfu_pct, energy_j, busbw_gbps;
} rank_eff;

static const tfb_json_field rank_eff_fields[] = {
    TFB_JSON_FIELD(rank_eff, rank, I64),
    TFB_JSON_FIELD(rank_eff, run, STR),
    TFB_JSON_FIELD(rank_eff, mfu_pct, NUM),
    TFB_JSON_FIELD(rank_eff, energy_j, NUM),
    TFB_JSON_FIELD(rank_eff, busbw_gbps, NUM),
};

int tfb_ranks_eff_json(tfb_json *j, tfb_store *s, const tfb_ranks_job *job,
                       int *loading)
{
    *loading = 0;
    tfb_eff_opts o;
    memset(&o, 0, sizeof o);
    o.peak_tflops = option_double("peak_tflops");
    o.grid_gco2_per_kwh = option_double("grid_gco2_per_kwh");
    double link = option_double("link_gbps");
    tfb_json_key(j, "efficiency");
    tfb_json_array_begin(j);
    int rc = 0;
    for (size_t m = 0; m < job->n_members && rc == 0; m++) {
        const tfb_ranks_member *mb = &job->members[m];
        tfb_eff_run e;
        int erc = tfb_eff_run_compute(mb->run, &o, &e);
        if (erc < 0 && erc != TFB_ENOENT) {
            rc = erc;
            break;
        }
        /* tfb_coll_run_rows waits for the rank's trace: a trace still
         * loading gives no bandwidth yet (null, and *loading), never a
         * request that waits on every rank's load in turn. */
        tfb_trace *tr = NULL;
        tfb_trace_status st;
        rc = tfb_trace_get(s, mb->run, 0, &tr, &st);
        if (rc < 0)
            break;
        tfb_trace_release(tr);
        tfb_coll_row *rows = NULL;
        size_t n = 0;
        if (st.state == TFB_TRACE_LOADING)
            *loading = 1;
        else
            rc = tfb_coll_run_rows(mb->run, link, &rows, &n);
        if (rc < 0)
            break;
        rank_eff re = {.rank = mb->rank, .run = mb->run_name,
                       .mfu_pct = erc == 0 ? e.mfu_pct : NAN,
                       .energy_j = erc == 0 ? e.energy_j : NAN,
                       .busbw_gbps = rank_busbw(rows, n)};
        free(rows);
        TFB_JSON_STRUCT(j, &re, rank_eff_fields);
    }
    tfb_json_array_end(j);
    return rc;
}
