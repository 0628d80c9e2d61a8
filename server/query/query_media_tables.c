/*
 * query_media_tables.c - the run-side tables of the other series kinds
 * (server/API.md "SQL tables"): histograms, histogram_buckets, texts and
 * images. A histogram or text series is pinned (the store's read lock)
 * only while one fill copies at most TFB_QUERY_CHUNK of its points; the
 * images come from the run's media index (metadata only: no image is
 * read).
 */
#include <stdlib.h>
#include <string.h>

#include "core/json.h"
#include "query/query_internal.h"
#include "store/media_index.h"
#include "tfboard.h"

/* ---- histograms and histogram_buckets -------------------------------- */

/* buckets as [[left, right, count], ...] (non-finite edges as the JSON
 * writer spells them) */
static int buckets_json(qcursor *c, qcell *x, const tfb_hist_bucket *b,
                        size_t n)
{
    tfb_json j;
    tfb_json_init(&j);
    tfb_json_array_begin(&j);
    for (size_t i = 0; i < n; i++) {
        tfb_json_array_begin(&j);
        tfb_json_double(&j, b[i].left);
        tfb_json_double(&j, b[i].right);
        tfb_json_double(&j, b[i].count);
        tfb_json_array_end(&j);
    }
    tfb_json_array_end(&j);
    size_t len = 0;
    char *s = tfb_json_failed(&j) ? NULL : tfb_json_take(&j, &len);
    tfb_json_free(&j);
    if (!s)
        return TFB_ENOMEM;
    int rc = qc_text(c, x, s, len);
    free(s);
    return rc;
}

/* One fill: at most TFB_QUERY_CHUNK points of one series under one pin
 * (per_bucket: one row a bucket, stopping at TFB_QUERY_FILL_ROWS rows;
 * a point is never split across fills, so its buckets come whole). */
static int hist_fill_any(qcursor *c, int per_bucket)
{
    int rc = qc_series(c, TFB_SERIES_HISTOGRAM);
    if (rc < 0)
        return rc;
    while (c->si < c->nseries && c->nrows == 0) {
        tfb_series *s = c->series[c->si];
        tfb_series_view v;
        tfb_series_read_begin(s, &v);
        const char *run = tfb_run_name(c->runs[c->ri]);
        const char *tag = tfb_series_tag(s);
        size_t end = c->pi + TFB_QUERY_CHUNK;
        if (end > v.count)
            end = v.count;
        for (; c->pi < end && rc == 0; c->pi++) {
            const tfb_hist_point *p = &v.hist[c->pi];
            if (per_bucket && c->nrows &&
                c->nrows + p->n_buckets > TFB_QUERY_FILL_ROWS)
                break;
            c->vt->q->rows_touched++;
            if (!qc_step_ok(c, v.step[c->pi]))
                continue;
            const tfb_hist_bucket *b = v.buckets + p->bucket_off;
            size_t nrow = per_bucket ? p->n_buckets : 1;
            for (size_t k = 0; k < nrow && rc == 0; k++) {
                qcell *x = qc_row(c);
                if (!x) {
                    rc = TFB_ENOMEM;
                    break;
                }
                qc_stable(&x[0], run);
                qc_stable(&x[1], tag);
                qc_int(&x[2], v.step[c->pi]);
                qc_dbl(&x[3], v.wall[c->pi]);
                if (per_bucket) {
                    qc_int(&x[4], (int64_t)k);
                    qc_dbl(&x[5], b[k].left);
                    qc_dbl(&x[6], b[k].right);
                    qc_dbl(&x[7], b[k].count);
                } else {
                    qc_dbl(&x[4], p->min);
                    qc_dbl(&x[5], p->max);
                    qc_dbl(&x[6], p->num);
                    qc_dbl(&x[7], p->sum);
                    qc_int(&x[8], p->n_buckets);
                    if (qc_used(c, 9))
                        rc = buckets_json(c, &x[9], b, p->n_buckets);
                }
            }
        }
        int over = c->pi >= v.count;
        tfb_series_read_end(s);
        if (rc < 0)
            return rc;
        if (over) {
            c->si++;
            c->pi = 0;
        }
    }
    if (c->si >= c->nseries)
        c->run_done = 1;
    return 0;
}

static int hist_fill(qcursor *c) { return hist_fill_any(c, 0); }
static int bucket_fill(qcursor *c) { return hist_fill_any(c, 1); }

const qtable tfb_qt_histograms = {
    "histograms",
    "CREATE TABLE x(run TEXT, tag TEXT, step INTEGER, wall_time REAL,"
    " min REAL, max REAL, num REAL, sum REAL, n_buckets INTEGER,"
    " buckets TEXT)",
    10, 1, 2, hist_fill, NULL};

const qtable tfb_qt_histogram_buckets = {
    "histogram_buckets",
    "CREATE TABLE x(run TEXT, tag TEXT, step INTEGER, wall_time REAL,"
    " bucket INTEGER, left REAL, right REAL, count REAL)",
    8, 1, 2, bucket_fill, NULL};

/* ---- texts ----------------------------------------------------------- */

static int texts_fill(qcursor *c)
{
    int rc = qc_series(c, TFB_SERIES_TEXT);
    if (rc < 0)
        return rc;
    while (c->si < c->nseries && c->nrows == 0) {
        tfb_series *s = c->series[c->si];
        tfb_series_view v;
        tfb_series_read_begin(s, &v);
        size_t end = c->pi + TFB_QUERY_CHUNK;
        if (end > v.count)
            end = v.count;
        for (; c->pi < end && rc == 0; c->pi++) {
            c->vt->q->rows_touched++;
            if (!qc_step_ok(c, v.step[c->pi]))
                continue;
            qcell *x = qc_row(c);
            if (!x) {
                rc = TFB_ENOMEM;
                break;
            }
            qc_stable(&x[0], tfb_run_name(c->runs[c->ri]));
            qc_stable(&x[1], tfb_series_tag(s));
            qc_int(&x[2], v.step[c->pi]);
            qc_dbl(&x[3], v.wall[c->pi]);
            qc_int(&x[4], v.text_len[c->pi]);
            if (qc_used(c, 5))
                rc = qc_text(c, &x[5], v.text_data + v.text_off[c->pi],
                             v.text_len[c->pi]);
        }
        int over = c->pi >= v.count;
        tfb_series_read_end(s);
        if (rc < 0)
            return rc;
        if (over) {
            c->si++;
            c->pi = 0;
        }
    }
    if (c->si >= c->nseries)
        c->run_done = 1;
    return 0;
}

const qtable tfb_qt_texts = {
    "texts",
    "CREATE TABLE x(run TEXT, tag TEXT, step INTEGER, wall_time REAL,"
    " bytes INTEGER, text TEXT)",
    6, 1, 2, texts_fill, NULL};

/* ---- images ---------------------------------------------------------- */

typedef struct images_state {
    tfb_media_tag_info *tags;
    size_t ntags, ti;
    tfb_media_entry *e;
    size_t ne, ei;
    int loaded;
} images_state;

static int images_fill(qcursor *c)
{
    images_state *is = c->state;
    tfb_media_index *ix = tfb_run_media(c->runs[c->ri]);
    if (!is) {
        is = c->state = calloc(1, sizeof *is);
        if (!is)
            return TFB_ENOMEM;
        if (ix && tfb_media_tags(ix, TFB_MEDIA_IMAGE, &is->tags,
                                 &is->ntags) < 0)
            return TFB_ENOMEM;
    }
    while (is->ti < is->ntags && c->nrows < TFB_QUERY_FILL_ROWS) {
        const char *tag = is->tags[is->ti].tag;
        if (c->tag && strcmp(c->tag, tag) != 0) {
            is->ti++;
            continue;
        }
        if (!is->loaded) {
            int rc = tfb_media_entries(ix, TFB_MEDIA_IMAGE, tag, -1, &is->e,
                                       &is->ne);
            if (rc < 0 && rc != TFB_ENOENT)
                return rc;
            is->loaded = 1;
            is->ei = 0;
            c->vt->q->rows_touched += (int64_t)is->ne;
        }
        while (is->ei < is->ne && c->nrows < TFB_QUERY_FILL_ROWS) {
            const tfb_media_entry *m = &is->e[is->ei++];
            if (!qc_step_ok(c, m->step))
                continue;
            qcell *x = qc_row(c);
            if (!x)
                return TFB_ENOMEM;
            qc_stable(&x[0], tfb_run_name(c->runs[c->ri]));
            int rc = qc_text(c, &x[1], tag, strlen(tag));
            if (rc < 0)
                return rc;
            qc_int(&x[2], m->step);
            qc_dbl(&x[3], m->wall);
            qc_int(&x[4], m->sample);
            if (m->width)
                qc_int(&x[5], m->width);
            if (m->height)
                qc_int(&x[6], m->height);
            qc_int(&x[7], m->len);
        }
        if (is->ei >= is->ne) {
            free(is->e);
            is->e = NULL;
            is->ne = 0;
            is->loaded = 0;
            is->ti++;
        }
    }
    if (is->ti >= is->ntags)
        c->run_done = 1;
    return 0;
}

static void images_reset(qcursor *c)
{
    images_state *is = c->state;
    if (is) {
        tfb_media_tag_infos_free(is->tags, is->ntags);
        free(is->e);
        free(is);
        c->state = NULL;
    }
}

const qtable tfb_qt_images = {
    "images",
    "CREATE TABLE x(run TEXT, tag TEXT, step INTEGER, wall_time REAL,"
    " sample INTEGER, width INTEGER, height INTEGER, bytes INTEGER)",
    8, 1, 2, images_fill, images_reset};
