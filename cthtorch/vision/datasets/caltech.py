"""Caltech 101 (root/caltech101/101_ObjectCategories/<category>/image_0001.jpg, outlines in
Annotations/<category>/annotation_0001.mat) and Caltech 256 (root/caltech256/256_ObjectCategories/
001.ak47/001_0001.jpg). Images are returned as stored (some are grayscale), as torchvision returns them."""
import os

from cthtorch.vision.datasets.utils import verify_str_arg
from cthtorch.vision.datasets.vision import VisionDataset, no_download


def _counted(root, categories, keep=lambda name: True):
    """(file number starting at 1, category index) for every kept file of each category folder"""
    index, y = [], []
    for i, c in enumerate(categories):
        n = len([name for name in os.listdir(os.path.join(root, c)) if keep(name)])
        index.extend(range(1, n + 1))
        y.extend(n * [i])
    return index, y


def _found(dataset, folder, download):
    if not os.path.exists(os.path.join(dataset.root, folder)):
        if download:
            no_download(type(dataset).__name__, dataset.root)
        raise RuntimeError("Dataset not found or corrupted. You can use download=True to download it")


class Caltech101(VisionDataset):
    def __init__(self, root, target_type="category", transform=None, target_transform=None, download=False):
        super().__init__(os.path.join(root, "caltech101"), transform=transform, target_transform=target_transform)
        if isinstance(target_type, str):
            target_type = [target_type]
        self.target_type = [verify_str_arg(t, "target_type", ("category", "annotation")) for t in target_type]
        _found(self, "101_ObjectCategories", download)
        self.categories = sorted(os.listdir(os.path.join(self.root, "101_ObjectCategories")))
        self.categories.remove("BACKGROUND_Google")   # not a class
        # the annotation folders name four categories differently
        name_map = {"Faces": "Faces_2", "Faces_easy": "Faces_3", "Motorbikes": "Motorbikes_16",
                    "airplanes": "Airplanes_Side_2"}
        self.annotation_categories = [name_map.get(c, c) for c in self.categories]
        self.index, self.y = _counted(os.path.join(self.root, "101_ObjectCategories"), self.categories)

    def __getitem__(self, index):
        from PIL import Image
        n, y = self.index[index], self.y[index]
        img = Image.open(os.path.join(self.root, "101_ObjectCategories", self.categories[y], "image_%04d.jpg" % n))
        target = []
        for t in self.target_type:
            if t == "category":
                target.append(y)
            else:
                try:
                    import scipy.io
                except ImportError:
                    raise NotImplementedError("Caltech101 reads its annotations with scipy.io.loadmat, and scipy "
                                              "is not installed") from None
                data = scipy.io.loadmat(os.path.join(self.root, "Annotations", self.annotation_categories[y],
                                                     "annotation_%04d.mat" % n))
                target.append(data["obj_contour"])
        return self._apply(img, tuple(target) if len(target) > 1 else target[0])

    def __len__(self):
        return len(self.index)

    def extra_repr(self):
        return "Target type: {}".format(self.target_type)


class Caltech256(VisionDataset):
    def __init__(self, root, transform=None, target_transform=None, download=False):
        super().__init__(os.path.join(root, "caltech256"), transform=transform, target_transform=target_transform)
        _found(self, "256_ObjectCategories", download)
        self.categories = sorted(os.listdir(os.path.join(self.root, "256_ObjectCategories")))
        self.index, self.y = _counted(os.path.join(self.root, "256_ObjectCategories"), self.categories,
                                      lambda name: name.endswith(".jpg"))

    def __getitem__(self, index):
        from PIL import Image
        n, y = self.index[index], self.y[index]
        img = Image.open(os.path.join(self.root, "256_ObjectCategories", self.categories[y],
                                      "%03d_%04d.jpg" % (y + 1, n)))
        return self._apply(img, y)

    def __len__(self):
        return len(self.index)
