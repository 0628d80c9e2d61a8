/*
 * test_ranks.c - distributed jobs in the library: rank resolution from the
 * options and the launchers' environment variables (and their order), the
 * rank directory of tfb_writer_open_rank, the rank record read back with
 * the reader and decoded with tfb_value_rank_info (bad records too),
 * communication spans (comm/ms, state errors) and the rank in the trace
 * store's META table.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "collector/event.h"
#include "test_util.h"
#include "tfboard.h"
#include "collector/trace_store.h"

static const char *const k_vars[] = {
    "RANK", "WORLD_SIZE", "LOCAL_RANK", "OMPI_COMM_WORLD_RANK",
    "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_PROCID",
    "SLURM_NTASKS", "SLURM_LOCALID", "TFB_JOB", "TORCHELASTIC_RUN_ID",
    "SLURM_JOB_ID"};

static int clear_env(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof k_vars / sizeof k_vars[0]; i++)
        unsetenv(k_vars[i]);
    return 0;
}

/* What the event file says: the rank record (if any, and whether it is
 * the first record after file_version) and the comm/ms values. */
typedef struct file_view {
    int has_rank, rank_second, n_records;
    int32_t rank, world_size, local_rank;
    char job[160], host[160];
    int n_comm;
    double comm_ms[16];
    int64_t comm_step[16];
} file_view;

static void read_view(const char *dir, file_view *out)
{
    memset(out, 0, sizeof *out);
    char *path = tu_find_event_file(dir);
    assert_non_null(path);
    tfb_reader *r;
    assert_int_equal(tfb_reader_open(&r, path), 0);
    tfb_event ev;
    while (tfb_reader_next(r, &ev) == 1) {
        out->n_records++;
        if (ev.kind != TFB_EVENT_SUMMARY)
            continue;
        size_t pos = 0;
        tfb_value v;
        while (tfb_summary_next(ev.summary, ev.summary_len, &pos, &v) == 1) {
            if (v.plugin_name.len == strlen(TFB_RANK_PLUGIN) &&
                !memcmp(v.plugin_name.ptr, TFB_RANK_PLUGIN, v.plugin_name.len)) {
                assert_int_equal(v.kind, TFB_VALUE_TENSOR);
                tfb_rank_info ri;
                assert_int_equal(tfb_value_rank_info(&v, &ri), 0);
                out->has_rank++;
                out->rank_second = out->n_records == 2;
                out->rank = ri.rank;
                out->world_size = ri.world_size;
                out->local_rank = ri.local_rank;
                snprintf(out->job, sizeof out->job, "%.*s", (int)ri.job_len,
                         ri.job);
                snprintf(out->host, sizeof out->host, "%.*s",
                         (int)ri.host_len, ri.host);
            } else if (v.kind == TFB_VALUE_SCALAR &&
                       v.tag.len == strlen(TFB_TAG_COMM_MS) &&
                       !memcmp(v.tag.ptr, TFB_TAG_COMM_MS, v.tag.len) &&
                       out->n_comm < 16) {
                out->comm_step[out->n_comm] = ev.step;
                out->comm_ms[out->n_comm++] = v.scalar;
            }
        }
    }
    tfb_reader_close(r);
    free(path);
}

static int is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static void test_torchrun_env_and_rank_dir(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp();
    setenv("RANK", "3", 1);
    setenv("WORLD_SIZE", "8", 1);
    setenv("LOCAL_RANK", "1", 1);
    setenv("TFB_JOB", "my job/1", 1);         /* cleaned to my_job_1 */
    setenv("TORCHELASTIC_RUN_ID", "elastic", 1); /* TFB_JOB wins */
    setenv("OMPI_COMM_WORLD_RANK", "5", 1);    /* RANK's family wins */
    tfb_writer *w;
    assert_int_equal(tfb_writer_open_rank(&w, dir, NULL), 0);
    char rdir[1024];
    snprintf(rdir, sizeof rdir, "%s/my_job_1/rank-00003", dir);
    assert_string_equal(tfb_writer_run_dir(w), rdir);
    tfb_rank_info ri;
    assert_int_equal(tfb_writer_get_rank(w, &ri), 0);
    assert_int_equal(ri.rank, 3);
    assert_int_equal(ri.world_size, 8);
    assert_int_equal(ri.local_rank, 1);
    assert_string_equal(ri.job, "my_job_1");
    assert_int_equal(ri.job_len, 8);
    assert_int_equal(tfb_scalar(w, "loss", 1.0, 1), 0);
    assert_int_equal(tfb_writer_close(w), 0);
    assert_true(is_dir(rdir));
    file_view fv;
    read_view(rdir, &fv);
    assert_int_equal(fv.has_rank, 1);
    assert_true(fv.rank_second);
    assert_int_equal(fv.rank, 3);
    assert_int_equal(fv.world_size, 8);
    assert_int_equal(fv.local_rank, 1);
    assert_string_equal(fv.job, "my_job_1");
    assert_true(strlen(fv.host) > 0);
    tu_rmtree(dir);
    free(dir);
}

static void test_fallback_families(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp();
    tfb_writer *w;
    tfb_rank_info ri;
    /* Open MPI, and a job name from Slurm. */
    setenv("OMPI_COMM_WORLD_RANK", "2", 1);
    setenv("OMPI_COMM_WORLD_SIZE", "4", 1);
    setenv("SLURM_PROCID", "7", 1);
    setenv("SLURM_NTASKS", "9", 1);
    setenv("SLURM_JOB_ID", "4242", 1);
    assert_int_equal(tfb_writer_open(&w, dir, NULL), 0);
    assert_string_equal(tfb_writer_run_dir(w), dir); /* exact directory */
    assert_int_equal(tfb_writer_get_rank(w, &ri), 0);
    assert_int_equal(ri.rank, 2);
    assert_int_equal(ri.world_size, 4);
    assert_int_equal(ri.local_rank, -1);
    assert_string_equal(ri.job, "4242");
    assert_int_equal(tfb_writer_close(w), 0);
    /* Slurm alone; a world size that cannot hold the rank is unknown. */
    unsetenv("OMPI_COMM_WORLD_RANK");
    setenv("SLURM_NTASKS", "7", 1);
    setenv("SLURM_LOCALID", "0", 1);
    setenv("TORCHELASTIC_RUN_ID", "te", 1); /* before SLURM_JOB_ID */
    assert_int_equal(tfb_writer_open_rank(&w, dir, NULL), 0);
    assert_int_equal(tfb_writer_get_rank(w, &ri), 0);
    assert_int_equal(ri.rank, 7);
    assert_int_equal(ri.world_size, 0);
    assert_int_equal(ri.local_rank, 0);
    assert_string_equal(ri.job, "te");
    assert_int_equal(tfb_writer_close(w), 0);
    char rdir[1024];
    snprintf(rdir, sizeof rdir, "%s/te/rank-00007", dir);
    assert_true(is_dir(rdir));
    /* A rank variable that is not a whole number is skipped. */
    setenv("RANK", "1x", 1);
    assert_int_equal(tfb_writer_open(&w, dir, NULL), 0);
    assert_int_equal(tfb_writer_get_rank(w, &ri), 0);
    assert_int_equal(ri.rank, 7);
    assert_int_equal(tfb_writer_close(w), 0);
    tu_rmtree(dir);
    free(dir);
}

static void test_no_launcher(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp();
    tfb_writer *w;
    tfb_rank_info ri;
    /* Plain open: no rank, no record, as before. */
    assert_int_equal(tfb_writer_open(&w, dir, NULL), 0);
    assert_int_equal(tfb_writer_get_rank(w, &ri), TFB_ENOENT);
    assert_int_equal(tfb_writer_close(w), 0);
    file_view fv;
    read_view(dir, &fv);
    assert_int_equal(fv.has_rank, 0);
    assert_int_equal(fv.n_records, 1); /* file_version only */
    /* A zeroed options struct (with its size) is "unset" too; without
     * its size it is refused. */
    tfb_writer_opts zero;
    memset(&zero, 0, sizeof zero);
    assert_int_equal(tfb_writer_open(&w, dir, &zero), TFB_EINVAL);
    zero.size = sizeof zero;
    char sub[1024];
    snprintf(sub, sizeof sub, "%s/zero", dir);
    assert_int_equal(tfb_writer_open(&w, sub, &zero), 0);
    assert_int_equal(tfb_writer_get_rank(w, &ri), TFB_ENOENT);
    assert_int_equal(tfb_writer_close(w), 0);
    /* open_rank without a launcher: rank 0 of 1 in the default job. */
    assert_int_equal(tfb_writer_open_rank(&w, dir, NULL), 0);
    assert_int_equal(tfb_writer_close(w), 0);
    char rdir[1024];
    snprintf(rdir, sizeof rdir, "%s/" TFB_RANK_DEFAULT_JOB "/rank-00000", dir);
    read_view(rdir, &fv);
    assert_int_equal(fv.has_rank, 1);
    assert_int_equal(fv.rank, 0);
    assert_int_equal(fv.world_size, 1);
    tu_rmtree(dir);
    free(dir);
}

static void test_opts_override(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp();
    setenv("RANK", "6", 1);
    setenv("WORLD_SIZE", "8", 1);
    setenv("TFB_JOB", "envjob", 1);
    tfb_writer_opts o;
    tfb_writer_opts_init(&o);
    assert_int_equal(o.rank, -1);
    assert_int_equal(o.world_size, 0);
    assert_int_equal(o.local_rank, -1);
    assert_null(o.job);
    assert_null(o.host);
    tfb_writer *w = NULL;
    o.world_size = 4;
    o.rank = 4; /* out of range */
    assert_int_equal(tfb_writer_open_rank(&w, dir, &o), TFB_EINVAL);
    assert_int_equal(tfb_writer_open(&w, dir, &o), TFB_EINVAL);
    assert_null(w);
    o.rank = 1;
    char job[] = "optjob", host[] = "node-a";
    o.job = job;
    o.host = host;
    assert_int_equal(tfb_writer_open_rank(&w, dir, &o), 0);
    job[0] = 'X'; /* copied at open */
    tfb_rank_info ri;
    assert_int_equal(tfb_writer_get_rank(w, &ri), 0);
    assert_int_equal(ri.rank, 1);
    assert_int_equal(ri.world_size, 4);
    assert_int_equal(ri.local_rank, -1);
    assert_string_equal(ri.job, "optjob");
    assert_string_equal(ri.host, "node-a");
    assert_int_equal(tfb_writer_close(w), 0);
    char rdir[1024];
    snprintf(rdir, sizeof rdir, "%s/optjob/rank-00001", dir);
    file_view fv;
    read_view(rdir, &fv);
    assert_int_equal(fv.rank, 1);
    assert_string_equal(fv.host, "node-a");
    assert_int_equal(tfb_writer_open_rank(NULL, dir, &o), TFB_EINVAL);
    assert_int_equal(tfb_writer_open_rank(&w, "", &o), TFB_EINVAL);
    tu_rmtree(dir);
    free(dir);
}

/* Decodes a hand-made rank value carrying `text`. */
static int decode_text(const char *plugin, const char *text,
                       tfb_rank_info *out)
{
    tfb_ev_value v = {.kind = TFB_EV_STRING, .tag = TFB_RANK_TAG,
                      .tag_len = strlen(TFB_RANK_TAG), .plugin = plugin,
                      .plugin_len = strlen(plugin), .str = text,
                      .str_len = strlen(text)};
    size_t n = tfb_ev_record_size(0, &v);
    uint8_t *rec = malloc(n);
    assert_non_null(rec);
    tfb_ev_record_write(rec, 1.0, 0, &v);
    tfb_seal_records(rec, n);
    /* The Event payload sits after the 12-byte header: find its summary
     * through the reader's own decoding by writing it to a file. */
    char *dir = tu_mkdtemp();
    char path[1024];
    snprintf(path, sizeof path, "%s/events.out.tfevents.1.x", dir);
    assert_int_equal(tu_write_file(path, rec, n), 0);
    free(rec);
    tfb_reader *r;
    assert_int_equal(tfb_reader_open(&r, path), 0);
    tfb_event ev;
    assert_int_equal(tfb_reader_next(r, &ev), 1);
    size_t pos = 0;
    tfb_value val;
    assert_int_equal(tfb_summary_next(ev.summary, ev.summary_len, &pos, &val),
                     1);
    int rc = tfb_value_rank_info(&val, out);
    tfb_reader_close(r);
    tu_rmtree(dir);
    free(dir);
    return rc;
}

static void test_decode_bad_records(void **state)
{
    (void)state;
    tfb_rank_info ri;
    memset(&ri, 0x5a, sizeof ri);
    /* Unknown keys are skipped; order does not matter. */
    assert_int_equal(decode_text(TFB_RANK_PLUGIN,
                                 "rank=2\nfuture=x\nversion=2\nworld_size=3",
                                 &ri), 0);
    assert_int_equal(ri.rank, 2);
    assert_int_equal(ri.world_size, 3);
    assert_int_equal(ri.local_rank, -1);
    assert_int_equal(ri.job_len, 0);
    tfb_rank_info keep = ri;
    assert_int_equal(decode_text(TFB_RANK_PLUGIN, "rank=2\n", &ri),
                     TFB_ECORRUPT); /* no version */
    assert_int_equal(decode_text(TFB_RANK_PLUGIN, "version=1\nrank=x\n", &ri),
                     TFB_ECORRUPT);
    assert_int_equal(decode_text(TFB_RANK_PLUGIN, "version=1\n", &ri),
                     TFB_ECORRUPT); /* no rank */
    assert_int_equal(decode_text(TFB_RANK_PLUGIN,
                                 "version=1\nrank=4\nworld_size=4\n", &ri),
                     TFB_ECORRUPT);
    assert_int_equal(decode_text("text", "version=1\nrank=0\n", &ri),
                     TFB_EINVAL);
    assert_memory_equal(&ri, &keep, sizeof ri); /* untouched on failure */
    assert_int_equal(tfb_value_rank_info(NULL, &ri), TFB_EINVAL);
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

static void test_comm_spans(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp();
    tfb_writer *w;
    assert_int_equal(tfb_writer_open(&w, dir, NULL), 0);
    assert_int_equal(tfb_comm_begin(NULL, "x"), TFB_EINVAL);
    assert_int_equal(tfb_comm_end(NULL), TFB_EINVAL);
    assert_int_equal(tfb_comm_begin(w, "x"), TFB_ESTATE); /* no step yet */
    /* Step 0: no comm span yet, so no comm/ms. */
    assert_int_equal(tfb_step_begin(w, 0), 0);
    assert_int_equal(tfb_comm_end(w), TFB_ESTATE);
    assert_int_equal(tfb_step_end(w), 0);
    /* Step 1: two spans, summed; the state rules hold. */
    assert_int_equal(tfb_step_begin(w, 1), 0);
    assert_int_equal(tfb_input_begin(w), 0);
    assert_int_equal(tfb_comm_begin(w, "allreduce"), TFB_ESTATE);
    assert_int_equal(tfb_input_end(w), 0);
    assert_int_equal(tfb_comm_begin(w, "allreduce"), 0);
    assert_int_equal(tfb_comm_begin(w, "again"), TFB_ESTATE);
    assert_int_equal(tfb_input_begin(w), TFB_ESTATE);
    assert_int_equal(tfb_step_end(w), TFB_ESTATE);
    sleep_ms(20);
    assert_int_equal(tfb_comm_end(w), 0);
    assert_int_equal(tfb_comm_begin(w, NULL), 0);
    sleep_ms(10);
    assert_int_equal(tfb_comm_end(w), 0);
    assert_int_equal(tfb_step_end(w), 0);
    /* Step 2: none; logged as 0 once the writer has seen spans. */
    assert_int_equal(tfb_step_begin(w, 2), 0);
    assert_int_equal(tfb_step_end(w), 0);
    assert_int_equal(tfb_writer_close(w), 0);
    file_view fv;
    read_view(dir, &fv);
    assert_int_equal(fv.n_comm, 2);
    assert_int_equal(fv.comm_step[0], 1);
    assert_true(fv.comm_ms[0] >= 30.0);
    assert_int_equal(fv.comm_step[1], 2);
    assert_true(fv.comm_ms[1] == 0.0);
    tu_rmtree(dir);
    free(dir);
}

static int meta_callback(void *arg, int n, char **vals, char **cols)
{
    (void)cols;
    char *buf = arg;
    if (n == 2)
        snprintf(buf + strlen(buf), 512 - strlen(buf), "%s=%s;", vals[0],
                 vals[1] ? vals[1] : "NULL");
    return 0;
}

static void test_trace_meta(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp();
    tfb_writer_opts o;
    tfb_writer_opts_init(&o);
    o.rank = 2;
    o.world_size = 4;
    o.local_rank = 0;
    o.job = "tracejob";
    tfb_writer *w;
    assert_int_equal(tfb_writer_open(&w, dir, &o), 0);
    tfb_trace_store *s;
    assert_int_equal(tfb_trace_store_open(&s, dir, NULL), 0);
    assert_int_equal(tfb_trace_store_rank_meta(s, w), 0);
    assert_int_equal(tfb_trace_store_attach(w, s), 0);
    assert_int_equal(tfb_trace_host_span(w, TFB_HOST_SPAN_COMM, 3, 100, 250),
                     0);
    assert_int_equal(tfb_trace_store_flush(s), 0);
    char path[1024];
    snprintf(path, sizeof path, "%s", tfb_trace_store_path(s));
    assert_int_equal(tfb_trace_store_attach(w, NULL), 0);
    assert_int_equal(tfb_trace_store_close(s), 0);
    assert_int_equal(tfb_writer_close(w), 0);
    sqlite3 *db;
    assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL),
                     SQLITE_OK);
    char buf[512] = "";
    assert_int_equal(sqlite3_exec(db,
        "SELECT key, value FROM META WHERE key IN"
        " ('rank','world_size','local_rank','job') ORDER BY key",
        meta_callback, buf, NULL), SQLITE_OK);
    assert_string_equal(buf, "job=tracejob;local_rank=0;rank=2;world_size=4;");
    buf[0] = 0;
    assert_int_equal(sqlite3_exec(db,
        "SELECT kind, step || ':' || (\"end\" - start) FROM TFB_HOST_SPANS",
        meta_callback, buf, NULL), SQLITE_OK);
    assert_string_equal(buf, "comm=3:150;");
    sqlite3_close(db);
    tu_rmtree(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_torchrun_env_and_rank_dir, clear_env),
        cmocka_unit_test_setup(test_fallback_families, clear_env),
        cmocka_unit_test_setup(test_no_launcher, clear_env),
        cmocka_unit_test_setup(test_opts_override, clear_env),
        cmocka_unit_test_setup(test_decode_bad_records, clear_env),
        cmocka_unit_test_setup(test_comm_spans, clear_env),
        cmocka_unit_test_setup(test_trace_meta, clear_env),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
