/*
 * report.h - `tfboard report ...`: post-mortem reports from a logdir.
 *
 * The sections come from the plugin table (plugin.h); the formats are
 * report_text.c, report_json.c and report_html.c.
 * Thread-safety: called once from main on the main thread.
 */
#ifndef TFB_SERVER_REPORT_H
#define TFB_SERVER_REPORT_H

/* argv[0] is "report"; the rest are the report's own options.
 * Returns the process exit status. */
int tfb_report_main(int argc, char **argv);

#endif
