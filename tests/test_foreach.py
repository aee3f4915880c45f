"""torch._foreach_* over tensor lists (EMA / polyak updates, hand-written optimizer steps)
against torch: every overload's values and dtypes, in-place forms giving back the list,
autograd through the out-of-place forms, and torch's errors for bad lists."""
import numpy as np
import pytest

import cthtorch
from oracle import raises_like, require_torch, same

torch = require_torch()

SHAPES = [(3,), (2, 4), ()]


def lists(lib, seed=0, dtype="float32", n=3):
    rng = np.random.RandomState(seed)
    return [lib.tensor(np.asarray(rng.rand(*s) * 0.8 + 0.1, dtype=dtype)) for s in SHAPES[:n]]


UNARY = ["abs", "acos", "asin", "atan", "ceil", "cos", "cosh", "erf", "erfc", "exp", "expm1", "floor", "frac",
         "lgamma", "log", "log10", "log1p", "log2", "neg", "reciprocal", "round", "rsqrt", "sigmoid", "sign", "sin",
         "sinh", "sqrt", "tan", "tanh", "trunc"]


@pytest.mark.parametrize("op", UNARY)
def test_unary_forms(op):
    a, b = lists(cthtorch), lists(torch)
    ours, theirs = getattr(cthtorch, "_foreach_" + op)(a), getattr(torch, "_foreach_" + op)(b)
    assert isinstance(ours, tuple) and isinstance(theirs, tuple)
    same(ours, theirs)
    r = getattr(cthtorch, "_foreach_%s_" % op)(a)
    getattr(torch, "_foreach_%s_" % op)(b)
    assert r is a
    for x, y in zip(a, b):
        same(x, y)


def _second(lib, kind, seed=1):
    if kind == "scalar":
        return 0.75
    if kind == "scalars":
        return [0.5, -2, 3.0]
    if kind == "tensor":
        return lib.tensor(1.5)
    return lists(lib, seed)


@pytest.mark.parametrize("op,kinds", [
    ("add", ["scalar", "scalars", "list", "tensor"]), ("sub", ["scalar", "scalars", "list"]),
    ("mul", ["scalar", "scalars", "list", "tensor"]), ("div", ["scalar", "scalars", "list", "tensor"]),
    ("clamp_min", ["scalar", "scalars", "list"]), ("clamp_max", ["scalar", "scalars", "list"]),
    ("maximum", ["scalar", "scalars", "list"]), ("minimum", ["scalar", "scalars", "list"]),
    ("pow", ["scalar", "scalars", "list"])])
def test_binary_forms(op, kinds):
    for kind in kinds:
        a, b = lists(cthtorch), lists(torch)
        fo, ft = getattr(cthtorch, "_foreach_" + op), getattr(torch, "_foreach_" + op)
        same(fo(a, _second(cthtorch, kind)), ft(b, _second(torch, kind)))
        r = getattr(cthtorch, "_foreach_%s_" % op)(a, _second(cthtorch, kind))
        getattr(torch, "_foreach_%s_" % op)(b, _second(torch, kind))
        assert r is a
        for x, y in zip(a, b):
            same(x, y)


def test_alpha_int_promotion_and_scalar_base():
    a, b = lists(cthtorch), lists(torch)
    same(cthtorch._foreach_add(a, lists(cthtorch, 2), alpha=-0.5), torch._foreach_add(b, lists(torch, 2), alpha=-0.5))
    same(cthtorch._foreach_sub(a, lists(cthtorch, 2), alpha=2), torch._foreach_sub(b, lists(torch, 2), alpha=2))
    same(cthtorch._foreach_add(a, cthtorch.tensor(2.0), alpha=3), torch._foreach_add(b, torch.tensor(2.0), alpha=3))
    ia, ib = [cthtorch.arange(4)], [torch.arange(4)]
    same(cthtorch._foreach_add(ia, 1.5), torch._foreach_add(ib, 1.5))
    same(cthtorch._foreach_mul(ia, 2), torch._foreach_mul(ib, 2))
    same(cthtorch._foreach_pow(2.0, a), torch._foreach_pow(2.0, b))


@pytest.mark.parametrize("op", ["addcmul", "addcdiv"])
def test_pointwise3_forms(op):
    for value in (None, 0.3, [1.0, -2.0, 0.5], "tensor"):
        a, b = lists(cthtorch), lists(torch)
        t1o, t2o, t1t, t2t = lists(cthtorch, 1), lists(cthtorch, 2), lists(torch, 1), lists(torch, 2)
        args_o, args_t = (a, t1o, t2o), (b, t1t, t2t)
        if value == "tensor":
            args_o, args_t = args_o + (cthtorch.tensor([1.0, 2.0, -1.0]),), args_t + (torch.tensor([1.0, 2.0, -1.0]),)
        elif value is not None:
            args_o, args_t = args_o + (value,), args_t + (value,)
        same(getattr(cthtorch, "_foreach_" + op)(*args_o), getattr(torch, "_foreach_" + op)(*args_t))
        assert getattr(cthtorch, "_foreach_%s_" % op)(*args_o) is a
        getattr(torch, "_foreach_%s_" % op)(*args_t)
        for x, y in zip(a, b):
            same(x, y)


def test_lerp_norm_max_and_list_helpers():
    a, b = lists(cthtorch), lists(torch)
    for w in (0.25, [0.1, 0.5, 0.9]):
        same(cthtorch._foreach_lerp(a, lists(cthtorch, 3), w), torch._foreach_lerp(b, lists(torch, 3), w))
    same(cthtorch._foreach_lerp(a, lists(cthtorch, 3), lists(cthtorch, 4)),
         torch._foreach_lerp(b, lists(torch, 3), lists(torch, 4)))
    for ord in (2, 1, float("inf"), 3):
        same(cthtorch._foreach_norm(a, ord), torch._foreach_norm(b, ord), 1e-5)
    same(cthtorch._foreach_norm(a, dtype=cthtorch.float64), torch._foreach_norm(b, dtype=torch.float64))
    same(cthtorch._foreach_powsum(a, 3), torch._foreach_powsum(b, 3), 1e-5)
    same(cthtorch._foreach_max(a), torch._foreach_max(b))
    same(cthtorch._foreach_clone(a), torch._foreach_clone(b))
    mo, mt = [cthtorch.ones(2, 3)], [torch.ones(2, 3)]
    same(cthtorch._foreach_mm(mo, [cthtorch.ones(3, 2)]), torch._foreach_mm(mt, [torch.ones(3, 2)]))
    assert cthtorch._foreach_copy_(a, lists(cthtorch, 5)) is a
    torch._foreach_copy_(b, lists(torch, 5))
    same(tuple(a), tuple(b))
    assert cthtorch._foreach_zero_(a) is a
    assert all(float(t.abs().sum()) == 0 for t in a)


def test_ema_update_as_ema_pytorch_writes_it():
    """lucidrains' ema_pytorch / timm's ModelEmaV3: lerp_ toward the online weights, mul_/add_ polyak"""
    def run(lib):
        lib.manual_seed(0)
        online, ema = lib.nn.Linear(4, 3), lib.nn.Linear(4, 3)
        ema.load_state_dict(online.state_dict())
        opt = lib.optim.SGD(online.parameters(), lr=0.1)
        for _ in range(3):
            opt.zero_grad()
            online(lib.ones(2, 4)).pow(2).sum().backward()
            opt.step()
            with lib.no_grad():
                ep, op = list(ema.parameters()), list(online.parameters())
                lib._foreach_lerp_(ep, op, 1.0 - 0.9)
                lib._foreach_mul_(ep, 0.99)
                lib._foreach_add_(ep, op, alpha=0.01)
        return tuple(p.detach() for p in ema.parameters())
    same(run(cthtorch), run(torch))


def test_gradients_flow_through_out_of_place_forms():
    xo = [cthtorch.tensor([1.0, 2.0], requires_grad=True), cthtorch.tensor(3.0, requires_grad=True)]
    xt = [torch.tensor([1.0, 2.0], requires_grad=True), torch.tensor(3.0, requires_grad=True)]
    for lib, x in ((cthtorch, xo), (torch, xt)):
        r = lib._foreach_mul(lib._foreach_add(x, x), 2.0)
        s = sum(t.sum() for t in lib._foreach_norm(r)) + sum(t.sum() for t in lib._foreach_exp(x))
        s.backward()
    for a, b in zip(xo, xt):
        same(a.grad, b.grad, 1e-5)


def test_errors_are_torchs():
    for mk in (lambda L: L._foreach_add(lists(L), lists(L, n=1)),
               lambda L: L._foreach_add([], 1),
               lambda L: L._foreach_add(lists(L), [1.0]),
               lambda L: L._foreach_mul(lists(L), L.ones(2)),
               lambda L: L._foreach_add_([L.arange(3)], 1.5),
               lambda L: L._foreach_sub([L.ones(2, dtype=L.bool)], 1),
               lambda L: L._foreach_lerp(lists(L), lists(L, n=2), 0.5),
               lambda L: L._foreach_addcmul(lists(L), lists(L), lists(L), [1.0]),
               lambda L: L._foreach_mul_([L.ones(2, requires_grad=True)], 2.0),
               # empty tensors and packed scalars: the foreach ops' own texts
               lambda L: L._foreach_norm([L.ones(2), L.ones(0)], float("inf")),
               lambda L: L._foreach_norm([L.ones(0)], float("-inf")),
               lambda L: L._foreach_max([L.ones(2), L.ones(0)]),
               lambda L: L._foreach_addcmul([L.ones(2)], [L.ones(2)], [L.ones(2)], L.ones(1, 1)),
               lambda L: L._foreach_addcdiv([L.ones(2)], [L.ones(2)], [L.ones(2)], L.ones(2)),
               lambda L: L._foreach_addcmul([L.ones(2)], [L.ones(2)], [L.ones(2)], L.tensor(2.0))):
        raises_like(lambda: mk(cthtorch), lambda: mk(torch))
    for mk in (lambda L: L._foreach_add(lists(L), "x"), lambda L: L._foreach_add(L.ones(2), 1)):
        raises_like(lambda: mk(cthtorch), lambda: mk(torch), first_line=True)


def test_a_failed_in_place_call_changes_nothing():
    a = lists(cthtorch)
    before = [t.clone() for t in a]
    with pytest.raises(RuntimeError):
        cthtorch._foreach_add_(a, [1.0, 2.0])
    for x, y in zip(a, before):
        assert bool((x == y).all())
