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
from cthtorch.vision.datasets.lfw import LFWPeople, LFWPairs  # noqa: F401
from cthtorch.vision.datasets.fer2013 import FER2013  # noqa: F401
from cthtorch.vision.datasets.places365 import Places365  # noqa: F401
from cthtorch.vision.datasets.widerface import WIDERFace  # noqa: F401
from cthtorch.vision.datasets.flickr import Flickr30k  # noqa: F401
from cthtorch.vision.datasets.unsupported import (LSUN, LSUNClass, SBU, Flickr8k,  # noqa: F401
                                                  SBDataset, INaturalist, PhotoTour, PCAM, RenderedSST2, CLEVRClassification, KittiFlow, Sintel,
                                                  FlyingChairs, FlyingThings3D, HD1K, Kitti2012Stereo,
                                                  Kitti2015Stereo, CarlaStereo, Middlebury2014Stereo, CREStereo,
                                                  FallingThingsStereo, SceneFlowStereo, SintelStereo, InStereo2k,
                                                  ETH3DStereo)


def wrap_dataset_for_transforms_v2(dataset, target_keys=None):
    # loads tv_tensors (and the wrappers) on first use, as transforms.v2 does
    from cthtorch.vision.datasets.transforms_v2_wrapper import wrap_dataset_for_transforms_v2 as wrap
    return wrap(dataset, target_keys)


__all__ = ("LSUNClass", "LSUN", "ImageFolder", "DatasetFolder", "FakeData", "CocoCaptions", "CocoDetection", "CIFAR10",
           "CIFAR100", "EMNIST", "FashionMNIST", "QMNIST", "MNIST", "KMNIST", "MovingMNIST", "StanfordCars", "STL10",
           "SUN397", "SVHN", "PhotoTour", "SEMEION", "Omniglot", "SBU", "Flickr8k", "Flickr30k", "Flowers102",
           "VOCSegmentation", "VOCDetection", "Cityscapes", "ImageNet", "Caltech101", "Caltech256", "CelebA",
           "WIDERFace", "SBDataset", "VisionDataset", "USPS", "Kinetics", "HMDB51", "UCF101", "Places365", "Kitti",
           "INaturalist", "LFWPeople", "LFWPairs", "KittiFlow", "Sintel", "FlyingChairs", "FlyingThings3D", "HD1K",
           "Food101", "DTD", "FER2013", "GTSRB", "CLEVRClassification", "OxfordIIITPet", "PCAM", "Country211",
           "FGVCAircraft", "EuroSAT", "RenderedSST2", "Kitti2012Stereo", "Kitti2015Stereo", "CarlaStereo",
           "Middlebury2014Stereo", "CREStereo", "FallingThingsStereo", "SceneFlowStereo", "SintelStereo",
           "InStereo2k", "ETH3DStereo", "wrap_dataset_for_transforms_v2", "Imagenette")
