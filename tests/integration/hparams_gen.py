"""Runs with many hparams (issue 21 item 4), encoded by hand (protobuf
wire format, field numbers of tests/proto/hparams.proto) so that a run of
40,000 hparams is written in a blink: used by test_hparams_scale.py and
tests/bench/bench_hparams.py."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tfevents_py import (event, f_double, key, ld, record,  # noqa: E402
                         scalars_summary, varint)


def value(v):
    """google.protobuf.Value."""
    if isinstance(v, bool):
        return key(4, 0) + varint(int(v))
    if isinstance(v, (int, float)):
        return f_double(2, float(v))
    return ld(3, v if isinstance(v, bytes) else v.encode())


def _b(s):
    return s if isinstance(s, bytes) else s.encode()


def session_start(pairs, group=b""):
    """HParamsPluginData{session_start_info{hparams: pairs}}; pairs may
    repeat a name (a map keeps the last)."""
    ssi = b"".join(ld(1, ld(1, _b(k)) + ld(2, value(v))) for k, v in pairs)
    if group:
        ssi += ld(4, _b(group))
    return ld(3, ssi)


def experiment(names, metrics=()):
    """HParamsPluginData{experiment{hparam_infos, metric_infos}}."""
    exp = b"".join(ld(4, ld(1, _b(n)) + key(4, 0) + varint(3)) for n in names)
    exp += b"".join(ld(5, ld(1, ld(2, _b(t)))) for t in metrics)
    return ld(2, exp)


def hp_value(tag, content):
    meta = ld(1, ld(1, b"hparams") + ld(2, content))
    return ld(1, ld(1, tag.encode()) + ld(9, meta))


def write_run(logdir, run, start=None, exp=None, scalars=()):
    d = os.path.join(logdir, run)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "events.out.tfevents.1.h.1.0"), "wb") as f:
        f.write(record(event(1.0, file_version="brain.Event:2")))
        if exp is not None:
            f.write(record(event(2.0, summary=hp_value(
                "_hparams_/experiment", exp))))
        if start is not None:
            f.write(record(event(2.0, summary=hp_value(
                "_hparams_/session_start_info", start))))
        for step, (tag, v) in enumerate(scalars):
            f.write(record(event(3.0 + step, step,
                                 summary=scalars_summary([(tag, v)]))))


def many(n, prefix="hp"):
    """n hparams: numbers, strings and bools in turn."""
    out = []
    for i in range(n):
        name = "%s%06d" % (prefix, i)
        out.append((name, i * 0.5 if i % 3 == 0 else
                    ("s%d" % i if i % 3 == 1 else bool(i & 4))))
    return out


def compact(n):
    """n hparams in as few bytes as a session record allows (5-character
    names, bool values: 13 bytes each), so that more than 65,536 fit in
    the store's 1 MiB bound on a record."""
    return [("%05x" % i, bool(i & 1)) for i in range(n)]
