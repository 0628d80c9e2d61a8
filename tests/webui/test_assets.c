/*
 * test_assets.c - the embedded web UI: lookups, content types, and that
 * every file the page loads is in the table (a missing module would give a
 * blank page only in the browser).
 */
#include "webui/assets.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;

#define CHECK(cond)                                                        \
    do {                                                                   \
        if (!(cond)) {                                                     \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__,         \
                    __LINE__, #cond);                                      \
            failures++;                                                    \
        }                                                                  \
    } while (0)

static int has_bytes(const tfb_asset *a, const char *needle)
{
    size_t n = strlen(needle);
    for (size_t i = 0; a != NULL && n <= a->len && i + n <= a->len; i++)
        if (memcmp(a->data + i, needle, n) == 0)
            return 1;
    return 0;
}

/* Every `from './x.js'` / `from '../x.js'` in a module names an asset. */
static void check_imports(const tfb_asset *a)
{
    const char *dir_end = strrchr(a->path, '/');
    size_t dlen = (size_t)(dir_end - a->path) + 1;
    for (size_t i = 0; i + 6 < a->len; i++) {
        if (memcmp(a->data + i, "from '", 6) != 0)
            continue;
        size_t s = i + 6, e = s;
        while (e < a->len && a->data[e] != '\'')
            e++;
        char rel[256], path[512];
        if (e - s >= sizeof rel)
            continue;
        memcpy(rel, a->data + s, e - s);
        rel[e - s] = '\0';
        char dir[256];
        memcpy(dir, a->path, dlen);
        dir[dlen] = '\0';
        const char *r = rel;
        if (strncmp(r, "./", 2) == 0) {
            r += 2;
        } else {
            while (strncmp(r, "../", 3) == 0) {
                r += 3;
                dir[strlen(dir) - 1] = '\0';
                char *sl = strrchr(dir, '/');
                CHECK(sl != NULL);
                if (sl)
                    sl[1] = '\0';
            }
        }
        snprintf(path, sizeof path, "%s%s", dir, r);
        if (tfb_asset_find(path) == NULL) {
            fprintf(stderr, "%s imports %s (%s): not embedded\n", a->path,
                    rel, path);
            failures++;
        }
    }
}

int main(void)
{
    const tfb_asset *root = tfb_asset_find("/");
    const tfb_asset *index = tfb_asset_find("/index.html");
    CHECK(root != NULL);
    CHECK(root == index);
    CHECK(index && strcmp(index->content_type, "text/html; charset=utf-8") == 0);
    CHECK(has_bytes(index, "<!doctype html>"));

    const tfb_asset *js = tfb_asset_find("/js/core/app.js");
    CHECK(js && strncmp(js->content_type, "text/javascript", 15) == 0);
    const tfb_asset *css = tfb_asset_find("/style.css");
    CHECK(css && strncmp(css->content_type, "text/css", 8) == 0);
    const tfb_asset *svg = tfb_asset_find("/favicon.svg");
    CHECK(svg && strcmp(svg->content_type, "image/svg+xml") == 0);
    const tfb_asset *chart = tfb_asset_find("/vendor/chart.umd.min.js");
    CHECK(chart && chart->len > 100000 && has_bytes(chart, "Chart.js v4"));
    CHECK(tfb_asset_find("/vendor/chart.js-LICENSE.md") != NULL);

    /* Unknown and hostile paths. */
    CHECK(tfb_asset_find(NULL) == NULL);
    CHECK(tfb_asset_find("") == NULL);
    CHECK(tfb_asset_find("/nope.js") == NULL);
    CHECK(tfb_asset_find("/../index.html") == NULL);
    CHECK(tfb_asset_find("/js/../index.html") == NULL);
    CHECK(tfb_asset_find("index.html") == NULL);
    CHECK(tfb_asset_find("/index.html/") == NULL);
    CHECK(tfb_asset_find("//index.html") == NULL);

    /* The table: sorted, non-empty files, each found by its own path. */
    size_t n = tfb_asset_count();
    CHECK(n >= 10);
    CHECK(tfb_asset_at(n) == NULL);
    for (size_t i = 0; i < n; i++) {
        const tfb_asset *a = tfb_asset_at(i);
        CHECK(a != NULL && a->len > 0 && a->data != NULL);
        if (a == NULL)
            continue;
        CHECK(tfb_asset_find(a->path) == a);
        if (i > 0)
            CHECK(strcmp(tfb_asset_at(i - 1)->path, a->path) < 0);
        size_t pl = strlen(a->path);
        if (pl > 3 && strcmp(a->path + pl - 3, ".js") == 0)
            check_imports(a);
    }

    /* Content types by extension, shared with --webui-dir serving. */
    CHECK(strcmp(tfb_asset_content_type("a.json"), "application/json") == 0);
    CHECK(strcmp(tfb_asset_content_type("x.js.map"), "application/json") == 0);
    CHECK(strcmp(tfb_asset_content_type("dir.js/noext"),
                 "application/octet-stream") == 0);
    CHECK(strcmp(tfb_asset_content_type("noext"), "application/octet-stream") == 0);
    CHECK(strcmp(tfb_asset_content_type(NULL), "application/octet-stream") == 0);

    if (failures)
        fprintf(stderr, "%d check(s) failed\n", failures);
    else
        printf("%zu embedded assets OK\n", n);
    return failures ? 1 : 0;
}
