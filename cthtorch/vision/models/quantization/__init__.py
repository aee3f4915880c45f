"""torchvision.models.quantization: not implemented (see _unwritten.py)."""
from cthtorch.vision.models._unwritten import refuse

refuse("torchvision.models.quantization",
       "the quantized ResNet, MobileNet, GoogLeNet, Inception and ShuffleNet "
       "builders")
