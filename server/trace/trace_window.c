/*
 * trace_window.c - the step window (issue 34): the time range of a
 * trace's ProfilerStep#N annotations (all of them, or all but the last,
 * as HTA keeps by default), and a trace cut down to the work launched in
 * it. One computation behind every route and the report; the window is
 * applied at query time (a new, small trace built from the cached one),
 * so the run's cached trace and its columnar cache file stay whole.
 */
#include <stdlib.h>
#include <string.h>

#include "tfboard.h"
#include "trace/trace_internal.h"

static const char *const k_names[] = {"all", "steps", "steps_but_last"};

int tfb_trace_window_parse(const char *s, tfb_trace_window_mode *out)
{
    for (int i = 0; s && i < 3; i++)
        if (strcmp(s, k_names[i]) == 0) {
            *out = (tfb_trace_window_mode)i;
            return 0;
        }
    return TFB_EINVAL;
}

const char *tfb_trace_window_name(tfb_trace_window_mode m)
{
    return (unsigned)m < 3 ? k_names[m] : "all";
}

/* The whole trace: what mode "all" and a trace without steps answer. */
static void whole(const tfb_trace *t, tfb_trace_window_mode asked,
                  tfb_trace_window *w)
{
    memset(w, 0, sizeof *w);
    w->mode = "all";
    w->requested = tfb_trace_window_name(asked);
    w->start_ns = t ? t->start_ns : 0;
    w->end_ns = t ? t->end_ns : 0;
    w->steps = -1;
    w->duration_ns = w->end_ns - w->start_ns;
}

static int is_step_name(const char *s)
{
    static const char prefix[] = "ProfilerStep#";
    return s && strncmp(s, prefix, sizeof prefix - 1) == 0;
}

void tfb_trace_window_find(const tfb_trace_host *h, const tfb_trace *t,
                           tfb_trace_window_mode mode, tfb_trace_window *w)
{
    whole(t, mode, w);
    if (mode == TFB_TRACE_WINDOW_ALL)
        return;
    int64_t first = INT64_MAX, last_start = INT64_MIN, last_end = INT64_MIN;
    int64_t n = 0;
    for (size_t i = 0; h && i < h->n; i++) {
        const tfb_trace_host_event *e = &h->spans[i];
        if (e->kind != TFB_TRACE_HOST_RANGE && e->kind != TFB_TRACE_HOST_OP)
            continue;
        if (e->name >= h->nstrings || !is_step_name(h->strings[e->name]))
            continue;
        n++;
        if (e->start < first)
            first = e->start;
        if (e->start > last_start)
            last_start = e->start;
        if (e->end > last_end)
            last_end = e->end;
    }
    if (n == 0) {
        w->note = "no ProfilerStep annotations: the whole trace";
        return;
    }
    w->mode = tfb_trace_window_name(mode);
    w->applies = 1;
    w->start_ns = first;
    if (mode == TFB_TRACE_WINDOW_STEPS) {
        w->end_ns = last_end;
        w->steps = n;
    } else {
        /* HTA: what was launched before the last step began. */
        w->end_ns = last_start;
        w->steps = n - 1;
        if (n == 1)
            w->note = "one ProfilerStep: without it the window is empty";
    }
    w->duration_ns = w->end_ns - w->start_ns;
}

int tfb_trace_window_keeps(const tfb_trace *t, const tfb_trace_window *w,
                           const tfb_trace_span *s)
{
    if (!w->applies)
        return 1;
    int64_t x = s->start;
    if (s->kind <= TFB_TRACE_MEMSET && s->correlation >= 0) {
        const tfb_trace_call *c = tfb_trace_call_of(t, s->correlation);
        if (c)
            x = c->start;
    }
    return x >= w->start_ns && x < w->end_ns;
}

/* The index in b of t's string i (-1 unknown), memoised in map; *err
 * set to TFB_ENOMEM when it cannot be copied (a name is never dropped
 * silently). */
static int32_t restr(tfb_trace_builder *b, const tfb_trace *t, int32_t *map,
                     int32_t i, int *err)
{
    if (i < 0 || (size_t)i >= t->nstrings)
        return -1;
    if (map[i] == -2) {
        const char *s = t->strings[i];
        map[i] = tfb_trace_builder_str(b, s, strlen(s));
        if (map[i] < 0) {
            map[i] = -2;
            *err = TFB_ENOMEM;
            return -1;
        }
    }
    return map[i];
}

static int fill(tfb_trace_builder *b, const tfb_trace *t,
                const tfb_trace_window *w, int32_t *map)
{
    int err = 0;
    tfb_trace_builder_begin_file(b);
    for (size_t i = 0; i < t->ndevices && !err; i++) {
        tfb_trace_device d = t->devices[i];
        d.name = restr(b, t, map, d.name, &err);
        if (!err)
            err = tfb_trace_builder_device(b, d.id, d.name, d.sm_count);
        if (!err)
            tfb_trace_builder_device_props(b, &d);
    }
    for (size_t i = 0; i < t->nspans && !err; i++) {
        const tfb_trace_span *s = &t->spans[i];
        if (!tfb_trace_window_keeps(t, w, s))
            continue;
        tfb_trace_span_in in;
        memset(&in, 0, sizeof in);
        in.start = s->start;
        in.end = s->end;
        in.correlation = s->correlation;
        in.kind = s->kind;
        in.copy_kind = s->copy_kind;
        in.device = tfb_trace_span_device(t, s);
        in.stream = tfb_trace_span_stream(t, s);
        in.bytes = tfb_trace_span_bytes(t, s);
        in.step = tfb_trace_span_step(t, s);
        in.name = -1;
        const tfb_trace_kinfo *k = tfb_trace_span_kinfo(t, s);
        if (k) {
            in.name = restr(b, t, map, k->name, &err);
            memcpy(in.grid, k->grid, sizeof in.grid);
            memcpy(in.block, k->block, sizeof in.block);
            in.registers = k->registers;
            in.shared_mem = k->shared_mem;
        }
        if (!err)
            err = tfb_trace_builder_span(b, &in);
    }
    for (size_t i = 0; i < t->ncalls && !err; i++) {
        tfb_trace_call c = t->calls[i];
        if (c.start < w->start_ns || c.start >= w->end_ns)
            continue;
        c.name = restr(b, t, map, c.name, &err);
        if (!err)
            err = tfb_trace_builder_call(b, &c);
    }
    tfb_trace_builder_end_file(b, 1);
    return err;
}

int tfb_trace_window_apply(const tfb_trace *t, const tfb_trace_window *w,
                           tfb_trace **out)
{
    *out = NULL;
    int32_t *map = malloc((t->nstrings ? t->nstrings : 1) * sizeof *map);
    if (!map)
        return TFB_ENOMEM;
    for (size_t i = 0; i < t->nstrings; i++)
        map[i] = -2;
    tfb_trace_builder *b;
    int err = tfb_trace_builder_new(&b, NULL);
    if (!err) {
        err = fill(b, t, w, map);
        if (err)
            tfb_trace_builder_free(b);
        else
            err = tfb_trace_builder_finish(b, out);
    }
    free(map);
    if (!err) {
        (*out)->files_read = t->files_read;
        (*out)->files_skipped = t->files_skipped;
    }
    return err;
}
