"""Every core route of the real tfboard binary and its error paths, on a
logdir written by libtfboard's writer (gen_logdir basic).

usage: test_server_api.py TFBOARD GEN_LOGDIR"""
import csv
import io
import math
import os
import shutil
import socket
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tfb_server_util import Server, check_clean_exit, run_tests  # noqa: E402

TFBOARD, GEN = sys.argv[1], sys.argv[2]
TMP = tempfile.mkdtemp(prefix="tfb_api_")
LOGDIR = os.path.join(TMP, "logs")
subprocess.run([GEN, "basic", LOGDIR], check=True)
SRV = Server(TFBOARD, LOGDIR, "--reload_interval", "0").__enter__()
try:
    SRV.wait_loaded()
except BaseException:
    SRV.stop()
    raise


def f32(x):
    return struct.unpack("f", struct.pack("f", x))[0]


def num(v):
    """JSON value -> float, with TensorBoard's non-finite strings."""
    if isinstance(v, str):
        return {"NaN": math.nan, "Infinity": math.inf,
                "-Infinity": -math.inf}[v]
    return float(v)


def test_runs_and_tags():
    assert SRV.json("/data/runs") == ["run_a", "sub/run_b", "traces_only"]
    tags = SRV.json("/data/plugin/scalars/tags")
    assert set(tags) == {"run_a", "sub/run_b"}
    assert list(tags["run_a"]) == ["loss", "acc", "weird"]
    assert tags["run_a"]["loss"] == {"displayName": "", "description": ""}
    assert list(SRV.json("/data/plugin/histograms/tags")) == ["run_a"]
    assert SRV.json("/data/plugin/text/tags") == {"run_a": ["notes"]}
    assert SRV.json("/data/plugin/distributions/tags") == \
        SRV.json("/data/plugin/histograms/tags")


def test_scalars_every_point():
    pts = SRV.json("/data/plugin/scalars/scalars", run="run_a", tag="loss")
    assert len(pts) == 100
    for s, (wall, step, value) in enumerate(pts):
        assert step == s
        assert wall == 1700000000.0 + s * 0.5
        assert f32(value) == f32(1.0 / (s + 1)), (s, value)
    b = SRV.json("/data/plugin/scalars/scalars", run="sub/run_b", tag="loss")
    assert [p[1] for p in b] == list(range(50))


def test_scalars_nonfinite_strings():
    pts = SRV.json("/data/plugin/scalars/scalars", run="run_a", tag="weird")
    vals = [p[2] for p in pts]
    assert vals[5] == "NaN" and vals[7] == "Infinity"
    assert vals[8] == "-Infinity" and vals[9] == 9


def test_scalars_csv():
    st, ct, body = SRV.get("/data/plugin/scalars/scalars", run="run_a",
                           tag="weird", format="csv")
    assert st == 200 and ct.startswith("text/csv"), (st, ct)
    rows = list(csv.reader(io.StringIO(body.decode())))
    assert rows[0] == ["Wall time", "Step", "Value"]
    assert len(rows) == 11
    assert rows[6] == ["1700000005", "5", "NaN"]
    assert rows[8][2] == "Infinity" and rows[9][2] == "-Infinity"


def test_downsampling_keeps_extremes_and_nonfinite():
    full = SRV.json("/data/plugin/scalars/scalars", run="run_a", tag="loss")
    ds = SRV.json("/data/plugin/scalars/scalars", run="run_a", tag="loss",
                  samples=10)
    assert len(ds) <= 10 and len(ds) >= 4
    assert ds[0] == full[0] and ds[-1] == full[-1]
    steps = [p[1] for p in ds]
    assert steps == sorted(steps)
    assert all(p in full for p in ds)
    # a non-finite point survives any downsampling
    w = SRV.json("/data/plugin/scalars/scalars", run="run_a", tag="weird",
                 samples=4)
    vals = [p[2] for p in w]
    assert "NaN" in vals and "Infinity" in vals and "-Infinity" in vals
    assert w[0][1] == 0 and w[-1][1] == 9
    # the spike (max) of a bucket is kept: acc is increasing, so every
    # bucket keeps its first and last point
    acc = SRV.json("/data/plugin/scalars/scalars", run="run_a", tag="acc",
                   samples=20)
    assert f32(max(num(p[2]) for p in acc)) == f32(0.99)
    assert min(num(p[2]) for p in acc) == 0


def test_step_range():
    r = SRV.json("/data/plugin/scalars/scalars", run="run_a", tag="loss",
                 min_step=10, max_step=19)
    assert [p[1] for p in r] == list(range(10, 20))


def test_smoothing_full_series_debiased_ema():
    w = 0.6
    raw = SRV.json("/data/plugin/scalars/scalars", run="run_a", tag="weird")
    sm = SRV.json("/data/plugin/scalars/scalars", run="run_a", tag="weird",
                  smoothing=w)
    assert len(sm) == len(raw)
    last, n = 0.0, 0
    for r, s in zip(raw, sm):
        x = num(r[2])
        assert s[0] == r[0] and s[1] == r[1]
        if not math.isfinite(x):
            assert s[2] == r[2]  # passes through as the same string
            continue
        last = last * w + (1 - w) * x
        n += 1
        assert abs(num(s[2]) - last / (1 - w ** n)) < 1e-9, (s, x)
    # smoothing happens before downsampling: the sampled points carry the
    # full-series smoothed values
    full = SRV.json("/data/plugin/scalars/scalars", run="run_a", tag="loss",
                    smoothing=0.9)
    part = SRV.json("/data/plugin/scalars/scalars", run="run_a", tag="loss",
                    smoothing=0.9, samples=10)
    byst = {p[1]: p for p in full}
    assert all(byst[p[1]] == p for p in part)


def test_histograms_format():
    h = SRV.json("/data/plugin/histograms/histograms", run="run_a",
                 tag="weights")
    assert [p[1] for p in h] == [0, 10, 20]
    for wall, step, buckets in h:
        assert sum(b[2] for b in buckets) == 1000
        # TensorBoard 2.21: empty buckets at both ends dropped, then
        # lefts = [min] + inner limits, rights = inner limits + [max]
        assert buckets[0][0] == f32(-5.0 + step)
        assert abs(buckets[-1][1] - (4.99 + step)) < 1e-4
        assert buckets[0][2] > 0 and buckets[-1][2] > 0
        for a, b in zip(buckets, buckets[1:]):
            assert a[1] == b[0]
        for b in buckets:
            assert b[0] <= b[1], "backwards bucket %r" % (b,)
    one = SRV.json("/data/plugin/histograms/histograms", run="run_a",
                   tag="weights", samples=2)
    assert [p[1] for p in one] == [0, 20]


def test_distributions():
    d = SRV.json("/data/plugin/distributions/distributions", run="run_a",
                 tag="weights")
    assert len(d) == 3
    bps = [b[0] for b in d[0][2]]
    assert bps == [0, 668, 1587, 3085, 5000, 6915, 8413, 9332, 10000]
    for wall, step, comp in d:
        vals = [v for _, v in comp]
        assert vals == sorted(vals)
        assert abs(vals[4] - step) < 0.1  # median of a uniform -5..5 + step
        assert vals[0] == f32(-5.0 + step)


def test_text_is_plain_escaped_json():
    st, ct, body = SRV.get("/data/plugin/text/text", run="run_a", tag="notes")
    assert st == 200
    assert b"<" not in body and b">" not in body  # never raw markup
    t = SRV.json("/data/plugin/text/text", run="run_a", tag="notes")
    assert t[0]["step"] == 0
    assert t[0]["text"] == "<img src=x onerror=alert(1)>"
    assert t[1]["text"] == 'line one\nline "two" & </script>'
    assert set(t[0]) == {"wall_time", "step", "text", "html"}
    # The Markdown rendering turns raw HTML into text (issue 22).
    assert t[0]["html"] == "<p>&lt;img src=x onerror=alert(1)&gt;</p>\n"


def test_progress_and_runs_info():
    p = SRV.json("/data/plugin/core/progress")
    assert p["done"] is True
    assert p["files_total"] == 2 and p["files_done"] == 2
    assert p["bytes_done"] == p["bytes_total"] > 0
    # + one end-of-run record per file (a plugin record of the run)
    assert p["points"] == 100 + 100 + 10 + 3 + 2 + 1 + 50 + 2
    info = {r["name"]: r for r in SRV.json("/data/runs_info")}
    a = info["run_a"]
    assert a["max_step"] == 99 and a["first_wall"] == 1700000000
    assert a["tags"] == {"scalars": 3, "histograms": 1, "text": 1,
                         "numerics": 1}
    assert a["files"][0]["corrupt_records"] == 0
    assert info["traces_only"]["trace_files"][0].endswith(
        "traces_only/host.1.trace.sqlite")
    assert info["traces_only"]["files"] == []


def test_scalar_summary():
    s = SRV.json("/data/plugin/scalars/summary", tag="loss")
    assert set(s) == {"run_a", "sub/run_b"}
    assert s["run_a"]["count"] == 100 and s["run_a"]["last_step"] == 99
    assert s["run_a"]["max"] == 1 and f32(s["run_a"]["min"]) == f32(0.01)
    w = SRV.json("/data/plugin/scalars/summary", tag="weird")["run_a"]
    assert (w["nan"], w["pos_inf"], w["neg_inf"]) == (1, 1, 1)


def expect_error(status, path, **params):
    st, ct, body = SRV.get(path, **params)
    assert st == status, (path, params, st, body)
    assert ct.startswith("application/json"), ct
    import json
    assert isinstance(json.loads(body)["error"], str)


def test_errors_400_404():
    sc = "/data/plugin/scalars/scalars"
    expect_error(400, sc)
    expect_error(400, sc, run="run_a")
    expect_error(400, sc, tag="loss")
    expect_error(404, sc, run="nope", tag="loss")
    expect_error(404, sc, run="run_a", tag="nope")
    expect_error(404, sc, run="run_a", tag="weights")  # a histogram tag
    expect_error(400, sc, run="run_a", tag="loss", samples="abc")
    expect_error(400, sc, run="run_a", tag="loss", samples="-1")
    expect_error(400, sc, run="run_a", tag="loss", samples="")
    expect_error(400, sc, run="run_a", tag="loss", smoothing="1.5")
    expect_error(400, sc, run="run_a", tag="loss", smoothing="nan")
    expect_error(400, sc, run="run_a", tag="loss", format="xml")
    expect_error(400, sc, run="run_a", tag="loss", min_step="1e3")
    expect_error(400, "/data/plugin/histograms/histograms", run="run_a")
    expect_error(404, "/data/plugin/histograms/histograms", run="run_a",
                 tag="loss")
    expect_error(404, "/data/plugin/text/text", run="x", tag="notes")
    expect_error(400, "/data/plugin/scalars/summary")
    expect_error(404, sc, run="run_a", tag="x" * 10000)
    expect_error(404, sc, run="../../etc", tag="passwd")
    expect_error(404, sc, run="run_a\u00e9<b>", tag="loss")
    st, ct, body = SRV.raw("GET", sc + "?run=%ff%00%3c&tag=%fe")
    assert st == 404 and b"<" not in body, (st, body)
    import json
    json.loads(body)  # invalid UTF-8 in a parameter still gives valid JSON
    expect_error(404, "/data/nope")
    expect_error(404, "/data/plugin/scalars/scalars/extra")


def test_static_and_traversal():
    st, ct, body = SRV.get("/")
    assert st == 200 and ct.startswith("text/html"), (st, ct)
    st2, _, body2 = SRV.get("/index.html")
    assert st2 == 200 and body2 == body
    for p in ["/../../etc/passwd", "/%2e%2e/%2e%2e/etc/passwd",
              "/..%2f..%2fetc%2fpasswd", "/js/../../../etc/passwd",
              "/nope.js", "/etc/passwd", "//etc/passwd", "/%00",
              "/index.html%00.js"]:
        st, ct, body = SRV.raw("GET", p)
        assert st == 404, (p, st)
        assert b"root:" not in body
    for m in ("POST", "PUT", "DELETE"):
        st, _, _ = SRV.raw(m, "/data/runs")
        assert st == 405, (m, st)
    st, ct, body = SRV.raw("HEAD", "/data/runs")
    assert st == 200 and body == b"" and ct.startswith("application/json")


def test_webui_dir_confined():
    root = os.path.join(TMP, "ui")
    os.makedirs(os.path.join(root, "js"))
    with open(os.path.join(root, "index.html"), "w") as f:
        f.write("<!doctype html><title>disk</title>")
    with open(os.path.join(root, "js", "a.js"), "w") as f:
        f.write("export const a = 1;\n")
    with open(os.path.join(TMP, "secret.txt"), "w") as f:
        f.write("SECRET")
    os.symlink(os.path.join(TMP, "secret.txt"), os.path.join(root, "link"))
    with Server(TFBOARD, LOGDIR, "--webui-dir", root,
                "--reload_interval", "0") as s:
        st, ct, body = s.get("/")
        assert st == 200 and b"disk" in body and ct.startswith("text/html")
        st, ct, body = s.get("/js/a.js")
        assert st == 200 and "javascript" in ct, ct
        for p in ["/../secret.txt", "/%2e%2e/secret.txt", "/link",
                  "/js/../../secret.txt", "/js", "/missing.html"]:
            st, _, body = s.raw("GET", p)
            assert st == 404 and b"SECRET" not in body, (p, st)


def test_concurrent_clients():
    import threading
    errors = []

    def worker():
        try:
            for _ in range(30):
                pts = SRV.json("/data/plugin/scalars/scalars", run="run_a",
                               tag="loss", samples=20)
                assert pts[-1][1] == 99
        except Exception as e:  # collected and re-raised below
            errors.append(e)
    ts = [threading.Thread(target=worker) for _ in range(8)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors, errors


try:
    run_tests([test_runs_and_tags, test_scalars_every_point,
               test_scalars_nonfinite_strings, test_scalars_csv,
               test_downsampling_keeps_extremes_and_nonfinite,
               test_step_range, test_smoothing_full_series_debiased_ema,
               test_histograms_format, test_distributions,
               test_text_is_plain_escaped_json, test_progress_and_runs_info,
               test_scalar_summary, test_errors_400_404,
               test_static_and_traversal, test_webui_dir_confined,
               test_concurrent_clients])
finally:
    rc, err = SRV.stop()
    shutil.rmtree(TMP, ignore_errors=True)
    check_clean_exit(rc, err)
