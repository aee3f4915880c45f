"""Quantized tensors (torch.quint8 / qint8 / qint32): torch.quantize_per_tensor, quantize_per_channel,
dequantize, and the ops torch runs on them.

Representation: a Tensor subclass whose data is the integer representation (uint8 / int8 / int32) and
which carries its quantization parameters; `dtype`, `is_quantized`, `q_scale()`, ... answer as torch's
quantized tensors do. Its __torch_function__ lets through what torch's QuantizedCPU backend computes
(layout ops on the integers, relu/pooling/clamp through the real values and back onto the same grid) and
raises torch's NotImplementedError for the rest, so no op ever computes on the raw integers by mistake.
This module is loaded only by programs that quantize (a subclass with a __torch_function__ makes every
op ask it).

Rounding is fbgemm's: q = clamp(nearbyint(zero_point + x * (1/scale)), qmin, qmax), in float32, with
round-half-even; the zero point is added before rounding (torch.quantize_per_tensor(0.25, 0.5, 3) is 4).
"""
import cthtorch
from cthtorch import _C
from cthtorch._tensor import Tensor
from cthtorch._qscheme import (per_tensor_affine, per_channel_affine, per_tensor_symmetric,
                               per_channel_symmetric, per_channel_affine_float_qparams)

__all__ = ["quantize_per_tensor", "quantize_per_channel", "dequantize", "quantize_per_tensor_dynamic"]

# quantized dtype name -> (integer dtype holding it, qmin, qmax)
_STORAGE = {
    "quint8": ("uint8", 0, 255),
    "qint8": ("int8", -128, 127),
    "qint32": ("int32", -(1 << 31), (1 << 31) - 1),
}


def _qname(dtype):
    return str(dtype)[len("torch."):]


def _range(dtype):
    name = _qname(dtype)
    if name == "quint4x2":
        raise NotImplementedError("cthtorch does not compute in torch.quint4x2 (packed 4-bit) tensors; "
                                  "use torch.quint8 or torch.qint8")
    if name not in _STORAGE:
        raise RuntimeError("Creation of quantized tensor requires quantized dtype like torch.quint8")
    store, lo, hi = _STORAGE[name]
    return getattr(cthtorch, store), lo, hi


def _f32(value):
    """A Python double rounded to float32, as torch's kernels hold scales."""
    return cthtorch.tensor(float(value), dtype=cthtorch.float32).item()


def _check_float(x):
    if x.dtype != cthtorch.float32:
        raise RuntimeError("Quantize only works on Float Tensor, got %s" % _scalar_type(x.dtype))


def _scalar_type(dtype):
    # c10's ScalarType names (Float, Double, Long, ...)
    return {"float64": "Double", "float16": "Half", "bfloat16": "BFloat16", "int64": "Long", "int32": "Int",
            "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool",
            "float32": "Float"}.get(_qname(dtype), _qname(dtype))


def _round_clamp(v, dtype, lo, hi, store):
    """nearbyint then clamp of float32 v (already zero_point + x/scale), as the integer dtype."""
    v = v.round_()
    if store == cthtorch.int32:   # 2**31 - 1 is not a float32: clamp in double before the cast
        v = v.double()
    return v.clamp_(lo, hi).to(store)


def _make(int_repr, qdtype, scheme, scale, zero_point, axis=None):
    q = Tensor._make_subclass(QuantizedTensor, int_repr)
    q._qparams = (qdtype, scheme, scale, zero_point, axis)
    return q


def _plain(t):
    """The integer data of a quantized tensor as a plain Tensor (shares its storage)."""
    with _C.DisableTorchFunctionSubclass():
        return Tensor.as_subclass(t, Tensor)


def quantize_per_tensor(input, scale, zero_point, dtype):
    """torch.quantize_per_tensor(input, scale, zero_point, dtype); scale/zero_point may be 0-d tensors, or
    input a list of tensors with scales/zero_points tensors (one each)."""
    if isinstance(input, (list, tuple)):
        return [quantize_per_tensor(t, float(s), int(z), dtype)
                for t, s, z in zip(input, scale.tolist(), zero_point.tolist())]
    if isinstance(scale, Tensor):
        scale = scale.item()
    if isinstance(zero_point, Tensor):
        zero_point = zero_point.item()
    scale, zero_point = float(scale), int(zero_point)
    if _qname(dtype) not in _STORAGE and _qname(dtype) != "quint4x2":
        raise RuntimeError("ScalarType %s is not supported in new_qtensor." % _scalar_type(dtype))
    _check_float(input)
    store, lo, hi = _range(dtype)
    if zero_point > hi:
        raise RuntimeError("quantize_tensor_per_tensor_affine zero_point %d is above upper bound." % zero_point)
    if zero_point < lo:
        raise RuntimeError("quantize_tensor_per_tensor_affine zero_point %d is below lower bound." % zero_point)
    inv = _f32(1.0 / _f32(scale)) if _f32(scale) != 0 else float("inf")
    v = input.detach().mul(inv).add_(float(zero_point))
    if store != cthtorch.int32:   # fbgemm's 8-bit kernel clamps NaN (x NaN, or 0 * 1/0) to qmax
        v = v.nan_to_num_(nan=float(hi), posinf=float("inf"), neginf=float("-inf"))
    return _make(_round_clamp(v, dtype, lo, hi, store), dtype, per_tensor_affine, scale, zero_point)


def quantize_per_tensor_dynamic(input, dtype, reduce_range):
    """torch.quantize_per_tensor_dynamic: parameters from input's own min/max by fbgemm's
    ChooseQuantizationParams (the dtype's range, halved with reduce_range), then quantize_per_tensor."""
    if _qname(dtype) not in ("quint8", "qint8"):
        raise RuntimeError("dtype %snot supported" % {"qint32": "QInt32", "quint4x2": "QUInt4x2"}.get(
            _qname(dtype), _qname(dtype)))
    from cthtorch.ao.quantization.fake_quantize import _choose_qparams
    _, lo, hi = _STORAGE[_qname(dtype)]
    if reduce_range:
        lo, hi = lo // 2, hi // 2
    x_min, x_max = cthtorch.aminmax(input.detach()) if input.numel() else (cthtorch.tensor(0.), cthtorch.tensor(0.))
    scale, zero_point = _choose_qparams(x_min.item(), x_max.item(), lo, hi, False)
    return quantize_per_tensor(input, scale, zero_point, dtype)


def _channel_shape(x, axis):
    shape = [1] * x.dim()
    shape[axis] = -1
    return shape


def quantize_per_channel(input, scales, zero_points, axis, dtype):
    """torch.quantize_per_channel: scales (kept as float64) and zero_points (int64) along axis; float
    zero points make torch's per_channel_affine_float_qparams tensor (float32 parameters, embedding
    weights), q = nearbyint(x * (1 / scale) + zero_point)."""
    _check_float(input)
    store, lo, hi = _range(dtype)
    if not 0 <= axis < input.dim():
        raise RuntimeError("Channel axis out of range in per channel affine quantization. Got: %dExpected: [0, %d)"
                           % (axis, input.dim()))
    if scales.numel() != input.shape[axis]:
        raise RuntimeError("length of scales must equal to channel, expected %d got, %d"
                           % (input.shape[axis], scales.numel()))
    if zero_points.numel() != input.shape[axis]:
        raise RuntimeError("length of zero_points must equal to channel expected %d got, %d"
                           % (input.shape[axis], zero_points.numel()))
    shape = _channel_shape(input, axis)
    if zero_points.is_floating_point():
        scales = scales.detach().float().reshape(-1)
        zero_points = zero_points.detach().float().reshape(-1)
        inv = cthtorch.where(scales == 0, cthtorch.ones_like(scales), scales.reciprocal()).reshape(shape)
        v = input.detach().mul(inv).add_(zero_points.reshape(shape))
        return _make(_round_clamp(v, dtype, lo, hi, store), dtype, per_channel_affine_float_qparams,
                     scales.clone(), zero_points.clone(), axis)
    scales = scales.detach().to(cthtorch.float64).reshape(-1)
    zero_points = zero_points.detach().to(cthtorch.int64).reshape(-1)
    inv = scales.float().reciprocal().reshape(shape)
    v = input.detach().mul(inv).add_(zero_points.float().reshape(shape))
    return _make(_round_clamp(v, dtype, lo, hi, store), dtype, per_channel_affine,
                 scales.clone(), zero_points.clone(), axis)


def dequantize(tensor):
    """torch.dequantize: a quantized tensor's real values (float32); a list dequantizes each."""
    if isinstance(tensor, (list, tuple)):
        return tuple(dequantize(t) for t in tensor)
    return tensor.dequantize()


def _dequantize(q):
    qdtype, scheme, scale, zp, axis = q._qparams
    ints = _plain(q).to(cthtorch.int64)
    if axis is None:
        return ints.sub_(zp).to(cthtorch.float32).mul_(_f32(scale))
    shape = _channel_shape(ints, axis)
    if zp.is_floating_point():   # float qparams: (q - zero_point) * scale, in float32
        return ints.to(cthtorch.float32).sub_(zp.reshape(shape)).mul_(scale.reshape(shape))
    return ints.sub_(zp.reshape(shape)).to(cthtorch.float32).mul_(scale.float().reshape(shape))


def _requantize(x, like):
    """Real values x put on the grid of quantized tensor `like` (its scale, zero point, dtype)."""
    qdtype, scheme, scale, zp, axis = like._qparams
    if axis is None:
        return quantize_per_tensor(x, scale, zp, qdtype)
    return quantize_per_channel(x, scale, zp, axis, qdtype)


def _backend_error(name):
    return NotImplementedError(
        "Could not run 'aten::%s' with arguments from the 'QuantizedCPU' backend. This could be because the "
        "operator doesn't exist for this backend, or was omitted during the selective/custom build process "
        "(if using custom build). cthtorch computes on quantized tensors only what torch's eager quantized "
        "kernels do: dequantize() first." % name)


# ops that only move the integers: run on them, keep the parameters (per-tensor only: they move the axis)
_LAYOUT = frozenset((
    "view", "reshape", "flatten", "permute", "transpose", "t", "__getitem__", "squeeze", "unsqueeze", "select",
    "narrow", "expand", "chunk", "split", "unbind", "view_as", "reshape_as", "unflatten", "movedim",
    "swapaxes", "expand_as", "flip", "repeat"))
# ops that keep every axis where it is (per-channel tensors too)
_SAME_LAYOUT = frozenset(("clone", "detach", "contiguous", "cpu", "detach_", "requires_grad_"))
# ops whose result torch puts on the input's grid: computed on the real values, quantized back
_ON_GRID = frozenset((
    "relu", "relu_", "relu6", "hardtanh", "hardtanh_", "clamp", "clamp_", "clip", "clip_", "max_pool1d",
    "max_pool2d", "max_pool3d", "avg_pool1d", "avg_pool2d", "avg_pool3d", "adaptive_avg_pool1d",
    "adaptive_avg_pool2d", "adaptive_avg_pool3d", "mean", "interpolate", "upsample", "upsample_nearest",
    "upsample_bilinear", "dropout", "leaky_relu", "leaky_relu_", "_max_pool2d", "channel_shuffle",
    "pixel_shuffle", "pixel_unshuffle", "pad"))
# ops whose output range is known: torch quantizes the real result with fixed parameters, by dtype
_SIGMOID_GRID = (2.0 ** -8, {"quint8": 0, "qint8": -128}, 2.0 ** -32)
_FIXED_GRID = {"sigmoid": _SIGMOID_GRID, "hardsigmoid": _SIGMOID_GRID,
               "tanh": (2.0 ** -7, {"quint8": 128, "qint8": 0}, 2.0 ** -31)}
# ops returning values of the input (and maybe indices): torch's quantized max/min/sort/topk
_ON_GRID_VALUES = frozenset(("max", "min", "amax", "amin", "sort", "topk", "kthvalue", "median"))
# read-only questions about the tensor
_META = frozenset((
    "size", "dim", "numel", "nelement", "__len__", "stride", "is_contiguous", "storage_offset", "data_ptr",
    "get_device", "ndimension", "is_floating_point", "is_complex", "__get__", "__format__", "__hash__",
    "is_same_size", "is_set_to", "untyped_storage", "is_tensor"))
# torch's quantized comparisons (qcomparison.cpp) compare the real values: every tensor argument dequantized
_COMPARE = frozenset(("eq", "ne", "lt", "le", "gt", "ge", "__eq__", "__ne__", "__lt__", "__le__", "__gt__",
                      "__ge__"))


def _func_name(func):
    name = getattr(func, "__name__", "")
    if name == "__get__":   # a property of the C base: its own name
        return "__get__:" + getattr(getattr(func, "__self__", None), "__name__", "")
    return name


def _wrap_like(ret, like):
    if isinstance(ret, Tensor) and not isinstance(ret, QuantizedTensor) and ret.dtype == _plain(like).dtype:
        qdtype, scheme, scale, zp, axis = like._qparams
        return _make(ret, qdtype, scheme, scale, zp, axis)
    if isinstance(ret, (tuple, list)):
        return type(ret)(_wrap_like(r, like) for r in ret)
    return ret


def _unwrap(obj):
    if isinstance(obj, QuantizedTensor):
        return _plain(obj)
    if isinstance(obj, (list, tuple)):
        return type(obj)(_unwrap(o) for o in obj)
    return obj


def _first_quantized(args):
    for a in args:
        if isinstance(a, QuantizedTensor):
            return a
        if isinstance(a, (list, tuple)):
            found = _first_quantized(a)
            if found is not None:
                return found
    return None


class _PrintedAsTensor(type):
    """torch's quantized tensors are plain torch.Tensor: type(q) here prints and names itself as Tensor
    (print(type(q)), type(q).__name__). __qualname__ and __module__ stay true, so pickling the class and
    dispatch are unchanged; `type(q) is torch.Tensor` stays False (a Python subclass cannot fake type())."""

    def __repr__(cls):
        return repr(Tensor)

    @property
    def __name__(cls):
        return Tensor.__name__


class QuantizedTensor(Tensor, metaclass=_PrintedAsTensor):
    """A quantized tensor (see the module docstring); torch's type is torch.Tensor itself."""

    @property
    def dtype(self):
        return self._qparams[0]

    is_quantized = property(lambda self: True)

    def qscheme(self):
        return self._qparams[1]

    def _per_tensor(self):
        if self._qparams[4] is not None:
            raise RuntimeError("Expected quantizer->qscheme() == kPerTensorAffine to be true, but got false.  "
                               "(Could this error message be improved?  If so, please report an enhancement "
                               "request to PyTorch.)")

    def _per_channel(self):
        if self._qparams[4] is None:
            raise RuntimeError("Expected quantizer->qscheme() == kPerChannelAffine || quantizer->qscheme() == "
                               "kPerChannelAffineFloatQParams to be true, but got false.  (Could this error "
                               "message be improved?  If so, please report an enhancement request to PyTorch.)")

    def q_scale(self):
        self._per_tensor()
        return self._qparams[2]

    def q_zero_point(self):
        self._per_tensor()
        return self._qparams[3]

    def q_per_channel_scales(self):
        self._per_channel()
        return self._qparams[2].clone()

    def q_per_channel_zero_points(self):
        self._per_channel()
        return self._qparams[3].clone()

    def q_per_channel_axis(self):
        self._per_channel()
        return self._qparams[4]

    def int_repr(self):
        return _plain(self).clone()

    def dequantize(self):
        return _dequantize(self)

    def numpy(self, *, force=False):
        # the integers are not the values: torch refuses too
        raise TypeError("Got unsupported ScalarType %s" % {"quint8": "QUInt8", "qint8": "QInt8",
                                                            "qint32": "QInt32"}[_qname(self.dtype)])

    def element_size(self):
        return _plain(self).element_size()

    def __repr__(self, *, tensor_contents=None):
        from cthtorch._tensor_str import _quantized_str
        return _quantized_str(self, tensor_contents)

    def __bool__(self):
        return bool(_dequantize(self))   # torch's is_nonzero reads the real value

    def requires_grad_(self, requires_grad=True):
        if requires_grad:
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
        return self

    def __format__(self, format_spec):
        # torch's Tensor.__format__: a 0-d tensor formats its (real) value, any other its repr
        if self.dim() == 0:
            return self.item().__format__(format_spec)
        return object.__format__(self, format_spec)

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        qdtype, scheme, scale, zp, axis = self._qparams
        copy = _make(_plain(self).clone(), qdtype, scheme,
                     scale.clone() if axis is not None else scale,
                     zp.clone() if axis is not None else zp, axis)
        memo[id(self)] = copy
        return copy

    def __reduce_ex__(self, proto):
        # saved as its integers and parameters: torch.save of a quantized model is a quarter of the float one
        return (_rebuild_quantized, (_plain(self).clone(), self._qparams))

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        name = _func_name(func)
        first = _first_quantized(args)
        if first is None:   # passed by keyword only (torch.clone(input=q))
            first = _first_quantized(tuple(kwargs.values()))
        with _C.DisableTorchFunctionSubclass():
            if name.startswith("__get__:"):
                prop = name[len("__get__:"):]
                ret = func(*_unwrap(args))
                return _wrap_like(ret, first) if prop in ("data", "T", "mT") else ret
            if name in _META:
                return func(*_unwrap(args), **kwargs)
            if name == "dequantize":
                if args and isinstance(args[0], (list, tuple)):   # torch.dequantize(tensors): a tuple
                    return tuple(t.dequantize() for t in args[0])
                return _dequantize(first)
            if name in _COMPARE:
                return func(*[a.dequantize() if isinstance(a, Tensor) else a for a in args], **kwargs)
            if name == "equal":
                return _equal(*args, **kwargs)
            if name == "item":   # the real value, as torch's item() of a quantized tensor
                return func(_dequantize(first))
            if name in ("quantize_per_tensor", "quantize_per_channel"):
                raise RuntimeError("Quantize only works on Float Tensor, got %s" % first.dtype)
            if name == "to" and not _changes_dtype(args[1:], kwargs):
                return first
            if name == "__setitem__" and args and args[0] is first:
                _setitem(first, *args[1:])
                return None
            if first._qparams[4] is not None:
                if name in _RESHAPE:   # torch keeps the per-channel quantizer as it is (axis included)
                    return _wrap_like(func(*_unwrap(args), **kwargs), first)
                if name in ("__getitem__", "select", "narrow") and args and args[0] is first:
                    return _channel_getitem(first, _as_index(name, first, args[1:], kwargs))
            if name in _SAME_LAYOUT or (name in _LAYOUT and first._qparams[4] is None):
                return _wrap_like(func(*_unwrap(args), **kwargs), first)
            if name in _LAYOUT:
                raise RuntimeError("Setting strides is possible only on uniformly quantized tensor")
            if name in ("cat", "stack", "concat", "concatenate") and first._qparams[4] is None:
                tensors = args[0] if args else kwargs.pop("tensors")
                reals = [t.dequantize() if isinstance(t, QuantizedTensor) else t for t in tensors]
                return _requantize(func(reals, *args[1:], **kwargs), first)
            if name == "pad" and (args[2] if len(args) > 2 else kwargs.get("mode", "constant")) == "replicate":
                raise _backend_error("replication_pad%dd.out" % (len(args[1] if len(args) > 1 else kwargs["pad"]) // 2))
            if name in _ON_GRID and args and args[0] is first and first._qparams[4] is None:
                inplace = name.endswith("_") or kwargs.get("inplace", False)
                out = _requantize(func(first.dequantize(), *args[1:], **kwargs), first)
                if inplace:
                    _plain(first).copy_(_plain(out))
                    return first
                return out
            if name in _FIXED_GRID and args and args[0] is first and first._qparams[4] is None:
                scale, zero_points, scale32 = _FIXED_GRID[name]
                qname = _qname(first.dtype)
                out = func(first.dequantize(), *args[1:], **kwargs)
                return quantize_per_tensor(out, scale32 if qname == "qint32" else scale, zero_points.get(qname, 0),
                                           first.dtype)
            if name in _ON_GRID_VALUES and args and args[0] is first and first._qparams[4] is None:
                # (values, indices) results: the values stay on the input's grid
                ret = func(first.dequantize(), *args[1:], **kwargs)
                if isinstance(ret, Tensor):
                    return _requantize(ret, first)
                return type(ret)(_requantize(ret[0], first), *ret[1:])
            if name in ("float", "double", "half", "to", "type", "tolist"):
                raise RuntimeError("Creation of quantized tensor requires quantized dtype like torch.quint8"
                                   if name in ("float", "double", "half", "to", "type")
                                   else "load_scalar: invalid type")
        raise _backend_error(name)


# reshapes torch allows on per-channel tensors, keeping scales, zero points and axis unchanged
_RESHAPE = frozenset(("view", "reshape", "flatten", "view_as", "reshape_as"))


def _as_index(name, q, args, kwargs):
    """select(dim, i) / narrow(dim, start, length) as the __getitem__ index that does the same."""
    if name == "__getitem__":
        return args[0]
    dim = args[0] if args else kwargs["dim"]
    dim = dim + q.dim() if dim < 0 else dim
    if name == "select":
        return (slice(None),) * dim + (args[1] if len(args) > 1 else kwargs["index"],)
    start = args[1] if len(args) > 1 else kwargs["start"]
    start = start + q.shape[dim] if start < 0 else start
    return (slice(None),) * dim + (slice(start, start + (args[2] if len(args) > 2 else kwargs["length"])),)


def _basic_index(index):
    """index as a tuple of ints / slices / None / Ellipsis, or None when it holds tensors or lists."""
    items = index if isinstance(index, tuple) else (index,)
    for it in items:
        if not (it is None or it is Ellipsis or isinstance(it, slice)
                or (isinstance(it, int) and not isinstance(it, bool))):
            return None
    return items


def _channel_getitem(q, index):
    """Indexing a per-channel tensor as torch's create_subtensor_quantizer: selecting a channel gives a
    per-tensor tensor with that channel's scale and zero point, slicing the axis slices the parameters, and
    (torch's quirk, kept) selecting any other dim lowers the axis by one."""
    items = _basic_index(index)
    if items is None:
        raise RuntimeError(
            "self.qscheme() == c10::kPerTensorAffine || self.qscheme() == c10::kPerTensorSymmetric INTERNAL "
            "ASSERT FAILED at \"/__w/pytorch/pytorch/aten/src/ATen/native/TensorAdvancedIndexing.cpp\":732, "
            "please report a bug to PyTorch. Indexing is only supported for per-Tensor quantized Tensors.")
    ints = _plain(q)[index]
    qdtype, scheme, scales, zps, axis = q._qparams
    used = sum(1 for it in items if it is not None and it is not Ellipsis)
    if Ellipsis in items:
        at = items.index(Ellipsis)
        items = items[:at] + (slice(None),) * (q.dim() - used) + items[at + 1:]
    pos = 0
    for it in items:
        if zps.is_floating_point() and not (it == slice(None) or (isinstance(it, int) and pos == axis)):
            # float-qparams tensors (embedding weights) take only a select of a channel
            raise RuntimeError("Setting strides is possible only on uniformly or per channel quantized tensors")
        if it is None:
            axis += pos <= axis
            pos += 1
        elif isinstance(it, slice):
            if pos == axis:
                scales, zps = scales[it], zps[it]
            pos += 1
        elif pos == axis:
            c = it + scales.shape[0] if it < 0 else it
            return _make(ints, qdtype, per_tensor_affine, float(scales[c]), int(zps[c]))
        else:
            axis -= 1
    return _make(ints, qdtype, scheme, scales.clone(), zps.clone(), axis)


def _setitem(q, index, value):
    """q[index] = value as torch's: the value quantized with the parameters of the part written (a quantized
    value's integers copied as they are); torch's copy needs that part and the value contiguous."""
    if _basic_index(index) is None:   # advanced indexing: index_put_, per-tensor only
        if q._qparams[4] is not None:
            raise RuntimeError("index_put for quantized tensors is currently only supported for per tensor "
                               "quantized tensors")
        if not isinstance(value, QuantizedTensor):
            value = _requantize(cthtorch.as_tensor(value, dtype=cthtorch.float32).detach(), q)
        _plain(q)[index] = _plain(value)
        return
    sub = _channel_getitem(q, index) if q._qparams[4] is not None else _make(_plain(q)[index], *q._qparams)
    if not isinstance(value, QuantizedTensor):
        if isinstance(value, Tensor) and value.dim() > 0:
            if value.dtype != cthtorch.float32:
                raise RuntimeError("Quantized copy only works with kFloat as source Tensor")
            value = value.detach().expand(sub.shape)
        else:
            value = cthtorch.full(sub.shape, float(value), dtype=cthtorch.float32)
            if not _plain(sub).is_contiguous():
                value = value.expand(sub.shape)
    if not (_plain(sub).is_contiguous() and value.is_contiguous()):
        raise RuntimeError("Quantized copy only works with contiguous and NHWC Tensors")
    _plain(sub).copy_(_plain(value) if isinstance(value, QuantizedTensor) else _plain(_requantize(value, sub)))


def _equal(a, b):
    """torch.equal of quantized tensors (equal_quantized_cpu): same quantizer, sizes and integers."""
    for t in (a, b):
        if not isinstance(t, QuantizedTensor):
            raise RuntimeError("Expected both arguments to be quantized, got: %s" % _scalar_type(t.dtype))
    pa, pb = a._qparams, b._qparams
    if pa[:2] != pb[:2] or pa[4] != pb[4]:
        return False
    if pa[4] is None:
        if (pa[2], pa[3]) != (pb[2], pb[3]):
            return False
    elif not (Tensor.equal(pa[2], pb[2]) and Tensor.equal(pa[3], pb[3])):
        return False
    return a.shape == b.shape and Tensor.equal(_plain(a), _plain(b))


def _changes_dtype(args, kwargs):
    if "dtype" in kwargs:
        return True
    return any(isinstance(a, Tensor) or type(a).__name__ in ("dtype", "_UnimplementedDtype") for a in args)


def _rebuild_quantized(int_repr, qparams):
    return _make(int_repr, *qparams)

