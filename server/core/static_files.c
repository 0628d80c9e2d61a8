/*
 * static_files.c - the web UI's files, embedded or from --webui_dir.
 */
#include "core/static_files.h"

#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/http_internal.h"
#include "core/plugin.h"

#ifdef TFB_HAVE_EMBEDDED_ASSETS
#include "webui/assets.h"
#endif

static const char HTML_404[] = "404 not found\n";

static int not_found(tfb_http_resp *resp)
{
    return tfb_http_text(resp, 404, "text/plain; charset=utf-8", HTML_404,
                         sizeof HTML_404 - 1);
}

/* Rejects paths that could name something outside the root, before any
 * file system call: ".." segments, backslashes, control bytes. */
static int path_is_safe(const char *p)
{
    if (p[0] != '/')
        return 0;
    for (const char *c = p; *c; c++)
        if ((unsigned char)*c < 0x20 || *c == '\\')
            return 0;
    const char *seg = p;
    while (*seg) {
        while (*seg == '/')
            seg++;
        const char *e = strchr(seg, '/');
        size_t n = e ? (size_t)(e - seg) : strlen(seg);
        if ((n == 2 && seg[0] == '.' && seg[1] == '.') ||
            (n == 1 && seg[0] == '.'))
            return 0;
        seg += n;
    }
    return 1;
}

static const char *type_for(const char *name)
{
#ifdef TFB_HAVE_EMBEDDED_ASSETS
    return tfb_asset_content_type(name);
#else
    const char *dot = strrchr(name, '.');
    if (!dot)
        return "application/octet-stream";
    if (!strcmp(dot, ".html"))
        return "text/html; charset=utf-8";
    if (!strcmp(dot, ".js"))
        return "text/javascript; charset=utf-8";
    if (!strcmp(dot, ".css"))
        return "text/css; charset=utf-8";
    if (!strcmp(dot, ".svg"))
        return "image/svg+xml";
    return "application/octet-stream";
#endif
}

static int serve_dir(const char *root, const char *path,
                     tfb_http_resp *resp)
{
    size_t lr = strlen(root), lp = strlen(path);
    if (lr + lp + 1 > PATH_MAX)
        return not_found(resp);
    char joined[PATH_MAX + 1];
    memcpy(joined, root, lr);
    memcpy(joined + lr, path, lp + 1);
    /* Symlinks inside the root may not lead out of it either. */
    char *real = realpath(joined, NULL);
    if (!real)
        return not_found(resp);
    int inside = strncmp(real, root, lr) == 0 && real[lr] == '/';
    int fd = inside ? open(real, O_RDONLY | O_CLOEXEC) : -1;
    free(real);
    if (fd < 0)
        return not_found(resp);
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
        st.st_size > 256 * 1024 * 1024) {
        close(fd);
        return not_found(resp);
    }
    size_t size = (size_t)st.st_size;
    char *buf = malloc(size + 1);
    size_t got = 0;
    while (buf && got < size) {
        ssize_t r = read(fd, buf + got, size - got);
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    close(fd);
    if (!buf || got != size) {
        free(buf);
        return tfb_http_error(resp, 500, "cannot read file");
    }
    return tfb_http_body_take(resp, 200, type_for(path), buf, size);
}

int tfb_static_serve(const char *root, const char *path, tfb_http_resp *resp)
{
    if (!path_is_safe(path))
        return not_found(resp);
    if (strcmp(path, "/") == 0)
        path = "/index.html";
    /* A plugin built outside the web UI bundle carries its own page. */
    size_t np;
    const tfb_plugin *const *pl = tfb_plugins(&np);
    for (size_t i = 0; i < np; i++)
        if (pl[i]->module_source && pl[i]->module &&
            strcmp(path + 1, pl[i]->module) == 0)
            return tfb_http_text(resp, 200, "text/javascript; charset=utf-8",
                                 pl[i]->module_source,
                                 strlen(pl[i]->module_source));
    if (root)
        return serve_dir(root, path, resp);
#ifdef TFB_HAVE_EMBEDDED_ASSETS
    const tfb_asset *a = tfb_asset_find(path);
    if (a)
        return tfb_http_text(resp, 200, a->content_type,
                             (const char *)a->data, a->len);
#endif
    return not_found(resp);
}
