"""German Traffic Sign Recognition Benchmark: training images in root/gtsrb/GTSRB/Training/<class 00000>/*.ppm,
test images in GTSRB/Final_Test/Images with their classes in root/gtsrb/GT-final_test.csv (';'-separated)."""
import csv
import os

from cthtorch.vision.datasets.folder import make_dataset
from cthtorch.vision.datasets.utils import verify_str_arg
from cthtorch.vision.datasets.vision import VisionDataset, no_download


class GTSRB(VisionDataset):
    def __init__(self, root, split="train", transform=None, target_transform=None, download=False):
        super().__init__(root, transform=transform, target_transform=target_transform)
        self._split = verify_str_arg(split, "split", ("train", "test"))
        self._base_folder = os.path.join(self.root, "gtsrb")
        self._target_folder = os.path.join(self._base_folder, "GTSRB",
                                           "Training" if self._split == "train" else os.path.join("Final_Test", "Images"))
        if not os.path.isdir(self._target_folder):
            if download:
                no_download(type(self).__name__, self._base_folder)
            raise RuntimeError("Dataset not found. You can use download=True to download it")
        if self._split == "train":
            self._samples = make_dataset(self._target_folder, extensions=(".ppm",))
        else:
            with open(os.path.join(self._base_folder, "GT-final_test.csv")) as f:
                self._samples = [(os.path.join(self._target_folder, row["Filename"]), int(row["ClassId"]))
                                 for row in csv.DictReader(f, delimiter=";", skipinitialspace=True)]

    def __len__(self):
        return len(self._samples)

    def __getitem__(self, index):
        from PIL import Image
        path, target = self._samples[index]
        return self._apply(Image.open(path).convert("RGB"), target)
