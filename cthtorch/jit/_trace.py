"""torch.jit.trace / trace_module: run the function once and record every op
it calls at the dispatch point (cthtorch/_ops/dispatch.py) into a Graph.

The tracer is a dispatch observer. It records the outermost op of each call
(a composite's inner ops are its own business, as aten::linear hides its
addmm in torch's traces), keeps a map from live tensors to graph values
(an in-place op's result maps to its new output, as in torch), and turns
arguments into values: traced tensors by the map, a module's parameters and
buffers by prim::GetAttr, other tensors into prim::Constant, Python scalars
and lists into constants and prim::ListConstruct. Sizes of traced tensors
are 0-dim tensors while tracing (aten::size + prim::NumToTensor, turned back
into ints by aten::Int where an op wants an int), so size arithmetic stays
in the graph. Submodule calls are traced into their own graphs and called by
prim::CallMethod, found through module hooks.
"""
import contextlib
import inspect
import os
import sys
import threading
import warnings

import cthtorch
from cthtorch import _C
from cthtorch._utils import _user_stacklevel

from . import _ir, _schema
from ._passes import eliminate_dead_code

__all__ = ["trace", "trace_module", "TracingCheckError", "is_tracing"]

_PKG_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_state = None   # the TracingState while a trace runs


class TracingCheckError(Exception):
    def __init__(self, graph_diff_error, tensor_compare_error, extra_msg=None):
        self.message = "Tracing failed sanity checks!\n"
        if extra_msg is not None:
            self.message += extra_msg + "\n"
        if graph_diff_error is not None:
            self.message += "ERROR: Graphs differed across invocations!\n" + graph_diff_error + "\n"
        if tensor_compare_error is not None:
            self.message += ("ERROR: Tensor-valued Constant nodes differed in value across invocations. This "
                             "often indicates that the tracer has encountered untraceable code.\n"
                             + tensor_compare_error + "\n")
        super().__init__(self.message)


def is_tracing():
    return _state is not None and _state.thread == threading.get_ident()


def _tracer_warning():
    from . import TracerWarning
    return TracerWarning


def _user_location():
    """(file, line, 0) of the innermost frame outside cthtorch: where the
    user's code called the op (torch prints traces' source ranges so)."""
    f = sys._getframe(2)
    while f is not None:
        fn = f.f_code.co_filename
        if not os.path.abspath(fn).startswith(_PKG_DIR + os.sep):
            return (fn, f.f_lineno, 0)
        f = f.f_back
    return None


def _caller_local_name(t):
    """The name of a local variable of the user's frame that holds t, '' if
    none: torch's tracer names a value so when an op reads it (%y for y)."""
    f = sys._getframe(2)
    while f is not None and os.path.abspath(f.f_code.co_filename).startswith(_PKG_DIR + os.sep):
        f = f.f_back
    if f is None:
        return ""
    for k, v in f.f_locals.items():
        if v is t:
            return k if k != "self" and not k[:1].isdigit() else ""
    return ""


class _Frame:
    """One graph being recorded: the top function/module, or a submodule call."""

    def __init__(self, graph, module=None, self_value=None, scope=""):
        self.graph = graph
        self.module = module
        self.self_value = self_value
        self.scope = scope
        self.values = {}        # id(tensor) -> (tensor, Value)
        self.attrs = {}         # id(tensor) -> attribute path (tuple of names) from module
        self.attr_values = {}   # path -> Value of its prim::GetAttr
        if module is not None:
            for name, t in list(module.named_parameters()) + list(module.named_buffers()):
                self.attrs.setdefault(id(t), tuple(name.split(".")))
            self.attr_tensors = [t for _, t in list(module.named_parameters()) + list(module.named_buffers())]


class TracingState:
    def __init__(self):
        self.thread = threading.get_ident()
        self.depth = 0
        self.paused = 0
        self.frames = []
        self.calls = []            # per open module call: its _Frame, or None when not traced apart
        self.pending_ints = []     # (int, Value): traced sizes the parser turned into ints, in order
        self.call_ints = []        # those of the op call being recorded
        self.traced_modules = {}   # id(original module) -> TracedModule

    @property
    def frame(self):
        return self.frames[-1]

    # -- the dispatch observer
    def enter(self, name):
        if threading.get_ident() != self.thread or self.paused:
            return None
        self.depth += 1
        if self.depth == 1:   # the ints this call's arguments came from (parsed before enter)
            self.call_ints, self.pending_ints = self.pending_ints, []
        return self.depth

    def int_from_tensor(self, t):
        if threading.get_ident() == self.thread and not self.paused and self.depth == 0:
            v = self.lookup(t)
            if v is not None:
                self.pending_ints.append((int(t), v))

    def exit(self, tok, name, schema, args, kwargs, result):
        if tok is None:
            return
        self.depth -= 1
        if tok != 1:
            return
        if result is None:
            self.call_ints = []
            return
        self.paused += 1
        try:
            self._record(name, schema, args, kwargs or {}, result)
        finally:
            self.paused -= 1
            self.call_ints = []

    @contextlib.contextmanager
    def pause(self):
        self.paused += 1
        try:
            yield
        finally:
            self.paused -= 1

    # -- values
    def lookup(self, t):
        e = self.frame.values.get(id(t))
        return e[1] if e is not None and e[0] is t else None

    def bind(self, t, v):
        self.frame.values[id(t)] = (t, v)

    def _insert(self, n, loc=None):
        if loc is not None:
            n._source = loc
        if self.frame.scope:
            n._scope = self.frame.scope
        return self.frame.graph.insertNode(n)

    def constant(self, val, loc=None):
        g = self.frame.graph
        n = g.create("prim::Constant")
        _ir._set_constant(n, val)
        if isinstance(val, cthtorch.Tensor) and val.requires_grad:
            raise RuntimeError("Cannot insert a Tensor that requires grad as a constant. Consider making it a "
                               "parameter or input, or detaching the gradient\nTensor:\n%s" % val)
        self._insert(n, loc if val is not None else None)
        return n.output()

    def attr_value(self, path):
        fr = self.frame
        v = fr.attr_values.get(path)
        if v is not None:
            return v
        base = fr.self_value if len(path) == 1 else self.attr_value(path[:-1])
        n = fr.graph.create("prim::GetAttr", [base])
        n.s_("name", path[-1])
        obj = fr.module
        for p in path:
            obj = getattr(obj, p)
        out = n.output()
        if isinstance(obj, cthtorch.Tensor):
            out.setType(_ir.TensorType.get())
        else:
            from ._module import class_type_name
            # a scripted submodule has its class type already (__torch__.G, not its Python wrapper's)
            typ = getattr(obj, "_type", None) if isinstance(obj, cthtorch.nn.Module) else None
            out.setType(typ if isinstance(typ, _ir.ClassType) else _ir.ClassType(class_type_name(type(obj))))
        out.setDebugName(path[-1] if not path[-1].isdigit() else "_" + path[-1])
        # torch's traces fetch attributes first (each new one on top)
        if len(path) == 1:
            fr.graph.prependNode(n)
        else:
            n.insertAfter(base.node())
        fr.attr_values[path] = out
        return out

    def tensor_value(self, t, loc=None):
        v = self.lookup(t)
        if v is not None:
            if not v.hasDebugName() and v.node().kind() != "prim::Param":
                nm = _caller_local_name(t)
                if nm:
                    v.setDebugName(nm)
            return v
        path = self.frame.attrs.get(id(t))
        if path is not None:
            return self.attr_value(path)
        return self.constant(t, loc)

    def value_for(self, x, typ, loc=None):
        """A graph value for argument x, expected to be of JIT type typ."""
        base = typ.getElementType() if isinstance(typ, _ir.OptionalType) else typ
        if isinstance(x, cthtorch.Tensor):
            v = self.lookup(x)
            if isinstance(base, (_ir.IntType, _ir.FloatType, _ir.BoolType)) and x.dim() == 0:
                if v is not None:   # a traced size (0-dim tensor) where an int goes
                    return self._to_number(v, base)
                return self.constant(x.item(), loc)
            return self.tensor_value(x, loc)
        if isinstance(x, (list, tuple)):
            elem = base.getElementType() if isinstance(base, _ir.ListType) else _ir.AnyType.get()
            if not isinstance(base, _ir.ListType) and isinstance(base, (_ir.IntType, _ir.FloatType)):
                elem = base   # int[2] given as a list where the schema said int
            vals = [self.value_for(e, elem, loc) for e in x]
            n = self.frame.graph.create("prim::ListConstruct", vals)
            et = elem if not isinstance(elem, _ir.AnyType) else \
                (_ir.TensorType.get() if x and isinstance(x[0], cthtorch.Tensor) else _ir.type_of_value(list(x)).getElementType())
            if isinstance(et, _ir.TensorType):
                et = _ir.TensorType.get()
            n.output().setType(_ir.ListType(et))
            self._insert(n)
            return n.output()
        if isinstance(x, cthtorch.layout):
            return self.constant(0 if x == cthtorch.strided else 1, loc)
        if isinstance(x, cthtorch.memory_format):
            return self.constant(["contiguous_format", "preserve_format", "channels_last",
                                  "channels_last_3d"].index(str(x).rpartition(".")[2]), loc)
        if isinstance(x, cthtorch.Generator):
            return self.constant(None)
        if isinstance(x, int) and not isinstance(x, bool) and self.call_ints and self.call_ints[0][0] == x \
                and isinstance(base, (_ir.IntType, _ir.NumberType, _ir.FloatType)):
            _, v = self.call_ints.pop(0)   # this int came from a traced size
            return self._to_number(v, _ir.IntType.get())
        if isinstance(x, float) and isinstance(base, _ir.IntType) and x == int(x):
            x = int(x)
        if isinstance(x, int) and not isinstance(x, bool) and isinstance(base, _ir.FloatType):
            x = float(x)
        return self.constant(x, loc)

    def _to_number(self, v, typ):
        kind = {"int": "aten::Int", "float": "aten::Float", "bool": "aten::Bool"}[str(typ)]
        n = self.frame.graph.create(kind, [v])
        n.output().setType(typ)
        self._insert(n)
        if v.node().kind() == "prim::NumToTensor":   # as torch's tracer: the conversion follows the size it reads
            at = v.node()
            while at.next() is not n and at.next().kind() == kind and at.next().inputs()[0] is v:
                at = at.next()
            if at.next() is not n:
                n.moveAfter(at)
        return n.output()

    # -- recording an op
    def _record(self, name, schema_text, args, kwargs, result):
        loc = _user_location()
        if name == "aten::tensor" and isinstance(result, cthtorch.Tensor) and not result.requires_grad:
            warnings.warn("torch.tensor results are registered as constants in the trace. You can safely ignore "
                          "this warning if you use this function to create tensors out of constant variables that "
                          "would be the same every time you call this function. In any other case, this might "
                          "cause the trace to be incorrect.", _tracer_warning(), stacklevel=_user_stacklevel())
            # torch's tracer records a literal as its data, a constant, moved to the result's device and
            # dtype and detached: .code shows torch.to(CONSTANTS.c0, ...)
            g = self.frame.graph
            to = g.create("aten::to", [self.constant(result.detach().clone(), loc), self.constant(result.device, loc),
                                       self.constant(result.dtype, loc), self.constant(False, loc),
                                       self.constant(False, loc), self.constant(None)])
            to.setSchema(_schema.find_schema("aten::to", "device"))
            to.output().setType(_tensor_type(result))
            self._insert(to, loc)
            d = g.create("aten::detach", [to.output()])
            d.setSchema(_schema.get_schemas("aten::detach")[0])
            d.output().setType(_tensor_type(result))
            self._insert(d, loc)
            self.bind(result, d.output())
            return
        schema, bound = _bind(name, schema_text, args, kwargs)
        if schema is None:
            raise RuntimeError("The tracer cannot record %s: no schema matches its arguments %s"
                               % (name, _describe(args, kwargs)))
        if name == "aten::_to_copy" and isinstance(result, cthtorch.Tensor):
            name, schema, bound = _conversion_as_to(schema, bound, result)
        elif name == "aten::slice" and isinstance(result, cthtorch.Tensor) and len(bound) == 5:
            # Python's x[:n], x[n:] as torch's tracer records them: the omitted bounds as 0 and INT64_MAX
            bound = list(bound)
            bound[2] = 0 if bound[2] is None else bound[2]
            bound[3] = 9223372036854775807 if bound[3] is None else bound[3]
        names = [a.name for a in schema.arguments]
        if "pin_memory" in names and "device" in names:
            # torch's tracer records a factory's options as resolved: pin_memory False, and the device the
            # result is on unless the op takes it from a tensor argument (zeros_like, new_zeros)
            bound = list(bound)
            if bound[names.index("pin_memory")] is None:
                bound[names.index("pin_memory")] = False
            d = names.index("device")
            if bound[d] is None and isinstance(result, cthtorch.Tensor) and \
                    not isinstance(schema.arguments[0].type, _ir.TensorType):
                bound[d] = result.device
        ins = [self.value_for(v, a.type, loc) for a, v in zip(schema.arguments, bound)]
        results = result if isinstance(result, (tuple, list)) and len(schema.returns) > 1 else (result,)
        g = self.frame.graph
        n = g.create(name, ins, len(results))
        n.setSchema(schema)
        unpack = []
        for o, r, ret in zip(n.outputs(), results, schema.returns):
            if isinstance(r, cthtorch.Tensor):
                o.setType(_tensor_type(r))
                self.bind(r, o)
            elif isinstance(r, (tuple, list)) and r and all(isinstance(x, cthtorch.Tensor) for x in r):
                # Tensor[] (split, chunk, unbind): its pieces come out of a
                # prim::ListUnpack, as in torch's traces, so later ops find them
                o.setType(_ir.ListType.ofTensors())
                unpack.append((o, r))
            else:
                o.setType(ret.type if not isinstance(ret.type, _ir.NumberType) else _ir.type_of_value(r))
                if name in ("aten::item", "aten::Int", "aten::Float"):
                    warnings.warn("Converting a tensor to a Python number might cause the trace to be incorrect. "
                                  "We can't record the data flow of Python values, so this value will be treated "
                                  "as a constant in the future. This means that the trace might not generalize "
                                  "to other inputs!", _tracer_warning(), stacklevel=4)
        self._insert(n, loc)
        for o, r in unpack:
            u = g.create("prim::ListUnpack", [o], len(r))
            for uo, x in zip(u.outputs(), r):
                uo.setType(_tensor_type(x))
                self.bind(x, uo)
            self._insert(u, loc)

    # -- sizes: 0-dim tensors standing for aten::size results
    def size_tensor(self, t, dim, size):
        v = self.lookup(t)
        g = self.frame.graph
        loc = _user_location()
        dv = self.constant(dim, loc)
        n = g.create("aten::size", [v, dv])
        n.output().setType(_ir.IntType.get())
        self._insert(n, loc)
        nt = g.create("prim::NumToTensor", [n.output()])
        nt.output().setType(_ir.TensorType(cthtorch.int64, None, None, None, cthtorch.device("cpu")))
        self._insert(nt)
        st = cthtorch.tensor(size)
        self.bind(st, nt.output())
        return st


def _tensor_type(t):
    return _ir.TensorType.create_from_tensor(t)


def _describe(args, kwargs):
    return "(%s)" % ", ".join([type(a).__name__ for a in args] + ["%s=%s" % (k, type(v).__name__)
                                                                  for k, v in kwargs.items()])


def _parse_reported(name, text):
    """The schema a declared op reports (its declaration's func text); for an
    in-place or out= call, the registry's matching form."""
    s = _schema.parse_schema(text)
    if s.name != name:
        found = _schema.find_schema(name, s.overload_name)
        if found is not None:
            return found
        s.name = name
    return s


def _fits(x, t):
    """A Python value fits a schema type (loosely: for picking an overload)."""
    if isinstance(t, _ir.OptionalType):
        return x is None or _fits(x, t.getElementType())
    if isinstance(x, cthtorch.Tensor):
        return isinstance(t, (_ir.TensorType, _ir.AnyType)) or (
            x.dim() == 0 and isinstance(t, (_ir.IntType, _ir.FloatType, _ir.NumberType, _ir.BoolType)))
    if isinstance(t, _ir.TensorType):
        return False
    if isinstance(t, _ir.ListType):
        if isinstance(x, (list, tuple)):
            return all(_fits(e, t.getElementType()) for e in x)
        return isinstance(x, int) and isinstance(t.getElementType(), _ir.IntType)
    if isinstance(t, _ir.IntType):
        return isinstance(x, int) or isinstance(x, (cthtorch.dtype, cthtorch.layout, cthtorch.memory_format))
    if isinstance(t, _ir.FloatType):
        return isinstance(x, (int, float)) and not isinstance(x, bool)
    if isinstance(t, _ir.NumberType):
        return isinstance(x, (int, float, complex))
    if isinstance(t, _ir.BoolType):
        return isinstance(x, bool)
    if isinstance(t, _ir.StringType):
        return isinstance(x, str)
    if isinstance(t, _ir.DeviceObjType):
        return isinstance(x, (cthtorch.device, str))
    if isinstance(t, _ir.NoneType):
        return x is None
    return True


def _is_int_like(x):
    return isinstance(x, int) and not isinstance(x, bool) or isinstance(x, cthtorch.Tensor) and x.dim() == 0


def _bind_to(s, args, kwargs):
    """Arguments as called, in s's order with defaults filled; None if they
    do not fit. A list argument given as varargs (rand(2, 3)) is gathered."""
    pos_params = [a for a in s.arguments if not a.kwarg_only]
    args = list(args)
    # Python's binding lets an int[] be spelled as varargs (rand(2, 3), x.new_zeros(2, 3)) or as one int
    # (x.new_zeros(4)); as torch's schema matching, gather them into the list the schema declares, at the
    # list's own position: the last positional parameter, or one followed by parameters the call leaves out
    for k, p in enumerate(pos_params):
        if isinstance(p.type, _ir.ListType) and p.N is None and isinstance(p.type.getElementType(), _ir.IntType):
            if k < len(args) and (k == len(pos_params) - 1 or len(args) > len(pos_params)) \
                    and all(_is_int_like(a) for a in args[k:]):
                args = args[:k] + [list(args[k:])]
            break
    if len(args) > len(pos_params):
        return None
    out = []
    used = set()
    for i, a in enumerate(s.arguments):
        if not a.kwarg_only and i < len(args):
            v = args[i]
        elif a.name in kwargs:
            v = kwargs[a.name]
            used.add(a.name)
        elif a.has_default:
            v = a.default_value
        else:
            return None
        if not _fits(v, a.type) and not (a.has_default and v is a.default_value):
            return None
        out.append(v)
    if set(kwargs) - used:
        return None
    return out


def _bind(name, schema_text, args, kwargs):
    if schema_text:
        s = _parse_reported(name, schema_text)
        if len(args) == len(s.arguments):
            return s, list(args)
        b = _bind_to(s, args, kwargs)
        return (s, b) if b is not None else (None, None)
    for s in _schema.get_schemas(name):
        if s.overload_name.endswith("out") or any(a.is_out for a in s.arguments):
            continue
        b = _bind_to(s, args, kwargs)
        if b is not None:
            return s, b
    s = _schema_from_signature(name, args, kwargs)
    if s is not None:
        b = _bind_to(s, args, kwargs)
        if b is not None:
            return s, b
    return None, None


def _schema_from_signature(name, args, kwargs):
    """A schema for a composite that has none written: from its Python
    signature, typed by the values of this call; registered for later use."""
    from ._interpreter import op_callable
    try:
        fn = op_callable(name)
        sig = inspect.signature(getattr(fn, "__wrapped__", fn))
    except (RuntimeError, TypeError, ValueError):
        return None
    parts, star = [], False
    try:
        bound = sig.bind(*args, **kwargs)
    except TypeError:
        return None
    for p in sig.parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            return None
        v = bound.arguments.get(p.name, p.default)
        if v is inspect.Parameter.empty:
            return None
        t = _type_str(v)
        if t is None:
            return None
        if p.kind == p.KEYWORD_ONLY and not star:
            parts.append("*")
            star = True
        if p.default is not inspect.Parameter.empty:
            d = _default_str(p.default)
            if d is None:
                return None
            if p.default is None and not t.endswith("?"):
                t += "?"
            parts.append("%s %s=%s" % (t, p.name, d))
        else:
            parts.append("%s %s" % (t, p.name))
    text = "%s(%s) -> Tensor" % (name, ", ".join(parts))
    try:
        return _schema.register_schema(text)
    except RuntimeError:
        return None


def _type_str(v):
    if isinstance(v, cthtorch.Tensor):
        return "Tensor"
    if v is None:
        return "Tensor?"
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, int):
        return "int"
    if isinstance(v, float):
        return "float"
    if isinstance(v, str):
        return "str"
    if isinstance(v, cthtorch.dtype):
        return "ScalarType?"
    if isinstance(v, (list, tuple)):
        if all(isinstance(e, int) and not isinstance(e, bool) for e in v):
            return "int[]"
        if all(isinstance(e, float) for e in v):
            return "float[]"
        if all(isinstance(e, cthtorch.Tensor) for e in v):
            return "Tensor[]"
    return None


def _default_str(d):
    if d is None or isinstance(d, (bool, int, float)):
        return repr(d) if not isinstance(d, str) else '"%s"' % d
    if isinstance(d, str):
        return '"%s"' % d
    if isinstance(d, (list, tuple)) and all(isinstance(e, (int, float)) for e in d):
        return "[%s]" % ", ".join(repr(e) for e in d)
    return None


# ---------------------------------------------------------------- hooks while tracing

class _Patches:
    """Tensor.size/shape/__bool__ and module hooks, installed for one trace."""

    def __init__(self, state):
        self.state = state
        self.saved = {}
        self.handles = []

    def __enter__(self):
        st = self.state
        T = cthtorch.Tensor
        base_size = _C._TensorBase.size
        base_shape = _C._TensorBase.shape.__get__

        def traced(t):
            return st.paused == 0 and st.depth == 0 and st.lookup(t) is not None

        def size(t, dim=None):
            if not traced(t):
                return base_size(t) if dim is None else base_size(t, dim)
            with st.pause():
                sizes = list(base_size(t))
            if dim is not None:
                d = dim + len(sizes) if dim < 0 else dim
                if not 0 <= d < len(sizes):
                    return base_size(t, dim)   # raises the usual error
                with st.pause():
                    return st.size_tensor(t, dim, sizes[d])
            with st.pause():
                return _TracedSize(st.size_tensor(t, d, s) for d, s in enumerate(sizes))

        def shape(t):
            return size(t) if traced(t) else base_shape(t)

        def to_bool(t):
            if traced(t):
                warnings.warn("Converting a tensor to a Python boolean might cause the trace to be incorrect. "
                              "We can't record the data flow of Python values, so this value will be treated as "
                              "a constant in the future. This means that the trace might not generalize to other "
                              "inputs!", _tracer_warning(), stacklevel=2)
            return _C._TensorBase.__bool__(t)

        for name, obj in (("size", size), ("shape", property(shape)), ("__bool__", to_bool)):
            self.saved[name] = T.__dict__.get(name, _MISSING)
            setattr(T, name, obj)
        from cthtorch.nn.modules import module as M
        self.handles.append(M.register_module_forward_pre_hook(self._pre_hook))
        self.handles.append(M.register_module_forward_hook(self._post_hook))
        return self

    def __exit__(self, *exc):
        T = cthtorch.Tensor
        for name, obj in self.saved.items():
            if obj is _MISSING:
                delattr(T, name)
            else:
                setattr(T, name, obj)
        for h in self.handles:
            h.remove()
        return False

    # -- submodule calls become prim::CallMethod
    def _pre_hook(self, mod, args):
        st = self.state
        if st.paused or st.depth or threading.get_ident() != st.thread:
            return None
        fr = st.frame
        path = _module_path(fr.module, mod) if fr.module is not None else None
        if path is None:
            st.calls.append(None)   # not a submodule of the traced one: its ops go to the caller's graph
            return None
        with st.pause():
            from ._module import class_type_name
            g = _ir.Graph()
            sv = g.addInput("self")
            sv.setType(_ir.ClassType(class_type_name(type(mod))))
            sub = _Frame(g, mod, sv, (fr.scope + "." if fr.scope else "__module.") + ".".join(path))
            sub.call_path = path
            sub.call_args = []
            for a, nm in zip(args, _arg_names(mod.forward, len(args))):
                if not isinstance(a, cthtorch.Tensor):
                    raise NotImplementedError("torch.jit.trace: a submodule (%s) called with a %s argument is "
                                              "not supported yet" % (type(mod).__name__, type(a).__name__))
                sub.call_args.append(st.tensor_value(a))
                v = g.addInput(nm)
                v.setType(_tensor_type(a))
                sub.values[id(a)] = (a, v)
        st.frames.append(sub)
        st.calls.append(sub)
        from ._module import ScriptModule
        if isinstance(mod, ScriptModule):
            # a scripted submodule keeps its own graph (control flow and all): only its call is traced, and
            # its interpreter's ops and tensor-to-bool conversions are neither recorded nor warned about
            st.paused += 1
            sub.scripted_pause = st.paused
        return None

    def _post_hook(self, mod, args, result):
        st = self.state
        sub = st.calls[-1] if st.calls else None
        scripted = sub is not None and getattr(sub, "scripted_pause", None) == st.paused and sub.module is mod
        if scripted:
            st.paused -= 1
        if st.paused or st.depth or threading.get_ident() != st.thread or not st.calls:
            return None
        sub = st.calls.pop()
        if sub is None:
            return None
        with st.pause():
            if not scripted:
                _register_outputs(st, result, allow_none=True)
            st.frames.pop()
            if scripted:
                out_type = mod._get_method("forward").graph.outputs()[0].type()
            else:
                _canonicalize(sub.graph)
                eliminate_dead_code(sub.graph)
                out_type = sub.graph.outputs()[0].type()
                traced_sub = st.traced_modules.get(id(mod))
                if traced_sub is not None:
                    traced_sub._define_method("forward", sub.graph)
            fr = st.frame
            recv = st.attr_value(sub.call_path)
            n = fr.graph.create("prim::CallMethod", [recv] + sub.call_args, 1)
            n.s_("name", "forward")
            if isinstance(result, cthtorch.Tensor):
                n.output().setType(_ir.TensorType.get())
                st._insert(n)
                st.bind(result, n.output())
            else:
                n.output().setType(out_type)
                st._insert(n)
                _unpack_into(st, n.output(), result)
        return None


_MISSING = object()


class _TracedSize(tuple):
    """x.size() of a traced tensor while tracing: 0-dim tensors, as torch's."""

    def numel(self):
        n = 1
        for s in self:
            n *= int(s)
        return n

    def __repr__(self):
        return "torch.Size([%s])" % ", ".join(str(int(s)) for s in self)


def _module_path(root, mod):
    for name, m in root.named_modules():
        if m is mod and name:
            return tuple(name.split("."))
    return None


def _arg_names(fn, n):
    try:
        params = [p for p in inspect.signature(fn).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        names = [p.name for p in params]
    except (TypeError, ValueError):
        names = []
    if len(names) < n:
        try:
            var = [p.name for p in inspect.signature(fn).parameters.values() if p.kind == p.VAR_POSITIONAL]
        except (TypeError, ValueError):
            var = []
        base = var[0] if var else "input"
        names += ["%s_%d" % (base, i) for i in range(n - len(names))]
    return names[:n]


def _flat_tensors(x):
    if isinstance(x, cthtorch.Tensor):
        return [x]
    if isinstance(x, (list, tuple)):
        return [t for e in x for t in _flat_tensors(e)]
    if isinstance(x, dict):
        return [t for e in x.values() for t in _flat_tensors(e)]
    return []


def _output_value(st, x, allow_none=False):
    """A graph value for (a structure of) outputs. A submodule may return
    None inside its result (MultiheadAttention's weights when not needed)."""
    g = st.frame.graph
    if isinstance(x, cthtorch.Tensor):
        return st.tensor_value(x)
    if x is None and allow_none:
        return st.constant(None)
    if isinstance(x, (tuple, list)):
        vals = [_output_value(st, e, allow_none) for e in x]
        kind = "prim::TupleConstruct" if isinstance(x, tuple) else "prim::ListConstruct"
        n = g.create(kind, vals)
        if isinstance(x, tuple):
            n.output().setType(_ir.TupleType([v.type() for v in vals]))
        else:
            n.output().setType(_ir.ListType(_ir.TensorType.get()))
        st._insert(n)
        return n.output()
    if isinstance(x, dict):
        vals = []
        for k, v in x.items():
            vals += [st.constant(k), _output_value(st, v, allow_none)]
        n = g.create("prim::DictConstruct", vals)
        n.output().setType(_ir.DictType(_ir.type_of_value(next(iter(x))) if x else _ir.StringType.get(),
                                        _ir.TensorType.get()))
        st._insert(n)
        return n.output()
    raise RuntimeError("Only tensors, lists, tuples of tensors, or dictionary of tensors can be output from "
                       "traced functions")


def _register_outputs(st, result, allow_none=False):
    st.frame.graph.registerOutput(_output_value(st, result, allow_none))


def _unpack_into(st, v, result):
    """Binds the tensors of a structured call result to unpacked values of v."""
    if isinstance(result, cthtorch.Tensor):
        st.bind(result, v)
        return
    if isinstance(result, (tuple, list)):
        kind = "prim::TupleUnpack" if isinstance(result, tuple) else "prim::ListUnpack"
        n = st.frame.graph.create(kind, [v], len(result))
        types = v.type().elements() if isinstance(v.type(), _ir.TupleType) else [_ir.TensorType.get()] * len(result)
        for o, t, r in zip(n.outputs(), types, result):
            o.setType(_tensor_type(r) if isinstance(r, cthtorch.Tensor) else t)   # the value traced, as torch
        st._insert(n)
        for o, r in zip(n.outputs(), result):
            _unpack_into(st, o, r)


# ---------------------------------------------------------------- entry points

def _as_tuple(example_inputs):
    if isinstance(example_inputs, tuple):
        return example_inputs
    return (example_inputs,)


def _clone_inputs(args):
    def c(a):
        if isinstance(a, cthtorch.Tensor):
            r = a.detach().clone()
            if a.requires_grad:
                r.requires_grad_(True)
            return r
        if isinstance(a, (tuple, list)):
            return type(a)(c(e) for e in a)
        if isinstance(a, dict):
            return {k: c(v) for k, v in a.items()}
        return a
    return tuple(c(a) for a in args)


def _run_traced(fn, args, graph, module=None, self_value=None, traced_modules=None, arg_names=None):
    """Runs fn(*args) under a new tracing state that records into graph."""
    global _state
    from . import _tracing
    if _state is not None:
        raise RuntimeError("torch.jit.trace: nested tracing is not supported")
    st = TracingState()
    if traced_modules:
        st.traced_modules = traced_modules
    top = _Frame(graph, module, self_value)
    st.frames.append(top)
    names = arg_names or _arg_names(fn, len(args))
    args = [_add_input(st, graph, a, nm) for a, nm in zip(args, names)] + list(args[len(names):])
    from cthtorch._ops import dispatch
    _state = st
    _tracing[0] = True
    try:
        with _Patches(st), dispatch.observing(st):
            result = fn(*args)
        st.paused += 1
        _register_outputs(st, result)
    finally:
        _state = None
        _tracing[0] = False
    _canonicalize(graph)
    eliminate_dead_code(graph)
    return result


def _replace_node(n, kind, inputs):
    g = n.owningGraph()
    new = g.create(kind, inputs, 1)
    new._source, new._scope = n._source, n._scope
    new.output().setType(n.outputs()[0].type())
    new.insertBefore(n)
    n.outputs()[0].replaceAllUsesWith(new.output())
    for o in n.outputs():
        if o.hasUses():
            return
    n.destroy()


def _canonicalize(graph):
    """Spell ops as torch's traces do: F.max_pool2d is aten::max_pool2d (not
    its with_indices kernel), a conv is aten::_convolution."""
    from ._ir import _walk
    for n in list(_walk(graph.block())):
        if n.kind() == "aten::max_pool2d_with_indices" and not n.outputs()[1].hasUses():
            _replace_node(n, "aten::max_pool2d", n.inputs())
        elif n.kind() == "aten::conv2d":
            inp, w, b, stride, padding, dilation, groups = n.inputs()
            with graph.insert_point_guard(n):
                c = [graph.insertConstant(v) for v in (False, 0, True)]
                for k in c:
                    k.node()._scope = n._scope
                zeros = graph.insertNode(graph.create("prim::ListConstruct", [c[1], c[1]]))
                zeros.output().setType(_ir.ListType(_ir.IntType.get()))
                zeros._scope = n._scope
            _replace_node(n, "aten::_convolution", [inp, w, b, stride, padding, dilation, c[0], zeros.output(),
                                                     groups, c[0], c[0], c[2], c[2]])


def _conversion_as_to(schema, bound, result):
    """x.long(), x.to(dtype), x.to(device, dtype) run as _to_copy; torch's traces record them as the
    aten::to the user called: to.dtype when the device stays, else to.device."""
    arg = dict(zip([a.name for a in schema.arguments], bound))
    src, device = arg["self"], arg.get("device")
    if device is None or cthtorch.device(device) == src.device:
        return "aten::to", _schema.find_schema("aten::to", "dtype"), \
            [src, result.dtype, arg.get("non_blocking", False), arg.get("copy", False), None]
    return "aten::to", _schema.find_schema("aten::to", "device"), \
        [src, result.device, result.dtype, arg.get("non_blocking", False), arg.get("copy", False), None]


def _input_tensor(st, a, v):
    """Binds input tensor a to graph value v; the same tensor passed again is passed on as a view of
    itself, as torch's tracer does, so that each input keeps its own value in the graph."""
    if id(a) in st.frame.values:
        a = a.view(a.shape)
    st.bind(a, v)
    return a


def _add_input(st, graph, a, name):
    """Adds graph input `name` for example input a; returns what the traced function is passed."""
    if isinstance(a, cthtorch.Tensor):
        v = graph.addInput(name)
        v.setType(_tensor_type(a))
        return _input_tensor(st, a, v)
    if isinstance(a, (tuple, list)) and all(isinstance(e, cthtorch.Tensor) for e in a):
        v = graph.addInput(name)
        types = [_tensor_type(e) for e in a]
        v.setType(_ir.TupleType(types) if isinstance(a, tuple) else _ir.ListType(_ir.TensorType.get()))
        n = graph.create("prim::TupleUnpack" if isinstance(a, tuple) else "prim::ListUnpack", [v], len(a))
        for o, t in zip(n.outputs(), types):
            o.setType(t)
        graph.insertNode(n)
        elems = [_input_tensor(st, e, o) for e, o in zip(a, n.outputs())]
        return tuple(elems) if isinstance(a, tuple) else elems
    raise RuntimeError("Type '%s' cannot be traced. Only Tensors and (possibly nested) Lists, Dicts, and Tuples "
                       "of Tensors can be traced" % type(a).__name__)


def _traced_fn_names(fn):
    """(name, qualified name) of a traced free function, as torch names them: `<lambda>` is not an
    identifier, so a lambda's function is `_lambda` (its code and a saved archive must parse), and the
    qualified name is `__torch__.<module>.<name>`, without the module for __main__."""
    name = getattr(fn, "__name__", None)
    if not isinstance(name, str):
        raise RuntimeError("Could not get name of python class object")
    if name == "<lambda>":
        name = "_lambda"
    mod = getattr(fn, "__module__", None) or "__main__"
    if mod.startswith("cthtorch"):
        mod = "torch" + mod[len("cthtorch"):]
    return name, "__torch__." + name if mod == "__main__" else "__torch__.%s.%s" % (mod, name)


def trace(func, example_inputs=None, optimize=None, check_trace=True, check_inputs=None, check_tolerance=1e-5,
          strict=True, _force_outplace=False, _module_class=None, _compilation_unit=None,
          example_kwarg_inputs=None, _store_inputs=True):
    """Traces a function (a ScriptFunction comes back) or an nn.Module
    (its forward; a TopLevelTracedModule comes back)."""
    from ._module import ScriptFunction, ScriptModule
    if isinstance(func, ScriptModule) or isinstance(func, ScriptFunction):
        warnings.warn("The input to trace is already a ScriptModule, tracing it is a no-op. Returning the object "
                      "as is.")
        return func
    if isinstance(func, cthtorch.nn.Module):
        return trace_module(func, {"forward": example_inputs}, None, check_trace,
                            [{"forward": c} for c in check_inputs] if check_inputs else None, check_tolerance,
                            strict, _force_outplace, _module_class, example_inputs_is_kwarg=False)
    if hasattr(func, "__self__") and isinstance(func.__self__, cthtorch.nn.Module) and \
            getattr(func, "__name__", "") == "forward":
        return trace_module(func.__self__, {"forward": example_inputs}, None, check_trace, None, check_tolerance,
                            strict, _force_outplace, _module_class)
    if example_kwarg_inputs is not None:
        sig = inspect.signature(func)
        example_inputs = tuple(example_kwarg_inputs[p] for p in sig.parameters if p in example_kwarg_inputs)
    args = _as_tuple(example_inputs)
    graph = _ir.Graph()
    _run_traced(func, args, graph)
    name, qualified_name = _traced_fn_names(func)
    fn = ScriptFunction(graph, name, qualified_name, func)
    if check_trace:
        _check_trace([args] + [_as_tuple(c) for c in (check_inputs or [])], func, fn, check_tolerance, graph)
    return fn


def trace_module(mod, inputs, optimize=None, check_trace=True, check_inputs=None, check_tolerance=1e-5,
                 strict=True, _force_outplace=False, _module_class=None, _compilation_unit=None,
                 example_inputs_is_kwarg=False, _store_inputs=True):
    """Traces the named methods of mod (`{"forward": example_inputs}`)."""
    from ._module import TopLevelTracedModule, TracedModule, class_type_name
    if not isinstance(mod, cthtorch.nn.Module):
        raise AttributeError("expected torch.nn.Module as the first argument")
    if not isinstance(inputs, dict):
        raise AttributeError("expected a dictionary of (method_name, input) pairs")
    traced = TopLevelTracedModule(mod)
    tmap = {}
    for (n1, m1), (n2, m2) in zip(mod.named_modules(), traced.named_modules()):
        tmap[id(m1)] = m2
    for method_name, example in inputs.items():
        args = _as_tuple(example)
        graph = _ir.Graph()
        sv = graph.addInput("self")
        sv.setType(_ir.ClassType(class_type_name(type(mod))))
        sv.setDebugName("self.1")
        method = getattr(mod, method_name)
        _run_traced(method, args, graph, mod, sv, tmap)
        traced._define_method(method_name, graph)
    if check_trace:
        for method_name, example in inputs.items():
            checks = [_as_tuple(example)] + [_as_tuple(c[method_name]) for c in (check_inputs or [])]
            _check_trace(checks, getattr(mod, method_name), getattr(traced, method_name), check_tolerance,
                         traced._methods[method_name].graph, module=mod)
    return traced


def _graph_text(g):
    return g.str(False)


def _check_trace(check_inputs, python_fn, traced_fn, tol, graph, module=None):
    """torch's check_trace: the trace of each check input gives the same graph,
    and the traced function's outputs match Python's."""
    from . import TracerWarning
    nondet = [n for n in _all_nodes(graph) if n.isNondeterministic()]
    if nondet:
        warnings.warn("Trace had nondeterministic nodes. Did you forget call .eval() on your model? Nodes:\n"
                      + "\n".join("\t" + str(n).rstrip("\n") for n in nondet)
                      + "\nThis may cause errors in trace checking. To disable trace checking, pass "
                        "check_trace=False to torch.jit.trace()", TracerWarning, stacklevel=3)
    for args in check_inputs:
        a1, a2, a3 = _clone_inputs(args), _clone_inputs(args), _clone_inputs(args)
        g2 = _ir.Graph()
        if module is not None:
            sv = g2.addInput("self")
            sv.setType(graph.inputs()[0].type())
            sv.setDebugName("self.1")
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", TracerWarning)
                _run_traced(python_fn, a1, g2, module, sv, {})
        else:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", TracerWarning)
                _run_traced(python_fn, a1, g2)
        if not nondet and _graph_text(g2) != _graph_text(graph) and args is not check_inputs[0]:
            raise TracingCheckError("\tGraph diff:\n" + _graph_text(graph) + "\n\t\tvs\n" + _graph_text(g2), None)
        if nondet:
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", TracerWarning)
            expect = python_fn(*a2)
        got = traced_fn(*a3)
        for i, (e, g) in enumerate(zip(_flat_tensors(expect), _flat_tensors(got))):
            if e.shape != g.shape or not cthtorch.allclose(e.detach().double(), g.detach().double(),
                                                           rtol=tol, atol=tol, equal_nan=True):
                warnings.warn("Output nr %d. of the traced function does not match the corresponding output of "
                              "the Python function. Detailed error:\nTensor-likes are not close!" % (i + 1),
                              TracerWarning, stacklevel=3)


def _all_nodes(graph):
    from ._ir import _walk
    return list(_walk(graph.block()))
