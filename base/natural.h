/*
 * natural.h - natural order of names, as people sort them: run2 before
 * run10, rank-00002 before rank-00010, a sweep's lr0.03 before lr0.1.
 * The web UI's naturalCompare (webui/js/core/format.js) has the same
 * rules for numbers; its text parts go through the browser's collator, so
 * names of letters, digits, '/', '-' and '_' come out in the same order in
 * the report as in the sidebar.
 *
 * Rules: the names are compared part by part; a number (digits, with a
 * fraction when a '.' and digits follow) by its value, then by its
 * spelling ("1" before "01"); other text byte by byte, ASCII letters
 * without case. Names equal so far compare with strcmp, so the order is
 * total.
 *
 * Ownership: base; nothing is kept. Thread-safety: any thread.
 * Internal to libtfboard and the server: not exported.
 */
#ifndef TFB_BASE_NATURAL_H
#define TFB_BASE_NATURAL_H

/* <0, 0 or >0 as a sorts before, with or after b (NULL sorts as ""). */
int tfb_natural_cmp(const char *a, const char *b);

#endif
