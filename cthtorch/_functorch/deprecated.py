"""functorch's top-level API: torch.func's transforms and the module-to-function helpers, each warning, as
torch's do, that functorch.X is deprecated in favour of torch.func.X."""
import warnings

import cthtorch.func as _func
from cthtorch._functorch import make_functional as _nn_impl

__all__ = ["vmap", "grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian", "functionalize",
           "make_functional", "make_functional_with_buffers", "combine_state_for_ensemble"]


def get_warning(api, new_api=None, replace_newlines=False):
    if new_api is None:
        new_api = f"torch.func.{api}"
    warning = (f"We've integrated functorch into PyTorch. As the final step of the \n"
               f"integration, `functorch.{api}` is deprecated as of PyTorch \n"
               f"2.0 and will be deleted in a future version of PyTorch >= 2.3. \n"
               f"Please use `{new_api}` instead; see the PyTorch 2.0 release notes \n"
               f"and/or the `torch.func` migration guide for more details \n"
               f"https://pytorch.org/docs/main/func.migrating.html")
    return warning.replace("\n", "") if replace_newlines else warning


def warn_deprecated(api, new_api=None):
    warnings.warn(get_warning(api, new_api, replace_newlines=True), FutureWarning, stacklevel=3)


def _deprecated(api, impl, new_api=None):
    def wrapper(*args, **kwargs):
        warn_deprecated(api, new_api)
        return impl(*args, **kwargs)
    wrapper.__name__ = wrapper.__qualname__ = api
    wrapper.__doc__ = (impl.__doc__ or "") + "\n\n.. warning::\n\n    " + get_warning(api, new_api)
    return wrapper


vmap = _deprecated("vmap", _func.vmap, "torch.vmap")
grad = _deprecated("grad", _func.grad)
grad_and_value = _deprecated("grad_and_value", _func.grad_and_value)
vjp = _deprecated("vjp", _func.vjp)
jvp = _deprecated("jvp", _func.jvp)
jacrev = _deprecated("jacrev", _func.jacrev)
jacfwd = _deprecated("jacfwd", _func.jacfwd)
hessian = _deprecated("hessian", _func.hessian)
functionalize = _deprecated("functionalize", _func.functionalize)
make_functional = _deprecated("make_functional", _nn_impl.make_functional, "torch.func.functional_call")
make_functional_with_buffers = _deprecated("make_functional_with_buffers", _nn_impl.make_functional_with_buffers,
                                           "torch.func.functional_call")
combine_state_for_ensemble = _deprecated("combine_state_for_ensemble", _nn_impl.combine_state_for_ensemble,
                                         "torch.func.stack_module_state")
