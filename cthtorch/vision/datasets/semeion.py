"""SEMEION handwritten digits from root/semeion.data: 256 pixel values (0/1) and a one-hot label of 10 a line."""
import os

import cthtorch
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
        with open(path) as f:
            data = cthtorch.tensor([[float(v) for v in line.split()] for line in f if line.strip()],
                                   dtype=cthtorch.float64)
        # torchvision's .data and .labels are numpy arrays: converted once computed
        self.data = (data[:, :256] * 255).to(cthtorch.uint8).reshape(-1, 16, 16).numpy()
        self.labels = (data[:, 256:] != 0).nonzero()[:, 1].numpy()

    def __getitem__(self, index):
        from PIL import Image
        return self._apply(Image.fromarray(self.data[index], mode="L"), int(self.labels[index]))

    def __len__(self):
        return len(self.data)
