/*
 * watch.h - `tfboard watch --logdir DIR [--once] [--fail_fast]
 * [--interval S] [--alert RULE ...] [dashboard options]`: loads the logdir
 * as the server does and prints each alert as one line when it fires or
 * clears, for terminals, cluster scripts and CI. Exit status:
 *   0  --once: no alert holds; otherwise stopped by SIGINT/SIGTERM
 *   1  --once: some alert holds; --fail_fast: the first alert fired
 *   2  usage error (a bad option or --alert rule, named)
 *   3  the logdir cannot be read
 * Thread-safety: call once, from main.
 */
#ifndef TFB_SERVER_WATCH_H
#define TFB_SERVER_WATCH_H

/* argv[0] is "watch". Returns the exit status. */
int tfb_watch_main(int argc, char **argv);

#endif
