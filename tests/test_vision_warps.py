"""vision.transforms' projective and elastic warps: F.perspective / RandomPerspective and F.elastic_transform /
ElasticTransform on tensors and PIL images. torchvision is not the oracle here (not installed); the checks are
the geometry itself: the solved map takes each endpoint to its startpoint, the identity warp returns the image,
the tensor path agrees with PIL's PERSPECTIVE transform, a constant displacement is a shift, and the sampling
equals torch's grid_sample on the same grid."""
import numpy as np
import pytest

import cthtorch as ct
import oracle
from cthtorch.vision import transforms as T
from cthtorch.vision.transforms import functional as F

SP = [[0, 0], [29, 0], [29, 19], [0, 19]]
EP = [[3, 2], [27, 1], [28, 17], [1, 18]]


def _image(dtype=ct.uint8):
    y, x = np.mgrid[0:20, 0:30]
    img = np.stack([x * 8, y * 12, (x + y) * 5]).astype(np.uint8)   # smooth, so bilinear results compare
    t = ct.tensor(img)
    return t if dtype == ct.uint8 else F.convert_image_dtype(t, dtype)


def test_perspective_coefficients_map_endpoints_to_startpoints():
    a, b, c, d, e, f, g, h = F._perspective_coeffs(SP, EP)
    for (xo, yo), (xi, yi) in zip(EP, SP):
        den = g * xo + h * yo + 1
        assert abs((a * xo + b * yo + c) / den - xi) < 1e-9 and abs((d * xo + e * yo + f) / den - yi) < 1e-9
    with pytest.raises(ValueError, match="four corners"):
        F._perspective_coeffs(SP[:3], EP)


def test_perspective_identity_and_agreement_with_pil():
    img = _image()
    assert ct.equal(F.perspective(img, SP, SP), img)
    pil = F.to_pil_image(img)
    for mode in (T.InterpolationMode.NEAREST, T.InterpolationMode.BILINEAR):
        t = F.perspective(img, SP, EP, interpolation=mode).numpy().astype(int)
        p = np.asarray(F.perspective(pil, SP, EP, interpolation=mode)).transpose(2, 0, 1).astype(int)
        inner = (slice(None), slice(3, -3), slice(4, -4))   # PIL does not blend the border with the fill
        if mode == T.InterpolationMode.NEAREST:
            assert (t == p).all()
        else:
            assert np.abs(t[inner] - p[inner]).max() <= 1
    out = F.perspective(img.float() / 255, SP, EP, fill=[1.0, 0.5, 0.25])
    assert out.dtype == ct.float32 and out.shape == img.shape
    assert out[:, 19, 0].tolist() == [1.0, 0.5, 0.25]   # a corner pulled from outside the image
    with pytest.raises(ValueError, match="unsupported with Tensor"):
        F.perspective(img, SP, EP, interpolation=T.InterpolationMode.BICUBIC)


def test_random_perspective_draws_and_probability():
    ct.manual_seed(3)
    for _ in range(20):
        start, end = T.RandomPerspective.get_params(30, 20, 0.5)
        assert start == SP
        (x0, y0), (x1, y1), (x2, y2), (x3, y3) = end
        assert 0 <= x0 <= 7 and 0 <= y0 <= 5 and 22 <= x1 <= 29 and 0 <= y1 <= 5
        assert 22 <= x2 <= 29 and 14 <= y2 <= 19 and 0 <= x3 <= 7 and 14 <= y3 <= 19
    img = _image()
    assert T.RandomPerspective(p=0.0)(img) is img
    ct.manual_seed(0)
    out = T.RandomPerspective(p=1.0, fill=7)(img)
    ct.manual_seed(0)
    ct.rand(1)   # the coin
    start, end = T.RandomPerspective.get_params(30, 20, 0.5)
    assert ct.equal(out, F.perspective(img, start, end, fill=[7.0] * 3))
    assert isinstance(T.RandomPerspective(p=1.0)(F.to_pil_image(img)), type(F.to_pil_image(img)))


def test_elastic_transform_is_grid_sample_on_the_displaced_grid():
    torch = oracle.require_torch()
    img = _image(ct.float32)
    ct.manual_seed(1)
    disp = ct.rand(1, 20, 30, 2) * 0.2 - 0.1
    out = F.elastic_transform(img, disp)
    ys, xs = np.mgrid[0:20, 0:30]
    base = np.stack([(xs + 0.5) / 15 - 1, (ys + 0.5) / 10 - 1], -1)[None]
    grid = torch.tensor(base + disp.numpy().astype(np.float64), dtype=torch.float32)
    ref = torch.nn.functional.grid_sample(torch.tensor(img.numpy())[None], grid, align_corners=False)[0]
    oracle.same(out, ref, tol=1e-5)


def test_elastic_constant_displacement_is_a_shift():
    img = _image()
    disp = ct.zeros(1, 20, 30, 2)
    disp[..., 0] = 2 * 2 / 30   # two pixels right in x: each output pixel reads two to its right
    out = F.elastic_transform(img, disp, interpolation=T.InterpolationMode.NEAREST, fill=[9, 9, 9])
    assert ct.equal(out[:, :, :-2], img[:, :, 2:])
    assert (out[:, :, -2:] == 9).all()
    with pytest.raises(ValueError, match="displacement shape"):
        F.elastic_transform(img, ct.zeros(1, 20, 29, 2))


def test_elastic_transform_class():
    img = _image()
    ct.manual_seed(0)
    out = T.ElasticTransform(alpha=20.0, sigma=3.0)(img)
    ct.manual_seed(0)
    disp = T.ElasticTransform.get_params([20.0, 20.0], [3.0, 3.0], [20, 30])
    assert disp.shape == (1, 20, 30, 2) and float(disp.abs().max()) <= 20.0 / 20
    assert ct.equal(out, F.elastic_transform(img, disp, fill=[0.0] * 3))
    assert out.dtype == ct.uint8 and out.shape == img.shape
    assert F.to_pil_image(img).size == T.ElasticTransform(alpha=5.0, sigma=2.0)(F.to_pil_image(img)).size
    with pytest.raises(TypeError):
        T.ElasticTransform(alpha="x")


def test_elastic_get_params_blurs_both_fields_with_the_sigma_pair():
    # torchvision's get_params: each field's kernel size from its own sigma, the blur with the (sx, sy) pair,
    # x offsets scaled by alpha[0] / H and y offsets by alpha[1] / W
    alpha, sigma, size = [10.0, 30.0], [1.0, 2.5], [12, 16]
    ct.manual_seed(5)
    disp = T.ElasticTransform.get_params(alpha, sigma, size)
    ct.manual_seed(5)
    dx = F.gaussian_blur(ct.rand([1, 1] + size) * 2 - 1, [9, 9], sigma) * alpha[0] / size[0]
    dy = F.gaussian_blur(ct.rand([1, 1] + size) * 2 - 1, [21, 21], sigma) * alpha[1] / size[1]
    assert tuple(disp.shape) == (1, 12, 16, 2)
    assert ct.equal(disp[..., 0], dx[:, 0]) and ct.equal(disp[..., 1], dy[:, 0])
