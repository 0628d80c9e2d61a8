"""add_graph's GraphDef: a module traced with torch.jit.trace, turned into
a serialized tensorflow.GraphDef the way torch.utils.tensorboard does it
(node names with module scopes such as Net/Sequential[head]/Linear[1]/x,
the JIT kind as op, inputs in order, attributes "attr" (the node's JIT
attributes as text) and "_output_shapes"), plus the RunMetadata PyTorch
writes beside it (step stats of one CPU device). The protobuf bytes are
written here (no protobuf package needed); torch is imported only when
add_graph is called."""
import contextlib
from collections import OrderedDict
from typing import Any, Dict, List, Optional, Tuple

# PyTorch's GraphDef carries this producer version (reverse-engineered by
# PyTorch from TensorFlow's files; TensorBoard shows it as is).
_PRODUCER = 22
_GETATTR = "prim::GetAttr"
_CLASSTYPE = "ClassType"


# ---- protobuf wire format ----

def _varint(v: int) -> bytes:
    v &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _ld(field: int, payload: bytes) -> bytes:
    return _varint(field << 3 | 2) + _varint(len(payload)) + payload


def _vi(field: int, v: int) -> bytes:
    return _varint(field << 3) + _varint(v)


def _shape(sizes) -> bytes:
    # TensorShapeProto{dim = 2: Dim{size = 1}}; a size of 0 is the default
    return b"".join(_ld(2, _vi(1, int(d)) if int(d) else b"") for d in sizes)


def _node_def(name: str, op: str, inputs: List[str],
              sizes: Optional[List[int]], attributes: str) -> bytes:
    attrs = []
    # AttrValue{s = 2} (set even when empty: a oneof member)
    attrs.append(("attr", _ld(2, attributes.encode("utf-8"))))
    if sizes is not None:
        # AttrValue{list = 1: ListValue{shape = 7}}
        attrs.append(("_output_shapes", _ld(1, _ld(7, _shape(sizes)))))
    b = _ld(1, name.encode("utf-8")) + _ld(2, op.encode("utf-8"))
    for i in inputs:
        b += _ld(3, i.encode("utf-8"))
    for k, v in attrs:
        b += _ld(5, _ld(1, k.encode("utf-8")) + _ld(2, v))
    return b


def run_metadata_cpu() -> bytes:
    """RunMetadata{step_stats{dev_stats{device: "/device:CPU:0"}}}: PyTorch
    says every graph ran on the CPU (it knows no better)."""
    return _ld(1, _ld(1, _ld(1, b"/device:CPU:0")))


# ---- the trace, as torch.utils.tensorboard._pytorch_graph parses it ----

class _Node:
    """One node of the GraphDef being built."""

    def __init__(self, name, inputs=None, scope=None, sizes=None,
                 kind="UnSpecified", attributes=""):
        self.name = name
        self.inputs = inputs or []
        self.scope = scope
        self.sizes = sizes
        self.kind = kind
        self.attributes = attributes
        self.io = None  # "input" / "output" for the graph's ends


def _sizes(value) -> Optional[List[int]]:
    return value.type().sizes() if value.isCompleteTensor() else None


def _io_node(value, io: str) -> _Node:
    try:
        sizes = value.type().sizes()
    except RuntimeError:
        sizes = [1]  # a constant model
    n = _Node(value.debugName(), sizes=sizes, kind="IO Node")
    n.io = io
    return n


def _attr_text(node) -> str:
    # The node's JIT attributes as a dict's text, single quotes replaced
    # by spaces (as PyTorch does: TensorBoard's page mangled them).
    d = {k: getattr(node, node.kindOf(k))(k) for k in node.attributeNames()}
    return str(d).replace("'", " ")


class _Op:
    def __init__(self, node):
        self.inputs = [v.debugName() for v in node.inputs()]
        self.outputs = [v.debugName() for v in node.outputs()]
        self.output_sizes = [_sizes(v) for v in node.outputs()]
        self.scope = node.scopeName()
        self.kind = node.kind()
        self.attributes = _attr_text(node)


def _traced_name(module, torch) -> str:
    if isinstance(module, torch.jit.TracedModule):
        return module._name
    return getattr(module, "original_name", "Module")


def _parse(graph, trace, torch) -> List[_Node]:
    io: "OrderedDict[str, _Node]" = OrderedDict()
    ops: List[_Op] = []
    for v in graph.inputs():
        if len(v.uses()) == 0:
            continue  # an unused input
        if v.type().kind() != _CLASSTYPE:
            n = _io_node(v, "input")
            io[n.name] = n
    attr_scope: Dict[str, str] = {}
    for node in graph.nodes():
        if node.kind() == _GETATTR:
            attr_name = node.s("name")
            key = node.output().debugName()
            parent = node.input().node()
            if parent.kind() == _GETATTR:
                pscope = attr_scope[parent.output().debugName()]
                attr_scope[key] = "%s/%s.%s" % (pscope, pscope.split("/")[-1],
                                                attr_name)
            else:
                attr_scope[key] = "__module.%s" % attr_name
            # the module objects themselves are scopes, not nodes
            if node.output().type().kind() != _CLASSTYPE:
                op = _Op(node)
                op.scope = attr_scope[key]
                ops.append(op)
        else:
            ops.append(_Op(node))
    for i, v in enumerate(graph.outputs()):
        n = _io_node(v, "output")
        n.name = "output.%d" % (i + 1)
        n.inputs = [v.debugName()]
        io[n.name] = n

    alias = {}
    base = _traced_name(trace, torch)
    for name, module in trace.named_modules(prefix="__module"):
        alias[name] = "%s[%s]" % (_traced_name(module, torch),
                                  name.split(".")[-1])
    for op in ops:
        parts = [alias[a] if a in alias else a.split(".")[-1]
                 for a in op.scope.split("/")]
        op.scope = base
        if any(parts):
            op.scope += "/" + "/".join(parts)

    # Each op output becomes a node named by the op's scope.
    seen_scopes = []
    for op in ops:
        for out, sizes in zip(op.outputs, op.output_sizes):
            seen_scopes.append(op.scope)
            io[out] = _Node(out, op.inputs, op.scope, sizes, op.kind,
                            op.attributes)
    root = "default"
    for s in seen_scopes:
        if s:
            root = s.split("/")[0]
    scoped: Dict[str, str] = {}
    for op in ops:
        for i in op.inputs:
            scoped[i] = op.scope + "/" + i
    for k, n in io.items():
        if n.scope is not None:
            scoped[k] = n.scope + "/" + n.name
            if n.scope == "" and root:
                scoped[n.name] = root + "/" + n.name
        if n.io:
            scoped[k] = n.io + "/" + n.name
    for k, n in io.items():
        n.inputs = [scoped[i] for i in n.inputs]
        if n.name in scoped:
            n.name = scoped[n.name]
    return list(io.values())


@contextlib.contextmanager
def _eval_mode(model, torch):
    # a plain function or a ScriptFunction has no training mode
    if not isinstance(model, torch.nn.Module):
        yield
        return
    was = model.training
    model.train(False)
    try:
        yield
    finally:
        model.train(was)


def graph_def(model: Any, args: Any, verbose: bool = False,
              use_strict_trace: bool = True) -> Tuple[bytes, bytes]:
    """(GraphDef bytes, RunMetadata bytes) of model traced on args."""
    import torch
    with _eval_mode(model, torch):
        trace = torch.jit.trace(model, args, strict=use_strict_trace)
        g = trace.graph
        torch._C._jit_pass_inline(g)
    if verbose:
        print(g)
    nodes = _parse(g, trace, torch)
    body = b"".join(_ld(1, _node_def(n.name, n.kind, n.inputs, n.sizes,
                                     n.attributes)) for n in nodes)
    body += _ld(4, _vi(1, _PRODUCER))
    return body, run_metadata_cpu()
