/*
 * value_decoder.c - the table of plugin value decoders (value_decoder.h).
 * Written before any store exists and read lock-free afterwards, as the
 * plugin table is.
 */
#include "store/value_decoder.h"

#include <string.h>

static const tfb_value_decoder *g_decoders[TFB_VALUE_DECODERS_MAX];
static size_t g_n;

const tfb_value_decoder *tfb_value_decoder_find(const char *plugin,
                                                size_t len)
{
    for (size_t i = 0; i < g_n; i++)
        if (strlen(g_decoders[i]->plugin) == len &&
            memcmp(g_decoders[i]->plugin, plugin, len) == 0)
            return g_decoders[i];
    return NULL;
}

int tfb_value_decoder_register(const tfb_value_decoder *d)
{
    if (!d || !d->plugin || !*d->plugin || !d->decode || !d->state_new ||
        !d->state_reset || !d->state_free)
        return TFB_EINVAL;
    if (tfb_value_decoder_find(d->plugin, strlen(d->plugin)))
        return TFB_EEXIST;
    if (g_n == TFB_VALUE_DECODERS_MAX)
        return TFB_ENOMEM;
    g_decoders[g_n++] = d;
    return 0;
}

const tfb_value_decoder *const *tfb_value_decoders(size_t *n)
{
    *n = g_n;
    return g_decoders;
}
