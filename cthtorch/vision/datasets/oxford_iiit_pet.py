"""Oxford-IIIT Pet: root/oxford-iiit-pet/annotations/{trainval,test}.txt ("<image id> <class> <species>
<breed id>", 1-based), images/<image id>.jpg and annotations/trimaps/<image id>.png."""
import os

from cthtorch.vision.datasets.utils import verify_str_arg
from cthtorch.vision.datasets.vision import VisionDataset, no_download


class OxfordIIITPet(VisionDataset):
    _VALID_TARGET_TYPES = ("category", "binary-category", "segmentation")

    def __init__(self, root, split="trainval", target_types="category", transforms=None, transform=None,
                 target_transform=None, download=False):
        self._split = verify_str_arg(split, "split", ("trainval", "test"))
        if isinstance(target_types, str):
            target_types = [target_types]
        self._target_types = [verify_str_arg(t, "target_types", self._VALID_TARGET_TYPES) for t in target_types]
        super().__init__(root, transforms=transforms, transform=transform, target_transform=target_transform)
        self._base_folder = os.path.join(self.root, "oxford-iiit-pet")
        self._images_folder = os.path.join(self._base_folder, "images")
        self._anns_folder = os.path.join(self._base_folder, "annotations")
        self._segs_folder = os.path.join(self._anns_folder, "trimaps")
        if not all(os.path.isdir(f) for f in (self._images_folder, self._anns_folder)):
            if download:
                no_download(type(self).__name__, self._base_folder)
            raise RuntimeError("Dataset not found. You can use download=True to download it")
        image_ids, self._labels, self._bin_labels = [], [], []
        with open(os.path.join(self._anns_folder, "%s.txt" % self._split)) as f:
            for line in f:
                image_id, label, bin_label, _ = line.strip().split()
                image_ids.append(image_id)
                self._labels.append(int(label) - 1)
                self._bin_labels.append(int(bin_label) - 1)
        self.bin_classes = ["Cat", "Dog"]
        # class names from the image ids ("great_pyrenees_12" -> "Great Pyrenees"), in label order
        self.classes = [" ".join(part.title() for part in raw.split("_"))
                        for raw, _ in sorted({(i.rsplit("_", 1)[0], label) for i, label in zip(image_ids, self._labels)},
                                             key=lambda pair: pair[1])]
        self.bin_class_to_idx = dict(zip(self.bin_classes, range(len(self.bin_classes))))
        self.class_to_idx = dict(zip(self.classes, range(len(self.classes))))
        self._images = [os.path.join(self._images_folder, "%s.jpg" % i) for i in image_ids]
        self._segs = [os.path.join(self._segs_folder, "%s.png" % i) for i in image_ids]

    def __len__(self):
        return len(self._images)

    def __getitem__(self, idx):
        from PIL import Image
        image = Image.open(self._images[idx]).convert("RGB")
        target = []
        for t in self._target_types:
            if t == "category":
                target.append(self._labels[idx])
            elif t == "binary-category":
                target.append(self._bin_labels[idx])
            else:
                target.append(Image.open(self._segs[idx]))
        target = None if not target else (target[0] if len(target) == 1 else tuple(target))
        return self._apply(image, target)
