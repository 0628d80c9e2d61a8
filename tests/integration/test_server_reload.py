"""Reloading and the command line of the real tfboard binary: a growing
file (cut mid-record, then completed), new runs and files, a replaced
file, a deleted file; the shared testdata corpus; missing logdir, port in
use, bad options, --help/--version, --host/--bind_all.

usage: test_server_reload.py TFBOARD GEN_LOGDIR"""
import glob
import os
import shutil
import socket
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tfb_server_util import Server, run_tests, wait_for  # noqa: E402

TFBOARD, GEN = sys.argv[1], sys.argv[2]
TMP = tempfile.mkdtemp(prefix="tfb_reload_")
SRC = os.path.join(TMP, "src")
subprocess.run([GEN, "basic", SRC], check=True)
RUN_B_FILE = glob.glob(os.path.join(SRC, "sub", "run_b", "*tfevents*"))[0]
with open(RUN_B_FILE, "rb") as f:
    RUN_B = f.read()


def count(s, run, tag="loss"):
    st, _, body = s.get("/data/plugin/scalars/scalars", run=run, tag=tag)
    if st == 404:
        return -1
    import json
    return len(json.loads(body))


def test_growing_file_and_new_runs():
    logdir = os.path.join(TMP, "grow")
    os.makedirs(os.path.join(logdir, "g"))
    path = os.path.join(logdir, "g", "events.out.tfevents.1.host")
    cut = len(RUN_B) // 2 + 7  # somewhere inside a record
    with open(path, "wb") as f:
        f.write(RUN_B[:cut])
    with Server(TFBOARD, logdir, "--reload_interval", "0.2") as s:
        s.wait_loaded()
        first = count(s, "g")
        assert 0 < first < 50, first
        info = s.json("/data/runs_info")[0]
        assert info["files"][0]["truncated_tail"] is True
        with open(path, "ab") as f:
            f.write(RUN_B[cut:])
        wait_for(lambda: count(s, "g") == 50, "appended points")
        pts = s.json("/data/plugin/scalars/scalars", run="g", tag="loss")
        assert [p[1] for p in pts] == list(range(50))  # no gap, no double
        # a new run appears on a later reload
        os.makedirs(os.path.join(logdir, "late"))
        shutil.copy(RUN_B_FILE, os.path.join(logdir, "late",
                                             "events.out.tfevents.2.host"))
        wait_for(lambda: "late" in s.json("/data/runs"), "new run")
        wait_for(lambda: count(s, "late") == 50, "new run's points")
        # a second file in an existing run is read after the first
        shutil.copy(RUN_B_FILE, os.path.join(logdir, "g",
                                             "events.out.tfevents.3.host"))
        wait_for(lambda: count(s, "g") == 100, "second file of a run")


def test_replaced_and_deleted_files():
    logdir = os.path.join(TMP, "repl")
    os.makedirs(os.path.join(logdir, "r"))
    path = os.path.join(logdir, "r", "events.out.tfevents.1.host")
    with open(path, "wb") as f:
        f.write(RUN_B)
    with Server(TFBOARD, logdir, "--reload_interval", "0.2") as s:
        s.wait_loaded()
        assert count(s, "r") == 50
        # replaced by a shorter file (new inode): the run is read again
        # from the start and holds only what the new file has
        short = RUN_B[: len(RUN_B) // 3]
        tmp = path + ".tmp"
        with open(tmp, "wb") as f:
            f.write(short)
        os.replace(tmp, path)
        wait_for(lambda: 0 < count(s, "r") < 50, "reset after replace")
        n_short = count(s, "r")
        pts = s.json("/data/plugin/scalars/scalars", run="r", tag="loss")
        assert [p[1] for p in pts] == list(range(n_short))
        # truncated in place below what was read: also a reset
        with open(path, "r+b") as f:
            f.truncate(len(RUN_B) // 6)
        wait_for(lambda: 0 < count(s, "r") < n_short, "reset after truncate")
        # deleted: the data already loaded stays served
        kept = count(s, "r")
        os.remove(path)
        p0 = s.json("/data/plugin/core/progress")["reloads"]
        wait_for(lambda: s.json("/data/plugin/core/progress")["reloads"]
                 >= p0 + 2, "reloads after delete")
        assert count(s, "r") == kept
        # even the whole logdir going away leaves the server serving
        shutil.rmtree(logdir)
        p0 = s.json("/data/plugin/core/progress")["reloads"]
        wait_for(lambda: s.json("/data/plugin/core/progress")["reloads"]
                 >= p0 + 2, "reloads after the logdir went away")
        assert count(s, "r") == kept
        assert s.json("/data/runs") == ["r"]
        assert s.proc.poll() is None


def test_unreadable_file_keeps_serving():
    if os.geteuid() == 0:
        print("skip: root reads every file")
        return
    logdir = os.path.join(TMP, "unread")
    os.makedirs(os.path.join(logdir, "ok"))
    os.makedirs(os.path.join(logdir, "bad"))
    shutil.copy(RUN_B_FILE, os.path.join(logdir, "ok", "a.tfevents.1"))
    bad = os.path.join(logdir, "bad", "a.tfevents.1")
    shutil.copy(RUN_B_FILE, bad)
    os.chmod(bad, 0)
    with Server(TFBOARD, logdir, "--reload_interval", "0") as s:
        s.wait_loaded()
        assert count(s, "ok") == 50
        info = {r["name"]: r for r in s.json("/data/runs_info")}
        assert info["bad"]["files"][0]["error"]


def test_shared_testdata_corpus():
    td = os.environ.get("TFB_TESTDATA")
    if not td or not os.path.isdir(os.path.join(td, "tfevents")):
        print("skip: TFB_TESTDATA not set")
        return
    with Server(TFBOARD, os.path.join(td, "tfevents"),
                "--reload_interval", "0") as s:
        s.wait_loaded()
        runs = s.json("/data/runs")
        assert len(runs) == 13, runs
        assert "lingvo" in runs and "katib/logs/train" in runs
        # ordered by first wall time: the 2017 truncated file comes early
        assert runs.index("morvan_tutorials/tf20_RNN2.2/logs") < \
            runs.index("lingvo")
        tags = s.json("/data/plugin/scalars/tags")
        assert len(tags["lingvo"]) == 7
        for t in tags["lingvo"]:
            assert count(s, "lingvo", t) == 360, t
        assert sorted(tags["katib/logs/train"]) == ["accuracy", "loss"]
        assert count(s, "katib/logs/train", "loss") == 10
        for r in ("run_1", "run_2", "run_3"):
            assert count(s, "tensorboard_reducer/strict/" + r,
                         "strict/foo") == 100
        assert count(s, "wandb/catboost_info/learn", "MultiClass") == 10
        assert count(s, "guild/filter-runs/fa6f74adb50a4abb8f49840993f081f7",
                     "loss") == 1
        h = s.json("/data/plugin/histograms/tags")
        assert len(h["morvan_tutorials/tf15_tensorboard/logs"]) == 6
        hist = s.json("/data/plugin/histograms/histograms",
                      run="morvan_tutorials/tf15_tensorboard/logs",
                      tag="layer1/weights/layer1/weights")
        assert len(hist) == 20
        assert count(s, "morvan_tutorials/tf15_tensorboard/logs",
                     "loss/loss") == 20
        # 47 simple_value tags in the complex file + "loss" in the simple one
        assert len(tags["wandb/fixtures"]) == 48
        assert count(s, "wandb/fixtures", "loss") == 1
        # keras train run (a .v2 file and a .profile-empty file): batch_*
        # and epoch_* simple values; its string tensors (plugins
        # graph_keras_model, graph_run_metadata_graph) are not text
        train = "tfx_iris_keras/model_run/8/train"
        assert sorted(tags[train]) == [
            "batch_loss", "batch_sparse_categorical_accuracy", "epoch_loss",
            "epoch_sparse_categorical_accuracy"]
        assert count(s, train, "batch_loss") == 100
        assert count(s, train, "epoch_loss") == 20
        assert s.json("/data/plugin/text/tags") == {}
        info_train = [r for r in s.json("/data/runs_info")
                      if r["name"] == train][0]
        assert len(info_train["files"]) == 2
        # keras: epoch_* scalars of the train run (two files in it)
        assert "epoch_loss" in tags["tfx_iris_keras/model_run/8/validation"]
        assert count(s, "tfx_iris_keras/model_run/8/validation",
                     "epoch_loss") == 20
        # the truncated file (#9): its two complete records load
        info = {r["name"]: r for r in s.json("/data/runs_info")}
        f9 = info["morvan_tutorials/tf20_RNN2.2/logs"]["files"][0]
        assert f9["records"] == 2 and f9["truncated_tail"] is True
        assert f9["corrupt_records"] == 0
        for r in info.values():
            for f in r["files"]:
                assert f["corrupt_records"] == 0 and f["error"] is None, f


def run_cli(*args, timeout=10):
    return subprocess.run([TFBOARD] + list(args), capture_output=True,
                          text=True, timeout=timeout)


def test_cli_help_version_errors():
    r = run_cli("--help")
    assert r.returncode == 0 and "--logdir" in r.stdout
    assert "--reload_interval" in r.stdout and "--bind_all" in r.stdout
    r = run_cli("--version")
    assert r.returncode == 0 and r.stdout.startswith("tfboard ")
    r = run_cli()
    assert r.returncode != 0 and "--logdir" in r.stderr
    r = run_cli("--logdir", os.path.join(TMP, "does-not-exist"))
    assert r.returncode != 0 and "does-not-exist" in r.stderr, r.stderr
    assert "No such file" in r.stderr
    r = run_cli("--logdir", SRC, "--port", "99999")
    assert r.returncode != 0 and "--port" in r.stderr
    r = run_cli("--logdir", SRC, "--reload_interval", "-1")
    assert r.returncode != 0
    r = run_cli("--logdir", SRC, "--frobnicate")
    assert r.returncode != 0 and "--frobnicate" in r.stderr


def test_port_in_use():
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(1)
    port = sock.getsockname()[1]
    try:
        r = run_cli("--logdir", SRC, "--port", str(port))
        assert r.returncode != 0
        assert "already in use" in r.stderr and str(port) in r.stderr, \
            r.stderr
    finally:
        sock.close()


def test_host_and_bind_all():
    with Server(TFBOARD, SRC, "--host", "127.0.0.1",
                "--reload_interval", "0") as s:
        assert "http://127.0.0.1:" in s.banner
        s.wait_loaded()
        assert s.json("/data/runs")
    # (--no_auth: bound beyond loopback a token is needed, test_auth.py)
    with Server(TFBOARD, SRC, "--bind_all", "--no_auth",
                "--reload_interval", "0") as s:
        # reachable on loopback; the banner names this host
        s.wait_loaded()
        assert s.json("/data/runs")
        assert "http://" in s.banner and "127.0.0.1" not in s.banner
    r = run_cli("--logdir", SRC, "--host", "203.0.113.7", "--port", "0")
    assert r.returncode != 0 and "203.0.113.7" in r.stderr, r.stderr


try:
    run_tests([test_growing_file_and_new_runs, test_replaced_and_deleted_files,
               test_unreadable_file_keeps_serving, test_shared_testdata_corpus,
               test_cli_help_version_errors, test_port_in_use,
               test_host_and_bind_all])
finally:
    shutil.rmtree(TMP, ignore_errors=True)
