/*
 * gen_ranks_logdir.c - writes distributed jobs with libtfboard, for the
 * ranks plugin's browser test and benchmark. Values are synthetic and
 * deterministic (no sleeping): each rank logs pipeline/step_ms,
 * pipeline/input_ms and comm/ms per step at explicit wall times, as
 * tfb_step_end / tfb_comm_end would in a synchronous data-parallel job
 * (every rank's step ends together; the fast ranks wait in communication
 * for the slow one).
 *
 * usage:
 *   gen_ranks_logdir LOGDIR            the browser test's logdir:
 *     train/rank-0000{0..7}  8 ranks x 300 steps, rank 5 25 % slower;
 *     bad/rank-00000, rank-00001  ranks 0 and 1 of a world of 4;
 *     bad/rank-00002          rank 2 of a world of 3 (world sizes that
 *                             disagree);
 *     bad/rank-00005          rank 1 again (a repeated rank);
 *     bad/rank-00003          a rank directory with no event file.
 *   gen_ranks_logdir LOGDIR RANKS STEPS   one job "big" of RANKS x STEPS
 *     (rank RANKS/3 20 % slower), for the benchmark.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "tfboard.h"

static uint64_t g_x = 0x9E3779B97F4A7C15ull;
static double rnd(void)
{
    g_x ^= g_x << 13;
    g_x ^= g_x >> 7;
    g_x ^= g_x << 17;
    return (double)(g_x >> 11) / 9007199254740992.0;
}

static int open_rank(tfb_writer **w, const char *logdir, const char *job,
                     int rank, int world, const char *dir_override)
{
    tfb_writer_opts o;
    tfb_writer_opts_init(&o);
    o.rank = rank;
    o.world_size = world;
    o.job = job;
    o.host = "gen-host";
    if (dir_override)
        return tfb_writer_open(w, dir_override, &o);
    return tfb_writer_open_rank(w, logdir, &o);
}

/* One rank's steps. own: its compute + input per step (ms); slowest: the
 * slowest rank's own time that step, which sets the step time of all. */
static int write_job(const char *logdir, const char *job, int ranks,
                     int steps, int slow_rank, double slow_factor)
{
    /* An hour ago: the runs' wall times stay near their file_version's. */
    double base = (double)time(NULL) - 3600.0;
    double *slowest = malloc((size_t)steps * sizeof *slowest);
    double *own = malloc((size_t)steps * (size_t)ranks * sizeof *own);
    if (!slowest || !own)
        return 1;
    for (int s = 0; s < steps; s++) {
        slowest[s] = 0;
        for (int r = 0; r < ranks; r++) {
            double o = 20.0 * (1 + 0.04 * rnd()) *
                       (r == slow_rank ? slow_factor : 1.0);
            own[(size_t)s * (size_t)ranks + (size_t)r] = o;
            if (o > slowest[s])
                slowest[s] = o;
        }
    }
    for (int r = 0; r < ranks; r++) {
        tfb_writer *w;
        int rc = open_rank(&w, logdir, job, r, ranks, NULL);
        if (rc < 0) {
            fprintf(stderr, "open rank %d: %s\n", r, tfb_strerror(rc));
            return 1;
        }
        double wall = base;
        for (int s = 0; s < steps; s++) {
            double o = own[(size_t)s * (size_t)ranks + (size_t)r];
            double allreduce = 2.0; /* the transfer itself */
            double comm = slowest[s] - o + allreduce;
            double step = o + comm;
            double input = 1.0 + 0.2 * rnd();
            /* The ranks finish a step within a fraction of a ms. */
            wall += (slowest[s] + allreduce) / 1000.0;
            double end = wall + 0.0003 * rnd() + (r == 0 ? 0.001 : 0.0);
            tfb_scalar_at(w, TFB_TAG_STEP_MS, step, s, end);
            tfb_scalar_at(w, TFB_TAG_INPUT_MS, input, s, end);
            tfb_scalar_at(w, TFB_TAG_COMM_MS, comm, s, end);
        }
        rc = tfb_writer_close(w);
        if (rc < 0) {
            fprintf(stderr, "close rank %d: %s\n", r, tfb_strerror(rc));
            return 1;
        }
    }
    free(slowest);
    free(own);
    return 0;
}

static int write_bad(const char *logdir)
{
    char dir[4096];
    struct {
        int rank, world;
        const char *dir;
    } rs[] = {{0, 4, "rank-00000"},
              {1, 4, "rank-00001"},
              {2, 3, "rank-00002"},  /* another world size */
              {1, 4, "rank-00005"}}; /* rank 1 again */
    for (size_t i = 0; i < sizeof rs / sizeof rs[0]; i++) {
        snprintf(dir, sizeof dir, "%s/bad/%s", logdir, rs[i].dir);
        tfb_writer *w;
        int rc = open_rank(&w, logdir, "bad", rs[i].rank, rs[i].world, dir);
        if (rc < 0) {
            fprintf(stderr, "open %s: %s\n", dir, tfb_strerror(rc));
            return 1;
        }
        for (int s = 0; s < 50; s++) {
            double wall = (double)time(NULL) - 3600.0 + 0.03 * s;
            tfb_scalar_at(w, TFB_TAG_STEP_MS, 30.0 + rnd(), s, wall);
            tfb_scalar_at(w, TFB_TAG_INPUT_MS, 2.0, s, wall);
            tfb_scalar_at(w, TFB_TAG_COMM_MS, 5.0, s, wall);
        }
        if (tfb_writer_close(w) < 0)
            return 1;
    }
    snprintf(dir, sizeof dir, "%s/bad/rank-00003", logdir);
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
        perror(dir);
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 2) {
        if (write_job(argv[1], "train", 8, 300, 5, 1.25))
            return 1;
        return write_bad(argv[1]);
    }
    if (argc == 4) {
        int ranks = atoi(argv[2]), steps = atoi(argv[3]);
        if (ranks < 1 || steps < 1)
            return 2;
        return write_job(argv[1], "big", ranks, steps, ranks / 3, 1.2);
    }
    fprintf(stderr, "usage: gen_ranks_logdir LOGDIR [RANKS STEPS]\n");
    return 2;
}
