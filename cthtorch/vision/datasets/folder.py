"""ImageFolder / DatasetFolder: root/class_x/xxx.ext."""
import os

from cthtorch.vision.datasets.vision import VisionDataset

IMG_EXTENSIONS = (".jpg", ".jpeg", ".png", ".ppm", ".bmp", ".pgm", ".tif", ".tiff", ".webp")


def pil_loader(path):
    from PIL import Image
    with open(path, "rb") as f:
        img = Image.open(f)
        return img.convert("RGB")


default_loader = pil_loader


def find_classes(directory):
    classes = sorted(e.name for e in os.scandir(directory) if e.is_dir())
    if not classes:
        raise FileNotFoundError("Couldn't find any class folder in %s." % directory)
    return classes, {c: i for i, c in enumerate(classes)}


class DatasetFolder(VisionDataset):
    def __init__(self, root, loader, extensions=None, transform=None, target_transform=None, is_valid_file=None,
                 allow_empty=False):
        super().__init__(root, transform=transform, target_transform=target_transform)
        classes, class_to_idx = find_classes(self.root)
        if extensions is None and is_valid_file is None:
            raise ValueError("Both extensions and is_valid_file cannot be None")
        check = is_valid_file or (lambda p: p.lower().endswith(tuple(extensions)))
        samples = []
        for c in classes:
            for dirpath, _, names in sorted(os.walk(os.path.join(self.root, c), followlinks=True)):
                for n in sorted(names):
                    p = os.path.join(dirpath, n)
                    if check(p):
                        samples.append((p, class_to_idx[c]))
        if not samples and not allow_empty:
            raise FileNotFoundError("Found no valid file for the classes %s. Supported extensions are: %s"
                                    % (", ".join(classes), ", ".join(extensions or ())))
        self.loader, self.extensions = loader, extensions
        self.classes, self.class_to_idx = classes, class_to_idx
        self.samples = samples
        self.targets = [s[1] for s in samples]

    def __getitem__(self, index):
        path, target = self.samples[index]
        return self._apply(self.loader(path), target)

    def __len__(self):
        return len(self.samples)


class ImageFolder(DatasetFolder):
    def __init__(self, root, transform=None, target_transform=None, loader=default_loader, is_valid_file=None,
                 allow_empty=False):
        super().__init__(root, loader, IMG_EXTENSIONS if is_valid_file is None else None, transform, target_transform,
                         is_valid_file, allow_empty)
        self.imgs = self.samples
