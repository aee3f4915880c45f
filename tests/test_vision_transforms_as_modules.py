"""torchvision's v1 transforms are nn.Modules (BYOL builds its augmentation as nn.Sequential of them and
applies it to whole batches on the GPU), with torchvision's reprs; the colour ones take batched tensors,
hue included (checked against colorsys)."""
import colorsys

import numpy as np
import pytest

import cthtorch
from cthtorch import nn
from cthtorch.vision import transforms as T
from cthtorch.vision.transforms import functional as F

MODULES = ["ConvertImageDtype", "Normalize", "Resize", "CenterCrop", "Pad", "RandomCrop", "RandomResizedCrop",
           "RandomHorizontalFlip", "RandomVerticalFlip", "RandomRotation", "ColorJitter", "Grayscale", "RandomApply",
           "RandomErasing", "RandomGrayscale", "GaussianBlur", "FiveCrop", "TenCrop", "LinearTransformation",
           "RandomAffine", "RandomInvert", "RandomPosterize", "RandomSolarize", "RandomAdjustSharpness",
           "RandomAutocontrast", "RandomEqualize", "RandomPerspective", "ElasticTransform"]
PLAIN = ["Compose", "ToTensor", "PILToTensor", "ToPILImage", "Lambda", "RandomChoice", "RandomOrder"]


@pytest.mark.parametrize("name", MODULES + PLAIN)
def test_which_transforms_are_modules_as_in_torchvision(name):
    assert issubclass(getattr(T, name), nn.Module) == (name in MODULES)


def test_byol_augmentation_runs_as_a_sequential_on_a_batch():
    aug = nn.Sequential(T.ColorJitter(0.8, 0.8, 0.8, 0.2), T.RandomGrayscale(p=0.2), T.RandomHorizontalFlip(),
                        T.GaussianBlur((3, 3), (1.0, 2.0)), T.RandomResizedCrop((16, 16)),
                        T.Normalize(mean=cthtorch.tensor([0.485, 0.456, 0.406]),
                                    std=cthtorch.tensor([0.229, 0.224, 0.225])))
    cthtorch.manual_seed(0)
    x = cthtorch.rand(4, 3, 20, 20)
    y = aug(x)
    assert y.shape == (4, 3, 16, 16) and y.dtype == cthtorch.float32 and bool(cthtorch.isfinite(y).all())
    assert list(aug.state_dict()) == [] and aug[1].training
    seen = []
    aug[0].register_forward_hook(lambda m, i, o: seen.append(o.shape))   # a Module's forward: hooks run
    aug(x)
    assert seen == [(4, 3, 20, 20)]


def test_reprs_are_torchvisions():
    assert repr(T.ColorJitter(0.4, 0.4, 0.4, 0.1)) == \
        "ColorJitter(brightness=(0.6, 1.4), contrast=(0.6, 1.4), saturation=(0.6, 1.4), hue=(-0.1, 0.1))"
    assert repr(T.ColorJitter(brightness=1)) == \
        "ColorJitter(brightness=(0.0, 2.0), contrast=None, saturation=None, hue=None)"
    assert repr(T.RandomResizedCrop(224)) == ("RandomResizedCrop(size=(224, 224), scale=(0.08, 1.0), "
                                              "ratio=(0.75, 1.3333), interpolation=bilinear, antialias=True)")
    assert repr(T.RandomCrop(32, padding=4)) == "RandomCrop(size=(32, 32), padding=4)"
    assert repr(T.Pad(2)) == "Pad(padding=2, fill=0, padding_mode=constant)"
    assert repr(T.Grayscale(3)) == "Grayscale(num_output_channels=3)"
    assert repr(T.ToPILImage()) == "ToPILImage()" and repr(T.ToPILImage("RGB")) == "ToPILImage(mode=RGB)"
    assert repr(T.RandomApply([T.RandomGrayscale(0.3)], p=0.8)) == "RandomApply(\n    p=0.8\n    RandomGrayscale(p=0.3)\n)"
    assert repr(T.ConvertImageDtype(cthtorch.float32)) == "ConvertImageDtype()"
    assert repr(nn.Sequential(T.RandomHorizontalFlip())) == "Sequential(\n  (0): RandomHorizontalFlip(p=0.5)\n)"


def test_color_jitter_ranges_as_torchvision():
    """torchvision's _check_input: pairs become floats, a range that is only the centre is no factor at all
    (nothing drawn for it), and bad ranges raise its errors"""
    assert repr(T.ColorJitter(brightness=(2, 3), hue=[0, 0])) == \
        "ColorJitter(brightness=(2.0, 3.0), contrast=None, saturation=None, hue=None)"
    img = cthtorch.rand(3, 4, 5, generator=cthtorch.Generator().manual_seed(1))
    cthtorch.manual_seed(0)
    out = T.ColorJitter(brightness=(1, 1), contrast=[1.0, 1.0], saturation=0)(img)
    after = cthtorch.rand(3)
    cthtorch.manual_seed(0)
    cthtorch.randperm(4)   # the order is the only draw
    assert cthtorch.equal(out, img) and cthtorch.equal(after, cthtorch.rand(3))
    for kw, err, text in [({"brightness": -0.1}, ValueError,
                           "If brightness is a single number, it must be non negative."),
                          ({"hue": 0.6}, ValueError, "hue values should be between (-0.5, 0.5), but got [-0.6, 0.6]."),
                          ({"contrast": (2, 1)}, ValueError,
                           "contrast values should be between (0, inf), but got [2.0, 1.0]."),
                          ({"saturation": [1, 2, 3]}, TypeError,
                           "saturation should be a single number or a list/tuple with length 2.")]:
        with pytest.raises(err) as e:
            T.ColorJitter(**kw)
        assert str(e.value) == text


def _hue_reference(img, factor):
    """colorsys per pixel: RGB -> HSV, hue shifted cyclically, back"""
    a = img.reshape(-1, 3, img.shape[-2] * img.shape[-1])
    out = np.empty_like(a)
    for n in range(a.shape[0]):
        for k in range(a.shape[2]):
            h, s, v = colorsys.rgb_to_hsv(*a[n, :, k])
            out[n, :, k] = colorsys.hsv_to_rgb((h + factor) % 1.0, s, v)
    return out.reshape(img.shape)


@pytest.mark.parametrize("factor", [-0.5, -0.23, 0.0, 0.1, 0.45])
def test_adjust_hue_on_batched_float_tensors(factor):
    g = np.random.default_rng(3)
    img = g.random((2, 2, 3, 5, 6)).astype(np.float32)
    img[0, 0, :, 0, 0] = 0.5   # a grey pixel: no hue
    img[1, 1, :, 1, :] = [[1.0] * 6, [0.0] * 6, [0.0] * 6]   # pure red rows
    out = F.adjust_hue(cthtorch.from_numpy(img), factor)
    assert out.shape == img.shape and out.dtype == cthtorch.float32
    assert np.allclose(out.numpy(), _hue_reference(img, factor), atol=1e-5)


def test_adjust_hue_keeps_uint8_and_single_channel_and_checks_the_factor():
    img = cthtorch.randint(0, 256, (3, 4, 4), dtype=cthtorch.uint8)
    out = F.adjust_hue(img, 0.2)
    ref = _hue_reference(img.float().numpy()[None] / 255.0, 0.2)[0]
    assert out.dtype == cthtorch.uint8 and np.abs(out.numpy().astype(np.float64) - ref * 255).max() <= 1.0
    grey = cthtorch.rand(1, 4, 4)
    assert F.adjust_hue(grey, 0.3) is grey
    with pytest.raises(ValueError, match=r"hue_factor \(0.7\) is not in \[-0.5, 0.5\]."):
        F.adjust_hue(img, 0.7)
