"""A faulty or hostile S3 endpoint (s3_util.FakeS3, our own small server:
moto never answers like this) against `tfboard report` and the server
(issue 32): a listing whose continuation token comes back ends with an
error instead of never (and so does one past TFB_OS_LIST_MAX_PAGES
pages); a page of entries without keys is read in linear time; a page
longer than TFB_OS_XML_MAX, or of more keys than asked for, fails the
listing; an endpoint that trickles a byte every 0.5 s meets each request's
deadline, is retried, then fails; listed keys outside the prefix (or
shorter than it) are skipped and counted, never made runs. No moto needed.

usage: test_objstore_hostile.py TFBOARD"""
import itertools
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import s3_util  # noqa: E402
from tfb_server_util import Server, run_tests  # noqa: E402
from test_objstore_events import events  # noqa: E402

TFBOARD = sys.argv[1]
FAKE = s3_util.FakeS3("b")
s3_util.use_endpoint(FAKE.url)
os.environ["AWS_MAX_ATTEMPTS"] = "2"
# A request's deadline is connect + stall timeout + its bytes at 64 KiB/s:
# 4 s for the small answers here.
os.environ["TFBOARD_S3_TIMEOUT"] = "2"
os.environ["TFBOARD_S3_CONNECT_TIMEOUT"] = "2"

GOOD_KEY = "logs/good/events.out.tfevents.1.h.1.0"
GOOD = events("loss", range(30))
FAKE.objects[GOOD_KEY] = GOOD
# how long a report may take here; the faults below, unfixed, never end
LIMIT_S = 60


def reset(*hooks):
    with FAKE.lock:
        FAKE.hooks[:] = list(hooks)
        FAKE.seen.clear()
        FAKE.sent = 0


def listing(fn):
    """A hook answering listings with fn(handler, query)."""
    def hook(h, method, key, q):
        if method == "GET" and "list-type" in q:
            fn(h, q)
            return True
        return False
    return hook


def run_report(limit_s=LIMIT_S):
    """`tfboard report` on s3://b/logs: (exit status, or None when it was
    still running after limit_s and was killed; stdout; stderr; CPU
    seconds it used)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        p = subprocess.Popen([TFBOARD, "report", "--logdir", "s3://b/logs",
                              "--format", "json"], stdout=out, stderr=err)
        end = time.time() + limit_s
        rc = None
        while True:
            pid, status, ru = os.wait4(p.pid, os.WNOHANG)
            if pid:
                rc = os.waitstatus_to_exitcode(status)
                break
            if time.time() > end:
                p.kill()
                _, status, ru = os.wait4(p.pid, 0)
                break
            time.sleep(0.1)
        p.returncode = -9 if rc is None else rc  # reaped here
        out.seek(0)
        err.seek(0)
        return (rc, out.read().decode(errors="replace"),
                err.read().decode(errors="replace"),
                ru.ru_utime + ru.ru_stime)


def first_load(check):
    """The server on s3://b/logs, loading once: its first load must end;
    check(srv, storage) looks at the result."""
    with Server(TFBOARD, "s3://b/logs", "--reload_interval", "0") as srv:
        srv.wait_loaded()
        check(srv, srv.json("/data/environment")["storage"])


def run_names(srv):
    return sorted(r["name"] for r in srv.json("/data/runs_info"))


def test_repeated_continuation_token():
    good = s3_util.list_entry(GOOD_KEY, len(GOOD))
    # the same token every time; a cycle of two
    for tokens in (["again"], ["a", "b"]):
        it = itertools.cycle(tokens)
        reset(listing(lambda h, q: FAKE.send(
            h, 200, s3_util.list_page([good], next(it)))))
        rc, out, err, _ = run_report()
        lists = FAKE.count("GET", True)
        assert rc is not None, \
            "report still listing after %d s (%d pages)" % (LIMIT_S, lists)
        assert lists == len(tokens) + 1, (tokens, lists)

        reset(listing(lambda h, q: FAKE.send(
            h, 200, s3_util.list_page([good], next(it)))))

        def check(srv, st):
            err = st["last_error"] or ""
            assert "continuation token given before" in err, st
            assert FAKE.count("GET", True) == len(tokens) + 1
        first_load(check)


def test_page_limit():
    # a new token on every page, never the last page
    n = itertools.count()
    reset(listing(lambda h, q: FAKE.send(
        h, 200, s3_util.list_page([], "t%d" % next(n)))))
    rc, out, err, _ = run_report(200)
    lists = FAKE.count("GET", True)
    assert rc is not None, "report still listing (%d pages)" % lists
    assert lists == 10000, lists


def test_more_keys_than_asked_for():
    page = s3_util.list_page([s3_util.list_entry("logs/r/k%d" % i, 1)
                              for i in range(1001)])
    reset(listing(lambda h, q: FAKE.send(h, 200, page)))

    def check(srv, st):
        err = st["last_error"] or ""
        assert "more than the 1000 keys asked for" in err, st
        assert run_names(srv) == [], run_names(srv)
    first_load(check)


def test_entries_without_keys_read_in_linear_time():
    # ~3.9 MiB of entries without a key, then one real entry. Each entry
    # searched the rest of the page for its fields (<Kex/>: no fast skip
    # over it): 20 s to minutes of CPU; now 0.1 s.
    junk = b"<Contents><Kex/></Contents>"
    page = s3_util.list_page(
        [junk] * ((39 << 20) // 10 // len(junk)) +
        [s3_util.list_entry(GOOD_KEY, len(GOOD))])
    assert len(page) < 4 << 20
    reset(listing(lambda h, q: FAKE.send(h, 200, page)))
    rc, out, err, cpu = run_report()
    assert rc == 0, (rc, err[-2000:])
    assert '"good"' in out, out[:500]
    assert cpu < 10, "%.1f s of CPU for one page" % cpu


def test_page_longer_than_the_bound():
    head = s3_util.list_page([])[:-len(b"</ListBucketResult>")]
    mib = b" " * (1 << 20)
    # 256 MiB announced: refused at its headers, not read into memory
    reset(listing(lambda h, q: FAKE.send_chunks(
        h, [head] + [mib] * 256, length=len(head) + (256 << 20))))

    def check(srv, st):
        assert "longer than 4 MiB" in (st["last_error"] or ""), st
        assert FAKE.count("GET", True) == 1  # the same again: no retry
        assert FAKE.sent < 64 << 20, FAKE.sent
    first_load(check)
    # no length announced (the body ends with the connection): cut at
    # 4 MiB
    reset(listing(lambda h, q: FAKE.send_chunks(
        h, [head] + [mib] * 5 + [b"</ListBucketResult>"])))

    def check_unannounced(srv, st):
        assert "longer than 4 MiB" in (st["last_error"] or ""), st
    first_load(check_unannounced)


def test_trickle_meets_the_deadline():
    # the event file's bytes one every 0.5 s: never a stall (no second
    # without a byte), ~2 minutes for all; the deadline is ~4 s
    def trickle(h, method, key, q):
        if method == "GET" and key == GOOD_KEY:
            FAKE.send_chunks(h, [bytes([b]) for b in GOOD],
                             length=len(GOOD), delay=0.5)
            return True
        return False
    reset(trickle)
    t0 = time.time()
    rc, out, err, _ = run_report()
    gets = sum(1 for m, k, _ in FAKE.seen if m == "GET" and k == GOOD_KEY)
    assert rc is not None, "report still reading after %d s" % LIMIT_S
    assert gets == 2, gets  # AWS_MAX_ATTEMPTS: retried once, then failed
    assert "deadline" in err, err[-2000:]
    assert time.time() - t0 < LIMIT_S
    # the listing itself trickled
    page = s3_util.list_page([s3_util.list_entry(GOOD_KEY, len(GOOD))])
    reset(listing(lambda h, q: FAKE.send_chunks(
        h, [page[i:i + 1] for i in range(len(page))], length=len(page),
        delay=0.5)))
    rc, out, err, _ = run_report()
    assert rc is not None, "report still listing after %d s" % LIMIT_S
    assert FAKE.count("GET", True) == 2, FAKE.count("GET", True)

    def check(srv, st):
        assert "deadline" in (st["last_error"] or ""), st
    reset(listing(lambda h, q: FAKE.send_chunks(
        h, [page[i:i + 1] for i in range(len(page))], length=len(page),
        delay=0.5)))
    first_load(check)


def test_keys_outside_the_prefix():
    evil = "xxxx/evil/events.out.tfevents.1.h.1.0"
    FAKE.objects[evil] = events("loss", range(5))
    # "l" and "logs" are shorter than "logs/" (a read past the key's end
    # once); "xxxx/evil/..." would have become run "evil"
    page = s3_util.list_page([s3_util.list_entry(k, len(FAKE.objects.get(
        k, b""))) for k in (GOOD_KEY, "l", "logs", evil)])
    reset(listing(lambda h, q: FAKE.send(h, 200, page)))
    try:
        def check(srv, st):
            assert run_names(srv) == ["good"], run_names(srv)
            lists = st["total"]["lists"]
            assert lists >= 1 and st["total"]["skipped_keys"] == 3 * lists, st
            pts = srv.json("/data/plugin/scalars/scalars", run="good",
                           tag="loss")
            assert [p[1] for p in pts] == list(range(30)), pts
        first_load(check)
    finally:
        del FAKE.objects[evil]


try:
    run_tests([test_repeated_continuation_token,
               test_more_keys_than_asked_for,
               test_entries_without_keys_read_in_linear_time,
               test_page_longer_than_the_bound,
               test_trickle_meets_the_deadline,
               test_keys_outside_the_prefix,
               test_page_limit])
finally:
    FAKE.stop()
