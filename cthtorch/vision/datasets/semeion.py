"""SEMEION handwritten digits from root/semeion.data: 256 pixel values (0/1) and a one-hot label of 10 a line."""
import os

import numpy as np

from cthtorch.vision.datasets.vision import VisionDataset, no_download


class SEMEION(VisionDataset):
    filename = "semeion.data"

    def __init__(self, root, transform=None, target_transform=None, download=True):
        super().__init__(root, transform=transform, target_transform=target_transform)
        path = os.path.join(self.root, self.filename)
        if not os.path.isfile(path):
            if download:
                no_download(type(self).__name__, self.root)
            raise RuntimeError("Dataset not found or corrupted. You can use download=True to download it")
        data = np.loadtxt(path)
        self.data = np.reshape((data[:, :256] * 255).astype("uint8"), (-1, 16, 16))
        self.labels = np.nonzero(data[:, 256:])[1]

    def __getitem__(self, index):
        from PIL import Image
        return self._apply(Image.fromarray(self.data[index], mode="L"), int(self.labels[index]))

    def __len__(self):
        return len(self.data)
