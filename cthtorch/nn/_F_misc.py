"""nn.functional pieces built from existing differentiable ops: vector norms and
distances, rms_norm, local_response_norm, embedding_bag, channel_shuffle and the
in-place activation spellings (elu_, selu_, ...)."""
import cthtorch
from cthtorch import _C

_nn = _C._nn


def _vector_norm(x, p=2.0, dim=-1, keepdim=False):
    # linalg.vector_norm: torch's subgradients (0 at a zero vector, ties share an inf-norm
    # gradient), and a backward built from differentiable ops so double backward works
    return cthtorch.linalg.vector_norm(x, float(p), dim, keepdim)


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    # each side divided by its own (clamped) norm first, as torch does: keeps results in [-1, 1];
    # the clamp is invisible to autograd
    x1, x2 = cthtorch.broadcast_tensors(x1, x2)
    n1 = _vector_norm(x1, 2, dim, True)
    n2 = _vector_norm(x2, 2, dim, True)
    with cthtorch.no_grad():
        c1 = n1.clamp_min(eps) - n1
        c2 = n2.clamp_min(eps) - n2
    return ((x1 / (n1 + c1)) * (x2 / (n2 + c2))).sum(dim)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    d = max(x1.dim(), x2.dim())
    if d == 0:
        return _vector_norm((x1 - x2 + eps).reshape(1), p, 0, keepdim).reshape(()) if not keepdim else \
            (x1 - x2 + eps).abs()
    return _vector_norm(x1 - x2 + eps, p, d - 1, keepdim)


def pdist(input, p=2):
    if input.dim() != 2:
        raise RuntimeError("pdist only supports 2D tensors, got: %dD" % input.dim())
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    n = input.shape[0]
    if n < 2:
        return input.new_zeros(0)
    i = [a for a in range(n) for _ in range(a + 1, n)]
    j = [b for a in range(n) for b in range(a + 1, n)]
    diff = input.index_select(0, cthtorch.tensor(i)) - input.index_select(0, cthtorch.tensor(j))
    return _vector_norm(diff, p, 1)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    if tuple(input.shape[input.dim() - len(shape):]) != shape or len(shape) > input.dim():
        raise RuntimeError("Given normalized_shape=%s, expected input with shape [*, %s], but got input of size%s"
                           % (list(shape), ", ".join(str(s) for s in shape), input.size()))
    if eps is None:
        eps = cthtorch.finfo(input.dtype).eps
    dims = list(range(input.dim() - len(shape), input.dim()))
    y = input * (input * input).mean(dims, keepdim=True).add(eps).rsqrt()
    return y * weight if weight is not None else y


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    from cthtorch.nn import functional as F
    dim = input.dim()
    if dim < 3:
        raise ValueError("Expected 3D or higher dimensionality input (got %d dimensions)" % dim)
    if input.numel() == 0:
        return input
    sizes = input.shape
    # average of squares over a window of `size` channels, zero-padded: one avg_pool2d over (C, rest)
    div = (input * input).reshape(sizes[0], 1, sizes[1], -1)
    div = F.pad(div, (0, 0, size // 2, (size - 1) // 2))
    div = F.avg_pool2d(div, (size, 1), stride=1).reshape(sizes)
    return input / div.mul(alpha).add(k).pow(beta)


def channel_shuffle(input, groups):
    if input.dim() < 3:
        raise RuntimeError("channel_shuffle expects input to have at least 3 dimensions, but got input with sizes %s"
                           % list(input.shape))
    if groups <= 0:
        raise RuntimeError("Number of groups to divide channels in must be positive. Value of groups:%d" % groups)
    c = input.shape[1]
    if c % groups:
        raise RuntimeError("Number of channels must be divisible by groups. Got %d channels and %d groups."
                           % (c, groups))
    n, rest = input.shape[0], input.shape[2:]
    return input.reshape(n, groups, c // groups, *rest).transpose(1, 2).reshape(input.shape)


native_channel_shuffle = channel_shuffle


# ---------------------------------------------------------------- embedding_bag
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


# ---------------------------------------------------------------- in-place activation spellings
def elu_(input, alpha=1.0):
    return _nn.elu_(input, alpha)


def selu_(input):
    return cthtorch.selu_(input)


def celu_(input, alpha=1.0):
    return cthtorch.celu_(input, alpha)


def leaky_relu_(input, negative_slope=0.01):
    return _nn.leaky_relu_(input, negative_slope)


def hardtanh_(input, min_val=-1.0, max_val=1.0):
    return _nn.hardtanh_(input, min_val, max_val)


def threshold_(input, threshold, value):
    return cthtorch.threshold_(input, threshold, value)


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False):
    if not training:
        return _nn.leaky_relu_(input, (lower + upper) / 2)
    with cthtorch.no_grad():   # a random slope per negative element; the multiply is what autograd sees
        factor = cthtorch.where(input > 0, cthtorch.ones_like(input), cthtorch.empty_like(input).uniform_(lower, upper))
    return input.mul_(factor)


# ---------------------------------------------------------------- multi_head_attention_forward
def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads, in_proj_weight, in_proj_bias,
                                 bias_k, bias_v, add_zero_attn, dropout_p, out_proj_weight, out_proj_bias,
                                 training=True, key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None, k_proj_weight=None,
                                 v_proj_weight=None, static_k=None, static_v=None, average_attn_weights=True,
                                 is_causal=False):
    """Runs MultiheadAttention.forward's math on the given weights (sequence-first layout)."""
    import types
    from cthtorch.nn import functional as F
    from cthtorch.nn.modules.transformer import MultiheadAttention
    if bias_k is not None or bias_v is not None or add_zero_attn or static_k is not None or static_v is not None:
        raise NotImplementedError("multi_head_attention_forward: bias_k/bias_v, add_zero_attn and static_k/static_v "
                                  "are not implemented in cthtorch")
    if query.shape[-1] != embed_dim_to_check:
        raise AssertionError("was expecting embedding dimension of %d, but got %d"
                             % (embed_dim_to_check, query.shape[-1]))
    head_dim = embed_dim_to_check // num_heads
    if head_dim * num_heads != embed_dim_to_check:
        raise AssertionError("embed_dim %d not divisible by num_heads %d" % (embed_dim_to_check, num_heads))
    shim = types.SimpleNamespace(
        _qkv_same_embed_dim=not use_separate_proj_weight, in_proj_weight=in_proj_weight, in_proj_bias=in_proj_bias,
        q_proj_weight=q_proj_weight, k_proj_weight=k_proj_weight, v_proj_weight=v_proj_weight, num_heads=num_heads,
        head_dim=head_dim, dropout=dropout_p, training=training, batch_first=False,
        out_proj=lambda x: F.linear(x, out_proj_weight, out_proj_bias))
    return MultiheadAttention.forward(shim, query, key, value, key_padding_mask, need_weights, attn_mask,
                                      average_attn_weights, is_causal)
