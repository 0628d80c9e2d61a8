"""/data/plugin/scalars/layout against a hostile or shared logdir (issue 21,
items 1, 2, 3, 9 and 13): a FIFO or a symlink at the layout's name,
concurrent PUTs, a symlink planted at a temp name, invalid UTF-8, raw
<>& in GET, a PUT with a disallowed Host, and a logdir the server cannot
write (a read-only mount, and a directory of another user).

usage: test_layout_route.py TFBOARD GEN_LOGDIR"""
import http.client
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading

# The integration tests' helpers (tests/integration/).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "..", "tests", "integration"))
from tfb_server_util import Server, run_tests  # noqa: E402
from tfevents_py import event, record, scalars_summary  # noqa: E402

TFBOARD = sys.argv[1]
TMP = tempfile.mkdtemp(prefix="tfb_layout_")
L = "/data/plugin/scalars/layout"
NAME = "tfboard_layout.json"


def make_logdir(name):
    logdir = os.path.join(TMP, name)
    os.makedirs(os.path.join(logdir, "a"))
    with open(os.path.join(logdir, "a", "events.out.tfevents.1.h.1.0"),
              "wb") as f:
        f.write(record(event(1.0, file_version="brain.Event:2")))
        f.write(record(event(2.0, 0, summary=scalars_summary([("loss", 1.0)]))))
    return logdir


def send(port, method, path, body=b"", ctype="application/json",
         host=None, timeout=10):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        hdrs = {"Content-Type": ctype} if ctype else {}
        if host:
            hdrs["Host"] = host
        c.request(method, path, body=body, headers=hdrs)
        r = c.getresponse()
        return r.status, r.read()
    finally:
        c.close()


def leftovers(logdir):
    """Temp files of a save that did not finish."""
    return [p for p in os.listdir(logdir) if p.startswith(NAME + ".")]


def test_fifo_layout_does_not_block():
    """Item 1: a FIFO at the layout's name is refused at once (it is not a
    regular file), so GETs never hold the HTTP threads and the server
    keeps answering and stops on SIGTERM."""
    logdir = make_logdir("fifo")
    os.mkfifo(os.path.join(logdir, NAME))
    with Server(TFBOARD, logdir, "--reload_interval", "0") as srv:
        srv.wait_loaded()
        answers = []

        def get():
            try:
                answers.append(send(srv.port, "GET", L, timeout=5))
            except (socket.timeout, OSError) as e:
                answers.append((None, repr(e).encode()))
        ts = [threading.Thread(target=get) for _ in range(6)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        try:
            for st, body in answers:
                assert st == 200, (st, body)
                got = json.loads(body)
                assert got["layout"] is None, got
                assert "not a regular file" in got["error"], got
            st, body = send(srv.port, "GET", "/data/runs", timeout=5)
            assert st == 200 and json.loads(body) == ["a"], (st, body)
        except AssertionError:
            # unblock a server stuck in open() so that it can be stopped
            fd = os.open(os.path.join(logdir, NAME),
                         os.O_WRONLY | os.O_NONBLOCK)
            os.close(fd)
            raise


def test_concurrent_puts_last_complete_wins():
    """Item 2: many PUTs at once all succeed; the file is always one of
    the bodies whole (never two mixed), GET never sees a broken file, and
    no temp file is left behind."""
    logdir = make_logdir("concurrent")
    bodies = [json.dumps({"version": 1, "writer": i,
                          "pad": "x" * (20000 + 5000 * i)}).encode()
              for i in range(8)]
    with Server(TFBOARD, logdir, "--reload_interval", "0",
                "--http_threads", "8") as srv:
        srv.wait_loaded()
        bad, stop = [], threading.Event()

        def putter(i):
            for _ in range(40):
                st, rb = send(srv.port, "PUT", L, bodies[i])
                if st != 200:
                    bad.append(("put", i, st, rb[:200]))

        def getter():
            while not stop.is_set():
                st, rb = send(srv.port, "GET", L)
                got = json.loads(rb)
                if st != 200 or "error" in got:
                    bad.append(("get", st, rb[:200]))
        g = threading.Thread(target=getter)
        g.start()
        ts = [threading.Thread(target=putter, args=(i,)) for i in range(8)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        stop.set()
        g.join()
        assert not bad, bad[:5]
        with open(os.path.join(logdir, NAME), "rb") as f:
            assert f.read() in bodies
        assert not leftovers(logdir), leftovers(logdir)
        # the last PUT, alone, wins
        st, _ = send(srv.port, "PUT", L, bodies[3])
        assert st == 200
        assert srv.json(L)["layout"] == json.loads(bodies[3])


def test_symlink_at_temp_name_not_followed():
    """Item 3: a symlink planted at the predictable temp name (or any
    name a save could use) is never written through."""
    logdir = make_logdir("tmplink")
    victim = os.path.join(TMP, "victim.txt")
    with open(victim, "w") as f:
        f.write("precious")
    with Server(TFBOARD, logdir, "--reload_interval", "0") as srv:
        srv.wait_loaded()
        for sfx in (".tmp.%d" % srv.proc.pid, ".tmp", ".new"):
            os.symlink(victim, os.path.join(logdir, NAME + sfx))
        st, rb = send(srv.port, "PUT", L, b'{"a": 1}')
        assert st == 200, (st, rb)
        with open(victim) as f:
            assert f.read() == "precious"
        assert srv.json(L)["layout"] == {"a": 1}
        assert not os.path.islink(os.path.join(logdir, NAME))


def test_layout_route_small_defects():
    """Item 9: invalid UTF-8 is refused, GET escapes <>&, a symlinked
    layout file is not served, and a PUT with a disallowed Host gets 403
    with a reason (not an empty reply)."""
    logdir = make_logdir("defects")
    path = os.path.join(logdir, NAME)
    with Server(TFBOARD, logdir, "--reload_interval", "0") as srv:
        srv.wait_loaded()
        for bad in (b'\xc0\x80', b'\xe0\x80\x80', b'\xed\xa0\x80',
                    b'\xf4\x90\x80\x80', b'\xf0\x80\x80\x80', b'\xe2\x82'):
            st, rb = send(srv.port, "PUT", L, b'{"a":"' + bad + b'"}')
            assert st == 400, (bad, st, rb)
        st, rb = send(srv.port, "PUT", L,
                      '{"a":"\u00e9\u20ac\U0001f600"}'.encode())
        assert st == 200, (st, rb)
        # <>& are escaped in the answer, and the value is unchanged
        lay = {"note": "<script>x</script> & more", "k<": [">"]}
        st, _ = send(srv.port, "PUT", L, json.dumps(lay).encode())
        assert st == 200
        st, rb = send(srv.port, "GET", L)
        assert st == 200 and not any(c in rb for c in b"<>&"), rb
        assert json.loads(rb)["layout"] == lay
        # a symlinked layout file (here to a file outside the logdir)
        outside = os.path.join(TMP, "outside.json")
        with open(outside, "w") as f:
            f.write('{"secret": 1}')
        os.unlink(path)
        os.symlink(outside, path)
        got = srv.json(L)
        assert got["layout"] is None and "error" in got, got
        # a PUT with a Host the server does not accept: 403, a reason
        st, rb = send(srv.port, "PUT", L, b'{"b": 2}', host="evil.example")
        assert st == 403 and "Host" in json.loads(rb)["error"], (st, rb)
        assert os.path.islink(path)  # nothing written


def _readonly_cases():
    """(how, argv prefix) for each way of giving the server a logdir it
    cannot write, as root: a read-only tmpfs in a mount namespace of its
    own (EROFS), and running as nobody over a root-owned logdir
    (EACCES)."""
    cases = []
    probe = subprocess.run(
        ["unshare", "-m", "sh", "-c",
         "d=$(mktemp -d) && mount -t tmpfs none $d && umount $d; rmdir $d"],
        capture_output=True)
    if shutil.which("unshare") and probe.returncode == 0:
        cases.append("rofs")
    if shutil.which("setpriv") and os.geteuid() == 0:
        cases.append("nobody")
    return cases


def test_readonly_logdir_put():
    """Item 13: a logdir the server cannot write: PUT answers 403 with the
    reason, the old layout stays, and nothing is half-written."""
    cases = _readonly_cases()
    if not cases:
        print("skip test_readonly_logdir_put: neither a mount namespace "
              "nor setpriv is available")
        return
    for how in cases:
        src = make_logdir("ro_" + how)
        with open(os.path.join(src, NAME), "w") as f:
            f.write('{"old": true}')
        os.chmod(TMP, 0o755)
        for d, _, fs in os.walk(src):
            os.chmod(d, 0o755)
            for n in fs:
                os.chmod(os.path.join(d, n), 0o644)
        srv = Server(TFBOARD, src, "--reload_interval", "0")
        if how == "rofs":
            # a tmpfs holding a copy of the logdir, remounted read-only:
            # EROFS binds root too
            mnt = os.path.join(TMP, "mnt_" + how)
            os.makedirs(mnt)
            script = ('mount -t tmpfs none "$1" && cp -a "$2"/. "$1"/ && '
                      'mount -o remount,ro "$1" && shift 2 && exec "$@"')
            srv.args = ["unshare", "-m", "sh", "-c", script, "sh", mnt, src,
                        TFBOARD, "--logdir", mnt, "--port", "0",
                        "--reload_interval", "0"]
            look = None  # the tmpfs is only visible inside
        else:
            srv.args = ["setpriv", "--reuid=65534", "--regid=65534",
                        "--clear-groups"] + srv.args
            look = src
        with srv:
            srv.wait_loaded()
            st, rb = send(srv.port, "PUT", L, b'{"new": true}')
            assert st == 403, (how, st, rb)
            err = json.loads(rb)["error"]
            assert ("Read-only" in err if how == "rofs"
                    else "Permission denied" in err), (how, err)
            assert srv.json(L)["layout"] == {"old": True}
            if look:
                assert not leftovers(look), leftovers(look)
                with open(os.path.join(look, NAME)) as f:
                    assert json.load(f) == {"old": True}
        print("  read-only logdir (%s): %d %s" % (how, st, err))


try:
    run_tests([test_fifo_layout_does_not_block,
               test_concurrent_puts_last_complete_wins,
               test_symlink_at_temp_name_not_followed,
               test_layout_route_small_defects,
               test_readonly_logdir_put])
finally:
    shutil.rmtree(TMP, ignore_errors=True)
