"""Stanford Cars from root/stanford_cars: devkit/cars_meta.mat (class names), the annotations
(devkit/cars_train_annos.mat, cars_test_annos_withlabels.mat: file name and 1-based class) and the
cars_train/cars_test image folders, read with scipy.io.loadmat as torchvision does."""
import os

from cthtorch.vision.datasets.utils import verify_str_arg
from cthtorch.vision.datasets.vision import VisionDataset


class StanfordCars(VisionDataset):
    def __init__(self, root, split="train", transform=None, target_transform=None, download=False):
        super().__init__(root, transform=transform, target_transform=target_transform)
        self._split = verify_str_arg(split, "split", ("train", "test"))
        self._base_folder = os.path.join(self.root, "stanford_cars")
        devkit = os.path.join(self._base_folder, "devkit")
        if self._split == "train":
            self._annotations_mat_path = os.path.join(devkit, "cars_train_annos.mat")
            self._images_base_path = os.path.join(self._base_folder, "cars_train")
        else:
            self._annotations_mat_path = os.path.join(self._base_folder, "cars_test_annos_withlabels.mat")
            self._images_base_path = os.path.join(self._base_folder, "cars_test")
        if download:
            raise ValueError("The original URL is broken so the StanfordCars dataset is not available for automatic "
                             "download anymore. You can try to download it manually following "
                             "https://github.com/pytorch/vision/issues/7545#issuecomment-1631441616, and set "
                             "download=False to avoid this error.")
        if not (os.path.isdir(devkit) and os.path.isfile(self._annotations_mat_path)
                and os.path.isdir(self._images_base_path)):
            raise RuntimeError("Dataset not found.")
        try:
            import scipy.io as sio
        except ImportError:
            raise NotImplementedError("StanfordCars reads its .mat files with scipy.io.loadmat, and scipy is not "
                                      "installed") from None
        self._samples = [(os.path.join(self._images_base_path, a["fname"]), int(a["class"]) - 1)
                         for a in sio.loadmat(self._annotations_mat_path, squeeze_me=True)["annotations"]]
        self.classes = sio.loadmat(os.path.join(devkit, "cars_meta.mat"), squeeze_me=True)["class_names"].tolist()
        self.class_to_idx = {cls: i for i, cls in enumerate(self.classes)}

    def __len__(self):
        return len(self._samples)

    def __getitem__(self, idx):
        from PIL import Image
        path, target = self._samples[idx]
        return self._apply(Image.open(path).convert("RGB"), target)
