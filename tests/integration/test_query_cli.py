"""`tfboard query` and `tfboard export` (issue 30 item 2) on the logdir of
`gen_logdir basic` (NaN, +Inf and -Inf in run_a's `weird`), against
answers worked out here from how the logdir was written; then the same
queries on the same logdir in a bucket (s3://, moto_server) give the same
bytes. A bad query exits 2 with SQLite's message and the position; a
refused one exits 2 too.

usage: test_query_cli.py TFBOARD GEN_LOGDIR"""
import csv
import io
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import s3_util  # noqa: E402

TFBOARD, GEN = sys.argv[1], sys.argv[2]
TMP = tempfile.mkdtemp(prefix="tfb_query_")
LOGDIR = os.path.join(TMP, "logs")
subprocess.run([GEN, "basic", LOGDIR], check=True)


def f32(x):
    """x as the float32 the writer logged, widened back (repr: shortest)."""
    return struct.unpack("f", struct.pack("f", x))[0]


def q(logdir, *args, stdin=None, expect=0):
    p = subprocess.run([TFBOARD, "query", "--logdir", logdir, "--quiet"] +
                       list(args), input=stdin, capture_output=True,
                       text=True, timeout=120)
    assert p.returncode == expect, (args, p.returncode, p.stderr)
    return p.stdout, p.stderr


def rows(text):
    return list(csv.reader(io.StringIO(text)))


def fmt(v):
    return repr(v) if v != int(v) else str(int(v))


QUERIES = [
    "SELECT run, tag, count, min, max, nonfinite, last_step FROM scalar_stats"
    " ORDER BY run, tag",
    "SELECT step, value FROM scalars WHERE run = 'run_a' AND tag = 'weird'"
    " ORDER BY step",
    "SELECT run, steps FROM runs ORDER BY run",
    "SELECT step, num, n_buckets > 0 FROM histograms WHERE run = 'run_a'"
    " ORDER BY step",
    "SELECT count(*), sum(bytes) FROM texts",
    "SELECT run, \"loss.last\", \"loss.min\" FROM runs_wide ORDER BY run",
    "SELECT run, rule, tag, step, message FROM alerts ORDER BY run, rule",
]


def expected():
    """The answers, from how gen_logdir wrote the logdir."""
    stats = [
        ["run_a", "acc", "100", "0", fmt(f32(0.99)), "0", "99"],
        ["run_a", "loss", "100", fmt(f32(1 / 100)), "1", "0", "99"],
        ["run_a", "weird", "10", "0", "9", "3", "9"],
        ["sub/run_b", "loss", "50", fmt(f32(2.0 - 49 / 100)), "2", "0", "49"],
    ]
    weird = [[str(s), {5: "", 7: "inf", 8: "-inf"}.get(s, str(s))]
             for s in range(10)]
    runs = [["run_a", "99"], ["sub/run_b", "49"], ["traces_only", ""]]
    hist = [["0", "1000", "1"], ["10", "1000", "1"], ["20", "1000", "1"]]
    texts = [["2", str(len("<img src=x onerror=alert(1)>".encode()) +
                       len("line one\nline \"two\" & </script>".encode()))]]
    wide = [["run_a", fmt(f32(1 / 100)), fmt(f32(1 / 100))],
            ["sub/run_b", fmt(f32(1.51)), fmt(f32(1.51))],
            ["traces_only", "", ""]]
    # the earliest non-finite point of run_a: tfb_check_numerics on
    # layer1/grad at step 3 (weird's NaN comes at 5); run_b is finished
    alerts = [["run_a", "nonfinite", "layer1/grad", "3",
               "NaN/Inf in layer1/grad at step 3"]]
    return [stats, weird, runs, hist, texts, wide, alerts]


def answers(logdir):
    out = []
    for sql in QUERIES:
        text, _ = q(logdir, "--format", "csv", sql)
        out.append(text)
    return out


def check_local():
    got = answers(LOGDIR)
    for sql, text, want in zip(QUERIES, got, expected()):
        r = rows(text)
        assert r[1:] == want, (sql, r, want)
    # the other formats
    text, _ = q(LOGDIR, "--format", "json", QUERIES[1])
    j = json.loads(text)
    assert j["columns"] == ["step", "value"] and len(j["rows"]) == 10
    assert j["rows"][5] == [5, None] and j["truncated"] is False
    assert j["rows"][7] == [7, "Infinity"] and j["rows"][8] == [8, "-Infinity"]
    text, _ = q(LOGDIR, "--format", "jsonl", QUERIES[2])
    lines = [json.loads(x) for x in text.splitlines()]
    assert lines[0] == {"run": "run_a", "steps": 99}, lines
    text, _ = q(LOGDIR, QUERIES[2])
    assert "run_a" in text and "(3 rows)" in text, text
    # SQL from stdin, and --output
    out = os.path.join(TMP, "out.csv")
    q(LOGDIR, "--format", "csv", "--output", out, stdin=QUERIES[0])
    with open(out) as f:
        assert rows(f.read())[1:] == expected()[0]
    # --max_rows
    text, err = q(LOGDIR, "--format", "csv", "--max_rows", "2",
                  "SELECT * FROM scalars")
    assert len(rows(text)) == 3 and "first 2 rows" in err, (text, err)
    # a bad query: exit 2, SQLite's message and the position
    _, err = q(LOGDIR, "SELECT * FORM runs", expect=2)
    assert 'near "FORM": syntax error' in err and "at byte 9" in err, err
    _, err = q(LOGDIR, "SELECT nope FROM runs", expect=2)
    assert "no such column: nope" in err and "at byte 7" in err, err
    _, err = q(LOGDIR, "ATTACH '%s/x.db' AS x" % TMP, expect=2)
    assert "not allowed" in err, err
    assert not os.path.exists(os.path.join(TMP, "x.db"))
    # export: the long format, --tags and --where
    p = subprocess.run([TFBOARD, "export", "--logdir", LOGDIR, "--quiet"],
                       capture_output=True, text=True, check=True)
    r = rows(p.stdout)
    assert r[0] == ["run", "tag", "step", "wall_time", "value"]
    assert len(r) - 1 == 100 + 100 + 10 + 50, len(r)
    p = subprocess.run([TFBOARD, "export", "--logdir", LOGDIR, "--quiet",
                        "--tags", "^loss$", "--where", '"loss.last" > 1',
                        "--format", "jsonl"],
                       capture_output=True, text=True, check=True)
    lines = [json.loads(x) for x in p.stdout.splitlines()]
    assert len(lines) == 50 and {x["run"] for x in lines} == {"sub/run_b"}
    assert lines[0] == {"run": "sub/run_b", "tag": "loss", "step": 0,
                        "wall_time": 1700001000, "value": 2}, lines[0]
    p = subprocess.run([TFBOARD, "export", "--logdir", LOGDIR, "--quiet",
                        "--where", "lr >"], capture_output=True, text=True)
    assert p.returncode == 2 and "--where" in p.stderr, p.stderr
    return got


def check_s3(local):
    if not shutil.which("moto_server"):
        print("moto_server not on PATH: s3:// part skipped")
        return
    s3_util.need_moto()
    with s3_util.Moto() as moto:
        s3 = moto.client()
        s3.create_bucket(Bucket="logs")
        s3_util.upload_dir(s3, "logs", LOGDIR, "exp")
        s3_util.use_endpoint(moto.url)
        got = answers("s3://logs/exp")
        for sql, a, b in zip(QUERIES, local, got):
            assert a == b, (sql, a, b)
        print("s3:// answers equal the local ones (%d queries)" % len(got))


try:
    local = check_local()
    check_s3(local)
    print("ok")
finally:
    shutil.rmtree(TMP, ignore_errors=True)
