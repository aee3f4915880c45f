"""torch.quantization: the older home of torch.ao.quantization, which programs still import."""
from cthtorch.ao.quantization import *  # noqa: F401,F403
from cthtorch.ao.quantization import observer, fake_quantize, qconfig, stubs, quantize, quantization_mappings  # noqa: F401,E501
