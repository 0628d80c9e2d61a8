/*
 * graph_check.h - what a page should know about a GraphDef before it draws
 * it: its size against the bounds, and what no layout can draw as it is
 * (a node naming itself as input, cycles, inputs naming no node, names
 * given twice, names with HTML characters that the page must show as
 * text). The graph is still served whole: these are notes, not errors.
 *
 * Also the conceptual graph: a Keras model's JSON as a GraphDef.
 * Pure functions over the bytes given; thread-safe.
 */
#ifndef TFB_GRAPHS_GRAPH_CHECK_H
#define TFB_GRAPHS_GRAPH_CHECK_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "core/json.h"

/* Nodes one graph may have and still be served: a page lays out what is
 * expanded, but it parses every node (20,000 in the bench; 100,000 is
 * 5 x that); 10^6 nodes are ~100 MB of text that no browser tab parses
 * in time. */
#define TFB_GRAPH_MAX_NODES 100000
/* Text one /graph or /run_metadata answer may run to (a 100,000-node
 * graph with shapes is ~30 MB as text; constants can be large). */
#define TFB_GRAPH_MAX_TEXT (256 << 20)
/* Notes listed per kind (the counts cover every case). */
#define TFB_GRAPH_MAX_NOTES 20

typedef struct tfb_graph_summary {
    uint64_t nodes;           /* NodeDefs */
    uint64_t edges;           /* inputs that name a node (data) */
    uint64_t control_edges;   /* "^name" inputs that name a node */
    uint64_t self_inputs;     /* inputs naming their own node */
    uint64_t missing_inputs;  /* inputs naming no node */
    uint64_t duplicate_names; /* nodes whose name an earlier node has */
    uint64_t html_names;      /* names with < > & " ' */
    uint64_t in_cycles;       /* nodes on or behind a cycle (Kahn) */
    int too_many;             /* nodes > TFB_GRAPH_MAX_NODES */
} tfb_graph_summary;

/* Checks the GraphDef p[0..n): fills *sum, and when j is not NULL writes
 * the whole answer of /notes into it ({"max_nodes", counts, "notes":
 * [{"kind", "node"}...]}). 0, TFB_ETOOBIG (too many nodes: *sum has the
 * count, nothing more is checked), TFB_ECORRUPT (not a GraphDef),
 * TFB_ENOMEM. */
int tfb_graph_check(const uint8_t *p, size_t n, tfb_graph_summary *sum,
                    tfb_json *j);

#endif
