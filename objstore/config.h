/*
 * config.h - where an S3 client's settings come from: only the places
 * users already set for the AWS tools (environment, AWS_PROFILE's
 * sections of ~/.aws/credentials and ~/.aws/config), nothing new for
 * credentials. See README.md ("Object storage").
 *
 * Ownership: a tfb_os_config owns its strings (tfb_os_config_free; the
 * secret is wiped). Not thread-safe while being loaded; read-only after.
 */
#ifndef TFB_OBJSTORE_CONFIG_H
#define TFB_OBJSTORE_CONFIG_H

typedef struct tfb_os_config {
    char *endpoint;      /* scheme://host[:port], no trailing slash */
    char *region;        /* signing region ("auto" for gs://) */
    char *access_key;    /* NULL: anonymous (unsigned requests) */
    char *secret_key;
    char *session_token; /* sent as x-amz-security-token; may be NULL */
    int path_style;      /* 1: endpoint/bucket/key; 0: bucket.host/key */
    int aws_default;     /* the endpoint is AWS's own (virtual-hosted OK) */
    /* Per request: connect timeout, and the stall time after which a
     * transfer that moves no byte is abandoned (then retried). */
    long connect_timeout_ms;
    long stall_timeout_ms;
    int max_attempts;    /* AWS_MAX_ATTEMPTS, default 5 */
    long backoff_ms;     /* first retry's base delay */
} tfb_os_config;

/* Loads the settings for scheme "s3" or "gs" from the environment (and
 * the AWS files). Returns 0, or -1 when out of memory or the environment
 * is inconsistent (a key without its secret), with a message in err
 * (never a secret). */
int tfb_os_config_load(tfb_os_config *c, const char *scheme, char *err,
                       size_t errlen);
void tfb_os_config_free(tfb_os_config *c);

#endif
