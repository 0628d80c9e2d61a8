/*
 * gen_gpu_trace.c - writes a big trace in the `nsys export --type sqlite`
 * layout, fast (prepared inserts, one transaction, no journal):
 *
 *   gen_gpu_trace PATH N
 *
 * Kernel i (0 <= i < N) runs on device 0, stream 7/8/13/21 (i % 4), from
 * B + 1000 i for dur(i) = 200 + 50 (i % 7) ns, named
 * "kernel_KK<float>(float*, int)" with KK = i % 50 (a StringIds id), grid
 * (i % 50 + 1, 1, 1), block (128, 1, 1), 32 registers; a runtime call with
 * correlation id i starts 300 ns (even i) or 900 ns (odd i) before it and
 * lasts 50 ns; every 100th kernel is followed by a 4096-byte HtoD copy on
 * stream 99 at +600 ns, 10 ns long. tests/integration/gpu_trace_gen.py
 * computes what the GPU routes must answer for it.
 */
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define B INT64_C(1700000000000000000)
#define K 50

static const int streams[4] = {7, 8, 13, 21};

static int64_t dur(int64_t i)
{
    return 200 + 50 * (i % 7);
}

static void check(int rc, sqlite3 *db, const char *what)
{
    if (rc != SQLITE_OK && rc != SQLITE_DONE && rc != SQLITE_ROW) {
        fprintf(stderr, "gen_gpu_trace: %s: %s\n", what, sqlite3_errmsg(db));
        exit(1);
    }
}

static sqlite3_stmt *prep(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *st = NULL;
    check(sqlite3_prepare_v2(db, sql, -1, &st, NULL), db, sql);
    return st;
}

static void run(sqlite3_stmt *st, sqlite3 *db)
{
    check(sqlite3_step(st), db, "insert");
    sqlite3_reset(st);
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: gen_gpu_trace PATH N\n");
        return 2;
    }
    int64_t n = strtoll(argv[2], NULL, 10);
    remove(argv[1]);
    sqlite3 *db = NULL;
    check(sqlite3_open(argv[1], &db), db, argv[1]);
    check(sqlite3_exec(db,
        "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;"
        "CREATE TABLE StringIds(id INTEGER NOT NULL PRIMARY KEY,"
        " value TEXT NOT NULL);"
        "CREATE TABLE TARGET_INFO_GPU(id INTEGER NOT NULL, name TEXT,"
        " smCount INTEGER);"
        "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL(start INTEGER NOT NULL,"
        " end INTEGER NOT NULL, deviceId INTEGER NOT NULL,"
        " streamId INTEGER NOT NULL, correlationId INTEGER,"
        " demangledName INTEGER NOT NULL, registersPerThread INTEGER,"
        " gridX INTEGER, gridY INTEGER, gridZ INTEGER, blockX INTEGER,"
        " blockY INTEGER, blockZ INTEGER, staticSharedMemory INTEGER,"
        " dynamicSharedMemory INTEGER);"
        "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY(start INTEGER NOT NULL,"
        " end INTEGER NOT NULL, deviceId INTEGER NOT NULL,"
        " streamId INTEGER NOT NULL, correlationId INTEGER,"
        " bytes INTEGER NOT NULL, copyKind INTEGER NOT NULL);"
        "CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME(start INTEGER NOT NULL,"
        " end INTEGER NOT NULL, correlationId INTEGER,"
        " nameId INTEGER NOT NULL);"
        "INSERT INTO TARGET_INFO_GPU VALUES(0, 'Big GPU', 132);"
        "BEGIN;",
        NULL, NULL, NULL), db, "schema");
    sqlite3_stmt *s = prep(db, "INSERT INTO StringIds VALUES(?,?)");
    for (int k = 0; k <= K; k++) {
        char name[64];
        if (k < K)
            snprintf(name, sizeof name, "kernel_%02d<float>(float*, int)", k);
        else
            snprintf(name, sizeof name, "cudaLaunchKernel");
        sqlite3_bind_int(s, 1, k);
        sqlite3_bind_text(s, 2, name, -1, SQLITE_TRANSIENT);
        run(s, db);
    }
    sqlite3_finalize(s);
    sqlite3_stmt *kst = prep(db,
        "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES"
        "(?,?,0,?,?,?,32,?,1,1,128,1,1,0,0)");
    sqlite3_stmt *rst = prep(db,
        "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES(?,?,?,?)");
    sqlite3_stmt *mst = prep(db,
        "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES"
        "(?,?,0,99,NULL,4096,1)");
    for (int64_t i = 0; i < n; i++) {
        int64_t t = B + 1000 * i;
        sqlite3_bind_int64(kst, 1, t);
        sqlite3_bind_int64(kst, 2, t + dur(i));
        sqlite3_bind_int(kst, 3, streams[i % 4]);
        sqlite3_bind_int64(kst, 4, i);
        sqlite3_bind_int(kst, 5, (int)(i % K));
        sqlite3_bind_int(kst, 6, (int)(i % K) + 1);
        run(kst, db);
        int64_t c = t - (i % 2 == 0 ? 300 : 900);
        sqlite3_bind_int64(rst, 1, c);
        sqlite3_bind_int64(rst, 2, c + 50);
        sqlite3_bind_int64(rst, 3, i);
        sqlite3_bind_int(rst, 4, K);
        run(rst, db);
        if (i % 100 == 0) {
            sqlite3_bind_int64(mst, 1, t + 600);
            sqlite3_bind_int64(mst, 2, t + 610);
            run(mst, db);
        }
    }
    sqlite3_finalize(kst);
    sqlite3_finalize(rst);
    sqlite3_finalize(mst);
    check(sqlite3_exec(db, "COMMIT", NULL, NULL, NULL), db, "commit");
    check(sqlite3_close(db), db, "close");
    return 0;
}
