/*
 * gpu_load_sqlite.c - reads a trace store in the Nsight Systems export
 * layout: ours (*.trace.sqlite) or `nsys export --type sqlite`. Names are
 * StringIds ids in both; a name column holding text is taken as it is.
 * Columns a file lacks read as NULL, so older or trimmed exports load.
 */
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>

#include "gpu_trace.h"

static int has_table(sqlite3 *db, const char *name)
{
    sqlite3_stmt *st = NULL;
    int found = 0;
    if (sqlite3_prepare_v2(db,
                           "SELECT 1 FROM sqlite_master WHERE type IN "
                           "('table','view') AND name = ?",
                           -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
        found = sqlite3_step(st) == SQLITE_ROW;
    }
    sqlite3_finalize(st);
    return found;
}

static int has_column(sqlite3 *db, const char *table, const char *col)
{
    char sql[256];
    snprintf(sql, sizeof sql, "PRAGMA table_info(\"%s\")", table);
    sqlite3_stmt *st = NULL;
    int found = 0;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK) {
        while (!found && sqlite3_step(st) == SQLITE_ROW) {
            const unsigned char *n = sqlite3_column_text(st, 1);
            found = n && strcmp((const char *)n, col) == 0;
        }
    }
    sqlite3_finalize(st);
    return found;
}

/* "t.col" when the table has it, else "NULL". */
static const char *col(sqlite3 *db, const char *table, const char *c,
                       char *buf, size_t cap)
{
    if (!has_column(db, table, c))
        return "NULL";
    snprintf(buf, cap, "t.\"%s\"", c);
    return buf;
}

static int64_t int_or(sqlite3_stmt *st, int i, int64_t def)
{
    return sqlite3_column_type(st, i) == SQLITE_NULL
               ? def
               : sqlite3_column_int64(st, i);
}

/* A name column: the StringIds text when the id resolves, the column's
 * own text when it is text, else -1. Column i is the raw value, i + 1 the
 * joined StringIds value. */
static int32_t name_of(tfb_gpu_builder *b, sqlite3_stmt *st, int i, int *oom)
{
    int ci = sqlite3_column_type(st, i + 1) != SQLITE_NULL ? i + 1 : i;
    if (sqlite3_column_type(st, ci) != SQLITE_TEXT)
        return -1;
    const char *s = (const char *)sqlite3_column_text(st, ci);
    int len = sqlite3_column_bytes(st, ci);
    int32_t id = tfb_gpu_builder_str(b, s, (size_t)len);
    if (id < 0)
        *oom = 1;
    return id;
}

static int load_kernels(tfb_gpu_builder *b, sqlite3 *db)
{
    const char *T = "CUPTI_ACTIVITY_KIND_KERNEL";
    char c[16][64];
    const char *name_col = has_column(db, T, "demangledName") ? "demangledName"
                           : has_column(db, T, "shortName")   ? "shortName"
                                                              : NULL;
    char namebuf[64] = "NULL";
    if (name_col)
        snprintf(namebuf, sizeof namebuf, "t.\"%s\"", name_col);
    int join = has_table(db, "StringIds");
    char sql[2048];
    /* Column 14: the raw name column, 15: its StringIds text. */
    int len = snprintf(
        sql, sizeof sql,
        "SELECT t.start, t.\"end\", %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, "
        "%s, %s, %s, %s FROM %s t",
        col(db, T, "deviceId", c[0], 64), col(db, T, "streamId", c[1], 64),
        col(db, T, "correlationId", c[2], 64), col(db, T, "gridX", c[3], 64),
        col(db, T, "gridY", c[4], 64), col(db, T, "gridZ", c[5], 64),
        col(db, T, "blockX", c[6], 64), col(db, T, "blockY", c[7], 64),
        col(db, T, "blockZ", c[8], 64),
        col(db, T, "registersPerThread", c[9], 64),
        col(db, T, "staticSharedMemory", c[10], 64),
        col(db, T, "dynamicSharedMemory", c[11], 64), namebuf,
        join && name_col ? "s.value" : "NULL", T);
    if (join && name_col && len > 0 && (size_t)len < sizeof sql)
        snprintf(sql + len, sizeof sql - (size_t)len,
                 " LEFT JOIN StringIds s ON s.id = %s", namebuf);
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return 0;
    int oom = 0, err = 0;
    while (!err && !oom && sqlite3_step(st) == SQLITE_ROW) {
        tfb_gpu_span s;
        memset(&s, 0, sizeof s);
        s.kind = TFB_GPU_KERNEL;
        s.start = sqlite3_column_int64(st, 0);
        s.end = sqlite3_column_int64(st, 1);
        s.device = (int32_t)int_or(st, 2, 0);
        s.stream = (int32_t)int_or(st, 3, 0);
        s.correlation = int_or(st, 4, -1);
        for (int k = 0; k < 3; k++) {
            s.grid[k] = (int32_t)int_or(st, 5 + k, 0);
            s.block[k] = (int32_t)int_or(st, 8 + k, 0);
        }
        s.registers = (int32_t)int_or(st, 11, 0);
        s.shared_mem = (int32_t)(int_or(st, 12, 0) + int_or(st, 13, 0));
        s.name = name_of(b, st, 14, &oom);
        s.step = -1;
        if (!oom)
            err = tfb_gpu_builder_span(b, &s);
    }
    sqlite3_finalize(st);
    return oom ? TFB_ENOMEM : err;
}

static int load_copies(tfb_gpu_builder *b, sqlite3 *db, int memset_)
{
    const char *T = memset_ ? "CUPTI_ACTIVITY_KIND_MEMSET"
                            : "CUPTI_ACTIVITY_KIND_MEMCPY";
    if (!has_table(db, T))
        return 0;
    char c[5][64];
    char sql[1024];
    snprintf(sql, sizeof sql,
             "SELECT t.start, t.\"end\", %s, %s, %s, %s, %s FROM %s t",
             col(db, T, "deviceId", c[0], 64), col(db, T, "streamId", c[1], 64),
             col(db, T, "correlationId", c[2], 64), col(db, T, "bytes", c[3], 64),
             memset_ ? "NULL" : col(db, T, "copyKind", c[4], 64), T);
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return 0;
    int err = 0;
    while (!err && sqlite3_step(st) == SQLITE_ROW) {
        tfb_gpu_span s;
        memset(&s, 0, sizeof s);
        s.kind = memset_ ? TFB_GPU_MEMSET : TFB_GPU_MEMCPY;
        s.start = sqlite3_column_int64(st, 0);
        s.end = sqlite3_column_int64(st, 1);
        s.device = (int32_t)int_or(st, 2, 0);
        s.stream = (int32_t)int_or(st, 3, 0);
        s.correlation = int_or(st, 4, -1);
        s.bytes = int_or(st, 5, 0);
        int64_t ck = int_or(st, 6, 0);
        s.copy_kind = (uint8_t)(ck >= 0 && ck < 256 ? ck : 0);
        s.name = -1;
        s.step = -1;
        err = tfb_gpu_builder_span(b, &s);
    }
    sqlite3_finalize(st);
    return err;
}

static int load_runtime(tfb_gpu_builder *b, sqlite3 *db)
{
    const char *T = "CUPTI_ACTIVITY_KIND_RUNTIME";
    if (!has_table(db, T) || !has_column(db, T, "correlationId"))
        return 0;
    int join = has_table(db, "StringIds") && has_column(db, T, "nameId");
    char sql[512];
    snprintf(sql, sizeof sql,
             "SELECT t.start, t.\"end\", t.correlationId, %s, %s FROM %s t %s",
             has_column(db, T, "nameId") ? "t.nameId" : "NULL",
             join ? "s.value" : "NULL", T,
             join ? "LEFT JOIN StringIds s ON s.id = t.nameId" : "");
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return 0;
    int oom = 0, err = 0;
    while (!err && !oom && sqlite3_step(st) == SQLITE_ROW) {
        tfb_gpu_call c;
        c.start = sqlite3_column_int64(st, 0);
        c.end = sqlite3_column_int64(st, 1);
        c.correlation = int_or(st, 2, -1);
        c.name = name_of(b, st, 3, &oom);
        if (!oom)
            err = tfb_gpu_builder_call(b, &c);
    }
    sqlite3_finalize(st);
    return oom ? TFB_ENOMEM : err;
}

static int load_devices(tfb_gpu_builder *b, sqlite3 *db)
{
    const char *T = "TARGET_INFO_GPU";
    if (!has_table(db, T) || !has_column(db, T, "id"))
        return 0;
    char c[2][64];
    char sql[512];
    snprintf(sql, sizeof sql, "SELECT t.id, %s, %s FROM %s t",
             col(db, T, "name", c[0], 64), col(db, T, "smCount", c[1], 64), T);
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return 0;
    int err = 0;
    while (!err && sqlite3_step(st) == SQLITE_ROW) {
        int32_t name = -1;
        if (sqlite3_column_type(st, 1) == SQLITE_TEXT) {
            name = tfb_gpu_builder_str(b, (const char *)sqlite3_column_text(st, 1),
                                       (size_t)sqlite3_column_bytes(st, 1));
            if (name < 0)
                err = TFB_ENOMEM;
        }
        if (!err)
            err = tfb_gpu_builder_device(b, (int32_t)sqlite3_column_int64(st, 0),
                                         name, (int32_t)int_or(st, 2, -1));
    }
    sqlite3_finalize(st);
    return err;
}

static int load_host_spans(tfb_gpu_builder *b, sqlite3 *db)
{
    if (!has_table(db, "TFB_HOST_SPANS"))
        return 0;
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db,
                           "SELECT start, \"end\", kind, step FROM "
                           "TFB_HOST_SPANS",
                           -1, &st, NULL) != SQLITE_OK)
        return 0;
    int err = 0;
    while (!err && sqlite3_step(st) == SQLITE_ROW) {
        const unsigned char *k = sqlite3_column_text(st, 2);
        if (!k)
            continue;
        tfb_gpu_span s;
        memset(&s, 0, sizeof s);
        if (strcmp((const char *)k, "step") == 0)
            s.kind = TFB_GPU_HOST_STEP;
        else if (strcmp((const char *)k, "input") == 0)
            s.kind = TFB_GPU_HOST_INPUT;
        else
            continue;
        s.start = sqlite3_column_int64(st, 0);
        s.end = sqlite3_column_int64(st, 1);
        s.step = int_or(st, 3, -1);
        s.device = -1;
        s.stream = -1;
        s.name = -1;
        s.correlation = -1;
        err = tfb_gpu_builder_span(b, &s);
    }
    sqlite3_finalize(st);
    return err;
}

int tfb_gpu_load_sqlite(tfb_gpu_builder *b, const char *path)
{
    sqlite3 *db = NULL;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
        sqlite3_close(db);
        return 0;
    }
    /* A store being written (WAL) may be busy for a moment. */
    sqlite3_busy_timeout(db, 1000);
    if (!has_table(db, "CUPTI_ACTIVITY_KIND_KERNEL")) {
        sqlite3_close(db);
        return 0;
    }
    int err = load_devices(b, db);
    if (!err)
        err = load_kernels(b, db);
    if (!err)
        err = load_copies(b, db, 0);
    if (!err)
        err = load_copies(b, db, 1);
    if (!err)
        err = load_runtime(b, db);
    if (!err)
        err = load_host_spans(b, db);
    sqlite3_close(db);
    return err ? err : 1;
}
