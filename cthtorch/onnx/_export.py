"""torch.onnx.export's TorchScript path: trace the model with the JIT tracer,
inline its submodule calls, turn each aten node into ONNX nodes by its
symbolic function, fold what only depends on parameters, and write the
ModelProto (cthtorch/onnx/_proto.py)."""
import contextlib
import os

import cthtorch
from cthtorch.jit import _ir

from . import _proto, _symbolics
from . import symbolic_helper as sh
from .errors import OnnxExporterError, SymbolicValueError, UnsupportedOperatorError

_IR_VERSION = {13: 7, 14: 7, 15: 8, 16: 8, 17: 8, 18: 8, 19: 9, 20: 9}
_in_export = [False]


def _resolve_attr(v, self_value, root):
    """(path, object) of a prim::GetAttr chain from the module's self."""
    if v is self_value:
        return (), root
    n = v.node()
    if n.kind() != "prim::GetAttr":
        return None, None
    path, base = _resolve_attr(n.inputs()[0], self_value, root)
    if path is None:
        return None, None
    name = n.s("name")
    return path + (name,), getattr(base, name)


class _Converter:
    def __init__(self, tgraph, model, opset):
        self.tgraph = tgraph
        self.model = model
        self.opset = opset
        self.g = _ir.Graph()
        self.env = {}
        self.params = {}        # path -> Value (graph input standing for the parameter)
        self.param_tensors = {}  # Value -> tensor
        self.user_inputs = []

    def run(self):
        tin = list(self.tgraph.inputs())
        self_value = tin[0] if isinstance(self.model, cthtorch.nn.Module) and tin else None
        for v in tin[1 if self_value is not None else 0:]:
            nv = self.g.addInput(v.debugName())
            nv.setType(v.type())
            self.env[v] = nv
            self.user_inputs.append(nv)
        for n in self.tgraph.nodes():
            self._node(n, self_value)
        outs = []
        for v in self.tgraph.outputs():
            outs.extend(self._flatten(self.env.get(v), v))
        for o in outs:
            self.g.registerOutput(o)
        return self.g

    def _flatten(self, nv, old):
        if isinstance(nv, list):
            return [x for item in nv for x in self._flatten(item, old)]
        if nv is None:
            raise SymbolicValueError("Failed to export: an output is not a tensor", old)
        k = nv.node().kind()
        if k in ("prim::TupleConstruct", "prim::ListConstruct"):
            return [x for i in nv.node().inputs() for x in self._flatten(i, old)]
        if not isinstance(nv.type(), _ir.TensorType) and k != "onnx::Constant" and not k.startswith("onnx::"):
            raise SymbolicValueError("Failed to export: only tensors (and tuples/lists of them) can be outputs of "
                                     "an exported model", old)
        return [nv]

    def _param(self, path, t):
        key = ".".join(path)
        v = self.params.get(key)
        if v is None:
            v = self.g.addInput(key)
            v.setType(_ir.TensorType.create_from_tensor(t.detach()))
            self.params[key] = v
            self.param_tensors[v] = t
        return v

    def _node(self, n, self_value):
        k = n.kind()
        if k == "prim::GetAttr":
            path, obj = _resolve_attr(n.output(), self_value, self.model)
            if isinstance(obj, cthtorch.Tensor):
                self.env[n.output()] = self._param(path, obj)
            return
        if k in ("prim::Constant", "prim::ListConstruct", "prim::TupleConstruct"):
            c = self.g.createClone(n, lambda v: self.env[v])
            self.g.insertNode(c)
            for o, co in zip(n.outputs(), c.outputs()):
                self.env[o] = co
            return
        if k in ("prim::ListUnpack", "prim::TupleUnpack"):
            src = self.env[n.inputs()[0]]
            items = src if isinstance(src, list) else (
                list(src.node().inputs()) if src.node().kind() in ("prim::ListConstruct", "prim::TupleConstruct")
                else None)
            if items is None or len(items) != n.outputsSize():
                raise SymbolicValueError("Failed to export %s of a value that is not a list or tuple construct" % k,
                                         n.inputs()[0])
            for o, it in zip(n.outputs(), items):
                if it.node().kind().startswith("onnx::") and it.node().kind() != "onnx::Constant":
                    it.setType(o.type())   # a split's pieces: their traced types
                self.env[o] = it
            return
        fn, since = _symbolics.lookup(k, self.opset)
        if fn is None:
            raise UnsupportedOperatorError(k, self.opset, since if since is not None and since > self.opset else None)
        ctx = sh.GraphContext(self.g, self.opset, n)
        res = fn(ctx, *[self.env[i] for i in n.inputs()])
        outs = list(res) if isinstance(res, (tuple, list)) and n.outputsSize() > 1 else [res]
        if n.outputsSize() == 1 and isinstance(res, list):
            outs = [res]
        for o, r in zip(n.outputs(), outs):
            if r is None:
                continue
            if isinstance(r, _ir.Value) and r.node().kind().startswith("onnx::") and \
                    r.node().kind() != "onnx::Constant":
                r.setType(o.type())   # the traced dtype and shape, for the symbolics after it
            self.env[o] = r


def _lower_constants(g):
    """prim::Constant / prim::ListConstruct values that ONNX nodes consume
    become onnx::Constant tensors (a list with traced sizes: a Concat)."""
    for n in list(g.nodes()):
        if not n.kind().startswith("onnx::") and n.kind() != "prim::Return":
            continue
        for i, v in enumerate(list(n.inputs())):
            if v is None:
                continue
            pk = v.node().kind()
            if pk not in ("prim::Constant", "prim::ListConstruct"):
                continue
            ctx = sh.GraphContext(g, 0, n)
            with g.insert_point_guard(n):
                if sh.is_constant(v):
                    c = sh._const(v)
                    if c is None:
                        continue
                    nv = ctx.constant(c if isinstance(c, cthtorch.Tensor) else c)
                else:
                    nv = _symbolics._int64_vector(ctx, v)
            n.replaceInput(i, nv)


def _dce(g):
    outputs = set(g.outputs())
    for n in reversed(list(g.nodes())):
        if not any(o.hasUses() or o in outputs for o in n.outputs()):
            n.destroy()


def _const_tensor(v, initializers):
    if v in initializers:
        return initializers[v]
    if v.node().kind() == "onnx::Constant":
        return v.node().t("value")
    return None


def _reshape(n, a):
    shape = [int(d) for d in a[1].tolist()]
    return a[0].reshape([d if d != 0 else a[0].shape[i] for i, d in enumerate(shape)])


def _unsqueeze(n, a):
    x = a[0]
    for d in sorted(int(i) % (x.dim() + len(a[1])) for i in a[1].tolist()):
        x = x.unsqueeze(d)
    return x


_FOLD = {
    "Transpose": lambda n, a: a[0].permute(n.is_list("perm") if n.hasAttribute("perm")
                                           else list(range(a[0].dim() - 1, -1, -1))),
    "Add": lambda n, a: a[0] + a[1], "Sub": lambda n, a: a[0] - a[1], "Mul": lambda n, a: a[0] * a[1],
    "Sqrt": lambda n, a: a[0].sqrt(), "Neg": lambda n, a: -a[0], "Identity": lambda n, a: a[0],
    "Reshape": _reshape, "Unsqueeze": _unsqueeze, "Concat": lambda n, a: cthtorch.cat(a, n.i("axis")),
}


def _fold(g, initializers):
    """do_constant_folding: nodes whose inputs are all parameters or
    constants are computed now and become initializers; a
    BatchNormalization after a Conv with constant weights is folded into the
    Conv, as torch's exporter does in eval mode."""
    counter = [0]

    def new_init(t, consumer_op, like):
        v = g.addInput("onnx::%s_%d" % (consumer_op, counter[0]))
        counter[0] += 1
        v.setType(like.type() if isinstance(like.type(), _ir.TensorType) else _ir.TensorType.get())
        initializers[v] = t.contiguous()
        return v

    for n in list(g.nodes()):
        op = n.kind()[6:]
        if op == "BatchNormalization":
            conv = n.inputs()[0].node()
            if conv.kind() != "onnx::Conv" or len(n.inputs()[0].uses()) != 1:
                continue
            ts = [_const_tensor(v, initializers) for v in list(n.inputs())[1:]]
            w = _const_tensor(conv.inputs()[1], initializers)
            b = _const_tensor(conv.inputs()[2], initializers) if conv.inputsSize() > 2 else None
            if any(t is None for t in ts) or w is None or (conv.inputsSize() > 2 and b is None):
                continue
            gamma, beta, mean, var = [t.double() for t in ts]
            scale = gamma / (var + n.f("epsilon")).sqrt()
            w2 = (w.double() * scale.reshape([-1] + [1] * (w.dim() - 1))).to(w.dtype)
            b0 = b.double() if b is not None else cthtorch.zeros_like(mean)
            b2 = ((b0 - mean) * scale + beta).to(w.dtype)
            wv = new_init(w2, "Conv", conv.inputs()[1])
            bv = new_init(b2, "Conv", conv.inputs()[1])
            while conv.inputsSize() > 1:
                conv.removeInput(conv.inputsSize() - 1)
            conv.addInput(wv)
            conv.addInput(bv)
            conv.output().setType(n.output().type())
            n.output().replaceAllUsesWith(conv.output())
            n.destroy()
            continue
        if op not in _FOLD or not n.inputsSize():
            continue
        ts = [_const_tensor(v, initializers) for v in n.inputs()]
        if any(t is None for t in ts):
            continue
        res = _FOLD[op](n, ts)
        users = n.output().uses()
        consumer = users[0].user.kind()[6:] if users and users[0].user.kind().startswith("onnx::") else op
        n.output().replaceAllUsesWith(new_init(res, consumer, n.output()))
        n.destroy()


def _unqualified(path):
    """torch's node-name atom of a module path: from its last non-numeric
    part on ('layer1.0.conv1' -> 'conv1', 'layer1.0' -> 'layer1.0', '0.1' -> '0.1')."""
    parts = path.split(".")
    for i in range(len(parts) - 1, -1, -1):
        if not parts[i].isnumeric():
            return ".".join(parts[i:])
    return path


def _scope_path(scope):
    """'__module.layer1/__module.layer1.0/__module.layer1.0.conv1' -> '/layer1/layer1.0/conv1'."""
    return "".join("/" + _unqualified(p[len("__module."):] if p.startswith("__module.") else p)
                   for p in (scope.split("/") if scope else []))


def _value_type(v):
    t = v.type()
    if isinstance(t, _ir.TensorType) and t.scalarType() is not None:
        return sh.onnx_dtype(t.scalarType()), t.sizes()
    if isinstance(t, _ir.IntType):
        return _proto.INT64, []
    if isinstance(t, _ir.FloatType):
        return _proto.FLOAT, []
    if isinstance(t, _ir.BoolType):
        return _proto.BOOL, []
    return _proto.FLOAT, None


def _serialize(g, opset, initializers, input_names, output_names, dynamic_axes, keep_initializers_as_inputs,
               user_inputs, custom_opsets):
    names, used = {}, set()

    def unique(base):
        name, i = base, 0
        while name in used:
            i += 1
            name = "%s_%d" % (base, i)
        used.add(name)
        return name

    for i, v in enumerate(user_inputs):
        names[v] = unique(input_names[i] if input_names and i < len(input_names) else v.debugName())
    for v in initializers:
        names[v] = unique(v.debugName())
    outs = list(g.outputs())
    out_names = []
    for i, v in enumerate(outs):
        want = output_names[i] if output_names and i < len(output_names) else None
        if v in names:
            out_names.append(None)   # an input passed through: an Identity gives it its own name
        else:
            names[v] = unique(want if want else v.debugName())
            out_names.append(names[v])

    nodes, node_names, domains = [], set(), {}
    identities = []
    for i, v in enumerate(outs):
        if out_names[i] is None:
            want = output_names[i] if output_names and i < len(output_names) else "%s_identity" % names[v]
            out_names[i] = unique(want)
            identities.append(_proto.node("Identity", [names[v]], [out_names[i]], unique("Identity_%d" % i)))
    for n in g.nodes():
        kind = n.kind()
        if not kind.startswith("onnx::") and "::" in kind and kind.split("::")[0] in ("prim", "aten"):
            raise OnnxExporterError("ONNX export failed: a %s node is left in the exported graph" % kind)
        dom, op = kind.split("::", 1)
        dom = "" if dom == "onnx" else dom
        if dom:
            domains[dom] = (custom_opsets or {}).get(dom, 1)
        base = _scope_path(n.scopeName()) + "/" + op
        nname = base
        i = 0
        while nname in node_names:
            i += 1
            nname = "%s_%d" % (base, i)
        node_names.add(nname)
        for j, o in enumerate(n.outputs()):
            if o not in names:
                names[o] = unique("%s_output_%d" % (nname, j))
        attrs = []
        for a in sorted(n.attributeNames()):
            kk, val = n._attrs[a]
            if kk == "t":
                val = _proto.tensor("", val)
            attrs.append(_proto.attribute(a, kk, val))
        ins = ["" if v is None or sh.is_none(v) else names[v] for v in n.inputs()]
        nodes.append(_proto.node(op, ins, [names[o] for o in n.outputs()], nname, dom, attrs))
    nodes.extend(identities)

    def vinfo(v, name):
        et, shape = _value_type(v)
        dyn = (dynamic_axes or {}).get(name)
        if shape is not None:
            shape = list(shape)
            if dyn:
                for ax, dn in dyn.items():
                    shape[ax] = dn
            elif dynamic_axes and v not in user_inputs:
                shape = [None] * len(shape)   # may follow a dynamic input: left unknown
        return _proto.value_info(name, et, shape)

    inputs = [vinfo(v, names[v]) for v in user_inputs]
    if keep_initializers_as_inputs:
        inputs += [vinfo(v, names[v]) for v in initializers]
    outputs = [vinfo(v, n) for v, n in zip(outs, out_names)]
    inits = [_proto.tensor(names[v], t) for v, t in initializers.items()]
    gb = _proto.graph("main_graph", nodes, inputs, outputs, inits)
    opsets = {"": opset}
    opsets.update(domains)
    return _proto.model(gb, opsets, _IR_VERSION[opset], "pytorch", cthtorch.__version__.split("+")[0])


@contextlib.contextmanager
def select_model_mode_for_export(model, mode):
    from . import TrainingMode
    if not isinstance(model, cthtorch.nn.Module) or mode == TrainingMode.PRESERVE:
        yield
        return
    was = model.training
    model.train(mode == TrainingMode.TRAINING)
    try:
        yield
    finally:
        model.train(was)


def _normalize_dynamic_axes(dynamic_axes):
    out = {}
    for key, value in (dynamic_axes or {}).items():
        if isinstance(value, (list, tuple)):
            d = {}
            for i, x in enumerate(value):
                if not isinstance(x, int):
                    raise ValueError("The type of axis index is expected to be an integer")
                d.setdefault(x, "%s_dynamic_axes_%d" % (key, i + 1))
            value = d
        out[key] = dict(value)
    return out


def export(model, args, f, export_params, verbose, training, input_names, output_names, opset_version,
           do_constant_folding, dynamic_axes, keep_initializers_as_inputs, custom_opsets):
    from . import TrainingMode
    opset = _symbolics.MAX_OPSET if opset_version is None else int(opset_version)
    if not _symbolics.MIN_OPSET <= opset <= _symbolics.MAX_OPSET:
        raise ValueError("cthtorch.onnx.export: opset_version %d is not supported: this exporter writes opsets "
                         "%d to %d" % (opset, _symbolics.MIN_OPSET, _symbolics.MAX_OPSET))
    if isinstance(args, cthtorch.Tensor):
        args = (args,)
    args = tuple(args)
    if args and isinstance(args[-1], dict):
        if args[-1]:
            raise NotImplementedError("cthtorch.onnx.export: keyword inputs (a dict at the end of args) are not "
                                      "supported yet; pass them positionally")
        args = args[:-1]
    dyn = _normalize_dynamic_axes(dynamic_axes)
    training = TrainingMode.EVAL if training is None else training
    _in_export[0] = True
    try:
        with select_model_mode_for_export(model, training), cthtorch.no_grad():
            tgraph = _trace_graph(model, args)
            conv = _Converter(tgraph, model, opset)
            g = conv.run()
        _lower_constants(g)
        _dce(g)
        initializers = {v: conv.param_tensors[v] for v in g.inputs() if v in conv.param_tensors}
        if do_constant_folding and training != TrainingMode.TRAINING and export_params:
            initializers = {v: t.detach() for v, t in initializers.items()}
            _fold(g, initializers)
            _dce(g)
        used = {v for v in g.inputs() if v.hasUses() or v in set(g.outputs())}
        initializers = {v: a for v, a in initializers.items() if v in used}
        if isinstance(model, cthtorch.nn.Module):   # state_dict's order, as torch writes them; folded ones last
            order = {k: i for i, k in enumerate(model.state_dict(keep_vars=True))}
            initializers = dict(sorted(initializers.items(), key=lambda kv: order.get(kv[0].debugName(), len(order))))
        for i in reversed(range(len(g.inputs()))):   # parameters that folding replaced
            v = g.inputs()[i]
            if v not in used and v not in conv.user_inputs:
                g.eraseInput(i)
        if not export_params:   # parameters are inputs the caller feeds
            user_inputs = conv.user_inputs + list(initializers)
            initializers = {}
        else:
            user_inputs = conv.user_inputs
        if verbose:
            print(g)
        data = _serialize(g, opset, initializers, input_names, output_names, dyn, keep_initializers_as_inputs,
                          user_inputs, custom_opsets)
    finally:
        _in_export[0] = False
    if isinstance(f, (str, os.PathLike)):
        with open(f, "wb") as fh:
            fh.write(data)
    elif f is not None:
        f.write(data)
    return data


def _trace_graph(model, args):
    import warnings
    from cthtorch.jit import TracerWarning
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TracerWarning)
        if isinstance(model, cthtorch.nn.Module):
            traced = cthtorch.jit.trace(model, args, check_trace=False, strict=False)
            return traced.inlined_graph
        from cthtorch.jit._module import ScriptFunction
        if isinstance(model, ScriptFunction):
            return model.graph
        return cthtorch.jit.trace(model, args, check_trace=False, strict=False).graph
