/*
 * assets.h - the web UI files embedded into the tfboard binary.
 *
 * The table behind these functions is generated at build time by embed.c
 * from the files listed in webui/meson.build, so the server needs no files
 * on disk and no network to serve the dashboards.
 */
#ifndef TFB_WEBUI_ASSETS_H
#define TFB_WEBUI_ASSETS_H

#include <stddef.h>

typedef struct tfb_asset {
    const char *path;               /* URL path, e.g. "/app.js" */
    const unsigned char *data;      /* file bytes (not NUL-terminated) */
    size_t len;                     /* bytes in data */
    const char *content_type;       /* e.g. "text/javascript; charset=utf-8" */
} tfb_asset;

/* The asset served at URL path `path` ("/" and "/index.html" both give
 * index.html), or NULL when there is none. Only exact paths match: no
 * normalisation is done, so "/../x" or "/a//b" are simply unknown. The
 * result points into static, read-only storage that lives as long as the
 * program. Thread-safe. */
const tfb_asset *tfb_asset_find(const char *path);

/* Number of embedded assets, and the i-th one (0 <= i < count; NULL past
 * the end), in path order. For listing and tests. Thread-safe. */
size_t tfb_asset_count(void);
const tfb_asset *tfb_asset_at(size_t i);

/* Content type for a file name by its extension ("x.js" gives
 * "text/javascript; charset=utf-8"), "application/octet-stream" when the
 * extension is unknown. Shared with the server's --webui_dir serving so both
 * paths answer alike. Thread-safe; the string is static. */
const char *tfb_asset_content_type(const char *name);

#endif /* TFB_WEBUI_ASSETS_H */
