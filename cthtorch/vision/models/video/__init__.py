"""torchvision.models.video: not implemented (see _unwritten.py)."""
from cthtorch.vision.models._unwritten import refuse

refuse("torchvision.models.video", "the R(2+1)D, MC3, R3D, S3D, MViT and Swin3D video classifiers")
