"""FER2013 facial expressions from root/fer2013/{train,test}.csv: 48x48 grayscale pixels as a space-separated
string per row, the emotion (0-6) in the train file (absent from the test file: target None)."""
import csv
import os

import cthtorch
from cthtorch.vision.datasets.utils import verify_str_arg
from cthtorch.vision.datasets.vision import VisionDataset


class FER2013(VisionDataset):
    _RESOURCES = {"train": "train.csv", "test": "test.csv"}

    def __init__(self, root, split="train", transform=None, target_transform=None):
        self._split = verify_str_arg(split, "split", self._RESOURCES.keys())
        super().__init__(root, transform=transform, target_transform=target_transform)
        base_folder = os.path.join(self.root, "fer2013")
        file_name = self._RESOURCES[self._split]
        data_file = os.path.join(base_folder, file_name)
        if not os.path.isfile(data_file):
            raise RuntimeError("%s not found in %s or corrupted. You can download it from https://www.kaggle.com/c/"
                               "challenges-in-representation-learning-facial-expression-recognition-challenge"
                               % (file_name, base_folder))
        with open(data_file, "r", newline="") as f:
            self._samples = [(cthtorch.tensor([int(v) for v in row["pixels"].split()], dtype=cthtorch.uint8)
                              .reshape(48, 48), int(row["emotion"]) if "emotion" in row else None)
                             for row in csv.DictReader(f)]

    def __len__(self):
        return len(self._samples)

    def __getitem__(self, idx):
        from PIL import Image
        pixels, target = self._samples[idx]
        image = Image.fromarray(pixels.numpy())
        if self.transform is not None:
            image = self.transform(image)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return image, target

    def extra_repr(self):
        return "split=%s" % self._split
