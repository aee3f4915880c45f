"""Oxford 102 Flowers: root/flowers-102/jpg/image_00001.jpg, labels (1-based) in imagelabels.mat and the
train/val/test image ids in setid.mat, read with scipy.io.loadmat as torchvision does."""
import os

from cthtorch.vision.datasets.utils import verify_str_arg
from cthtorch.vision.datasets.vision import LabelledImageFiles, no_download


class Flowers102(LabelledImageFiles):
    _splits_map = {"train": "trnid", "val": "valid", "test": "tstid"}

    def __init__(self, root, split="train", transform=None, target_transform=None, download=False):
        super().__init__(root, transform=transform, target_transform=target_transform)
        self._split = verify_str_arg(split, "split", ("train", "val", "test"))
        self._base_folder = os.path.join(self.root, "flowers-102")
        self._images_folder = os.path.join(self._base_folder, "jpg")
        if not (os.path.isdir(self._images_folder) and all(
                os.path.isfile(os.path.join(self._base_folder, f)) for f in ("imagelabels.mat", "setid.mat"))):
            if download:
                no_download(type(self).__name__, self._base_folder)
            raise RuntimeError("Dataset not found or corrupted. You can use download=True to download it")
        try:
            from scipy.io import loadmat
        except ImportError:
            raise NotImplementedError("Flowers102 reads its .mat files with scipy.io.loadmat, and scipy is not "
                                      "installed") from None
        set_ids = loadmat(os.path.join(self._base_folder, "setid.mat"), squeeze_me=True)
        image_ids = set_ids[self._splits_map[self._split]].tolist()
        labels = loadmat(os.path.join(self._base_folder, "imagelabels.mat"), squeeze_me=True)
        image_id_to_label = dict(enumerate((labels["labels"] - 1).tolist(), 1))
        self._labels = [image_id_to_label[i] for i in image_ids]
        self._image_files = [os.path.join(self._images_folder, "image_%05d.jpg" % i) for i in image_ids]
