/*
 * keras_graph.c - a Keras model config (JSON) as the GraphDef of
 * TensorBoard's keras_util.keras_model_to_graph_def (see keras_graph.h):
 * a small JSON reader into an index tree, then the walk over the layers.
 */
#include "plugins/graphs/keras_graph.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/vec.h"
#include "plugins/graphs/graph_check.h"
#include "tfboard.h"

/* ---- JSON into a tree of nodes (indices into one array) ---- */

#define NONE SIZE_MAX

typedef enum { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ } jtype;

typedef struct jnode {
    jtype t;
    double num;
    size_t str;         /* J_STR: offset of its NUL-ended text in pool */
    size_t key;         /* a member's key (offset in pool); NONE */
    size_t first, last; /* J_ARR, J_OBJ: first and last child; NONE */
    size_t next;        /* the next sibling; NONE */
} jnode;

typedef struct jdoc {
    jnode *v;      /* the nodes: a TFB_VEC(jnode)'s fields, so the */
    size_t n, cap; /* vec.h macros grow them */
    tfb_buf pool; /* every string, each followed by a NUL */
    const char *p, *end;
    const char *why;
    int nomem;
} jdoc;

static size_t jnew(jdoc *d, jtype t)
{
    if (tfb_vec_need(d, d->n + 1) < 0) {
        d->nomem = 1;
        return NONE;
    }
    d->v[d->n] = (jnode){t, 0, NONE, NONE, NONE, NONE, NONE};
    return d->n++;
}

static void ws(jdoc *d)
{
    while (d->p < d->end && (*d->p == ' ' || *d->p == '\t' ||
                             *d->p == '\n' || *d->p == '\r'))
        d->p++;
}

static int fail(jdoc *d, const char *why)
{
    if (!d->why)
        d->why = why;
    return -1;
}

static int hex4(jdoc *d, unsigned *out)
{
    if (d->end - d->p < 4)
        return fail(d, "a \\u escape cut short");
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        char c = *d->p++;
        v <<= 4;
        if (c >= '0' && c <= '9')
            v |= (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f')
            v |= (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            v |= (unsigned)(c - 'A' + 10);
        else
            return fail(d, "a bad \\u escape");
    }
    *out = v;
    return 0;
}

static void put_utf8(tfb_buf *b, unsigned c)
{
    char u[4];
    size_t n;
    if (c < 0x80) {
        u[0] = (char)c;
        n = 1;
    } else if (c < 0x800) {
        u[0] = (char)(0xC0 | c >> 6);
        u[1] = (char)(0x80 | (c & 0x3F));
        n = 2;
    } else if (c < 0x10000) {
        u[0] = (char)(0xE0 | c >> 12);
        u[1] = (char)(0x80 | (c >> 6 & 0x3F));
        u[2] = (char)(0x80 | (c & 0x3F));
        n = 3;
    } else {
        u[0] = (char)(0xF0 | c >> 18);
        u[1] = (char)(0x80 | (c >> 12 & 0x3F));
        u[2] = (char)(0x80 | (c >> 6 & 0x3F));
        u[3] = (char)(0x80 | (c & 0x3F));
        n = 4;
    }
    tfb_buf_put(b, u, n);
}

/* A string after its opening quote, into the pool: its offset. */
static int jstring(jdoc *d, size_t *off)
{
    *off = d->pool.n;
    for (;;) {
        const char *s = d->p;
        while (d->p < d->end && *d->p != '"' && *d->p != '\\' &&
               (unsigned char)*d->p >= 0x20)
            d->p++;
        tfb_buf_put(&d->pool, s, (size_t)(d->p - s));
        if (d->p >= d->end)
            return fail(d, "a string without its closing quote");
        char c = *d->p++;
        if (c == '"')
            break;
        if (c != '\\')
            return fail(d, "a control character in a string");
        if (d->p >= d->end)
            return fail(d, "an escape cut short");
        c = *d->p++;
        const char *simple = strchr("\"\\/bfnrt", c);
        if (c && simple) {
            static const char to[] = "\"\\/\b\f\n\r\t";
            tfb_buf_put(&d->pool, &to[simple - "\"\\/bfnrt"], 1);
            continue;
        }
        if (c != 'u')
            return fail(d, "an unknown escape in a string");
        unsigned u;
        if (hex4(d, &u) < 0)
            return -1;
        if (u >= 0xD800 && u < 0xDC00 && d->end - d->p >= 6 &&
            d->p[0] == '\\' && d->p[1] == 'u') {
            unsigned lo;
            d->p += 2;
            if (hex4(d, &lo) < 0)
                return -1;
            if (lo >= 0xDC00 && lo < 0xE000)
                u = 0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00);
            else
                u = 0xFFFD;
        } else if (u >= 0xD800 && u < 0xE000) {
            u = 0xFFFD; /* a lone surrogate, as Python keeps it: replaced */
        }
        put_utf8(&d->pool, u);
    }
    tfb_buf_put(&d->pool, "", 1);
    return d->pool.failed ? (d->nomem = 1, -1) : 0;
}

static void add_child(jdoc *d, size_t parent, size_t kid)
{
    if (d->v[parent].last == NONE)
        d->v[parent].first = kid;
    else
        d->v[d->v[parent].last].next = kid;
    d->v[parent].last = kid;
}

static int jvalue(jdoc *d, int depth, size_t *out);

/* An array or object after its opening bracket. */
static int jcontainer(jdoc *d, int depth, size_t self, int obj)
{
    char close = obj ? '}' : ']';
    ws(d);
    if (d->p < d->end && *d->p == close) {
        d->p++;
        return 0;
    }
    for (;;) {
        size_t key = NONE, kid;
        ws(d);
        if (obj) {
            if (d->p >= d->end || *d->p != '"')
                return fail(d, "an object key is not a string");
            d->p++;
            if (jstring(d, &key) < 0)
                return -1;
            ws(d);
            if (d->p >= d->end || *d->p != ':')
                return fail(d, "an object key without ':'");
            d->p++;
        }
        if (jvalue(d, depth + 1, &kid) < 0)
            return -1;
        d->v[kid].key = key;
        add_child(d, self, kid);
        ws(d);
        if (d->p < d->end && *d->p == ',') {
            d->p++;
            continue;
        }
        if (d->p < d->end && *d->p == close) {
            d->p++;
            return 0;
        }
        return fail(d, obj ? "an object without its closing '}'"
                           : "an array without its closing ']'");
    }
}

static int word(jdoc *d, const char *w)
{
    size_t n = strlen(w);
    if ((size_t)(d->end - d->p) < n || memcmp(d->p, w, n) != 0)
        return 0;
    d->p += n;
    return 1;
}

static int jvalue(jdoc *d, int depth, size_t *out)
{
    if (depth > TFB_KERAS_MAX_DEPTH)
        return fail(d, "JSON nested past TFB_KERAS_MAX_DEPTH");
    ws(d);
    if (d->p >= d->end)
        return fail(d, "a value is missing");
    char c = *d->p;
    size_t self;
    if (c == '{' || c == '[') {
        d->p++;
        if ((self = jnew(d, c == '{' ? J_OBJ : J_ARR)) == NONE)
            return -1;
        *out = self;
        return jcontainer(d, depth, self, c == '{');
    }
    if (c == '"') {
        d->p++;
        if ((self = jnew(d, J_STR)) == NONE)
            return -1;
        *out = self;
        size_t off;
        if (jstring(d, &off) < 0)
            return -1;
        d->v[self].str = off;
        return 0;
    }
    if (word(d, "true") || word(d, "false")) {
        if ((self = jnew(d, J_BOOL)) == NONE)
            return -1;
        d->v[self].num = d->p[-1] == 'e' && d->p[-2] == 'u';
        *out = self;
        return 0;
    }
    if (word(d, "null")) {
        *out = jnew(d, J_NULL);
        return *out == NONE ? -1 : 0;
    }
    /* Numbers, and Python json's NaN / Infinity / -Infinity. */
    if (word(d, "NaN") || word(d, "Infinity") || word(d, "-Infinity")) {
        *out = jnew(d, J_NUM);
        return *out == NONE ? -1 : 0;
    }
    char tmp[64];
    size_t n = 0;
    while (d->p + n < d->end && n < sizeof tmp - 1 &&
           strchr("+-0123456789.eE", d->p[n]) && d->p[n])
        n++;
    if (!n || n == sizeof tmp - 1)
        return fail(d, "not a JSON value");
    memcpy(tmp, d->p, n);
    tmp[n] = 0;
    char *e;
    double v = strtod(tmp, &e);
    if (*e)
        return fail(d, "a malformed number");
    d->p += n;
    if ((self = jnew(d, J_NUM)) == NONE)
        return -1;
    d->v[self].num = v;
    *out = self;
    return 0;
}

/* ---- lookups ---- */

static const char *jstr(const jdoc *d, size_t i)
{
    return i != NONE && d->v[i].t == J_STR ? d->pool.v + d->v[i].str : NULL;
}

static size_t jget(const jdoc *d, size_t obj, const char *key)
{
    if (obj == NONE || d->v[obj].t != J_OBJ)
        return NONE;
    for (size_t k = d->v[obj].first; k != NONE; k = d->v[k].next)
        if (!strcmp(d->pool.v + d->v[k].key, key))
            return k;
    return NONE;
}

static size_t jkid(const jdoc *d, size_t arr, size_t idx)
{
    if (arr == NONE || d->v[arr].t != J_ARR)
        return NONE;
    size_t k = d->v[arr].first;
    while (k != NONE && idx--)
        k = d->v[k].next;
    return k;
}

/* A non-empty list (Python's truth of `x.get(...)`). */
static int jnonempty(const jdoc *d, size_t i)
{
    return i != NONE && (d->v[i].t == J_ARR || d->v[i].t == J_OBJ) &&
           d->v[i].first != NONE;
}

/* ---- protobuf out ---- */

static void pb_varint(tfb_buf *b, uint64_t v)
{
    char u[10];
    size_t n = 0;
    do {
        u[n++] = (char)((v & 0x7F) | (v > 0x7F ? 0x80 : 0));
        v >>= 7;
    } while (v);
    tfb_buf_put(b, u, n);
}

static void pb_bytes(tfb_buf *b, unsigned field, const void *p, size_t n)
{
    pb_varint(b, field << 3 | 2);
    pb_varint(b, n);
    tfb_buf_put(b, p, n);
}

/* TensorFlow's DataType of a dtype name (dtypes.as_dtype); 0: unknown. */
static int dtype_enum(const char *s)
{
    static const struct { const char *name; int v; } t[] = {
        {"float32", 1},  {"float", 1},     {"float64", 2},   {"double", 2},
        {"int32", 3},    {"uint8", 4},     {"int16", 5},     {"int8", 6},
        {"string", 7},   {"complex64", 8}, {"int64", 9},     {"bool", 10},
        {"qint8", 11},   {"quint8", 12},   {"qint32", 13},   {"bfloat16", 14},
        {"qint16", 15},  {"quint16", 16},  {"uint16", 17},   {"complex128", 18},
        {"float16", 19}, {"half", 19},     {"resource", 20}, {"variant", 21},
        {"uint32", 22},  {"uint64", 23}};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (!strcmp(t[i].name, s))
            return t[i].v;
    return 0;
}

/* ---- the walk (keras_util.py) ---- */

typedef TFB_VEC(char *) names;

/* model_name_to_output: a model's name and its output names,
 * out_list[first..first + n). */
typedef struct model_out {
    const char *model;
    size_t first, n;
} model_out;

typedef struct walk {
    jdoc *d;
    tfb_buf *out;
    names owned;           /* every string made here, freed at the end */
    names in_key, in_val;  /* input_to_layer: a model's input layer ->
                              the node feeding it */
    TFB_VEC(model_out) out_model; /* model_name_to_output */
    names out_list;
    const char *prev;      /* prev_node_name */
    size_t nodes;
    int rc;
} walk;

static int names_add(walk *w, names *l, char *s)
{
    if (tfb_vec_push(l, s) < 0)
        return w->rc = TFB_ENOMEM;
    return 0;
}

/* scope/name, or name without a scope; owned by the walk. */
static const char *scoped(walk *w, const char *scope, const char *name)
{
    size_t a = scope ? strlen(scope) : 0, b = strlen(name);
    char *s = malloc(a + b + 2);
    if (!s) {
        w->rc = TFB_ENOMEM;
        return NULL;
    }
    if (a) {
        memcpy(s, scope, a);
        s[a] = '/';
        memcpy(s + a + 1, name, b + 1);
    } else {
        memcpy(s, name, b + 1);
    }
    if (names_add(w, &w->owned, s) < 0) {
        free(s);
        return NULL;
    }
    return s;
}

static const char *layer_name(const jdoc *d, size_t layer)
{
    return jstr(d, jget(d, jget(d, layer, "config"), "name"));
}

/* _norm_to_list_of_layers: [a, b, c] -> [[a, b, c]]; [[...], ...] as is.
 * Returns the i-th entry. */
static size_t norm_kid(const jdoc *d, size_t l, size_t i)
{
    size_t f = jkid(d, l, 0);
    if (f != NONE && d->v[f].t == J_ARR)
        return jkid(d, l, i);
    return i == 0 ? l : NONE;
}

static int set_outputs(walk *w, const char *model, size_t first, size_t n)
{
    model_out *o = tfb_vec_add(&w->out_model);
    if (!o)
        return w->rc = TFB_ENOMEM;
    *o = (model_out){model, first, n};
    return 0;
}

/* _update_dicts: a (sub)model's wiring to the layers around it. */
static int update_dicts(walk *w, const char *scope, size_t model)
{
    jdoc *d = w->d;
    size_t cfg = jget(d, model, "config");
    const char *mname = jstr(d, jget(d, cfg, "name"));
    if (!mname)
        return 0;
    const char *node = scoped(w, scope, mname);
    if (!node)
        return -1;
    size_t inl = jget(d, cfg, "input_layers");
    size_t outl = jget(d, cfg, "output_layers");
    size_t inb = jget(d, model, "inbound_nodes");
    int functional = jnonempty(d, inl) && jnonempty(d, outl);
    int parent_functional = jnonempty(d, inb);
    if (parent_functional && functional) {
        for (size_t i = 0;; i++) {
            size_t il = norm_kid(d, inl, i), ib = jkid(d, inb, i);
            if (il == NONE || ib == NONE)
                break;
            const char *iln = jstr(d, jkid(d, il, 0));
            const char *ibn = jstr(d, jkid(d, ib, 0));
            if (!iln || !ibn)
                continue;
            const char *k = scoped(w, node, iln), *v = scoped(w, scope, ibn);
            if (!k || !v || names_add(w, &w->in_key, (char *)k) < 0 ||
                names_add(w, &w->in_val, (char *)v) < 0)
                return -1;
        }
    } else if (parent_functional) {
        /* a Sequential model takes one input: its first layer's */
        const char *n = jstr(d, jkid(d, jkid(d, jkid(d, inb, 0), 0), 0));
        if (n && !(w->prev = scoped(w, scope, n)))
            return -1;
    } else if (w->prev && functional) {
        const char *iln = jstr(d, jkid(d, norm_kid(d, inl, 0), 0));
        if (iln) {
            const char *k = scoped(w, node, iln);
            if (!k || names_add(w, &w->in_key, (char *)k) < 0 ||
                names_add(w, &w->in_val, (char *)w->prev) < 0)
                return -1;
        }
    }
    size_t first = w->out_list.n;
    if (functional) {
        for (size_t i = 0;; i++) {
            size_t ol = norm_kid(d, outl, i);
            if (ol == NONE)
                break;
            const char *n = jstr(d, jkid(d, ol, 0));
            if (!n)
                continue; /* not a layer reference: no output */
            const char *s = scoped(w, node, n);
            if (!s || names_add(w, &w->out_list, (char *)s) < 0)
                return -1;
        }
    } else {
        size_t layers = jget(d, cfg, "layers");
        const char *n = layer_name(d, d->v[layers].last);
        const char *s = n ? scoped(w, node, n) : NULL;
        if (n && (!s || names_add(w, &w->out_list, (char *)s) < 0))
            return -1;
    }
    return set_outputs(w, node, first, w->out_list.n - first);
}

/* The input name for inbound layer `name` at tensor `index`: a model's
 * output layer when name is a model. */
static void add_input(walk *w, tfb_buf *nd, const char *scope,
                      const char *name, double index)
{
    const char *in = scoped(w, scope, name);
    if (!in)
        return;
    for (size_t k = w->out_model.n; k-- > 0;)
        if (w->out_model.v[k].n && !strcmp(w->out_model.v[k].model, in)) {
            size_t n = w->out_model.v[k].n;
            size_t i = index >= 0 && index < (double)n ? (size_t)index
                                                       : n - 1;
            in = w->out_list.v[w->out_model.v[k].first + i];
            break;
        }
    pb_bytes(nd, 3, in, strlen(in));
}

/* One inbound entry [name, node_index, tensor_index, ...] (Keras 2) or
 * a tensor {"config": {"keras_history": [name, node, tensor]}} (Keras 3);
 * Keras 3's args may also hold a list of tensors. */
static void inbound_entry(walk *w, tfb_buf *nd, const char *scope, size_t e,
                          int depth)
{
    jdoc *d = w->d;
    if (e == NONE || depth > 2)
        return;
    if (d->v[e].t == J_ARR) {
        const char *name = jstr(d, jkid(d, e, 0));
        size_t idx = jkid(d, e, 2);
        if (name && idx != NONE && d->v[idx].t == J_NUM) {
            add_input(w, nd, scope, name, d->v[idx].num);
            return;
        }
        for (size_t k = d->v[e].first; k != NONE; k = d->v[k].next)
            inbound_entry(w, nd, scope, k, depth + 1);
    } else if (d->v[e].t == J_OBJ) {
        size_t h = jget(d, jget(d, e, "config"), "keras_history");
        const char *name = jstr(d, jkid(d, h, 0));
        size_t idx = jkid(d, h, 2);
        if (name && idx != NONE && d->v[idx].t == J_NUM)
            add_input(w, nd, scope, name, d->v[idx].num);
    }
}

static int emit_layer(walk *w, const char *scope, size_t layer)
{
    jdoc *d = w->d;
    size_t cfg = jget(d, layer, "config");
    const char *lname = jstr(d, jget(d, cfg, "name"));
    if (!lname) {
        d->why = "a layer without config.name";
        return w->rc = TFB_ECORRUPT;
    }
    if (++w->nodes > TFB_GRAPH_MAX_NODES)
        return w->rc = TFB_ETOOBIG;
    const char *node = scoped(w, scope, lname);
    if (!node)
        return -1;
    tfb_buf nd = {0}, attr = {0}, entry = {0};
    pb_bytes(&nd, 1, node, strlen(node));
    size_t inb = jget(d, layer, "inbound_nodes");
    if (inb != NONE && d->v[inb].t != J_NULL) {
        for (size_t n = inb != NONE && d->v[inb].t == J_ARR ? d->v[inb].first
                                                           : NONE;
             n != NONE; n = d->v[n].next) {
            size_t args = jget(d, n, "args"); /* Keras 3: {"args"} */
            if (args != NONE && d->v[args].t == J_ARR)
                for (size_t a = d->v[args].first; a != NONE; a = d->v[a].next)
                    inbound_entry(w, &nd, scope, a, 0);
            else if (d->v[n].t == J_ARR)
                for (size_t i = 0, e; (e = norm_kid(d, n, i)) != NONE; i++)
                    inbound_entry(w, &nd, scope, e, 2);
        }
    } else if (w->prev) {
        pb_bytes(&nd, 3, w->prev, strlen(w->prev));
    }
    for (size_t k = 0; k < w->in_key.n; k++)
        if (!strcmp(w->in_key.v[k], node)) {
            pb_bytes(&nd, 3, w->in_val.v[k], strlen(w->in_val.v[k]));
            break;
        }
    /* attr map entries in key order: dtype, keras_class */
    size_t dt = jget(d, cfg, "dtype");
    const char *dts = jstr(d, dt);
    if (!dts && dt != NONE && d->v[dt].t == J_OBJ)
        dts = jstr(d, jget(d, jget(d, dt, "config"), "name"));
    int dte = dts ? dtype_enum(dts) : 0;
    if (dte) {
        tfb_buf_put(&attr, "\x30", 1); /* AttrValue.type = 6 */
        pb_varint(&attr, (uint64_t)dte);
        pb_bytes(&entry, 1, "dtype", 5);
        pb_bytes(&entry, 2, attr.v, attr.n);
        pb_bytes(&nd, 5, entry.v, entry.n);
        tfb_buf_free(&attr);
        tfb_buf_free(&entry);
    }
    const char *cls = jstr(d, jget(d, layer, "class_name"));
    if (cls) {
        pb_bytes(&attr, 2, cls, strlen(cls)); /* AttrValue.s = 2 */
        pb_bytes(&entry, 1, "keras_class", 11);
        pb_bytes(&entry, 2, attr.v, attr.n);
        pb_bytes(&nd, 5, entry.v, entry.n);
    }
    pb_bytes(w->out, 1, nd.v, nd.n);
    int failed = nd.failed || attr.failed || entry.failed;
    tfb_buf_free(&nd);
    tfb_buf_free(&attr);
    tfb_buf_free(&entry);
    if (failed)
        return w->rc = TFB_ENOMEM;
    w->prev = node;
    return w->rc;
}

/* _walk_layers and the loop over them: the layer, then (a model) its
 * layers under its name as scope. */
static int walk_layer(walk *w, const char *scope, size_t layer, int depth)
{
    jdoc *d = w->d;
    if (depth > TFB_KERAS_MAX_DEPTH) {
        d->why = "models nested past TFB_KERAS_MAX_DEPTH";
        return w->rc = TFB_ECORRUPT;
    }
    if (d->v[layer].t != J_OBJ) {
        d->why = "a layer is not a JSON object";
        return w->rc = TFB_ECORRUPT;
    }
    size_t cfg = jget(d, layer, "config");
    size_t layers = jget(d, cfg, "layers");
    if (layers == NONE || d->v[layers].t == J_NULL)
        return emit_layer(w, scope, layer);
    if (d->v[layers].t != J_ARR) {
        d->why = "config.layers is not a list";
        return w->rc = TFB_ECORRUPT;
    }
    if (jnonempty(d, layers) && update_dicts(w, scope, layer) < 0)
        return -1;
    const char *mname = jstr(d, jget(d, cfg, "name"));
    const char *sub = mname ? scoped(w, scope, mname) : scope;
    if (mname && !sub)
        return -1;
    for (size_t k = d->v[layers].first; k != NONE; k = d->v[k].next)
        if (walk_layer(w, sub, k, depth + 1) < 0)
            return -1;
    return 0;
}

int tfb_keras_graph_def(tfb_buf *out, const char *json, size_t len,
                        const char **why)
{
    jdoc d = {0};
    d.p = json;
    d.end = json + len;
    size_t root = NONE;
    int rc = 0;
    if (jvalue(&d, 0, &root) < 0) {
        rc = d.nomem ? TFB_ENOMEM : TFB_ECORRUPT;
    } else {
        ws(&d);
        if (d.p != d.end) {
            d.why = "text after the JSON value";
            rc = TFB_ECORRUPT;
        } else if (d.v[root].t != J_OBJ || jget(&d, root, "config") == NONE) {
            d.why = "not a Keras model config (no \"config\" object)";
            rc = TFB_ECORRUPT;
        }
    }
    if (rc == 0) {
        walk w = {0};
        w.d = &d;
        w.out = out;
        walk_layer(&w, NULL, root, 0);
        rc = w.rc ? w.rc : (out->failed ? TFB_ENOMEM : 0);
        for (size_t i = 0; i < w.owned.n; i++)
            free(w.owned.v[i]);
        tfb_vec_free(&w.owned);
        tfb_vec_free(&w.in_key);
        tfb_vec_free(&w.in_val);
        tfb_vec_free(&w.out_model);
        tfb_vec_free(&w.out_list);
    }
    if (why)
        *why = d.why;
    tfb_vec_free(&d);
    tfb_buf_free(&d.pool);
    return rc;
}
