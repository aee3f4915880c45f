"""cthtorch.vision: datasets from files the test writes, transforms against
Pillow/numpy and torchvision's documented semantics, make_grid/save_image.
(torchvision is not installed here, so it is not the oracle.)"""
import gzip
import math
import os
import pickle
import struct

import numpy as np
import pytest
from PIL import Image, ImageEnhance

import cthtorch
from cthtorch.utils.data import DataLoader
from cthtorch.vision import datasets, transforms as T, utils as vutils
from cthtorch.vision.transforms import functional as F

MNIST_DIR = "/work/shared/data/mnist"


def rgb(h=6, w=8, seed=0):
    return Image.fromarray(np.random.RandomState(seed).randint(0, 256, (h, w, 3), dtype=np.uint8), "RGB")


def arr(img):
    return np.asarray(img)


# ---- datasets ----

def write_idx(path, a):
    code = {np.uint8: 0x08, np.int32: 0x0C}[a.dtype.type]
    head = bytes([0, 0, code, a.ndim]) + b"".join(struct.pack(">I", d) for d in a.shape)
    body = a.astype(a.dtype.newbyteorder(">")).tobytes()
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "wb") as f:
        f.write(head + body)


def make_mnist(folder, n=5, gz=False, train=True):
    os.makedirs(folder, exist_ok=True)
    rs = np.random.RandomState(1)
    imgs = rs.randint(0, 256, (n, 28, 28)).astype(np.uint8)
    labels = rs.randint(0, 10, n).astype(np.uint8)
    prefix = "train" if train else "t10k"
    ext = ".gz" if gz else ""
    write_idx(os.path.join(folder, "%s-images-idx3-ubyte%s" % (prefix, ext)), imgs)
    write_idx(os.path.join(folder, "%s-labels-idx1-ubyte%s" % (prefix, ext)), labels)
    return imgs, labels


@pytest.mark.parametrize("cls", [datasets.MNIST, datasets.FashionMNIST])
@pytest.mark.parametrize("gz", [False, True])
@pytest.mark.parametrize("layout", ["raw", "flat"])
def test_mnist_from_idx(tmp_path, cls, gz, layout):
    folder = tmp_path / cls.__name__ / "raw" if layout == "raw" else tmp_path
    imgs, labels = make_mnist(str(folder), gz=gz, train=False)
    ds = cls(str(tmp_path), train=False)
    assert len(ds) == 5
    assert ds.data.dtype == cthtorch.uint8 and tuple(ds.data.shape) == (5, 28, 28)
    assert ds.targets.dtype == cthtorch.int64 and ds.targets.tolist() == labels.tolist()
    img, target = ds[3]
    assert isinstance(img, Image.Image) and img.mode == "L" and (arr(img) == imgs[3]).all()
    assert type(target) is int and target == labels[3]
    assert ds.class_to_idx[ds.classes[2]] == 2
    x, y = cls(str(tmp_path), train=False, transform=T.ToTensor(), target_transform=lambda t: t + 100)[0]
    assert tuple(x.shape) == (1, 28, 28) and abs(x.max().item() - imgs[0].max() / 255) < 1e-6 and y == labels[0] + 100
    assert "Number of datapoints: 5" in repr(ds) and "Split: Test" in repr(ds)


def test_mnist_legacy_attribute_names_warn(tmp_path):
    """train_data/train_labels/test_data/test_labels (MorvanZhou's tutorials read them) are torchvision's
    deprecated names for data and targets"""
    make_mnist(str(tmp_path / "MNIST" / "raw"), train=True)
    ds = datasets.MNIST(str(tmp_path), train=True)
    for name, attr, new in [("train_data", "data", "data"), ("test_data", "data", "data"),
                            ("train_labels", "targets", "targets"), ("test_labels", "targets", "targets")]:
        with pytest.warns(UserWarning, match="^%s has been renamed %s$" % (name, new)):
            assert getattr(ds, name) is getattr(ds, attr)


def test_mnist_missing_files_and_download(tmp_path):
    with pytest.raises(RuntimeError, match="Dataset not found"):
        datasets.MNIST(str(tmp_path))
    with pytest.raises(RuntimeError, match="download=True cannot fetch") as e:
        datasets.MNIST(str(tmp_path), download=True)
    assert os.path.join(str(tmp_path), "MNIST", "raw") in str(e.value)
    with pytest.raises(RuntimeError, match="download=True cannot fetch") as e:
        datasets.CIFAR10(str(tmp_path), download=True)
    assert "cifar-10-batches-py" in str(e.value)


@pytest.mark.skipif(not os.path.isdir(MNIST_DIR), reason="shared MNIST not present")
def test_real_mnist_test_set_through_loader():
    ds = datasets.MNIST(MNIST_DIR, train=False, transform=T.Compose([T.ToTensor(), T.Normalize((0.1307,), (0.3081,))]))
    assert len(ds) == 10000 and sorted(set(ds.targets.tolist())) == list(range(10))
    x, y = next(iter(DataLoader(ds, batch_size=64, num_workers=2)))
    assert tuple(x.shape) == (64, 1, 28, 28) and x.dtype == cthtorch.float32 and y.dtype == cthtorch.int64
    assert x.is_shared() and abs(x.mean().item()) < 0.3


def make_cifar(root, hundred=False):
    folder = os.path.join(root, "cifar-100-python" if hundred else "cifar-10-batches-py")
    os.makedirs(folder)
    rs = np.random.RandomState(2)
    out = {}
    files = ["train", "test"] if hundred else ["data_batch_%d" % i for i in range(1, 6)] + ["test_batch"]
    for f in files:
        data = rs.randint(0, 256, (3, 3072)).astype(np.uint8)
        labels = rs.randint(0, 100 if hundred else 10, 3).tolist()
        entry = {"data": data, ("fine_labels" if hundred else "labels"): labels}
        with open(os.path.join(folder, f), "wb") as fh:
            pickle.dump(entry, fh)
        out[f] = (data, labels)
    meta = {"fine_label_names": ["c%d" % i for i in range(100)]} if hundred else \
        {"label_names": ["airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck"]}
    with open(os.path.join(folder, "meta" if hundred else "batches.meta"), "wb") as fh:
        pickle.dump(meta, fh)
    return out


def test_cifar10(tmp_path):
    raw = make_cifar(str(tmp_path))
    train = datasets.CIFAR10(str(tmp_path), train=True)
    test = datasets.CIFAR10(str(tmp_path), train=False)
    assert len(train) == 15 and len(test) == 3 and train.data.shape == (15, 32, 32, 3)
    assert train.targets == sum((raw["data_batch_%d" % i][1] for i in range(1, 6)), [])
    img, t = test[1]
    assert img.mode == "RGB" and img.size == (32, 32)
    assert (arr(img) == raw["test_batch"][0][1].reshape(3, 32, 32).transpose(1, 2, 0)).all()
    assert t == raw["test_batch"][1][1] and train.classes[3] == "cat" and train.class_to_idx["truck"] == 9


def test_cifar100(tmp_path):
    raw = make_cifar(str(tmp_path), hundred=True)
    ds = datasets.CIFAR100(str(tmp_path), train=False, transform=T.ToTensor())
    x, t = ds[2]
    assert tuple(x.shape) == (3, 32, 32) and t == raw["test"][1][2] and ds.classes[5] == "c5"
    with pytest.raises(RuntimeError, match="Dataset not found"):
        datasets.CIFAR10(str(tmp_path))


def test_image_folder(tmp_path):
    for c, n in (("dog", 2), ("cat", 3)):
        os.makedirs(tmp_path / c)
        for i in range(n):
            rgb(4, 5, seed=i).save(str(tmp_path / c / ("%d.png" % i)))
    (tmp_path / "cat" / "notes.txt").write_text("skip me")
    ds = datasets.ImageFolder(str(tmp_path), transform=T.ToTensor())
    assert ds.classes == ["cat", "dog"] and ds.class_to_idx == {"cat": 0, "dog": 1}
    assert [os.path.basename(p) for p, _ in ds.samples] == ["0.png", "1.png", "2.png", "0.png", "1.png"]
    assert ds.targets == [0, 0, 0, 1, 1] and ds.imgs == ds.samples and len(ds) == 5
    x, y = ds[4]
    assert tuple(x.shape) == (3, 4, 5) and y == 1
    assert np.allclose(x.numpy(), arr(rgb(4, 5, seed=1)).transpose(2, 0, 1) / 255.0)
    # a class without a valid file is an error unless allow_empty, as torchvision's make_dataset has it
    with pytest.raises(FileNotFoundError, match="Found no valid file for the classes dog. Supported extensions "
                                                "are: .txt"):
        datasets.DatasetFolder(str(tmp_path), loader=lambda p: open(p).read(), extensions=(".txt",))
    folder = datasets.DatasetFolder(str(tmp_path), loader=lambda p: open(p).read(), extensions=(".txt",),
                                    allow_empty=True)
    assert folder.samples == [(str(tmp_path / "cat" / "notes.txt"), 0)]
    with pytest.raises(FileNotFoundError):
        datasets.DatasetFolder(str(tmp_path), loader=None, extensions=(".jpg",))
    batch = next(iter(DataLoader(ds, batch_size=5, num_workers=1)))
    assert tuple(batch[0].shape) == (5, 3, 4, 5)


def test_fake_data():
    ds = datasets.FakeData(size=6, image_size=(3, 8, 10), num_classes=4, transform=T.ToTensor())
    x, y = ds[2]
    assert len(ds) == 6 and tuple(x.shape) == (3, 8, 10) and 0 <= y < 4
    x2, y2 = ds[2]
    assert cthtorch.equal(x, x2) and y == y2
    with pytest.raises(IndexError):
        ds[6]


# ---- transforms ----

def test_to_tensor_and_pil_to_tensor():
    img = rgb()
    x = T.ToTensor()(img)
    assert x.dtype == cthtorch.float32 and tuple(x.shape) == (3, 6, 8)
    assert np.allclose(x.numpy(), arr(img).transpose(2, 0, 1) / 255.0)
    g = T.ToTensor()(img.convert("L"))
    assert tuple(g.shape) == (1, 6, 8)
    a = np.random.RandomState(0).rand(5, 4, 2).astype(np.float64)
    assert np.array_equal(T.ToTensor()(a).numpy(), a.transpose(2, 0, 1))   # float arrays are not rescaled
    p = T.PILToTensor()(img)
    assert p.dtype == cthtorch.uint8 and np.array_equal(p.numpy(), arr(img).transpose(2, 0, 1))
    back = F.to_pil_image(x)
    assert back.mode == "RGB" and np.array_equal(arr(back), arr(img))
    with pytest.raises(TypeError):
        T.ToTensor()([1, 2])


def test_convert_image_dtype():
    u = cthtorch.tensor([[[0, 1, 128, 255]]], dtype=cthtorch.uint8)
    f = T.ConvertImageDtype(cthtorch.float32)(u)
    assert f.dtype == cthtorch.float32 and np.allclose(f.numpy(), u.numpy() / 255.0)
    assert F.convert_image_dtype(f, cthtorch.uint8).tolist() == u.tolist()
    # integer to integer scales by powers of two, as torchvision
    assert F.convert_image_dtype(u, cthtorch.int16).tolist() == [[[0, 128, 128 * 128, 255 * 128]]]
    assert F.convert_image_dtype(u.to(cthtorch.int16) * 128, cthtorch.uint8).tolist() == u.tolist()


def test_normalize():
    x = cthtorch.rand(3, 4, 5)
    mean, std = [0.5, 0.4, 0.3], [0.2, 0.25, 0.5]
    y = T.Normalize(mean, std)(x)
    ref = (x.numpy() - np.array(mean)[:, None, None]) / np.array(std)[:, None, None]
    assert np.allclose(y.numpy(), ref, atol=1e-6)
    z = x.clone()
    assert F.normalize(z, mean, std, inplace=True) is z and np.allclose(z.numpy(), ref, atol=1e-6)
    with pytest.raises(TypeError, match="Input tensor should be a float tensor"):
        F.normalize(x.to(cthtorch.uint8), mean, std)
    with pytest.raises(ValueError, match="std evaluated to zero"):
        F.normalize(x, mean, [1, 0, 1])


def test_resize():
    img = rgb(6, 8)
    out = T.Resize(3)(img)                    # shorter side -> 3, aspect kept
    assert out.size == (4, 3) and np.array_equal(arr(out), arr(img.resize((4, 3), Image.BILINEAR)))
    assert T.Resize((5, 7))(img).size == (7, 5)
    assert T.Resize(3, max_size=3)(img).size == (3, 2)
    t = T.Resize((3, 4))(T.ToTensor()(img))
    assert tuple(t.shape) == (3, 3, 4)
    ones = T.Resize(4)(cthtorch.ones(1, 6, 6))
    assert tuple(ones.shape) == (1, 4, 4) and cthtorch.allclose(ones, cthtorch.ones(1, 4, 4))


def test_center_crop():
    img = rgb(6, 8)
    out = T.CenterCrop(4)(img)
    assert np.array_equal(arr(out), arr(img)[1:5, 2:6])
    t = T.ToTensor()(img)
    assert cthtorch.equal(T.CenterCrop((2, 3))(t), t[:, 2:4, 2:5])
    # larger than the image: torchvision pads (extra row/column at the bottom/right), then crops
    big = T.CenterCrop((9, 8))(t)
    assert tuple(big.shape) == (3, 9, 8)
    assert cthtorch.equal(big[:, 1:7, :], t) and big[:, 0].abs().sum().item() == 0 and big[:, 7:].abs().sum().item() == 0
    bigp = T.CenterCrop((9, 8))(img)
    assert bigp.size == (8, 9) and np.array_equal(arr(bigp)[1:7], arr(img))


@pytest.mark.parametrize("mode", ["constant", "edge", "reflect", "symmetric"])
def test_pad_matches_numpy(mode):
    img = rgb(4, 5)
    a = arr(img)
    ref = np.pad(a, [(2, 3), (1, 4), (0, 0)], mode=mode, **({"constant_values": 7} if mode == "constant" else {}))
    out = T.Pad([1, 2, 4, 3], fill=7, padding_mode=mode)(img)
    assert np.array_equal(arr(out), ref)
    t = F.pil_to_tensor(img)
    tout = F.pad(t, [1, 2, 4, 3], fill=7, padding_mode=mode)
    assert tout.dtype == cthtorch.uint8 and np.array_equal(tout.numpy(), ref.transpose(2, 0, 1))
    assert T.Pad(2)(img).size == (9, 8) and T.Pad((1, 2))(img).size == (7, 8)


def test_random_crop():
    img = rgb(6, 8)
    cthtorch.manual_seed(0)
    out = T.RandomCrop(4, padding=2)(img)
    assert out.size == (4, 4)
    padded = np.pad(arr(img), [(2, 2), (2, 2), (0, 0)])
    hits = [(i, j) for i in range(7) for j in range(9) if np.array_equal(padded[i:i + 4, j:j + 4], arr(out))]
    assert hits
    assert T.RandomCrop((10, 3), pad_if_needed=True)(img).size == (3, 10)
    with pytest.raises(ValueError, match="Required crop size"):
        T.RandomCrop(10)(img)
    t = T.RandomCrop(3)(cthtorch.rand(2, 5, 5))
    assert tuple(t.shape) == (2, 3, 3)


def test_random_resized_crop():
    cthtorch.manual_seed(1)
    out = T.RandomResizedCrop(5)(rgb(20, 30))
    assert out.size == (5, 5)
    t = T.RandomResizedCrop((4, 6), scale=(0.5, 1.0))(cthtorch.rand(3, 20, 30))
    assert tuple(t.shape) == (3, 4, 6)
    i, j, h, w = T.RandomResizedCrop.get_params(rgb(20, 30), (0.08, 1.0), (3 / 4, 4 / 3))
    assert 0 <= i and i + h <= 20 and 0 <= j and j + w <= 30


def test_flips():
    img = rgb()
    t = F.pil_to_tensor(img)
    assert np.array_equal(arr(T.RandomHorizontalFlip(p=1.0)(img)), arr(img)[:, ::-1])
    assert np.array_equal(arr(T.RandomVerticalFlip(p=1.0)(img)), arr(img)[::-1])
    assert T.RandomHorizontalFlip(p=0.0)(img) is img
    assert np.array_equal(T.RandomHorizontalFlip(1.0)(t).numpy(), t.numpy()[:, :, ::-1])
    assert np.array_equal(T.RandomVerticalFlip(1.0)(t).numpy(), t.numpy()[:, ::-1])


def test_random_rotation():
    img = rgb(6, 6)
    out = T.RandomRotation((90, 90))(img)
    assert np.array_equal(arr(out), arr(img.rotate(90)))
    assert np.array_equal(arr(out), np.rot90(arr(img)))
    t = T.RandomRotation((90, 90))(F.pil_to_tensor(img))
    assert np.array_equal(t.numpy(), np.rot90(arr(img)).transpose(2, 0, 1))
    exp = T.RandomRotation((90, 90), expand=True)(rgb(4, 6))
    assert exp.size == (4, 6)


def test_color_jitter_and_adjustments():
    img = rgb()
    assert np.array_equal(arr(T.ColorJitter(brightness=(2, 2))(img)), arr(ImageEnhance.Brightness(img).enhance(2)))
    assert np.array_equal(arr(T.ColorJitter(contrast=(0.5, 0.5))(img)), arr(ImageEnhance.Contrast(img).enhance(0.5)))
    assert np.array_equal(arr(T.ColorJitter(saturation=(0, 0))(img)), arr(ImageEnhance.Color(img).enhance(0)))
    t = T.ToTensor()(img)
    b = F.adjust_brightness(t, 1.5)
    assert cthtorch.allclose(b, (t * 1.5).clamp(0, 1))
    s0 = F.adjust_saturation(t, 0.0)
    assert cthtorch.allclose(s0, F.rgb_to_grayscale(t).expand(3, 6, 8), atol=1e-6)
    assert F.adjust_hue(img, 0.0).size == img.size
    with pytest.raises(ValueError, match="is not in"):
        F.adjust_hue(img, 0.7)
    cthtorch.manual_seed(0)
    out = T.ColorJitter(0.4, 0.4, 0.4, 0.1)(img)
    assert out.size == img.size and out.mode == "RGB"


def test_grayscale():
    img = rgb()
    g = T.Grayscale()(img)
    assert g.mode == "L" and np.array_equal(arr(g), arr(img.convert("L")))
    g3 = T.Grayscale(3)(img)
    assert g3.mode == "RGB" and (arr(g3)[..., 0] == arr(g)).all()
    t = T.ToTensor()(img)
    gt = T.Grayscale()(t)
    ref = 0.2989 * t[0] + 0.587 * t[1] + 0.114 * t[2]
    assert tuple(gt.shape) == (1, 6, 8) and cthtorch.allclose(gt[0], ref, atol=1e-6)
    assert tuple(T.Grayscale(3)(t).shape) == (3, 6, 8)


def test_compose_lambda_and_repr():
    tf = T.Compose([T.Lambda(lambda im: im.convert("L")), T.ToTensor(), T.Normalize((0.5,), (0.5,))])
    x = tf(rgb())
    assert tuple(x.shape) == (1, 6, 8) and x.min().item() >= -1 and x.max().item() <= 1
    assert repr(tf).startswith("Compose(\n")
    with pytest.raises(TypeError, match="Argument lambd should be callable"):
        T.Lambda(3)


# ---- utils ----

def test_make_grid():
    x = cthtorch.rand(5, 3, 4, 6)
    g = vutils.make_grid(x, nrow=3, padding=2, pad_value=0.5)
    assert tuple(g.shape) == (3, 2 * (4 + 2) + 2, 3 * (6 + 2) + 2)
    assert cthtorch.equal(g[:, 2:6, 2:8], x[0]) and cthtorch.equal(g[:, 8:12, 10:16], x[4])
    assert g[:, 0, :].eq(0.5).all() and g[:, 8:12, 18:24].eq(0.5).all()   # padding and the empty cell
    gray = vutils.make_grid(cthtorch.rand(4, 1, 3, 3), nrow=2, padding=0)
    assert tuple(gray.shape) == (3, 6, 6) and cthtorch.equal(gray[0], gray[1])
    n = vutils.make_grid(x * 4 - 1, normalize=True)
    assert abs(n.min().item()) < 1e-6 and abs(n.max().item() - 1) < 1e-6
    assert cthtorch.equal(vutils.make_grid(x[0]), x[0])
    assert tuple(vutils.make_grid([x[0], x[1]], padding=0).shape) == (3, 4, 12)


def test_save_image(tmp_path):
    x = cthtorch.rand(4, 3, 5, 5)
    path = str(tmp_path / "grid.png")
    vutils.save_image(x, path, nrow=2, padding=1)
    img = np.asarray(Image.open(path))
    grid = vutils.make_grid(x, nrow=2, padding=1)
    ref = (grid * 255 + 0.5).clamp(0, 255).to(cthtorch.uint8).permute(1, 2, 0).numpy()
    assert img.shape == (13, 13, 3) and np.array_equal(img, ref)


def test_interpolation_mode_and_dimensions():
    assert F.InterpolationMode("bilinear") is F.InterpolationMode.BILINEAR is T.InterpolationMode.BILINEAR
    assert F.InterpolationMode.NEAREST_EXACT.value == "nearest-exact"
    img = rgb(6, 8)
    assert F.get_dimensions(img) == [3, 6, 8] and F.get_dimensions(img.convert("L")) == [1, 6, 8]
    t = T.ToTensor()(img)
    assert F.get_dimensions(t) == [3, 6, 8] and F.get_dimensions(t[0]) == [1, 6, 8]
    assert F.get_image_size(t) == [8, 6] and F.get_image_num_channels(img) == 3
    with pytest.raises(TypeError, match="Tensor is not a torch image"):
        F.get_dimensions(cthtorch.zeros(3))
    # the PIL path takes the enum and resamples as PIL's own filter does
    for mode, pil in [("nearest", Image.NEAREST), ("nearest-exact", Image.NEAREST), ("bicubic", Image.BICUBIC),
                      ("box", Image.BOX)]:   # torchvision resizes PIL with NEAREST for nearest-exact
        out = T.Resize((4, 5), interpolation=F.InterpolationMode(mode))(img)
        assert np.array_equal(arr(out), arr(img.resize((5, 4), pil)))
    assert "interpolation=bicubic" in repr(T.Resize(3, interpolation=F.InterpolationMode.BICUBIC))
    with pytest.raises(ValueError, match="does not support box interpolation"):
        F.resize(t, [3, 4], interpolation=F.InterpolationMode.BOX)


@pytest.mark.parametrize("mode", ["nearest", "nearest-exact", "bilinear", "bicubic"])
@pytest.mark.parametrize("antialias", [True, False])
def test_tensor_resize_matches_torch_interpolate(mode, antialias):
    """torchvision resizes tensors with F.interpolate (antialias only for bilinear/bicubic)."""
    from oracle import require_torch
    torch = require_torch()
    x = np.random.RandomState(0).rand(3, 17, 23).astype(np.float32)
    out = F.resize(cthtorch.from_numpy(x), [7, 9], interpolation=F.InterpolationMode(mode), antialias=antialias)
    smooth = mode in ("bilinear", "bicubic")
    ref = torch.nn.functional.interpolate(torch.from_numpy(x)[None], size=(7, 9), mode=mode,
                                          align_corners=False if smooth else None,
                                          antialias=antialias and smooth)[0]
    np.testing.assert_allclose(out.numpy(), ref.numpy(), rtol=1e-5, atol=1e-6)


def test_erase_and_random_erasing():
    t = cthtorch.arange(2 * 5 * 6, dtype=cthtorch.float32).view(2, 5, 6)
    e = F.erase(t, 1, 2, 3, 2, 0.5)
    assert (e[:, 1:4, 2:4] == 0.5).all() and cthtorch.equal(t[0, 0], e[0, 0]) and e.data_ptr() != t.data_ptr()
    assert F.erase(t, 0, 0, 1, 1, -1.0, inplace=True) is t and t[0, 0, 0].item() == -1.0
    with pytest.raises(TypeError, match="img should be Tensor Image"):
        F.erase(rgb(), 0, 0, 1, 1, 0)

    x = cthtorch.rand(3, 20, 24)
    assert T.RandomErasing(p=0.0)(x) is x
    for value, seed in [(0, 1), ((0.1, 0.2, 0.3), 2), ("random", 3)]:
        cthtorch.manual_seed(seed)
        out = T.RandomErasing(p=1.0, value=value)(x)
        changed = (out != x).any(0)
        rows, cols = changed.any(1).nonzero().flatten(), changed.any(0).nonzero().flatten()
        assert rows.numel() and cols.numel()
        box = out[:, rows[0]:rows[-1] + 1, cols[0]:cols[-1] + 1]
        assert changed.sum().item() == box.shape[1] * box.shape[2]      # one rectangle, nothing outside it
        if value == 0:
            assert (box == 0).all()
        elif isinstance(value, tuple):
            assert cthtorch.allclose(box.mean((1, 2)), cthtorch.tensor(value))
        area = box.shape[1] * box.shape[2] / (20 * 24)
        assert 0.02 - 0.01 <= area <= 0.33 + 0.01                        # rounding of h, w
    with pytest.raises(ValueError, match="either a single value or 3"):
        T.RandomErasing(p=1.0, value=(1.0, 2.0))(x)
    with pytest.raises(ValueError, match="should be 'random'"):
        T.RandomErasing(value="noise")
    with pytest.raises(ValueError, match="probability should be between 0 and 1"):
        T.RandomErasing(p=1.5)
    with pytest.raises(TypeError, match="number or str or a sequence"):
        T.RandomErasing(value=None)


def test_random_erasing_draws_follow_torchvision_order():
    """The rectangle comes from the same generator calls torchvision makes, so a seed picks the same box as
    torchvision's RandomErasing: rand(1) for p, then per try uniform_ area, uniform_ log-ratio, then randint i, j."""
    from oracle import require_torch
    torch = require_torch()
    x = cthtorch.rand(3, 32, 32)
    for seed in range(5):
        torch.manual_seed(seed)
        assert torch.rand(1).item() < 1.0
        log_ratio = torch.log(torch.tensor((0.3, 3.3)))
        while True:
            a = 32 * 32 * torch.empty(1).uniform_(0.02, 0.33).item()
            r = torch.exp(torch.empty(1).uniform_(log_ratio[0], log_ratio[1])).item()
            h, w = int(round(math.sqrt(a * r))), int(round(math.sqrt(a / r)))
            if h < 32 and w < 32:
                break
        i = torch.randint(0, 32 - h + 1, size=(1,)).item()
        j = torch.randint(0, 32 - w + 1, size=(1,)).item()
        cthtorch.manual_seed(seed)
        out = T.RandomErasing(p=1.0, value=7.0)(x)
        assert (out == 7.0).nonzero()[:, 1:].unique(dim=0).shape[0] == h * w
        assert (out[:, i:i + h, j:j + w] == 7.0).all()


def test_random_choice_passes_several_arguments():
    swap = lambda a, b: (b, a)  # noqa: E731
    assert T.RandomChoice([swap])(1, 2) == (2, 1)
    assert T.RandomChoice([lambda a: a + 1], p=[1.0])(1) == 2


def test_autoaugment_names_and_argument_errors():
    from cthtorch.vision.transforms import autoaugment
    assert autoaugment.AutoAugmentPolicy("imagenet") is T.AutoAugmentPolicy.IMAGENET
    with pytest.raises(ValueError, match="The provided policy imagenet is not recognized."):
        T.AutoAugment("imagenet")
    with pytest.raises(ValueError, match=r"The severity must be between \[1, 10\]. Got 11 instead."):
        T.AugMix(severity=11)


_TRIVIAL_OPS = ["Identity", "ShearX", "ShearY", "TranslateX", "TranslateY", "Rotate", "Brightness", "Color",
                "Contrast", "Sharpness", "Posterize", "Solarize", "AutoContrast", "Equalize"]


def _trivial_draw(torch, seed, num_bins=31):
    """The op, bin and sign torchvision's TrivialAugmentWide draws after manual_seed(seed): op, then bin (ops
    with bins), then sign (signed ops), each a randint(n, (1,)) on the global generator."""
    torch.manual_seed(seed)
    name = _TRIVIAL_OPS[int(torch.randint(14, (1,)).item())]
    has_bins = name not in ("Identity", "AutoContrast", "Equalize")
    b = int(torch.randint(num_bins, (1,)).item()) if has_bins else None
    negative = name not in ("Posterize", "Solarize") and has_bins and bool(torch.randint(2, (1,)))
    return name, b, negative


def test_trivial_augment_wide_draws_and_applies_torchvisions_ops():
    """Against torchvision's documented space (31 bins: shear 0..0.99, translate 0..32 px, rotate 0..135 deg,
    colour ops 1 +- 0..0.99, posterize 8..2 bits, solarize 255..0): for each seed the op and magnitude are
    those torch's generator picks, and the output is that op applied by hand."""
    from oracle import require_torch
    torch = require_torch()
    x = cthtorch.from_numpy(np.random.RandomState(0).randint(0, 256, (3, 16, 20)).astype(np.uint8))
    xi = x.numpy().astype(np.int64)
    seen = set()
    for seed in range(40):
        name, b, negative = _trivial_draw(torch, seed)
        cthtorch.manual_seed(seed)
        out = T.TrivialAugmentWide()(x)
        assert out.dtype == cthtorch.uint8 and out.shape == x.shape
        sign = -1.0 if negative else 1.0
        seen.add(name)
        if name == "Identity":
            expect = xi
        elif name == "Posterize":
            bits = 8 - round(b / 5)
            expect = xi & ((0xFF << (8 - bits)) & 0xFF)
        elif name == "Solarize":
            thr = 255.0 - 255.0 * b / 30
            expect = np.where(xi >= thr, 255 - xi, xi)
        elif name == "Brightness":
            expect = np.clip((1.0 + sign * 0.99 * b / 30) * xi, 0, 255).astype(np.int64)
        elif name in ("TranslateX", "TranslateY"):
            shift = int(sign * 32.0 * b / 30)
            expect = np.zeros_like(xi)
            ax = 2 if name == "TranslateX" else 1
            n = xi.shape[ax]
            src = [slice(None)] * 3
            dst = [slice(None)] * 3
            if shift >= 0:
                src[ax], dst[ax] = slice(0, max(n - shift, 0)), slice(min(shift, n), n)
            else:
                src[ax], dst[ax] = slice(min(-shift, n), n), slice(0, max(n + shift, 0))
            expect[tuple(dst)] = xi[tuple(src)]
        else:
            m = {"ShearX": 0.99, "ShearY": 0.99, "Rotate": 135.0, "Color": 0.99, "Contrast": 0.99,
                 "Sharpness": 0.99}.get(name, 0.0) * b / 30 * sign if b is not None else 0.0
            from cthtorch.vision.transforms.autoaugment import _apply_op
            expect = _apply_op(x, name, m, F.InterpolationMode.NEAREST, None).numpy().astype(np.int64)
            if name not in ("AutoContrast", "Equalize"):
                assert not np.array_equal(expect, xi) or b == 0
        np.testing.assert_allclose(out.numpy().astype(np.int64), expect, atol=1, err_msg="%s bin %s" % (name, b))
    assert len(seen) >= 10    # the seeds cover most of the space


def test_trivial_augment_wide_on_float_images_and_fill():
    """Float tensors go through the same ops; the uint8-only ones (posterize, equalize) and solarize's
    0..255 thresholds raise TypeError on them as torchvision's v1 ops do. A number fill fills each channel."""
    from oracle import require_torch
    torch = require_torch()
    x = cthtorch.from_numpy(np.random.RandomState(1).rand(3, 12, 10).astype(np.float32))
    for seed in range(40):
        name, b, negative = _trivial_draw(torch, seed)
        cthtorch.manual_seed(seed)
        if name in ("Posterize", "Equalize") or (name == "Solarize" and b < 30):
            with pytest.raises(TypeError):
                T.TrivialAugmentWide()(x)
            continue
        out = T.TrivialAugmentWide()(x)
        assert out.dtype == cthtorch.float32 and out.shape == x.shape
        if name == "Brightness":
            f = 1.0 + (-1.0 if negative else 1.0) * 0.99 * b / 30
            np.testing.assert_allclose(out.numpy(), np.clip(f * x.numpy(), 0, 1), rtol=1e-6)
        if name == "Identity":
            assert out is x
    seed = next(s for s in range(100) if _trivial_draw(torch, s)[0] == "TranslateX" and _trivial_draw(torch, s)[1])
    name, b, negative = _trivial_draw(torch, seed)
    u8 = cthtorch.full((3, 4, 40), 9, dtype=cthtorch.uint8)
    cthtorch.manual_seed(seed)
    out = T.TrivialAugmentWide(fill=200)(u8)
    shift = int(32.0 * b / 30)
    cols = slice(0, shift) if not negative else slice(40 - shift, 40)
    assert (out[:, :, cols] == 200).all() and (out == 9).sum() == 3 * 4 * (40 - shift)


def test_rand_augment_uses_one_bin_for_every_op():
    """RandAugment(num_ops, magnitude): num_ops draws of (op, sign), all at bin `magnitude`; magnitude 0 leaves
    the geometric and colour ops at identity, so only posterize 8 bits (identity), solarize 255, autocontrast
    and equalize can change a uint8 image there."""
    from oracle import require_torch
    torch = require_torch()
    x = cthtorch.from_numpy(np.random.RandomState(2).randint(0, 255, (3, 9, 11)).astype(np.uint8))
    ops = ["Identity"] + _TRIVIAL_OPS[1:]
    for seed in range(10):
        torch.manual_seed(seed)
        names = []
        for _ in range(2):
            names.append(ops[int(torch.randint(14, (1,)).item())])
            if names[-1] not in ("Identity", "Posterize", "Solarize", "AutoContrast", "Equalize"):
                torch.randint(2, (1,))
        cthtorch.manual_seed(seed)
        out = T.RandAugment(magnitude=0)(x)
        if not set(names) & {"AutoContrast", "Equalize"}:
            assert cthtorch.equal(out, x), names
    assert "RandAugment(num_ops=2, magnitude=9" in repr(T.RandAugment())


def test_io_read_image_and_write_png(tmp_path):
    """vision.io (the data tutorial imports torchvision.io.read_image): uint8 C x H x W tensors equal to what
    PIL decodes, modes converted as PIL converts, write_png round trips"""
    from PIL import Image
    from cthtorch.vision.io import ImageReadMode, decode_image, read_file, read_image, write_png
    rng = np.random.RandomState(0)
    rgb = rng.randint(0, 256, (6, 5, 3)).astype(np.uint8)
    Image.fromarray(rgb).save(tmp_path / "a.png")
    Image.fromarray(rgb).convert("RGBA").save(tmp_path / "b.png")
    x = read_image(str(tmp_path / "a.png"))
    assert x.dtype == cthtorch.uint8 and tuple(x.shape) == (3, 6, 5)
    np.testing.assert_array_equal(x.numpy(), rgb.transpose(2, 0, 1))
    gray = np.array(Image.fromarray(rgb).convert("L"))
    np.testing.assert_array_equal(read_image(str(tmp_path / "a.png"), ImageReadMode.GRAY).numpy()[0], gray)
    assert tuple(read_image(str(tmp_path / "b.png")).shape) == (4, 6, 5)
    assert tuple(read_image(str(tmp_path / "b.png"), ImageReadMode.RGB).shape) == (3, 6, 5)
    assert cthtorch.equal(decode_image(read_file(str(tmp_path / "a.png"))), x)
    write_png(x, str(tmp_path / "c.png"))
    assert cthtorch.equal(read_image(str(tmp_path / "c.png")), x)
    with pytest.raises(RuntimeError):
        decode_image(cthtorch.zeros(3, 3))


# ---- photometric ops, blur, multi-crop, affine (Pillow's ImageOps/ImageEnhance as the reference) ----

def _chw(img):
    return arr(img).transpose(2, 0, 1)


@pytest.mark.parametrize("name,pil_ref,call", [
    ("invert", lambda im: __import__("PIL.ImageOps").ImageOps.invert(im), lambda f, x: f.invert(x)),
    ("posterize", lambda im: __import__("PIL.ImageOps").ImageOps.posterize(im, 3), lambda f, x: f.posterize(x, 3)),
    ("solarize", lambda im: __import__("PIL.ImageOps").ImageOps.solarize(im, 100), lambda f, x: f.solarize(x, 100)),
    ("autocontrast", lambda im: __import__("PIL.ImageOps").ImageOps.autocontrast(im),
     lambda f, x: f.autocontrast(x)),
    ("equalize", lambda im: __import__("PIL.ImageOps").ImageOps.equalize(im), lambda f, x: f.equalize(x)),
    ("sharpness", lambda im: ImageEnhance.Sharpness(im).enhance(0.3), lambda f, x: f.adjust_sharpness(x, 0.3)),
    ("sharpen", lambda im: ImageEnhance.Sharpness(im).enhance(1.8), lambda f, x: f.adjust_sharpness(x, 1.8)),
])
def test_photometric_ops_tensor_path_matches_pillow(name, pil_ref, call):
    """The uint8 tensor path computes what Pillow's ImageOps/ImageEnhance give the PIL path (which calls Pillow)"""
    img = rgb(13, 17, seed=4)
    ref = _chw(pil_ref(img))
    assert np.array_equal(arr(call(F, img)), arr(pil_ref(img)))
    got = call(F, F.pil_to_tensor(img)).numpy().astype(int)
    # the tensor path blends as torchvision's does (truncating to uint8), Pillow rounds: one level apart
    assert np.abs(got - ref).max() <= (1 if name.startswith("sharp") else 0), name


def test_invert_solarize_float_and_errors():
    t = T.ToTensor()(rgb())
    assert cthtorch.allclose(F.invert(t), 1 - t)
    assert cthtorch.equal(F.solarize(t, 0.5), cthtorch.where(t >= 0.5, 1 - t, t))
    with pytest.raises(TypeError, match="Only torch.uint8"):
        F.posterize(t, 2)
    with pytest.raises(TypeError, match="Threshold should be less than bound"):
        F.solarize(t, 2.0)
    with pytest.raises(ValueError, match="non-negative"):
        F.adjust_sharpness(t, -1)
    flat = cthtorch.full((3, 4, 4), 0.25)
    assert cthtorch.equal(F.autocontrast(flat), flat)   # a constant channel is left alone


def test_adjust_gamma_formula():
    img = rgb()
    lut = [min(255, int(255.999 * 1.1 * (v / 255.0) ** 0.7)) for v in range(256)]
    assert np.array_equal(arr(F.adjust_gamma(img, 0.7, 1.1)), np.array(lut, dtype=np.uint8)[arr(img)])
    t = T.ToTensor()(img)
    assert cthtorch.allclose(F.adjust_gamma(t, 2.0), t ** 2)
    with pytest.raises(ValueError, match="non-negative"):
        F.adjust_gamma(t, -1.0)


def test_gaussian_blur_matches_scipy_correlation():
    scipy_ndimage = pytest.importorskip("scipy.ndimage")
    t = cthtorch.rand(3, 11, 9)
    out = F.gaussian_blur(t, [5, 3], [1.2, 0.7])

    def k1(n, s):
        x = np.arange(n) - (n - 1) / 2
        p = np.exp(-0.5 * (x / s) ** 2)
        return p / p.sum()
    kernel = np.outer(k1(3, 0.7), k1(5, 1.2))   # kernel_size/sigma are (x, y): rows use the y kernel
    ref = np.stack([scipy_ndimage.correlate(c, kernel, mode="mirror") for c in t.numpy().astype(np.float64)])
    assert np.allclose(out.numpy(), ref, atol=1e-6)
    # default sigma 0.3 * ((k - 1) * 0.5 - 1) + 0.8, and uint8/PIL images come back rounded in their type
    assert cthtorch.allclose(F.gaussian_blur(t, 5), F.gaussian_blur(t, 5, 0.3 * ((5 - 1) * 0.5 - 1) + 0.8))
    img = rgb(11, 9)
    u8 = F.gaussian_blur(F.pil_to_tensor(img), 3, 1.0)
    assert u8.dtype == cthtorch.uint8 and np.array_equal(arr(F.gaussian_blur(img, 3, 1.0)), u8.numpy().transpose(1, 2, 0))
    with pytest.raises(ValueError, match="odd and positive"):
        F.gaussian_blur(t, 4)
    with pytest.raises(ValueError, match="odd and positive"):
        T.GaussianBlur(2)


def test_gaussian_blur_draws_sigma_like_torchvision():
    from oracle import require_torch
    torch = require_torch()
    torch.manual_seed(5)
    sigma = torch.empty(1).uniform_(0.1, 2.0).item()
    t = cthtorch.rand(3, 8, 8)
    cthtorch.manual_seed(5)
    assert cthtorch.allclose(T.GaussianBlur(3)(t), F.gaussian_blur(t, 3, sigma))


def test_five_and_ten_crop():
    img = rgb(7, 9)
    tl, tr, bl, br, c = F.five_crop(img, (3, 4))
    a = arr(img)
    assert np.array_equal(arr(tl), a[:3, :4]) and np.array_equal(arr(tr), a[:3, 5:])
    assert np.array_equal(arr(bl), a[4:, :4]) and np.array_equal(arr(br), a[4:, 5:])
    assert np.array_equal(arr(c), arr(F.center_crop(img, (3, 4))))
    ten = T.TenCrop(3)(F.pil_to_tensor(img))
    assert len(ten) == 10 and cthtorch.equal(ten[5], F.pil_to_tensor(img).flip(-1)[:, :3, :3])
    assert cthtorch.equal(T.TenCrop(3, vertical_flip=True)(F.pil_to_tensor(img))[5],
                          F.pil_to_tensor(img).flip(-2)[:, :3, :3])
    # the usual test-time pattern: stack the crops
    stacked = T.Compose([T.FiveCrop(4), T.Lambda(lambda crops: cthtorch.stack([T.ToTensor()(x) for x in crops]))])(img)
    assert tuple(stacked.shape) == (5, 3, 4, 4)
    with pytest.raises(ValueError, match="bigger than input size"):
        F.five_crop(img, 8)


def test_affine_geometry():
    """angle is clockwise on screen, translate in pixels, scale about the centre"""
    img = rgb(9, 9)
    a = arr(img)
    assert np.array_equal(arr(F.affine(img, 0.0, [0, 0], 1.0, [0.0, 0.0])), a)
    assert np.array_equal(arr(F.affine(img, 90.0, [0, 0], 1.0, 0.0)), np.rot90(a, -1))
    moved = arr(F.affine(img, 0.0, [2, 1], 1.0, 0.0))
    assert np.array_equal(moved[1:, 2:], a[:8, :7]) and (moved[0] == 0).all()
    t = F.pil_to_tensor(img)
    assert np.array_equal(F.affine(t, 90.0, [0, 0], 1.0, 0.0).numpy(), _chw(F.affine(img, 90.0, [0, 0], 1.0, 0.0)))
    filled = F.affine(t.float() / 255, 0.0, [3, 0], 1.0, 0.0, fill=[1.0, 1.0, 1.0])
    assert (filled[:, :, :3] == 1.0).all()
    with pytest.raises(ValueError, match="scale should be positive"):
        F.affine(img, 0.0, [0, 0], 0.0, 0.0)


def test_random_affine_draws_follow_torchvision_order():
    """angle, translate x then y (rounded pixels), scale, shear x then y: the same generator calls as torchvision"""
    from oracle import require_torch
    torch = require_torch()
    torch.manual_seed(7)
    angle = torch.empty(1).uniform_(-30.0, 30.0).item()
    tx = int(round(torch.empty(1).uniform_(-0.1 * 17, 0.1 * 17).item()))
    ty = int(round(torch.empty(1).uniform_(-0.2 * 13, 0.2 * 13).item()))
    scale = torch.empty(1).uniform_(0.8, 1.2).item()
    sx = torch.empty(1).uniform_(-5.0, 5.0).item()
    sy = torch.empty(1).uniform_(-3.0, 3.0).item()
    cthtorch.manual_seed(7)
    got = T.RandomAffine.get_params([-30.0, 30.0], (0.1, 0.2), (0.8, 1.2), [-5.0, 5.0, -3.0, 3.0], [17, 13])
    assert got[0] == pytest.approx(angle) and got[1] == (tx, ty) and got[2] == pytest.approx(scale)
    assert got[3] == pytest.approx((sx, sy))
    img = rgb(13, 17)
    cthtorch.manual_seed(7)
    out = T.RandomAffine(30, translate=(0.1, 0.2), scale=(0.8, 1.2), shear=(-5, 5, -3, 3))(img)
    assert np.array_equal(arr(out), arr(F.affine(img, *got)))
    with pytest.raises(ValueError, match="translation values should be between 0 and 1"):
        T.RandomAffine(0, translate=(2, 0))


def test_random_grayscale_order_and_p_transforms():
    from oracle import require_torch
    torch = require_torch()
    img = rgb()
    for seed in range(4):
        torch.manual_seed(seed)
        hit = torch.rand(1).item() < 0.5
        cthtorch.manual_seed(seed)
        out = T.RandomGrayscale(p=0.5)(img)
        assert out.mode == "RGB"   # the image keeps its channel count
        assert np.array_equal(arr(out), arr(F.rgb_to_grayscale(img, 3)) if hit else arr(img))
    torch.manual_seed(0)
    order = torch.randperm(2).tolist()
    cthtorch.manual_seed(0)
    seen = []
    T.RandomOrder([lambda x: seen.append(0) or x, lambda x: seen.append(1) or x])(img)
    assert seen == order
    t = F.pil_to_tensor(img)
    assert cthtorch.equal(T.RandomInvert(p=1.0)(t), F.invert(t))
    assert cthtorch.equal(T.RandomInvert(p=0.0)(t), t)
    assert cthtorch.equal(T.RandomPosterize(2, p=1.0)(t), F.posterize(t, 2))
    assert cthtorch.equal(T.RandomSolarize(9, p=1.0)(t), F.solarize(t, 9))
    assert cthtorch.equal(T.RandomAdjustSharpness(2, p=1.0)(t), F.adjust_sharpness(t, 2))
    assert cthtorch.equal(T.RandomAutocontrast(p=1.0)(t), F.autocontrast(t))
    assert cthtorch.equal(T.RandomEqualize(p=1.0)(t), F.equalize(t))


def test_color_jitter_draws_every_factor_before_applying():
    """torchvision draws the order (randperm(4)), then brightness, contrast, saturation, hue factors in that
    fixed order, and only then applies them in the drawn order"""
    from oracle import require_torch
    torch = require_torch()
    img = rgb(8, 8, seed=2)
    for seed in range(3):
        torch.manual_seed(seed)
        order = torch.randperm(4).tolist()
        b = torch.empty(1).uniform_(0.6, 1.4).item()
        c = torch.empty(1).uniform_(0.6, 1.4).item()
        s = torch.empty(1).uniform_(0.6, 1.4).item()
        ref = img
        for k in order:
            ref = {0: lambda x: F.adjust_brightness(x, b), 1: lambda x: F.adjust_contrast(x, c),
                   2: lambda x: F.adjust_saturation(x, s), 3: lambda x: x}[k](ref)
        cthtorch.manual_seed(seed)
        assert np.array_equal(arr(T.ColorJitter(0.4, 0.4, 0.4)(img)), arr(ref))


def test_linear_transformation():
    t = cthtorch.rand(2, 3, 3)
    m = cthtorch.rand(18, 18)
    mean = cthtorch.rand(18)
    out = T.LinearTransformation(m, mean)(t)
    assert cthtorch.allclose(out, ((t.reshape(1, 18) - mean) @ m).reshape(2, 3, 3))
    with pytest.raises(ValueError, match="square"):
        T.LinearTransformation(cthtorch.rand(3, 4), cthtorch.rand(3))


def test_equalize_batch_matches_pillow_per_channel():
    """a batch of images, channels with few levels, a constant one and an empty batch: each channel as Pillow's"""
    from PIL import ImageOps
    rng = np.random.RandomState(7)
    a = rng.choice([3, 40, 200], (2, 3, 9, 11)).astype(np.uint8)
    a[1, 2] = 77
    a[0, 1] = (rng.rand(9, 11) ** 4 * 255).astype(np.uint8)
    ref = np.stack([np.array(ImageOps.equalize(Image.fromarray(c, "L"))) for c in a.reshape(-1, 9, 11)])
    assert np.array_equal(F.equalize(cthtorch.from_numpy(a.copy())).numpy(), ref.reshape(a.shape))
    assert tuple(F.equalize(cthtorch.zeros(0, 3, 4, 4, dtype=cthtorch.uint8)).shape) == (0, 3, 4, 4)


def test_version_is_torchvision_paired_with_torch_213():
    # mrdbourke's notebooks print torchvision.__version__ and compare its minor number
    import cthtorch
    import cthtorch.vision as torchvision
    major, minor = (int(x) for x in torchvision.__version__.split("+")[0].split(".")[:2])
    assert (major, minor) == (0, int(cthtorch.__version__.split(".")[1]) + 15)


def test_rand_augment_space_takes_height_then_width():
    """_augmentation_space(num_bins, (height, width)) as torchvision calls it (a subclass may override it):
    TranslateX spans 150/331 of the width, TranslateY of the height"""
    space = T.RandAugment()._augmentation_space(31, (331, 662))
    assert float(space["TranslateX"][0][-1]) == pytest.approx(300.0)
    assert float(space["TranslateY"][0][-1]) == pytest.approx(150.0)
    seen = []

    class Logged(T.RandAugment):
        def _augmentation_space(self, num_bins, image_size):
            seen.append(tuple(image_size))
            return super()._augmentation_space(num_bins, image_size)
    Logged(num_ops=1)(cthtorch.zeros(3, 4, 7, dtype=cthtorch.uint8))
    assert seen == [(4, 7)]


def test_ops_boxes_geometry_and_nms_against_numpy():
    """vision.ops.boxes (DETR's box_ops imports box_area from it): areas, pairwise IoU and generalized IoU
    against a numpy computation, format round trips, clipping, small-box removal, masks to boxes, and greedy
    (batched) NMS on a hand-made case"""
    import numpy as np
    import cthtorch
    from cthtorch.vision.ops import boxes as B
    from cthtorch.vision import ops
    rs = np.random.RandomState(0)
    xy = rs.rand(5, 2) * 10
    a = np.concatenate([xy, xy + rs.rand(5, 2) * 5 + 0.1], 1)
    xy = rs.rand(3, 2) * 10
    b = np.concatenate([xy, xy + rs.rand(3, 2) * 5 + 0.1], 1)
    area = lambda x: (x[:, 2] - x[:, 0]) * (x[:, 3] - x[:, 1])
    lt, rb = np.maximum(a[:, None, :2], b[:, :2]), np.minimum(a[:, None, 2:], b[:, 2:])
    inter = np.clip(rb - lt, 0, None).prod(-1)
    union = area(a)[:, None] + area(b) - inter
    lt, rb = np.minimum(a[:, None, :2], b[:, :2]), np.maximum(a[:, None, 2:], b[:, 2:])
    enc = (rb - lt).prod(-1)
    ta, tb = cthtorch.tensor(a), cthtorch.tensor(b)
    np.testing.assert_allclose(B.box_area(ta).numpy(), area(a), rtol=1e-12)
    np.testing.assert_allclose(ops.box_iou(ta, tb).numpy(), inter / union, rtol=1e-12)
    np.testing.assert_allclose(ops.generalized_box_iou(ta, tb).numpy(), inter / union - (enc - union) / enc, rtol=1e-12)
    assert B.box_area(cthtorch.tensor([[0, 0, 300, 300]], dtype=cthtorch.int16)).tolist() == [90000]
    for fmt in ("xywh", "cxcywh"):
        assert cthtorch.allclose(ops.box_convert(ops.box_convert(ta, "xyxy", fmt), fmt, "xyxy"), ta)
    assert ops.box_convert(ta, "xyxy", "cxcywh")[0].tolist() == pytest.approx(
        [(a[0, 0] + a[0, 2]) / 2, (a[0, 1] + a[0, 3]) / 2, a[0, 2] - a[0, 0], a[0, 3] - a[0, 1]])
    with pytest.raises(ValueError, match="Unsupported Bounding Box Conversions"):
        ops.box_convert(ta, "xyxy", "yxyx")
    clip = ops.clip_boxes_to_image(cthtorch.tensor([[-1.0, 2.0, 12.0, 30.0]]), (20, 10))
    assert clip.tolist() == [[0.0, 2.0, 10.0, 20.0]]
    small = cthtorch.tensor([[0.0, 0, 1, 5], [0, 0, 3, 3], [0, 0, 5, 1]])
    assert ops.remove_small_boxes(small, 2).tolist() == [1]
    m = cthtorch.zeros(2, 6, 7)
    m[0, 1:4, 2:6] = 1
    m[1, 5, 0] = 1
    assert ops.masks_to_boxes(m).tolist() == [[2.0, 1.0, 5.0, 3.0], [0.0, 5.0, 0.0, 5.0]]
    assert ops.masks_to_boxes(cthtorch.zeros(0, 3, 3)).shape == (0, 4)
    # box 1 overlaps box 0 (IoU 0.81) and goes; box 2 is apart; box 3 overlaps box 2 by exactly 1/3
    boxes = cthtorch.tensor([[0.0, 0, 10, 10], [0, 0, 9, 9], [20, 20, 30, 30], [25, 20, 35, 30]])
    scores = cthtorch.tensor([0.9, 0.95, 0.5, 0.4])
    keep = ops.nms(boxes, scores, 0.5)
    assert keep.dtype == cthtorch.int64 and keep.tolist() == [1, 2, 3]
    assert ops.nms(boxes, scores, 0.3).tolist() == [1, 2]
    assert ops.batched_nms(boxes, scores, cthtorch.tensor([0, 1, 0, 0]), 0.5).tolist() == [1, 0, 2, 3]
    assert ops.nms(cthtorch.zeros(0, 4), cthtorch.zeros(0), 0.5).tolist() == []
    # torchvision sorts the scores stably: 20 apart boxes of one score are kept in index order (an unstable
    # sort, as torch.argsort's, would permute them)
    apart = cthtorch.arange(20.0)[:, None] * 10 + cthtorch.tensor([0.0, 0, 5, 5])
    assert ops.nms(apart, cthtorch.full((20,), 0.5), 0.5).tolist() == list(range(20))


def test_is_tracing_follows_jit_trace():
    """torchvision._is_tracing() (DETR's nested_tensor_from_tensor_list asks it): false in eager code, true
    while torch.jit.trace records"""
    import cthtorch
    import cthtorch.vision as torchvision
    seen = []

    def f(x):
        seen.append(bool(torchvision._is_tracing()))
        return x * 2
    f(cthtorch.ones(2))
    cthtorch.jit.trace(f, (cthtorch.ones(2),))
    assert seen[0] is False and seen[1] is True
    # DETR's util.misc.interpolate goes through torchvision.ops.misc.interpolate, F.interpolate under that name
    assert torchvision.ops.misc.interpolate is cthtorch.nn.functional.interpolate
