"""A server a team can share (issue 19): bound beyond loopback tfboard
makes up a token and prints it in the URL; without the token every route,
asset and download is 401; ?token= sets an HttpOnly, SameSite=Strict
cookie and redirects to the address without it; the cookie and an
Authorization header then work; wrong tokens are rate-limited per client
address (429 with Retry-After); the token is in no log and not in
/data/environment; --tls_cert/--tls_key serve HTTPS (regular files only,
never waited on); --no_auth turns it off.

usage: test_auth.py TFBOARD GEN_LOGDIR"""
import http.client
import os
import re
import shutil
import socket
import ssl
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tfb_server_util import check_clean_exit, run_tests  # noqa: E402

TFBOARD, GEN = sys.argv[1], sys.argv[2]
TMP = tempfile.mkdtemp(prefix="tfb_auth_")
LOGDIR = os.path.join(TMP, "logs")
subprocess.run([GEN, "basic", LOGDIR], check=True, stdout=subprocess.DEVNULL)
TOKEN = "team-secret-4f9a1c"


class Srv:
    """tfboard on a free port with the given options; env adds to the
    environment. Reads the banner's URL (http or https)."""

    def __init__(self, *args, env=None):
        e = dict(os.environ)
        e.pop("TFBOARD_TOKEN", None)
        e.update(env or {})
        self.proc = subprocess.Popen(
            [TFBOARD, "--logdir", LOGDIR, "--port", "0",
             "--reload_interval", "0"] + list(args),
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=e)
        self.banner = self.proc.stdout.readline()
        m = re.search(r"(https?)://[^ ]*:(\d+)/(\?token=([0-9a-f]+))?",
                      self.banner)
        if not m:
            self.proc.kill()
            raise AssertionError("no URL in %r / %r" % (
                self.banner, self.proc.stderr.read()))
        self.scheme, self.port = m.group(1), int(m.group(2))
        self.made_token = m.group(4)
        self.ctx = None
        self.out = self.err = ""

    def __enter__(self):
        return self

    def __exit__(self, exc_type, *exc):
        self.proc.terminate()
        out, self.err = self.proc.communicate(timeout=15)
        self.out = self.banner + out
        if exc_type is None:
            check_clean_exit(self.proc.returncode, self.err)
        return False

    def req(self, method, path, headers=None, body=None, source="127.0.0.1"):
        """Returns (status, headers dict (lower-case names), body)."""
        if self.scheme == "https":
            c = http.client.HTTPSConnection("127.0.0.1", self.port,
                                            timeout=10, context=self.ctx,
                                            source_address=(source, 0))
        else:
            c = http.client.HTTPConnection("127.0.0.1", self.port,
                                           timeout=10,
                                           source_address=(source, 0))
        try:
            c.request(method, path, body=body, headers=headers or {})
            r = c.getresponse()
            return (r.status, {k.lower(): v for k, v in r.getheaders()},
                    r.read())
        finally:
            c.close()

    def get(self, path, token=None, cookie=None, source="127.0.0.1"):
        h = {}
        if token:
            h["Authorization"] = "Bearer " + token
        if cookie:
            h["Cookie"] = cookie
        return self.req("GET", path, h, source=source)


# Every kind of thing the server answers: the page, an asset, a missing
# asset, JSON routes, a full CSV download, an unknown /data route.
ROUTES = ["/", "/index.html", "/style.css", "/favicon.svg", "/nope.js",
          "/data/runs", "/data/environment", "/data/plugin/core/progress",
          "/data/plugin/scalars/tags",
          "/data/plugin/scalars/scalars?run=run_a&tag=loss&format=csv",
          "/data/plugin/scalars/layout", "/data/no/such/route"]


def test_no_token_is_401_everywhere():
    with Srv("--token", TOKEN) as s:
        for path in ROUTES:
            st, h, body = s.get(path)
            assert st == 401, (path, st)
            assert "bearer" in h.get("www-authenticate", "").lower(), h
            assert b"token" in body and TOKEN.encode() not in body
            st, _, _ = s.req("HEAD", path)
            assert st == 401, ("HEAD", path, st)
        # a PUT body is dropped, not stored
        st, _, _ = s.req("PUT", "/data/plugin/scalars/layout",
                         {"Content-Type": "application/json"}, b'{"a": 1}')
        assert st == 401
        assert not os.path.exists(os.path.join(LOGDIR,
                                               "tfboard_layout.json"))
        st, _, _ = s.req("POST", "/data/runs", {}, b"x")
        assert st == 401
        # a stale or forged cookie is no better
        st, _, _ = s.get("/data/runs", cookie="tfboard_%d=%s" % (
            s.port, "0" * 64))
        assert st == 401
        # the right token opens every one of them
        for path in ROUTES:
            st, _, _ = s.get(path, token=TOKEN)
            assert st != 401 and st != 429, (path, st)
        st, _, _ = s.get("/data/runs", token=TOKEN)
        assert st == 200


def test_query_token_sets_cookie_and_redirects():
    with Srv("--token", TOKEN) as s:
        st, h, _ = s.get("/?token=%s&run=run_a" % TOKEN)
        assert st == 303, st
        assert h["location"] == "/?run=run_a", h
        ck = h["set-cookie"]
        attrs = [a.strip().lower() for a in ck.split(";")]
        assert "httponly" in attrs and "samesite=strict" in attrs, ck
        assert "secure" not in attrs and "path=/" in attrs, ck
        pair = ck.split(";")[0]
        assert pair.startswith("tfboard_%d=" % s.port), ck
        assert TOKEN not in ck
        # the cookie alone now opens the page and the API
        assert s.get("/", cookie=pair)[0] == 200
        assert s.get("/data/runs", cookie="other=1; " + pair)[0] == 200
        # a path that would name another host is sent home instead
        st, h, _ = s.get("//evil.example/?token=" + TOKEN)
        assert st == 303 and h["location"] == "/", h
        # a link on another site: a SameSite=Strict cookie would not go
        # with a redirect's target, so a page of ours sends the browser on
        st, h, body = s.req("GET", "/?token=%s&q=%%22%%3E" % TOKEN,
                            {"Sec-Fetch-Site": "cross-site"})
        assert st == 200 and h["content-type"].startswith("text/html"), h
        assert "httponly" in h["set-cookie"].lower()
        assert b'content="0;url=/?q=%22%3E"' in body, body
        assert TOKEN.encode() not in body
        assert h.get("referrer-policy") == "no-referrer", h
        # scripts: ?token= on a /data route answers at once
        st, h, body = s.get("/data/runs?token=" + TOKEN)
        assert st == 200 and body.startswith(b"["), (st, body)
        assert "location" not in h


def test_authorization_headers():
    with Srv("--token", TOKEN) as s:
        for h in ("Bearer " + TOKEN, "token " + TOKEN, "bearer  " + TOKEN):
            st, _, _ = s.req("GET", "/data/runs", {"Authorization": h})
            assert st == 200, (h, st)
        st, _, _ = s.req("GET", "/data/runs", {"Authorization": "Basic xx"})
        assert st == 401


def test_wrong_tokens_rate_limited_per_address():
    with Srv("--token", TOKEN) as s:
        for i in range(5):
            st, _, _ = s.get("/data/runs", token="wrong-guess-%d" % i)
            assert st == 401, (i, st)
        st, h, body = s.get("/data/runs", token="wrong-guess-5")
        assert st == 429, st
        assert int(h["retry-after"]) >= 1, h
        # while it waits, even the right token is not looked at...
        assert s.get("/data/runs", token=TOKEN)[0] == 429
        assert s.get("/?token=" + TOKEN)[0] == 429
        # ...but another address is not held up
        assert s.get("/data/runs", token=TOKEN, source="127.0.0.2")[0] == 200
        st, h, _ = s.get("/?token=" + TOKEN, source="127.0.0.2")
        assert st == 303
        # and a browser already signed in from the waiting address is not
        # locked out
        pair = h["set-cookie"].split(";")[0]
        assert s.get("/data/runs", cookie=pair)[0] == 200
        # after the wait, the right token works again
        time.sleep(int(s.get("/data/runs", token="x" * 9)[1]["retry-after"]))
        assert s.get("/data/runs", token=TOKEN)[0] == 200


def test_token_in_no_log_nor_environment():
    with Srv(env={"TFBOARD_TOKEN": TOKEN}) as s:
        assert s.made_token is None and TOKEN not in s.banner
        assert "TFBOARD_TOKEN" in s.banner  # says a token is needed
        st, _, body = s.get("/data/environment", token=TOKEN)
        assert st == 200 and TOKEN.encode() not in body
        s.get("/?token=" + TOKEN)
        s.get("/data/runs?token=" + TOKEN + "x")
        s.get("/data/nope", token=TOKEN)
        s.req("PUT", "/data/plugin/scalars/layout?token=" + TOKEN,
              {"Content-Type": "text/plain"}, b"x")
    assert TOKEN not in s.out and TOKEN not in s.err, (s.out, s.err)
    # a bad chosen token is refused without being repeated
    p = subprocess.run([TFBOARD, "--logdir", LOGDIR, "--token=sh0rt"],
                       capture_output=True, text=True, timeout=10)
    assert p.returncode == 2 and "sh0rt" not in p.stderr + p.stdout
    assert "8 to 256" in p.stderr, p.stderr


def test_bind_all_makes_token():
    with Srv("--bind_all") as s:
        assert s.made_token and len(s.made_token) == 64, s.banner
        assert s.get("/data/runs")[0] == 401
        assert s.get("/data/runs", token=s.made_token)[0] == 200
        st, _, body = s.get("/data/environment", token=s.made_token)
        assert s.made_token.encode() not in body
    # printed once (the banner), in no other output
    assert (s.out + s.err).count(s.made_token) == 1
    # --host with an address that is not loopback, too
    with Srv("--host", "0.0.0.0") as h:
        assert h.made_token and len(h.made_token) == 64, h.banner
        assert h.get("/data/runs")[0] == 401
    # --quiet still prints the URL, and nothing else
    with Srv("--bind_all", "--quiet") as q:
        assert q.made_token and q.banner.startswith("http://"), q.banner
        assert q.made_token != s.made_token
    assert q.out.strip() == q.banner.strip() and q.err == "", (q.out, q.err)


def test_no_auth_and_loopback_default():
    with Srv("--bind_all", "--no_auth") as s:
        assert s.made_token is None
        assert s.get("/data/runs")[0] == 200
    with Srv() as s:  # loopback: no token, as before
        assert s.made_token is None and "token" not in s.banner
        assert s.get("/data/runs")[0] == 200
    p = subprocess.run([TFBOARD, "--logdir", LOGDIR, "--token", TOKEN,
                        "--no_auth"], capture_output=True, text=True,
                       timeout=10)
    assert p.returncode == 2 and "contradict" in p.stderr, p.stderr


def make_cert():
    """(cert, key) PEM files for localhost, made once; None without
    openssl."""
    if not shutil.which("openssl"):
        print("   SKIP: no openssl to make a certificate")
        return None
    cert, key = os.path.join(TMP, "cert.pem"), os.path.join(TMP, "key.pem")
    if not os.path.exists(key):
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048",
                        "-nodes", "-days", "2", "-subj", "/CN=localhost",
                        "-addext",
                        "subjectAltName=IP:127.0.0.1,DNS:localhost",
                        "-keyout", key, "-out", cert],
                       check=True, capture_output=True)
    return cert, key


def test_tls():
    made = make_cert()
    if not made:
        return
    cert, key = made
    try:
        srv = Srv("--tls_cert", cert, "--tls_key", key, "--token", TOKEN)
    except AssertionError as e:
        if "built without TLS" in str(e):
            print("   SKIP: this libmicrohttpd has no TLS")
            return
        raise
    with srv as s:
        assert s.scheme == "https", s.banner
        s.ctx = ssl.create_default_context(cafile=cert)
        assert s.get("/data/runs")[0] == 401
        st, _, body = s.get("/data/runs", token=TOKEN)
        assert st == 200 and body.startswith(b"[")
        st, h, _ = s.get("/?token=" + TOKEN)
        assert st == 303
        attrs = [a.strip().lower() for a in h["set-cookie"].split(";")]
        assert "secure" in attrs and "httponly" in attrs, attrs
        pair = h["set-cookie"].split(";")[0]
        end = time.time() + 20
        while b'"done":true' not in s.get("/data/plugin/core/progress",
                                          cookie=pair)[2].replace(b" ", b""):
            assert time.time() < end, "logdir did not load"
            time.sleep(0.05)
        st, _, body = s.get(
            "/data/plugin/scalars/scalars?run=run_a&tag=loss&format=csv",
            cookie=pair)
        assert st == 200 and body.startswith(b"Wall time,Step,Value")
        # plain HTTP on the TLS port gets no answer
        with socket.create_connection(("127.0.0.1", s.port), timeout=5) as c:
            c.sendall(b"GET /data/runs HTTP/1.1\r\nHost: x\r\n\r\n")
            try:
                got = c.recv(100)
            except OSError:
                got = b""
            assert not got.startswith(b"HTTP/1.1 200"), got
        # curl, the way a user would check it
        if shutil.which("curl"):
            p = subprocess.run(["curl", "-sS", "--cacert", cert, "-H",
                                "Authorization: Bearer " + TOKEN,
                                "https://localhost:%d/data/runs" % s.port],
                               capture_output=True, text=True, timeout=10)
            assert p.returncode == 0 and p.stdout.startswith("["), p.stderr
    # a bad certificate file is a clear error
    p = subprocess.run([TFBOARD, "--logdir", LOGDIR, "--port", "0",
                        "--tls_cert", LOGDIR, "--tls_key", key],
                       capture_output=True, text=True, timeout=10)
    assert p.returncode == 1 and "--tls_cert" in p.stderr, p.stderr


def test_tls_files_never_block():
    """A FIFO with no writer as --tls_key (or --tls_cert) hung start-up
    with SIGINT and SIGTERM blocked (issue 32 item 19): PEM files are
    opened without blocking and must be regular files, refused at once."""
    made = make_cert()
    if not made:
        return
    cert, key = made
    fifo = os.path.join(TMP, "pem.fifo")
    os.mkfifo(fifo)
    for args, opt in ((["--tls_cert", cert, "--tls_key", fifo], "--tls_key"),
                      (["--tls_cert", fifo, "--tls_key", key], "--tls_cert"),
                      (["--tls_cert", cert, "--tls_key", "/dev/zero"],
                       "--tls_key")):
        # generous: the refusal is immediate; the old open never returned
        p = subprocess.run([TFBOARD, "--logdir", LOGDIR, "--port", "0"] +
                           args, capture_output=True, text=True, timeout=30)
        if "built without TLS" in p.stderr:
            print("   SKIP: this libmicrohttpd has no TLS")
            return
        assert p.returncode == 1, (args, p.returncode, p.stderr)
        assert opt in p.stderr and "not a regular file" in p.stderr, \
            (args, p.stderr)


if __name__ == "__main__":
    try:
        run_tests([test_no_token_is_401_everywhere,
                   test_query_token_sets_cookie_and_redirects,
                   test_authorization_headers,
                   test_wrong_tokens_rate_limited_per_address,
                   test_token_in_no_log_nor_environment,
                   test_bind_all_makes_token,
                   test_no_auth_and_loopback_default,
                   test_tls,
                   test_tls_files_never_block])
    finally:
        shutil.rmtree(TMP, ignore_errors=True)
