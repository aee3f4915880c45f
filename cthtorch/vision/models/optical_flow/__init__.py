"""torchvision.models.optical_flow: not implemented (see _unwritten.py)."""
from cthtorch.vision.models._unwritten import refuse

refuse("torchvision.models.optical_flow", "RAFT")
