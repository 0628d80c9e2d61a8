/*
 * trace_meta_json.c - what a trace says of itself, as the JSON every
 * route that shows a run's trace writes the same way (the GPU summary, the
 * Ranks view) and as the notes' text the report prints: the categories
 * the loader did not understand, the devices' properties, Kineto's
 * distributedInfo and the step window in use (trace.h).
 */
#include <stdio.h>

#include "core/json.h"
#include "trace/trace.h"

size_t tfb_trace_note_count(const tfb_trace *t)
{
    return t ? t->nnotes + (t->notes_more_events > 0) : 0;
}

int tfb_trace_note_text(const tfb_trace *t, size_t i, char *buf, size_t cap)
{
    if (!t || !cap)
        return 0;
    if (i < t->nnotes) {
        const tfb_trace_note *n = &t->notes[i];
        return snprintf(buf, cap,
                        "%lld event%s of category \"%s\" not understood: "
                        "not read as device work",
                        (long long)n->events, n->events == 1 ? "" : "s",
                        tfb_trace_str(t, n->category, "?"));
    }
    if (i == t->nnotes && t->notes_more_events > 0)
        return snprintf(buf, cap,
                        "%lld more events of categories not understood "
                        "(past the first %d categories)",
                        (long long)t->notes_more_events, TFB_TRACE_MAX_NOTES);
    buf[0] = '\0';
    return 0;
}

void tfb_trace_notes_json(tfb_json *j, const tfb_trace *t)
{
    tfb_json_array_begin(j);
    size_t n = tfb_trace_note_count(t);
    for (size_t i = 0; i < n; i++) {
        char text[512];
        tfb_trace_note_text(t, i, text, sizeof text);
        tfb_json_object_begin(j);
        tfb_json_key(j, "category");
        tfb_json_str(j, i < t->nnotes
                            ? tfb_trace_str(t, t->notes[i].category, NULL)
                            : NULL);
        tfb_json_key(j, "events");
        tfb_json_i64(j, i < t->nnotes ? t->notes[i].events
                                      : t->notes_more_events);
        tfb_json_key(j, "text");
        tfb_json_str(j, text);
        tfb_json_object_end(j);
    }
    tfb_json_array_end(j);
}

static const tfb_json_field dist_fields[] = {
    TFB_JSON_FIELD(tfb_trace_dist, rank, STEP),
    TFB_JSON_FIELD(tfb_trace_dist, world_size, STEP),
    TFB_JSON_FIELD(tfb_trace_dist, pg_count, STEP),
};

static const tfb_json_field pg_fields[] = {
    TFB_JSON_FIELD(tfb_trace_pg, size, STEP),
};

void tfb_trace_dist_json(tfb_json *j, const tfb_trace *t)
{
    if (!t || !t->dist.present) {
        tfb_json_null(j);
        return;
    }
    tfb_json_object_begin(j);
    TFB_JSON_FIELDS(j, &t->dist, dist_fields);
    tfb_json_key(j, "backend");
    tfb_json_str(j, tfb_trace_str(t, t->dist.backend, NULL));
    tfb_json_key(j, "process_groups");
    tfb_json_array_begin(j);
    for (size_t i = 0; i < t->npgs; i++) {
        const tfb_trace_pg *g = &t->pgs[i];
        tfb_json_object_begin(j);
        tfb_json_key(j, "name");
        tfb_json_str(j, tfb_trace_str(t, g->name, NULL));
        tfb_json_key(j, "desc");
        tfb_json_str(j, tfb_trace_str(t, g->desc, NULL));
        tfb_json_key(j, "backend");
        tfb_json_str(j, tfb_trace_str(t, g->backend, NULL));
        TFB_JSON_FIELDS(j, g, pg_fields);
        tfb_json_key(j, "ranks");
        tfb_json_str(j, tfb_trace_str(t, g->ranks, NULL));
        tfb_json_object_end(j);
    }
    tfb_json_array_end(j);
    tfb_json_object_end(j);
}

void tfb_trace_device_props_json(tfb_json *j,
                                 const tfb_trace_device_summary *d)
{
    tfb_json_key(j, "compute_capability");
    if (d->cc_major >= 0 && d->cc_minor >= 0) {
        char cc[32];
        snprintf(cc, sizeof cc, "%d.%d", (int)d->cc_major, (int)d->cc_minor);
        tfb_json_str(j, cc);
    } else {
        tfb_json_null(j);
    }
    tfb_json_key(j, "total_mem");
    if (d->total_mem >= 0)
        tfb_json_i64(j, d->total_mem);
    else
        tfb_json_null(j);
}

static const tfb_json_field window_fields[] = {
    TFB_JSON_FIELD(tfb_trace_window, mode, STR),
    TFB_JSON_FIELD(tfb_trace_window, requested, STR),
    TFB_JSON_FIELD(tfb_trace_window, start_ns, I64),
    TFB_JSON_FIELD(tfb_trace_window, end_ns, I64),
    TFB_JSON_FIELD(tfb_trace_window, duration_ns, I64),
    TFB_JSON_FIELD(tfb_trace_window, steps, STEP),
    TFB_JSON_FIELD(tfb_trace_window, note, STR),
};

void tfb_trace_window_json(tfb_json *j, const tfb_trace_window *w)
{
    TFB_JSON_STRUCT(j, w, window_fields);
}
