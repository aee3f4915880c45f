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


def has_file_allowed_extension(filename, extensions):
    return filename.lower().endswith(extensions if isinstance(extensions, str) else tuple(extensions))


def is_image_file(filename):
    return has_file_allowed_extension(filename, IMG_EXTENSIONS)


def find_classes(directory):
    classes = sorted(e.name for e in os.scandir(directory) if e.is_dir())
    if not classes:
        raise FileNotFoundError("Couldn't find any class folder in %s." % directory)
    return classes, {c: i for i, c in enumerate(classes)}


def make_dataset(directory, class_to_idx=None, extensions=None, is_valid_file=None, allow_empty=False):
    """[(path, class index)] of the valid files under each class folder (walked in sorted order); a class with
    none is an error unless allow_empty"""
    directory = os.path.expanduser(directory)
    if class_to_idx is None:
        _, class_to_idx = find_classes(directory)
    elif not class_to_idx:
        raise ValueError("'class_to_index' must have at least one entry to collect any samples.")
    if (extensions is None) == (is_valid_file is None):
        raise ValueError("Both extensions and is_valid_file cannot be None or not None at the same time")
    if extensions is not None:
        def is_valid_file(path):
            return has_file_allowed_extension(path, extensions)
    instances, available = [], set()
    for target_class in sorted(class_to_idx):
        target_dir = os.path.join(directory, target_class)
        if not os.path.isdir(target_dir):
            continue
        for dirpath, _, names in sorted(os.walk(target_dir, followlinks=True)):
            for name in sorted(names):
                path = os.path.join(dirpath, name)
                if is_valid_file(path):
                    instances.append((path, class_to_idx[target_class]))
                    available.add(target_class)
    empty = set(class_to_idx) - available
    if empty and not allow_empty:
        msg = "Found no valid file for the classes %s. " % ", ".join(sorted(empty))
        if extensions is not None:
            msg += "Supported extensions are: %s" % (extensions if isinstance(extensions, str) else ", ".join(extensions))
        raise FileNotFoundError(msg)
    return instances


class DatasetFolder(VisionDataset):
    def __init__(self, root, loader, extensions=None, transform=None, target_transform=None, is_valid_file=None,
                 allow_empty=False):
        super().__init__(root, transform=transform, target_transform=target_transform)
        classes, class_to_idx = self.find_classes(self.root)
        samples = self.make_dataset(self.root, class_to_idx=class_to_idx, extensions=extensions,
                                    is_valid_file=is_valid_file, allow_empty=allow_empty)
        self.loader, self.extensions = loader, extensions
        self.classes, self.class_to_idx = classes, class_to_idx
        self.samples = samples
        self.targets = [s[1] for s in samples]

    @staticmethod
    def make_dataset(directory, class_to_idx, extensions=None, is_valid_file=None, allow_empty=False):
        # a subclass may override it (or find_classes) to lay the folder out otherwise
        if class_to_idx is None:
            raise ValueError("The class_to_idx parameter cannot be None.")
        return make_dataset(directory, class_to_idx, extensions, is_valid_file, allow_empty)

    def find_classes(self, directory):
        return find_classes(directory)

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
