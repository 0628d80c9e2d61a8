/*
 * options.c - the command-line parser of every command (options.h): an
 * argument is looked up in the command's table, then among the
 * dashboards' options, and its value parsed by the option's type. Core
 * names no option: the tables are the commands' (cli.c, report/report.c,
 * watch.c) and the plugins'.
 */
#include "core/options.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/plugin.h"
#include "tfboard.h"

/* The help column: "  --name ARG" is padded to it. */
#define HELP_COL 25

/* The room of a TFB_OPT_STRINGS option. */
static int room(const tfb_option *o)
{
    return o->max >= 1 && o->max < TFB_OPT_STRINGS_MAX ? (int)o->max
                                                        : TFB_OPT_STRINGS_MAX;
}

/* Parses the values v (v[0] non-NULL) by o's type into *o->dest.
 * Returns 0, or TFB_EINVAL with what is wrong in why; *dest is then
 * unchanged. */
static int set_value(const tfb_option *o, const char *const *v, char *why,
                     size_t why_len)
{
    char *end;
    errno = 0;
    switch (o->type) {
    case TFB_OPT_FLAG:
        *(int *)o->dest = 1;
        return 0;
    case TFB_OPT_INT: {
        long x = strtol(v[0], &end, 10);
        if (!*end && !errno && x >= o->min && x <= o->max) {
            *(int *)o->dest = (int)x;
            return 0;
        }
        snprintf(why, why_len, "'%s' is not an integer from %g to %g", v[0],
                 o->min, o->max);
        return TFB_EINVAL;
    }
    case TFB_OPT_DOUBLE: {
        double x = strtod(v[0], &end);
        if (!*end && !errno && isfinite(x) && x >= o->min && x <= o->max) {
            *(double *)o->dest = x;
            return 0;
        }
        if (isinf(o->max))
            snprintf(why, why_len, "'%s' is not a number from %g up", v[0],
                     o->min);
        else
            snprintf(why, why_len, "'%s' is not a number from %g to %g",
                     v[0], o->min, o->max);
        return TFB_EINVAL;
    }
    case TFB_OPT_STRING:
        *(const char **)o->dest = v[0];
        return 0;
    case TFB_OPT_STRINGS: {
        const char **s = (const char **)o->dest;
        for (int i = 0; i < room(o); i++)
            if (!s[i]) {
                s[i] = v[0];
                return 0;
            }
        snprintf(why, why_len, "given more than %d times", room(o));
        return TFB_EINVAL;
    }
    case TFB_OPT_CALL: {
        const tfb_opt_call *c = o->dest;
        return c->parse(c->user, v, why, why_len) < 0 ? TFB_EINVAL : 0;
    }
    }
    return TFB_EINVAL;
}

/* One row of --help: "  --name ARG", then from the help column the
 * help, "(default D)" and the suffix, wrapped at word breaks (and at
 * '\n') to 79 columns, the lines after the first indented. */
static void usage_row(FILE *out, const tfb_option *o, const char *suffix)
{
    char text[1024];
    snprintf(text, sizeof text, "%s%s%s%s%s", o->help,
             o->def ? " (default " : "", o->def ? o->def : "",
             o->def ? ")" : "", suffix);
    int col = fprintf(out, "  --%s%s%s", o->name, o->arg ? " " : "",
                      o->arg ? o->arg : "");
    col += fprintf(out, "%*s", col < HELP_COL - 1 ? HELP_COL - col : 2, "");
    int fresh = 1; /* nothing on this line yet */
    for (const char *w = text; *w;) {
        size_t n = strcspn(w, " \n");
        if (!fresh && col + 1 + (int)n > 79) {
            col = fprintf(out, "\n%*s", HELP_COL, "") - 1;
            fresh = 1;
        }
        col += fprintf(out, "%s%.*s", fresh ? "" : " ", (int)n, w);
        fresh = 0;
        w += n;
        if (*w == '\n') {
            col = fprintf(out, "\n%*s", HELP_COL, "") - 1;
            fresh = 1;
        }
        if (*w)
            w++;
    }
    fputc('\n', out);
}

void tfb_options_usage(const tfb_command *c, FILE *out)
{
    fputs(c->synopsis, out);
    if (c->more_help)
        c->more_help(out);
    fputs("\noptions:\n", out);
    for (size_t i = 0; i < c->n_opts; i++)
        usage_row(out, &c->opts[i], "");
    usage_row(out, &(tfb_option){.name = "help", .help = "this text"}, "");
    if (c->epilogue)
        fprintf(out, "\n%s", c->epilogue);
    size_t np;
    const tfb_plugin *const *pl = tfb_plugins(&np);
    int any = 0;
    for (size_t i = 0; i < np; i++)
        for (size_t k = 0; k < pl[i]->n_options; k++) {
            if (!any++)
                fputs("\ndashboard options (serve, report and watch):\n",
                      out);
            char suffix[80];
            snprintf(suffix, sizeof suffix, " [%s]", pl[i]->name);
            usage_row(out, &pl[i]->options[k], suffix);
        }
}

/* The option --<name> (len bytes, '-' and '_' alike) of the command,
 * else of a dashboard (plugin_table.c), or NULL. */
static const tfb_option *find(const tfb_command *c, const char *name,
                              size_t len)
{
    char n[64]; /* longer than any option's name: none */
    if (len == 0 || len >= sizeof n)
        return NULL;
    for (size_t i = 0; i < len; i++)
        n[i] = name[i] == '-' ? '_' : name[i];
    n[len] = 0;
    for (size_t i = 0; i < c->n_opts; i++)
        if (!strcmp(c->opts[i].name, n))
            return &c->opts[i];
    return tfb_plugin_option_find(n, len);
}

int tfb_options_parse(const tfb_command *c, int argc, char **argv,
                      FILE *out, FILE *err)
{
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i], *eq = strchr(arg, '=');
        size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
        if (!strcmp(arg, "-h") || (len == 6 && !strncmp(arg, "--help", 6))) {
            tfb_options_usage(c, out);
            return 1;
        }
        const tfb_option *o =
            !strncmp(arg, "--", 2) ? find(c, arg + 2, len - 2) : NULL;
        if (!o) {
            /* "tfboard runs": a directory given the way other tools take
             * one; say how this command takes it. */
            if (arg[0] != '-' && find(c, "logdir", 6))
                fprintf(err, "%s: '%s' is not an option; for the runs under "
                             "a directory: %s --logdir %s (see %s --help)\n",
                        c->prog, arg, c->prog, arg, c->prog);
            else
                fprintf(err, "%s: unknown option '%s' (see %s --help)\n",
                        c->prog, arg, c->prog);
            return TFB_EINVAL;
        }
        /* Its values: after '=' (the first), then the next arguments; a
         * missing one is NULL. */
        const char *v[2] = {NULL, NULL};
        int n = o->type == TFB_OPT_FLAG ? 0
                : o->type == TFB_OPT_CALL &&
                        ((const tfb_opt_call *)o->dest)->n_values == 2
                    ? 2
                    : 1;
        int k = 0;
        if (eq) {
            if (!n) {
                fprintf(err, "%s: %.*s takes no value (see %s --help)\n",
                        c->prog, (int)len, arg, c->prog);
                return TFB_EINVAL;
            }
            v[k++] = eq + 1;
        }
        for (; k < n && i + 1 < argc; k++)
            v[k] = argv[++i];
        if (n && (!v[0] || (!*v[0] && o->type != TFB_OPT_CALL))) {
            /* Missing or empty (said without echoing it: a token). A
             * callback sees a missing second value as NULL. */
            fprintf(err, "%s: %.*s needs a value (--%s %s; see %s --help)\n",
                    c->prog, (int)len, arg, o->name, o->arg ? o->arg : "X",
                    c->prog);
            return TFB_EINVAL;
        }
        char why[512] = "";
        if (set_value(o, v, why, sizeof why) < 0) {
            fprintf(err, "%s: %.*s: %s\n", c->prog, (int)len, arg, why);
            return TFB_EINVAL;
        }
    }
    /* Checks across a dashboard's options (one threshold below another). */
    size_t np;
    const tfb_plugin *const *pl = tfb_plugins(&np);
    for (size_t i = 0; i < np; i++) {
        char why[512] = "";
        if (pl[i]->check_options &&
            pl[i]->check_options(why, sizeof why) < 0) {
            fprintf(err, "%s: %s\n", c->prog, why);
            return TFB_EINVAL;
        }
    }
    return 0;
}
