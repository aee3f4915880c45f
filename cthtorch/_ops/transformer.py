"""torch._native_multi_head_attention and torch._transformer_encoder_layer_fwd: the ops of PyTorch's
inference fast path for MultiheadAttention and TransformerEncoderLayer, as composites of the ops the
ordinary forward uses (multi_head_attention_forward, linear, layer_norm).

cthtorch's own modules never take that path, but their TorchScript source does: a module scripted by
PyTorch and loaded here calls these in eval mode when grad is off or nothing requires it, as it does in
PyTorch, so the loaded model must be able to run them. The masks follow torch's merge_masks: mask_type 0
is an attention mask (L, S), 1 a key padding mask (B, S), 2 a merged (B, heads, L, S) mask; True (bool)
or -inf (float) masks a position out."""
import cthtorch


def _native_multi_head_attention(query, key, value, embed_dim, num_head, qkv_weight, qkv_bias, proj_weight,
                                 proj_bias, mask=None, need_weights=True, average_attn_weights=True,
                                 mask_type=None):
    if query.dim() != 3:
        raise RuntimeError("expected 3-D `query`, got %d-D tensor" % query.dim())
    if key.shape != query.shape or value.shape != query.shape:
        raise RuntimeError("expected `query`/`key`/`value` shapes to match")
    b, n, e = query.shape
    if e != embed_dim:
        raise RuntimeError("expected `query` to have last dimension %d, got %d" % (embed_dim, e))
    attn_mask = key_padding_mask = None
    if mask is not None:
        if mask_type == 1:
            key_padding_mask = mask
        elif mask_type == 2 or mask.dim() == 4:   # (B, heads or 1, L, S): one (L, S) mask per batch and head
            attn_mask = mask.expand(b, num_head, n, n).reshape(b * num_head, n, n)
        else:
            attn_mask = mask
    F = cthtorch.nn.functional
    out, weights = F.multi_head_attention_forward(
        query.transpose(0, 1), key.transpose(0, 1), value.transpose(0, 1), embed_dim, num_head, qkv_weight,
        qkv_bias, None, None, False, 0.0, proj_weight, proj_bias, training=False,
        key_padding_mask=key_padding_mask, need_weights=need_weights, attn_mask=attn_mask,
        average_attn_weights=average_attn_weights)
    return out.transpose(0, 1), weights


def _transformer_encoder_layer_fwd(src, embed_dim, num_heads, qkv_weight, qkv_bias, proj_weight, proj_bias,
                                   use_gelu, norm_first, eps, norm_weight_1, norm_bias_1, norm_weight_2,
                                   norm_bias_2, ffn_weight_1, ffn_bias_1, ffn_weight_2, ffn_bias_2, mask=None,
                                   mask_type=None):
    F = cthtorch.nn.functional

    def attention(x):
        return _native_multi_head_attention(x, x, x, embed_dim, num_heads, qkv_weight, qkv_bias, proj_weight,
                                            proj_bias, mask, False, True, mask_type)[0]

    def feed_forward(x):
        h = F.linear(x, ffn_weight_1, ffn_bias_1)
        return F.linear(F.gelu(h) if use_gelu else F.relu(h), ffn_weight_2, ffn_bias_2)

    def norm(x, w, bias):
        return F.layer_norm(x, (embed_dim,), w, bias, eps)

    x = src
    if norm_first:
        x = x + attention(norm(x, norm_weight_1, norm_bias_1))
        return x + feed_forward(norm(x, norm_weight_2, norm_bias_2))
    x = norm(x + attention(x), norm_weight_1, norm_bias_1)
    return norm(x + feed_forward(x), norm_weight_2, norm_bias_2)


def register():
    """Registers torch._native_multi_head_attention and torch._transformer_encoder_layer_fwd (cthtorch/_ops)."""
    from cthtorch import _ops
    for name in ("_native_multi_head_attention", "_transformer_encoder_layer_fwd"):
        _ops.op("torch", name, globals()[name], __name__)
