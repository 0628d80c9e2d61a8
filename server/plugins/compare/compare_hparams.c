/*
 * compare_hparams.c - the hparams that differ between two runs, from
 * the analysis layer's hparams decoding (analysis/hparams_analysis.h): a
 * name whose values differ, or that only one run set. Values are compared as the
 * hparams table shows them (tfb_hparam_value_text), so 0.1 and 0.10 are
 * the same and a number never equals a string.
 */
#include <stdlib.h>
#include <string.h>

#include "analysis/hparams_analysis.h"
#include "plugins/compare/compare_internal.h"
#include "base/str.h"

/* The value as text, with its kind, so "1" (string) != 1 (number). */
static char *value_text(const tfb_hparam_value *v)
{
    char small[64];
    size_t len = tfb_hparam_value_text(v, small, sizeof small);
    char *out = malloc(len + 1);
    if (!out)
        return NULL;
    if (len < sizeof small)
        memcpy(out, small, len + 1);
    else
        tfb_hparam_value_text(v, out, len + 1);
    return out;
}

static int cmp_hparam(const void *x, const void *y)
{
    return strcmp(((const tfb_compare_hparam *)x)->name,
                  ((const tfb_compare_hparam *)y)->name);
}

/* Adds name with A's and B's values (either may be NULL). */
static int add(tfb_compare *c, size_t cap, const char *name,
               const tfb_hparam_value *va, const tfb_hparam_value *vb)
{
    if (c->n_hparams == cap)
        return 0; /* cannot happen: cap is n_a + n_b */
    tfb_compare_hparam *h = &c->hparams[c->n_hparams];
    h->name = tfb_strdup(name);
    h->a = va ? value_text(va) : NULL;
    h->b = vb ? value_text(vb) : NULL;
    c->n_hparams++;
    if (!h->name || (va && !h->a) || (vb && !h->b))
        return TFB_ENOMEM;
    return 0;
}

static int same(const tfb_hparam_value *a, const tfb_hparam_value *b)
{
    return a->kind == b->kind && tfb_hparam_value_cmp(a, b) == 0;
}

int tfb_compare_hparams_diff(tfb_store *sa, tfb_run *a, tfb_store *sb,
                             tfb_run *b, tfb_compare *c)
{
    tfb_hparams_set ha, hb;
    int rc = tfb_run_hparams(sa, a, &ha);
    int rcb = tfb_run_hparams(sb, b, &hb);
    if (rc == 0)
        rc = rcb;
    if (rc == 0) {
        c->hparams_a = ha.n_hparams;
        c->hparams_b = hb.n_hparams;
        size_t cap = ha.n_hparams + hb.n_hparams;
        c->hparams = cap ? calloc(cap, sizeof *c->hparams) : NULL;
        if (cap && !c->hparams)
            rc = TFB_ENOMEM;
        for (size_t i = 0; i < ha.n_hparams && rc == 0; i++) {
            const tfb_hparam_kv *kv = &ha.hparams[i];
            const tfb_hparam_value *vb =
                tfb_hparams_findn(&hb, kv->name, kv->name_len);
            if (!vb || !same(&kv->value, vb))
                rc = add(c, cap, kv->name, &kv->value, vb);
        }
        for (size_t i = 0; i < hb.n_hparams && rc == 0; i++) {
            const tfb_hparam_kv *kv = &hb.hparams[i];
            if (!tfb_hparams_findn(&ha, kv->name, kv->name_len))
                rc = add(c, cap, kv->name, NULL, &kv->value);
        }
        if (rc == 0 && c->n_hparams > 1)
            qsort(c->hparams, c->n_hparams, sizeof *c->hparams, cmp_hparam);
    }
    tfb_hparams_set_free(&ha);
    tfb_hparams_set_free(&hb);
    return rc;
}
