"""Other sites' pages cannot make tfboard work (issue 32 item 9): a loopback
server needs no token and a GET needs no CORS preflight, so any open page
could fire /data/reload (a billed bucket listing each), queries and
exports. Every /data route refuses `Sec-Fetch-Site: cross-site` and an
Origin that is not this server (403, nothing done); our own page, scripts,
an --allow_host name and links to the page still work. And reloads asked
for are spaced (at most one per 5 s): 50 requests in a burst are all
answered, and start two reloads, not fifty.

usage: test_http_crosssite.py TFBOARD GEN_LOGDIR"""
import http.client
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tfb_server_util import Server, run_tests, wait_for  # noqa: E402

TFBOARD, GEN = sys.argv[1], sys.argv[2]
TMP = tempfile.mkdtemp(prefix="tfb_xsite_")
LAYOUT = "/data/plugin/scalars/layout"
SPACING_S = 5  # server/API.md "Loading and reloading"


def make_logdir(name):
    d = os.path.join(TMP, name)
    subprocess.run([GEN, "basic", d], check=True, stdout=subprocess.DEVNULL)
    return d


def send(port, method, path, headers=None, body=None):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        c.request(method, path, body=body, headers=headers or {})
        r = c.getresponse()
        return r.status, r.read()
    finally:
        c.close()


def reloads(srv):
    return srv.json("/data/plugin/core/progress")["reloads"]


def test_cross_site_refused():
    logdir = make_logdir("xsite")
    # a reload only when asked for (the interval is far beyond the test)
    with Server(TFBOARD, logdir, "--reload_interval", "600") as srv:
        srv.wait_loaded()
        own = "http://127.0.0.1:%d" % srv.port
        r0 = reloads(srv)
        csv = "/data/plugin/scalars/scalars?run=run_a&tag=loss&format=csv"
        put = {"Content-Type": "application/json"}
        refused = [
            # an <img>, a fetch() or a link on another site's page
            ("GET", "/data/reload", {"Sec-Fetch-Site": "cross-site",
                                     "Sec-Fetch-Mode": "no-cors"}),
            ("GET", "/data/reload", {"Origin": "http://evil.example"}),
            ("GET", "/data/reload", {"Origin": "null"}),
            ("PUT", "/data/reload", dict(put, Origin="http://evil.example")),
            ("GET", "/data/plugin/scalars/multirun?tag=loss&run_regex=run",
             {"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "cors",
              "Origin": "https://evil.example"}),
            ("GET", csv, {"Sec-Fetch-Site": "cross-site",
                          "Sec-Fetch-Mode": "navigate"}),
            ("PUT", LAYOUT, dict(put, Origin="http://evil.example")),
            # another port or another name is another origin
            ("PUT", LAYOUT, dict(put, Origin="http://127.0.0.1:1")),
            ("PUT", LAYOUT, dict(put, Origin="http://localhost:%d"
                                 % srv.port)),
            ("PUT", LAYOUT, dict(put, Origin=own + "/path")),
        ]
        for method, path, hdrs in refused:
            body = b'{"evil": 1}' if method == "PUT" else None
            st, rb = send(srv.port, method, path, hdrs, body)
            assert st == 403, (method, path, hdrs, st, rb[:200])
            assert b"cross-site request refused" in rb, rb
        time.sleep(1.0)
        assert reloads(srv) == r0, "a refused reload was done"
        assert not os.path.exists(os.path.join(logdir,
                                               "tfboard_layout.json"))
        # our own page, scripts, an address typed in, a link to the page
        allowed = [
            ("GET", "/data/runs", {}),
            ("GET", "/data/runs", {"Sec-Fetch-Site": "same-origin"}),
            ("GET", "/data/runs", {"Sec-Fetch-Site": "none"}),
            ("GET", "/data/runs", {"Sec-Fetch-Site": "same-site"}),
            ("GET", "/data/runs", {"Origin": own}),
            ("GET", csv, {"Sec-Fetch-Site": "none",
                          "Sec-Fetch-Mode": "navigate"}),
            ("GET", "/", {"Sec-Fetch-Site": "cross-site",
                          "Sec-Fetch-Mode": "navigate"}),
            ("PUT", LAYOUT, dict(put, Origin=own,
                                 **{"Sec-Fetch-Site": "same-origin"})),
        ]
        for method, path, hdrs in allowed:
            body = b'{"mine": 1}' if method == "PUT" else None
            st, rb = send(srv.port, method, path, hdrs, body)
            assert st == 200, (method, path, hdrs, st, rb[:200])
        assert os.path.exists(os.path.join(logdir, "tfboard_layout.json"))
        st, _ = send(srv.port, "GET", "/data/reload",
                     {"Sec-Fetch-Site": "same-origin"})
        assert st == 200
        wait_for(lambda: reloads(srv) > r0, "the page's own reload")


def test_allow_host_origin():
    """Behind a proxy that rewrites Host, the page's Origin is the proxy's
    public name: --allow_host names it (any port)."""
    logdir = make_logdir("proxy")
    with Server(TFBOARD, logdir, "--reload_interval", "0",
                "--allow_host", "tb.example.com") as srv:
        srv.wait_loaded()
        for origin, want in (("https://tb.example.com", 200),
                             ("https://TB.example.com:8443", 200),
                             ("https://tb.example.com.evil.example", 403),
                             ("https://evil.example", 403)):
            st, _ = send(srv.port, "GET", "/data/runs", {"Origin": origin})
            assert st == want, (origin, st)


def test_forced_reloads_spaced():
    logdir = make_logdir("spaced")
    with Server(TFBOARD, logdir, "--reload_interval", "600") as srv:
        srv.wait_loaded()
        r0 = reloads(srv)
        t0 = time.monotonic()
        for _ in range(50):
            st, _, body = srv.get("/data/reload", _timeout=30)
            assert st == 200 and json.loads(body) == {"reload": True}
        burst = time.monotonic() - t0
        # the first starts a reload at once; the others wait for the end
        # of the spacing and are served by one reload then
        wait_for(lambda: reloads(srv) >= r0 + 2, "the spaced reload",
                 timeout=30)
        time.sleep(1.0)
        done = reloads(srv) - r0
        # one more per spacing the burst itself lasted (a slow machine)
        assert done <= 2 + int(burst // SPACING_S), (done, burst)
        # a request inside the spacing is not lost: a run written now is
        # loaded by the reload it asks for, though the interval is 600 s
        st, _, _ = srv.get("/data/reload")
        assert st == 200
        subprocess.run([GEN, "basic", os.path.join(logdir, "late")],
                       check=True, stdout=subprocess.DEVNULL)
        st, _, _ = srv.get("/data/reload")
        assert st == 200
        wait_for(lambda: "late/run_a" in srv.json("/data/runs"),
                 "the run written within the spacing", timeout=30)


try:
    run_tests([test_cross_site_refused, test_allow_host_origin,
               test_forced_reloads_spaced])
finally:
    shutil.rmtree(TMP, ignore_errors=True)
