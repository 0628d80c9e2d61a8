/*
 * plugin_options.c - the plugins' own command-line options (plugin.h,
 * tfb_plugin_option), for both command lines (`tfboard` in config.c and
 * `tfboard report` in report.c): looked up in the plugin table core was
 * handed, parsed by their declared type into the plugin's own variable,
 * and listed in --help (tfb_plugin_option_find is plugin_table.c's).
 * Core names no plugin and no plugin option.
 *
 * Thread-safety: used while the command line is parsed, before any
 * thread starts.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/plugin.h"

int tfb_plugin_option_set(const tfb_plugin_option *o, const char *value)
{
    char *end;
    switch (o->type) {
    case TFB_OPT_FLAG:
        *(int *)o->dest = 1;
        return 0;
    case TFB_OPT_INT: {
        if (!value || !*value)
            return TFB_EINVAL;
        errno = 0;
        long v = strtol(value, &end, 10);
        if (*end || errno || (double)v < o->min || (double)v > o->max)
            return TFB_EINVAL;
        *(int *)o->dest = (int)v;
        return 0;
    }
    case TFB_OPT_DOUBLE: {
        if (!value || !*value)
            return TFB_EINVAL;
        errno = 0;
        double v = strtod(value, &end);
        if (*end || errno || !isfinite(v) || v < o->min || v > o->max)
            return TFB_EINVAL;
        *(double *)o->dest = v;
        return 0;
    }
    case TFB_OPT_STRING:
        if (!value || !*value)
            return TFB_EINVAL;
        *(const char **)o->dest = value;
        return 0;
    case TFB_OPT_STRINGS: {
        if (!value || !*value)
            return TFB_EINVAL;
        const char **v = (const char **)o->dest;
        for (int i = 0; i < TFB_OPT_STRINGS_MAX; i++)
            if (!v[i]) {
                v[i] = value;
                return 0;
            }
        return TFB_EINVAL;
    }
    }
    return TFB_EINVAL;
}

int tfb_plugin_options_check(char *err, size_t err_len)
{
    size_t np;
    const tfb_plugin *const *pl = tfb_plugins(&np);
    for (size_t i = 0; i < np; i++) {
        if (!pl[i]->check_options)
            continue;
        int rc = pl[i]->check_options(err, err_len);
        if (rc < 0)
            return rc;
    }
    return 0;
}

void tfb_plugin_options_usage(FILE *out)
{
    size_t np;
    const tfb_plugin *const *pl = tfb_plugins(&np);
    int any = 0;
    for (size_t i = 0; i < np; i++) {
        for (size_t k = 0; k < pl[i]->n_options; k++) {
            const tfb_plugin_option *o = &pl[i]->options[k];
            if (!any) {
                fputs("\ndashboard options (for serving and for the "
                      "report):\n", out);
                any = 1;
            }
            char left[64];
            snprintf(left, sizeof left, "--%s%s%s", o->name,
                     o->arg ? " " : "", o->arg ? o->arg : "");
            for (char *c = left + 2; *c && *c != ' '; c++)
                if (*c == '_')
                    *c = '-';
            fprintf(out, "  %-22s %s", left, o->help);
            if (o->def)
                fprintf(out, " (default %s)", o->def);
            fprintf(out, " [%s]\n", pl[i]->name);
        }
    }
}
