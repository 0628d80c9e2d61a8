/* deadline.c - monotonic deadlines for timed waits, and the clocks' current
 * readings (see deadline.h). */
#include "base/deadline.h"

int tfb_cond_init_monotonic(pthread_cond_t *cv)
{
    pthread_condattr_t ca;
    int e = pthread_condattr_init(&ca);
    if (e)
        return e;
    e = pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    if (!e)
        e = pthread_cond_init(cv, &ca);
    pthread_condattr_destroy(&ca);
    return e;
}

void tfb_deadline_after_ms(struct timespec *ts, unsigned ms)
{
    clock_gettime(CLOCK_MONOTONIC, ts);
    ts->tv_sec += (time_t)(ms / 1000);
    ts->tv_nsec += (long)(ms % 1000) * 1000000L;
    if (ts->tv_nsec >= 1000000000L) {
        ts->tv_sec++;
        ts->tv_nsec -= 1000000000L;
    }
}

long long tfb_mono_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int64_t tfb_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

double tfb_now_wall(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int tfb_deadline_passed(const struct timespec *ts)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return now.tv_sec > ts->tv_sec ||
           (now.tv_sec == ts->tv_sec && now.tv_nsec >= ts->tv_nsec);
}
