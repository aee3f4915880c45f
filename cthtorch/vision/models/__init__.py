"""cthtorch.vision.models: torchvision's classification model zoo, its weights enums and registry."""
from cthtorch.vision.models._api import (Weights, WeightsEnum, get_model, get_model_builder,  # noqa: F401
                                         get_model_weights, get_weight, list_models)
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
from cthtorch.vision.models._weights import (AlexNet_Weights, DenseNet121_Weights, DenseNet161_Weights,  # noqa: F401
                                             DenseNet169_Weights, DenseNet201_Weights, MobileNet_V2_Weights,
                                             ResNet18_Weights, ResNet34_Weights, ResNet50_Weights, ResNet101_Weights,
                                             ResNet152_Weights, ResNeXt50_32X4D_Weights, ResNeXt101_32X8D_Weights,
                                             ResNeXt101_64X4D_Weights, SqueezeNet1_0_Weights, SqueezeNet1_1_Weights,
                                             VGG11_BN_Weights, VGG11_Weights, VGG13_BN_Weights, VGG13_Weights,
                                             VGG16_BN_Weights, VGG16_Weights, VGG19_BN_Weights, VGG19_Weights,
                                             Wide_ResNet50_2_Weights, Wide_ResNet101_2_Weights)
# the families as torchvision's submodules; `googlenet` ends up the builder (the star import rebinds it), as there
from cthtorch.vision.models import (convnext, efficientnet, googlenet, inception, mnasnet, mobilenet,  # noqa: F401,E402
                                    maxvit, mobilenetv3, regnet, shufflenetv2, swin_transformer,
                                    vision_transformer)
from cthtorch.vision.models.convnext import *  # noqa: F401,F403,E402
from cthtorch.vision.models.efficientnet import *  # noqa: F401,F403,E402
from cthtorch.vision.models.googlenet import *  # noqa: F401,F403,E402
from cthtorch.vision.models.inception import *  # noqa: F401,F403,E402
from cthtorch.vision.models.maxvit import *  # noqa: F401,F403,E402
from cthtorch.vision.models.mnasnet import *  # noqa: F401,F403,E402
from cthtorch.vision.models.mobilenetv3 import *  # noqa: F401,F403,E402
from cthtorch.vision.models.regnet import *  # noqa: F401,F403,E402
from cthtorch.vision.models.shufflenetv2 import *  # noqa: F401,F403,E402
from cthtorch.vision.models.swin_transformer import *  # noqa: F401,F403,E402
from cthtorch.vision.models.vision_transformer import *  # noqa: F401,F403,E402
from cthtorch.vision.models import segmentation  # noqa: F401,E402
