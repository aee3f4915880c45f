"""Pascal VOC 2007-2012 from root/VOCdevkit/VOC<year> (2011: root/TrainVal/VOCdevkit/VOC2011): the image set's
ids from ImageSets/<Segmentation|Main>/<image_set>.txt, images from JPEGImages, segmentation masks (palette
PNGs) from SegmentationClass, detection annotations parsed from Annotations/<id>.xml into nested dicts."""
import collections
import os
from xml.etree.ElementTree import parse as ET_parse

from cthtorch.vision.datasets.utils import verify_str_arg
from cthtorch.vision.datasets.vision import VisionDataset, no_download

_BASE_DIRS = {"2012": "VOCdevkit/VOC2012", "2011": "TrainVal/VOCdevkit/VOC2011", "2010": "VOCdevkit/VOC2010",
              "2009": "VOCdevkit/VOC2009", "2008": "VOCdevkit/VOC2008", "2007": "VOCdevkit/VOC2007"}


class _VOCBase(VisionDataset):
    _SPLITS_DIR = _TARGET_DIR = _TARGET_FILE_EXT = None

    def __init__(self, root, year="2012", image_set="train", download=False, transform=None, target_transform=None,
                 transforms=None):
        super().__init__(root, transforms, transform, target_transform)
        self.year = verify_str_arg(year, "year", valid_values=[str(y) for y in range(2007, 2013)])
        valid_sets = ["train", "trainval", "val"] + (["test"] if year == "2007" else [])
        self.image_set = verify_str_arg(image_set, "image_set", valid_sets)
        voc_root = os.path.join(self.root, *_BASE_DIRS[year].split("/"))
        if not os.path.isdir(voc_root):
            if download:
                no_download(type(self).__name__, self.root)
            raise RuntimeError("Dataset not found or corrupted. You can use download=True to download it")
        split_f = os.path.join(voc_root, "ImageSets", self._SPLITS_DIR, image_set.rstrip("\n") + ".txt")
        with open(split_f) as f:
            file_names = [x.strip() for x in f.readlines()]
        self.images = [os.path.join(voc_root, "JPEGImages", x + ".jpg") for x in file_names]
        self.targets = [os.path.join(voc_root, self._TARGET_DIR, x + self._TARGET_FILE_EXT) for x in file_names]

    def __len__(self):
        return len(self.images)

    def __getitem__(self, index):
        from PIL import Image
        return self._apply(Image.open(self.images[index]).convert("RGB"), self._load_target(self.targets[index]))


class VOCSegmentation(_VOCBase):
    _SPLITS_DIR, _TARGET_DIR, _TARGET_FILE_EXT = "Segmentation", "SegmentationClass", ".png"

    @property
    def masks(self):
        return self.targets

    def _load_target(self, path):
        from PIL import Image
        return Image.open(path)


class VOCDetection(_VOCBase):
    _SPLITS_DIR, _TARGET_DIR, _TARGET_FILE_EXT = "Main", "Annotations", ".xml"

    @property
    def annotations(self):
        return self.targets

    def _load_target(self, path):
        return self.parse_voc_xml(ET_parse(path).getroot())

    @staticmethod
    def parse_voc_xml(node):
        """{tag: text} for a leaf, {tag: {child tag: value or [values]}} otherwise; an annotation's "object"
        is always a list"""
        voc_dict = {}
        children = list(node)
        if children:
            by_tag = collections.defaultdict(list)
            for child in map(VOCDetection.parse_voc_xml, children):
                for tag, value in child.items():
                    by_tag[tag].append(value)
            if node.tag == "annotation":
                by_tag["object"] = [by_tag["object"]]
            voc_dict = {node.tag: {tag: v[0] if len(v) == 1 else v for tag, v in by_tag.items()}}
        if node.text:
            text = node.text.strip()
            if not children:
                voc_dict[node.tag] = text
        return voc_dict
