/*
 * query_cli.h - `tfboard query` and `tfboard export` (issue 30): SQL over a
 * logdir (a directory, or an s3:// / gs:// URL) from the command line,
 * through the query layer (query/query.h), written as an aligned table,
 * CSV, JSON or JSON lines.
 *
 * Exit status: 0; 1 the query hit a limit (time, memory) or could not be
 * written; 2 usage, or a bad query (SQLite's message and the position on
 * stderr); 3 the logdir cannot be read.
 */
#ifndef TFB_SERVER_QUERY_CLI_H
#define TFB_SERVER_QUERY_CLI_H

/* Rows the table format measures for its column widths before it prints
 * (later rows are printed at those widths, wider cells overflowing): the
 * format streams a result of any length in bounded memory. */
#define TFB_QUERY_CLI_TABLE_ROWS 1000
/* A cell of the table format is cut to this many bytes ("..."). */
#define TFB_QUERY_CLI_TABLE_CELL 60

int tfb_query_main(int argc, char **argv);
int tfb_export_main(int argc, char **argv);

#endif
