/*
 * query_mem.h - the memory limit of one query (query.h, "Limits"): an
 * allocator in front of SQLite's own that charges each allocation made on
 * a thread to that thread's current budget, if it has one.
 *
 * SQLite offers no per-connection heap limit (sqlite3_soft_heap_limit64
 * and sqlite3_hard_heap_limit64 bound the whole process: one greedy query
 * would fail the trace layer's loads and every other query). A budget is
 * per thread because a tfb_query runs on one thread at a time and SQLite
 * allocates for a statement on the thread that steps it.
 *
 * The allocator is installed once per process (SQLITE_CONFIG_MALLOC must
 * come before SQLite initialises; a constructor does it before main, and
 * tfb_query_mem_install says whether it is in place). Threads without a
 * budget (the trace layer's loaders) pay one thread-local read a call.
 *
 * Thread-safety: the budget is thread-local; begin/end on the thread that
 * runs the query.
 */
#ifndef TFB_SERVER_QUERY_MEM_H
#define TFB_SERVER_QUERY_MEM_H

#include <stdint.h>

/* 1 when the counting allocator is SQLite's allocator. */
int tfb_query_mem_installed(void);
/* Starts counting this thread's SQLite allocations against max bytes
 * (0 = count, no limit). */
void tfb_query_mem_begin(int64_t max);
/* Stops counting; returns 1 when an allocation was refused for the
 * limit since begin. */
int tfb_query_mem_end(void);
/* Bytes held now by this thread's query, net of what it freed. */
int64_t tfb_query_mem_held(void);

#endif
