/*
 * report.h - `tfboard report ...`: post-mortem reports from a logdir.
 *
 * Ownership: the header is area "server" (the entry point main.c calls);
 * report.c and its helpers belong to the pipeline area, and are listed in
 * server_report_sources in server/meson.build. main.c calls it only when
 * that list is non-empty (TFB_HAVE_REPORT=1).
 * Thread-safety: called once from main on the main thread.
 */
#ifndef TFB_SERVER_REPORT_H
#define TFB_SERVER_REPORT_H

/* argv[0] is "report"; the rest are the report's own options.
 * Returns the process exit status. */
int tfb_report_main(int argc, char **argv);

#endif
