"""embedding_bag: torch.nn.functional's argument handling (2-D input as
fixed-length bags, the mode names, max_norm) over the C kernel
(torch.embedding_bag, src/ATen/ATEmbedding.c)."""
import warnings
from typing import Optional

import cthtorch
from cthtorch.overrides import _handle_with_locals, has_torch_function_variadic as _has_torch_function_variadic

_BAG_MODES = {"sum": 0, "mean": 1, "max": 2}


def embedding_padding_idx(weight: cthtorch.Tensor, padding_idx: Optional[int]) -> int:
    """F.embedding's padding_idx checked against weight's rows and made non-negative (-1: none); typed,
    so the F.embedding that TorchScript compiles (jit/_functional_source.py) calls it too."""
    if padding_idx is not None:
        if padding_idx > 0:
            assert padding_idx < weight.size(0), "Padding_idx must be within num_embeddings"
        elif padding_idx < 0:
            assert padding_idx >= -weight.size(0), "Padding_idx must be within num_embeddings"
            padding_idx = weight.size(0) + padding_idx
        return padding_idx
    return -1


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False, mode="mean",
                  sparse=False, per_sample_weights=None, include_last_offset=False, padding_idx=None):
    if _has_torch_function_variadic(input, weight, offsets, per_sample_weights):
        return _handle_with_locals(embedding_bag, locals())
    from cthtorch.nn import functional as F
    if weight.dtype == cthtorch.int64 and input.is_floating_point():
        warnings.warn("Argument order of nn.functional.embedding_bag was changed. Usage `embedding_bag(weight, "
                      "input, ...)` is deprecated, and should now be `embedding_bag(input, weight, ...)`.",
                      stacklevel=2)
        input, weight = weight, input
    if per_sample_weights is not None and input.shape != per_sample_weights.shape:
        raise ValueError("embedding_bag: If per_sample_weights (%s) is not None, then it must have the same shape "
                         "as the input (%s)" % (per_sample_weights.shape, input.shape))
    if weight.dim() != 2:
        raise ValueError("weight has to be a 2D Tensor, but got Tensor of dimension %d" % weight.dim())
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated is a mini-batch of "
                             "fixed length sequences. However, found offsets of type %s" % type(offsets))
        # each row is one bag
        offsets = cthtorch.arange(0, input.numel(), input.shape[1], dtype=input.dtype, device=input.device)
        include_last_offset = False
        input = input.reshape(-1)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
    elif input.dim() == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.dim() != 1:
            raise ValueError("offsets has to be a 1D Tensor")
    else:
        raise ValueError("input has to be 1D or 2D Tensor, but got Tensor of dimension %d" % input.dim())
    if mode not in _BAG_MODES:
        raise ValueError("mode has to be one of sum, mean or max")
    if mode == "max" and scale_grad_by_freq:
        raise ValueError("max mode does not support scaling the gradient by the frequency")
    if mode == "max" and sparse:
        raise ValueError("max mode does not support sparse weights")
    if max_norm is not None:
        F.embedding(input, weight, max_norm=max_norm, norm_type=norm_type)   # renormalises rows in place
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError("embedding_bag: per_sample_weights was not None. per_sample_weights is only "
                                  "supported for mode='sum' (got mode='%s'). Please open a feature request on GitHub."
                                  % mode)
    if sparse and weight.requires_grad and cthtorch.is_grad_enabled():
        return embedding_bag_sparse_grad(weight, input, offsets, per_sample_weights, _BAG_MODES[mode],
                                         -1 if padding_idx is None else padding_idx % weight.shape[0],
                                         include_last_offset, scale_grad_by_freq)[0]
    return cthtorch.embedding_bag(weight, input, offsets, scale_grad_by_freq, _BAG_MODES[mode], sparse,
                                  per_sample_weights, include_last_offset, padding_idx)[0]


class _EmbeddingSparseGrad(cthtorch.autograd.Function):
    """embedding(sparse=True): the C lookup forward; the backward gives the
    weight a sparse COO gradient as torch's embedding_sparse_backward does:
    one entry per looked-up index (padding_idx's left out), uncoalesced,
    its values the incoming gradient's rows."""

    @staticmethod
    def forward(ctx, weight, indices, padding_idx, scale_grad_by_freq):
        ctx.save_for_backward(indices)
        ctx.weight_shape, ctx.padding_idx, ctx.scale = weight.shape, padding_idx, scale_grad_by_freq
        return cthtorch.embedding(weight, indices, padding_idx, scale_grad_by_freq, False)

    @staticmethod
    def backward(ctx, grad):
        (indices,) = ctx.saved_tensors
        return _EmbeddingSparseGrad.grad_of(indices, grad, ctx.weight_shape, ctx.padding_idx, ctx.scale), None, None, None

    @staticmethod
    def grad_of(indices, grad, weight_shape, padding_idx, scale_grad_by_freq):
        """torch's embedding_sparse_backward: one COO entry per index."""
        if scale_grad_by_freq:
            raise RuntimeError("embedding_backward: scale_grad_by_freq not supported with sparse gradients")
        from cthtorch._sparse_tensor import SparseTensor
        flat, rows = indices.reshape(-1), grad.reshape(-1, grad.shape[-1])
        if padding_idx != -1:
            keep = flat != padding_idx
            flat, rows = flat[keep], rows[keep]
        return SparseTensor(flat.to(cthtorch.int64).reshape(1, -1), rows, weight_shape)


class _EmbeddingBagSparseGrad(cthtorch.autograd.Function):
    """embedding_bag(sparse=True): the C forward; the weight's gradient is
    torch's _embedding_bag_sparse_backward: each index's bag gradient (over
    the bag size for mean, times its per-sample weight for sum) as one COO
    entry, padding_idx's left out."""

    @staticmethod
    def forward(ctx, weight, indices, offsets, per_sample_weights, mode, padding_idx, include_last_offset, scale):
        outs = cthtorch.embedding_bag(weight, indices, offsets, scale, mode, True, per_sample_weights,
                                      include_last_offset, None if padding_idx == -1 else padding_idx)
        ctx.save_for_backward(weight, indices, offsets, per_sample_weights)
        ctx.mode, ctx.padding_idx, ctx.last, ctx.scale = mode, padding_idx, include_last_offset, scale
        ctx.mark_non_differentiable(*outs[1:])   # offset2bag, bag_size, max_indices
        return tuple(outs)

    @staticmethod
    def backward(ctx, grad, *_):
        weight, indices, offsets, psw = ctx.saved_tensors
        starts = offsets[:-1] if ctx.last else offsets
        n = indices.shape[0]
        bag = cthtorch.searchsorted(starts, cthtorch.arange(n, dtype=starts.dtype), right=True) - 1
        rows = grad.index_select(0, bag)
        keep = indices != ctx.padding_idx
        if ctx.mode == 1:   # mean: over the bag's non-padding count
            size = cthtorch.zeros(grad.shape[0], dtype=grad.dtype).index_add_(0, bag[keep], grad.new_ones(n)[keep])
            rows = rows * (1 / size).unsqueeze(1).index_select(0, bag)
        gpsw = None
        if psw is not None:
            if ctx.needs_input_grad[3]:
                gpsw = (rows * weight.index_select(0, indices)).sum(1).masked_fill(~keep, 0)
            rows = rows * psw.unsqueeze(1)
        gw = None
        if ctx.needs_input_grad[0]:
            gw = _EmbeddingSparseGrad.grad_of(indices, rows, weight.shape, ctx.padding_idx, ctx.scale)
        return gw, None, None, gpsw, None, None, None, None


def embedding_sparse_grad(weight, indices, padding_idx, scale_grad_by_freq):
    """torch.embedding(..., sparse=True) where weight's gradient is recorded."""
    return _EmbeddingSparseGrad.apply(weight, indices, padding_idx, scale_grad_by_freq)


def embedding_bag_sparse_grad(weight, indices, offsets, per_sample_weights, mode, padding_idx, include_last_offset,
                              scale_grad_by_freq):
    """torch.embedding_bag(..., sparse=True)'s four outputs where weight's
    gradient is recorded (padding_idx: -1 for none, else in [0, rows))."""
    return _EmbeddingBagSparseGrad.apply(weight, indices, offsets, per_sample_weights, mode, padding_idx,
                                         include_last_offset, scale_grad_by_freq)


def _name_backward():
    from cthtorch._sparse_tensor import name_node
    name_node(_EmbeddingSparseGrad, "EmbeddingBackward0")
    name_node(_EmbeddingBagSparseGrad, "EmbeddingBagBackward0")


_name_backward()
