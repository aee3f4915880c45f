"""Module full backward hooks and pre-hooks against PyTorch: the gradients a
hook sees are the module's own (not those of other consumers of its input),
pre-hooks can replace grad_output, hooks can replace grad_input, and a module
whose inputs need no gradient fires at its outputs."""
import warnings

import pytest

import cthtorch as ct
import oracle

torch = oracle.require_torch()


def _r(t):
    return None if t is None else round(float(t.sum()), 4)


def _shared_input(L):
    L.manual_seed(0)
    log = []
    lin = L.nn.Linear(3, 2)
    lin.register_full_backward_hook(lambda m, gi, go: log.append(([_r(g) for g in gi], [_r(g) for g in go])))
    x = L.ones(4, 3, requires_grad=True)
    h = x * 2
    (lin(h).sum() + (h * 3).sum()).backward()
    return log, _r(x.grad)


def _two_in_two_out(L):
    L.manual_seed(0)

    class Two(L.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = L.nn.Linear(3, 2)

        def forward(self, x, y):
            return self.a(x) * y, (x * 2).sum(1)
    m = Two()
    log = []
    m.register_full_backward_pre_hook(lambda mod, go: log.append(("pre", [_r(g) for g in go])) or (go[0] * 2, go[1]))
    m.register_full_backward_hook(lambda mod, gi, go: log.append(("bw", [_r(g) for g in gi], [_r(g) for g in go])))
    x = L.ones(4, 3, requires_grad=True)
    o1, o2 = m(x, L.full((4, 2), 3.0))
    (o1.sum() + 5 * o2.sum()).backward()
    return log, _r(x.grad), _r(m.a.weight.grad)


def _replace_grad_input(L):
    L.manual_seed(0)
    seq = L.nn.Sequential(L.nn.Linear(3, 3), L.nn.ReLU(), L.nn.Linear(3, 1))
    seq[2].register_full_backward_hook(lambda m, gi, go: (gi[0] * 0.5,))
    x = L.ones(2, 3, requires_grad=True)
    seq(x * 1).sum().backward()
    return _r(x.grad), _r(seq[0].weight.grad)


def _inputs_without_grad(L):
    log = []
    lin = L.nn.Linear(3, 1)
    lin.register_full_backward_hook(lambda m, gi, go: log.append(([_r(g) for g in gi], [_r(g) for g in go])))
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        lin(L.ones(2, 3)).sum().backward()
    return log, any("no inputs require gradients" in str(x.message) for x in w)


@pytest.mark.parametrize("case", [_shared_input, _two_in_two_out, _replace_grad_input, _inputs_without_grad])
def test_backward_hooks_match_torch(case):
    assert case(ct) == case(torch)


def test_hook_handles_remove():
    lin = ct.nn.Linear(2, 2)
    calls = []
    h1 = lin.register_full_backward_hook(lambda m, gi, go: calls.append(1))
    h2 = lin.register_full_backward_pre_hook(lambda m, go: calls.append(2))
    lin(ct.ones(1, 2, requires_grad=True)).sum().backward()
    assert calls == [2, 1]
    h1.remove()
    h2.remove()
    lin(ct.ones(1, 2, requires_grad=True)).sum().backward()
    assert calls == [2, 1]


def _non_full(L):
    """the deprecated register_backward_hook: it hooks the node that made the output (grad_input is that
    node's), gives torch's FutureWarnings, can replace grad_input (guided backprop on ReLU), and refuses
    to mix with full hooks on one module"""
    L.manual_seed(0)
    out = []
    for mod in (L.nn.Sequential(L.nn.Linear(3, 4), L.nn.ReLU()), L.nn.ReLU(), L.nn.Conv2d(1, 2, 3)):
        seen = []
        h = mod.register_backward_hook(lambda m, gi, go: seen.append(
            ([None if t is None else tuple(t.shape) for t in gi], [_r(t) for t in go])))
        x = L.randn(2, 1, 5, 5, requires_grad=True) if isinstance(mod, L.nn.Conv2d) else L.randn(4, 3, requires_grad=True)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            y = mod(x)
        (y * L.arange(y.numel()).view_as(y)).sum().backward()
        out.append(([(c.category, str(c.message)) for c in w], seen, mod._is_full_backward_hook))
        with pytest.raises(RuntimeError) as e:
            mod.register_full_backward_hook(lambda *a: None)
        out.append(str(e.value))
        h.remove()
    relu = L.nn.ReLU()
    relu.register_backward_hook(lambda m, gi, go: (L.clamp(gi[0], min=0.0),))
    x = L.tensor([1.0, -2.0, 3.0, 0.5], requires_grad=True)
    (relu(x * 2) * L.tensor([1.0, -1.0, -2.0, 3.0])).sum().backward()
    out.append(x.grad.tolist())
    return out


def test_non_full_backward_hook_as_torchs():
    assert _non_full(ct) == _non_full(torch)


def _non_full_beside_pre_hook(L):
    """a non-full hook still fires when the module also has a full backward pre-hook (torch's _call_impl
    hooks the output's node whether or not it also set up the full hooks' wrapper)"""
    lin = L.nn.Linear(3, 2)
    calls = []
    lin.register_full_backward_pre_hook(lambda m, go: calls.append(("pre", [tuple(g.shape) for g in go])))
    lin.register_backward_hook(lambda m, gi, go: calls.append(
        ("non-full", [None if t is None else tuple(t.shape) for t in gi], [tuple(t.shape) for t in go])))
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        y = lin(L.ones(4, 3, requires_grad=True))
    y.sum().backward()
    return calls, [(c.category, str(c.message)) for c in w]


def test_non_full_hook_beside_a_full_pre_hook_fires_as_torchs():
    assert _non_full_beside_pre_hook(ct) == _non_full_beside_pre_hook(torch)
