/*
 * config.c - the command line of `tfboard` (serve mode).
 */
#include "core/config.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/http_auth.h"
#include "core/plugin.h"
#include "tfboard.h"

void tfb_config_defaults(tfb_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->host = "127.0.0.1";
    cfg->port = 6006;
    cfg->reload_interval = 5;
    cfg->max_conn_per_client = 64;
    cfg->request_timeout = 30;
}

void tfb_config_usage(FILE *out)
{
    fputs(
        "usage: tfboard --logdir DIR [options]\n"
        "       tfboard report --logdir DIR [report options]\n"
        "\n"
        "Serves TensorBoard-style dashboards for the event files (and GPU\n"
        "traces) found under DIR, recursively.\n"
        "\n"
        "options:\n"
        "  --logdir DIR            directory of runs (required), or a bucket:\n"
        "                          s3://bucket/prefix, gs://bucket/prefix\n"
        "  --port N                port to listen on (default 6006; 0 = any "
        "free port)\n"
        "  --host ADDR             address to listen on (default "
        "127.0.0.1)\n"
        "  --bind_all              listen on every address (IPv4 and IPv6)\n"
        "  --reload_interval S     seconds between reloads (default 5; 0 = "
        "load once)\n"
        "  --webui-dir DIR         serve the web UI from DIR instead of the "
        "embedded copy\n"
        "  --load_threads N        threads that load runs (default: one per "
        "CPU)\n"
        "  --http_threads N        threads that answer requests (default: 8 "
        "per CPU,\n"
        "                          32 to 128, so downloads leave threads "
        "free)\n"
        "  --allow_host NAME       also accept requests whose Host header is "
        "NAME\n"
        "                          (others than the bound address and "
        "localhost get 403,\n"
        "                          against DNS rebinding; --bind_all accepts "
        "any)\n"
        "  --max_connections_per_client N  connections one address may hold "
        "(default 64)\n"
        "  --request_timeout S     a request must arrive whole within S "
        "seconds (default 30)\n"
        "  --cache_dir DIR         where GPU traces are cached after their "
        "first load\n"
        "                          (default $XDG_CACHE_HOME/tfboard, else "
        "~/.cache/tfboard;\n"
        "                          \"\" = no cache; never inside the "
        "logdir)\n"
        "  --token T               the access token (better: set "
        "TFBOARD_TOKEN=T, which\n"
        "                          ps does not show); needed by every "
        "request. Default:\n"
        "                          none on loopback; made up and printed "
        "in the URL\n"
        "                          when bound to other addresses\n"
        "  --no_auth               no token, even when bound to other "
        "addresses\n"
        "  --tls_cert FILE         serve HTTPS with this PEM certificate "
        "(chain)\n"
        "  --tls_key FILE          ... and this PEM private key\n"
        "  --quiet                 no messages but errors (a made-up "
        "token's URL\n"
        "                          is still printed: there is no other "
        "way to learn it)\n"
        "  --help                  this text\n"
        "  --version               the version\n",
        out);
    tfb_plugin_options_usage(out);
}

/* If arg (already normalized to name) is opt: returns its value, from
 * "--opt=value" or the next argument ("" when missing); else NULL. */
static const char *opt_value(const char *name, const char *inline_val,
                             const char *opt, int argc, char **argv, int *i)
{
    if (strcmp(name, opt) != 0)
        return NULL;
    if (inline_val)
        return inline_val;
    if (*i + 1 >= argc)
        return "";
    return argv[++*i];
}

static int parse_int(const char *s, long min, long max, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (!*s || *end || errno || v < min || v > max)
        return -1;
    *out = (int)v;
    return 0;
}

static int parse_double(const char *s, double min, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (!*s || *end || errno || !isfinite(v) || v < min)
        return -1;
    *out = v;
    return 0;
}

/* The token (from --token or $TFBOARD_TOKEN) and TLS options; messages
 * never include the token. */
static int check_access(tfb_config *cfg, FILE *err)
{
    const char *from = "--token";
    /* An explicit --no_auth outranks a token left in the environment. */
    if (!cfg->token && !cfg->no_auth) {
        const char *env = getenv("TFBOARD_TOKEN");
        if (env && *env) {
            cfg->token = env;
            from = "TFBOARD_TOKEN";
        }
    }
    char why[128];
    if (cfg->token && tfb_auth_token_valid(cfg->token, why, sizeof why) < 0) {
        fprintf(err, "tfboard: bad %s: %s\n", from, why);
        return TFB_EINVAL;
    }
    if (cfg->token && cfg->no_auth) {
        fprintf(err, "tfboard: %s and --no_auth contradict each other; "
                     "choose one\n", from);
        return TFB_EINVAL;
    }
    if (!cfg->tls_cert != !cfg->tls_key) {
        fprintf(err, "tfboard: HTTPS needs both --tls_cert FILE and "
                     "--tls_key FILE\n");
        return TFB_EINVAL;
    }
    return 0;
}

int tfb_config_parse(tfb_config *cfg, int argc, char **argv, FILE *out,
                     FILE *err)
{
    tfb_config_defaults(cfg);
    for (int i = 1; i < argc; i++) {
        const char *v, *inline_val = NULL;
        int start = i;
        /* Accept both --opt_name and --opt-name, and --opt=value. */
        char a[64];
        const char *eq = strchr(argv[i], '=');
        size_t nl = eq ? (size_t)(eq - argv[i]) : strlen(argv[i]);
        if (nl >= sizeof a) {
            fprintf(err, "tfboard: unknown option '%s' (see tfboard --help)\n",
                    argv[i]);
            return TFB_EINVAL;
        }
        for (size_t k = 0; k < nl; k++)
            a[k] = (k >= 2 && argv[i][k] == '-') ? '_' : argv[i][k];
        a[nl] = 0;
        if (eq)
            inline_val = eq + 1;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            tfb_config_usage(out);
            return 1;
        }
        if (!strcmp(a, "--version")) {
            fprintf(out, "tfboard %s\n", tfb_version());
            return 1;
        }
        if (!strcmp(a, "--bind_all")) {
            cfg->bind_all = 1;
            continue;
        }
        if (!strcmp(a, "--no_auth")) {
            cfg->no_auth = 1;
            continue;
        }
        if (!strcmp(a, "--quiet")) {
            cfg->quiet = 1;
            continue;
        }
        int bad = 0;
        const tfb_plugin_option *po;
        if ((v = opt_value(a, inline_val, "--logdir", argc, argv, &i))) {
            bad = !*v;
            cfg->logdir = v;
        } else if ((v = opt_value(a, inline_val, "--port", argc, argv, &i))) {
            bad = parse_int(v, 0, 65535, &cfg->port) < 0;
        } else if ((v = opt_value(a, inline_val, "--host", argc, argv, &i))) {
            bad = !*v;
            cfg->host = v;
        } else if ((v = opt_value(a, inline_val, "--reload_interval", argc, argv, &i))) {
            bad = parse_double(v, 0, &cfg->reload_interval) < 0;
        } else if ((v = opt_value(a, inline_val, "--webui_dir", argc, argv, &i))) {
            bad = !*v;
            cfg->webui_dir = v;
        } else if ((v = opt_value(a, inline_val, "--load_threads", argc, argv, &i))) {
            bad = parse_int(v, 0, 64, &cfg->load_threads) < 0;
        } else if ((v = opt_value(a, inline_val, "--http_threads", argc, argv, &i))) {
            bad = parse_int(v, 0, 256, &cfg->http_threads) < 0;
        } else if ((v = opt_value(a, inline_val, "--allow_host", argc, argv, &i))) {
            bad = !*v || cfg->n_allow_hosts == TFB_CONFIG_MAX_ALLOW_HOSTS;
            if (!bad)
                cfg->allow_hosts[cfg->n_allow_hosts++] = v;
        } else if ((v = opt_value(a, inline_val, "--max_connections_per_client", argc, argv, &i))) {
            bad = parse_int(v, 1, 100000, &cfg->max_conn_per_client) < 0;
        } else if ((v = opt_value(a, inline_val, "--request_timeout", argc, argv, &i))) {
            bad = parse_double(v, 0.1, &cfg->request_timeout) < 0;
        } else if ((v = opt_value(a, inline_val, "--cache_dir", argc, argv, &i))) {
            /* "" turns the cache off; a missing value is an error. */
            bad = !inline_val && i == start;
            cfg->cache_dir = v;
        } else if ((v = opt_value(a, inline_val, "--token", argc, argv, &i))) {
            /* Checked below, with a message that does not repeat it. */
            cfg->token = v;
        } else if ((v = opt_value(a, inline_val, "--tls_cert", argc, argv, &i))) {
            bad = !*v;
            cfg->tls_cert = v;
        } else if ((v = opt_value(a, inline_val, "--tls_key", argc, argv, &i))) {
            bad = !*v;
            cfg->tls_key = v;
        } else if (!strncmp(a, "--", 2) &&
                   (po = tfb_plugin_option_find(a + 2, strlen(a + 2)))) {
            /* A dashboard's own option (plugin.h). */
            v = po->type == TFB_OPT_FLAG
                    ? ""
                    : opt_value(a, inline_val, a, argc, argv, &i);
            bad = (po->type == TFB_OPT_FLAG && inline_val) ||
                  tfb_plugin_option_set(po, v) < 0;
        } else {
            fprintf(err, "tfboard: unknown option '%s' (see tfboard --help)\n",
                    argv[i]);
            return TFB_EINVAL;
        }
        if (bad) {
            fprintf(err, "tfboard: bad or missing value for %s (see tfboard "
                         "--help)\n",
                    argv[start]);
            return TFB_EINVAL;
        }
    }
    char why[256] = "";
    if (tfb_plugin_options_check(why, sizeof why) < 0) {
        fprintf(err, "tfboard: %s\n", why);
        return TFB_EINVAL;
    }
    if (check_access(cfg, err) < 0)
        return TFB_EINVAL;
    if (!cfg->logdir) {
        fprintf(err, "tfboard: --logdir DIR is required (see tfboard "
                     "--help)\n");
        return TFB_EINVAL;
    }
    return 0;
}
