"""nn.functional functions that torch's TorchScript compiles from their Python source rather than
mapping to one op (F.embedding: a padding_idx check and the max_norm renorm around aten::embedding).
cthtorch's own F functions are written for eager speed and torch_function dispatch, so the frontend
compiles these typed forms in their place; each runs the ops the eager function runs. They carry
nn.functional's module name, so graphs and archives call them `__torch__.torch.nn.functional.<name>`
as torch's do."""
from typing import List, Optional, Tuple

import cthtorch
from cthtorch import Tensor
from cthtorch.nn._functional.sparse import embedding_padding_idx

__all__ = ["embedding", "dropout1d", "dropout2d", "dropout3d", "_adaptive_max_pool1d", "_adaptive_max_pool2d", "_adaptive_max_pool3d",
           "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices", "adaptive_max_pool3d_with_indices"]

# torch's annotation for an int list that one int fills (`2` is [2, 2]); the frontend reads the N
BroadcastingList1 = BroadcastingList2 = BroadcastingList3 = List


def embedding(input: Tensor, weight: Tensor, padding_idx: Optional[int] = None, max_norm: Optional[float] = None,
              norm_type: float = 2.0, scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    idx = embedding_padding_idx(weight, padding_idx)
    if max_norm is not None:
        input = input.contiguous()
        cthtorch.embedding_renorm_(weight.detach(), input, max_norm, norm_type)
    return cthtorch.embedding(weight, input, idx, scale_grad_by_freq, sparse)


def _check_dropout_p(p: float):
    if p < 0.0 or p > 1.0:
        raise ValueError("dropout probability has to be between 0 and 1, but got {}".format(p))


def _channel_dropout(input: Tensor, p: float, training: bool, inplace: bool, batched: bool) -> Tensor:
    # feature dropout over (N, C, *spatial); unbatched input gains N = 1 for the op
    x = input if batched else input.unsqueeze(0)
    if inplace:
        cthtorch.feature_dropout_(x, p, training)
        return input
    r = cthtorch.feature_dropout(x, p, training)
    return r if batched else r.squeeze(0)


# F.dropoutNd: torch compiles these from source (a prim::CallFunction, not one builtin)
def dropout1d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    _check_dropout_p(p)
    if input.dim() != 2 and input.dim() != 3:
        raise RuntimeError("dropout1d: Expected 2D or 3D input, but received a {}D input. Note that dropout1d exists "
                           "to provide channel-wise dropout on inputs with 1 spatial dimension, a channel dimension, "
                           "and an optional batch dimension (i.e. 2D or 3D inputs).".format(input.dim()))
    return _channel_dropout(input, p, training, inplace, input.dim() == 3)


def dropout2d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    _check_dropout_p(p)
    return _channel_dropout(input, p, training, inplace, True)


def dropout3d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    _check_dropout_p(p)
    return _channel_dropout(input, p, training, inplace, input.dim() == 5)


# F.adaptive_max_poolNd: return_indices (a constant) picks one of two functions, as torch's boolean_dispatch does;
# both call the aten op, which gives (values, indices)
def _adaptive_max_pool1d(input: Tensor, output_size: BroadcastingList1[int], return_indices: bool = False) -> Tensor:
    return cthtorch.ops.aten.adaptive_max_pool1d(input, output_size)[0]


def adaptive_max_pool1d_with_indices(input: Tensor, output_size: BroadcastingList1[int],
                                     return_indices: bool = False) -> Tuple[Tensor, Tensor]:
    return cthtorch.ops.aten.adaptive_max_pool1d(input, output_size)


def _adaptive_max_pool2d(input: Tensor, output_size: BroadcastingList2[int], return_indices: bool = False) -> Tensor:
    return cthtorch.ops.aten.adaptive_max_pool2d(input, output_size)[0]


def adaptive_max_pool2d_with_indices(input: Tensor, output_size: BroadcastingList2[int],
                                     return_indices: bool = False) -> Tuple[Tensor, Tensor]:
    return cthtorch.ops.aten.adaptive_max_pool2d(input, output_size)


def _adaptive_max_pool3d(input: Tensor, output_size: BroadcastingList3[int], return_indices: bool = False) -> Tensor:
    return cthtorch.ops.aten.adaptive_max_pool3d(input, output_size)[0]


def adaptive_max_pool3d_with_indices(input: Tensor, output_size: BroadcastingList3[int],
                                     return_indices: bool = False) -> Tuple[Tensor, Tensor]:
    return cthtorch.ops.aten.adaptive_max_pool3d(input, output_size)


# F.interpolate: torch declares four overloads (size an int or a list, scale_factor a float or a list) and
# compiles the one a call's argument types pick, each a function named interpolate (the later ones under
# ___torch_mangle_N, as torch names a second function of one name); each calls the aten builtin of its types
def _interpolate_size_int_scale_list(input: Tensor, size: Optional[int] = None,
                                     scale_factor: Optional[List[float]] = None, mode: str = "nearest",
                                     align_corners: Optional[bool] = None,
                                     recompute_scale_factor: Optional[bool] = None, antialias: bool = False) -> Tensor:
    return cthtorch.ops.aten.__interpolate(input, size, scale_factor, mode, align_corners, recompute_scale_factor,
                                           antialias)


def _interpolate_size_list_scale_list(input: Tensor, size: Optional[List[int]] = None,
                                      scale_factor: Optional[List[float]] = None, mode: str = "nearest",
                                      align_corners: Optional[bool] = None,
                                      recompute_scale_factor: Optional[bool] = None, antialias: bool = False) -> Tensor:
    return cthtorch.ops.aten.__interpolate(input, size, scale_factor, mode, align_corners, recompute_scale_factor,
                                           antialias)


def _interpolate_size_int_scale_float(input: Tensor, size: Optional[int] = None, scale_factor: Optional[float] = None,
                                      mode: str = "nearest", align_corners: Optional[bool] = None,
                                      recompute_scale_factor: Optional[bool] = None, antialias: bool = False) -> Tensor:
    return cthtorch.ops.aten.__interpolate(input, size, scale_factor, mode, align_corners, recompute_scale_factor,
                                           antialias)


def _interpolate_size_list_scale_float(input: Tensor, size: Optional[List[int]] = None,
                                       scale_factor: Optional[float] = None, mode: str = "nearest",
                                       align_corners: Optional[bool] = None,
                                       recompute_scale_factor: Optional[bool] = None, antialias: bool = False) -> Tensor:
    return cthtorch.ops.aten.__interpolate(input, size, scale_factor, mode, align_corners, recompute_scale_factor,
                                           antialias)


# in torch's declaration order: ((size is a list, scale_factor is a list), function)
INTERPOLATE_OVERLOADS = [((False, True), _interpolate_size_int_scale_list),
                         ((True, True), _interpolate_size_list_scale_list),
                         ((False, False), _interpolate_size_int_scale_float),
                         ((True, False), _interpolate_size_list_scale_float)]
for _i, (_, _fn) in enumerate(INTERPOLATE_OVERLOADS):
    _fn.__name__ = _fn.__qualname__ = "interpolate"
    _fn.__module__ = "cthtorch.nn.functional" + ("" if _i == 0 else ".___torch_mangle_%d" % (_i - 1))

# nn.functional's name -> (its function when return_indices is False, when it is True)
BOOLEAN_DISPATCH = {"adaptive_max_pool%dd" % n: (globals()["_adaptive_max_pool%dd" % n],
                                                 globals()["adaptive_max_pool%dd_with_indices" % n])
                    for n in (1, 2, 3)}

for _fn in (embedding, dropout1d, dropout2d, dropout3d, _adaptive_max_pool1d, _adaptive_max_pool2d, _adaptive_max_pool3d,
            adaptive_max_pool1d_with_indices, adaptive_max_pool2d_with_indices, adaptive_max_pool3d_with_indices):
    _fn.__module__ = "cthtorch.nn.functional"
