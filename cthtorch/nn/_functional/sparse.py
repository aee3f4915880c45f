"""embedding_bag as a weighted matmul over the gathered rows."""
import cthtorch


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False, mode="mean",
                  sparse=False, per_sample_weights=None, include_last_offset=False, padding_idx=None):
    from cthtorch.nn import functional as F
    if weight.dtype == cthtorch.int64 and input.is_floating_point():
        input, weight = weight, input    # torch accepts the old (weight, input) order with a warning
    if per_sample_weights is not None and input.shape != per_sample_weights.shape:
        raise ValueError("embedding_bag: If per_sample_weights (%s) is not None, then it must have the same shape "
                         "as the input (%s)" % (per_sample_weights.shape, input.shape))
    if weight.dim() != 2:
        raise ValueError("weight has to be a 2D Tensor, but got Tensor of dimension %d" % weight.dim())
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated is a mini-batch of "
                             "fixed length sequences. However, found offsets of type %s" % type(offsets).__name__)
        starts = list(range(0, input.numel(), input.shape[1]))
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
        input = input.reshape(-1)
        if include_last_offset:
            raise NotImplementedError("include_last_offset with 2D input is not supported by cthtorch")
    elif input.dim() == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.dim() != 1:
            raise ValueError("offsets has to be a 1D Tensor")
        starts = [int(v) for v in offsets.tolist()]
        if include_last_offset:
            starts = starts[:-1]
    else:
        raise ValueError("input has to be 1D or 2D Tensor, but got Tensor of dimension %d" % input.dim())
    if mode not in ("sum", "mean", "max"):
        raise ValueError("mode has to be one of sum, mean or max")
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError("embedding_bag: per_sample_weights was not None. per_sample_weights is only "
                                  "supported for mode='sum' (got mode='%s'). Please open a feature request on GitHub."
                                  % mode)
    if padding_idx is not None and padding_idx < 0:
        padding_idx += weight.shape[0]
    if max_norm is not None:
        F.embedding(input, weight, max_norm=max_norm, norm_type=norm_type)   # renormalises rows in place
    L, B = input.numel(), len(starts)
    ends = starts[1:] + [L]
    rows = weight.index_select(0, input.reshape(-1))
    if per_sample_weights is not None:
        rows = rows * per_sample_weights.reshape(-1, 1)
    keep = [True] * L if padding_idx is None else (input.reshape(-1) != padding_idx).tolist()
    if mode == "max":
        outs = []
        for s, e in zip(starts, ends):
            idx = [t for t in range(s, e) if keep[t]]
            outs.append(rows.index_select(0, cthtorch.tensor(idx)).amax(0) if idx else weight.new_zeros(weight.shape[1]))
        return cthtorch.stack(outs) if outs else weight.new_zeros(0, weight.shape[1])
    # sum / mean: one (bags x L) matrix of 0/1 (or 1/count) times the gathered rows
    m = [[0.0] * L for _ in range(B)]
    for b, (s, e) in enumerate(zip(starts, ends)):
        n = sum(keep[s:e])
        for t in range(s, e):
            if keep[t]:
                m[b][t] = 1.0 / n if mode == "mean" else 1.0
    return cthtorch.tensor(m, dtype=weight.dtype).reshape(B, L).matmul(rows)
