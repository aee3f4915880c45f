"""torchvision.ops roi_align / roi_pool (src/ATen/ATRoi.c, cthtorch/vision/ops/roi_align.py, roi_pool.py):
values against a direct computation with torch ops (the bilinear samples of each bin, and for boxes inside
the map F.grid_sample of the same points), gradients with gradcheck in float64, the box-list form, the modules'
reprs, and the checks on bad boxes."""
import math

import numpy as np
import pytest

import cthtorch as ct
from cthtorch.vision import ops
import oracle

torch = oracle.require_torch()
rs = np.random.RandomState(5)


def ref_bilinear(plane, y, x):
    # torchvision's bilinear_interpolate: nothing beyond one pixel outside, clamped on the border
    H, W = plane.shape
    if y < -1.0 or y > H or x < -1.0 or x > W:
        return plane.new_zeros(())
    y, x = max(y, 0.0), max(x, 0.0)
    yl, xl = int(y), int(x)
    if yl >= H - 1:
        yl = yh = H - 1
        y = float(yl)
    else:
        yh = yl + 1
    if xl >= W - 1:
        xl = xh = W - 1
        x = float(xl)
    else:
        xh = xl + 1
    ly, lx = y - yl, x - xl
    return ((1 - ly) * (1 - lx) * plane[yl, xl] + (1 - ly) * lx * plane[yl, xh] + ly * (1 - lx) * plane[yh, xl]
            + ly * lx * plane[yh, xh])


def ref_roi_align(x, rois, out, scale, ratio, aligned):
    PH, PW = out
    res = torch.zeros(rois.shape[0], x.shape[1], PH, PW, dtype=torch.float64)
    off = 0.5 if aligned else 0.0
    for k, r in enumerate(rois.tolist()):
        b = int(r[0])
        x1, y1, x2, y2 = (v * scale - off for v in r[1:])
        rw, rh = x2 - x1, y2 - y1
        if not aligned:
            rw, rh = max(rw, 1.0), max(rh, 1.0)
        bh, bw = rh / PH, rw / PW
        gh = ratio if ratio > 0 else math.ceil(rh / PH)
        gw = ratio if ratio > 0 else math.ceil(rw / PW)
        for c in range(x.shape[1]):
            for ph in range(PH):
                for pw in range(PW):
                    acc = torch.zeros((), dtype=torch.float64)
                    for iy in range(gh):
                        for ix in range(gw):
                            acc = acc + ref_bilinear(x[b, c].double(), y1 + ph * bh + (iy + .5) * bh / gh,
                                                     x1 + pw * bw + (ix + .5) * bw / gw)
                    res[k, c, ph, pw] = acc / max(gh * gw, 1)
    return res


def rand_rois(K, N, H, W, lo=-2.0, spread=1.3):
    b = rs.randint(0, N, size=(K, 1)).astype(np.float64)
    p1 = rs.uniform(lo, [W, H], size=(K, 2))
    p2 = p1 + rs.uniform(0.2, [W * spread, H * spread], size=(K, 2))
    return np.concatenate([b, p1, p2], axis=1)


@pytest.mark.parametrize("aligned", [False, True])
@pytest.mark.parametrize("ratio", [-1, 0, 2])
@pytest.mark.parametrize("scale", [1.0, 0.5])
def test_roi_align_matches_bilinear_samples(aligned, ratio, scale):
    xn = rs.randn(2, 3, 7, 9)
    rois = rand_rois(5, 2, 7 / scale, 9 / scale)
    got = ops.roi_align(ct.tensor(xn), ct.tensor(rois), (3, 2), scale, ratio, aligned)
    want = ref_roi_align(torch.tensor(xn), torch.tensor(rois), (3, 2), scale, ratio, aligned)
    assert got.shape == (5, 3, 3, 2) and got.dtype == ct.float64
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12, atol=1e-12)
    got32 = ops.roi_align(ct.tensor(xn).float(), ct.tensor(rois).float(), (3, 2), scale, ratio, aligned)
    assert got32.dtype == ct.float32
    np.testing.assert_allclose(got32.numpy(), want.numpy(), rtol=1e-4, atol=1e-5)


def test_roi_align_inside_map_equals_grid_sample():
    # boxes within [0, W-1] x [0, H-1] sample where grid_sample (align_corners=True) samples the same points
    xn = rs.randn(1, 2, 6, 8)
    rois = np.array([[0, 0.5, 1.0, 6.0, 4.5], [0, 2.0, 0.2, 3.1, 4.9]])
    PH, PW, g = 2, 3, 2
    got = ops.roi_align(ct.tensor(xn), ct.tensor(rois), (PH, PW), 1.0, g, True)
    want = []
    for r in rois:
        x1, y1, x2, y2 = r[1:] - 0.5
        ys = y1 + (np.arange(PH * g) + 0.5) * (y2 - y1) / (PH * g)
        xs = x1 + (np.arange(PW * g) + 0.5) * (x2 - x1) / (PW * g)
        gy, gx = np.meshgrid(ys / 5 * 2 - 1, xs / 7 * 2 - 1, indexing="ij")
        grid = torch.tensor(np.stack([gx, gy], -1)[None])
        s = torch.nn.functional.grid_sample(torch.tensor(xn), grid, align_corners=True)
        want.append(s.reshape(2, PH, g, PW, g).mean((2, 4)))
    np.testing.assert_allclose(got.numpy(), torch.stack(want).numpy(), rtol=1e-10, atol=1e-12)


def test_roi_align_box_list_and_module():
    xn = rs.randn(2, 3, 8, 8)
    b0, b1 = rs.uniform(0, 4, (2, 4)), rs.uniform(0, 4, (3, 4))
    b0[:, 2:] += 3
    b1[:, 2:] += 3
    rois = np.concatenate([np.concatenate([np.full((2, 1), 0.), b0], 1), np.concatenate([np.full((3, 1), 1.), b1], 1)])
    x = ct.tensor(xn)
    a = ops.roi_align(x, [ct.tensor(b0), ct.tensor(b1)], 2, 0.5, 2)
    b = ops.roi_align(x, ct.tensor(rois), 2, 0.5, 2)
    assert ct.equal(a, b)
    m = ops.RoIAlign((2, 2), spatial_scale=0.5, sampling_ratio=2)
    assert repr(m) == "RoIAlign(output_size=(2, 2), spatial_scale=0.5, sampling_ratio=2, aligned=False)"
    assert ct.equal(m(x, ct.tensor(rois)), b)
    assert repr(ops.RoIPool(7, 0.25)) == "RoIPool(output_size=7, spatial_scale=0.25)"
    empty = ops.roi_align(x, ct.zeros(0, 5, dtype=ct.float64), 3)
    assert empty.shape == (0, 3, 3, 3)


@pytest.mark.parametrize("aligned", [False, True])
def test_roi_align_gradcheck(aligned):
    x = ct.tensor(rs.randn(2, 2, 5, 6), requires_grad=True)
    rois = ct.tensor(rand_rois(4, 2, 5, 6))
    assert ct.autograd.gradcheck(lambda t: ops.roi_align(t, rois, (2, 3), 1.0, -1, aligned), (x,))
    assert ct.autograd.gradgradcheck(lambda t: ops.roi_align(t, rois, (2, 3), 1.0, 2, aligned), (x,))
    y = ops.roi_align(x, rois, 2)
    assert type(y.grad_fn).__name__ == "RoiAlignBackward0"
    assert ops.roi_align(x.float(), rois.float(), 2).sum().backward() is None


def ref_roi_pool(x, rois, out, scale):
    PH, PW = out
    H, W = x.shape[2:]
    res = torch.zeros(rois.shape[0], x.shape[1], PH, PW, dtype=x.dtype)
    for k, r in enumerate(rois.tolist()):
        # C's round: halves away from zero
        sw, sh, ew, eh = (int(math.floor(abs(v * scale) + 0.5)) * (1 if v >= 0 else -1) for v in r[1:])
        rw, rh = max(ew - sw + 1, 1), max(eh - sh + 1, 1)
        for ph in range(PH):
            for pw in range(PW):
                hs = min(max(math.floor(ph * rh / PH) + sh, 0), H)
                he = min(max(math.ceil((ph + 1) * rh / PH) + sh, 0), H)
                ws = min(max(math.floor(pw * rw / PW) + sw, 0), W)
                we = min(max(math.ceil((pw + 1) * rw / PW) + sw, 0), W)
                if he > hs and we > ws:
                    res[k, :, ph, pw] = x[int(r[0]), :, hs:he, ws:we].amax((1, 2))
    return res


@pytest.mark.parametrize("scale", [1.0, 0.5])
def test_roi_pool_matches_bin_maxima(scale):
    xn = rs.randn(2, 3, 7, 9)
    rois = rand_rois(6, 2, 7 / scale, 9 / scale, lo=-4.0, spread=1.6)
    got = ops.roi_pool(ct.tensor(xn), ct.tensor(rois), (3, 4), scale)
    want = ref_roi_pool(torch.tensor(xn), torch.tensor(rois), (3, 4), scale)
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    got32 = ops.roi_pool(ct.tensor(xn).float(), ct.tensor(rois).float(), (3, 4), scale)
    np.testing.assert_array_equal(got32.numpy(), want.float().numpy())


def test_roi_pool_gradient():
    # distinct values: each bin's maximum is unique, so the function is differentiable there
    xn = rs.permutation(2 * 2 * 6 * 6).reshape(2, 2, 6, 6) / 7.0
    x = ct.tensor(xn, requires_grad=True)
    rois = ct.tensor(rand_rois(4, 2, 6, 6))
    assert ct.autograd.gradcheck(lambda t: ops.roi_pool(t, rois, 2, 1.0), (x,))
    y = ops.roi_pool(x, [rois[:, 1:]], 3)
    assert type(y.grad_fn).__name__ == "RoiPoolBackward0"


def test_roi_bad_boxes():
    x = ct.zeros(1, 1, 4, 4)
    with pytest.raises(AssertionError, match=r"The boxes tensor shape is not correct as Tensor\[K, 5\]"):
        ops.roi_align(x, ct.zeros(2, 4), 2)
    with pytest.raises(AssertionError, match=r"List\[Tensor\[L, 4\]\]"):
        ops.roi_pool(x, [ct.zeros(2, 5)], 2)
    with pytest.raises(AssertionError, match="boxes is expected to be a Tensor"):
        ops.roi_align(x, 3, 2)
    with pytest.raises(IndexError, match="batch index"):
        ops.roi_align(x, ct.tensor([[1.0, 0, 0, 2, 2]]), 2)
    with pytest.raises(RuntimeError):
        ops.roi_align(x, ct.zeros(1, 5, dtype=ct.float64), 2)
    with pytest.raises(RuntimeError):
        ops.roi_pool(x.long(), ct.zeros(1, 5, dtype=ct.int64), 2)


def test_ps_roi_align_is_roi_align_per_bin_channel():
    # position-sensitive: output channel c, bin (ph, pw) equals aligned roi_align's bin of input channel
    # (c * PH + ph) * PW + pw
    PH, PW, Co = 2, 3, 2
    xn = rs.randn(2, Co * PH * PW, 7, 8)
    rois = ct.tensor(rand_rois(4, 2, 7, 8))
    got = ops.ps_roi_align(ct.tensor(xn), rois, (PH, PW), 1.0, 2)
    full = ops.roi_align(ct.tensor(xn), rois, (PH, PW), 1.0, 2, aligned=True)
    assert got.shape == (4, Co, PH, PW)
    for c in range(Co):
        for ph in range(PH):
            for pw in range(PW):
                assert ct.equal(got[:, c, ph, pw], full[:, (c * PH + ph) * PW + pw, ph, pw])
    x = ct.tensor(rs.randn(1, 4, 5, 5), requires_grad=True)
    r = ct.tensor(rand_rois(3, 1, 5, 5))
    assert ct.autograd.gradcheck(lambda t: ops.ps_roi_align(t, r, 2, 0.8, -1), (x,))
    assert repr(ops.PSRoIAlign(2, 1.0, 2)) == "PSRoIAlign(output_size=2, spatial_scale=1.0, sampling_ratio=2)"
    with pytest.raises(RuntimeError, match="input channels must be a multiple of pooling height \\* pooling width"):
        ops.ps_roi_align(ct.zeros(1, 3, 4, 4), ct.zeros(1, 5), 2)


def ps_roi_pool_bins(rois, PH, PW, H, W, clip_h, clip_w):
    # torchvision's ps_roi_pool bins: corners rounded half away from zero, sizes without roi_pool's +1, ends
    # clipped to clip_h / clip_w (its CPU forward clips to H - 1 and W - 1, its backward to H and W)
    for k, r in enumerate(rois.tolist()):
        sw, sh, ew, eh = (int(math.floor(abs(v) + 0.5)) * (1 if v >= 0 else -1) for v in r[1:])
        rw, rh = max(ew - sw, 1), max(eh - sh, 1)
        for ph in range(PH):
            for pw in range(PW):
                hs = min(max(math.floor(ph * rh / PH) + sh, 0), clip_h)
                he = min(max(math.ceil((ph + 1) * rh / PH) + sh, 0), clip_h)
                ws = min(max(math.floor(pw * rw / PW) + sw, 0), clip_w)
                we = min(max(math.ceil((pw + 1) * rw / PW) + sw, 0), clip_w)
                if he > hs and we > ws:
                    yield k, int(r[0]), ph, pw, slice(hs, he), slice(ws, we)


def test_ps_roi_pool_bin_means():
    PH, PW, Co = 2, 2, 3
    xn = rs.randn(2, Co * PH * PW, 8, 9)
    rois = rand_rois(5, 2, 8, 9, lo=-3.0, spread=1.5)
    # a box over the whole map: its last bins end at the map's last row and column
    rois = np.concatenate([rois, [[1, 0, 0, 9, 8], [0, 2, 3, 9.4, 8.2]]])
    got = ops.ps_roi_pool(ct.tensor(xn), ct.tensor(rois), (PH, PW), 1.0)
    x = torch.tensor(xn)
    want = torch.zeros(len(rois), Co, PH, PW, dtype=torch.float64)
    for k, b, ph, pw, hsl, wsl in ps_roi_pool_bins(rois, PH, PW, 8, 9, 7, 8):
        for c in range(Co):
            want[k, c, ph, pw] = x[b, (c * PH + ph) * PW + pw, hsl, wsl].mean()
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12, atol=1e-14)
    # the backward spreads each bin's gradient over the bin clipped to the map's sizes, as torchvision's
    gon = rs.randn(len(rois), Co, PH, PW)
    xg = ct.tensor(xn, requires_grad=True)
    ops.ps_roi_pool(xg, ct.tensor(rois), (PH, PW), 1.0).backward(ct.tensor(gon))
    gwant = torch.zeros(xn.shape, dtype=torch.float64)
    for k, b, ph, pw, hsl, wsl in ps_roi_pool_bins(rois, PH, PW, 8, 9, 8, 9):
        for c in range(Co):
            area = (hsl.stop - hsl.start) * (wsl.stop - wsl.start)
            gwant[b, (c * PH + ph) * PW + pw, hsl, wsl] += gon[k, c, ph, pw] / area
    np.testing.assert_allclose(xg.grad.numpy(), gwant.numpy(), rtol=1e-12, atol=1e-14)
    # boxes inside the map (no bin reaches its last row or column): the backward is the forward's gradient
    inner = ct.tensor([[0, 0.2, 0.6, 5.3, 4.9], [1, 2.0, 1.0, 7.4, 6.2], [0, 3.0, 2.0, 3.2, 2.4]], dtype=ct.float64)
    assert ct.autograd.gradcheck(lambda t: ops.ps_roi_pool(t, inner, (PH, PW), 1.0), (xg,))
    assert ct.autograd.gradgradcheck(lambda t: ops.ps_roi_pool(t, ct.tensor(rois), (PH, PW), 1.0), (xg,))
    assert repr(ops.PSRoIPool(3, 0.5)) == "PSRoIPool(output_size=3, spatial_scale=0.5)"
    # an output size whose bin count overflows int64 is refused, not a division by zero
    with pytest.raises(RuntimeError, match="input channels must be a multiple of pooling height \\* pooling width"):
        ops.ps_roi_pool(ct.tensor(xn), ct.tensor(rois), (2 ** 32, 2 ** 32), 1.0)
    with pytest.raises(RuntimeError, match="input channels must be a multiple of pooling height \\* pooling width"):
        ops.ps_roi_align(ct.tensor(xn), ct.tensor(rois), (2 ** 32, 2 ** 32), 1.0)


def test_roi_bad_coordinates_and_empty_maps():
    # NaN / inf / huge boxes and empty feature maps give finite zeros or NaN-free results, never a crash
    x = ct.tensor(rs.randn(1, 2, 5, 5))
    bad = ct.tensor([[0, float("nan"), 0, 2, 2], [0, 0, 0, float("inf"), 3], [0, -1e30, -1e30, 1e30, 1e30]],
                    dtype=ct.float64)
    for fn in (ops.roi_align, ops.roi_pool):
        assert fn(x, bad, 2).shape == (3, 2, 2, 2)
    assert ops.ps_roi_pool(ct.zeros(1, 4, 5, 5, dtype=ct.float64), bad, 2).shape == (3, 1, 2, 2)
    empty = ops.roi_align(ct.zeros(1, 2, 0, 0, dtype=ct.float64), ct.tensor([[0., 0, 0, 3, 3]], dtype=ct.float64), 2)
    assert ct.equal(empty, ct.zeros(1, 2, 2, 2, dtype=ct.float64))
    # a non-contiguous input gives what its contiguous copy gives
    xt = ct.tensor(rs.randn(1, 2, 6, 7)).transpose(2, 3)
    r = ct.tensor([[0., 0.5, 1, 4, 5]], dtype=ct.float64)
    assert ct.equal(ops.roi_align(xt, r, 3, 1.0, 2), ops.roi_align(xt.contiguous(), r, 3, 1.0, 2))


def test_roi_align_huge_sampling_ratio_is_capped():
    # an explicit sampling_ratio is capped at 4096 samples per bin side, as the adaptive one is: 2**40 ran
    # 2**80 samples per bin (and overflowed their int64 count). Run apart, so that a hang fails the test
    import os
    import subprocess
    import sys
    code = ("import cthtorch as ct\nfrom cthtorch.vision import ops\nct.manual_seed(0)\n"
            "x = ct.rand(1, 1, 5, 6)\nb = ct.tensor([[0, 0.5, 1, 4, 4.5]])\n"
            "print(ct.equal(ops.roi_align(x, b, 1, sampling_ratio=2**40), ops.roi_align(x, b, 1, sampling_ratio=4096)))")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)
    assert out.returncode == 0 and out.stdout.strip() == "True", out.stderr
