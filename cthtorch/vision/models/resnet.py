"""ResNet (He et al. 2015) as torchvision builds it; weights cannot be downloaded here."""
import cthtorch
from cthtorch import nn
from cthtorch.vision.models import _weights


def conv3x3(in_planes, out_planes, stride=1, groups=1, dilation=1):
    return nn.Conv2d(in_planes, out_planes, kernel_size=3, stride=stride, padding=dilation, groups=groups, bias=False,
                     dilation=dilation)


def conv1x1(in_planes, out_planes, stride=1):
    return nn.Conv2d(in_planes, out_planes, kernel_size=1, stride=stride, bias=False)


class BasicBlock(nn.Module):
    expansion = 1

    def __init__(self, inplanes, planes, stride=1, downsample=None, groups=1, base_width=64, dilation=1,
                 norm_layer=None):
        super().__init__()
        norm_layer = norm_layer or nn.BatchNorm2d
        self.conv1 = conv3x3(inplanes, planes, stride)
        self.bn1 = norm_layer(planes)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = conv3x3(planes, planes)
        self.bn2 = norm_layer(planes)
        self.downsample = downsample
        self.stride = stride

    def forward(self, x):
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        if self.downsample is not None:
            identity = self.downsample(x)
        out = out + identity
        return self.relu(out)


class Bottleneck(nn.Module):
    expansion = 4

    def __init__(self, inplanes, planes, stride=1, downsample=None, groups=1, base_width=64, dilation=1,
                 norm_layer=None):
        super().__init__()
        norm_layer = norm_layer or nn.BatchNorm2d
        width = int(planes * (base_width / 64.0)) * groups
        self.conv1 = conv1x1(inplanes, width)
        self.bn1 = norm_layer(width)
        self.conv2 = conv3x3(width, width, stride, groups, dilation)
        self.bn2 = norm_layer(width)
        self.conv3 = conv1x1(width, planes * self.expansion)
        self.bn3 = norm_layer(planes * self.expansion)
        self.relu = nn.ReLU(inplace=True)
        self.downsample = downsample
        self.stride = stride

    def forward(self, x):
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        if self.downsample is not None:
            identity = self.downsample(x)
        out = out + identity
        return self.relu(out)


class ResNet(nn.Module):
    def __init__(self, block, layers, num_classes=1000, zero_init_residual=False, groups=1, width_per_group=64,
                 replace_stride_with_dilation=None, norm_layer=None):
        super().__init__()
        norm_layer = norm_layer or nn.BatchNorm2d
        self._norm_layer = norm_layer
        self.inplanes = 64
        self.dilation = 1
        self.groups, self.base_width = groups, width_per_group
        self.conv1 = nn.Conv2d(3, self.inplanes, kernel_size=7, stride=2, padding=3, bias=False)
        self.bn1 = norm_layer(self.inplanes)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
        self.layer1 = self._make_layer(block, 64, layers[0])
        self.layer2 = self._make_layer(block, 128, layers[1], stride=2)
        self.layer3 = self._make_layer(block, 256, layers[2], stride=2)
        self.layer4 = self._make_layer(block, 512, layers[3], stride=2)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(512 * block.expansion, num_classes)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
            elif isinstance(m, (nn.BatchNorm2d, nn.GroupNorm)):
                nn.init.constant_(m.weight, 1)
                nn.init.constant_(m.bias, 0)
        if zero_init_residual:
            for m in self.modules():
                if isinstance(m, Bottleneck):
                    nn.init.constant_(m.bn3.weight, 0)
                elif isinstance(m, BasicBlock):
                    nn.init.constant_(m.bn2.weight, 0)

    def _make_layer(self, block, planes, blocks, stride=1):
        norm_layer = self._norm_layer
        downsample = None
        if stride != 1 or self.inplanes != planes * block.expansion:
            downsample = nn.Sequential(conv1x1(self.inplanes, planes * block.expansion, stride),
                                       norm_layer(planes * block.expansion))
        layers = [block(self.inplanes, planes, stride, downsample, self.groups, self.base_width, self.dilation,
                        norm_layer)]
        self.inplanes = planes * block.expansion
        for _ in range(1, blocks):
            layers.append(block(self.inplanes, planes, groups=self.groups, base_width=self.base_width,
                                dilation=self.dilation, norm_layer=norm_layer))
        return nn.Sequential(*layers)

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        x = cthtorch.flatten(self.avgpool(x), 1)
        return self.fc(x)


def _resnet(name, block, layers, weights, pretrained, kwargs):
    return _weights.build(name, weights, pretrained, lambda: ResNet(block, layers, **kwargs))


def resnet18(weights=None, progress=True, pretrained=False, **kwargs):
    return _resnet("resnet18", BasicBlock, [2, 2, 2, 2], weights, pretrained, kwargs)


def resnet34(weights=None, progress=True, pretrained=False, **kwargs):
    return _resnet("resnet34", BasicBlock, [3, 4, 6, 3], weights, pretrained, kwargs)


def resnet50(weights=None, progress=True, pretrained=False, **kwargs):
    return _resnet("resnet50", Bottleneck, [3, 4, 6, 3], weights, pretrained, kwargs)


def resnet101(weights=None, progress=True, pretrained=False, **kwargs):
    return _resnet("resnet101", Bottleneck, [3, 4, 23, 3], weights, pretrained, kwargs)


def resnet152(weights=None, progress=True, pretrained=False, **kwargs):
    return _resnet("resnet152", Bottleneck, [3, 8, 36, 3], weights, pretrained, kwargs)


def resnext50_32x4d(weights=None, progress=True, pretrained=False, **kwargs):
    kwargs.update(groups=32, width_per_group=4)
    return _resnet("resnext50_32x4d", Bottleneck, [3, 4, 6, 3], weights, pretrained, kwargs)


def resnext101_32x8d(weights=None, progress=True, pretrained=False, **kwargs):
    kwargs.update(groups=32, width_per_group=8)
    return _resnet("resnext101_32x8d", Bottleneck, [3, 4, 23, 3], weights, pretrained, kwargs)


def resnext101_64x4d(weights=None, progress=True, pretrained=False, **kwargs):
    kwargs.update(groups=64, width_per_group=4)
    return _resnet("resnext101_64x4d", Bottleneck, [3, 4, 23, 3], weights, pretrained, kwargs)


def wide_resnet50_2(weights=None, progress=True, pretrained=False, **kwargs):
    kwargs.update(width_per_group=64 * 2)
    return _resnet("wide_resnet50_2", Bottleneck, [3, 4, 6, 3], weights, pretrained, kwargs)


def wide_resnet101_2(weights=None, progress=True, pretrained=False, **kwargs):
    kwargs.update(width_per_group=64 * 2)
    return _resnet("wide_resnet101_2", Bottleneck, [3, 4, 23, 3], weights, pretrained, kwargs)
