/*
 * report_page.c - the shared frame of the html report pages: the head and
 * the embedded stylesheets and scripts (see report_page.h).
 */
#include "report/report_page.h"

#include "tfboard.h"

#ifdef TFB_HAVE_EMBEDDED_ASSETS
#include "webui/assets.h"
#endif

void tfb_report_page_head(FILE *f, const char *title)
{
    fprintf(f,
            "<!doctype html>\n<html lang=\"en\">\n<head>\n"
            "<meta charset=\"utf-8\">\n"
            "<meta http-equiv=\"Content-Security-Policy\" content=\""
            "default-src 'none'; script-src 'unsafe-inline'; "
            "style-src 'unsafe-inline'; img-src data:\">\n"
            "<meta name=\"viewport\" content=\"width=device-width, "
            "initial-scale=1\">\n"
            "<title>tfboard %s</title>\n",
            title);
}

/* Writes script text so that nothing in it can close the <script>
 * element early: "</" becomes "<\/" (the same string to JavaScript in
 * strings and regular expressions, where such text can appear). */
static void put_script(FILE *f, const unsigned char *s, size_t len)
{
    size_t start = 0;
    for (size_t i = 0; i + 1 < len; i++) {
        if (s[i] == '<' && s[i + 1] == '/') {
            fwrite(s + start, 1, i + 1 - start, f);
            fputc('\\', f);
            start = i + 1;
        }
    }
    fwrite(s + start, 1, len - start, f);
}

int tfb_report_page_put(FILE *f, const char *path, int css)
{
#ifdef TFB_HAVE_EMBEDDED_ASSETS
    const tfb_asset *a = tfb_asset_find(path);
    if (a) {
        if (css)
            fwrite(a->data, 1, a->len, f);
        else
            put_script(f, a->data, a->len);
        return 0;
    }
#else
    (void)f;
    (void)path;
    (void)css;
#endif
    return TFB_ENOENT;
}
