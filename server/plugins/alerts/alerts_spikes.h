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
#include <stdint.h>

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

/* Points [from, from + n) of scalar series s that a caller decoded anyway
 * (a user rule on a loss tag): the detector of s takes them when s is a
 * loss and its detector has read exactly up to `from` (else they are
 * ignored), and passes them on to the run status's blow-up scan, so
 * neither decodes them again. */
void tfb_alert_spikes_offer(tfb_series *s, size_t from, const int64_t *step,
                            const float *value, size_t n);

/* Frees the detectors (tests and shutdown). */
void tfb_alert_spikes_reset(void);

#endif
