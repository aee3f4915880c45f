"""grid_sampler_2d / grid_sampler_3d (F.grid_sample's kernels, src/ATen/ATSampling.c) against torch: values and
both gradients over modes (bicubic on 4-d), paddings, align_corners, 4-d and 5-d, float64/float32/half/bfloat16,
non-contiguous, empty and out-of-range (NaN, inf) grids; thread-count independence; double backward through the composite;
torch's error types and texts."""
import numpy as np
import pytest

import cthtorch as ct
import oracle

torch = oracle.require_torch()
rs = np.random.RandomState(11)

MODES = ["bilinear", "nearest"]
PADS = ["zeros", "border", "reflection"]


def _pair(shape, lo=None, hi=None, dtype=np.float64):
    a = rs.uniform(lo, hi, shape) if lo is not None else rs.randn(*shape)
    a = a.astype(dtype)
    return ct.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)


def _check(xs, gs, mode, pad, align, tol, grads=True):
    yc = ct.nn.functional.grid_sample(xs[0], gs[0], mode, pad, align)
    yt = torch.nn.functional.grid_sample(xs[1], gs[1], mode, pad, align)
    assert yc.dtype == ct.float64 if yt.dtype == torch.float64 else str(yc.dtype) == str(yt.dtype)
    assert list(yc.shape) == list(yt.shape)
    np.testing.assert_allclose(yc.detach().double().numpy(), yt.detach().double().numpy(), rtol=tol, atol=tol)
    if grads:
        w = rs.randn(*yt.shape)
        yc.backward(ct.tensor(w, dtype=yc.dtype))
        yt.backward(torch.tensor(w, dtype=yt.dtype))
        for a, b in ((xs[0], xs[1]), (gs[0], gs[1])):
            np.testing.assert_allclose(a.grad.double().numpy(), b.grad.double().numpy(), rtol=tol, atol=tol)
    return yc


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("pad", PADS)
@pytest.mark.parametrize("align", [False, True])
@pytest.mark.parametrize("nsp", [2, 3])
def test_values_and_gradients_like_torch(mode, pad, align, nsp):
    sp = (4, 5, 6)[3 - nsp:]
    out = (3, 4, 5)[3 - nsp:]
    xs = _pair((2, 3) + sp)
    gs = _pair((2,) + out + (nsp,), -1.3, 1.3)
    y = _check(xs, gs, mode, pad, align, 1e-10)
    assert y.grad_fn.name() == "GridSampler%dDBackward0" % nsp


@pytest.mark.parametrize("nsp", [2, 3])
def test_float32_and_reduced_precision(nsp):
    sp = (5, 6, 7)[3 - nsp:]
    for dt, tol in ((np.float32, 1e-5), ):
        for mode in MODES:
            xs = _pair((2, 4) + sp, dtype=dt)
            gs = _pair((2,) + sp + (nsp,), -1.2, 1.2, dtype=dt)
            _check(xs, gs, mode, "zeros", False, tol)
    # float16/bfloat16 compute in float32 (torch's CPU kernel computes the coordinates in the reduced type,
    # so its sample positions drift by up to an ulp of the coordinate: only shape and dtype are compared there)
    x = rs.randn(1, 2, 5, 6).astype(np.float32)
    g = rs.uniform(-1, 1, (1, 3, 4, 2)).astype(np.float32)
    for ctd, tdt in ((ct.float16, torch.float16), (ct.bfloat16, torch.bfloat16)):
        xc, gc = ct.tensor(x).to(ctd), ct.tensor(g).to(ctd)
        yc = ct.nn.functional.grid_sample(xc, gc, align_corners=False)
        yt = torch.nn.functional.grid_sample(torch.tensor(x).to(tdt), torch.tensor(g).to(tdt), align_corners=False)
        assert str(yc.dtype) == str(yt.dtype) and list(yc.shape) == list(yt.shape)
        y32 = ct.nn.functional.grid_sample(xc.float(), gc.float(), align_corners=False)
        assert ct.equal(yc, y32.to(ctd))


def test_nearest_ties_and_exact_float32():
    """grid values landing on .5 ties round to even as torch's (coordinates computed in float32)"""
    x = rs.randn(1, 2, 4, 6).astype(np.float32)
    g = np.stack(np.meshgrid(np.linspace(-1, 1, 13), np.linspace(-1, 1, 9)), -1)[None].astype(np.float32)
    for align in (False, True):
        for pad in PADS:
            a = ct.nn.functional.grid_sample(ct.tensor(x), ct.tensor(g), "nearest", pad, align)
            b = torch.nn.functional.grid_sample(torch.tensor(x), torch.tensor(g), "nearest", pad, align)
            np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_non_contiguous_inputs():
    x = rs.randn(2, 6, 5, 3)
    g = rs.uniform(-1.2, 1.2, (2, 2, 4, 3))
    xc, xt = ct.tensor(x).permute(0, 3, 1, 2), torch.tensor(x).permute(0, 3, 1, 2)   # channels last
    gc, gt = ct.tensor(g).permute(0, 2, 3, 1)[..., :2], torch.tensor(g).permute(0, 2, 3, 1)[..., :2]
    xc.requires_grad_(), xt.requires_grad_()
    for mode in MODES:
        a = ct.nn.functional.grid_sample(xc, gc, mode, "border", False)
        b = torch.nn.functional.grid_sample(xt, gt, mode, "border", False)
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-12, atol=1e-12)
        a.sum().backward(), b.sum().backward()
        np.testing.assert_allclose(xc.grad.numpy(), xt.grad.numpy(), rtol=1e-12, atol=1e-12)
        xc.grad = xt.grad = None


def test_empty():
    for xs, gs in (((0, 2, 3, 3), (0, 2, 2, 2)), ((1, 0, 3, 3), (1, 2, 2, 2)), ((1, 2, 3, 3), (1, 0, 2, 2)),
                   ((1, 2, 3, 3, 3), (1, 2, 0, 2, 3))):
        xc, xt = ct.zeros(xs, requires_grad=True), torch.zeros(xs, requires_grad=True)
        gc, gt = ct.zeros(gs, requires_grad=True), torch.zeros(gs, requires_grad=True)
        a = ct.nn.functional.grid_sample(xc, gc, align_corners=False)
        b = torch.nn.functional.grid_sample(xt, gt, align_corners=False)
        assert list(a.shape) == list(b.shape)
        a.sum().backward(), b.sum().backward()
        assert list(xc.grad.shape) == list(xt.grad.shape) and list(gc.grad.shape) == list(gt.grad.shape)
        assert not xc.grad.any() and not gc.grad.any()


def test_nan_inf_grid_and_inf_input_outside():
    x = rs.randn(1, 2, 3, 4)
    x[0, :, 0, 0] = np.inf   # read only by points that sample it, never by points outside
    g = np.array([[[[np.nan, 0.0], [np.inf, 0.2], [-np.inf, -np.inf], [5.0, 7.0], [-3.0, 0.0], [1e30, -1e30]]]])
    for mode in MODES:
        for pad in PADS:
            if pad == "reflection":   # torch's vectorized reflection loses 1e30 to NaN; the exact fmod does not
                g = g[:, :, :5]
            a = ct.nn.functional.grid_sample(ct.tensor(x), ct.tensor(g), mode, pad, False)
            b = torch.nn.functional.grid_sample(torch.tensor(x), torch.tensor(g), mode, pad, False)
            np.testing.assert_array_equal(a.numpy(), b.numpy())


@pytest.mark.parametrize("nsp", [2, 3])
def test_bit_equal_across_thread_counts(nsp):
    sp = (16, 16, 16)[3 - nsp:]
    x = ct.randn((2, 16) + sp, dtype=ct.float32)
    g = ct.rand((2,) + sp + (nsp,)) * 2.4 - 1.2
    old = ct.get_num_threads()
    got = []
    try:
        for n in (1, 2):
            ct.set_num_threads(n)
            xr, gr = x.clone().requires_grad_(), g.clone().requires_grad_()
            y = ct.nn.functional.grid_sample(xr, gr, "bilinear", "reflection", False)
            y.backward(y.detach().cos())
            got.append((y.detach(), xr.grad, gr.grad))
    finally:
        ct.set_num_threads(old)
    for a, b in zip(*got):
        assert ct.equal(a, b)


def test_direct_ops_and_grid_sampler():
    x, g = rs.randn(1, 2, 3, 4), rs.uniform(-1, 1, (1, 2, 2, 2))
    for mode in (0, 1):
        a = ct.grid_sampler_2d(ct.tensor(x), ct.tensor(g), mode, 2, True)
        b = torch.grid_sampler_2d(torch.tensor(x), torch.tensor(g), mode, 2, True)
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12, atol=1e-12)
        a = ct.grid_sampler(ct.tensor(x), ct.tensor(g), mode, 1, False)
        b = torch.grid_sampler(torch.tensor(x), torch.tensor(g), mode, 1, False)
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12, atol=1e-12)
    x, g = rs.randn(1, 2, 3, 4, 2), rs.uniform(-1, 1, (1, 2, 2, 2, 3))
    a = ct.grid_sampler_3d(ct.tensor(x), ct.tensor(g), 0, 0, False)
    b = torch.grid_sampler_3d(torch.tensor(x), torch.tensor(g), 0, 0, False)
    np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("mask", [[True, True], (True, True), [1, 1]])
@pytest.mark.parametrize("how", ["ops", "jit"])
def test_backward_op_takes_a_bool_output_mask(mask, how):
    """aten::grid_sampler_2d_backward's output_mask is bool[2]: stylegan2-ada's GridSampleBackward calls
    torch._C._jit_get_operation("aten::grid_sampler_2d_backward")[0](..., [True, True]) (it was refused as
    'must be tuple of ints')"""
    go, x, g = rs.randn(2, 3, 4, 5), rs.randn(2, 3, 6, 7), rs.uniform(-1.1, 1.1, (2, 4, 5, 2))
    outs = []
    for lib in (ct, torch):
        op = lib.ops.aten.grid_sampler_2d_backward if how == "ops" else \
            lib._C._jit_get_operation("aten::grid_sampler_2d_backward")[0]
        outs.append(op(lib.tensor(go), lib.tensor(x), lib.tensor(g), 0, 0, False, mask))
    for a, b in zip(*outs):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12, atol=1e-12)
    with pytest.raises(TypeError, match="'output_mask' .* must be tuple of bools, not bool"):
        ct.ops.aten.grid_sampler_2d_backward(ct.tensor(go), ct.tensor(x), ct.tensor(g), 0, 0, False, True)
    assert ct.ops.aten.grid_sampler_2d_backward(ct.tensor(go), ct.tensor(x), ct.tensor(g), 0, 0, False,
                                                [True, False])[0].shape == (2, 3, 6, 7)


@pytest.mark.parametrize("nsp", [2, 3])
@pytest.mark.parametrize("pad", PADS)
def test_gradcheck_and_double_backward(nsp, pad):
    sp = (3, 3, 4)[3 - nsp:]
    x = ct.tensor(rs.randn(*((1, 2) + sp)), requires_grad=True)
    g = ct.tensor(rs.uniform(-0.9, 0.9, (1,) + (2,) * nsp + (nsp,)), requires_grad=True)
    _gradchecks(lambda a, b: ct.nn.functional.grid_sample(a, b, "bilinear", pad, False), x, g, 1e-12)


def _gradchecks(fn, x, g, tol):
    assert ct.autograd.gradcheck(fn, (x, g))
    assert ct.autograd.gradgradcheck(fn, (x, g))
    # the create_graph gradients (the composite's) are the kernel's
    y = fn(x, g)
    w = ct.tensor(rs.randn(*y.shape))
    plain = ct.autograd.grad(y, (x, g), w)
    rec = ct.autograd.grad(fn(x, g), (x, g), w, create_graph=True)
    for a, b in zip(plain, rec):
        assert b.requires_grad
        np.testing.assert_allclose(a.numpy(), b.detach().numpy(), rtol=tol, atol=tol)


def _errors(lib):
    F = lib.nn.functional
    x, g = lib.randn(1, 2, 3, 3), lib.rand(1, 2, 2, 2) * 2 - 1
    return [lambda: F.grid_sample(x.int(), g.int(), align_corners=False),
            lambda: F.grid_sample(x, g.double(), align_corners=False),
            lambda: F.grid_sample(x.double(), g, align_corners=False),
            lambda: F.grid_sample(x[0], g, align_corners=False),
            lambda: F.grid_sample(x[0], g[0], align_corners=False),
            lambda: F.grid_sample(x, g[..., :1], align_corners=False),
            lambda: F.grid_sample(x, lib.rand(2, 2, 2, 2), align_corners=False),
            lambda: F.grid_sample(lib.randn(1, 2, 0, 3), g, align_corners=False),
            lambda: F.grid_sample(x, lib.rand(1, 2, 2, 2, 3), align_corners=False),
            lambda: F.grid_sample(lib.randn(1, 2, 2, 2, 2), lib.rand(1, 2, 2, 2, 3), mode="bicubic",
                                  align_corners=False),
            lambda: F.grid_sample(x, g, mode="linear", align_corners=False),
            lambda: F.grid_sample(x, g, padding_mode="circular", align_corners=False),
            lambda: lib.grid_sampler_3d(x, g, 0, 0, False),
            lambda: lib.grid_sampler_2d(lib.tensor(1.0), lib.tensor(1.0), 0, 0, False),
            lambda: lib.grid_sampler_2d(x, lib.tensor(1.0), 0, 0, False),
            lambda: lib.grid_sampler_3d(lib.randn(1, 2, 2, 2, 2).int(), lib.rand(1, 2, 2, 2, 3).int(), 0, 0, False)]


def test_errors_like_torch():
    for c, t in zip(_errors(ct), _errors(torch)):
        oracle.raises_like(c, t)


@pytest.mark.parametrize("pad", PADS)
@pytest.mark.parametrize("align", [False, True])
def test_bicubic_like_torch(pad, align):
    for dt, tol in ((np.float64, 1e-10), (np.float32, 2e-5)):
        xs = _pair((2, 3, 5, 7), dtype=dt)
        gs = _pair((2, 4, 6, 2), -1.4, 1.4, dtype=dt)
        y = _check(xs, gs, "bicubic", pad, align, tol)
        assert y.grad_fn.name() == "GridSampler2DBackward0"
    # NaN, infinite and huge grid values (border/reflection move every tap of a huge one inside)
    x = rs.randn(1, 2, 3, 4)
    g = np.array([[[[np.nan, 0.0], [np.inf, 0.2], [-np.inf, -np.inf], [5.0, 7.0], [-3.0, 0.0], [1e30, -1e30]]]])
    if pad == "reflection":   # torch's vectorized reflection of 1e30 is not the exact one (as above)
        g = g[:, :, :5]
    a = ct.nn.functional.grid_sample(ct.tensor(x), ct.tensor(g), "bicubic", pad, align)
    b = torch.nn.functional.grid_sample(torch.tensor(x), torch.tensor(g), "bicubic", pad, align)
    np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12, atol=1e-12, equal_nan=True)


@pytest.mark.parametrize("pad", PADS)
def test_bicubic_gradcheck_and_double_backward(pad):
    x = ct.tensor(rs.randn(1, 2, 4, 5), requires_grad=True)
    g = ct.tensor(rs.uniform(-1.1, 1.1, (1, 3, 2, 2)), requires_grad=True)
    _gradchecks(lambda a, b: ct.nn.functional.grid_sample(a, b, "bicubic", pad, True), x, g, 1e-11)
