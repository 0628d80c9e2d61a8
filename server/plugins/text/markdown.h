/*
 * markdown.h - text summaries as TensorBoard shows them: Markdown rendered
 * to HTML with cmark (the CommonMark reference library), made safe here,
 * on the server.
 *
 * Safety: raw HTML is never passed through: an HTML block or inline tag
 * becomes text (so `<script>` shows as the characters "<script>", as
 * TensorBoard's sanitizer escapes it; the Markdown inside an HTML block is
 * still rendered); a link or image whose URL is not
 * http, https, mailto or relative (javascript:, data:, vbscript:, ...)
 * keeps its text and loses the link; images become their alt text (no
 * request leaves the page). cmark's own safe mode stays on underneath.
 *
 * Tables: CommonMark has none. Pipe tables (a header row, a delimiter row
 * of dashes, rows while lines hold a '|', outside fenced code) are cut
 * out of the text and rendered here as <table> with each cell's inline
 * Markdown rendered by cmark; the text around them goes to cmark as
 * separate documents (a table inside a list item is not recognised).
 *
 * Pure; thread-safe.
 */
#ifndef TFB_MARKDOWN_H
#define TFB_MARKDOWN_H

#include <stddef.h>

/* Cost: cmark's parser is quadratic on some inputs: Debian's cmark
 * 0.30.2 takes 4 to 11 s of CPU on 360 KB of "![[]()" repeated, and a
 * route renders on every visit. So a text longer than this is not
 * rendered at all (the text route sends it as plain text, saying so):
 * 64 KiB holds any note or table people log as Markdown, and costs at
 * most about 0.25 s whatever its bytes (64 KiB of that pattern).
 * Documented in this plugin's API.md. */
#define TFB_MARKDOWN_MAX_BYTES (64 * 1024)

/* The HTML of src[0..len) (NUL-terminated, malloc'd; *out_len its length
 * when out_len is not NULL), or NULL when memory runs out or len is over
 * TFB_MARKDOWN_MAX_BYTES (callers check the length first). */
char *tfb_markdown_html(const char *src, size_t len, size_t *out_len);

#endif
