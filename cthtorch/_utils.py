"""Small helpers the Python side shares (one copy each): dimension wrapping
with PyTorch's message, and the legacy dtype names PyTorch's messages use
("Float", "Long"). The tuple helpers (_pair, _single, ...) live where torch
has them, in cthtorch.nn.modules.utils."""

_LEGACY_NAMES = {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16",
                 "int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
                 "bool": "Bool"}


def _dtype_name(dtype):
    """PyTorch's legacy name of a dtype: 'Float' for torch.float32."""
    return _LEGACY_NAMES[str(dtype).replace("torch.", "")]


def _wrap_dim(dim, ndim):
    """dim in [-ndim, ndim) -> [0, ndim); a 0-d tensor takes dims -1 and 0."""
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError("Dimension out of range (expected to be in range of [%d, %d], but got %d)"
                         % (-n, n - 1, dim))
    return dim + n if dim < 0 else dim
