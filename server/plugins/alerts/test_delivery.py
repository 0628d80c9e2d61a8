#!/usr/bin/env python3
"""Where the webhook's URL comes from, and delivery past a hung webhook
(issue 32, items 10 and 11).

- the URL is a credential and every local user reads a command line
  (/proc/PID/cmdline): it is taken from $TFBOARD_ALERT_WEBHOOK or from
  --alert_webhook_file FILE, which --help names; an explicit option
  outranks the environment; a bad file or both options are a usage error
  (exit 2) whose message names the file, never the URL;
- a webhook that accepts the connection and never answers holds back
  neither --on_alert (a queue and a thread per destination) nor the
  server's exit (the flush at exit is bounded, and what it could not
  deliver is counted on stderr).
Arguments: the tfboard binary.
"""
import http.server
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time

# The integration tests' helpers (tests/integration/).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "..", "tests", "integration"))
from tfb_server_util import Server, check_clean_exit  # noqa: E402
import tfevents_py  # noqa: E402

TFBOARD = sys.argv[1]
ENV = "TFBOARD_ALERT_WEBHOOK"


class Hook(http.server.BaseHTTPRequestHandler):
    """Takes every POST; keeps the bodies and the paths."""
    posts = []
    lock = threading.Lock()

    def do_POST(self):
        n = int(self.headers.get("Content-Length", 0))
        body = json.loads(self.rfile.read(n))
        with Hook.lock:
            Hook.posts.append((self.path, body))
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, *a):
        pass


def write_events(path, tag, points):
    now = time.time()
    data = tfevents_py.record(tfevents_py.event(now, file_version=
                                                "brain.Event:2"))
    for s, v in points:
        data += tfevents_py.record(tfevents_py.event(
            now, step=s, summary=tfevents_py.scalars_summary([(tag, v)])))
    with open(path + ".tmp", "wb") as f:
        f.write(data)
    os.rename(path + ".tmp", path)


def logdir_of(tmp, runs):
    d = os.path.join(tmp, "logs")
    for r in runs:
        os.makedirs(os.path.join(d, r))
        write_events(os.path.join(d, r, "events.out.tfevents.1.h"), "loss",
                     [(s, 9.0) for s in range(5)])
    return d


def watch(args, env_url=None, timeout=90):
    env = dict(os.environ)
    env.pop(ENV, None)
    if env_url is not None:
        env[ENV] = env_url
    return subprocess.run([TFBOARD, "watch"] + args, capture_output=True,
                          text=True, timeout=timeout, env=env)


def paths_posted():
    with Hook.lock:
        return sorted(p for p, _ in Hook.posts)


def test_url_sources(tmp, logdir, base):
    # --help says where else the URL may come from
    for cmd in ([TFBOARD, "--help"], [TFBOARD, "watch", "--help"]):
        h = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
        assert ENV in h.stdout and "--alert_webhook_file" in h.stdout, \
            h.stdout
    once = ["--logdir", logdir, "--once", "--alert", "loss>5"]

    # from the environment: nothing of it on the command line
    Hook.posts.clear()
    p = watch(once, env_url=base + "/env")
    assert p.returncode == 1, (p.returncode, p.stderr)
    assert paths_posted() == ["/env"] * 3, (Hook.posts, p.stderr)
    assert Hook.posts[0][1]["rule"] == "loss>5"

    # from a file (one line, its line end dropped)
    f = os.path.join(tmp, "hook.url")
    fd = os.open(f, os.O_WRONLY | os.O_CREAT, 0o600)
    os.write(fd, (base + "/file\n").encode())
    os.close(fd)
    Hook.posts.clear()
    p = watch(once + ["--alert_webhook_file", f], env_url=base + "/env")
    assert p.returncode == 1, (p.returncode, p.stderr)
    assert paths_posted() == ["/file"] * 3, (Hook.posts, p.stderr)

    # an explicit option outranks the environment
    Hook.posts.clear()
    p = watch(once + ["--alert_webhook", base + "/argv"],
              env_url=base + "/env")
    assert paths_posted() == ["/argv"] * 3, (Hook.posts, p.stderr)

    # usage errors: exit 2, the file named, the URL never shown
    secret = os.path.join(tmp, "secret.url")
    with open(secret, "w") as fh:
        fh.write("xoxb-not-a-url-SECRET\n")
    long_url = os.path.join(tmp, "long.url")
    with open(long_url, "w") as fh:
        fh.write("https://hooks.example/" + "a" * 5000 + "\n")
    two_lines = os.path.join(tmp, "two.url")
    with open(two_lines, "w") as fh:
        fh.write(base + "/a\n" + base + "/b\n")
    for args, why in (
            (["--alert_webhook_file", os.path.join(tmp, "nope")], "nope"),
            (["--alert_webhook_file", secret], "http:// or https://"),
            (["--alert_webhook_file", long_url], "longer than 4096"),
            (["--alert_webhook_file", two_lines], "one line"),
            (["--alert_webhook_file", f, "--alert_webhook", base],
             "contradict")):
        Hook.posts.clear()
        p = watch(once + args)
        assert p.returncode == 2, (args, p.returncode, p.stderr)
        assert why in p.stderr, (args, p.stderr)
        assert "SECRET" not in p.stderr and base not in p.stderr, p.stderr
        assert not Hook.posts
    p = watch(once, env_url="ftp://SECRET")
    assert p.returncode == 2 and ENV in p.stderr, p.stderr
    assert "SECRET" not in p.stderr


def test_hung_webhook(tmp, logdir):
    """A webhook that never answers: the server runs --on_alert for each
    run's alert at once, and stops within its bound."""
    hung = socket.socket()
    hung.bind(("127.0.0.1", 0))
    hung.listen(64)  # never accepted: connections wait in the backlog
    url_file = os.path.join(tmp, "hung.url")
    with open(url_file, "w") as fh:
        fh.write("http://127.0.0.1:%d/hook\n" % hung.getsockname()[1])
    mark = os.path.join(tmp, "cmd.out")
    script = os.path.join(tmp, "cmd.py")
    with open(script, "w") as fh:
        fh.write("import os, sys\n"
                 "with open(sys.argv[1], 'a') as f:\n"
                 "    f.write(os.environ['TFB_ALERT_RUN'] + '\\n')\n")
    srv = Server(TFBOARD, logdir, "--reload_interval", "0.2",
                 "--alert", "loss>5", "--alert_webhook_file", url_file,
                 "--on_alert", "%s %s %s" % (sys.executable, script, mark))
    srv.__enter__()
    try:
        # Generous for a loaded machine: one alert's webhook tries take
        # about 57 s, which each command waited out before.
        deadline = time.time() + 40
        got = []
        while time.time() < deadline:
            if os.path.exists(mark):
                got = sorted(open(mark).read().split())
                if len(got) == 3:
                    break
            time.sleep(0.1)
        assert got == ["a", "b", "c"], got
    finally:
        t0 = time.time()
        rc, err = srv.stop()  # SIGTERM; killed after 15 s
        took = time.time() - t0
        hung.close()
    check_clean_exit(rc, err)
    # the flush bound at exit is 5 s (TFB_ALERT_FLUSH_SERVE_S)
    assert took < 15, took
    assert "alert webhook: 0 alerts delivered" in err, err
    assert "not delivered at exit" in err, err


def main():
    tmp = tempfile.mkdtemp(prefix="tfb_delivery_")
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Hook)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    try:
        logdir = logdir_of(tmp, ["a", "b", "c"])
        base = "http://127.0.0.1:%d" % srv.server_address[1]
        os.environ.pop(ENV, None)
        test_url_sources(tmp, logdir, base)
        test_hung_webhook(tmp, logdir)
    finally:
        srv.shutdown()
        subprocess.run(["rm", "-rf", tmp])
    print("ok")


if __name__ == "__main__":
    main()
