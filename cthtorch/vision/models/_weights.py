"""torchvision's pretrained-weight enums (ResNet18_Weights, VGG16_Weights, ...): each member names the file
torchvision would download; cthtorch never downloads, so get_state_dict loads it from the hub cache
(<hub dir>/checkpoints/<file name>, where torchvision puts it) and otherwise raises saying where to put it.
meta has no 'categories' list (the ImageNet class names are not bundled), nor '_docs'."""
import re
from functools import partial

import cthtorch
from cthtorch.vision.models._api import Weights, WeightsEnum
from cthtorch.vision.models._utils import _ovewrite_named_param
from cthtorch.vision.transforms import functional as TF

_URL = "https://download.pytorch.org/models/"


class ImageClassification(cthtorch.nn.Module):
    """torchvision.transforms._presets.ImageClassification: resize, center-crop, float in [0, 1], normalize."""

    def __init__(self, *, crop_size, resize_size=256, mean=(0.485, 0.456, 0.406), std=(0.229, 0.224, 0.225),
                 interpolation=TF.InterpolationMode.BILINEAR, antialias=True):
        super().__init__()
        self.crop_size, self.resize_size = [crop_size], [resize_size]
        self.mean, self.std = list(mean), list(std)
        self.interpolation, self.antialias = interpolation, antialias

    def forward(self, img):
        img = TF.resize(img, self.resize_size, interpolation=self.interpolation, antialias=self.antialias)
        img = TF.center_crop(img, self.crop_size)
        if not isinstance(img, cthtorch.Tensor):
            img = TF.pil_to_tensor(img)
        img = TF.convert_image_dtype(img, cthtorch.float)
        return TF.normalize(img, mean=self.mean, std=self.std)

    def __repr__(self):
        return ("%s(\n    crop_size=%s\n    resize_size=%s\n    mean=%s\n    std=%s\n    interpolation=%s\n)"
                % (type(self).__name__, self.crop_size, self.resize_size, self.mean, self.std, self.interpolation))


IMAGENET_CLASSES = 1000
_REF = "https://github.com/pytorch/vision/tree/main/references/classification"
_NEW = "https://github.com/pytorch/vision/issues/3995"  # torchvision's "new training recipe" issue
_PR = "https://github.com/pytorch/vision/pull/"
_SWAG = "https://github.com/facebookresearch/SWAG"
_SWAG_LICENSE = "https://github.com/facebookresearch/SWAG/blob/main/LICENSE"
BILINEAR, BICUBIC = TF.InterpolationMode.BILINEAR, TF.InterpolationMode.BICUBIC


def imagenet(file_name, num_params, acc, ops, file_size, recipe, crop=224, resize=256, interpolation=BILINEAR,
             mean=None, std=None, min_size=(1, 1), license=None):
    """A member for ImageNet-1K weights: acc is (acc@1, acc@5), ops the GFLOPS, file_size in MB, as
    torchvision's meta records them."""
    norm = {} if mean is None else {"mean": mean, "std": std}
    meta = {"min_size": min_size, "num_params": num_params, "recipe": recipe,
            "_metrics": {"ImageNet-1K": {"acc@1": acc[0], "acc@5": acc[1]}}, "_ops": ops, "_file_size": file_size}
    if license is not None:
        meta["license"] = license
    return Weights(_URL + file_name, partial(ImageClassification, crop_size=crop, resize_size=resize,
                                             interpolation=interpolation, **norm), meta)


def _member(file_name, num_params, resize=256, recipe=None):
    return Weights(_URL + file_name, partial(ImageClassification, crop_size=224, resize_size=resize),
                   {"num_params": num_params, "min_size": (1, 1), "recipe": recipe or ""})


def _enum(name, members, default):
    # an equal value makes DEFAULT an alias, as in torchvision: e["DEFAULT"] works, list(e) leaves it out
    return WeightsEnum(name, dict(members, DEFAULT=members[default]))


def _v1_v2(name, v1, v2, n):
    members = {"IMAGENET1K_V1": _member(v1, n)}
    if v2:
        members["IMAGENET1K_V2"] = _member(v2, n, resize=232)
    return _enum(name, members, "IMAGENET1K_V2" if v2 else "IMAGENET1K_V1")


ResNet18_Weights = _v1_v2("ResNet18_Weights", "resnet18-f37072fd.pth", None, 11689512)
ResNet34_Weights = _v1_v2("ResNet34_Weights", "resnet34-b627a593.pth", None, 21797672)
ResNet50_Weights = _v1_v2("ResNet50_Weights", "resnet50-0676ba61.pth", "resnet50-11ad3fa6.pth", 25557032)
ResNet101_Weights = _v1_v2("ResNet101_Weights", "resnet101-63fe2227.pth", "resnet101-cd907fc2.pth", 44549160)
ResNet152_Weights = _v1_v2("ResNet152_Weights", "resnet152-394f9c45.pth", "resnet152-f82ba261.pth", 60192808)
ResNeXt50_32X4D_Weights = _v1_v2("ResNeXt50_32X4D_Weights", "resnext50_32x4d-7cdf4587.pth",
                                 "resnext50_32x4d-1a0047aa.pth", 25028904)
ResNeXt101_32X8D_Weights = _v1_v2("ResNeXt101_32X8D_Weights", "resnext101_32x8d-8ba56ff5.pth",
                                  "resnext101_32x8d-110c445d.pth", 88791336)
ResNeXt101_64X4D_Weights = _v1_v2("ResNeXt101_64X4D_Weights", "resnext101_64x4d-173b62eb.pth", None, 83455272)
Wide_ResNet50_2_Weights = _v1_v2("Wide_ResNet50_2_Weights", "wide_resnet50_2-95faca4d.pth",
                                 "wide_resnet50_2-9ba9bcbe.pth", 68883240)
Wide_ResNet101_2_Weights = _v1_v2("Wide_ResNet101_2_Weights", "wide_resnet101_2-32ee1156.pth",
                                  "wide_resnet101_2-d733dc28.pth", 126886696)
VGG11_Weights = _v1_v2("VGG11_Weights", "vgg11-8a719046.pth", None, 132863336)
VGG11_BN_Weights = _v1_v2("VGG11_BN_Weights", "vgg11_bn-6002323d.pth", None, 132868840)
VGG13_Weights = _v1_v2("VGG13_Weights", "vgg13-19584684.pth", None, 133047848)
VGG13_BN_Weights = _v1_v2("VGG13_BN_Weights", "vgg13_bn-abd245e5.pth", None, 133053736)
VGG16_Weights = _v1_v2("VGG16_Weights", "vgg16-397923af.pth", None, 138357544)
VGG16_BN_Weights = _v1_v2("VGG16_BN_Weights", "vgg16_bn-6c64b313.pth", None, 138365992)
VGG19_Weights = _v1_v2("VGG19_Weights", "vgg19-dcbb9e9d.pth", None, 143667240)
VGG19_BN_Weights = _v1_v2("VGG19_BN_Weights", "vgg19_bn-c79401a0.pth", None, 143678248)
AlexNet_Weights = _v1_v2("AlexNet_Weights", "alexnet-owt-7be5be79.pth", None, 61100840)
SqueezeNet1_0_Weights = _v1_v2("SqueezeNet1_0_Weights", "squeezenet1_0-b66bff10.pth", None, 1248424)
SqueezeNet1_1_Weights = _v1_v2("SqueezeNet1_1_Weights", "squeezenet1_1-b8a52dc0.pth", None, 1235496)
MobileNet_V2_Weights = _v1_v2("MobileNet_V2_Weights", "mobilenet_v2-b0353104.pth", "mobilenet_v2-7ebf99e0.pth",
                              3504872)
DenseNet121_Weights = _v1_v2("DenseNet121_Weights", "densenet121-a639ec97.pth", None, 7978856)
DenseNet161_Weights = _v1_v2("DenseNet161_Weights", "densenet161-8d451a50.pth", None, 28681000)
DenseNet169_Weights = _v1_v2("DenseNet169_Weights", "densenet169-b2777c0a.pth", None, 14149480)
DenseNet201_Weights = _v1_v2("DenseNet201_Weights", "densenet201-c1103571.pth", None, 20013928)

# DenseNet's published files predate its module names: 'norm.1' is now 'norm1' (and so on)
_DENSENET_OLD_KEY = re.compile(r"^(.*denselayer\d+\.(?:norm|relu|conv))\.((?:[12])\.(?:weight|bias|running_mean|"
                               r"running_var|num_batches_tracked))$")


def load_into(model, weights, progress=True):
    """Load a member's state dict (from the hub cache) into the model just built."""
    if weights is None:
        return model
    state = weights.get_state_dict(progress=progress, check_hash=True)
    if type(model).__name__ == "DenseNet":
        state = {(lambda m: m.group(1) + m.group(2) if m else k)(_DENSENET_OLD_KEY.match(k)): v
                 for k, v in state.items()}
    # files saved before BatchNorm counted batches have no num_batches_tracked; torch's BatchNorm keeps its own
    # counter for such old files, so the model's (zero) counters stand in
    for k, v in model.state_dict().items():
        if k.endswith("num_batches_tracked") and k not in state:
            state[k] = v
    model.load_state_dict(state)
    return model


def build(enum, weights, progress, make, kwargs):
    """A builder's body: check the weights asked for (they fix num_classes to ImageNet's 1000), make the model
    from kwargs, fill it from the cached file if any."""
    weights = enum.verify(weights)
    if weights is not None:
        _ovewrite_named_param(kwargs, "num_classes", IMAGENET_CLASSES)
    return load_into(make(**kwargs), weights, progress)
