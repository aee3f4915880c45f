"""torch.ao.quantization: eager-mode quantization (observers, fake quantization, qconfigs, stubs,
fusion, prepare/convert, dynamic quantization)."""
from cthtorch.ao.quantization.observer import *  # noqa: F401,F403
from cthtorch.ao.quantization.observer import _PartialWrapper, _with_args  # noqa: F401
from cthtorch.ao.quantization.fake_quantize import *  # noqa: F401,F403
from cthtorch.ao.quantization.qconfig import *  # noqa: F401,F403
from cthtorch.ao.quantization.stubs import *  # noqa: F401,F403
from cthtorch.ao.quantization.utils import *  # noqa: F401,F403
from cthtorch.ao.quantization.quantization_mappings import *  # noqa: F401,F403
from cthtorch.ao.quantization.quantize import *  # noqa: F401,F403
from cthtorch.ao.quantization.fuse_modules import *  # noqa: F401,F403
from cthtorch.ao.quantization.fuser_method_mappings import *  # noqa: F401,F403
from cthtorch.ao.quantization.qconfig_mapping import *  # noqa: F401,F403
