"""cthtorch.Tensor: _C._TensorBase plus the methods PyTorch writes in Python."""
import copy as _copy

import cthtorch
from cthtorch import _C, _ops
from cthtorch._utils import _int_list, _user_stacklevel


DEEPCOPY_SUBCLASS = ("The default implementation of __deepcopy__() for non-wrapper subclasses only works for subclass "
                     "types that implement new_empty() and for which that function returns another instance of the "
                     "same subclass. You should either properly implement new_empty() for your subclass or override "
                     "__deepcopy__() if it is intended behavior for new_empty() to return an instance of a different "
                     "type.")
DEEPCOPY_NON_LEAF = ("Only Tensors created explicitly by the user (graph leaves) support the deepcopy protocol at "
                     "the moment.  If you were attempting to deepcopy a module, this may be because of a "
                     "torch.nn.utils.weight_norm usage, see https://github.com/pytorch/pytorch/pull/103001")


# new_zeros/ones/empty/full parse their size themselves so that errors name them
# (torch's "new_zeros(): argument 'size' ..."), then build as the factories do
def _new_size(fname, size, kw):
    if "size" in kw:
        if size:
            raise TypeError("%s() got multiple values for argument 'size'" % fname)
        size = (kw.pop("size"),)
    return _int_list(fname, "size", 1, size, varargs=True)


def _new_options(self, dtype, device, requires_grad):
    return dict(dtype=dtype or self.dtype, device=self.device if device is None else device,
                requires_grad=requires_grad)


def _number(x):
    """a numpy scalar as the Python number it holds (torch takes it as a wrapped number: np.float64(2) // an
    int64 tensor is float32, not float64; a numpy bool is a float to it); anything else unchanged"""
    if type(x).__module__ == "numpy" and getattr(x, "ndim", None) == 0:
        return float(x) if x.dtype.kind == "b" else x.item()
    return x


def _handles_torch_function(fn):
    """A Tensor method written in Python hands a subclass's call to its __torch_function__ with itself as
    func, as torch's Python methods do."""
    import functools

    @functools.wraps(fn)
    def method(self, *args, **kwargs):
        if _C._has_torch_function_unary(self):
            return _C._handle_torch_function(method, (self,), (self,) + args, kwargs)
        return fn(self, *args, **kwargs)
    return method


def _reflected(fn=None, *, arrays=False):
    """A reflected operator (2 - x): a subclass's call goes to its __torch_function__, and an operand it cannot
    take is NotImplemented, so Python raises its "unsupported operand type(s)" TypeError, as torch's. Unless
    `arrays`, a numpy array is such an operand (torch's parser takes none, 0-d ones too); __rdiv__ takes them,
    its product with the reciprocal being numpy's. One wrapper: `1 - x` is common."""
    if fn is None:
        return lambda f: _reflected(f, arrays=arrays)

    def method(self, other):
        if not arrays and hasattr(type(other), "__len__") and hasattr(other, "__array_interface__"):
            return NotImplemented
        try:
            if _C._has_torch_function_unary(self):
                return _C._handle_torch_function(method, (self,), (self, other), {})
            return fn(self, other)
        except TypeError:
            return NotImplemented
    method.__name__, method.__qualname__, method.__doc__ = fn.__name__, fn.__qualname__, fn.__doc__
    return method


_warned_T = []   # x.T's deprecation warning was given


class Tensor(_C._TensorBase):
    # printed and pickled by reference as the package's Tensor (torch's prints <class 'torch.Tensor'>)
    __module__ = "cthtorch"
    # numpy defers its binary operators to a higher priority operand: np.float64(2) * tensor then reaches
    # __rmul__ and stays a tensor (whisper's sinusoids), instead of numpy converting it through __array__
    __array_priority__ = 1000

    def __new__(cls, *args, **kwargs):
        # torch.Tensor(storage): a 1-D tensor of the default dtype over the storage's memory
        if len(args) == 1 and type(args[0]).__name__ in ("TypedStorage", "UntypedStorage") and not kwargs:
            from cthtorch._utils import _dtype_name as dtype_name
            from cthtorch.storage import _view_of_storage
            dt = cthtorch.get_default_dtype()
            args = (_view_of_storage(dt, args[0], type_name=dtype_name(dt)),)
        return _C._TensorBase.__new__(cls, *args, **kwargs)

    # ---- printing ----
    @_handles_torch_function
    def __repr__(self, *, tensor_contents=None):
        from cthtorch._tensor_str import _str
        return _str(self, tensor_contents=tensor_contents)

    @_handles_torch_function
    def __format__(self, spec):
        # only a plain 0-d tensor formats as its number: a subclass's (even a 0-d one) is object's, as in torch
        if type(self) is Tensor and self.dim() == 0 and not self.is_meta:
            return self.detach().item().__format__(spec)
        return object.__format__(self, spec)

    # ---- autograd ----
    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        cthtorch.autograd.backward(self, gradient, retain_graph, create_graph, inputs=inputs)

    def register_hook(self, hook):
        if not self.requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        from cthtorch.utils.hooks import _ListHandle
        if self.grad_fn is None:
            if self._backward_hooks is None:
                self._backward_hooks = []
            self._backward_hooks.append(hook)
            return _ListHandle(self._backward_hooks, hook)
        return self.grad_fn._register_tensor_prehook(self.output_nr, hook)

    _post_accumulate_grad_hooks = None   # id -> hook(tensor); run by AccumulateGrad (src/python/autograd/Node.c)

    def register_post_accumulate_grad_hook(self, hook):
        if not self.requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self.grad_fn is not None:
            raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
        from cthtorch.utils.hooks import RemovableHandle
        if self._post_accumulate_grad_hooks is None:
            import collections   # OrderedDict: the handle keeps a weak reference to it
            self._post_accumulate_grad_hooks = collections.OrderedDict()
        handle = RemovableHandle(self._post_accumulate_grad_hooks)
        self._post_accumulate_grad_hooks[handle.id] = hook
        return handle

    def retain_grad(self):
        if not self.requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if self.grad_fn is None or getattr(self, "_retain_handle", None) is not None:
            return
        import weakref
        ref = weakref.ref(self)

        def hook(grad):
            t = ref()
            if t is not None:
                t.grad = grad.detach().clone() if t.grad is None else t.grad + grad.detach()
            return grad
        self._retain_handle = self.grad_fn._register_tensor_prehook(self.output_nr, hook)

    @property
    def retains_grad(self):
        return getattr(self, "_retain_handle", None) is not None

    # pre-0.4 programs still read or set .volatile; torch warns and keeps it False
    @property
    def volatile(self):
        import warnings
        warnings.warn("volatile was removed (Variable.volatile is always False)", stacklevel=2)
        return False

    @volatile.setter
    def volatile(self, value):
        import warnings
        warnings.warn("volatile was removed and now has no effect. Use `with torch.no_grad():` instead.", stacklevel=2)

    # ---- Python protocols ----
    def __iter__(self):
        if self.dim() == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))

    def __array__(self, dtype=None, copy=None):
        a = self.detach().numpy() if self.requires_grad else self.numpy()
        return a if dtype is None else a.astype(dtype, copy=False)

    def __array_wrap__(self, array, context=None, return_scalar=False):
        # numpy's result of a ufunc over a tensor (tensor * ndarray: the operator leaves arrays to numpy);
        # torch makes a bool array uint8
        return cthtorch.from_numpy(array.astype("uint8") if array.dtype == bool else array)

    def __contains__(self, element):
        if isinstance(element, (Tensor, int, float, bool)):
            return bool((self == element).any().item())
        raise RuntimeError("Tensor.__contains__ only supports Tensor or scalar, but you passed in a %s." % type(element))

    def __reversed__(self):
        return self.flip(0) if self.dim() else self

    @_reflected
    def __rsub__(self, other):
        return cthtorch.rsub(self, other)

    @_reflected(arrays=True)
    def __rdiv__(self, other):
        return cthtorch.reciprocal(self) * other if not isinstance(other, Tensor) else other / self

    __rtruediv__ = __rdiv__

    @_reflected
    def __rpow__(self, other):
        return cthtorch.pow(other, self)   # a number: pow.Scalar, PowBackward2 with no edge for it

    @_reflected
    def __rmatmul__(self, other):
        # a number (a numpy scalar, which defers here by __array_priority__) has no matmul: Python's TypeError
        return other.matmul(self) if isinstance(other, Tensor) else NotImplemented

    @_reflected
    def __rfloordiv__(self, other):
        return cthtorch.floor_divide(cthtorch.tensor(_number(other)), self)

    @_reflected
    def __rmod__(self, other):
        return cthtorch.remainder(cthtorch.tensor(_number(other)), self)

    @_ops.method
    def dequantize(self):
        """A tensor that is not quantized is its own real value (torch's dequantize of a float tensor)."""
        return self.to(cthtorch.float32)

    def __deepcopy__(self, memo):
        if not self.is_leaf:
            raise RuntimeError(DEEPCOPY_NON_LEAF)
        if id(self) in memo:
            return memo[id(self)]
        if type(self) is not Tensor and not _is_param_cls(type(self)):
            # torch copies a subclass through new_empty() run with its __torch_function__ off: unless the
            # subclass's own new_empty keeps the type, that is a plain tensor and the copy is refused
            with _C.DisableTorchFunctionSubclass():
                if type(self.new_empty([])) is not type(self):
                    raise RuntimeError(DEEPCOPY_SUBCLASS)
        with cthtorch.no_grad():
            new = self.clone()
            if type(self) is not Tensor:
                new = type(self).__new__(type(self), new, self.requires_grad) if _is_param(self) else \
                    Tensor._make_subclass(type(self), new, self.requires_grad)
            else:
                new.requires_grad_(self.requires_grad)
        if self.grad is not None:
            new.grad = _copy.deepcopy(self.grad, memo)
        if getattr(self, "__dict__", None):
            for k, v in self.__dict__.items():
                if k != "_retain_handle":
                    setattr(new, k, _copy.deepcopy(v, memo))
        memo[id(self)] = new
        return new

    def __reduce_ex__(self, proto):
        # numpy carries the bytes; bfloat16 goes through float32 exactly
        data = self.detach()
        dt = str(self.dtype).split(".")[1]
        arr = (data.float() if dt == "bfloat16" else data).contiguous().numpy().copy()
        state = {k: v for k, v in getattr(self, "__dict__", {}).items() if k != "_retain_handle"}
        return (_rebuild_tensor, (type(self), arr, dt, self.requires_grad, state))

    def __setstate__(self, state):
        pass

    # ---- conveniences written in Python in PyTorch too ----

    @_ops.method
    def cfloat(self, memory_format=None):
        return self.to(cthtorch.complex64, memory_format=memory_format or cthtorch.preserve_format)

    @_ops.method
    def cdouble(self, memory_format=None):
        return self.to(cthtorch.complex128, memory_format=memory_format or cthtorch.preserve_format)

    @_ops.method
    def chalf(self, memory_format=None):
        return self.to(cthtorch.complex32, memory_format=memory_format or cthtorch.preserve_format)

    def __dlpack__(self, *, stream=-1, max_version=None, dl_device=None, copy=None):
        from cthtorch.utils import dlpack
        return dlpack.dlpack(self, stream, max_version, dl_device, copy)

    def __dlpack_device__(self):
        from cthtorch.utils import dlpack
        return dlpack.dlpack_device(self)

    def __complex__(self):
        if self.numel() != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        return complex(self.item())

    @_ops.method
    def unique(self, sorted=True, return_inverse=False, return_counts=False, dim=None):
        return cthtorch.unique(self, sorted=sorted, return_inverse=return_inverse, return_counts=return_counts, dim=dim)

    @_ops.method
    def unique_consecutive(self, return_inverse=False, return_counts=False, dim=None):
        return cthtorch.unique_consecutive(self, return_inverse=return_inverse, return_counts=return_counts, dim=dim)

    @_ops.method
    def new_tensor(self, data, dtype=None, device=None, requires_grad=False):
        device = self.device if device is None else device
        if isinstance(data, Tensor):   # torch's copy-construct warning, naming this spelling
            import warnings
            warnings.warn("To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone() or "
                          "sourceTensor.detach().clone().requires_grad_(True), rather than "
                          "tensor.new_tensor(sourceTensor).", UserWarning, stacklevel=_user_stacklevel())
            return data.detach().to(dtype=dtype or self.dtype, device=device, copy=True).requires_grad_(requires_grad)
        return cthtorch.tensor(data, dtype=dtype or self.dtype, device=device, requires_grad=requires_grad)

    @_ops.method
    def new_zeros(self, *size, dtype=None, device=None, requires_grad=False, **kw):
        # full, not zeros: torch's new_zeros(-1) text is the generic negative-dimension one
        return cthtorch.full(_new_size("new_zeros", size, kw), 0,
                             **_new_options(self, dtype, device, requires_grad))

    @_ops.method
    def new_ones(self, *size, dtype=None, device=None, requires_grad=False, **kw):
        return cthtorch.ones(_new_size("new_ones", size, kw), **_new_options(self, dtype, device, requires_grad))

    @_ops.method
    def new_empty(self, *size, dtype=None, device=None, requires_grad=False, **kw):
        return cthtorch.empty(_new_size("new_empty", size, kw), **_new_options(self, dtype, device, requires_grad))

    @_ops.method
    def new_full(self, size, fill_value, dtype=None, device=None, requires_grad=False, **kw):
        return cthtorch.full(_int_list("new_full", "size", 1, size), fill_value,
                             **_new_options(self, dtype, device, requires_grad))

    @_ops.method
    def view_as(self, other):
        return self.view(other.size())

    @_ops.method
    def reshape_as(self, other):
        return self.reshape(other.size())

    @_ops.method
    def expand_as(self, other):
        return self.expand(other.size())

    @_ops.method
    def type_as(self, other):
        return self.to(other.dtype)

    def is_shared(self):
        return _C._is_shared(self) if hasattr(_C, "_is_shared") else False

    def share_memory_(self):
        if hasattr(_C, "_share_memory_"):
            _C._share_memory_(self)
        return self

    def module_load(self, other, assign=False):
        """what load_state_dict swaps in for self when swapping module params: other itself (detached) with
        assign=True, else self holding other's values (detached); a subclass may remap other here"""
        return other.detach() if assign else self.copy_(other).detach()

    @_ops.method
    def hardshrink(self, lambd=0.5):
        import cthtorch.nn.functional as F
        return F.hardshrink(self, lambd)

    @_ops.method
    def prelu(self, weight):
        import cthtorch.nn.functional as F
        return F.prelu(self, weight)

    def storage(self):
        from cthtorch.storage import _storage
        return _storage(self)

    def set_(self, *args, **kwargs):
        """set_(storage, storage_offset=0, size=None, stride=None) points self at
        a storage (typed or untyped); other forms go to the C method."""
        if args and cthtorch.is_storage(args[0]):
            from cthtorch.storage import _view_of_storage
            args = (_view_of_storage(self.dtype, *args, **kwargs),)
            kwargs = {}
        return _C._TensorBase.set_(self, *args, **kwargs)

    def pin_memory(self, device=None):
        """A copy in page-locked host memory (fast, asynchronous copies to the GPU);
        self when already pinned."""
        if not cthtorch.cuda.is_available():   # PyTorch's CPU-only build: pinning needs an accelerator
            raise RuntimeError("Cannot access accelerator device when none is available.")
        if self.is_pinned():
            return self
        return _C._cuda._pin_memory(self)

    def is_pinned(self, device=None):
        return _C._cuda._is_pinned(self)

    def as_subclass(self, cls):
        """A cls instance sharing self's data, on the autograd graph (AliasBackward0) as torch's; cls may
        declare __slots__."""
        with _C.DisableTorchFunction():   # torch's is one C method: neither modes nor subclasses see the alias
            return _C._tensor_reclass(_C._VariableFunctions.alias(self), cls)

    @property
    def T(self):
        if self.dim() not in (0, 2) and not _warned_T:
            _warned_T.append(True)    # once per process, as torch's TORCH_WARN_ONCE
            import warnings
            warnings.warn("The use of `x.T` on tensors of dimension other than 2 to reverse their shape is "
                          "deprecated and it will throw an error in a future release. Consider `x.mT` to transpose "
                          "batches of matrices or `x.permute(*torch.arange(x.ndim - 1, -1, -1))` to reverse the "
                          "dimensions of a tensor.", stacklevel=2)
        return self.permute(tuple(reversed(range(self.dim()))))

    @property
    def mT(self):
        return _matrix_transpose(self, "mT")

    @property
    def H(self):
        return self.T.conj() if self.is_complex() else self.T

    @property
    def mH(self):
        return _matrix_transpose(self, "mH")

    @property
    def real(self):
        return _C._VariableFunctions.view_as_real(self).select(-1, 0) if self.is_complex() else self

    @real.setter
    def real(self, value):
        self.real.copy_(value)

    @property
    def device_type(self):
        return "cpu"

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        """The default for subclasses: func runs on the plain tensors and the tensors it returns are
        made instances of cls (as torch's), so a subclass keeps its type through ops."""
        if kwargs is None:
            kwargs = {}
        if not all(issubclass(cls, t) for t in types):
            return NotImplemented
        with _C.DisableTorchFunctionSubclass():
            ret = func(*args, **kwargs)
            if func in _nowrap_functions():
                return ret
            return _convert(ret, cls)

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        # a subclass taking part in __torch_function__ makes every op ask (nn.Parameter opts out)
        tf = next(k.__dict__["__torch_function__"] for k in cls.__mro__ if "__torch_function__" in k.__dict__)
        if tf is not _C._disabled_torch_function_impl:
            _C._tf_arm()


def _convert(ret, cls):
    if cls is Tensor:
        return ret
    if isinstance(ret, Tensor) and not isinstance(ret, cls):
        ret = ret.as_subclass(cls)
    if isinstance(ret, (tuple, list)):
        items = [_convert(r, cls) for r in ret]
        ret = type(ret)(*items) if hasattr(ret, "_fields") else type(ret)(items)   # named tuples take fields
    return ret


def _nowrap_functions():
    """What the default __torch_function__ returns unwrapped (torch.overrides.get_default_nowrap_functions)."""
    import cthtorch.overrides
    return cthtorch.overrides.get_default_nowrap_functions()


def _is_param(t):
    return type(t).__name__ == "Parameter"


def _rebuild_tensor(cls, arr, dt, requires_grad, state):
    t = cthtorch.from_numpy(arr)
    if dt == "bfloat16":
        t = t.to(cthtorch.bfloat16)
    if cls is not Tensor:
        if _is_param_cls(cls):
            t = cls(t, requires_grad)
        else:
            t = Tensor._make_subclass(cls, t, requires_grad)
    elif requires_grad:
        t.requires_grad_(True)
    for k, v in state.items():
        setattr(t, k, v)
    return t


def _rebuild_from_type_v2(func, new_type, args, state):
    """torch.save's record of a Tensor subclass instance (or a tensor with attributes), torch._tensor's name:
    the tensor func rebuilds, made a new_type, its attributes set again"""
    ret = func(*args)
    if type(ret) is not new_type:
        ret = ret.as_subclass(new_type)
    if getattr(new_type, "__setstate__", None) is not Tensor.__setstate__:
        ret.__setstate__(state)
    else:
        _set_obj_state(ret, state)
    return ret


def _set_obj_state(obj, state):
    """torch._utils._set_obj_state: a saved state is the __dict__, or (__dict__, slots); either may be None
    (Python 3.11 pickles an instance that never had a __dict__ as None)"""
    if isinstance(state, tuple):
        if len(state) != 2:
            raise RuntimeError("Invalid serialized state: %s" % (state,))
        dict_state, slots_state = state
    else:
        dict_state, slots_state = state, None
    for part in (dict_state, slots_state):
        for k, v in (part or {}).items():
            setattr(obj, k, v)
    return obj


def _is_param_cls(cls):
    return any(c.__name__ == "Parameter" for c in cls.__mro__)


def _matrix_transpose(t, name):
    """x.mT / x.mH: a 0-d tensor passes through as an alias, as in torch; 1-d is refused."""
    if t.dim() == 1:
        raise RuntimeError("tensor.%s is only supported on matrices or batches of matrices. Got 1-D tensor." % name)
    return t.transpose(-2, -1) if t.dim() else t.view_as(t)
