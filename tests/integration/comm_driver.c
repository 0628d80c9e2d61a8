/*
 * comm_driver.c - the NCCL bandwidth rows of every run of a logdir, for
 * test_comm_bandwidth.py: comm_driver LOGDIR LINK_GBPS
 * Loads LOGDIR once as `tfboard report` does (event files, rank and comm
 * records, Kineto traces through the real trace loader) and prints, per
 * run, each row of tfb_coll_run_rows (server/analysis/comm_bandwidth.h)
 * as one JSON object a line; LINK_GBPS 0 takes the link from the peak
 * table. NaN prints as null.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "analysis/comm_bandwidth.h"
#include "report/report_load.h"
#include "store/store.h"
#include "trace/trace.h"

static void num(const char *key, double v)
{
    if (isfinite(v))
        printf(", \"%s\": %.17g", key, v);
    else
        printf(", \"%s\": null", key);
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: comm_driver LOGDIR LINK_GBPS\n");
        return 2;
    }
    /* built traces, never another test's cached ones */
    tfb_trace_colcache_configure("", NULL, NULL);
    tfb_store *store = NULL;
    if (tfb_report_open(argv[1], 1, &store) < 0)
        return 2;
    tfb_run **runs = NULL;
    size_t nr = 0;
    if (tfb_store_runs(store, &runs, &nr) < 0)
        return 2;
    double link = atof(argv[2]);
    int bad = 0;
    for (size_t i = 0; i < nr; i++) {
        tfb_coll_row *rows = NULL;
        size_t n = 0;
        int rc = tfb_coll_run_rows(runs[i], link, &rows, &n);
        if (rc < 0) {
            printf("{\"run\": \"%s\", \"error\": %d}\n",
                   tfb_run_name(runs[i]), rc);
            bad = 1;
            continue;
        }
        for (size_t k = 0; k < n; k++) {
            const tfb_coll_row *r = &rows[k];
            printf("{\"run\": \"%s\", \"rank\": %d, \"kind\": \"%s\", "
                   "\"bucket_lo\": %llu, \"count\": %llu, \"bytes\": %llu, "
                   "\"source\": \"%s\", \"below\": %d",
                   tfb_run_name(runs[i]), r->rank, tfb_coll_kind_name(r->kind),
                   (unsigned long long)r->bucket_lo,
                   (unsigned long long)r->count,
                   (unsigned long long)r->bytes, r->source, r->below);
            num("seconds", r->seconds);
            num("algbw_gbps", r->algbw_gbps);
            num("busbw_gbps", r->busbw_gbps);
            num("link_gbps", r->link_gbps);
            num("link_pct", r->link_pct);
            puts("}");
        }
        free(rows);
    }
    free(runs);
    tfb_store_destroy(store);
    return bad;
}
