"""Places365 from root: categories_places365.txt ("/a/airfield 0" a line), the split's file list
(places365_train_standard.txt, places365_train_challenge.txt or places365_val.txt: "<image> <class>") and the
images under data_{large|256}_{standard|challenge} (train) or val_{large|256} (val)."""
import os

from cthtorch.vision.datasets.folder import default_loader
from cthtorch.vision.datasets.utils import verify_str_arg
from cthtorch.vision.datasets.vision import VisionDataset, no_download


class Places365(VisionDataset):
    _SPLITS = ("train-standard", "train-challenge", "val")
    _CATEGORIES_FILE = "categories_places365.txt"
    _FILE_LISTS = {"train-standard": "places365_train_standard.txt",
                   "train-challenge": "places365_train_challenge.txt", "val": "places365_val.txt"}

    def __init__(self, root, split="train-standard", small=False, download=False, transform=None,
                 target_transform=None, loader=default_loader):
        super().__init__(root, transform=transform, target_transform=target_transform)
        self.split = verify_str_arg(split, "split", self._SPLITS)
        self.small = small
        self.loader = loader
        self.classes, self.class_to_idx = self.load_categories(download)
        self.imgs, self.targets = self.load_file_list(download)

    def _file(self, name, download):
        path = os.path.join(self.root, name)
        if not os.path.isfile(path):
            if download:
                no_download(type(self).__name__, self.root)
            raise RuntimeError("The file %s does not exist or is corrupted. You can set download=True to download "
                               "it." % path)
        return path

    def load_categories(self, download=True):
        with open(self._file(self._CATEGORIES_FILE, download)) as f:
            class_to_idx = {cls: int(idx) for cls, idx in (line.split() for line in f)}
        return sorted(class_to_idx.keys()), class_to_idx

    def load_file_list(self, download=True):
        with open(self._file(self._FILE_LISTS[self.split], download)) as f:
            images = [(os.path.join(self.images_dir, image.lstrip("/").replace("/", os.sep)), int(idx))
                      for image, idx in (line.split() for line in f)]
        return images, [t for _, t in images]

    @property
    def variant(self):
        return "challenge" if "challenge" in self.split else "standard"

    @property
    def images_dir(self):
        size = "256" if self.small else "large"
        folder = "data_%s_%s" % (size, self.variant) if self.split.startswith("train") else "%s_%s" % (self.split, size)
        return os.path.join(self.root, folder)

    def __getitem__(self, index):
        file, target = self.imgs[index]
        return self._apply(self.loader(file), target)

    def __len__(self):
        return len(self.imgs)

    def extra_repr(self):
        return "Split: {}\nSmall: {}".format(self.split, self.small)
