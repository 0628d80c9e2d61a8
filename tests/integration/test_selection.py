"""Run selections the server holds (issue 27 item 1; server/API.md
"Selections", server/core/selection.h): PUT /data/selection with the run
names gives a short id, the same for the same set in any order; the
multi-run routes (scalars multirun and nearest, hparams groups) take
`selection=ID` and answer over exactly those runs; an unknown or evicted
id is a 404 saying to send the runs again; the bounds (ids held, LRU
eviction, names per selection, body size) hold, and hostile bodies get a
clear 400/413/415 while the server keeps serving.

The id is checked against the algorithm the API documents (the sum of
base/hash.h's FNV-1a 64 + fmix64 of each distinct name), computed here
independently: the web UI computes it too (core/selection.js), and the
browser test webui_sweep_brush fails if the two disagree.

usage: test_selection.py TFBOARD GEN_LOGDIR"""
import http.client
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tfb_server_util import Server, run_tests  # noqa: E402

TFBOARD, GEN = sys.argv[1], sys.argv[2]
TMP = tempfile.mkdtemp(prefix="tfb_selection_")
LOGDIR = os.path.join(TMP, "logs")
RUNS = 300  # past the 200 runs where multirun answers bands
# The generator gives each run's writer a 64 MiB queue: under meson's
# MALLOC_PERTURB_ filling them took minutes. It is not what is tested.
GEN_ENV = {k: v for k, v in os.environ.items() if k != "MALLOC_PERTURB_"}
subprocess.run([GEN, "scalars", LOGDIR, str(RUNS), "1", "5"], check=True,
               stdout=subprocess.DEVNULL, env=GEN_ENV)
TAG = "tag00/t"
ALL = ["run%03d" % i for i in range(RUNS)]

# The bounds, from the header that defines them (the source of truth).
HDR = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                        "..", "server", "core", "selection.h")).read()


def bound(name):
    m = re.search(r"#define %s \(?([0-9 *]+)\)?" % name, HDR)
    return eval(m.group(1))  # a product of integers, e.g. 4 * 1024 * 1024


MAX_HELD = bound("TFB_SELECTION_MAX_HELD")
MAX_RUNS = bound("TFB_SELECTION_MAX_RUNS")
BODY_MAX = bound("TFB_SELECTION_BODY_MAX")

M64 = (1 << 64) - 1


def hash_name(s):
    # base/hash.c: FNV-1a 64 (its published offset basis and prime), fmix64
    h = 14695981039346656037
    for b in s.encode("utf-8"):
        h = ((h ^ b) * 1099511628211) & M64
    h ^= h >> 33
    h = (h * 0xff51afd7ed558ccd) & M64
    h ^= h >> 33
    h = (h * 0xc4ceb9fe1a85ec53) & M64
    h ^= h >> 33
    return h or 1


def expected_id(names):
    return "%016x" % (sum(hash_name(n) for n in set(names)) & M64)


def put(srv, body, ctype="application/json"):
    c = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=60)
    try:
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        c.request("PUT", "/data/selection", body=data,
                  headers={"Content-Type": ctype})
        r = c.getresponse()
        return r.status, r.read()
    finally:
        c.close()


def hold(srv, names):
    st, body = put(srv, {"runs": names})
    assert st == 200, (st, body[:300])
    return json.loads(body)


def test_id_and_routes():
    with Server(TFBOARD, LOGDIR, "--reload_interval", "0") as srv:
        srv.wait_loaded()
        chosen = ALL[10:260]  # 250 runs: bands
        a = hold(srv, chosen)
        b = hold(srv, list(reversed(chosen)) + chosen[:40] + ["no_such_run"])
        c = hold(srv, chosen + ["no_such_run"])
        assert a["id"] == expected_id(chosen), (a, expected_id(chosen))
        assert a["runs"] == len(chosen), a
        assert b["id"] == c["id"] == expected_id(chosen + ["no_such_run"])
        assert b["runs"] == len(chosen) + 1, b
        assert a["id"] != b["id"]
        assert re.fullmatch(r"[0-9a-f]{16}", a["id"]), a
        # GET gives the names back, in byte order.
        g = srv.json("/data/selection", id=a["id"])
        assert g["runs"] == sorted(chosen), g["runs"][:5]
        # Non-ASCII and escaped names hash their UTF-8 bytes.
        odd = ["läuft/\u00e9", "tab\there", "quote\"d", "\U0001f600"]
        assert hold(srv, odd)["id"] == expected_id(odd)
        assert srv.json("/data/selection",
                        id=expected_id(odd))["runs"] == sorted(
                            odd, key=lambda s: s.encode())
        # The routes answer over exactly the selected runs that exist.
        m = srv.json("/data/plugin/scalars/multirun", tag=TAG,
                     selection=c["id"], summary="lines", samples=4)
        assert sorted(m["series"]) == sorted(chosen), len(m["series"])
        m = srv.json("/data/plugin/scalars/multirun", tag=TAG,
                     selection=a["id"])
        assert m["mode"] == "bands" and m["runs"] == len(chosen), m["runs"]
        # with run_regex: both apply
        m = srv.json("/data/plugin/scalars/multirun", tag=TAG,
                     selection=a["id"], run_regex="^run0[0-4]", samples=4)
        assert m["runs"] == 40, m["runs"]  # run010 .. run049
        n = srv.json("/data/plugin/scalars/nearest", tag=TAG, step=2,
                     value=0, k=1000, selection=a["id"])
        assert sorted(r["run"] for r in n["runs"]) == sorted(chosen)
        gr = srv.json("/data/plugin/hparams/groups", tag=TAG,
                      group_by="regex:run([0-9])", selection=a["id"])
        got = sorted(r for x in gr["groups"] for r in x["runs"])
        assert got == sorted(chosen), len(got)
        st, _, body = srv.get("/data/plugin/hparams/groups", tag=TAG,
                              group_by="regex:run([0-9])", selection=a["id"],
                              runs='["run001"]')
        assert st == 400, (st, body)


def test_unknown_id():
    with Server(TFBOARD, LOGDIR, "--reload_interval", "0") as srv:
        srv.wait_loaded()
        for path, params in (
                ("/data/selection", {"id": "0123456789abcdef"}),
                ("/data/plugin/scalars/multirun",
                 {"tag": TAG, "selection": "0123456789abcdef"}),
                ("/data/plugin/scalars/nearest",
                 {"tag": TAG, "step": 1, "value": 0,
                  "selection": "0123456789abcdef"}),
                ("/data/plugin/hparams/groups",
                 {"tag": TAG, "group_by": "regex:run", "selection":
                  "0123456789abcdef"})):
            st, ct, body = srv.get(path, **params)
            assert st == 404, (path, st, body)
            err = json.loads(body)["error"]
            assert "unknown selection" in err and "again" in err, err


def test_bounds_and_eviction():
    with Server(TFBOARD, LOGDIR, "--reload_interval", "0") as srv:
        srv.wait_loaded()
        first = hold(srv, ["first"])["id"]
        second = hold(srv, ["second"])["id"]
        for i in range(MAX_HELD - 2):
            hold(srv, ["filler%d" % i])
        # MAX_HELD held: using `first` makes `second` the least recent.
        assert srv.get("/data/selection", id=first)[0] == 200
        newest = hold(srv, ["newest"])["id"]
        assert srv.get("/data/selection", id=second)[0] == 404
        assert srv.get("/data/selection", id=first)[0] == 200
        assert srv.get("/data/selection", id=newest)[0] == 200
        # Holding the same set again is no new entry: nothing evicted.
        hold(srv, ["first"])
        assert srv.get("/data/selection", id=newest)[0] == 200
        # Too many names: 400 naming the bound.
        st, body = put(srv, {"runs": ["r%d" % i for i in range(MAX_RUNS + 1)]})
        assert st == 400 and str(MAX_RUNS).encode() in body, (st, body[:200])
        # MAX_RUNS names are fine (a body under BODY_MAX).
        big = ["r%d" % i for i in range(MAX_RUNS)]
        assert hold(srv, big)["runs"] == MAX_RUNS
        # A body over the cap: 413, and the server goes on.
        st, body = put(srv, b'{"runs": ["' + b"x" * BODY_MAX + b'"]}')
        assert st == 413, (st, body[:200])
        # Hostile bodies: a clear 400 each.
        for bad in (b"", b"[]", b"{}", b'{"runs": "a"}', b'{"runs": [1]}',
                    b'{"runs": ["a",]}', b'{"runs": ["a"]', b'{"runs": ["a"]} x',
                    b'{"other": []}', b'{"runs": ["a\\u0000b"]}',
                    b'{"runs": ["unterminated]}', b"\xff\xfe"):
            st, body = put(srv, bad)
            assert st == 400, (bad, st, body)
            assert b"selection" in body, body
        st, body = put(srv, {"runs": ["a"]}, ctype="text/plain")
        assert st == 415, (st, body)
        # An empty selection is a selection of no run.
        e = hold(srv, [])
        m = srv.json("/data/plugin/scalars/multirun", tag=TAG,
                      selection=e["id"])
        assert m["runs"] == 0, m
        assert srv.get("/data/runs")[0] == 200


try:
    run_tests([test_id_and_routes, test_unknown_id, test_bounds_and_eviction])
finally:
    shutil.rmtree(TMP, ignore_errors=True)
