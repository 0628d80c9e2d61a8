/*
 * alerts_spikes.h - the loss spikes of a run with their precursors: one
 * online detector (core/spike_detect.h) per loss series, kept between
 * requests and fed only the points that arrived since (no rescan of
 * history on a reload); the precursors (core/precursors.h) of each spike.
 *
 * Thread-safety: reentrant (the detectors are behind one lock).
 */
#ifndef TFB_ALERTS_SPIKES_H
#define TFB_ALERTS_SPIKES_H

#include <stddef.h>

#include "core/precursors.h"
#include "core/spike_detect.h"
#include "core/store.h"

typedef struct tfb_alert_spike {
    const char *run, *tag;    /* store-owned */
    tfb_spike spike;
    tfb_precursors pre;
} tfb_alert_spike;

/* The spikes of run r in the order found, tag by tag. *out is malloc'd
 * (free() it; NULL when *n is 0). Returns 0 or TFB_ENOMEM. */
int tfb_alert_spikes(tfb_run *r, tfb_alert_spike **out, size_t *n);

/* Frees the detectors (tests and shutdown). */
void tfb_alert_spikes_reset(void);

#endif
