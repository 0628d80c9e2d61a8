"""Helpers for the integration tests: start the real tfboard binary on an
ephemeral loopback port, fetch routes, and always clean the process up."""
import http.client
import json
import os
import re
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

DEADLINE_S = 20


class Server:
    """tfboard --logdir DIR --port 0 on 127.0.0.1; use as a context
    manager so the process is stopped whatever happens."""

    def __init__(self, binary, logdir, *extra):
        self.args = [binary, "--logdir", logdir, "--port", "0"] + list(extra)
        self.proc = None
        self.port = None
        self.banner = ""

    def __enter__(self):
        self.proc = subprocess.Popen(self.args, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
        # The URL is printed at once, before loading.
        line = self.proc.stdout.readline()
        self.banner = line
        m = re.search(r"http://[^ ]*:(\d+)/", line)
        if not m:
            self.stop()
            raise AssertionError("no URL in banner: %r / stderr %r"
                                 % (line, self.proc.stderr.read()))
        self.port = int(m.group(1))
        return self

    def __exit__(self, exc_type, *exc):
        rc, err = self.stop()
        if exc_type is None:
            check_clean_exit(rc, err)
        return False

    def stop(self):
        """Stops the server (SIGTERM, a clean shutdown); returns its exit
        status and stderr text."""
        if not self.proc:
            return None, ""
        if self.proc.poll() is None:
            self.proc.terminate()
        try:
            _, err = self.proc.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            _, err = self.proc.communicate()
        rc = self.proc.returncode
        self.proc = None
        return rc, err or ""


    def url(self, path):
        return "http://127.0.0.1:%d%s" % (self.port, path)

    def get(self, path, _timeout=10, **params):
        """Returns (status, content_type, body bytes); _timeout: seconds."""
        if params:
            path += "?" + urllib.parse.urlencode(params)
        try:
            with urllib.request.urlopen(self.url(path),
                                        timeout=_timeout) as r:
                return r.status, r.headers.get("Content-Type"), r.read()
        except urllib.error.HTTPError as e:
            return e.code, e.headers.get("Content-Type"), e.read()

    def json(self, path, **params):
        st, ct, body = self.get(path, **params)
        # A GPU route answers 202 {"loading": true, ...} while the run's
        # trace is read in the background: ask again until it is there.
        end = time.time() + 3 * DEADLINE_S
        while st == 202 and time.time() < end:
            time.sleep(0.05)
            st, ct, body = self.get(path, **params)
        assert st == 200, (path, params, st, body[:300])
        assert ct.startswith("application/json"), ct
        return json.loads(body)

    def raw(self, method, path):
        """A request with the path sent exactly as given (no client-side
        normalisation)."""
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        try:
            c.putrequest(method, path, skip_accept_encoding=True)
            c.endheaders()
            r = c.getresponse()
            return r.status, r.getheader("Content-Type"), r.read()
        finally:
            c.close()

    def wait_loaded(self):
        end = time.time() + DEADLINE_S
        while time.time() < end:
            p = self.json("/data/plugin/core/progress")
            if p["done"]:
                return p
            time.sleep(0.05)
        raise AssertionError("logdir did not finish loading")


def check_clean_exit(rc, err):
    """A server stopped with SIGTERM exits 0, and (under the sanitizers)
    reports no error or leak."""
    for bad in ("AddressSanitizer", "LeakSanitizer", "ThreadSanitizer",
                "runtime error:"):
        assert bad not in err, err[-3000:]
    assert rc == 0, (rc, err[-2000:])


def wait_for(pred, what, timeout=DEADLINE_S):
    end = time.time() + timeout
    last = None
    while time.time() < end:
        last = pred()
        if last:
            return last
        time.sleep(0.05)
    raise AssertionError("timed out waiting for " + what)


def run_tests(tests):
    """Runs each test function, prints a line each, exits 1 on failure."""
    failed = 0
    for t in tests:
        try:
            t()
            print("ok   " + t.__name__)
        except Exception as e:  # report every failing test, not just one
            failed += 1
            import traceback
            traceback.print_exc()
            print("FAIL " + t.__name__ + ": " + repr(e))
    sys.stdout.flush()
    sys.exit(1 if failed else 0)
