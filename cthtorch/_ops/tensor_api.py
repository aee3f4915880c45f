"""Smaller PyTorch entry points: the *_copy forms of view ops, real-dtype
complex helpers (angle/real/imag/adjoint), addr, nonzero_static, and
the global switches scripts set (deterministic algorithms, matmul precision,
warn-always, interop threads), which have nothing to change here."""
import math

import cthtorch
from cthtorch._ops.shape import _inplace_of
from cthtorch._ops.reduce import _is_float


# ---------------------------------------------------------------- *_copy: the view op, materialized
def _copy_of(view_name, multi=False):
    def op(input, *args, **kwargs):
        r = getattr(input, view_name)(*args, **kwargs)
        if multi:
            return [t.clone(memory_format=cthtorch.contiguous_format) for t in r]
        return r.clone(memory_format=cthtorch.contiguous_format)
    op.__name__ = view_name + "_copy"
    return op


COPY_OPS = {name + "_copy": _copy_of(name) for name in (
    "as_strided", "detach", "diagonal", "expand", "permute", "select", "squeeze", "t", "transpose", "unfold",
    "unsqueeze", "view")}
COPY_OPS.update({name + "_copy": _copy_of(name, multi=True) for name in ("split", "split_with_sizes", "unbind")})
COPY_OPS["alias_copy"] = lambda input: input.clone()
COPY_OPS["slice_copy"] = lambda input, dim=0, start=None, end=None, step=1: \
    input[(slice(None),) * (dim % max(input.dim(), 1)) + (slice(start, end, step),)].clone()


# ---------------------------------------------------------------- complex helpers on real dtypes
def real(input):
    # a view of the real parts (writing to it writes the tensor), as torch's
    return cthtorch.view_as_real(input).select(-1, 0) if input.is_complex() else input


def imag(input):
    if not input.is_complex():
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    return cthtorch.view_as_real(input).select(-1, 1)


def _set_imag(input, value):
    imag(input).copy_(value)


def adjoint(input):
    return input.transpose(-2, -1)


def fill(input, value):
    return cthtorch.full_like(input, value.item() if isinstance(value, cthtorch.Tensor) else value)


def detach_(input):
    return input.detach_()


# ---------------------------------------------------------------- addr (beta * input + alpha * outer)
def addr(input, vec1, vec2, *, beta=1, alpha=1, out=None):
    if vec1.dim() != 1 or vec2.dim() != 1:
        raise RuntimeError("addr: Expected 1-D argument vec1, but got %d-D" % vec1.dim() if vec1.dim() != 1 else
                           "addr: Expected 1-D argument vec2, but got %d-D" % vec2.dim())
    o = cthtorch.outer(vec1, vec2)
    r = (o if alpha == 1 else o * alpha) if beta == 0 else (input if beta == 1 else input * beta) + \
        (o if alpha == 1 else o * alpha)
    if out is not None:
        out.resize_(r.shape)
        return out.copy_(r)
    return r


addr_ = _inplace_of(addr, "addr_")


# ---------------------------------------------------------------- nonzero_static / strided allocation
def nonzero_static(input, *, size, fill_value=-1):
    nz = cthtorch.nonzero(input)
    n = nz.shape[0]
    if n >= size:
        return nz[:size].clone()
    pad = cthtorch.full((size - n, input.dim()), fill_value, dtype=cthtorch.int64)
    return cthtorch.cat([nz, pad], 0)


def new_empty_strided(self, size, stride, *, dtype=None, device=None, requires_grad=False, **kwargs):
    r = cthtorch.empty_strided(size, stride, dtype=self.dtype if dtype is None else dtype)
    return r.requires_grad_(True) if requires_grad else r


def dim_order(self, *, ambiguity_check=False):
    # dims from outermost to innermost stride (stable for equal strides)
    return tuple(sorted(range(self.dim()), key=lambda d: -self.stride(d)))


def is_set_to(self, tensor):
    return (self.untyped_storage().data_ptr() == tensor.untyped_storage().data_ptr() and
            self.storage_offset() == tensor.storage_offset() and tuple(self.shape) == tuple(tensor.shape) and
            self.stride() == tensor.stride())


def map2_(self, x, y, callable):
    # a Python callable per element, as torch's map2_
    a = self.detach().reshape(-1).tolist()
    b = cthtorch.broadcast_to(x, self.shape).detach().reshape(-1).tolist()
    c = cthtorch.broadcast_to(y, self.shape).detach().reshape(-1).tolist()
    vals = [callable(p, q, r) for p, q, r in zip(a, b, c)]
    with cthtorch.no_grad():
        self.copy_(cthtorch.tensor(vals, dtype=self.dtype).reshape(self.shape))
    return self


# ---------------------------------------------------------------- global switches
_state = {"deterministic": False, "warn_only": False, "matmul_precision": "highest", "warn_always": False,
          "interop_threads": 1}


def use_deterministic_algorithms(mode, *, warn_only=False):
    # the CPU kernels are deterministic already; cuDNN keeps to its deterministic algorithms (as torch)
    _state["deterministic"], _state["warn_only"] = bool(mode), bool(warn_only)
    from ..backends import cudnn
    cudnn._push()


def are_deterministic_algorithms_enabled():
    return _state["deterministic"]


def is_deterministic_algorithms_warn_only_enabled():
    return _state["warn_only"]


def set_deterministic_debug_mode(debug_mode):
    modes = {"default": 0, "warn": 1, "error": 2}
    if isinstance(debug_mode, str):
        if debug_mode not in modes:
            raise RuntimeError("invalid value of debug_mode, expected one of `default`, `warn`, `error`, but got %s"
                               % debug_mode)
        debug_mode = modes[debug_mode]
    if debug_mode not in (0, 1, 2):
        raise RuntimeError("invalid value of debug_mode, expected 0, 1, or 2, but got %s" % debug_mode)
    use_deterministic_algorithms(debug_mode != 0, warn_only=debug_mode == 1)


def get_deterministic_debug_mode():
    if not _state["deterministic"]:
        return 0
    return 1 if _state["warn_only"] else 2


def set_float32_matmul_precision(precision):
    # float32 matmul is always full precision here; the setting is kept for the getter and for
    # torch.backends.cuda.matmul.allow_tf32, which reads and writes this same state as torch's
    if not isinstance(precision, str):
        raise RuntimeError("set_float32_matmul_precision expects a str, but got %s" % type(precision).__name__)
    if precision not in ("highest", "high", "medium"):
        import warnings
        warnings.warn("%s is not one of 'highest', 'high', or 'medium'; the currentsetFloat32MatmulPrecision call "
                      "has no effect." % precision, UserWarning, stacklevel=2)
        return
    _state["matmul_precision"] = precision


def get_float32_matmul_precision():
    return _state["matmul_precision"]


def set_warn_always(b):
    _state["warn_always"] = bool(b)


def is_warn_always_enabled():
    return _state["warn_always"]


def set_num_interop_threads(num):
    if num <= 0:
        raise RuntimeError("Expected positive number of threads")
    _state["interop_threads"] = int(num)


def get_num_interop_threads():
    return _state["interop_threads"]


def set_flush_denormal(mode):
    return False     # not supported on this build, as PyTorch reports when the CPU lacks it


FUNCTIONS = ("real", "imag", "adjoint", "fill", "detach_", "addr", "nonzero_static",
             "use_deterministic_algorithms", "are_deterministic_algorithms_enabled",
             "is_deterministic_algorithms_warn_only_enabled", "set_deterministic_debug_mode",
             "get_deterministic_debug_mode", "set_float32_matmul_precision", "get_float32_matmul_precision",
             "set_warn_always", "is_warn_always_enabled", "set_num_interop_threads", "get_num_interop_threads",
             "set_flush_denormal")
METHODS = ("adjoint", "addr", "addr_", "nonzero_static", "new_empty_strided",
           "dim_order", "is_set_to", "map2_")
