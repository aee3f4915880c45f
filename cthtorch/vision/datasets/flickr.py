"""Flickr30k captions: ann_file lines "<image>.jpg#<n>\t<caption>", images in root; each item is an image
and its captions. (Flickr8k reads an HTML annotation page and is not implemented.)"""
import os
from collections import defaultdict

from cthtorch.vision.datasets.vision import VisionDataset


class Flickr30k(VisionDataset):
    def __init__(self, root, ann_file, transform=None, target_transform=None):
        super().__init__(root, transform=transform, target_transform=target_transform)
        self.ann_file = os.path.expanduser(ann_file)
        self.annotations = defaultdict(list)
        with open(self.ann_file) as f:
            for line in f:
                img_id, caption = line.strip().split("\t")
                self.annotations[img_id[:-2]].append(caption)
        self.ids = list(sorted(self.annotations.keys()))

    def __getitem__(self, index):
        from PIL import Image
        img_id = self.ids[index]
        img = Image.open(os.path.join(self.root, img_id)).convert("RGB")
        return self._apply(img, self.annotations[img_id])

    def __len__(self):
        return len(self.ids)
