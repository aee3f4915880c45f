"""Binary pointwise C ops (src/ATen/declarations/binary.yaml) vs torch: gcd, lcm,
heaviside, nextafter, ldexp, logaddexp, logaddexp2 over dtypes, broadcasting,
non-contiguous inputs, variants (method, in-place, out=), errors and gradients."""
import numpy as np
import pytest

import cthtorch as ct
import oracle

torch = oracle.require_torch()

RS = np.random.RandomState(0)
INTS = ["uint8", "int8", "int16", "int32", "int64"]
FLOATS = ["float32", "float64", "float16", "bfloat16"]
# relative tolerance per dtype: a few ulps
TOL = {"float64": 1e-14, "float32": 4e-7, "float16": 2e-3, "bfloat16": 1.6e-2}


def both(x, dtype):
    """the same values as a cthtorch and a torch tensor of dtype"""
    return ct.tensor(x).to(getattr(ct, dtype)), torch.tensor(x).to(getattr(torch, dtype))


def vals(t):
    return np.asarray(t.double().tolist() if t.is_floating_point() else t.tolist())


def same(a, b, tol=0.0, atol=None):
    assert str(a.dtype) == str(b.dtype), (a.dtype, b.dtype)
    assert tuple(a.shape) == tuple(b.shape)
    if tol == 0.0:
        np.testing.assert_array_equal(vals(a), vals(b))
    else:
        np.testing.assert_allclose(vals(a), vals(b), rtol=tol, atol=tol * 1e-3 if atol is None else atol, equal_nan=True)


def ints(dtype, shape):
    lo = 0 if dtype == "uint8" else -100
    return RS.randint(lo, 100, size=shape)


@pytest.mark.parametrize("dtype", INTS)
@pytest.mark.parametrize("name", ["gcd", "lcm"])
def test_gcd_lcm_int_dtypes(name, dtype):
    a, b = ints(dtype, (4, 50)), ints(dtype, (4, 50))
    a[0, :5] = 0
    b[0, 3:8] = 0
    (ca, ta), (cb, tb) = both(a, dtype), both(b, dtype)
    same(getattr(ct, name)(ca, cb), getattr(torch, name)(ta, tb))
    same(getattr(ca, name)(cb[:1]), getattr(ta, name)(tb[:1]))            # broadcast
    same(getattr(ct, name)(ca.t(), cb.t()), getattr(torch, name)(ta.t(), tb.t()))   # strided


def test_gcd_lcm_edges_and_promotion():
    a = ct.tensor([-128, 100, -4, 0], dtype=ct.int8)
    b = ct.tensor([0, 3, 6, 0], dtype=ct.int8)
    ta, tb = torch.tensor(a.tolist(), dtype=torch.int8), torch.tensor(b.tolist(), dtype=torch.int8)
    same(ct.gcd(a, b), torch.gcd(ta, tb))
    same(ct.lcm(a, b), torch.lcm(ta, tb))    # 300 wraps in int8 as torch's
    same(ct.gcd(a, b.to(ct.int16)), torch.gcd(ta, tb.to(torch.int16)))
    big = [-2 ** 63, 2 ** 62, 12]
    same(ct.gcd(ct.tensor(big), ct.tensor([0, 2 ** 40, 18])), torch.gcd(torch.tensor(big), torch.tensor([0, 2 ** 40, 18])))


@pytest.mark.parametrize("name", ["gcd", "lcm"])
def test_gcd_lcm_variants(name):
    a, b = ints("int64", (3, 4)), ints("int64", (3, 4))
    ca, cb = ct.tensor(a), ct.tensor(b)
    ta, tb = torch.tensor(a), torch.tensor(b)
    o = ct.empty(0, dtype=ct.int64)
    r = getattr(ct, name)(ca, cb, out=o)
    assert r is o
    same(o, getattr(torch, name)(ta, tb))
    x = ca.clone()
    assert getattr(x, name + "_")(cb) is x
    same(x, getattr(torch, name)(ta, tb))
    x = ca.clone()
    getattr(ct, name + "_")(x, cb)
    same(x, getattr(torch, name)(ta, tb))


@pytest.mark.parametrize("dtype", ["float32", "bool"])
@pytest.mark.parametrize("name", ["gcd", "lcm"])
def test_gcd_lcm_reject_non_integers(name, dtype):
    oracle.raises_like(lambda: getattr(ct, name)(ct.ones(2, dtype=getattr(ct, dtype)), ct.ones(2, dtype=getattr(ct, dtype))),
                       lambda: getattr(torch, name)(torch.ones(2, dtype=getattr(torch, dtype)),
                                                    torch.ones(2, dtype=getattr(torch, dtype))))


@pytest.mark.parametrize("dtype", ["bool"] + INTS + FLOATS)
def test_heaviside_dtypes(dtype):
    x = RS.randint(-2, 3, size=(3, 7)).astype(np.float64)
    v = RS.randint(0, 5, size=(7,)).astype(np.float64)
    (cx, tx), (cv, tv) = both(x, dtype), both(v, dtype)
    same(ct.heaviside(cx, cv), torch.heaviside(tx, tv))
    same(cx.heaviside(cv[:1]), tx.heaviside(tv[:1]))
    y = cx.clone()
    y.heaviside_(cv)
    same(y, torch.heaviside(tx, tv))


def test_heaviside_nan_errors_and_no_derivative():
    x = [float("nan"), 0.0, -0.0, 2.0, -float("inf")]
    same(ct.heaviside(ct.tensor(x), ct.tensor(0.5)), torch.heaviside(torch.tensor(x), torch.tensor(0.5)))
    oracle.raises_like(lambda: ct.heaviside(ct.ones(2), ct.ones(2, dtype=ct.float64)),
                       lambda: torch.heaviside(torch.ones(2), torch.ones(2, dtype=torch.float64)))
    oracle.raises_like(lambda: ct.heaviside(ct.ones(2, dtype=ct.int64), ct.tensor(1.0)),
                       lambda: torch.heaviside(torch.ones(2, dtype=torch.int64), torch.tensor(1.0)))
    for L in (ct, torch):
        x = L.randn(3, requires_grad=True)
        r = L.heaviside(x, L.tensor(0.5))
        assert r.requires_grad
        with pytest.raises(RuntimeError, match="derivative for aten::heaviside is not implemented"):
            r.sum().backward()


@pytest.mark.parametrize("dtype", FLOATS)
def test_nextafter_bits(dtype):
    x = np.concatenate([RS.randn(40) * 10, [0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 1e-40, 65504.0]])
    y = np.concatenate([RS.randn(40) * 10, [1.0, 1.0, 1.0, 2.0, 0.0, 0.0, 1.0, 0.0, np.inf]])
    y[:5] = x[:5]  # equal values return themselves
    (cx, tx), (cy, ty) = both(x, dtype), both(y, dtype)
    same(ct.nextafter(cx, cy), torch.nextafter(tx, ty))
    same(cx.nextafter(cy[-1:]), tx.nextafter(ty[-1:]))
    z = cx.clone()
    z.nextafter_(cy)
    same(z, torch.nextafter(tx, ty))


def test_nextafter_promotion_errors_grad():
    same(ct.nextafter(ct.ones(2), ct.zeros(2, dtype=ct.float64)), torch.nextafter(torch.ones(2), torch.zeros(2, dtype=torch.float64)))
    oracle.raises_like(lambda: ct.nextafter(ct.tensor([1]), ct.tensor([2])),
                       lambda: torch.nextafter(torch.tensor([1]), torch.tensor([2])))
    res = []
    for L in (ct, torch):
        x = L.tensor([1.0, -2.0, 3.0], dtype=L.float64, requires_grad=True)
        o = L.tensor([0.0, 0.0, 5.0], dtype=L.float64, requires_grad=True)
        L.nextafter(x, o).sum().backward()
        res.append((x.grad.tolist(), o.grad.tolist()))
    assert res[0] == res[1]


LDEXP_CASES = [("float32", "int64"), ("int32", "int32"), ("float16", "int64"), ("float16", "float32"),
               ("float64", "int32"), ("bfloat16", "int8"), ("float32", "float32"), ("int64", "float64")]


@pytest.mark.parametrize("dt", LDEXP_CASES)
def test_ldexp_dtypes(dt):
    x = RS.randint(-50, 50, size=(3, 8)).astype(np.float64) / (8 if dt[0].startswith(("float", "bf")) else 1)
    e = RS.randint(-10, 10, size=(8,)).astype(np.float64)
    if not dt[1].startswith("int"):
        e = e + 0.3
    (cx, tx), (ce, te) = both(x, dt[0]), both(e, dt[1])
    r = ct.ldexp(cx, ce)
    same(r, torch.ldexp(tx, te), TOL[str(r.dtype).split(".")[1]])
    same(cx.ldexp(ce[:1]), tx.ldexp(te[:1]), TOL[str(r.dtype).split(".")[1]])


def test_ldexp_variants_errors_grad():
    x, e = ct.tensor([1.5, -2.0, 3.0]), ct.tensor([2, -1, 0])
    y = x.clone()
    assert y.ldexp_(e) is y
    same(y, torch.ldexp(torch.tensor([1.5, -2.0, 3.0]), torch.tensor([2, -1, 0])))
    o = ct.empty(3)
    assert ct.ldexp(x, e, out=o) is o
    same(o, y)
    oracle.raises_like(lambda: ct.ones(2, dtype=ct.int64).ldexp_(ct.ones(2, dtype=ct.int64)),
                       lambda: torch.ones(2, dtype=torch.int64).ldexp_(torch.ones(2, dtype=torch.int64)))
    a = ct.randn(3, 4, dtype=ct.float64, requires_grad=True)
    b = ct.randn(4, dtype=ct.float64, requires_grad=True)
    assert ct.autograd.gradcheck(ct.ldexp, (a, b))
    assert ct.autograd.gradgradcheck(ct.ldexp, (a, b))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", ["logaddexp", "logaddexp2"])
def test_logaddexp_dtypes(name, dtype):
    x = np.concatenate([RS.randn(60) * 5, [np.inf, -np.inf, np.inf, np.nan, 1000.0, -1000.0, 0.0]])
    y = np.concatenate([RS.randn(60) * 5, [np.inf, -np.inf, -np.inf, 1.0, 999.0, 3.0, 0.0]])
    (cx, tx), (cy, ty) = both(x, dtype), both(y, dtype)
    # a result near 0 is max(a, b) plus a log term of about -max: an ulp of the inputs, absolutely
    at = 10 * TOL[dtype]
    same(getattr(ct, name)(cx, cy), getattr(torch, name)(tx, ty), TOL[dtype], at)
    same(getattr(cx, name)(cy[:1]), getattr(tx, name)(ty[:1]), TOL[dtype], at)
    cx2, tx2 = both(RS.randn(5, 6), dtype)
    same(getattr(ct, name)(cx2.t(), cx2[:, 0]), getattr(torch, name)(tx2.t(), tx2[:, 0]), TOL[dtype], at)


@pytest.mark.parametrize("name", ["logaddexp", "logaddexp2"])
def test_logaddexp_promotion_errors_grad(name):
    same(getattr(ct, name)(ct.tensor([1.0]), ct.tensor([2])), getattr(torch, name)(torch.tensor([1.0]), torch.tensor([2])), 1e-6)
    for dt in ("int64", "bool"):
        oracle.raises_like(lambda: getattr(ct, name)(ct.ones(2, dtype=getattr(ct, dt)), ct.ones(2, dtype=getattr(ct, dt))),
                           lambda: getattr(torch, name)(torch.ones(2, dtype=getattr(torch, dt)),
                                                        torch.ones(2, dtype=getattr(torch, dt))))
    o = ct.empty(2)
    assert getattr(ct, name)(ct.zeros(2), ct.ones(2), out=o) is o
    same(o, getattr(torch, name)(torch.zeros(2), torch.ones(2)), 1e-6)
    a = ct.randn(3, 4, dtype=ct.float64, requires_grad=True)
    b = ct.randn(4, dtype=ct.float64, requires_grad=True)
    assert ct.autograd.gradcheck(getattr(ct, name), (a, b))
    assert ct.autograd.gradgradcheck(getattr(ct, name), (a, b))


# ---- igamma / igammac (special.gammainc / gammaincc): the C kernel of src/TH/THIncompleteGamma.h
# float64: torch's asymptotic series for large a near x is good to ~2e-9 (ours to ~3e-13, checked
# against mpmath below)
IGAMMA_TOL = {"float64": 5e-9, "float32": 2e-6, "float16": 2e-3, "bfloat16": 1.6e-2}


def igamma_args():
    # both sides of x = a + 1 (series / continued fraction), small and large a, and torch's edge values
    a = np.concatenate([RS.uniform(0.01, 3, 60), RS.uniform(3, 200, 40), [0.0, 0.0, 1.0, np.inf, np.inf, 1.0, np.nan,
                                                                          2.0, 0.5, 1.0, 50.0, 1e-3]])
    x = np.concatenate([RS.uniform(0, 6, 60), RS.uniform(0, 300, 40), [0.0, 1.0, -1.0, 1.0, np.inf, np.inf, 1.0,
                                                                       0.0, 0.0, 1e-30, 49.5, 1e3]])
    return a, x


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", ["igamma", "igammac"])
def test_igamma_values(name, dtype):
    a, x = igamma_args()
    (ca, ta), (cx, tx) = both(a, dtype), both(x, dtype)
    same(getattr(ct, name)(ca, cx), getattr(torch, name)(ta, tx), IGAMMA_TOL[dtype], atol=IGAMMA_TOL[dtype])
    special = {"igamma": "gammainc", "igammac": "gammaincc"}[name]
    same(getattr(ct.special, special)(ca, cx), getattr(torch.special, special)(ta, tx), IGAMMA_TOL[dtype],
         atol=IGAMMA_TOL[dtype])


def test_igamma_variants_broadcast_promotion_errors():
    a = RS.uniform(0.1, 4, (3, 1))
    ca, ta = ct.tensor(a), torch.tensor(a)
    xs = RS.uniform(0, 5, (4, 2))
    cx, tx = ct.tensor(xs).t(), torch.tensor(xs).t()      # non-contiguous
    same(ct.igamma(ca, cx[:1]), torch.igamma(ta, tx[:1]), 1e-12)
    same(ca.igammac(cx[:1]), ta.igammac(tx[:1]), 1e-12)
    c2, t2 = ca.clone().expand(3, 4).contiguous(), ta.clone().expand(3, 4).contiguous()
    c2.igamma_(cx[:1]), t2.igamma_(tx[:1])
    same(c2, t2, 1e-12)
    co, to = ct.empty(0, dtype=ct.float64), torch.empty(0, dtype=torch.float64)
    ct.igammac(ca, cx[:1], out=co), torch.igammac(ta, tx[:1], out=to)
    same(co, to, 1e-12)
    # float32 with float64 promotes; an int tensor with a float one computes in the float dtype
    same(ct.igamma(ct.tensor([1.0, 2.0]), ct.tensor([2.0, 0.5], dtype=ct.float64)),
         torch.igamma(torch.tensor([1.0, 2.0]), torch.tensor([2.0, 0.5], dtype=torch.float64)), 1e-12)
    same(ct.igamma(ct.tensor([1, 2]), ct.tensor([2.0, 0.5])), torch.igamma(torch.tensor([1, 2]), torch.tensor([2.0, 0.5])),
         2e-6)
    oracle.raises_like(lambda: ct.igamma(ct.tensor([1, 2]), ct.tensor([2, 1])),
                       lambda: torch.igamma(torch.tensor([1, 2]), torch.tensor([2, 1])))


def test_igamma_gradients():
    a = ct.tensor(RS.uniform(0.5, 3, 5))
    x = ct.tensor(RS.uniform(0.2, 4, 5), requires_grad=True)
    for name in ("igamma", "igammac"):
        f = lambda v, name=name: getattr(ct, name)(a, v)   # noqa: E731
        assert ct.autograd.gradcheck(f, (x,))
        assert ct.autograd.gradgradcheck(f, (x,))
        tx = torch.tensor(x.tolist(), dtype=torch.float64, requires_grad=True)
        g, = ct.autograd.grad(f(x).sum(), x)
        tg, = torch.autograd.grad(getattr(torch, name)(torch.tensor(a.tolist(), dtype=torch.float64), tx).sum(), tx)
        same(g, tg, 1e-12)
    assert type(ct.special.gammainc(a, x).grad_fn).__name__ == type(
        torch.special.gammainc(torch.tensor([1.0]), torch.tensor([1.0], requires_grad=True)).grad_fn).__name__
    for L in (ct, torch):
        s = L.tensor([1.0, 2.0], requires_grad=True)
        for name in ("igamma", "igammac"):
            with pytest.raises(NotImplementedError) as e:
                getattr(L, name)(s, L.tensor([1.0, 2.0])).sum().backward()
            assert str(e.value) == "the derivative for '%s: input' is not implemented." % name


def test_igamma_accuracy_against_mpmath():
    import mpmath     # installed with torch (sympy's dependency)
    mpmath.mp.dps = 30
    rs = np.random.RandomState(1)
    a = np.concatenate([rs.uniform(0.05, 3, 100), rs.uniform(3, 300, 200)])
    x = a * rs.uniform(0.3, 1.7, a.size)
    p = ct.igamma(ct.tensor(a), ct.tensor(x)).numpy()
    q = ct.igammac(ct.tensor(a), ct.tensor(x)).numpy()
    rp = np.array([float(mpmath.gammainc(ai, 0, xi, regularized=True)) for ai, xi in zip(a, x)])
    rq = np.array([float(mpmath.gammainc(ai, xi, mpmath.inf, regularized=True)) for ai, xi in zip(a, x)])
    np.testing.assert_allclose(p, rp, rtol=1e-11, atol=1e-300)
    np.testing.assert_allclose(q, rq, rtol=1e-11, atol=1e-300)


def test_floor_divide_records_a_not_implemented_node_as_torch_does():
    # torch: the result requires grad (grad_fn NotImplemented) and backward raises
    for op in (lambda x: x // 2, lambda x: x.floor_divide(2), lambda x: ct.floor_divide(x, x.detach() + 1)):
        x = ct.arange(1., 5., requires_grad=True)
        r = op(x)
        assert r.requires_grad and type(r.grad_fn).__name__ == "NotImplemented"
        with pytest.raises(RuntimeError, match="derivative for aten::floor_divide is not implemented"):
            r.sum().backward()
    y = ct.arange(1., 5.).requires_grad_()
    z = y * 1
    z //= 2
    assert type(z.grad_fn).__name__ == "NotImplemented"
    assert not (ct.arange(4) // 2).requires_grad


def test_remainder_grad_of_other_matches_torch_and_differentiates_again():
    # its formula divides with rounding_mode="floor" (zero gradient), not floor_divide
    a = np.array([5.5, -3.25, 7.0, 2.5])
    b = np.array([2.0, 1.5, -3.0, 0.75])
    outs = []
    for lib in (ct, torch):
        x = lib.tensor(a, requires_grad=True)
        y = lib.tensor(b, requires_grad=True)
        g, = lib.autograd.grad(x.remainder(y).sum(), y, create_graph=True)
        gg, = lib.autograd.grad((g * g).sum(), x)
        outs.append((g.tolist(), gg.tolist()))
    assert outs[0] == outs[1]


# torch takes a Python number as the first argument of add/sub/mul/div (its numbers-as-tensors
# list) and of the ops with a Scalar-self overload (pow, remainder, xlogy, bitwise, float_power);
# the number is a wrapped 0-d tensor, so the tensor's dtype wins
NUMBER_FIRST = ["add", "sub", "mul", "div", "divide", "multiply", "subtract", "true_divide", "floor_divide",
                "remainder", "pow", "float_power", "xlogy", "bitwise_and", "bitwise_or", "bitwise_xor",
                "bitwise_left_shift", "bitwise_right_shift"]


@pytest.mark.parametrize("name", NUMBER_FIRST)
@pytest.mark.parametrize("dtype", ["int64", "float32", "int16"])
@pytest.mark.parametrize("number", [2, 2.5])
def test_a_number_first_is_a_wrapped_scalar(name, dtype, number):
    a, b = both([1, 2, 3], dtype)
    try:
        want = getattr(torch, name)(number, b)
    except Exception as e:   # a float with a bitwise op, an int tensor's float shift ...
        with pytest.raises(type(e)):
            getattr(ct, name)(number, a)
        return
    same(getattr(ct, name)(number, a), want, TOL.get(str(want.dtype).split(".")[1], 0.0))


def test_number_first_gradient_and_refusals():
    x = ct.tensor([0.5, 1.5], requires_grad=True)
    ct.pow(2.0, x).sum().backward()
    xt = torch.tensor([0.5, 1.5], requires_grad=True)
    torch.pow(2.0, xt).sum().backward()
    np.testing.assert_allclose(x.grad.tolist(), xt.grad.tolist(), rtol=1e-6)
    # ops with no Scalar-self overload still refuse a number first, as torch's
    for name in ("atan2", "maximum", "fmod", "hypot"):
        with pytest.raises(TypeError):
            getattr(torch, name)(2, xt.detach())
        with pytest.raises(TypeError):
            getattr(ct, name)(2, x.detach())


@pytest.mark.parametrize("dtype", ["int64", "float32", "bool"])
def test_a_numpy_scalar_on_the_left_stays_a_tensor(dtype):
    # numpy defers to the tensor's reflected operator (Tensor.__array_priority__), so np.float64 * tensor is
    # a tensor of torch's dtype, not an ndarray made through __array__ (whisper's sinusoids: np.log(..) * arange)
    a, b = both([0, 1, 2], dtype)
    for number in (np.float64(2.5), np.float32(2.0), np.int64(3)):
        for op in ("*", "+", "-", "/", "<", "==", "**", "//", "%"):
            env = {"n": number}
            try:
                want = eval("n %s t" % op, dict(env, t=b))
            except Exception as e:   # bool - bool, ...
                with pytest.raises(type(e)):
                    eval("n %s t" % op, dict(env, t=a))
                continue
            got = eval("n %s t" % op, dict(env, t=a))
            assert isinstance(got, ct.Tensor), (number, op)
            same(got, want, 1e-6)
        with pytest.raises(TypeError):   # a number has no matmul, as with torch
            number @ a


_OPERATORS = ("+", "-", "*", "/", "//", "%", "**", "@", "==", "!=", "<", "<=", ">", ">=", "&", "|", "^", "<<", ">>")


def _operator_outcome(lib, tensor_dtype, operand, op, tensor_left):
    import warnings
    t = lib.tensor([[1, 2], [3, 4]], dtype=getattr(lib, tensor_dtype))
    expr = "t %s o" % op if tensor_left else "o %s t" % op
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # torch's __array_wrap__ has numpy 2's deprecated signature
        try:
            r = eval(expr, {"t": t, "o": operand})
        except Exception as e:  # noqa: BLE001 - the exception type is what is compared
            return type(e).__name__
    if isinstance(r, lib.Tensor):
        return "tensor", str(r.dtype).split(".")[1], repr(r.tolist())   # repr: nan compares equal
    return type(r).__name__, r


@pytest.mark.parametrize("tensor_dtype", ["float32", "int64"])
@pytest.mark.parametrize("operand", ["array_f64", "array_i32", "array_bool", "array_0d", "np_float64", "np_float32",
                                     "np_int64", "np_bool"])
def test_numpy_operands_of_every_operator_as_torch(tensor_dtype, operand):
    """tensor op ndarray leaves the array to numpy (its ufunc, the result a tensor through __array_wrap__, a bool one
    uint8), ndarray op tensor is a TypeError, == takes the array as a tensor; numpy scalars are numbers (a numpy bool
    a float). Every operator on either side, as torch's."""
    o = {"array_f64": np.array([[1., 2.], [2., 1.]]), "array_i32": np.array([[1, 2], [2, 1]], dtype=np.int32),
         "array_bool": np.array([[True, False], [False, True]]), "array_0d": np.array(2.0),
         "np_float64": np.float64(2), "np_float32": np.float32(2), "np_int64": np.int64(2),
         "np_bool": np.bool_(True)}[operand]
    for op in _OPERATORS:
        for left in (True, False):
            ours = _operator_outcome(ct, tensor_dtype, o, op, left)
            theirs = _operator_outcome(torch, tensor_dtype, o, op, left)
            assert ours == theirs, (op, left, ours, theirs)


def test_unrelated_subclasses_in_an_operator_raise_pythons_type_error():
    """every __torch_function__ declines (neither type is the other's subclass): the operator is NotImplemented on
    both sides and Python raises its TypeError, as torch's operators do; the function names the dispatch failure"""
    def run(lib):
        class A(lib.Tensor):
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                return super().__torch_function__(func, types, args, kwargs)

        class C(lib.Tensor):
            pass
        a, c = lib.ones(1).as_subclass(A), lib.ones(1).as_subclass(C)
        out = []
        for f in (lambda: a + c, lambda: c * a, lambda: lib.add(a, c)):
            with pytest.raises(TypeError) as e:
                f()
            out.append(str(e.value).splitlines()[0])
        return out
    assert run(ct) == run(torch)


def test_atan2_gradients_like_torch():
    """atan2's fused pair of gradients (FormulasBinary.c): broadcast, one side only, 0-d, float32/float64, twice"""
    rs = np.random.RandomState(0)
    for sa, sb, dt in [((3, 4), (3, 4), np.float64), ((3, 1), (1, 4), np.float32), ((5,), (), np.float64)]:
        a, b = np.asarray(rs.randn(*sa)).astype(dt), np.asarray(rs.randn(*sb)).astype(dt)
        for ra, rb in ((True, True), (True, False), (False, True)):
            got = []
            for lib in (ct, torch):
                x, y = lib.tensor(a, requires_grad=ra), lib.tensor(b, requires_grad=rb)
                out = lib.atan2(x, y)
                out.backward(lib.ones_like(out) * 0.7)
                got.append(([None if t.grad is None else t.grad.numpy() for t in (x, y)], out.grad_fn.name()))
            assert got[0][1] == got[1][1]
            for u, v in zip(got[0][0], got[1][0]):
                assert (u is None) == (v is None)
                if u is not None:
                    np.testing.assert_allclose(u, v, rtol=1e-5 if dt == np.float32 else 1e-12,
                                               atol=1e-6 if dt == np.float32 else 0)
    x, y = ct.tensor(rs.randn(3, 4), requires_grad=True), ct.tensor(rs.randn(3, 4), requires_grad=True)
    assert ct.autograd.gradgradcheck(ct.atan2, (x, y))
    assert ct.autograd.gradgradcheck(ct.arctan2, (x, y))


def test_atan2_gradients_have_torchs_bits():
    """torch's steps (1 / (a*a + b*b), then grad * b * recip, grad * -a * recip): an fma in the denominator or a
    division by it moved about half the gradients by an ulp"""
    rs = np.random.RandomState(5)
    for dt in (np.float32, np.float64):
        a, b, g = (rs.randn(4096).astype(dt) for _ in range(3))
        got = []
        for lib in (ct, torch):
            x, y = lib.tensor(a, requires_grad=True), lib.tensor(b[:1], requires_grad=True)
            lib.atan2(x, y).backward(lib.tensor(g))
            got.append((x.grad.numpy(), y.grad.numpy()))
        np.testing.assert_array_equal(got[0][0], got[1][0])
        # other's gradient is a sum over the broadcast: its order is the reduction's, compare closely
        np.testing.assert_allclose(got[0][1], got[1][1], rtol=1e-5 if dt == np.float32 else 1e-12)
        x, y = ct.tensor(a, requires_grad=True), ct.tensor(b, requires_grad=True)
        xt, yt = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
        ct.atan2(x, y).backward(ct.tensor(g))
        torch.atan2(xt, yt).backward(torch.tensor(g))
        np.testing.assert_array_equal(x.grad.numpy(), xt.grad.numpy())
        np.testing.assert_array_equal(y.grad.numpy(), yt.grad.numpy())


def test_atan2_float32_vector_kernel_within_an_ulp_of_torch():
    """float32 atan2 runs THVecMath.c's AVX2 kernel (double atan of min/max, then the quadrant): every
    quadrant, |y| beside |x| at all scales, signed zeros, infinities and NaN in blocks of 8 and tails,
    broadcast sides; each result within 1 ulp of torch's, the special values equal, and the rounded double
    libm answer (numpy's float64 arctan2) matched exactly in over 99.9% of elements"""
    rs = np.random.RandomState(11)
    n = 20011   # not a multiple of 8: the tail
    y = (rs.randn(n) * 10.0 ** rs.randint(-30, 30, n)).astype(np.float32)
    x = (rs.randn(n) * 10.0 ** rs.randint(-30, 30, n)).astype(np.float32)
    x[::7] = y[::7] * np.float32(1.0000001)   # near the diagonal, where min/max is about 1
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 1e-45, -3e38], np.float32)
    sy, sx = np.meshgrid(special, special)
    y = np.concatenate([y, sy.ravel()])
    x = np.concatenate([x, sx.ravel()])
    got = ct.atan2(ct.from_numpy(y), ct.from_numpy(x)).numpy()
    want = torch.atan2(torch.from_numpy(y), torch.from_numpy(x)).numpy()
    assert np.array_equal(np.isnan(got), np.isnan(want))
    ok = ~np.isnan(want)
    ulps = np.abs(got[ok].view(np.int32).astype(np.int64) - want[ok].view(np.int32).astype(np.int64))
    assert ulps.max() <= 1, ulps.max()
    np.testing.assert_array_equal(np.signbit(got[ok]), np.signbit(want[ok]))
    exact = np.arctan2(y.astype(np.float64), x.astype(np.float64)).astype(np.float32)
    assert np.mean(got[ok] == exact[ok]) > 0.999
    assert np.array_equal(got[-81:], exact[-81:], equal_nan=True)   # the specials: libm's answers
    # broadcast sides (stride-0 operands) and a strided one (the scalar loop), against torch
    cy, cx, ty, tx = ct.from_numpy(y), ct.from_numpy(x), torch.from_numpy(y), torch.from_numpy(x)
    for f in (lambda a, b: (a[:1000], b[:1]), lambda a, b: (a[:1], b[:1000]), lambda a, b: (a[:2000:2], b[:1000]),
              lambda a, b: (a[:1000].reshape(10, 100), b[:10].reshape(10, 1))):
        got = ct.atan2(*f(cy, cx)).numpy()
        want = torch.atan2(*f(ty, tx)).numpy()
        ulps = np.abs(got.view(np.int32).astype(np.int64) - want.view(np.int32).astype(np.int64))
        assert got.shape == want.shape and ulps.max() <= 1
