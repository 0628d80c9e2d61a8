/*
 * alerts_spikes.h - the loss spikes of a run with their precursors: the
 * spikes are those of the store's loss watches (analysis/loss_watch.h: one
 * online detector per loss series, fed as the loader seals its blocks,
 * so an evaluation decodes nothing and rescans no history); the
 * precursors (analysis/precursors.h) of each spike are searched once it is
 * over and kept (by run and tag name).
 *
 * Thread-safety: reentrant (the kept precursors are behind one lock).
 */
#ifndef TFB_ALERTS_SPIKES_H
#define TFB_ALERTS_SPIKES_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/precursors.h"
#include "analysis/spike_detect.h"
#include "store/store.h"

typedef struct tfb_alert_spike {
    const char *run, *tag;    /* store-owned */
    tfb_spike spike;
    tfb_precursors pre;
} tfb_alert_spike;

/* The spikes of run r in the order found, tag by tag. *out is malloc'd
 * (free() it; NULL when *n is 0). Returns 0 or TFB_ENOMEM. */
int tfb_alert_spikes(tfb_run *r, tfb_alert_spike **out, size_t *n);

/* Frees the kept precursors (tests and shutdown). */
void tfb_alert_spikes_reset(void);

#endif
