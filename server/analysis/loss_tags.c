/*
 * loss_tags.c - which tags are losses, and the store's scalar observer
 * that keeps a loss watch on each of them (loss_tags.h).
 */
#include <pthread.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "base/regex_bound.h"
#include "base/strtab.h"
#include "base/vec.h"
#include "analysis/loss_tags.h"
#include "analysis/loss_watch.h"
#include "store/store.h"
#include "tfboard.h"

/* The answers are kept as the table's values: tag copy -> LOSS or
 * NOT_LOSS (a value may not be NULL). */
#define LOSS ((void *)1)
#define NOT_LOSS ((void *)2)

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static regex_t g_re;
static int g_re_set;  /* 0: the default, by strcasestr */
static int g_none;    /* "": no tag is a loss */
static tfb_strtab g_seen;
static TFB_VEC(char *) g_keys; /* the table's keys, owned */

/* g_mu held. */
static void forget_locked(void)
{
    for (size_t i = 0; i < g_keys.n; i++)
        free(g_keys.v[i]);
    tfb_vec_free(&g_keys);
    tfb_strtab_free(&g_seen);
}

void tfb_loss_tags_forget(void)
{
    pthread_mutex_lock(&g_mu);
    forget_locked();
    pthread_mutex_unlock(&g_mu);
}

/* The store's scalar observer (store.h): a loss watch on each series
 * whose tag is a loss, fed as the loader seals its blocks. */
static void *watch_attach(const char *tag, size_t len)
{
    if (!tfb_loss_tag(tag, len))
        return NULL;
    tfb_loss_watch *w = malloc(sizeof *w);
    if (w)
        tfb_loss_watch_init(w);
    return w;
}

static void watch_feed(void *w, const int64_t *step, const double *value,
                       size_t n)
{
    /* A spike that finds no memory is lost; the points still count. */
    (void)tfb_loss_watch_push(w, step, value, n);
}

static void watch_reset(void *w)
{
    tfb_loss_watch_free(w);
    tfb_loss_watch_init(w);
}

static void watch_detach(void *w)
{
    tfb_loss_watch_free(w);
    free(w);
}

static const tfb_scalar_observer loss_observer = {
    watch_attach, watch_feed, watch_reset, watch_detach};

int tfb_loss_tags_configure(const char *regex)
{
    regex_t re;
    int none = regex && !regex[0];
    if (regex && !none &&
        tfb_regex_compile(&re, regex, REG_EXTENDED | REG_ICASE | REG_NOSUB,
                          NULL, 0) < 0)
        return TFB_EINVAL;
    pthread_mutex_lock(&g_mu);
    if (g_re_set)
        regfree(&g_re);
    g_re_set = regex && !none;
    if (g_re_set)
        g_re = re;
    g_none = none;
    forget_locked();
    pthread_mutex_unlock(&g_mu);
    tfb_store_set_scalar_observer(&loss_observer);
    return 0;
}

/* g_mu held; t is NUL-terminated. */
static int match(const char *t)
{
    if (g_none)
        return 0;
    if (!g_re_set)
        return strcasestr(t, TFB_LOSS_REGEX_DEFAULT) != NULL;
    return regexec(&g_re, t, 0, NULL, 0) == 0;
}

int tfb_loss_tag(const char *tag, size_t len)
{
    pthread_mutex_lock(&g_mu);
    void *v = tfb_strtab_get(&g_seen, tag, len);
    int loss;
    if (v) {
        loss = v == LOSS;
    } else {
        /* The copy is also the NUL-terminated string regexec needs; a
         * failed allocation answers without keeping the answer. */
        char small[256], *k = malloc(len + 1);
        char *t = k ? k : len < sizeof small ? small : NULL;
        if (!t) {
            pthread_mutex_unlock(&g_mu);
            return 0;
        }
        memcpy(t, tag, len);
        t[len] = 0;
        loss = match(t);
        if (k && (tfb_vec_need(&g_keys, g_keys.n + 1) < 0 ||
                  tfb_strtab_put(&g_seen, k, len, loss ? LOSS : NOT_LOSS) <
                      0)) {
            free(k);
            k = NULL;
        }
        if (k)
            g_keys.v[g_keys.n++] = k;
    }
    pthread_mutex_unlock(&g_mu);
    return loss;
}
