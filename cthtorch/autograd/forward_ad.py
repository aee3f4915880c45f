"""Forward-mode AD (torch.autograd.forward_ad) on cthtorch's reverse-mode engine.

There are no dual tensors in C. Instead:

* make_dual(primal, tangent) returns a tensor whose value is primal's and
  that is a graph root the level remembers, with its tangent;
* unpack_dual(y) computes y's tangent when asked, by the double-vjp trick:
  with u a dummy cotangent, g(u) = J^T u is linear in u, so the vjp of g with
  the inputs' tangents v is J v. One double backward over y's graph gives the
  sum of J_i v_i over every dual of the level that y depends on.

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
# the current level's duals: (weakref to the dual, root, tangent, primal required grad)
_duals = []

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
    del _duals[:]   # tangents do not outlive their level


def _size_list(t):
    return "[" + ", ".join(str(s) for s in t.shape) + "]"


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
    root = tensor.detach().requires_grad_()
    if tensor.requires_grad and cthtorch.is_grad_enabled():
        # value of root, derivative 1 towards both root (forward mode) and tensor (reverse mode through it)
        dual = root + (tensor - tensor.detach())
    else:
        dual = root
    _duals.append((weakref.ref(dual), root, tangent, tensor.requires_grad))
    return dual


def _entry(tensor):
    for ref, root, tangent, primal_rg in _duals:
        if ref() is tensor:
            return root, tangent, primal_rg
    return None


def _tangent_of(tensor):
    """J v summed over the level's duals, or None when tensor depends on none of them."""
    # every dual counts, also one whose tensor is gone: its root may still be in tensor's graph
    live = [(root, tangent) for _, root, tangent, _ in _duals]
    if not live or not tensor.requires_grad or not (tensor.is_floating_point() or tensor.is_complex()):
        return None
    roots = [r for r, _ in live]
    u = cthtorch.zeros_like(tensor, requires_grad=True)
    with cthtorch.enable_grad():
        gs = cthtorch.autograd.grad(tensor, roots, u, retain_graph=True, create_graph=True, allow_unused=True)
    pairs = [(g, t.to(g.dtype)) for g, (_, t) in zip(gs, live) if g is not None and g.requires_grad]
    if not pairs:
        if all(g is None for g in gs):
            return None
        return cthtorch.zeros_like(tensor)   # depends on a dual, but only through a constant-gradient path
    (jv,) = cthtorch.autograd.grad([g for g, _ in pairs], u, [t for _, t in pairs], allow_unused=True)
    return cthtorch.zeros_like(tensor) if jv is None else jv.detach()


def unpack_dual(tensor, *, level=None):
    """(primal, tangent) of tensor at the current level; tangent is None for a tensor without one."""
    if level is None:
        level = _current_level
    if level < 0 or level != _current_level or not isinstance(tensor, cthtorch.Tensor):
        return UnpackedDualTensor(tensor, None)
    hit = _entry(tensor)
    if hit is not None:
        root, tangent, primal_rg = hit
        return UnpackedDualTensor(tensor if primal_rg else root.detach(), tangent)
    tangent = _tangent_of(tensor)
    if tangent is None:
        return UnpackedDualTensor(tensor, None)
    any_rg = any(rg for _, _, _, rg in _duals)
    return UnpackedDualTensor(tensor if any_rg else tensor.detach(), tangent)


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
    return _current_level >= 0 and bool(_duals)


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
