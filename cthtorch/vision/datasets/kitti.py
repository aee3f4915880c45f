"""KITTI 2D object detection from root/Kitti/raw/{training,testing}/image_2/*.png, the training labels in
label_2/<id>.txt (one object a line: type, truncation, occlusion, alpha, bbox, dimensions, location,
rotation_y), parsed into torchvision's list of dicts."""
import csv
import os

from cthtorch.vision.datasets.vision import VisionDataset, no_download


class Kitti(VisionDataset):
    image_dir_name = "image_2"
    labels_dir_name = "label_2"

    def __init__(self, root, train=True, transform=None, target_transform=None, transforms=None, download=False):
        super().__init__(root, transform=transform, target_transform=target_transform, transforms=transforms)
        self.images, self.targets = [], []
        self.train = train
        self._location = "training" if self.train else "testing"
        folders = [self.image_dir_name] + ([self.labels_dir_name] if self.train else [])
        if not all(os.path.isdir(os.path.join(self._raw_folder, self._location, f)) for f in folders):
            if download:
                no_download(type(self).__name__, self._raw_folder)
            raise RuntimeError("Dataset not found. You may use download=True to download it.")
        image_dir = os.path.join(self._raw_folder, self._location, self.image_dir_name)
        labels_dir = os.path.join(self._raw_folder, self._location, self.labels_dir_name)
        for img_file in os.listdir(image_dir):
            self.images.append(os.path.join(image_dir, img_file))
            if self.train:
                self.targets.append(os.path.join(labels_dir, "%s.txt" % img_file.split(".")[0]))

    @property
    def _raw_folder(self):
        return os.path.join(self.root, type(self).__name__, "raw")

    def _parse_target(self, index):
        target = []
        with open(self.targets[index]) as f:
            for line in csv.reader(f, delimiter=" "):
                target.append({"type": line[0], "truncated": float(line[1]), "occluded": int(line[2]),
                               "alpha": float(line[3]), "bbox": [float(x) for x in line[4:8]],
                               "dimensions": [float(x) for x in line[8:11]],
                               "location": [float(x) for x in line[11:14]], "rotation_y": float(line[14])})
        return target

    def __getitem__(self, index):
        from PIL import Image
        return self._apply(Image.open(self.images[index]), self._parse_target(index) if self.train else None)

    def __len__(self):
        return len(self.images)
