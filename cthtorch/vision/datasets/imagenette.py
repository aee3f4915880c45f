"""Imagenette (ten easy ImageNet classes) from root/imagenette2[-320|-160]/{train,val}/<wnid>/*.JPEG."""
import os

from cthtorch.vision.datasets.folder import default_loader, find_classes, make_dataset
from cthtorch.vision.datasets.utils import verify_str_arg
from cthtorch.vision.datasets.vision import VisionDataset, no_download


class Imagenette(VisionDataset):
    _FOLDERS = {"full": "imagenette2", "320px": "imagenette2-320", "160px": "imagenette2-160"}
    _WNID_TO_CLASS = {
        "n01440764": ("tench", "Tinca tinca"),
        "n02102040": ("English springer", "English springer spaniel"),
        "n02979186": ("cassette player",),
        "n03000684": ("chain saw", "chainsaw"),
        "n03028079": ("church", "church building"),
        "n03394916": ("French horn", "horn"),
        "n03417042": ("garbage truck", "dustcart"),
        "n03425413": ("gas pump", "gasoline pump", "petrol pump", "island dispenser"),
        "n03445777": ("golf ball",),
        "n03888605": ("parachute", "chute"),
    }

    def __init__(self, root, split="train", size="full", download=False, transform=None, target_transform=None,
                 loader=default_loader):
        super().__init__(root, transform=transform, target_transform=target_transform)
        self._split = verify_str_arg(split, "split", ["train", "val"])
        self._size = verify_str_arg(size, "size", ["full", "320px", "160px"])
        self._size_root = os.path.join(self.root, self._FOLDERS[self._size])
        self._image_root = os.path.join(self._size_root, self._split)
        if not os.path.isdir(self._image_root):
            if download:
                no_download(type(self).__name__, self.root)
            raise RuntimeError("Dataset not found. You can use download=True to download it.")
        self.wnids, self.wnid_to_idx = find_classes(self._image_root)
        self.classes = [self._WNID_TO_CLASS[wnid] for wnid in self.wnids]
        self.class_to_idx = {name: idx for wnid, idx in self.wnid_to_idx.items() for name in self._WNID_TO_CLASS[wnid]}
        self._samples = make_dataset(self._image_root, self.wnid_to_idx, extensions=".jpeg")
        self.loader = loader

    def __getitem__(self, idx):
        path, label = self._samples[idx]
        return self._apply(self.loader(path), label)

    def __len__(self):
        return len(self._samples)
