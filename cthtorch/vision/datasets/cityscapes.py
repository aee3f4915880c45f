"""Cityscapes from root/leftImg8bit/<split>/<city>/*_leftImg8bit.png with the targets of gtFine (or gtCoarse)
/<split>/<city>: *_instanceIds.png, *_labelIds.png, *_color.png or *_polygons.json. Local
leftImg8bit_trainvaltest.zip / gtFine_trainvaltest.zip archives are unpacked (nothing is downloaded)."""
import json
import os
import zipfile
from collections import namedtuple

from cthtorch.vision.datasets.utils import iterable_to_str, verify_str_arg
from cthtorch.vision.datasets.vision import VisionDataset

CityscapesClass = namedtuple("CityscapesClass", ["name", "id", "train_id", "category", "category_id",
                                                 "has_instances", "ignore_in_eval", "color"])

# the Cityscapes label table: name, id, train id (255: ignored), category, category id, instances, ignored, colour
_LABELS = """unlabeled 0 255 void 0 0 1 0,0,0|ego vehicle 1 255 void 0 0 1 0,0,0|rectification border 2 255 void 0 0 1 0,0,0
out of roi 3 255 void 0 0 1 0,0,0|static 4 255 void 0 0 1 0,0,0|dynamic 5 255 void 0 0 1 111,74,0
ground 6 255 void 0 0 1 81,0,81|road 7 0 flat 1 0 0 128,64,128|sidewalk 8 1 flat 1 0 0 244,35,232
parking 9 255 flat 1 0 1 250,170,160|rail track 10 255 flat 1 0 1 230,150,140|building 11 2 construction 2 0 0 70,70,70
wall 12 3 construction 2 0 0 102,102,156|fence 13 4 construction 2 0 0 190,153,153
guard rail 14 255 construction 2 0 1 180,165,180|bridge 15 255 construction 2 0 1 150,100,100
tunnel 16 255 construction 2 0 1 150,120,90|pole 17 5 object 3 0 0 153,153,153|polegroup 18 255 object 3 0 1 153,153,153
traffic light 19 6 object 3 0 0 250,170,30|traffic sign 20 7 object 3 0 0 220,220,0
vegetation 21 8 nature 4 0 0 107,142,35|terrain 22 9 nature 4 0 0 152,251,152|sky 23 10 sky 5 0 0 70,130,180
person 24 11 human 6 1 0 220,20,60|rider 25 12 human 6 1 0 255,0,0|car 26 13 vehicle 7 1 0 0,0,142
truck 27 14 vehicle 7 1 0 0,0,70|bus 28 15 vehicle 7 1 0 0,60,100|caravan 29 255 vehicle 7 1 1 0,0,90
trailer 30 255 vehicle 7 1 1 0,0,110|train 31 16 vehicle 7 1 0 0,80,100|motorcycle 32 17 vehicle 7 1 0 0,0,230
bicycle 33 18 vehicle 7 1 0 119,11,32|license plate -1 -1 vehicle 7 0 1 0,0,142"""


def _label_table():
    out = []
    for entry in _LABELS.replace("\n", "|").split("|"):
        words = entry.split()
        name, (i, train_id, category, cat_id, inst, ignored, color) = " ".join(words[:-7]), words[-7:]
        out.append(CityscapesClass(name, int(i), int(train_id), category, int(cat_id), inst == "1", ignored == "1",
                                   tuple(int(c) for c in color.split(","))))
    return out


class Cityscapes(VisionDataset):
    CityscapesClass = CityscapesClass
    classes = _label_table()

    def __init__(self, root, split="train", mode="fine", target_type="instance", transform=None,
                 target_transform=None, transforms=None):
        super().__init__(root, transforms, transform, target_transform)
        self.mode = "gtFine" if mode == "fine" else "gtCoarse"
        self.images_dir = os.path.join(self.root, "leftImg8bit", split)
        self.targets_dir = os.path.join(self.root, self.mode, split)
        self.target_type = target_type
        self.split = split
        self.images, self.targets = [], []
        verify_str_arg(mode, "mode", ("fine", "coarse"))
        valid_splits = ("train", "test", "val") if mode == "fine" else ("train", "train_extra", "val")
        msg = "Unknown value '{}' for argument split if mode is '{}'. Valid values are {{{}}}.".format(
            split, mode, iterable_to_str(valid_splits))
        verify_str_arg(split, "split", valid_splits, msg)
        if not isinstance(target_type, list):
            self.target_type = [target_type]
        for t in self.target_type:
            verify_str_arg(t, "target_type", ("instance", "semantic", "polygon", "color"))
        if not os.path.isdir(self.images_dir) or not os.path.isdir(self.targets_dir):
            image_zip = os.path.join(self.root, "leftImg8bit_trainextra.zip" if split == "train_extra"
                                     else "leftImg8bit_trainvaltest.zip")
            target_zip = os.path.join(self.root, "gtFine_trainvaltest.zip" if self.mode == "gtFine" else "gtCoarse.zip")
            if not (os.path.isfile(image_zip) and os.path.isfile(target_zip)):
                raise RuntimeError('Dataset not found or incomplete. Please make sure all required folders for the '
                                   'specified "split" and "mode" are inside the "root" directory')
            for archive in (image_zip, target_zip):
                with zipfile.ZipFile(archive) as z:
                    z.extractall(self.root)
        for city in os.listdir(self.images_dir):
            img_dir = os.path.join(self.images_dir, city)
            target_dir = os.path.join(self.targets_dir, city)
            for file_name in os.listdir(img_dir):
                stem = file_name.split("_leftImg8bit")[0]
                self.images.append(os.path.join(img_dir, file_name))
                self.targets.append([os.path.join(target_dir, "%s_%s" % (stem, self._get_target_suffix(self.mode, t)))
                                     for t in self.target_type])

    def __getitem__(self, index):
        from PIL import Image
        image = Image.open(self.images[index]).convert("RGB")
        targets = []
        for i, t in enumerate(self.target_type):
            if t == "polygon":
                with open(self.targets[index][i]) as f:
                    targets.append(json.load(f))
            else:
                targets.append(Image.open(self.targets[index][i]))
        return self._apply(image, tuple(targets) if len(targets) > 1 else targets[0])

    def __len__(self):
        return len(self.images)

    def extra_repr(self):
        return "Split: {}\nMode: {}\nType: {}".format(self.split, self.mode, self.target_type)

    @staticmethod
    def _get_target_suffix(mode, target_type):
        return {"instance": "%s_instanceIds.png", "semantic": "%s_labelIds.png", "color": "%s_color.png",
                "polygon": "%s_polygons.json"}[target_type] % mode
