"""add_embedding (issue 31) writes what PyTorch's SummaryWriter writes:
the same calls that made testdata/torch_more/embed_1 (SOURCES.md) give the
same tensors.tsv, metadata.tsv and projector_config.pbtxt bytes and the
same sprite pixels; PyTorch's mismatches are refused with nothing
written; and tfboard's projector serves what was written."""
import io
import os
import shutil

import numpy as np
import pytest

import tfboard

TORCH = os.path.join(os.environ.get("TFB_TESTDATA", ""), "torch_more",
                     "embed_1")


def read_tsv(path, dtype):
    with open(path) as f:
        return np.array([[float(v) for v in line.rstrip("\n").split("\t")]
                         for line in f if line.strip()], dtype=dtype)


def read(path, mode="rb"):
    with open(path, mode) as f:
        return f.read()


@pytest.mark.skipif(not os.path.isdir(TORCH), reason="no torch_more data")
def test_same_files_as_pytorch(tmp_path):
    """features (float32, two metadata columns with a header, 8x8 sprites
    at step 0) and features/hidden_1 (float64, one column, step 4)."""
    PIL = pytest.importorskip("PIL.Image")
    a = os.path.join(TORCH, "00000", "features")
    b = os.path.join(TORCH, "00004", "features%2fhidden_1")
    mat = read_tsv(os.path.join(a, "tensors.tsv"), np.float32)
    lines = read(os.path.join(a, "metadata.tsv"), "r").splitlines()
    header, meta = lines[0].split("\t"), [l.split("\t") for l in lines[1:]]
    # The label images back from PyTorch's sprite: 18 a row (ceil of
    # sqrt(300)), 8 x 8 each, values / 255.
    sprite = np.asarray(PIL.open(os.path.join(a, "sprite.png"))
                        .convert("RGB"), dtype=np.float64) / 255
    imgs = np.stack([sprite[(i // 18) * 8:(i // 18 + 1) * 8,
                            (i % 18) * 8:(i % 18 + 1) * 8].transpose(2, 0, 1)
                     for i in range(len(mat))])
    mat2 = read_tsv(os.path.join(b, "tensors.tsv"), np.float64)
    meta2 = read(os.path.join(b, "metadata.tsv"), "r").splitlines()

    with tfboard.SummaryWriter(str(tmp_path)) as w:
        w.add_embedding(mat, metadata=meta, label_img=imgs, global_step=0,
                        tag="features", metadata_header=header)
        w.add_embedding(mat2, metadata=meta2, global_step=4,
                        tag="features/hidden_1")
    for rel in ("projector_config.pbtxt",
                "00000/features/tensors.tsv", "00000/features/metadata.tsv",
                "00004/features%2fhidden_1/tensors.tsv",
                "00004/features%2fhidden_1/metadata.tsv"):
        assert read(os.path.join(str(tmp_path), rel)) == \
            read(os.path.join(TORCH, rel)), rel
    got = PIL.open(io.BytesIO(read(os.path.join(
        str(tmp_path), "00000/features/sprite.png"))))
    assert got.size == (144, 144) and got.mode == "RGB"
    want = PIL.open(os.path.join(a, "sprite.png")).convert("RGB")
    assert np.array_equal(np.asarray(got), np.asarray(want))
    assert not os.path.exists(os.path.join(str(tmp_path), "00004",
                                           "features%2fhidden_1",
                                           "sprite.png"))


def test_mismatches_write_nothing(tmp_path):
    """PyTorch's checks (labels or images not one a point, mat not 2-D, a
    header not as wide as the rows) raise ValueError before any file."""
    d = str(tmp_path)
    with tfboard.SummaryWriter(d) as w:
        m = np.zeros((3, 2), np.float32)
        with pytest.raises(ValueError, match="#labels"):
            w.add_embedding(m, metadata=["a", "b"], tag="x")
        with pytest.raises(ValueError, match="#images"):
            w.add_embedding(m, label_img=np.zeros((2, 3, 4, 4)), tag="x")
        with pytest.raises(ValueError, match="2D"):
            w.add_embedding(np.zeros(3), tag="x")
        with pytest.raises(ValueError, match="header"):
            w.add_embedding(m, metadata=[["a", "b"]] * 3,
                            metadata_header=["one"], tag="x")
        with pytest.raises(ValueError, match="tab or line break"):
            w.add_embedding(m, metadata=["a", "b\tc", "d"], tag="x")
        for bad in (".", ".."):
            with pytest.raises(ValueError, match="folder"):
                w.add_embedding(m, tag=bad)
    assert not os.path.exists(os.path.join(d, "00000"))
    assert not os.path.exists(os.path.join(d, "projector_config.pbtxt"))
    w.close()
    with pytest.raises(tfboard.TfbError):
        w.add_embedding(m)


def test_projector_serves_it(tmp_path):
    """The written run is read back by tfboard's projector: shapes,
    tensor bytes, labels and sprite; a tag with % and \\ is one folder."""
    server = os.environ.get("TFB_SERVER")
    if not server:
        pytest.skip("no tfboard server built")
    from tfb_server_util import Server
    rng = np.random.default_rng(1)
    mat = rng.standard_normal((20, 5)).astype(np.float32)
    d = str(tmp_path / "run")
    with tfboard.SummaryWriter(d) as w:
        w.add_scalar("loss", 1.0, 0)
        w.add_embedding(mat, metadata=list(range(20)),
                        label_img=np.ones((20, 1, 3, 4)), global_step=2,
                        tag="a%b\\c")
    assert os.path.isdir(os.path.join(d, "00002", "a%25b%5cc"))
    with Server(server, str(tmp_path), "--reload_interval", "0") as srv:
        srv.wait_loaded()
        assert srv.json("/data/plugin/projector/runs") == ["run"]
        info = srv.json("/data/plugin/projector/info", run="run")
        e = info["embeddings"][0]
        assert e["tensorName"] == "a%b\\c:00002"
        assert e["tensorShape"] == [20, 5]
        assert e["sprite"]["singleImageDim"] == [4, 3]
        assert "tfboardNotes" not in info, info
        st, _, body = srv.get("/data/plugin/projector/tensor", run="run",
                              name="a%b\\c:00002")
        assert st == 200 and body == mat.astype("<f4").tobytes()
        st, _, body = srv.get("/data/plugin/projector/metadata", run="run",
                              name="a%b\\c:00002")
        assert body.decode().split("\n")[:3] == ["0", "1", "2"]
        st, ct, _ = srv.get("/data/plugin/projector/sprite_image",
                            run="run", name="a%b\\c:00002")
        assert st == 200 and ct == "image/png"
    shutil.rmtree(d)
