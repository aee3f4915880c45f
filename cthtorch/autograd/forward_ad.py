"""Forward-mode AD (torch.autograd.forward_ad) on cthtorch's reverse-mode engine.

There are no dual tensors in C. Instead:

* a level has one scalar graph leaf, eps (one real, and one complex for
  complex tangents); make_dual(primal, tangent) returns primal's value as
  the output of a node that reads as primal + eps * tangent: its vjp hands
  the primal its gradient unchanged and eps the sum of gradient * tangent;
* unpack_dual(y) computes y's tangent when asked, by the double-vjp trick:
  with u a dummy cotangent, g(u) = dy/deps^T u is linear in u, and its vjp
  is dy/deps = the sum of J_i v_i over every dual of the level that y
  depends on. One double backward over y's graph, whatever the number of
  duals the level has made (so a loop making duals stays linear, and a dual
  that is gone holds nothing: its tangent lives in its node only).

So values are torch's (to rounding) for every op with a double backward, and
unpack_dual costs two backward passes. Differences from torch that a program
can see: a dual tensor and what is computed from it require grad (they carry
a grad_fn); a custom autograd.Function with a jvp but no backward gets its
output's tangent from jvp eagerly (ctx.save_for_forward works), and reverse
mode through such an output is cut, as torch's would raise anyway.
"""
import weakref
from collections import namedtuple

import cthtorch

__all__ = ["UnpackedDualTensor", "enter_dual_level", "exit_dual_level", "make_dual", "unpack_dual", "dual_level"]

_current_level = -1
# the current level: its eps leaves (by complexness), the duals made (id -> (weakref, tangent, primal required
# grad), an entry leaving with its tensor) and whether any primal required grad
_level = {"eps": {}, "duals": {}, "any_rg": False}

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
    # tangents do not outlive their level
    _level["eps"].clear()
    _level["duals"].clear()
    _level["any_rg"] = False


def _size_list(t):
    return "[" + ", ".join(str(s) for s in t.shape) + "]"


def _dual_function():
    """The Function behind make_dual (made on first use: this module loads before autograd.Function)."""
    global _Dual
    if _Dual is None:
        class _Dual(cthtorch.autograd.Function):
            """primal + eps * tangent, valued primal exactly (no 0 * inf, no -0.0 turned +0.0)."""

            @staticmethod
            def forward(ctx, primal, eps, tangent):
                ctx.tangent = tangent
                ctx.eps_dtype = eps.dtype
                return primal.view_as(primal)

            @staticmethod
            def backward(ctx, grad):
                t = ctx.tangent
                g_eps = (grad * (t.conj() if t.is_complex() else t)).sum()
                return grad, g_eps.to(ctx.eps_dtype), None
    return _Dual


_Dual = None


def _eps(is_complex):
    eps = _level["eps"].get(is_complex)
    if eps is None:
        eps = cthtorch.zeros((), dtype=cthtorch.complex128 if is_complex else cthtorch.float64, requires_grad=True)
        _level["eps"][is_complex] = eps
    return eps


def _forget(key):
    def drop(ref):
        entry = _level["duals"].get(key)
        if entry is not None and entry[0] is ref:
            del _level["duals"][key]
    return drop


def make_dual(tensor, tangent, *, level=None):
    """A tensor with tensor's value that carries tangent at the current level (see the module docstring)."""
    if level is None:
        level = _current_level
    if level < 0:
        raise RuntimeError("Trying to create a dual Tensor for forward AD but no level exists, make sure to "
                           "enter_dual_level() first.")
    if level != _current_level:
        raise RuntimeError("Trying to create a dual Tensor at a forward AD level that does not exist.")
    if not (tensor.is_floating_point() or tensor.is_complex()):
        raise ValueError("Expected primal to be floating point or complex, but got: %s" % tensor.dtype)
    if not (tangent.is_floating_point() or tangent.is_complex()):
        raise ValueError("Expected tangent to be floating point or complex, but got: %s" % tangent.dtype)
    if tuple(tangent.shape) != tuple(tensor.shape):
        raise RuntimeError("Trying to set a forward gradient that has a different size than that of the original "
                           "Tensor, this is not supported. Tensor is of size %s while the given forward gradient is "
                           "of size %s." % (_size_list(tensor), _size_list(tangent)))
    primal_rg = tensor.requires_grad and cthtorch.is_grad_enabled()
    eps = _eps(tangent.is_complex() or tensor.is_complex())
    with cthtorch.enable_grad():
        dual = _dual_function().apply(tensor if primal_rg else tensor.detach(), eps, tangent)
    ref = weakref.ref(dual, _forget(id(dual)))
    _level["duals"][id(dual)] = (ref, tangent, tensor.requires_grad)
    _level["any_rg"] = _level["any_rg"] or tensor.requires_grad
    return dual


def _entry(tensor):
    entry = _level["duals"].get(id(tensor))
    if entry is None or entry[0]() is not tensor:
        return None
    return entry[1], entry[2]


def _tangent_of(tensor):
    """J v summed over the level's duals, or None when tensor depends on none of them."""
    eps = list(_level["eps"].values())
    if not eps or not tensor.requires_grad or not (tensor.is_floating_point() or tensor.is_complex()):
        return None
    u = cthtorch.zeros_like(tensor, requires_grad=True)
    with cthtorch.enable_grad():
        gs = cthtorch.autograd.grad(tensor, eps, u, retain_graph=True, create_graph=True, allow_unused=True)
    linear = [g for g in gs if g is not None and g.requires_grad]
    if not linear:
        if all(g is None for g in gs):
            return None
        return cthtorch.zeros_like(tensor)   # depends on a dual, but only through a constant-gradient path
    (jv,) = cthtorch.autograd.grad(linear, u, [cthtorch.ones_like(g) for g in linear], allow_unused=True)
    return cthtorch.zeros_like(tensor) if jv is None else jv.detach()


def unpack_dual(tensor, *, level=None):
    """(primal, tangent) of tensor at the current level; tangent is None for a tensor without one."""
    if level is None:
        level = _current_level
    if level < 0 or level != _current_level or not isinstance(tensor, cthtorch.Tensor):
        return UnpackedDualTensor(tensor, None)
    hit = _entry(tensor)
    if hit is not None:
        tangent, primal_rg = hit
        return UnpackedDualTensor(tensor if primal_rg else tensor.detach(), tangent)
    tangent = _tangent_of(tensor)
    if tangent is None:
        return UnpackedDualTensor(tensor, None)
    return UnpackedDualTensor(tensor if _level["any_rg"] else tensor.detach(), tangent)


def _function_jvp(cls, ctx, args, outputs):
    """Output tangents of a custom Function that has jvp but no backward, computed eagerly from its inputs'
    tangents; the outputs become duals of their own (returned in outputs' structure)."""
    tangents = [unpack_dual(a).tangent if isinstance(a, cthtorch.Tensor) else None for a in args]
    if all(t is None for t in tangents):
        return outputs
    with cthtorch.no_grad():
        out_t = cls.jvp(ctx, *tangents)
    outs = outputs if isinstance(outputs, tuple) else (outputs,)
    out_t = out_t if isinstance(out_t, tuple) else (out_t,)
    if len(out_t) != len(outs):
        raise RuntimeError("jvp() returned an incorrect number of forward gradients (expected %d, got %d)"
                           % (len(outs), len(out_t)))
    duals = tuple(make_dual(o.detach(), t) if isinstance(o, cthtorch.Tensor) and t is not None else o
                  for o, t in zip(outs, out_t))
    return duals if isinstance(outputs, tuple) else duals[0]


def _is_active():
    return _current_level >= 0 and bool(_level["eps"])


class dual_level:
    """Context manager for a forward AD level: duals made inside it lose their tangents on exit."""

    def __enter__(self):
        return enter_dual_level()

    def __exit__(self, *args):
        exit_dual_level()


def _is_fwd_grad_enabled():
    return _current_level >= 0


def _set_fwd_grad_enabled(mode):
    pass
