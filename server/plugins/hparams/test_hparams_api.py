"""The hparams plugin over HTTP (issue 12): hparams records written by the
test in the exact layouts of PyTorch's add_hparams (experiment, session
start, session end in a sub-run <run>/<time>; PyTorch 1.13 writes no
tensor, newer versions an empty DT_FLOAT one), of Keras / TF's hp.hparams
(session start with group_name and start_time_secs; the experiment from
hp.hparams_config in the logdir's root run) and a damaged record, encoded
with protoc from tests/proto/hparams.proto, read back through
/data/plugin/hparams/{experiment,runs,groups}.

usage: test_hparams_api.py TFBOARD GEN_LOGDIR"""
import http.client
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile

# The integration tests' helpers (tests/integration/).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "..", "tests", "integration"))
from tfb_server_util import Server, run_tests  # noqa: E402
from tfevents_py import event, ld, record, scalars_summary, key, varint  # noqa: E402

TFBOARD = sys.argv[1]
PROTOC = os.environ.get("TFB_PROTOC", "protoc")
PROTO_DIR = os.environ.get("TFB_PROTO_DIR") or os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "tests",
    "proto")
TMP = tempfile.mkdtemp(prefix="tfb_hparams_")


def encode(text):
    """HParamsPluginData from protobuf text format, by protoc."""
    p = subprocess.run([PROTOC, "--proto_path=" + PROTO_DIR,
                        "--encode=tfbtest.HParamsPluginData", "hparams.proto"],
                       input=text.encode(), capture_output=True, check=True)
    return p.stdout


def hp_value(tag, content, tensor):
    """Summary.Value{tag, metadata{plugin_data{plugin_name: hparams,
    content}}, tensor?}. tensor None: no tensor field (PyTorch 1.13)."""
    meta = ld(1, ld(1, b"hparams") + ld(2, content))
    v = ld(1, tag.encode())
    if tensor is not None:
        v += ld(8, tensor)
    return ld(1, v + ld(9, meta))


EMPTY_FLOAT = key(1, 0) + varint(1)            # TensorProto{dtype: DT_FLOAT}
EMPTY_STRING = key(1, 0) + varint(7) + ld(8, b"")  # DT_STRING, string_val ""


def write(path, events):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(record(event(1.0, file_version="brain.Event:2")))
        for e in events:
            f.write(record(e))


def torch_layout(logdir, run, lr, act, acc, tensor):
    """What SummaryWriter(run).add_scalar(...); add_hparams({lr, act,
    layers}, {'hparam/acc': acc}) leaves: the curve in <run>, the hparams
    and the metric in <run>/<time>."""
    write(os.path.join(logdir, run, "events.out.tfevents.1.host.1.0"),
          [event(10.0 + s, s, summary=scalars_summary([("loss", 1.0 / (s + 1) + lr)]))
           for s in range(4)])
    exp = encode("""experiment {
      hparam_infos { name: "lr" type: 3 }
      hparam_infos { name: "act" type: 1 }
      hparam_infos { name: "layers" type: 3 }
      metric_infos { name { tag: "hparam/acc" } }
    }""")
    ssi = encode("""session_start_info {
      hparams { key: "lr" value { number_value: %r } }
      hparams { key: "act" value { string_value: "%s" } }
      hparams { key: "layers" value { number_value: 3 } }
    }""" % (lr, act.replace('"', '\\"')))
    sei = encode("session_end_info { status: 1 }")
    sub = os.path.join(logdir, run, "1700000000.25")
    write(os.path.join(sub, "events.out.tfevents.2.host.1.0"), [
        event(20.0, summary=hp_value("_hparams_/experiment", exp, tensor)),
        event(20.0, summary=hp_value("_hparams_/session_start_info", ssi, tensor)),
        event(20.0, summary=hp_value("_hparams_/session_end_info", sei, tensor)),
        event(20.0, 0, summary=scalars_summary([("hparam/acc", acc)])),
    ])


def keras_layout(logdir):
    """hp.hparams_config(...) in the root run; hp.hparams(...) per trial
    run, with group_name and start_time_secs, no session end (the trial
    is still running)."""
    exp = encode("""experiment {
      hparam_infos { name: "num_units" display_name: "units" type: 3
                     domain_discrete { values { number_value: 16 }
                                       values { number_value: 32 } } }
      hparam_infos { name: "dropout" type: 3
                     domain_interval { min_value: 0.1 max_value: 0.2 } }
      hparam_infos { name: "optimizer" type: 1
                     domain_discrete { values { string_value: "adam" }
                                       values { string_value: "sgd" } } }
      metric_infos { name { group: "validation" tag: "epoch_accuracy" }
                     display_name: "Accuracy" }
      time_created_secs: 1600000000
    }""")
    write(os.path.join(logdir, "events.out.tfevents.0.host.1.v2"),
          [event(5.0, summary=hp_value("_hparams_/experiment", exp, EMPTY_STRING))])
    for i, (units, drop, opt) in enumerate([(16, 0.1, "adam"), (32, 0.2, "sgd")]):
        ssi = encode("""session_start_info {
          hparams { key: "num_units" value { number_value: %d } }
          hparams { key: "dropout" value { number_value: %r } }
          hparams { key: "optimizer" value { string_value: "%s" } }
          group_name: "g%d" start_time_secs: 1600000100.5
        }""" % (units, drop, opt, i))
        run = os.path.join(logdir, "run-%d" % i)
        write(os.path.join(run, "events.out.tfevents.3.host.1.v2"),
              [event(30.0, summary=hp_value("_hparams_/session_start_info",
                                            ssi, EMPTY_STRING))])
        write(os.path.join(run, "validation", "events.out.tfevents.4.host.1.v2"),
              [event(31.0 + s, s, summary=scalars_summary(
                  [("epoch_accuracy", 0.5 + 0.1 * s + 0.01 * i)]))
               for s in range(3)])


def test_pytorch_layouts():
    logdir = os.path.join(TMP, "torch")
    torch_layout(logdir, "old", 0.1, "relu", 0.8, None)          # 1.13
    torch_layout(logdir, "new", 0.01, "tanh\"<b>", 0.9, EMPTY_FLOAT)
    with Server(TFBOARD, logdir, "--reload_interval", "0") as srv:
        srv.wait_loaded()
        lst = srv.json("/data/plugins_listing")
        assert lst["hparams"]["enabled"] is True
        exp = srv.json("/data/plugin/hparams/experiment")
        assert [h["name"] for h in exp["hparams"]] == ["lr", "act", "layers"], exp
        lr = exp["hparams"][0]
        assert lr["type"] == "number" and lr["values"] == [0.01, 0.1], lr
        assert lr["min"] == 0.01 and lr["max"] == 0.1
        assert exp["hparams"][1]["values"] == ["relu", "tanh\"<b>"]
        assert exp["metrics"] == [{"tag": "hparam/acc", "group": "",
                                   "display_name": ""}], exp["metrics"]
        assert exp["runs_with_hparams"] == 2 and exp["experiments"] == 2

        rows = srv.json("/data/plugin/hparams/runs", metric="loss")
        by = {r["run"]: r for r in rows}
        assert set(by) == {"old", "new", "old/1700000000.25",
                           "new/1700000000.25"}, list(by)
        assert by["old"]["has_hparams"] is False and by["old"]["hparams"] == {}
        o = by["old/1700000000.25"]
        assert o["has_hparams"] is True
        assert o["hparams"] == {"lr": 0.1, "act": "relu", "layers": 3}, o
        assert o["status"] == "success" and o["start_time"] is None
        assert o["metrics"]["hparam/acc"]["last"] == 0.800000011920929 or \
            abs(o["metrics"]["hparam/acc"]["last"] - 0.8) < 1e-6
        # the training curve lives in the parent run
        loss = o["metrics"]["loss"]
        assert loss["run"] == "old" and loss["count"] == 4, loss
        assert abs(loss["max"] - 1.1) < 1e-6 and loss["last_step"] == 3
        n = by["new/1700000000.25"]
        assert n["hparams"]["act"] == "tanh\"<b>" and n["hparams"]["lr"] == 0.01

        g = srv.json("/data/plugin/hparams/groups", tag="hparam/acc",
                     group_by="hparam:act")
        assert [x["key"] for x in g["groups"]] == ["relu", "tanh\"<b>"], g
        assert g["groups"][0]["points"][0][:2] == [0, g["groups"][0]["points"][0][1]]


def test_keras_layout():
    logdir = os.path.join(TMP, "keras")
    keras_layout(logdir)
    with Server(TFBOARD, logdir, "--reload_interval", "0") as srv:
        srv.wait_loaded()
        exp = srv.json("/data/plugin/hparams/experiment")
        cols = {h["name"]: h for h in exp["hparams"]}
        assert [h["name"] for h in exp["hparams"]] == ["num_units", "dropout",
                                                      "optimizer"]
        assert cols["num_units"]["display_name"] == "units"
        assert cols["num_units"]["values"] == [16, 32]
        assert cols["dropout"]["interval"] == [0.1, 0.2]
        assert cols["optimizer"]["values"] == ["adam", "sgd"]
        assert exp["metrics"][0] == {"tag": "epoch_accuracy",
                                     "group": "validation",
                                     "display_name": "Accuracy"}
        rows = {r["run"]: r for r in srv.json("/data/plugin/hparams/runs")}
        r0 = rows["run-0"]
        assert r0["hparams"] == {"num_units": 16, "dropout": 0.1,
                                 "optimizer": "adam"}, r0
        assert r0["group"] == "g0" and r0["start_time"] == 1600000100.5
        assert r0["status"] is None  # no session end yet
        assert rows["."]["has_hparams"] is False
        # the metric of the experiment is looked up in run-0/validation
        # (its own run); run-0 itself has none
        assert "epoch_accuracy" not in r0["metrics"]
        assert rows["run-0/validation"]["metrics"]["epoch_accuracy"]["count"] == 3


def test_damaged_and_bad_params():
    logdir = os.path.join(TMP, "damaged")
    good = encode('session_start_info { hparams { key: "a" value { bool_value: true } } }')
    write(os.path.join(logdir, "r", "events.out.tfevents.1.h.1.0"), [
        event(1.0, summary=hp_value("_hparams_/session_start_info", good, None)),
        event(1.0, summary=hp_value("_hparams_/session_end_info",
                                    b"\x22\x05\x08", None)),  # truncated
        event(2.0, 0, summary=scalars_summary([("loss", 1.0)])),
    ])
    with Server(TFBOARD, logdir, "--reload_interval", "0") as srv:
        srv.wait_loaded()
        rows = srv.json("/data/plugin/hparams/runs")
        r = rows[0]
        assert r["hparams"] == {"a": True} and r["status"] is None, r
        assert "not readable" in r["note"], r
        for q in ({"tag": "loss"}, {"group_by": "hparam:a"},
                  {"tag": "loss", "group_by": "nope"},
                  {"tag": "loss", "group_by": "regex:("},
                  {"tag": "loss", "group_by": "hparam:a", "runs": "[1"}):
            st, ct, body = srv.get("/data/plugin/hparams/groups", **q)
            assert st == 400 and "error" in json.loads(body), (q, st, body)
        g = srv.json("/data/plugin/hparams/groups", tag="loss",
                     group_by="hparam:a", runs=json.dumps(["r"]))
        assert g["groups"][0]["key"] == "true"
        assert g["groups"][0]["points"] == [[0, 1, 1, 1, 0, 1, 0]], g
        g = srv.json("/data/plugin/hparams/groups", tag="loss",
                     group_by="hparam:a", runs="[]")
        assert g["groups"] == [] and not math.isnan(g["left_out"])


def send(srv, method, path, body=b"", ctype="application/json"):
    c = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=10)
    try:
        hdrs = {"Content-Type": ctype} if ctype else {}
        c.request(method, path, body=body, headers=hdrs)
        r = c.getresponse()
        return r.status, dict(r.getheaders()), r.read()
    finally:
        c.close()


def test_layout_put():
    """/data/plugin/scalars/layout: GET reads <logdir>/tfboard_layout.json,
    PUT writes it: JSON objects only, application/json only, 64 KiB at
    most, and no other route or method accepts a body."""
    logdir = os.path.join(TMP, "layout")
    write(os.path.join(logdir, "a", "events.out.tfevents.1.h.1.0"),
          [event(2.0, 0, summary=scalars_summary([("loss", 1.0)]))])
    path = os.path.join(logdir, "tfboard_layout.json")
    L = "/data/plugin/scalars/layout"
    with Server(TFBOARD, logdir, "--reload_interval", "0") as srv:
        srv.wait_loaded()
        assert srv.json(L) == {"layout": None}
        lay = {"version": 1, "multi": ["loss/(train|val)"],
               "group": "hparam:lr", "band": "std", "note": "\u00e9 \"q\""}
        st, hdrs, body = send(srv, "PUT", L, json.dumps(lay).encode())
        assert st == 200 and json.loads(body)["saved"] is True, (st, body)
        assert json.load(open(path)) == lay
        assert srv.json(L) == {"layout": lay}
        st, _, _ = send(srv, "PUT", L, json.dumps(lay).encode(),
                        "application/json; charset=utf-8")
        assert st == 200
        # refused: other types, bad JSON, not an object, too big
        for body, ctype, want in (
                (b'{"a":1}', "text/plain", 415),
                (b'{"a":1}', None, 415),
                (b'{"a":1}', "application/x-www-form-urlencoded", 415),
                (b'{"a":', "application/json", 400),
                (b'[1,2]', "application/json", 400),
                (b'{"a":1} x', "application/json", 400),
                (b'{"a":"\x01"}', "application/json", 400),
                (b'{"a":"\xff"}', "application/json", 400),
                (b'[' * 100 + b']' * 100, "application/json", 400),
                (b'{"a":"' + b"x" * 70000 + b'"}', "application/json", 413)):
            st, _, rb = send(srv, "PUT", L, body, ctype)
            assert st == want, (body[:20], ctype, st, rb[:200])
            assert "error" in json.loads(rb)
        assert json.load(open(path)) == lay  # unchanged by the refusals
        # only this route takes PUT, and only PUT (no POST, no preflight)
        st, _, _ = send(srv, "PUT", "/data/plugin/scalars/tags", b"{}")
        assert st == 405, st
        st, _, _ = send(srv, "POST", L, b"{}")
        assert st == 405, st
        st, hdrs, _ = send(srv, "OPTIONS", L, b"", None)
        assert st == 405, st
        assert not any(k.lower().startswith("access-control") for k in hdrs)
        # a hand-edited file that is not an object is ignored, with a note
        with open(path, "w") as f:
            f.write("not json")
        got = srv.json(L)
        assert got["layout"] is None and "not a JSON object" in got["error"]


try:
    run_tests([test_pytorch_layouts, test_keras_layout,
               test_damaged_and_bad_params, test_layout_put])
finally:
    shutil.rmtree(TMP, ignore_errors=True)
