/*
 * report_page.h - the static parts of the html report page (report_page.c).
 * Read-only data; thread-safe.
 */
#ifndef TFB_SERVER_REPORT_PAGE_H
#define TFB_SERVER_REPORT_PAGE_H

/* NULL-terminated lists of pieces to write one after the other. */
extern const char *const tfb_report_page_css[];
extern const char *const tfb_report_page_js[];

/* The compare page (report_compare_page.c): extra styles after the
 * report's, and its script. */
extern const char *const tfb_report_compare_css[];
extern const char *const tfb_report_compare_js[];

#endif
