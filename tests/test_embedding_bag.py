"""embedding_bag in C (src/ATen/ATEmbedding.c, declarations/embedding.yaml)
vs torch: torch.embedding_bag's four outputs, nn.functional.embedding_bag and
nn.EmbeddingBag over modes, offsets, include_last_offset, per_sample_weights,
padding_idx, 2-D input and dtypes; gradients of weight and per_sample_weights;
errors."""
import numpy as np
import pytest

import cthtorch as ct
import oracle

torch = oracle.require_torch()
RS = np.random.RandomState(0)
IDX = [1, 2, 4, 5, 4, 3, 2, 0, 5, 5]
OFFS = [0, 2, 2, 5, 9]      # an empty bag and a bag of one


def run_both(W, idx, offs, *args, psw=None, dtype="float64", idt="int64", grad=True):
    out = []
    for L in (ct, torch):
        w = L.tensor(W).to(getattr(L, dtype)).requires_grad_(grad)
        p = None if psw is None else L.tensor(psw).to(getattr(L, dtype)).requires_grad_(grad)
        r = L.embedding_bag(w, L.tensor(idx, dtype=getattr(L, idt)), L.tensor(offs, dtype=getattr(L, idt)), *args[:3],
                            p, *args[3:])
        out.append((w, p, r))
    return out


@pytest.mark.parametrize("mode", [0, 1, 2])
@pytest.mark.parametrize("pad", [None, 2, -1])
@pytest.mark.parametrize("psw", [False, True])
def test_embedding_bag_outputs_and_grads(mode, pad, psw):
    if psw and mode != 0:
        return
    W = RS.randn(6, 3)
    weights = RS.rand(len(IDX)) if psw else None
    (cw, cp, cr), (tw, tp, tr) = run_both(W, IDX, OFFS, False, mode, False, False, pad, psw=weights)
    assert len(cr) == 4
    for a, b in zip(cr, tr):
        oracle.same(a, b, 1e-12)
    assert type(cr[0].grad_fn).__name__ == type(tr[0].grad_fn).__name__ == "EmbeddingBagBackward0"
    g = RS.randn(*tr[0].shape)
    cr[0].backward(ct.tensor(g)), tr[0].backward(torch.tensor(g))
    oracle.same(cw.grad, tw.grad, 1e-12)
    if psw:
        oracle.same(cp.grad, tp.grad, 1e-12)


@pytest.mark.parametrize("D", [32, 64, 70, 130])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("mode", [0, 1])
@pytest.mark.parametrize("pad", [None, 2])
@pytest.mark.parametrize("psw", [False, True])
def test_embedding_bag_wide_rows(D, dtype, mode, pad, psw):
    """rows wide enough for the sum kernel's register blocks (32 doubles or 64 floats) and a tail"""
    if psw and mode != 0:
        return
    W = RS.randn(6, D)
    weights = RS.rand(len(IDX)) if psw else None
    (cw, cp, cr), (tw, tp, tr) = run_both(W, IDX, OFFS, False, mode, False, False, pad, psw=weights, dtype=dtype,
                                           grad=False)
    for a, b in zip(cr, tr):
        oracle.same(a, b, 1e-12 if dtype == "float64" else 1e-6)


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("idt", ["int64", "int32"])
def test_embedding_bag_dtypes(dtype, idt):
    W = RS.randn(6, 4)
    for mode in (0, 1, 2):
        (cw, _, cr), (tw, _, tr) = run_both(W, IDX, OFFS, False, mode, False, False, None, dtype=dtype, idt=idt)
        tol = {"float32": 1e-6, "float16": 2e-3, "bfloat16": 2e-2}[dtype]
        for a, b in zip(cr, tr):
            oracle.same(a, b, tol)
        cr[0].sum().backward(), tr[0].sum().backward()
        oracle.same(cw.grad, tw.grad, tol)


def test_embedding_bag_last_offset_freq_and_threads():
    W = RS.randn(6, 3)
    (_, _, cr), (_, _, tr) = run_both(W, IDX, OFFS + [len(IDX)], False, 1, False, True, None)
    for a, b in zip(cr, tr):
        oracle.same(a, b, 1e-12)
    # scale_grad_by_freq: each row appears twice, so every gradient is halved (torch 2.13 scales other
    # index patterns by the count of another row: see the report; we divide by each row's own count)
    (cw, _, cr), (tw, _, tr) = run_both(W, [0, 3, 3, 1, 0, 1], [0, 2, 3], True, 0, False, False, None)
    cr[0].sum().backward(), tr[0].sum().backward()
    oracle.same(cw.grad, tw.grad, 1e-12)
    assert cw.grad.tolist()[0] == [1.0, 1.0, 1.0] and cw.grad.tolist()[2] == [0.0, 0.0, 0.0]
    # large enough for the OpenMP paths of forward and both backwards
    n, V, D = 40000, 500, 16
    idx = RS.randint(0, V, n)
    offs = np.sort(RS.choice(np.arange(1, n), 999, replace=False))
    offs = np.concatenate([[0], offs])
    (cw, cp, cr), (tw, tp, tr) = run_both(RS.randn(V, D), idx, offs, False, 0, False, False, 7, psw=RS.rand(n))
    oracle.same(cr[0], tr[0], 1e-10)
    g = RS.randn(*tr[0].shape)
    cr[0].backward(ct.tensor(g)), tr[0].backward(torch.tensor(g))
    oracle.same(cw.grad, tw.grad, 1e-10)
    oracle.same(cp.grad, tp.grad, 1e-10)


def test_functional_and_module():
    W = RS.randn(10, 4)
    for L in (ct, torch):
        L.manual_seed(0)
    for mode in ("sum", "mean", "max"):
        c = ct.nn.functional.embedding_bag(ct.tensor([[1, 2, 3], [4, 5, 1]]), ct.tensor(W), mode=mode)
        t = torch.nn.functional.embedding_bag(torch.tensor([[1, 2, 3], [4, 5, 1]]), torch.tensor(W), mode=mode)
        oracle.same(c, t, 1e-12)
        c = ct.nn.functional.embedding_bag(ct.tensor([[1, 2], [3, 3]]), ct.tensor(W), mode=mode,
                                           include_last_offset=True, padding_idx=3)
        t = torch.nn.functional.embedding_bag(torch.tensor([[1, 2], [3, 3]]), torch.tensor(W), mode=mode,
                                              include_last_offset=True, padding_idx=3)
        oracle.same(c, t, 1e-12)
    psw = RS.rand(2, 3)
    c = ct.nn.functional.embedding_bag(ct.tensor([[1, 2, 3], [4, 5, 1]]), ct.tensor(W), mode="sum",
                                       per_sample_weights=ct.tensor(psw))
    t = torch.nn.functional.embedding_bag(torch.tensor([[1, 2, 3], [4, 5, 1]]), torch.tensor(W), mode="sum",
                                          per_sample_weights=torch.tensor(psw))
    oracle.same(c, t, 1e-12)
    cw, tw = ct.tensor(W * 3), torch.tensor(W * 3)      # max_norm renormalises the used rows in place
    oracle.same(ct.nn.functional.embedding_bag(ct.tensor([1, 2, 1]), cw, ct.tensor([0, 1]), max_norm=1.0),
                torch.nn.functional.embedding_bag(torch.tensor([1, 2, 1]), tw, torch.tensor([0, 1]), max_norm=1.0),
                1e-12)
    oracle.same(cw, tw, 1e-12)
    cm, tm = ct.nn.EmbeddingBag(10, 4, mode="max", padding_idx=0), torch.nn.EmbeddingBag(10, 4, mode="max",
                                                                                             padding_idx=0)
    cm.weight.data.copy_(ct.tensor(tm.weight.detach().numpy()))
    oracle.same(cm(ct.tensor([0, 2, 3, 0]), ct.tensor([0, 1, 1])), tm(torch.tensor([0, 2, 3, 0]), torch.tensor([0, 1, 1])),
                1e-6)


def test_embedding_bag_gradcheck_and_no_double_backward():
    w = ct.tensor(RS.randn(5, 3), requires_grad=True)
    p = ct.tensor(RS.rand(6), requires_grad=True)
    idx, offs = ct.tensor([0, 2, 1, 2, 4, 4]), ct.tensor([0, 2, 2, 5])
    for mode in ("sum", "mean", "max"):
        assert ct.autograd.gradcheck(lambda v: ct.nn.functional.embedding_bag(idx, v, offs, mode=mode), (w,))
    assert ct.autograd.gradcheck(lambda v, q: ct.nn.functional.embedding_bag(idx, v, offs, mode="sum",
                                                                              per_sample_weights=q, padding_idx=1),
                                 (w, p))
    for L in (ct, torch):
        v = L.tensor(RS.randn(3, 2), requires_grad=True)
        y = L.nn.functional.embedding_bag(L.tensor([0, 2, 1, 2]), v, L.tensor([0, 2]), mode="mean") ** 2
        g, = L.autograd.grad(y.sum(), v, create_graph=True)
        with pytest.raises(NotImplementedError) as e:
            g.sum().backward()
        assert str(e.value) == "the derivative for '_embedding_bag_backward' is not implemented."


W3 = np.zeros((6, 2))


@pytest.mark.parametrize("call", [
    lambda L: L.embedding_bag(L.tensor(W3), L.tensor([1.0, 2.0]), L.tensor([0])),
    lambda L: L.embedding_bag(L.tensor(W3), L.tensor([1, 2]), L.tensor([[0, 1]])),
    lambda L: L.embedding_bag(L.tensor(W3), L.tensor([1, 2]), L.tensor([0]), False, 3),
    lambda L: L.embedding_bag(L.tensor(W3), L.tensor([1, 7]), L.tensor([0])),
    lambda L: L.embedding_bag(L.tensor(W3), L.tensor([1, -1]), L.tensor([0])),
    lambda L: L.embedding_bag(L.tensor(W3), L.tensor([1, 2]), L.tensor([0]), False, 1, False, L.ones(2, dtype=L.float64)),
    lambda L: L.embedding_bag(L.tensor(W3), L.tensor([1, 2]), L.tensor([0]), False, 0, False, L.ones(3, dtype=L.float64)),
    lambda L: L.embedding_bag(L.tensor(W3), L.tensor([1, 2]), L.tensor([0]), False, 0, False, L.ones(2)),
    lambda L: L.embedding_bag(L.tensor(W3), L.tensor([1, 2]), L.tensor([1])),
    lambda L: L.embedding_bag(L.tensor(W3), L.tensor([1, 2]), L.tensor([0, 3])),
    lambda L: L.embedding_bag(L.tensor(W3), L.tensor([1, 2]), L.tensor([0]), False, 0, False, None, False, 6),
    lambda L: L.embedding_bag(L.tensor(W3), L.tensor([1, 2]), L.tensor([0]), False, 0, False, None, False, -7),
    lambda L: L.embedding_bag(L.tensor(W3[0]), L.tensor([1, 2]), L.tensor([0])),
    lambda L: L.embedding_bag(L.tensor(W3).long(), L.tensor([1, 2]), L.tensor([0])),
    lambda L: L.embedding_bag(L.tensor(W3), L.tensor([1, 2]), L.tensor([], dtype=L.int64), False, 0, False, None, True),
    lambda L: L.nn.functional.embedding_bag(L.tensor([1]), L.zeros(3, 2)),
    lambda L: L.nn.functional.embedding_bag(L.tensor([1]), L.zeros(3, 2), L.tensor([0]), mode="min"),
    lambda L: L.nn.functional.embedding_bag(L.tensor([1]), L.zeros(3, 2), L.tensor([0]), mode="max",
                                            scale_grad_by_freq=True),
    lambda L: L.nn.functional.embedding_bag(L.tensor([1]), L.zeros(3, 2), L.tensor([0]), mode="mean",
                                            per_sample_weights=L.ones(1)),
    lambda L: L.nn.functional.embedding_bag(L.tensor([1, 2]), L.zeros(3, 2), L.tensor([0]),
                                            per_sample_weights=L.ones(1)),
    lambda L: L.nn.functional.embedding_bag(L.tensor([[[1]]]), L.zeros(3, 2)),
])
def test_embedding_bag_errors(call):
    oracle.raises_like(lambda: call(ct), lambda: call(torch))


@pytest.mark.parametrize("mode", [0, 1, 2])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("offs,last", [([], False), ([0], True)])
def test_embedding_bag_no_bags(mode, dtype, offs, last):
    # no bags: an empty output whose gradients are zeros (torch reads garbage or crashes here)
    w = ct.randn(5, 3, dtype=getattr(ct, dtype), requires_grad=True)
    psw = ct.rand(3, dtype=w.dtype, requires_grad=True) if mode == 0 else None
    r = ct.embedding_bag(w, ct.tensor([1, 2, 3]), ct.tensor(offs, dtype=ct.int64), False, mode, False, psw, last)
    assert r[0].shape == (0, 3)
    r[0].sum().backward()
    assert w.grad.shape == (5, 3) and not w.grad.any()
    if psw is not None:
        assert psw.grad.shape == (3,) and not psw.grad.any()
