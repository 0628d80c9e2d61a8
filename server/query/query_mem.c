/*
 * query_mem.c - the per-thread memory budget of a query (query_mem.h).
 */
#include "query/query_mem.h"

#include <sqlite3.h>
#include <stddef.h>

static sqlite3_mem_methods g_orig;
static int g_installed;

/* The budget of this thread's running query: counting when active. */
static _Thread_local struct {
    int active;
    int hit;
    int64_t max;
    int64_t held;
} t_budget;

static void *mem_malloc(int n)
{
    if (!t_budget.active)
        return g_orig.xMalloc(n);
    if (t_budget.max > 0 && t_budget.held + n > t_budget.max) {
        t_budget.hit = 1;
        return NULL;
    }
    void *p = g_orig.xMalloc(n);
    if (p)
        t_budget.held += g_orig.xSize(p);
    return p;
}

static void mem_free(void *p)
{
    if (p && t_budget.active)
        t_budget.held -= g_orig.xSize(p);
    g_orig.xFree(p);
}

static void *mem_realloc(void *p, int n)
{
    if (!t_budget.active)
        return g_orig.xRealloc(p, n);
    int64_t old = p ? g_orig.xSize(p) : 0;
    if (t_budget.max > 0 && t_budget.held - old + n > t_budget.max) {
        t_budget.hit = 1;
        return NULL;
    }
    void *q = g_orig.xRealloc(p, n);
    if (q)
        t_budget.held += g_orig.xSize(q) - old;
    return q;
}

static int mem_size(void *p) { return g_orig.xSize(p); }
static int mem_roundup(int n) { return g_orig.xRoundup(n); }
static int mem_init(void *a) { return g_orig.xInit(a); }
static void mem_shutdown(void *a) { g_orig.xShutdown(a); }

/* Before main: SQLITE_CONFIG_MALLOC is refused once SQLite initialised,
 * which any sqlite3_open does (the trace layer opens trace stores on its
 * own threads). */
__attribute__((constructor)) static void mem_install(void)
{
    if (sqlite3_config(SQLITE_CONFIG_GETMALLOC, &g_orig) != SQLITE_OK)
        return;
    sqlite3_mem_methods m = {mem_malloc, mem_free, mem_realloc, mem_size,
                             mem_roundup, mem_init, mem_shutdown,
                             g_orig.pAppData};
    if (sqlite3_config(SQLITE_CONFIG_MALLOC, &m) == SQLITE_OK)
        g_installed = 1;
}

int tfb_query_mem_installed(void) { return g_installed; }

void tfb_query_mem_begin(int64_t max)
{
    t_budget.active = 1;
    t_budget.hit = 0;
    t_budget.max = max;
    t_budget.held = 0;
}

int tfb_query_mem_end(void)
{
    t_budget.active = 0;
    return t_budget.hit;
}

int64_t tfb_query_mem_held(void) { return t_budget.held; }
