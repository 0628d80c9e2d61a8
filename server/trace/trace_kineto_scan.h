/*
 * trace_kineto_scan.h - the one reader of PyTorch profiler (Kineto) JSON,
 * *.pt.trace.json[.gz]: walks the events of a file in place and hands each
 * to a callback with the fields the trace layer uses. Both sides of a
 * trace read files through it: the device events (trace_load_kineto.c,
 * into the GPU trace) and the host events (trace_host_kineto.c, CPU ops,
 * runtime calls and ranges, into the host model); the memory events
 * (trace_load_memory.c) walk the file with its steps.
 *
 * The JSON is scanned with a small scanner that skips what it does not
 * need: no tree is built, containers are skipped by counting brackets (no
 * recursion, so nesting cannot exhaust the stack). Malformed input ends
 * the scan; what was read before is kept.
 *
 * Times: ts/dur are µs with up to three decimals, converted to integer ns
 * digit by digit (a double cannot hold epoch µs to the ns); a top-level
 * baseTimeNanoseconds is handed to the callback to add.
 *
 * Thread-safety: any thread; no state outside the call.
 */
#ifndef TFB_SERVER_TRACE_KINETO_SCAN_H
#define TFB_SERVER_TRACE_KINETO_SCAN_H

#include <stddef.h>
#include <stdint.h>

#include "base/json_str.h"
#include "trace/trace.h"

/* A value as it stands in the text: a string's contents (escaped form,
 * has_esc when it holds a backslash) or a number's text; s NULL when the
 * field is absent. Points into the file's text: valid during the
 * callback only. */
typedef struct tfb_trace_kineto_tok {
    const char *s;
    size_t len;
    int is_str, has_esc;
} tfb_trace_kineto_tok;

/* One event: its top-level fields and the args the trace layer reads. */
typedef struct tfb_trace_kineto_event {
    tfb_trace_kineto_tok ph, cat, name, pid, tid, ts, dur;
    /* args: correlation, device, stream, bytes, "registers per thread",
     * "shared memory", name (thread_name metadata) */
    tfb_trace_kineto_tok a_corr, a_dev, a_stream, a_bytes, a_regs, a_smem,
        a_name;
    /* args of a collective (PyTorch's record_param_comms op, and the NCCL
     * kernel in PyTorch 2.x): "Collective name", "In msg nelems", "Out msg
     * nelems", "dtype", "Group size"; "External id" (an op and the GPU
     * work it launched share it) */
    tfb_trace_kineto_tok a_coll, a_in_nelems, a_out_nelems, a_dtype,
        a_group_size, a_ext_id;
    int64_t grid[3], block[3]; /* args grid / block, 0 when absent */
} tfb_trace_kineto_event;

/* Called for each event with the file's baseTimeNanoseconds (0 when
 * absent) and whether the file is a legacy bare array of events
 * (torch.profiler built without Kineto). A nonzero return stops the scan
 * and is returned by tfb_trace_kineto_scan. */
typedef int (*tfb_trace_kineto_event_fn)(void *ctx,
                                         const tfb_trace_kineto_event *e,
                                         int64_t base_ns, int legacy);

/* The file's own metadata, its top-level keys (read before the events):
 * deviceProperties (the first TFB_TRACE_KINETO_MAX_DEVPROPS entries) and
 * distributedInfo (its first TFB_TRACE_MAX_PROCESS_GROUPS process
 * groups). Numbers are -1 and tokens absent (s NULL) where the file does
 * not say them; ranks is the raw text of a group's "ranks" array. Tokens
 * point into the file's text: valid during the callback only. */
#define TFB_TRACE_KINETO_MAX_DEVPROPS 64
typedef struct tfb_trace_kineto_devprop {
    int64_t id, total_mem, major, minor, sms;
    tfb_trace_kineto_tok name;
} tfb_trace_kineto_devprop;

typedef struct tfb_trace_kineto_pg {
    tfb_trace_kineto_tok name, desc, backend;
    int64_t size;
    const char *ranks;  /* "[0, 1, ...]", NULL when absent */
    size_t ranks_len;
} tfb_trace_kineto_pg;

typedef struct tfb_trace_kineto_meta {
    tfb_trace_kineto_devprop dev[TFB_TRACE_KINETO_MAX_DEVPROPS];
    size_t ndev;
    int has_dist;
    int64_t rank, world_size, pg_count;
    tfb_trace_kineto_tok backend;
    tfb_trace_kineto_pg pg[TFB_TRACE_MAX_PROCESS_GROUPS];
    size_t npg;
} tfb_trace_kineto_meta;

/* Called once, before the first event, when meta_fn is given; a nonzero
 * return stops the scan. */
typedef int (*tfb_trace_kineto_meta_fn)(void *ctx,
                                        const tfb_trace_kineto_meta *m);

/* Scans path (plain or gzip, within trace_file.h's caps). legacy_ok: a
 * bare array of events is a trace too (else it is not one). Returns 1
 * when the file is a trace (its events were handed over), 0 when it is
 * not one (unreadable, damaged .gz, no traceEvents), TFB_ETOOBIG (past the
 * size caps) or TFB_ENOMEM (both said in ctl's message, trace_internal.h;
 * ctl may be NULL), or the callback's nonzero return. */
struct tfb_trace_load_ctl;
int tfb_trace_kineto_scan(const char *path, int legacy_ok,
                          struct tfb_trace_load_ctl *ctl,
                          tfb_trace_kineto_event_fn fn, void *ctx);
/* As tfb_trace_kineto_scan, handing the file's metadata to meta_fn
 * first (may be NULL). */
int tfb_trace_kineto_scan_meta(const char *path, int legacy_ok,
                               struct tfb_trace_load_ctl *ctl,
                               tfb_trace_kineto_event_fn fn,
                               tfb_trace_kineto_meta_fn meta_fn, void *ctx);

/* The scanner's steps, for a reader that walks Kineto JSON itself (the
 * memory events, trace_load_memory.c, which refuse a damaged file where
 * the scan keeps what it read): a position in the text, bad once it is
 * not JSON. White space and strings are inline: the scan takes them per
 * key and per value. */
typedef struct tfb_trace_kineto_pos {
    const char *p, *end;
    int bad;
} tfb_trace_kineto_pos;

static inline void tfb_trace_kineto_ws(tfb_trace_kineto_pos *s)
{
    while (s->p < s->end && (*s->p == ' ' || *s->p == '\n' || *s->p == '\r' ||
                             *s->p == '\t'))
        s->p++;
}

/* A string (its raw contents into *t), else bad. */
static inline int tfb_trace_kineto_str(tfb_trace_kineto_pos *s,
                                       tfb_trace_kineto_tok *t)
{
    tfb_trace_kineto_ws(s);
    const char *next = tfb_json_str_scan(s->p, s->end, &t->s, &t->len,
                                         &t->has_esc);
    if (!next) {
        s->bad = 1;
        return 0;
    }
    t->is_str = 1;
    s->p = next;
    return 1;
}

/* 1 and past c when c comes next (after white space), else 0. */
int tfb_trace_kineto_eat(tfb_trace_kineto_pos *s, char c);
/* Skips any value; a string's contents or a scalar's text go to *v when
 * v is not NULL (s NULL for a container). */
void tfb_trace_kineto_skip(tfb_trace_kineto_pos *s, tfb_trace_kineto_tok *v);

/* Token helpers: exact match; ASCII case-insensitive match (lit lower
 * case); integer value (numbers with a fraction or exponent truncated;
 * numeric strings too), def when none; µs text -> ns (exact for plain
 * decimals), 1 on success. */
int tfb_trace_kineto_tok_is(const tfb_trace_kineto_tok *t, const char *lit);
int tfb_trace_kineto_tok_ieq(const tfb_trace_kineto_tok *t, const char *lit);
int64_t tfb_trace_kineto_tok_i64(const tfb_trace_kineto_tok *t, int64_t def);
int tfb_trace_kineto_us_to_ns(const tfb_trace_kineto_tok *t, int64_t *out);

/* A string token's text with escapes decoded into buf (cap bytes) or,
 * when it does not fit, a malloc'd copy (*heap set: free it); NUL
 * terminated, length in *len. NULL on ENOMEM. */
char *tfb_trace_kineto_tok_text(const tfb_trace_kineto_tok *t, char *buf,
                                size_t cap, size_t *len, char **heap);

#endif
