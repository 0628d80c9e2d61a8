/*
 * static_files.h - answers for the web UI's files: the assets embedded in
 * the binary, or the files under --webui_dir.
 *
 * Thread-safety: may be called from any thread.
 */
#ifndef TFB_SERVER_STATIC_FILES_H
#define TFB_SERVER_STATIC_FILES_H

#include "core/http_api.h"

/* Serves the file for URL path `path` ("/" means /index.html). root is
 * the realpath of --webui_dir, or NULL for the embedded assets. Paths with
 * a ".." segment, a backslash, a NUL or that resolve outside root get 404,
 * as do unknown files. Always sets an answer; returns 0. */
int tfb_static_serve(const char *root, const char *path, tfb_http_resp *resp);

#endif
