"""Activation modules (torch.nn.modules.activation), MultiheadAttention among them as in torch."""
import math
from typing import Optional, Tuple

import cthtorch
from cthtorch import Tensor
from cthtorch.nn import functional as F
from cthtorch.nn import init
from cthtorch.nn.modules.linear import NonDynamicallyQuantizableLinear
from cthtorch.nn.modules.module import Module
from cthtorch.nn.parameter import Parameter

__all__ = ["ReLU", "ReLU6", "LeakyReLU", "ELU", "CELU", "SELU", "GELU", "SiLU", "Mish", "Softplus", "Hardtanh",
           "Hardsigmoid", "Hardswish", "Threshold", "PReLU", "RReLU", "GLU", "Sigmoid", "Tanh", "LogSigmoid",
           "Softsign", "Tanhshrink", "Softshrink", "Hardshrink", "Softmax", "LogSoftmax", "Softmin", "Softmax2d",
           "MultiheadAttention"]


def _simple(name, fn, extra=None):
    def forward(self, input):
        return fn(self, input)

    def extra_repr(self):
        return extra(self) if extra else ""
    return type(name, (Module,), {"forward": forward, "extra_repr": extra_repr,
                                  "__init__": lambda self, *a, **k: Module.__init__(self)})


class _InplaceActivation(Module):
    """An activation whose only setting is inplace (a shared base torch writes out per class)."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def extra_repr(self):
        return "inplace=True" if self.inplace else ""


class ReLU(_InplaceActivation):
    def forward(self, input):
        return F.relu(input, inplace=self.inplace)


class LeakyReLU(Module):
    def __init__(self, negative_slope=0.01, inplace=False):
        super().__init__()
        self.negative_slope, self.inplace = negative_slope, inplace

    def forward(self, input):
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self):
        return "negative_slope={}{}".format(self.negative_slope, ", inplace=True" if self.inplace else "")


class _ELUBase(Module):
    def __init__(self, alpha=1.0, inplace=False):
        super().__init__()
        self.alpha, self.inplace = alpha, inplace

    def extra_repr(self):
        return "alpha={}{}".format(self.alpha, ", inplace=True" if self.inplace else "")


class ELU(_ELUBase):
    def forward(self, input):
        return F.elu(input, self.alpha, self.inplace)


class CELU(_ELUBase):
    def forward(self, input):
        return F.celu(input, self.alpha, self.inplace)


class SELU(_InplaceActivation):
    def forward(self, input):
        return F.selu(input, self.inplace)


class GELU(Module):
    def __init__(self, approximate="none"):
        super().__init__()
        self.approximate = approximate

    def forward(self, input):
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self):
        return "approximate={}".format(repr(self.approximate))


class SiLU(_InplaceActivation):
    def forward(self, input):
        return F.silu(input, self.inplace)


class Mish(_InplaceActivation):
    def forward(self, input):
        return F.mish(input, self.inplace)


class Softplus(Module):
    def __init__(self, beta=1.0, threshold=20.0):
        super().__init__()
        self.beta, self.threshold = beta, threshold

    def forward(self, input):
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self):
        return "beta={}, threshold={}".format(self.beta, self.threshold)


class Hardtanh(Module):
    def __init__(self, min_val=-1.0, max_val=1.0, inplace=False, min_value=None, max_value=None):
        super().__init__()
        import warnings
        for old, new, value in (("min_value", "min_val", min_value), ("max_value", "max_val", max_value)):
            if value is not None:   # the old keyword names, still accepted by torch
                warnings.warn(f"keyword argument `{old}` is deprecated and renamed to `{new}`", FutureWarning,
                              stacklevel=2)
        min_val = min_val if min_value is None else min_value
        max_val = max_val if max_value is None else max_value
        self.min_val, self.max_val, self.inplace = min_val, max_val, inplace
        if self.max_val <= self.min_val:
            raise AssertionError(f"max_val ({self.max_val}) must be greater than min_val ({self.min_val})")

    def forward(self, input):
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self):
        return "min_val={}, max_val={}{}".format(self.min_val, self.max_val, ", inplace=True" if self.inplace else "")


class ReLU6(Hardtanh):
    def __init__(self, inplace=False):
        super().__init__(0.0, 6.0, inplace)

    def forward(self, input):
        return F.relu6(input, self.inplace)

    def extra_repr(self):
        return "inplace=True" if self.inplace else ""


class Hardsigmoid(_InplaceActivation):
    def forward(self, input):
        return F.hardsigmoid(input, self.inplace)


class Hardswish(_InplaceActivation):
    def forward(self, input):
        return F.hardswish(input, self.inplace)


class Threshold(Module):
    def __init__(self, threshold, value, inplace=False):
        super().__init__()
        self.threshold, self.value, self.inplace = threshold, value, inplace

    def forward(self, input):
        return F.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self):
        return "threshold={}, value={}{}".format(self.threshold, self.value, ", inplace=True" if self.inplace else "")


class PReLU(Module):
    def __init__(self, num_parameters=1, init=0.25, device=None, dtype=None):
        super().__init__()
        self.num_parameters, self.init = num_parameters, init
        self.weight = Parameter(cthtorch.empty(num_parameters, dtype=dtype).fill_(init))

    def reset_parameters(self):
        with cthtorch.no_grad():
            self.weight.fill_(self.init)

    def forward(self, input):
        return F.prelu(input, self.weight)

    def extra_repr(self):
        return "num_parameters={}".format(self.num_parameters)


class RReLU(Module):
    def __init__(self, lower=1.0 / 8, upper=1.0 / 3, inplace=False):
        super().__init__()
        self.lower, self.upper, self.inplace = lower, upper, inplace

    def forward(self, input):
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self):
        return "lower={}, upper={}{}".format(self.lower, self.upper, ", inplace=True" if self.inplace else "")


class GLU(Module):
    def __init__(self, dim=-1):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.glu(input, self.dim)

    def extra_repr(self):
        return "dim={}".format(self.dim)


class Sigmoid(Module):
    def forward(self, input):
        return input.sigmoid()


class Tanh(Module):
    def forward(self, input):
        return input.tanh()


class LogSigmoid(Module):
    def forward(self, input):
        return F.logsigmoid(input)


class Softsign(Module):
    def forward(self, input):
        return F.softsign(input)


class Tanhshrink(Module):
    def forward(self, input):
        return F.tanhshrink(input)


class _ShrinkBase(Module):
    def __init__(self, lambd=0.5):
        super().__init__()
        self.lambd = lambd

    def extra_repr(self):
        return str(self.lambd)


class Softshrink(_ShrinkBase):
    def forward(self, input):
        return F.softshrink(input, self.lambd)


class Hardshrink(_ShrinkBase):
    def forward(self, input):
        return F.hardshrink(input, self.lambd)


class _SoftmaxBase(Module):
    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def extra_repr(self):
        return "dim={dim}".format(dim=self.dim)


class Softmax(_SoftmaxBase):
    def forward(self, input):
        return F.softmax(input, self.dim, _stacklevel=5)


class LogSoftmax(_SoftmaxBase):
    def forward(self, input):
        return F.log_softmax(input, self.dim, _stacklevel=5)


class Softmin(_SoftmaxBase):
    def forward(self, input):
        return F.softmin(input, self.dim, _stacklevel=5)


class Softmax2d(Module):
    def forward(self, input):
        return F.softmax(input, -3)


def _mha_mask(attn_mask: Optional[Tensor], key_padding_mask: Optional[Tensor], L: int, S: int, N: int, H: int,
              dtype: cthtorch.dtype) -> Optional[Tensor]:
    """MHA's attn_mask and key_padding_mask (bool: True = masked out; float: added) merged into one mask
    in SDPA's terms (bool: True = attend; float: added), broadcastable to (N, H, L, S); None without masks"""
    mask = None
    if attn_mask is not None:
        mask = attn_mask.reshape(N, H, L, S) if attn_mask.dim() == 3 else attn_mask
        mask = ~mask if mask.dtype == cthtorch.bool else mask
    if key_padding_mask is not None:
        kpm = key_padding_mask.reshape(N, 1, 1, S)
        if kpm.dtype == cthtorch.bool:
            kpm = cthtorch.zeros(kpm.shape, dtype=dtype).masked_fill(kpm, float("-inf"))
        if mask is None:
            mask = kpm
        elif mask.dtype == cthtorch.bool:
            mask = cthtorch.zeros(mask.shape, dtype=dtype).masked_fill(~mask, float("-inf")) + kpm
        else:
            mask = mask + kpm
    return mask


def _canonical_masks(padding_mask, mask, padding_name, mask_name, dtype):
    """torch's transformer modules' first step: both masks made additive floats (F._canonical_mask), with its
    warning when one is bool and the other float"""
    padding_mask = F._canonical_mask(mask=padding_mask, mask_name=padding_name, other_type=F._none_or_dtype(mask),
                                     other_name=mask_name, target_type=dtype)
    mask = F._canonical_mask(mask=mask, mask_name=mask_name, other_type=None, other_name="", target_type=dtype,
                             check_other=False)
    return padding_mask, mask


def _mha_mask_extend(mask: Optional[Tensor]) -> Optional[Tensor]:
    """a (float) mask with one more key column, attended (torch pads with 0 for bias_k and the zero key)"""
    if mask is None:
        return mask
    size = list(mask.shape)
    size[-1] = 1
    return cthtorch.cat([mask, mask.new_zeros(size)], -1)


def _mha_attention(q: Tensor, k: Tensor, v: Tensor, L: int, S: int, N: int, H: int, attn_mask: Optional[Tensor],
                   key_padding_mask: Optional[Tensor], is_causal: bool, dropout_p: float) -> Tensor:
    """F.scaled_dot_product_attention over the heads of projected (seq, batch, embed) q, k, v"""
    D = q.shape[-1] // H
    q = q.reshape(L, N, H, D).permute(1, 2, 0, 3)
    k = k.reshape(S, N, H, D).permute(1, 2, 0, 3)
    v = v.reshape(S, N, H, D).permute(1, 2, 0, 3)
    mask = _mha_mask(attn_mask, key_padding_mask, L, S, N, H, q.dtype)
    causal = is_causal and mask is None
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=dropout_p, is_causal=causal)
    return out.permute(2, 0, 1, 3).reshape(L, N, H * D)


def _mha_in_projection(query: Tensor, key: Tensor, value: Tensor, self_attention: bool, w: Optional[Tensor],
                       b: Optional[Tensor], w_q: Optional[Tensor], w_k: Optional[Tensor],
                       w_v: Optional[Tensor]) -> Tuple[Tensor, Tensor, Tensor]:
    """MHA's q, k, v projections from the packed weight w or the separate w_q/w_k/w_v (typed so TorchScript
    compiles it; a module function, as F.multi_head_attention_forward runs the forward on a namespace)"""
    if w is not None and self_attention:
        # one GEMM for the three projections (and one for each of their gradients), as torch packs them
        qkv = F.linear(query, w, b).chunk(3, -1)
        return qkv[0], qkv[1], qkv[2]
    b_q: Optional[Tensor] = None
    b_k: Optional[Tensor] = None
    b_v: Optional[Tensor] = None
    if b is not None:
        bs = b.chunk(3)
        b_q, b_k, b_v = bs[0], bs[1], bs[2]
    if w is not None:
        ws = w.chunk(3)
        return F.linear(query, ws[0], b_q), F.linear(key, ws[1], b_k), F.linear(value, ws[2], b_v)
    assert w_q is not None and w_k is not None and w_v is not None
    return F.linear(query, w_q, b_q), F.linear(key, w_k, b_k), F.linear(value, w_v, b_v)


class MultiheadAttention(Module):
    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False, add_zero_attn=False,
                 kdim=None, vdim=None, batch_first=False, device=None, dtype=None):
        super().__init__()
        if embed_dim % num_heads:
            raise AssertionError("embed_dim must be divisible by num_heads")
        self.embed_dim, self.num_heads, self.dropout, self.batch_first = embed_dim, num_heads, dropout, batch_first
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.head_dim = embed_dim // num_heads
        if self._qkv_same_embed_dim:
            self.in_proj_weight = Parameter(cthtorch.empty((3 * embed_dim, embed_dim), dtype=dtype))
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        else:
            self.q_proj_weight = Parameter(cthtorch.empty((embed_dim, embed_dim), dtype=dtype))
            self.k_proj_weight = Parameter(cthtorch.empty((embed_dim, self.kdim), dtype=dtype))
            self.v_proj_weight = Parameter(cthtorch.empty((embed_dim, self.vdim), dtype=dtype))
            self.register_parameter("in_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(cthtorch.empty(3 * embed_dim, dtype=dtype))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias, dtype=dtype)
        if add_bias_kv:
            self.bias_k = Parameter(cthtorch.empty((1, 1, embed_dim), dtype=dtype))
            self.bias_v = Parameter(cthtorch.empty((1, 1, embed_dim), dtype=dtype))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _why_not_fast_path(self, query, key, value, key_padding_mask, attn_mask, float_masks):
        """torch's reason, in its order, for not taking the inference fast path (the only path where torch
        accepts nested inputs); '' when it would be taken. The masks are the canonical ones; float_masks says
        whether one was given as floats, a reason every other one but the grad check overrides in torch."""
        tensors = (query, key, value, self.in_proj_weight, self.in_proj_bias, self.out_proj.weight,
                   self.out_proj.bias)
        checks = (
            (not cthtorch.backends.mha.get_fastpath_enabled(), "torch.backends.mha.get_fastpath_enabled() was not True"),
            (query.dim() != 3, "input not batched; expected query.dim() of 3 but got %d" % query.dim()),
            (query is not key or key is not value,
             "non-self attention was used (query, key, and value are not the same Tensor)"),
            (self.in_proj_bias is not None and query.dtype != self.in_proj_bias.dtype,
             "dtypes of query (%s) and self.in_proj_bias (%s) don't match"
             % (query.dtype, getattr(self.in_proj_bias, "dtype", None))),
            (self.in_proj_weight is None, "in_proj_weight was None"),
            (self.in_proj_weight is not None and query.dtype != self.in_proj_weight.dtype,
             "dtypes of query (%s) and self.in_proj_weight (%s) don't match"
             % (query.dtype, getattr(self.in_proj_weight, "dtype", None))),
            (self.training, "training is enabled"),
            (self.num_heads % 2 != 0, "self.num_heads is not even"),
            (not self.batch_first, "batch_first was not True"),
            (self.bias_k is not None, "self.bias_k was not None"),
            (self.bias_v is not None, "self.bias_v was not None"),
            (self.add_zero_attn, "add_zero_attn was enabled"),
            (not self._qkv_same_embed_dim, "_qkv_same_embed_dim was not True"),
            (query.is_nested and (key_padding_mask is not None or attn_mask is not None),
             "supplying both src_key_padding_mask and src_mask at the same time                                  "
             "is not supported with NestedTensor input"),
            (cthtorch.is_autocast_enabled(), "autocast is enabled"),
            (float_masks, "floating-point masks are not supported for fast path."),
            (cthtorch.is_grad_enabled() and any(t is not None and t.requires_grad for t in tensors),
             "grad is enabled and at least one of query or the input/output projection weights or biases "
             "requires_grad"),
        )
        return next((why for failed, why in checks if failed), "")

    def _refuse_nested(self, query, key, value, key_padding_mask, attn_mask):
        """nested inputs: torch's AssertionError naming why its fast path (the only path taking them) was not
        taken, after canonicalising the masks as torch does first (an integer mask is refused there); where
        torch would take it, NotImplementedError"""
        float_masks = any(m is not None and cthtorch.is_floating_point(m) for m in (attn_mask, key_padding_mask))
        key_padding_mask, attn_mask = _canonical_masks(key_padding_mask, attn_mask, "key_padding_mask", "attn_mask",
                                                       query.dtype)
        why = self._why_not_fast_path(query, key, value, key_padding_mask, attn_mask, float_masks)
        if why:
            raise AssertionError("MultiheadAttention does not support NestedTensor outside of its fast path. "
                                 "The fast path was not hit because " + why)
        raise NotImplementedError("cthtorch: MultiheadAttention on nested tensors (torch's inference fast path, "
                                  "_native_multi_head_attention) is not implemented")

    def _reset_parameters(self):
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            init.xavier_uniform_(self.q_proj_weight)
            init.xavier_uniform_(self.k_proj_weight)
            init.xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
        if self.bias_v is not None:
            init.xavier_normal_(self.bias_v)

    def forward(self, query: Tensor, key: Tensor, value: Tensor, key_padding_mask: Optional[Tensor] = None,
                need_weights: bool = True, attn_mask: Optional[Tensor] = None, average_attn_weights: bool = True,
                is_causal: bool = False) -> Tuple[Tensor, Optional[Tensor]]:
        # (TorchScript has no nested tensors: the check is eager-only, so scripting never compiles it)
        if not cthtorch.jit.is_scripting() and (query.is_nested or key.is_nested or value.is_nested):
            self._refuse_nested(query, key, value, key_padding_mask, attn_mask)
        unbatched = query.dim() == 2
        self_attention = query is key and key is value
        if unbatched:
            query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        elif self.batch_first:
            query, key, value = query.transpose(0, 1), key.transpose(0, 1), value.transpose(0, 1)
        L, N, E = query.shape
        if not cthtorch.jit.is_scripting():   # (TorchScript takes either mask dtype as it comes)
            key_padding_mask, attn_mask = _canonical_masks(key_padding_mask, attn_mask, "key_padding_mask",
                                                           "attn_mask", query.dtype)
        q, k, v = _mha_in_projection(query, key, value, self_attention, self.in_proj_weight, self.in_proj_bias,
                                     self.q_proj_weight, self.k_proj_weight, self.v_proj_weight)
        bias_k, bias_v = self.bias_k, self.bias_v
        if bias_k is not None and bias_v is not None:   # one learned key/value more for every query
            k = cthtorch.cat([k, bias_k.repeat(1, N, 1)])
            v = cthtorch.cat([v, bias_v.repeat(1, N, 1)])
            attn_mask, key_padding_mask = _mha_mask_extend(attn_mask), _mha_mask_extend(key_padding_mask)
        if self.add_zero_attn:   # and a zero key/value, so a query can attend to nothing
            k = cthtorch.cat([k, k.new_zeros((1, N, E))])
            v = cthtorch.cat([v, v.new_zeros((1, N, E))])
            attn_mask, key_padding_mask = _mha_mask_extend(attn_mask), _mha_mask_extend(key_padding_mask)
        S = k.shape[0]
        H, D = self.num_heads, self.head_dim
        if not need_weights:   # torch's path too: the fused attention kernel, no weights formed
            p = self.dropout if self.training else 0.0
            out = _mha_attention(q, k, v, L, S, N, H, attn_mask, key_padding_mask, is_causal, p)
            out = self.out_proj(out)
            if unbatched:
                return out.squeeze(1), None
            return (out.transpose(0, 1) if self.batch_first else out), None
        q = q.reshape(L, N * H, D).transpose(0, 1)
        k = k.reshape(S, N * H, D).transpose(0, 1)
        v = v.reshape(S, N * H, D).transpose(0, 1)
        scores = cthtorch.bmm(q, k.transpose(1, 2)) / math.sqrt(D)
        mask = _mha_mask(attn_mask, key_padding_mask, L, S, N, H, scores.dtype)   # the SDPA path's masks
        if mask is not None:
            scores = scores.reshape(N, H, L, S)
            scores = scores.masked_fill(~mask, float("-inf")) if mask.dtype == cthtorch.bool else scores + mask
            scores = scores.reshape(N * H, L, S)
        elif is_causal:
            scores = scores.masked_fill(cthtorch.ones(L, S, dtype=cthtorch.bool).triu(1), float("-inf"))
        attn = scores.softmax(-1)
        if self.dropout > 0 and self.training:
            attn = F.dropout(attn, self.dropout, True)
        out = cthtorch.bmm(attn, v).transpose(0, 1).reshape(L, N, E)
        out = self.out_proj(out)
        if unbatched:
            out = out.squeeze(1)
        elif self.batch_first:
            out = out.transpose(0, 1)
        w = attn.reshape(N, H, L, S)
        w = w.mean(1) if average_attn_weights else w
        return out, (w.squeeze(0) if unbatched else w)
