"""FGVC-Aircraft: root/fgvc-aircraft-2013b/data/images/<id>.jpg, the split's "<id> <label>" lines in
images_<level>_<split>.txt and the level's class list in variants.txt, families.txt or manufacturers.txt."""
import os

from cthtorch.vision.datasets.utils import verify_str_arg
from cthtorch.vision.datasets.vision import LabelledImageFiles, no_download


class FGVCAircraft(LabelledImageFiles):
    def __init__(self, root, split="trainval", annotation_level="variant", transform=None, target_transform=None,
                 download=False):
        super().__init__(root, transform=transform, target_transform=target_transform)
        self._split = verify_str_arg(split, "split", ("train", "val", "trainval", "test"))
        self._annotation_level = verify_str_arg(annotation_level, "annotation_level",
                                                ("variant", "family", "manufacturer"))
        self._data_path = os.path.join(self.root, "fgvc-aircraft-2013b")
        if not os.path.isdir(self._data_path):
            if download:
                no_download(type(self).__name__, self.root)
            raise RuntimeError("Dataset not found. You can use download=True to download it")
        classes_file = {"variant": "variants.txt", "family": "families.txt",
                        "manufacturer": "manufacturers.txt"}[self._annotation_level]
        with open(os.path.join(self._data_path, "data", classes_file)) as f:
            self.classes = [line.strip() for line in f]
        self.class_to_idx = dict(zip(self.classes, range(len(self.classes))))
        images = os.path.join(self._data_path, "data", "images")
        self._image_files, self._labels = [], []
        with open(os.path.join(self._data_path, "data", "images_%s_%s.txt" % (self._annotation_level, self._split))) as f:
            for line in f:
                image_name, label_name = line.strip().split(" ", 1)
                self._image_files.append(os.path.join(images, "%s.jpg" % image_name))
                self._labels.append(self.class_to_idx[label_name])
