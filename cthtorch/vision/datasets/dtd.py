"""Describable Textures: root/dtd/dtd/images/<texture>/<name>.jpg, the splits in labels/<split><partition>.txt
("<texture>/<name>.jpg" a line); classes are the sorted textures named in the split."""
import os

from cthtorch.vision.datasets.utils import verify_str_arg
from cthtorch.vision.datasets.vision import LabelledImageFiles, no_download


class DTD(LabelledImageFiles):
    def __init__(self, root, split="train", partition=1, transform=None, target_transform=None, download=False):
        self._split = verify_str_arg(split, "split", ("train", "val", "test"))
        if not isinstance(partition, int) and not (1 <= partition <= 10):
            raise ValueError("Parameter 'partition' should be an integer with `1 <= partition <= 10`, but got %s "
                             "instead" % partition)
        self._partition = partition
        super().__init__(root, transform=transform, target_transform=target_transform)
        self._base_folder = os.path.join(self.root, type(self).__name__.lower())
        self._data_folder = os.path.join(self._base_folder, "dtd")
        self._meta_folder = os.path.join(self._data_folder, "labels")
        self._images_folder = os.path.join(self._data_folder, "images")
        if not os.path.isdir(self._data_folder):
            if download:
                no_download(type(self).__name__, self._base_folder)
            raise RuntimeError("Dataset not found. You can use download=True to download it")
        self._image_files, classes = [], []
        with open(os.path.join(self._meta_folder, "%s%d.txt" % (self._split, self._partition))) as f:
            for line in f:
                cls, name = line.strip().split("/")
                self._image_files.append(os.path.join(self._images_folder, cls, name))
                classes.append(cls)
        self.classes = sorted(set(classes))
        self.class_to_idx = dict(zip(self.classes, range(len(self.classes))))
        self._labels = [self.class_to_idx[cls] for cls in classes]

    def extra_repr(self):
        return "split=%s, partition=%s" % (self._split, self._partition)
