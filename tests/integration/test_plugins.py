"""The plugin table seen from outside: /data/plugins_listing lists every
dashboard in tab order with `enabled` matching the data, every plugin's
routes answer, and a dashboard added from outside server/ (the
tfboard_testplug build) appears in the listing, serves its page module and
its route, and writes its report section.

usage: test_plugins.py TFBOARD GEN_LOGDIR TFBOARD_TESTPLUG"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tfb_server_util import Server, run_tests  # noqa: E402
from tfevents_py import event, record, scalars_summary  # noqa: E402

TFBOARD, GEN, TESTPLUG = sys.argv[1], sys.argv[2], sys.argv[3]
BUILTIN = ["scalars", "runs", "histograms", "distributions", "images", "text",
           "health", "gradients", "gpu", "pipeline", "ranks", "hparams", "compare",
           "pr_curves", "custom_scalars", "alerts"]
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
        assert on == {"scalars", "runs", "health", "alerts"}, on
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
    with Server(TESTPLUG, logdir, "--reload_interval", "0") as srv:
        srv.wait_loaded()
        lst = listing(srv)
        assert list(lst) == BUILTIN + ["testplug"], list(lst)
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
               test_plugin_from_outside])
finally:
    shutil.rmtree(TMP, ignore_errors=True)
