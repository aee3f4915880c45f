"""Attention: F.scaled_dot_product_attention (the fused C kernel, with a composite of recorded ops for what the
kernel does not take and for double backward) and multi_head_attention_forward (MultiheadAttention.forward's math
on given weights)."""
import math
import warnings
from typing import Optional

import cthtorch
from cthtorch import Tensor
from cthtorch._utils import _tensor_arg
from cthtorch.overrides import _handle_with_locals, has_torch_function_variadic as _has_torch_function_variadic
from cthtorch.amp._cpu_policy import lower_on_cpu, outside_cpu_autocast

# torch's names of the dtypes in its attention messages
_C10_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half", "bfloat16": "c10::BFloat16"}


def _c10(dt):
    n = str(dt).replace("torch.", "")
    return _C10_NAMES.get(n, n)


def _fusable(q, k, v, m, dropout_p, enable_gqa):
    """whether the fused kernel takes these operands (else the composite runs: other dtypes, ranks, broadcast
    batch dims, empty operands, dropout_p of 1)"""
    n = q.dim()
    if n not in (3, 4) or k.dim() != n or v.dim() != n or not 0.0 <= dropout_p < 1.0:
        return False
    dt = q.dtype
    if dt not in (cthtorch.float32, cthtorch.float64) or k.dtype != dt or v.dtype != dt or q.device.type != "cpu":
        return False
    if q.numel() == 0 or k.numel() == 0 or v.numel() == 0:
        return False
    qs, ks, vs = q.shape, k.shape, v.shape
    if ks[0] != qs[0] or vs[0] != qs[0] or ks[-1] != qs[-1] or vs[-2] != ks[-2]:
        return False
    if n == 4 and (vs[1] != ks[1] or (qs[1] != ks[1] and not (enable_gqa and qs[1] % ks[1] == 0))):
        return False
    if m is not None:
        want = tuple(qs[:-1]) + (ks[-2],)
        if m.dim() > n or any(a != 1 and a != b for a, b in zip(m.shape, want[n - m.dim():])):
            return False
    return True


@lower_on_cpu
def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
                                 enable_gqa=False):
    if _has_torch_function_variadic(query, key, value):   # an fx Proxy: recorded as this function
        return _handle_with_locals(scaled_dot_product_attention, locals())
    _tensor_arg("scaled_dot_product_attention", "query", query, 1)
    _tensor_arg("scaled_dot_product_attention", "key", key, 2)
    _tensor_arg("scaled_dot_product_attention", "value", value, 3)
    if attn_mask is not None and attn_mask.dtype != cthtorch.bool and attn_mask.dtype != query.dtype:
        raise RuntimeError("Expected attn_mask dtype to be bool or float or to match query dtype, but got "
                           "attn_mask.dtype: %s and  query.dtype: %s instead." % (_c10(attn_mask.dtype),
                                                                                 _c10(query.dtype)))
    sc = float(scale) if scale is not None else 1.0 / math.sqrt(query.shape[-1])
    dt = query.dtype
    if dropout_p == 0 and dt in (cthtorch.float16, cthtorch.bfloat16) and key.dtype == dt and value.dtype == dt:
        # torch's CPU kernel for the reduced dtypes accumulates scores, softmax and the weighted sum in float and
        # rounds once at the end; computing in float and casting back gives its numbers (in half, rounding every
        # intermediate left ~1 ulp off in a sixth of the outputs)
        m = attn_mask.float() if attn_mask is not None and attn_mask.dtype != cthtorch.bool else attn_mask
        return _sdpa_float(query.float(), key.float(), value.float(), m, 0.0, is_causal, sc, enable_gqa).to(dt)
    from cthtorch.nn.attention import _fused_allowed
    # with dropout torch's CPU dispatch picks its math backend, whose mask is dropout() over the whole (..., L, S)
    # score tensor; the composite draws that same mask from the generator, so a seeded program's dropout (and
    # every random number after it) equals torch's. The fused kernel's hashed mask could not.
    if dropout_p == 0 and _fused_allowed() and _fusable(query, key, value, attn_mask, dropout_p, enable_gqa):
        return cthtorch._scaled_dot_product_fused_attention(query, key, value, attn_mask, 0.0, bool(is_causal), sc,
                                                            0)[0]
    return _sdpa_composite(query, key, value, attn_mask, dropout_p, is_causal, sc, enable_gqa)


# the float computation of a half/bfloat16 attention, with CPU autocast off so it is not lowered again
_sdpa_float = outside_cpu_autocast(scaled_dot_product_attention.__wrapped__)


def _grouped(query, key, value, enable_gqa):
    """key and value repeated over the query heads that share them (grouped query attention)"""
    if enable_gqa and query.dim() >= 3 and key.dim() >= 3 and key.shape[-3] != query.shape[-3]:
        g = query.shape[-3] // key.shape[-3]
        key, value = key.repeat_interleave(g, -3), value.repeat_interleave(g, -3)
    return key, value


def _masked_scores(query, key, attn_mask, is_causal, scale):
    """scale * q k^T with the masks applied (-inf where masked)"""
    L, S = query.shape[-2], key.shape[-2]
    scores = cthtorch.matmul(query, key.transpose(-2, -1)) * scale
    if is_causal:
        scores = scores.masked_fill(~cthtorch.ones(L, S, dtype=cthtorch.bool).tril(), float("-inf"))
    if attn_mask is not None:
        scores = scores.masked_fill(~attn_mask, float("-inf")) if attn_mask.dtype == cthtorch.bool else \
            scores + attn_mask
    return scores


def _safe_softmax(scores):
    """softmax over the last dim, rows with every score -inf give 0 (as torch's attention) instead of nan"""
    dead = (scores == float("-inf")).all(-1, keepdim=True)
    return scores.masked_fill(dead, 0.0).softmax(-1).masked_fill(dead, 0.0)


def _sdpa_composite(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa):
    from cthtorch.nn.functional import dropout
    key, value = _grouped(query, key, value, enable_gqa)
    attn = _safe_softmax(_masked_scores(query, key, attn_mask, is_causal, scale))
    if dropout_p > 0:
        attn = dropout(attn, dropout_p, True)
    return cthtorch.matmul(attn, value)


def _sdpa_backward_composite(grad, query, key, value, attn_mask, dropout_p, is_causal, scale, seed):
    """the fused kernel's gradients (q, k, v, float mask) as recorded ops, for create_graph backward"""
    if dropout_p > 0:
        raise NotImplementedError("double backward of scaled_dot_product_attention with dropout_p > 0 is not "
                                  "implemented in cthtorch")
    kg, vg = _grouped(query, key, value, True)
    p = _safe_softmax(_masked_scores(query, kg, attn_mask, is_causal, scale))
    dv = cthtorch.matmul(p.transpose(-2, -1), grad)
    dp = cthtorch.matmul(grad, vg.transpose(-2, -1))
    ds = p * (dp - (dp * p).sum(-1, keepdim=True))
    dq = cthtorch.matmul(ds, kg) * scale
    dk = cthtorch.matmul(ds.transpose(-2, -1), query) * scale
    if kg.shape != key.shape:   # sum over the query heads of each key head
        g = query.shape[-3] // key.shape[-3]
        dk = dk.unflatten(-3, (key.shape[-3], g)).sum(-3)
        dv = dv.unflatten(-3, (key.shape[-3], g)).sum(-3)
    dm = ds if attn_mask is not None and attn_mask.dtype != cthtorch.bool else None
    return dq, dk, dv, dm


def _canonical_mask(mask: Optional[Tensor], mask_name: str, other_type: Optional[cthtorch.dtype], other_name: str,
                    target_type: cthtorch.dtype, check_other: bool = True) -> Optional[Tensor]:
    """torch's F._canonical_mask (the transformer modules call it, and code copied from them does): a bool mask
    becomes an additive float one (-inf where True), an integer one is refused, and a bool mask beside a float
    one (or the reverse) gives torch's deprecation warning."""
    if mask is not None:
        _mask_dtype = mask.dtype
        _mask_is_float = cthtorch.is_floating_point(mask)
        if _mask_dtype != cthtorch.bool and not _mask_is_float:
            raise AssertionError(f"only bool and floating types of {mask_name} are supported")
        if check_other and other_type is not None:
            if _mask_dtype != other_type:
                warnings.warn(f"Support for mismatched {mask_name} and {other_name} is deprecated. Use same type "
                              "for both instead.", stacklevel=2)
        if not _mask_is_float:
            mask = cthtorch.zeros_like(mask, dtype=target_type).masked_fill_(mask, float("-inf"))
    return mask


def _none_or_dtype(input: Optional[Tensor]) -> Optional[cthtorch.dtype]:
    if input is None:
        return None
    elif isinstance(input, cthtorch.Tensor):
        return input.dtype
    raise RuntimeError("input to _none_or_dtype() must be None or torch.Tensor")


def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads, in_proj_weight, in_proj_bias,
                                 bias_k, bias_v, add_zero_attn, dropout_p, out_proj_weight, out_proj_bias,
                                 training=True, key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None, k_proj_weight=None,
                                 v_proj_weight=None, static_k=None, static_v=None, average_attn_weights=True,
                                 is_causal=False):
    """Runs MultiheadAttention.forward's math on the given weights (sequence-first layout)."""
    import types
    from cthtorch.nn import functional as F
    from cthtorch.nn.modules.activation import MultiheadAttention
    if static_k is not None or static_v is not None:
        raise NotImplementedError("multi_head_attention_forward: static_k/static_v are not implemented in cthtorch")
    if (bias_k is None) != (bias_v is None):
        raise AssertionError()
    if query.shape[-1] != embed_dim_to_check:
        raise AssertionError("was expecting embedding dimension of %d, but got %d"
                             % (embed_dim_to_check, query.shape[-1]))
    head_dim = embed_dim_to_check // num_heads
    if head_dim * num_heads != embed_dim_to_check:
        raise AssertionError("embed_dim %d not divisible by num_heads %d" % (embed_dim_to_check, num_heads))
    if use_separate_proj_weight:
        for name, w in (("q", q_proj_weight), ("k", k_proj_weight), ("v", v_proj_weight)):
            if w is None:
                raise AssertionError("use_separate_proj_weight is True but %s_proj_weight is None" % name)
        # the separate weights are the projections: fairseq passes torch.empty([0]) as in_proj_weight here
        in_proj_weight = None
    shim = types.SimpleNamespace(
        _qkv_same_embed_dim=not use_separate_proj_weight, in_proj_weight=in_proj_weight, in_proj_bias=in_proj_bias,
        q_proj_weight=q_proj_weight, k_proj_weight=k_proj_weight, v_proj_weight=v_proj_weight, num_heads=num_heads,
        head_dim=head_dim, dropout=dropout_p, training=training, batch_first=False, bias_k=bias_k, bias_v=bias_v,
        add_zero_attn=add_zero_attn,
        out_proj=lambda x: F.linear(x, out_proj_weight, out_proj_bias))
    return MultiheadAttention.forward(shim, query, key, value, key_padding_mask, need_weights, attn_mask,
                                      average_attn_weights, is_causal)
