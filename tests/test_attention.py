"""F.scaled_dot_product_attention's fused kernel, MultiheadAttention and the transformer layers that use it,
against torch: values, gradients (q, k, v, float masks), gradcheck/gradgradcheck, dropout determinism, errors."""
import warnings

import numpy as np
import pytest

import cthtorch as ct
import cthtorch.nn.functional as F
from oracle import raises_like, require_torch

torch = require_torch()
TF = torch.nn.functional
rs = np.random.RandomState(0)


def pair(shape, dt=np.float64, grad=True):
    a = rs.randn(*shape).astype(dt)
    return ct.tensor(a, requires_grad=grad), torch.tensor(a, requires_grad=grad)


def close(a, b, tol):
    b = b.detach().numpy()
    a = a.detach().numpy()
    assert a.shape == b.shape and a.dtype == b.dtype
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


def check(qs, ks, vs, dt=np.float64, mask=None, tol=1e-10, **kw):
    """forward and the gradients of q, k, v (and a float mask) equal torch's"""
    (q, tq), (k, tk), (v, tv) = pair(qs, dt), pair(ks, dt), pair(vs, dt)
    cm = tm = None
    if mask is not None:
        cm, tm = ct.tensor(mask, requires_grad=mask.dtype != np.bool_), torch.tensor(mask, requires_grad=mask.dtype != np.bool_)
    o = F.scaled_dot_product_attention(q, k, v, attn_mask=cm, **kw)
    to = TF.scaled_dot_product_attention(tq, tk, tv, attn_mask=tm, **kw)
    close(o, to, tol)
    g = rs.randn(*to.shape).astype(dt)
    o.backward(ct.tensor(g))
    to.backward(torch.tensor(g))
    for a, b in [(q, tq), (k, tk), (v, tv)] + ([(cm, tm)] if tm is not None and tm.requires_grad else []):
        close(a.grad, b.grad, tol)
    return o


SHAPES = [((2, 3, 5, 8), (2, 3, 7, 8), (2, 3, 7, 6)),       # q and k lengths differ, Ev != E
          ((2, 5, 8), (2, 7, 8), (2, 7, 8)),                  # 3-d
          ((1, 2, 130, 16), (1, 2, 70, 16), (1, 2, 70, 4)),  # several row blocks
          ((3, 4, 1, 8), (3, 4, 9, 8), (3, 4, 9, 8))]         # one query


@pytest.mark.parametrize("shapes", SHAPES)
@pytest.mark.parametrize("kw", [{}, {"is_causal": True}, {"scale": 0.3}])
def test_sdpa_matches_torch(shapes, kw):
    o = check(*shapes, **kw)
    assert o.grad_fn.name() == "ScaledDotProductFlashAttentionForCpuBackward0"
    check(*shapes, dt=np.float32, tol=2e-5, **kw)


@pytest.mark.parametrize("dt,tol", [(np.float64, 1e-10), (np.float32, 2e-5)])
@pytest.mark.parametrize("kw", [{"is_causal": True}, {"scale": 40.0}, {"scale": 40.0, "is_causal": True}])
def test_sdpa_underflowing_scores_match_torch(dt, tol, kw):
    # scores far below the row's max (the kernel's exp skips libm's slow underflow path there)
    # and causal rows over two row blocks, with a bool mask's -inf beside them. Scale 40 amplifies
    # float32's rounding of the scores (torch's own float32 differs from float64 by 1.6e-5 there)
    if dt == np.float32 and "scale" in kw:
        tol = 5e-3
    check((1, 2, 70, 8), (1, 2, 70, 8), (1, 2, 70, 8), dt, tol=tol, **kw)
    check((1, 2, 70, 8), (1, 2, 70, 8), (1, 2, 70, 8), dt, tol=tol, mask=rs.rand(70, 70) > 0.3, **kw)


@pytest.mark.parametrize("mshape", [(5, 7), (2, 1, 5, 7), (1, 3, 1, 7), (2, 3, 5, 7), (1, 7)])
def test_sdpa_masks(mshape):
    shapes = SHAPES[0]
    check(*shapes, mask=rs.randn(*mshape))
    bm = rs.rand(*mshape) > 0.4
    check(*shapes, mask=bm)
    check(*shapes, dt=np.float32, tol=2e-5, mask=rs.randn(*mshape).astype(np.float32))


def test_sdpa_fully_masked_rows_give_zeros():
    bm = np.ones((5, 7), bool)
    bm[2] = False
    fm = np.zeros((5, 7))
    fm[3] = -np.inf
    for m in (bm, fm):
        o = check(*SHAPES[0], mask=m)
        assert (o.detach().numpy()[:, :, 2 if m is bm else 3] == 0).all()


def test_sdpa_grouped_query_attention():
    check((2, 6, 9, 8), (2, 2, 11, 8), (2, 2, 11, 5), enable_gqa=True)
    check((2, 6, 9, 8), (2, 3, 11, 8), (2, 3, 11, 5), enable_gqa=True, is_causal=True)


def test_sdpa_strided_inputs():
    """transposed views (MultiheadAttention's layout) go to GEMM without a copy, and give torch's values"""
    a, b, c = (rs.randn(7, 2, 3, 8) for _ in range(3))
    cq, ck, cv = (ct.tensor(x).permute(1, 2, 0, 3).requires_grad_() for x in (a, b, c))
    tq, tk, tv = (torch.tensor(x).permute(1, 2, 0, 3).requires_grad_() for x in (a, b, c))
    o, to = F.scaled_dot_product_attention(cq, ck, cv), TF.scaled_dot_product_attention(tq, tk, tv)
    close(o, to, 1e-10)
    o.sum().backward()
    to.sum().backward()
    for x, y in ((cq, tq), (ck, tk), (cv, tv)):
        close(x.grad, y.grad, 1e-10)


def test_sdpa_output_and_gradients_follow_the_inputs_layout():
    """q, k, v as (N, H, L, D) views of (L, N, H*D) projections (MultiheadAttention's): the output and the
    kernel's dq, dk, dv come in that (L, N, H, D) order, so MHA's (L, N, E) reshapes of them are views; contiguous
    inputs keep contiguous results; values and gradients are torch's, and gradcheck passes on such views"""
    x = rs.randn(6, 3, 3 * 8)
    qkv = ct.tensor(x, requires_grad=True)
    q, k, v = (t.reshape(6, 3, 2, 4).permute(1, 2, 0, 3) for t in qkv.chunk(3, -1))
    out, lse = ct._scaled_dot_product_fused_attention(q, k, v, None, 0.0, False, 0.5, 0)
    assert out.permute(2, 0, 1, 3).is_contiguous()
    g = ct.tensor(rs.randn(6, 3, 8)).reshape(6, 3, 2, 4).permute(1, 2, 0, 3)
    grads = ct._scaled_dot_product_fused_attention_backward(g, q, k, v, None, out, lse, 0.0, False, 0.5, 0)
    for t in grads[:3]:
        assert t.shape == (3, 2, 6, 4) and t.permute(2, 0, 1, 3).is_contiguous()
    c = ct.randn(2, 3, 5, 4)
    o2, _ = ct._scaled_dot_product_fused_attention(c, c, c, None, 0.0, False, 0.5, 0)
    assert o2.is_contiguous()
    assert all(t.is_contiguous() for t in ct._scaled_dot_product_fused_attention_backward(
        ct.ones_like(o2), c, c, c, None, o2, _, 0.0, False, 0.5, 0)[:3])
    tqkv = torch.tensor(x, requires_grad=True)
    tq, tk, tv = (t.reshape(6, 3, 2, 4).permute(1, 2, 0, 3) for t in tqkv.chunk(3, -1))
    w = rs.randn(6, 3, 8)
    for causal in (False, True):
        o = F.scaled_dot_product_attention(q, k, v, is_causal=causal).permute(2, 0, 1, 3).reshape(6, 3, 8)
        to = TF.scaled_dot_product_attention(tq, tk, tv, is_causal=causal).permute(2, 0, 1, 3).reshape(6, 3, 8)
        close(o, to, 1e-10)
        qkv.grad = tqkv.grad = None
        (o * ct.tensor(w)).sum().backward()
        (to * torch.tensor(w)).sum().backward()
        close(qkv.grad, tqkv.grad, 1e-10)
    f = lambda t: F.scaled_dot_product_attention(   # noqa: E731
        *(u.reshape(6, 3, 2, 4).permute(1, 2, 0, 3) for u in t.chunk(3, -1)), is_causal=True)
    assert ct.autograd.gradcheck(f, (qkv,))
    # the saved output is read through its strides: one of another shape is refused
    with pytest.raises(RuntimeError, match="do not match"):
        ct._scaled_dot_product_fused_attention_backward(g, q, k, v, None, out.reshape(3, 2, 4, 6), lse, 0.0, False,
                                                        0.5, 0)


def test_sdpa_gradcheck_and_gradgradcheck():
    q, k, v = (ct.tensor(rs.randn(*s), requires_grad=True) for s in ((1, 2, 4, 3), (1, 2, 5, 3), (1, 2, 5, 2)))
    m = ct.tensor(rs.randn(4, 5), requires_grad=True)
    f = lambda a, b, c, d: F.scaled_dot_product_attention(a, b, c, attn_mask=d)   # noqa: E731
    assert ct.autograd.gradcheck(f, (q, k, v, m))
    assert ct.autograd.gradgradcheck(f, (q, k, v, m))
    fc = lambda a, b, c: F.scaled_dot_product_attention(a, b, c, is_causal=True)   # noqa: E731
    assert ct.autograd.gradcheck(fc, (q, k, v))
    assert ct.autograd.gradgradcheck(fc, (q, k, v))
    kg, vg = (ct.tensor(rs.randn(1, 1, 5, 3), requires_grad=True) for _ in range(2))
    fg = lambda a, b, c: F.scaled_dot_product_attention(a, b, c, enable_gqa=True)   # noqa: E731
    assert ct.autograd.gradcheck(fg, (q, kg, vg))
    assert ct.autograd.gradgradcheck(fg, (q, kg, vg))


def test_sdpa_dropout_is_deterministic_and_replayed_by_backward():
    q, k, v = (ct.tensor(rs.randn(2, 3, 6, 4), requires_grad=True) for _ in range(3))

    def f(a, b, c):
        ct.manual_seed(3)
        return F.scaled_dot_product_attention(a, b, c, dropout_p=0.4)
    assert (f(q, k, v) == f(q, k, v)).all().item()
    assert not (f(q, k, v) == F.scaled_dot_product_attention(q, k, v)).all().item()
    # the backward uses the forward's dropout mask: finite differences at a fixed seed agree
    assert ct.autograd.gradcheck(f, (q, k, v))
    # kept scores are scaled by 1 / (1 - p): with equal scores and v = 1 each output averages 1
    z = ct.zeros(64, 8, 128, 4)
    out = F.scaled_dot_product_attention(z, z, ct.ones(64, 8, 128, 1), dropout_p=0.25)
    assert abs(out.mean().item() - 1.0) < 0.01
    assert abs((out == 0).double().mean().item()) < 0.01


def test_sdpa_dropout_draws_torchs_mask_at_a_seed():
    """torch's CPU attention with dropout runs its math backend: dropout() over the scores. Ours draws the same
    mask from the generator, so outputs, gradients and the next random numbers equal torch's at a fixed seed"""
    (q, tq), (k, tk), (v, tv) = pair((2, 3, 6, 4)), pair((2, 3, 7, 4)), pair((2, 3, 7, 5))
    for causal in (False, True):
        ct.manual_seed(5)
        torch.manual_seed(5)
        o = F.scaled_dot_product_attention(q, k, v, dropout_p=0.3, is_causal=causal)
        to = TF.scaled_dot_product_attention(tq, tk, tv, dropout_p=0.3, is_causal=causal)
        close(o, to, 1e-10)
        close(ct.randn(4), torch.randn(4), 0)
        o.sum().backward()
        to.sum().backward()
        for a, b in ((q, tq), (k, tk), (v, tv)):
            close(a.grad, b.grad, 1e-10)


def test_sdpa_errors_and_fallbacks():
    (q, tq), (k, tk), (v, tv) = pair((2, 3, 4, 8), np.float32), pair((2, 3, 5, 8), np.float32), \
        pair((2, 3, 5, 8), np.float32)
    # a mask and is_causal together: both apply (torch's CPU flash kernel takes them)
    check((2, 3, 4, 8), (2, 3, 5, 8), (2, 3, 5, 8), np.float32, tol=2e-5, mask=rs.rand(4, 5) > 0.3, is_causal=True)
    raises_like(lambda: F.scaled_dot_product_attention(q, k, v, attn_mask=ct.ones(4, 5, dtype=ct.float64)),
                lambda: TF.scaled_dot_product_attention(tq, tk, tv, attn_mask=torch.ones(4, 5, dtype=torch.float64)))
    # what the kernel does not take runs as a composite: 5-d, broadcast batch dims, bfloat16
    check((2, 2, 3, 4, 8), (2, 2, 3, 6, 8), (2, 2, 3, 6, 8))
    check((2, 3, 4, 8), (1, 3, 6, 8), (1, 3, 6, 8))
    a = rs.randn(2, 3, 4, 8).astype(np.float32)
    o = F.scaled_dot_product_attention(*(ct.tensor(a).bfloat16() for _ in range(3)))
    to = TF.scaled_dot_product_attention(*(torch.tensor(a).bfloat16() for _ in range(3)))
    assert o.dtype == ct.bfloat16
    np.testing.assert_allclose(o.float().numpy(), to.float().numpy(), atol=2e-2)



@pytest.mark.parametrize("dt", ["float16", "bfloat16"])
def test_sdpa_reduced_dtypes_round_once(dt):
    # torch's CPU attention accumulates half/bfloat16 in float and rounds the output once; rounding every
    # intermediate (scores, softmax, sum) put a quarter of the outputs 1 ulp off (CLIP's fp16 text tower runs
    # its attention this way). Its (..., L, S) math path is float exactly; its 4-d flash kernel blocks its own way.
    a = rs.randn(4, 77, 64).astype(np.float32)
    m = np.triu(np.full((77, 77), -np.inf, np.float32), 1)
    ulp = 2.0 ** -8 if dt == "float16" else 2.0 ** -5   # at the outputs' magnitudes (< 4)
    for kw in ({}, {"is_causal": True}, {"mask": True}):
        ops, tops = [ct.tensor(a).to(getattr(ct, dt))] * 3, [torch.tensor(a).to(getattr(torch, dt))] * 3
        cm = ct.tensor(m).to(getattr(ct, dt)) if kw.get("mask") else None
        tmk = torch.tensor(m).to(getattr(torch, dt)) if kw.get("mask") else None
        o = F.scaled_dot_product_attention(*ops, attn_mask=cm, is_causal=kw.get("is_causal", False))
        to = TF.scaled_dot_product_attention(*tops, attn_mask=tmk, is_causal=kw.get("is_causal", False))
        assert o.dtype == getattr(ct, dt)
        o, to = o.float().numpy(), to.float().numpy()
        assert (o != to).mean() < 0.002, kw
        np.testing.assert_allclose(o, to, rtol=0, atol=ulp)
    q = ct.tensor(a).to(getattr(ct, dt)).requires_grad_()
    F.scaled_dot_product_attention(q, q, q).sum().backward()
    assert q.grad.dtype == getattr(ct, dt) and q.grad.shape == q.shape

def copy_weights(cm, tm):
    cm.load_state_dict({k: ct.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})


@pytest.mark.parametrize("batch_first", [False, True])
def test_multihead_attention_fused_path(batch_first):
    tm = torch.nn.MultiheadAttention(16, 4, batch_first=batch_first)
    cm = ct.nn.MultiheadAttention(16, 4, batch_first=batch_first)
    copy_weights(cm, tm)
    shape = (3, 6, 16) if batch_first else (6, 3, 16)
    (x, tx), (y, ty) = pair(shape, np.float32), pair((3, 7, 16) if batch_first else (7, 3, 16), np.float32)
    kpm = rs.rand(3, 7) > 0.7
    kpm[:, 0] = False
    am = rs.rand(6, 7) > 0.8
    fkpm = np.where(kpm, -np.inf, 0).astype(np.float32)
    for kw in [{}, {"key_padding_mask": kpm}, {"attn_mask": am}, {"attn_mask": rs.randn(6, 7).astype(np.float32),
                                                                   "key_padding_mask": fkpm}]:
        ckw = {n: ct.tensor(m) for n, m in kw.items()}
        tkw = {n: torch.tensor(m) for n, m in kw.items()}
        o, w = cm(x, y, y, need_weights=False, **ckw)
        to, tw = tm(tx, ty, ty, need_weights=False, **tkw)
        assert w is None and tw is None
        close(o, to, 2e-5)
        g = rs.randn(*to.shape).astype(np.float32)
        for p in cm.parameters():
            p.grad = None
        tm.zero_grad()
        for t in (x, y, tx, ty):
            t.grad = None
        o.backward(ct.tensor(g))
        to.backward(torch.tensor(g))
        close(x.grad, tx.grad, 2e-5)
        close(y.grad, ty.grad, 2e-5)
        close(cm.in_proj_weight.grad, tm.in_proj_weight.grad, 2e-4)



@pytest.mark.parametrize("need_weights", [True, False])
def test_multihead_attention_masks_both_paths(need_weights):
    """the weights path and the fused path merge attn_mask and key_padding_mask alike, as torch does
    (a float key_padding_mask is added, not read as bool)"""
    tm, cm = torch.nn.MultiheadAttention(8, 2), ct.nn.MultiheadAttention(8, 2)
    copy_weights(cm, tm)
    (x, tx), (y, ty) = pair((3, 2, 8), np.float32, False), pair((4, 2, 8), np.float32, False)
    am_b = rs.rand(3, 4) > 0.7
    am_b[:, 0] = False
    kpm_b = rs.rand(2, 4) > 0.6
    kpm_b[:, 0] = False
    for am in (None, am_b, rs.randn(3, 4).astype(np.float32), rs.randn(4, 3, 4).astype(np.float32)):
        for kpm in (None, kpm_b, rs.randn(2, 4).astype(np.float32)):
            kw = {n: m for n, m in (("attn_mask", am), ("key_padding_mask", kpm)) if m is not None}
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")   # torch: mismatched mask types are deprecated
                to, tw = tm(tx, ty, ty, need_weights=need_weights, **{n: torch.tensor(m) for n, m in kw.items()})
            o, w = cm(x, y, y, need_weights=need_weights, **{n: ct.tensor(m) for n, m in kw.items()})
            close(o, to, 2e-5)
            if need_weights:
                close(w, tw, 2e-5)


@pytest.mark.parametrize("norm_first", [False, True])
def test_transformer_encoder_layer_matches_torch(norm_first):
    tl = torch.nn.TransformerEncoderLayer(32, 4, 64, dropout=0.0, activation="gelu", norm_first=norm_first,
                                          batch_first=True)
    cl = ct.nn.TransformerEncoderLayer(32, 4, 64, dropout=0.0, activation="gelu", norm_first=norm_first,
                                       batch_first=True)
    copy_weights(cl, tl)
    x, tx = pair((2, 9, 32), np.float32)
    mask = torch.nn.Transformer.generate_square_subsequent_mask(9)
    o = cl(x, src_mask=ct.tensor(mask.numpy()))
    to = tl(tx, src_mask=mask)
    close(o, to, 3e-5)
    o.square().sum().backward()
    to.square().sum().backward()
    close(x.grad, tx.grad, 2e-4)
    for (n, p), (_, tp) in zip(cl.named_parameters(), tl.named_parameters()):
        close(p.grad, tp.grad, 3e-4)


@pytest.mark.parametrize("need_weights", [False, True])
def test_multihead_self_attention_packed_projection(need_weights):
    """self-attention (query is key is value) projects with one GEMM: values and in_proj gradients as torch's"""
    tm, cm = torch.nn.MultiheadAttention(16, 2), ct.nn.MultiheadAttention(16, 2)
    copy_weights(cm, tm)
    x, tx = pair((5, 3, 16), np.float32)
    o, w = cm(x, x, x, need_weights=need_weights)
    to, tw = tm(tx, tx, tx, need_weights=need_weights)
    close(o, to, 2e-5)
    if need_weights:
        close(w, tw, 2e-5)
    o.sum().backward()
    to.sum().backward()
    close(x.grad, tx.grad, 2e-5)
    close(cm.in_proj_weight.grad, tm.in_proj_weight.grad, 2e-4)
    close(cm.in_proj_bias.grad, tm.in_proj_bias.grad, 2e-4)


def test_sdpa_kernel_choice():
    """sdpa_kernel(MATH) runs the composite (torch's math backend), FLASH_ATTENTION the fused kernel"""
    from cthtorch.nn.attention import SDPBackend, sdpa_kernel
    q, k, v = (ct.tensor(rs.randn(2, 2, 4, 8), requires_grad=True) for _ in range(3))
    with sdpa_kernel(SDPBackend.MATH):
        o = F.scaled_dot_product_attention(q, k, v)
    assert o.grad_fn.name() != "ScaledDotProductFlashAttentionForCpuBackward0"
    with sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
        f = F.scaled_dot_product_attention(q, k, v)
    assert f.grad_fn.name() == "ScaledDotProductFlashAttentionForCpuBackward0"
    np.testing.assert_allclose(o.detach().numpy(), f.detach().numpy(), atol=1e-12)
    assert F.scaled_dot_product_attention(q, k, v).grad_fn.name() == f.grad_fn.name()


def test_sdpa_fused_backward_checks_grad_shape():
    # a grad of the output's element count but another batch/head split is an error, not a read past its end
    q, k, v = ct.randn(2, 2, 4, 8), ct.randn(2, 2, 5, 8), ct.randn(2, 2, 5, 8)
    out, lse = ct._scaled_dot_product_fused_attention(q, k, v, None, 0.0, False, 0.3, 0)
    for g in (ct.randn(1, 4, 4, 8), ct.randn(4, 1, 4, 8)):
        with pytest.raises(RuntimeError, match="do not match"):
            ct._scaled_dot_product_fused_attention_backward(g, q, k, v, None, out, lse, 0.0, False, 0.3, 0)


def test_transformer_layers_take_factory_kwargs_and_bias_like_torch():
    torch = require_torch()
    for T in (ct, torch):
        T.manual_seed(0)
    for name in ("TransformerEncoderLayer", "TransformerDecoderLayer"):
        ours = getattr(ct.nn, name)(8, 2, 16, bias=False, dtype=ct.float64)
        theirs = getattr(torch.nn, name)(8, 2, 16, bias=False, dtype=torch.float64)
        assert sorted(ours.state_dict()) == sorted(theirs.state_dict())   # LayerNorms have no bias either
        assert {str(v.dtype) for v in ours.state_dict().values()} == {"torch.float64"}
    t = ct.nn.Transformer(8, 2, 1, 1, 16, bias=False, dtype=ct.float64)
    assert len(t.state_dict()) == len(torch.nn.Transformer(8, 2, 1, 1, 16, bias=False).state_dict())
    assert t.encoder.norm.weight.dtype == ct.float64 and t.encoder.norm.bias is None


@pytest.mark.parametrize("kw", [{}, {"batch_first": True}, {"batch_first": True, "norm_first": True},
                                {"batch_first": True, "bias": False}, {"batch_first": True, "activation": "tanh"},
                                {"batch_first": True, "nhead": 1}, {"batch_first": True, "activation": "gelu"}])
def test_transformer_encoder_fast_path_warning_and_flags_match_torch(kw):
    torch = require_torch()
    res = []
    for T in (ct, torch):
        k = dict({"d_model": 8, "nhead": 2}, **kw)
        if k.get("activation") == "tanh":
            k["activation"] = T.tanh
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            enc = T.nn.TransformerEncoder(T.nn.TransformerEncoderLayer(**k), 2)
        res.append(([str(x.message) for x in w], enc.use_nested_tensor, enc.enable_nested_tensor, enc.mask_check,
                    enc.layers[0].activation_relu_or_gelu))
    assert res[0] == res[1]


@pytest.mark.parametrize("need_weights", [False, True])
def test_functional_mha_separate_weights_for_self_attention(need_weights):
    """fairseq's MultiheadAttention calls F.multi_head_attention_forward with use_separate_proj_weight=True,
    torch.empty([0]) as in_proj_weight and the packed bias, query is key is value: the separate weights
    project (the empty packed weight was used and raised), with a bool key_padding_mask"""
    E, H = 8, 2
    ws = [rs.randn(E, E) * 0.3 for _ in range(4)]
    b = rs.randn(3 * E)
    xa = rs.randn(5, 3, E)
    kpm = np.zeros((3, 5), bool)
    kpm[1, 3:] = True
    res = []
    for lib, fn in ((ct, F), (torch, TF)):
        x = lib.tensor(xa, requires_grad=True)
        q, k, v, o = (lib.tensor(w, requires_grad=True) for w in ws)
        out, attn = fn.multi_head_attention_forward(
            x, x, x, E, H, lib.empty([0], dtype=lib.float64), lib.tensor(b), None, None, False, 0.0, o, None, training=False,
            key_padding_mask=lib.tensor(kpm), need_weights=need_weights, use_separate_proj_weight=True,
            q_proj_weight=q, k_proj_weight=k, v_proj_weight=v)
        out.square().sum().backward()
        res.append((out, attn, x.grad, q.grad, k.grad, v.grad))
    for a, t in zip(*res):
        if t is None:
            assert a is None
        else:
            close(a, t, 1e-10)


def test_functional_mha_separate_weights_missing():
    x, tx = pair((4, 2, 8), np.float32, grad=False)
    w, tw = pair((8, 8), np.float32, grad=False)
    raises_like(lambda: F.multi_head_attention_forward(x, x, x, 8, 2, None, None, None, None, False, 0.0, w, None,
                                                       use_separate_proj_weight=True, q_proj_weight=w),
                lambda: TF.multi_head_attention_forward(tx, tx, tx, 8, 2, None, None, None, None, False, 0.0, tw,
                                                        None, use_separate_proj_weight=True, q_proj_weight=tw))


@pytest.mark.parametrize("kw", [dict(add_bias_kv=True), dict(add_zero_attn=True),
                                dict(add_bias_kv=True, add_zero_attn=True, kdim=6, vdim=5, batch_first=True)])
@pytest.mark.parametrize("need_weights", [False, True])
def test_multihead_attention_bias_kv_and_zero_attn(kw, need_weights):
    """add_bias_kv appends a learned key/value (xavier_normal_, after out_proj's init, so seeded modules agree)
    and add_zero_attn a zero one; both masks gain an attended column. A bool key_padding_mask beside a float
    attn_mask: torch's deprecation warning. Values, weights and gradients (bias_k/bias_v included) vs torch"""
    res = []
    for lib in (ct, torch):
        lib.manual_seed(0)
        m = lib.nn.MultiheadAttention(8, 2, **kw)
        bf = kw.get("batch_first", False)
        x = lib.tensor(rs_fixed(1, (3, 5, 8) if bf else (5, 3, 8)), requires_grad=True)
        kv = x if "kdim" not in kw else lib.tensor(rs_fixed(2, (3, 4, 6))), lib.tensor(rs_fixed(3, (3, 4, 5)))
        k, v = (x, x) if "kdim" not in kw else kv
        S = k.shape[1] if bf else k.shape[0]
        kpm = lib.zeros(3, S, dtype=lib.bool)
        kpm[1, -2:] = True
        am = lib.zeros(5, S)
        am[0, 1] = float("-inf")
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            o, a = m(x, k, v, key_padding_mask=kpm, attn_mask=am, need_weights=need_weights)
        assert [str(x.message) for x in w] == ["Support for mismatched key_padding_mask and attn_mask is "
                                               "deprecated. Use same type for both instead."]
        o.square().sum().backward()
        grads = [p.grad for p in m.parameters()]
        res.append(([o, a, x.grad] if need_weights else [o, x.grad]) + grads + list(m.state_dict().values()))
        assert (m.bias_k is not None) == kw.get("add_bias_kv", False) and m.add_zero_attn == kw.get("add_zero_attn", False)
    assert len(res[0]) == len(res[1])
    for a, t in zip(*res):
        close(a, t, 2e-5)


def rs_fixed(seed, shape):
    return np.random.RandomState(seed).randn(*shape).astype(np.float32)


def test_functional_mha_bias_kv_and_zero_attn():
    """F.multi_head_attention_forward's bias_k/bias_v and add_zero_attn arguments, as torch's"""
    E = 8
    arrs = [rs_fixed(i, s) for i, s in enumerate([(6, 2, E), (3 * E, E), (3 * E,), (1, 1, E), (1, 1, E), (E, E)])]
    res = []
    for lib, fn in ((ct, F), (torch, TF)):
        x, w, b, bk, bv, ow = (lib.tensor(a, requires_grad=True) for a in arrs)
        out, attn = fn.multi_head_attention_forward(x, x, x, E, 2, w, b, bk, bv, True, 0.0, ow, None,
                                                    training=False, need_weights=True)
        out.sum().backward()
        res.append((out, attn, x.grad, w.grad, bk.grad, bv.grad))
    for a, t in zip(*res):
        close(a, t, 2e-5)


def test_canonical_mask_as_torch():
    """F._canonical_mask / F._none_or_dtype (called by code copied from torch's transformer modules): bool to an
    additive float mask, integer masks refused, the mismatch warning; TransformerEncoder gives the warning too"""
    m = np.array([[True, False], [False, False]])
    close(F._canonical_mask(ct.tensor(m), "m", None, "", ct.float64),
          TF._canonical_mask(torch.tensor(m), "m", None, "", torch.float64), 0)
    assert F._none_or_dtype(ct.ones(1, dtype=ct.float16)) == ct.float16 and F._none_or_dtype(None) is None
    raises_like(lambda: F._none_or_dtype(3), lambda: TF._none_or_dtype(3))
    raises_like(lambda: F._canonical_mask(ct.tensor([1]), "key_padding_mask", None, "", ct.float32),
                lambda: TF._canonical_mask(torch.tensor([1]), "key_padding_mask", None, "", torch.float32))
    mha, tmha = ct.nn.MultiheadAttention(8, 2), torch.nn.MultiheadAttention(8, 2)
    raises_like(lambda: mha(ct.ones(4, 2, 8), ct.ones(4, 2, 8), ct.ones(4, 2, 8), key_padding_mask=ct.zeros(2, 4).long()),
                lambda: tmha(torch.ones(4, 2, 8), torch.ones(4, 2, 8), torch.ones(4, 2, 8),
                             key_padding_mask=torch.zeros(2, 4).long()))
    msgs = []
    for lib in (ct, torch):
        lib.manual_seed(0)
        enc = lib.nn.TransformerEncoder(lib.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0), 2,
                                        enable_nested_tensor=False)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            enc(lib.ones(5, 3, 8), mask=lib.nn.Transformer.generate_square_subsequent_mask(5),
                src_key_padding_mask=lib.zeros(3, 5, dtype=lib.bool))
        msgs.append([str(x.message) for x in w])
    assert msgs[0] == msgs[1] == ["Support for mismatched src_key_padding_mask and mask is deprecated. Use same "
                                  "type for both instead."]
