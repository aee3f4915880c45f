"""torch.inference_mode's tensors against torch: is_inference() of what the mode makes (views of normal tensors
stay normal), and the rules a program meets after it - no in-place update outside the mode, never saved for
backward, no requires_grad (nn.Parameter too) - with torch's messages; clones and .data stay usable."""
import pytest

import cthtorch
import oracle

torch = oracle.require_torch()


def _made(lib):
    with lib.inference_mode():
        return lib.ones(2, 3)


CASES = {
    "flags_inside": lambda l: (lambda r: r)(_flags(l)),
    "view_of_normal_inside": lambda l: _view_of_normal(l),
    "view_of_inference": lambda l: _made(l)[0].is_inference(),
    "detach": lambda l: _made(l).detach().is_inference(),
    "clone_outside": lambda l: _made(l).clone().is_inference(),
    "op_outside": lambda l: (_made(l) + 1).is_inference(),
    "function_form": lambda l: l.is_inference(_made(l)),
    "decorator": lambda l: l.inference_mode()(lambda: (l.ones(1).is_inference(), l.is_inference_mode_enabled()))(),
    "mode_false": lambda l: _mode_false(l),
    "add_": lambda l: _made(l).add_(1),
    "view_mul_": lambda l: _made(l)[0].mul_(2),
    "setitem": lambda l: _made(l).__setitem__(0, 5.0),
    "zero_": lambda l: _made(l).zero_(),
    "copy_": lambda l: _made(l).copy_(l.zeros(2, 3)),
    "inplace_inside_mode": lambda l: _inplace_inside(l),
    "clone_inplace": lambda l: _made(l).clone().add_(1).tolist(),
    "data_inplace": lambda l: (lambda x: (x.data.add_(1), x.tolist())[1])(_made(l)),
    "saved_mul": lambda l: l.ones(2, 3, requires_grad=True) * _made(l),
    "saved_linear": lambda l: l.nn.functional.linear(_made(l), l.ones(4, 3, requires_grad=True)),
    "not_saved_add": lambda l: (l.ones(2, 3, requires_grad=True) + _made(l)).sum().backward(),
    "no_grad_use": lambda l: _no_grad_use(l),
    "requires_grad_": lambda l: _made(l).requires_grad_(),
    "parameter": lambda l: l.nn.Parameter(_made(l)),
    "parameter_no_grad": lambda l: l.nn.Parameter(_made(l), requires_grad=False).is_inference(),
}


def _flags(lib):
    with lib.inference_mode():
        x = lib.ones(2)
        inside = (x.is_inference(), lib.is_inference_mode_enabled(), lib.is_grad_enabled())
    return inside + (x.is_inference(), lib.is_inference_mode_enabled(), lib.is_grad_enabled())


def _view_of_normal(lib):
    x = lib.ones(3)
    with lib.inference_mode():
        v = x[1:]
        x.add_(1)
        return v.is_inference(), x.is_inference(), x.tolist()


def _mode_false(lib):
    with lib.inference_mode(False):
        return lib.ones(1).is_inference(), lib.is_inference_mode_enabled()


def _inplace_inside(lib):
    x = _made(lib)
    with lib.inference_mode():
        x.add_(1)
    return x.tolist()


def _no_grad_use(lib):
    w = lib.ones(2, 3, requires_grad=True)
    with lib.no_grad():
        y = w * _made(lib)
    return y.requires_grad, y.tolist()


def _outcome(lib, f):
    try:
        r = f(lib)
    except Exception as e:
        return type(e).__name__, str(e)
    return ("ok", type(r).__name__) if isinstance(r, lib.Tensor) or r is None else ("ok", r)


@pytest.mark.parametrize("name", sorted(CASES))
def test_inference_tensor_rules_match_torch(name):
    assert _outcome(cthtorch, CASES[name]) == _outcome(torch, CASES[name])


def _decorated_generators(lib):
    """What a generation loop decorated with a grad mode sees at each step (torch.utils._contextlib)."""
    G = lib.is_grad_enabled
    seen = []

    @lib.no_grad()
    def stream():
        for _ in range(2):
            got = yield G()
            seen.append((got, G()))
        return "done"

    g = stream()
    seen += [next(g), G(), g.send(5), G()]
    with pytest.raises(StopIteration) as stop:
        g.send(6)
    seen += [stop.value.value, G()]
    g = stream()
    next(g)
    with pytest.raises(ValueError):
        g.throw(ValueError("x"))
    g = stream()
    next(g)
    g.close()

    @lib.no_grad
    def bare():
        return G()

    @lib.inference_mode
    def bare_inference():
        return lib.is_inference_mode_enabled(), G(), lib.ones(1).is_inference()

    @lib.inference_mode()
    def inference_stream():
        yield lib.ones(1).is_inference(), G()

    @lib.enable_grad()
    def grad_stream():
        yield G()

    @lib.set_grad_enabled(False)
    def switched_off():
        return G()

    with lib.no_grad():
        seen += [list(grad_stream()), G()]
    with lib.inference_mode():
        with lib.inference_mode(False):
            seen += [G(), lib.is_inference_mode_enabled()]
        seen += [G(), lib.is_inference_mode_enabled()]
    seen += [bare(), bare.__name__, bare_inference(), list(inference_stream()), G(), switched_off(), G(),
             type(lib.no_grad()).__mro__[1].__name__, lib.no_grad.__module__.replace("cthtorch", "torch"),
             lib.inference_mode(False).clone().mode]
    with pytest.warns(FutureWarning, match="Decorating classes is deprecated"):
        seen.append(lib.no_grad()(type("C", (), {}))().__class__.__name__)
    return seen


def test_grad_modes_decorate_generators_and_bare_functions_as_torch():
    """@torch.no_grad() on a generator runs every step without grad (a streaming generate); @torch.no_grad and
    @torch.inference_mode also work bare; inference_mode(False) turns grad back on inside inference mode"""
    assert _decorated_generators(cthtorch) == _decorated_generators(torch)
