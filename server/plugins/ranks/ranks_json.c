/*
 * ranks_json.c - JSON of the ranks plugin's structs (the shapes are in
 * server/API.md, /data/plugin/ranks/...). Written from the structs only;
 * run names, job names and hosts come from files and are escaped by the
 * JSON writer. Non-finite numbers are written as JSON null.
 */
#include "plugins/ranks/ranks_job.h"
#include "trace/trace.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static void num(tfb_json *j, double v)
{
    if (isfinite(v))
        tfb_json_double(j, v);
    else
        tfb_json_null(j);
}

static void knum(tfb_json *j, const char *k, double v)
{
    tfb_json_key(j, k);
    num(j, v);
}

int tfb_ranks_metric_parse(const char *s)
{
    static const char *const names[] = {"step_ms", "input_ms", "comm_ms",
                                        "compute_ms"};
    for (int i = 0; s && i < 4; i++)
        if (strcmp(s, names[i]) == 0)
            return i;
    return -1;
}

static const char *note_kind(tfb_ranks_note_kind k)
{
    switch (k) {
    case TFB_RANKS_NOTE_NO_STEPS: return "no_steps";
    case TFB_RANKS_NOTE_DUP_RANK: return "duplicate_rank";
    case TFB_RANKS_NOTE_WORLD_SIZE: return "world_size";
    case TFB_RANKS_NOTE_MISSING_RANKS: return "missing_ranks";
    case TFB_RANKS_NOTE_NO_TRACE: return "no_trace";
    case TFB_RANKS_NOTE_NO_RANK: return "no_rank";
    case TFB_RANKS_NOTE_DUP_STEP: return "duplicate_step";
    case TFB_RANKS_NOTE_BAD_VALUES: return "bad_values";
    case TFB_RANKS_NOTE_RANK_OUT_OF_WORLD: return "rank_out_of_world";
    }
    return "other";
}

void tfb_ranks_jobs_json(tfb_json *j, const tfb_ranks_job *v, size_t n)
{
    tfb_json_object_begin(j);
    tfb_json_key(j, "jobs");
    tfb_json_array_begin(j);
    for (size_t i = 0; i < n; i++) {
        const tfb_ranks_job *jb = &v[i];
        tfb_json_object_begin(j);
        tfb_json_key(j, "job");
        tfb_json_strn(j, jb->name, jb->name_len);
        tfb_json_key(j, "ranks");
        tfb_json_u64(j, jb->n_members);
        /* The most common known world size, as the analysis takes it. */
        int32_t ws = 0;
        size_t best = 0;
        for (size_t a = 0; a < jb->n_members; a++) {
            size_t c = 0;
            for (size_t b = 0; b < jb->n_members; b++)
                c += jb->members[b].world_size == jb->members[a].world_size;
            if (jb->members[a].world_size > 0 && c > best) {
                best = c;
                ws = jb->members[a].world_size;
            }
        }
        tfb_json_key(j, "world_size");
        tfb_json_i64(j, ws);
        tfb_json_key(j, "runs");
        tfb_json_array_begin(j);
        for (size_t k = 0; k < jb->n_members; k++) {
            tfb_json_object_begin(j);
            tfb_json_key(j, "run");
            tfb_json_str(j, jb->members[k].run_name);
            tfb_json_key(j, "rank");
            tfb_json_i64(j, jb->members[k].rank);
            tfb_json_object_end(j);
        }
        tfb_json_array_end(j);
        tfb_json_key(j, "empty_dirs");
        tfb_json_array_begin(j);
        for (size_t k = 0; k < jb->n_empty_dirs; k++)
            tfb_json_str(j, jb->empty_dirs[k]);
        tfb_json_array_end(j);
        tfb_json_object_end(j);
    }
    tfb_json_array_end(j);
    tfb_json_object_end(j);
}

static const tfb_json_field dist_fields[] = {
    TFB_JSON_FIELD(tfb_ranks_dist, mean, FIN),
    TFB_JSON_FIELD(tfb_ranks_dist, p50, FIN),
    TFB_JSON_FIELD(tfb_ranks_dist, p90, FIN),
    TFB_JSON_FIELD(tfb_ranks_dist, n, SIZE),
};

/* A rank, after its number, run and host. */
static const tfb_json_field rank_fields[] = {
    TFB_JSON_FIELD_AS("steps", tfb_ranks_rank, n_steps, SIZE),
    TFB_JSON_FIELD_OBJ("step_ms", tfb_ranks_rank, step_ms, dist_fields),
    TFB_JSON_FIELD_OBJ("input_ms", tfb_ranks_rank, input_ms, dist_fields),
    TFB_JSON_FIELD_OBJ("comm_ms", tfb_ranks_rank, comm_ms, dist_fields),
    TFB_JSON_FIELD_OBJ("compute_ms", tfb_ranks_rank, compute_ms, dist_fields),
    TFB_JSON_FIELD_OBJ("own_ms", tfb_ranks_rank, own_ms, dist_fields),
    TFB_JSON_FIELD(tfb_ranks_rank, comm_share, FIN),
    TFB_JSON_FIELD(tfb_ranks_rank, input_share, FIN),
    TFB_JSON_FIELD(tfb_ranks_rank, slowdown, FIN),
    TFB_JSON_FIELD(tfb_ranks_rank, slower_share, FIN),
    TFB_JSON_FIELD(tfb_ranks_rank, straggler, BOOL),
};

/* The job's skew across ranks, before its steps. */
static const tfb_json_field skew_fields[] = {
    TFB_JSON_FIELD_AS("mean_ms", tfb_ranks_result, skew.mean, FIN),
    TFB_JSON_FIELD_AS("p50_ms", tfb_ranks_result, skew.p50, FIN),
    TFB_JSON_FIELD_AS("p90_ms", tfb_ranks_result, skew.p90, FIN),
    TFB_JSON_FIELD_AS("n", tfb_ranks_result, skew.n, SIZE),
    TFB_JSON_FIELD_AS("max_ms", tfb_ranks_result, skew_max_ms, FIN),
    TFB_JSON_FIELD_AS("max_step", tfb_ranks_result, skew_max_step, STEP),
};

static const tfb_ranks_member *member_of(const tfb_ranks_job *job,
                                         const tfb_ranks_rank *rk)
{
    return rk->input_index < job->n_members ? &job->members[rk->input_index]
                                            : NULL;
}

/* A note of the job: rank -1 (null) when it is about no one rank. */
static void note_json(tfb_json *j, const char *kind, int64_t rank,
                      int64_t count, const char *text)
{
    tfb_json_object_begin(j);
    tfb_json_key(j, "kind");
    tfb_json_str(j, kind);
    tfb_json_key(j, "rank");
    if (rank >= 0)
        tfb_json_i64(j, rank);
    else
        tfb_json_null(j);
    tfb_json_key(j, "count");
    tfb_json_i64(j, count);
    tfb_json_key(j, "text");
    tfb_json_str(j, text);
    tfb_json_object_end(j);
}

void tfb_ranks_job_json(tfb_json *j, const tfb_ranks_job *job,
                        const tfb_ranks_result *res, const tfb_ranks_opts *o,
                        tfb_ranks_metric metric, int with_matrix)
{
    tfb_json_object_begin(j);
    tfb_json_key(j, "job");
    tfb_json_strn(j, job->name, job->name_len);
    tfb_json_key(j, "world_size");
    tfb_json_i64(j, res->world_size);
    tfb_json_key(j, "n_ranks");
    tfb_json_u64(j, res->n_ranks);
    tfb_json_key(j, "n_steps");
    tfb_json_u64(j, res->n_steps);
    knum(j, "job_median_own_ms", res->job_median_own_ms);
    tfb_json_key(j, "rule");
    tfb_json_object_begin(j);
    knum(j, "straggler_excess", o->straggler_excess);
    knum(j, "straggler_share", o->straggler_share);
    tfb_json_object_end(j);

    tfb_json_key(j, "ranks");
    tfb_json_array_begin(j);
    for (size_t i = 0; i < res->n_ranks; i++) {
        const tfb_ranks_rank *rk = &res->ranks[i];
        const tfb_ranks_member *m = member_of(job, rk);
        tfb_json_object_begin(j);
        tfb_json_key(j, "rank");
        tfb_json_i64(j, rk->rank);
        tfb_json_key(j, "run");
        tfb_json_str(j, m ? m->run_name : NULL);
        tfb_json_key(j, "host");
        tfb_json_str(j, m && m->host[0] ? m->host : NULL);
        TFB_JSON_FIELDS(j, rk, rank_fields);
        tfb_json_object_end(j);
    }
    tfb_json_array_end(j);

    tfb_json_key(j, "stragglers");
    tfb_json_array_begin(j);
    for (size_t k = 0; k < res->n_stragglers; k++) {
        const tfb_ranks_rank *rk = &res->ranks[res->stragglers[k]];
        const tfb_ranks_member *m = member_of(job, rk);
        char sentence[256];
        tfb_ranks_straggler_sentence(res, k, sentence, sizeof sentence);
        tfb_json_object_begin(j);
        tfb_json_key(j, "rank");
        tfb_json_i64(j, rk->rank);
        tfb_json_key(j, "run");
        tfb_json_str(j, m ? m->run_name : NULL);
        knum(j, "slowdown", rk->slowdown);
        knum(j, "slower_share", rk->slower_share);
        tfb_json_key(j, "sentence");
        tfb_json_str(j, sentence);
        tfb_json_object_end(j);
    }
    tfb_json_array_end(j);
    knum(j, "others_comm_share", res->others_comm_share);

    tfb_json_key(j, "skew");
    tfb_json_object_begin(j);
    TFB_JSON_FIELDS(j, res, skew_fields);
    if (with_matrix) {
        /* Per step: [step, skew ms or null]. */
        tfb_json_key(j, "steps");
        tfb_json_array_begin(j);
        for (size_t i = 0; i < res->n_steps; i++) {
            tfb_json_array_begin(j);
            tfb_json_i64(j, res->steps[i]);
            num(j, res->skew_ms[i]);
            tfb_json_array_end(j);
        }
        tfb_json_array_end(j);
    }
    tfb_json_object_end(j);

    if (with_matrix) {
        static const char *const mnames[] = {"step_ms", "input_ms",
                                             "comm_ms", "compute_ms"};
        const tfb_ranks_matrix *mx = &res->matrix;
        const double *cells = metric == TFB_RANKS_M_INPUT  ? mx->input_ms
                              : metric == TFB_RANKS_M_COMM ? mx->comm_ms
                              : metric == TFB_RANKS_M_COMPUTE
                                  ? mx->compute_ms
                                  : mx->step_ms;
        tfb_json_key(j, "matrix");
        tfb_json_object_begin(j);
        tfb_json_key(j, "metric");
        tfb_json_str(j, mnames[metric]);
        tfb_json_key(j, "columns");
        tfb_json_array_begin(j);
        for (size_t c = 0; c < mx->n_cols; c++) {
            tfb_json_array_begin(j);
            tfb_json_i64(j, mx->col_first[c]);
            tfb_json_i64(j, mx->col_last[c]);
            tfb_json_array_end(j);
        }
        tfb_json_array_end(j);
        tfb_json_key(j, "rows");
        tfb_json_array_begin(j);
        for (size_t r = 0; r < mx->n_rows; r++) {
            tfb_json_array_begin(j);
            for (size_t c = 0; c < mx->n_cols && cells; c++)
                num(j, cells[r * mx->n_cols + c]);
            tfb_json_array_end(j);
        }
        tfb_json_array_end(j);
        tfb_json_object_end(j);
    }

    tfb_json_key(j, "notes");
    tfb_json_array_begin(j);
    for (size_t i = 0; i < res->n_notes; i++) {
        const tfb_ranks_note *nt = &res->notes[i];
        note_json(j, note_kind(nt->kind), nt->rank, nt->count, nt->text);
    }
    for (size_t i = 0; i < job->n_empty_dirs; i++) {
        char text[512];
        tfb_ranks_empty_dir_note(job, i, text, sizeof text);
        note_json(j, "empty_rank_dir", -1, 0, text);
    }
    tfb_json_array_end(j);
    tfb_json_object_end(j);
}

/* The job's window: the first traced rank's (each rank's is on its row);
 * the one asked when no rank is traced. */
static void job_window_json(tfb_json *j, const tfb_ranks_gpu_view *g)
{
    tfb_trace_window w = {0};
    const char *asked = tfb_trace_window_name(g->window);
    w.mode = w.requested = asked;
    w.steps = -1;
    for (size_t i = 0; i < g->n_ranks; i++)
        if (g->ranks[i].has_trace) {
            w = g->ranks[i].window;
            break;
        }
    tfb_json_key(j, "window");
    tfb_trace_window_json(j, &w);
}

/* The job's GPU view, after its name. */
static const tfb_json_field gpu_view_fields[] = {
    TFB_JSON_FIELD(tfb_ranks_gpu_view, n_traced, SIZE),
    TFB_JSON_FIELD(tfb_ranks_gpu_view, n_loading, SIZE),
    TFB_JSON_FIELD(tfb_ranks_gpu_view, n_failed, SIZE),
    TFB_JSON_FIELD(tfb_ranks_gpu_view, compute_ns, I64),
    TFB_JSON_FIELD(tfb_ranks_gpu_view, comm_ns, I64),
    TFB_JSON_FIELD(tfb_ranks_gpu_view, memory_ns, I64),
    TFB_JSON_FIELD(tfb_ranks_gpu_view, idle_ns, I64),
    TFB_JSON_FIELD(tfb_ranks_gpu_view, comm_union_ns, I64),
    TFB_JSON_FIELD(tfb_ranks_gpu_view, overlap_ns, I64),
    TFB_JSON_FIELD(tfb_ranks_gpu_view, overlap, FIN),
};

/* A rank's GPU figures, when it has a trace. */
static const tfb_json_field gpu_rank_fields[] = {
    TFB_JSON_FIELD_AS("devices", tfb_ranks_gpu_rank, gpu.n_devices, INT),
    TFB_JSON_FIELD_AS("span_ns", tfb_ranks_gpu_rank, gpu.span_ns, I64),
    TFB_JSON_FIELD_AS("compute_ns", tfb_ranks_gpu_rank, gpu.compute_ns, I64),
    TFB_JSON_FIELD_AS("comm_ns", tfb_ranks_gpu_rank, gpu.comm_ns, I64),
    TFB_JSON_FIELD_AS("memory_ns", tfb_ranks_gpu_rank, gpu.memory_ns, I64),
    TFB_JSON_FIELD_AS("idle_ns", tfb_ranks_gpu_rank, gpu.idle_ns, I64),
    TFB_JSON_FIELD_AS("busy_pct", tfb_ranks_gpu_rank, gpu.busy_pct, FIN),
    TFB_JSON_FIELD_AS("comm_union_ns", tfb_ranks_gpu_rank, gpu.comm_union_ns,
                      I64),
    TFB_JSON_FIELD_AS("overlap_ns", tfb_ranks_gpu_rank, gpu.overlap_ns, I64),
    TFB_JSON_FIELD_AS("overlap", tfb_ranks_gpu_rank, gpu.overlap, FIN),
    TFB_JSON_FIELD_AS("intervals", tfb_ranks_gpu_rank, gpu.n_intervals,
                      SIZE),
    TFB_JSON_FIELD_AS("comm_kernels", tfb_ranks_gpu_rank, n_comm_kernels,
                      SIZE),
    TFB_JSON_FIELD(tfb_ranks_gpu_rank, bad_intervals, SIZE),
};

/* A rank's devices as its trace names them, its notes and its
 * distributedInfo. */
static void trace_meta_json(tfb_json *j, const tfb_trace *t)
{
    tfb_trace_summary sum;
    tfb_json_key(j, "device_info");
    tfb_json_array_begin(j);
    if (tfb_trace_summarize(t, &sum) == 0) {
        for (size_t i = 0; i < sum.n_devices; i++) {
            const tfb_trace_device_summary *d = &sum.devices[i];
            tfb_json_object_begin(j);
            tfb_json_key(j, "id");
            tfb_json_i64(j, d->id);
            tfb_json_key(j, "name");
            tfb_json_str(j, d->name);
            tfb_json_key(j, "sm_count");
            if (d->sm_count > 0)
                tfb_json_i64(j, d->sm_count);
            else
                tfb_json_null(j);
            tfb_trace_device_props_json(j, d);
            tfb_json_object_end(j);
        }
        tfb_trace_summary_free(&sum);
    }
    tfb_json_array_end(j);
    tfb_json_key(j, "trace_notes");
    tfb_trace_notes_json(j, t);
    tfb_json_key(j, "distributed");
    tfb_trace_dist_json(j, t);
}

static const tfb_json_field lateness_fields[] = {
    TFB_JSON_FIELD(tfb_ranks_trace_lateness, last, SIZE),
    TFB_JSON_FIELD(tfb_ranks_trace_lateness, last_share, FIN),
    TFB_JSON_FIELD(tfb_ranks_trace_lateness, mean_late_ns, FIN),
    TFB_JSON_FIELD(tfb_ranks_trace_lateness, wait_caused_ns, I64),
};

/* The straggler from the NCCL kernel starts (ranks_trace_straggler.h):
 * null until two ranks with NCCL kernels are traced. */
static void trace_straggler_json(tfb_json *j, const tfb_ranks_gpu_view *g)
{
    const tfb_ranks_trace_straggler *t = &g->trace_straggler;
    if (!t->per_rank || t->ranks < 2) {
        tfb_json_null(j);
        return;
    }
    tfb_json_object_begin(j);
    tfb_json_key(j, "compared");
    tfb_json_u64(j, t->compared);
    tfb_json_key(j, "ranks");
    tfb_json_u64(j, t->ranks);
    tfb_json_key(j, "straggler");
    if (t->straggler >= 0 && (size_t)t->straggler < g->n_ranks)
        tfb_json_i64(j, g->ranks[t->straggler].rank);
    else
        tfb_json_null(j);
    tfb_json_key(j, "share_min");
    tfb_json_double(j, TFB_RANKS_TRACE_STRAGGLER_SHARE);
    tfb_json_key(j, "collectives_min");
    tfb_json_u64(j, TFB_RANKS_TRACE_MIN_COLLECTIVES);
    tfb_json_key(j, "per_rank");
    tfb_json_array_begin(j);
    for (size_t i = 0; i < t->n && i < g->n_ranks; i++) {
        tfb_json_object_begin(j);
        tfb_json_key(j, "rank");
        tfb_json_i64(j, g->ranks[i].rank);
        TFB_JSON_FIELDS(j, &t->per_rank[i], lateness_fields);
        tfb_json_object_end(j);
    }
    tfb_json_array_end(j);
    tfb_json_object_end(j);
}

void tfb_ranks_gpu_json(tfb_json *j, const tfb_ranks_job *job,
                        const tfb_ranks_gpu_view *g)
{
    tfb_json_object_begin(j);
    tfb_json_key(j, "job");
    tfb_json_strn(j, job->name, job->name_len);
    TFB_JSON_FIELDS(j, g, gpu_view_fields);
    job_window_json(j, g);
    tfb_json_key(j, "ranks");
    tfb_json_array_begin(j);
    for (size_t i = 0; i < g->n_ranks; i++) {
        const tfb_ranks_gpu_rank *r = &g->ranks[i];
        tfb_json_object_begin(j);
        tfb_json_key(j, "rank");
        tfb_json_i64(j, r->rank);
        tfb_json_key(j, "run");
        tfb_json_str(j, r->run_name);
        static const char *const states[] = {"none", "loading", "ready",
                                             "failed"};
        tfb_json_key(j, "has_trace");
        tfb_json_bool(j, r->has_trace);
        tfb_json_key(j, "state");
        tfb_json_str(j, states[r->state >= 0 && r->state < 4 ? r->state : 0]);
        if (r->state == TFB_RANKS_TRACE_LOADING) {
            knum(j, "progress", r->progress);
        } else if (r->state == TFB_RANKS_TRACE_FAILED) {
            tfb_json_key(j, "error");
            tfb_json_str(j, r->error);
        }
        if (r->has_trace) {
            TFB_JSON_FIELDS(j, r, gpu_rank_fields);
            tfb_json_key(j, "window");
            tfb_trace_window_json(j, &r->window);
        }
        if (r->trace)
            trace_meta_json(j, r->trace);
        tfb_json_object_end(j);
    }
    tfb_json_array_end(j);
    /* The job's place in the world, from the traces' distributedInfo
     * (the rank directories may not say it). */
    tfb_json_key(j, "distributed");
    const struct tfb_trace *dt = NULL;
    for (size_t i = 0; i < g->n_ranks && !dt; i++)
        if (g->ranks[i].trace && g->ranks[i].trace->dist.present)
            dt = g->ranks[i].trace;
    tfb_trace_dist_json(j, dt);
    tfb_json_key(j, "trace_straggler");
    trace_straggler_json(j, g);
    /* A rank without a trace while others have one. */
    tfb_json_key(j, "notes");
    tfb_json_array_begin(j);
    int others = g->n_traced + g->n_loading + g->n_failed > 0;
    for (size_t i = 0; others && i < g->n_ranks; i++) {
        const tfb_ranks_gpu_rank *r = &g->ranks[i];
        char text[800];
        if (r->state == TFB_RANKS_TRACE_FAILED) {
            snprintf(text, sizeof text,
                     "rank %d: cannot read the GPU trace: %s", (int)r->rank,
                     r->error);
        } else if (r->state == TFB_RANKS_TRACE_NONE) {
            snprintf(text, sizeof text,
                     "rank %d (%s) has no GPU trace while other ranks have "
                     "one", (int)r->rank, r->run_name);
        } else if (r->has_trace && r->bad_intervals) {
            snprintf(text, sizeof text,
                     "rank %d: %zu trace intervals end before they start "
                     "and are left out", (int)r->rank, r->bad_intervals);
        } else {
            continue;
        }
        tfb_json_object_begin(j);
        tfb_json_key(j, "kind");
        tfb_json_str(j, r->state == TFB_RANKS_TRACE_FAILED ? "trace_error"
                        : r->has_trace                     ? "bad_values"
                                                           : "no_trace");
        tfb_json_key(j, "rank");
        tfb_json_i64(j, r->rank);
        tfb_json_key(j, "text");
        tfb_json_str(j, text);
        tfb_json_object_end(j);
    }
    /* What a rank's trace holds that was not read, or that it holds no
     * device work at all: never 0 devices without a word. */
    for (size_t i = 0; i < g->n_ranks; i++) {
        const tfb_ranks_gpu_rank *r = &g->ranks[i];
        size_t nn = tfb_trace_note_count(r->trace);
        for (size_t k = 0; r->trace && k <= nn; k++) {
            char note[512], text[800];
            if (k < nn) {
                tfb_trace_note_text(r->trace, k, note, sizeof note);
            } else if (r->has_trace && r->gpu.n_devices == 0) {
                snprintf(note, sizeof note,
                         "the trace holds no device work (no kernel, copy "
                         "or memset read)");
            } else {
                continue;
            }
            snprintf(text, sizeof text, "rank %d: %s", (int)r->rank, note);
            tfb_json_object_begin(j);
            tfb_json_key(j, "kind");
            tfb_json_str(j, "trace_note");
            tfb_json_key(j, "rank");
            tfb_json_i64(j, r->rank);
            tfb_json_key(j, "text");
            tfb_json_str(j, text);
            tfb_json_object_end(j);
        }
    }
    tfb_json_array_end(j);
    tfb_json_object_end(j);
}
