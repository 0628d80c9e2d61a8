/*
 * trace_prefault.c - faults in the pages of a load's big arrays ahead of
 * their use, a few MiB a system call, instead of one page fault a 4 KiB
 * page as the array fills.
 *
 * Why: a first load of 10 M kernels writes about 1.2 GB of fresh memory
 * (the spans per lane, the runtime calls, the spans in lane order, the
 * busy intervals, the calls by correlation), and on this project's
 * virtual machines a page fault costs far more than clearing the page
 * (a fault enters the hypervisor's paging: 1.0-1.3 s of CPU for 320 MB
 * touched page by page, 0.6 s with MADV_POPULATE_WRITE in 64 MiB steps).
 * Huge pages were tried before and made the load worse (compaction:
 * docs/trace-cache.md), so the pages stay 4 KiB; only the faults are
 * batched. On a kernel without MADV_POPULATE_WRITE (before Linux 5.14)
 * the call fails and the pages fault one by one as before.
 */
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "trace/trace_internal.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14's value */
#endif

static uintptr_t page_size(void)
{
    static uintptr_t ps;
    if (!ps) {
        long v = sysconf(_SC_PAGESIZE);
        ps = v > 0 ? (uintptr_t)v : 4096;
    }
    return ps;
}

/* Populates the whole pages inside [from, to) bytes of base. */
static void populate(char *base, size_t from, size_t to)
{
    uintptr_t ps = page_size();
    uintptr_t a = ((uintptr_t)base + from + ps - 1) & ~(ps - 1);
    uintptr_t e = ((uintptr_t)base + to) & ~(ps - 1);
    if (e > a)
        (void)madvise((void *)a, e - a, MADV_POPULATE_WRITE);
}

void tfb_trace_prefault_ahead(void *base, size_t used, size_t cap,
                              size_t *done)
{
    if (!base || cap < TFB_TRACE_PREFAULT_MIN)
        return;
    if (*done > cap)
        *done = cap; /* shrunk meanwhile */
    if (*done >= used + TFB_TRACE_PREFAULT_CHUNK / 2)
        return; /* far enough ahead */
    size_t from = *done > used ? *done : used;
    size_t to = from + TFB_TRACE_PREFAULT_CHUNK;
    if (to > cap)
        to = cap;
    populate(base, from, to);
    *done = to;
}

void tfb_trace_prefault_all(void *base, size_t bytes)
{
    if (!base || bytes < TFB_TRACE_PREFAULT_MIN)
        return;
    for (size_t o = 0; o < bytes; o += TFB_TRACE_PREFAULT_CHUNK)
        populate(base, o,
                 bytes - o < TFB_TRACE_PREFAULT_CHUNK
                     ? bytes
                     : o + TFB_TRACE_PREFAULT_CHUNK);
}
