"""Moving MNIST from root/MovingMNIST/mnist_test_seq.npy ((20 frames, N, 64, 64) uint8): each item a
(frames, 1, 64, 64) sequence; split "train"/"test" keeps the first split_ratio frames or the rest."""
import os

import numpy as np

import cthtorch
from cthtorch.vision.datasets.utils import verify_str_arg
from cthtorch.vision.datasets.vision import VisionDataset, no_download


class MovingMNIST(VisionDataset):
    _filename = "mnist_test_seq.npy"

    def __init__(self, root, split=None, split_ratio=10, download=False, transform=None):
        super().__init__(root, transform=transform)
        self._base_folder = os.path.join(self.root, type(self).__name__)
        if split is not None:
            verify_str_arg(split, "split", ("train", "test"))
        self.split = split
        if not isinstance(split_ratio, int):
            raise TypeError("`split_ratio` should be an integer, but got %s" % type(split_ratio))
        if not 1 <= split_ratio <= 19:
            raise ValueError("`split_ratio` should be `1 <= split_ratio <= 19`, but got %s instead." % split_ratio)
        self.split_ratio = split_ratio
        path = os.path.join(self._base_folder, self._filename)
        if not os.path.isfile(path):
            if download:
                no_download(type(self).__name__, self._base_folder)
            raise RuntimeError("Dataset not found. You can use download=True to download it.")
        data = cthtorch.from_numpy(np.load(path))
        if self.split == "train":
            data = data[:self.split_ratio]
        elif self.split == "test":
            data = data[self.split_ratio:]
        self.data = data.transpose(0, 1).unsqueeze(2).contiguous()

    def __getitem__(self, idx):
        data = self.data[idx]
        return self.transform(data) if self.transform is not None else data

    def __len__(self):
        return len(self.data)
