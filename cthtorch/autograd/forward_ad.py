"""Forward-mode AD (torch.autograd.forward_ad): cthtorch has no dual tensors.

dual_level and unpack_dual of an ordinary tensor work (a plain tensor has no
tangent); make_dual raises NotImplementedError, so code needing real
forward-mode AD fails loudly instead of computing wrong tangents."""
from collections import namedtuple

__all__ = ["UnpackedDualTensor", "enter_dual_level", "exit_dual_level", "make_dual", "unpack_dual", "dual_level"]

_current_level = -1

UnpackedDualTensor = namedtuple("UnpackedDualTensor", ["primal", "tangent"])


def enter_dual_level():
    global _current_level
    if _current_level != -1:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    _current_level = 0
    return _current_level


def exit_dual_level(*, level=None):
    global _current_level
    if level is None:
        level = _current_level
    if level != _current_level:
        raise RuntimeError("Trying to exit a forward AD level that was not the last one that was created. This is "
                           "not supported.")
    _current_level = -1


def make_dual(tensor, tangent, *, level=None):
    raise NotImplementedError("forward-mode AD (torch.autograd.forward_ad.make_dual) is not implemented in cthtorch; "
                              "use reverse mode (torch.autograd.grad, torch.autograd.functional.jvp)")


def unpack_dual(tensor, *, level=None):
    return UnpackedDualTensor(tensor, None)


class dual_level:
    """Context manager for a forward AD level (only plain tensors exist in it here)."""

    def __enter__(self):
        return enter_dual_level()

    def __exit__(self, *args):
        exit_dual_level()


def _is_fwd_grad_enabled():
    return False


def _set_fwd_grad_enabled(mode):
    pass
