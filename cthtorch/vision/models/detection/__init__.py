"""torchvision.models.detection: not implemented (see _unwritten.py)."""
from cthtorch.vision.models._unwritten import refuse

refuse("torchvision.models.detection",
       "Faster R-CNN, Mask R-CNN, Keypoint R-CNN, RetinaNet, SSD, SSDlite, "
       "FCOS and their anchor, RPN and RoI-head parts")
