"""Argument checks shared by the linalg ops, with PyTorch's messages."""
import cthtorch
from cthtorch._utils import _dtype_name


def floating(A, name):
    if A.is_complex():   # torch's message would read "Expected a floating point or complex tensor ... Got ComplexFloat"
        raise NotImplementedError("cthtorch: %s is not implemented for complex tensors (%s)"
                                  % (name, _dtype_name(A.dtype)))
    if not A.dtype.is_floating_point:
        raise RuntimeError("%s: Expected a floating point or complex tensor as input. Got %s"
                           % (name, _dtype_name(A.dtype)))


def lapack_dtype(A, name):
    """LAPACK runs in float32/float64; half types are not supported there."""
    floating(A, name)
    if A.dtype not in (cthtorch.float32, cthtorch.float64):
        raise NotImplementedError("\"%s_cpu\" not implemented for '%s'" % (name.replace(".", "_"),
                                                                          _dtype_name(A.dtype)))


def matrix(A, name):
    if A.dim() < 2:
        raise RuntimeError("%s: The input tensor A must have at least 2 dimensions." % name)


def square(A, name):
    matrix(A, name)
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError("%s: A must be batches of square matrices, but they are %d by %d matrices"
                           % (name, A.shape[-2], A.shape[-1]))


def square_float(A, name):
    square(A, name)
    lapack_dtype(A, name)


class LinAlgError(RuntimeError):
    """torch._C._LinAlgError: a matrix is singular or not positive-definite."""


LinAlgError.__name__ = LinAlgError.__qualname__ = "_LinAlgError"
LinAlgError.__module__ = "torch._C"


def raise_info(info, message):
    """Raises LinAlgError for the first nonzero LAPACK info; message(code)
    gives the text, prefixed with the batch element as PyTorch does."""
    if info.numel() == 0 or not bool(info.any()):
        return
    flat = info.reshape(-1)
    b = int(flat.nonzero()[0, 0])
    text = message(int(flat[b]))
    if info.dim() > 0:
        text = text.replace(": ", ": (Batch element %d): " % b, 1)
    raise LinAlgError(text)


def broadcast_batch(A, B, name):
    """A (..., n, n) and B (..., n, k) expanded to one batch shape."""
    batch = cthtorch.broadcast_shapes(A.shape[:-2], B.shape[:-2])
    return A.expand(batch + A.shape[-2:]), B.expand(batch + B.shape[-2:])
