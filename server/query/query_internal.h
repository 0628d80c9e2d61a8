/*
 * query_internal.h - what the files of the query layer share behind
 * query.h: the connection's struct, and the generic cursor of the
 * run-side tables (query_vtab.c) that each table fills a run at a time.
 * Not for use outside server/query/.
 */
#ifndef TFB_SERVER_QUERY_INTERNAL_H
#define TFB_SERVER_QUERY_INTERNAL_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#include "base/strtab.h"
#include "base/vec.h"
#include "query/query.h"
#include "store/store.h"

/* Rows one fill of a run-side table makes at most before SQLite reads
 * them: with TFB_QUERY_CHUNK this bounds what a cursor holds. */
#define TFB_QUERY_FILL_ROWS 1024

struct qrunmemo;

/* A column of runs_wide past the fixed ones. */
typedef enum { QW_HPARAM = 0, QW_TAG_LAST, QW_TAG_MIN } qwide_kind;
typedef struct qwide_col {
    qwide_kind kind;
    char *key;          /* the hparam's name or the tag (malloc'd) */
    size_t key_len;
    char *col;          /* the column's name (malloc'd) */
} qwide_col;

struct tfb_query {
    sqlite3 *db;
    tfb_store *store;
    int internal;          /* 1 while the layer runs its own statements */
    char refused[160];     /* what the authorizer refused, "" if nothing */
    int64_t deadline_ns;   /* tfb_mono_now_ns deadline; 0 = none */
    int timed_out;
    int64_t rows_touched;
    /* runs_wide's columns as declared now, and the store generation
     * they were worked out at; wide_ver grows each time they change (a
     * memo's row follows it) */
    int wide_made;
    uint64_t wide_gen, wide_ver;
    qwide_col *wide;
    size_t n_wide, wide_left_out;
    /* scalar series -> qstats (query_stats.c), by the series' pointer */
    tfb_strtab stats;
    /* run -> qrunmemo (query_runmemo.c), by the run's pointer */
    tfb_strtab runmemo;
    /* every run's memo, runs in name order (tfb_qrun_by_name): kept
     * while the store's run count stays */
    TFB_VEC(struct qrunmemo *) byname;
};

/* The statistics of one scalar series (query_stats.c). min/max are over
 * the finite values (NaN when none); first/last are any value. */
typedef struct qstats {
    tfb_series *s;       /* the key's bytes live here */
    size_t count;        /* points when worked out */
    uint64_t nonfinite;
    double first, last, min, max;
    int64_t last_step;
} qstats;
/* The series' statistics, worked out again only when its count moved.
 * NULL when out of memory. Owned by q. */
const qstats *tfb_qstats_get(tfb_query *q, tfb_series *s);
void tfb_qstats_free(tfb_query *q);

/* The per-run memo (query_runmemo.c): what runs, runs_wide and hparams
 * work out of one run, kept while the run's own generation
 * (tfb_run_generation) stays. Owned by q. */
typedef struct qrunmemo qrunmemo;
/* r's memo, made on first use; NULL when out of memory. */
qrunmemo *tfb_qrun_memo(tfb_query *q, tfb_run *r);
tfb_run *tfb_qrun_memo_run(const qrunmemo *m);
/* Every run's memo, the runs in name order (bytewise, SQLite's BINARY):
 * q's array, valid until the next call (copy it to keep it). Sorted
 * again only when the store's run count moved. 0 or TFB_ENOMEM. */
int tfb_qrun_by_name(tfb_query *q, qrunmemo *const **out, size_t *n);
/* The run's decoded hyperparameters (NULL when out of memory), and its
 * status (a tfb_run_state, or -1 for a run of trace files only), kept
 * when finished or diverged (a running, stalled or crashed run's status
 * follows the clock: judged each time). */
struct tfb_hparams_set;
const struct tfb_hparams_set *tfb_qrun_memo_hparams(tfb_query *q,
                                                    qrunmemo *m);
int tfb_qrun_memo_state(tfb_query *q, qrunmemo *m);
/* The same by the run (a look-up of its memo first). */
const struct tfb_hparams_set *tfb_qrun_hparams(tfb_query *q, tfb_run *r);
int tfb_qrun_state(tfb_query *q, tfb_run *r);
/* Sets ctx to the run's value of runs_wide's column q->wide[w]
 * (w < q->n_wide), worked out once and then kept in the memo's row.
 * SQLITE_OK or SQLITE_NOMEM. */
int tfb_qrun_wide_value(tfb_query *q, qrunmemo *m, size_t w,
                        sqlite3_context *ctx);
/* The same value as xColumn gives it, for runs_wide's own constraint
 * checks: QW_VALUE_NUMBER with *out (a REAL, or a bool's INTEGER 0/1),
 * QW_VALUE_NULL (NULL: a NaN, no such hparam or tag), QW_VALUE_OTHER
 * (TEXT), or -1 when out of memory. */
enum { QW_VALUE_NULL = 0, QW_VALUE_NUMBER = 1, QW_VALUE_OTHER = 2 };
int tfb_qrun_wide_num(tfb_query *q, qrunmemo *m, size_t w, double *out);
/* Asks the CPU to fetch far's memo and what near's points to (its row,
 * its hyperparameters, its run's generation) into the cache: a scan of
 * runs_wide reads 10,000 memos far apart in memory, and without this each
 * row waits for memory several times (NULL: nothing). */
void tfb_qrun_memo_prefetch(const qrunmemo *far, const qrunmemo *near);
void tfb_qrun_free(tfb_query *q);

/* ---- the generic cursor (query_vtab.c) ------------------------------- */

typedef struct qcell {
    int type;           /* SQLITE_NULL, _INTEGER, _FLOAT, _TEXT */
    int64_t i;
    double d;
    const char *s;      /* stable text (the store's names), or NULL: */
    size_t off, len;    /* text at arena + off, len bytes */
} qcell;

typedef struct qcursor qcursor;

typedef struct qtable {
    const char *name;
    const char *schema;    /* CREATE TABLE x(...): column 0 is run */
    int ncol;
    int tag_col;           /* a column xBestIndex takes = on; -1 none */
    int step_col;          /* a column it takes ranges on; -1 none */
    /* Appends the next rows of run c->runs[c->ri] (at most
     * TFB_QUERY_FILL_ROWS; at least one unless the run is over, when it
     * sets c->run_done). 0 or a TFB_E* error. */
    int (*fill)(qcursor *c);
    /* Frees what fill keeps for the current run (NULL: nothing). */
    void (*run_reset)(qcursor *c);
} qtable;

typedef struct qvtab {
    sqlite3_vtab base;
    tfb_query *q;
    const qtable *t;
} qvtab;

struct qcursor {
    sqlite3_vtab_cursor base;
    qvtab *vt;
    tfb_run **runs;
    size_t nruns, ri;
    int run_done;
    int closing;            /* run_reset: the scan ends too */
    uint64_t col_used;      /* xBestIndex's colUsed */
    char *tag;              /* = constraint on tag_col, or NULL */
    int has_lo, has_hi;
    int64_t step_lo, step_hi; /* inclusive bounds (SQLite checks again) */
    /* per-run state of fill */
    tfb_series **series;
    size_t nseries, si, pi;
    int series_loaded;
    void *state;
    /* rows made by the last fill: nrows rows of the table's ncol cells
     * (cells.n = nrows * ncol), their copied text in arena (each string
     * followed by a NUL) */
    TFB_VEC(qcell) cells;
    size_t nrows, row;
    TFB_VEC(char) arena;
    int64_t rowid;
    int eof;
};

/* Row building for fill functions. qc_row starts a row and returns its
 * cells (NULL when out of memory), all SQLITE_NULL. */
qcell *qc_row(qcursor *c);
void qc_int(qcell *x, int64_t v);
void qc_dbl(qcell *x, double v);
void qc_stable(qcell *x, const char *s);         /* the store's names */
int qc_text(qcursor *c, qcell *x, const char *s, size_t len); /* copied */
/* Loads the run's series of kind (the one of c->tag when set) once per
 * run into c->series. 0 or TFB_ENOMEM. */
int qc_series(qcursor *c, tfb_series_kind kind);
/* 1 when a step passes the cursor's range. */
static inline int qc_step_ok(const qcursor *c, int64_t step)
{
    return (!c->has_lo || step >= c->step_lo) &&
           (!c->has_hi || step <= c->step_hi);
}
/* 1 when column i is used by the statement. */
static inline int qc_used(const qcursor *c, int i)
{
    return (c->col_used >> (i < 63 ? i : 63)) & 1;
}

/* The store's runs (tfb_store_runs) sorted by name, bytewise (SQLite's
 * BINARY collation): the order every table reads them in, so that ORDER
 * BY run and GROUP BY run need no sort. */
int tfb_query_runs_by_name(tfb_store *st, tfb_run ***out, size_t *n);

/* Registers table t as an eponymous module of q's connection. */
int tfb_qvtab_register(tfb_query *q, const qtable *t);

extern const qtable tfb_qt_runs, tfb_qt_hparams, tfb_qt_scalars,
    tfb_qt_scalar_stats, tfb_qt_histograms, tfb_qt_histogram_buckets,
    tfb_qt_texts, tfb_qt_images, tfb_qt_steps, tfb_qt_spikes, tfb_qt_alerts;
/* runs_wide (query_wide.c): its module, and the re-declaration of its
 * columns when the store changed. */
int tfb_query_wide_register(tfb_query *q);
int tfb_query_wide_refresh(tfb_query *q);
void tfb_query_wide_free(tfb_query *q);

#endif
