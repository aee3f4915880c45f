"""The op registry: one table of every public op that is not a generated binding.

A declared op (src/ATen/declarations/*.yaml) reaches Python as a generated
binding in `_C` (torch.<op>, Tensor.<op>, `_C._nn.<op>`...). Everything else a
program can call as an op is a Python composite written in terms of declared
ops, and it is registered here, once, under the namespace it is public in:

    "torch"   cthtorch.<name>            "Tensor"  cthtorch.Tensor.<name>
    "_nn"     cthtorch._C._nn.<name>      (nn.functional reads from there)

A registered function is wrapped in a `_C._Op` (src/python/Dispatch.c): it
runs the function, binds like a method on Tensor, and reports the call to the
dispatch observers under its aten:: name, as the generated bindings do. So a
profiler or tracer sees composites and C ops at the same point.

A name registered twice, or a name that a generated binding already provides
in that namespace, is an error at import (and `tools/generate_code.py` checks
the tables against the declarations at build time), never a silent override.
Non-op attributes (properties such as Tensor.is_xpu) go through `attr()`:
the same duplicate rule, no wrapping.
"""
import functools
import types

from cthtorch import _C

_entries = {}      # (namespace, name) -> (object, who registered it)
_TARGETS = {}      # namespace -> the dict / class / module it installs into
_extended = {}     # (namespace, name) -> the generated binding a composite extends


def _generated(namespace, name):
    """A generated binding (or the hand-written _C code) already provides it.
    Namespaces without bindings of their own (nn.functional, linalg, special)
    answer False: their modules re-export bindings by name, which is no
    registration."""
    if namespace == "torch":
        return name in _C._VariableFunctions.__dict__
    if namespace == "Tensor":
        # the Tensor class body's own methods count as provided: a registration
        # must not replace them (its composites register through method())
        cls = _TARGETS.get("Tensor")
        return name in _C._TensorBase.__dict__ or (
            cls is not None and name in cls.__dict__ and (namespace, name) not in _entries)
    if namespace == "_nn":
        return hasattr(_C._nn, name) and (namespace, name) not in _entries and not (
            isinstance(getattr(_C._nn, name), _C._Op))
    return False


# ops that torch writes in Python (torch.functional, _tensor.py): their __torch_function__ hand-over passes
# kwargs {} where torch's C bindings pass None
_PYTHON_IN_TORCH = {("torch", n) for n in (
    "stft", "split", "broadcast_tensors", "einsum", "norm", "cdist", "lu", "broadcast_shapes", "meshgrid",
    "atleast_1d", "atleast_2d", "atleast_3d", "cartesian_prod", "block_diag", "unravel_index", "tensordot",
    "chain_matmul", "unique", "unique_consecutive")} | {("Tensor", n) for n in (
        "unique", "unique_consecutive", "stft", "istft", "split", "dim_order", "resize", "resize_as",
        "storage_type", "lu", "norm", "to_sparse_coo")}


def _add(namespace, name, obj, origin, extends=False):
    key = (namespace, name)
    if key in _entries:
        raise RuntimeError("op registry: %s.%s is registered twice (by %s and by %s)"
                           % (namespace, name, _entries[key][1], origin))
    if _generated(namespace, name) != extends:
        if extends:
            raise RuntimeError("op registry: %s.%s (from %s) extends a generated binding that does not exist"
                               % (namespace, name, origin))
        raise RuntimeError("op registry: %s.%s (from %s) is already a generated binding; remove one of them"
                           % (namespace, name, origin))
    _entries[key] = (obj, origin)
    if key in _PYTHON_IN_TORCH and isinstance(obj, _C._Op):
        obj._kwargs_as_dict = True
    target = _TARGETS.get(namespace)
    if target is not None:
        _install_one(target, name, obj)
    return obj


def _install_one(target, name, obj):
    if isinstance(target, dict):
        target[name] = obj
    else:
        setattr(target, name, obj)


def as_op(name, fn):
    """fn as a `_C._Op` reporting as aten::<name> (an _Op or a type is kept)."""
    if isinstance(fn, (_C._Op, type)):
        return fn
    return _C._Op("aten::" + name, fn)


def op(namespace, name, fn, origin=None, aten=None):
    """Registers the composite `fn` as namespace.name (profiled as aten::<aten or name>)."""
    origin = origin or getattr(fn, "__module__", "?")
    return _add(namespace, name, as_op(aten or name, fn), origin)


def extend(namespace, name, fn, origin=None):
    """Registers `fn` in place of the generated binding namespace.name: it
    handles overloads the declarations cannot express yet (torch.where(cond))
    and calls the binding (`binding(namespace, name)`) for the rest. Listed
    in `extended()`, so each such name is visible in one place."""
    origin = origin or getattr(fn, "__module__", "?")
    if not _generated(namespace, name):
        raise RuntimeError("op registry: %s.%s (from %s) extends a generated binding that does not exist"
                           % (namespace, name, origin))
    _extended[(namespace, name)] = binding(namespace, name)
    return _add(namespace, name, as_op(name, fn), origin, extends=True)


def binding(namespace, name):
    """The generated binding namespace.name, even where a composite extends it."""
    if (namespace, name) in _extended:
        return _extended[(namespace, name)]
    if namespace == "torch":
        return getattr(_C._VariableFunctions, name)
    if namespace == "Tensor":
        return _C._TensorBase.__dict__[name]
    return getattr(_C._nn, name)


def extended():
    """{(namespace, name): generated binding} of the names a composite extends."""
    return dict(_extended)


def ops(namespace, table, origin):
    """Registers every name -> function of `table`."""
    for name, fn in table.items():
        op(namespace, name, fn, origin)


def method(fn):
    """Decorator for a composite defined in the Tensor class body: it becomes
    a registered `_C._Op` (Tensor.<name>, aten::<name>) like the others."""
    return _add("Tensor", fn.__name__, as_op(fn.__name__, fn), "cthtorch._tensor")


def attr(namespace, name, obj, origin):
    """A non-op attribute (a property, a constant) under the duplicate rule."""
    return _add(namespace, name, obj, origin)


def bind(namespace, target):
    """Namespace `namespace` installs into `target` (a dict, class or module);
    what was registered before it is bound is installed now."""
    _TARGETS[namespace] = target
    for (ns, name), (obj, _) in list(_entries.items()):
        if ns == namespace:
            _install_one(target, name, obj)


def registered(namespace=None):
    """{(namespace, name): object} of every registered entry."""
    return {k: v[0] for k, v in _entries.items() if namespace is None or k[0] == namespace}


def is_op(obj):
    """A generated binding or a registered composite (bound methods unwrapped)."""
    if isinstance(obj, types.MethodType):
        obj = obj.__func__
    if isinstance(obj, _C._Op):
        return True
    return isinstance(obj, (types.BuiltinFunctionType, types.BuiltinMethodType)) or \
        type(obj).__name__ in ("method_descriptor", "builtin_function_or_method")


def _public_functions(module_globals):
    for name, obj in list(module_globals.items()):
        if name.startswith("_") or isinstance(obj, (type, types.ModuleType)) or not callable(obj):
            continue
        if is_op(obj) or not isinstance(obj, (types.FunctionType, functools.partial)):
            continue
        yield name, obj


def module_ops(namespace, module_globals, aten_prefix=""):
    """Registers every public Python function of a module namespace whose
    functions are ops (cthtorch.linalg: aten::linalg_inv ...), wrapping each
    in place so calls reach the dispatch point."""
    origin = module_globals.get("__name__", namespace)
    for name, fn in _public_functions(module_globals):
        module_globals[name] = _add(namespace, name, as_op(aten_prefix + name, fn), origin)


def api_module(namespace, module_globals):
    """Registers the public functions of a Python API layer whose work is
    done by the ops it calls (torch.nn.functional, as in PyTorch): listed
    in the registry under the duplicate rule, not wrapped, so an op is
    reported once, by the op it calls."""
    origin = module_globals.get("__name__", namespace)
    for name, fn in _public_functions(module_globals):
        _add(namespace, name, fn, origin)
        _api.add(id(fn))


_api = set()


def is_api(obj):
    return id(obj) in _api
