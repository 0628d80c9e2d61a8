"""The PR curves dashboard over HTTP (issue 22): PyTorch's own file gives
exactly TensorBoard's answer (and its custom scalars layout too); every step is listed; a malformed pr_curves
tensor is left out and counted, and the server keeps serving; a count
that is no int64 is null (issue 32 item 12).

usage: test_pr_curves.py TFBOARD GEN_LOGDIR"""
import json
import os
import shutil
import struct
import sys
import tempfile

# The integration tests' helpers (tests/integration/).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "..", "tests", "integration"))
from tfb_server_util import Server, run_tests  # noqa: E402
from tfevents_py import event, key, ld, record, varint  # noqa: E402

TFBOARD = sys.argv[1]
TMP = tempfile.mkdtemp(prefix="tfb_pr_")
TORCH = os.path.join(os.environ.get("TFB_TESTDATA", ""), "torch_media")


def pr_value(tag, rows, k, meta=True, dims=None):
    """Summary.Value{tag, metadata{pr_curves}, tensor DT_FLOAT [6, k]}."""
    dims = dims or [6, k]
    shape = b"".join(ld(2, key(1, 0) + varint(d)) for d in dims)
    t = key(1, 0) + varint(1) + ld(2, shape) + ld(5, b"".join(
        struct.pack("<f", x) for x in rows))
    v = ld(1, tag.encode())
    if meta:
        v += ld(9, ld(1, ld(1, b"pr_curves") + ld(2, bytes([0x10, k]))))
    return ld(1, v + ld(8, t))


def test_torch_file_matches_tensorboard():
    if not os.path.isdir(TORCH):
        print("skip: no torch_media testdata")
        return
    with open(os.path.join(TORCH, "TENSORBOARD_ANSWERS.json")) as f:
        want = json.load(f)
    with Server(TFBOARD, TORCH, "--reload_interval", "0") as srv:
        srv.wait_loaded()
        tags = srv.json("/data/plugin/pr_curves/tags")
        assert {r: sorted(t) for r, t in tags.items()} == \
            {r: sorted(t) for r, t in want["pr_curves"].items()}
        for run, by_tag in want["pr_curves"].items():
            for tag, curves in by_tag.items():
                got = srv.json("/data/plugin/pr_curves/pr_curves", run=run,
                               tag=tag)
                assert got == {run: curves}, (got, curves)
        te = srv.json("/data/plugin/pr_curves/available_time_entries")
        assert [e["step"] for e in te["vision"]] == [0, 7, 20]
        # add_custom_scalars' layout, as TensorBoard merges it.
        assert srv.json("/data/plugin/custom_scalars/layout") == \
            want["custom_scalars_layout"]
        listing = srv.json("/data/plugins_listing")
        assert listing["pr_curves"]["enabled"] is True
        assert listing["custom_scalars"]["enabled"] is True
        # The plugins TensorBoard enables for this logdir that tfboard has.
        ours = {k for k, v in listing.items() if v["enabled"]}
        for p in ("images", "pr_curves", "scalars", "text", "hparams",
                  "custom_scalars"):
            assert (p in want["plugins_enabled"]) == (p in ours), p


def test_every_step_and_bad_tensors():
    logdir = os.path.join(TMP, "many")
    d = os.path.join(logdir, "r")
    os.makedirs(d)
    k = 3
    with open(os.path.join(d, "events.out.tfevents.1.h"), "wb") as f:
        f.write(record(event(1.0, file_version="brain.Event:2")))
        for s in range(50):
            rows = [10, 5, 1, 0, 0, 0, 0, 4, 9, 0, 5, 9,
                    1, 0.5, 1, 1, 0.5, 0.1]
            f.write(record(event(2.0 + s, s, summary=pr_value(
                "pr", rows, k, meta=s == 0))))
        # Wrong shape and too few floats: left out, counted.
        f.write(record(event(90.0, 60, summary=pr_value(
            "pr", [1, 2, 3], k, meta=False))))
        f.write(record(event(91.0, 61, summary=pr_value(
            "pr", [1.0] * 12, 2, meta=False, dims=[4, 3]))))
    with Server(TFBOARD, logdir, "--reload_interval", "0") as srv:
        srv.wait_loaded()
        got = srv.json("/data/plugin/pr_curves/pr_curves", run="r", tag="pr")
        assert [c["step"] for c in got["r"]] == list(range(50))
        assert got["skipped"] == 2
        c = got["r"][7]
        assert c["true_positives"] == [10, 5, 1]
        assert c["false_negatives"] == [0, 5, 9]
        assert c["thresholds"] == [0.0, 0.5, 1.0]
        assert c["recall"][2] == struct.unpack("<f", struct.pack("<f", 0.1))[0]
        assert srv.get("/data/plugin/pr_curves/pr_curves", run="r",
                       tag="nope")[0] == 404
        assert srv.get("/data/plugin/pr_curves/pr_curves", tag="pr")[0] == 400
        assert srv.json("/data/plugin/pr_curves/tags") == {
            "r": {"pr": {"displayName": "pr", "description": ""}}}


def test_counts_that_are_no_int64():
    """Issue 32 item 12: a count that is NaN, +-Inf or past 2^63 (what a
    NaN weight makes add_pr_curve write) is null and counted in
    "null_counts", never cast (undefined behaviour, shown as
    -9223372036854775808); the counts beside it and the ratios are as
    written."""
    logdir = os.path.join(TMP, "nan")
    d = os.path.join(logdir, "r")
    os.makedirs(d)
    nan, inf = float("nan"), float("inf")
    k = 3
    rows = [nan, 2.0 ** 63, 5,            # TP: NaN, 2^63 (just past), 5
            inf, -inf, 1e30,              # FP
            -2.0 ** 63, 2.0 ** 62, 0,     # TN: both fit
            7, nan, 3,                    # FN
            nan, 0.5, 1,                  # precision (ratios: as written)
            1, 0.25, nan]                 # recall
    with open(os.path.join(d, "events.out.tfevents.1.h"), "wb") as f:
        f.write(record(event(1.0, file_version="brain.Event:2")))
        f.write(record(event(2.0, 4, summary=pr_value("pr", rows, k))))
    with Server(TFBOARD, logdir, "--reload_interval", "0") as srv:
        srv.wait_loaded()
        got = srv.json("/data/plugin/pr_curves/pr_curves", run="r", tag="pr")
        c = got["r"][0]
        assert c["step"] == 4
        assert c["true_positives"] == [None, None, 5], c
        assert c["false_positives"] == [None, None, None], c
        assert c["true_negatives"] == [-2 ** 63, 2 ** 62, 0], c
        assert c["false_negatives"] == [7, None, 3], c
        assert c["precision"][1:] == [0.5, 1.0], c
        assert c["recall"][:2] == [1.0, 0.25], c
        assert got["null_counts"] == 6, got
        assert "skipped" not in got
        # and the server still serves
        assert srv.json("/data/plugin/pr_curves/tags") == {
            "r": {"pr": {"displayName": "pr", "description": ""}}}


try:
    run_tests([test_torch_file_matches_tensorboard,
               test_every_step_and_bad_tensors,
               test_counts_that_are_no_int64])
finally:
    shutil.rmtree(TMP, ignore_errors=True)
