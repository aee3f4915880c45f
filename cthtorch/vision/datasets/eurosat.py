"""EuroSAT (RGB): an ImageFolder over root/eurosat/2750/<land cover class>/*.jpg."""
import os

from cthtorch.vision.datasets.folder import ImageFolder, default_loader
from cthtorch.vision.datasets.vision import no_download


class EuroSAT(ImageFolder):
    def __init__(self, root, transform=None, target_transform=None, download=False, loader=default_loader):
        self.root = os.path.expanduser(root)
        self._base_folder = os.path.join(self.root, "eurosat")
        self._data_folder = os.path.join(self._base_folder, "2750")
        if not os.path.isdir(self._data_folder):
            if download:
                no_download(type(self).__name__, self._base_folder)
            raise RuntimeError("Dataset not found. You can use download=True to download it")
        super().__init__(self._data_folder, transform=transform, target_transform=target_transform, loader=loader)
        self.root = os.path.expanduser(root)
