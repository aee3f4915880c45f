from cthtorch.vision.models.resnet import ResNet, BasicBlock, Bottleneck, resnet18, resnet34, resnet50, resnet101, resnet152  # noqa: F401
