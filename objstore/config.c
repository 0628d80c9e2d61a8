/*
 * config.c - S3 client settings from the environment and the AWS files
 * (config.h).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/str.h"
#include "objstore/config.h"

static char *dup_or_null(const char *s)
{
    return s && *s ? strdup(s) : NULL;
}

static const char *env(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

static char *trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    size_t n = strlen(s);
    while (n && isspace((unsigned char)s[n - 1]))
        s[--n] = 0;
    return s;
}

/* The value of key in section [want] of an INI file (the AWS files'
 * format), malloc'd, or NULL. */
static char *ini_get(const char *path, const char *want, const char *key)
{
    FILE *f = path ? fopen(path, "r") : NULL;
    if (!f)
        return NULL;
    char line[4096], *found = NULL;
    int in = 0;
    while (!found && fgets(line, sizeof line, f)) {
        char *s = trim(line);
        if (*s == '#' || *s == ';' || !*s)
            continue;
        if (*s == '[') {
            char *e = strchr(s, ']');
            if (e)
                *e = 0;
            in = strcmp(trim(s + 1), want) == 0;
            continue;
        }
        char *eq = strchr(s, '=');
        if (!in || !eq)
            continue;
        *eq = 0;
        if (strcmp(trim(s), key) == 0)
            found = strdup(trim(eq + 1));
    }
    fclose(f);
    return found;
}

static char *home_file(const char *env_name, const char *rel)
{
    const char *p = env(env_name);
    if (p)
        return strdup(p);
    const char *home = env("HOME");
    if (!home)
        return NULL;
    return tfb_strfmt("%s/%s", home, rel);
}

static long env_ms(const char *name, long def)
{
    const char *v = env(name);
    if (!v)
        return def;
    char *end;
    double s = strtod(v, &end);
    return end != v && s > 0 ? (long)(s * 1000.0) : def;
}

void tfb_os_config_free(tfb_os_config *c)
{
    if (!c)
        return;
    if (c->secret_key)
        memset(c->secret_key, 0, strlen(c->secret_key));
    free(c->endpoint);
    free(c->region);
    free(c->access_key);
    free(c->secret_key);
    free(c->session_token);
    memset(c, 0, sizeof *c);
}

int tfb_os_config_load(tfb_os_config *c, const char *scheme, char *err,
                       size_t errlen)
{
    memset(c, 0, sizeof *c);
    int gs = strcmp(scheme, "gs") == 0;
    const char *profile = env("AWS_PROFILE");
    if (!profile)
        profile = "default";
    char *cred_file = home_file("AWS_SHARED_CREDENTIALS_FILE",
                                ".aws/credentials");
    char *conf_file = home_file("AWS_CONFIG_FILE", ".aws/config");
    /* ~/.aws/config names profiles "[profile NAME]", except default. */
    char conf_sec[300];
    snprintf(conf_sec, sizeof conf_sec, "%s%s",
             strcmp(profile, "default") ? "profile " : "", profile);

    if (env("AWS_ACCESS_KEY_ID") || env("AWS_SECRET_ACCESS_KEY")) {
        c->access_key = dup_or_null(env("AWS_ACCESS_KEY_ID"));
        c->secret_key = dup_or_null(env("AWS_SECRET_ACCESS_KEY"));
        c->session_token = dup_or_null(env("AWS_SESSION_TOKEN"));
        if (!c->access_key || !c->secret_key) {
            snprintf(err, errlen, "AWS_ACCESS_KEY_ID and "
                                  "AWS_SECRET_ACCESS_KEY must be set together");
            goto fail;
        }
    } else {
        c->access_key = ini_get(cred_file, profile, "aws_access_key_id");
        c->secret_key = ini_get(cred_file, profile, "aws_secret_access_key");
        c->session_token = ini_get(cred_file, profile, "aws_session_token");
        if (!c->access_key) {
            /* credentials may sit in the config file too */
            c->access_key = ini_get(conf_file, conf_sec, "aws_access_key_id");
            free(c->secret_key);
            c->secret_key = ini_get(conf_file, conf_sec,
                                    "aws_secret_access_key");
        }
        if (!c->access_key != !c->secret_key) {
            snprintf(err, errlen, "profile %s has a key id without its "
                                  "secret (or the other way round)", profile);
            goto fail;
        }
    }

    const char *region = env("AWS_REGION");
    if (!region)
        region = env("AWS_DEFAULT_REGION");
    if (gs)
        c->region = strdup("auto");
    else if (region)
        c->region = strdup(region);
    else if (!(c->region = ini_get(conf_file, conf_sec, "region")))
        c->region = strdup("us-east-1");

    const char *ep = gs ? NULL : env("AWS_ENDPOINT_URL_S3");
    if (!ep && !gs)
        ep = env("AWS_ENDPOINT_URL");
    if (!ep && !gs)
        ep = env("S3_ENDPOINT");
    char *ep_conf = NULL;
    if (!ep && !gs && (ep_conf = ini_get(conf_file, conf_sec, "endpoint_url")))
        ep = ep_conf;
    char buf[1024];
    if (gs) {
        snprintf(buf, sizeof buf, "https://storage.googleapis.com");
        c->path_style = 1;
    } else if (ep) {
        /* TensorBoard's S3_ENDPOINT may be a bare host[:port]; its
         * S3_USE_HTTPS=0 means plain HTTP. */
        const char *https = env("S3_USE_HTTPS");
        int plain = https && strcmp(https, "0") == 0;
        if (strstr(ep, "://"))
            snprintf(buf, sizeof buf, "%s", ep);
        else
            snprintf(buf, sizeof buf, "%s://%s", plain ? "http" : "https", ep);
        /* MinIO, Ceph, R2 and moto serve buckets as paths. */
        c->path_style = 1;
    } else {
        snprintf(buf, sizeof buf, "https://s3.%s.amazonaws.com", c->region);
        c->aws_default = 1;
    }
    free(ep_conf);
    size_t bl = strlen(buf);
    while (bl && buf[bl - 1] == '/')
        buf[--bl] = 0;
    c->endpoint = strdup(buf);
    c->connect_timeout_ms = env_ms("TFBOARD_S3_CONNECT_TIMEOUT", 10000);
    c->stall_timeout_ms = env_ms("TFBOARD_S3_TIMEOUT", 30000);
    c->backoff_ms = 200;
    const char *att = env("AWS_MAX_ATTEMPTS");
    c->max_attempts = att ? atoi(att) : 5;
    if (c->max_attempts < 1)
        c->max_attempts = 1;
    free(cred_file);
    free(conf_file);
    if (!c->endpoint || !c->region) {
        snprintf(err, errlen, "out of memory");
        tfb_os_config_free(c);
        return -1;
    }
    return 0;
fail:
    free(cred_file);
    free(conf_file);
    tfb_os_config_free(c);
    return -1;
}
