"""torchvision's pretrained-weight enums (ResNet18_Weights, VGG16_Weights, ...): each member names the file
torchvision would download; cthtorch never downloads, so get_state_dict loads it from the hub cache
(<hub dir>/checkpoints/<file name>, where torchvision puts it) and otherwise raises saying where to put it.
meta has no 'categories' list (the ImageNet class names are not bundled), nor '_docs'."""
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


class SemanticSegmentation(cthtorch.nn.Module):
    """torchvision.transforms._presets.SemanticSegmentation: resize (the shorter side), float in [0, 1],
    normalize."""

    def __init__(self, *, resize_size, mean=(0.485, 0.456, 0.406), std=(0.229, 0.224, 0.225),
                 interpolation=TF.InterpolationMode.BILINEAR, antialias=True):
        super().__init__()
        self.resize_size = [resize_size] if resize_size is not None else None
        self.mean, self.std = list(mean), list(std)
        self.interpolation, self.antialias = interpolation, antialias

    def forward(self, img):
        if isinstance(self.resize_size, list):
            img = TF.resize(img, self.resize_size, interpolation=self.interpolation, antialias=self.antialias)
        if not isinstance(img, cthtorch.Tensor):
            img = TF.pil_to_tensor(img)
        img = TF.convert_image_dtype(img, cthtorch.float)
        return TF.normalize(img, mean=self.mean, std=self.std)

    def __repr__(self):
        return ("%s(\n    resize_size=%s\n    mean=%s\n    std=%s\n    interpolation=%s\n)"
                % (type(self).__name__, self.resize_size, self.mean, self.std, self.interpolation))


IMAGENET_CLASSES = 1000
_REF = "https://github.com/pytorch/vision/tree/main/references/classification"
_NEW = "https://github.com/pytorch/vision/issues/3995"  # torchvision's "new training recipe" issue
_PR = "https://github.com/pytorch/vision/pull/"
_SWAG = "https://github.com/facebookresearch/SWAG"
_SWAG_LICENSE = "https://github.com/facebookresearch/SWAG/blob/main/LICENSE"
BILINEAR, BICUBIC = TF.InterpolationMode.BILINEAR, TF.InterpolationMode.BICUBIC


def imagenet(file_name, num_params, acc, ops, file_size, recipe, crop=224, resize=256, interpolation=BILINEAR,
             mean=None, std=None, min_size=(1, 1), license=None, categories="ImageNet-1K"):
    """A member for ImageNet-1K weights: acc is (acc@1, acc@5), ops the GFLOPS, file_size in MB, as
    torchvision's meta records them. categories=None marks weights without a classifier (meta["categories"]
    None, as torchvision's); otherwise the 1000 ImageNet names are not bundled and the key is absent."""
    norm = {} if mean is None else {"mean": mean, "std": std}
    meta = {"min_size": min_size, "num_params": num_params, "recipe": recipe,
            "_metrics": {"ImageNet-1K": {"acc@1": acc[0], "acc@5": acc[1]}}, "_ops": ops, "_file_size": file_size}
    if license is not None:
        meta["license"] = license
    if categories is None:
        meta["categories"] = None
    return Weights(_URL + file_name, partial(ImageClassification, crop_size=crop, resize_size=resize,
                                             interpolation=interpolation, **norm), meta)


_RESNET = _REF + "#resnet"
_VGG = _REF + "#alexnet-and-vgg"
_SSD = "https://github.com/amdegroot/ssd.pytorch#training-ssd"  # VGG16's feature-extractor weights


class ResNet18_Weights(WeightsEnum):
    IMAGENET1K_V1 = imagenet("resnet18-f37072fd.pth", 11689512, (69.758, 89.078), 1.814, 44.661,
                             recipe=_RESNET)
    DEFAULT = IMAGENET1K_V1


class ResNet34_Weights(WeightsEnum):
    IMAGENET1K_V1 = imagenet("resnet34-b627a593.pth", 21797672, (73.314, 91.42), 3.664, 83.275,
                             recipe=_RESNET)
    DEFAULT = IMAGENET1K_V1


class ResNet50_Weights(WeightsEnum):
    IMAGENET1K_V1 = imagenet("resnet50-0676ba61.pth", 25557032, (76.13, 92.862), 4.089, 97.781,
                             recipe=_RESNET)
    IMAGENET1K_V2 = imagenet("resnet50-11ad3fa6.pth", 25557032, (80.858, 95.434), 4.089, 97.79,
                             recipe=_NEW + "#issuecomment-1013906621", resize=232)
    DEFAULT = IMAGENET1K_V2


class ResNet101_Weights(WeightsEnum):
    IMAGENET1K_V1 = imagenet("resnet101-63fe2227.pth", 44549160, (77.374, 93.546), 7.801, 170.511,
                             recipe=_RESNET)
    IMAGENET1K_V2 = imagenet("resnet101-cd907fc2.pth", 44549160, (81.886, 95.78), 7.801, 170.53,
                             recipe=_NEW + "#new-recipe", resize=232)
    DEFAULT = IMAGENET1K_V2


class ResNet152_Weights(WeightsEnum):
    IMAGENET1K_V1 = imagenet("resnet152-394f9c45.pth", 60192808, (78.312, 94.046), 11.514, 230.434,
                             recipe=_RESNET)
    IMAGENET1K_V2 = imagenet("resnet152-f82ba261.pth", 60192808, (82.284, 96.002), 11.514, 230.474,
                             recipe=_NEW + "#new-recipe", resize=232)
    DEFAULT = IMAGENET1K_V2


class ResNeXt50_32X4D_Weights(WeightsEnum):
    IMAGENET1K_V1 = imagenet("resnext50_32x4d-7cdf4587.pth", 25028904, (77.618, 93.698), 4.23, 95.789,
                             recipe=_REF + "#resnext")
    IMAGENET1K_V2 = imagenet("resnext50_32x4d-1a0047aa.pth", 25028904, (81.198, 95.34), 4.23, 95.833,
                             recipe=_NEW + "#new-recipe", resize=232)
    DEFAULT = IMAGENET1K_V2


class ResNeXt101_32X8D_Weights(WeightsEnum):
    IMAGENET1K_V1 = imagenet("resnext101_32x8d-8ba56ff5.pth", 88791336, (79.312, 94.526), 16.414, 339.586,
                             recipe=_REF + "#resnext")
    IMAGENET1K_V2 = imagenet("resnext101_32x8d-110c445d.pth", 88791336, (82.834, 96.228), 16.414, 339.673,
                             recipe=_NEW + "#new-recipe-with-fixres", resize=232)
    DEFAULT = IMAGENET1K_V2


class ResNeXt101_64X4D_Weights(WeightsEnum):
    IMAGENET1K_V1 = imagenet("resnext101_64x4d-173b62eb.pth", 83455272, (83.246, 96.454), 15.46, 319.318,
                             recipe=_PR + "5935", resize=232)
    DEFAULT = IMAGENET1K_V1


class Wide_ResNet50_2_Weights(WeightsEnum):
    IMAGENET1K_V1 = imagenet("wide_resnet50_2-95faca4d.pth", 68883240, (78.468, 94.086), 11.398, 131.82,
                             recipe=_PR + "912#issue-445437439")
    IMAGENET1K_V2 = imagenet("wide_resnet50_2-9ba9bcbe.pth", 68883240, (81.602, 95.758), 11.398, 263.124,
                             recipe=_NEW + "#new-recipe-with-fixres", resize=232)
    DEFAULT = IMAGENET1K_V2


class Wide_ResNet101_2_Weights(WeightsEnum):
    IMAGENET1K_V1 = imagenet("wide_resnet101_2-32ee1156.pth", 126886696, (78.848, 94.284), 22.753, 242.896,
                             recipe=_PR + "912#issue-445437439")
    IMAGENET1K_V2 = imagenet("wide_resnet101_2-d733dc28.pth", 126886696, (82.51, 96.02), 22.753, 484.747,
                             recipe=_NEW + "#new-recipe", resize=232)
    DEFAULT = IMAGENET1K_V2


class VGG11_Weights(WeightsEnum):
    IMAGENET1K_V1 = imagenet("vgg11-8a719046.pth", 132863336, (69.02, 88.628), 7.609, 506.84,
                             recipe=_VGG, min_size=(32, 32))
    DEFAULT = IMAGENET1K_V1


class VGG11_BN_Weights(WeightsEnum):
    IMAGENET1K_V1 = imagenet("vgg11_bn-6002323d.pth", 132868840, (70.37, 89.81), 7.609, 506.881,
                             recipe=_VGG, min_size=(32, 32))
    DEFAULT = IMAGENET1K_V1


class VGG13_Weights(WeightsEnum):
    IMAGENET1K_V1 = imagenet("vgg13-19584684.pth", 133047848, (69.928, 89.246), 11.308, 507.545,
                             recipe=_VGG, min_size=(32, 32))
    DEFAULT = IMAGENET1K_V1


class VGG13_BN_Weights(WeightsEnum):
    IMAGENET1K_V1 = imagenet("vgg13_bn-abd245e5.pth", 133053736, (71.586, 90.374), 11.308, 507.59,
                             recipe=_VGG, min_size=(32, 32))
    DEFAULT = IMAGENET1K_V1


class VGG16_Weights(WeightsEnum):
    IMAGENET1K_V1 = imagenet("vgg16-397923af.pth", 138357544, (71.592, 90.382), 15.47, 527.796,
                             recipe=_VGG, min_size=(32, 32))
    IMAGENET1K_FEATURES = imagenet("vgg16_features-amdegroot-88682ab5.pth", 138357544, (float("nan"), float("nan")),
                                   15.47, 527.802, recipe=_SSD,
                                   mean=(0.48235, 0.45882, 0.40784), std=(1 / 255,) * 3,
                                   min_size=(32, 32), categories=None)
    DEFAULT = IMAGENET1K_V1


class VGG16_BN_Weights(WeightsEnum):
    IMAGENET1K_V1 = imagenet("vgg16_bn-6c64b313.pth", 138365992, (73.36, 91.516), 15.47, 527.866,
                             recipe=_VGG, min_size=(32, 32))
    DEFAULT = IMAGENET1K_V1


class VGG19_Weights(WeightsEnum):
    IMAGENET1K_V1 = imagenet("vgg19-dcbb9e9d.pth", 143667240, (72.376, 90.876), 19.632, 548.051,
                             recipe=_VGG, min_size=(32, 32))
    DEFAULT = IMAGENET1K_V1


class VGG19_BN_Weights(WeightsEnum):
    IMAGENET1K_V1 = imagenet("vgg19_bn-c79401a0.pth", 143678248, (74.218, 91.842), 19.632, 548.143,
                             recipe=_VGG, min_size=(32, 32))
    DEFAULT = IMAGENET1K_V1


class AlexNet_Weights(WeightsEnum):
    IMAGENET1K_V1 = imagenet("alexnet-owt-7be5be79.pth", 61100840, (56.522, 79.066), 0.714, 233.087,
                             recipe=_VGG, min_size=(63, 63))
    DEFAULT = IMAGENET1K_V1


class SqueezeNet1_0_Weights(WeightsEnum):
    IMAGENET1K_V1 = imagenet("squeezenet1_0-b66bff10.pth", 1248424, (58.092, 80.42), 0.819, 4.778,
                             recipe=_PR + "49#issuecomment-277560717", min_size=(21, 21))
    DEFAULT = IMAGENET1K_V1


class SqueezeNet1_1_Weights(WeightsEnum):
    IMAGENET1K_V1 = imagenet("squeezenet1_1-b8a52dc0.pth", 1235496, (58.178, 80.624), 0.349, 4.729,
                             recipe=_PR + "49#issuecomment-277560717", min_size=(17, 17))
    DEFAULT = IMAGENET1K_V1


class MobileNet_V2_Weights(WeightsEnum):
    IMAGENET1K_V1 = imagenet("mobilenet_v2-b0353104.pth", 3504872, (71.878, 90.286), 0.301, 13.555,
                             recipe=_REF + "#mobilenetv2")
    IMAGENET1K_V2 = imagenet("mobilenet_v2-7ebf99e0.pth", 3504872, (72.154, 90.822), 0.301, 13.598,
                             recipe=_NEW + "#new-recipe-with-reg-tuning", resize=232)
    DEFAULT = IMAGENET1K_V2


class DenseNet121_Weights(WeightsEnum):
    IMAGENET1K_V1 = imagenet("densenet121-a639ec97.pth", 7978856, (74.434, 91.972), 2.834, 30.845, recipe=_PR + "116",
                             min_size=(29, 29))
    DEFAULT = IMAGENET1K_V1


class DenseNet161_Weights(WeightsEnum):
    IMAGENET1K_V1 = imagenet("densenet161-8d451a50.pth", 28681000, (77.138, 93.56), 7.728, 110.369,
                             recipe=_PR + "116", min_size=(29, 29))
    DEFAULT = IMAGENET1K_V1


class DenseNet169_Weights(WeightsEnum):
    IMAGENET1K_V1 = imagenet("densenet169-b2777c0a.pth", 14149480, (75.6, 92.806), 3.36, 54.708, recipe=_PR + "116",
                             min_size=(29, 29))
    DEFAULT = IMAGENET1K_V1


class DenseNet201_Weights(WeightsEnum):
    IMAGENET1K_V1 = imagenet("densenet201-c1103571.pth", 20013928, (76.896, 93.37), 4.291, 77.373, recipe=_PR + "116",
                             min_size=(29, 29))
    DEFAULT = IMAGENET1K_V1


def load_into(model, weights, progress=True, fix_state=None):
    """Load a member's state dict (from the hub cache) into the model just built; fix_state renames a family's
    old keys first."""
    if weights is None:
        return model
    state = weights.get_state_dict(progress=progress, check_hash=True)
    model.load_state_dict(state if fix_state is None else fix_state(state))
    return model


def build(enum, weights, progress, make, kwargs, fix_state=None):
    """A builder's body: check the weights asked for (they fix num_classes to ImageNet's 1000), make the model
    from kwargs, fill it from the cached file if any."""
    weights = enum.verify(weights)
    if weights is not None and weights.meta.get("categories", ()) is not None:
        _ovewrite_named_param(kwargs, "num_classes", IMAGENET_CLASSES)
    return load_into(make(**kwargs), weights, progress, fix_state)
