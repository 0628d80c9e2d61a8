/*
 * bench_ranks_job.c - the Ranks dashboard at scale (issue 11, item 5):
 *  1. a job of RANKS x STEPS written as event files by gen_ranks_logdir
 *     (libtfboard's writer, one writer per rank), loaded by the server's
 *     loader, then the work of /data/plugin/ranks/job: find the jobs, read
 *     each rank's series, analyse, write the JSON (target: load + route
 *     under 2 s for 256 x 20,000);
 *  2. 8 ranks' GPU traces of KERNELS kernels each (nsys-schema SQLite,
 *     10 % NCCL), the work of /data/plugin/ranks/gpu: load the traces
 *     through the gpu plugin's background loader (the 8 side by side),
 *     classify, breakdown and overlap (target: under 5 s for 8 x 1 M);
 *     then again on the loaded (cached) traces.
 * Prints figures; asserts nothing about time.
 *
 * usage: bench_ranks_job GEN_RANKS_LOGDIR [RANKS STEPS [KERNELS]]
 */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "store/loader.h"
#include "plugins/ranks/ranks_job.h"
#include "store/store.h"
#include "tfboard.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void check(int rc, const char *what)
{
    if (rc < 0) {
        fprintf(stderr, "bench_ranks_job: %s: %s\n", what, tfb_strerror(rc));
        exit(1);
    }
}

static double load(tfb_store **st, const char *dir)
{
    check(tfb_store_create(st, dir), "store");
    tfb_loader *l;
    tfb_loader_opts lo = {0, 0, NULL};
    check(tfb_loader_create(&l, *st, &lo), "loader");
    double t0 = now_s();
    check(tfb_loader_pass(l), "pass");
    double t = now_s() - t0;
    tfb_loader_stop(l);
    return t;
}

static void bench_job(const char *gen, const char *dir, int ranks, int steps)
{
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "'%s' '%s' %d %d", gen, dir, ranks, steps);
    double t0 = now_s();
    if (system(cmd) != 0) {
        fprintf(stderr, "bench_ranks_job: %s failed\n", cmd);
        exit(1);
    }
    double t_gen = now_s() - t0;
    tfb_store *st;
    double t_load = load(&st, dir);
    tfb_load_progress p;
    tfb_store_progress(st, &p);
    for (int rep = 0; rep < 3; rep++) {
        t0 = now_s();
        tfb_ranks_job *jobs;
        size_t nj;
        check(tfb_ranks_find_jobs(st, &jobs, &nj), "jobs");
        double t_jobs = now_s() - t0;
        const tfb_ranks_job *jb = tfb_ranks_job_find(jobs, nj, "big");
        if (!jb || jb->n_members != (size_t)ranks) {
            fprintf(stderr, "bench_ranks_job: job not found whole\n");
            exit(1);
        }
        tfb_ranks_opts o;
        tfb_ranks_opts_init(&o);
        tfb_ranks_result *res;
        double t1 = now_s();
        check(tfb_ranks_job_analyze(jb, &o, &res), "analyze");
        double t_an = now_s() - t1;
        t1 = now_s();
        tfb_json j;
        tfb_json_init(&j);
        tfb_ranks_job_json(&j, jb, res, &o, TFB_RANKS_M_STEP, 1);
        size_t len;
        char *body = tfb_json_take(&j, &len);
        double t_json = now_s() - t1;
        double t_route = now_s() - t0;
        printf("job %d ranks x %d steps: generate %.2f s, load %.3f s "
               "(%.1f MB, %llu points); route: jobs %.3f s + collect and "
               "analyse %.3f s + JSON %.3f s (%.2f MB) = %.3f s; "
               "load + route %.3f s; stragglers %zu (rank %d)\n",
               ranks, steps, t_gen, t_load, (double)p.bytes_done / 1e6,
               (unsigned long long)p.points, t_jobs, t_an, t_json,
               (double)len / 1e6, t_route, t_load + t_route,
               res->n_stragglers,
               res->n_stragglers ? (int)res->ranks[res->stragglers[0]].rank
                                 : -1);
        free(body);
        tfb_ranks_result_free(res);
        tfb_ranks_jobs_free(jobs, nj);
    }
    tfb_store_destroy(st);
}

static uint64_t g_x = 88172645463325252ull;
static uint64_t rnd(void)
{
    g_x ^= g_x << 13;
    g_x ^= g_x >> 7;
    g_x ^= g_x << 17;
    return g_x;
}

/* nsys-schema trace of n kernels on 4 streams (10 % NCCL on stream 13). */
static void write_trace(const char *path, long n)
{
    sqlite3 *db;
    if (sqlite3_open(path, &db) != SQLITE_OK) {
        fprintf(stderr, "bench_ranks_job: open %s\n", path);
        exit(1);
    }
    sqlite3_exec(db,
                 "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;"
                 "CREATE TABLE StringIds(id INTEGER PRIMARY KEY, value TEXT);"
                 "INSERT INTO StringIds VALUES(0,'volta_sgemm_128x64_nn'),"
                 "(1,'ncclDevKernel_AllReduce_Sum_f32_RING_LL'),"
                 "(2,'void elementwise_kernel<128, 4>(int, float*)');"
                 "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL(start INTEGER, "
                 "end INTEGER, deviceId INTEGER, contextId INTEGER, "
                 "streamId INTEGER, correlationId INTEGER, "
                 "demangledName INTEGER, shortName INTEGER);"
                 "BEGIN;",
                 NULL, NULL, NULL);
    sqlite3_stmt *ins;
    sqlite3_prepare_v2(db,
                       "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES"
                       "(?,?,0,1,?,?,?,?)",
                       -1, &ins, NULL);
    int64_t t[4] = {0, 0, 0, 0};
    for (long i = 0; i < n; i++) {
        int nccl = i % 10 == 0;
        int s = nccl ? 3 : (int)(rnd() % 3);
        int64_t start = t[s] + (int64_t)(rnd() % 2000);
        int64_t end = start + 500 + (int64_t)(rnd() % (nccl ? 20000 : 5000));
        t[s] = end;
        int name = nccl ? 1 : (int)(i & 1) * 2;
        sqlite3_bind_int64(ins, 1, 1700000000000000000ll + start);
        sqlite3_bind_int64(ins, 2, 1700000000000000000ll + end);
        sqlite3_bind_int(ins, 3, s == 3 ? 13 : 7 + s);
        sqlite3_bind_int64(ins, 4, i);
        sqlite3_bind_int(ins, 5, name);
        sqlite3_bind_int(ins, 6, name);
        sqlite3_step(ins);
        sqlite3_reset(ins);
    }
    sqlite3_finalize(ins);
    sqlite3_exec(db, "COMMIT;", NULL, NULL, NULL);
    sqlite3_close(db);
}

static void bench_gpu(const char *dir, long kernels)
{
    const int ranks = 8;
    double t0 = now_s();
    for (int r = 0; r < ranks; r++) {
        /* Room for any dir (at most 4200 bytes, see main) and the rest. */
        char d[4300], f[4400];
        snprintf(d, sizeof d, "%s/gpujob", dir);
        mkdir(d, 0755);
        snprintf(d, sizeof d, "%s/gpujob/rank-%05d", dir, r);
        mkdir(d, 0755);
        snprintf(f, sizeof f, "%s/report1.sqlite", d);
        write_trace(f, kernels);
    }
    double t_gen = now_s() - t0;
    tfb_store *st;
    load(&st, dir);
    tfb_ranks_job *jobs;
    size_t nj;
    check(tfb_ranks_find_jobs(st, &jobs, &nj), "jobs");
    const tfb_ranks_job *jb = tfb_ranks_job_find(jobs, nj, "gpujob");
    if (!jb || jb->n_members != (size_t)ranks) {
        fprintf(stderr, "bench_ranks_job: gpu job not found whole\n");
        exit(1);
    }
    for (int rep = 0; rep < 2; rep++) {
        t0 = now_s();
        tfb_ranks_gpu_view g;
        check(tfb_ranks_job_gpu(st, jb, -1, TFB_TRACE_WINDOW_ALL, &g), "gpu");
        double t = now_s() - t0;
        printf("gpu %d ranks x %ld kernels: write %.2f s; %s: traces + "
               "breakdown + overlap %.3f s; traced %zu, overlap %.3f\n",
               ranks, kernels, t_gen, rep ? "cached traces" : "first load",
               t, g.n_traced, g.overlap);
        tfb_ranks_gpu_view_free(&g);
    }
    tfb_ranks_jobs_free(jobs, nj);
    tfb_store_destroy(st);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr,
                "usage: bench_ranks_job GEN_RANKS_LOGDIR [RANKS STEPS "
                "[KERNELS]]\n");
        return 2;
    }
    int ranks = argc > 3 ? atoi(argv[2]) : 256;
    int steps = argc > 3 ? atoi(argv[3]) : 20000;
    long kernels = argc > 4 ? atol(argv[4]) : 1000000;
    char dir[] = "/tmp/tfb_bench_ranks_XXXXXX";
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    bench_job(argv[1], dir, ranks, steps);
    char gdir[4200];
    snprintf(gdir, sizeof gdir, "%s/gpu", dir);
    mkdir(gdir, 0755);
    bench_gpu(gdir, kernels);
    char cmd[4300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "bench_ranks_job: could not remove %s\n", dir);
    return 0;
}
