/*
 * options.h - the one command-line parser of `tfboard` (serve), `tfboard
 * report` and `tfboard watch` (options.c). Each command declares its
 * options as a table of tfb_option; the dashboards declare theirs in
 * their descriptors (plugin.h) with the same struct, and every command
 * accepts them after its own. --help is made from the tables.
 *
 * Spelling: --name VALUE and --name=VALUE both work (a flag takes no
 * value); '-' and '_' in a name are the same, and --help spells every
 * name with '_' (TensorBoard's spelling).
 *
 * Thread-safety: used while the command line is parsed, before any
 * thread starts.
 */
#ifndef TFB_SERVER_OPTIONS_H
#define TFB_SERVER_OPTIONS_H

#include <stddef.h>
#include <stdio.h>

typedef enum tfb_opt_type {
    TFB_OPT_FLAG = 1, /* int *dest = 1 when given */
    TFB_OPT_INT,      /* int *dest, within [min, max] */
    TFB_OPT_DOUBLE,   /* double *dest, finite, within [min, max] */
    TFB_OPT_STRING,   /* const char **dest, non-empty, points into argv */
    TFB_OPT_STRINGS,  /* repeatable: const char *dest[room], filled in
                         order (the rest stay NULL); room is max when
                         above 0, else TFB_OPT_STRINGS_MAX; one more than
                         the room is refused */
    TFB_OPT_CALL,     /* its own parsing: dest is a tfb_opt_call */
} tfb_opt_type;
#define TFB_OPT_STRINGS_MAX 32

/* A value that needs its own parsing (report's --format, --fail_on, the
 * two values of --compare A B). dest of a TFB_OPT_CALL option points to
 * one of these (so tfb_option keeps the layout plugins were built with). */
typedef struct tfb_opt_call {
    /* Parses the n_values values after the option (in order; a missing
     * one, at the end of argv, is NULL) into user's variables. Returns 0,
     * or TFB_EINVAL with a one-line reason in why (the parser prefixes
     * the command and the option). */
    int (*parse)(void *user, const char *const *values, char *why,
                 size_t why_len);
    void *user;
    int n_values; /* 1 (0 means 1) or 2 */
} tfb_opt_call;

/* One option. The struct of a dashboard's descriptor too (plugin.h):
 * its layout only ever grows at the end. */
typedef struct tfb_option {
    const char *name; /* without "--": [a-z0-9_]+ */
    const char *arg;  /* the value's name in --help ("X", "A B"); NULL:
                         none (a flag) */
    const char *help; /* for --help; a '\n' goes on an indented line */
    tfb_opt_type type;
    const char *def;  /* the default, as text for --help (NULL: none);
                         whoever owns *dest sets it itself */
    double min, max;  /* TFB_OPT_INT / TFB_OPT_DOUBLE: the range;
                         TFB_OPT_STRINGS: max is the room (above) */
    void *dest;       /* where the value goes (type above) */
} tfb_option;

/* A command: its options and the text of its --help around them. */
typedef struct tfb_command {
    const char *prog;     /* "tfboard report": starts every message */
    const char *synopsis; /* --help's text before the options */
    void (*more_help)(FILE *out); /* after the synopsis; NULL: none */
    const tfb_option *opts;
    size_t n_opts;
    const char *epilogue; /* after the options, before the dashboards';
                             NULL: none */
} tfb_command;

/* Parses argv (argv[0] is the command) into the options' destinations:
 * each argument is one of c's options, else a dashboard's
 * (tfb_plugin_option_find); then every plugin's check_options runs once.
 * Returns 0 to go on, 1 when --help (or -h) was handled (the help on out;
 * exit 0), or TFB_EINVAL after one message on err that names the
 * argument (exit 2). A value is never echoed for an empty string (a
 * token stays out of the terminal). */
int tfb_options_parse(const tfb_command *c, int argc, char **argv,
                      FILE *out, FILE *err);

/* --help: the synopsis, c's options, the epilogue, then every dashboard's
 * options (those of the plugin table, with the plugin's name). */
void tfb_options_usage(const tfb_command *c, FILE *out);

#endif
