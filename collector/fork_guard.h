/*
 * fork_guard.h - what libtfboard does about fork() (issue 10, hardening).
 *
 * fork() copies only the calling thread: in the child, the writer's,
 * pipeline's and tracer's threads are gone, and their mutexes may be held
 * forever by threads that no longer exist. A PyTorch DataLoader forks its
 * workers after the training script opened a writer, so this happens.
 *
 * The rule: every object records the fork generation it was created in.
 * The generation moves on in each child (a pthread_atfork child handler),
 * so an object whose generation differs was inherited; every call on it
 * returns TFB_EFORKED before taking any of its locks. The check is one
 * relaxed atomic load, cheap enough for the logging hot path (getpid() is
 * a system call). Process-wide locks (trace store attachment, CUPTI
 * tracer) are held across fork by their modules' own prepare/parent/child
 * handlers, so the child finds them free.
 */
#ifndef TFB_FORK_GUARD_H
#define TFB_FORK_GUARD_H

#include <stdatomic.h>

/* Starts at 1 (0 means "never computed" to per-thread caches). */
extern atomic_uint tfb_fork_gen_;

/* Registers the child handler once. Thread-safe. Call before recording a
 * generation, i.e. in every constructor of a fork-checked object. */
void tfb_fork_guard_init(void);

/* The current generation. */
static inline unsigned tfb_fork_generation(void)
{
    return atomic_load_explicit(&tfb_fork_gen_, memory_order_relaxed);
}

#endif
