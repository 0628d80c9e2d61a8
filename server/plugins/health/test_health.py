#!/usr/bin/env python3
"""Integration test of the training-health routes (issue 4).

1. Runs examples/mlp_train with a learning rate that diverges and one that
   does not, into a temporary logdir, and reads what the program printed
   ("first non-finite value: tag T at step S", "first non-finite loss at
   step S").
2. Writes, by hand, an event file the way PyTorch's SummaryWriter does
   (TFRecord framing with masked CRC-32C computed here in pure Python,
   simple_value scalars, a HistogramProto) holding a NaN loss, an +Inf loss
   and a histogram whose max is +Inf: no file of ../shared/testdata holds a
   NaN (checked when TFB_TESTDATA is set).
3. Starts the real tfboard on 127.0.0.1 (an ephemeral port), and checks
   /data/plugin/health/alerts and /data/plugin/gradients/norms against all
   of that, including their 400/404 answers.

Arguments (tests/integration/meson.build): the tfboard binary, then the
logdir generator (unused here). mlp_train is found under TFB_BUILD_ROOT
(set by tests/meson.build); without it the test is skipped (exit 77).
Bounded in time; the server process is always killed.
"""

import json
import math
import os
import re
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request

BUILD = os.environ.get("TFB_BUILD_ROOT", "")
TFBOARD = (sys.argv[1] if len(sys.argv) > 1
           else os.path.join(BUILD, "server", "tfboard"))
MLP = os.path.join(BUILD, "examples", "mlp_train")
DEADLINE = time.monotonic() + 100


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    raise SystemExit(1)


def check(cond, msg):
    if not cond:
        fail(msg)


# The integration tests' helpers (tests/integration/).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "..", "tests", "integration"))
from tfevents_py import event, histo_value, record, scalar_value  # noqa: E402


FOREIGN_T0 = 1600000000.0  # long before the example runs: sorts first


def write_foreign_run(run_dir):
    """PyTorch-style run: loss NaN at step 5, +Inf at step 7; histogram
    'weights' with max = +Inf at step 2."""
    os.makedirs(run_dir)
    recs = [event(FOREIGN_T0, file_version="brain.Event:2")]
    for step in range(10):
        v = 1.0 / (step + 1)
        if step == 5:
            v = float("nan")
        elif step == 7:
            v = float("inf")
        recs.append(event(FOREIGN_T0 + 1 + step, step,
                          summary=scalar_value("train/loss", v)))
    for step in range(4):
        mx = float("inf") if step == 2 else 2.0
        recs.append(event(FOREIGN_T0 + 0.5 + step, step,
                          summary=histo_value("weights", -1.0, mx, 4.0, 1.0,
                                              [0.0, 1.0, 1.7976931348623157e308],
                                              [1.0, 2.0, 1.0])))
    path = os.path.join(run_dir, "events.out.tfevents.1600000000.host.4242.0")
    with open(path, "wb") as f:
        for r in recs:
            f.write(record(r))
    return path


# ---- shared testdata: any NaN there? -------------------------------------

def testdata_nan_files():
    root = os.environ.get("TFB_TESTDATA")
    if not root:
        return None
    found = []
    for d, _dirs, files in os.walk(os.path.join(root, "tfevents")):
        for name in files:
            if "tfevents" not in name:
                continue
            p = os.path.join(d, name)
            with open(p, "rb") as f:
                buf = f.read()
            if scan_for_nan(buf):
                found.append(p)
    return found


def fields(buf):
    pos = 0
    while pos < len(buf):
        k, pos = read_varint(buf, pos)
        num, wt = k >> 3, k & 7
        if wt == 0:
            v, pos = read_varint(buf, pos)
        elif wt == 1:
            v = buf[pos:pos + 8]
            pos += 8
        elif wt == 5:
            v = buf[pos:pos + 4]
            pos += 4
        elif wt == 2:
            n, pos = read_varint(buf, pos)
            v = buf[pos:pos + n]
            pos += n
        else:
            raise ValueError("wire type %d" % wt)
        if pos > len(buf):
            raise ValueError("truncated")
        yield num, wt, v


def read_varint(buf, pos):
    r = s = 0
    while True:
        if pos >= len(buf):
            raise ValueError("truncated varint")
        b = buf[pos]
        pos += 1
        r |= (b & 0x7F) << s
        if not b & 0x80:
            return r, pos
        s += 7


def scan_for_nan(buf):
    pos = 0
    while pos + 12 <= len(buf):
        (n,) = struct.unpack_from("<Q", buf, pos)
        if pos + 16 + n > len(buf):
            break
        payload = buf[pos + 12:pos + 12 + n]
        pos += 16 + n
        try:
            for num, _wt, v in fields(payload):
                if num != 5:
                    continue
                for n2, _w2, val in fields(v):
                    if n2 != 1:
                        continue
                    for n3, w3, v3 in fields(val):
                        if n3 == 2 and w3 == 5 and \
                                not math.isfinite(struct.unpack("<f", v3)[0]):
                            return True
                        if n3 == 5:
                            for n4, w4, v4 in fields(v3):
                                if w4 == 1 and not math.isfinite(
                                        struct.unpack("<d", v4)[0]):
                                    return True
        except ValueError:
            continue
    return False


# ---- server ---------------------------------------------------------------

def free_port():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def get(port, path):
    url = "http://127.0.0.1:%d%s" % (port, path)
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            return r.status, json.loads(r.read().decode())
    except urllib.error.HTTPError as e:
        body = e.read().decode()
        try:
            return e.code, json.loads(body)
        except ValueError:
            return e.code, body


def start_server(logdir):
    for _attempt in range(3):
        port = free_port()
        log = tempfile.TemporaryFile()
        proc = subprocess.Popen(
            [TFBOARD, "--logdir", logdir, "--port", str(port),
             "--host", "127.0.0.1", "--reload_interval", "0"],
            stdout=log, stderr=subprocess.STDOUT)
        while time.monotonic() < DEADLINE:
            if proc.poll() is not None:
                break
            try:
                st, prog = get(port, "/data/plugin/core/progress")
                if st == 200 and prog.get("done"):
                    return proc, port
            except (OSError, ValueError):
                pass
            time.sleep(0.1)
        if proc.poll() is None:
            fail("server did not finish loading in time")
        log.seek(0)
        print(log.read().decode(errors="replace"), file=sys.stderr)
    fail("server did not start")


def run_mlp(logdir, name, lr, steps):
    p = subprocess.run([MLP, "--logdir", logdir, "--name", name, "--lr",
                        str(lr), "--steps", str(steps), "--hist-every", "10"],
                       capture_output=True, text=True, timeout=60)
    check(p.returncode == 0, "mlp_train failed: %s %s" % (p.stdout, p.stderr))
    return p.stdout


def main():
    for exe in (TFBOARD, MLP):
        if not os.access(exe, os.X_OK):
            print("SKIP: %s not built" % exe)
            return 77

    nan_files = testdata_nan_files()
    if nan_files:
        print("testdata files holding NaN/Inf:", nan_files)

    tmp = tempfile.mkdtemp(prefix="tfb_health_it_")
    proc = None
    try:
        out = run_mlp(tmp, "diverge", 5, 400)
        m_any = re.search(r"first non-finite value: tag (\S+) at step (\d+)", out)
        m_loss = re.search(r"first non-finite loss at step (\d+)", out)
        check(m_any and m_loss, "the diverging run did not diverge:\n" + out)
        first_tag, first_step = m_any.group(1), int(m_any.group(2))
        loss_step = int(m_loss.group(1))
        check(first_step <= loss_step, "first value after the loss")

        out_ok = run_mlp(tmp, "healthy", 0.1, 60)
        check("no non-finite loss" in out_ok, "healthy run diverged:\n" + out_ok)

        write_foreign_run(os.path.join(tmp, "pytorch_nan"))

        proc, port = start_server(tmp)

        # -- alerts of the diverging run
        st, body = get(port, "/data/plugin/health/alerts?run=diverge")
        check(st == 200, "alerts?run=diverge: %s %s" % (st, body))
        alerts = body["alerts"]
        check(len(alerts) >= 1, "no alerts for the diverging run")
        for a in alerts:
            check(set(a) >= {"run", "tag", "first_step", "first_wall_time",
                             "nan", "pos_inf", "neg_inf", "events"},
                  "alert fields: %s" % a)
            check(a["run"] == "diverge", "alert of another run: %s" % a)
            check(a["events"] >= 1 and a["nan"] + a["pos_inf"] + a["neg_inf"] >= 1,
                  "empty alert: %s" % a)
        first = alerts[0]
        by_tag = {a["tag"]: a for a in alerts}
        check(first_tag in by_tag, "printed tag %s not in alerts %s" %
              (first_tag, [a["tag"] for a in alerts]))
        check(first["first_step"] == first_step,
              "first alert %s, program printed step %d" % (first, first_step))
        # The same wall time and step can hold several bad tags (one call
        # of the training loop logs many); then any of them is "first".
        mine = by_tag[first_tag]
        check(first["tag"] == first_tag or
              (mine["first_wall_time"] == first["first_wall_time"] and
               mine["first_step"] == first["first_step"]),
              "first alert %s, program printed tag %s" % (first, first_tag))
        check("loss" in by_tag and by_tag["loss"]["first_step"] == loss_step,
              "loss alert %s, printed %d" % (by_tag.get("loss"), loss_step))
        keys = [(a["first_wall_time"], a["first_step"]) for a in alerts]
        check(keys == sorted(keys), "alerts not ordered: %s" % keys)

        # -- the foreign run and the whole list
        st, body = get(port, "/data/plugin/health/alerts")
        check(st == 200, "alerts: %s" % st)
        every = body["alerts"]
        check(not any(a["run"] == "healthy" for a in every),
              "alerts for the healthy run: %s" % every)
        foreign = [a for a in every if a["run"] == "pytorch_nan"]
        ft = {a["tag"]: a for a in foreign}
        check("train/loss" in ft and "weights" in ft,
              "foreign NaN/Inf not found: %s" % foreign)
        loss = ft["train/loss"]
        check(loss["first_step"] == 5 and loss["nan"] == 1 and
              loss["pos_inf"] == 1 and loss["neg_inf"] == 0 and
              loss["events"] == 2, "foreign loss alert: %s" % loss)
        check(abs(loss["first_wall_time"] - (FOREIGN_T0 + 6)) < 1e-3,
              "foreign loss wall time: %s" % loss)
        check(ft["weights"]["first_step"] == 2 and ft["weights"]["events"] == 1,
              "foreign histogram alert: %s" % ft["weights"])
        check(every[0]["run"] == "pytorch_nan" and every[0]["tag"] == "weights",
              "the earliest trouble is the foreign histogram: %s" % every[0])
        check(len(every) == len(foreign) + len(alerts),
              "alerts of all runs != sum of per-run alerts")

        st, body = get(port, "/data/plugin/health/alerts?run=nope")
        check(st == 404 and "error" in body, "unknown run: %s %s" % (st, body))

        # -- gradient norms
        st, g = get(port, "/data/plugin/gradients/norms?run=diverge")
        check(st == 200, "norms: %s %s" % (st, g))
        layers = ["fc1/weight", "fc1/bias", "fc2/weight", "fc2/bias",
                  "fc3/weight", "fc3/bias"]
        check(g["layers"] == layers, "layers: %s" % g["layers"])
        check(g["steps"] == list(range(loss_step + 1)),
              "steps: %s..." % g["steps"][:5])
        check(len(g["norms"]) == len(layers) and
              all(len(r) == len(g["steps"]) for r in g["norms"]) and
              len(g["global"]) == len(g["steps"]), "table shape")
        check(isinstance(g["norms"][0][0], float) and g["norms"][0][0] > 0,
              "first norm: %s" % g["norms"][0][0])
        kinds = {f["kind"] for f in g["flags"]}
        check("exploding" in kinds, "no exploding flag in a diverging run")
        for f in g["flags"]:
            check(f["layer"] in layers + ["global"] and
                  f["kind"] in ("vanishing", "exploding", "nonfinite"),
                  "flag: %s" % f)
        # values agree with the flags: global at step 0 vs its flags
        g0 = g["global"][0]
        check(isinstance(g0, float) and g0 > 0, "global[0] = %s" % g0)
        st, g2 = get(port, "/data/plugin/gradients/norms?run=diverge"
                     "&vanish=0&explode=%r" % (g0 * 0.5))
        check(st == 200 and {"layer": "global", "step": 0,
                             "kind": "exploding"} in g2["flags"],
              "explode threshold not applied")
        st, g3 = get(port, "/data/plugin/gradients/norms?run=diverge"
                     "&vanish=%r&explode=1e300" % (g0 * 2))
        check(st == 200 and {"layer": "global", "step": 0,
                             "kind": "vanishing"} in g3["flags"],
              "vanish threshold not applied")
        nonfinite_steps = {f["step"] for f in g["flags"] if f["kind"] == "nonfinite"}
        for s in nonfinite_steps:
            check(s >= first_step, "non-finite norm before the first alert")

        st, h = get(port, "/data/plugin/gradients/norms?run=healthy")
        check(st == 200 and h["layers"] == layers and
              h["steps"] == list(range(60)), "healthy norms")
        check(all(f["kind"] != "nonfinite" for f in h["flags"]),
              "non-finite flag in the healthy run")

        st, e = get(port, "/data/plugin/gradients/norms?run=pytorch_nan")
        check(st == 200 and e["layers"] == [] and e["steps"] == [],
              "run without norms: %s" % e)
        for q, code in (("", 400), ("?run=nope", 404),
                        ("?run=diverge&vanish=abc", 400),
                        ("?run=diverge&vanish=-1", 400),
                        ("?run=diverge&vanish=5&explode=1", 400)):
            st, body = get(port, "/data/plugin/gradients/norms" + q)
            check(st == code and isinstance(body, dict) and "error" in body,
                  "norms%s: %s %s" % (q, st, body))
        proc.terminate()
        proc.wait(timeout=10)
        proc = None

        # -- the foreign corpus: alerts exactly where the independent scan
        #    above found NaN/Inf (none, today), and no false alarm
        if nan_files is not None:
            corpus = os.path.join(os.environ["TFB_TESTDATA"], "tfevents")
            proc, port = start_server(corpus)
            st, body = get(port, "/data/plugin/health/alerts")
            check(st == 200, "corpus alerts: %s" % st)
            runs_with_nan = {os.path.relpath(os.path.dirname(p), corpus)
                             for p in nan_files}
            got = {a["run"] for a in body["alerts"]}
            check(got == runs_with_nan, "corpus alerts in %s, NaN/Inf found in %s"
                  % (sorted(got), sorted(runs_with_nan)))
            st, runs = get(port, "/data/runs")
            check(st == 200 and len(runs) >= 10, "corpus runs: %s" % runs)
            for r in runs:
                st, g = get(port, "/data/plugin/gradients/norms?run=" +
                            urllib.parse.quote(r))
                check(st == 200 and g["layers"] == [], "corpus norms %s" % r)

        print("ok: first alert %s/%s at step %d; %d alerts in all" %
              (first["run"], first["tag"], first["first_step"], len(every)))
        return 0
    finally:
        if proc is not None:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
