"""Helpers for the object-storage tests: a real S3 server (moto_server,
auth off) on a free loopback port, a bucket client (boto3, which moto
brings), and a fault-injecting HTTP proxy in front of it.

Tests call need_moto() first: it exits 77 (skip) when moto_server or
boto3 is missing."""
import atexit
import os
import shutil
import socket
import socketserver
import subprocess
import sys
import threading
import time
import urllib.request


def need_moto():
    if not shutil.which("moto_server"):
        print("SKIP: moto_server is not on PATH")
        sys.exit(77)
    try:
        import boto3  # noqa: F401
    except ImportError:
        print("SKIP: boto3 is not installed")
        sys.exit(77)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Moto:
    """moto_server on 127.0.0.1:PORT; stopped by stop() (or `with`)."""

    def __init__(self):
        self.port = free_port()
        self.url = "http://127.0.0.1:%d" % self.port
        env = dict(os.environ)
        env.pop("AWS_ENDPOINT_URL", None)
        self.proc = subprocess.Popen(
            ["moto_server", "-H", "127.0.0.1", "-p", str(self.port)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        # stopped however the test ends (even a failure before its try)
        atexit.register(self.stop)
        end = time.time() + 30
        while time.time() < end:
            try:
                urllib.request.urlopen(self.url + "/", timeout=1).read()
                break
            except Exception:
                if self.proc.poll() is not None:
                    raise AssertionError("moto_server exited")
                time.sleep(0.1)
        else:
            self.stop()
            raise AssertionError("moto_server did not start")

    def client(self):
        import boto3
        from botocore.config import Config
        return boto3.client("s3", endpoint_url=self.url,
                            aws_access_key_id="test",
                            aws_secret_access_key="test",
                            region_name="us-east-1",
                            config=Config(retries={"max_attempts": 2}))

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None

    def __enter__(self):
        return self

    def __exit__(self, *a):
        self.stop()
        return False


def use_endpoint(url):
    """The environment tfboard and libtfboard read (set for children)."""
    os.environ["AWS_ENDPOINT_URL"] = url
    os.environ["AWS_ACCESS_KEY_ID"] = "test"
    os.environ["AWS_SECRET_ACCESS_KEY"] = "test"
    os.environ["AWS_REGION"] = "us-east-1"
    os.environ.pop("AWS_PROFILE", None)


def upload_dir(s3, bucket, root, prefix):
    """Every file under root as prefix/<relative path>; returns the keys."""
    keys = []
    for d, _, files in os.walk(root):
        for f in files:
            p = os.path.join(d, f)
            k = prefix + "/" + os.path.relpath(p, root)
            with open(p, "rb") as fh:
                s3.put_object(Bucket=bucket, Key=k, Body=fh.read())
            keys.append(k)
    return keys


class FaultProxy:
    """An HTTP/1.1 proxy on a free port forwarding to the real server,
    with faults chosen per request by rules: fn(method, path) -> None (pass
    through) or one of
      ("status", code, s3_code)  an S3 error answer
      ("reset",)                 half the body, then the connection reset
      ("stall", seconds)         headers, part of the body, then silence
      ("down",)                  the connection closed at once
    Each request is counted in self.seen (method, path)."""

    def __init__(self, upstream_port):
        self.upstream = upstream_port
        self.rules = []
        self.seen = []
        self.connections = 0
        self.lock = threading.Lock()
        proxy = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self):
                with proxy.lock:
                    proxy.connections += 1
                proxy._serve(self.request)

        class Srv(socketserver.ThreadingTCPServer):
            daemon_threads = True
            allow_reuse_address = True

        self.srv = Srv(("127.0.0.1", 0), Handler)
        self.port = self.srv.server_address[1]
        self.url = "http://127.0.0.1:%d" % self.port
        self.thread = threading.Thread(target=self.srv.serve_forever,
                                       daemon=True)
        self.thread.start()

    def stop(self):
        self.srv.shutdown()
        self.srv.server_close()

    def _rule(self, method, path):
        with self.lock:
            self.seen.append((method, path))
            for r in list(self.rules):
                act = r(method, path)
                if act:
                    return act
        return None

    @staticmethod
    def _read_request(sock, buf):
        while b"\r\n\r\n" not in buf:
            d = sock.recv(65536)
            if not d:
                return None, buf
            buf += d
        head, rest = buf.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        n = 0
        for ln in lines[1:]:
            k, _, v = ln.partition(":")
            if k.strip().lower() == "content-length":
                n = int(v.strip())
        while len(rest) < n:
            d = sock.recv(65536)
            if not d:
                return None, b""
            rest += d
        return (lines, head + b"\r\n\r\n" + rest[:n]), rest[n:]

    @staticmethod
    def _read_response(up, method):
        buf = b""
        while b"\r\n\r\n" not in buf:
            d = up.recv(65536)
            if not d:
                return buf
            buf += d
        head, rest = buf.split(b"\r\n\r\n", 1)
        n = None
        chunked = False
        for ln in head.decode("latin-1").split("\r\n")[1:]:
            k, _, v = ln.partition(":")
            if k.strip().lower() == "content-length":
                n = int(v.strip())
            if k.strip().lower() == "transfer-encoding" and "chunked" in v:
                chunked = True
        status = int(head.split(b" ")[1])
        if method == "HEAD" or status in (204, 304):
            return head + b"\r\n\r\n"
        if chunked:
            while not rest.endswith(b"0\r\n\r\n"):
                d = up.recv(65536)
                if not d:
                    break
                rest += d
            return head + b"\r\n\r\n" + rest
        while n is not None and len(rest) < n:
            d = up.recv(65536)
            if not d:
                break
            rest += d
        return head + b"\r\n\r\n" + rest

    def _serve(self, sock):
        buf = b""
        up = None
        try:
            while True:
                req, buf = self._read_request(sock, buf)
                if not req:
                    return
                lines, raw = req
                method, path = lines[0].split(" ")[:2]
                act = self._rule(method, path)
                if act and act[0] == "down":
                    return
                if act and act[0] == "status":
                    body = ("<?xml version=\"1.0\"?><Error><Code>%s</Code>"
                            "<Message>injected</Message></Error>"
                            % act[2]).encode()
                    sock.sendall(b"HTTP/1.1 %d X\r\nContent-Type: "
                                 b"application/xml\r\nContent-Length: %d"
                                 b"\r\n\r\n" % (act[1], len(body)) + body)
                    continue
                # moto answers "Connection: close": one upstream connection
                # per request, while the client's stays open (so the test
                # sees whether tfboard keeps its connections alive)
                up = socket.create_connection(("127.0.0.1", self.upstream))
                up.sendall(raw)
                resp = self._read_response(up, method)
                up.close()
                up = None
                head, sep, body = resp.partition(b"\r\n\r\n")
                head = b"\r\n".join(
                    ln for ln in head.split(b"\r\n")
                    if not ln.lower().startswith(b"connection:"))
                resp = head + sep + body
                if act and act[0] == "reset":
                    sock.sendall(resp[:max(1, len(resp) // 2)])
                    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                    b"\x01\x00\x00\x00\x00\x00\x00\x00")
                    return
                if act and act[0] == "stall":
                    sock.sendall(resp[:max(1, len(resp) // 2)])
                    time.sleep(act[1])
                    return
                sock.sendall(resp)
        except OSError:
            return
        finally:
            if up is not None:
                up.close()
            sock.close()


def once(n, action, match):
    """A rule that answers `action` to the first n requests whose
    (method, path) satisfy match."""
    left = [n]

    def rule(method, path):
        if left[0] > 0 and match(method, path):
            left[0] -= 1
            return action
        return None
    return rule


def put_many(base_url, bucket, items, threads=8):
    """PUTs (key, body) pairs straight over HTTP keep-alive connections
    (moto runs without auth): far cheaper than boto3 for 10,000 keys."""
    import http.client
    from urllib.parse import quote, urlsplit
    host = urlsplit(base_url)
    chunks = [items[i::threads] for i in range(threads)]
    errors = []

    def work(chunk):
        c = http.client.HTTPConnection(host.hostname, host.port, timeout=30)
        for k, body in chunk:
            c.request("PUT", "/%s/%s" % (bucket, quote(k, safe="/~")),
                      body=body)
            r = c.getresponse()
            r.read()
            if r.status != 200:
                errors.append((k, r.status))
        c.close()
    ts = [threading.Thread(target=work, args=(ch,)) for ch in chunks]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors, errors[:5]


def xml_escape(s):
    return (s.replace("&", "&amp;").replace("<", "&lt;")
            .replace(">", "&gt;").replace('"', "&quot;"))


def list_entry(key, size=0, etag="e0"):
    """One <Contents> entry of a ListObjectsV2 page (bytes)."""
    return ("<Contents><Key>%s</Key><LastModified>2026-01-01T00:00:00.000Z"
            "</LastModified><ETag>&quot;%s&quot;</ETag><Size>%d</Size>"
            "<StorageClass>STANDARD</StorageClass></Contents>"
            % (xml_escape(key), etag, size)).encode()


def list_page(entries, token=None):
    """A ListObjectsV2 page holding the entries (bytes, list_entry's),
    truncated with NextContinuationToken token when token is given."""
    head = ('<?xml version="1.0" encoding="UTF-8"?><ListBucketResult '
            'xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>b</Name>'
            '<IsTruncated>%s</IsTruncated>' % ("true" if token else "false"))
    if token:
        head += "<NextContinuationToken>%s</NextContinuationToken>" % \
            xml_escape(token)
    return head.encode() + b"".join(entries) + b"</ListBucketResult>"


class FakeS3:
    """A small S3 endpoint for the answers a real store never gives (moto
    cannot be made to): one bucket's objects (`objects`, key -> bytes)
    served as ListObjectsV2 pages of max-keys, GET with Range and HEAD,
    path-style, no authentication. A hook may answer a request instead:
    fn(handler, method, key, query) -> True when it answered (query: the
    decoded parameters; a listing has "list-type"). Each request is counted
    in `seen` (method, key, query); `sent` counts the body bytes the send
    helpers wrote."""

    def __init__(self, bucket):
        import http.server
        from urllib.parse import parse_qs, unquote, urlsplit
        self.bucket = bucket
        self.objects = {}
        self.hooks = []
        self.seen = []
        self.sent = 0
        self.lock = threading.Lock()
        fake = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # headers and body go out as two writes: without this, each
            # answer waits out the client's delayed ACK (40 ms)
            disable_nagle_algorithm = True

            def log_message(self, *a):
                pass

            def _any(self):
                u = urlsplit(self.path)
                q = {k: v[0] for k, v in
                     parse_qs(u.query, keep_blank_values=True).items()}
                parts = unquote(u.path).lstrip("/").split("/", 1)
                key = parts[1] if len(parts) > 1 else ""
                n = int(self.headers.get("Content-Length") or 0)
                if n:
                    self.rfile.read(n)
                with fake.lock:
                    fake.seen.append((self.command, key, q))
                    hooks = list(fake.hooks)
                for h in hooks:
                    if h(self, self.command, key, q):
                        return
                fake._default(self, self.command, key, q)

            do_GET = do_HEAD = do_PUT = do_POST = do_DELETE = _any

        class Srv(http.server.ThreadingHTTPServer):
            daemon_threads = True
            allow_reuse_address = True

            def handle_error(self, request, client_address):
                pass  # a client that hung up on a hostile answer

        self.srv = Srv(("127.0.0.1", 0), Handler)
        self.url = "http://127.0.0.1:%d" % self.srv.server_address[1]
        self.thread = threading.Thread(target=self.srv.serve_forever,
                                       daemon=True)
        self.thread.start()

    def stop(self):
        self.srv.shutdown()
        self.srv.server_close()

    def count(self, method, listing=None):
        """Requests seen of method (listing: only listings, or only
        others)."""
        with self.lock:
            return sum(1 for m, _, q in self.seen if m == method and
                       (listing is None or ("list-type" in q) == listing))

    def send(self, h, status, body, headers=()):
        """An answer with a Content-Length."""
        h.send_response(status)
        for k, v in headers:
            h.send_header(k, v)
        h.send_header("Content-Length", str(len(body)))
        h.end_headers()
        if h.command != "HEAD":
            h.wfile.write(body)
            with self.lock:
                self.sent += len(body)

    def send_chunks(self, h, chunks, length=None, delay=0.0):
        """Status 200 and the chunks (bytes each) one after another,
        `delay` seconds apart; with length the Content-Length announced,
        else none (the body ends when the connection closes). Stops when
        the client hangs up."""
        h.send_response(200)
        h.send_header("Content-Type", "application/xml")
        if length is None:
            h.send_header("Connection", "close")
            h.close_connection = True
        else:
            h.send_header("Content-Length", str(length))
        h.end_headers()
        try:
            for c in chunks:
                h.wfile.write(c)
                h.wfile.flush()
                with self.lock:
                    self.sent += len(c)
                if delay:
                    time.sleep(delay)
        except OSError:
            h.close_connection = True

    def _default(self, h, method, key, q):
        if method == "GET" and "list-type" in q:
            prefix = q.get("prefix", "")
            keys = sorted(k for k in self.objects if k.startswith(prefix))
            start = int(q.get("continuation-token") or 0)
            n = int(q.get("max-keys") or 1000)
            page = keys[start:start + n]
            more = start + n < len(keys)
            body = list_page([list_entry(k, len(self.objects[k]))
                              for k in page],
                             str(start + n) if more else None)
            self.send(h, 200, body, [("Content-Type", "application/xml")])
            return
        if method in ("GET", "HEAD") and key in self.objects:
            data = self.objects[key]
            hdrs = [("ETag", '"e0"'),
                    ("Last-Modified", "Thu, 01 Jan 2026 00:00:00 GMT")]
            rng = h.headers.get("Range")
            if not rng:
                self.send(h, 200, data, hdrs)
                return
            a, _, b = rng.split("=", 1)[1].partition("-")
            a = int(a)
            b = min(int(b) if b else len(data) - 1, len(data) - 1)
            if a >= len(data):
                self.send(h, 416, b"", hdrs)
                return
            self.send(h, 206, data[a:b + 1], hdrs + [
                ("Content-Range", "bytes %d-%d/%d" % (a, b, len(data)))])
            return
        body = (b"<?xml version=\"1.0\"?><Error><Code>NoSuchKey</Code>"
                b"<Message>none</Message></Error>")
        self.send(h, 404, body, [("Content-Type", "application/xml")])
