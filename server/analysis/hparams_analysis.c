/*
 * hparams_analysis.c - decoding of HParamsPluginData and the experiment
 * view over all runs (see hparams_analysis.h).
 */
#include "analysis/hparams_analysis.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "core/json.h"
#include "base/str.h"
#include "base/strtab.h"
#include "base/vec.h"
/* libtfboard's header-only wire codec (pure inline functions). */
#include "collector/pb.h"

/* HParamsPluginData's oneof. */
enum { HP_EXPERIMENT = 2, HP_SESSION_START = 3, HP_SESSION_END = 4 };

static void value_free(tfb_hparam_value *v)
{
    if (v) {
        free(v->str);
        v->str = NULL;
    }
}

static int value_copy(tfb_hparam_value *dst, const tfb_hparam_value *src)
{
    *dst = *src;
    dst->str = NULL;
    if (src->str && !(dst->str = tfb_strndup(src->str, src->len)))
        return TFB_ENOMEM;
    return 0;
}

/* Copies a length-delimited field (NULs too) into a NUL-terminated
 * string, and its length: for names and values, which a writer may fill
 * with any bytes. */
static int dup_field_n(char **dst, size_t *len, const pb_field *f)
{
    char *s = tfb_strndup((const char *)f->p, f->len);
    if (!s)
        return TFB_ENOMEM;
    free(*dst);
    *dst = s;
    *len = f->len;
    return 0;
}

/* As dup_field_n, without the length (the string is cut at a NUL): for
 * the texts only shown as labels. */
static int dup_field(char **dst, const pb_field *f)
{
    size_t len;
    return dup_field_n(dst, &len, f);
}

/* google.protobuf.Value. An unknown field is skipped (forward compat). */
static int decode_value(const uint8_t *p, size_t len, tfb_hparam_value *v)
{
    const uint8_t *end = p + len;
    pb_field f;
    int r;
    memset(v, 0, sizeof *v);
    while ((r = pb_next(&p, end, &f)) == 1) {
        switch (f.num) {
        case 1:
            value_free(v);
            v->kind = TFB_HPV_NONE;
            break;
        case 2:
            if (f.wt != PB_I64)
                goto bad;
            value_free(v);
            v->kind = TFB_HPV_NUMBER;
            v->number = pb_as_double(f.u);
            break;
        case 3:
            if (f.wt != PB_LEN)
                goto bad;
            value_free(v);
            v->kind = TFB_HPV_STRING;
            if (dup_field_n(&v->str, &v->len, &f) < 0)
                return TFB_ENOMEM;
            break;
        case 4:
            if (f.wt != PB_VARINT)
                goto bad;
            value_free(v);
            v->kind = TFB_HPV_BOOL;
            v->boolean = f.u != 0;
            break;
        case 5:
        case 6:
            value_free(v);
            v->kind = TFB_HPV_OTHER;
            break;
        default:
            break;
        }
    }
    if (r < 0)
        goto bad;
    return 0;
bad:
    value_free(v);
    return TFB_EINVAL;
}

/* ListValue{values=1}: appended to *vals. */
static int decode_list(const uint8_t *p, size_t len, tfb_hparam_value **vals,
                       size_t *n)
{
    const uint8_t *end = p + len;
    pb_field f;
    int r, e = 0;
    /* The list as a vector while it grows (its array holds *n). */
    TFB_VEC(tfb_hparam_value) v = {*vals, *n, *n};
    while (e == 0 && (r = pb_next(&p, end, &f)) == 1) {
        if (f.num != 1)
            continue;
        tfb_hparam_value *x = f.wt != PB_LEN ? NULL : tfb_vec_add(&v);
        e = f.wt != PB_LEN ? TFB_EINVAL : !x ? TFB_ENOMEM : 0;
        if (x && (e = decode_value(f.p, f.len, x)) < 0)
            v.n--;
    }
    *vals = v.v;
    *n = v.n;
    return e < 0 ? e : r < 0 ? TFB_EINVAL : 0;
}

static void info_free(tfb_hparam_info *i)
{
    free(i->name);
    free(i->display_name);
    free(i->description);
    for (size_t k = 0; k < i->n_domain; k++)
        value_free(&i->domain[k]);
    free(i->domain);
}

static void metric_free(tfb_hparam_metric *m)
{
    free(m->group);
    free(m->tag);
    free(m->display_name);
    free(m->description);
}

static int decode_info(const uint8_t *p, size_t len, tfb_hparam_info *in)
{
    const uint8_t *end = p + len;
    pb_field f;
    int r, e = 0;
    memset(in, 0, sizeof *in);
    in->min_value = in->max_value = NAN;
    while ((r = pb_next(&p, end, &f)) == 1 && e == 0) {
        int want_len = f.num == 1 || f.num == 2 || f.num == 3 ||
                       f.num == 5 || f.num == 6;
        if ((want_len && f.wt != PB_LEN) || (f.num == 4 && f.wt != PB_VARINT))
            return TFB_EINVAL;
        switch (f.num) {
        case 1: e = dup_field_n(&in->name, &in->name_len, &f); break;
        case 2: e = dup_field(&in->display_name, &f); break;
        case 3: e = dup_field(&in->description, &f); break;
        case 4: in->type = (int)(int32_t)f.u; break;
        case 5: e = decode_list(f.p, f.len, &in->domain, &in->n_domain); break;
        case 6: {
            const uint8_t *q = f.p, *qe = f.p + f.len;
            pb_field g;
            int rr;
            in->has_interval = 1;
            while ((rr = pb_next(&q, qe, &g)) == 1) {
                if ((g.num == 1 || g.num == 2) && g.wt != PB_I64)
                    return TFB_EINVAL;
                if (g.num == 1)
                    in->min_value = pb_as_double(g.u);
                else if (g.num == 2)
                    in->max_value = pb_as_double(g.u);
            }
            if (rr < 0)
                return TFB_EINVAL;
            break;
        }
        default: break;
        }
    }
    if (e < 0)
        return e;
    if (r < 0 || !in->name)
        return TFB_EINVAL; /* an HParamInfo without a name says nothing */
    return 0;
}

static int decode_metric(const uint8_t *p, size_t len, tfb_hparam_metric *m)
{
    const uint8_t *end = p + len;
    pb_field f;
    int r, e = 0;
    memset(m, 0, sizeof *m);
    while ((r = pb_next(&p, end, &f)) == 1 && e == 0) {
        if ((f.num == 1 || f.num == 3 || f.num == 4) && f.wt != PB_LEN)
            return TFB_EINVAL;
        switch (f.num) {
        case 1: {
            const uint8_t *q = f.p, *qe = f.p + f.len;
            pb_field g;
            int rr;
            while ((rr = pb_next(&q, qe, &g)) == 1 && e == 0) {
                if ((g.num == 1 || g.num == 2) && g.wt != PB_LEN)
                    return TFB_EINVAL;
                if (g.num == 1)
                    e = dup_field(&m->group, &g);
                else if (g.num == 2)
                    e = dup_field(&m->tag, &g);
            }
            if (rr < 0)
                return TFB_EINVAL;
            break;
        }
        case 3: e = dup_field(&m->display_name, &f); break;
        case 4: e = dup_field(&m->description, &f); break;
        case 5: m->dataset_type = (int)(int32_t)f.u; break;
        default: break;
        }
    }
    if (e < 0)
        return e;
    if (r < 0 || !m->tag)
        return TFB_EINVAL;
    return 0;
}

static void clear_experiment(tfb_hparams_set *h)
{
    free(h->exp_name);
    free(h->exp_description);
    free(h->exp_user);
    h->exp_name = h->exp_description = h->exp_user = NULL;
    for (size_t i = 0; i < h->n_infos; i++)
        info_free(&h->infos[i]);
    free(h->infos);
    for (size_t i = 0; i < h->n_metrics; i++)
        metric_free(&h->metrics[i]);
    free(h->metrics);
    h->infos = NULL;
    h->metrics = NULL;
    h->n_infos = h->n_metrics = 0;
    h->has_experiment = 0;
    h->exp_time_created = NAN;
}

static void clear_start(tfb_hparams_set *h)
{
    for (size_t i = 0; i < h->n_hparams; i++) {
        free(h->hparams[i].name);
        value_free(&h->hparams[i].value);
    }
    free(h->hparams);
    h->hparams = NULL;
    h->n_hparams = h->n_left_out = 0;
    tfb_strtab_free(&h->index);
    free(h->group_name);
    free(h->model_uri);
    h->group_name = h->model_uri = NULL;
    h->has_start = 0;
    h->start_time = NAN;
}

/* Decodes into a fresh set t, then moves that part into out, so a
 * malformed record leaves out as it was. */
static int decode_experiment(const uint8_t *p, size_t len, tfb_hparams_set *t)
{
    const uint8_t *end = p + len;
    pb_field f;
    int r, e = 0;
    /* The lists as vectors while they grow (their arrays hold n_). */
    TFB_VEC(tfb_hparam_info) infos = {t->infos, t->n_infos, t->n_infos};
    TFB_VEC(tfb_hparam_metric) mets = {t->metrics, t->n_metrics,
                                       t->n_metrics};
    t->has_experiment = 1;
    while (e == 0 && (r = pb_next(&p, end, &f)) == 1) {
        if (((f.num == 1 || f.num == 2 || f.num == 4 || f.num == 5 ||
              f.num == 6) && f.wt != PB_LEN) ||
            (f.num == 3 && f.wt != PB_I64)) {
            e = TFB_EINVAL;
            break;
        }
        switch (f.num) {
        case 1: e = dup_field(&t->exp_description, &f); break;
        case 2: e = dup_field(&t->exp_user, &f); break;
        case 3: t->exp_time_created = pb_as_double(f.u); break;
        case 4: {
            tfb_hparam_info *in = tfb_vec_add(&infos);
            if (!in)
                e = TFB_ENOMEM;
            else if ((e = decode_info(f.p, f.len, in)) < 0)
                info_free(&infos.v[--infos.n]);
            break;
        }
        case 5: {
            tfb_hparam_metric *m = tfb_vec_add(&mets);
            if (!m)
                e = TFB_ENOMEM;
            else if ((e = decode_metric(f.p, f.len, m)) < 0)
                metric_free(&mets.v[--mets.n]);
            break;
        }
        case 6: e = dup_field(&t->exp_name, &f); break;
        default: break;
        }
    }
    t->infos = infos.v;
    t->n_infos = infos.n;
    t->metrics = mets.v;
    t->n_metrics = mets.n;
    if (e < 0)
        return e;
    return r < 0 ? TFB_EINVAL : 0;
}

/* Adds kv (taking its name and value: they are NULL after) to the
 * session, found by a hashed name: a map keeps the last entry of a key;
 * a new name past TFB_HPARAMS_MAX_PER_SESSION is counted and left out. */
typedef TFB_VEC(tfb_hparam_kv) kv_vec;

static int put_hparam(tfb_hparams_set *t, kv_vec *hp, tfb_hparam_kv *kv)
{
    uint64_t h = tfb_hash_bytes(kv->name, kv->name_len);
    size_t at = (size_t)(uintptr_t)tfb_strtab_get_h(&t->index, kv->name,
                                                    kv->name_len, h);
    if (at) {
        tfb_hparam_kv *old = &t->hparams[at - 1];
        value_free(&old->value);
        old->value = kv->value;
        kv->value.str = NULL;
        return 0; /* kv->name is freed by the caller */
    }
    if (t->n_hparams >= TFB_HPARAMS_MAX_PER_SESSION) {
        t->n_left_out++;
        return 0;
    }
    int grown = tfb_vec_need(hp, hp->n + 1);
    t->hparams = hp->v;
    if (grown < 0 || tfb_strtab_reserve(&t->index, t->n_hparams + 1) < 0)
        return TFB_ENOMEM;
    tfb_hparam_kv *d = &t->hparams[t->n_hparams];
    *d = *kv;
    kv->name = NULL;
    kv->value.str = NULL;
    /* reserved above: cannot fail */
    tfb_strtab_put_h(&t->index, d->name, d->name_len, h,
                     (void *)(uintptr_t)(t->n_hparams + 1));
    t->n_hparams = ++hp->n;
    return 0;
}

static int decode_start(const uint8_t *p, size_t len, tfb_hparams_set *t)
{
    const uint8_t *end = p + len;
    pb_field f;
    int r, e = 0;
    /* The list as a vector while it grows (its array holds n_hparams). */
    kv_vec hp = {t->hparams, t->n_hparams, t->n_hparams};
    t->has_start = 1;
    while ((r = pb_next(&p, end, &f)) == 1 && e == 0) {
        if ((f.num >= 1 && f.num <= 4) && f.wt != PB_LEN)
            return TFB_EINVAL;
        if (f.num == 5 && f.wt != PB_I64)
            return TFB_EINVAL;
        switch (f.num) {
        case 1: { /* map entry {key=1, value=2} */
            const uint8_t *q = f.p, *qe = f.p + f.len;
            pb_field g;
            int rr;
            tfb_hparam_kv kv;
            memset(&kv, 0, sizeof kv);
            while ((rr = pb_next(&q, qe, &g)) == 1 && e == 0) {
                if ((g.num == 1 || g.num == 2) && g.wt != PB_LEN) {
                    e = TFB_EINVAL;
                } else if (g.num == 1) {
                    e = dup_field_n(&kv.name, &kv.name_len, &g);
                } else if (g.num == 2) {
                    value_free(&kv.value);
                    e = decode_value(g.p, g.len, &kv.value);
                }
            }
            if (e == 0 && (rr < 0 || !kv.name))
                e = TFB_EINVAL;
            if (e == 0)
                e = put_hparam(t, &hp, &kv);
            free(kv.name);
            value_free(&kv.value);
            break;
        }
        case 2: e = dup_field(&t->model_uri, &f); break;
        case 3: break; /* monitor_url: not shown */
        case 4: e = dup_field_n(&t->group_name, &t->group_name_len, &f); break;
        case 5: t->start_time = pb_as_double(f.u); break;
        default: break;
        }
    }
    if (e < 0)
        return e;
    if (r < 0)
        return TFB_EINVAL;
    if (!t->group_name && !(t->group_name = tfb_strdup("")))
        return TFB_ENOMEM; /* group_name_len stays 0 */
    return 0;
}

static int decode_end(const uint8_t *p, size_t len, tfb_hparams_set *t)
{
    const uint8_t *end = p + len;
    pb_field f;
    int r;
    t->has_end = 1;
    while ((r = pb_next(&p, end, &f)) == 1) {
        if (f.num == 1) {
            if (f.wt != PB_VARINT)
                return TFB_EINVAL;
            t->status = (int)(int32_t)f.u;
        } else if (f.num == 2) {
            if (f.wt != PB_I64)
                return TFB_EINVAL;
            t->end_time = pb_as_double(f.u);
        }
    }
    return r < 0 ? TFB_EINVAL : 0;
}

static void set_init(tfb_hparams_set *h)
{
    memset(h, 0, sizeof *h);
    h->start_time = h->end_time = h->exp_time_created = NAN;
}

void tfb_hparams_set_free(tfb_hparams_set *h)
{
    if (!h)
        return;
    clear_experiment(h);
    clear_start(h);
    free(h->bad_tag);
    set_init(h);
}

int tfb_hparams_decode(const uint8_t *content, size_t len,
                       tfb_hparams_set *out)
{
    const uint8_t *p = content, *end = content + len;
    pb_field f, part = {0};
    int r, have = 0;
    while ((r = pb_next(&p, end, &f)) == 1) {
        if (f.num == 1 && f.wt != PB_VARINT)
            return TFB_EINVAL;
        if (f.num >= HP_EXPERIMENT && f.num <= HP_SESSION_END) {
            if (f.wt != PB_LEN)
                return TFB_EINVAL;
            part = f; /* a oneof: the last one wins */
            have = 1;
        }
    }
    if (r < 0 || !have)
        return TFB_EINVAL;
    tfb_hparams_set t;
    set_init(&t);
    int e;
    switch (part.num) {
    case HP_EXPERIMENT:
        e = decode_experiment(part.p, part.len, &t);
        if (e == 0) {
            clear_experiment(out);
            out->has_experiment = 1;
            out->exp_name = t.exp_name;
            out->exp_description = t.exp_description;
            out->exp_user = t.exp_user;
            out->exp_time_created = t.exp_time_created;
            out->infos = t.infos;
            out->n_infos = t.n_infos;
            out->metrics = t.metrics;
            out->n_metrics = t.n_metrics;
            set_init(&t);
        }
        break;
    case HP_SESSION_START:
        e = decode_start(part.p, part.len, &t);
        if (e == 0) {
            clear_start(out);
            out->has_start = 1;
            out->hparams = t.hparams;
            out->n_hparams = t.n_hparams;
            out->n_left_out = t.n_left_out;
            out->index = t.index;
            out->group_name = t.group_name;
            out->group_name_len = t.group_name_len;
            out->model_uri = t.model_uri;
            out->start_time = t.start_time;
            set_init(&t);
        }
        break;
    default:
        e = decode_end(part.p, part.len, &t);
        if (e == 0) {
            out->has_end = 1;
            out->status = t.status;
            out->end_time = t.end_time;
        }
        break;
    }
    tfb_hparams_set_free(&t);
    return e;
}

int tfb_run_hparams(tfb_store *s, tfb_run *r, tfb_hparams_set *out)
{
    (void)s;
    set_init(out);
    tfb_plugin_record *recs;
    size_t n;
    int e = tfb_run_records(r, "hparams", &recs, &n);
    if (e < 0)
        return e;
    for (size_t i = 0; i < n; i++) {
        e = tfb_hparams_decode(recs[i].content, recs[i].content_len, out);
        if (e == TFB_ENOMEM)
            break;
        if (e < 0) {
            if (out->n_bad++ == 0 &&
                !(out->bad_tag = tfb_strdup(recs[i].tag ? recs[i].tag : ""))) {
                e = TFB_ENOMEM;
                break;
            }
        }
        e = 0;
    }
    tfb_plugin_records_free(recs, n);
    return e;
}

int tfb_run_has_hparams(tfb_store *s, tfb_run *r)
{
    (void)s;
    tfb_plugin_record *recs;
    size_t n;
    if (tfb_run_records(r, "hparams", &recs, &n) < 0)
        return 0;
    tfb_plugin_records_free(recs, n);
    return n > 0;
}

/* ---- helpers ---------------------------------------------------------- */

static int kind_rank(tfb_hpv_kind k)
{
    switch (k) {
    case TFB_HPV_NUMBER: return 0;
    case TFB_HPV_STRING: return 1;
    case TFB_HPV_BOOL: return 2;
    case TFB_HPV_NONE: return 3;
    default: return 4;
    }
}

int tfb_hparam_value_cmp(const tfb_hparam_value *a, const tfb_hparam_value *b)
{
    int ka = kind_rank(a->kind), kb = kind_rank(b->kind);
    if (ka != kb)
        return ka < kb ? -1 : 1;
    switch (a->kind) {
    case TFB_HPV_NUMBER:
        /* NaN after every number, equal to itself. */
        if (isnan(a->number) || isnan(b->number))
            return isnan(a->number) - isnan(b->number);
        return a->number < b->number ? -1 : a->number > b->number;
    case TFB_HPV_STRING: {
        size_t la = a->str ? a->len : 0, lb = b->str ? b->len : 0;
        int c = memcmp(a->str ? a->str : "", b->str ? b->str : "",
                       la < lb ? la : lb);
        return c ? c : (la > lb) - (la < lb);
    }
    case TFB_HPV_BOOL:
        return a->boolean - b->boolean;
    default:
        return 0;
    }
}

size_t tfb_hparam_value_text(const tfb_hparam_value *v, char *buf,
                             size_t cap)
{
    char num[40];
    const char *t = "";
    switch (v->kind) {
    case TFB_HPV_NUMBER:
        tfb_fmt_double(num, v->number);
        t = num;
        break;
    case TFB_HPV_STRING: t = v->str ? v->str : ""; break;
    case TFB_HPV_BOOL: t = v->boolean ? "true" : "false"; break;
    default: break;
    }
    size_t n = v->kind == TFB_HPV_STRING && v->str ? v->len : strlen(t);
    if (cap) {
        size_t c = n < cap - 1 ? n : cap - 1;
        memcpy(buf, t, c);
        buf[c] = '\0';
    }
    return n;
}

const tfb_hparam_value *tfb_hparams_findn(const tfb_hparams_set *h,
                                          const char *name, size_t len)
{
    size_t at = (size_t)(uintptr_t)tfb_strtab_get(&h->index, name, len);
    return at ? &h->hparams[at - 1].value : NULL;
}

const tfb_hparam_value *tfb_hparams_find(const tfb_hparams_set *h,
                                         const char *name)
{
    return tfb_hparams_findn(h, name, strlen(name));
}

const char *tfb_hparams_status_name(int status, char *buf)
{
    switch (status) {
    case TFB_HPS_UNKNOWN: return "unknown";
    case TFB_HPS_SUCCESS: return "success";
    case TFB_HPS_FAILURE: return "failure";
    case TFB_HPS_RUNNING: return "running";
    default:
        snprintf(buf, 24, "status %d", status);
        return buf;
    }
}

/* ---- the experiment ---------------------------------------------------- */

typedef struct exp_build {
    tfb_hparams_experiment *e;
    /* The capacities of e's arrays while they grow (as TFB_VECs that
     * lend their arrays to e): columns, metrics, each column's values. */
    size_t cap_c, cap_m;
    TFB_VEC(size_t) cap_v;
    size_t n_from_exp; /* columns that came from an experiment's infos */
    tfb_strtab cols;   /* column name -> index + 1 (keys: the names) */
    tfb_strtab mets;   /* "group\0tag" -> 1 (keys: in met_keys) */
    TFB_VEC(char *) met_keys;
} exp_build;

static int add_column(exp_build *b, const char *name, size_t len,
                      tfb_hparam_column **out)
{
    tfb_hparams_experiment *e = b->e;
    uint64_t h = tfb_hash_bytes(name, len);
    size_t at = (size_t)(uintptr_t)tfb_strtab_get_h(&b->cols, name, len, h);
    if (at) {
        *out = &e->columns[at - 1];
        return 0;
    }
    TFB_VEC(tfb_hparam_column) colv = {e->columns, e->n_columns, b->cap_c};
    int grown = tfb_vec_need(&colv, colv.n + 1);
    e->columns = colv.v;
    b->cap_c = colv.cap;
    if (grown < 0 || tfb_vec_need(&b->cap_v, e->n_columns + 1) < 0 ||
        tfb_strtab_reserve(&b->cols, e->n_columns + 1) < 0)
        return TFB_ENOMEM;
    tfb_hparam_column *c = &e->columns[e->n_columns];
    memset(c, 0, sizeof *c);
    c->type = -1; /* not known yet */
    c->min_seen = c->max_seen = NAN;
    c->min_value = c->max_value = NAN;
    if (!(c->name = tfb_strndup(name, len)))
        return TFB_ENOMEM;
    c->name_len = len;
    b->cap_v.v[e->n_columns] = 0;
    b->cap_v.n = ++e->n_columns;
    tfb_strtab_put_h(&b->cols, c->name, len, h, /* reserved: no failure */
                     (void *)(uintptr_t)e->n_columns);
    *out = c;
    return 0;
}

static int add_value(exp_build *b, tfb_hparam_column *c,
                     const tfb_hparam_value *v)
{
    if (v->kind == TFB_HPV_OTHER)
        return 0;
    if (v->kind == TFB_HPV_NUMBER && !isnan(v->number)) {
        if (isnan(c->min_seen) || v->number < c->min_seen)
            c->min_seen = v->number;
        if (isnan(c->max_seen) || v->number > c->max_seen)
            c->max_seen = v->number;
    }
    for (size_t i = 0; i < c->n_values; i++)
        if (tfb_hparam_value_cmp(&c->values[i], v) == 0)
            return 0;
    if (c->n_values == TFB_HPARAM_MAX_DISTINCT) {
        c->more_values = 1;
        return 0;
    }
    size_t *cap = &b->cap_v.v[c - b->e->columns];
    TFB_VEC(tfb_hparam_value) vals = {c->values, c->n_values, *cap};
    int grown = tfb_vec_need(&vals, vals.n + 1);
    c->values = vals.v;
    *cap = vals.cap;
    if (grown < 0 || value_copy(&c->values[c->n_values], v) < 0)
        return TFB_ENOMEM;
    c->n_values++;
    return 0;
}

static int merge_experiment(exp_build *b, const tfb_hparams_set *h,
                            int metrics_only)
{
    tfb_hparams_experiment *e = b->e;
    for (size_t i = 0; i < h->n_infos && !metrics_only; i++) {
        const tfb_hparam_info *in = &h->infos[i];
        tfb_hparam_column *c;
        if (add_column(b, in->name, in->name_len, &c) < 0)
            return TFB_ENOMEM;
        if (in->type > 0)
            c->type = in->type;
        if (!c->display_name && in->display_name && in->display_name[0] &&
            !(c->display_name = tfb_strdup(in->display_name)))
            return TFB_ENOMEM;
        if (!c->description && in->description && in->description[0] &&
            !(c->description = tfb_strdup(in->description)))
            return TFB_ENOMEM;
        if (in->has_interval && !c->has_interval) {
            c->has_interval = 1;
            c->min_value = in->min_value;
            c->max_value = in->max_value;
        }
        for (size_t k = 0; k < in->n_domain; k++)
            if (add_value(b, c, &in->domain[k]) < 0)
                return TFB_ENOMEM;
    }
    for (size_t i = 0; i < h->n_metrics; i++) {
        const tfb_hparam_metric *m = &h->metrics[i];
        /* merged by (group, tag), hashed */
        const char *g = m->group ? m->group : "";
        size_t gl = strlen(g), tl = strlen(m->tag);
        char *k = malloc(gl + 1 + tl);
        if (!k)
            return TFB_ENOMEM;
        memcpy(k, g, gl + 1);
        memcpy(k + gl + 1, m->tag, tl);
        if (tfb_strtab_get(&b->mets, k, gl + 1 + tl)) {
            free(k);
            continue;
        }
        if (e->n_metrics >= TFB_HPARAMS_MAX_METRICS) {
            free(k);
            e->metrics_left_out++;
            continue;
        }
        if (tfb_vec_push(&b->met_keys, k) < 0) {
            free(k);
            return TFB_ENOMEM;
        }
        if (tfb_strtab_put(&b->mets, k, gl + 1 + tl, k) < 0)
            return TFB_ENOMEM;
        TFB_VEC(tfb_hparam_metric) mv = {e->metrics, e->n_metrics, b->cap_m};
        int grown = tfb_vec_need(&mv, mv.n + 1);
        e->metrics = mv.v;
        b->cap_m = mv.cap;
        if (grown < 0)
            return TFB_ENOMEM;
        tfb_hparam_metric *d = &e->metrics[e->n_metrics];
        memset(d, 0, sizeof *d);
        e->n_metrics++;
        d->dataset_type = m->dataset_type;
        if ((m->group && !(d->group = tfb_strdup(m->group))) ||
            !(d->tag = tfb_strdup(m->tag)) ||
            (m->display_name && !(d->display_name =
                                      tfb_strdup(m->display_name))) ||
            (m->description && !(d->description = tfb_strdup(m->description))))
            return TFB_ENOMEM;
    }
    return 0;
}

static void build_free(exp_build *b)
{
    tfb_vec_free(&b->cap_v);
    tfb_strtab_free(&b->cols);
    tfb_strtab_free(&b->mets);
    tfb_strv_free(b->met_keys.v, b->met_keys.n);
}

static int cmp_value_qsort(const void *a, const void *b)
{
    return tfb_hparam_value_cmp(a, b);
}

static int cmp_column_name(const void *a, const void *b)
{
    const tfb_hparam_column *x = a, *y = b;
    int c = memcmp(x->name, y->name,
                   x->name_len < y->name_len ? x->name_len : y->name_len);
    return c ? c : (x->name_len > y->name_len) - (x->name_len < y->name_len);
}

int tfb_hparams_experiment_get(tfb_store *s, tfb_hparams_experiment *out)
{
    memset(out, 0, sizeof *out);
    exp_build b = {.e = out};
    tfb_run **runs;
    size_t nr;
    int e = tfb_store_runs(s, &runs, &nr);
    if (e < 0)
        return e;
    /* Two passes: the experiments first, so their columns lead and their
     * types win; then the sessions' values. */
    tfb_hparams_set *sets = calloc(nr ? nr : 1, sizeof *sets);
    if (!sets) {
        free(runs);
        return TFB_ENOMEM;
    }
    for (size_t i = 0; i < nr && e == 0; i++) {
        e = tfb_run_hparams(s, runs[i], &sets[i]);
        if (e == 0 && sets[i].has_experiment) {
            out->n_experiments++;
            e = merge_experiment(&b, &sets[i], 0);
        }
    }
    b.n_from_exp = out->n_columns;
    for (size_t i = 0; i < nr && e == 0; i++) {
        if (!sets[i].has_start)
            continue;
        out->n_runs++;
        for (size_t k = 0; k < sets[i].n_hparams && e == 0; k++) {
            tfb_hparam_column *c;
            e = add_column(&b, sets[i].hparams[k].name,
                           sets[i].hparams[k].name_len, &c);
            if (e == 0) {
                c->n_runs++;
                e = add_value(&b, c, &sets[i].hparams[k].value);
            }
        }
    }
    for (size_t i = 0; i < nr; i++)
        tfb_hparams_set_free(&sets[i]);
    free(sets);
    free(runs);
    if (e == 0) {
        for (size_t i = 0; i < out->n_columns; i++) {
            tfb_hparam_column *c = &out->columns[i];
            if (c->n_values)
                qsort(c->values, c->n_values, sizeof *c->values,
                      cmp_value_qsort);
            if (c->type < 0) { /* infer from the values */
                int t = -1;
                for (size_t k = 0; k < c->n_values; k++) {
                    int vt = c->values[k].kind == TFB_HPV_NUMBER   ? 3
                             : c->values[k].kind == TFB_HPV_STRING ? 1
                             : c->values[k].kind == TFB_HPV_BOOL   ? 2
                                                                   : -1;
                    if (vt < 0)
                        continue;
                    t = t < 0 || t == vt ? vt : 0;
                }
                c->type = t < 0 ? 0 : t;
            }
        }
        /* Columns no experiment named: by name, after the named ones. */
        if (out->n_columns > b.n_from_exp) {
            /* cap_v is per column; it is no longer needed after this. */
            qsort(out->columns + b.n_from_exp, out->n_columns - b.n_from_exp,
                  sizeof *out->columns, cmp_column_name);
        }
    }
    build_free(&b);
    return e;
}

int tfb_hparams_metrics_of(const tfb_hparams_set *sets, size_t n,
                           tfb_hparams_experiment *out)
{
    memset(out, 0, sizeof *out);
    exp_build b = {.e = out};
    int e = 0;
    for (size_t i = 0; i < n && e == 0; i++)
        if (sets[i].has_experiment) {
            out->n_experiments++;
            e = merge_experiment(&b, &sets[i], 1);
        }
    build_free(&b);
    return e;
}

void tfb_hparams_experiment_free(tfb_hparams_experiment *e)
{
    if (!e)
        return;
    for (size_t i = 0; i < e->n_columns; i++) {
        tfb_hparam_column *c = &e->columns[i];
        free(c->name);
        free(c->display_name);
        free(c->description);
        for (size_t k = 0; k < c->n_values; k++)
            value_free(&c->values[k]);
        free(c->values);
    }
    free(e->columns);
    for (size_t i = 0; i < e->n_metrics; i++)
        metric_free(&e->metrics[i]);
    free(e->metrics);
    memset(e, 0, sizeof *e);
}
