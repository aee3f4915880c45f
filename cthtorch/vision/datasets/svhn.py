"""SVHN's cropped-digit MATLAB files (root/{train,test,extra}_32x32.mat: X [32, 32, 3, N], y [N, 1] with the
digit 0 stored as 10), read with scipy.io.loadmat as torchvision does."""
import os

import numpy as np

from cthtorch.vision.datasets.utils import verify_str_arg
from cthtorch.vision.datasets.vision import VisionDataset, no_download


class SVHN(VisionDataset):
    split_list = {"train": "train_32x32.mat", "test": "test_32x32.mat", "extra": "extra_32x32.mat"}

    def __init__(self, root, split="train", transform=None, target_transform=None, download=False):
        super().__init__(root, transform=transform, target_transform=target_transform)
        self.split = verify_str_arg(split, "split", tuple(self.split_list.keys()))
        self.filename = self.split_list[split]
        path = os.path.join(self.root, self.filename)
        if not os.path.isfile(path):
            if download:
                no_download(type(self).__name__, self.root)
            raise RuntimeError("Dataset not found or corrupted. You can use download=True to download it")
        try:
            import scipy.io as sio
        except ImportError:
            raise NotImplementedError("SVHN reads its .mat files with scipy.io.loadmat, and scipy is not "
                                      "installed") from None
        loaded_mat = sio.loadmat(path)
        self.data = loaded_mat["X"]
        self.labels = loaded_mat["y"].astype(np.int64).squeeze()
        np.place(self.labels, self.labels == 10, 0)
        self.data = np.transpose(self.data, (3, 2, 0, 1))

    def __getitem__(self, index):
        from PIL import Image
        img, target = self.data[index], int(self.labels[index])
        return self._apply(Image.fromarray(np.transpose(img, (1, 2, 0))), target)

    def __len__(self):
        return len(self.data)

    def extra_repr(self):
        return "Split: {}".format(self.split)
