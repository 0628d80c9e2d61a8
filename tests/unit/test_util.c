/* test_util.c - see test_util.h. */
#include "test_util.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

char *tu_mkdtemp(void)
{
    const char *t = getenv("TMPDIR");
    char buf[512];
    snprintf(buf, sizeof buf, "%s/tfbtest.XXXXXX", t && *t ? t : "/tmp");
    if (!mkdtemp(buf)) {
        perror("mkdtemp");
        exit(99);
    }
    return strdup(buf);
}

void tu_rmtree(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) {
        unlink(dir);
        return;
    }
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        char p[4096];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        struct stat st;
        if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode))
            tu_rmtree(p);
        else
            unlink(p);
    }
    closedir(d);
    rmdir(dir);
}

uint8_t *tu_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *b = malloc(n > 0 ? (size_t)n : 1);
    if (b && n > 0 && fread(b, 1, (size_t)n, f) != (size_t)n) {
        free(b);
        b = NULL;
    }
    fclose(f);
    if (b)
        *len = (size_t)(n > 0 ? n : 0);
    return b;
}

int tu_write_file(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    int ok = fwrite(data, 1, len, f) == len;
    return (fclose(f) == 0 && ok) ? 0 : -1;
}

char *tu_find_event_file(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return NULL;
    struct dirent *e;
    char *found = NULL;
    while ((e = readdir(d))) {
        if (strstr(e->d_name, "tfevents")) {
            size_t n = strlen(dir) + strlen(e->d_name) + 2;
            found = malloc(n);
            snprintf(found, n, "%s/%s", dir, e->d_name);
            break;
        }
    }
    closedir(d);
    return found;
}

char *tu_testdata(const char *rel)
{
    const char *root = getenv("TFB_TESTDATA");
    if (!root || !*root)
        return NULL;
    char p[4096];
    snprintf(p, sizeof p, "%s/%s", root, rel);
    struct stat st;
    if (stat(p, &st) < 0)
        return NULL;
    return strdup(p);
}

static uint64_t tu_rng = 88172645463325252ull;

double tu_uniform(void)
{
    tu_rng ^= tu_rng >> 12;
    tu_rng ^= tu_rng << 25;
    tu_rng ^= tu_rng >> 27;
    return ((tu_rng * 2685821657736338717ull) >> 11) *
           (1.0 / 9007199254740992.0);
}
