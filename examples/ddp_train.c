/*
 * ddp_train.c - a data-parallel job that really is distributed: N worker
 * processes (ranks), each with its own tfboard writer, synchronised every
 * step through a shared-memory barrier that stands in for the all-reduce.
 *
 * Per step each rank
 *   - takes its batch from a loader thread that prepares batches ahead
 *     (each takes --input-ms, a sleep standing in for decoding; up to
 *     --prefetch batches wait ready, as with a DataLoader's workers), the
 *     wait timed with tfb_input_begin/end: the ranks wait for input only
 *     when the loader falls behind. (A loader run inside the step would
 *     put every wake-up delay of a busy machine on the step's critical
 *     path: on 2 shared cores its 0.3 ms sleeps took 2 ms, which made the
 *     straggler really wait 15 % of its step for input.);
 *   - computes for --compute-ms of wall time (x --slow-factor on
 *     --slow-rank): real dense matmuls on the host for the first tenth of
 *     it (at most 0.5 ms: the ranks share the cores, and one rank's burst
 *     would delay another's wake-up from its input wait), then a wait until
 *     the end of the budget, as a host waits for its
 *     GPU to finish the step's kernels. The budget is in time, not in work,
 *     and the ranks mostly sleep, so the slow rank is that much slower even
 *     on a loaded machine where several ranks share a core: it stands in
 *     for a slower device;
 *   - "all-reduces" its result: writes it into shared memory and waits at a
 *     process-shared barrier (the wait is logged with tfb_comm_begin/end),
 *     then averages every rank's value, which it logs as "loss".
 * So the fast ranks wait in the all-reduce for the slow one, as in a real
 * job with a straggler: every rank's step time is the same, and the slow
 * rank is the one that waits least.
 *
 * Each rank opens its writer after fork() (a writer's threads do not
 * survive a fork) with tfb_writer_open_rank, so the job is laid out as
 *     <logdir>/<job>/rank-00000/ ... rank-<N-1>/
 * each with its rank record (job, rank, world size).
 *
 *   ddp_train --logdir runs --job ddp --ranks 4 --steps 200 \
 *             --slow-rank 2 --slow-factor 1.3
 *
 * At the end the parent prints one line, e.g.
 *   job=ddp ranks=4 steps=200 dir=runs/ddp
 */
#include <tfboard.h>

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define N 32 /* matmul size: one product is 65 k flops, so the time budget
             * is overshot by little */
#define MAX_RANKS 64
#define HOST_MS 0.5 /* most host matmul time per step */

typedef struct config {
    const char *logdir, *job;
    long ranks, steps, slow_rank;
    double slow_factor, compute_ms, input_ms;
    long prefetch;
} config;

/* A rank's loader thread and the count of batches ready for the step. */
typedef struct loader {
    pthread_mutex_t mu;
    pthread_cond_t changed;
    long ready, made, total, depth;
    double ms;
} loader;

/* What the ranks share: the barrier and the values being "all-reduced",
 * double-buffered by step parity (a rank can be at most one step ahead of
 * a reader of the previous step's values: it must pass the next barrier,
 * which every reader reaches only after reading). */
typedef struct shared {
    pthread_barrier_t barrier;
    double value[2][MAX_RANKS];
} shared;

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static void sleep_ms(double ms)
{
    struct timespec ts = {(time_t)(ms / 1e3),
                          (long)(fmod(ms, 1e3) * 1e6)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

/* c = a . b, then a is nudged by c so the next product differs. */
static void matmul(float a[N][N], float b[N][N], float c[N][N])
{
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
            float s = 0;
            for (int k = 0; k < N; k++)
                s += a[i][k] * b[k][j];
            c[i][j] = s;
        }
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++)
            a[i][j] = 0.999f * a[i][j] + 1e-4f * c[i][j];
}

/* Matmuls for the first tenth of `ms` (at most HOST_MS), then a wait to its end (absolute,
 * so a late wake-up is not added twice); returns a checksum of the last
 * product, and the matmuls done in *products. */
static double compute_for(double ms, float a[N][N], float b[N][N],
                          float c[N][N], long *products)
{
    *products = 0;
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    double start = (double)t0.tv_sec * 1e3 + (double)t0.tv_nsec * 1e-6;
    double host_until = start + (ms / 10 < HOST_MS ? ms / 10 : HOST_MS);
    do {
        matmul(a, b, c);
        ++*products;
    } while (now_ms() < host_until);
    long long end_ns = (long long)t0.tv_sec * 1000000000LL + t0.tv_nsec +
                       (long long)(ms * 1e6);
    struct timespec until = {(time_t)(end_ns / 1000000000LL),
                             (long)(end_ns % 1000000000LL)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, NULL) ==
           EINTR) {
    }
    double sum = 0;
    for (int i = 0; i < N; i++)
        sum += c[i][i];
    return sum / N;
}

static void *loader_main(void *arg)
{
    loader *l = arg;
    for (;;) {
        pthread_mutex_lock(&l->mu);
        while (l->ready >= l->depth && l->made < l->total)
            pthread_cond_wait(&l->changed, &l->mu);
        int done = l->made >= l->total;
        pthread_mutex_unlock(&l->mu);
        if (done)
            return NULL;
        sleep_ms(l->ms); /* the batch's preparation, off the step */
        pthread_mutex_lock(&l->mu);
        l->ready++;
        l->made++;
        pthread_cond_broadcast(&l->changed);
        pthread_mutex_unlock(&l->mu);
    }
}

/* Waits until the loader has a batch ready and takes it. The loader hears
 * of the free slot from wake_loader, after the input wait is timed: waking
 * a thread can hand it the CPU at once, and the rank's wait for its turn
 * on a busy machine is not a wait for input. */
static void next_batch(loader *l)
{
    pthread_mutex_lock(&l->mu);
    while (l->ready == 0)
        pthread_cond_wait(&l->changed, &l->mu);
    l->ready--;
    pthread_mutex_unlock(&l->mu);
}

static void wake_loader(loader *l)
{
    pthread_mutex_lock(&l->mu);
    pthread_cond_broadcast(&l->changed);
    pthread_mutex_unlock(&l->mu);
}

static int run_rank(const config *cfg, int rank, shared *sh)
{
    tfb_writer_opts o;
    tfb_writer_opts_init(&o);
    o.rank = rank;
    o.world_size = (int)cfg->ranks;
    o.local_rank = rank; /* one host */
    o.job = cfg->job;
    tfb_writer *w;
    int rc = tfb_writer_open_rank(&w, cfg->logdir, &o);
    if (rc < 0) {
        fprintf(stderr, "rank %d: cannot open writer: %s\n", rank,
                tfb_strerror(rc));
        /* Still take part in the barriers, or the others would hang. */
        w = NULL;
    }
    static float a[N][N], b[N][N], c[N][N];
    unsigned seed = 1234u + (unsigned)rank;
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
            seed = seed * 1103515245u + 12345u;
            a[i][j] = (float)((seed >> 16) & 0xff) / 256.0f;
            b[i][j] = (i == j) ? 0.5f : 0.01f;
        }
    double factor = rank == cfg->slow_rank ? cfg->slow_factor : 1.0;
    /* The loader starts with the job (after fork: threads do not survive
     * one). */
    loader ld = {.total = cfg->steps, .depth = cfg->prefetch,
                 .ms = cfg->input_ms};
    pthread_mutex_init(&ld.mu, NULL);
    pthread_cond_init(&ld.changed, NULL);
    pthread_t lt;
    if (pthread_create(&lt, NULL, loader_main, &ld) != 0) {
        fprintf(stderr, "rank %d: cannot start the loader\n", rank);
        /* Without batches it would never reach the barrier: the parent
         * stops the job when this rank exits. */
        tfb_writer_close(w);
        return 1;
    }
    for (long s = 0; s < cfg->steps; s++) {
        tfb_step_begin(w, s);
        tfb_input_begin(w);
        next_batch(&ld);
        tfb_input_end(w);
        wake_loader(&ld);
        long products;
        double v = compute_for(cfg->compute_ms * factor, a, b, c, &products);
        /* The work done, counted: 2 N^3 FLOPs per product and 2 N^2 for
         * the nudge of a (the emulated GPU's wait does none). */
        tfb_step_work(w, (double)products * (2.0 * N * N * N + 2.0 * N * N),
                      0, 0);
        sh->value[s & 1][rank] = v;
        /* The "all-reduce" exchanges one double per rank, through the
         * barrier: its bytes go to the comm/collectives record. */
        tfb_comm_begin_bytes(w, "allreduce", sizeof(double));
        int e = pthread_barrier_wait(&sh->barrier);
        tfb_comm_end(w);
        if (e != 0 && e != PTHREAD_BARRIER_SERIAL_THREAD) {
            fprintf(stderr, "rank %d: barrier: %s\n", rank, strerror(e));
            tfb_writer_close(w);
            return 1; /* the process exits: the loader goes with it */
        }
        double mean = 0;
        for (long r = 0; r < cfg->ranks; r++)
            mean += sh->value[s & 1][r];
        mean /= (double)cfg->ranks;
        tfb_step_end(w);
        tfb_scalar(w, "loss", mean, s);
    }
    pthread_join(lt, NULL); /* it stops after the job's last batch */
    rc = tfb_writer_close(w);
    if (rc < 0) {
        fprintf(stderr, "rank %d: close: %s\n", rank, tfb_strerror(rc));
        return 1;
    }
    return 0;
}

static void usage(void)
{
    fprintf(stderr,
            "usage: ddp_train [--logdir DIR] [--job NAME] [--ranks N]\n"
            "                 [--steps S] [--compute-ms MS] [--input-ms MS]\n"
            "                 [--prefetch N]\n"
            "                 [--slow-rank R --slow-factor F]\n");
}

static int parse(int argc, char **argv, config *cfg)
{
    *cfg = (config){.logdir = "runs", .job = "ddp", .ranks = 4,
                    .steps = 100, .slow_rank = -1, .slow_factor = 1.0,
                    .compute_ms = 4.0, .input_ms = 0.3, .prefetch = 4};
    for (int i = 1; i < argc; i++) {
        const char *k = argv[i];
        if (strcmp(k, "--help") == 0 || strcmp(k, "-h") == 0)
            return -1;
        if (i + 1 >= argc)
            return -1;
        const char *v = argv[++i];
        char *end;
        errno = 0;
        if (strcmp(k, "--logdir") == 0)
            cfg->logdir = v;
        else if (strcmp(k, "--job") == 0)
            cfg->job = v;
        else if (strcmp(k, "--ranks") == 0)
            cfg->ranks = strtol(v, &end, 10);
        else if (strcmp(k, "--steps") == 0)
            cfg->steps = strtol(v, &end, 10);
        else if (strcmp(k, "--slow-rank") == 0)
            cfg->slow_rank = strtol(v, &end, 10);
        else if (strcmp(k, "--slow-factor") == 0)
            cfg->slow_factor = strtod(v, &end);
        else if (strcmp(k, "--compute-ms") == 0)
            cfg->compute_ms = strtod(v, &end);
        else if (strcmp(k, "--input-ms") == 0)
            cfg->input_ms = strtod(v, &end);
        else if (strcmp(k, "--prefetch") == 0)
            cfg->prefetch = strtol(v, &end, 10);
        else
            return -1;
        if (strcmp(k, "--logdir") != 0 && strcmp(k, "--job") != 0 &&
            (errno || *end))
            return -1;
    }
    if (cfg->ranks < 1 || cfg->ranks > MAX_RANKS || cfg->steps < 1 ||
        !(cfg->slow_factor >= 1.0) || cfg->slow_factor > 100 ||
        !(cfg->compute_ms >= 0) || !(cfg->input_ms >= 0) ||
        cfg->prefetch < 1 || cfg->prefetch > 1024 ||
        cfg->slow_rank >= cfg->ranks || !*cfg->job)
        return -1;
    return 0;
}

int main(int argc, char **argv)
{
    config cfg;
    if (parse(argc, argv, &cfg) < 0) {
        usage();
        return 2;
    }
    shared *sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE,
                      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (sh == MAP_FAILED) {
        perror("mmap");
        return 1;
    }
    pthread_barrierattr_t ba;
    pthread_barrierattr_init(&ba);
    pthread_barrierattr_setpshared(&ba, PTHREAD_PROCESS_SHARED);
    if (pthread_barrier_init(&sh->barrier, &ba, (unsigned)cfg.ranks) != 0) {
        fprintf(stderr, "cannot make the barrier\n");
        return 1;
    }
    pthread_barrierattr_destroy(&ba);
    fflush(NULL);
    pid_t pids[MAX_RANKS];
    long started = 0;
    for (long r = 0; r < cfg.ranks; r++) {
        pid_t p = fork();
        if (p < 0) {
            perror("fork");
            break;
        }
        if (p == 0)
            _exit(run_rank(&cfg, (int)r, sh));
        pids[started++] = p;
    }
    int failed = started < cfg.ranks;
    if (failed) {
        /* The started ranks would wait at the barrier for ever. */
        for (long r = 0; r < started; r++)
            kill(pids[r], SIGTERM);
    }
    long left = started;
    while (left > 0) {
        int st;
        pid_t p = waitpid(-1, &st, 0);
        if (p < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        for (long r = 0; r < started; r++) {
            if (pids[r] != p)
                continue;
            pids[r] = 0;
            left--;
            if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
                if (!failed)
                    fprintf(stderr, "rank %ld failed; stopping the job\n", r);
                failed = 1;
                /* A rank that is gone leaves the others at the barrier. */
                for (long q = 0; q < started; q++)
                    if (pids[q] > 0)
                        kill(pids[q], SIGTERM);
            }
        }
    }
    pthread_barrier_destroy(&sh->barrier);
    munmap(sh, sizeof *sh);
    if (failed)
        return 1;
    printf("job=%s ranks=%ld steps=%ld dir=%s/%s\n", cfg.job, cfg.ranks,
           cfg.steps, cfg.logdir, cfg.job);
    return 0;
}
