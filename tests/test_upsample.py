"""Upsampling in C (src/ATen/ATUpsample.c, declarations/upsample.yaml) and
F.interpolate over it, vs torch: values (indices bit for bit in the nearest
modes), dtypes, sizes vs scale factors, recompute_scale_factor,
align_corners, gradients (gradcheck and gradgradcheck in float64, and
against torch's), grad_fn names, and errors."""
import numpy as np
import pytest

import cthtorch as ct
import oracle

torch = oracle.require_torch()
F, TF = ct.nn.functional, torch.nn.functional
RS = np.random.RandomState(0)
TOL = {"float64": 1e-12, "float32": 2e-6, "float16": 1e-3, "bfloat16": 1e-2}

MODES = [("nearest", 1), ("nearest", 2), ("nearest", 3), ("nearest-exact", 1), ("nearest-exact", 2),
         ("nearest-exact", 3), ("linear", 1), ("bilinear", 2), ("trilinear", 3), ("bicubic", 2)]
INTERP = {"linear", "bilinear", "trilinear", "bicubic"}
SPATIAL = {1: (7,), 2: (5, 6), 3: (4, 5, 3)}


def both(x, dtype="float64"):
    return ct.tensor(x).to(getattr(ct, dtype)), torch.tensor(x).to(getattr(torch, dtype))


def sizing_cases(nd):
    """size / scale_factor / recompute_scale_factor requests of nd spatial dims"""
    return [dict(size=tuple([9, 4, 6][:nd])), dict(size=tuple([2, 11, 3][:nd])), dict(size=3),
            dict(scale_factor=2), dict(scale_factor=1.7), dict(scale_factor=0.6),
            dict(scale_factor=tuple([1.5, 2.25, 0.75][:nd])), dict(scale_factor=1.3, recompute_scale_factor=True),
            dict(scale_factor=2.5, recompute_scale_factor=False), dict(size=tuple(SPATIAL[nd]))]


@pytest.mark.parametrize("mode,nd", MODES)
def test_interpolate_values_match_torch(mode, nd):
    c, t = both(RS.randn(2, 3, *SPATIAL[nd]))
    for kw in sizing_cases(nd):
        for ac in ([None] if mode not in INTERP else [False, True]):
            kw2 = dict(kw, mode=mode, **({} if ac is None else {"align_corners": ac}))
            got, want = F.interpolate(c, **kw2), TF.interpolate(t, **kw2)
            oracle.same(got, want, 0 if mode.startswith("nearest") else 1e-12)


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("mode,nd", MODES)
def test_interpolate_dtypes(mode, nd, dtype):
    c, t = both(RS.randn(2, 2, *SPATIAL[nd]), dtype)
    for kw in (dict(scale_factor=1.5), dict(size=tuple([3, 8, 4][:nd]))):
        kw = dict(kw, mode=mode, **({"align_corners": False} if mode in INTERP else {}))
        oracle.same(F.interpolate(c, **kw), TF.interpolate(t, **kw), 0 if mode.startswith("nearest") else TOL[dtype])


def test_nearest_uint8_and_noncontiguous_input():
    x = RS.randint(0, 255, size=(2, 3, 5, 6)).astype(np.uint8)
    for mode in ("nearest", "nearest-exact"):
        c, t = ct.tensor(x), torch.tensor(x)
        oracle.same(F.interpolate(c, scale_factor=1.7, mode=mode), TF.interpolate(t, scale_factor=1.7, mode=mode), 0)
    c, t = both(RS.randn(3, 2, 6, 5))
    c, t = c.transpose(0, 1).transpose(2, 3), t.transpose(0, 1).transpose(2, 3)
    for mode in ("nearest", "bilinear", "bicubic"):
        oracle.same(F.interpolate(c, size=(7, 4), mode=mode), TF.interpolate(t, size=(7, 4), mode=mode), 1e-12)


def test_nan_inf_and_empty_batch():
    x = RS.randn(1, 2, 4, 5)
    x[0, 0, 1, 2] = np.nan
    x[0, 1, 3, 0] = np.inf
    c, t = both(x)
    for mode in ("nearest", "bilinear", "bicubic"):
        oracle.same(F.interpolate(c, scale_factor=2, mode=mode), TF.interpolate(t, scale_factor=2, mode=mode), 1e-12)
    c, t = both(RS.randn(0, 2, 4, 5))
    oracle.same(F.interpolate(c, size=(3, 3), mode="bilinear"), TF.interpolate(t, size=(3, 3), mode="bilinear"), 0)


def test_upsample_modules():
    c, t = both(RS.randn(1, 2, 4, 5))
    for cm, tm in ((ct.nn.Upsample(scale_factor=2, mode="bicubic", align_corners=True),
                    torch.nn.Upsample(scale_factor=2, mode="bicubic", align_corners=True)),
                   (ct.nn.UpsamplingNearest2d(size=(7, 3)), torch.nn.UpsamplingNearest2d(size=(7, 3))),
                   (ct.nn.UpsamplingBilinear2d(scale_factor=1.5), torch.nn.UpsamplingBilinear2d(scale_factor=1.5))):
        oracle.same(cm(c), tm(t), 1e-12)


@pytest.mark.parametrize("mode,nd", MODES)
def test_gradients_match_torch_and_gradcheck(mode, nd):
    x = RS.randn(1, 2, *[3, 4, 3][:nd])
    kw = dict(scale_factor=1.6, mode=mode, **({"align_corners": False} if mode in INTERP else {}))
    c = ct.tensor(x, requires_grad=True)
    t = torch.tensor(x, requires_grad=True)
    yc, yt = F.interpolate(c, **kw), TF.interpolate(t, **kw)
    assert type(yc.grad_fn).__name__ == type(yt.grad_fn).__name__
    g = RS.randn(*yc.shape)
    gc, = ct.autograd.grad(yc, c, ct.tensor(g), create_graph=True)
    gt, = torch.autograd.grad(yt, t, torch.tensor(g), create_graph=True)
    oracle.same(gc, gt, 1e-12)
    assert type(gc.grad_fn).__name__ == type(gt.grad_fn).__name__
    f = lambda v: F.interpolate(v, **kw)   # noqa: E731
    assert ct.autograd.gradcheck(f, (c,))
    assert ct.autograd.gradgradcheck(f, (c,))


def test_align_corners_gradients_and_float32_backward():
    x = RS.randn(2, 1, 4, 3)
    for mode in ("bilinear", "bicubic"):
        c = ct.tensor(x, dtype=ct.float32, requires_grad=True)
        t = torch.tensor(x, dtype=torch.float32, requires_grad=True)
        kw = dict(size=(7, 5), mode=mode, align_corners=True)
        F.interpolate(c, **kw).pow(2).sum().backward()
        TF.interpolate(t, **kw).pow(2).sum().backward()
        oracle.same(c.grad, t.grad, 1e-5)


@pytest.mark.parametrize("call", [
    lambda L, x: L._C._nn.upsample_bilinear2d(x(2, 3, 4, 5), [3, 3, 3], False),
    lambda L, x: L._C._nn.upsample_bilinear2d(x(2, 3, 4, 5), [0, 3], False),
    lambda L, x: L._C._nn.upsample_bilinear2d(x(2, 3, 4), [2, 3], False),
    lambda L, x: L._C._nn.upsample_bilinear2d(x(2, 0, 4, 5), [2, 3], False),
    lambda L, x: L._C._nn.upsample_nearest1d(x(2, 3, 4, 5), [2]),
    lambda L, x: L._C._nn.upsample_nearest3d(x(2, 3, 4, 4, 4), [0, 2, 2]),
    lambda L, x: L._C._nn.upsample_nearest1d(x(2, 3, 4).int(), [2]),
    lambda L, x: L._C._nn._upsample_nearest_exact1d(x(2, 3, 4).bool(), [2]),
    lambda L, x: L._C._nn.upsample_bicubic2d(x(2, 3, 4, 5).int(), [2, 2], False),
    lambda L, x: L._C._nn.upsample_linear1d(x(2, 3, 4).bool(), [2], False),
    lambda L, x: L.nn.functional.interpolate(x(1, 1, 4), scale_factor=0.1),
    lambda L, x: L.nn.functional.interpolate(x(1, 1, 4), scale_factor=-1.0),
    lambda L, x: L.nn.functional.interpolate(x(1, 1, 4), scale_factor=1e30),
    lambda L, x: L.nn.functional.interpolate(x(2, 3, 4, 5), size=(3, 3), mode="linear"),
    lambda L, x: L.nn.functional.interpolate(x(2, 3, 4, 5), size=(3, 3), mode="trilinear"),
    lambda L, x: L.nn.functional.interpolate(x(2, 3, 4), size=3, mode="bicubic"),
    lambda L, x: L.nn.functional.interpolate(x(2, 3, 4, 5), size=(3, 3), mode="bogus"),
    lambda L, x: L.nn.functional.interpolate(x(2, 3, 4, 5), size=(3, 3), mode="nearest", align_corners=True),
    lambda L, x: L.nn.functional.interpolate(x(2, 3, 4, 5), size=(3, 3, 3)),
    lambda L, x: L.nn.functional.interpolate(x(2, 3, 4, 5), scale_factor=(2, 2, 2)),
    lambda L, x: L.nn.functional.interpolate(x(2, 3, 4, 5), size=(3, 3), scale_factor=2),
    lambda L, x: L.nn.functional.interpolate(x(2, 3, 4, 5)),
    lambda L, x: L.nn.functional.interpolate(x(2, 3, 4, 5), size=(3, 3), recompute_scale_factor=True),
    lambda L, x: L.nn.functional.interpolate(x(2, 3, 4), scale_factor=2, mode="linear", antialias=True),
    lambda L, x: L.nn.functional.interpolate(x(2, 3, 4, 5), size=(3, 3.5)),
    # a one-item size list where the op takes 2 or 3: torch's parser keeps it and the kernel refuses
    lambda L, x: L._C._nn.upsample_bilinear2d(x(2, 3, 4, 5), [3], False),
    lambda L, x: L._C._nn.upsample_nearest2d(x(2, 3, 4, 5), [3]),
    lambda L, x: L._C._nn._upsample_nearest_exact2d(x(2, 3, 4, 5), (3,)),
    lambda L, x: L._C._nn.upsample_bicubic2d(x(2, 3, 4, 5), [3], True),
    lambda L, x: L._C._nn.upsample_nearest3d(x(2, 3, 4, 4, 4), [3]),
    lambda L, x: L._C._nn.upsample_trilinear3d(x(2, 3, 4, 4, 4), [3, 3], False),
    lambda L, x: L._C._nn.upsample_linear1d(x(2, 3, 4), [3, 3], False),
    lambda L, x: L._C._nn._upsample_bilinear2d_aa(x(2, 3, 4, 5), [3], False),
    lambda L, x: L._C._nn._upsample_bicubic2d_aa(x(2, 3, 4, 5), [3, 3, 3], False),
    lambda L, x: L._C._nn._upsample_bilinear2d_aa(x(2, 3, 4), [3, 3], False),
    lambda L, x: L._C._nn._upsample_bicubic2d_aa(x(2, 0, 4, 5), [3, 3], False),
    lambda L, x: L._C._nn._upsample_bilinear2d_aa(x(2, 3, 4, 5), [0, 3], False),
    lambda L, x: L._C._nn._upsample_bilinear2d_aa(x(2, 3, 4, 5).half(), [3, 3], False),
    lambda L, x: L._C._nn._upsample_bicubic2d_aa(x(2, 3, 4, 5).int(), [3, 3], False),
    lambda L, x: L.nn.functional.interpolate(x(2, 3, 4, 5, 6), size=(3, 3, 3), mode="trilinear", antialias=True),
    lambda L, x: L.nn.functional.interpolate(x(2, 3, 4, 5), size=(3, 3), mode="nearest", antialias=True),
])
def test_errors_match_torch(call):
    oracle.raises_like(lambda: call(ct, ct.zeros), lambda: call(torch, torch.zeros))


def test_backward_entry_checks_grad_shape():
    def call(L, op):
        return op(L.zeros(2, 3, 2, 3), [2, 2], [2, 3, 4, 5], False)
    oracle.raises_like(lambda: call(ct, ct._C._internal.upsample_bilinear2d_backward),
                       lambda: call(torch, torch.ops.aten.upsample_bilinear2d_backward))
    with pytest.raises(RuntimeError, match="It is expected input_size equals to 4, but got size 3"):
        ct._C._internal.upsample_bilinear2d_backward(ct.zeros(2, 3, 2, 2), [2, 2], [2, 3, 4], False)


def test_one_item_size_list_vs_lone_int():
    """a lone int still fills every spatial dim (torch's int[2] parsing); only a list keeps its length"""
    c, t = both(RS.randn(1, 2, 4, 5))
    oracle.same(ct._C._nn.upsample_bilinear2d(c, 3, False), torch._C._nn.upsample_bilinear2d(t, 3, False), 1e-12)
    oracle.same(ct._C._nn.upsample_nearest2d(c, 7), torch._C._nn.upsample_nearest2d(t, 7), 0)
    # int[2] pooling arguments still take a one-item list, as torch's pooling kernels do
    oracle.same(ct.nn.functional.max_pool2d(c, [2]), torch.nn.functional.max_pool2d(t, [2]), 0)


AA_SIZES = [dict(size=(5, 7)), dict(size=(3, 30)), dict(scale_factor=0.37), dict(scale_factor=2.3),
            dict(size=(1, 1)), dict(scale_factor=(0.5, 1.0)), dict(size=(7, 5)), dict(scale_factor=0.25)]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
def test_antialias_values_match_torch(mode, dtype):
    """torch's _upsample_{bilinear,bicubic}2d_aa: downsampling widens the filter (PIL's), upsampling is the plain
    filter with PIL's cubic A = -0.5, an unchanged dim is left as it is"""
    for shape in [(2, 3, 17, 23), (1, 2, 5, 6), (1, 1, 40, 9)]:
        c, t = both(RS.randn(*shape), dtype)
        for kw in AA_SIZES + [dict(size=shape[2:])]:
            for ac in (False, True):
                kw2 = dict(kw, mode=mode, antialias=True, align_corners=ac)
                # float32: sums of up to ~20 taps; the sanitizer build (no FMA contraction) rounds
                # about 1.7e-6 apart at values near 0.6, so 1e-5 (torch.testing's float32 atol)
                oracle.same(F.interpolate(c, **kw2), TF.interpolate(t, **kw2), 1e-12 if dtype == "float64" else 1e-5)


def test_antialias_nan_inf_and_noncontiguous():
    x = RS.randn(1, 2, 9, 8)
    x[0, 0, 4, 3] = np.nan
    x[0, 1, 0, 7] = np.inf
    c, t = both(x)
    for kw in (dict(size=(4, 3)), dict(size=(9, 3)), dict(size=(4, 8))):
        for mode in ("bilinear", "bicubic"):
            oracle.same(F.interpolate(c, mode=mode, antialias=True, **kw),
                        TF.interpolate(t, mode=mode, antialias=True, **kw), 1e-12)
    c, t = both(RS.randn(3, 2, 12, 10))
    c, t = c.transpose(0, 1).transpose(2, 3), t.transpose(0, 1).transpose(2, 3)
    oracle.same(F.interpolate(c, size=(4, 5), mode="bicubic", antialias=True),
                TF.interpolate(t, size=(4, 5), mode="bicubic", antialias=True), 1e-12)


U8_SIZES = [(16, 16), (11, 80), (60, 13), (7, 5), (32, 21), (37, 53), (1, 9), (9, 1), (1, 1)]


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
@pytest.mark.parametrize("channels", [1, 3, 4, 5, 8])
def test_antialias_uint8_bit_exact(mode, channels):
    """torch's fixed-point uint8 kernel (int16 weights, int32 sums, each pass rounded to uint8): random images up
    and down, both align_corners, sizes and scale factors, bit for bit. torch runs its AVX2 kernel for <= 4
    channels and its generic one above; both agree except for an output width of 1 with > 4 channels, where
    torch's generic (and its float) kernel gives every row the first row's value: there we match the AVX2 one.
    (cthtorch's float kernel gives the separable values there too.)"""
    rs = np.random.RandomState(channels)
    for shape in [(2, channels, 37, 53), (1, channels, 20, 31), (1, channels, 5, 7)]:
        x = rs.randint(0, 256, size=shape).astype(np.uint8)
        c, t = ct.tensor(x), torch.tensor(x)
        for kw in [dict(size=s) for s in U8_SIZES] + [dict(scale_factor=0.3), dict(scale_factor=1.7),
                                                     dict(scale_factor=(0.5, 2.5)), dict(size=shape[2:])]:
            for ac in (False, True):
                kw2 = dict(kw, mode=mode, antialias=True, align_corners=ac)
                yc = F.interpolate(c, **kw2)
                if channels > 4 and yc.shape[-1] == 1 and yc.shape[-2] > 1:
                    yt = TF.interpolate(torch.tensor(x[:, :4]), **kw2)   # torch's AVX2 kernel
                    yc = yc[:, :4]
                elif channels == 3 and yc.shape[-2:] == (1, 1):
                    # torch's AVX2 kernel fails an internal assert on a 3-channel 1x1 output: its generic one
                    yt = TF.interpolate(torch.tensor(np.concatenate([x, x[:, :2]], 1)), **kw2)[:, :3]
                else:
                    yt = TF.interpolate(t, **kw2)
                assert yc.dtype == ct.uint8
                assert np.array_equal(yc.numpy(), yt.numpy()), (shape, kw2)


def test_antialias_uint8_noncontiguous_and_extremes():
    x = RS.randint(0, 256, size=(3, 2, 40, 30)).astype(np.uint8)
    x[0, 0] = 255   # bicubic overshoots: clamped to 0..255 as torch's
    x[1, 1, ::2] = 0
    c, t = ct.tensor(x), torch.tensor(x)
    for mode in ("bilinear", "bicubic"):
        for kw in (dict(size=(13, 7)), dict(size=(90, 70)), dict(size=(40, 9))):
            assert np.array_equal(F.interpolate(c, mode=mode, antialias=True, **kw).numpy(),
                                  TF.interpolate(t, mode=mode, antialias=True, **kw).numpy())
        cv, tv = c.transpose(2, 3)[:, :, ::2], t.transpose(2, 3)[:, :, ::2]
        assert np.array_equal(F.interpolate(cv, size=(6, 11), mode=mode, antialias=True).numpy(),
                              TF.interpolate(tv, size=(6, 11), mode=mode, antialias=True).numpy())
    # other integer dtypes are refused as torch refuses them
    with pytest.raises(NotImplementedError, match="compute_index_ranges_weights.*Int"):
        F.interpolate(ct.zeros(1, 1, 8, 8, dtype=ct.int32), size=(3, 3), mode="bilinear", antialias=True)


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
@pytest.mark.parametrize("kw", [dict(size=(4, 11)), dict(scale_factor=0.4), dict(size=(3, 3), align_corners=True)])
def test_antialias_gradients_match_torch_and_gradcheck(mode, kw):
    x = RS.randn(1, 2, 9, 7)
    kw = dict(kw, mode=mode, antialias=True)
    c = ct.tensor(x, requires_grad=True)
    t = torch.tensor(x, requires_grad=True)
    yc, yt = F.interpolate(c, **kw), TF.interpolate(t, **kw)
    assert type(yc.grad_fn).__name__ == type(yt.grad_fn).__name__
    g = RS.randn(*yc.shape)
    gc, = ct.autograd.grad(yc, c, ct.tensor(g))
    gt, = torch.autograd.grad(yt, t, torch.tensor(g))
    oracle.same(gc, gt, 1e-12)
    f = lambda v: F.interpolate(v, **kw)   # noqa: E731
    assert ct.autograd.gradcheck(f, (c,))
    assert ct.autograd.gradgradcheck(f, (c,))
    # float32 backward against torch's
    c32 = ct.tensor(x, dtype=ct.float32, requires_grad=True)
    t32 = torch.tensor(x, dtype=torch.float32, requires_grad=True)
    F.interpolate(c32, **kw).pow(2).sum().backward()
    TF.interpolate(t32, **kw).pow(2).sum().backward()
    oracle.same(c32.grad, t32.grad, 1e-5)


@pytest.mark.parametrize("name,kw", [("upsample", dict(scale_factor=2)), ("upsample", dict(size=5, mode="bilinear")),
                                     ("upsample_nearest", dict(scale_factor=2)),
                                     ("upsample_bilinear", dict(size=(3, 5)))])
def test_deprecated_upsample_functions_warn_as_torch(name, kw):
    """F.upsample/upsample_nearest/upsample_bilinear (pre-0.4 code) warn on every call with torch's UserWarning and
    give interpolate's values (upsample_bilinear with align_corners=True)"""
    import warnings
    x = RS.standard_normal((1, 2, 3, 4)).astype("float32")
    got = []
    for m in (ct, torch):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            for _ in range(2):
                out = getattr(m.nn.functional, name)(m.tensor(x), **kw)
        got.append((out.numpy(), [(r.category, str(r.message)) for r in w]))
    assert got[0][1] == got[1][1] and len(got[0][1]) == 2
    np.testing.assert_allclose(got[0][0], got[1][0], rtol=1e-6, atol=1e-6)
