"""cthtorch.functional: the helpers PyTorch keeps in torch/functional.py.

Each is composed from core tensor ops (view/expand/narrow/cat/mm...), so
autograd flows through them with no backward code of their own. Errors use
PyTorch's wording.
"""
import warnings
from collections.abc import Sequence

import cthtorch
from cthtorch._utils import _int_list, _wrap_dim

__all__ = [
    "atleast_1d", "atleast_2d", "atleast_3d", "block_diag", "broadcast_shapes",
    "cartesian_prod", "chain_matmul", "meshgrid", "split", "tensordot", "unique", "unique_consecutive",
    "unravel_index",
]


# ---------------------------------------------------------------- shapes

def broadcast_shapes(*shapes):
    """The shape all of `shapes` broadcast to, as a Size; no tensors are made.

    Each shape is an int, a sequence of ints, or None (ignored).
    """
    dims = []
    for s in shapes:
        if s is None:
            continue
        if isinstance(s, int):
            s = (s,)
        elif not isinstance(s, Sequence):
            raise RuntimeError("Input shapes should be of type ints, a tuple of ints, or a list of ints, got %s" % (s,))
        dims.append(s)
    if not dims:
        return cthtorch.Size([])
    common = [1] * max(len(s) for s in dims)
    for arg, s in enumerate(dims):
        # right-aligned: position -1 is the last dimension of every shape
        for pos in range(-1, -1 - len(s), -1):
            if s[pos] < 0:
                raise ValueError("Attempting to broadcast a dimension with negative length!")
            if common[pos] == 1:
                common[pos] = s[pos]
            elif s[pos] != 1 and s[pos] != common[pos]:
                raise RuntimeError(
                    "Attempting to broadcast a dimension of length %s at %d! Mismatching argument at index %d "
                    "had %s; but expected shape should be broadcastable to %s" % (s[pos], pos, arg, s, common))
    return cthtorch.Size(common)


def _tensor_list(fname, tensors):
    # f(a, b) and f([a, b]) both mean the list [a, b]
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tensors[0]
    for i, t in enumerate(tensors):
        if not isinstance(t, cthtorch.Tensor):
            raise TypeError("expected Tensor as element %d in argument 0, but got %s" % (i, type(t).__name__))
    return list(tensors)


def meshgrid(*tensors, indexing=None):
    """Coordinate grids from 0-d/1-d tensors; every output is an expanded view.

    indexing='ij' gives shape (len0, len1, ...); 'xy' swaps the first two
    dimensions (len1, len0, ...), as numpy.meshgrid's default does.
    """
    ts = _tensor_list("meshgrid", tensors)
    if indexing is None:
        warnings.warn("torch.meshgrid: in an upcoming release, it will be required to pass the indexing argument.",
                      UserWarning, stacklevel=2)
        indexing = "ij"
    if not ts:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    for t in ts[1:]:
        if t.dtype != ts[0].dtype:
            raise RuntimeError("meshgrid expects all tensors to have the same dtype")
        if t.device != ts[0].device:
            raise RuntimeError("meshgrid expects all tensors to have the same device")
    for t in ts:
        if t.dim() > 1:
            raise RuntimeError("torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: %r" % (t,))
    if indexing not in ("ij", "xy"):
        raise RuntimeError('torch.meshgrid: indexing must be one of "xy" or "ij", but received: %s' % (indexing,))
    swap = indexing == "xy" and len(ts) >= 2
    if swap:
        # 'xy' is 'ij' on the inputs with the first two exchanged, outputs exchanged back
        ts[0], ts[1] = ts[1], ts[0]
    shape = [t.numel() for t in ts]
    grids = []
    for i, t in enumerate(ts):
        view_shape = [1] * len(ts)
        view_shape[i] = shape[i]
        grids.append(t.view(view_shape).expand(shape))
    if swap:
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)


def split(tensor, split_size_or_sections, dim=0):
    """Views of `tensor` along `dim`: chunks of split_size (the last may be
    smaller), or one chunk per entry of a list of sizes."""
    if isinstance(split_size_or_sections, cthtorch.Tensor):
        # a 0-d tensor stands for its value; other tensors are rejected below
        try:
            split_size_or_sections = int(split_size_or_sections)
        except (ValueError, RuntimeError):
            pass
    # the C ops check sizes and dim with torch's messages
    if isinstance(split_size_or_sections, int) and not isinstance(split_size_or_sections, bool):
        if not -2**63 <= split_size_or_sections < 2**63:
            raise ValueError("Overflow when unpacking long long")
        return cthtorch._C._internal._split_views(tensor, split_size_or_sections, dim)
    sizes = _int_list("split_with_sizes", "split_sizes", 2, split_size_or_sections)
    return cthtorch._C._internal._split_with_sizes_views(tensor, sizes, dim)


# ---------------------------------------------------------------- at-least-N-d

def _atleast(tensors, fix):
    # one tensor in, one out; several (or one list/tuple) in, a tuple out
    if len(tensors) == 1 and isinstance(tensors[0], cthtorch.Tensor):
        return fix(tensors[0])
    return tuple(fix(t) for t in _tensor_list("atleast", tensors))


def atleast_1d(*tensors):
    """0-d tensors become shape (1,); others are returned as they are."""
    return _atleast(tensors, lambda t: t.reshape(1) if t.dim() == 0 else t)


def atleast_2d(*tensors):
    """0-d -> (1, 1); 1-d (n,) -> (1, n); others unchanged."""
    def fix(t):
        if t.dim() == 0:
            return t.reshape(1, 1)
        return t.unsqueeze(0) if t.dim() == 1 else t
    return _atleast(tensors, fix)


def atleast_3d(*tensors):
    """0-d -> (1, 1, 1); (n,) -> (1, n, 1); (m, n) -> (m, n, 1); others unchanged."""
    def fix(t):
        if t.dim() == 0:
            return t.reshape(1, 1, 1)
        if t.dim() == 1:
            return t.unsqueeze(0).unsqueeze(-1)
        return t.unsqueeze(-1) if t.dim() == 2 else t
    return _atleast(tensors, fix)


# ---------------------------------------------------------------- combinations

def cartesian_prod(*tensors):
    """All tuples of one element from each 1-d tensor, one per row."""
    ts = _tensor_list("cartesian_prod", tensors)
    for t in ts:
        if t.dim() != 1:
            raise RuntimeError("Expect a 1D vector, but got shape %s" % (list(t.shape),))
    if len(ts) == 1:
        return ts[0]
    grids = meshgrid(ts, indexing="ij")
    return cthtorch.stack([g.flatten() for g in grids], 1)


def block_diag(*tensors):
    """A block-diagonal matrix of the inputs (0-d -> 1x1, 1-d -> one row);
    the result dtype is the inputs' promoted type."""
    blocks = []
    for i, t in enumerate(tensors):
        if t.dim() > 2:
            raise RuntimeError("torch.block_diag: Input tensors must have 2 or fewer dimensions. "
                               "Input %d has %d dimensions" % (i, t.dim()))
        blocks.append(t.reshape(1, 1) if t.dim() == 0 else t.reshape(1, -1) if t.dim() == 1 else t)
    if not blocks:
        return cthtorch.zeros(1, 0)
    dtype = blocks[0].dtype
    for b in blocks[1:]:
        dtype = cthtorch.promote_types(dtype, b.dtype)
    cols = sum(b.size(1) for b in blocks)
    rows, left = [], 0
    # each block becomes a full-width band: zeros | block | zeros, bands stacked
    for b in blocks:
        h, w = b.size(0), b.size(1)
        band = [cthtorch.zeros(h, left, dtype=dtype, device=b.device), b.to(dtype),
                cthtorch.zeros(h, cols - left - w, dtype=dtype, device=b.device)]
        rows.append(cthtorch.cat(band, 1))
        left += w
    return cthtorch.cat(rows, 0)


def unravel_index(indices, shape):
    """Coordinates (one int64 tensor per dimension of `shape`) of flat `indices`.

    Indices outside the shape wrap around (floor division and modulo), as in PyTorch.
    """
    dtype = getattr(indices, "dtype", None)
    if dtype is None:
        raise AttributeError("'%s' object has no attribute 'is_complex'" % type(indices).__name__)
    if dtype.is_floating_point or str(dtype) == "torch.bool":
        raise TypeError("expected 'indices' to be integer dtype, but got %s" % (dtype,))
    if isinstance(shape, int):
        shape = (shape,)
    elif not isinstance(shape, Sequence):
        raise TypeError("expected 'shape' to be int or sequence of ints, but got %s" % (type(shape),))
    for d in shape:
        if not isinstance(d, int):
            raise TypeError("expected 'shape' sequence to only contain ints, but got %s" % (type(d),))
    shape = tuple(shape)
    if any(d < 0 for d in shape):
        raise ValueError("'shape' cannot have negative values, but got %s" % (shape,))
    # strides of a C-ordered array of `shape`; coordinate k = index // stride[k] % shape[k]
    strides, acc = [], 1
    for d in reversed(shape[1:] + (1,)):
        acc *= d
        strides.append(acc)
    strides.reverse()
    if 0 in shape and indices.numel() > 0:
        raise RuntimeError("ZeroDivisionError")
    if not shape:
        return ()
    idx = indices.to(cthtorch.int64).unsqueeze(-1)
    coords = idx.floor_divide(cthtorch.tensor(strides, dtype=cthtorch.int64)) % cthtorch.tensor(shape, dtype=cthtorch.int64)
    return coords.unbind(-1)


# ---------------------------------------------------------------- products

def tensordot(a, b, dims=2, out=None):
    """Sum of products over the given dimensions of a and b.

    dims: an int n (the last n of a with the first n of b), or two lists
    of dimensions [dims_a, dims_b], or a tensor holding either.
    """
    if isinstance(dims, cthtorch.Tensor):
        dims = dims.item() if dims.numel() == 1 else dims.tolist()
    if isinstance(dims, int) and not isinstance(dims, bool):
        if dims < 0:
            raise RuntimeError("tensordot expects dims >= 0, but got dims=%d" % dims)
        if dims > min(a.dim(), b.dim()):
            raise RuntimeError("tensordot expects dims < ndim_a or ndim_b, but got dims=%d" % dims)
        dims_a, dims_b = list(range(-dims, 0)), list(range(dims))
    elif isinstance(dims, (list, tuple)):
        dims_a, dims_b = dims
        dims_a = [dims_a] if isinstance(dims_a, int) else list(dims_a)
        dims_b = [dims_b] if isinstance(dims_b, int) else list(dims_b)
    else:
        raise RuntimeError("tensordot expects dims to be int or tuple[list[int], list[int]] or list[list[int]] "
                           "containing two lists, but got dims=%s" % (dims,))
    if len(dims_a) != len(dims_b):
        raise RuntimeError("both dimension lists should have same length")
    if a.dtype != b.dtype:
        raise RuntimeError("both inputs should have same dtype")
    ca, cb = [], []
    for ra, rb in zip(dims_a, dims_b):
        da, db = _wrap_dim(ra, a.dim()), _wrap_dim(rb, b.dim())
        if a.size(da) != b.size(db):
            raise RuntimeError("contracted dimensions need to match, but first has size %d in dim %d and second "
                               "has size %d in dim %d" % (a.size(da), ra, b.size(db), rb))
        for d, seen in ((da, ca), (db, cb)):
            if d in seen:
                raise RuntimeError("dim %d appears multiple times in the list of dims" % d)
            seen.append(d)
    free_a = [d for d in range(a.dim()) if d not in ca]
    free_b = [d for d in range(b.dim()) if d not in cb]
    k = n_a = n_b = 1
    for d in ca:
        k *= a.size(d)
    for d in free_a:
        n_a *= a.size(d)
    for d in free_b:
        n_b *= b.size(d)
    # contraction as one matrix product: (free_a, k) @ (k, free_b)
    left = a.permute(free_a + ca).reshape(n_a, k)
    right = b.permute(cb + free_b).reshape(k, n_b)
    result = left.mm(right).reshape([a.size(d) for d in free_a] + [b.size(d) for d in free_b])
    if out is not None:
        out.resize_(result.shape).copy_(result)
        return out
    return result


def chain_matmul(*matrices, out=None):
    """Deprecated in PyTorch in favour of linalg.multi_dot: the product of 2-d matrices, left to right."""
    warnings.warn("torch.chain_matmul is deprecated and will be removed in a future PyTorch release. "
                  "Use torch.linalg.multi_dot instead, which accepts a list of two or more tensors rather than "
                  "multiple parameters.", UserWarning, stacklevel=2)
    if not matrices:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    for m in matrices:
        if m.dim() != 2:
            raise RuntimeError("Tensor dimension is %d, expected 2 instead." % m.dim())
    for i in range(len(matrices) - 1):
        if matrices[i].size(1) != matrices[i + 1].size(0):
            raise RuntimeError("multi_dot(): tensors %d and %d with shapes %s and %s cannot be multiplied"
                               % (i, i + 1, list(matrices[i].shape), list(matrices[i + 1].shape)))
    result = matrices[0].clone() if len(matrices) == 1 else matrices[0]
    for m in matrices[1:]:
        result = result.mm(m)
    if out is not None:
        out.resize_(result.shape).copy_(result)
        return out
    return result


# ---------------------------------------------------------------- unique
# As torch/functional.py: the C ops (src/ATen/ATSort.c) always make values,
# inverse and counts; these pick the ones asked for.

def _pick(output, inverse, counts, return_inverse, return_counts):
    if return_inverse and return_counts:
        return output, inverse, counts
    if return_inverse:
        return output, inverse
    if return_counts:
        return output, counts
    return output


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    if dim is not None:
        output, inverse, counts = cthtorch._C._VariableFunctions.unique_dim(input, dim, sorted, return_inverse,
                                                                             return_counts)
    else:
        output, inverse, counts = cthtorch._unique2(input, sorted, return_inverse, return_counts)
    return _pick(output, inverse, counts, return_inverse, return_counts)


def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    output, inverse, counts = cthtorch._C._VariableFunctions.unique_consecutive(input, return_inverse, return_counts,
                                                                                dim)
    return _pick(output, inverse, counts, return_inverse, return_counts)
