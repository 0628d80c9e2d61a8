/*
 * http.c - libmicrohttpd glue: the listening socket, the thread pool and
 * the request callback (see http.h).
 *
 * We create and bind the socket ourselves and hand it to libmicrohttpd, so
 * that "port in use" and "address not available" reach the user as clear
 * messages, and --port 0 can report the port it got.
 */
#include "http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "http_internal.h"
#include "static_files.h"

struct tfb_server {
    struct MHD_Daemon *daemon;
    int fd;
    int port;
    const tfb_config *cfg;
    tfb_store *store;
    char *webui_root; /* realpath of --webui-dir, or NULL */
};

static const char *mhd_query(void *ctx, const char *name)
{
    return MHD_lookup_connection_value((struct MHD_Connection *)ctx,
                                       MHD_GET_ARGUMENT_KIND, name);
}

static int hexval(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Percent-decoding of the path and query values, in place. A decoded NUL
 * would silently cut the C string ("/index.html%00.js" would name
 * /index.html), so it becomes 0x01, which every consumer rejects. */
static size_t unescape(void *cls, struct MHD_Connection *c, char *s)
{
    (void)cls;
    (void)c;
    char *w = s;
    for (const char *r = s; *r; r++) {
        int h, l;
        if (r[0] == '%' && (h = hexval(r[1])) >= 0 && (l = hexval(r[2])) >= 0) {
            int v = h * 16 + l;
            *w++ = (char)(v ? v : 1);
            r += 2;
        } else {
            *w++ = *r;
        }
    }
    *w = 0;
    return (size_t)(w - s);
}

static enum MHD_Result send_answer(struct MHD_Connection *c,
                                   tfb_http_resp *a, int is_data)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(
        a->len, a->body ? a->body : (void *)"", a->body ?
        MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT);
    if (!r) {
        tfb_http_resp_clear(a);
        return MHD_NO;
    }
    a->body = NULL; /* owned by the response now */
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
                            a->content_type ? a->content_type
                                            : "application/octet-stream");
    MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
    if (is_data)
        MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
    if (a->status == 405)
        MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
    enum MHD_Result ret = MHD_queue_response(c, a->status ? a->status : 500,
                                             r);
    MHD_destroy_response(r);
    return ret;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c,
                                  const char *url, const char *method,
                                  const char *version, const char *upload,
                                  size_t *upload_size, void **con_cls)
{
    static int first_call_marker;
    tfb_http_resp a = {0};
    /* The first call comes with the headers only. Answering on it would be
     * an answer before the request was read, for which libmicrohttpd
     * closes the connection; answer on the next call and keep-alive works.
     */
    if (*con_cls == NULL) {
        *con_cls = &first_call_marker;
        return MHD_YES;
    }
    tfb_server *s = cls;
    if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0) {
        if (*upload_size) {
            *upload_size = 0; /* discard any body */
            return MHD_YES;
        }
        tfb_http_error(&a, 405, "method not allowed");
        return send_answer(c, &a, 1);
    }
    (void)upload;
    (void)version;
    int is_data = strncmp(url, "/data/", 6) == 0 || strcmp(url, "/data") == 0;
    if (is_data) {
        tfb_http_req req = {url, mhd_query, c, s->store, s->cfg};
        tfb_http_dispatch(&req, &a);
    } else {
        tfb_static_serve(s->webui_root, url, &a);
    }
    return send_answer(c, &a, is_data);
}

/* Binds a listening socket for host:port; returns the fd or a negative
 * code after writing the reason to err. */
static int bind_socket(const tfb_config *cfg, FILE *err, int *port_out)
{
    struct addrinfo hints, *res = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    hints.ai_family = AF_UNSPEC;
    char portstr[16];
    snprintf(portstr, sizeof portstr, "%d", cfg->port);
    const char *host = cfg->bind_all ? NULL : cfg->host;
    if (cfg->bind_all)
        hints.ai_family = AF_INET6; /* :: with dual stack, else 0.0.0.0 */
    int gai = getaddrinfo(host, portstr, &hints, &res);
    if (gai != 0 && cfg->bind_all) {
        hints.ai_family = AF_INET;
        gai = getaddrinfo(NULL, portstr, &hints, &res);
    }
    if (gai != 0) {
        fprintf(err, "tfboard: cannot resolve host '%s': %s\n",
                host ? host : "*", gai_strerror(gai));
        return TFB_EINVAL;
    }
    int fd = -1, last_errno = 0;
    for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC,
                    ai->ai_protocol);
        if (fd < 0) {
            last_errno = errno;
            continue;
        }
        int one = 1;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (ai->ai_family == AF_INET6) {
            int v6only = cfg->bind_all ? 0 : 1;
            setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &v6only, sizeof v6only);
        }
        if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 &&
            listen(fd, 1024) == 0)
            break;
        last_errno = errno;
        close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    if (fd < 0) {
        if (last_errno == EADDRINUSE)
            fprintf(err,
                    "tfboard: port %d is already in use on %s; pick another "
                    "with --port\n",
                    cfg->port, host ? host : "all addresses");
        else
            fprintf(err, "tfboard: cannot listen on %s port %d: %s\n",
                    host ? host : "all addresses", cfg->port,
                    strerror(last_errno));
        return TFB_EIO;
    }
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    int port = cfg->port;
    if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0) {
        if (ss.ss_family == AF_INET)
            port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
        else if (ss.ss_family == AF_INET6)
            port = ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
    }
    *port_out = port;
    return fd;
}

int tfb_server_start(tfb_server **out, const tfb_config *cfg,
                     tfb_store *store, FILE *err)
{
    tfb_server *s = calloc(1, sizeof *s);
    if (!s)
        return TFB_ENOMEM;
    s->cfg = cfg;
    s->store = store;
    s->fd = -1;
    if (cfg->webui_dir) {
        s->webui_root = realpath(cfg->webui_dir, NULL);
        if (!s->webui_root) {
            fprintf(err, "tfboard: --webui-dir %s: %s\n", cfg->webui_dir,
                    strerror(errno));
            free(s);
            return TFB_ENOENT;
        }
    }
    int fd = bind_socket(cfg, err, &s->port);
    if (fd < 0) {
        free(s->webui_root);
        free(s);
        return fd;
    }
    s->fd = fd;
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    unsigned threads = cfg->http_threads > 0 ? (unsigned)cfg->http_threads
                       : ncpu > 0 ? (unsigned)ncpu : 1;
    s->daemon = MHD_start_daemon(
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL, 0, NULL, NULL,
        on_request, s, MHD_OPTION_LISTEN_SOCKET, fd,
        MHD_OPTION_THREAD_POOL_SIZE, threads,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)60,
        MHD_OPTION_CONNECTION_LIMIT, (unsigned)4096,
        MHD_OPTION_UNESCAPE_CALLBACK, unescape, (void *)NULL, MHD_OPTION_END);
    if (!s->daemon) {
        fprintf(err, "tfboard: the HTTP server could not start\n");
        close(fd);
        free(s->webui_root);
        free(s);
        return TFB_EIO;
    }
    s->fd = -1; /* libmicrohttpd closes the listening socket at stop */
    *out = s;
    return 0;
}

int tfb_server_port(const tfb_server *s)
{
    return s->port;
}

void tfb_server_stop(tfb_server *s)
{
    if (!s)
        return;
    if (s->daemon)
        MHD_stop_daemon(s->daemon);
    if (s->fd >= 0)
        close(s->fd);
    free(s->webui_root);
    free(s);
}
