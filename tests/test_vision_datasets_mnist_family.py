"""EMNIST and QMNIST (cthtorch/vision/datasets/mnist.py) from IDX files the test writes in torchvision's raw
layouts (EMNIST's raw/gzip, QMNIST's 2-d int32 labels, the xz-compressed NIST file): images, targets, the
compat flag, the test10k/test50k split, class lists and the split/what checks."""
import lzma
import os

import numpy as np
import pytest

import cthtorch

from cthtorch.vision import datasets
from test_vision import write_idx


def test_emnist_split_files_and_classes(tmp_path):
    folder = tmp_path / "EMNIST" / "raw" / "gzip"
    os.makedirs(folder)
    rs = np.random.RandomState(3)
    imgs = rs.randint(0, 256, (4, 28, 28)).astype(np.uint8)
    labels = np.array([1, 26, 3, 7], np.uint8)
    write_idx(str(folder / "emnist-letters-test-images-idx3-ubyte.gz"), imgs)
    write_idx(str(folder / "emnist-letters-test-labels-idx1-ubyte.gz"), labels)
    ds = datasets.EMNIST(str(tmp_path), split="letters", train=False)
    assert len(ds) == 4 and ds.classes[1] == "a" and ds.classes[26] == "z" and len(ds.classes) == 27
    img, target = ds[1]
    assert target == 26 and np.array_equal(np.asarray(img), imgs[1])   # as stored (transposed), like torchvision
    assert len(datasets.EMNIST.classes_split_dict["byclass"]) == 62
    assert len(datasets.EMNIST.classes_split_dict["balanced"]) == 47
    with pytest.raises(RuntimeError, match="Dataset not found"):
        datasets.EMNIST(str(tmp_path), split="digits")
    with pytest.raises(ValueError, match="Unknown value 'letter' for argument split. Valid values are "
                                         r"\{'byclass', 'bymerge', 'balanced', 'letters', 'digits', 'mnist'\}."):
        datasets.EMNIST(str(tmp_path), split="letter")


def make_qmnist(folder, n, prefix, xz=False):
    rs = np.random.RandomState(4)
    imgs = rs.randint(0, 256, (n, 28, 28)).astype(np.uint8)
    labels = rs.randint(0, 5000, (n, 8)).astype(np.int32)
    labels[:, 0] %= 10
    ext = ".xz" if xz else ""
    for name, a in (("images-idx3-ubyte", imgs), ("labels-idx2-int", labels)):
        path = os.path.join(folder, "%s-%s" % (prefix, name))
        write_idx(path, a)
        if xz:
            with open(path, "rb") as f, lzma.open(path + ext, "wb") as g:
                g.write(f.read())
            os.remove(path)
    return imgs, labels


def test_qmnist_compat_and_subsets(tmp_path):
    folder = tmp_path / "QMNIST" / "raw"
    os.makedirs(folder)
    imgs, labels = make_qmnist(str(folder), 12, "qmnist-train")
    ds = datasets.QMNIST(str(tmp_path))
    assert ds.what == "train" and len(ds) == 12
    img, target = ds[5]
    assert target == int(labels[5, 0]) and np.array_equal(np.asarray(img), imgs[5])
    full = datasets.QMNIST(str(tmp_path), compat=False)
    t = full[5][1]
    assert t.dtype == cthtorch.int64 and t.tolist() == labels[5].tolist()
    assert "Split: train" in repr(ds)
    timgs, tlabels = make_qmnist(str(folder), 10003, "qmnist-test")
    assert len(datasets.QMNIST(str(tmp_path), train=False)) == 10003
    t50 = datasets.QMNIST(str(tmp_path), what="test50k")
    assert len(t50) == 3 and t50[0][1] == int(tlabels[10000, 0])
    assert len(datasets.QMNIST(str(tmp_path), what="test10k")) == 10000
    nimgs, nlabels = make_qmnist(str(folder), 3, "xnist", xz=True)
    nist = datasets.QMNIST(str(tmp_path), what="nist", compat=False)
    assert nist.targets.tolist() == nlabels.tolist()
    with pytest.raises(ValueError, match="Unknown value 'val' for argument what"):
        datasets.QMNIST(str(tmp_path), what="val")
