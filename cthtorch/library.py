"""`torch.library`: user programs' own ops. `Library(ns, "DEF").define(schema)` and `.impl(name, fn, key)`,
`define`/`impl`/`register_fake`/`register_autograd`, and the `custom_op` decorator; the ops are called as
`torch.ops.ns.name(...)` (cthtorch/_ops/overloads.py looks them up here).

An op is a Python entry, not a dispatcher registration: a call runs the kernel registered for the inputs'
device (or a composite one), the fake kernel for meta tensors, and the registered autograd formula (an
autograd.Function) when an input requires grad."""
import inspect
import typing

import cthtorch
from cthtorch._schema_text import split_arg, split_func, split_top

__all__ = ["Library", "define", "impl", "register_fake", "register_autograd", "register_kernel", "custom_op",
           "infer_schema", "CustomOpDef", "get_ctx"]

_OPS = {}          # "ns::name" -> _OpEntry
_DEF_NAMESPACES = {}   # ns -> where its Library("ns", "DEF") was made (torch allows one)


class _Arg:
    def __init__(self, type_, name, default, has_default, kwarg_only, quoted=False):
        self.type, self.name, self.default, self.has_default, self.kwarg_only = \
            type_, name, default, has_default, kwarg_only
        self.quoted = quoted   # a string default, printed in double quotes as torch's schemas


def _default_value(text):
    t = text.strip()
    if t in ("None", "True", "False"):
        return {"None": None, "True": True, "False": False}[t]
    if t.startswith("[") and t.endswith("]"):
        return [_default_value(v) for v in split_top(t[1:-1])]
    for conv in (int, float):
        try:
            return conv(t)
        except ValueError:
            pass
    return t.strip("\"'")


def _parse_schema(schema):
    """(name, [_Arg], returns text) of `name(Tensor x, *, float k=1.) -> Tensor`"""
    parts = split_func(schema)
    if parts is None:
        raise RuntimeError("Expected a schema of the form 'name(args) -> returns', got: %s" % schema)
    args, kwarg_only = [], False
    for part in split_top(parts[1]):
        if part == "*":
            kwarg_only = True
            continue
        type_, aname, dflt = split_arg(part)
        args.append(_Arg(type_, aname, None if dflt is None else _default_value(dflt), dflt is not None, kwarg_only,
                         dflt is not None and dflt.strip()[:1] in ("'", '"')))
    return parts[0], args, parts[2]


class _OpEntry:
    def __init__(self, qualname, schema_text):
        self.qualname = qualname
        self.ns, self.name = qualname.split("::")
        _, self.args, self.returns = _parse_schema(self.name + schema_text if schema_text.startswith("(")
                                                   else schema_text)
        self.schema = "%s(%s) -> %s" % (qualname, self._args_text(), self.returns)
        self.kernels = {}      # dispatch key ("CPU", "CUDA", "Meta", "CompositeImplicitAutograd", ...) -> fn
        self.fake = None
        self.backward = None
        self.setup_context = None
        self.custom = False    # made by custom_op: backward without a formula raises, as torch's

    def _args_text(self):
        out, star = [], False
        for a in self.args:
            if a.kwarg_only and not star:
                out.append("*")
                star = True
            dflt = ('"%s"' % a.default) if a.quoted else _fmt_default(a.default)
            out.append("%s %s" % (a.type, a.name) + ("=%s" % dflt if a.has_default else ""))
        return ", ".join(out)

    def bind(self, args, kwargs):
        """the arguments in schema order, defaults filled, with torch's errors for wrong ones"""
        pos = [a for a in self.args if not a.kwarg_only]
        if len(args) > len(pos):
            raise RuntimeError("%s() takes %d positional argument(s) but %d was/were given.  Declaration: %s"
                               % (self.qualname, len(pos), len(args), self.schema))
        vals, kwargs = list(args), dict(kwargs)
        for a in self.args[len(args):]:
            if a.name in kwargs:
                vals.append(kwargs.pop(a.name))
            elif a.has_default:
                vals.append(a.default)
            else:
                raise RuntimeError("%s() is missing value for argument '%s'. Declaration: %s"
                                   % (self.qualname, a.name, self.schema))
        if kwargs:
            raise RuntimeError("Unknown keyword argument '%s' for operator '%s'. Schema: %s"
                               % (next(iter(kwargs)), self.qualname, self.schema))
        for i, (a, v) in enumerate(zip(self.args, vals)):
            base = _base_type(a.type)
            if not (v is None and a.type.endswith("?")) and not _accepts(base, v):
                raise RuntimeError("%s() Expected a value of type '%s' for argument '%s' but instead found type "
                                   "'%s'.\nPosition: %d\nValue: %r\nDeclaration: %s"
                                   % (self.qualname, "int" if base == "SymInt" else base, a.name, type(v).__name__,
                                      i, v, self.schema))
        return vals

    def _kernel(self, vals):
        tensors = [v for v in _flat(vals) if isinstance(v, cthtorch.Tensor)]
        dev = tensors[0].device.type if tensors else "cpu"
        if dev == "meta":
            if self.fake is not None:
                return self.fake
            if "Meta" in self.kernels:
                return self.kernels["Meta"]
        for key in (dev.upper(), "CompositeExplicitAutograd", "CompositeImplicitAutograd", "Default"):
            if key in self.kernels:
                return self.kernels[key]
        raise NotImplementedError(
            "Could not run '%s' with arguments from the '%s' backend. '%s' has kernels for: %s"
            % (self.qualname, "Meta" if dev == "meta" else dev.upper(), self.qualname, sorted(self.kernels)))

    def __call__(self, *args, **kwargs):
        vals = self.bind(args, kwargs)
        kernel = self._kernel(vals)
        needs_grad = cthtorch.is_grad_enabled() and any(
            isinstance(v, cthtorch.Tensor) and v.requires_grad for v in _flat(vals))
        if not needs_grad or (not self.custom and self.backward is None):
            # a Library kernel without a formula is differentiated through what it calls (torch warns at backward)
            return self.run(kernel, vals)
        return _make_function(self).apply(kernel, *vals)

    def run(self, kernel, vals):
        """the kernel called as torch calls a Python kernel: keyword-only arguments by name"""
        n = sum(not a.kwarg_only for a in self.args)
        return kernel(*vals[:n], **{a.name: v for a, v in zip(self.args[n:], vals[n:])})


def _base_type(type_):
    """'Tensor' of 'Tensor(a0!)?': the alias annotation and the optional mark dropped (lists keep their [])"""
    i = type_.find("(")
    if i >= 0:
        type_ = type_[:i] + type_[type_.index(")", i) + 1:]
    return type_.rstrip("?")


def _accepts(base, v):
    # what torch's argument conversion takes for a scalar type: an int or a one-element tensor for int, a bool or
    # an int for bool; list types are left to the kernel
    if base == "Tensor":   # torch hands None on to the kernel as an undefined tensor
        return v is None or isinstance(v, cthtorch.Tensor)
    if base in ("int", "SymInt"):
        return isinstance(v, (int, cthtorch.Tensor))
    if base == "float":
        return isinstance(v, (int, float, cthtorch.Tensor))
    if base == "bool":
        return isinstance(v, int)
    if base == "str":
        return isinstance(v, str)
    return True


def _fmt_default(v):
    if isinstance(v, float):
        r = repr(v)
        return r[:-1] if r.endswith(".0") else r   # torch prints 1.0 as "1."
    if isinstance(v, (list, tuple)):
        return "[%s]" % ", ".join(_fmt_default(x) for x in v)
    return str(v)


def _flat(vals):
    for v in vals:
        if isinstance(v, (list, tuple)):
            yield from v
        else:
            yield v


_FUNCTIONS = {}


def _make_function(entry):
    """the op's autograd.Function: setup_context sees the inputs and the output, backward the op's formula"""
    fn = _FUNCTIONS.get(entry.qualname)
    if fn is not None and fn._entry is entry:
        return fn

    def forward(ctx, kernel, *vals):
        with cthtorch.no_grad():
            out = entry.run(kernel, list(vals))
        if entry.setup_context is not None:
            entry.setup_context(ctx, tuple(vals), out)
        return out

    def backward(ctx, *grads):
        if entry.backward is None:
            raise RuntimeError("Trying to backward through %s.%s.default but no autograd formula was registered. "
                               "Please use register_autograd to add one." % (entry.ns, entry.name))
        gi = entry.backward(ctx, *grads)
        if not isinstance(gi, tuple):
            gi = (gi,)
        if len(gi) != len(entry.args):
            raise RuntimeError("%s: Expected the backward function to return %d gradients (one for each input), but "
                               "got %d" % (entry.qualname, len(entry.args), len(gi)))
        return (None,) + gi

    cls = type("GeneratedBackwardFor_%s_%s_default" % (entry.ns, entry.name), (cthtorch.autograd.Function,),
               {"forward": staticmethod(forward), "backward": staticmethod(backward), "_entry": entry})
    _FUNCTIONS[entry.qualname] = cls
    return cls


def _lookup(qualname):
    if isinstance(qualname, CustomOpDef):
        return qualname._entry
    if not isinstance(qualname, str):   # an OpOverload(Packet) of torch.ops
        qualname = getattr(qualname, "_qualified_op_name", None) or getattr(qualname.overloadpacket,
                                                                             "_qualified_op_name")
    qualname = qualname.split(".")[0]
    e = _OPS.get(qualname)
    if e is None:
        raise RuntimeError("operator %s does not exist (define it with torch.library.define or "
                           "torch.library.custom_op)" % qualname)
    return e


def _op_callable(namespace, name):
    """torch.ops.<namespace>.<name> for an op defined here; None when there is none. The op is looked up at each
    call: a packet kept past Library._destroy raises instead of running the destroyed op's kernels."""
    qualname = "%s::%s" % (namespace, name)
    return None if qualname not in _OPS else (lambda *a, **k: _lookup(qualname)(*a, **k))


def _forget_packet(qualname):
    # torch deletes its cached torch.ops.<ns>.<name> when the op goes: the name then raises AttributeError, and a
    # later definition of the same name is found afresh
    from cthtorch._ops.overloads import ops
    ns, name = qualname.split("::")
    space = ops._namespaces.get(ns)
    if space is not None:
        space._packets.pop(name, None)


def _define(qualname, schema):
    if qualname in _OPS:
        raise RuntimeError("Tried to register an operator (%s%s) with the same name and overload name multiple "
                           "times." % (qualname, schema if schema.startswith("(") else ""))
    e = _OPS[qualname] = _OpEntry(qualname, schema)
    return e


class Library:
    """A set of ops of one namespace: kind "DEF" (one per namespace), "FRAGMENT" (more definitions) or "IMPL"."""

    def __init__(self, ns, kind, dispatch_key=""):
        if kind not in ("IMPL", "DEF", "FRAGMENT"):
            raise ValueError("Unsupported kind: %s" % kind)
        if ns == "prim" and kind in ("DEF", "FRAGMENT"):   # torch reserves only prim
            raise ValueError("%s is a reserved namespace. Please try creating a library with another name." % ns)
        frame = inspect.stack()[1]
        where = "%s:%d" % (frame.filename, frame.lineno)
        if kind == "DEF":
            if ns in _DEF_NAMESPACES:
                raise RuntimeError(
                    "Only a single TORCH_LIBRARY can be used to register the namespace %s; please put all of your "
                    "definitions in a single TORCH_LIBRARY block.  If you were trying to specify implementations, "
                    "consider using TORCH_LIBRARY_IMPL (which can be duplicated).  If you really intended to define "
                    "operators for a single namespace in a distributed way, you can use TORCH_LIBRARY_FRAGMENT to "
                    "explicitly indicate this.  Previous registration of TORCH_LIBRARY was registered at %s; latest "
                    "registration was registered at %s" % (ns, _DEF_NAMESPACES[ns], where))
            _DEF_NAMESPACES[ns] = where
        self.ns, self.kind, self.dispatch_key = ns, kind, dispatch_key
        self._defined, self._impls = [], []

    def __repr__(self):
        return "Library(kind=%s, ns=%s, dispatch_key=%s)>" % (self.kind, self.ns, self.dispatch_key)

    def define(self, schema, alias_analysis="", *, tags=()):
        if self.kind == "IMPL":
            raise RuntimeError("define is not allowed on a Library of kind IMPL")
        name = schema[:schema.index("(")].strip()
        _define("%s::%s" % (self.ns, name.split(".")[0]), schema[schema.index("("):])
        self._defined.append("%s::%s" % (self.ns, name.split(".")[0]))
        return name

    def impl(self, op_name, fn, dispatch_key="", *, with_keyset=False):
        if with_keyset:
            raise NotImplementedError("Library.impl(with_keyset=True): cthtorch has no dispatch key sets")
        if not callable(op_name) and not isinstance(op_name, str):
            raise TypeError("impl should be passed either a name or an OpOverload object as the first argument")
        name = op_name if isinstance(op_name, str) else _lookup(op_name).name
        qual = name if "::" in name else "%s::%s" % (self.ns, name.split(".")[0])
        e = _lookup(qual)
        key = dispatch_key or self.dispatch_key or "CompositeImplicitAutograd"
        if key in ("Autograd", "AutogradCPU", "AutogradCUDA"):
            raise NotImplementedError("Library.impl for the %s key: use torch.library.register_autograd" % key)
        e.kernels[key] = fn
        self._impls.append((qual, key))

    def fallback(self, fn, dispatch_key="", *, with_keyset=False):
        raise NotImplementedError("Library.fallback: cthtorch has no dispatcher fallbacks")

    def _destroy(self):
        for q in self._defined:
            _OPS.pop(q, None)
            _FUNCTIONS.pop(q, None)
            _forget_packet(q)
        for q, key in self._impls:
            if q in _OPS:
                _OPS[q].kernels.pop(key, None)
        if self.kind == "DEF":
            _DEF_NAMESPACES.pop(self.ns, None)
        self._defined, self._impls = [], []


_LIBS = []   # the Libraries define()/impl() without lib= make (torch keeps them alive too)


def _fragment(ns):
    lib = Library(ns, "FRAGMENT")
    _LIBS.append(lib)
    return lib


def define(qualname, schema, *, lib=None, tags=()):
    """torch.library.define("ns::name", "(Tensor x) -> Tensor")"""
    ns, name = qualname.split("::")
    (lib or _fragment(ns)).define(name + schema, tags=tags)


_DEVICE_KEYS = {"cpu": "CPU", "cuda": "CUDA", "meta": "Meta", None: "CompositeExplicitAutograd",
                "default": "CompositeExplicitAutograd"}


def _device_key(types):
    if isinstance(types, str) and types in ("CompositeImplicitAutograd", "CompositeExplicitAutograd", "CPU",
                                            "CUDA", "Meta"):
        return types
    return _DEVICE_KEYS.get(types, str(types).upper())


def impl(qualname, types, func=None, *, lib=None):
    """torch.library.impl("ns::name", "cpu") as a decorator, or with the function"""
    def register(f):
        e = _lookup(qualname)
        for t in (types if isinstance(types, (list, tuple)) else [types]):
            e.kernels[_device_key(t)] = f
        return f
    return register if func is None else register(func)


def register_kernel(op, device_types, func=None, /, *, lib=None):
    return impl(op, device_types, func, lib=lib)


def register_fake(op, func=None, /, *, lib=None, _stacklevel=1):
    def register(f):
        _lookup(op).fake = f
        return f
    return register if func is None else register(func)


def register_autograd(op, backward, /, *, setup_context=None, lib=None):
    e = _lookup(op)
    e.backward, e.setup_context = backward, setup_context
    _FUNCTIONS.pop(e.qualname, None)


class _FakeCtx:
    def new_dynamic_size(self, *, min=0, max=None):
        raise NotImplementedError("torch.library.get_ctx().new_dynamic_size: cthtorch has no symbolic sizes")


def get_ctx():
    return _FakeCtx()


# ---------------------------------------------------------------- custom_op
def _type_name(ann, name):
    origin, targs = typing.get_origin(ann), typing.get_args(ann)
    if ann is cthtorch.Tensor:
        return "Tensor"
    simple = {int: "SymInt", float: "float", bool: "bool", str: "str", cthtorch.dtype: "ScalarType",
              cthtorch.device: "Device"}
    if ann in simple:
        return simple[ann]
    if origin in (typing.Union, getattr(__import__("types"), "UnionType", None)) and type(None) in targs:
        rest = [a for a in targs if a is not type(None)]
        if len(rest) == 1:
            return _type_name(rest[0], name) + "?"
    if origin in (list, typing.List, typing.Sequence) or str(origin) == "<class 'collections.abc.Sequence'>":
        if len(targs) == 1:
            inner = {cthtorch.Tensor: "Tensor", int: "SymInt", float: "float", bool: "bool"}.get(targs[0])
            if inner:
                return inner + "[]"
    raise ValueError("infer_schema(func): Parameter %s has unsupported type %s." % (name, ann))


def _infer_default(v, name, fail):
    # as infer_schema writes a default: Python's str of a number, bool or None, quotes round a str or device, a
    # dtype by its bare name; anything else (a tuple, a list) is refused
    if v is None or isinstance(v, (int, float, bool)):
        return str(v)
    if isinstance(v, (str, cthtorch.device)):
        return '"%s"' % v
    if isinstance(v, cthtorch.dtype):
        return str(v).replace("torch.", "", 1)
    fail("Parameter %s has an unsupported default value type %s. Please file an issue on GitHub so we can "
         "prioritize this." % (name, type(v)))


def infer_schema(prototype_function, /, *, mutates_args, op_name=None):
    """the schema text of a type-annotated function, as torch's: a mutated Tensor argument is aliased by its
    position (Tensor(a1!) for the second parameter); mutates_args="unknown" marks every Tensor argument"""
    sig = inspect.signature(prototype_function)

    def fail(what):
        raise ValueError("infer_schema(func): %s Got func with signature %s)" % (what, sig))
    if isinstance(mutates_args, str) and mutates_args != "unknown":
        raise ValueError("mutates_args must either be a sequence of the names of the arguments that are mutated or "
                         "the string 'unknown'. ")
    hints = typing.get_type_hints(prototype_function)
    parts, kw = [], False
    for idx, p in enumerate(sig.parameters.values()):
        if p.kind in (p.POSITIONAL_ONLY, p.VAR_POSITIONAL, p.VAR_KEYWORD):
            fail("We do not support positional-only args, varargs, or varkwargs.")
        if p.kind == p.KEYWORD_ONLY and not kw:
            parts.append("*")
            kw = True
        if p.name not in hints:
            fail("Parameter %s must have a type annotation." % p.name)
        type_ = _type_name(hints[p.name], p.name)
        if type_.startswith("Tensor") if mutates_args == "unknown" else p.name in mutates_args:
            if not type_.startswith("Tensor"):
                fail("Parameter %s is in mutable_args but only Tensors or collections of Tensors can be mutated"
                     % p.name)
            type_ = "Tensor(a%d!)%s" % (idx, type_[len("Tensor"):])
        text = "%s %s" % (type_, p.name)
        if p.default is not p.empty:
            text += "=%s" % _infer_default(p.default, p.name, fail)
        parts.append(text)
    if mutates_args != "unknown":
        missing = set(mutates_args) - set(sig.parameters)
        if missing:
            fail("%s in mutates_args were not found in the custom op's signature. mutates_args should contain the "
                 "names of all args that the custom op mutates, or just the string 'unknown' if you don't know."
                 % missing)
    ret = hints.get("return", None)
    if ret is None or ret is type(None):
        rtext = "()"
    elif typing.get_origin(ret) is tuple:
        rtext = "(%s)" % ", ".join(_type_name(a, "return") for a in typing.get_args(ret))
    else:
        rtext = _type_name(ret, "return")
    text = "(%s) -> %s" % (", ".join(parts), rtext)
    return (op_name + text) if op_name else text


class CustomOpDef:
    """What torch.library.custom_op returns: callable, with register_fake/register_autograd/register_kernel"""

    def __init__(self, entry, fn):
        self._entry, self._init_fn = entry, fn
        self.__name__ = entry.name
        self.__doc__ = fn.__doc__

    def __repr__(self):
        return "<CustomOpDef(%s)>" % self._entry.qualname

    @property
    def _opoverload(self):
        return getattr(getattr(cthtorch.ops, self._entry.ns), self._entry.name).default

    def register_fake(self, fn, /):
        self._entry.fake = fn
        return fn

    def register_kernel(self, device_types, fn=None, /):
        return impl(self._entry.qualname, device_types, fn)

    def register_autograd(self, backward, /, *, setup_context=None):
        register_autograd(self, backward, setup_context=setup_context)

    def __call__(self, *args, **kwargs):
        return self._entry(*args, **kwargs)


def custom_op(name, fn=None, /, *, mutates_args, device_types=None, schema=None, tags=None):
    """@torch.library.custom_op("ns::name", mutates_args=()) on a type-annotated function"""
    def wrap(f):
        text = schema if schema is not None else infer_schema(f, mutates_args=mutates_args)
        e = _define(name, text)
        e.custom = True
        key = _device_key(device_types) if isinstance(device_types, str) or device_types is None else None
        if key is not None:
            e.kernels[key] = f
        else:
            for t in device_types:
                e.kernels[_device_key(t)] = f
        return CustomOpDef(e, f)
    return wrap if fn is None else wrap(fn)
