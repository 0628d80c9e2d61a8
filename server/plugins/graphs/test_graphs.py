"""The graphs routes (issue 31): TensorBoard 2.21's answers for PyTorch's
add_graph (torch_more/model_1: info, graph as pbtxt node by node, with
limit_attr_size, run_metadata, 404 for runs without a graph); the
TensorFlow graphs of the shared corpus (graph_def, meta_graph_def, Keras
run metadata); hostile GraphDefs (cycles, a node naming itself, 10^6
nodes, HTML names, cut-short protobufs) each with a clear answer while
the rest of the logdir is served.

usage: test_graphs.py TFBOARD"""
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "..", "tests", "integration"))
from tfb_server_util import Server, run_tests  # noqa: E402
from tfevents_py import (event, f_double, key, ld, record,  # noqa: E402
                         scalars_summary, varint)

TFBOARD = sys.argv[1]
TMP = tempfile.mkdtemp(prefix="tfb_graphs_")
DATA = os.environ.get("TFB_TESTDATA", "")
TORCH = os.path.join(DATA, "torch_more")
TFEV = os.path.join(DATA, "tfevents")


def answers():
    with open(os.path.join(TORCH, "TENSORBOARD_ANSWERS.json")) as f:
        return json.load(f)["graphs"]


# ---- the expected text of one node, from the answer's parsed node ----

def emit(k, v, d, out):
    ind = "  " * d
    if isinstance(v, dict):
        out.append("%s%s {\n" % (ind, k))
        for kk in v:
            emit(kk, v[kk], d + 1, out)
        out.append("%s}\n" % ind)
    elif isinstance(v, list):
        for x in v:
            emit(k, x, d, out)
    elif isinstance(v, float):
        # dim sizes and versions are integers (int64 / int32 fields).
        out.append("%s%s: %d\n" % (ind, k, int(v)))
    else:
        out.append('%s%s: "%s"\n' % (ind, k, v))


def node_text(n):
    out = ["node {\n", '  name: "%s"\n' % n["name"],
           '  op: "%s"\n' % n["op"]]
    for i in n["input"]:
        out.append('  input: "%s"\n' % i)
    for k in sorted(n["attr"]):
        out.append("  attr {\n")
        out.append('    key: "%s"\n' % k)
        emit("value", n["attr"][k], 2, out)
        out.append("  }\n")
    out.append("}\n")
    return "".join(out)


def split_nodes(text):
    """The top-level 'node { ... }' blocks of a pbtxt and the rest."""
    nodes, rest, cur = [], [], None
    for line in text.splitlines(keepends=True):
        if cur is not None:
            cur.append(line)
            if line == "}\n":
                nodes.append("".join(cur))
                cur = None
        elif line == "node {\n":
            cur = [line]
        else:
            rest.append(line)
    return nodes, "".join(rest)


def check_graph_answer(body, ans):
    text = body.decode()
    nodes, rest = split_nodes(text)
    assert len(nodes) == ans["node_count"] == len(ans["nodes"]), len(nodes)
    want = sorted(node_text(n) for n in ans["nodes"])
    got = sorted(nodes)
    for g, w in zip(got, want):
        assert g == w, "node differs:\n--- tfboard\n%s--- TensorBoard\n%s" % (
            g[:1500], w[:1500])
    other = []
    for k, v in ans["other"].items():
        emit(k, v, 0, other)
    assert rest == "".join(other), rest
    # nodes come first, then the GraphDef's other fields
    assert text.endswith("".join(other))


def test_torch_model_graph_matches_tensorboard():
    a = answers()
    with Server(TFBOARD, TORCH, "--reload_interval", "0") as srv:
        srv.wait_loaded()
        info = srv.json("/data/plugin/graphs/info")
        assert info == a["info"], info
        for run, want in a["graph"].items():
            st, ct, body = srv.get("/data/plugin/graphs/graph", run=run,
                                   conceptual="false")
            assert st == want["status"], (st, body[:300])
            assert ct.startswith(want["content_type"]), ct
            check_graph_answer(body, want)
        for run, want in a["graph_limited"].items():
            st, ct, body = srv.get("/data/plugin/graphs/graph", run=run,
                                   conceptual="false", limit_attr_size=1024,
                                   large_attrs_key="_too_large_attrs")
            assert st == want["status"], (st, body[:300])
            check_graph_answer(body, want)
            assert b'key: "_too_large_attrs"' in body
        for run, tags in a["run_metadata"].items():
            for tag, want in tags.items():
                st, ct, body = srv.get("/data/plugin/graphs/run_metadata",
                                       run=run, tag=tag)
                assert st == want["status"], (st, body)
                assert ct.startswith(want["content_type"]), ct
                devs = want["parsed"]["step_stats"]["dev_stats"]
                exp = "step_stats {\n" + "".join(
                    '  dev_stats {\n    device: "%s"\n  }\n' % d["device"]
                    for d in devs) + "}\n"
                assert body.decode() == exp, body
        for run, status in a["no_graph_status"].items():
            st, _, _ = srv.get("/data/plugin/graphs/graph", run=run)
            assert st == status, (run, st)
        # TensorBoard's parameter errors
        st, _, body = srv.get("/data/plugin/graphs/graph")
        assert st == 400 and b'"run" is required' in body, (st, body)
        st, _, body = srv.get("/data/plugin/graphs/graph", run="model_1",
                              limit_attr_size="x")
        assert st == 400 and b"must be an integer" in body
        st, _, _ = srv.get("/data/plugin/graphs/graph", run="model_1",
                           limit_attr_size="10")
        assert st == 400
        st, _, _ = srv.get("/data/plugin/graphs/run_metadata", run="model_1")
        assert st == 400
        listing = srv.json("/data/plugins_listing")
        assert listing["graphs"]["enabled"] is True, listing["graphs"]


def node_names(text):
    return [l[len('  name: "'):-1] for l in text.splitlines()
            if l.startswith('  name: "')]


def test_tensorflow_graphs_open():
    with Server(TFBOARD, TFEV, "--reload_interval", "0") as srv:
        srv.wait_loaded()
        info = srv.json("/data/plugin/graphs/info")
        tf15 = "morvan_tutorials/tf15_tensorboard/logs"
        rnn = "morvan_tutorials/tf20_RNN2.2/logs"
        keras = "tfx_iris_keras/model_run/8/train"
        for run in (tf15, rnn, keras):
            assert info[run]["run_graph"] is True, (run, info.get(run))
        # the Keras callback's summaries: its model config and batch_2's
        # run metadata with the traced graph
        tags = info[keras]["tags"]
        assert tags["keras"]["conceptual_graph"] is True, tags
        assert tags["batch_2"]["op_graph"] is True, tags
        # counted by hand: the graph_def's node fields, decoded by a
        # separate Python reading of the files (the first and last names)
        st, ct, body = srv.get("/data/plugin/graphs/graph", run=tf15)
        assert st == 200 and ct.startswith("text/x-protobuf"), (st, body)
        names = node_names(body.decode())
        assert len(names) == 143, len(names)
        assert names[0] == "inputs/x_input" and "layer1/weights/W" in names \
            and names[-1] == "Merge/MergeSummary", names[:20]
        st, _, body = srv.get("/data/plugin/graphs/graph", run=rnn)
        assert st == 200
        names = node_names(body.decode())
        assert len(names) == 575 and names[0] == "inputs/xs", len(names)
        st, _, body = srv.get("/data/plugin/graphs/graph", run=keras)
        assert st == 200
        names = node_names(body.decode())
        assert len(names) == 42 and names[-1] == "dense_3/Softmax", names[-3:]
        st, _, body = srv.get("/data/plugin/graphs/graph", run=keras,
                              tag="batch_2")
        # this file's batch_2 RunMetadata is 0 bytes (string_val ""): the
        # merge of no function graphs, an empty GraphDef, as TensorBoard
        assert st == 200 and body == b"", (st, body[:300])
        st, _, body = srv.get("/data/plugin/graphs/graph", run=keras,
                              tag="keras", conceptual="true")
        assert st in (200, 501), (st, body[:200])


# ---- hostile GraphDefs ----

def node(name, op="Op", inputs=()):
    b = ld(1, name.encode()) + ld(2, op.encode())
    for i in inputs:
        b += ld(3, i.encode())
    return ld(1, b)


def graph_event(graph, step=0):
    return event(1.0 + step, step) + ld(4, graph)


def write_run(logdir, run, graph_bytes, scalars=True):
    d = os.path.join(logdir, run)
    os.makedirs(d)
    with open(os.path.join(d, "events.out.tfevents.1.h"), "wb") as f:
        f.write(record(event(1.0, file_version="brain.Event:2")))
        f.write(record(graph_event(graph_bytes)))
        if scalars:
            f.write(record(event(2.0, 1,
                                 summary=scalars_summary([("loss", 0.5)]))))


def test_hostile_graphs():
    logdir = os.path.join(TMP, "hostile")
    cycle = node("a", inputs=["c"]) + node("b", inputs=["a"]) + \
        node("c", inputs=["b:1"]) + node("d", inputs=["^a"])
    selfie = node("me", inputs=["me", "ghost"])
    html = node("<script>alert(1)</script>", op="<b>Op</b>",
                inputs=['x"y']) + node('x"y')
    # 10^6 nodes of 6 bytes each: over TFB_GRAPH_MAX_NODES
    huge = ld(1, ld(1, b"n")) * 1000000
    # a node cut short: its length says 50, 3 bytes follow
    cut = node("ok") + key(1, 2) + varint(50) + b"abc"
    write_run(logdir, "cycle", cycle)
    write_run(logdir, "self", selfie)
    write_run(logdir, "html", html)
    write_run(logdir, "huge", huge)
    write_run(logdir, "cut", cut)
    with Server(TFBOARD, logdir, "--reload_interval", "0") as srv:
        srv.wait_loaded()
        info = srv.json("/data/plugin/graphs/info")
        assert set(info) == {"cycle", "self", "html", "huge", "cut"}, info
        st, _, body = srv.get("/data/plugin/graphs/graph", run="cycle")
        assert st == 200 and node_names(body.decode()) == list("abcd")
        n = srv.json("/data/plugin/graphs/notes", run="cycle")
        assert n["nodes"] == 4 and n["in_cycles"] == 4, n
        assert n["control_edges"] == 1 and n["edges"] == 3, n
        assert {x["node"] for x in n["notes"] if x["kind"] == "cycle"} == \
            set("abcd"), n
        n = srv.json("/data/plugin/graphs/notes", run="self")
        assert n["self_inputs"] == 1 and n["missing_inputs"] == 1, n
        assert n["in_cycles"] == 1, n
        kinds = sorted(x["kind"] for x in n["notes"])
        assert kinds == ["cycle", "missing_input", "self_input"], n
        st, _, body = srv.get("/data/plugin/graphs/graph", run="html")
        assert st == 200
        # served as pbtxt text, quotes escaped as text_format does
        assert b'name: "<script>alert(1)</script>"' in body, body
        assert b'input: "x\\"y"' in body, body
        n = srv.json("/data/plugin/graphs/notes", run="html")
        assert n["html_names"] == 2, n
        st, ct, body = srv.get("/data/plugin/graphs/graph", run="huge")
        assert st == 413, (st, body[:200])
        assert b"1000000 nodes" in body and b"100000" in body, body
        n = srv.json("/data/plugin/graphs/notes", run="huge")
        assert n["too_many"] is True and n["nodes"] == 1000000, n
        st, _, body = srv.get("/data/plugin/graphs/graph", run="cut")
        assert st == 422 and b"not a valid GraphDef" in body, (st, body)
        # nothing else is lost: every run's scalars are served
        for run in info:
            pts = srv.json("/data/plugin/scalars/scalars", run=run,
                           tag="loss")
            assert len(pts) == 1, (run, pts)


def test_meta_graph_and_latest_graph():
    """A run with only a meta_graph_def serves its graph_def; two
    graph_defs: the later one (TensorBoard keeps the latest)."""
    logdir = os.path.join(TMP, "meta")
    d = os.path.join(logdir, "m")
    os.makedirs(d)
    meta = ld(1, b"\x0a\x00") + ld(2, node("from_meta"))
    with open(os.path.join(d, "events.out.tfevents.1.h"), "wb") as f:
        f.write(record(event(1.0, file_version="brain.Event:2")))
        f.write(record(event(1.5, 0) + ld(9, meta)))
    d = os.path.join(logdir, "two")
    os.makedirs(d)
    with open(os.path.join(d, "events.out.tfevents.1.h"), "wb") as f:
        f.write(record(graph_event(node("first"), 0)))
        f.write(record(graph_event(node("second"), 1)))
        trm = ld(1, b"step 7") + ld(2, ld(1, ld(1, ld(1, b"/cpu:0"))))
        f.write(record(event(3.0, 7) + ld(8, trm)))
    with Server(TFBOARD, logdir, "--reload_interval", "0") as srv:
        srv.wait_loaded()
        info = srv.json("/data/plugin/graphs/info")
        assert info["m"]["run_graph"] is True, info
        assert info["two"]["tags"]["step 7"]["profile"] is True, info
        st, _, body = srv.get("/data/plugin/graphs/graph", run="m")
        assert st == 200 and node_names(body.decode()) == ["from_meta"]
        st, _, body = srv.get("/data/plugin/graphs/graph", run="two")
        assert node_names(body.decode()) == ["second"], body
        st, _, body = srv.get("/data/plugin/graphs/run_metadata", run="two",
                              tag="step 7")
        assert body == (b'step_stats {\n  dev_stats {\n    device: '
                        b'"/cpu:0"\n  }\n}\n'), body


def test_demo_mlp_graph():
    """The demo's C MLP (examples/mlp_train, tfb_graph_def) logs its
    forward pass: 18 nodes in the input/fc1/fc2/fc3/loss scopes, every
    input a node of the graph, shapes on the outputs."""
    exe = os.path.join(os.environ.get("TFB_BUILD_ROOT", ""), "examples",
                       "mlp_train")
    if not os.path.exists(exe):
        print("  (no examples/mlp_train in this build: skipped)")
        return
    logdir = os.path.join(TMP, "demo")
    subprocess.run([exe, "--logdir", logdir, "--name", "mlp", "--steps",
                    "3"], check=True, capture_output=True, timeout=120)
    with Server(TFBOARD, logdir, "--reload_interval", "0") as srv:
        srv.wait_loaded()
        info = srv.json("/data/plugin/graphs/info")
        assert info == {"mlp": {"run": "mlp", "tags": {},
                                "run_graph": True}}, info
        st, _, body = srv.get("/data/plugin/graphs/graph", run="mlp")
        assert st == 200, (st, body[:200])
        text = body.decode()
        names = node_names(text)
        assert len(names) == 18, names
        assert {n.split("/")[0] for n in names} == \
            {"input", "fc1", "fc2", "fc3", "loss"}, names
        assert names[-1] == "loss/Mean"
        assert 'input: "fc2/LeakyRelu"' in text
        assert text.count('device: "/device:CPU:0"') == 18
        n = srv.json("/data/plugin/graphs/notes", run="mlp")
        assert n["nodes"] == 18 and n["edges"] == 17, n
        assert n["missing_inputs"] == 0 and n["in_cycles"] == 0, n


if __name__ == "__main__":
    if not os.path.isdir(TORCH) or not os.path.isdir(TFEV):
        print("SKIP: no shared testdata (TFB_TESTDATA)")
        sys.exit(77)
    try:
        run_tests([test_torch_model_graph_matches_tensorboard,
                   test_tensorflow_graphs_open,
                   test_hostile_graphs,
                   test_meta_graph_and_latest_graph,
                   test_demo_mlp_graph])
    finally:
        shutil.rmtree(TMP, ignore_errors=True)
