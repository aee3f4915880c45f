"""NN kernels (softmax, nll, norms, embedding, activations, dropout) vs torch: values and gradients."""
import numpy as np
import pytest

import cthtorch as ct
import oracle

torch = oracle.require_torch()
F = torch.nn.functional


def pair(x, rg=True):
    return ct.tensor(x, requires_grad=rg), torch.tensor(x, requires_grad=rg)


def close(a, b, tol=1e-5):
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=tol, atol=tol)


def run(fa, fb, *xs, tol=1e-5):
    """Same function on both libraries: outputs and input gradients agree."""
    pa = [ct.tensor(x, requires_grad=True) for x in xs]
    pb = [torch.tensor(x, requires_grad=True) for x in xs]
    ya, yb = fa(*pa), fb(*pb)
    close(ya, yb, tol)
    g = np.asarray(np.random.RandomState(5).randn(*yb.shape)).astype(np.asarray(xs[0]).dtype)
    (ya * ct.tensor(g)).sum().backward()
    (yb * torch.tensor(g)).sum().backward()
    for a, b in zip(pa, pb):
        close(a.grad, b.grad, tol * 10)


X = np.random.RandomState(0).randn(4, 6, 3).astype(np.float64)


@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("log", [False, True])
def test_softmax(dim, log):
    name = "log_softmax" if log else "softmax"
    run(lambda a: getattr(a, name)(dim), lambda b: getattr(b, name)(dim), X)
    run(lambda a: getattr(ct, name)(a, dim), lambda b: getattr(torch, name)(b, dim), X.astype(np.float32), tol=1e-5)


def test_implicit_softmax_dim_warns_at_the_caller():
    """softmax/log_softmax/softmin without dim pick torch's legacy dim and give its deprecation
    warning, attributed to the calling line"""
    import warnings
    x = np.random.RandomState(0).randn(2, 3, 4)
    for name in ("softmax", "log_softmax", "softmin"):
        got = []
        for lib in (ct, torch):
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                y = getattr(lib.nn.functional, name)(lib.tensor(x))
            got.append((y.detach().numpy(), [(str(m.message), m.filename) for m in w]))
        np.testing.assert_allclose(got[0][0], got[1][0], rtol=1e-6)
        assert got[0][1] == got[1][1] and len(got[1][1]) == 1 and got[1][1][0][1] == __file__


def test_softmax_dtype_and_extremes():
    x = np.array([[1000.0, 0.0, -1000.0], [-np.inf, 0.0, 1.0]], dtype=np.float32)
    close(ct.tensor(x).softmax(1), torch.tensor(x).softmax(1))
    close(ct.tensor(x).log_softmax(1), torch.tensor(x).log_softmax(1))
    assert ct.ones(2, 3).softmax(1, dtype=ct.float64).dtype == ct.float64


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("log", [False, True])
def test_softmax_masked_and_underflowing_rows(dt, log):
    # the kernel's exp skips libm's slow underflow path (-inf and far-below entries give 0 without
    # it): values and gradients stay torch's, NaN rows and all -inf rows as torch's
    rs = np.random.RandomState(0)
    x = rs.randn(40, 37).astype(dt)
    x[np.triu(np.ones((40, 37), bool), 1)] = -np.inf          # a causal mask
    x[3, :5] = [-90.0, -150.0, -750.0, -1e30, 0.0]
    x[5, 2] = np.nan
    x[7, :] = -np.inf
    name = "log_softmax" if log else "softmax"
    ya, yb = (getattr(L.tensor(x, requires_grad=True), name)(1) for L in (ct, torch))
    close(ya, yb, 1e-6)
    g = rs.randn(*x.shape).astype(dt)
    xa, xb = ct.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    getattr(xa, name)(1).backward(ct.tensor(g))
    getattr(xb, name)(1).backward(torch.tensor(g))
    close(xa.grad, xb.grad, 1e-5)


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("log", [False, True])
def test_softmax_over_a_leading_dim(dt, log):
    # a non-last dim goes through the column kernel in tiles of 256 columns (fewer than 8 columns: one
    # at a time): widths below 8, below, at and past a tile, masked / NaN / all -inf columns, values and
    # gradients, and the same bits at 1 and 2 threads
    rs = np.random.RandomState(1)
    name = "log_softmax" if log else "softmax"
    for shape, dim in (((37, 5), 0), ((9, 256), 0), ((6, 600), 0), ((3, 11, 300), 1), ((2, 7, 3), 0),
                       ((5, 40, 3), 1), ((3, 9, 7), 1), ((4, 6, 8), 1)):
        x = (rs.randn(*shape) * 5).astype(dt)
        x2 = x.reshape(x.shape[0], -1) if dim == 0 else x.reshape(-1, x.shape[-1])
        x2[:, 1] = -np.inf
        x2[1, 2] = np.nan
        x2[0, -1] = -300.0
        ya, yb = (getattr(L.tensor(x, requires_grad=True), name)(dim) for L in (ct, torch))
        close(ya, yb, 1e-6)
        g = rs.randn(*shape).astype(dt)
        xa, xb = ct.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
        getattr(xa, name)(dim).backward(ct.tensor(g))
        getattr(xb, name)(dim).backward(torch.tensor(g))
        close(xa.grad, xb.grad, 1e-5)
        nt = ct.get_num_threads()
        try:
            ct.set_num_threads(1)
            one = getattr(ct.tensor(x), name)(dim).numpy()
            ct.set_num_threads(2)
            two = getattr(ct.tensor(x), name)(dim).numpy()
        finally:
            ct.set_num_threads(nt)
        np.testing.assert_array_equal(one, two)


def test_logsumexp_rows_vs_torch():
    rs = np.random.RandomState(2)
    for dt in (np.float32, np.float64):
        x = (rs.randn(300, 513) * 20).astype(dt)
        x[3, 7] = np.nan
        x[4, :] = -np.inf
        x[5, 9] = np.inf
        for dim in (1, 0, (0, 1)):
            a, b = ct.tensor(x).logsumexp(dim), torch.tensor(x).logsumexp(dim)
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("log", [False, True])
@pytest.mark.parametrize("D", [1, 2, 3, 7, 8, 10, 16, 17])
def test_softmax_short_rows(D, log):
    # float32 rows of up to 16 go eight at a time through a transposed kernel: every row count
    # (blocks of 8 and the rows left over), masked, underflowing and NaN rows, and gradients
    rs = np.random.RandomState(D)
    for rows in (1, 7, 8, 9, 21, 4096):
        x = (rs.randn(rows, D) * 4).astype(np.float32)
        if rows >= 9:
            x[1, :] = -np.inf
            x[2, 0] = np.nan
            x[3, -1] = -200.0
            x[4, 0] = 90.0
        name = "log_softmax" if log else "softmax"
        xa, xb = ct.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
        ya, yb = getattr(xa, name)(1), getattr(xb, name)(1)
        np.testing.assert_allclose(ya.detach().numpy(), yb.detach().numpy(), rtol=2e-6, atol=2e-6)
        g = rs.randn(rows, D).astype(np.float32)
        ya.backward(ct.tensor(g))
        yb.backward(torch.tensor(g))
        close(xa.grad, xb.grad, 1e-5)


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("D", [3, 10, 40])
@pytest.mark.parametrize("dim", [1, 0])
def test_log_softmax_large_logits_keep_log_sum(dt, D, dim):
    # (x - max) - log(sum), as torch: x - (max + log(sum)) dropped log(sum) beside a large max
    # (rows of 1e30 gave 0 where torch gives -log(D)); short rows, long rows and a strided dim
    rs = np.random.RandomState(D)
    x = (rs.randn(11, D) * 3).astype(dt)
    x[0, :] = 1e30
    x[1, :] = 1e5
    x[2, :D // 2] = 3e4
    x[3, :] = 4e7
    if dim == 0:
        x = np.ascontiguousarray(x.T)
    ya, yb = ct.log_softmax(ct.tensor(x), dim), torch.log_softmax(torch.tensor(x), dim)
    np.testing.assert_allclose(ya.numpy(), yb.numpy(), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("dt, gap", [(np.float32, -86.5), (np.float64, -707.5)])
def test_softmax_keeps_tiny_normal_values(dt, gap):
    # the underflow guard zeroes only what would be subnormal: exp(gap), still a normal number,
    # is kept at torch's value (relative), not flushed to 0
    x = np.array([[0.0, gap, gap - 0.4, -1.0]], dtype=dt)
    ya, yb = ct.tensor(x).softmax(1).numpy(), torch.tensor(x).softmax(1).numpy()
    assert ya[0, 1] > 0 and ya[0, 2] > 0
    np.testing.assert_allclose(ya, yb, rtol=1e-5, atol=0)


@pytest.mark.parametrize("reduction", [0, 1, 2])
@pytest.mark.parametrize("weighted", [False, True])
def test_nll_loss(reduction, weighted):
    x = np.random.RandomState(1).randn(5, 4).astype(np.float64)
    t = np.array([0, 3, 1, -100, 2])
    w = np.array([0.5, 1.0, 2.0, 1.5])
    red = ["none", "mean", "sum"][reduction]
    run(lambda a: ct._C._nn.nll_loss_nd(a, ct.tensor(t), ct.tensor(w) if weighted else None, reduction, -100),
        lambda b: F.nll_loss(b, torch.tensor(t), torch.tensor(w) if weighted else None, reduction=red), x)


def test_nll_loss_nd_and_errors():
    x = np.random.RandomState(2).randn(2, 3, 4, 5)
    t = np.random.RandomState(3).randint(0, 3, (2, 4, 5))
    run(lambda a: ct._C._nn.nll_loss_nd(a, ct.tensor(t), None, 1, -100), lambda b: F.nll_loss(b, torch.tensor(t)), x)
    with pytest.raises(IndexError, match="Target 7 is out of bounds."):
        ct._C._nn.nll_loss_nd(ct.zeros(2, 3), ct.tensor([0, 7]), None, 1, -100)
    with pytest.raises(ValueError, match="Expected input batch_size \\(2\\) to match target batch_size \\(3\\)"):
        ct._C._nn.nll_loss_nd(ct.zeros(2, 3), ct.tensor([0, 1, 2]), None, 1, -100)


@pytest.mark.parametrize("fn", ["cross_entropy", "nll_loss"])
@pytest.mark.parametrize("shapes", [((1, 128), ()), ((3, 5), (2,)), ((3, 5, 4), (2, 4)), ((3, 5), (3, 2)),
                                    ((3, 5, 4, 2), (3, 4)), ((2, 5, 4, 3), (2, 4)), ((5,), (2,)), ((5,), (0,)),
                                    ((5,), (1, 2))])
def test_class_target_shape_errors_are_torchs(fn, shapes):
    """a class-index target of the wrong shape (a 0-d target against a batch, as in hunkim's char-RNN
    scripts) raises torch's error type and message"""
    inp, tgt = shapes
    errs = []
    for lib in (ct, torch):
        try:
            getattr(lib.nn.functional, fn)(lib.zeros(*inp), lib.zeros(tgt, dtype=lib.long))
            errs.append(None)
        except Exception as e:
            errs.append((type(e), str(e)))
    assert errs[1] is not None and errs[0] == errs[1]


@pytest.mark.parametrize("smoothing", [0.0, 0.2])
def test_cross_entropy(smoothing):
    x = np.random.RandomState(4).randn(6, 5)
    t = np.array([0, 4, 1, 2, -100, 3])
    run(lambda a: ct._C._nn.cross_entropy_loss(a, ct.tensor(t), None, 1, -100, smoothing),
        lambda b: F.cross_entropy(b, torch.tensor(t), label_smoothing=smoothing), x)
    p = np.random.RandomState(6).rand(6, 5)
    p /= p.sum(1, keepdims=True)
    run(lambda a: ct._C._nn.cross_entropy_loss(a, ct.tensor(p), None, 1, -100, smoothing),
        lambda b: F.cross_entropy(b, torch.tensor(p), label_smoothing=smoothing), x)


@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("shape", [(4, 3, 5, 2), (13, 7, 31, 19)])   # the second splits planes across threads
def test_batch_norm(training, shape):
    x = np.random.RandomState(7).randn(*shape) * 3 + 1
    C = shape[1]
    w, b = np.random.rand(C) + 0.5, np.random.rand(C)
    rm_a, rv_a, rm_b, rv_b = ct.zeros(C, dtype=ct.float64), ct.ones(C, dtype=ct.float64), \
        torch.zeros(C, dtype=torch.float64), torch.ones(C, dtype=torch.float64)
    run(lambda a, wa, ba: ct.batch_norm(a, wa, ba, rm_a, rv_a, training, 0.1, 1e-5),
        lambda a, wa, ba: torch.batch_norm(a, wa, ba, rm_b, rv_b, training, 0.1, 1e-5, False), x, w, b)
    close(rm_a, rm_b)
    close(rv_a, rv_b)


def test_layer_and_group_norm():
    x = np.random.RandomState(8).randn(3, 4, 6)
    w, b = np.random.rand(6) + 0.5, np.random.rand(6)
    run(lambda a, wa, ba: ct.layer_norm(a, [6], wa, ba), lambda a, wa, ba: torch.layer_norm(a, [6], wa, ba), x, w, b)
    run(lambda a: ct.layer_norm(a, [4, 6]), lambda a: torch.layer_norm(a, [4, 6]), x)
    w4, b4 = np.random.rand(4) + 0.5, np.random.rand(4)
    run(lambda a, wa, ba: ct.group_norm(a, 2, wa, ba), lambda a, wa, ba: torch.group_norm(a, 2, wa, ba), x, w4, b4)


def test_embedding():
    W = np.random.RandomState(9).randn(10, 3)
    idx = np.array([[1, 2, 1], [9, 0, 2]])
    run(lambda w: ct.embedding(w, ct.tensor(idx)), lambda w: torch.embedding(w, torch.tensor(idx)), W)
    run(lambda w: ct.embedding(w, ct.tensor(idx), 1), lambda w: torch.embedding(w, torch.tensor(idx), 1), W)
    with pytest.raises(IndexError, match="index out of range in self"):
        ct.embedding(ct.zeros(3, 2), ct.tensor([3]))


ACTS = [
    ("gelu", lambda a: ct._C._nn.gelu(a), lambda b: F.gelu(b)),
    ("gelu_tanh", lambda a: ct._C._nn.gelu(a, approximate="tanh"), lambda b: F.gelu(b, approximate="tanh")),
    ("silu", lambda a: ct._C._nn.silu(a), F.silu),
    ("leaky_relu", lambda a: ct._C._nn.leaky_relu(a, 0.2), lambda b: F.leaky_relu(b, 0.2)),
    ("elu", lambda a: ct._C._nn.elu(a, 1.3), lambda b: F.elu(b, 1.3)),
    ("selu", ct.selu, torch.selu), ("celu", lambda a: ct.celu(a, 0.7), lambda b: torch.celu(b, 0.7)),
    ("hardtanh", lambda a: ct._C._nn.hardtanh(a, -0.5, 0.7), lambda b: F.hardtanh(b, -0.5, 0.7)),
    ("relu6", lambda a: ct._C._nn.relu6(a * 4), lambda b: F.relu6(b * 4)),
    ("softplus", lambda a: ct._C._nn.softplus(a, 2, 1), lambda b: F.softplus(b, 2, 1)),
    ("hardsigmoid", lambda a: ct._C._nn.hardsigmoid(a * 4), lambda b: F.hardsigmoid(b * 4)),
    ("hardswish", lambda a: ct._C._nn.hardswish(a * 4), lambda b: F.hardswish(b * 4)),
    ("mish", lambda a: ct._C._nn.mish(a), F.mish), ("log_sigmoid", lambda a: ct._C._nn.log_sigmoid(a), F.logsigmoid),
    ("threshold", lambda a: ct.threshold(a, 0.1, -2.0), lambda b: F.threshold(b, 0.1, -2.0)),
    ("relu", lambda a: a.relu(), lambda b: b.relu()),
    ("prelu", lambda a: ct.prelu(a, ct.tensor([0.25], dtype=a.dtype)), lambda b: F.prelu(b, torch.tensor([0.25], dtype=b.dtype))),
]


@pytest.mark.parametrize("name,fa,fb", ACTS, ids=[a[0] for a in ACTS])
def test_activations(name, fa, fb):
    x = np.random.RandomState(10).randn(5, 7)
    x[0, :3] = [0.0, 3.0, -3.0]
    run(fa, fb, x)
    run(fa, fb, x.astype(np.float32), tol=1e-5)


def test_inplace_activation():
    a = ct.tensor([-1.0, 2.0])
    ct._C._nn.leaky_relu_(a, 0.5)
    assert a.tolist() == [-0.5, 2.0]
    b = ct.tensor([-1.0, 2.0])
    b.relu_()
    assert b.tolist() == [0.0, 2.0]


def test_dropout():
    ct.manual_seed(0)
    x = ct.ones(10000)
    y = ct.dropout(x, 0.3, True)
    kept = (y != 0).float().mean().item()
    assert abs(kept - 0.7) < 0.03
    vals = np.unique(y.numpy())
    assert len(vals) == 2 and vals[0] == 0 and abs(vals[1] - 1 / 0.7) < 1e-6
    assert ct.dropout(x, 0.3, False) is x
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1"):
        ct.dropout(x, 1.5, True)
    z = ct.ones(8, 4, 3, 3)
    f = ct.feature_dropout(z, 0.5, True)
    per_channel = f.sum((2, 3)) if hasattr(f, "sum") else None
    assert set(np.unique(per_channel.numpy()).tolist()) <= {0.0, 18.0}


@pytest.mark.parametrize("kw", [dict(scale_factor=2, mode="bicubic", align_corners=False),
                                dict(size=(7, 9), mode="bicubic", align_corners=True),
                                dict(size=(3, 4), mode="bicubic"), dict(scale_factor=2, mode="area"),
                                dict(size=(3, 4), mode="area"), dict(scale_factor=1.5, mode="nearest-exact"),
                                dict(size=(8, 3), mode="nearest-exact")])
def test_interpolate_bicubic_area_nearest_exact_match_torch(kw):
    torch = oracle.require_torch()
    x = np.random.RandomState(0).randn(1, 2, 5, 6).astype(np.float32)
    a = ct.nn.functional.interpolate(ct.tensor(x), **kw).numpy()
    b = torch.nn.functional.interpolate(torch.tensor(x), **kw).numpy()
    assert a.shape == b.shape
    np.testing.assert_allclose(a, b, atol=2e-6)


@pytest.mark.parametrize("dt", ["bfloat16", "float16"])
@pytest.mark.parametrize("shape", [(200, 50), (7, 1000), (3, 4, 33), (6, 5)])
def test_reduced_log_softmax_last_dim_rounds_as_torch(dt, shape):
    """half/bfloat16 log_softmax over the last dim equals torch's bit for bit: torch keeps each row's sum of
    exps and its log in the dtype (exact rounding was an ulp off in a third of the elements); dtype= to a
    reduced type too"""
    a = (np.random.RandomState(1).randn(*shape) * 3).astype(np.float32)
    c, t = ct.tensor(a).to(getattr(ct, dt)), torch.tensor(a).to(getattr(torch, dt))
    np.testing.assert_array_equal(ct.log_softmax(c, -1).float().numpy(), torch.log_softmax(t, -1).float().numpy())
    np.testing.assert_array_equal(
        ct.nn.functional.log_softmax(ct.tensor(a), -1, dtype=getattr(ct, dt)).float().numpy(),
        F.log_softmax(torch.tensor(a), -1, dtype=getattr(torch, dt)).float().numpy())


@pytest.mark.parametrize("dt", ["bfloat16", "float16"])
@pytest.mark.parametrize("shape", [(200, 50), (37, 10), (5000, 3)])
def test_reduced_nll_loss_cascade_rounds_as_torch(dt, shape):
    """half/bfloat16 nll_loss / cross_entropy (mean and sum, class weights, ignore_index, label smoothing)
    equal torch's bit for bit: torch's 8-level cascade adds in the dtype, rounding every step (summing in
    float was an ulp or more off: 7.75 for torch's 7.71875 on 200 rows of 50)"""
    a = (np.random.RandomState(1).randn(*shape) * 3).astype(np.float32)
    tg = np.random.RandomState(2).randint(0, shape[1], shape[0])
    tg[::7] = -100
    w = np.random.RandomState(3).rand(shape[1]).astype(np.float32)
    for kw in ({}, {"weight": w}, {"label_smoothing": 0.1}):
        for red in ("mean", "sum"):
            r = []
            for lib in (ct, torch):
                k = {n: lib.tensor(v).to(getattr(lib, dt)) if n == "weight" else v for n, v in kw.items()}
                x = lib.tensor(a).to(getattr(lib, dt))
                r.append((lib.nn.functional.cross_entropy(x, lib.tensor(tg), reduction=red, **k).item(),
                          lib.nn.functional.nll_loss(x.log_softmax(-1), lib.tensor(tg), reduction=red,
                                                     **{n: v for n, v in k.items() if n == "weight"}).item()))
            assert r[0] == r[1], (kw, red)
