/*
 * graph_check.c - the notes about a GraphDef (see graph_check.h).
 */
#include "plugins/graphs/graph_check.h"

#include <stdlib.h>
#include <string.h>

#include "base/strtab.h"
#include "collector/pb.h"
#include "tfboard.h"

typedef struct gnode {
    const char *name;
    size_t name_len;
    const uint8_t *msg; /* the NodeDef */
    size_t msg_len;
} gnode;

static const tfb_json_field summary_fields[] = {
    TFB_JSON_FIELD(tfb_graph_summary, nodes, U64),
    TFB_JSON_FIELD(tfb_graph_summary, edges, U64),
    TFB_JSON_FIELD(tfb_graph_summary, control_edges, U64),
    TFB_JSON_FIELD(tfb_graph_summary, self_inputs, U64),
    TFB_JSON_FIELD(tfb_graph_summary, missing_inputs, U64),
    TFB_JSON_FIELD(tfb_graph_summary, duplicate_names, U64),
    TFB_JSON_FIELD(tfb_graph_summary, html_names, U64),
    TFB_JSON_FIELD(tfb_graph_summary, in_cycles, U64),
    TFB_JSON_FIELD(tfb_graph_summary, too_many, BOOL),
};

static int has_html(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strchr("<>&\"'", s[i]) && s[i])
            return 1;
    return 0;
}

/* The node an input names: "^x" (control), "x:1" (output 1) and "x". */
static const char *input_node(const uint8_t *p, size_t n, size_t *len,
                              int *control)
{
    *control = n && p[0] == '^';
    if (*control) {
        p++;
        n--;
    }
    size_t k = n;
    while (k && p[k - 1] >= '0' && p[k - 1] <= '9')
        k--;
    if (k && k < n && p[k - 1] == ':')
        n = k - 1;
    *len = n;
    return (const char *)p;
}

typedef struct note_list {
    const char *kind;
    TFB_VEC(size_t) at; /* node numbers */
} note_list;

static void note(note_list *l, size_t node)
{
    if (l->at.n < TFB_GRAPH_MAX_NOTES)
        tfb_vec_push(&l->at, node);
}

int tfb_graph_check(const uint8_t *p, size_t n, tfb_graph_summary *sum,
                    tfb_json *j)
{
    memset(sum, 0, sizeof *sum);
    const uint8_t *q = p, *end = p + n;
    pb_field f;
    int r;
    while ((r = pb_next(&q, end, &f)) > 0)
        sum->nodes += f.num == 1 && f.wt == PB_LEN;
    if (r < 0)
        return TFB_ECORRUPT;
    if (sum->nodes > TFB_GRAPH_MAX_NODES) {
        sum->too_many = 1;
        if (j) {
            tfb_json_object_begin(j);
            tfb_json_key(j, "max_nodes");
            tfb_json_i64(j, TFB_GRAPH_MAX_NODES);
            TFB_JSON_FIELDS(j, sum, summary_fields);
            tfb_json_key(j, "notes");
            tfb_json_array_begin(j);
            tfb_json_array_end(j);
            tfb_json_object_end(j);
        }
        return TFB_ETOOBIG;
    }
    size_t nn = (size_t)sum->nodes;
    gnode *g = calloc(nn ? nn : 1, sizeof *g);
    uint32_t *indeg = calloc(nn ? nn : 1, sizeof *indeg);
    tfb_strtab names = {0};
    note_list notes[4] = {{"self_input", {0}}, {"missing_input", {0}},
                          {"duplicate_name", {0}}, {"cycle", {0}}};
    TFB_VEC(uint32_t) succ_off = {0}; /* CSR of the edges */
    TFB_VEC(uint32_t) succ = {0};
    TFB_VEC(uint32_t) queue = {0};
    int rc = 0;
    if (!g || !indeg || tfb_strtab_reserve(&names, nn) < 0) {
        rc = TFB_ENOMEM;
        goto out;
    }
    size_t k = 0;
    q = p;
    while (pb_next(&q, end, &f) > 0) {
        if (f.num != 1 || f.wt != PB_LEN)
            continue;
        gnode *x = &g[k];
        x->msg = f.p;
        x->msg_len = f.len;
        x->name = "";
        const uint8_t *s = f.p, *se = f.p + f.len;
        pb_field h;
        while ((r = pb_next(&s, se, &h)) > 0)
            if (h.num == 1 && h.wt == PB_LEN) {
                x->name = (const char *)h.p;
                x->name_len = h.len;
            }
        if (r < 0) {
            rc = TFB_ECORRUPT;
            goto out;
        }
        if (has_html(x->name, x->name_len))
            sum->html_names++;
        if (tfb_strtab_get(&names, x->name, x->name_len)) {
            sum->duplicate_names++;
            note(&notes[2], k);
        } else if (tfb_strtab_put(&names, x->name, x->name_len,
                                  (void *)(uintptr_t)(k + 1)) < 0) {
            rc = TFB_ENOMEM;
            goto out;
        }
        k++;
    }
    /* Edges from each input's node to the node (both kinds), in CSR:
     * counted first, then filled. */
    if (tfb_vec_need(&succ_off, nn + 1) < 0) {
        rc = TFB_ENOMEM;
        goto out;
    }
    memset(succ_off.v, 0, (nn + 1) * sizeof *succ_off.v);
    for (int pass = 0; pass < 2; pass++) {
        for (size_t i = 0; i < nn; i++) {
            const uint8_t *s = g[i].msg, *se = s + g[i].msg_len;
            pb_field h;
            while (pb_next(&s, se, &h) > 0) {
                if (h.num != 3 || h.wt != PB_LEN)
                    continue;
                size_t len;
                int control;
                const char *nm = input_node(h.p, h.len, &len, &control);
                uintptr_t from = (uintptr_t)tfb_strtab_get(&names, nm, len);
                if (!from) {
                    if (pass == 0) {
                        sum->missing_inputs++;
                        note(&notes[1], i);
                    }
                    continue;
                }
                from--;
                if (pass == 0) {
                    if (from == i) {
                        sum->self_inputs++;
                        note(&notes[0], i);
                    }
                    if (control)
                        sum->control_edges++;
                    else
                        sum->edges++;
                    succ_off.v[from + 1]++;
                    indeg[i]++;
                } else {
                    succ.v[succ_off.v[from]++] = (uint32_t)i;
                }
            }
        }
        if (pass == 0) {
            uint64_t total = sum->edges + sum->control_edges;
            if (total > UINT32_MAX) {
                rc = TFB_ETOOBIG;
                goto out;
            }
            for (size_t i = 0; i < nn; i++)
                succ_off.v[i + 1] += succ_off.v[i];
            if (tfb_vec_need(&succ, (size_t)total + 1) < 0) {
                rc = TFB_ENOMEM;
                goto out;
            }
        } else {
            /* The fill moved each start to the next one's: back by one. */
            for (size_t i = nn; i > 0; i--)
                succ_off.v[i] = succ_off.v[i - 1];
            succ_off.v[0] = 0;
        }
    }
    /* Kahn: what never reaches in-degree 0 is on or behind a cycle. */
    if (tfb_vec_need(&queue, nn + 1) < 0) {
        rc = TFB_ENOMEM;
        goto out;
    }
    size_t head = 0, tail = 0;
    for (size_t i = 0; i < nn; i++)
        if (!indeg[i])
            queue.v[tail++] = (uint32_t)i;
    while (head < tail) {
        uint32_t u = queue.v[head++];
        for (uint32_t e = succ_off.v[u]; e < succ_off.v[u + 1]; e++)
            if (--indeg[succ.v[e]] == 0)
                queue.v[tail++] = succ.v[e];
    }
    sum->in_cycles = nn - tail;
    for (size_t i = 0; i < nn && sum->in_cycles; i++)
        if (indeg[i])
            note(&notes[3], i);
    if (j) {
        tfb_json_object_begin(j);
        tfb_json_key(j, "max_nodes");
        tfb_json_i64(j, TFB_GRAPH_MAX_NODES);
        TFB_JSON_FIELDS(j, sum, summary_fields);
        tfb_json_key(j, "notes");
        tfb_json_array_begin(j);
        for (int l = 0; l < 4; l++)
            for (size_t i = 0; i < notes[l].at.n; i++) {
                tfb_json_object_begin(j);
                tfb_json_key(j, "kind");
                tfb_json_str(j, notes[l].kind);
                tfb_json_key(j, "node");
                gnode *x = &g[notes[l].at.v[i]];
                tfb_json_strn(j, x->name, x->name_len);
                tfb_json_object_end(j);
            }
        tfb_json_array_end(j);
        tfb_json_object_end(j);
    }
out:
    for (int l = 0; l < 4; l++)
        tfb_vec_free(&notes[l].at);
    tfb_vec_free(&succ_off);
    tfb_vec_free(&succ);
    tfb_vec_free(&queue);
    tfb_strtab_free(&names);
    free(indeg);
    free(g);
    return rc;
}
