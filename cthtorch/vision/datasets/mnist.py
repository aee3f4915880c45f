"""MNIST-format datasets from IDX files (gzipped, xz-compressed or not), in torchvision's
root/<Name>/raw layout or directly in root: MNIST, FashionMNIST, KMNIST, EMNIST, QMNIST."""
import gzip
import lzma
import os
import string
import warnings

import numpy as np

import cthtorch
from cthtorch.vision.datasets.utils import verify_str_arg
from cthtorch.vision.datasets.vision import VisionDataset, no_download


def read_idx(path):
    opener = gzip.open if path.endswith(".gz") else lzma.open if path.endswith(".xz") else open
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
        self.data, self.targets = self._load_data(img_path, lbl_path)

    def _load_data(self, img_path, lbl_path):
        return (cthtorch.from_numpy(np.ascontiguousarray(read_idx(img_path))),
                cthtorch.from_numpy(read_idx(lbl_path).astype(np.int64)))

    @property
    def raw_folder(self):
        return os.path.join(self.root, type(self).__name__, "raw")

    def _file_names(self):
        prefix = self._prefixes[self.train]
        return "%s-images-idx3-ubyte" % prefix, "%s-labels-idx1-ubyte" % prefix

    def _find(self):
        img_name, lbl_name = self._file_names()
        # raw/gzip: where EMNIST's gzip.zip unpacks
        for folder in (self.raw_folder, os.path.join(self.raw_folder, "gzip"),
                       os.path.join(self.root, type(self).__name__), self.root):
            for ext in ("", ".gz", ".xz"):
                img = os.path.join(folder, img_name + ext)
                lbl = os.path.join(folder, lbl_name + ext)
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


class EMNIST(MNIST):
    """EMNIST's six splits in the MNIST format (emnist-<split>-<train|test>-*-ubyte); the images are stored
    transposed, and are returned as stored, as torchvision does"""
    splits = ("byclass", "bymerge", "balanced", "letters", "digits", "mnist")
    _merged_classes = {"c", "i", "j", "k", "l", "m", "o", "p", "s", "u", "v", "w", "x", "y", "z"}
    _all_classes = set(string.digits + string.ascii_letters)
    classes_split_dict = {
        "byclass": sorted(list(_all_classes)),
        "bymerge": sorted(list(_all_classes - _merged_classes)),
        "balanced": sorted(list(_all_classes - _merged_classes)),
        "letters": ["N/A"] + list(string.ascii_lowercase),
        "digits": list(string.digits),
        "mnist": list(string.digits),
    }

    def __init__(self, root, split, **kwargs):
        self.split = verify_str_arg(split, "split", self.splits)
        self.classes = self.classes_split_dict[self.split]
        super().__init__(root, **kwargs)

    def _file_names(self):
        prefix = "emnist-%s-%s" % (self.split, "train" if self.train else "test")
        return prefix + "-images-idx3-ubyte", prefix + "-labels-idx1-ubyte"


class QMNIST(MNIST):
    """QMNIST (Yadav & Bottou 2019): MNIST's test set rebuilt in full from NIST; each target is a row of 8
    ints (class, NIST writer, ...) of which compat=True returns only the class"""
    subsets = {"train": "train", "test": "test", "test10k": "test", "test50k": "test", "nist": "nist"}

    def __init__(self, root, what=None, compat=True, train=True, **kwargs):
        if what is None:
            what = "train" if train else "test"
        self.what = verify_str_arg(what, "what", tuple(self.subsets.keys()))
        self.compat = compat
        super().__init__(root, train, **kwargs)

    def _file_names(self):
        prefix = "xnist" if self.what == "nist" else "qmnist-" + self.subsets[self.what]
        return prefix + "-images-idx3-ubyte", prefix + "-labels-idx2-int"

    def _load_data(self, img_path, lbl_path):
        data = read_idx(img_path)
        if data.dtype != np.uint8:
            raise TypeError(f"data should be of dtype torch.uint8 instead of {cthtorch.from_numpy(data).dtype}")
        if data.ndim != 3:
            raise ValueError("data should have 3 dimensions instead of {}".format(data.ndim))
        targets = read_idx(lbl_path).astype(np.int64)
        if targets.ndim != 2:
            raise ValueError("targets should have 2 dimensions instead of {}".format(targets.ndim))
        # the test set's first 10000 rows are MNIST's test images, the other 50000 the ones MNIST dropped
        if self.what == "test10k":
            data, targets = data[:10000], targets[:10000]
        elif self.what == "test50k":
            data, targets = data[10000:], targets[10000:]
        return cthtorch.from_numpy(np.ascontiguousarray(data)), cthtorch.from_numpy(np.ascontiguousarray(targets))

    def __getitem__(self, index):
        from PIL import Image
        img, target = self.data[index], self.targets[index]
        img = Image.fromarray(img.numpy(), mode="L")
        if self.transform is not None:
            img = self.transform(img)
        if self.compat:
            target = int(target[0])
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target

    def extra_repr(self):
        return f"Split: {self.what}"
