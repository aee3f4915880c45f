"""SUN397 scenes from root/SUN397: ClassName.txt ("/a/abbey" a line) and the images under
<letter>/<class path>/sun_*.jpg, labelled by their folder."""
import os

from cthtorch.vision.datasets.vision import LabelledImageFiles, no_download


class SUN397(LabelledImageFiles):
    def __init__(self, root, transform=None, target_transform=None, download=False):
        super().__init__(root, transform=transform, target_transform=target_transform)
        self._data_dir = os.path.join(self.root, "SUN397")
        if not os.path.isdir(self._data_dir):
            if download:
                no_download(type(self).__name__, self._data_dir)
            raise RuntimeError("Dataset not found. You can use download=True to download it")
        with open(os.path.join(self._data_dir, "ClassName.txt")) as f:
            self.classes = [c[3:].strip() for c in f]
        self.class_to_idx = dict(zip(self.classes, range(len(self.classes))))
        self._image_files = [os.path.join(dirpath, name) for dirpath, _, names in os.walk(self._data_dir)
                             for name in names if name.startswith("sun_") and name.endswith(".jpg")]
        self._labels = [self.class_to_idx["/".join(os.path.relpath(p, self._data_dir).split(os.sep)[1:-1])]
                        for p in self._image_files]
        self._split = None

    def extra_repr(self):
        return ""
