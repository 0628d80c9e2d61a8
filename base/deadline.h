/*
 * deadline.h - timed waits measured on CLOCK_MONOTONIC, and the clocks'
 * current readings.
 *
 * pthread_cond_timedwait takes an absolute deadline on the cond var's
 * clock, CLOCK_REALTIME by default. Setting the wall clock back (by hand,
 * or an NTP step) then pushes every pending deadline into the future by
 * the same amount, and a periodic flush or reload stalls for that long.
 * Cond vars made with tfb_cond_init_monotonic take deadlines on
 * CLOCK_MONOTONIC, which never jumps; tfb_deadline_after_ms computes them.
 * Every timed wait in tfboard uses this pair.
 *
 * Thread-safety: any thread; the cond var is the
 * caller's, initialised once before other threads use it.
 * Internal to libtfboard and the server: not exported.
 */
#ifndef TFB_BASE_DEADLINE_H
#define TFB_BASE_DEADLINE_H

#include <pthread.h>
#include <stdint.h>
#include <time.h>

/* pthread_cond_init with a CLOCK_MONOTONIC clock. Returns 0 or the
 * pthread error number. */
int tfb_cond_init_monotonic(pthread_cond_t *cv);

/* *ts = now on CLOCK_MONOTONIC plus ms milliseconds, normalised. */
void tfb_deadline_after_ms(struct timespec *ts, unsigned ms);

/* 1 when the CLOCK_MONOTONIC deadline *ts has passed. */
int tfb_deadline_passed(const struct timespec *ts);

/* CLOCK_MONOTONIC now, in ns: for scheduling periodic work (not for
 * timestamps, which are wall time). */
long long tfb_mono_now_ns(void);

/* CLOCK_REALTIME now: ns since the Unix epoch (the clock CUPTI timestamps
 * use on Linux), and seconds (event wall times). */
int64_t tfb_now_ns(void);
double tfb_now_wall(void);

#endif
