#!/usr/bin/env python3
"""Integration test of the columnar trace cache (--cache_dir,
server/trace/trace_colcache.c), on the real tfboard binary.

The logdir holds our store (test_gpu_gen_trace, when libcupti loads), an
nsys export and Kineto JSON (plain and gzip'ed) as test_gpu.py makes them
(gpu_files_gen.py),
a run holding an nsys export and a Kineto file, a bigger nsys-layout trace (gen_gpu_trace: launch calls, copies, many
lanes of window tree) and a store whose data is only in its -wal file.
Every GPU route of every run is asked of a server without a cache; then:
  - a first load with an empty cache directory (the cache files are
    written, then mapped in place of the built traces) answers the same;
  - a restart over that directory maps the files (seen in
    /proc/PID/maps) and answers the same, byte for byte;
  - a truncated cache file, one with a flipped byte, and one left by
    another source file at the same path (same size and mtime, another
    inode) are rebuilt, never trusted;
  - cache files truncated or rewritten in place while the server has
    them mapped change none of its answers (it maps private copies);
  - a read-only cache directory and a full one (a 64 KiB tmpfs when mount
    works, else RLIMIT_FSIZE on the server) mean no cache, same answers;
  - two servers sharing one empty cache directory at once answer the
    same, and leave valid cache files and no temp file;
  - the WAL store shows its kernels (read from a copy in the cache dir,
    which is removed afterwards), as the same data checkpointed does.

Arguments: the tfboard binary, the logdir generator (unused), gen_gpu_trace.
"""
import hashlib
import os
import re
import resource
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from tfb_server_util import Server, run_tests  # noqa: E402
import gpu_files_gen  # noqa: E402  (test_gpu.py's small traces)

TFBOARD = sys.argv[1]
GEN_BIG = sys.argv[3]
BUILD = os.environ.get("TFB_BUILD_ROOT", "")
GEN_OURS = os.path.join(BUILD, "tests", "integration", "test_gpu_gen_trace")
TMP = tempfile.mkdtemp(prefix="tfb_trace_cache_")
LOG = os.path.join(TMP, "logdir")
RUNS = []
BASELINE = {}


def make_wal_store(src_db, dst_dir):
    """Copies the tables of src_db into dst_dir/report1.sqlite so that
    every row is only in its -wal file: written in WAL mode with automatic
    checkpoints off, and copied (db and -wal) while the writer still holds
    its connection, as a writer that crashed before its checkpoint leaves
    it."""
    os.makedirs(dst_dir)
    stage = os.path.join(TMP, "wal_stage")
    os.makedirs(stage)
    path = os.path.join(stage, "report1.sqlite")
    w = sqlite3.connect(path)
    assert w.execute("PRAGMA journal_mode=WAL").fetchone()[0] == "wal"
    w.execute("PRAGMA wal_autocheckpoint=0")
    w.commit()
    w.execute("ATTACH DATABASE ? AS src", (src_db,))
    for name, sql in w.execute("SELECT name, sql FROM src.sqlite_master "
                               "WHERE type = 'table'").fetchall():
        w.execute(sql)
        w.execute('INSERT INTO main."%s" SELECT * FROM src."%s"'
                  % (name, name))
    w.commit()
    w.execute("DETACH DATABASE src")
    shutil.copyfile(path, os.path.join(dst_dir, "report1.sqlite"))
    shutil.copyfile(path + "-wal", os.path.join(dst_dir,
                                                "report1.sqlite-wal"))
    w.close()
    shutil.rmtree(stage)
    # The copy really holds no table outside its WAL.
    plain = sqlite3.connect("file:%s?mode=ro&immutable=1"
                            % os.path.join(dst_dir, "report1.sqlite"),
                            uri=True)
    assert plain.execute("SELECT count(*) FROM sqlite_master").fetchone()[
        0] == 0
    plain.close()


def setup():
    os.makedirs(LOG)
    if os.path.exists(GEN_OURS):
        os.makedirs(os.path.join(LOG, "ours"))
        r = subprocess.run([GEN_OURS, os.path.join(LOG, "ours")],
                           capture_output=True, text=True, timeout=60)
        if r.returncode == 0:
            RUNS.append("ours")
        elif r.returncode != 77:
            raise AssertionError("generator failed: %s" % r.stderr)
        else:
            print("skip ours (libcupti cannot be loaded)")
    gpu_files_gen.make_nsys(os.path.join(LOG, "nsys"))
    gpu_files_gen.make_kineto(os.path.join(LOG, "kineto"), gz=False)
    gpu_files_gen.make_kineto(os.path.join(LOG, "kinetogz"), gz=True)
    os.makedirs(os.path.join(LOG, "big"))
    subprocess.run([GEN_BIG, os.path.join(LOG, "big", "report1.sqlite"),
                    "20000"], check=True, timeout=300)
    make_wal_store(os.path.join(LOG, "nsys", "report1.sqlite"),
                   os.path.join(LOG, "wal"))
    # A run of two files (one cache file for both; correlation ids of the
    # second file shifted past the first's).
    multi = os.path.join(LOG, "multi")
    os.makedirs(multi)
    shutil.copyfile(os.path.join(LOG, "nsys", "report1.sqlite"),
                    os.path.join(multi, "report1.sqlite"))
    gpu_files_gen.make_kineto(os.path.join(multi, "k"), gz=False)
    for f in os.listdir(os.path.join(multi, "k")):
        os.rename(os.path.join(multi, "k", f), os.path.join(multi, f))
    os.rmdir(os.path.join(multi, "k"))
    # The WAL store has its own test (without a cache directory it reads
    # as no trace, as before).
    RUNS.extend(["nsys", "kineto", "kinetogz", "big", "multi"])


def routes(run):
    """Every GPU route of a run, with a few parameter sets."""
    q = [("summary", {}), ("kernels", {}), ("kernels", {"limit": 1}),
         ("utilization", {"buckets": 7}),
         ("utilization", {"device": 0, "buckets": 1000}),
         ("timeline", {}), ("timeline", {"max": 5}),
         ("trace.json", {}), ("trace.json", {"max_events": 3}),
         ("memory", {}),
         # the host lanes, read from the sources, linked by correlation to
         # the trace built or mapped
         ("host", {}), ("host", {"max": 2})]
    return [("/data/plugin/gpu/" + r, dict(p, run=run)) for r, p in q]


def answers(srv, runs=None):
    """{(route, params): (status, body)} of every route of the runs; a
    202 ("loading") is asked again until the trace is there."""
    out = {}
    for run in runs or RUNS:
        for path, params in routes(run):
            end = time.time() + 60
            while True:
                st, _, body = srv.get(path, **params)
                if st != 202 or time.time() > end:
                    break
                time.sleep(0.05)
            out[(path, tuple(sorted(params.items())))] = (st, body)
    return out


def assert_same(got, want=None):
    want = want or BASELINE
    assert got.keys() == want.keys()
    for k in want:
        assert got[k] == want[k], (k, got[k][0], got[k][1][:300],
                                   want[k][1][:300])


def cache_files(d):
    return sorted(f for f in os.listdir(d) if f.endswith(".tfbc"))


# What a server maps is a private copy of each cache file, unlinked at
# once: /proc/PID/maps names it "DIR/.tmp-tfbc-<cache file>-XXXXXX
# (deleted)".
MAPPED_COPY = re.compile(r"^(.*/)\.tmp-tfbc-(.+\.tfbc)-\w{6} \(deleted\)$")


def mapped_cache_files(pid):
    """The cache files whose private copies the server maps."""
    out = set()
    with open("/proc/%d/maps" % pid) as f:
        for line in f:
            parts = line.rstrip("\n").split(None, 5)
            m = MAPPED_COPY.match(parts[5]) if len(parts) == 6 else None
            if m:
                out.add(m.group(1) + m.group(2))
    return out


def fresh_dir(name):
    d = os.path.join(TMP, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    return d


def serve(cache_dir, *extra, runs=None, preexec=None, expect=0):
    """Answers of a fresh server, and the cache files it has mapped (once
    at least `expect` are, and every file in cache_dir is)."""
    srv = Server(TFBOARD, LOG, "--cache_dir", cache_dir,
                 "--reload_interval", "0", *extra)
    if preexec:
        orig = subprocess.Popen

        def popen(*a, **k):
            return orig(*a, preexec_fn=preexec, **k)
        subprocess.Popen = popen
    try:
        with srv:
            srv.wait_loaded()
            got = answers(srv, runs)
            # A first load writes its cache file after answering, then
            # maps it: wait until every file there is mapped (or 20 s).
            end = time.time() + 20
            while True:
                maps = mapped_cache_files(srv.proc.pid)
                names = {os.path.basename(m) for m in maps}
                if not cache_dir or time.time() > end or (
                        len(names) >= expect and
                        set(cache_files(cache_dir)) <= names):
                    break
                time.sleep(0.05)
    finally:
        if preexec:
            subprocess.Popen = orig
    return got, maps


def test_baseline_without_cache():
    got, maps = serve("")
    assert not maps
    BASELINE.update(got)
    # The data is there: kernels in every run (the WAL one too).
    for run in RUNS:
        st, body = BASELINE[("/data/plugin/gpu/summary",
                             (("run", run),))]
        assert st == 200 and b'"kernels":' in body, (run, st, body[:200])


def test_wal_store_read_in_full():
    # Without a cache directory the WAL store is opened immutable (as
    # before): its tables are in the WAL, so it is no trace then.
    plain, _ = serve("", runs=["nsys", "wal"])
    nsys = plain[("/data/plugin/gpu/summary", (("run", "nsys"),))]
    wal = plain[("/data/plugin/gpu/summary", (("run", "wal"),))]
    assert nsys[0] == 200 and b'"kernels":4' in nsys[1].replace(b" ", b"")
    assert wal != nsys, wal
    d = fresh_dir("cache_wal")
    got, _ = serve(d, runs=["nsys", "wal"], expect=2)
    for (path, params), v in got.items():
        if ("run", "wal") in params:
            other = tuple(("run", "nsys") if p == ("run", "wal") else p
                          for p in params)
            assert v == got[(path, other)], (path, params, v[1][:200])
    assert got[("/data/plugin/gpu/summary", (("run", "wal"),))] == nsys
    # The copy is gone; the source store was not touched (no -shm made).
    assert not [f for f in os.listdir(d) if f.startswith("wal-")], \
        os.listdir(d)
    assert not os.path.exists(os.path.join(LOG, "wal", "report1.sqlite-shm"))


def test_first_load_then_reopen():
    d = fresh_dir("cache_main")
    first, maps1 = serve(d, expect=len(RUNS))
    assert_same(first)
    files = cache_files(d)
    assert len(files) == len(RUNS), files
    # After the first load the built traces were swapped for the mapped
    # files.
    assert {os.path.basename(m) for m in maps1} == set(files), maps1
    inodes = {f: os.stat(os.path.join(d, f)).st_ino for f in files}
    again, maps2 = serve(d)
    assert_same(again)
    assert {os.path.basename(m) for m in maps2} == set(files)
    # Reused, not rewritten.
    assert {f: os.stat(os.path.join(d, f)).st_ino for f in files} == inodes


def cache_file_of(d, run):
    """The cache file of a run: the one whose signature names its file."""
    for f in cache_files(d):
        with open(os.path.join(d, f), "rb") as fh:
            if ("/%s/" % run).encode() in fh.read(1 << 16):
                return os.path.join(d, f)
    raise AssertionError("no cache file of " + run)


def test_truncated_and_flipped_cache_rebuilt():
    d = fresh_dir("cache_damage")
    serve(d, runs=["big", "nsys"], expect=2)
    big = cache_file_of(d, "big")
    nsys = cache_file_of(d, "nsys")
    size = os.path.getsize(big)
    with open(big, "r+b") as f:
        f.truncate(size // 2)
    with open(nsys, "r+b") as f:
        data = bytearray(f.read())
        data[len(data) // 2] ^= 0x40
        f.seek(0)
        f.write(data)
    got, maps = serve(d, runs=["big", "nsys"], expect=2)
    assert_same(got, {k: v for k, v in BASELINE.items()
                      if dict(k[1])["run"] in ("big", "nsys")})
    # Rewritten whole, and the new files are the ones mapped.
    assert os.path.getsize(big) == size
    assert {big, nsys} <= maps


def test_mapped_cache_file_changed():
    """Issue 32 item 7: a cache cleaner, `truncate` or `rsync --inplace` on
    the cache files of traces the server has mapped: its next requests
    answer the same (it maps private copies); mapped in place, the next
    GPU request died of SIGBUS."""
    runs = ["big", "nsys"]
    want = {k: v for k, v in BASELINE.items() if dict(k[1])["run"] in runs}
    d = fresh_dir("cache_changed")
    serve(d, runs=runs, expect=2)  # writes the two cache files
    big = cache_file_of(d, "big")
    nsys = cache_file_of(d, "nsys")
    srv = Server(TFBOARD, LOG, "--cache_dir", d, "--reload_interval", "0")
    with srv:
        srv.wait_loaded()
        assert_same(answers(srv, runs), want)
        assert {big, nsys} <= mapped_cache_files(srv.proc.pid)
        # A cleaner truncates one; rsync --inplace rewrites the other in
        # place, shorter and with other bytes.
        os.truncate(big, 0)
        with open(nsys, "r+b") as f:
            data = f.read()
            f.seek(0)
            f.write(bytes(b ^ 0x5a for b in data[:len(data) // 2]))
            f.truncate(len(data) // 2)
        got = answers(srv, runs)
        assert srv.proc.poll() is None, srv.proc.returncode
        assert_same(got, want)


def test_other_source_same_name():
    """A cache file written for one source must not answer for another
    file at the same path, even with the same size and mtime."""
    d = fresh_dir("cache_other")
    run = os.path.join(LOG, "swap")
    os.makedirs(run)
    path = os.path.join(run, "report1.sqlite")
    shutil.copyfile(os.path.join(LOG, "nsys", "report1.sqlite"), path)
    try:
        first, _ = serve(d, runs=["swap"], expect=1)
        assert len(cache_files(d)) == 1
        st0 = os.stat(path)
        # Another file at the same path: one kernel 1 ns... 9 ns shorter,
        # same size; renamed over the old one (another inode) and given
        # the old mtime.
        tmp = path + ".new"
        shutil.copyfile(path, tmp)
        db = sqlite3.connect(tmp)
        db.execute("UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET end = end - 9 "
                   "WHERE correlationId = 14")
        db.commit()
        db.close()
        os.rename(tmp, path)
        os.utime(path, ns=(st0.st_atime_ns, st0.st_mtime_ns))
        st1 = os.stat(path)
        assert (st1.st_size, st1.st_mtime_ns) == (st0.st_size,
                                                  st0.st_mtime_ns)
        assert st1.st_ino != st0.st_ino
        want, _ = serve("", runs=["swap"])
        got, maps = serve(d, runs=["swap"], expect=1)
        assert_same(got, want)
        assert len(maps) == 1 and len(cache_files(d)) == 1
        assert got != first
    finally:
        shutil.rmtree(run)


def try_mount_tmpfs(d, opts):
    if os.geteuid() != 0:
        return False
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", opts, "tmpfs", d],
                       capture_output=True)
    return r.returncode == 0


def test_read_only_cache_dir():
    d = fresh_dir("cache_ro")
    if try_mount_tmpfs(d, "ro,size=1m"):
        try:
            got, maps = serve(d)
        finally:
            subprocess.run(["umount", d])
    elif os.geteuid() != 0:
        os.chmod(d, 0o555)
        try:
            got, maps = serve(d)
        finally:
            os.chmod(d, 0o755)
    else:
        print("skip read-only cache dir (root without mount)")
        return
    assert_same(got)
    assert not maps


def limit_fsize():
    resource.setrlimit(resource.RLIMIT_FSIZE, (64 << 10, 64 << 10))


def test_full_cache_dir():
    d = fresh_dir("cache_full")
    if try_mount_tmpfs(d, "size=64k"):
        try:
            got, maps = serve(d)
            left = os.listdir(d)
            assert_same(got)
            # Small traces fit, big ones do not: whatever fit is valid, and
            # a restart still answers the same.
            assert not [f for f in left if f.startswith(".tmp-")], left
            assert len([f for f in left if f.endswith(".tfbc")]) < len(RUNS)
            again, _ = serve(d)
            assert_same(again)
        finally:
            subprocess.run(["umount", d])
    # A file-size limit on the server (EFBIG; SIGXFSZ must not kill it).
    d = fresh_dir("cache_fsize")
    got, maps = serve(d, preexec=limit_fsize)
    assert_same(got)
    left = os.listdir(d)
    assert not [f for f in left if f.startswith(".tmp-")], left
    assert len([f for f in left if f.endswith(".tfbc")]) < len(RUNS)
    again, _ = serve(d)
    assert_same(again)


def test_two_servers_share_a_cache_dir():
    d = fresh_dir("cache_shared")
    results = [None, None]
    errors = []

    def one(i):
        try:
            results[i] = serve(d, expect=len(RUNS))[0]
        except Exception as e:  # reported below
            errors.append(e)
    th = [threading.Thread(target=one, args=(i,)) for i in range(2)]
    for t in th:
        t.start()
    for t in th:
        t.join()
    assert not errors, errors
    assert_same(results[0])
    assert_same(results[1])
    left = os.listdir(d)
    assert not [f for f in left if not f.endswith(".tfbc")], left
    assert len(cache_files(d)) == len(RUNS)
    again, maps = serve(d)
    assert_same(again)
    assert len(maps) == len(RUNS)


def test_cache_dir_inside_logdir_refused():
    inside = os.path.join(LOG, "cachehere")
    r = subprocess.run([TFBOARD, "--logdir", LOG, "--port", "0",
                        "--cache_dir", inside], capture_output=True,
                       text=True, timeout=30)
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert "inside the logdir" in r.stderr, r.stderr
    shutil.rmtree(inside, ignore_errors=True)


def main():
    try:
        setup()
        run_tests([test_baseline_without_cache, test_wal_store_read_in_full,
                   test_first_load_then_reopen,
                   test_truncated_and_flipped_cache_rebuilt,
                   test_mapped_cache_file_changed,
                   test_other_source_same_name, test_read_only_cache_dir,
                   test_full_cache_dir, test_two_servers_share_a_cache_dir,
                   test_cache_dir_inside_logdir_refused])
    finally:
        shutil.rmtree(TMP, ignore_errors=True)


if __name__ == "__main__":
    main()
