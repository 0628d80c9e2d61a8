"""The plugin table seen from outside: /data/plugins_listing lists every
dashboard of server/plugins/plugins.list in its order with `enabled`
matching the data, every plugin's routes answer, and a dashboard added as a
folder and one line of tests/plugin/plugins.list (the tfboard_testplug
build) appears in the listing, serves its page module and its routes
(one of them from its own value decoder), writes its report section, and
has its section in that build's API reference, after the built-in ones.

usage: test_plugins.py TFBOARD GEN_LOGDIR TFBOARD_TESTPLUG"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tfb_server_util import Server, run_tests  # noqa: E402
from tfevents_py import (event, f_float, ld, record,  # noqa: E402
                         scalars_summary)

TFBOARD, GEN, TESTPLUG = sys.argv[1], sys.argv[2], sys.argv[3]
ROOT = os.environ["TFB_SOURCE_ROOT"]
BUILD = os.environ["TFB_BUILD_ROOT"]


def plugin_list(path):
    """The names of a plugins.list: one a line, '#' comments."""
    with open(os.path.join(ROOT, path)) as f:
        return [l.strip() for l in f if l.strip() and not l.startswith("#")]


BUILTIN = plugin_list("server/plugins/plugins.list")
EXTRA = plugin_list("tests/plugin/plugins.list")
TMP = tempfile.mkdtemp(prefix="tfb_plugins_")


def write_run(logdir, run, tags):
    d = os.path.join(logdir, run)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "events.out.tfevents.1.test"), "wb") as f:
        f.write(record(event(1.0, file_version="brain.Event:2")))
        for step in range(3):
            f.write(record(event(1.0 + step, step,
                                 summary=scalars_summary(
                                     [(t, float(step)) for t in tags]))))


def write_decoded_run(logdir, run):
    """Steps 0..2 of `loss` and of `tp_value`, whose first value carries
    the plugin name "testplug" (Summary.Value.metadata.plugin_data)."""
    d = os.path.join(logdir, run)
    os.makedirs(d, exist_ok=True)
    meta = ld(9, ld(1, ld(1, b"testplug")))
    with open(os.path.join(d, "events.out.tfevents.1.test"), "wb") as f:
        f.write(record(event(1.0, file_version="brain.Event:2")))
        for step in range(3):
            v = ld(1, ld(1, b"tp_value") + f_float(2, float(step)) +
                   (meta if step == 0 else b""))
            f.write(record(event(1.0 + step, step,
                                 summary=scalars_summary([("loss", 1.0)]) + v)))


def test_api_reference():
    """The build collects core's API.md and each dashboard's, in tab
    order; the test build's has the test dashboard's section last."""
    def headings(path):
        with open(os.path.join(BUILD, path)) as f:
            return [l for l in f.read().split("\n") if l.startswith("## ")]
    def plugin_of(h):
        i = h.find("/data/plugin/")
        return h[i + len("/data/plugin/"):].split("/")[0] if i >= 0 else None
    prod = headings("server/API.md")
    test = headings("tests/plugin/API.md")
    assert test[:len(prod)] == prod, (prod, test)
    assert [plugin_of(h) for h in test[len(prod):]] == EXTRA, test
    assert not any("testplug" in h for h in prod), prod
    named = [plugin_of(h) for h in prod if plugin_of(h)]
    # every dashboard with routes has its section, in list order
    assert named == [p for p in BUILTIN if p in named], named
    for p in BUILTIN:
        assert os.path.exists(os.path.join(ROOT, "server/plugins", p,
                                           "API.md")), p


def listing(srv):
    st, _, body = srv.get("/data/plugins_listing")
    assert st == 200, st
    return json.loads(body)


def test_builtin_listing_matches_data():
    logdir = os.path.join(TMP, "scalars_only")
    write_run(logdir, "a", ["loss"])
    with Server(TFBOARD, logdir, "--reload_interval", "0") as srv:
        srv.wait_loaded()
        lst = listing(srv)
        assert list(lst) == BUILTIN, list(lst)
        on = {k for k, v in lst.items() if v["enabled"]}
        assert on == {"scalars", "runs", "health", "alerts", "query"}, on
        for name, v in lst.items():
            assert v["tab_name"], name
            if name == "custom_scalars":
                # Data only: its layout opens on the Scalars page.
                assert v["loading_mechanism"] == {"type": "NONE"}, v
                continue
            assert v["loading_mechanism"]["type"] == "JS_MODULE", name
            path = v["loading_mechanism"]["module_path"]
            assert path == "js/pages/%s.js" % name, path
            st, ctype, body = srv.get("/" + path)
            assert st == 200 and "javascript" in ctype, (path, st, ctype)
            assert b"export default" in body, path


def test_listing_follows_new_data():
    logdir = os.path.join(TMP, "growing")
    write_run(logdir, "a", ["loss"])
    with Server(TFBOARD, logdir, "--reload_interval", "1") as srv:
        srv.wait_loaded()
        assert not listing(srv)["pipeline"]["enabled"]
        assert not listing(srv)["compare"]["enabled"]  # one run
        write_run(logdir, "b", ["pipeline/step_ms", "pipeline/input_ms",
                                "grad_norm/fc1"])
        import time
        end = time.time() + 15
        while time.time() < end:
            lst = listing(srv)
            if lst["pipeline"]["enabled"]:
                break
            time.sleep(0.2)
        assert lst["pipeline"]["enabled"] and lst["gradients"]["enabled"]
        assert lst["compare"]["enabled"]  # two runs now


def test_plugin_from_outside():
    logdir = os.path.join(TMP, "testplug")
    write_run(logdir, "plain", ["loss"])
    write_run(logdir, "marked", ["loss", "testplug/a", "testplug/b"])
    write_decoded_run(logdir, "decoded")
    with Server(TESTPLUG, logdir, "--reload_interval", "0") as srv:
        srv.wait_loaded()
        lst = listing(srv)
        assert list(lst) == BUILTIN + EXTRA, list(lst)
        tp = lst["testplug"]
        assert tp["enabled"] is True
        assert tp["tab_name"] == "Test plugin"
        path = tp["loading_mechanism"]["module_path"]
        st, ctype, body = srv.get("/" + path)
        assert st == 200 and "javascript" in ctype
        assert b"data/plugin/testplug/runs" in body
        st, _, body = srv.get("/data/plugin/testplug/runs")
        assert st == 200
        assert json.loads(body) == {"runs": {"marked": 2}}
        st, _, _ = srv.get("/data/plugin/testplug/nope")
        assert st == 404
        # Its value decoder kept the values of its own plugin, which made
        # no scalar series.
        st, _, body = srv.get("/data/plugin/testplug/values")
        assert st == 200
        assert json.loads(body) == {"runs": {"decoded": {
            "values": 3, "last_step": 2, "sum": 3.0}}}, body
        st, _, body = srv.get("/data/plugin/scalars/tags")
        tags = json.loads(body)
        assert "tp_value" not in tags.get("decoded", {}), tags
        assert "loss" in tags["decoded"], tags
    out = subprocess.run([TESTPLUG, "report", "--logdir", logdir],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "testplug: 2 tags" in out.stdout, out.stdout
    # Its own option (from its descriptor), in serve mode, the report and
    # --help; a bad value is a usage error.
    with Server(TESTPLUG, logdir, "--reload_interval", "0",
                "--testplug-min-tags", "3") as srv:
        srv.wait_loaded()
        st, _, body = srv.get("/data/plugin/testplug/runs")
        assert st == 200 and json.loads(body) == {"runs": {}}, body
        assert listing(srv)["testplug"]["enabled"] is False
    out = subprocess.run([TESTPLUG, "report", "--logdir", logdir,
                          "--testplug_min_tags=3"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "testplug:" not in out.stdout, out.stdout
    for argv in (["--help"], ["report", "--help"]):
        out = subprocess.run([TESTPLUG] + argv, capture_output=True,
                             text=True, timeout=60)
        assert out.returncode == 0, out.stderr
        # --help spells options with '_' (issue 33); '-' is accepted
        assert "--testplug_min_tags N" in out.stdout, out.stdout
        assert "--grad_vanish X" in out.stdout, out.stdout
    out = subprocess.run([TFBOARD, "--help"], capture_output=True,
                         text=True, timeout=60)
    assert "--testplug_min_tags" not in out.stdout
    for argv in (["--logdir", logdir, "--testplug-min-tags", "0"],
                 ["report", "--logdir", logdir, "--testplug-min-tags=x"],
                 ["--logdir", logdir, "--grad-vanish", "1",
                  "--grad-explode", "1"],
                 ["report", "--logdir", logdir, "--grad-vanish=500"]):
        out = subprocess.run([TESTPLUG] + argv, capture_output=True,
                             text=True, timeout=60)
        assert out.returncode == 2, (argv, out.returncode, out.stderr)
        assert out.stderr.strip(), argv
    # The plain build has no such plugin.
    with Server(TFBOARD, logdir, "--reload_interval", "0") as srv:
        srv.wait_loaded()
        assert "testplug" not in listing(srv)
        st, _, _ = srv.get("/data/plugin/testplug/runs")
        assert st == 404


try:
    run_tests([test_builtin_listing_matches_data, test_listing_follows_new_data,
               test_plugin_from_outside, test_api_reference])
finally:
    shutil.rmtree(TMP, ignore_errors=True)
