"""STL10 (raw binary) and SVHN (MATLAB .mat) datasets (cthtorch/vision/datasets/stl10.py, svhn.py) from files
the test writes in the published layouts: image orientation, label shifts, splits, folds, and the checks."""
import os

import numpy as np
import pytest

from cthtorch.vision import datasets


def write_stl(folder, name, imgs_hwc, labels=None):
    # published layout: per image C, then W, then H (column-major planes)
    with open(os.path.join(folder, name + "_X.bin"), "wb") as f:
        f.write(np.ascontiguousarray(imgs_hwc.transpose(0, 3, 2, 1)).tobytes())
    if labels is not None:
        with open(os.path.join(folder, name + "_y.bin"), "wb") as f:
            f.write((labels + 1).astype(np.uint8).tobytes())


def test_stl10_splits_and_folds(tmp_path):
    folder = tmp_path / "stl10_binary"
    os.makedirs(folder)
    rs = np.random.RandomState(2)
    train = rs.randint(0, 256, (4, 96, 96, 3)).astype(np.uint8)
    unl = rs.randint(0, 256, (2, 96, 96, 3)).astype(np.uint8)
    labels = np.array([0, 9, 3, 5])
    write_stl(str(folder), "train", train, labels)
    write_stl(str(folder), "unlabeled", unl)
    (folder / "class_names.txt").write_text("airplane\nbird\ncar\ncat\ndeer\ndog\nhorse\nmonkey\nship\ntruck\n")
    (folder / "fold_indices.txt").write_text("3 1\n0 2\n" + "0\n" * 8)
    ds = datasets.STL10(str(tmp_path))
    assert len(ds) == 4 and ds.classes[9] == "truck"
    img, t = ds[1]
    assert t == 9 and img.size == (96, 96) and np.array_equal(np.asarray(img), train[1])
    f0 = datasets.STL10(str(tmp_path), folds=0)
    assert len(f0) == 2 and f0[0][1] == 5 and np.array_equal(np.asarray(f0[0][0]), train[3])
    both = datasets.STL10(str(tmp_path), split="train+unlabeled")
    assert len(both) == 6 and both[5][1] == -1 and np.array_equal(np.asarray(both[5][0]), unl[1])
    assert len(datasets.STL10(str(tmp_path), split="unlabeled")) == 2
    with pytest.raises(RuntimeError, match="Dataset not found or corrupted"):
        datasets.STL10(str(tmp_path), split="test")
    with pytest.raises(ValueError, match=r"Value for argument folds should be in the range \[0, 10\), but got 10."):
        datasets.STL10(str(tmp_path), folds=10)
    with pytest.raises(ValueError, match="Unknown value 'val' for argument split"):
        datasets.STL10(str(tmp_path), split="val")


def test_svhn_from_mat(tmp_path):
    sio = pytest.importorskip("scipy.io")
    rs = np.random.RandomState(6)
    imgs = rs.randint(0, 256, (32, 32, 3, 3)).astype(np.uint8)
    sio.savemat(str(tmp_path / "test_32x32.mat"), {"X": imgs, "y": np.array([[10], [3], [1]], np.uint8)})
    ds = datasets.SVHN(str(tmp_path), split="test")
    assert len(ds) == 3 and [ds[i][1] for i in range(3)] == [0, 3, 1]
    assert np.array_equal(np.asarray(ds[0][0]), imgs[..., 0])
    assert "Split: test" in repr(ds)
    with pytest.raises(RuntimeError, match="Dataset not found or corrupted"):
        datasets.SVHN(str(tmp_path))
