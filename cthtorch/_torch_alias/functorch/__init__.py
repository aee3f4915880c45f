"""The functorch package under the opt-in alias: functorch's top-level API from cthtorch (torch._functorch),
since the real functorch would import a real torch's internals. Each transform warns that functorch.X is
deprecated, as torch's do."""
import cthtorch
from cthtorch._functorch.deprecated import (  # noqa: F401
    combine_state_for_ensemble, functionalize, grad, grad_and_value, hessian, jacfwd, jacrev, jvp, make_functional,
    make_functional_with_buffers, vjp, vmap)
from cthtorch._functorch.make_functional import FunctionalModule, FunctionalModuleWithBuffers  # noqa: F401

__version__ = cthtorch.__version__
