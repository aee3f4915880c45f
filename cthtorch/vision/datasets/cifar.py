"""CIFAR-10/100 from the python pickle batches."""
import os
import pickle

import numpy as np

from cthtorch.vision.datasets.vision import VisionDataset, no_download


class CIFAR10(VisionDataset):
    base_folder = "cifar-10-batches-py"
    train_list = ["data_batch_1", "data_batch_2", "data_batch_3", "data_batch_4", "data_batch_5"]
    test_list = ["test_batch"]
    meta = {"filename": "batches.meta", "key": "label_names"}
    label_key = "labels"

    def __init__(self, root, train=True, transform=None, target_transform=None, download=False):
        super().__init__(root, transform=transform, target_transform=target_transform)
        self.train = train
        folder = os.path.join(self.root, self.base_folder)
        files = self.train_list if train else self.test_list
        if not all(os.path.exists(os.path.join(folder, f)) for f in files):
            if download:
                no_download(type(self).__name__, folder)
            raise RuntimeError("Dataset not found or corrupted. You can use download=True to download it")
        data, targets = [], []
        for f in files:
            with open(os.path.join(folder, f), "rb") as fh:
                entry = pickle.load(fh, encoding="latin1")
            data.append(entry["data"])
            targets.extend(entry.get("labels", entry.get("fine_labels", [])))
        self.data = np.vstack(data).reshape(-1, 3, 32, 32).transpose((0, 2, 3, 1))
        self.targets = targets
        meta = os.path.join(folder, self.meta["filename"])
        if os.path.exists(meta):
            with open(meta, "rb") as fh:
                self.classes = pickle.load(fh, encoding="latin1")[self.meta["key"]]
            self.class_to_idx = {c: i for i, c in enumerate(self.classes)}

    def __getitem__(self, index):
        from PIL import Image
        img, target = Image.fromarray(self.data[index]), self.targets[index]
        return self._apply(img, target)

    def __len__(self):
        return len(self.data)


class CIFAR100(CIFAR10):
    base_folder = "cifar-100-python"
    train_list = ["train"]
    test_list = ["test"]
    meta = {"filename": "meta", "key": "fine_label_names"}
