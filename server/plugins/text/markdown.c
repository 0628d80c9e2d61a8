/*
 * markdown.c - Markdown to safe HTML with cmark (see markdown.h).
 */
#include "plugins/text/markdown.h"

#include <cmark.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/vec.h"

/* http, https, mailto, or no scheme at all (a relative URL or #anchor). */
static int url_safe(const char *u)
{
    if (!u)
        return 0;
    for (const char *p = u; *p; p++) {
        if ((unsigned char)*p <= 0x20)
            return 0; /* browsers drop tabs and newlines inside schemes */
        if (*p == '/' || *p == '?' || *p == '#')
            return 1; /* a path before any scheme: relative */
        if (*p == ':') {
            size_t n = (size_t)(p - u);
            return (n == 4 && strncasecmp(u, "http", 4) == 0) ||
                   (n == 5 && strncasecmp(u, "https", 5) == 0) ||
                   (n == 6 && strncasecmp(u, "mailto", 6) == 0);
        }
    }
    return 1;
}

/* Moves node's children before it, then removes it. */
static void unwrap(cmark_node *node)
{
    cmark_node *c;
    while ((c = cmark_node_first_child(node)) != NULL)
        cmark_node_insert_before(node, c);
    cmark_node_free(node);
}

/* Raw HTML as text; unsafe links and every image as their text. depth:
 * how many HTML blocks deep this document was parsed from. */
static int make_safe(cmark_node *doc, int depth)
{
    TFB_VEC(cmark_node *) todo = {0};
    cmark_iter *it = cmark_iter_new(doc);
    cmark_event_type ev;
    while ((ev = cmark_iter_next(it)) != CMARK_EVENT_DONE) {
        if (ev != CMARK_EVENT_ENTER)
            continue;
        cmark_node *node = cmark_iter_get_node(it);
        cmark_node_type t = cmark_node_get_type(node);
        if (t == CMARK_NODE_HTML_BLOCK || t == CMARK_NODE_HTML_INLINE ||
            t == CMARK_NODE_IMAGE ||
            (t == CMARK_NODE_LINK && !url_safe(cmark_node_get_url(node)))) {
            if (tfb_vec_push(&todo, node) < 0) {
                cmark_iter_free(it);
                tfb_vec_free(&todo);
                return -1;
            }
        }
    }
    cmark_iter_free(it);
    /* Children come after their parents: walk backwards so a node is
     * changed before the node holding it. */
    int rc = 0;
    for (size_t i = todo.n; i-- > 0;) {
        cmark_node *node = todo.v[i];
        cmark_node_type t = cmark_node_get_type(node);
        if (t == CMARK_NODE_LINK || t == CMARK_NODE_IMAGE) {
            unwrap(node);
            continue;
        }
        const char *lit = cmark_node_get_literal(node);
        size_t ll = lit ? strlen(lit) : 0;
        if (t == CMARK_NODE_HTML_BLOCK && depth < 8) {
            /* The block's text parsed again as Markdown with its first
             * '<' escaped, so it is no HTML block any more: its tags come
             * back as inline HTML (made text below) and its links and
             * emphasis are rendered, as TensorBoard's sanitizer keeps
             * them. */
            char *src = malloc(ll + 2);
            cmark_node *sub = NULL;
            if (src) {
                src[0] = '\\';
                memcpy(src + 1, lit ? lit : "", ll);
                sub = cmark_parse_document(src, ll + 1,
                                           CMARK_OPT_VALIDATE_UTF8);
                free(src);
            }
            if (!sub || make_safe(sub, depth + 1) < 0) {
                cmark_node_free(sub);
                cmark_node_free(node); /* dropped rather than unsafe */
                rc = -1;
                continue;
            }
            cmark_node *c;
            while ((c = cmark_node_first_child(sub)) != NULL)
                cmark_node_insert_before(node, c);
            cmark_node_free(sub);
            cmark_node_free(node);
            continue;
        }
        while (ll && (lit[ll - 1] == '\n' || lit[ll - 1] == '\r'))
            ll--;
        char *copy = malloc(ll + 1);
        cmark_node *text = cmark_node_new(CMARK_NODE_TEXT);
        cmark_node *repl = text;
        if (copy && text && t == CMARK_NODE_HTML_BLOCK) {
            repl = cmark_node_new(CMARK_NODE_PARAGRAPH);
            if (repl)
                cmark_node_append_child(repl, text);
        }
        if (!copy || !text || !repl) {
            free(copy);
            if (repl != text)
                cmark_node_free(repl);
            cmark_node_free(text);
            rc = -1;
            continue;
        }
        memcpy(copy, lit ? lit : "", ll);
        copy[ll] = 0;
        cmark_node_set_literal(text, copy);
        free(copy);
        cmark_node_replace(node, repl);
        cmark_node_free(node);
    }
    tfb_vec_free(&todo);
    return rc;
}

static int render_doc(tfb_buf *b, const char *src, size_t len)
{
    cmark_node *doc = cmark_parse_document(src, len, CMARK_OPT_VALIDATE_UTF8);
    if (!doc)
        return -1;
    int rc = make_safe(doc, 0);
    /* CMARK_OPT_UNSAFE is not given: cmark omits raw HTML and unsafe URLs
     * itself too. */
    char *html = rc == 0 ? cmark_render_html(doc, CMARK_OPT_DEFAULT) : NULL;
    cmark_node_free(doc);
    if (!html)
        return -1;
    tfb_buf_puts(b, html);
    free(html);
    return 0;
}

/* A cell's inline Markdown, without the paragraph cmark wraps it in. */
static int render_cell(tfb_buf *b, const char *s, size_t n)
{
    tfb_buf tmp = {0};
    if (render_doc(&tmp, s, n) < 0 || tmp.failed) {
        tfb_buf_free(&tmp);
        return -1;
    }
    const char *h = tmp.v ? tmp.v : "";
    size_t hl = tmp.n;
    if (hl >= 8 && memcmp(h, "<p>", 3) == 0 &&
        memcmp(h + hl - 5, "</p>\n", 5) == 0 &&
        !memchr(h + 3, '\n', hl - 8)) {
        h += 3;
        hl -= 8;
    }
    tfb_buf_put(b, h, hl);
    tfb_buf_free(&tmp);
    return 0;
}

typedef struct line {
    const char *p;
    size_t n;
} line;

static int is_blank(line l)
{
    for (size_t i = 0; i < l.n; i++)
        if (l.p[i] != ' ' && l.p[i] != '\t' && l.p[i] != '\r')
            return 0;
    return 1;
}

static int is_fence(line l)
{
    size_t i = 0;
    while (i < l.n && i < 3 && l.p[i] == ' ')
        i++;
    return l.n - i >= 3 && (memcmp(l.p + i, "```", 3) == 0 ||
                            memcmp(l.p + i, "~~~", 3) == 0);
}

/* The cells of a table row: split at '|' not escaped by '\\', the outer
 * pipes dropped, each trimmed. Returns the count (at most max). */
static size_t split_row(line l, line *cells, size_t max)
{
    const char *p = l.p, *e = l.p + l.n;
    while (p < e && (*p == ' ' || *p == '\t'))
        p++;
    while (e > p && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
        e--;
    if (p < e && *p == '|')
        p++;
    if (e > p && e[-1] == '|' && (e - 1 == p || e[-2] != '\\'))
        e--;
    size_t n = 0;
    const char *start = p;
    for (const char *q = p; q <= e; q++) {
        if (q == e || (*q == '|' && (q == start || q[-1] != '\\'))) {
            const char *a = start, *z = q;
            while (a < z && (*a == ' ' || *a == '\t'))
                a++;
            while (z > a && (z[-1] == ' ' || z[-1] == '\t'))
                z--;
            if (n < max)
                cells[n] = (line){a, (size_t)(z - a)};
            n++;
            start = q + 1;
        }
    }
    return n < max ? n : max;
}

static int is_delim_row(line l, size_t *cols)
{
    int pipe = 0, dash = 0;
    for (size_t i = 0; i < l.n; i++) {
        char c = l.p[i];
        if (c == '|')
            pipe = 1;
        else if (c == '-')
            dash = 1;
        else if (c != ':' && c != ' ' && c != '\t' && c != '\r')
            return 0;
    }
    if (!pipe || !dash)
        return 0;
    line cells[64];
    size_t n = split_row(l, cells, 64);
    for (size_t i = 0; i < n; i++) {
        size_t d = 0;
        for (size_t k = 0; k < cells[i].n; k++)
            d += cells[i].p[k] == '-';
        if (!d)
            return 0;
    }
    *cols = n;
    return 1;
}

#define MAX_COLS 64

static int render_table(tfb_buf *b, const line *rows, size_t n, size_t cols)
{
    line cells[MAX_COLS];
    tfb_buf_puts(b, "<table>\n<thead>\n<tr>\n");
    size_t k = split_row(rows[0], cells, MAX_COLS);
    for (size_t c = 0; c < cols; c++) {
        tfb_buf_puts(b, "<th>");
        if (c < k && render_cell(b, cells[c].p, cells[c].n) < 0)
            return -1;
        tfb_buf_puts(b, "</th>\n");
    }
    tfb_buf_puts(b, "</tr>\n</thead>\n");
    if (n > 2)
        tfb_buf_puts(b, "<tbody>\n");
    for (size_t r = 2; r < n; r++) {
        k = split_row(rows[r], cells, MAX_COLS);
        tfb_buf_puts(b, "<tr>\n");
        for (size_t c = 0; c < cols; c++) {
            tfb_buf_puts(b, "<td>");
            if (c < k && render_cell(b, cells[c].p, cells[c].n) < 0)
                return -1;
            tfb_buf_puts(b, "</td>\n");
        }
        tfb_buf_puts(b, "</tr>\n");
    }
    if (n > 2)
        tfb_buf_puts(b, "</tbody>\n");
    tfb_buf_puts(b, "</table>\n");
    return 0;
}

char *tfb_markdown_html(const char *src, size_t len, size_t *out_len)
{
    if (len > TFB_MARKDOWN_MAX_BYTES)
        return NULL; /* see markdown.h: never handed to cmark */
    size_t nl = 1;
    for (size_t i = 0; i < len; i++)
        nl += src[i] == '\n';
    line *lines = malloc(nl * sizeof *lines);
    if (!lines)
        return NULL;
    size_t n = 0;
    for (const char *p = src, *e = src + len; p <= e && n < nl;) {
        const char *q = memchr(p, '\n', (size_t)(e - p));
        if (!q)
            q = e;
        lines[n++] = (line){p, (size_t)(q - p)};
        p = q + 1;
    }
    tfb_buf b = {0};
    tfb_buf_puts(&b, "");
    int in_fence = 0, rc = 0;
    size_t chunk = 0; /* first line not yet rendered */
    for (size_t i = 0; i < n && rc == 0; i++) {
        if (is_fence(lines[i])) {
            in_fence = !in_fence;
            continue;
        }
        size_t cols;
        if (in_fence || i + 1 >= n || !memchr(lines[i].p, '|', lines[i].n) ||
            !is_delim_row(lines[i + 1], &cols) || cols > MAX_COLS)
            continue;
        line cells[MAX_COLS];
        if (split_row(lines[i], cells, MAX_COLS) != cols)
            continue; /* header and delimiter must agree (GFM) */
        size_t end = i + 2;
        while (end < n && !is_blank(lines[end]) &&
               memchr(lines[end].p, '|', lines[end].n))
            end++;
        if (i > chunk)
            rc = render_doc(&b, lines[chunk].p,
                            (size_t)(lines[i - 1].p + lines[i - 1].n -
                                     lines[chunk].p));
        if (rc == 0)
            rc = render_table(&b, lines + i, end - i, cols);
        chunk = end;
        i = end - 1;
    }
    if (rc == 0 && chunk < n)
        rc = render_doc(&b, lines[chunk].p,
                        (size_t)(src + len - lines[chunk].p));
    free(lines);
    if (rc < 0) {
        tfb_buf_free(&b);
        return NULL;
    }
    size_t html_len = b.n;
    char *html = tfb_buf_take(&b);
    if (html && out_len)
        *out_len = html_len;
    return html;
}
