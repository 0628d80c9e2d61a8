/*
 * hparams_analysis.h - the hyperparameters of runs, decoded from the
 * TensorBoard hparams plugin records (HParamsPluginData) that PyTorch's
 * add_hparams, tensorboardX, Keras / TF's hparams API and libtfboard's
 * tfb_hparams write (field numbers: shared/REFERENCE.md, "Hyperparameters").
 *
 * Where the records are: the store keeps the latest value of each tag of
 * plugin "hparams" per run (tfb_run_records). Writers differ:
 *  - PyTorch / tensorboardX add_hparams: experiment, session_start_info and
 *    session_end_info in a sub-run <run>/<time>; no tensor (PyTorch 1.13)
 *    or an empty one (newer);
 *  - Keras / TF hp.hparams: session_start_info (hparams, group_name,
 *    start_time_secs) in the run; the experiment (hp.hparams_config) often
 *    in another run (the logdir's root);
 *  - libtfboard: all three in the run.
 * So each record is classified by the oneof it holds, not by its tag, and
 * the experiment-wide view (tfb_hparams_experiment) merges every run.
 *
 * Thread-safety: all functions are reentrant and read the store only
 * through its thread-safe read side. Results are owned by the caller.
 */
#ifndef TFB_HPARAMS_ANALYSIS_H
#define TFB_HPARAMS_ANALYSIS_H

#include <stddef.h>
#include <stdint.h>

#include "store/store.h"
#include "base/strtab.h"

/* Bounds on the work of one request (every route decodes every run's
 * records): a session keeps at most TFB_HPARAMS_MAX_PER_SESSION distinct
 * hparams (the rest are counted in n_left_out and named in the run's
 * note), and the experiment view at most TFB_HPARAMS_MAX_METRICS metric
 * tags (metrics_left_out). Every lookup is hashed, so a route's work is
 * linear in what it reads. */
#define TFB_HPARAMS_MAX_PER_SESSION 65536
#define TFB_HPARAMS_MAX_METRICS 1024

/* The kind of a google.protobuf.Value. */
typedef enum {
    TFB_HPV_NONE = 0,   /* null_value, or no value field */
    TFB_HPV_NUMBER,     /* number_value (double) */
    TFB_HPV_STRING,     /* string_value */
    TFB_HPV_BOOL,       /* bool_value */
    TFB_HPV_OTHER       /* struct_value / list_value: not shown as a value */
} tfb_hpv_kind;

typedef struct tfb_hparam_value {
    tfb_hpv_kind kind;
    double number;      /* TFB_HPV_NUMBER */
    char *str;          /* TFB_HPV_STRING: len bytes and a NUL after
                           them; may hold any bytes the writer put,
                           NULs too (escape it when shown) */
    size_t len;         /* TFB_HPV_STRING: str's length */
    int boolean;        /* TFB_HPV_BOOL: 0 or 1 */
} tfb_hparam_value;

/* One hyperparameter of a session: name = value. */
typedef struct tfb_hparam_kv {
    char *name;         /* name_len bytes (NULs kept) and a NUL */
    size_t name_len;
    tfb_hparam_value value;
} tfb_hparam_kv;

/* HParamInfo of an experiment. type: the proto's DataType (0 unset,
 * 1 string, 2 bool, 3 float64). */
typedef struct tfb_hparam_info {
    char *name, *display_name, *description;
    size_t name_len;
    int type;
    tfb_hparam_value *domain;   /* domain_discrete values */
    size_t n_domain;
    int has_interval;           /* domain_interval */
    double min_value, max_value;
} tfb_hparam_info;

/* MetricInfo of an experiment. */
typedef struct tfb_hparam_metric {
    char *group, *tag, *display_name, *description;
    int dataset_type;
} tfb_hparam_metric;

/* SessionEndInfo.status values. */
typedef enum {
    TFB_HPS_UNKNOWN = 0,
    TFB_HPS_SUCCESS = 1,
    TFB_HPS_FAILURE = 2,
    TFB_HPS_RUNNING = 3
} tfb_hparams_session_status;

/* What one run's hparams records say. Absent parts have their has_ flag
 * 0, NULL strings / empty arrays and NaN times. */
typedef struct tfb_hparams_set {
    /* session_start_info */
    int has_start;
    tfb_hparam_kv *hparams;     /* in the order the writer put them */
    size_t n_hparams;
    size_t n_left_out;          /* distinct names past the bound */
    tfb_strtab index;           /* name -> position + 1 (internal) */
    char *group_name;           /* "" when not written; NULs kept */
    size_t group_name_len;
    char *model_uri;
    double start_time;          /* start_time_secs, NaN when not written */
    /* session_end_info */
    int has_end;
    int status;                 /* tfb_hparams_session_status (any int the
                                   file held; unknown ones shown as such) */
    double end_time;            /* end_time_secs, NaN when not written */
    /* experiment (when this run holds one) */
    int has_experiment;
    char *exp_name, *exp_description, *exp_user;
    double exp_time_created;    /* NaN when not written */
    tfb_hparam_info *infos;
    size_t n_infos;
    tfb_hparam_metric *metrics;
    size_t n_metrics;
    /* Records of plugin "hparams" that could not be decoded: their count
     * and the first one's tag (NULL when none). They are skipped. */
    size_t n_bad;
    char *bad_tag;
} tfb_hparams_set;

/* Decodes the hparams records of run r into *out (zeroed first). Returns
 * 0 (also when the run has no hparams: check has_start / has_end /
 * has_experiment), TFB_ENOMEM. Malformed records are counted in n_bad,
 * never an error. Free with tfb_hparams_set_free (also after a failure). */
int tfb_run_hparams(tfb_store *s, tfb_run *r, tfb_hparams_set *out);
void tfb_hparams_set_free(tfb_hparams_set *h);

/* 1 when run r has any hparams record (cheap enough for has_data). */
int tfb_run_has_hparams(tfb_store *s, tfb_run *r);

/* Decodes one HParamsPluginData (content of a record) into *out, merging
 * into what is there: the part it holds replaces that part. Returns 0,
 * TFB_EINVAL for malformed bytes (out keeps its earlier parts),
 * TFB_ENOMEM. Exposed for tests and other readers. */
int tfb_hparams_decode(const uint8_t *content, size_t len,
                       tfb_hparams_set *out);

/* ---- the experiment: every run together -------------------------------- */

/* One hyperparameter over all runs. type: from an experiment's HParamInfo
 * when one names it, else inferred from the values (1 string, 2 bool,
 * 3 float64; 0 when values of several kinds are seen). */
typedef struct tfb_hparam_column {
    char *name, *display_name, *description;
    size_t name_len;            /* name's length (NULs kept) */
    int type;
    size_t n_runs;              /* runs that set it */
    /* The distinct values seen (and the experiment's discrete domain),
     * sorted: numbers ascending, then strings, then bools. At most
     * TFB_HPARAM_MAX_DISTINCT; more_values says some were left out. */
    tfb_hparam_value *values;
    size_t n_values;
    int more_values;
    /* numbers: min and max seen (NaN when none); has_interval and the
     * declared interval when an experiment gave one */
    double min_seen, max_seen;
    int has_interval;
    double min_value, max_value;
} tfb_hparam_column;

#define TFB_HPARAM_MAX_DISTINCT 256

typedef struct tfb_hparams_experiment {
    tfb_hparam_column *columns; /* experiment order first, then by name */
    size_t n_columns;
    /* metric tags: the experiments' metric infos (merged by tag), in order */
    tfb_hparam_metric *metrics;
    size_t n_metrics;
    size_t metrics_left_out;    /* past TFB_HPARAMS_MAX_METRICS */
    size_t n_runs;              /* runs with a session_start_info */
    size_t n_experiments;       /* runs holding an experiment record */
} tfb_hparams_experiment;

/* Gathers every run's hparams. Returns 0 or TFB_ENOMEM. Free with
 * tfb_hparams_experiment_free (also after a failure). */
int tfb_hparams_experiment_get(tfb_store *s, tfb_hparams_experiment *out);
void tfb_hparams_experiment_free(tfb_hparams_experiment *e);

/* Only the metric tags of the experiments among sets (runs already
 * decoded by the caller, n of them), merged as tfb_hparams_experiment_get
 * merges them: out->metrics, n_metrics, metrics_left_out and
 * n_experiments are set, no columns. For a route that decodes each run
 * once. Returns 0 or TFB_ENOMEM; free with tfb_hparams_experiment_free. */
int tfb_hparams_metrics_of(const tfb_hparams_set *sets, size_t n,
                           tfb_hparams_experiment *out);

/* ---- helpers ------------------------------------------------------------ */

/* Total order of values used for sorting: kind (number < string < bool <
 * none/other), then value. */
int tfb_hparam_value_cmp(const tfb_hparam_value *a, const tfb_hparam_value *b);
/* The value's text as the runs table and group keys show it (numbers in
 * shortest round-trip form, bools true/false, strings as they are, "" for
 * none). Writes at most cap bytes incl. NUL; returns the full length. */
size_t tfb_hparam_value_text(const tfb_hparam_value *v, char *buf,
                             size_t cap);
/* The value of hparam `name` in h, or NULL (hashed). */
const tfb_hparam_value *tfb_hparams_find(const tfb_hparams_set *h,
                                         const char *name);
const tfb_hparam_value *tfb_hparams_findn(const tfb_hparams_set *h,
                                          const char *name, size_t len);
/* Status as text: "unknown", "success", "failure", "running" or
 * "status <n>". buf must hold 24 bytes. */
const char *tfb_hparams_status_name(int status, char *buf);

#endif
