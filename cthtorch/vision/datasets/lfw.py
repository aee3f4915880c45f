"""Labeled Faces in the Wild from root/lfw-py: the images in lfw, lfw_funneled or lfw-deepfunneled/<Name>/
<Name>_0001.jpg, identities in lfw-names.txt, and the people/pairs lists (peopleDevTrain.txt, pairs.txt ...)
as torchvision reads them."""
import os

from cthtorch.vision.datasets.utils import verify_str_arg
from cthtorch.vision.datasets.vision import VisionDataset, no_download


class _LFW(VisionDataset):
    base_folder = "lfw-py"
    file_dict = {"original": "lfw", "funneled": "lfw_funneled", "deepfunneled": "lfw-deepfunneled"}
    annot_file = {"10fold": "", "train": "DevTrain", "test": "DevTest"}
    names = "lfw-names.txt"

    def __init__(self, root, split, image_set, view, transform=None, target_transform=None, download=False):
        super().__init__(os.path.join(root, self.base_folder), transform=transform, target_transform=target_transform)
        self.image_set = verify_str_arg(image_set.lower(), "image_set", self.file_dict.keys())
        self.view = verify_str_arg(view.lower(), "view", ["people", "pairs"])
        self.split = verify_str_arg(split.lower(), "split", ["10fold", "train", "test"])
        self.labels_file = "%s%s.txt" % (self.view, self.annot_file[self.split])
        self.data = []
        self.images_dir = os.path.join(self.root, self.file_dict[self.image_set])
        if not (os.path.isdir(self.images_dir) and os.path.isfile(os.path.join(self.root, self.labels_file))):
            if download:
                no_download(type(self).__name__, self.root)
            raise RuntimeError("Dataset not found or corrupted. You can use download=True to download it")

    def _loader(self, path):
        from PIL import Image
        with open(path, "rb") as f:
            return Image.open(f).convert("RGB")

    def _get_path(self, identity, no):
        return os.path.join(self.images_dir, identity, "%s_%04d.jpg" % (identity, int(no)))

    def _lines(self):
        with open(os.path.join(self.root, self.labels_file)) as f:
            return f.readlines()

    def extra_repr(self):
        return "Alignment: {}\nSplit: {}".format(self.image_set, self.split)

    def __len__(self):
        return len(self.data)


class LFWPeople(_LFW):
    def __init__(self, root, split="10fold", image_set="funneled", transform=None, target_transform=None,
                 download=False):
        super().__init__(root, split, image_set, "people", transform, target_transform, download)
        with open(os.path.join(self.root, self.names)) as f:
            self.class_to_idx = {line.strip().split()[0]: i for i, line in enumerate(f.readlines())}
        self.data, self.targets = [], []
        lines = self._lines()
        n_folds, s = (int(lines[0]), 1) if self.split == "10fold" else (1, 0)
        for _ in range(n_folds):
            n_lines = int(lines[s])
            people = [line.strip().split("\t") for line in lines[s + 1:s + n_lines + 1]]
            s += n_lines + 1
            for identity, num_imgs in people:
                for num in range(1, int(num_imgs) + 1):
                    self.data.append(self._get_path(identity, num))
                    self.targets.append(self.class_to_idx[identity])

    def __getitem__(self, index):
        return self._apply(self._loader(self.data[index]), self.targets[index])

    def extra_repr(self):
        return super().extra_repr() + "\nClasses (identities): %d" % len(self.class_to_idx)


class LFWPairs(_LFW):
    def __init__(self, root, split="10fold", image_set="funneled", transform=None, target_transform=None,
                 download=False):
        super().__init__(root, split, image_set, "pairs", transform, target_transform, download)
        self.pair_names, self.data, self.targets = [], [], []
        lines = self._lines()
        if self.split == "10fold":
            n_folds, n_pairs = (int(v) for v in lines[0].split("\t"))
        else:
            n_folds, n_pairs = 1, int(lines[0])
        s = 1
        for _ in range(n_folds):
            matched = [line.strip().split("\t") for line in lines[s:s + n_pairs]]
            unmatched = [line.strip().split("\t") for line in lines[s + n_pairs:s + 2 * n_pairs]]
            s += 2 * n_pairs
            for name, a, b in matched:
                self.pair_names.append((name, name))
                self.data.append((self._get_path(name, a), self._get_path(name, b)))
                self.targets.append(1)
            for name1, a, name2, b in unmatched:
                self.pair_names.append((name1, name2))
                self.data.append((self._get_path(name1, a), self._get_path(name2, b)))
                self.targets.append(0)

    def __getitem__(self, index):
        img1, img2 = (self._loader(p) for p in self.data[index])
        target = self.targets[index]
        if self.transform is not None:
            img1, img2 = self.transform(img1), self.transform(img2)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img1, img2, target
