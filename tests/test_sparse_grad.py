"""Sparse COO gradients against PyTorch: nn.Embedding(sparse=True) and
F.embedding(sparse=True) give the weight torch's uncoalesced COO gradient,
gradients accumulate as torch's AccumulateGrad sums them (sparse + sparse
keeps torch's merged entry order, dense + sparse is dense), the C coalesce
and merge kernels (src/ATen/ATSparse.c) agree with torch, and SGD (with
momentum), Adagrad and SparseAdam follow torch's trajectories on sparse
gradients."""
import numpy as np
import pytest

import cthtorch as ct
import oracle

torch = oracle.require_torch()
pytestmark = [pytest.mark.filterwarnings("ignore:Sparse invariant checks"),
              pytest.mark.filterwarnings("ignore:Using backward() with create_graph=True")]


def _np(x):
    return x.detach().numpy()


def _same_sparse(a, b, tol=0):
    """Same layout, size, entry order and values (a from cthtorch, b from torch)."""
    assert a.is_sparse and b.is_sparse
    assert a.layout == ct.sparse_coo
    assert tuple(a.shape) == tuple(b.shape) and a._nnz() == b._nnz()
    assert a.is_coalesced() == b.is_coalesced()
    np.testing.assert_array_equal(_np(a._indices()), _np(b._indices()))
    np.testing.assert_allclose(_np(a._values()), _np(b._values()), rtol=tol, atol=tol)


def _embeddings(padding_idx=None, n=10, d=3):
    w = np.random.RandomState(0).randn(n, d).astype(np.float32)
    return [L.nn.Embedding(n, d, sparse=True, padding_idx=padding_idx, _weight=L.tensor(w)) for L in (ct, torch)]


@pytest.mark.parametrize("padding_idx", [None, 2, -1])
def test_embedding_sparse_grad_matches_torch(padding_idx):
    embs = _embeddings(padding_idx)
    idx = [[1, 2, 4], [4, 3, 9]]
    for e, L in zip(embs, (ct, torch)):
        (e(L.tensor(idx)) * L.arange(6.).view(2, 3, 1)).sum().backward()
    _same_sparse(embs[0].weight.grad, embs[1].weight.grad)
    assert embs[0].weight.grad.grad_fn is None
    assert str(embs[0].weight.grad) == str(embs[1].weight.grad)
    np.testing.assert_allclose(_np(embs[0].weight.grad.to_dense()), _np(embs[1].weight.grad.to_dense()))


def test_embedding_sparse_grad_fn_name_and_functional():
    w = [L.randn(5, 2, requires_grad=True) for L in (ct, torch)]
    outs = [L.nn.functional.embedding(L.tensor([0, 3, 3]), x, sparse=True) for L, x in zip((ct, torch), w)]
    assert type(outs[0].grad_fn).__name__ == type(outs[1].grad_fn).__name__ == "EmbeddingBackward0"
    for o in outs:
        o.sum().backward()
    _same_sparse(w[0].grad, w[1].grad)


@pytest.mark.parametrize("call", [
    lambda L, w, i: L.embedding(w, i, -1, False, True),
    lambda L, w, i: L.embedding(w, i, sparse=True),
    lambda L, w, i: L.embedding(w, i, 3, False, True),        # padding_idx's entries are left out
    lambda L, w, i: L.embedding(w, i, padding_idx=-2, sparse=True),
])
def test_torch_embedding_called_directly_gives_sparse_grad(call):
    w = np.random.RandomState(0).randn(5, 2).astype(np.float32)
    grads = []
    for L in (ct, torch):
        weight = L.tensor(w, requires_grad=True)
        out = call(L, weight, L.tensor([[0, 3], [3, 1]]))
        assert type(out.grad_fn).__name__ == "EmbeddingBackward0"
        (out * L.arange(8.).view(2, 2, 2)).sum().backward()
        grads.append(weight.grad)
    _same_sparse(grads[0], grads[1])
    with ct.no_grad():   # nothing recorded: the plain lookup
        np.testing.assert_array_equal(_np(call(ct, ct.tensor(w, requires_grad=True), ct.tensor([1]))), w[[1]])


def test_torch_embedding_bag_called_directly_gives_sparse_grad():
    w = np.random.RandomState(0).randn(6, 2).astype(np.float32)
    res = []
    for L in (ct, torch):
        weight = L.tensor(w, requires_grad=True)
        outs = L.embedding_bag(weight, L.tensor([1, 2, 4, 4, 3]), L.tensor([0, 2]), False, 1, True)
        assert len(outs) == 4 and [o.requires_grad for o in outs] == [True, False, False, False]
        (outs[0] * L.arange(4.).view(2, 2)).sum().backward()
        res.append((weight.grad, outs))
    _same_sparse(res[0][0], res[1][0], tol=1e-6)
    for a, b in zip(res[0][1][1:], res[1][1][1:]):
        assert a.dtype == ct.int64 and b.dtype == torch.int64
        np.testing.assert_array_equal(_np(a), _np(b))


def test_sparse_grads_accumulate_as_torch():
    embs = _embeddings(padding_idx=2)
    for e, L in zip(embs, (ct, torch)):
        e(L.tensor([[1, 2, 4], [4, 3, 9]])).sum().backward()
        first = e.weight.grad
        e(L.tensor([5, 1])).pow(2).sum().backward()
        assert e.weight.grad is first   # in place, as torch's AccumulateGrad
    _same_sparse(embs[0].weight.grad, embs[1].weight.grad, tol=1e-6)
    assert str(embs[0].weight.grad) == str(embs[1].weight.grad)
    _same_sparse(embs[0].weight.grad.coalesce(), embs[1].weight.grad.coalesce(), tol=1e-6)


def test_dense_and_sparse_grads_sum_to_dense():
    # tied use: one dense and one sparse path into the same weight
    grads = []
    for L in (ct, torch):
        w = L.tensor(np.arange(12, dtype=np.float32).reshape(4, 3), requires_grad=True)
        out = L.nn.functional.embedding(L.tensor([1, 1, 3]), w, sparse=True).sum() + (w * w).sum()
        out.backward()
        assert not w.grad.is_sparse
        # a second backward: dense .grad += sparse gradient
        L.nn.functional.embedding(L.tensor([0, 1]), w, sparse=True).sum().backward()
        grads.append(w.grad)
    np.testing.assert_allclose(_np(grads[0]), _np(grads[1]))


def test_sparse_then_dense_grad_gives_dense():
    grads = []
    for L in (ct, torch):
        w = L.ones(4, 2, requires_grad=True)
        L.nn.functional.embedding(L.tensor([2, 0]), w, sparse=True).sum().backward()
        (w * 3).sum().backward()
        grads.append(w.grad)
    assert not grads[0].is_sparse
    np.testing.assert_allclose(_np(grads[0]), _np(grads[1]))


def test_autograd_grad_returns_sparse():
    gs = []
    for L in (ct, torch):
        w = L.ones(6, 2, requires_grad=True)
        out = L.nn.functional.embedding(L.tensor([[5, 0], [5, 5]]), w, sparse=True).sum()
        gs.append(L.autograd.grad(out, w)[0])
    _same_sparse(*gs)


def test_scale_grad_by_freq_with_sparse_raises_torch_error():
    msgs = []
    for L in (ct, torch):
        e = L.nn.Embedding(5, 2, sparse=True, scale_grad_by_freq=True)
        with pytest.raises(RuntimeError) as err:
            e(L.tensor([1, 1])).sum().backward()
        msgs.append(str(err.value))
    assert msgs[0] == msgs[1]


def test_grad_setter_takes_sparse_and_checks_it():
    for L in (ct, torch):
        msgs = []
        for g in (L.zeros(4, 2), L.zeros(3, 2, dtype=L.float64)):
            with pytest.raises(RuntimeError) as err:
                L.zeros(3, 2, requires_grad=True).grad = g
            msgs.append(str(err.value))
        if L is ct:
            ours = msgs
    assert ours == msgs
    for L in (ct, torch):
        w = L.zeros(3, 2, requires_grad=True)
        s = L.sparse_coo_tensor([[0, 2]], L.ones(2, 2), (3, 2))
        w.grad = s
        assert w.grad.is_sparse
        with pytest.raises(RuntimeError, match="same size"):
            w.grad = L.sparse_coo_tensor([[0]], L.ones(1, 2), (4, 2))
        with pytest.raises(RuntimeError, match="must match the tensor.s grad_dtype"):
            w.grad = L.sparse_coo_tensor([[0]], L.ones(1, 2, dtype=L.float64), (3, 2))


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_c_coalesce_and_add_match_torch(dtype):
    rs = np.random.RandomState(1)
    ia, ib = rs.randint(0, 4, (2, 9)), rs.randint(0, 4, (2, 7))
    va, vb = (rs.randint(-5, 5, (n, 3)) for n in (9, 7))
    out = []
    for L in (ct, torch):
        dt = getattr(L, dtype)
        a = L.sparse_coo_tensor(L.tensor(ia), L.tensor(va, dtype=dt), (4, 4, 3))
        b = L.sparse_coo_tensor(L.tensor(ib), L.tensor(vb, dtype=dt), (4, 4, 3))
        out.append((a.coalesce(), a + b, a.coalesce() + b.coalesce(), L.sparse_coo_tensor(L.tensor(ib), L.tensor(vb, dtype=dt), (4, 4, 3)).add_(a, alpha=2)))
    for x, y in zip(*out):
        _same_sparse(x, y)


def test_dense_add_sparse_in_place():
    out = []
    for L in (ct, torch):
        d = L.ones(5, 2)
        s = L.sparse_coo_tensor([[4, 0, 4]], L.tensor([[1., 2.], [3., 4.], [5., 6.]]), (5, 2))
        d.add_(s, alpha=-0.5)
        d.sub_(s)
        out.append(d)
    np.testing.assert_array_equal(_np(out[0]), _np(out[1]))


def test_sparse_mask_and_zero_grad_in_place():
    for L in (ct, torch):
        d = L.arange(10.).view(5, 2)
        m = L.sparse_coo_tensor([[1, 3]], L.ones(2, 2), (5, 2)).coalesce()
        r = d.sparse_mask(m)
        assert r.is_sparse and r._nnz() == 2
        np.testing.assert_array_equal(_np(r.to_dense()), [[0, 0], [2, 3], [0, 0], [6, 7], [0, 0]])
    embs = _embeddings()
    for e, L in zip(embs, (ct, torch)):
        opt = L.optim.SGD(e.parameters(), lr=0.1)
        e(L.tensor([1, 2])).sum().backward()
        opt.zero_grad(set_to_none=False)
        assert e.weight.grad.is_sparse and e.weight.grad._nnz() == 0


def _train(L, opt_name, kw, steps=6, padding_idx=None):
    w = np.random.RandomState(3).randn(20, 4).astype(np.float32)
    e = L.nn.Embedding(20, 4, sparse=True, padding_idx=padding_idx, _weight=L.tensor(w))
    lin_w = L.tensor(np.random.RandomState(4).randn(4).astype(np.float32))
    opt = getattr(L.optim, opt_name)(e.parameters(), **kw)
    rs = np.random.RandomState(5)
    losses = []
    for _ in range(steps):
        idx = L.tensor(rs.randint(0, 20, (8, 5)))
        opt.zero_grad()
        loss = ((e(idx) * lin_w).sum(-1) ** 2).mean()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses, _np(e.weight)


@pytest.mark.parametrize("opt_name,kw", [
    ("SGD", {"lr": 0.1}),
    ("SGD", {"lr": 0.1, "momentum": 0.9}),
    ("SGD", {"lr": 0.1, "momentum": 0.9, "nesterov": True, "maximize": True}),
    ("Adagrad", {"lr": 0.1}),
    ("Adagrad", {"lr": 0.1, "lr_decay": 0.01}),
    ("SparseAdam", {"lr": 0.05}),
    ("SparseAdam", {"lr": 0.05, "betas": (0.8, 0.9), "maximize": True}),
])
def test_optimizer_trajectories_match_torch(opt_name, kw):
    ours, theirs = _train(ct, opt_name, kw), _train(torch, opt_name, kw)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-5)
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-5, atol=1e-6)


def test_optimizer_errors_on_sparse_grads_match_torch():
    cases = [("SGD", {"lr": 0.1, "weight_decay": 0.1}), ("Adagrad", {"weight_decay": 0.1})]
    cases += [(n, {}) for n in ("Adam", "AdamW", "RMSprop", "Adadelta", "Adamax", "NAdam", "RAdam", "ASGD", "Rprop")]
    for opt_name, kw in cases:
        msgs = []
        for L in (ct, torch):
            e = L.nn.Embedding(5, 2, sparse=True)
            opt = getattr(L.optim, opt_name)(e.parameters(), **kw)
            e(L.tensor([1, 3])).sum().backward()
            with pytest.raises(RuntimeError) as err:
                opt.step()
            msgs.append(str(err.value))
        assert msgs[0] == msgs[1], opt_name
    for L in (ct, torch):
        with pytest.raises(ValueError, match="Invalid learning rate: 0"):
            L.optim.SparseAdam([L.zeros(2, requires_grad=True)], lr=0)


@pytest.mark.parametrize("mode,kw", [("sum", {}), ("mean", {}), ("sum", {"padding_idx": 2}),
                                     ("mean", {"padding_idx": 2, "include_last_offset": True}),
                                     ("sum", {"per_sample_weights": True, "padding_idx": 2})])
def test_embedding_bag_sparse_grad_matches_torch(mode, kw):
    w = np.random.RandomState(0).randn(10, 3).astype(np.float32)
    psw = np.random.RandomState(1).rand(7).astype(np.float32)
    res = []
    for L in (ct, torch):
        weight = L.tensor(w, requires_grad=True)
        args = dict(kw)
        p = None
        if args.pop("per_sample_weights", False):
            p = args["per_sample_weights"] = L.tensor(psw, requires_grad=True)
        out = L.nn.functional.embedding_bag(L.tensor([1, 2, 4, 4, 3, 9, 2]), weight, L.tensor([0, 2, 2, 5]),
                                            mode=mode, sparse=True, **args)
        assert type(out.grad_fn).__name__ == "EmbeddingBagBackward0"
        (out * L.arange(float(out.numel())).view(out.shape)).sum().backward()
        res.append((weight.grad, p))
    _same_sparse(res[0][0], res[1][0], tol=1e-6)
    if res[0][1] is not None:
        np.testing.assert_allclose(_np(res[0][1].grad), _np(res[1][1].grad), rtol=1e-5, atol=1e-6)


def test_sparse_grad_through_a_formula_node_has_torch_values():
    # torch keeps the gradient sparse through MulBackward; cthtorch's C formulas
    # take it dense (same values, dense layout)
    grads = []
    for L in (ct, torch):
        base = L.ones(5, 2, requires_grad=True)
        L.nn.functional.embedding(L.tensor([1, 1, 3]), base * 2, sparse=True).sum().backward()
        grads.append(base.grad.to_dense() if base.grad.is_sparse else base.grad)
    np.testing.assert_array_equal(_np(grads[0]), _np(grads[1]))


def test_hooks_see_the_sparse_grad_and_create_graph_keeps_it():
    for L in (ct, torch):
        w = L.ones(5, 2, requires_grad=True)
        seen = []
        w.register_hook(lambda g: seen.append(g.is_sparse))
        L.nn.functional.embedding(L.tensor([1, 3]), w, sparse=True).sum().backward()
        assert seen == [True]
        w.grad = None
        L.nn.functional.embedding(L.tensor([1, 3]), w, sparse=True).pow(2).sum().backward(create_graph=True)
        assert w.grad.is_sparse and w.grad._nnz() == 2
