/*
 * report_page.h - the static parts of the html report page (report_page.c).
 * Read-only data; thread-safe.
 */
#ifndef TFB_SERVER_REPORT_PAGE_H
#define TFB_SERVER_REPORT_PAGE_H

/* NULL-terminated lists of pieces to write one after the other. */
extern const char *const tfb_report_page_css[];
extern const char *const tfb_report_page_js[];

#endif
