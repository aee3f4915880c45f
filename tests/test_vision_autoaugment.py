"""AutoAugment's learned policies, AugMix and the v2 auto-augment transforms: for each seed the ops, bins and
signs are those torch's generator gives in torchvision's draw order (replayed here on torch), and the output
is those ops applied in turn. The geometric primitives of the tensor path (affine, rotate) are checked
against torch's own grid_sample on torchvision's affine grid. (torchvision is not installed here.)"""
import math

import numpy as np
import pytest

import cthtorch
from cthtorch.vision import tv_tensors
from cthtorch.vision import transforms as T
from cthtorch.vision.transforms import autoaugment as AA, functional as F

NEAREST, BILINEAR = F.InterpolationMode.NEAREST, F.InterpolationMode.BILINEAR


def _u8(seed, shape=(3, 14, 18)):
    return cthtorch.from_numpy(np.random.RandomState(seed).randint(0, 256, shape).astype(np.uint8))


# ---- the tensor warps against torch's grid_sample ----

def _torch_inverse(center, angle, translate, scale, shear):
    rot, sx, sy = math.radians(angle), math.radians(shear[0]), math.radians(shear[1])
    a = math.cos(rot - sy) / math.cos(sy)
    b = -math.cos(rot - sy) * math.tan(sx) / math.cos(sy) - math.sin(rot)
    c = math.sin(rot - sy) / math.cos(sy)
    d = -math.sin(rot - sy) * math.tan(sx) / math.cos(sy) + math.cos(rot)
    # the inverse of [[a, b], [c, d]] (determinant 1) about center, then translated
    m = np.array([[d, -b], [-c, a]]) / scale
    t = m @ np.array([-center[0] - translate[0], -center[1] - translate[1]]) + np.array(center)
    return [m[0, 0], m[0, 1], t[0], m[1, 0], m[1, 1], t[1]]


def _torch_warp(torch, img, matrix, mode, fill, out_size=None):
    h, w = img.shape[-2:]
    ow, oh = out_size or (w, h)
    dt = img.dtype if img.is_floating_point() else torch.float32
    theta = torch.tensor(matrix, dtype=dt).reshape(2, 3)
    ys, xs = torch.meshgrid(torch.linspace(-oh * 0.5 + 0.5, oh * 0.5 - 0.5, oh),
                            torch.linspace(-ow * 0.5 + 0.5, ow * 0.5 - 0.5, ow), indexing="ij")
    pts = torch.stack([xs, ys, torch.ones_like(xs)], -1).to(dt)
    grid = (pts @ theta.T / torch.tensor([0.5 * w, 0.5 * h], dtype=dt)).unsqueeze(0)
    x = img.unsqueeze(0).to(dt)
    x = torch.cat([x, torch.ones_like(x[:, :1])], 1)
    y = torch.nn.functional.grid_sample(x, grid, mode=mode, padding_mode="zeros", align_corners=False)[0]
    y, inside = y[:-1], y[-1:]
    if fill is not None:
        f = torch.tensor(fill, dtype=dt).view(-1, 1, 1)
        y = torch.where(inside < 0.5, f, y) if mode == "nearest" else y * inside + (1 - inside) * f
    return y if img.is_floating_point() else y.round().to(img.dtype)


@pytest.mark.parametrize("mode", ["nearest", "bilinear"])
@pytest.mark.parametrize("floating", [False, True])
def test_affine_and_rotate_tensors_match_grid_sample(mode, floating):
    from oracle import require_torch
    torch = require_torch()
    rs = np.random.RandomState(5)
    for trial in range(12):
        h, w = rs.randint(5, 17, 2)
        a = rs.randint(0, 256, (3, h, w)).astype(np.uint8)
        a = (a / 255.0).astype(np.float32) if floating else a
        angle, scale = float(rs.uniform(-170, 170)), float(rs.uniform(0.6, 1.4))
        translate = [int(rs.randint(-4, 5)), int(rs.randint(-4, 5))]
        shear = [float(rs.uniform(-25, 25)), float(rs.uniform(-25, 25))]
        fill = None if trial % 3 == 0 else [float(v) for v in rs.rand(3) * (1.0 if floating else 255.0)]
        center = None if trial % 2 else [float(rs.randint(0, w)), float(rs.randint(0, h))]
        rel = [0.0, 0.0] if center is None else [center[0] - w * 0.5, center[1] - h * 0.5]
        got = F.affine(cthtorch.from_numpy(a), angle, translate, scale, shear, interpolation=F.InterpolationMode(mode),
                       fill=fill, center=center)
        want = _torch_warp(torch, torch.from_numpy(a), _torch_inverse(rel, angle, translate, scale, shear), mode, fill)
        assert got.dtype == cthtorch.from_numpy(a).dtype
        np.testing.assert_allclose(got.numpy(), want.numpy(), atol=2e-6 if floating else 0)
        got = F.rotate(cthtorch.from_numpy(a), angle, F.InterpolationMode(mode), fill=fill, center=center)
        want = _torch_warp(torch, torch.from_numpy(a), _torch_inverse(rel, -angle, [0, 0], 1.0, [0, 0]), mode, fill)
        np.testing.assert_allclose(got.numpy(), want.numpy(), atol=2e-6 if floating else 0)


def test_rotate_direction_expand_and_fill_errors():
    x = _u8(1, (2, 4, 6))
    # counter-clockwise: the top row becomes the left column, read bottom-up
    np.testing.assert_array_equal(F.rotate(x, 90.0, expand=True).numpy(), np.rot90(x.numpy(), 1, axes=(1, 2)))
    assert F.rotate(x, 45.0, expand=True).shape == (2, 8, 8)     # ceil(sqrt(2) * (4 + 6) / 2) a side
    assert F.rotate(x, 30.0).shape == x.shape
    shifted = F.affine(x, 0.0, [2, 0], 1.0, [0.0, 0.0], fill=[7.0, 9.0])
    np.testing.assert_array_equal(shifted[:, :, 2:].numpy(), x[:, :, :4].numpy())
    assert (shifted[0, :, :2] == 7).all() and (shifted[1, :, :2] == 9).all()
    with pytest.raises(ValueError, match="cannot broadcast to match the number of channels of the image \\(3 != 2\\)"):
        F.rotate(x, 10.0, fill=[1.0, 2.0, 3.0])
    from PIL import Image   # PIL images: torchvision's _parse_fill text
    rgb = Image.fromarray(_u8(3).permute(1, 2, 0).contiguous().numpy())
    for warp in (lambda f: F.rotate(rgb, 10.0, fill=f), lambda f: F.affine(rgb, 0.0, [1, 0], 1.0, [0.0, 0.0], fill=f),
                 lambda f: F.perspective(rgb, [[0, 0], [17, 0], [17, 13], [0, 13]],
                                         [[1, 0], [17, 1], [16, 13], [0, 12]], fill=f)):
        with pytest.raises(ValueError, match="^The number of elements in 'fill' does not match the number of "
                                             "channels of the image \\(2 != 3\\)$"):
            warp([1, 2])
        assert warp([5]).size == rgb.size
    # a float image keeps its values (it is not resampled as 8-bit)
    xf = cthtorch.from_numpy(np.random.RandomState(2).rand(1, 5, 5).astype(np.float32))
    np.testing.assert_array_equal(F.rotate(xf, 180.0).numpy(), xf.numpy()[:, ::-1, ::-1])


# ---- v1 AutoAugment ----

def test_policies_are_the_papers_tables():
    for policy in T.AutoAugmentPolicy:
        table = T.AutoAugment(policy).policies
        assert len(table) == 25 and all(len(pair) == 2 for pair in table)
        for name, p, b in (step for pair in table for step in pair):
            assert 0.0 <= p <= 1.0 and (b is None) == (name in ("AutoContrast", "Equalize", "Invert"))
    imagenet = T.AutoAugment().policies
    assert imagenet[0] == (("Posterize", 0.4, 8), ("Rotate", 0.6, 9))
    assert imagenet[14] == (("Color", 0.6, 4), ("Contrast", 1.0, 8))
    assert T.AutoAugment(T.AutoAugmentPolicy.CIFAR10).policies[1] == (("Rotate", 0.7, 2), ("TranslateX", 0.3, 9))
    assert T.AutoAugment(T.AutoAugmentPolicy.SVHN).policies[15] == (("Invert", 0.8, None), ("TranslateY", 0.0, 2))


@pytest.mark.parametrize("policy", list(AA.AutoAugmentPolicy))
def test_auto_augment_draws_and_applies_like_torchvision(policy):
    from oracle import require_torch
    torch = require_torch()
    x = _u8(3)
    t = T.AutoAugment(policy)
    space = t._augmentation_space(10, (14, 18))
    assert list(space)[-1] == "Invert" and "Identity" not in space
    applied = 0
    for seed in range(25):
        torch.manual_seed(seed)
        pid = int(torch.randint(25, (1,)).item())
        probs, signs = torch.rand((2,)), torch.randint(2, (2,))
        want = x
        for i, (name, p, b) in enumerate(t.policies[pid]):
            if probs[i] <= p:
                mags, signed = space[name]
                m = float(mags[b]) if b is not None else 0.0
                m = -m if signed and signs[i] == 0 else m
                want = AA._apply_op(want, name, m, NEAREST, None)
                applied += 1
        cthtorch.manual_seed(seed)
        got = t(x)
        assert got.dtype == cthtorch.uint8
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    assert applied > 10
    assert repr(t) == "AutoAugment(policy=%s, fill=None)" % policy


def test_auto_augment_space_magnitudes():
    space = T.AutoAugment()._augmentation_space(10, (331, 662))
    np.testing.assert_allclose(space["TranslateX"][0].numpy(), np.linspace(0, 300, 10), rtol=1e-6)
    np.testing.assert_allclose(space["TranslateY"][0].numpy(), np.linspace(0, 150, 10), rtol=1e-6)
    assert space["Posterize"][0].tolist() == [8, 8, 7, 7, 6, 6, 5, 5, 4, 4]   # 8 - round(i / 2.25), half to even
    np.testing.assert_allclose(space["Solarize"][0].numpy(), np.linspace(255, 0, 10), rtol=1e-6)


# ---- v1 AugMix ----

def _augmix_reference(torch, seed, x, severity=3, width=3, depth=-1, alpha=1.0, all_ops=True):
    """the mix torchvision computes: Dirichlet weights first, then per chain its depth and its ops"""
    h, w = x.shape[-2:]
    t = T.AugMix(severity, width, depth, alpha, all_ops)
    space = t._augmentation_space(10, (h, w))
    torch.manual_seed(seed)
    m = torch._sample_dirichlet(torch.tensor([alpha, alpha]).expand(1, -1))
    cw = torch._sample_dirichlet(torch.tensor([alpha] * width).expand(1, -1)) * m[:, 1].view(1, -1)
    mix = float(m[0, 0]) * x.float()
    names = list(space)
    for i in range(width):
        aug = x
        d = depth if depth > 0 else int(torch.randint(low=1, high=4, size=(1,)).item())
        for _ in range(d):
            name = names[int(torch.randint(len(names), (1,)).item())]
            mags, signed = space[name]
            mag = float(mags[int(torch.randint(severity, (1,), dtype=torch.long))]) if mags.ndim > 0 else 0.0
            if signed and torch.randint(2, (1,)):
                mag = -mag
            aug = AA._apply_op(aug, name, mag, BILINEAR, None)
        mix = mix + float(cw[0, i]) * aug.float()
    return mix


def test_aug_mix_draws_and_mixes_like_torchvision():
    from oracle import require_torch
    torch = require_torch()
    x = _u8(4)
    space = T.AugMix()._augmentation_space(10, (14, 18))
    assert list(space) == ["ShearX", "ShearY", "TranslateX", "TranslateY", "Rotate", "Posterize", "Solarize",
                           "AutoContrast", "Equalize", "Brightness", "Color", "Contrast", "Sharpness"]
    assert space["Posterize"][0].tolist() == [4, 4, 3, 3, 2, 2, 1, 1, 0, 0]
    assert len(T.AugMix(all_ops=False)._augmentation_space(10, (14, 18))) == 9
    for seed, kw in [(0, {}), (1, {}), (2, dict(severity=10, width=2, depth=2)), (3, dict(all_ops=False)),
                     (4, dict(alpha=0.5, depth=1))]:
        want = _augmix_reference(torch, seed, x, **kw)
        cthtorch.manual_seed(seed)
        got = T.AugMix(kw.get("severity", 3), kw.get("width", 3), kw.get("depth", -1), kw.get("alpha", 1.0),
                       kw.get("all_ops", True))(x)
        assert got.dtype == cthtorch.uint8 and got.shape == x.shape
        # uint8 output truncates the float mix; the float sums may round a hair differently
        assert np.abs(got.numpy().astype(int) - want.numpy().astype(int)).max() <= 1


def test_aug_mix_weights_and_batches():
    x = _u8(6)

    class Fixed(T.AugMix):
        def __init__(self, m, **kw):
            super().__init__(**kw)
            self.m = m

        def _sample_dirichlet(self, params):
            return cthtorch.tensor([self.m]).expand(params.shape[0], -1) if params.shape[1] == 2 else \
                cthtorch.full(params.shape, 1.0 / params.shape[1])
    np.testing.assert_array_equal(Fixed([1.0, 0.0])(x).numpy(), x.numpy())   # all weight on the original
    xf = x.float() / 255
    cthtorch.manual_seed(0)
    one = Fixed([0.0, 1.0], mixture_width=1, chain_depth=1)(xf)
    cthtorch.manual_seed(0)
    name = list(Fixed([0.0, 1.0])._augmentation_space(10, (14, 18)))[int(cthtorch.randint(13, (1,)).item())]
    assert one.dtype == cthtorch.float32 and (name in ("AutoContrast",) or not cthtorch.equal(one, xf))
    batch = cthtorch.stack([x, _u8(7)])
    assert T.AugMix()(batch).shape == batch.shape
    from PIL import Image
    img = Image.fromarray(x.permute(1, 2, 0).contiguous().numpy())
    out = T.AugMix()(img)
    assert isinstance(out, Image.Image) and out.size == img.size
    assert repr(T.AugMix()) == ("AugMix(severity=3, mixture_width=3, chain_depth=-1, alpha=1.0, all_ops=True, "
                                "interpolation=InterpolationMode.BILINEAR, fill=None)")


# ---- v2 ----

_V2_RAND = ["Identity", "ShearX", "ShearY", "TranslateX", "TranslateY", "Rotate", "Brightness", "Color",
            "Contrast", "Sharpness", "Posterize", "Solarize", "AutoContrast", "Equalize"]


def test_v2_trivial_and_rand_augment_draw_as_v2(monkeypatch):
    """v2 draws ops and bins with 0-d randint and signs with rand() <= 0.5; solarize's threshold is a
    fraction of the dtype's maximum, so float images take every op"""
    from oracle import require_torch
    torch = require_torch()
    from cthtorch.vision.transforms import v2
    from cthtorch.vision.transforms.v2 import _auto_augment as V2A
    calls = []
    monkeypatch.setattr(V2A._AutoAugmentBase, "_apply",
                        lambda self, img, name, m: calls.append((name, round(m, 5))) or img)
    no_mag = ("Identity", "AutoContrast", "Equalize")
    for seed in range(30):
        torch.manual_seed(seed)
        name = _V2_RAND[int(torch.randint(14, ()))]
        m = 0.0
        if name not in no_mag:
            b = int(torch.randint(31, ()))
            m = {"Posterize": 8 - round(b / 5), "Solarize": 1 - b / 30}.get(name)
            if m is None:
                top = {"ShearX": 0.99, "ShearY": 0.99, "TranslateX": 32.0, "TranslateY": 32.0, "Rotate": 135.0}
                m = top.get(name, 0.99) * b / 30
                if torch.rand(()) <= 0.5:
                    m = -m
        calls.clear()
        cthtorch.manual_seed(seed)
        v2.TrivialAugmentWide()(_u8(0))
        assert calls == [(name, round(m, 5))], seed
    for seed in range(10):
        torch.manual_seed(seed)
        want = []
        for _ in range(2):
            name = _V2_RAND[int(torch.randint(14, ()))]
            signed = name not in no_mag + ("Posterize", "Solarize")
            neg = signed and bool(torch.rand(()) <= 0.5)
            want.append((name, neg))
        calls.clear()
        cthtorch.manual_seed(seed)
        v2.RandAugment(magnitude=30)(_u8(0))
        assert [c[0] for c in calls] == [n for n, _ in want]
        for (name, neg), (_, m) in zip(want, calls):
            if name in ("ShearX", "Rotate", "Brightness"):
                assert (m < 0) == neg


def test_v2_auto_augment_outputs_and_types():
    from oracle import require_torch
    torch = require_torch()
    from cthtorch.vision.transforms import v2
    from cthtorch.vision.transforms.v2 import _auto_augment as V2A
    x = _u8(8)
    t = v2.AutoAugment(v2.AutoAugmentPolicy.CIFAR10)
    base = V2A._AutoAugmentBase._apply
    for seed in range(12):
        torch.manual_seed(seed)
        policy = t._policies[int(torch.randint(25, ()))]
        want = x
        space = V2A._v2_space(T.AutoAugment._augmentation_space(None, 10, (14, 18)), 10)
        for name, p, b in policy:
            if not torch.rand(()) <= p:
                continue
            mags, signed = space[name]
            m = 0.0
            if mags is not None:
                m = float(mags[b])
                if signed and torch.rand(()) <= 0.5:
                    m = -m
            want = base(t, want, name, m)
        cthtorch.manual_seed(seed)
        np.testing.assert_array_equal(t(x).numpy(), want.numpy())
    # solarize at a fraction of the maximum: 0.5 of a float image inverts what is at or above 0.5
    xf = cthtorch.tensor([[[0.2, 0.5, 0.9]]])
    np.testing.assert_allclose(base(t, xf, "Solarize", 0.5).numpy(), [[[0.2, 0.5, 0.1]]], atol=1e-7)
    np.testing.assert_array_equal(base(t, x, "Solarize", 0.5).numpy(),
                                  np.where(x.numpy() >= 127.5, 255 - x.numpy(), x.numpy()))
    img, label = v2.AugMix()(tv_tensors.Image(x), 3)
    assert type(img) is tv_tensors.Image and label == 3 and img.dtype == cthtorch.uint8
    with pytest.raises(TypeError, match="Inputs of type BoundingBoxes are not supported by RandAugment\\(\\)"):
        v2.RandAugment()(tv_tensors.Image(x), tv_tensors.BoundingBoxes([[0, 0, 2, 2]], format="XYXY",
                                                                        canvas_size=(14, 18)))
    with pytest.raises(TypeError, match="only properly defined for a single image or video, but found 2"):
        v2.TrivialAugmentWide()(tv_tensors.Image(x), tv_tensors.Image(x))
    with pytest.raises(ValueError, match="num_ops should be a non-negative integer, but got -1 instead."):
        v2.RandAugment(num_ops=-1)


def test_v2_posterize_and_equalize_take_float_images():
    from cthtorch.vision.transforms.v2 import functional as F2
    xf = cthtorch.tensor([[[0.0, 0.24, 0.26, 0.74, 0.99, 1.0]]])
    np.testing.assert_allclose(F2.posterize(xf, 2).numpy(), [[[0.0, 0.0, 0.25, 0.5, 0.75, 0.75]]])
    x = _u8(9)
    np.testing.assert_array_equal(F2.posterize(x, 3).numpy(), x.numpy() & 0xE0)
    eq = F2.equalize(x.float() / 255)
    want = F.convert_image_dtype(F.equalize(F.convert_image_dtype(x.float() / 255, cthtorch.uint8)), cthtorch.float32)
    assert eq.dtype == cthtorch.float32
    np.testing.assert_array_equal(eq.numpy(), want.numpy())


def test_one_channel_images_take_every_policy():
    """A one-channel tensor has no colour: saturation leaves it and grayscale copies it, as torchvision's
    tensor ops do, so the policies that draw Color run on it"""
    g = _u8(10, (1, 12, 12))
    assert F.adjust_saturation(g, 0.3) is g
    gray = F.rgb_to_grayscale(g)
    assert gray.shape == g.shape and cthtorch.equal(gray, g) and gray.data_ptr() != g.data_ptr()
    assert F.rgb_to_grayscale(g, 3).shape == (3, 12, 12)
    with pytest.raises(TypeError, match="permitted channel values are \\[1, 3\\], but found 2"):
        F.rgb_to_grayscale(_u8(1, (2, 4, 4)))
    from cthtorch.vision.transforms import v2
    for seed in range(8):
        cthtorch.manual_seed(seed)
        for t in (T.AugMix(), T.AutoAugment(T.AutoAugmentPolicy.CIFAR10), v2.AugMix(), v2.RandAugment()):
            assert t(g).shape == g.shape


def test_v2_fill_dict_is_looked_up_by_the_sample_type(monkeypatch):
    from cthtorch.vision.transforms import v2
    from cthtorch.vision.transforms.v2 import _auto_augment as V2A
    seen = []
    lookup = V2A._fill_for_type
    monkeypatch.setattr(V2A, "_fill_for_type", lambda fill, t: seen.append(lookup(fill, t)) or seen[-1])
    fill = {tv_tensors.Image: 7, "others": 3}
    t = v2.RandAugment(num_ops=6, fill=fill)
    cthtorch.manual_seed(0)
    t(tv_tensors.Image(_u8(0)))
    assert seen == [7] * 6
    cthtorch.manual_seed(0)
    t(_u8(0))
    assert seen[6:] == [3] * 6
    cthtorch.manual_seed(1)
    v2.AugMix(fill=fill)(tv_tensors.Image(_u8(0)))     # AugMix works on the plain tensor it mixes
    assert len(seen) > 12 and set(seen[12:]) == {3}


def _torch_photometric(torch, name, img, arg):
    """torchvision's tensor algorithms, written here with torch ops"""
    floating = img.is_floating_point()
    bound = 1.0 if floating else 255.0
    if name == "sharpness":
        dt = img.dtype if floating else torch.float32
        k = torch.ones(3, 3, dtype=dt)
        k[1, 1] = 5.0
        k = (k / k.sum()).expand(img.shape[-3], 1, 3, 3)
        blurred = torch.nn.functional.conv2d(img.unsqueeze(0).to(dt), k, groups=img.shape[-3])[0]
        if not floating:
            blurred = blurred.round().to(img.dtype)
        degenerate = img.clone()
        degenerate[..., 1:-1, 1:-1] = blurred
        return (arg * img + (1.0 - arg) * degenerate).clamp(0, bound).to(img.dtype)
    if name == "autocontrast":
        dt = img.dtype if floating else torch.float32
        lo = img.amin(dim=(-2, -1), keepdim=True).to(dt)
        hi = img.amax(dim=(-2, -1), keepdim=True).to(dt)
        scale = bound / (hi - lo)
        bad = ~torch.isfinite(scale)
        lo[bad] = 0
        scale[bad] = 1
        return ((img - lo) * scale).clamp(0, bound).to(img.dtype)
    if name == "equalize":
        out = []
        for ch in img:
            hist = torch.bincount(ch.flatten().long(), minlength=256)
            nonzero = hist[hist != 0]
            step = nonzero[:-1].sum() // 255
            if step == 0:
                out.append(ch)
                continue
            lut = (torch.cumsum(hist, 0) + step // 2) // step
            lut = torch.nn.functional.pad(lut, [1, 0])[:-1].clamp(0, 255)
            out.append(lut[ch.long()].to(torch.uint8))
        return torch.stack(out)
    if name == "posterize":
        return img & (0xFF << (8 - arg)) & 0xFF
    if name == "solarize":
        return torch.where(img >= arg, bound - img, img).to(img.dtype)


@pytest.mark.parametrize("name,arg", [("sharpness", 0.3), ("sharpness", 1.8), ("autocontrast", None),
                                      ("equalize", None), ("posterize", 3), ("solarize", 100)])
def test_photometric_primitives_match_torchvisions_tensor_algorithms(name, arg):
    from oracle import require_torch
    torch = require_torch()
    a = np.random.RandomState(7).randint(20, 200, (3, 9, 11)).astype(np.uint8)
    a[1] = 77        # a constant channel: autocontrast and equalize leave it
    fns = {"sharpness": lambda x: F.adjust_sharpness(x, arg), "autocontrast": F.autocontrast,
           "equalize": F.equalize, "posterize": lambda x: F.posterize(x, arg),
           "solarize": lambda x: F.solarize(x, arg)}
    got = fns[name](cthtorch.from_numpy(a))
    want = _torch_photometric(torch, name, torch.from_numpy(a), arg)
    assert got.dtype == cthtorch.uint8
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    if name in ("sharpness", "autocontrast"):
        f = (a / 255.0).astype(np.float32)
        got = fns[name](cthtorch.from_numpy(f))
        want = _torch_photometric(torch, name, torch.from_numpy(f), arg)
        np.testing.assert_allclose(got.numpy(), want.numpy(), atol=1e-6)
