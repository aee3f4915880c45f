"""torchvision.ops.deform_conv2d / DeformConv2d (BasicSR's DCNv2Pack, Deformable ConvNets): zero offsets are
torch's conv2d; random fractional offsets, masks, offset groups and weight groups against a per-tap numpy loop
of torchvision's sampling rule (bilinear, zero outside, a point at or past -1 / H reading 0); float64
gradcheck over input, offset, mask, weight and bias; the module's repr and torchvision's error texts."""
import numpy as np
import pytest

import cthtorch
from cthtorch.vision.ops import DeformConv2d, deform_conv2d
import oracle

torch = oracle.require_torch()
rs = np.random.RandomState(5)


def _bilinear(img, y, x):
    H, W = img.shape
    if y <= -1 or y >= H or x <= -1 or x >= W:
        return 0.0
    y0, x0 = int(np.floor(y)), int(np.floor(x))
    ly, lx = y - y0, x - x0
    v = 0.0
    for yy, wy in ((y0, 1 - ly), (y0 + 1, ly)):
        for xx, wx in ((x0, 1 - lx), (x0 + 1, lx)):
            if 0 <= yy < H and 0 <= xx < W:
                v += wy * wx * img[yy, xx]
    return v


def _reference(x, off, w, b, stride, pad, dil, mask):
    B, C, H, W = x.shape
    O, Cg, kh, kw = w.shape
    Ho, Wo = off.shape[2:]
    G = off.shape[1] // (2 * kh * kw)
    groups = C // Cg
    out = np.zeros((B, O, Ho, Wo))
    for n in range(B):
        for c in range(C):
            g = c // (C // G)
            for i in range(kh):
                for j in range(kw):
                    k = i * kw + j
                    for oy in range(Ho):
                        for ox in range(Wo):
                            y = oy * stride[0] - pad[0] + i * dil[0] + off[n, g * 2 * kh * kw + 2 * k, oy, ox]
                            xx = ox * stride[1] - pad[1] + j * dil[1] + off[n, g * 2 * kh * kw + 2 * k + 1, oy, ox]
                            v = _bilinear(x[n, c], y, xx)
                            if mask is not None:
                                v *= mask[n, g * kh * kw + k, oy, ox]
                            wg = c // Cg
                            for o in range(wg * (O // groups), (wg + 1) * (O // groups)):
                                out[n, o, oy, ox] += w[o, c % Cg, i, j] * v
    return out + b[None, :, None, None]


@pytest.mark.parametrize("stride,pad,dil,groups", [((1, 1), (1, 1), (1, 1), 1), ((2, 1), (0, 2), (1, 2), 2)])
def test_zero_offsets_are_torchs_conv2d(stride, pad, dil, groups):
    x, w, b = rs.randn(2, 4, 7, 8), rs.randn(6, 4 // groups, 3, 3), rs.randn(6)
    ho = (7 + 2 * pad[0] - (dil[0] * 2 + 1)) // stride[0] + 1
    wo = (8 + 2 * pad[1] - (dil[1] * 2 + 1)) // stride[1] + 1
    off = np.zeros((2, 2 * 2 * 9, ho, wo))
    ours = deform_conv2d(*(cthtorch.tensor(a) for a in (x, off, w, b)), stride=stride, padding=pad, dilation=dil)
    theirs = torch.nn.functional.conv2d(torch.tensor(x), torch.tensor(w), torch.tensor(b), stride, pad, dil, groups)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("use_mask", [False, True])
def test_fractional_offsets_match_torchvisions_sampling_rule(use_mask):
    x, w, b = rs.randn(2, 4, 6, 5), rs.randn(4, 2, 3, 2), rs.randn(4)
    stride, pad, dil = (2, 1), (1, 2), (1, 2)
    ho, wo = (6 + 2 - 3) // 2 + 1, (5 + 4 - 3) // 1 + 1
    off = rs.uniform(-2.5, 2.5, (2, 2 * 2 * 6, ho, wo))   # two offset groups; many taps land outside
    off[0, 0, 0, 0], off[0, 1, 0, 0] = -0.0, 0.0   # a tap exactly on the padding border
    mask = rs.uniform(0, 1, (2, 2 * 6, ho, wo)) if use_mask else None
    ours = deform_conv2d(cthtorch.tensor(x), cthtorch.tensor(off), cthtorch.tensor(w), cthtorch.tensor(b), stride, pad,
                         dil, None if mask is None else cthtorch.tensor(mask))
    np.testing.assert_allclose(ours.numpy(), _reference(x, off, w, b, stride, pad, dil, mask), rtol=1e-10, atol=1e-10)
    f32 = deform_conv2d(*(cthtorch.tensor(a, dtype=cthtorch.float32) for a in (x, off, w, b)), stride=stride,
                        padding=pad, dilation=dil)
    assert f32.dtype == cthtorch.float32


def test_gradients_pass_gradcheck():
    x = cthtorch.tensor(rs.randn(1, 2, 4, 5), requires_grad=True)
    off = cthtorch.tensor(rs.uniform(-1.3, 1.3, (1, 2 * 9, 4, 5)) + 0.37, requires_grad=True)   # no integer points
    mask = cthtorch.tensor(rs.uniform(0, 1, (1, 9, 4, 5)), requires_grad=True)
    w = cthtorch.tensor(rs.randn(3, 2, 3, 3), requires_grad=True)
    b = cthtorch.tensor(rs.randn(3), requires_grad=True)
    assert cthtorch.autograd.gradcheck(lambda *a: deform_conv2d(a[0], a[1], a[3], a[4], padding=1, mask=a[2]),
                                       (x, off, mask, w, b))


def test_module_and_errors():
    cthtorch.manual_seed(0)
    m = DeformConv2d(4, 6, 3, padding=1, groups=2)
    assert repr(m) == "DeformConv2d(4, 6, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1), groups=2)"
    assert repr(DeformConv2d(4, 6, (3, 2), bias=False)) == "DeformConv2d(4, 6, kernel_size=(3, 2), stride=(1, 1), bias=False)"
    assert m.weight.shape == (6, 2, 3, 3) and m.bias.shape == (6,)
    torch.manual_seed(0)   # torchvision initialises as nn.Conv2d does: the same draws from the same seed
    t = torch.nn.Conv2d(4, 6, 3, padding=1, groups=2)
    np.testing.assert_allclose(m.weight.detach().numpy(), t.weight.detach().numpy(), rtol=1e-6)
    np.testing.assert_allclose(m.bias.detach().numpy(), t.bias.detach().numpy(), rtol=1e-6)
    x = cthtorch.randn(2, 4, 5, 5)
    out = m(x, cthtorch.zeros(2, 18, 5, 5), cthtorch.ones(2, 9, 5, 5))
    ref = cthtorch.nn.functional.conv2d(x, m.weight, m.bias, padding=1, groups=2)
    assert cthtorch.allclose(out, ref, atol=1e-5)
    with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
        DeformConv2d(3, 6, 3, groups=2)
    with pytest.raises(RuntimeError, match=r"Got offset.shape\[1\]=5, while 2 \* weight.size\[2\] \* weight.size\[3\]=18"):
        deform_conv2d(x, cthtorch.zeros(2, 5, 5, 5), m.weight)
    with pytest.raises(RuntimeError, match=r"offset output dims: \(4, 4\) - computed output dims: \(3, 3\)"):
        deform_conv2d(x, cthtorch.zeros(2, 18, 4, 4), m.weight)
