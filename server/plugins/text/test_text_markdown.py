"""Text as Markdown over HTTP (issue 22): scalar string tensors rendered by
cmark, vectors and matrices of strings as tables of cells (TensorBoard's
text plugin), hostile Markdown made safe; text past the Markdown bounds
as plain text; PyTorch's own text file.

usage: test_text_markdown.py TFBOARD GEN_LOGDIR"""
import json
import os
import shutil
import sys
import tempfile
import time

# The integration tests' helpers (tests/integration/).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "..", "tests", "integration"))
from tfb_server_util import Server, run_tests  # noqa: E402
from tfevents_py import event, key, ld, record, varint  # noqa: E402

TFBOARD = sys.argv[1]
TMP = tempfile.mkdtemp(prefix="tfb_md_")
TORCH = os.path.join(os.environ.get("TFB_TESTDATA", ""), "torch_media")


def text_value(tag, strings, dims):
    shape = b"".join(ld(2, key(1, 0) + varint(d)) for d in dims)
    t = key(1, 0) + varint(7) + ld(2, shape) + b"".join(
        ld(8, s.encode()) for s in strings)
    meta = ld(9, ld(1, ld(1, b"text")))
    return ld(1, ld(1, tag.encode()) + meta + ld(8, t))


def test_tensors_as_tables_and_safety():
    logdir = os.path.join(TMP, "t")
    d = os.path.join(logdir, "r")
    os.makedirs(d)
    vals = [("scalar", ["# Title\n\n<script>alert(1)</script> "
                        "[x](javascript:alert(1)) [ok](https://a.org)"], []),
            ("one", ["*only* one"], [1]),
            ("vector", ["a", "b|c", "**d**"], [3]),
            ("matrix", ["r0c0", "r0c1", "r1c0", "line\nbreak"], [2, 2])]
    with open(os.path.join(d, "events.out.tfevents.1.h"), "wb") as f:
        f.write(record(event(1.0, file_version="brain.Event:2")))
        for i, (tag, s, dims) in enumerate(vals):
            f.write(record(event(2.0 + i, i, summary=text_value(tag, s,
                                                                 dims))))
    with Server(TFBOARD, logdir, "--reload_interval", "0") as srv:
        srv.wait_loaded()

        def html(tag):
            (e,) = srv.json("/data/plugin/text/text", run="r", tag=tag)
            return e["html"]
        h = html("scalar")
        assert h.startswith("<h1>Title</h1>\n"), h
        assert "&lt;script&gt;" in h and "<script" not in h
        assert "javascript" not in h.replace("(javascript:alert(1))", "")
        assert '<a href="https://a.org">ok</a>' in h
        assert html("one") == "<p><em>only</em> one</p>\n"
        v = html("vector")
        assert v.count("<tr>") == 4 and "<td>b|c</td>" in v, v
        assert "<td><strong>d</strong></td>" in v
        m = html("matrix")
        assert m.count("<td>") == 4 and "<td>line break</td>" in m, m
        assert m.index("r0c1") < m.index("r1c0")


def test_long_text_shown_plain():
    """Markdown is rendered up to 64 KiB a text and 256 KiB an answer,
    newest entries first (issue 32 item 5: cmark took seconds on 360 KB
    of "![[]()" repeated, on every visit); the rest comes as plain text
    with the reason, the text itself whole."""
    limit, budget = 64 * 1024, 256 * 1024
    logdir = os.path.join(TMP, "long")
    d = os.path.join(logdir, "r")
    os.makedirs(d)
    hostile = "![[]()" * (2 * limit // 6)
    edge = ("# Edge\n\n" + "word " * limit)[:limit]
    notes = ["note %02d\n\n" % i + "x" * (60 * 1024) for i in range(20)]
    with open(os.path.join(d, "events.out.tfevents.1.h"), "wb") as f:
        f.write(record(event(1.0, file_version="brain.Event:2")))
        f.write(record(event(2.0, 0, summary=text_value("hostile", [hostile],
                                                        []))))
        f.write(record(event(2.0, 0, summary=text_value("edge", [edge], []))))
        for i, n in enumerate(notes):
            f.write(record(event(3.0 + i, i,
                                 summary=text_value("many", [n], []))))
    with Server(TFBOARD, logdir, "--reload_interval", "0") as srv:
        srv.wait_loaded()
        t0 = time.monotonic()
        st, _, body = srv.get("/data/plugin/text/text", _timeout=60, run="r",
                              tag="hostile")
        # generous: unbounded, this took seconds of cmark per visit
        assert time.monotonic() - t0 < 30
        assert st == 200, (st, body[:200])
        (e,) = json.loads(body)
        assert e["text"] == hostile
        assert e["html"] is None, e["html"][:100]
        assert "64 KiB" in e["not_rendered"], e["not_rendered"]
        (e,) = srv.json("/data/plugin/text/text", run="r", tag="edge")
        assert len(e["text"]) == limit
        assert e["html"].startswith("<h1>Edge</h1>"), e["html"][:100]
        assert "not_rendered" not in e
        got = srv.json("/data/plugin/text/text", run="r", tag="many")
        assert [g["text"] for g in got] == notes
        # newest first, until the answer's budget is spent
        fit = budget // len(notes[0])
        assert fit < len(notes)
        for i, g in enumerate(got):
            if i >= len(notes) - fit:
                assert g["html"].startswith("<p>note %02d</p>" % i), i
                assert "not_rendered" not in g
            else:
                assert g["html"] is None, i
                assert "256 KiB" in g["not_rendered"], g["not_rendered"]


def test_torch_text():
    if not os.path.isdir(TORCH):
        print("skip: no torch_media testdata")
        return
    with open(os.path.join(TORCH, "TENSORBOARD_ANSWERS.json")) as f:
        want = json.load(f)["text"]
    with Server(TFBOARD, TORCH, "--reload_interval", "0") as srv:
        srv.wait_loaded()
        for run, by_tag in want.items():
            tags = srv.json("/data/plugin/text/tags")[run]
            assert sorted(tags) == sorted(by_tag)
            for tag, entries in by_tag.items():
                got = srv.json("/data/plugin/text/text", run=run, tag=tag)
                assert [g["step"] for g in got] == [e["step"] for e in entries]
                h = got[0]["html"]
                # TensorBoard's elements, and the same safety.
                for part in ("<h1>Run notes</h1>", "<th>metric</th>",
                             "<td>0.91</td>", "<li>item one</li>",
                             '<a href="https://example.org">docs</a>',
                             "&lt;script&gt;alert('x')&lt;/script&gt;"):
                    assert part in h and part in entries[0]["text"], part
                assert "<script" not in h and 'href="javascript' not in h


try:
    run_tests([test_tensors_as_tables_and_safety, test_long_text_shown_plain,
               test_torch_text])
finally:
    shutil.rmtree(TMP, ignore_errors=True)
