/*
 * query_engine.h - the query dashboard's one way into the query layer
 * (server/query/query.h: tfb_query_open, _exec, _filter_runs). The layer
 * is built on its own branch; until it is part of the tree,
 * TFB_QUERY_ENGINE is 0 and the dashboard's routes answer 501 (the page
 * says the engine is missing), so the dashboard builds either way.
 */
#ifndef TFB_PLUGIN_QUERY_ENGINE_H
#define TFB_PLUGIN_QUERY_ENGINE_H

#if defined(__has_include)
#if __has_include("query/query.h")
#include <sqlite3.h>

#include "query/query.h"
#define TFB_QUERY_ENGINE 1
#endif
#endif
#ifndef TFB_QUERY_ENGINE
#define TFB_QUERY_ENGINE 0
#endif

#endif
