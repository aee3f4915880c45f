"""embedding_bag: torch.nn.functional's argument handling (2-D input as
fixed-length bags, the mode names, max_norm) over the C kernel
(torch.embedding_bag, src/ATen/ATEmbedding.c)."""
import warnings

import cthtorch
from cthtorch.overrides import _handle_with_locals, has_torch_function_variadic as _has_torch_function_variadic

_BAG_MODES = {"sum": 0, "mean": 1, "max": 2}


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
    # sparse=True still gives weight a dense gradient (no sparse embedding gradients yet)
    return cthtorch.embedding_bag(weight, input, offsets, scale_grad_by_freq, _BAG_MODES[mode], sparse,
                                  per_sample_weights, include_last_offset, padding_idx)[0]
