"""multi_head_attention_forward: MultiheadAttention.forward's math on given weights."""


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
