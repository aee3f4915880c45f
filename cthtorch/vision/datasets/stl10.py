"""STL-10 from its binary files (root/stl10_binary/{train,test}_{X,y}.bin, unlabeled_X.bin: 96x96 RGB images
stored channel-major and column-major, labels 1..10)."""
import os

import numpy as np

from cthtorch.vision.datasets.utils import verify_str_arg
from cthtorch.vision.datasets.vision import VisionDataset, no_download


class STL10(VisionDataset):
    base_folder = "stl10_binary"
    class_names_file = "class_names.txt"
    folds_list_file = "fold_indices.txt"
    train_list = [["train_X.bin"], ["train_y.bin"], ["unlabeled_X.bin"]]
    test_list = [["test_X.bin"], ["test_y.bin"]]
    splits = ("train", "train+unlabeled", "unlabeled", "test")

    def __init__(self, root, split="train", folds=None, transform=None, target_transform=None, download=False):
        super().__init__(root, transform=transform, target_transform=target_transform)
        self.split = verify_str_arg(split, "split", self.splits)
        self.folds = self._verify_folds(folds)
        needed = {"train": ["train_X.bin", "train_y.bin"], "test": ["test_X.bin", "test_y.bin"],
                  "unlabeled": ["unlabeled_X.bin"],
                  "train+unlabeled": ["train_X.bin", "train_y.bin", "unlabeled_X.bin"]}[self.split]
        folder = os.path.join(self.root, self.base_folder)
        if not all(os.path.isfile(os.path.join(folder, f)) for f in needed):
            if download:
                no_download(type(self).__name__, folder)
            raise RuntimeError("Dataset not found or corrupted. You can use download=True to download it")
        if self.split in ("train", "train+unlabeled"):
            self.data, self.labels = self._loadfile("train_X.bin", "train_y.bin")
            self._load_folds(folds)
            if self.split == "train+unlabeled":
                unlabeled, _ = self._loadfile("unlabeled_X.bin")
                self.data = np.concatenate((self.data, unlabeled))
                self.labels = np.concatenate((self.labels, np.asarray([-1] * unlabeled.shape[0])))
        elif self.split == "unlabeled":
            self.data, _ = self._loadfile("unlabeled_X.bin")
            self.labels = np.asarray([-1] * self.data.shape[0])
        else:
            self.data, self.labels = self._loadfile("test_X.bin", "test_y.bin")
        class_file = os.path.join(folder, self.class_names_file)
        if os.path.isfile(class_file):
            with open(class_file) as f:
                self.classes = f.read().splitlines()

    @staticmethod
    def _verify_folds(folds):
        if folds is None:
            return folds
        if isinstance(folds, int):
            if folds in range(10):
                return folds
            raise ValueError("Value for argument folds should be in the range [0, 10), but got {}.".format(folds))
        raise ValueError("Expected type None or int for argument folds, but got type {}.".format(type(folds)))

    def _loadfile(self, data_file, labels_file=None):
        labels = None
        if labels_file:
            with open(os.path.join(self.root, self.base_folder, labels_file), "rb") as f:
                labels = np.fromfile(f, dtype=np.uint8) - 1   # 0-based
        with open(os.path.join(self.root, self.base_folder, data_file), "rb") as f:
            images = np.reshape(np.fromfile(f, dtype=np.uint8), (-1, 3, 96, 96))
        # stored column-major: (N, C, W, H) -> (N, C, H, W)
        return np.transpose(images, (0, 1, 3, 2)), labels

    def _load_folds(self, folds):
        # fold_indices.txt: one line per fold of space-separated training indices
        if folds is None:
            return
        with open(os.path.join(self.root, self.base_folder, self.folds_list_file)) as f:
            list_idx = np.array(f.read().splitlines()[folds].split(), dtype=np.int64)
        self.data = self.data[list_idx, :, :, :]
        if self.labels is not None:
            self.labels = self.labels[list_idx]

    def __getitem__(self, index):
        from PIL import Image
        target = None
        if self.labels is not None:
            img, target = self.data[index], int(self.labels[index])
        else:
            img = self.data[index]
        return self._apply(Image.fromarray(np.transpose(img, (1, 2, 0))), target)

    def __len__(self):
        return self.data.shape[0]

    def extra_repr(self):
        return "Split: {}".format(self.split)
