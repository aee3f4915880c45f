from cthtorch.vision.datasets.mnist import EMNIST, MNIST, QMNIST, FashionMNIST, KMNIST  # noqa: F401
from cthtorch.vision.datasets.cifar import CIFAR10, CIFAR100  # noqa: F401
from cthtorch.vision.datasets.folder import ImageFolder, DatasetFolder  # noqa: F401
from cthtorch.vision.datasets.fakedata import FakeData  # noqa: F401
from cthtorch.vision.datasets.vision import VisionDataset  # noqa: F401
from cthtorch.vision.datasets.stl10 import STL10  # noqa: F401
from cthtorch.vision.datasets.svhn import SVHN  # noqa: F401
from cthtorch.vision.datasets.omniglot import Omniglot  # noqa: F401
from cthtorch.vision.datasets.caltech import Caltech101, Caltech256  # noqa: F401
from cthtorch.vision.datasets.flowers102 import Flowers102  # noqa: F401
from cthtorch.vision.datasets.food101 import Food101  # noqa: F401
from cthtorch.vision.datasets.oxford_iiit_pet import OxfordIIITPet  # noqa: F401
from cthtorch.vision.datasets.voc import VOCSegmentation, VOCDetection  # noqa: F401
from cthtorch.vision.datasets.coco import CocoDetection, CocoCaptions  # noqa: F401
from cthtorch.vision.datasets.video_clips import Kinetics, UCF101, HMDB51  # noqa: F401
from cthtorch.vision.datasets.celeba import CelebA  # noqa: F401
from cthtorch.vision.datasets.imagenet import ImageNet  # noqa: F401
from cthtorch.vision.datasets.stanford_cars import StanfordCars  # noqa: F401
from cthtorch.vision.datasets.eurosat import EuroSAT  # noqa: F401
from cthtorch.vision.datasets.dtd import DTD  # noqa: F401
from cthtorch.vision.datasets.gtsrb import GTSRB  # noqa: F401
from cthtorch.vision.datasets.fgvc_aircraft import FGVCAircraft  # noqa: F401
from cthtorch.vision.datasets.usps import USPS  # noqa: F401
from cthtorch.vision.datasets.cityscapes import Cityscapes  # noqa: F401
from cthtorch.vision.datasets.kitti import Kitti  # noqa: F401
from cthtorch.vision.datasets.imagenette import Imagenette  # noqa: F401
from cthtorch.vision.datasets.sun397 import SUN397  # noqa: F401
from cthtorch.vision.datasets.country211 import Country211  # noqa: F401
from cthtorch.vision.datasets.semeion import SEMEION  # noqa: F401
from cthtorch.vision.datasets.moving_mnist import MovingMNIST  # noqa: F401


def wrap_dataset_for_transforms_v2(dataset, target_keys=None):
    # loads tv_tensors (and the wrappers) on first use, as transforms.v2 does
    from cthtorch.vision.datasets.transforms_v2_wrapper import wrap_dataset_for_transforms_v2 as wrap
    return wrap(dataset, target_keys)
