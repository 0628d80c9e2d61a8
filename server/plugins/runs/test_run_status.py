#!/usr/bin/env python3
"""Run status in /data/runs_info and `tfboard report` (issue 23, part 1).

A real writer (tests/integration/alerts_writer, libtfboard) in four runs:
  finished  closed with an exit reason            -> finished + reason
  killed    SIGKILLed after its steps, same host  -> crashed (pid gone)
  hung      alive, stops writing                  -> running, then stalled
            once max(--stall_after, 20 x median step interval) passed
  diverge   examples/mlp_train --lr 5             -> diverged at the step
            mlp_train printed for its first non-finite loss
Two hand-written files of a writer that is gone:
  skewed    its end record's wall time is 2 ULP (~0.5 us) before its last
            scalar's, as two CLOCK_REALTIME reads on two CPUs of a VM
            give                                  -> finished
  resumed   end record, then 10 s later more steps -> crashed
A directory of trace files only (trace_only) has no status: null.
Arguments: the tfboard binary, the alerts_writer binary.
"""
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

# The integration tests' helpers (tests/integration/).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "..", "tests", "integration"))
from tfb_server_util import Server  # noqa: E402
import tfevents_py as tfe  # noqa: E402

TFBOARD, WRITER = sys.argv[1], sys.argv[2]
BUILD = os.environ.get("TFB_BUILD_ROOT", "")
MLP = os.path.join(BUILD, "examples", "mlp_train")


def start_writer(run_dir, n, ms, mode, *reason):
    p = subprocess.Popen([WRITER, run_dir, str(n), str(ms), mode] +
                         list(reason), stdout=subprocess.PIPE, text=True)
    line = p.stdout.readline()
    assert line.startswith("ready "), line
    return p


def status_of(srv):
    st, _, body = srv.get("/data/runs_info")
    assert st == 200
    return {r["name"]: r["status"] for r in json.loads(body)}


def wait_for(srv, run, state, limit=20):
    t0 = time.time()
    last = None
    while time.time() - t0 < limit:
        last = status_of(srv).get(run)
        if last and last["state"] == state:
            return last
        time.sleep(0.1)
    raise AssertionError("%s: wanted %s, last %r" % (run, state, last))


def end_record(wall, reason):
    """The end-of-run record libtfboard's close writes (run_end.h)."""
    r = reason.encode()
    tensor = tfe.key(1, 0) + tfe.varint(7) + tfe.ld(2, b"") + tfe.ld(8, r)
    meta = tfe.ld(1, tfe.ld(1, b"tfboard_run_end") + tfe.ld(2, r))
    value = tfe.ld(1, b"tfboard/run_end") + tfe.ld(8, tensor) + \
        tfe.ld(9, meta)
    return tfe.event(wall, summary=tfe.ld(1, value))


def write_gone_run(run_dir, events):
    """An event file named for a pid that no process has."""
    os.makedirs(run_dir)
    pid = 4194000  # above pid_max's default: never a live process here
    name = "events.out.tfevents.%d.%s.%d.0" % (int(events[0][0]),
                                              os.uname().nodename, pid)
    with open(os.path.join(run_dir, name), "wb") as f:
        f.write(tfe.record(tfe.event(events[0][0],
                                     file_version="brain.Event:2")))
        for wall, payload in events:
            f.write(tfe.record(payload))


def main():
    tmp = tempfile.mkdtemp(prefix="tfb_status_")
    procs = []
    try:
        t0 = float(int(time.time()))
        steps = [(t0 + i * 0.01, tfe.event(t0 + i * 0.01, i,
                  summary=tfe.scalars_summary([("loss", 1.0 / (i + 1))])))
                 for i in range(20)]
        last = steps[-1][0]
        skew = last - 2 * (2.0 ** -22)  # 2 ULP at this magnitude
        assert skew < last
        write_gone_run(os.path.join(tmp, "skewed"),
                       steps + [(skew, end_record(skew, "completed"))])
        os.makedirs(os.path.join(tmp, "trace_only"))
        with open(os.path.join(tmp, "trace_only", "w.pt.trace.json"),
                  "w") as f:
            f.write('{"traceEvents": [{"ph": "X", "cat": "cpu_op", '
                    '"name": "aten::mm", "pid": 1, "tid": 1, "ts": 10, '
                    '"dur": 5}]}')
        write_gone_run(os.path.join(tmp, "resumed"),
                       steps + [(last, end_record(last, "completed"))] +
                       [(last + 10 + i, tfe.event(last + 10 + i, 20 + i,
                         summary=tfe.scalars_summary([("loss", 0.01)])))
                        for i in range(3)])
        fin = start_writer(os.path.join(tmp, "finished"), 50, 0, "close",
                           "early stop: $(rm -rf /) `x`")
        assert fin.wait(10) == 0
        killed = start_writer(os.path.join(tmp, "killed"), 50, 0, "hang")
        procs.append(killed)
        killed.send_signal(signal.SIGKILL)
        killed.wait(10)
        # 40 steps 20 ms apart: a median interval near 0.02 s, so the
        # threshold is --stall_after (1.5 s), not 20 x 0.02.
        hung = start_writer(os.path.join(tmp, "hung"), 40, 20, "hang")
        procs.append(hung)
        nan_step = None
        if os.path.exists(MLP):
            out = subprocess.run([MLP, "--logdir", tmp, "--name", "diverge",
                                  "--steps", "100", "--lr", "5"],
                                 capture_output=True, text=True, timeout=60)
            m = re.search(r"first non-finite loss at step (\d+)",
                          out.stdout + out.stderr)
            assert m, out.stdout + out.stderr
            nan_step = int(m.group(1))
        with Server(TFBOARD, tmp, "--reload_interval", "0.2",
                    "--stall_after", "1.5") as srv:
            s = wait_for(srv, "finished", "finished")
            assert s["ended"] is True
            assert s["reason"] == "early stop: $(rm -rf /) `x`", s
            s = wait_for(srv, "skewed", "finished")
            assert s["ended"] is True and s["reason"] == "completed", s
            st = status_of(srv)
            assert "trace_only" in st and st["trace_only"] is None, st
            s = wait_for(srv, "resumed", "crashed")
            assert s["ended"] is False and s["process"] == "gone", s
            s = wait_for(srv, "killed", "crashed")
            assert s["process"] == "gone" and s["pid"] == killed.pid, s
            assert s["ended"] is False
            s = status_of(srv)["hung"]
            assert s["state"] == "running", s
            assert s["process"] == "alive" and s["pid"] == hung.pid, s
            assert 0.01 < s["step_interval"] < 0.5, s
            assert s["stall_after"] == 1.5, s
            s = wait_for(srv, "hung", "stalled", limit=10)
            assert s["idle_s"] > 1.5, s
            if nan_step is not None:
                s = wait_for(srv, "diverge", "diverged")
                assert s["diverged_step"] == nan_step, (s, nan_step)
                assert s["diverged_why"] == "non-finite"
                # mlp_train closes its writer: the run ended, and diverged.
                assert s["ended"] is True
        rep = subprocess.run([TFBOARD, "report", "--logdir", tmp,
                              "--stall_after", "1.5", "--quiet"],
                             capture_output=True, text=True, timeout=60)
        assert rep.returncode == 0, rep.stderr
        assert "status: finished: early stop: $(rm -rf /) `x`" in rep.stdout, \
            rep.stdout
        assert "status: crashed (no end record; process %d is gone)" \
            % killed.pid in rep.stdout, rep.stdout
        assert re.search(r"status: stalled \(no new event for \d+ s; "
                         r"threshold 2 s\)", rep.stdout), rep.stdout
        if nan_step is not None:
            assert ("status: diverged at step %d (non-finite in " % nan_step
                    ) in rep.stdout, rep.stdout
        js = subprocess.run([TFBOARD, "report", "--logdir", tmp, "--format",
                             "json", "--quiet"], capture_output=True,
                            text=True, timeout=60)
        runs = {r["run"]: r for r in json.loads(js.stdout)["runs"]}
        assert runs["finished"]["status"] == "finished"
        assert runs["killed"]["status"] == "crashed"
        # A bad regex is a usage error.
        bad = subprocess.run([TFBOARD, "report", "--logdir", tmp,
                              "--loss_tags", "("], capture_output=True,
                             text=True, timeout=30)
        assert bad.returncode == 2 and "--loss_tags" in bad.stderr, bad
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
        subprocess.run(["rm", "-rf", tmp])
    print("ok")


if __name__ == "__main__":
    main()
