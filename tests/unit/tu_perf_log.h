/*
 * tu_perf_log.h - the tests' reading of an event file for issue 29: every
 * scalar by tag and step, texts, and the latest plugin record per tag
 * (as the server's tfb_run_records keeps them). Header-only, for
 * test_step_work.c and test_gpu_energy.c.
 */
#ifndef TU_PERF_LOG_H
#define TU_PERF_LOG_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tfboard.h"
#include "test_util.h"

#define TU_MAX_POINTS 4096

typedef struct tu_point {
    char tag[64];
    int64_t step;
    double v;
} tu_point;

typedef struct tu_log {
    tu_point pt[TU_MAX_POINTS];
    int n;
    /* texts and records: tag, latest content */
    char tag[32][64];
    char text[32][8192];
    int ntext;
    int work_records; /* perf/work records seen (all versions) */
} tu_log;

static inline char *tu_text_slot(tu_log *l, const char *tag, size_t len)
{
    for (int i = 0; i < l->ntext; i++)
        if (strlen(l->tag[i]) == len && memcmp(l->tag[i], tag, len) == 0)
            return l->text[i];
    if (l->ntext >= 32)
        return NULL;
    snprintf(l->tag[l->ntext], sizeof l->tag[0], "%.*s", (int)len, tag);
    return l->text[l->ntext++];
}

/* Reads every event file of dir (one writer: one file). */
static inline void tu_read_log(const char *dir, tu_log *l)
{
    memset(l, 0, sizeof *l);
    char *path = tu_find_event_file(dir);
    if (!path)
        return;
    tfb_reader *r = NULL;
    if (tfb_reader_open(&r, path) != 0) {
        free(path);
        return;
    }
    tfb_event ev = {.size = sizeof ev};
    while (tfb_reader_next(r, &ev) == 1) {
        if (ev.kind != TFB_EVENT_SUMMARY)
            continue;
        size_t pos = 0;
        tfb_value v = {.size = sizeof v};
        while (tfb_summary_next(ev.summary, ev.summary_len, &pos, &v) == 1) {
            if (v.kind == TFB_VALUE_SCALAR && l->n < TU_MAX_POINTS) {
                tu_point *p = &l->pt[l->n++];
                snprintf(p->tag, sizeof p->tag, "%.*s", (int)v.tag.len,
                         v.tag.ptr);
                p->step = ev.step;
                p->v = v.scalar;
                continue;
            }
            tfb_strview s;
            if (tfb_value_string(&v, 0, &s) == 1) {
                char *slot = tu_text_slot(l, v.tag.ptr, v.tag.len);
                if (slot)
                    snprintf(slot, 8192, "%.*s", (int)s.len, s.ptr);
                if (v.tag.len == sizeof TFB_PERF_WORK_TAG - 1 &&
                    !memcmp(v.tag.ptr, TFB_PERF_WORK_TAG, v.tag.len))
                    l->work_records++;
            }
        }
    }
    tfb_reader_close(r);
    free(path);
}

/* The value of tag at step; 0 when absent (then *found = 0). */
static inline double tu_at(const tu_log *l, const char *tag, int64_t step,
                           int *found)
{
    for (int i = 0; i < l->n; i++)
        if (l->pt[i].step == step && strcmp(l->pt[i].tag, tag) == 0) {
            if (found)
                *found = 1;
            return l->pt[i].v;
        }
    if (found)
        *found = 0;
    return 0;
}

static inline int tu_count(const tu_log *l, const char *tag)
{
    int c = 0;
    for (int i = 0; i < l->n; i++)
        c += strcmp(l->pt[i].tag, tag) == 0;
    return c;
}

/* The latest text or record of tag; NULL when none. */
static inline const char *tu_text(const tu_log *l, const char *tag)
{
    for (int i = 0; i < l->ntext; i++)
        if (strcmp(l->tag[i], tag) == 0)
            return l->text[i];
    return NULL;
}

#endif
