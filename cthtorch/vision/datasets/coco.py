"""COCO detection and captions through pycocotools' COCO index, as torchvision reads them; without pycocotools
they raise NotImplementedError when built."""
import os

from cthtorch.vision.datasets.vision import VisionDataset


class CocoDetection(VisionDataset):
    def __init__(self, root, annFile, transform=None, target_transform=None, transforms=None):
        super().__init__(root, transforms, transform, target_transform)
        try:
            from pycocotools.coco import COCO
        except ImportError:
            raise NotImplementedError("%s reads its annotation file with pycocotools' COCO index, and pycocotools "
                                      "is not installed (pip install pycocotools)" % type(self).__name__) from None
        self.coco = COCO(annFile)
        self.ids = list(sorted(self.coco.imgs.keys()))

    def _load_image(self, id):
        from PIL import Image
        path = self.coco.loadImgs(id)[0]["file_name"]
        return Image.open(os.path.join(self.root, path)).convert("RGB")

    def _load_target(self, id):
        return self.coco.loadAnns(self.coco.getAnnIds(id))

    def __getitem__(self, index):
        if not isinstance(index, int):
            raise ValueError("Index must be of type integer, got %s instead." % type(index))
        id = self.ids[index]
        return self._apply(self._load_image(id), self._load_target(id))

    def __len__(self):
        return len(self.ids)


class CocoCaptions(CocoDetection):
    def _load_target(self, id):
        return [ann["caption"] for ann in super()._load_target(id)]
