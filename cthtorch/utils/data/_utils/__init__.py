"""torch.utils.data._utils: the DataLoader's helpers under torch's module paths
(collate, worker, pin_memory), which programs import directly
(`from torch.utils.data._utils.collate import default_collate`)."""
import importlib.util
import sys

from cthtorch.utils.data._utils import collate, pin_memory, worker  # noqa: F401
from cthtorch.utils.data._utils.worker import ExceptionWrapper, MP_STATUS_CHECK_INTERVAL  # noqa: F401

IS_WINDOWS = sys.platform == "win32"
HAS_NUMPY = importlib.util.find_spec("numpy") is not None   # torch's flag, found without importing numpy
