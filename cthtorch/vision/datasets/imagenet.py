"""ImageNet 2012 (ILSVRC) from root/{train,val}/<wnid>/*.JPEG with root/meta.bin (torch.save of
(wnid -> class names, the val images' wnids)), an ImageFolder whose classes are the names. Unpacking the
devkit and image archives into that layout is not implemented: NotImplementedError says so when an archive
is there to unpack."""
import os

import cthtorch
from cthtorch.vision.datasets.folder import ImageFolder
from cthtorch.vision.datasets.utils import verify_str_arg

META_FILE = "meta.bin"
_ARCHIVES = {"devkit": "ILSVRC2012_devkit_t12.tar.gz", "train": "ILSVRC2012_img_train.tar",
             "val": "ILSVRC2012_img_val.tar"}


def _missing(root, what):
    archive = _ARCHIVES[what]
    if os.path.isfile(os.path.join(root, archive)):
        raise NotImplementedError("ImageNet: unpacking %s is not implemented in cthtorch.vision; extract it so that "
                                  "%s holds meta.bin and the train/val class folders" % (archive, root))
    raise RuntimeError("The archive %s is not present in the root directory or is corrupted. You need to download "
                       "it externally and place it in %s." % (archive, root))


def load_meta_file(root, file=None):
    file = os.path.join(root, META_FILE if file is None else file)
    if not os.path.isfile(file):
        raise RuntimeError("The meta file %s is not present in the root directory or is corrupted. This file is "
                           "automatically created by the ImageNet dataset." % file)
    return cthtorch.load(file, weights_only=True)


class ImageNet(ImageFolder):
    def __init__(self, root, split="train", **kwargs):
        root = self.root = os.path.expanduser(root)
        self.split = verify_str_arg(split, "split", ("train", "val"))
        if not os.path.isfile(os.path.join(root, META_FILE)):
            _missing(root, "devkit")
        if not os.path.isdir(self.split_folder):
            _missing(root, self.split)
        wnid_to_classes = load_meta_file(self.root)[0]
        super().__init__(self.split_folder, **kwargs)
        self.root = root
        self.wnids = self.classes
        self.wnid_to_idx = self.class_to_idx
        self.classes = [wnid_to_classes[wnid] for wnid in self.wnids]
        self.class_to_idx = {cls: idx for idx, names in enumerate(self.classes) for cls in names}

    @property
    def split_folder(self):
        return os.path.join(self.root, self.split)

    def extra_repr(self):
        return "Split: {}".format(self.split)
