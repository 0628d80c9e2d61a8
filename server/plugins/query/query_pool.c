/*
 * query_pool.c - the query dashboard's engine: worker threads for POST
 * /data/query, pooled connections for run filters and the table listing
 * (query_pool.h).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/deadline.h"
#include "core/sql_engine.h"
#include "plugins/query/query_engine.h"
#include "plugins/query/query_pool.h"
#include "tfboard.h"

#if TFB_QUERY_ENGINE
/* The tables the listing probes, in the order the page shows them (the
 * run side, then the trace side: server/API.md "SQL tables"); a table
 * this build's engine lacks is left out. */
static const char *const listed_tables[] = {
    "runs",        "runs_wide",  "hparams",      "scalars",
    "scalar_stats", "histograms", "histogram_buckets", "texts",
    "images",      "alerts",     "spikes",       "steps",
    "kernels",     "memcpy",     "memset",       "memory_events",
    "host_spans",  "nvtx",       "comms",
};
#endif

/* The page's examples (API.md "Examples" says what each shows). */
static const struct {
    const char *title, *sql;
} examples[] = {
    {"Slowest kernels of a run",
     "SELECT run, name, dur_ns, device, stream, start_ns\n"
     "FROM kernels\n"
     "WHERE run = (SELECT run FROM kernels LIMIT 1)\n"
     "ORDER BY dur_ns DESC\nLIMIT 20"},
    {"Final loss by lr",
     "SELECT h.value AS lr, s.last AS final_loss, s.run\n"
     "FROM scalar_stats s JOIN hparams h ON h.run = s.run AND h.name = 'lr'\n"
     "WHERE s.tag LIKE '%loss%'\nORDER BY 1"},
    {"Runs whose loss rose over the last 10 % of steps",
     "WITH b AS (SELECT run, min(step) AS lo, max(step) AS hi\n"
     "           FROM scalars WHERE tag LIKE '%loss%' GROUP BY run),\n"
     "w AS (SELECT s.run, s.step, s.value FROM scalars s JOIN b USING (run)\n"
     "      WHERE s.tag LIKE '%loss%' AND s.step >= b.hi - (b.hi - b.lo) / 10)\n"
     "SELECT run,\n"
     "  (SELECT value FROM w x WHERE x.run = w.run ORDER BY step LIMIT 1) AS at_start,\n"
     "  (SELECT value FROM w x WHERE x.run = w.run ORDER BY step DESC LIMIT 1) AS at_end\n"
     "FROM w GROUP BY run HAVING at_end > at_start"},
    {"Time between NaN and the first exploding layer",
     "WITH nan AS (SELECT run, min(wall_time) AS t FROM scalars\n"
     "             WHERE tag LIKE '%loss%' AND value IS NULL GROUP BY run),\n"
     "boom AS (SELECT run, tag AS layer, min(wall_time) AS t FROM scalars\n"
     "         WHERE tag LIKE '%grad%' AND abs(value) > 1e3 GROUP BY run, tag)\n"
     "SELECT nan.run,\n"
     "  (SELECT layer FROM boom WHERE boom.run = nan.run ORDER BY t LIMIT 1) AS first_layer,\n"
     "  nan.t - (SELECT min(t) FROM boom WHERE boom.run = nan.run) AS seconds_after\n"
     "FROM nan"},
};

static void write_examples(tfb_json *j)
{
    tfb_json_key(j, "examples");
    tfb_json_array_begin(j);
    for (size_t i = 0; i < sizeof examples / sizeof examples[0]; i++) {
        tfb_json_object_begin(j);
        tfb_json_key(j, "title");
        tfb_json_str(j, examples[i].title);
        tfb_json_key(j, "sql");
        tfb_json_str(j, examples[i].sql);
        tfb_json_object_end(j);
    }
    tfb_json_array_end(j);
}

#if TFB_QUERY_ENGINE

typedef struct job {
    char *sql;
    tfb_http_later *later;
    struct job *next;
} job;

static struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    job *head, *tail;
    size_t queued;
    pthread_t th[QUERY_THREADS];
    int n_th;
    int stopping;
    tfb_store *store;
    query_opts opts;
    tfb_query *spare[FILTER_CONNS_MAX]; /* idle pooled connections */
    int n_spare;
} pool = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};

static tfb_query_limits limits(void)
{
    tfb_query_limits l = {
        .timeout_ms = (int64_t)(pool.opts.timeout_s * 1000.0),
        .max_rows = pool.opts.max_rows,
        .max_mem = pool.opts.max_mem_mb * 1024 * 1024,
    };
    return l;
}

/* ---- the answer of one statement ----------------------------------- */

typedef struct answer {
    tfb_json j;
    int64_t rows;
    int over; /* QUERY_ANSWER_MAX reached: the rows stop there */
} answer;

static int on_cols(void *ctx, int ncol, const char *const *names)
{
    answer *a = ctx;
    tfb_json_key(&a->j, "columns");
    tfb_json_array_begin(&a->j);
    for (int i = 0; i < ncol; i++)
        tfb_json_str(&a->j, names[i]);
    tfb_json_array_end(&a->j);
    tfb_json_key(&a->j, "rows");
    tfb_json_array_begin(&a->j);
    return 0;
}

/* One cell by its SQLite type: integers and reals as numbers (non-finite
 * reals as the API's "Infinity" strings), text as strings, a blob as its
 * size (the answer is JSON text, and a blob can be a gigabyte). */
static void write_cell(tfb_json *j, sqlite3_stmt *st, int i)
{
    switch (sqlite3_column_type(st, i)) {
    case SQLITE_INTEGER:
        tfb_json_i64(j, sqlite3_column_int64(st, i));
        break;
    case SQLITE_FLOAT:
        tfb_json_double(j, sqlite3_column_double(st, i));
        break;
    case SQLITE_TEXT: {
        const char *t = (const char *)sqlite3_column_text(st, i);
        tfb_json_strn(j, t ? t : "", (size_t)sqlite3_column_bytes(st, i));
        break;
    }
    case SQLITE_BLOB: {
        char b[48];
        snprintf(b, sizeof b, "<blob of %d bytes>",
                 sqlite3_column_bytes(st, i));
        tfb_json_str(j, b);
        break;
    }
    default:
        tfb_json_null(j);
    }
}

static int on_row(void *ctx, sqlite3_stmt *st)
{
    answer *a = ctx;
    if (a->j.out.n > QUERY_ANSWER_MAX) {
        a->over = 1;
        return 1; /* stop: the answer is truncated */
    }
    int n = sqlite3_column_count(st);
    tfb_json_array_begin(&a->j);
    for (int i = 0; i < n; i++)
        write_cell(&a->j, st, i);
    tfb_json_array_end(&a->j);
    a->rows++;
    return tfb_json_failed(&a->j) ? 1 : 0;
}

/* Runs sql on q and fills the later's answer. */
static void run_one(tfb_query *q, const char *sql, tfb_http_later *later)
{
    tfb_http_resp *resp = tfb_http_later_resp(later);
    answer a = {0};
    tfb_json_init(&a.j);
    tfb_json_object_begin(&a.j);
    tfb_query_limits lim = limits();
    char err[512] = "";
    int off = -1, truncated = 0;
    int64_t t0 = (int64_t)tfb_mono_now_ns();
    int rc = tfb_query_exec(q, sql, &lim, on_cols, on_row, &a, &truncated,
                            err, sizeof err, &off);
    double ms = (double)((int64_t)tfb_mono_now_ns() - t0) / 1e6;
    if (rc < 0 && !a.over) {
        tfb_json_free(&a.j);
        tfb_json_init(&a.j);
        tfb_json_object_begin(&a.j);
        tfb_json_key(&a.j, "error");
        tfb_json_str(&a.j, err[0] ? err : tfb_strerror(rc));
        tfb_json_key(&a.j, "offset");
        tfb_json_i64(&a.j, off);
        tfb_json_key(&a.j, "elapsed_ms");
        tfb_json_double(&a.j, ms);
        tfb_json_object_end(&a.j);
        size_t len;
        char *text = tfb_json_take(&a.j, &len);
        if (!text)
            tfb_http_error(resp, 500, "out of memory");
        else
            tfb_http_body_take(resp, rc == TFB_ENOMEM ? 500 : 400,
                               "application/json; charset=utf-8", text, len);
        return;
    }
    if (a.rows == 0 && a.j.depth == 1)
        on_cols(&a, 0, NULL); /* a statement without a result set */
    tfb_json_array_end(&a.j);
    tfb_json_key(&a.j, "truncated");
    tfb_json_bool(&a.j, truncated || a.over);
    tfb_json_key(&a.j, "elapsed_ms");
    tfb_json_double(&a.j, ms);
    tfb_json_object_end(&a.j);
    tfb_http_json(resp, &a.j);
}

static void *worker_main(void *arg)
{
    (void)arg;
    tfb_query *q = NULL;
    int orc = tfb_query_open(pool.store, &q);
    pthread_mutex_lock(&pool.mu);
    for (;;) {
        while (!pool.head && !pool.stopping)
            pthread_cond_wait(&pool.cv, &pool.mu);
        if (!pool.head)
            break; /* stopping, nothing left */
        job *jb = pool.head;
        pool.head = jb->next;
        if (!pool.head)
            pool.tail = NULL;
        pool.queued--;
        int stopping = pool.stopping;
        pthread_mutex_unlock(&pool.mu);
        if (stopping)
            tfb_http_error(tfb_http_later_resp(jb->later), 503,
                           "the server is stopping");
        else if (orc < 0)
            tfb_http_error(tfb_http_later_resp(jb->later), 500,
                           "the query engine could not start: %s",
                           tfb_strerror(orc));
        else
            run_one(q, jb->sql, jb->later);
        tfb_http_later_finish(jb->later);
        free(jb->sql);
        free(jb);
        pthread_mutex_lock(&pool.mu);
    }
    pthread_mutex_unlock(&pool.mu);
    if (q)
        tfb_query_close(q);
    return NULL;
}

static void engine_query(tfb_store *s, const char *sql, size_t len,
                         tfb_http_later *later)
{
    (void)s;
    job *jb = calloc(1, sizeof *jb);
    char *copy = jb ? malloc(len + 1) : NULL;
    if (!copy) {
        free(jb);
        tfb_http_error(tfb_http_later_resp(later), 500, "out of memory");
        tfb_http_later_finish(later);
        return;
    }
    memcpy(copy, sql, len + 1);
    jb->sql = copy;
    jb->later = later;
    pthread_mutex_lock(&pool.mu);
    if (pool.stopping || pool.queued >= QUERY_QUEUE_MAX) {
        int stopping = pool.stopping;
        pthread_mutex_unlock(&pool.mu);
        tfb_http_error(tfb_http_later_resp(later), 503,
                       stopping ? "the server is stopping"
                                : "too many queries waiting (%d): try "
                                  "again in a moment",
                       QUERY_QUEUE_MAX);
        tfb_http_later_finish(later);
        free(copy);
        free(jb);
        return;
    }
    if (pool.tail)
        pool.tail->next = jb;
    else
        pool.head = jb;
    pool.tail = jb;
    pool.queued++;
    pthread_cond_signal(&pool.cv);
    pthread_mutex_unlock(&pool.mu);
}

/* A pooled connection (an idle one, else a new one); give it back with
 * conn_put. */
static int conn_get(tfb_store *s, tfb_query **out)
{
    pthread_mutex_lock(&pool.mu);
    if (pool.n_spare > 0) {
        *out = pool.spare[--pool.n_spare];
        pthread_mutex_unlock(&pool.mu);
        return 0;
    }
    pthread_mutex_unlock(&pool.mu);
    return tfb_query_open(s, out);
}

static void conn_put(tfb_query *q)
{
    pthread_mutex_lock(&pool.mu);
    if (!pool.stopping && pool.n_spare < FILTER_CONNS_MAX) {
        pool.spare[pool.n_spare++] = q;
        q = NULL;
    }
    pthread_mutex_unlock(&pool.mu);
    if (q)
        tfb_query_close(q);
}

static int engine_filter(tfb_store *s, const char *expr, char ***names,
                         size_t *n, char *err, size_t errcap, int *err_off)
{
    tfb_query *q;
    int rc = conn_get(s, &q);
    if (rc < 0) {
        snprintf(err, errcap, "the query engine could not start: %s",
                 tfb_strerror(rc));
        return rc;
    }
    tfb_query_limits lim = limits();
    if (lim.timeout_ms <= 0 || lim.timeout_ms > FILTER_TIMEOUT_MS)
        lim.timeout_ms = FILTER_TIMEOUT_MS;
    lim.max_rows = 0; /* every matching run */
    rc = tfb_query_filter_runs(q, expr, &lim, names, n, err, errcap,
                               err_off);
    conn_put(q);
    return rc;
}

static const tfb_sql_engine engine = {
    .query = engine_query,
    .filter_runs = engine_filter,
    .names_free = tfb_query_names_free,
};

int query_pool_start(tfb_store *s, const query_opts *o)
{
    pthread_mutex_lock(&pool.mu);
    pool.store = s;
    pool.opts = *o;
    pool.stopping = 0;
    pthread_mutex_unlock(&pool.mu);
    for (int i = 0; i < QUERY_THREADS; i++) {
        if (pthread_create(&pool.th[i], NULL, worker_main, NULL) != 0)
            break;
        pool.n_th++;
    }
    if (pool.n_th == 0)
        return TFB_ENOMEM;
    tfb_sql_engine_install(&engine);
    return 0;
}

void query_pool_stop(void)
{
    tfb_sql_engine_install(NULL);
    pthread_mutex_lock(&pool.mu);
    pool.stopping = 1;
    pthread_cond_broadcast(&pool.cv);
    pthread_mutex_unlock(&pool.mu);
    for (int i = 0; i < pool.n_th; i++)
        pthread_join(pool.th[i], NULL);
    pool.n_th = 0;
    pthread_mutex_lock(&pool.mu);
    while (pool.n_spare > 0)
        tfb_query_close(pool.spare[--pool.n_spare]);
    pthread_mutex_unlock(&pool.mu);
}

typedef struct listing {
    tfb_json *j;
} listing;

static int list_cols(void *ctx, int ncol, const char *const *names)
{
    listing *l = ctx;
    tfb_json_key(l->j, "columns");
    tfb_json_array_begin(l->j);
    for (int i = 0; i < ncol; i++)
        tfb_json_str(l->j, names[i]);
    tfb_json_array_end(l->j);
    return 0;
}

static int list_row(void *ctx, sqlite3_stmt *st)
{
    (void)ctx;
    (void)st;
    return 0;
}

int query_pool_tables(tfb_store *s, tfb_json *j)
{
    tfb_query *q;
    int rc = conn_get(s, &q);
    if (rc < 0)
        return rc;
    tfb_query_limits lim = {.timeout_ms = FILTER_TIMEOUT_MS, .max_rows = 1,
                            .max_mem = 16 << 20};
    tfb_json_key(j, "tables");
    tfb_json_array_begin(j);
    for (size_t i = 0; i < sizeof listed_tables / sizeof listed_tables[0];
         i++) {
        /* The columns of each table, from a statement that reads no
         * row: a table this engine lacks fails and is left out. */
        char sql[96], err[256];
        snprintf(sql, sizeof sql, "SELECT * FROM \"%s\" LIMIT 0",
                 listed_tables[i]);
        tfb_json probe;
        tfb_json_init(&probe);
        listing l = {&probe};
        int trunc = 0, off = -1;
        tfb_json_object_begin(&probe);
        tfb_json_key(&probe, "name");
        tfb_json_str(&probe, listed_tables[i]);
        if (tfb_query_exec(q, sql, &lim, list_cols, list_row, &l, &trunc,
                           err, sizeof err, &off) == 0) {
            tfb_json_object_end(&probe);
            size_t len;
            char *text = tfb_json_take(&probe, &len);
            if (text)
                tfb_json_raw(j, text, len);
            free(text);
        }
        tfb_json_free(&probe);
    }
    tfb_json_array_end(j);
    conn_put(q);
    write_examples(j);
    return tfb_json_failed(j) ? TFB_ENOMEM : 0;
}

#else /* no query layer in this build */

int query_pool_start(tfb_store *s, const query_opts *o)
{
    (void)s;
    (void)o;
    return 0;
}

void query_pool_stop(void)
{
}

int query_pool_tables(tfb_store *s, tfb_json *j)
{
    (void)s;
    write_examples(j);
    return TFB_ENOTSUP;
}

#endif
