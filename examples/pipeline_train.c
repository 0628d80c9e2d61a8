/*
 * pipeline_train.c - a training loop fed by a real input pipeline, marked
 * with tfboard's step-timing calls, to show what an input-bound run looks
 * like next to one that is not.
 *
 * Loader threads make synthetic batches (each costs --loader-ms of CPU time)
 * and push them into a bounded prefetch queue of --prefetch batches. The
 * training thread pops one batch per step (that wait is the input time) and
 * then runs --step-ms of real compute: a small dense layer trained with SGD.
 *
 *   input-bound:  pipeline_train --logdir runs --run slow \
 *                   --loaders 1 --prefetch 2 --loader-ms 12 --step-ms 3
 *   not:          pipeline_train --logdir runs --run fast \
 *                   --loaders 1 --prefetch 32 --loader-ms 0.5 --step-ms 20
 *
 * At the end it prints one line with the measured figures, e.g.
 *   steps=40 mean_step_ms=12.1 mean_input_ms=9.0 input_fraction=0.744
 */
#include <tfboard.h>

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define FEATURES 64
#define BATCH 32
#define OUTPUTS 16

typedef struct batch {
    float x[BATCH][FEATURES];
    float y[BATCH][OUTPUTS];
} batch;

/* Bounded queue of batch pointers. Batches come from a fixed pool (the
 * queue's depth plus one per loader in flight plus the one being trained
 * on), so nothing is allocated per step. */
typedef struct queue {
    pthread_mutex_t mu;
    pthread_cond_t not_empty, not_full, free_avail;
    batch **ring;
    size_t cap, head, count;
    batch **free_list;
    size_t n_free;
    int stop;
} queue;

typedef struct config {
    const char *logdir, *run;
    long steps, loaders, prefetch;
    double loader_ms, step_ms;
    unsigned seed;
    long prefill;
} config;

typedef struct loader_arg {
    queue *q;
    const config *cfg;
    unsigned seed;
} loader_arg;

static double thread_cpu_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static float next_uniform(unsigned *s)
{
    /* xorshift32: cheap, deterministic per loader. */
    unsigned x = *s;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    *s = x;
    return (float)(x >> 8) / 16777216.0f;
}

/* Makes one batch: a noisy linear target y = x·T with a fixed teacher T,
 * then keeps "augmenting" (re-drawing the noise) until the batch has cost
 * its CPU budget, standing in for decoding and augmentation. */
static void make_batch(batch *b, unsigned *seed, double cost_ms)
{
    double start = thread_cpu_ms();
    do {
        for (int i = 0; i < BATCH; i++)
            for (int f = 0; f < FEATURES; f++)
                b->x[i][f] = next_uniform(seed) * 2.0f - 1.0f;
        for (int i = 0; i < BATCH; i++)
            for (int o = 0; o < OUTPUTS; o++) {
                float acc = 0.0f;
                for (int f = 0; f < FEATURES; f++)
                    acc += b->x[i][f] * (float)((f * 7 + o * 3) % 11 - 5) * 0.1f;
                b->y[i][o] = acc + 0.01f * (next_uniform(seed) - 0.5f);
            }
    } while (thread_cpu_ms() - start < cost_ms);
}

static void *loader_main(void *arg)
{
    loader_arg *la = arg;
    queue *q = la->q;
    for (;;) {
        pthread_mutex_lock(&q->mu);
        while (!q->stop && q->n_free == 0)
            pthread_cond_wait(&q->free_avail, &q->mu);
        if (q->stop) {
            pthread_mutex_unlock(&q->mu);
            return NULL;
        }
        batch *b = q->free_list[--q->n_free];
        pthread_mutex_unlock(&q->mu);

        make_batch(b, &la->seed, la->cfg->loader_ms);

        pthread_mutex_lock(&q->mu);
        while (!q->stop && q->count == q->cap)
            pthread_cond_wait(&q->not_full, &q->mu);
        if (q->stop) {
            q->free_list[q->n_free++] = b;
            pthread_mutex_unlock(&q->mu);
            return NULL;
        }
        q->ring[(q->head + q->count) % q->cap] = b;
        q->count++;
        pthread_cond_signal(&q->not_empty);
        pthread_mutex_unlock(&q->mu);
    }
}

/* Takes the next batch, waiting while the queue is empty. The loaders are
 * told of the free slot by queue_wake_loaders, after the input wait: waking
 * a thread can hand it the CPU at once (on a busy machine the trainer then
 * waits its turn for milliseconds), and that is not waiting for input. */
static batch *queue_pop(queue *q)
{
    pthread_mutex_lock(&q->mu);
    while (q->count == 0)
        pthread_cond_wait(&q->not_empty, &q->mu);
    batch *b = q->ring[q->head];
    q->head = (q->head + 1) % q->cap;
    q->count--;
    pthread_mutex_unlock(&q->mu);
    return b;
}

static void queue_wake_loaders(queue *q)
{
    pthread_mutex_lock(&q->mu);
    pthread_cond_signal(&q->not_full);
    pthread_mutex_unlock(&q->mu);
}

static void queue_recycle(queue *q, batch *b)
{
    pthread_mutex_lock(&q->mu);
    q->free_list[q->n_free++] = b;
    pthread_cond_signal(&q->free_avail);
    pthread_mutex_unlock(&q->mu);
}

/* One SGD pass of a dense layer over the batch; repeated until the step has
 * cost its CPU budget. Returns the mean squared error of the last pass and
 * the passes made in *passes (the step's work). */
static double train_step(float w[FEATURES][OUTPUTS], const batch *b,
                         double cost_ms, long *passes)
{
    double start = thread_cpu_ms();
    double loss;
    *passes = 0;
    do {
        ++*passes;
        float grad[FEATURES][OUTPUTS] = {{0}};
        loss = 0.0;
        for (int i = 0; i < BATCH; i++) {
            for (int o = 0; o < OUTPUTS; o++) {
                float pred = 0.0f;
                for (int f = 0; f < FEATURES; f++)
                    pred += b->x[i][f] * w[f][o];
                float err = pred - b->y[i][o];
                loss += (double)err * err;
                for (int f = 0; f < FEATURES; f++)
                    grad[f][o] += err * b->x[i][f];
            }
        }
        for (int f = 0; f < FEATURES; f++)
            for (int o = 0; o < OUTPUTS; o++)
                w[f][o] -= 0.01f * grad[f][o] / BATCH;
        loss /= BATCH * OUTPUTS;
    } while (thread_cpu_ms() - start < cost_ms);
    return loss;
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: pipeline_train --logdir DIR [--run NAME] [--steps N]\n"
            "         [--loaders K] [--prefetch D] [--loader-ms X] [--step-ms Y]\n"
            "         [--prefill 0|1] [--seed S]\n"
            "  --loaders    loader threads making batches (default 1)\n"
            "  --prefetch   batches the queue holds ahead of training (default 2)\n"
            "  --loader-ms  CPU ms to make one batch (default 10)\n"
            "  --step-ms    CPU ms of compute per training step (default 5)\n"
            "  --prefill    1 (default): fill the queue before the first step,\n"
            "               as model setup normally lets the loaders do\n");
}

static int parse_long(const char *s, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

static int parse_ms(const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !(v >= 0.0 && v <= 60000.0))
        return -1;
    *out = v;
    return 0;
}

static int parse_args(int argc, char **argv, config *c)
{
    *c = (config){.run = "pipeline", .steps = 40, .loaders = 1, .prefetch = 2,
                  .loader_ms = 10.0, .step_ms = 5.0, .seed = 1,
                  .prefill = 1};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            exit(0);
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "pipeline_train: %s needs a value\n", a);
            return -1;
        }
        const char *v = argv[++i];
        long l;
        int bad = 0;
        if (!strcmp(a, "--logdir"))
            c->logdir = v;
        else if (!strcmp(a, "--run"))
            c->run = v;
        else if (!strcmp(a, "--steps"))
            bad = parse_long(v, 1, 100000000, &c->steps);
        else if (!strcmp(a, "--loaders"))
            bad = parse_long(v, 1, 256, &c->loaders);
        else if (!strcmp(a, "--prefetch"))
            bad = parse_long(v, 1, 4096, &c->prefetch);
        else if (!strcmp(a, "--loader-ms"))
            bad = parse_ms(v, &c->loader_ms);
        else if (!strcmp(a, "--step-ms"))
            bad = parse_ms(v, &c->step_ms);
        else if (!strcmp(a, "--prefill"))
            bad = parse_long(v, 0, 1, &c->prefill);
        else if (!strcmp(a, "--seed")) {
            bad = parse_long(v, 0, UINT_MAX, &l);
            c->seed = (unsigned)l;
        } else {
            fprintf(stderr, "pipeline_train: unknown option %s\n", a);
            return -1;
        }
        if (bad) {
            fprintf(stderr, "pipeline_train: bad value for %s: %s\n", a, v);
            return -1;
        }
    }
    if (!c->logdir) {
        fprintf(stderr, "pipeline_train: --logdir is required\n");
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    config cfg;
    if (parse_args(argc, argv, &cfg) < 0) {
        usage(stderr);
        return 2;
    }

    char run_dir[4096];
    if (snprintf(run_dir, sizeof run_dir, "%s/%s", cfg.logdir, cfg.run) >=
        (int)sizeof run_dir) {
        fprintf(stderr, "pipeline_train: path too long\n");
        return 2;
    }
    tfb_writer *w;
    int rc = tfb_writer_open(&w, run_dir, NULL);
    if (rc < 0) {
        fprintf(stderr, "pipeline_train: cannot open %s: %s\n", run_dir,
                tfb_strerror(rc));
        return 1;
    }

    /* Pool: the queue's slots, one per loader being filled, one in training. */
    size_t pool_n = (size_t)cfg.prefetch + (size_t)cfg.loaders + 1;
    batch *pool = calloc(pool_n, sizeof *pool);
    batch **ring = calloc((size_t)cfg.prefetch, sizeof *ring);
    batch **free_list = calloc(pool_n, sizeof *free_list);
    pthread_t *threads = calloc((size_t)cfg.loaders, sizeof *threads);
    loader_arg *largs = calloc((size_t)cfg.loaders, sizeof *largs);
    if (!pool || !ring || !free_list || !threads || !largs) {
        fprintf(stderr, "pipeline_train: out of memory\n");
        tfb_writer_close(w);
        return 1;
    }
    queue q = {.ring = ring, .cap = (size_t)cfg.prefetch,
               .free_list = free_list};
    pthread_mutex_init(&q.mu, NULL);
    pthread_cond_init(&q.not_empty, NULL);
    pthread_cond_init(&q.not_full, NULL);
    pthread_cond_init(&q.free_avail, NULL);
    for (size_t i = 0; i < pool_n; i++)
        q.free_list[q.n_free++] = &pool[i];

    long started = 0;
    for (long i = 0; i < cfg.loaders; i++) {
        largs[i] = (loader_arg){.q = &q, .cfg = &cfg,
                                .seed = cfg.seed * 2654435761u + (unsigned)i + 1};
        if (pthread_create(&threads[i], NULL, loader_main, &largs[i]) != 0) {
            fprintf(stderr, "pipeline_train: cannot start loader %ld\n", i);
            break;
        }
        started++;
    }

    /* Model setup (initialising weights, restoring a checkpoint) usually
     * gives the loaders time to fill the queue before the first step; wait
     * for that, so step 0 does not count the loaders' start-up. */
    if (cfg.prefill && started == cfg.loaders) {
        pthread_mutex_lock(&q.mu);
        while (q.count < q.cap)
            pthread_cond_wait(&q.not_empty, &q.mu);
        pthread_mutex_unlock(&q.mu);
    }

    static float weights[FEATURES][OUTPUTS];
    double sum_step_ms = 0.0, sum_input_ms = 0.0;
    int status = started == cfg.loaders ? 0 : 1;
    struct timespec t0, t1, t2;
    for (long s = 0; s < cfg.steps && status == 0; s++) {
        if ((rc = tfb_step_begin(w, s)) < 0)
            break;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        tfb_input_begin(w);
        batch *b = queue_pop(&q);
        tfb_input_end(w);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        queue_wake_loaders(&q);
        long passes;
        double loss = train_step(weights, b, cfg.step_ms, &passes);
        /* Counted, not estimated: each pass does 2 FLOPs (multiply, add)
         * per weight and sample for the prediction and 2 for the gradient,
         * and 2 per weight for the update. One batch of BATCH samples per
         * step, however many passes it took. */
        double pass_flops = 4.0 * BATCH * FEATURES * OUTPUTS +
                            2.0 * FEATURES * OUTPUTS;
        tfb_step_work(w, pass_flops * (double)passes, BATCH, 0);
        queue_recycle(&q, b);
        tfb_scalar(w, "train/loss", loss, s);
        clock_gettime(CLOCK_MONOTONIC, &t2);
        if ((rc = tfb_step_end(w)) < 0)
            break;
        sum_input_ms += (double)(t1.tv_sec - t0.tv_sec) * 1e3 +
                        (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
        sum_step_ms += (double)(t2.tv_sec - t0.tv_sec) * 1e3 +
                       (double)(t2.tv_nsec - t0.tv_nsec) / 1e6;
    }
    if (rc < 0) {
        fprintf(stderr, "pipeline_train: step timing failed: %s\n",
                tfb_strerror(rc));
        status = 1;
    }

    pthread_mutex_lock(&q.mu);
    q.stop = 1;
    pthread_cond_broadcast(&q.not_full);
    pthread_cond_broadcast(&q.free_avail);
    pthread_mutex_unlock(&q.mu);
    for (long i = 0; i < started; i++)
        pthread_join(threads[i], NULL);

    rc = tfb_writer_close(w);
    if (rc < 0) {
        fprintf(stderr, "pipeline_train: close failed: %s\n", tfb_strerror(rc));
        status = 1;
    }
    if (status == 0)
        printf("steps=%ld mean_step_ms=%.3f mean_input_ms=%.3f "
               "input_fraction=%.4f\n",
               cfg.steps, sum_step_ms / (double)cfg.steps,
               sum_input_ms / (double)cfg.steps,
               sum_step_ms > 0 ? sum_input_ms / sum_step_ms : 0.0);
    pthread_mutex_destroy(&q.mu);
    pthread_cond_destroy(&q.not_empty);
    pthread_cond_destroy(&q.not_full);
    pthread_cond_destroy(&q.free_avail);
    free(largs);
    free(threads);
    free(free_list);
    free(ring);
    free(pool);
    return status;
}
