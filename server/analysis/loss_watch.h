/*
 * loss_watch.h - what is worked out of a loss series as it loads: the
 * online spike detector (analysis/spike_detect.h) and the blow-up scan of the
 * run status (analysis/run_status.h). Each scalar series whose tag is a
 * loss (analysis/loss_tags.h) keeps one as the store's scalar observer
 * state (store/store.h), fed each block of points when the block is
 * sealed, in the loader's thread, from the raw points the store already
 * holds: no decode, no second pass, and the work is spread over the
 * loader's threads. Readers take a snapshot (tfb_series_loss_watch,
 * below) that also takes the points still waiting in the series' tail,
 * so it always reflects every point.
 *
 * The blow-up rule: the last finite value of the series is above 10 x
 * its first finite value and above 100 x its smallest positive value,
 * both positive; its step is the step of the last point taken.
 *
 * Values are taken rounded to float, as the charts show them.
 *
 * Thread-safety: one watch is used by one thread at a time (the store
 * serialises its own).
 */
#ifndef TFB_SERVER_LOSS_WATCH_H
#define TFB_SERVER_LOSS_WATCH_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/spike_detect.h"
#include "store/store.h"

typedef struct tfb_loss_watch {
    tfb_spike_detector det;
    /* the blow-up scan: finite values only; NaN before the first */
    double first, min, last;
    int64_t last_step;      /* step of the last point taken; the points
                               taken are det.points */
} tfb_loss_watch;

void tfb_loss_watch_init(tfb_loss_watch *w);
void tfb_loss_watch_free(tfb_loss_watch *w);
/* dst (uninitialised) becomes a copy of src with its own spike list.
 * Returns 0 or TFB_ENOMEM (dst is then an empty watch). */
int tfb_loss_watch_copy(tfb_loss_watch *dst, const tfb_loss_watch *src);

/* Takes n more points, in series order. A spike that cannot be kept (no
 * memory) is lost; the points still count. Returns 0 or TFB_ENOMEM. */
int tfb_loss_watch_push(tfb_loss_watch *w, const int64_t *step,
                        const double *value, size_t n);

/* 1 when the series blew up (the rule above), its step in *step. */
int tfb_loss_watch_blew_up(const tfb_loss_watch *w, int64_t *step);

/* A snapshot of the loss watch of a scalar series whose tag is a loss
 * (analysis/loss_tags.h): its spike detector and blow-up scan over every
 * point the series holds now. The store feeds the watch as the loader
 * seals blocks; the snapshot adds the points still in the tail to its
 * copy. Costs a copy of the watch (about 1.7 KiB) and at most a block of
 * detector steps; no decode. Returns 0 (release *out with
 * tfb_loss_watch_free), TFB_ENOENT (not a watched series; *out
 * untouched) or TFB_ENOMEM. */
int tfb_series_loss_watch(tfb_series *s, tfb_loss_watch *out);

#endif
