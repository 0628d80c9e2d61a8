/*
 * asset_types.c - content type of a web UI file from its extension.
 *
 * Compiled twice: into the embedding generator (which stores the type next
 * to each file) and into the asset library (the server uses it for files
 * served from --webui_dir), so both answer alike.
 */
#include "assets.h"

#include <string.h>

static const struct {
    const char *ext;
    const char *type;
} types[] = {
    {".html", "text/html; charset=utf-8"},
    {".js", "text/javascript; charset=utf-8"},
    {".mjs", "text/javascript; charset=utf-8"},
    {".css", "text/css; charset=utf-8"},
    {".svg", "image/svg+xml"},
    {".json", "application/json"},
    {".map", "application/json"},
    {".png", "image/png"},
    {".ico", "image/x-icon"},
    {".txt", "text/plain; charset=utf-8"},
    {".md", "text/markdown; charset=utf-8"},
};

const char *tfb_asset_content_type(const char *name)
{
    if (name == NULL)
        return "application/octet-stream";
    const char *dot = strrchr(name, '.');
    const char *slash = strrchr(name, '/');
    if (dot == NULL || (slash != NULL && dot < slash))
        return "application/octet-stream";
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        if (strcmp(dot, types[i].ext) == 0)
            return types[i].type;
    return "application/octet-stream";
}
