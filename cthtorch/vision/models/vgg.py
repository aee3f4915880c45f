"""VGG (Simonyan & Zisserman 2014) as torchvision builds it; weights cannot be downloaded here."""
import cthtorch
from cthtorch import nn
from cthtorch.vision.models import _weights


class VGG(nn.Module):
    def __init__(self, features, num_classes=1000, init_weights=True, dropout=0.5):
        super().__init__()
        self.features = features
        self.avgpool = nn.AdaptiveAvgPool2d((7, 7))
        self.classifier = nn.Sequential(
            nn.Linear(512 * 7 * 7, 4096), nn.ReLU(True), nn.Dropout(p=dropout),
            nn.Linear(4096, 4096), nn.ReLU(True), nn.Dropout(p=dropout),
            nn.Linear(4096, num_classes),
        )
        if init_weights:
            for m in self.modules():
                if isinstance(m, nn.Conv2d):
                    nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
                    if m.bias is not None:
                        nn.init.constant_(m.bias, 0)
                elif isinstance(m, nn.BatchNorm2d):
                    nn.init.constant_(m.weight, 1)
                    nn.init.constant_(m.bias, 0)
                elif isinstance(m, nn.Linear):
                    nn.init.normal_(m.weight, 0, 0.01)
                    nn.init.constant_(m.bias, 0)

    def forward(self, x):
        x = cthtorch.flatten(self.avgpool(self.features(x)), 1)
        return self.classifier(x)


def make_layers(cfg, batch_norm=False):
    layers, in_channels = [], 3
    for v in cfg:
        if v == "M":
            layers.append(nn.MaxPool2d(kernel_size=2, stride=2))
        else:
            layers.append(nn.Conv2d(in_channels, v, kernel_size=3, padding=1))
            if batch_norm:
                layers.append(nn.BatchNorm2d(v))
            layers.append(nn.ReLU(inplace=True))
            in_channels = v
    return nn.Sequential(*layers)


cfgs = {
    "A": [64, "M", 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M"],
    "B": [64, 64, "M", 128, 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M"],
    "D": [64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M", 512, 512, 512, "M"],
    "E": [64, 64, "M", 128, 128, "M", 256, 256, 256, 256, "M", 512, 512, 512, 512, "M", 512, 512, 512, 512, "M"],
}


def _vgg(name, cfg, batch_norm, weights, pretrained, kwargs):
    return _weights.build(name, weights, pretrained,
                          lambda: VGG(make_layers(cfgs[cfg], batch_norm=batch_norm), **kwargs))


def vgg11(*, weights=None, progress=True, pretrained=False, **kwargs):
    return _vgg("vgg11", "A", False, weights, pretrained, kwargs)


def vgg11_bn(*, weights=None, progress=True, pretrained=False, **kwargs):
    return _vgg("vgg11_bn", "A", True, weights, pretrained, kwargs)


def vgg13(*, weights=None, progress=True, pretrained=False, **kwargs):
    return _vgg("vgg13", "B", False, weights, pretrained, kwargs)


def vgg13_bn(*, weights=None, progress=True, pretrained=False, **kwargs):
    return _vgg("vgg13_bn", "B", True, weights, pretrained, kwargs)


def vgg16(*, weights=None, progress=True, pretrained=False, **kwargs):
    return _vgg("vgg16", "D", False, weights, pretrained, kwargs)


def vgg16_bn(*, weights=None, progress=True, pretrained=False, **kwargs):
    return _vgg("vgg16_bn", "D", True, weights, pretrained, kwargs)


def vgg19(*, weights=None, progress=True, pretrained=False, **kwargs):
    return _vgg("vgg19", "E", False, weights, pretrained, kwargs)


def vgg19_bn(*, weights=None, progress=True, pretrained=False, **kwargs):
    return _vgg("vgg19_bn", "E", True, weights, pretrained, kwargs)
