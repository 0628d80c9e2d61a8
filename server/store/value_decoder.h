/*
 * value_decoder.h - the decoders of plugin values: how a dashboard's own
 * kind of value gets into the store without a line of the loader changing.
 *
 * The loader hands each decoded value (collector/event_decode.h) to the
 * first of these that takes it:
 *  1. the decoder registered for its tag's plugin name (a dashboard
 *     declares its decoders in its descriptor, core/plugin.h, and core
 *     registers them at start);
 *  2. the store's own kinds, one table by value type (loader.c): images
 *     and PR curves into the run's media index (store/media_index.h);
 *     scalars, histograms, text and numerics into series; any other
 *     plugin's value as the latest of its tag, a plugin record
 *     (tfb_run_records).
 * A decoder keeps what it takes in a state of its own per run (created
 * on the run's first value of that plugin, reset when the run is read
 * again from its start, freed with the store), which its dashboard reads
 * back with tfb_run_decoder_state.
 *
 * Thread-safety: register before any store is created (not thread-safe
 * against loading). A decoder's decode runs on the loader thread of the
 * run, one value at a time per run; its state must take its own lock for
 * readers on other threads (the route handlers).
 */
#ifndef TFB_SERVER_VALUE_DECODER_H
#define TFB_SERVER_VALUE_DECODER_H

#include <stddef.h>

#include "store/store.h"
#include "tfboard.h"

/* One value handed to a decoder. */
typedef struct tfb_decoded_value {
    tfb_run *run;
    void *state;             /* the decoder's state for this run */
    const char *path;        /* the event file (one pointer per file) */
    const tfb_event *ev;     /* its step and wall time */
    const tfb_value *v;      /* the tag's plugin metadata applied */
    const char *tag;         /* the tag as read (not NUL-terminated) */
    size_t tag_len;
} tfb_decoded_value;

typedef struct tfb_value_decoder {
    /* The SummaryMetadata plugin name of the values it takes: [a-z0-9_]+. */
    const char *plugin;
    /* Keeps the value: returns the points kept (0: none), TFB_ENOENT
     * when it is not one it takes after all (the store's own kinds then
     * get it), or another negative TFB_E* code (the value is lost and not
     * counted). */
    int (*decode)(const tfb_decoded_value *d);
    /* The per-run state: created on the run's first value (NULL: no
     * memory; the value is then not kept), emptied when the run is read
     * again from its start, freed with the store. */
    void *(*state_new)(void);
    void (*state_reset)(void *state);
    void (*state_free)(void *state);
} tfb_value_decoder;

/* The most decoders of all plugins together. */
#define TFB_VALUE_DECODERS_MAX 32

/* Adds a decoder (d must outlive every store). Returns 0, TFB_EEXIST for
 * a plugin name taken, TFB_EINVAL for a bad decoder, TFB_ENOMEM past
 * TFB_VALUE_DECODERS_MAX. */
int tfb_value_decoder_register(const tfb_value_decoder *d);

/* The decoder for values of that plugin name (len bytes), or NULL. */
const tfb_value_decoder *tfb_value_decoder_find(const char *plugin,
                                                size_t len);

/* The decoders in the order they were registered; the array lives as
 * long as the process. */
const tfb_value_decoder *const *tfb_value_decoders(size_t *n);

/* Run r's state of decoder d, created now when it has none yet (NULL: no
 * memory, or d is not registered). The state lives as long as the
 * store. */
void *tfb_run_decoder_state(tfb_run *r, const tfb_value_decoder *d);

#endif
