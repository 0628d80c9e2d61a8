/*
 * watch.h - `tfboard watch --logdir DIR [--once] [--fail_fast]
 * [--interval S] [--alert RULE ...] [dashboard options]`: loads the logdir
 * as the server does and prints each alert as one line when it fires or
 * clears, for terminals, cluster scripts and CI. Every alert is printed;
 * only those of the --fail_on rules (TFB_WATCH_FAIL_ON_DEFAULT unless
 * given) set the exit status:
 *   0  --once: no such alert holds; otherwise stopped by SIGINT/SIGTERM
 *   1  --once: such an alert holds; --fail_fast: the first one fired
 *   2  usage error (a bad option, --alert or --fail_on rule, named);
 *      --once: no runs found under the logdir (a typo must not pass CI)
 *   3  the logdir cannot be read
 * Thread-safety: call once, from main.
 */
#ifndef TFB_SERVER_WATCH_H
#define TFB_SERVER_WATCH_H

/* The rules of a broken run, what fails `watch` unless --fail_on says
 * otherwise: a NaN/Inf, a divergence, a loss spike not recovered from
 * (yet), a crash, and every --alert rule the user asked for. A recovered
 * spike (loss_spike), a stalled run (an old finished run without an end
 * record reads so), a straggler or an idle GPU are printed, not failed:
 * they are worth a look, not a broken run. */
#define TFB_WATCH_FAIL_ON_DEFAULT "nonfinite,diverged,spike_open,crashed,user"
/* Rules one --fail_on may name (there are 12 names). */
#define TFB_WATCH_FAIL_ON_MAX 16

/* argv[0] is "watch". Returns the exit status. */
int tfb_watch_main(int argc, char **argv);

#endif
