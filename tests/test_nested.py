"""torch.nested (the strided layout) against torch: construction, printing, sizes, unbind, to_padded_tensor,
per-component ops, gradients through the components, and the errors for irregular sizes and missing kernels."""
import warnings

import numpy as np
import pytest

import cthtorch as ct
import oracle

torch = oracle.require_torch()
pytestmark = pytest.mark.filterwarnings("ignore:The PyTorch API of nested tensors")

RS = np.random.RandomState(0)
A, B, C = RS.randn(2, 3).astype(np.float32), RS.randn(4, 3).astype(np.float32), RS.randn(1, 3).astype(np.float32)


def nt(L, arrays=(A, B, C), **kw):
    return L.nested.nested_tensor([L.tensor(a) for a in arrays], **kw)


def padded(x):
    return x.to_padded_tensor(0.0) if x.is_nested else x


def test_construct_print_and_sizes():
    for mk in (lambda L: nt(L), lambda L: L.nested.nested_tensor([[1, 2], [3]]),
               lambda L: L.nested.as_nested_tensor(L.arange(6).reshape(2, 3)),
               lambda L: nt(L, dtype=L.float64), lambda L: nt(L, requires_grad=True),
               lambda L: L.nested.nested_tensor([L.tensor([1, 2]), L.tensor([1.5])])):
        c, t = mk(ct), mk(torch)
        assert repr(c) == repr(t)
        assert (c.dim(), str(c.dtype), c.is_nested, c.requires_grad, c.is_leaf, c.numel()) == \
               (t.dim(), str(t.dtype), t.is_nested, t.requires_grad, t.is_leaf, t.numel())
        assert isinstance(c, ct.Tensor) and ct.is_tensor(c) and c.layout == ct.strided
    c, t = nt(ct), nt(torch)
    assert (c.size(0), c.size(2), c.size(-1)) == (t.size(0), t.size(2), t.size(-1))
    for f in (lambda x: x.size(1), lambda x: x.size(), lambda x: x.shape, lambda x: x.size(3),
              lambda x: x.unbind(1), lambda x: x.transpose(0, 1), lambda x: x.softmax(0), lambda x: x + x[0],
              lambda x: x.to_padded_tensor(0, (3, 1, 1)), lambda x: x.narrow(1, 0, 1)):
        oracle.raises_like(lambda: f(c), lambda: f(t))
    oracle.raises_like(lambda: c + nt(ct, (A, A, A)), lambda: t + nt(torch, (A, A, A)))


def test_bad_construction():
    for f in (lambda L: L.nested.nested_tensor([L.ones(2), L.ones(2, 2)]),
              lambda L: L.nested.nested_tensor(L.ones(2, 2))):
        oracle.raises_like(lambda: f(ct), lambda: f(torch))
    with pytest.raises(NotImplementedError, match="jagged"):
        ct.nested.nested_tensor([ct.ones(2)], layout=ct.jagged)


def test_unbind_index_and_padding():
    c, t = nt(ct), nt(torch)
    for x, y in zip(c.unbind(), t.unbind()):
        oracle.same(x, y)
    oracle.same(c[1], t[1])
    oracle.same(c[2, 0], t[2, 0])
    for args in ((-1.0,), (0, (3, 5, 4)), (2.5, [4, 4, 3])):
        oracle.same(ct.nested.to_padded_tensor(c, *args), torch.nested.to_padded_tensor(t, *args))
        oracle.same(c.to_padded_tensor(*args), t.to_padded_tensor(*args))
    oracle.same(ct.nested.narrow(ct.arange(12).reshape(3, 4), 0, 1, 2).unbind(),
                torch.nested.narrow(torch.arange(12).reshape(3, 4), 0, 1, 2).unbind())


OPS = [
    lambda L, x: x.relu(), lambda L, x: L.relu(x), lambda L, x: L.nn.functional.gelu(x), lambda L, x: L.tanh(x),
    lambda L, x: x * 2 + 1, lambda L, x: x / x.abs().add(1), lambda L, x: x - x.abs(), lambda L, x: L.add(x, x),
    lambda L, x: x.softmax(-1), lambda L, x: L.nn.functional.softmax(x, dim=1),
    lambda L, x: x.transpose(1, 2).contiguous(), lambda L, x: L.matmul(x, x.transpose(1, 2)),
    lambda L, x: L.bmm(x, x.transpose(1, 2)),
    lambda L, x: L.nn.functional.linear(x, L.ones(5, 3) * 0.5, L.arange(5.0)),
    lambda L, x: x.to(L.float64), lambda L, x: x.double().clone().detach(), lambda L, x: x > 0,
    lambda L, x: L.nn.functional.dropout(x, 0.5, training=False),
]


@pytest.mark.parametrize("k", range(len(OPS)))
def test_ops_match_torch(k):
    c, t = OPS[k](ct, nt(ct)), OPS[k](torch, nt(torch))
    assert c.is_nested == t.is_nested
    oracle.same(padded(c), padded(t), tol=1e-5)


def test_ops_without_a_nested_kernel_raise():
    for f in (lambda L, x: x.sum(), lambda L, x: L.cumsum(x, 1), lambda L, x: L.ones(3) + x,
              lambda L, x: L.matmul(x, L.ones(3, 2)), lambda L, x: x + L.ones(3)):
        with pytest.raises(Exception) as et:
            f(torch, nt(torch))
        with pytest.raises(Exception) as ec:
            f(ct, nt(ct))
        assert type(ec.value) is type(et.value)


def test_gradients_reach_the_components():
    for L in (ct, torch):
        a = L.tensor(A, requires_grad=True)
        b = L.tensor(C, requires_grad=True)
        x = L.nested.as_nested_tensor([a, b])
        assert x.requires_grad and not x.is_leaf
        L.nn.functional.linear(x, L.ones(2, 3) * 0.3).relu().to_padded_tensor(0.0).pow(2).sum().backward()
        if L is ct:
            ga, gb = a.grad, b.grad
    oracle.same(ga, a.grad, tol=1e-5)
    oracle.same(gb, b.grad, tol=1e-5)
    # a leaf nested tensor collects its gradient as a nested tensor
    c, t = nt(ct, requires_grad=True), nt(torch, requires_grad=True)
    (c * 3).relu().to_padded_tensor(0.0).sum().backward()
    (t * 3).relu().to_padded_tensor(0.0).sum().backward()
    assert c.grad.is_nested
    oracle.same(c.grad.to_padded_tensor(0.0), t.grad.to_padded_tensor(0.0))
    assert nt(ct).grad is None and nt(torch).grad is None


def test_inplace_and_unbind_share_components():
    c, t = nt(ct), nt(torch)
    c.mul_(2)
    t.mul_(2)
    oracle.same(c.to_padded_tensor(0), t.to_padded_tensor(0))
    assert c.unbind()[0].data_ptr() == c.unbind()[0].data_ptr()


def _recorder():
    """(texts, attempt): attempt(m, *args, **kw) calls m without weights and keeps the AssertionError's text"""
    texts = []

    def attempt(m, *args, **kw):
        try:
            m(*args, need_weights=False, **kw)
        except AssertionError as e:
            texts.append(str(e))
    return texts, attempt


def _mha_nested_refusals(L):
    """nn.MultiheadAttention takes nested inputs only on torch's inference fast path: every other call raises
    torch's AssertionError naming the first reason (in torch's order), torch.backends.mha's switch included"""
    L.manual_seed(0)
    q = nt(L, (RS.randn(3, 8).astype(np.float32), RS.randn(5, 8).astype(np.float32)))
    texts, attempt = _recorder()

    for kw, train in [({}, True), ({"batch_first": True}, False), ({"batch_first": True}, True), ({}, False)]:
        m = L.nn.MultiheadAttention(8, 2, **kw).train(train)
        attempt(m, q, q, q)
        attempt(m, q, q.clone(), q)
    m = L.nn.MultiheadAttention(8, 2, batch_first=True).eval()
    with L.no_grad():
        attempt(m, q, q, q, key_padding_mask=L.zeros(2, 5, dtype=L.bool))
        q6 = L.nested.nested_tensor([L.ones(2, 6), L.ones(3, 6)])
        attempt(L.nn.MultiheadAttention(6, 3, batch_first=True).eval(), q6, q6, q6)
        L.backends.mha.set_fastpath_enabled(False)
        try:
            attempt(m, q, q, q)
            texts.append(L.backends.mha.get_fastpath_enabled())
        finally:
            L.backends.mha.set_fastpath_enabled(True)
    return texts


def test_multihead_attention_refuses_nested_inputs_as_torch():
    ours, ref = _mha_nested_refusals(ct), _mha_nested_refusals(torch)
    assert len(ref) == 12 and ours == ref


def _mha_nested_later_reasons(L):
    """torch's reasons past batch_first (a learned bias key/value, the zero key), a floating-point mask, which
    every later reason overrides, and an integer mask, refused by the mask canonicalisation that comes first"""
    q = nt(L, (RS.randn(3, 8).astype(np.float32), RS.randn(5, 8).astype(np.float32)))
    texts, attempt = _recorder()

    with L.no_grad():
        for kw in ({"add_bias_kv": True}, {"add_zero_attn": True}):
            attempt(L.nn.MultiheadAttention(8, 2, batch_first=True, **kw).eval(), q, q, q)
        m = L.nn.MultiheadAttention(8, 2, batch_first=True)
        attempt(m.train(), q, q, q, key_padding_mask=L.zeros(2, 5))
        attempt(m.eval(), q, q, q, attn_mask=L.zeros(5, 5))
        attempt(m, q, q, q, key_padding_mask=L.zeros(2, 5, dtype=L.int64))
    return texts


def test_multihead_attention_nested_reasons_in_torchs_order():
    ours, ref = _mha_nested_later_reasons(ct), _mha_nested_later_reasons(torch)
    assert len(ref) == 5 and ours == ref


def test_multihead_attention_fast_path_on_nested_inputs_is_not_implemented():
    """where torch would run its fused inference kernel on nested inputs, cthtorch says it has none"""
    q = ct.nested.nested_tensor([ct.ones(2, 4), ct.ones(3, 4)])
    m = ct.nn.MultiheadAttention(4, 2, batch_first=True).eval()
    with ct.no_grad(), pytest.raises(NotImplementedError, match="nested tensors"):
        m(q, q, q, need_weights=False)


def test_prototype_warning_once_per_process_as_torch():
    """the first strided nested tensor of a process warns that the API is a prototype (torch's TORCH_WARN_ONCE
    in NestedTensorImpl); later ones do not"""
    code = """
import importlib, sys, warnings
L = importlib.import_module(sys.argv[1])
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter('always')
    a = L.nested.nested_tensor([L.ones(2, 3), L.ones(1, 3)])
    b = L.nested.as_nested_tensor([L.ones(2, 3)])
    c = a + 1
print(len(w), [(x.category.__name__, str(x.message).split(' (Triggered')[0]) for x in w])
"""
    ours, ref = oracle.fresh_process_outputs(code)
    assert ours == ref and ref.startswith("1 [('UserWarning', 'The PyTorch API of nested tensors is in prototype")
