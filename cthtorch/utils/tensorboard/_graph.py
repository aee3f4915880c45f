"""SummaryWriter.add_graph: the model traced by cthtorch.jit.trace (inlined)
as the GraphDef TensorBoard draws, named as torch.utils.tensorboard names it.

Every node is a NodeDef: graph inputs as "input/<name>" (op "IO Node"),
parameters read by prim::GetAttr and every op output under its module scope
("Net/Linear[fc]/<name>", op the aten kind, its attributes as text), and the
outputs as "output/output.<i>". Each carries its traced shape in
_output_shapes. A node's inputs name the nodes that produce them."""
import contextlib

from tensorboard.compat.proto.attr_value_pb2 import AttrValue
from tensorboard.compat.proto.config_pb2 import RunMetadata
from tensorboard.compat.proto.graph_pb2 import GraphDef
from tensorboard.compat.proto.node_def_pb2 import NodeDef
from tensorboard.compat.proto.step_stats_pb2 import DeviceStepStats, StepStats
from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto
from tensorboard.compat.proto.versions_pb2 import VersionDef

import cthtorch
from cthtorch.jit import _ir


def _sizes(v, default=None):
    t = v.type()
    if isinstance(t, _ir.TensorType) and t.sizes() is not None and None not in t.sizes():
        return list(t.sizes())
    return default


def _attr_text(n):
    # torch prints the node's attribute dict with quotes turned to spaces
    vals = {}
    for k in n.attributeNames():
        v = n._get(k)
        vals[k] = list(v) if isinstance(v, list) else v
    return str(vals).replace("'", " ")


class _Entry:
    def __init__(self, name, inputs, scope, shape, op, attr):
        self.name, self.inputs, self.scope, self.shape, self.op, self.attr = name, inputs, scope, shape, op, attr


def _module_name(m):
    return type(getattr(m, "_original", None) or m).__name__ if not hasattr(m, "original_name") else m.original_name


def _entries(graph, traced):
    """The nodes of the drawing, in torch's order: used inputs, ops, outputs."""
    inputs, ops, outputs = [], [], []
    for v in graph.inputs():
        if v.uses() and not isinstance(v.type(), _ir.ClassType):
            inputs.append(_Entry(v.debugName(), [], None, _sizes(v, [1]), "IO Node", ""))
            inputs[-1].io = "input"
    attr_scope = {}
    for n in graph.nodes():
        if n.kind() == "prim::GetAttr":
            parent = n.inputs()[0].node()
            if parent.kind() == "prim::GetAttr":
                ps = attr_scope[parent.output().debugName()]
                scope = "%s/%s.%s" % (ps, ps.split("/")[-1], n.s("name"))
            else:
                scope = "__module." + n.s("name")
            attr_scope[n.output().debugName()] = scope
            if isinstance(n.output().type(), _ir.ClassType):
                continue
        else:
            scope = n.scopeName()
        ops.append((n, scope))
    for i, v in enumerate(graph.outputs()):
        e = _Entry("output.%d" % (i + 1), [v.debugName()], None, _sizes(v, [1]), "IO Node", "")
        e.io = "output"
        outputs.append(e)

    base = _module_name(traced)
    alias = {}
    for name, m in traced.named_modules(prefix="__module"):
        alias[name] = "%s[%s]" % (_module_name(m), name.split(".")[-1])
    op_entries = []
    for n, scope in ops:
        parts = [alias.get(a, a.split(".")[-1]) for a in scope.split("/")]
        full = base + ("/" + "/".join(parts) if any(parts) else "")
        ins = [v.debugName() for v in n.inputs()]
        for o in n.outputs():
            op_entries.append(_Entry(o.debugName(), ins, full, _sizes(o), n.kind(), _attr_text(n)))
    return inputs, op_entries, outputs


def _scoped_names(inputs, op_entries, outputs):
    """Where each value's node sits: under the scope of the op that makes it
    (inputs and outputs under "input"/"output"); a value that is no node
    (a submodule) under the scope of the last op reading it."""
    names = {}
    for e in op_entries:
        for i in e.inputs:
            names[i] = e.scope + "/" + i
    for e in op_entries:
        names[e.name] = e.scope + "/" + e.name
    for e in inputs + outputs:
        names[e.name] = e.io + "/" + e.name
    return names


def graph_def(model, args, verbose=False, use_strict_trace=True):
    """(GraphDef, RunMetadata) of model traced on args."""
    if isinstance(args, cthtorch.Tensor):
        args = (args,)
    with _eval_mode(model):
        traced = cthtorch.jit.trace(model, args, strict=use_strict_trace)
        g = traced.inlined_graph if hasattr(traced, "inlined_graph") else traced.graph
    if verbose:
        print(g)
    inputs, op_entries, outputs = _entries(g, traced)
    names = _scoped_names(inputs, op_entries, outputs)
    nodes = []
    for e in inputs + outputs + op_entries:   # torch's order
        nd = NodeDef(name=names[e.name].encode("utf-8"), op=e.op, input=[names.get(i, i) for i in e.inputs])
        nd.attr["attr"].CopyFrom(AttrValue(s=e.attr.encode("utf-8")))
        if e.shape is not None:
            nd.attr["_output_shapes"].CopyFrom(AttrValue(list=AttrValue.ListValue(
                shape=[TensorShapeProto(dim=[TensorShapeProto.Dim(size=d) for d in e.shape])])))
        nodes.append(nd)
    stats = RunMetadata(step_stats=StepStats(dev_stats=[DeviceStepStats(device="/device:CPU:0")]))
    return GraphDef(node=nodes, versions=VersionDef(producer=22)), stats


@contextlib.contextmanager
def _eval_mode(model):
    if not isinstance(model, cthtorch.nn.Module):
        yield
        return
    was = model.training
    model.train(False)
    try:
        yield
    finally:
        model.train(was)
