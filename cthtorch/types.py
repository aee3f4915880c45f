"""torch.types: the type aliases annotations in PyTorch programs use
(Number, Device, _size ...). cthtorch has no symbolic shapes, so the Sym*
names are the plain Python types they stand for at run time."""
import builtins
import os
from typing import IO, Any, Sequence, Union

from . import Size, Tensor, device as _device, dtype as _dtype, layout as _layout  # noqa: F401
from ._C import UntypedStorage as Storage  # noqa: F401

__all__ = ["Number", "Device", "FileLike", "Storage"]

_bool = builtins.bool
_complex = builtins.complex
_float = builtins.float
_int = builtins.int
_str = builtins.str
_bytes = builtins.bytes

SymInt = builtins.int
SymFloat = builtins.float
SymBool = builtins.bool
py_sym_types = (SymInt, SymFloat, SymBool)
PySymType = Union[SymInt, SymFloat, SymBool]

_TensorOrTensors = Union[Tensor, Sequence[Tensor]]
_TensorOrOptionalTensors = Union[Tensor, Sequence[Union[Tensor, None]]]
_size = Union[Size, list[int], tuple[int, ...]]
_symsize = Union[Size, Sequence[Union[int, SymInt]]]
_dispatchkey = Union[str, Any]

IntLikeType = Union[int, SymInt]
FloatLikeType = Union[float, SymFloat]
BoolLikeType = Union[bool, SymBool]

_Number = (builtins.int, builtins.float, builtins.bool)
Number = int | float | bool
Device = _device | str | int | None
FileLike = Union[str, os.PathLike[str], IO[bytes]]
