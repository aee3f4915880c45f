"""cat/stack/split/gather/scatter/masks/advanced indexing vs torch, with gradients."""
import numpy as np
import pytest

import cthtorch as ct
import oracle

torch = oracle.require_torch()
X = np.arange(24.0).reshape(2, 3, 4)


def same(a, b):
    if isinstance(b, (tuple, list)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            same(x, y)
        return
    assert str(a.dtype) == str(b.dtype) and tuple(a.shape) == tuple(b.shape), (a.dtype, b.dtype, a.shape, b.shape)
    np.testing.assert_array_equal(np.asarray(a.tolist()), np.asarray(b.tolist()))


OPS = [
    lambda L, x: L.cat([x, x * 2], 1), lambda L, x: L.cat([x, L.tensor([])]), lambda L, x: L.stack([x, x], -1),
    lambda L, x: L.hstack([x[0], x[1]]), lambda L, x: L.vstack([x[0, 0], x[1, 0]]), lambda L, x: L.dstack([x[0], x[1]]),
    lambda L, x: x.split(2, 2), lambda L, x: x.split([1, 2], 1), lambda L, x: x.chunk(3, 2), lambda L, x: x.unbind(1),
    lambda L, x: L.tensor_split(x, 3, 2), lambda L, x: x.index_select(2, L.tensor([3, 0, 0])),
    lambda L, x: x.gather(2, L.tensor([[[0, 1], [2, 3], [1, 1]], [[3, 3], [0, 0], [2, 1]]])),
    lambda L, x: L.zeros(2, 3, 4, dtype=x.dtype).scatter(2, L.tensor([[[0], [1], [2]], [[3], [2], [1]]]), x),
    lambda L, x: L.zeros(2, 3, 4, dtype=x.dtype).scatter_add(2, L.tensor([[[0, 0], [1, 1], [2, 2]], [[3, 3], [2, 2], [1, 1]]]), x),
    lambda L, x: x.masked_fill(x > 10, -1.0), lambda L, x: x.masked_select(x > 15), lambda L, x: (x > 20).nonzero(),
    lambda L, x: L.nonzero(x > 20, as_tuple=True), lambda L, x: x.flip(0, 2) if False else x.flip([0, 2]),
    lambda L, x: x.roll(1, 2), lambda L, x: x.roll((1, -1), (0, 1)), lambda L, x: x.repeat(2, 1, 1),
    lambda L, x: x.tile((2,)), lambda L, x: x.tile(2, 1, 1), lambda L, x: L.tile(x, dims=(1, 2)), lambda L, x: x.repeat_interleave(2, 1), lambda L, x: L.rot90(x[0], 1, (0, 1)),
    lambda L, x: x[L.tensor([1, 0])], lambda L, x: x[:, [0, 2]], lambda L, x: x[..., L.tensor([True, False, True, False])],
    lambda L, x: x[[0, 1], :, [1, 2]], lambda L, x: x[:, L.tensor([[0, 1], [2, 2]])], lambda L, x: x[x > 12],
    lambda L, x: L.where(x > 5), lambda L, x: L.broadcast_tensors(x, x[0, 0]), lambda L, x: x.take(L.tensor([0, 23])),
    lambda L, x: L.searchsorted(L.tensor([1.0, 5.0, 9.0]), L.tensor([0.0, 5.0, 10.0])),
    lambda L, x: L.unique(L.tensor([3, 1, 3, 2]), return_inverse=True, return_counts=True),
    lambda L, x: L.bincount(L.tensor([0, 2, 2, 5])), lambda L, x: L.meshgrid(L.arange(3), L.arange(2), indexing="xy"),
]


@pytest.mark.parametrize("k", range(len(OPS)))
def test_values(k):
    same(OPS[k](ct, ct.tensor(X)), OPS[k](torch, torch.tensor(X)))


GRADS = [0, 2, 6, 7, 11, 12, 15, 19, 20, 22, 24, 26, 27, 28, 29, 30, 31]


@pytest.mark.parametrize("k", GRADS)
def test_gradients(k):
    gs = []
    for L in (ct, torch):
        x = L.tensor(X, requires_grad=True)
        out = OPS[k](L, x)
        outs = out if isinstance(out, tuple) else (out,)
        total = sum((o * o).sum() for o in outs if o.is_floating_point())
        total.backward()
        gs.append(np.asarray(x.grad.tolist()))
    np.testing.assert_allclose(gs[0], gs[1])


def test_setitem_advanced_and_errors():
    for L in (ct, torch):
        x = L.zeros(3, 4)
        x[L.tensor([0, 2]), 1] = L.tensor([5.0, 6.0])
        x[x == 0] = -1
        if L is ct:
            got = x.tolist()
        else:
            assert got == x.tolist()
    with pytest.raises(IndexError, match="index 5 is out of bounds for dimension 0 with size 3"):
        ct.zeros(3)[ct.tensor([5])]
    with pytest.raises(RuntimeError, match="Sizes of tensors must match except in dimension 0"):
        ct.cat([ct.zeros(2, 3), ct.zeros(2, 4)])
    with pytest.raises(RuntimeError, match="Tensors must have same number of dimensions"):
        ct.cat([ct.zeros(2, 3), ct.zeros(2)])
    with pytest.raises(RuntimeError, match="stack expects each tensor to be equal size"):
        ct.stack([ct.zeros(2), ct.zeros(3)])


def test_scatter_gradients():
    idx = np.array([[[0], [1], [2]], [[3], [2], [1]]])
    src = np.arange(6.0).reshape(2, 3, 1)
    gs = []
    for L in (ct, torch):
        base = L.tensor(X, requires_grad=True)
        s = L.tensor(src, requires_grad=True)
        out = base.scatter(2, L.tensor(idx), s) + base.scatter_add(2, L.tensor(idx), s) * 2
        (out * out).sum().backward()
        gs.append((np.asarray(base.grad.tolist()), np.asarray(s.grad.tolist())))
    np.testing.assert_allclose(gs[0][0], gs[1][0])
    np.testing.assert_allclose(gs[0][1], gs[1][1])


@pytest.mark.parametrize("reps", [(2, 1, 1, 1), (1, 1, 1), (1, 1, 1, 1), (2, 1, 1), (1, 3, 1)])
def test_repeat_returns_new_memory_like_torch(reps):
    # pytorch/examples fast_neural_style does style.repeat(b, 1, 1, 1) and then div_ on it
    torch = oracle.require_torch()
    x = ct.rand(3, 4, 5, requires_grad=True)
    y = x.repeat(*reps)
    t = torch.from_numpy(x.detach().numpy()).repeat(*reps)
    assert y.stride() == t.stride() and y.data_ptr() != x.data_ptr()
    before = x.detach().clone()
    z = y.detach().div_(2)   # an in-place op writes the copy only
    assert ct.equal(x.detach(), before)
    np.testing.assert_allclose(z.numpy(), t.numpy() / 2, rtol=1e-6)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.full((3, 4, 5), float(np.prod(reps))), rtol=1e-6)


def test_onnx_operators_shape_helpers():
    """torch.onnx.operators (fairseq's SinusoidalPositionalEmbedding calls shape_as_tensor):
    torch._shape_as_tensor gives int64 sizes, torch._reshape_from_tensor views by them, with torch's errors"""
    import cthtorch.onnx.operators as ops
    import torch.onnx.operators as tops
    for shape in [(2, 3), (), (0, 4, 1)]:
        same(ops.shape_as_tensor(ct.ones(shape)), tops.shape_as_tensor(torch.ones(shape)))
    x, tx = ct.tensor(X, requires_grad=True), torch.tensor(X, requires_grad=True)
    r, tr = ops.reshape_from_tensor_shape(x, ct.tensor([4, 6])), tops.reshape_from_tensor_shape(tx, torch.tensor([4, 6]))
    same(r, tr)
    (r * ct.arange(24.).view(4, 6)).sum().backward()
    (tr * torch.arange(24.).view(4, 6)).sum().backward()
    same(x.grad, tx.grad)
    assert ct._reshape_from_tensor is ops.reshape_from_tensor_shape
    for bad in ([[4, 6]], [4., 6.], [4, 5]):
        oracle.raises_like(lambda: ct._reshape_from_tensor(x, ct.tensor(bad)),
                           lambda: torch._reshape_from_tensor(tx, torch.tensor(bad)))
    oracle.raises_like(lambda: ct._reshape_from_tensor(x, ct.tensor([4, 6], dtype=ct.int32)),
                       lambda: torch._reshape_from_tensor(tx, torch.tensor([4, 6], dtype=torch.int32)))
    oracle.raises_like(lambda: ct._reshape_from_tensor(x, [4, 6]), lambda: torch._reshape_from_tensor(tx, [4, 6]))
