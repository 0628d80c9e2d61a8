/*
 * hparams_groups.h - run groups (runs that differ only by seed, ...) and
 * their mean curve with a band, and the per-run metric summaries of the
 * runs table.
 *
 * Grouping: group_by is "hparam:<name>" (one group per value of that
 * hparam; runs without it are left out) or "regex:<ERE>" (POSIX extended,
 * matched against the run name; the key is the first capture group, or the
 * whole match when the pattern has none; runs that do not match are left
 * out).
 *
 * The rule for the aligned curve of a group, tag T:
 *  - each run's points of T are ordered by step; of several points at one
 *    step the last written counts;
 *  - the step grid is the union of the member runs' steps (every step at
 *    which at least one member has a point);
 *  - at grid step t a run contributes its point at t, or else its last
 *    point before t (carried forward); a run contributes only within its
 *    own span (first step <= t <= last step), so runs that stop early do
 *    not pull the mean flat;
 *  - non-finite values (NaN, +-Inf) are left out of mean, min, max and std
 *    and counted in `nonfinite`; n is the number of finite values;
 *  - std is the population standard deviation (divide by n); a step where
 *    no value is finite has n = 0 and mean/min/max/std NaN.
 *
 * Thread-safety: reentrant; pins one series at a time.
 */
#ifndef TFB_HPARAMS_GROUPS_H
#define TFB_HPARAMS_GROUPS_H

#include <stddef.h>
#include <stdint.h>

#include "core/http_api.h"
#include "store/store.h"
#include "base/vec.h"

/* ---- metric summary of one run ----------------------------------------- */

typedef struct tfb_metric_summary {
    const char *run;       /* the run whose series it is (stable) */
    size_t count;          /* points */
    double last;           /* value at the largest step (last written of
                              equal steps); may be non-finite */
    int64_t last_step;
    int finite;            /* 1 when min/max are set */
    double min, max;       /* over the finite values */
    size_t nonfinite;
} tfb_metric_summary;

/* Summary of scalar tag `tag` of run r, or of r's parent run when r has no
 * such tag (PyTorch's add_hparams writes its hparams into a sub-run
 * <run>/<time> while the training curves stay in <run>). Returns 0,
 * TFB_ENOENT when neither has the tag. */
int tfb_run_metric_summary(tfb_store *s, tfb_run *r, const char *tag,
                           tfb_metric_summary *out);

/* ---- groups ------------------------------------------------------------ */

typedef struct tfb_group_point {
    int64_t step;
    double mean, min, max, std;
    uint32_t n;            /* finite values averaged */
    uint32_t nonfinite;    /* non-finite values left out */
} tfb_group_point;

typedef struct tfb_run_group {
    char *key;             /* the hparam's value as text, or the capture */
    TFB_VEC(char *) runs;  /* member runs (with tag T), in store order */
    tfb_group_point *points;
    size_t n_points;
} tfb_run_group;

typedef struct tfb_run_groups {
    tfb_run_group *groups; /* sorted by key (numbers by value) */
    size_t n_groups;
    size_t n_left_out;     /* runs with tag T in no group */
} tfb_run_groups;

/* Groups the runs named in `only` (n_only names; NULL = every run) that
 * have scalar tag `tag`, by group_by (see the top). Returns 0,
 * TFB_EINVAL with a message in err (a bad group_by or regex), TFB_ENOMEM.
 * Free with tfb_run_groups_free (also after a failure). */
int tfb_run_groups_compute(tfb_store *s, const char *tag,
                           const char *group_by, const char *const *only,
                           size_t n_only, tfb_run_groups *out, char *err,
                           size_t err_len);
void tfb_run_groups_free(tfb_run_groups *g);

/* GET /data/plugin/hparams/groups?tag=T&group_by=G[&runs=<JSON array>] */
int tfb_route_hparams_groups(const tfb_http_req *req, tfb_http_resp *resp);

#endif
