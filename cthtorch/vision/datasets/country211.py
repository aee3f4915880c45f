"""Country211: an ImageFolder over root/country211/{train,valid,test}/<country code>/*.jpg."""
import os

from cthtorch.vision.datasets.folder import ImageFolder, default_loader
from cthtorch.vision.datasets.utils import verify_str_arg
from cthtorch.vision.datasets.vision import no_download


class Country211(ImageFolder):
    def __init__(self, root, split="train", transform=None, target_transform=None, download=False,
                 loader=default_loader):
        self._split = verify_str_arg(split, "split", ("train", "valid", "test"))
        root = os.path.expanduser(root)
        self._base_folder = os.path.join(root, "country211")
        if not os.path.isdir(os.path.join(self._base_folder, self._split)):
            if download:
                no_download(type(self).__name__, self._base_folder)
            raise RuntimeError("Dataset not found. You can use download=True to download it")
        super().__init__(os.path.join(self._base_folder, self._split), transform=transform,
                         target_transform=target_transform, loader=loader)
        self.root = root
