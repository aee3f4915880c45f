"""torch.library against torch: a program's own ops through custom_op (with register_fake, register_autograd,
register_kernel), Library("ns", "DEF").define/.impl and torch.library.define/impl, called as
torch.ops.ns.name(...) - values, gradients, schemas and the errors a program meets."""
import numpy as np
import pytest

import cthtorch
import oracle

torch = oracle.require_torch()

_n = [0]


def _ns(tag):
    """a fresh namespace per test and library: both libraries keep ops for the process's life"""
    _n[0] += 1
    return "cttest_%s_%d" % (tag, _n[0])


def _x(lib, grad=False):
    return lib.tensor(np.linspace(-1, 2, 6).astype("float32").reshape(2, 3), requires_grad=grad)


def _custom_sin(lib, ns):
    Tensor = lib.Tensor

    @lib.library.custom_op(ns + "::mysin", mutates_args=())
    def mysin(x: Tensor, k: float = 1.0) -> Tensor:
        return x.sin() * k

    @mysin.register_fake
    def _(x, k=1.0):
        return lib.empty_like(x)

    def setup_context(ctx, inputs, output):
        x, k = inputs
        ctx.save_for_backward(x)
        ctx.k = k

    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * x.cos() * ctx.k, None

    mysin.register_autograd(backward, setup_context=setup_context)
    return mysin


def test_custom_op_values_grads_and_schema_match_torch():
    res = {}
    for lib in (torch, cthtorch):
        ns = _ns("sin")
        op = _custom_sin(lib, ns)
        x = _x(lib, True)
        y = op(x, 2.0)
        z = getattr(lib.ops, ns).mysin(x, k=3.0)
        (y.sum() + z.sum()).backward()
        meta = op(lib.empty(4, 5, device="meta"))
        schema = str(getattr(lib.ops, ns).mysin.default._schema) if lib is torch else \
            lib.library._OPS[ns + "::mysin"].schema
        res[lib] = (y.detach().numpy(), z.detach().numpy(), x.grad.numpy(), tuple(meta.shape), meta.device.type,
                    schema.replace(ns, "NS"), repr(op).replace(ns, "NS"), y.requires_grad)
    t, c = res[torch], res[cthtorch]
    for a, b in zip(t[:3], c[:3]):
        np.testing.assert_allclose(b, a, rtol=1e-6)
    assert c[3:] == t[3:]


def test_custom_op_without_autograd_formula_raises_at_backward_like_torch():
    msgs = []
    for lib in (torch, cthtorch):
        ns = _ns("noad")
        Tensor = lib.Tensor

        @lib.library.custom_op(ns + "::twice", mutates_args=())
        def twice(x: Tensor) -> Tensor:
            return x * 2

        x = _x(lib, True)
        y = twice(x)
        assert y.requires_grad
        np.testing.assert_allclose(y.detach().numpy(), _x(lib).numpy() * 2)
        with pytest.raises(RuntimeError) as e:
            y.sum().backward()
        msgs.append(str(e.value).replace(ns, "NS"))
        with lib.no_grad():
            assert not twice(x).requires_grad
    assert msgs[1] == msgs[0]


def test_library_define_impl_and_ops_call_match_torch():
    res = {}
    for lib in (torch, cthtorch):
        ns = _ns("def")
        L = lib.library.Library(ns, "DEF")
        assert L.define("scale(Tensor x, float a=2.) -> Tensor") == "scale"
        L.impl("scale", lambda x, a=2.0: x * a, "CPU")
        lib.library.define(ns + "::shift", "(Tensor x, *, float b) -> Tensor", lib=L)
        lib.library.impl(ns + "::shift", "cpu", lambda x, *, b: x + b, lib=L)
        x = _x(lib, True)
        ops = getattr(lib.ops, ns)
        y = ops.scale(x) + ops.scale(x, 3.0) + ops.shift(x, b=1.5)
        y.sum().backward()   # a Library kernel without a formula is differentiated through what it runs
        with pytest.raises(RuntimeError) as e1:
            lib.library.Library(ns, "DEF")
        with pytest.raises(AttributeError) as e2:
            ops.nothere
        with pytest.raises(RuntimeError) as e3:
            ops.scale(1)
        res[lib] = (y.detach().numpy(), x.grad.numpy(), str(e1.value).split(";")[0].replace(ns, "NS"),
                    str(e2.value).replace(ns, "NS"), str(e3.value).split("\n")[0].replace(ns, "NS"))
        L._destroy()
    t, c = res[torch], res[cthtorch]
    np.testing.assert_allclose(c[0], t[0], rtol=1e-6)
    np.testing.assert_allclose(c[1], t[1], rtol=1e-6)
    assert c[2:] == t[2:]


def test_infer_schema_matches_torch():
    import typing

    def run(lib):
        T = lib.Tensor

        def f(x: T, y: typing.List[T], z: typing.Optional[T], w: int = 3, *, s: float = 0.5) -> typing.Tuple[T, T]:
            pass

        def g(x: T, flag: bool) -> None:
            pass
        return lib.library.infer_schema(f, mutates_args=("x",)), lib.library.infer_schema(g, mutates_args=())
    assert run(cthtorch) == run(torch)


def test_destroyed_library_op_is_gone_and_a_new_definition_is_found_like_torch():
    """Library._destroy drops torch.ops.<ns>.<name> (a test fixture's library, then the same op defined again):
    the name raises AttributeError, and a new definition's kernel runs, not the destroyed one's"""
    res = {}
    for lib in (torch, cthtorch):
        ns = _ns("gone")
        L = lib.library.Library(ns, "DEF")
        L.define("f(Tensor x) -> Tensor")
        L.impl("f", lambda x: x + 1, "CPU")
        first = getattr(lib.ops, ns).f(lib.zeros(2)).tolist()
        L._destroy()
        gone = hasattr(getattr(lib.ops, ns), "f")
        L2 = lib.library.Library(ns, "DEF")
        L2.define("f(Tensor x) -> Tensor")
        L2.impl("f", lambda x: x * 0 + 5, "CPU")
        second = getattr(lib.ops, ns).f(lib.zeros(2)).tolist()
        L2._destroy()
        res[lib] = (first, gone, second)
    assert res[cthtorch] == res[torch] == ([1.0, 1.0], False, [5.0, 5.0])


def test_infer_schema_aliases_defaults_and_errors_match_torch():
    """a mutated argument is aliased by its position, "unknown" marks every Tensor, defaults print as torch's
    (1.0, "a", a dtype's bare name), and unsupported defaults / bad mutates_args raise torch's ValueErrors"""
    import typing

    def run(lib):
        T = lib.Tensor

        def f(a: int, y: T, z: typing.Optional[T], w: float = 1.0, *, s: str = "a", d: lib.dtype = lib.float64,
              b: bool = True) -> T:
            pass

        def g(n: T, unk: T) -> None:
            pass

        def h(a: T, r: typing.List[float] = (1.5, 2.0)) -> T:
            pass
        out = []
        for fn, m in ((f, ("y",)), (f, ("z",)), (g, "unknown"), (g, ("unk",)), (h, ()), (f, "x"), (f, ("q",)),
                      (f, ("a",))):
            try:
                out.append(lib.library.infer_schema(fn, mutates_args=m))
            except ValueError as e:
                out.append(str(e).split(" Got func")[0])
        return out
    assert run(cthtorch) == run(torch)


def test_custom_op_argument_errors_match_torch():
    """wrong arguments to a custom op: torch's RuntimeErrors (count, missing, unknown keyword, a str for an int,
    an int for a str) and the schema printed with its string default quoted"""
    res = {}
    for lib in (torch, cthtorch):
        ns = _ns("args")
        Tensor = lib.Tensor

        @lib.library.custom_op(ns + "::foo", mutates_args=())
        def foo(x: Tensor, n: int = 2, f: float = 1.0, b: bool = False, *, s: str = "a") -> Tensor:
            return x * n * f

        out = []
        for args, kw in (((lib.ones(2),), {"n": True}), ((lib.ones(2),), {"f": 2}), ((lib.ones(2),), {"b": 1}),
                         ((lib.ones(2),), {"n": lib.tensor(3)}), ((lib.ones(2),), {"s": 1}),
                         ((lib.ones(2),), {"n": "3"}), ((lib.ones(2),), {"n": 2.5}), ((), {}),
                         ((lib.ones(2),), {"zz": 1}), ((lib.ones(2), 1, 2.0, True, "x"), {}), ((None,), {})):
            try:
                out.append(getattr(lib.ops, ns).foo(*args, **kw).tolist())
            except Exception as e:
                # torch's pybind11 adds a line on its failed cast
                out.append((type(e).__name__, str(e).replace(ns, "NS").split("\nCast error details")[0]))
        res[lib] = out
    assert res[cthtorch] == res[torch]


def test_library_kind_and_reserved_namespace_errors_match_torch():
    def err(lib, *a):
        with pytest.raises(ValueError) as e:
            lib.library.Library(*a)
        return str(e.value)
    for args in (("cttest_kind", "BAD"), ("prim", "DEF"), ("prim", "FRAGMENT")):
        assert err(cthtorch, *args) == err(torch, *args)
