"""Adaptive 3-d pooling in C (src/ATen/ATPool.c, declarations/pool.yaml) vs
torch: values, indices, dtypes, sizes, gradients (gradcheck and
gradgradcheck in float64), grad_fn names and errors."""
import numpy as np
import pytest

import cthtorch as ct
import oracle

torch = oracle.require_torch()
F, TF = ct.nn.functional, torch.nn.functional
RS = np.random.RandomState(0)
TOL = {"float64": 1e-12, "float32": 1e-5, "float16": 2e-3, "bfloat16": 2e-2}


def both(x, dtype="float64"):
    return ct.tensor(x).to(getattr(ct, dtype)), torch.tensor(x).to(getattr(torch, dtype))


@pytest.mark.parametrize("dtype", ["float64", "float32", "float16", "bfloat16"])
@pytest.mark.parametrize("size", [2, (3, 4, 5), (None, 2, 1), (5, 7, 6), (7, 9, 8), (1, 1, 1), (3, 1, 1)])
def test_adaptive_pool3d_values(size, dtype):
    c, t = both(RS.randn(2, 3, 5, 7, 6), dtype)
    oracle.same(F.adaptive_avg_pool3d(c, size), TF.adaptive_avg_pool3d(t, size), TOL[dtype])
    (cv, ci), (tv, ti) = F.adaptive_max_pool3d(c, size, True), TF.adaptive_max_pool3d(t, size, True)
    oracle.same(cv, tv, 0)
    assert ci.dtype == ct.int64
    np.testing.assert_array_equal(ci.numpy(), ti.numpy())


def test_adaptive_pool3d_unbatched_noncontiguous_nan():
    x = RS.randn(3, 6, 5, 4)
    c, t = both(x)
    c, t = c.transpose(1, 3), t.transpose(1, 3)
    oracle.same(F.adaptive_avg_pool3d(c, (2, 3, 2)), TF.adaptive_avg_pool3d(t, (2, 3, 2)), 1e-12)
    oracle.same(F.adaptive_max_pool3d(c, 2, True), TF.adaptive_max_pool3d(t, 2, True), 0)
    x[0, 1, 2, 0] = np.nan
    c, t = both(x)
    oracle.same(F.adaptive_max_pool3d(c, 2, True), TF.adaptive_max_pool3d(t, 2, True), 0)
    oracle.same(ct.nn.AdaptiveMaxPool3d((1, 2, 3))(c), torch.nn.AdaptiveMaxPool3d((1, 2, 3))(t), 0)
    oracle.same(F.adaptive_avg_pool3d(both(RS.randn(0, 2, 3, 3, 3))[0], 2),
                TF.adaptive_avg_pool3d(both(RS.randn(0, 2, 3, 3, 3))[1], 2), 0)


def test_adaptive_pool3d_gradients():
    x = ct.tensor(RS.randn(2, 2, 5, 4, 3), requires_grad=True)
    avg = lambda v: F.adaptive_avg_pool3d(v, (2, 3, 2))       # noqa: E731
    mx = lambda v: F.adaptive_max_pool3d(v, (3, 2, 2))        # noqa: E731
    for f in (avg, mx):
        assert ct.autograd.gradcheck(f, (x,))
        assert ct.autograd.gradgradcheck(f, (x,))
    tx = torch.tensor(x.tolist(), dtype=torch.float64, requires_grad=True)
    for cf, tf in ((avg, lambda v: TF.adaptive_avg_pool3d(v, (2, 3, 2))), (mx, lambda v: TF.adaptive_max_pool3d(v, (3, 2, 2)))):
        g = RS.randn(*cf(x).shape)
        cg, = ct.autograd.grad(cf(x), x, ct.tensor(g))
        tg, = torch.autograd.grad(tf(tx), tx, torch.tensor(g))
        oracle.same(cg, tg, 1e-12)
        assert type(cf(x).grad_fn).__name__ == type(tf(tx).grad_fn).__name__


@pytest.mark.parametrize("call", [
    lambda L, x: L.nn.functional.adaptive_avg_pool3d(x(2, 3), 2),
    lambda L, x: L.nn.functional.adaptive_max_pool3d(x(2, 3), 2),
    lambda L, x: L.nn.functional.adaptive_avg_pool3d(x(1, 2, 2, 3, 4), (2, 2)),
    lambda L, x: L.nn.functional.adaptive_max_pool3d(x(1, 2, 2, 3, 4), (2, 2)),
    lambda L, x: L.nn.functional.adaptive_avg_pool3d(x(1, 0, 2, 3, 4), 2),
    lambda L, x: L.nn.functional.adaptive_max_pool3d(x(1, 0, 2, 3, 4), 2),
    lambda L, x: L.nn.functional.adaptive_avg_pool3d(x(1, 2, 2, 3, 4), (2, -1, 2)),
    lambda L, x: L.nn.functional.adaptive_max_pool3d(x(1, 2, 2, 3, 4), (2, -1, 2)),
    lambda L, x: L.nn.functional.adaptive_avg_pool3d(x(1, 2, 2, 3, 4).long(), 2),
    lambda L, x: L.nn.functional.adaptive_max_pool3d(x(1, 2, 2, 3, 4).long(), 2),
])
def test_adaptive_pool3d_errors(call):
    oracle.raises_like(lambda: call(ct, ct.zeros), lambda: call(torch, torch.zeros))


# ---- max_pool3d / avg_pool3d (C kernels) ----
POOL3D_ARGS = [dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1), dict(kernel_size=(2, 3, 1), stride=(1, 2, 1)),
               dict(kernel_size=3, stride=2, ceil_mode=True), dict(kernel_size=(3, 2, 3), stride=1, padding=(1, 1, 0))]


@pytest.mark.parametrize("kw", POOL3D_ARGS)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_max_avg_pool3d_values(kw, dtype):
    c, t = both(RS.randn(2, 3, 5, 7, 6), dtype)
    (cv, ci), (tv, ti) = F.max_pool3d(c, return_indices=True, **kw), TF.max_pool3d(t, return_indices=True, **kw)
    oracle.same(cv, tv, 0)
    np.testing.assert_array_equal(ci.numpy(), ti.numpy())
    for cip in (True, False):
        oracle.same(F.avg_pool3d(c, count_include_pad=cip, **kw), TF.avg_pool3d(t, count_include_pad=cip, **kw),
                    TOL[dtype])
    oracle.same(F.avg_pool3d(c, divisor_override=5, **kw), TF.avg_pool3d(t, divisor_override=5, **kw), TOL[dtype])


def test_max_pool3d_dilation_ints_nan_unbatched():
    x = RS.randn(3, 7, 8, 6)
    x[1, 2, 3, 1] = np.nan
    c, t = both(x)
    for kw in (dict(kernel_size=2, dilation=2), dict(kernel_size=3, padding=1, dilation=(1, 2, 1), ceil_mode=True)):
        oracle.same(F.max_pool3d(c, return_indices=True, **kw), TF.max_pool3d(t, return_indices=True, **kw), 0)
    xi = RS.randint(-100, 100, size=(2, 2, 4, 5, 4))
    for dt in ("int64", "int32", "uint8", "float16", "bfloat16"):
        c, t = both(xi if dt != "uint8" else np.abs(xi), dt)
        oracle.same(F.max_pool3d(c, 2, 1, return_indices=True), TF.max_pool3d(t, 2, 1, return_indices=True), 0)
    c, t = both(xi, "int64")
    oracle.same(F.avg_pool3d(c, 2, 1), TF.avg_pool3d(t, 2, 1), 0)
    c, t = both(RS.randn(3, 6, 5, 4))
    c, t = c.transpose(1, 3), t.transpose(1, 3)
    oracle.same(F.avg_pool3d(c, 2), TF.avg_pool3d(t, 2), 1e-12)
    oracle.same(ct.nn.MaxPool3d(2, 1)(c), torch.nn.MaxPool3d(2, 1)(t), 0)
    oracle.same(ct.nn.AvgPool3d(2, 1, 1)(c), torch.nn.AvgPool3d(2, 1, 1)(t), 1e-12)
    c, t = both(RS.randn(0, 2, 3, 3, 3))
    oracle.same(F.max_pool3d(c, 2), TF.max_pool3d(t, 2), 0)


@pytest.mark.parametrize("kw", POOL3D_ARGS[:3])
def test_max_avg_pool3d_gradients(kw):
    x = ct.tensor(RS.randn(2, 2, 5, 4, 5), requires_grad=True)
    tx = torch.tensor(x.tolist(), dtype=torch.float64, requires_grad=True)
    for cf, tf in ((lambda v: F.max_pool3d(v, **kw), lambda v: TF.max_pool3d(v, **kw)),
                   (lambda v: F.avg_pool3d(v, count_include_pad=False, **kw),
                    lambda v: TF.avg_pool3d(v, count_include_pad=False, **kw))):
        assert ct.autograd.gradcheck(cf, (x,))
        assert ct.autograd.gradgradcheck(cf, (x,))
        yc, yt = cf(x), tf(tx)
        g = RS.randn(*yc.shape)
        cg, = ct.autograd.grad(yc, x, ct.tensor(g), create_graph=True)
        tg, = torch.autograd.grad(yt, tx, torch.tensor(g), create_graph=True)
        oracle.same(cg, tg, 1e-12)
        assert type(yc.grad_fn).__name__ == type(yt.grad_fn).__name__
        assert type(cg.grad_fn).__name__ == type(tg.grad_fn).__name__


@pytest.mark.parametrize("fn", ["max_pool3d", "avg_pool3d"])
@pytest.mark.parametrize("call", [
    lambda f, x: f(x(2, 3, 4, 5, 6), 0),
    lambda f, x: f(x(2, 3, 4, 5, 6), 2, 0),
    lambda f, x: f(x(2, 3, 4, 5, 6), 2, 1, 2),
    lambda f, x: f(x(2, 3, 4, 5, 6), (2, 2, 2), 1, (0, 2, 0)),
    lambda f, x: f(x(2, 3, 4, 5, 6), 2, -1),
    lambda f, x: f(x(3, 4, 5), 2),
    lambda f, x: f(x(2, 0, 4, 5, 6), 2),
    lambda f, x: f(x(0, 3, 4, 5, 6, 7), 2),
    lambda f, x: f(x(2, 3, 1, 5, 6), 2),
    lambda f, x: f(x(2, 3, 4, 5, 6).bool(), 2),
    lambda f, x: f(x(2, 3, 4, 5, 6), [2, 2]),
    lambda f, x: f(x(2, 3, 4, 5, 6), 2, [1, 1]),
    lambda f, x: f(x(2, 3, 4, 5, 6), 2, 1, [1, 1]),
])
def test_max_avg_pool3d_errors(fn, call):
    oracle.raises_like(lambda: call(getattr(F, fn), ct.zeros), lambda: call(getattr(TF, fn), torch.zeros))


def test_pool3d_specific_errors():
    for call in (lambda L: L.nn.functional.max_pool3d(L.zeros(2, 3, 4, 5, 6), 2, 1, 0, 0),
                 lambda L: L.nn.functional.max_pool3d(L.zeros(2, 3, 9, 9, 9), 3, 1, 2, 2),
                 lambda L: L.nn.functional.avg_pool3d(L.zeros(2, 3, 4, 5, 6).half(), 2),
                 lambda L: L.nn.functional.max_pool3d(L.zeros(2, 3, 4, 5, 6), 2, 1, 0, [1, 2]),
                 lambda L: L.nn.functional.avg_pool3d(L.zeros(2, 3, 4, 5, 6), 2, divisor_override=0),
                 lambda L: L.nn.functional.avg_pool3d(L.zeros(3, 4, 5), 2, divisor_override=0)):
        oracle.raises_like(lambda: call(ct), lambda: call(torch))


# ---- adaptive pools over inputs with an empty dim, against torch ----
EMPTY_DIM_CALLS = [
    ("adaptive_avg_pool2d", (2, 3, 0, 4), 1), ("adaptive_avg_pool2d", (2, 0, 3, 4), 1), ("adaptive_avg_pool2d", (3, 0, 4), 1),
    ("adaptive_avg_pool2d", (0, 0, 4), 1), ("adaptive_avg_pool2d", (2, 3, 0, 4), 2), ("adaptive_avg_pool2d", (2, 3, 0, 4), (1, None)),
    ("adaptive_avg_pool2d", (2, 0, 3, 4), 2), ("adaptive_avg_pool2d", (0, 3, 4), 2), ("adaptive_avg_pool2d", (0, 3, 0, 4), 2),
    ("adaptive_avg_pool1d", (2, 3, 0), 1), ("adaptive_avg_pool1d", (2, 3, 0), 2), ("adaptive_avg_pool1d", (2, 0, 3), 2),
    ("adaptive_avg_pool3d", (2, 3, 0, 2, 2), 1), ("adaptive_avg_pool3d", (2, 3, 0, 2, 2), 2),
    ("adaptive_avg_pool3d", (2, 0, 2, 2, 2), 2), ("adaptive_max_pool2d", (2, 3, 0, 4), 1),
    ("adaptive_max_pool2d", (2, 0, 3, 4), 1), ("adaptive_max_pool1d", (2, 3, 0), 1), ("adaptive_max_pool1d", (2, 0, 3), 2),
    ("adaptive_max_pool1d", (0, 3), 2), ("adaptive_max_pool1d", (3, 0), 2), ("adaptive_max_pool3d", (2, 0, 2, 2, 2), 1),
]


@pytest.mark.parametrize("fn,shape,os", EMPTY_DIM_CALLS)
def test_adaptive_pool_empty_dims_as_torch(fn, shape, os):
    """a one-cell average is a mean: NaN over an empty plane, empty over no channels; the other pools raise
    torch's error naming the empty dim (the 2-d average checks only its spatial dims, the others every dim
    after the first)"""
    def run(lib):
        x = lib.ones(shape, dtype=lib.float64, requires_grad=True)
        try:
            y = getattr(lib.nn.functional, fn)(x, os)
        except RuntimeError as e:
            return str(e)
        if os != 1:   # torch's backward refuses an empty channel dim (its grad_output check): not compared
            return tuple(y.shape), y.dtype == lib.float64
        y.sum().backward()
        return tuple(y.shape), y.dtype == lib.float64, np.isnan(y.detach().numpy()).all(), tuple(x.grad.shape)
    assert run(ct) == run(torch)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_max_pool1d_values_only(dtype):
    """F.max_pool1d with no indices or gradient wanted runs the values-only kernel: torch's values, NaN and -inf
    picks, geometry (stride, padding, dilation, ceil_mode), 2-d input, non-contiguous input"""
    rs = np.random.RandomState(4)
    a = rs.randn(3, 4, 23)
    a[0, 0, 3] = np.nan
    a[1, 2, :] = -np.inf
    a[2, 1, 5:9] = np.nan
    for xt, xc in ((torch.tensor(a), ct.tensor(a)), (torch.tensor(a).transpose(0, 1), ct.tensor(a).transpose(0, 1)),
                   (torch.tensor(a[0]), ct.tensor(a[0]))):
        xt, xc = xt.to(getattr(torch, dtype)), xc.to(getattr(ct, dtype))
        for kw in ({"kernel_size": 3}, {"kernel_size": 2, "stride": 1}, {"kernel_size": [4], "stride": (3,), "padding": 2},
                   {"kernel_size": 3, "stride": 2, "padding": 1, "dilation": 2, "ceil_mode": True},
                   {"kernel_size": 5, "stride": 4, "ceil_mode": True}):
            e = torch.nn.functional.max_pool1d(xt, **kw)
            r = ct.nn.functional.max_pool1d(xc, **kw)
            assert str(r.dtype) == str(e.dtype) and tuple(r.shape) == tuple(e.shape)
            np.testing.assert_array_equal(r.float().numpy(), e.float().numpy())
            # the indexed (gradient) path agrees
            g = ct.nn.functional.max_pool1d(xc.float().detach().clone().requires_grad_(), **kw)
            np.testing.assert_array_equal(g.detach().numpy(), r.float().numpy())


def _max_pool1d_errors(lib):
    F = lib.nn.functional
    x = lib.zeros(2, 3, 4)
    return [lambda: F.max_pool1d(lib.zeros(4), 2), lambda: F.max_pool1d(lib.zeros(2, 0, 4), 2),
            lambda: F.max_pool1d(x, 0), lambda: F.max_pool1d(x, 2, stride=0), lambda: F.max_pool1d(x, 3, padding=-1),
            lambda: F.max_pool1d(x, 3, padding=2), lambda: F.max_pool1d(x, 2, dilation=0), lambda: F.max_pool1d(x, 5),
            lambda: F.max_pool1d(x, (2, 2)), lambda: F.max_pool1d(x.int(), 2), lambda: F.max_pool1d(x.bool(), 2),
            # a window extent past int64: torch's check on its wrapped value (cthtorch looped over 2^62 taps)
            lambda: F.max_pool1d(x, 2 ** 62, dilation=4)]


@pytest.mark.parametrize("case", range(12))
def test_max_pool1d_values_only_errors(case):
    oracle.raises_like(_max_pool1d_errors(ct)[case], _max_pool1d_errors(torch)[case])
    F = ct.nn.functional
    assert tuple(F.max_pool1d(ct.zeros(0, 3, 4), 2).shape) == tuple(torch.nn.functional.max_pool1d(
        torch.zeros(0, 3, 4), 2).shape)
@pytest.mark.parametrize("call", [
    lambda L, x: L.nn.functional.max_pool2d(x, 5), lambda L, x: L.nn.MaxPool2d(5, return_indices=True)(x),
    lambda L, x: L.nn.functional.avg_pool2d(x, 5), lambda L, x: L.nn.functional.max_pool2d(x[0], 5),
    lambda L, x: L.nn.functional.avg_pool1d(x[0], 5), lambda L, x: L.nn.functional.lp_pool2d(x, 2, 5),
    lambda L, x: L.nn.functional.max_pool2d(x, (5, 1)), lambda L, x: L.nn.functional.avg_pool2d(x, 6, 2, 1)])
def test_kernel_wider_than_input_is_an_error_as_torch(call):
    """the output size rounds down as torch's div_rtn: a kernel wider than the padded input gives a size of 0 or
    less, torch's 'Output size is too small' (C's division toward zero made it 1 and pooled anyway)"""
    x = np.arange(24.0).reshape(1, 2, 3, 4)
    msgs = []
    for L in (ct, torch):
        with pytest.raises(RuntimeError) as e:
            call(L, L.tensor(x))
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]
    for k, s, p, ceil in ((4, 3, 2, True), (3, 2, 1, False), (3, 2, 1, True), (4, 4, 0, True)):   # sizes that stay
        c, t = both(x)
        assert ct.nn.functional.max_pool2d(c, k, s, p, ceil_mode=ceil).shape == \
            torch.nn.functional.max_pool2d(t, k, s, p, ceil_mode=ceil).shape
