"""Factories over another library's memory: asarray (numpy arrays are
shared or copied through from_numpy, never computed on) and frombuffer
(any buffer, shared in C: src/python/TensorNew.c).
The other factories are C (src/python/Factories.c, RandomFactories.c,
declarations/factory.yaml)."""
import sys

import cthtorch
from cthtorch._utils import _dtype_name


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=False):
    if device is not None and str(device) != "cpu":
        raise NotImplementedError("cthtorch.asarray: only the cpu device is supported")
    if isinstance(obj, cthtorch.Tensor):
        r = obj if dtype is None else obj.to(dtype)
        if copy and r is obj:
            r = obj.clone()
        elif copy is False and r is not obj:
            raise ValueError("can't alias tensor with dtype '%s' into dtype '%s'."
                             % (_dtype_name(obj.dtype), _dtype_name(dtype)))
    elif _is_ndarray(obj):
        r = cthtorch.from_numpy(obj.copy() if copy else obj)
        if dtype is not None:
            r = r.to(dtype)
    else:
        r = cthtorch.tensor(obj, dtype=dtype)
    return r.requires_grad_(True) if requires_grad else r


def _is_ndarray(obj):
    # numpy is not imported for this: an ndarray exists only once numpy is loaded
    np = sys.modules.get("numpy")
    return np is not None and isinstance(obj, np.ndarray)


def frombuffer(buffer, *, dtype, count=-1, offset=0, requires_grad=False):
    r = cthtorch._C._VariableFunctions._frombuffer(buffer, dtype, count, offset)
    return r.requires_grad_(True) if requires_grad else r


def empty_permuted(size, physical_layout, *, dtype=None, layout=None, device=None, requires_grad=False,
                   pin_memory=False):
    """Uninitialized memory laid out in physical_layout's order (outermost first),
    seen in the logical order of size: a permuted view of a dense tensor."""
    size, physical_layout = tuple(size), tuple(physical_layout)
    if len(size) != len(physical_layout):
        raise RuntimeError("Number of dimensions in size does not match the length of the physical_layout; i.e. "
                           "len(size) = %d is not equal to len(physical_layout) = %d"
                           % (len(size), len(physical_layout)))
    n = len(size)
    for i, d in enumerate(physical_layout):
        if not 0 <= d < n:
            raise RuntimeError("Dimension out of range (expected to be between 0 and %d, but got %d at index %d).  "
                               "NB: negative dims not currently supported; file an issue if you want it."
                               % (n - 1, d, i))
    if sorted(physical_layout) != list(range(n)):
        raise RuntimeError("Duplicate dim not allowed")
    physical = cthtorch.empty([size[d] for d in physical_layout], dtype=dtype, layout=layout, device=device,
                              pin_memory=pin_memory)
    inverse = [0] * len(size)
    for position, d in enumerate(physical_layout):
        inverse[d] = position
    return physical.permute(inverse).requires_grad_(requires_grad)
