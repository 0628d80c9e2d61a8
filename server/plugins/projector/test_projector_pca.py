"""The projector's PCA routes against NumPy's eigendecomposition of the
same covariance (issue 31): components (up to sign), explained variance
and its ratio, the mean, and every point's projection; a sample of rows
when the work bound is passed is not exercised here (bench_projector_pca).

usage: test_projector_pca.py TFBOARD   (run with a python3 that has NumPy)"""
import os
import shutil
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "..", "tests", "integration"))
from tfb_server_util import Server, run_tests  # noqa: E402
from tfevents_py import event, record  # noqa: E402

TFBOARD = sys.argv[1]
TMP = tempfile.mkdtemp(prefix="tfb_projector_pca_")
P = "/data/plugin/projector/"


def write_embedding(logdir, x):
    run = os.path.join(logdir, "run")
    os.makedirs(os.path.join(run, "00000", "emb"))
    with open(os.path.join(run, "events.out.tfevents.1.host"), "wb") as f:
        f.write(record(event(1.0, file_version="brain.Event:2")))
    with open(os.path.join(run, "00000", "emb", "tensors.tsv"), "w") as f:
        for r in x:
            f.write("\t".join(repr(float(v)) for v in r) + "\n")
    with open(os.path.join(run, "projector_config.pbtxt"), "w") as f:
        f.write('embeddings {\n  tensor_name: "emb:00000"\n'
                '  tensor_path: "00000/emb/tensors.tsv"\n}\n')


def test_pca_matches_numpy():
    """Top components and variances of an anisotropic cloud (distinct
    variances, so each component is defined up to sign)."""
    rng = np.random.default_rng(7)
    n, d = 2000, 24
    scales = np.linspace(6.0, 0.2, d)
    basis, _ = np.linalg.qr(rng.standard_normal((d, d)))
    x = ((rng.standard_normal((n, d)) * scales) @ basis.T + 1.5).astype(
        np.float32)
    logdir = os.path.join(TMP, "aniso")
    write_embedding(logdir, x)
    xd = x.astype(np.float64)
    mean = xd.mean(axis=0)
    cov = np.cov(xd, rowvar=False)
    w, v = np.linalg.eigh(cov)
    order = np.argsort(w)[::-1]
    w, v = w[order], v[:, order]
    with Server(TFBOARD, logdir, "--reload_interval", "0") as srv:
        srv.wait_loaded()
        p = srv.json(P + "pca", run="run", name="emb:00000")
        assert p["rows"] == n and p["dim"] == d and p["k"] == 10, p
        assert p["rows_used"] == n and p["rows_skipped"] == 0
        np.testing.assert_allclose(p["explained_variance"], w[:10],
                                   rtol=1e-6)
        np.testing.assert_allclose(p["explained_variance_ratio"],
                                   w[:10] / w.sum(), rtol=1e-6)
        np.testing.assert_allclose(p["total_variance"], w.sum(), rtol=1e-9)
        np.testing.assert_allclose(p["mean"], mean, rtol=1e-6, atol=1e-6)
        comps = np.array(p["components"])
        for a in range(10):
            assert abs(abs(comps[a] @ v[:, a]) - 1) < 1e-5, (a, comps[a])
            # Signed so the largest coordinate is positive.
            assert comps[a][np.argmax(np.abs(comps[a]))] > 0
        # Three components asked for: the first three.
        p3 = srv.json(P + "pca", run="run", name="emb:00000", components=3)
        assert p3["k"] == 3 and p3["components"] == p["components"][:3]
        st, ct, body = srv.get(P + "pca_projection", run="run",
                               name="emb:00000", components=3)
        assert st == 200 and ct == "application/octet-stream", (st, ct)
        proj = np.frombuffer(body, dtype="<f4").reshape(n, 3)
        want = (xd - np.array(p["mean"])) @ comps[:3].T
        np.testing.assert_allclose(proj, want, rtol=1e-4, atol=1e-3)
        st, _, body = srv.get(P + "pca", run="run", name="emb:00000",
                              components=11)
        assert st == 400 and b"components" in body, body


if __name__ == "__main__":
    try:
        run_tests([test_pca_matches_numpy])
    finally:
        shutil.rmtree(TMP, ignore_errors=True)
