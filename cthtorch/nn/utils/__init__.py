from cthtorch.nn.utils.clip_grad import clip_grad_norm_, clip_grad_norm, clip_grad_value_  # noqa: F401
from cthtorch.nn.utils.convert_parameters import parameters_to_vector, vector_to_parameters  # noqa: F401
from cthtorch.nn.utils import rnn  # noqa: F401
from cthtorch.nn.utils import parametrize, parametrizations, prune  # noqa: F401,E402
from cthtorch.nn.utils.weight_norm import weight_norm, remove_weight_norm  # noqa: F401,E402
from cthtorch.nn.utils.spectral_norm import spectral_norm, remove_spectral_norm  # noqa: F401,E402
from cthtorch.nn.utils import stateless  # noqa: F401,E402
