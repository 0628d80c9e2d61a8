/*
 * query_runmemo.c - per-connection memo of what runs_wide and runs work
 * out per run and that does not change while the store does not: the
 * run's decoded hyperparameters and a status that no clock can change
 * (finished, diverged). Kept by the run's pointer with the store
 * generation it was worked out at (tfb_store_generation grows with any
 * change), so a run filter typed again and again on the page, or a second
 * query, decodes no record and judges no finished run again; any load
 * forgets it all. The status of a running, stalled or crashed run depends
 * on the clock and the writer's process: it is judged every time.
 * Memory: one decoded hyperparameter set per run read (a sweep's few
 * values), freed with the connection.
 */
#include <stdlib.h>

#include "analysis/hparams_analysis.h"
#include "analysis/run_status.h"
#include "base/deadline.h"
#include "query/query_internal.h"
#include "tfboard.h"

typedef struct qrunmemo {
    tfb_run *r;            /* the key's bytes live here */
    uint64_t h_gen, s_gen; /* generation + 1 each was worked out at; 0 none */
    tfb_hparams_set h;
    int state;             /* tfb_run_state, or -1: no status (trace only) */
} qrunmemo;

static qrunmemo *memo_of(tfb_query *q, tfb_run *r)
{
    qrunmemo *m = tfb_strtab_get(&q->runmemo, (const char *)&r, sizeof r);
    if (m)
        return m;
    m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    m->r = r;
    if (tfb_strtab_put(&q->runmemo, (const char *)&m->r, sizeof m->r, m) < 0) {
        free(m);
        return NULL;
    }
    return m;
}

const tfb_hparams_set *tfb_qrun_hparams(tfb_query *q, tfb_run *r)
{
    qrunmemo *m = memo_of(q, r);
    if (!m)
        return NULL;
    uint64_t gen = tfb_store_generation(q->store) + 1;
    if (m->h_gen == gen)
        return &m->h;
    if (m->h_gen)
        tfb_hparams_set_free(&m->h);
    m->h_gen = 0;
    if (tfb_run_hparams(q->store, r, &m->h) < 0) {
        tfb_hparams_set_free(&m->h);
        return NULL;
    }
    m->h_gen = gen;
    return &m->h;
}

int tfb_qrun_state(tfb_query *q, tfb_run *r)
{
    qrunmemo *m = memo_of(q, r);
    uint64_t gen = tfb_store_generation(q->store) + 1;
    if (m && m->s_gen == gen)
        return m->state;
    tfb_run_status st;
    int state = tfb_run_status_judge(r, tfb_now_wall(), &st) == 0
                    ? (int)st.state : -1;
    /* only what the data alone decides is kept */
    if (m && (state == TFB_RUN_FINISHED || state == TFB_RUN_DIVERGED)) {
        m->state = state;
        m->s_gen = gen;
    }
    return state;
}

void tfb_qrun_free(tfb_query *q)
{
    for (size_t i = 0; i < q->runmemo.cap; i++)
        if (q->runmemo.slots[i].hash) {
            qrunmemo *m = q->runmemo.slots[i].val;
            if (m->h_gen)
                tfb_hparams_set_free(&m->h);
            free(m);
        }
    tfb_strtab_free(&q->runmemo);
}
