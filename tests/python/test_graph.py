"""add_graph and tfb_graph_def / tfb_run_metadata (issue 31): a module
traced with torch.jit.trace gives the GraphDef PyTorch's own add_graph
gives, checked against TensorBoard 2.21's answer for PyTorch's model_1
(../shared/testdata/torch_more: same module, Debian's torch 1.13), served
back by the graphs routes; the C calls' errors and Event fields."""
import json
import os
import struct

import pytest

import tfboard
from tfboard import _lib
from conftest import event_file, records

DATA = os.environ.get("TFB_TESTDATA", "")
ETOOBIG = -16  # tfboard.h's TFB_ERRNO_MAP
ANSWERS = os.path.join(DATA, "torch_more", "TENSORBOARD_ANSWERS.json")


def _small_net(torch):
    """model_1's module as SOURCES.md describes it (a stem conv, a residual
    block with a conv and batch norm, a Sequential head), shaped so that
    its traced nodes are TensorBoard's answer's node for node."""
    nn = torch.nn

    class Residual(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(6, 6, 3, padding=1)
            self.bn = nn.BatchNorm2d(6)

        def forward(self, x):
            return torch.relu(self.bn(self.conv(x))) + x

    class SmallNet(nn.Module):
        def __init__(self):
            super().__init__()
            # a 14 x 14 constant: its attribute text is over 1 KiB
            self.ramp = [[(r * 14 + c) / 3900 for c in range(14)]
                         for r in range(14)]
            self.stem = nn.Conv2d(3, 6, 3, stride=2, padding=1)
            self.block = Residual()
            self.pool = nn.AdaptiveAvgPool2d(2)
            self.head = nn.Sequential(nn.Flatten(), nn.Linear(24, 16),
                                      nn.ReLU(), nn.Linear(16, 6))

        def forward(self, x):
            x = x + torch.tensor(self.ramp)
            x = torch.relu(self.stem(x))
            x = self.pool(self.block(x))
            return self.head(x) * torch.tensor([[1.0], [0.5]])

    return SmallNet()


def _nodes(text):
    """name -> (op, inputs, attribute keys, _output_shapes text) of each
    top-level node block of a pbtxt."""
    out, cur, depth, key = {}, None, 0, None
    for line in text.splitlines():
        if line == "node {":
            cur = {"op": None, "input": [], "attr": {}}
            continue
        if cur is None:
            continue
        if line == "}":
            out[cur["name"]] = (cur["op"], cur["input"],
                                sorted(cur["attr"]),
                                cur["attr"].get("_output_shapes"))
            cur = None
        elif line.startswith('  name: "'):
            cur["name"] = line[9:-1]
        elif line.startswith('  op: "'):
            cur["op"] = line[7:-1]
        elif line.startswith('  input: "'):
            cur["input"].append(line[10:-1])
        elif line.startswith('    key: "'):
            key = line[10:-1]
            cur["attr"][key] = ""
        elif line.startswith("    ") and key is not None:
            cur["attr"][key] += line.strip() + "\n"
    return out


def _answer_shapes(attr):
    shp = attr.get("_output_shapes")
    if shp is None:
        return None
    dims = ["".join("dim {\nsize: %d\n}\n" % int(d["size"])
                    for d in s.get("dim", []))
            for s in shp["list"]["shape"]]
    return "value {\nlist {\n" + "".join(
        "shape {\n%s}\n" % d for d in dims) + "}\n}\n"


def test_add_graph_is_pytorchs_graph(tmp_path):
    torch = pytest.importorskip("torch")
    server = os.environ.get("TFB_SERVER")
    if not os.path.isfile(ANSWERS) or not server:
        pytest.skip("no shared testdata or server")
    from tfb_server_util import Server
    with open(ANSWERS) as f:
        ans = json.load(f)["graphs"]
    run = tmp_path / "model_1"
    model = _small_net(torch)
    model.train(True)
    with tfboard.SummaryWriter(str(run)) as w:
        w.add_graph(model, torch.zeros(2, 3, 14, 14))
    assert model.training  # add_graph traces in eval mode, then restores
    with Server(server, str(tmp_path), "--reload_interval", "0") as s:
        s.wait_loaded()
        assert s.json("/data/plugin/graphs/info") == ans["info"]
        st, ct, body = s.get("/data/plugin/graphs/graph", run="model_1")
        assert st == 200 and ct.startswith("text/x-protobuf"), (st, body)
        got = _nodes(body.decode())
        want = {n["name"]: (n["op"], n["input"], sorted(n["attr"]),
                            _answer_shapes(n["attr"]))
                for n in ans["graph"]["model_1"]["nodes"]}
        assert len(got) == len(want) == 67
        for name in sorted(want):
            assert got.get(name) == want[name], name
        assert body.decode().endswith("versions {\n  producer: 22\n}\n")
        # the constant over 1 KiB is left out past limit_attr_size
        st, _, body = s.get("/data/plugin/graphs/graph", run="model_1",
                            limit_attr_size=1024,
                            large_attrs_key="_too_large_attrs")
        assert st == 200
        lim = _nodes(body.decode())
        big = [n for n, v in lim.items() if "_too_large_attrs" in v[2]]
        want_big = [n["name"] for n in ans["graph_limited"]["model_1"]["nodes"]
                    if "_too_large_attrs" in n["attr"]]
        assert big == want_big == ["SmallNet/47"], (big, want_big)
        st, _, body = s.get("/data/plugin/graphs/run_metadata",
                            run="model_1", tag="step1")
        assert st == 200 and body == (b'step_stats {\n  dev_stats {\n    '
                                      b'device: "/device:CPU:0"\n  }\n}\n')


def test_add_graph_untraceable_logs_nothing(tmp_path):
    torch = pytest.importorskip("torch")

    def bad(x):
        raise ValueError("no trace")

    with tfboard.SummaryWriter(str(tmp_path)) as w:
        with pytest.raises(ValueError):
            w.add_graph(bad, torch.zeros(1))
        w.add_scalar("a", 1.0, 0)
    evs = [dict(_fields(r)) for r in records(event_file(str(tmp_path)))]
    # file_version and the scalar: no graph_def (4), no run metadata (8)
    assert len(evs) == 2 and not any(4 in e or 8 in e for e in evs), evs


def _fields(b):
    i, out = 0, []
    while i < len(b):
        k, i = _varint(b, i)
        if k & 7 == 2:
            n, i = _varint(b, i)
            out.append((k >> 3, b[i:i + n]))
            i += n
        elif k & 7 == 1:
            out.append((k >> 3, struct.unpack_from("<d", b, i)[0]))
            i += 8
        else:
            v, i = _varint(b, i)
            out.append((k >> 3, v))
    return out


def _varint(b, i):
    v = s = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7F) << s
        s += 7
        if c < 0x80:
            return v, i


def test_c_graph_def_and_run_metadata(tmp_path):
    lib = _lib.lib
    gd = b"\x0a\x05\x0a\x01a\x12\x00"  # GraphDef{node{name: "a", op: ""}}
    rm = b"\x0a\x02\x0a\x00"
    with tfboard.SummaryWriter(str(tmp_path)) as w:
        h = w._w
        assert lib.tfb_graph_def(h, gd, len(gd)) == 0
        assert lib.tfb_run_metadata(h, b"step 3", rm, len(rm), 3) == 0
        # errors: nothing written
        assert lib.tfb_graph_def(h, gd, 0) == _lib.EINVAL
        assert lib.tfb_graph_def(h, None, 5) == _lib.EINVAL
        assert lib.tfb_run_metadata(h, b"", rm, len(rm), 0) == \
            _lib.EINVAL
        assert lib.tfb_run_metadata(h, None, rm, len(rm), 0) == \
            _lib.EINVAL
        assert lib.tfb_run_metadata(h, b"t", None, 4, 0) == _lib.EINVAL
        # the length is checked before the bytes are read
        big = (256 << 20) + 1  # TFB_GRAPH_DEF_MAX + 1
        assert lib.tfb_graph_def(h, gd, big) == ETOOBIG
        assert lib.tfb_run_metadata(h, b"t", rm, big, 0) == ETOOBIG
    evs = [dict(_fields(r)) for r in records(event_file(str(tmp_path)))]
    assert len(evs) == 3, evs  # file_version, graph, run metadata
    assert evs[1][4] == gd and 2 not in evs[1]
    assert evs[2][2] == 3
    assert _fields(evs[2][8]) == [(1, b"step 3"), (2, rm)]
