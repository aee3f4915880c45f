"""torch.fx: symbolic_trace of a ResNet-18 and a VGG-11 (torchvision's
structure, built with each library's nn; tests/test_fx.py checks cthtorch.vision's
trace to the same code) and of a functional-heavy module, cthtorch and torch
side by side in one process (min of repeats, ms).
Run: PYTHONPATH=. python bench/bench_fx.py"""
from bench_scatter import main


def resnet18(L):
    nn = L.nn

    class BasicBlock(nn.Module):
        def __init__(self, cin, cout, stride):
            super().__init__()
            self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(cout)
            self.relu = nn.ReLU(inplace=True)
            self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(cout)
            self.downsample = None
            if stride != 1 or cin != cout:
                self.downsample = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

        def forward(self, x):
            identity = x
            out = self.relu(self.bn1(self.conv1(x)))
            out = self.bn2(self.conv2(out))
            if self.downsample is not None:
                identity = self.downsample(x)
            return self.relu(out + identity)

    class ResNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(3, 64, 7, 2, 3, bias=False)
            self.bn1 = nn.BatchNorm2d(64)
            self.relu = nn.ReLU(inplace=True)
            self.maxpool = nn.MaxPool2d(3, 2, 1)
            chans, layers, cin = (64, 128, 256, 512), [], 64
            for i, c in enumerate(chans):
                layers.append(nn.Sequential(BasicBlock(cin, c, 1 if i == 0 else 2), BasicBlock(c, c, 1)))
                cin = c
            self.layer1, self.layer2, self.layer3, self.layer4 = layers
            self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
            self.fc = nn.Linear(512, 1000)

        def forward(self, x):
            x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
            x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
            return self.fc(L.flatten(self.avgpool(x), 1))
    return ResNet()


def vgg11(L, num_classes=1000):
    """torchvision's VGG-11 (configuration "A", no batch norm)."""
    nn = L.nn
    layers, cin = [], 3
    for v in (64, "M", 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M"):
        if v == "M":
            layers.append(nn.MaxPool2d(kernel_size=2, stride=2))
        else:
            layers += [nn.Conv2d(cin, v, kernel_size=3, padding=1), nn.ReLU(inplace=True)]
            cin = v

    class VGG(nn.Module):
        def __init__(self):
            super().__init__()
            self.features = nn.Sequential(*layers)
            self.avgpool = nn.AdaptiveAvgPool2d((7, 7))
            self.classifier = nn.Sequential(nn.Linear(512 * 7 * 7, 4096), nn.ReLU(True), nn.Dropout(p=0.5),
                                            nn.Linear(4096, 4096), nn.ReLU(True), nn.Dropout(p=0.5),
                                            nn.Linear(4096, num_classes))

        def forward(self, x):
            x = self.avgpool(self.features(x))
            x = L.flatten(x, 1)
            return self.classifier(x)
    return VGG()


def functional_block(L):
    F = L.nn.functional

    class M(L.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = L.nn.Parameter(L.randn(16, 16))

        def forward(self, x):
            for _ in range(20):
                x = F.layer_norm(F.gelu(x @ self.w) + x.relu() * 0.5, (16,))
                x = L.cat([x[:, :8], x[:, 8:]], dim=1).softmax(dim=-1)
            return x
    return M()


def cases(L):
    fx = L.fx
    net, vgg, fb = resnet18(L), vgg11(L, 10), functional_block(L)
    gm = fx.symbolic_trace(net)
    return {
        "symbolic_trace resnet18": lambda: fx.symbolic_trace(net),
        "symbolic_trace vgg11": lambda: fx.symbolic_trace(vgg),
        "symbolic_trace 20x functional block": lambda: fx.symbolic_trace(fb),
        "recompile resnet18 GraphModule": lambda: gm.recompile(),
    }


if __name__ == "__main__":
    main(cases)
