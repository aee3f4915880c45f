"""PyTorch entry points cthtorch lacked: aliases, in-place forms,
predicates and legacy helpers; install() also wires in the
reductions (_ops/reduce.py, stats.py), pointwise (pointwise.py) and view
(view.py) composites as torch.<name> and Tensor methods."""
import functools
import threading


import cthtorch
from cthtorch._ops import factory as _factory
from cthtorch._ops import tensor_api as _misc
from cthtorch._ops import pointwise as _pw
from cthtorch._ops import foreach as _fe
from cthtorch._ops import reduce as _red
from cthtorch._ops import view as _shp
from cthtorch._ops.shape import _inplace_of
from cthtorch._ops import stats as _st
from cthtorch._utils import _cpp_dtype_name, _dtype_name


# ---------------------------------------------------------------- in-place forms
def _make_inplace(name, fn):
    return _inplace_of(fn, name)


_float_power_ = _make_inplace("float_power_", lambda self, e: cthtorch.float_power(self, e))


def float_power_(self, exponent):
    if self.dtype != cthtorch.float64:
        raise RuntimeError("the base given to float_power_ has dtype %s but the operation's result requires dtype "
                           "Double" % _dtype_name(self.dtype))
    return _float_power_(self, exponent)


def logical_not_(self):
    return self.copy_(cthtorch.logical_not(self))


def _cum_inplace(fn):
    write = _make_inplace(fn.__name__ + "_", fn)

    def op(self, dim, *, dtype=None):
        if dtype is not None and dtype != self.dtype:
            raise RuntimeError("Bad in-place call: input tensor dtype %s and output tensor dtype %s should match"
                               % (_cpp_dtype_name(self.dtype), _cpp_dtype_name(dtype)))
        return write(self, dim)
    op.__name__ = fn.__name__ + "_"
    return op


cumsum_ = _cum_inplace(cthtorch.cumsum)
cumprod_ = _cum_inplace(cthtorch.cumprod)


# ---------------------------------------------------------------- out= for composite functions
def _write_out(name, out, r):
    if not cthtorch.can_cast(r.dtype, out.dtype):
        raise RuntimeError("result type %s can't be cast to the desired output type %s"
                           % (_dtype_name(r.dtype), _dtype_name(out.dtype)))
    if tuple(out.shape) != tuple(r.shape):
        out.resize_(r.shape)
    with cthtorch.no_grad():
        out.copy_(r)
    return out


def _with_out(name, fn):
    """fn(..., out=t): the result written into t (tuples into a tuple of
    tensors), refusing inputs that require grad as PyTorch does."""
    @functools.wraps(fn)
    def op(*args, out=None, **kwargs):
        if out is None:
            return fn(*args, **kwargs)
        if cthtorch.is_grad_enabled() and any(isinstance(a, cthtorch.Tensor) and a.requires_grad
                                              for a in list(args) + list(kwargs.values())):
            raise RuntimeError("%s(): functions with out=... arguments don't support automatic differentiation, "
                               "but one of the arguments requires grad." % name)
        r = fn(*args, **kwargs)
        if isinstance(r, tuple):
            for o, v in zip(out, r):
                _write_out(name, o, v)
            return type(r)(*out)
        return _write_out(name, out, r)
    return op


_OUT_FUNCS = ("nansum", "nanmean", "histogram", "diff", "polygamma", "mvlgamma", "isneginf", "isposinf", "narrow_copy",
              "igamma", "igammac", "aminmax", "count_nonzero", "var_mean", "std_mean")


# ---------------------------------------------------------------- predicates and real-dtype identities
def is_same_size(input, other):
    return tuple(input.shape) == tuple(other.shape)


def is_signed(input):
    return input.dtype not in (cthtorch.uint8, cthtorch.bool)


def is_complex(input):
    return input.dtype.is_complex


def is_conj(input):
    return False


def is_neg(input):
    return False


def is_inference(input):
    return cthtorch._C._is_inference(input)   # made under inference_mode, or a view of such a tensor


def conj(input):
    # cthtorch has no conjugate bit: a complex tensor's conj is materialised (is_conj() stays False)
    return cthtorch._C._internal._complex_conj(input) if input.is_complex() else input


def resolve_conj(input):
    return input


def resolve_neg(input):
    return input


def _assert(condition, message):
    """torch._assert: an `assert` that torch.fx records as a call (it is an op,
    so a Proxy condition reaches __torch_function__ instead of bool())."""
    assert condition, message


def _shape_as_tensor(input):
    """torch._shape_as_tensor (torch.onnx.operators.shape_as_tensor, which fairseq's positional embeddings
    call): the sizes as an int64 vector."""
    return cthtorch.tensor(list(input.shape), dtype=cthtorch.int64)


def _reshape_from_tensor(input, shape):
    """torch._reshape_from_tensor (torch.onnx.operators.reshape_from_tensor_shape): a view shaped by a 1-D
    int64 tensor of sizes."""
    if not isinstance(shape, cthtorch.Tensor):
        raise TypeError("_reshape_from_tensor(): argument 'shape' (position 2) must be Tensor, not %s"
                        % type(shape).__name__)
    if shape.dim() != 1:
        raise RuntimeError("Expected shape_tensor.dim() == 1 to be true, but got false.  (Could this error message "
                           "be improved?  If so, please report an enhancement request to PyTorch.)")
    if shape.dtype != cthtorch.int64:
        raise RuntimeError("expected scalar type Long but found %s" % _dtype_name(shape.dtype))
    return input.reshape(shape.tolist())


def conj_physical(input):
    return cthtorch._C._internal._complex_conj(input) if input.is_complex() else input.clone()


def _conj_physical_(self):
    return self


def is_nonzero(input):
    if input.numel() == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
    if input.numel() > 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return bool(input.item())


# ---------------------------------------------------------------- index_reduce
index_reduce = _shp.index_reduce


# ---------------------------------------------------------------- per-element callables
def apply_(self, callable):
    a = self.detach().numpy()
    flat = a.reshape(-1) if a.flags.c_contiguous else None
    vals = [callable(v.item()) for v in (flat if flat is not None else a.reshape(-1))]
    with cthtorch.no_grad():
        self.copy_(cthtorch.tensor(vals, dtype=self.dtype).reshape(self.shape))
    return self


def map_(self, tensor, callable):
    b = cthtorch.broadcast_to(tensor, self.shape).detach().numpy().reshape(-1)
    a = self.detach().numpy().reshape(-1)
    vals = [callable(x.item(), y.item()) for x, y in zip(a, b)]
    with cthtorch.no_grad():
        self.copy_(cthtorch.tensor(vals, dtype=self.dtype).reshape(self.shape))
    return self


# ---------------------------------------------------------------- legacy constructors / device
def new(self, *args, **kwargs):
    """Legacy Tensor.new: new(*sizes) is uninitialized, new(sequence) copies data, new() is empty."""
    if kwargs.get("device") not in (None, "cpu") and str(kwargs.get("device")) != "cpu":
        kind = cthtorch.device(kwargs["device"]).type
        if self.device.type == "cpu":   # torch's legacy constructor of a CPU tensor's type
            raise RuntimeError("legacy constructor expects device type: cpu but device type: %s was passed" % kind)
        raise NotImplementedError("cthtorch: Tensor.new only supports the cpu device")
    if not args:
        return cthtorch.empty(0, dtype=self.dtype)
    if len(args) == 1 and isinstance(args[0], cthtorch.Tensor):
        if args[0].dtype != self.dtype:
            raise TypeError("expected TensorOptions(dtype=%s, device=cpu) but got a tensor of dtype %s"
                            % (str(self.dtype)[6:], str(args[0].dtype)[6:]))
        return args[0]
    if all(isinstance(a, int) for a in args):
        return cthtorch.empty(args, dtype=self.dtype)
    if len(args) == 1 and isinstance(args[0], cthtorch.Size):
        return cthtorch.empty(tuple(args[0]), dtype=self.dtype)
    if len(args) == 1:
        return cthtorch.tensor(args[0], dtype=self.dtype)
    raise TypeError("new() received an invalid combination of arguments")


def storage_type(self):
    raise NotImplementedError("cthtorch: typed storage classes are not implemented; use untyped_storage()")


def _standard_gamma(input, generator=None):
    """Gamma(input, 1) draws (torch's for a seed, from the binding this extends), differentiable in input
    (the distributions' sampler)."""
    from cthtorch.distributions._samplers import standard_gamma
    return standard_gamma(input, generator)


def _has_compatible_shallow_copy_type(input, from_):
    """Whether `input.data = from_` can keep input's object: both are the same kind of tensor (dense strided,
    or sparse), whatever their dtypes, shapes and devices (nn.Module._apply asks)."""
    for pos, (name, t) in enumerate((("input", input), ("from", from_))):
        if not isinstance(t, cthtorch.Tensor):
            raise TypeError("_has_compatible_shallow_copy_type(): argument '%s' (position %d) must be Tensor, not %s"
                            % (name, pos + 1, type(t).__name__))
    return input.layout == from_.layout


class _DeviceState(threading.local):
    """The default device factories use, per thread as torch's (a thread started inside `with torch.device('meta')`
    makes cpu tensors): device None is the host. `with torch.device(d):` sets it and restores, on leaving, the one
    it found (saved is a stack: nested contexts, and set_default_device calls inside one, unwind as torch's do)."""

    def __init__(self):
        self.device = None
        self.saved = []


_device_state = _DeviceState()


def get_default_device():
    dev = _device_state.device
    return dev if dev is not None else cthtorch.device("cpu")


def _use_default_device(dev):
    """Makes dev (a torch.device or None) this thread's default, telling the C factories whether it is meta."""
    cthtorch._C._set_default_device_meta(dev is not None and dev.type == "meta")
    _device_state.device = None if dev is None or dev.type == "cpu" else dev


def set_default_device(device):
    """Factories given no device= make tensors on `device` (cpu or meta here)."""
    dev = None if device is None else cthtorch.device(device)
    if dev is not None and dev.type not in ("cpu", "meta"):
        raise NotImplementedError("cthtorch.set_default_device: only the cpu and meta devices are supported")
    _use_default_device(dev)


def _device_context_enter(device):
    """torch.device.__enter__ (src/python/Device.c)."""
    previous = _device_state.device
    set_default_device(device)
    _device_state.saved.append(previous)


def _device_context_exit():
    """torch.device.__exit__: back to the default device the matching __enter__ found."""
    if _device_state.saved:
        _use_default_device(_device_state.saved.pop())


# ---------------------------------------------------------------- install
_ALIASES = {"arccosh": "acosh", "arcsinh": "asinh", "arctanh": "atanh", "multiply": "mul", "divide": "div",
            "subtract": "sub"}

_FUNCS = {}
for _mod, _names in (
        (_red, ("count_nonzero", "nansum", "nanmean", "std_mean", "var_mean", "aminmax")),
        (_st, ("quantile", "nanquantile", "diff", "gradient", "cov", "corrcoef", "trapezoid", "trapz",
               "cumulative_trapezoid", "vander", "combinations", "histogram", "histogramdd")),
        (_pw, _pw.FUNCTIONS),
        (_misc, _misc.FUNCTIONS + tuple(_misc.COPY_OPS)),
        (_shp, ("select_scatter", "slice_scatter", "diagonal_scatter", "as_strided_scatter", "split_with_sizes",
                "unsafe_split", "unsafe_chunk", "unsafe_split_with_sizes", "narrow_copy", "hsplit", "vsplit",
                "dsplit", "ravel"))):
    for _n in _names:
        _FUNCS[_n] = _misc.COPY_OPS[_n] if _n in _misc.COPY_OPS else getattr(_mod, _n)
_FUNCS.update(_fe.FUNCTIONS)
for _n, _f in (("asarray", _factory.asarray), ("frombuffer", _factory.frombuffer),
               ("empty_permuted", _factory.empty_permuted)):
    _FUNCS[_n] = _f
for _n in ("is_same_size", "is_signed", "is_complex", "is_conj", "is_neg", "is_inference", "conj", "resolve_conj",
           "resolve_neg", "conj_physical", "index_reduce", "get_default_device", "_has_compatible_shallow_copy_type",
           "set_default_device"):
    _FUNCS[_n] = globals()[_n]

# Tensor methods that are the function with self first
_METHODS = ("count_nonzero", "nansum", "nanmean", "aminmax", "quantile", "nanquantile", "diff", "histogram",
            "cov", "corrcoef", "mvlgamma", "isneginf", "isposinf", "isreal", "select_scatter", "slice_scatter",
            "diagonal_scatter", "as_strided_scatter", "split_with_sizes", "unsafe_split_with_sizes", "narrow_copy", "hsplit", "vsplit", "dsplit", "ravel", "is_same_size",
            "is_conj", "is_neg", "is_inference", "conj", "resolve_conj", "resolve_neg", "conj_physical",
            "index_reduce")

# x.op_(...) written back from the out-of-place op
_INPLACE = ("addmv", "addbmm", "igamma", "igammac", "mvlgamma", "deg2rad", "rad2deg",
            "index_reduce")


def _present(namespace, name):
    """Provided by a generated binding or the Tensor class body: the tables
    above list names for several modules' worth of ops at once, and those
    that are C ops now are skipped. A name another module registers is not
    skipped: registering it twice raises."""
    if namespace == "Tensor":
        return name in cthtorch.Tensor.__dict__ or name in cthtorch._C._TensorBase.__dict__
    return name in cthtorch._C._VariableFunctions.__dict__


def register():
    """Registers this module's ops (cthtorch/_ops). Names that the generated
    bindings or the Tensor class already provide are skipped here on purpose
    (_present), and the walk test (tests/test_op_registry.py) checks that no
    name is claimed twice."""
    from cthtorch import _ops
    origin = __name__
    T = cthtorch.Tensor
    for name, fn in _FUNCS.items():
        if not _present("torch", name):
            _ops.op("torch", name, _with_out(name, fn) if name in _OUT_FUNCS else fn, origin)
    for name in _METHODS:
        if not _present("Tensor", name):
            _ops.op("Tensor", name, _FUNCS[name], origin)
    for name, fn in _shp.UNSAFE_METHODS.items():
        if not _present("Tensor", name):
            _ops.op("Tensor", name, fn, origin)
    for name in _misc.METHODS:
        if not _present("Tensor", name):
            _ops.op("Tensor", name, getattr(_misc, name), origin)
    _ops.op("Tensor", "polygamma", lambda self, n: _pw.polygamma(n, self), origin)
    _ops.op("Tensor", "polygamma_", _make_inplace("polygamma_", lambda self, n: _pw.polygamma(n, self)), origin)
    for name in _INPLACE:
        if not _present("Tensor", name + "_"):
            _ops.op("Tensor", name + "_", _make_inplace(name + "_", getattr(T, name)), origin)
    for alias, target in _ALIASES.items():
        if not _present("torch", alias):
            _ops.op("torch", alias, getattr(cthtorch, target), origin, aten=target)
        if not _present("Tensor", alias):
            _ops.op("Tensor", alias, getattr(T, target), origin, aten=target)
        if not _present("Tensor", alias + "_"):
            _ops.op("Tensor", alias + "_", getattr(T, target + "_"), origin, aten=target + "_")
        if not _present("torch", alias + "_") and hasattr(cthtorch, target + "_"):
            _ops.op("torch", alias + "_", getattr(cthtorch, target + "_"), origin, aten=target + "_")
    for name, fn in _shp.METHODS_META.items():
        if not _present("Tensor", name):
            _ops.op("Tensor", name, _shp._meta_inplace(name, fn), origin)
    for name, fn in (("float_power_", float_power_), ("logical_not_", logical_not_), ("cumsum_", cumsum_),
                     ("cumprod_", cumprod_), ("resize_as_", _shp.resize_as_), ("resize", _shp.resize),
                     ("resize_as", _shp.resize_as), ("fill_diagonal_", _shp.fill_diagonal_),
                     ("is_nonzero", is_nonzero), ("conj_physical_", _conj_physical_), ("apply_", apply_),
                     ("map_", map_), ("new", new), ("storage_type", storage_type)):
        if not _present("Tensor", name):
            _ops.op("Tensor", name, fn, origin)
    _ops.op("torch", "is_nonzero", is_nonzero, origin)
    _ops.op("torch", "_assert", _assert, origin)
    _ops.op("torch", "_shape_as_tensor", _shape_as_tensor, origin)
    _ops.op("torch", "_reshape_from_tensor", _reshape_from_tensor, origin)
    _ops.extend("torch", "_standard_gamma", _standard_gamma, origin)
    if not _present("torch", "as_strided_"):
        _ops.op("torch", "as_strided_", T.as_strided_, origin)
    # device predicates of other backends, all False on this CPU build
    for name in ("is_xpu", "is_mps", "is_ipu", "is_xla", "is_vulkan", "is_maia", "is_mtia", "is_sparse_csr"):
        if not _present("Tensor", name):
            _ops.attr("Tensor", name, property(lambda self: False), origin)
    if not _present("Tensor", "imag"):
        _ops.attr("Tensor", "imag", property(_misc.imag, _misc._set_imag), origin)
    if not _present("Tensor", "const_data_ptr"):
        _ops.op("Tensor", "const_data_ptr", T.data_ptr, origin, aten="data_ptr")
    if not _present("Tensor", "to_dense"):
        _ops.op("Tensor", "to_dense",
                lambda self, dtype=None, *, masked_grad=None: self if dtype is None else self.to(dtype), origin)
    if not _present("torch", "is_distributed"):
        _ops.op("torch", "is_distributed", lambda input: False, origin)
    for name in ("resize_as_", "conj_physical_", "addmv_", "deg2rad_", "rad2deg_", "sinc_", "i0_", "gcd_", "lcm_",
                 "ldexp_"):
        if not _present("torch", name):
            _ops.op("torch", name, getattr(T, name), origin)
