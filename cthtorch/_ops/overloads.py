"""`torch.ops`: ops by their schema names, as PyTorch programs reach them
(`torch.ops.aten.add.Tensor(x, y)`, `torch.ops.aten.relu.default`,
`torch.ops.profiler._record_function_enter`, `torch.ops.load_library`).

An `aten` op resolves to the callable that already serves it: the generated
binding (`_C._VariableFunctions`, `_C._nn`, `_C._linalg`/`_special`/`_fft` under
their `linalg_`/`special_`/`fft_` names, `_C._internal`), else the Tensor method
(in-place forms such as `add_`), else the registered composite. A generated
binding parses every overload of its declaration itself, so each OpOverload
calls the same function; the overload name is kept for printing and for FX.
"""
import ctypes

import cthtorch
from cthtorch import _C

__all__ = ["OpOverloadPacket", "OpOverload", "ops"]


def _call(api, op, args, kwargs):
    # a Proxy (or another __torch_function__ override) among the arguments
    # gets the call under the op's public name, as torch's ops hand it over
    flat = list(args) + list(kwargs.values())
    if _C._has_torch_function(flat):
        return _C._handle_torch_function(api, tuple(flat), args, kwargs)
    return op(*args, **kwargs)


class OpOverload:
    """One overload of an op: `torch.ops.aten.add.Tensor`."""

    def __init__(self, packet, overload):
        self.overloadpacket = packet
        self._overloadname = overload
        self._op = packet._op
        self.__name__ = "%s.%s" % (packet.__name__, overload)
        self.__qualname__ = self.__name__
        self.__module__ = packet.__module__

    def name(self):
        base = self.overloadpacket._qualified_op_name
        return base if self._overloadname == "default" else "%s.%s" % (base, self._overloadname)

    @property
    def namespace(self):
        return self.overloadpacket._namespace

    def __call__(self, *args, **kwargs):
        return _call(self, self._op, args, kwargs)

    def __repr__(self):
        return "<OpOverload(op='%s.%s', overload='%s')>" % (self.namespace, self.overloadpacket.__name__,
                                                          self._overloadname)

    def __str__(self):
        return "%s.%s.%s" % (self.namespace, self.overloadpacket.__name__, self._overloadname)

    def __reduce__(self):   # pickles by name, as torch's do
        return _overload_by_name, (self.namespace, self.overloadpacket.__name__, self._overloadname)


class OpOverloadPacket:
    """All overloads of one op: `torch.ops.aten.add`; calling it picks the
    overload from the arguments, as the binding's parser does."""

    def __init__(self, namespace, name, op):
        self._namespace = namespace
        self._qualified_op_name = "%s::%s" % (namespace, name)
        self._op = op
        self._overloads = {}
        self.__name__ = name
        self.__qualname__ = name
        self.__module__ = "torch.ops.%s" % namespace

    def __getattr__(self, overload):
        if overload.startswith("__"):
            raise AttributeError(overload)
        o = self._overloads.get(overload)
        if o is None:
            o = self._overloads[overload] = OpOverload(self, overload)
        return o

    def overloads(self):
        return list(self._overloads) or ["default"]

    def __call__(self, *args, **kwargs):
        return _call(self, self._op, args, kwargs)

    def __repr__(self):
        return "<OpOverloadPacket(op='%s.%s')>" % (self._namespace, self.__name__)

    def __str__(self):
        return "%s.%s" % (self._namespace, self.__name__)

    def __reduce__(self):
        return _packet_by_name, (self._namespace, self.__name__)


def _aten_callable(name):
    for holder in (_C._VariableFunctions, _C._nn, _C._internal):
        if name.startswith("__") and name not in vars(holder):
            continue   # a holder class's own dunders (type.__or__ makes unions) are not ops: aten::__or__ is Tensor's
        f = getattr(holder, name, None)
        if f is not None:
            return f
    for prefix in ("linalg_", "special_", "fft_"):   # aten::linalg_inv is torch.linalg.inv
        if name.startswith(prefix):
            f = getattr(getattr(cthtorch, prefix[:-1]), name[len(prefix):], None)
            if f is not None:
                return f
    f = getattr(cthtorch.Tensor, name, None)
    if callable(f) and not isinstance(f, type):
        return f
    f = getattr(cthtorch, name, None)
    if callable(f) and not isinstance(f, type):
        return f
    return None


class _RecordFunctionHandle:
    """What `_record_function_enter` returns: the open record_function range."""

    def __init__(self, name):
        from cthtorch.autograd.profiler import record_function
        self._rf = record_function(name)
        self._rf.__enter__()

    def _exit(self):
        self._rf.__exit__(None, None, None)


def _record_function_enter(name, args=None):
    return _RecordFunctionHandle(name)


def _record_function_exit(handle):
    handle._exit()


_PROFILER_OPS = {"_record_function_enter": _record_function_enter,
                 "_record_function_enter_new": _record_function_enter,
                 "_record_function_exit": _record_function_exit}


class _OpNamespace:
    """`torch.ops.<namespace>`: ops resolved on first use, then cached."""

    def __init__(self, name):
        self.name = name
        self._packets = {}

    def __getattr__(self, op_name):
        if op_name.startswith("__"):
            raise AttributeError(op_name)
        p = self._packets.get(op_name)
        if p is None:
            fn = _aten_callable(op_name) if self.name == "aten" else \
                _PROFILER_OPS.get(op_name) if self.name == "profiler" else None
            if fn is None and self.name != "aten":   # a program's own op (torch.library)
                from cthtorch import library
                fn = library._op_callable(self.name, op_name)
            if fn is None:
                raise AttributeError("'_OpNamespace' '%s' object has no attribute '%s'" % (self.name, op_name))
            p = self._packets[op_name] = OpOverloadPacket(self.name, op_name, fn)
        return p

    def __repr__(self):
        return "<module 'torch.ops.%s' from 'torch.ops'>" % self.name


class _Ops:
    """`torch.ops`: namespaces by attribute, and `load_library` for shared
    libraries of C extensions (loaded with ctypes; their ops register through
    the project's own extension path, not through this namespace)."""

    def __init__(self):
        self._namespaces = {}
        self.loaded_libraries = set()

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        ns = self._namespaces.get(name)
        if ns is None:
            ns = self._namespaces[name] = _OpNamespace(name)
        return ns

    def load_library(self, path):
        ctypes.CDLL(path)
        self.loaded_libraries.add(path)

    def __repr__(self):
        return "<module 'torch.ops' from 'torch.ops'>"


ops = _Ops()


def _packet_by_name(namespace, name):
    return getattr(getattr(ops, namespace), name)


def _overload_by_name(namespace, name, overload):
    return getattr(_packet_by_name(namespace, name), overload)
