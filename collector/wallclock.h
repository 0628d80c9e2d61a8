/*
 * wallclock.h - CLOCK_REALTIME for the logging hot path, read through the
 * CPU's time-stamp counter when the kernel itself trusts it.
 *
 * clock_gettime(CLOCK_REALTIME) costs ~30 ns on our VMs, a third of a
 * tfb_scalar call; rdtsc costs ~10. The clock extrapolates from an anchor
 * (tsc, realtime) with a slope measured against clock_gettime, and takes a
 * new anchor once a second of ticks has passed, so it follows NTP slewing.
 * It stays within a millisecond of clock_gettime (tests/unit/test_writer.c
 * checks that bound and prints the worst offset): usually well under a
 * microsecond, but a loaded VM's TSC and realtime were seen to part by
 * 20 us between anchors. Readers that compare wall times across records
 * allow for that (run status's end record: 1 ms). Until the first
 * slope is known (100 ms after the first reading), and wherever the TSC is
 * not the kernel's clocksource, it is plain clock_gettime.
 *
 * Not thread-safe: the writer calls it under its lock.
 */
#ifndef TFB_WALLCLOCK_H
#define TFB_WALLCLOCK_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

typedef struct tfb_wallclock {
    int use_tsc;          /* the TSC may be used at all */
    int calibrated;       /* ns_per_tick is known */
    uint64_t anchor_tsc;  /* last anchor */
    int64_t anchor_ns;
    double ns_per_tick;
    uint64_t reanchor_ticks; /* ticks between anchors (about 1 s) */
} tfb_wallclock;

static inline int64_t tfb_realtime_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

#if defined(__x86_64__) && defined(__GNUC__)
static inline uint64_t tfb_tsc(void)
{
    return __builtin_ia32_rdtsc();
}

/* The kernel picked the TSC as its clocksource only if it found it
 * constant and synchronized across CPUs: that is our test too. */
static inline int tfb_tsc_trusted(void)
{
    FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/"
                    "current_clocksource", "r");
    char name[32] = "";
    if (!f)
        return 0;
    int ok = fgets(name, sizeof name, f) != NULL;
    fclose(f);
    return ok && strncmp(name, "tsc", 3) == 0;
}
#else
static inline uint64_t tfb_tsc(void)
{
    return 0;
}

static inline int tfb_tsc_trusted(void)
{
    return 0;
}
#endif

static inline void tfb_wallclock_init(tfb_wallclock *c)
{
    memset(c, 0, sizeof *c);
    c->use_tsc = tfb_tsc_trusted();
    if (c->use_tsc) {
        c->anchor_tsc = tfb_tsc();
        c->anchor_ns = tfb_realtime_ns();
    }
}

/* The slow path: read the real clock and, when enough time has passed,
 * measure the slope and move the anchor. */
static inline int64_t tfb_wallclock_resync(tfb_wallclock *c, uint64_t tsc)
{
    int64_t ns = tfb_realtime_ns();
    int64_t dns = ns - c->anchor_ns;
    if (tsc > c->anchor_tsc && dns >= 100000000) { /* >= 100 ms */
        double slope = (double)dns / (double)(tsc - c->anchor_tsc);
        /* A slope outside 0.1 .. 10 ns a tick means the counter is not
         * what we think (migration, a stopped counter): stop using it. */
        if (slope > 0.1 && slope < 10.0) {
            c->ns_per_tick = slope;
            c->reanchor_ticks = (uint64_t)(1e9 / slope);
            c->calibrated = 1;
        } else {
            c->use_tsc = 0;
        }
        c->anchor_tsc = tsc;
        c->anchor_ns = ns;
    } else if (tsc < c->anchor_tsc) {
        c->anchor_tsc = tsc; /* went backwards: start over from here */
        c->anchor_ns = ns;
        c->calibrated = 0;
    }
    return ns;
}

/* Wall time now, ns since the Unix epoch. */
static inline int64_t tfb_wallclock_now(tfb_wallclock *c)
{
    if (!c->use_tsc)
        return tfb_realtime_ns();
    uint64_t tsc = tfb_tsc();
    uint64_t dt = tsc - c->anchor_tsc;
    if (c->calibrated && tsc >= c->anchor_tsc && dt < c->reanchor_ticks)
        return c->anchor_ns + (int64_t)((double)dt * c->ns_per_tick);
    return tfb_wallclock_resync(c, tsc);
}

#endif
