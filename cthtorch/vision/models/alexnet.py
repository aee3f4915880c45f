"""AlexNet (Krizhevsky et al. 2012) as torchvision builds it; weights cannot be downloaded here."""
from typing import Optional

import cthtorch
from cthtorch import nn
from cthtorch.vision.models import _weights
from cthtorch.vision.models._api import register_model
from cthtorch.vision.models._utils import handle_legacy_interface, _ovewrite_named_param
from cthtorch.vision.models._weights import AlexNet_Weights


class AlexNet(nn.Module):
    def __init__(self, num_classes=1000, dropout=0.5):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 64, kernel_size=11, stride=4, padding=2), nn.ReLU(inplace=True),
            nn.MaxPool2d(kernel_size=3, stride=2),
            nn.Conv2d(64, 192, kernel_size=5, padding=2), nn.ReLU(inplace=True),
            nn.MaxPool2d(kernel_size=3, stride=2),
            nn.Conv2d(192, 384, kernel_size=3, padding=1), nn.ReLU(inplace=True),
            nn.Conv2d(384, 256, kernel_size=3, padding=1), nn.ReLU(inplace=True),
            nn.Conv2d(256, 256, kernel_size=3, padding=1), nn.ReLU(inplace=True),
            nn.MaxPool2d(kernel_size=3, stride=2),
        )
        self.avgpool = nn.AdaptiveAvgPool2d((6, 6))
        self.classifier = nn.Sequential(
            nn.Dropout(p=dropout), nn.Linear(256 * 6 * 6, 4096), nn.ReLU(inplace=True),
            nn.Dropout(p=dropout), nn.Linear(4096, 4096), nn.ReLU(inplace=True),
            nn.Linear(4096, num_classes),
        )
        # torchvision keeps the layers' default initialisation

    def forward(self, x):
        x = cthtorch.flatten(self.avgpool(self.features(x)), 1)
        return self.classifier(x)


@register_model()
@handle_legacy_interface(weights=("pretrained", AlexNet_Weights.IMAGENET1K_V1))
def alexnet(*, weights: Optional[AlexNet_Weights] = None, progress: bool = True, **kwargs) -> AlexNet:
    return _weights.build(AlexNet_Weights, weights, progress, AlexNet, kwargs)
