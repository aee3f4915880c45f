import cthtorch
from cthtorch.vision.datasets.vision import VisionDataset


class FakeData(VisionDataset):
    def __init__(self, size=1000, image_size=(3, 224, 224), num_classes=10, transform=None, target_transform=None,
                 random_offset=0):
        super().__init__(None, transform=transform, target_transform=target_transform)
        self.size, self.num_classes, self.image_size, self.random_offset = size, num_classes, image_size, random_offset

    def __getitem__(self, index):
        if index >= len(self):
            raise IndexError("%s index out of range" % self.__class__.__name__)
        g = cthtorch.Generator().manual_seed(index + self.random_offset)
        img = cthtorch.rand(*self.image_size, generator=g)
        target = cthtorch.randint(0, self.num_classes, size=(1,), generator=g).item()
        from cthtorch.vision.transforms import functional as F
        return self._apply(F.to_pil_image(img), target)

    def __len__(self):
        return self.size
