/*
 * pipeline.c - input-pipeline step timing: tfb_step_begin, tfb_input_begin,
 * tfb_input_end, tfb_step_end.
 *
 * tfb_comm_begin/tfb_comm_end (distributed jobs) time collectives inside a
 * step the same way; their sum is a third scalar, comm/ms.
 *
 * Budget: <= 100 ns per call on the training thread. So:
 *  - Durations come from CLOCK_MONOTONIC (a vDSO read, immune to NTP
 *    steps). Times for the trace store and the scalars' wall time must be
 *    on CUPTI's clock (CLOCK_REALTIME, Unix-epoch ns); they are derived
 *    from the monotonic readings plus an offset sampled at step_begin, so
 *    only step_begin reads two clocks.
 *  - tfb_step_end does not encode the two scalars itself (two tfb_scalar
 *    calls alone cost more than the budget): it puts (step, step_ms,
 *    input_ms, wall time) into a single-producer ring that a helper thread
 *    drains every DRAIN_MS (or when half full) with tfb_scalar_at, keeping
 *    the step's own wall time. When the ring is full the step logs
 *    synchronously: nothing is ever dropped. tfb_writer_close drains the
 *    rest (its close hook runs before the writer empties its
 *    queue).
 *  - Host spans are offered to the trace store while it accepts them; when
 *    it answers that no trace runs, the step timer asks again only after
 *    PROBE_MS (asking costs more than the whole budget), so spans start
 *    within PROBE_MS of tfb_gpu_trace_start.
 *
 * State and thread are created on the first tfb_step_begin; afterwards no
 * call allocates or does I/O. The four calls are for one training thread
 * per writer, as the public header says.
 *
 * Issue 29: tfb_step_work notes the step's work; the ring carries it with
 * the step, and the helper thread turns it into perf/... scalars, asks the
 * NVML sampler for the step's energy and keeps the perf/work record
 * (perf_work.c). tfb_checkpoint_begin/end put a checkpoint record in the
 * same ring; tfb_comm_begin_bytes a comm record at tfb_comm_end, whose
 * name is interned here (a fixed table, no allocation) so the helper can
 * keep the cumulative comm/collectives table.
 */
#include "collector/writer_internal.h"
#include "collector/perf_work.h"
#include "collector/trace_store.h"
#include "base/deadline.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef TFB_HAVE_CUPTI
/* Header-only NVTX3: without an injected tool (Nsight Systems, CUPTI) each
 * call is a null-pointer check on a function table, so it is left on. */
#include <nvtx3/nvToolsExt.h>
#endif

#define RING_CAP 4096u /* steps buffered between drains (power of two) */
#define DRAIN_MS 10
#define PROBE_MS 100

enum pipeline_state {
    PIPE_IDLE = 0,  /* between steps */
    PIPE_IN_STEP,   /* after step_begin, not waiting for input */
    PIPE_IN_INPUT,  /* after input_begin, before input_end */
    PIPE_IN_COMM,   /* after comm_begin, before comm_end */
    PIPE_IN_CKPT    /* after checkpoint_begin, before checkpoint_end */
};

enum rec_kind { REC_STEP = 0, REC_CKPT, REC_COMM };

typedef struct step_rec {
    int64_t step;
    double step_ms, input_ms; /* REC_CKPT: step_ms is the checkpoint's */
    double wall; /* seconds since the Unix epoch, at step_end */
    double comm_ms;
    int has_comm; /* the writer has seen a comm span: log comm/ms */
    enum rec_kind kind;
    double flops, samples, tokens; /* the step's work (REC_STEP) */
    unsigned comm_name;            /* REC_COMM: id in the name table */
    uint64_t comm_bytes;
    int64_t comm_ns;
} step_rec;

/* Interned comm names: the last slot is "other", for names past it. */
#define COMM_OTHER (TFB_COMM_NAMES_MAX - 1)
typedef struct comm_names {
    char name[TFB_COMM_NAMES_MAX][TFB_COMM_NAME_MAX];
    uint32_t hash[TFB_COMM_NAMES_MAX];
    unsigned n; /* slots in use, below COMM_OTHER */
} comm_names;

struct tfb_pipeline {
    /* Training thread only. */
    enum pipeline_state state;
    int64_t step;
    int64_t step_begin_ns;   /* CLOCK_MONOTONIC */
    int64_t input_begin_ns;  /* CLOCK_MONOTONIC */
    int64_t input_sum_ns;    /* summed input waits inside this step */
    int64_t comm_begin_ns;   /* CLOCK_MONOTONIC */
    int64_t comm_sum_ns;     /* summed comm spans inside this step */
    int comm_seen;           /* a comm span ever began on this writer */
    int comm_has_bytes;      /* the open span came from comm_begin_bytes */
    unsigned comm_name_id;
    uint64_t comm_bytes;
    int64_t ckpt_begin_ns;   /* CLOCK_MONOTONIC */
    int64_t last_step;       /* the last step begun (0 before any) */
    double work[3];          /* this step's flops, samples, tokens */
    double work_default[3];  /* from the writer's opts */
    comm_names *names;       /* written here; read by the helper */
    int64_t mono_to_real_ns; /* CLOCK_REALTIME - CLOCK_MONOTONIC at step_begin */
    int spans;               /* offer spans to the trace store */
    int64_t next_probe_ns;   /* when not offering: ask again from then on */
#ifdef TFB_HAVE_CUPTI
    nvtxDomainHandle_t nvtx_domain;
    nvtxStringHandle_t nvtx_step;
    nvtxStringHandle_t nvtx_input;
    nvtxStringHandle_t nvtx_comm;
#endif

    /* The ring: head written by the training thread, tail by the drainer. */
    tfb_writer *w;
    step_rec *ring;
    _Atomic uint64_t head, tail;
    int have_thread;
    pthread_t thread;
    pthread_mutex_t mu; /* guards stop, for the timed wait */
    pthread_cond_t cv;
    int stop;

    /* perf/..., energy and the records: under perf_mu (helper thread,
     * flush, close, the synchronous path). NULL when memory ran out. */
    pthread_mutex_t perf_mu;
    tfb_perf *perf;
};

static int log_step(tfb_writer *w, const step_rec *r)
{
    int rc = tfb_scalar_at(w, TFB_TAG_STEP_MS, r->step_ms, r->step, r->wall);
    int rc2 = tfb_scalar_at(w, TFB_TAG_INPUT_MS, r->input_ms, r->step,
                            r->wall);
    if (r->has_comm) {
        int rc3 = tfb_scalar_at(w, TFB_TAG_COMM_MS, r->comm_ms, r->step,
                                r->wall);
        if (rc2 >= 0)
            rc2 = rc3;
    }
    return rc < 0 ? rc : rc2;
}

/* Logs one record. helper: on the helper thread (or close), where NVML
 * may be called for the step's energy; the training thread's synchronous
 * path (ring full) leaves the energy of that step out. */
static int log_rec(struct tfb_pipeline *p, const step_rec *r, int helper)
{
    tfb_writer *w = p->w;
    int rc = 0;
    if (r->kind == REC_STEP)
        rc = log_step(w, r);
    else if (r->kind == REC_CKPT)
        rc = tfb_scalar_at(w, TFB_TAG_CHECKPOINT_MS, r->step_ms, r->step,
                           r->wall);
    if (!p->perf)
        return rc;
    pthread_mutex_lock(&p->perf_mu);
    if (r->kind == REC_STEP) {
        tfb_perf_step s = {r->step, r->wall, r->step_ms / 1e3, r->flops,
                           r->samples, r->tokens, helper};
        tfb_perf_step_done(p->perf, &s);
    } else if (r->kind == REC_COMM) {
        tfb_perf_comm(p->perf, r->comm_name,
                      r->comm_name == COMM_OTHER
                          ? "other"
                          : p->names->name[r->comm_name],
                      r->comm_bytes, r->comm_ns);
    }
    pthread_mutex_unlock(&p->perf_mu);
    return rc;
}

/* Logs every record the training thread has published. Only the drainer
 * (or close, after the drainer has stopped) calls it. */
static void drain(struct tfb_pipeline *p)
{
    uint64_t tail = atomic_load_explicit(&p->tail, memory_order_relaxed);
    uint64_t head = atomic_load_explicit(&p->head, memory_order_acquire);
    while (tail != head) {
        /* An error (writer closed or failed) is the writer's sticky error,
         * reported by tfb_writer_close; the ring still moves on. */
        (void)log_rec(p, &p->ring[tail & (RING_CAP - 1)], 1);
        tail++;
        atomic_store_explicit(&p->tail, tail, memory_order_release);
    }
    if (p->perf) {
        pthread_mutex_lock(&p->perf_mu);
        tfb_perf_records(p->perf, 0);
        pthread_mutex_unlock(&p->perf_mu);
    }
}

static void *drain_main(void *arg)
{
    struct tfb_pipeline *p = arg;
    pthread_mutex_lock(&p->mu);
    while (!p->stop) {
        struct timespec until;
        tfb_deadline_after_ms(&until, DRAIN_MS);
        pthread_cond_timedwait(&p->cv, &p->mu, &until);
        pthread_mutex_unlock(&p->mu);
        drain(p);
        pthread_mutex_lock(&p->mu);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

#ifdef TFB_HAVE_CUPTI
static void nvtx_init(struct tfb_pipeline *p)
{
    /* Both return NULL handles when no tool is injected; NVTX accepts them. */
    p->nvtx_domain = nvtxDomainCreateA("tfboard");
    p->nvtx_step = nvtxDomainRegisterStringA(p->nvtx_domain, "step");
    p->nvtx_input = nvtxDomainRegisterStringA(p->nvtx_domain, "input");
    p->nvtx_comm = nvtxDomainRegisterStringA(p->nvtx_domain, "comm");
}


static void nvtx_push(const struct tfb_pipeline *p, nvtxStringHandle_t name,
                      uint32_t argb, int64_t step)
{
    nvtxEventAttributes_t a = {0};
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.colorType = NVTX_COLOR_ARGB;
    a.color = argb;
    a.payloadType = NVTX_PAYLOAD_TYPE_INT64;
    a.payload.llValue = step;
    a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    a.message.registered = name;
    nvtxDomainRangePushEx(p->nvtx_domain, &a);
}

/* A comm range: the caller's name as an ASCII message (NVTX copies it if
 * a tool is injected), or the registered "comm". */
static void nvtx_push_comm(const struct tfb_pipeline *p, const char *name,
                           int64_t step)
{
    if (!name) {
        nvtx_push(p, p->nvtx_comm, 0xFF55A868u, step);
        return;
    }
    nvtxEventAttributes_t a = {0};
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.colorType = NVTX_COLOR_ARGB;
    a.color = 0xFF55A868u;
    a.payloadType = NVTX_PAYLOAD_TYPE_INT64;
    a.payload.llValue = step;
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = name;
    nvtxDomainRangePushEx(p->nvtx_domain, &a);
}

static void nvtx_pop(const struct tfb_pipeline *p)
{
    nvtxDomainRangePop(p->nvtx_domain);
}
#endif

/* Hands a span (monotonic times) to the trace store. TFB_EDROPPED (its
 * queue is full) loses this span only; TFB_ESTATE (no trace running)
 * pauses the offers for PROBE_MS. */
static void offer_span(struct tfb_pipeline *p, tfb_host_span_kind kind,
                       int64_t start, int64_t end)
{
    int rc = tfb_trace_host_span(p->w, kind, p->step,
                                 start + p->mono_to_real_ns,
                                 end + p->mono_to_real_ns);
    if (rc == TFB_ESTATE) {
        p->spans = 0;
        p->next_probe_ns = end + (int64_t)PROBE_MS * 1000000;
    }
}

static struct tfb_pipeline *pipeline_create(tfb_writer *w)
{
    struct tfb_pipeline *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->ring = malloc(RING_CAP * sizeof *p->ring);
    p->names = calloc(1, sizeof *p->names);
    if (!p->ring || !p->names) {
        free(p->ring);
        free(p->names);
        free(p);
        return NULL;
    }
    p->w = w;
    tfb_work_opts wo;
    tfb_writer_work_opts(w, &wo);
    p->work_default[0] = wo.flops;
    p->work_default[1] = wo.samples;
    p->work_default[2] = wo.tokens;
    pthread_mutex_init(&p->perf_mu, NULL);
    p->perf = tfb_perf_create(w);
    atomic_init(&p->head, 0);
    atomic_init(&p->tail, 0);
    pthread_mutex_init(&p->mu, NULL);
    tfb_cond_init_monotonic(&p->cv); /* clock steps cannot stall it */
    /* Without the thread every step logs synchronously: slower, still
     * correct. */
    p->have_thread = pthread_create(&p->thread, NULL, drain_main, p) == 0;
#ifdef TFB_HAVE_CUPTI
    nvtx_init(p);
#endif
    return p;
}

static void pipeline_on_flush(tfb_writer *w);
static int push(struct tfb_pipeline *p, const step_rec *r);
static void pipeline_on_close(tfb_writer *w);

/* The pipeline of w, created on first use; NULL with *rc on failure. */
static struct tfb_pipeline *pipeline_get(tfb_writer *w, int *rc)
{
    if (!w) {
        *rc = TFB_EINVAL;
        return NULL;
    }
    if (tfb_writer_forked(w)) {
        *rc = TFB_EFORKED; /* the drainer thread is the parent's */
        return NULL;
    }
    struct tfb_pipeline **slot = tfb_writer_pipeline_slot(w);
    struct tfb_pipeline *p = *slot;
    if (!p) {
        p = pipeline_create(w);
        if (!p) {
            *rc = TFB_ENOMEM;
            return NULL;
        }
        *slot = p;
        tfb_writer_set_hooks(w, TFB_WRITER_MOD_PIPELINE, pipeline_on_flush,
                             pipeline_on_close);
    }
    return p;
}

int tfb_step_begin(tfb_writer *w, int64_t step)
{
    int rc;
    struct tfb_pipeline *p = pipeline_get(w, &rc);
    if (!p)
        return rc;
    if (p->state != PIPE_IDLE)
        return TFB_ESTATE;
    p->step = step;
    p->last_step = step;
    p->input_sum_ns = 0;
    p->comm_sum_ns = 0;
    p->work[0] = p->work_default[0];
    p->work[1] = p->work_default[1];
    p->work[2] = p->work_default[2];
    p->step_begin_ns = tfb_mono_now_ns();
    p->mono_to_real_ns = tfb_now_ns() - p->step_begin_ns;
    if (!p->spans && p->step_begin_ns >= p->next_probe_ns)
        p->spans = 1;
#ifdef TFB_HAVE_CUPTI
    nvtx_push(p, p->nvtx_step, 0xFF4C72B0u, step);
#endif
    p->state = PIPE_IN_STEP;
    return 0;
}

int tfb_pipeline_open_step(tfb_writer *w, int64_t *step)
{
    if (!w || tfb_writer_forked(w))
        return 0;
    struct tfb_pipeline *p = *tfb_writer_pipeline_slot(w);
    if (!p || p->state == PIPE_IDLE)
        return 0;
    *step = p->step;
    return 1;
}

/* The pipeline of w when it is in state `want`; else NULL with *rc the
 * call's error. Inlined: these calls are on the training thread. */
static inline struct tfb_pipeline *pipe_in(tfb_writer *w,
                                           enum pipeline_state want, int *rc)
{
    if (!w) {
        *rc = TFB_EINVAL;
        return NULL;
    }
    if (tfb_writer_forked(w)) {
        *rc = TFB_EFORKED;
        return NULL;
    }
    struct tfb_pipeline *p = *tfb_writer_pipeline_slot(w);
    if (!p || p->state != want) {
        *rc = TFB_ESTATE;
        return NULL;
    }
    return p;
}

/* Ends a span nested in the step (input wait, collective): adds it to the
 * step's sum, closes its NVTX range, offers it to the trace store. */
static inline void end_nested(struct tfb_pipeline *p, int64_t begin_ns,
                              int64_t *sum_ns, tfb_host_span_kind span_kind)
{
    int64_t now = tfb_mono_now_ns();
    *sum_ns += now - begin_ns;
    p->state = PIPE_IN_STEP;
#ifdef TFB_HAVE_CUPTI
    nvtx_pop(p);
#endif
    if (p->spans)
        offer_span(p, span_kind, begin_ns, now);
}

int tfb_input_begin(tfb_writer *w)
{
    int rc;
    struct tfb_pipeline *p = pipe_in(w, PIPE_IN_STEP, &rc);
    if (!p)
        return rc;
    p->input_begin_ns = tfb_mono_now_ns();
#ifdef TFB_HAVE_CUPTI
    nvtx_push(p, p->nvtx_input, 0xFFDD8452u, p->step);
#endif
    p->state = PIPE_IN_INPUT;
    return 0;
}

int tfb_input_end(tfb_writer *w)
{
    int rc;
    struct tfb_pipeline *p = pipe_in(w, PIPE_IN_INPUT, &rc);
    if (!p)
        return rc;
    end_nested(p, p->input_begin_ns, &p->input_sum_ns, TFB_HOST_SPAN_INPUT);
    return 0;
}

int tfb_step_end(tfb_writer *w)
{
    int rc;
    struct tfb_pipeline *p = pipe_in(w, PIPE_IN_STEP, &rc);
    if (!p)
        return rc;
    int64_t now = tfb_mono_now_ns();
    p->state = PIPE_IDLE;
#ifdef TFB_HAVE_CUPTI
    nvtx_pop(p);
#endif
    if (p->spans)
        offer_span(p, TFB_HOST_SPAN_STEP, p->step_begin_ns, now);
    step_rec r = {p->step, (double)(now - p->step_begin_ns) / 1e6,
                  (double)p->input_sum_ns / 1e6,
                  (double)(now + p->mono_to_real_ns) / 1e9,
                  (double)p->comm_sum_ns / 1e6, p->comm_seen, REC_STEP,
                  p->work[0], p->work[1], p->work[2], 0, 0, 0};
    return push(p, &r);
}

/* Publishes r to the drainer; logs it here when the ring is full. */
static int push(struct tfb_pipeline *p, const step_rec *r)
{
    uint64_t head = atomic_load_explicit(&p->head, memory_order_relaxed);
    uint64_t tail = atomic_load_explicit(&p->tail, memory_order_acquire);
    if (!p->have_thread || head - tail >= RING_CAP)
        return log_rec(p, r, 0); /* full (drainer starved): never drop */
    p->ring[head & (RING_CAP - 1)] = *r;
    atomic_store_explicit(&p->head, head + 1, memory_order_release);
    /* Very short steps fill the ring faster than one drain period: wake
     * the drainer early, once per half ring (a futex call amortized over
     * RING_CAP / 2 steps). A lost wake-up costs at most one period. */
    if (head + 1 - tail == RING_CAP / 2)
        pthread_cond_signal(&p->cv);
    return 0;
}

int tfb_comm_begin(tfb_writer *w, const char *name)
{
    int rc;
    struct tfb_pipeline *p = pipe_in(w, PIPE_IN_STEP, &rc);
    if (!p)
        return rc;
    p->comm_begin_ns = tfb_mono_now_ns();
    p->comm_seen = 1;
    p->comm_has_bytes = 0;
#ifdef TFB_HAVE_CUPTI
    nvtx_push_comm(p, name, p->step);
#else
    (void)name;
#endif
    p->state = PIPE_IN_COMM;
    return 0;
}

int tfb_comm_end(tfb_writer *w)
{
    int rc;
    struct tfb_pipeline *p = pipe_in(w, PIPE_IN_COMM, &rc);
    if (!p)
        return rc;
    int64_t before = p->comm_sum_ns;
    end_nested(p, p->comm_begin_ns, &p->comm_sum_ns, TFB_HOST_SPAN_COMM);
    if (!p->comm_has_bytes)
        return 0;
    p->comm_has_bytes = 0;
    step_rec r = {.step = p->step, .kind = REC_COMM,
                  .comm_name = p->comm_name_id, .comm_bytes = p->comm_bytes,
                  .comm_ns = p->comm_sum_ns - before};
    return push(p, &r);
}

/* FNV-1a of the first TFB_COMM_NAME_MAX - 1 bytes of s (what is kept). */
static uint32_t name_hash(const char *s)
{
    uint32_t h = 2166136261u;
    for (int i = 0; i < TFB_COMM_NAME_MAX - 1 && s[i]; i++)
        h = (h ^ (uint8_t)s[i]) * 16777619u;
    return h;
}

/* The id of name in the table, adding it (cut to TFB_COMM_NAME_MAX - 1
 * bytes) the first time; COMM_OTHER once the table is full. The helper
 * reads a slot only after a record naming it was published (release), so
 * the copy is complete by then. */
static unsigned intern_name(comm_names *t, const char *name)
{
    uint32_t h = name_hash(name);
    for (unsigned i = 0; i < t->n; i++)
        if (t->hash[i] == h &&
            strncmp(t->name[i], name, TFB_COMM_NAME_MAX - 1) == 0)
            return i;
    if (t->n >= COMM_OTHER)
        return COMM_OTHER;
    unsigned i = t->n++;
    size_t len = strnlen(name, TFB_COMM_NAME_MAX - 1);
    /* Control bytes (a tab, a newline) would split the record's
     * tab-separated lines: they become '_'. */
    for (size_t k = 0; k < len; k++)
        t->name[i][k] = (unsigned char)name[k] < 0x20 ? '_' : name[k];
    t->name[i][len] = 0;
    t->hash[i] = h;
    return i;
}

int tfb_comm_begin_bytes(tfb_writer *w, const char *name, uint64_t bytes)
{
    int rc = tfb_comm_begin(w, name);
    if (rc)
        return rc;
    struct tfb_pipeline *p = *tfb_writer_pipeline_slot(w);
    p->comm_has_bytes = 1;
    p->comm_name_id = intern_name(p->names, name ? name : "comm");
    p->comm_bytes = bytes;
    return 0;
}

int tfb_step_work(tfb_writer *w, double flops, double samples, double tokens)
{
    if (!w)
        return TFB_EINVAL;
    if (!isfinite(flops) || !isfinite(samples) || !isfinite(tokens) ||
        flops < 0 || samples < 0 || tokens < 0)
        return TFB_EINVAL;
    if (tfb_writer_forked(w))
        return TFB_EFORKED;
    struct tfb_pipeline *p = *tfb_writer_pipeline_slot(w);
    if (!p || p->state == PIPE_IDLE || p->state == PIPE_IN_CKPT)
        return TFB_ESTATE;
    p->work[0] = flops;
    p->work[1] = samples;
    p->work[2] = tokens;
    return 0;
}

int tfb_checkpoint_begin(tfb_writer *w)
{
    int rc;
    struct tfb_pipeline *p = pipeline_get(w, &rc);
    if (!p)
        return rc;
    if (p->state != PIPE_IDLE)
        return TFB_ESTATE;
    p->ckpt_begin_ns = tfb_mono_now_ns();
    p->state = PIPE_IN_CKPT;
    return 0;
}

int tfb_checkpoint_end(tfb_writer *w)
{
    int rc;
    struct tfb_pipeline *p = pipe_in(w, PIPE_IN_CKPT, &rc);
    if (!p)
        return rc;
    p->state = PIPE_IDLE;
    /* Both clocks are read here: a checkpoint is rare, and its wall time
     * must not come from a step_begin offset of long ago. */
    int64_t now = tfb_mono_now_ns();
    int64_t real = tfb_now_ns();
    step_rec r = {.step = p->last_step,
                  .step_ms = (double)(now - p->ckpt_begin_ns) / 1e6,
                  .wall = (double)real / 1e9,
                  .kind = REC_CKPT};
    return push(p, &r);
}

/* Writes the perf/work and comm/collectives records that changed, now. */
static void force_records(struct tfb_pipeline *p)
{
    if (!p->perf)
        return;
    pthread_mutex_lock(&p->perf_mu);
    tfb_perf_records(p->perf, 1);
    pthread_mutex_unlock(&p->perf_mu);
}

static void pipeline_on_flush(tfb_writer *w)
{
    struct tfb_pipeline *p = w ? *tfb_writer_pipeline_slot(w) : NULL;
    if (!p)
        return;
    uint64_t target = atomic_load_explicit(&p->head, memory_order_acquire);
    if (!p->have_thread) {
        drain(p);
        force_records(p);
        return;
    }
    /* The drainer is the ring's only consumer: wake it and wait until it
     * has passed every step published before this flush. */
    pthread_mutex_lock(&p->mu);
    pthread_cond_signal(&p->cv);
    pthread_mutex_unlock(&p->mu);
    while (atomic_load_explicit(&p->tail, memory_order_acquire) < target) {
        struct timespec ts = {0, 200000};
        nanosleep(&ts, NULL);
    }
    force_records(p);
}

static void pipeline_on_close(tfb_writer *w)
{
    if (!w)
        return;
    struct tfb_pipeline **slot = tfb_writer_pipeline_slot(w);
    struct tfb_pipeline *p = *slot;
    if (!p)
        return;
    if (tfb_writer_forked(w)) {
        /* A child of fork(): the drainer does not exist here, and the
         * steps still in the ring are the parent's (its drainer logs
         * them). Free the memory only: no join, no drain, and no destroy
         * of a mutex or condition the vanished thread may hold or wait
         * on. */
        tfb_perf_free(p->perf);
        free(p->ring);
        free(p->names);
        free(p);
        *slot = NULL;
        return;
    }
    if (p->have_thread) {
        pthread_mutex_lock(&p->mu);
        p->stop = 1;
        pthread_cond_signal(&p->cv);
        pthread_mutex_unlock(&p->mu);
        pthread_join(p->thread, NULL);
    }
    drain(p); /* what the thread had not reached yet */
    force_records(p);
    tfb_perf_free(p->perf);
    pthread_mutex_destroy(&p->perf_mu);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->cv);
    free(p->ring);
    free(p->names);
    free(p);
    *slot = NULL;
}
