from cthtorch.vision.datasets.mnist import EMNIST, MNIST, QMNIST, FashionMNIST, KMNIST  # noqa: F401
from cthtorch.vision.datasets.cifar import CIFAR10, CIFAR100  # noqa: F401
from cthtorch.vision.datasets.folder import ImageFolder, DatasetFolder  # noqa: F401
from cthtorch.vision.datasets.fakedata import FakeData  # noqa: F401
from cthtorch.vision.datasets.vision import VisionDataset  # noqa: F401
from cthtorch.vision.datasets.stl10 import STL10  # noqa: F401
from cthtorch.vision.datasets.svhn import SVHN  # noqa: F401
