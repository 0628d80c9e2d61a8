"""The loader's helper threads (issue 28; server/store/loader_split.c) change
nothing a user sees: the same logdirs loaded with --load_threads 1 (one
thread, every append on it) and --load_threads 4 (fewer runs than threads:
each worker has a helper that appends its scalar points) answer every
scalars and histograms route byte for byte alike, in three shapes:

  one run, 5 tags x 30,000 steps in one file with a bad payload CRC and a
  bad length CRC in the middle, a second file with histograms and a
  scalar, then 10,000 records appended between passes (cut inside a
  record first, completed at the next pass);
  3 runs x 5 tags x 4,000 steps (3 workers, one helper);
  8 runs x 2 tags x 500 steps (more runs than threads: helpers only once
  threads run out of runs);
  one run of 5 tags x 30,000 steps among 5 small ones on 2 threads (the
  small runs' thread becomes the large run's helper).

A helper that dropped, doubled or reordered a point would make the CSV of
some tag differ (the scalars route answers in file order).

usage: test_loader_split.py TFBOARD GEN_LOGDIR"""
import glob
import os
import shutil
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tfb_server_util import Server, run_tests, wait_for  # noqa: E402
import tfevents_py as tp  # noqa: E402

TFBOARD, GEN = sys.argv[1], sys.argv[2]
TMP = tempfile.mkdtemp(prefix="tfb_split_")


def record_offsets(data):
    """Offsets of the records of a well-formed file."""
    out, off = [], 0
    while off + 12 <= len(data):
        n = struct.unpack_from("<Q", data, off)[0]
        out.append(off)
        off += 12 + n + 4
    return out


def snapshot(s):
    """Every run's scalars (CSV) and histograms (JSON), as bytes."""
    out = {"runs": s.get("/data/runs")[2]}
    for plugin, route, extra in (("scalars", "scalars", {"format": "csv"}),
                                 ("histograms", "histograms", {})):
        tags = s.json("/data/plugin/%s/tags" % plugin)
        for run in sorted(tags):
            for tag in sorted(tags[run]):
                st, _, body = s.get("/data/plugin/%s/%s" % (plugin, route),
                                    run=run, tag=tag, **extra)
                assert st == 200, (run, tag, st)
                out[(plugin, run, tag)] = body
    return out


def pair(logdir, *extra):
    return (Server(TFBOARD, logdir, "--load_threads", "1", *extra),
            Server(TFBOARD, logdir, "--load_threads", "4", *extra))


def same(a, b):
    sa, sb = snapshot(a), snapshot(b)
    assert sa.keys() == sb.keys(), sorted(set(sa) ^ set(sb), key=str)[:5]
    for k in sa:
        assert sa[k] == sb[k], (k, sa[k][:200], sb[k][:200])
    return sa


def points(s):
    return s.json("/data/plugin/core/progress")["points"]


def test_one_huge_run_corrupt_and_appended():
    logdir = os.path.join(TMP, "one")
    subprocess.run([GEN, "scalars", logdir, "1", "5", "30000"], check=True)
    path = glob.glob(os.path.join(logdir, "run000", "*tfevents*"))[0]
    with open(path, "rb") as f:
        data = bytearray(f.read())
    offs = record_offsets(data)
    bad_payload, bad_len = offs[len(offs) * 2 // 5], offs[len(offs) * 3 // 5]
    data[bad_payload + 14] ^= 0x55  # payload CRC fails: that record skipped
    data[bad_len + 9] ^= 0x55  # length CRC fails: resync to the next one
    with open(path, "wb") as f:
        f.write(data)
    # a second file: histograms and a scalar, read after the first
    second = b"".join(tp.record(tp.event(1.7e9 + i, i, summary=(
        tp.histo_value("w", 0.0, 1.0 + i, 4.0, 2.0, [0.5, 1.0 + i],
                       [1.0, 3.0]) + tp.scalar_value("extra", i / 7))))
        for i in range(300))
    with open(os.path.join(logdir, "run000",
                           "events.out.tfevents.9.host"), "wb") as f:
        f.write(second)
    one, four = pair(logdir, "--reload_interval", "0.3")
    with one as a, four as b:
        a.wait_loaded()
        b.wait_loaded()
        snap = same(a, b)
        csv = snap[("scalars", "run000", "tag00/t")].decode().splitlines()
        # 30,000 steps, less what the two corrupt records held
        assert 29990 < len(csv) - 1 <= 30000, len(csv)
        info = a.json("/data/runs_info")[0]["files"][0]
        assert info["corrupt_records"] >= 1 and info["resyncs"] >= 1, info
        # 10,000 more records, cut inside one, then completed
        more = b"".join(tp.record(tp.event(1.8e9 + s, s, summary=(
            tp.scalars_summary([("tag%02d/t" % t, s * 0.25 + t)]))))
            for s in range(30000, 32000) for t in range(5))
        cut = len(more) * 7 // 10 + 5
        for part in (more[:cut], more[cut:]):
            with open(path, "ab") as f:
                f.write(part)
            r0 = [x.json("/data/plugin/core/progress")["reloads"]
                  for x in (a, b)]
            for x, r in zip((a, b), r0):
                wait_for(lambda: x.json("/data/plugin/core/progress")
                         ["reloads"] >= r + 2, "two passes after the append")
            same(a, b)
        assert points(a) == points(b)
        last = a.json("/data/plugin/scalars/scalars", run="run000",
                      tag="tag04/t")[-1]
        assert last[1] == 31999 and last[2] == 31999 * 0.25 + 4, last


def test_few_runs_and_many_runs():
    for name, runs, tags, steps in (("few", 3, 5, 4000),
                                    ("many", 8, 2, 500)):
        logdir = os.path.join(TMP, name)
        subprocess.run([GEN, "scalars", logdir, str(runs), str(tags),
                        str(steps)], check=True)
        one, four = pair(logdir, "--reload_interval", "0")
        with one as a, four as b:
            a.wait_loaded()
            b.wait_loaded()
            snap = same(a, b)
            assert points(a) == points(b) >= runs * tags * steps
            assert len(snap) == 1 + runs * tags, len(snap)


def test_one_run_dominates():
    """One large run among small ones, on 2 threads: the thread of the
    small runs runs out of them and becomes the large run's helper (at its
    file's start or at its next batch of 65,536 events)."""
    logdir = os.path.join(TMP, "dominant")
    os.makedirs(logdir)
    for name, runs, tags, steps in (("big", 1, 5, 30000),
                                    ("small", 5, 2, 300)):
        src = os.path.join(TMP, "gen_" + name)
        subprocess.run([GEN, "scalars", src, str(runs), str(tags),
                        str(steps)], check=True)
        for r in sorted(os.listdir(src)):
            os.rename(os.path.join(src, r),
                      os.path.join(logdir, "%s_%s" % (name[0], r)))
    one = Server(TFBOARD, logdir, "--load_threads", "1",
                 "--reload_interval", "0")
    two = Server(TFBOARD, logdir, "--load_threads", "2",
                 "--reload_interval", "0")
    with one as a, two as b:
        a.wait_loaded()
        b.wait_loaded()
        snap = same(a, b)
        assert points(a) == points(b) >= 5 * 30000 + 5 * 2 * 300
        assert len(snap) == 1 + 5 + 5 * 2, len(snap)


try:
    run_tests([test_one_huge_run_corrupt_and_appended,
               test_few_runs_and_many_runs, test_one_run_dominates])
finally:
    shutil.rmtree(TMP, ignore_errors=True)
