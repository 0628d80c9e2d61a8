/* fork_guard.c - the fork generation (see fork_guard.h). */
#include "collector/fork_guard.h"

#include <pthread.h>

atomic_uint tfb_fork_gen_ = 1;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

/* Runs in the child only, single-threaded: no lock is needed or taken. */
static void fork_child(void)
{
    atomic_fetch_add_explicit(&tfb_fork_gen_, 1, memory_order_relaxed);
}

static void register_handlers(void)
{
    /* On failure (ENOMEM) inherited objects are not detected; nothing
     * better can be done, and the library must not abort. */
    (void)pthread_atfork(NULL, NULL, fork_child);
}

void tfb_fork_guard_init(void)
{
    pthread_once(&g_once, register_handlers);
}
