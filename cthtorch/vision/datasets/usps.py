"""USPS handwritten digits from root/usps.bz2 (train) or root/usps.t.bz2 (test): bzip2'd libsvm lines
"<label 1-10> 1:<v> ... 256:<v>" with values in [-1, 1], returned as 16x16 "L" images of (v + 1) / 2 * 255."""
import bz2
import os

import cthtorch
from cthtorch.vision.datasets.vision import VisionDataset, no_download


class USPS(VisionDataset):
    split_list = {"train": "usps.bz2", "test": "usps.t.bz2"}

    def __init__(self, root, train=True, transform=None, target_transform=None, download=False):
        super().__init__(root, transform=transform, target_transform=target_transform)
        filename = self.split_list["train" if train else "test"]
        full_path = os.path.join(self.root, filename)
        if not os.path.isfile(full_path):
            if download:
                no_download(type(self).__name__, self.root)
            raise RuntimeError("Dataset not found or corrupted. You can use download=True to download it")
        with bz2.open(full_path) as fp:
            raw = [line.decode().split() for line in fp.readlines()]
        values = [[x.split(":")[-1] for x in row[1:]] for row in raw]
        imgs = cthtorch.tensor([[float(v) for v in row] for row in values], dtype=cthtorch.float32).reshape(-1, 16, 16)
        self.data = ((imgs + 1) / 2 * 255).to(cthtorch.uint8).numpy()   # torchvision's .data is a numpy array
        self.targets = [int(row[0]) - 1 for row in raw]

    def __getitem__(self, index):
        from PIL import Image
        return self._apply(Image.fromarray(self.data[index], mode="L"), int(self.targets[index]))

    def __len__(self):
        return len(self.data)
