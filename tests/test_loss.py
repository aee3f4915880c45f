"""The fused pointwise losses (src/ATen/ATLoss.c: smooth_l1_loss, huber_loss, binary_cross_entropy_with_logits)
against torch: values, dtypes, shapes, first and second derivatives for every reduction, broadcasting, weight and
pos_weight, float32/float64, grad_fn names, errors, and the same bits at 1 and 2 threads."""
import warnings

import numpy as np
import pytest

import cthtorch as ct
import oracle
from oracle import raises_like, same

torch = oracle.require_torch()


def _both(a, rg=True):
    return ct.tensor(a, requires_grad=rg), torch.tensor(a, requires_grad=rg)


def _run(L, name, x, t, reduction, kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # the broadcast-target warning
        out = getattr(L.nn.functional, name)(x, t, reduction=reduction, **kw)
    go = L.ones_like(out) * 0.7 if reduction == "none" else L.tensor(0.7, dtype=out.dtype)
    gx, gt = L.autograd.grad(out, (x, t), go, create_graph=True)
    ggx, ggt = L.autograd.grad((gx * gx).sum() + (gt * gx).sum() + gt.sum(), (x, t), allow_unused=True)
    return out, gx, gt, ggx, ggt


SL1_CASES = [("smooth_l1_loss", {}), ("smooth_l1_loss", {"beta": 0.5}), ("huber_loss", {}),
             ("huber_loss", {"delta": 0.3})]


@pytest.mark.parametrize("name,kw", SL1_CASES)
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shapes", [((4, 5), (4, 5)), ((3, 4), (4,)), ((2, 1, 3), (4, 1)), ((), ())])
def test_smooth_l1_huber(name, kw, reduction, dtype, shapes):
    rs = np.random.RandomState(1)
    x, t = np.asarray(rs.randn(*shapes[0]), dtype=dtype), np.asarray(rs.randn(*shapes[1]), dtype=dtype)
    (xc, xt), (tc, tt) = _both(x), _both(t)
    rc, rt = _run(ct, name, xc, tc, reduction, kw), _run(torch, name, xt, tt, reduction, kw)
    tol = 1e-5 if dtype == "float32" else 1e-12
    for a, b in zip(rc, rt):
        same(a, b, tol)
    assert type(rc[0].grad_fn).__name__ == type(rt[0].grad_fn).__name__


BCE_CASES = [{}, {"pos_weight": (5,)}, {"weight": (5,)}, {"weight": (4, 5), "pos_weight": (5,)}, {"weight": ()}]


@pytest.mark.parametrize("kw", BCE_CASES)
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_bce_with_logits(kw, reduction, dtype):
    rs = np.random.RandomState(2)
    x = (rs.randn(4, 5) * 3).astype(dtype)
    t = rs.rand(4, 5).astype(dtype)
    x[0, :3] = [40.0, -40.0, 0.0]   # far tails: exp(-|x|) near its floor
    (xc, xt), (tc, tt) = _both(x), _both(t)
    kc, kt = {}, {}
    for k, shape in kw.items():
        v = np.asarray(rs.rand(*shape) + 0.5, dtype=dtype)
        kc[k], kt[k] = ct.tensor(v), torch.tensor(v)
    rc = _run(ct, "binary_cross_entropy_with_logits", xc, tc, reduction, kc)
    rt = _run(torch, "binary_cross_entropy_with_logits", xt, tt, reduction, kt)
    tol = 1e-5 if dtype == "float32" else 1e-12
    for a, b in zip(rc, rt):
        same(a, b, tol)
    assert type(rc[0].grad_fn).__name__ == "BinaryCrossEntropyWithLogitsBackward0"


@pytest.mark.parametrize("name,kw", SL1_CASES + [("binary_cross_entropy_with_logits", {"pos_weight": (6,)})])
@pytest.mark.parametrize("reduction", ["none", "sum"])
def test_nonfinite(name, kw, reduction):
    """NaN and +-inf inputs and targets: the loss and its gradients carry NaN/inf where torch's do (a NaN
    difference has a NaN smooth L1 / Huber gradient; a logit of -inf an infinite target gradient), and only there"""
    vals = [0.0, 0.5, -2.0, float("nan"), float("inf"), float("-inf")]
    x = np.array([[a for _ in vals] for a in vals])
    t = np.array([[b for b in vals] for _ in vals])
    if name.startswith("binary"):   # targets in [0, 1] or NaN (an infinite probability has no meaning)
        t = np.where(np.isfinite(t), np.abs(t) / 2, np.where(np.isnan(t), t, 1.0))
    (xc, xt), (tc, tt) = _both(x), _both(t)
    kc, kt = dict(kw), dict(kw)
    if name.startswith("binary"):   # kw: tensor shapes
        for k, shape in kw.items():
            kc[k], kt[k] = ct.tensor(np.linspace(0.5, 2.0, shape[0])), torch.tensor(np.linspace(0.5, 2.0, shape[0]))
    outs = []
    for L, xi, ti, k in ((ct, xc, tc, kc), (torch, xt, tt, kt)):
        out = getattr(L.nn.functional, name)(xi, ti, reduction=reduction, **k)
        go = L.ones_like(out) * 0.7 if reduction == "none" else L.tensor(0.7, dtype=out.dtype)
        outs.append((out,) + L.autograd.grad(out, (xi, ti), go))
    for a, b in zip(*outs):
        same(a, b, 1e-12)


def test_gradgradcheck():
    rs = np.random.RandomState(3)
    x, t, p = (ct.tensor(rs.randn(3, 4), requires_grad=True) for _ in range(3))
    w = ct.tensor(rs.rand(4) + 0.5)
    F = ct.nn.functional
    for red in ("none", "mean", "sum"):
        assert ct.autograd.gradgradcheck(lambda a, b: F.smooth_l1_loss(a, b, reduction=red, beta=0.7), (x, t))
        assert ct.autograd.gradgradcheck(lambda a, b: F.huber_loss(a, b, reduction=red, delta=0.6), (x, t))
        assert ct.autograd.gradgradcheck(
            lambda a, b: F.binary_cross_entropy_with_logits(a, b.sigmoid(), w, reduction=red, pos_weight=w * 2),
            (x, p))


def test_large_threads_same_bits():
    """past the kernels' 32768-element chunks: the sum is added chunk by chunk in order at any thread count"""
    rs = np.random.RandomState(4)
    x, t = rs.randn(300, 517).astype("float32"), rs.rand(300, 517).astype("float32")
    F = ct.nn.functional
    res = {}
    old = ct.get_num_threads()
    try:
        for n in (1, 2):
            ct.set_num_threads(n)
            xc = ct.tensor(x, requires_grad=True)
            out = F.binary_cross_entropy_with_logits(xc, ct.tensor(t)) + F.smooth_l1_loss(xc, ct.tensor(t))
            out.backward()
            res[n] = (out.item(), xc.grad.numpy().copy())
    finally:
        ct.set_num_threads(old)
    assert res[1][0] == res[2][0] and np.array_equal(res[1][1], res[2][1])
    xt = torch.tensor(x, requires_grad=True)
    ref = torch.nn.functional.binary_cross_entropy_with_logits(xt, torch.tensor(t)) + \
        torch.nn.functional.smooth_l1_loss(xt, torch.tensor(t))
    ref.backward()
    assert abs(res[1][0] - ref.item()) < 1e-5
    np.testing.assert_allclose(res[1][1], xt.grad.numpy(), rtol=1e-5, atol=1e-9)


def test_half_and_empty():
    rs = np.random.RandomState(5)
    x, t = rs.randn(3, 4).astype("float32"), rs.rand(3, 4).astype("float32")
    same(ct.nn.functional.smooth_l1_loss(ct.tensor(x).half(), ct.tensor(t).half()),
         torch.nn.functional.smooth_l1_loss(torch.tensor(x).half(), torch.tensor(t).half()), 1e-3)
    same(ct.nn.functional.binary_cross_entropy_with_logits(ct.tensor(x).bfloat16(), ct.tensor(t).bfloat16()),
         torch.nn.functional.binary_cross_entropy_with_logits(torch.tensor(x).bfloat16(), torch.tensor(t).bfloat16()),
         1e-2)
    for red in ("none", "mean", "sum"):
        same(ct.nn.functional.huber_loss(ct.zeros(0, 3), ct.zeros(0, 3), reduction=red),
             torch.nn.functional.huber_loss(torch.zeros(0, 3), torch.zeros(0, 3), reduction=red))


def test_errors():
    x = np.ones((3, 4), dtype="float32")

    def both(fn):
        return lambda: fn(ct, ct.tensor(x)), lambda: fn(torch, torch.tensor(x))
    for fn in (lambda L, a: L.nn.functional.smooth_l1_loss(a, a, beta=-1.0),
               lambda L, a: L.nn.functional.huber_loss(a, a, delta=0.0),
               lambda L, a: L.nn.functional.huber_loss(a, a, delta=-2.0),
               lambda L, a: L.nn.functional.smooth_l1_loss(a.long(), a.long()),
               lambda L, a: L.nn.functional.huber_loss(a.long(), a.long()),
               lambda L, a: L.nn.functional.smooth_l1_loss(a, a, reduction="foo"),
               lambda L, a: L.nn.functional.binary_cross_entropy_with_logits(a, a[0]),
               lambda L, a: L.nn.functional.binary_cross_entropy_with_logits(
                   a, a, weight=a[0].clone().requires_grad_()),
               lambda L, a: L.nn.functional.binary_cross_entropy_with_logits(
                   a, a, pos_weight=a[0].clone().requires_grad_())):
        raises_like(*both(fn))


@pytest.mark.parametrize("call", [
    lambda L, x: L.nn.functional.cross_entropy(x, L.tensor([0.0])),
    lambda L, x: L.nn.functional.cross_entropy(x, L.rand(2, 4)),
    lambda L, x: L.nn.functional.cross_entropy(x, L.rand(3, 3)),
    lambda L, x: L.nn.functional.cross_entropy(x, L.tensor([0.5, 1.0])),
    lambda L, x: L.nn.functional.cross_entropy(x, L.tensor([[0, 1, 2], [1, 1, 1]])),
    lambda L, x: L.nn.functional.cross_entropy(x, L.rand(2, 3), ignore_index=1),
    lambda L, x: L.nn.functional.nll_loss(L.randn(2, 3, 4, 4), L.zeros(2, 4, 4)),
    lambda L, x: L.nn.functional.nll_loss(L.randn(2, 3, 4, 4), L.zeros(2, 4, 5)),
    lambda L, x: L.nn.functional.nll_loss(L.randn(3), L.zeros(2)),
    lambda L, x: L.nn.functional.nll_loss(x, L.zeros(2, dtype=L.int32))])
def test_cross_entropy_target_kind_and_check_order_as_torch(call):
    """a target of the input's shape is class probabilities (a long one is an error, as ignore_index is);
    any other is class indices, checked as torch: rank and batch size, then dtype, then the other sizes"""
    msgs = []
    for L in (ct, torch):
        L.manual_seed(0)
        with pytest.raises((RuntimeError, ValueError)) as e:
            call(L, L.randn(2, 3))
        msgs.append((type(e.value).__name__, str(e.value)))
    assert msgs[0] == msgs[1]


def _kl_div_warnings(lib):
    x, t = lib.zeros(2, 3).log_softmax(-1), lib.full((2, 3), 1 / 3)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        values = [lib.nn.functional.kl_div(x, t).item(), lib.nn.KLDivLoss()(x, t).item(),
                  lib.nn.functional.kl_div(x, t, reduction="batchmean").item(),
                  lib.nn.KLDivLoss(reduction="sum")(x, t).item()]
    return values, [(type(m.message).__name__, str(m.message)) for m in w], w[0].filename


def test_kl_div_mean_reduction_warns_as_torch():
    """annotated-transformer's LabelSmoothing uses KLDivLoss(reduction='sum'): silent; the default 'mean'
    warns, as torch's, that it is not 'batchmean' (from the caller's line for F.kl_div)"""
    ours, theirs = _kl_div_warnings(ct), _kl_div_warnings(torch)
    assert ours[0] == pytest.approx(theirs[0], abs=1e-6) and ours[1] == theirs[1] and len(ours[1]) == 2
    assert ours[2] == theirs[2] == __file__


@pytest.mark.parametrize("shapes", [((2, 3), "f", (2,)), ((2, 3), "i", (2,)), ((2, 3), "l", (2, 3)),
                                    ((2, 3), "f", (2, 4)), ((2, 3), "f", (3,)), ((3,), "f", (2,)),
                                    ((2, 3, 4), "f", (2, 4)), ((2, 3), "f", (2, 3)), ((2, 3), "l", (2,))])


@pytest.mark.parametrize("smoothing", [0.0, 0.1])
def test_cross_entropy_reads_probabilities_only_from_a_same_shaped_target(shapes, smoothing):
    """as torch: a target shaped like the input holds class probabilities (and must be floating), any other
    target holds class indices, whose dtype and shape nll_loss checks in torch's order (a float index target
    from old code: 'expected target dtype to be Long or Byte')"""
    ishape, kind, tshape = shapes
    x = np.random.RandomState(0).standard_normal(ishape)
    t = np.zeros(tshape)
    dt = {"f": "float32", "i": "int32", "l": "int64"}[kind]
    raises_or_same = []
    for m in (ct, torch):
        try:
            out = m.nn.functional.cross_entropy(m.tensor(x, dtype=m.float32), m.tensor(t, dtype=getattr(m, dt)),
                                                label_smoothing=smoothing)
            raises_or_same.append(round(out.item(), 5))
        except (RuntimeError, ValueError) as e:
            raises_or_same.append((type(e).__name__, str(e)))
    assert raises_or_same[0] == raises_or_same[1]


@pytest.mark.parametrize("fn", ["binary_cross_entropy", "binary_cross_entropy_with_logits"])
@pytest.mark.parametrize("in_dt,t_dt", [("float32", "float64"), ("float32", "int64"), ("float32", "int32"),
                                        ("float32", "bool"), ("float32", "float16"), ("float32", "bfloat16"),
                                        ("float64", "float32"), ("float32", "float32")])
def test_bce_target_dtypes_as_torch(fn, in_dt, t_dt):
    """binary_cross_entropy wants every operand in the input's dtype ('Found dtype Long but expected Float');
    the logits form computes (1 - target).mul_(input)...: an integer target can't hold the result, a bool one
    can't be subtracted from, and a floating target's dtype is the loss's dtype"""
    out = []
    for L in (ct, torch):
        x = L.tensor([0.2, 0.5, 0.9], dtype=getattr(L, in_dt), requires_grad=True)
        t = L.tensor([0, 1, 1]).to(getattr(L, t_dt))
        try:
            r = getattr(L.nn.functional, fn)(x, t)
        except RuntimeError as e:
            out.append(("error", str(e)))
            continue
        g, = L.autograd.grad(r, x)
        out.append((str(r.dtype), r.item(), str(g.dtype), g.tolist()))
    if out[1][0] == "error":
        assert out[0] == out[1]
    else:
        assert out[0][0] == out[1][0] and out[0][2] == out[1][2]
        assert out[0][1] == pytest.approx(out[1][1], rel=2e-3)
        assert out[0][3] == pytest.approx(out[1][3], rel=1e-5)
