"""Omniglot's handwritten characters from root/omniglot-py/images_background (or images_evaluation):
<alphabet>/<character>/<drawing>.png, one class per character, listed in os.listdir's order as torchvision
lists them. An images_*.zip beside the folder is unpacked (nothing is downloaded)."""
import os
import zipfile

from cthtorch.vision.datasets.utils import list_dir, list_files
from cthtorch.vision.datasets.vision import VisionDataset, no_download


class Omniglot(VisionDataset):
    folder = "omniglot-py"

    def __init__(self, root, background=True, transform=None, target_transform=None, download=False):
        super().__init__(os.path.join(root, self.folder), transform=transform, target_transform=target_transform)
        self.background = background
        self.target_folder = os.path.join(self.root, self._get_target_folder())
        zipped = self.target_folder + ".zip"
        if not os.path.isdir(self.target_folder) and os.path.isfile(zipped):
            with zipfile.ZipFile(zipped) as archive:
                archive.extractall(self.root)
        if not os.path.isdir(self.target_folder):
            if download:
                no_download(type(self).__name__, self.root)
            raise RuntimeError("Dataset not found or corrupted. You can use download=True to download it")
        self._alphabets = list_dir(self.target_folder)
        self._characters = [os.path.join(a, c) for a in self._alphabets
                            for c in list_dir(os.path.join(self.target_folder, a))]
        self._character_images = [[(image, idx) for image in list_files(os.path.join(self.target_folder, c), ".png")]
                                  for idx, c in enumerate(self._characters)]
        self._flat_character_images = sum(self._character_images, [])

    def _get_target_folder(self):
        return "images_background" if self.background else "images_evaluation"

    def __len__(self):
        return len(self._flat_character_images)

    def __getitem__(self, index):
        from PIL import Image
        image_name, character_class = self._flat_character_images[index]
        path = os.path.join(self.target_folder, self._characters[character_class], image_name)
        return self._apply(Image.open(path, mode="r").convert("L"), character_class)
