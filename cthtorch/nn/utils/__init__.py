from cthtorch.nn.utils.clip_grad import (  # noqa: F401
    clip_grad_norm_, clip_grad_norm, clip_grad_value_, clip_grads_with_norm_, get_total_norm)
from cthtorch.nn.utils.fusion import (  # noqa: F401
    fuse_conv_bn_eval, fuse_conv_bn_weights, fuse_linear_bn_eval, fuse_linear_bn_weights)
from cthtorch.nn.utils.init import skip_init  # noqa: F401
from cthtorch.nn.utils.memory_format import (  # noqa: F401
    convert_conv2d_weight_memory_format, convert_conv3d_weight_memory_format)
from cthtorch.nn.utils.convert_parameters import parameters_to_vector, vector_to_parameters  # noqa: F401
from cthtorch.nn.utils import rnn  # noqa: F401
from cthtorch.nn.utils import parametrize, parametrizations, prune  # noqa: F401,E402
from cthtorch.nn.utils.weight_norm import weight_norm, remove_weight_norm  # noqa: F401,E402
from cthtorch.nn.utils.spectral_norm import spectral_norm, remove_spectral_norm  # noqa: F401,E402
from cthtorch.nn.utils import stateless  # noqa: F401,E402
