"""MNIST-format datasets from IDX files (gzipped or not), in torchvision's
root/<Name>/raw layout or directly in root."""
import gzip
import os
import warnings

import numpy as np

import cthtorch
from cthtorch.vision.datasets.vision import VisionDataset, no_download


def read_idx(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        data = f.read()
    if len(data) < 4 or data[0] != 0 or data[1] != 0:
        raise RuntimeError("%s is not an IDX file" % path)
    dtype = {0x08: np.uint8, 0x09: np.int8, 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}[data[2]]
    nd = data[3]
    dims = [int.from_bytes(data[4 + 4 * i: 8 + 4 * i], "big") for i in range(nd)]
    arr = np.frombuffer(data, dtype=dtype, offset=4 + 4 * nd)
    if arr.size != int(np.prod(dims)):
        raise RuntimeError("%s is truncated: expected %d values, found %d" % (path, int(np.prod(dims)), arr.size))
    return arr.reshape(dims).astype(np.dtype(dtype).newbyteorder("=") if not isinstance(dtype, type) else dtype)


def _renamed(old, new):
    def get(self):
        warnings.warn("%s has been renamed %s" % (old, new))
        return getattr(self, new)
    return property(get)


class MNIST(VisionDataset):
    classes = ["0 - zero", "1 - one", "2 - two", "3 - three", "4 - four", "5 - five", "6 - six", "7 - seven",
               "8 - eight", "9 - nine"]
    _prefixes = {True: "train", False: "t10k"}

    def __init__(self, root, train=True, transform=None, target_transform=None, download=False):
        super().__init__(root, transform=transform, target_transform=target_transform)
        self.train = train
        img_path, lbl_path = self._find()
        if img_path is None:
            if download:
                no_download(type(self).__name__, self.raw_folder)
            raise RuntimeError("Dataset not found. You can use download=True to download it")
        self.data = cthtorch.from_numpy(np.ascontiguousarray(read_idx(img_path)))
        self.targets = cthtorch.from_numpy(read_idx(lbl_path).astype(np.int64))

    @property
    def raw_folder(self):
        return os.path.join(self.root, type(self).__name__, "raw")

    def _find(self):
        prefix = self._prefixes[self.train]
        for folder in (self.raw_folder, os.path.join(self.root, type(self).__name__), self.root):
            for ext in ("", ".gz"):
                img = os.path.join(folder, "%s-images-idx3-ubyte%s" % (prefix, ext))
                lbl = os.path.join(folder, "%s-labels-idx1-ubyte%s" % (prefix, ext))
                if os.path.exists(img) and os.path.exists(lbl):
                    return img, lbl
        return None, None

    # torchvision keeps the pre-0.2.2 attribute names, with a warning (tutorials still read them)
    train_labels = _renamed("train_labels", "targets")
    test_labels = _renamed("test_labels", "targets")
    train_data = _renamed("train_data", "data")
    test_data = _renamed("test_data", "data")

    @property
    def class_to_idx(self):
        return {c: i for i, c in enumerate(self.classes)}

    def __getitem__(self, index):
        from PIL import Image
        img, target = self.data[index], int(self.targets[index])
        img = Image.fromarray(img.numpy(), mode="L")
        return self._apply(img, target)

    def __len__(self):
        return len(self.data)

    def extra_repr(self):
        return "Split: %s" % ("Train" if self.train else "Test")


class FashionMNIST(MNIST):
    classes = ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag",
               "Ankle boot"]


class KMNIST(MNIST):
    classes = ["o", "ki", "su", "tsu", "na", "ha", "ma", "ya", "re", "wo"]
