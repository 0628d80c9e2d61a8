#!/usr/bin/env python3
"""A large generated model graph for the Graphs tab's benchmark (issue 31).

Writes OUTDIR/big/events.out.tfevents.* holding one Event{graph_def} (a
GraphDef of NODES nodes in SCOPES name scopes: BLOCKS top-level blocks,
each with its layers; every layer a chain of ops with weights, biases,
constants, a skip connection, one control edge and `_output_shapes`) and
one Event{tagged_run_metadata} "step_1" with step stats (compute time and
memory for every op node), as TensorFlow 1 writes them. Standard library
only: the protobuf fields are written here, the varints and the TFRecord
framing (masked CRC-32C) come from the tests' own event-file writer,
tests/integration/tfevents_py.py.

usage: gen_graph_logdir.py OUTDIR [--nodes 20000] [--scopes 300] [--pbtxt FILE]
                           [--run NAME] [--hostile]
(--pbtxt also writes the GraphDef as text_format, for the layout compare;
--hostile adds what a hostile GraphDef holds: names and ops with HTML, a
node naming itself, a cycle, an input naming no node; the Graphs tab's
browser test uses it).
"""
import argparse
import os
import struct
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
from tfevents_py import record, varint  # noqa: E402


def field_bytes(num, data):
    if isinstance(data, str):
        data = data.encode()
    return varint(num << 3 | 2) + varint(len(data)) + data


def field_varint(num, v):
    return varint(num << 3) + varint(v)


def shape_proto(dims):
    return b"".join(field_bytes(2, field_varint(1, d)) for d in dims)


def attr_entry(key, value):
    return field_bytes(5, field_bytes(1, key) + field_bytes(2, value))


def build(nodes_wanted, scopes_wanted):
    # BLOCKS blocks of LAYERS layers: BLOCKS * (LAYERS + 1) = scopes.
    blocks = max(1, round((scopes_wanted / 20.0)))
    layers = max(1, scopes_wanted // blocks - 1)
    per_layer = max(8, (nodes_wanted - 2) // (blocks * layers))
    nodes = []  # (name, op, inputs, device, shape)
    nodes.append(("input/x", "Placeholder", [], "/device:CPU:0", [32, 64]))
    prev = "input/x"
    for b in range(blocks):
        dev = "/device:GPU:%d" % (b % 2)
        for l in range(layers):
            scope = "block_%d/layer_%d" % (b, l)
            layer_in = prev
            k = 0
            cur = layer_in
            while k < per_layer - 4:
                w = "%s/w_%d" % (scope, k)
                nodes.append((w, "VariableV2", [], "/device:CPU:0", [64, 64]))
                op = "%s/matmul_%d" % (scope, k)
                nodes.append((op, "MatMul", [cur, w], dev, [32, 64]))
                act = "%s/relu_%d" % (scope, k)
                nodes.append((act, "Relu", [op], dev, [32, 64]))
                cur = act
                k += 3
            c = "%s/scale" % scope
            nodes.append((c, "Const", [], dev, []))
            mul = "%s/mul" % scope
            nodes.append((mul, "Mul", [cur, c], dev, [32, 64]))
            add = "%s/add" % scope
            nodes.append((add, "AddV2", [mul, layer_in], dev, [32, 64]))
            out = "%s/out" % scope
            nodes.append((out, "Identity", [add, "^" + c], dev, [32, 64]))
            prev = out
    nodes.append(("loss", "Mean", [prev], "/device:GPU:0", []))
    # Up to the count asked: a NoOp per layer in turn, after its output
    # (a control edge).
    extra = 0
    while len(nodes) < nodes_wanted:
        scope = "block_%d/layer_%d" % ((extra // layers) % blocks, extra % layers)
        nodes.append(("%s/aux_%d" % (scope, extra), "NoOp", ["^%s/out" % scope], "/device:CPU:0", []))
        extra += 1
    return nodes, blocks * (layers + 1)


def hostile(nodes):
    nodes.append(("hostile/<img src=x onerror=alert(1)>", "<script>alert(2)</script>", ["input/x"], "", [1]))
    nodes.append(("hostile/self", "Identity", ["hostile/self", "input/x"], "", [1]))
    nodes.append(("hostile/ping", "Merge", ["input/x", "hostile/pong"], "", [1]))
    nodes.append(("hostile/pong", "NextIteration", ["hostile/ping"], "", [1]))
    nodes.append(("hostile/lost", "Add", ["hostile/nowhere:1", "input/x"], "", [1]))


def graph_def(nodes):
    out = bytearray()
    for name, op, inputs, dev, shape in nodes:
        n = field_bytes(1, name) + field_bytes(2, op)
        for i in inputs:
            n += field_bytes(3, i)
        n += field_bytes(4, dev)
        n += attr_entry("_output_shapes", field_bytes(1, field_bytes(7, shape_proto(shape))))
        if op == "MatMul":
            n += attr_entry("transpose_a", field_varint(5, 0))
        n += attr_entry("T", field_varint(6, 1))
        out += field_bytes(1, n)
    out += field_bytes(4, field_varint(1, 27))
    return bytes(out)


def run_metadata(nodes):
    by_dev = {}
    for i, (name, op, _inputs, dev, shape) in enumerate(nodes):
        if op in ("VariableV2", "Const"):
            continue
        micros = 5 + (i * 37) % 400
        size = 4
        for d in shape:
            size *= d
        st = (field_bytes(1, name) + field_varint(2, 1000 + i) + field_varint(3, 1) +
              field_varint(4, micros) + field_varint(5, micros + 2) +
              field_bytes(6, field_bytes(1, "GPU_0_bfc") + field_varint(2, size)))
        by_dev.setdefault(dev, bytearray()).extend(field_bytes(2, st))
    ss = b"".join(field_bytes(1, field_bytes(1, d) + bytes(v)) for d, v in by_dev.items())
    return field_bytes(1, ss)


def event(step, **fields):
    e = varint(1 << 3 | 1) + struct.pack("<d", time.time()) + field_varint(2, step)
    for num, data in fields.items():
        e += field_bytes(int(num[1:]), data)
    return e


def pbtxt(nodes):
    def q(s):
        return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'
    lines = []
    for name, op, inputs, dev, shape in nodes:
        lines.append("node {\n  name: %s\n  op: %s\n" % (q(name), q(op)))
        for i in inputs:
            lines.append("  input: %s\n" % q(i))
        lines.append("  device: %s\n" % q(dev))
        dims = "".join("          dim {\n            size: %d\n          }\n" % d for d in shape)
        lines.append('  attr {\n    key: "_output_shapes"\n    value {\n      list {\n        shape {\n%s        }\n      }\n    }\n  }\n}\n' % dims)
    lines.append("versions {\n  producer: 27\n}\n")
    return "".join(lines)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("outdir")
    ap.add_argument("--nodes", type=int, default=20000)
    ap.add_argument("--scopes", type=int, default=300)
    ap.add_argument("--pbtxt")
    ap.add_argument("--run", default="big")
    ap.add_argument("--hostile", action="store_true")
    a = ap.parse_args()
    nodes, scopes = build(a.nodes, a.scopes)
    if a.hostile:
        hostile(nodes)
    run = os.path.join(a.outdir, a.run)
    os.makedirs(run, exist_ok=True)
    path = os.path.join(run, "events.out.tfevents.%d.gen.1" % int(time.time()))
    with open(path, "wb") as f:
        f.write(record(event(0, f3="brain.Event:2")))
        f.write(record(event(0, f4=graph_def(nodes))))
        f.write(record(event(1, f8=field_bytes(1, "step_1") + field_bytes(2, run_metadata(nodes)))))
    if a.pbtxt:
        with open(a.pbtxt, "w") as f:
            f.write(pbtxt(nodes))
    print("wrote %s: %d nodes in %d scopes" % (path, len(nodes), scopes))


if __name__ == "__main__":
    main()
