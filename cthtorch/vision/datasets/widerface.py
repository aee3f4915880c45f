"""WIDER FACE from root/widerface: images in WIDER_{train,val,test}/images/<event>/<name>.jpg, boxes and their
attributes in wider_face_split/wider_face_{train,val}_bbx_gt.txt (name, count, then one "x y w h blur
expression illumination invalid occlusion pose" line a face), test names in wider_face_test_filelist.txt."""
import os

import cthtorch
from cthtorch.vision.datasets.utils import verify_str_arg
from cthtorch.vision.datasets.vision import VisionDataset, no_download


class WIDERFace(VisionDataset):
    BASE_FOLDER = "widerface"

    def __init__(self, root, split="train", transform=None, target_transform=None, download=False):
        super().__init__(os.path.join(root, self.BASE_FOLDER), transform=transform, target_transform=target_transform)
        self.split = verify_str_arg(split, "split", ("train", "val", "test"))
        if not all(os.path.isdir(os.path.join(self.root, d)) for d in ("WIDER_" + self.split, "wider_face_split")):
            if download:
                no_download(type(self).__name__, self.root)
            raise RuntimeError("Dataset not found or corrupted. You can use download=True to download it")
        self.img_info = []
        if self.split in ("train", "val"):
            self._parse_annotations()
        else:
            self._parse_test_list()

    def _image_path(self, name):
        return os.path.abspath(os.path.join(self.root, "WIDER_" + self.split, "images", name))

    def _parse_annotations(self):
        path = os.path.join(self.root, "wider_face_split", "wider_face_%s_bbx_gt.txt" % self.split)
        with open(path) as f:
            lines = [line.rstrip() for line in f]
        i = 0
        while i < len(lines):
            img_path = self._image_path(lines[i])
            num_boxes = int(lines[i + 1])
            # an image without faces still has one all-zero line, as torchvision's parser reads it
            rows = [[int(x) for x in line.split(" ")] for line in lines[i + 2:i + 2 + max(num_boxes, 1)]]
            i += 2 + max(num_boxes, 1)
            labels = cthtorch.tensor(rows)
            self.img_info.append({"img_path": img_path, "annotations": {
                "bbox": labels[:, 0:4].clone(), "blur": labels[:, 4].clone(), "expression": labels[:, 5].clone(),
                "illumination": labels[:, 6].clone(), "occlusion": labels[:, 7].clone(),
                "pose": labels[:, 8].clone(), "invalid": labels[:, 9].clone()}})

    def _parse_test_list(self):
        with open(os.path.join(self.root, "wider_face_split", "wider_face_test_filelist.txt")) as f:
            self.img_info = [{"img_path": self._image_path(line.rstrip())} for line in f]

    def __getitem__(self, index):
        from PIL import Image
        img = Image.open(self.img_info[index]["img_path"])
        target = None if self.split == "test" else self.img_info[index]["annotations"]
        return self._apply(img, target)

    def __len__(self):
        return len(self.img_info)

    def extra_repr(self):
        return "Split: {}".format(self.split)
