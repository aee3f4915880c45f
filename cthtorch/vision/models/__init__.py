from cthtorch.vision.models.resnet import (ResNet, BasicBlock, Bottleneck, resnet18, resnet34,  # noqa: F401
                                           resnet50, resnet101, resnet152,
                                           resnext50_32x4d, resnext101_32x8d, resnext101_64x4d, wide_resnet50_2,
                                           wide_resnet101_2)
from cthtorch.vision.models.alexnet import AlexNet, alexnet  # noqa: F401
from cthtorch.vision.models.vgg import (VGG, vgg11, vgg11_bn, vgg13, vgg13_bn, vgg16, vgg16_bn, vgg19,  # noqa: F401
                                        vgg19_bn)
from cthtorch.vision.models.squeezenet import SqueezeNet, squeezenet1_0, squeezenet1_1  # noqa: F401
from cthtorch.vision.models.mobilenetv2 import MobileNetV2, mobilenet_v2  # noqa: F401
from cthtorch.vision.models.densenet import DenseNet, densenet121, densenet161, densenet169, densenet201  # noqa: F401
