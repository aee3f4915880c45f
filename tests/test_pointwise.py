"""Pointwise ops vs torch: values, dtypes, promotion, variants (function/method/in-place/out=), gradients."""
import numpy as np
import pytest

import cthtorch as ct
import oracle

torch = oracle.require_torch()

RS = np.random.RandomState(0)
XF = (RS.rand(3, 4) * 4 - 2).astype(np.float32)
YF = (RS.rand(3, 4) * 4 - 2).astype(np.float32)
POS = (RS.rand(3, 4) + 0.1).astype(np.float32)
UNIT = (RS.rand(3, 4) * 1.8 - 0.9).astype(np.float32)


def same(a, b, tol=1e-5):
    assert str(a.dtype) == str(b.dtype), (a.dtype, b.dtype)
    assert tuple(a.shape) == tuple(b.shape)
    an = np.asarray(a.float().tolist() if a.dtype == ct.bfloat16 else a.tolist(), dtype=np.float64)
    bn = np.asarray(b.float().tolist() if b.dtype == torch.bfloat16 else b.tolist(), dtype=np.float64)
    np.testing.assert_allclose(an, bn, rtol=tol, atol=tol, equal_nan=True)


UNARY = {
    "exp": XF, "exp2": XF, "expm1": XF, "log": POS, "log2": POS, "log10": POS, "log1p": POS, "sin": XF, "cos": XF,
    "tan": UNIT, "asin": UNIT, "acos": UNIT, "atan": XF, "sinh": XF, "cosh": XF, "tanh": XF, "asinh": XF,
    "acosh": POS + 1, "atanh": UNIT, "sqrt": POS, "rsqrt": POS, "sigmoid": XF, "erf": XF, "erfc": XF,
    "erfinv": UNIT, "lgamma": POS, "digamma": POS, "reciprocal": POS, "ceil": XF, "floor": XF, "round": XF,
    "trunc": XF, "frac": XF, "neg": XF, "abs": XF, "sign": XF, "relu": XF, "square": XF, "sgn": XF,
}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_float(name):
    x = UNARY[name]
    same(getattr(ct, name)(ct.tensor(x)), getattr(torch, name)(torch.tensor(x)), tol=2e-5)
    same(getattr(ct.tensor(x).double(), name)(), getattr(torch.tensor(x).double(), name)(), tol=1e-10)
    a, b = ct.tensor(x), torch.tensor(x)
    if name not in ("digamma",):
        getattr(a, name + "_")()
        getattr(b, name + "_")()
        same(a, b, tol=2e-5)
    o = ct.empty(0)
    getattr(ct, name)(ct.tensor(x), out=o)
    same(o, getattr(torch, name)(torch.tensor(x)), tol=2e-5)


@pytest.mark.parametrize("name", ["exp", "sin", "sqrt", "sigmoid", "log1p", "floor", "abs", "neg", "sign"])
@pytest.mark.parametrize("dt", ["int32", "int64", "uint8", "bool", "float16", "bfloat16"])
def test_unary_dtype_rules(name, dt):
    x = np.array([[0, 1, 2], [3, 1, 0]])
    try:
        want = getattr(torch, name)(torch.tensor(x).to(getattr(torch, dt)))
    except (RuntimeError, NotImplementedError) as e:
        with pytest.raises(type(e)):
            getattr(ct, name)(ct.tensor(x).to(getattr(ct, dt)))
        return
    same(getattr(ct, name)(ct.tensor(x).to(getattr(ct, dt))), want, tol=1e-2)


BINARY = ["add", "sub", "mul", "div", "remainder", "fmod", "pow", "atan2", "hypot", "maximum", "minimum", "fmax",
          "fmin", "eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_xor", "copysign", "xlogy",
          "floor_divide"]


@pytest.mark.parametrize("name", BINARY)
def test_binary_float_and_broadcast(name):
    x, y = XF, YF[:1]
    if name in ("pow", "xlogy"):
        x, y = POS, YF[:1]
    same(getattr(ct, name)(ct.tensor(x), ct.tensor(y)), getattr(torch, name)(torch.tensor(x), torch.tensor(y)), 1e-5)
    same(getattr(ct.tensor(x), name)(ct.tensor(y).t() if False else ct.tensor(y)),
         getattr(torch.tensor(x), name)(torch.tensor(y)), 1e-5)


PROMO = [("int8", 1), ("int8", 1.5), ("uint8", -1), ("int32", True), ("bool", 2), ("float16", 2.5),
         ("int64", "int32"), ("uint8", "int8"), ("float16", "bfloat16"), ("bool", "bool"), ("int32", "float64")]


@pytest.mark.parametrize("left,right", PROMO)
@pytest.mark.parametrize("op", ["add", "mul", "div", "maximum", "eq", "floor_divide", "remainder"])
def test_type_promotion(left, right, op):
    a = np.array([3, 2, 1])
    ta, tb = ct.tensor(a).to(getattr(ct, left)), torch.tensor(a).to(getattr(torch, left))
    ra = getattr(ct, right) if isinstance(right, str) else right
    rb = getattr(torch, right) if isinstance(right, str) else right
    oa = ct.tensor([1, 2, 3]).to(ra) if isinstance(right, str) else ra
    ob = torch.tensor([1, 2, 3]).to(rb) if isinstance(right, str) else rb
    try:
        want = getattr(torch, op)(tb, ob)
    except TypeError:
        return   # torch's binding refuses a Python number here; cthtorch accepts it (a superset)
    except (RuntimeError, NotImplementedError) as e:
        with pytest.raises(type(e)):
            getattr(ct, op)(ta, oa)
        return
    same(getattr(ct, op)(ta, oa), want, tol=1e-3)


def test_result_type_and_division_rules():
    assert ct.result_type(ct.tensor([1], dtype=ct.int8), 1) == ct.int8
    assert ct.result_type(ct.tensor([1], dtype=ct.int8), 1.5) == ct.float32
    assert ct.result_type(ct.tensor(1.0, dtype=ct.float64), ct.tensor([1], dtype=ct.int32)) == ct.float64
    assert (ct.tensor([1, 2]) / 2).dtype == ct.float32
    assert (ct.tensor([5, -5]) // 2).tolist() == [2, -3]
    assert (ct.tensor([5, -5]) % 3).tolist() == [2, 1]
    assert ct.div(ct.tensor([5, -5]), 2, rounding_mode="trunc").tolist() == [2, -2]
    assert ct.div(ct.tensor([5.0, -5.0]), 2, rounding_mode="floor").tolist() == [2.0, -3.0]
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        ct.tensor([1]) // 0


@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8"])
@pytest.mark.parametrize("op", ["floordiv", "remainder", "fmod", "trunc"])
def test_integer_division_by_zero_in_a_parallel_loop(op, dtype):
    """The zero sits deep in a tensor big enough to be split across OpenMP
    threads: the worker that meets it flags the error, the caller raises
    torch's error after the loop, and the flag does not leak into the next op."""
    def run(L):
        a = L.arange(1, 200001).to(getattr(L, dtype))
        b = L.ones(200000, dtype=getattr(L, dtype))
        b[150001] = 0
        f = {"floordiv": lambda: a // b, "remainder": lambda: a % b, "fmod": lambda: L.fmod(a, b),
             "trunc": lambda: L.div(a, b, rounding_mode="trunc")}[op]
        with pytest.raises(RuntimeError) as e:
            f()
        b[150001] = 1
        return str(e.value), f()[150001].item()
    threads = ct.get_num_threads()
    ct.set_num_threads(2)
    try:
        got = run(ct)
    finally:
        ct.set_num_threads(threads)
    assert got == run(torch)


def test_python_operators_and_reflected():
    a = ct.tensor([1.0, 2.0, 4.0])
    assert (2 - a).tolist() == [1.0, 0.0, -2.0]
    assert (2 / a).tolist() == [2.0, 1.0, 0.5]
    assert (2 ** a).tolist() == [2.0, 4.0, 16.0]
    assert (a ** 2).tolist() == [1.0, 4.0, 16.0]
    assert (-a).tolist() == [-1.0, -2.0, -4.0] and abs(-a).tolist() == a.tolist()
    i = ct.tensor([1, 2, 12])
    assert (i & 2).tolist() == [0, 2, 0] and (i | 1).tolist() == [1, 3, 13] and (i ^ 3).tolist() == [2, 1, 15]
    assert (i << 1).tolist() == [2, 4, 24] and (i >> 1).tolist() == [0, 1, 6] and (~i).tolist() == [-2, -3, -13]
    assert (7 // i).tolist() == [7, 3, 0] and (7 % i).tolist() == [0, 1, 7]
    b = a.clone()
    b += 1
    b *= 2
    b -= 1
    b /= 2
    assert b.tolist() == [1.5, 2.5, 4.5]
    assert (a == 2).tolist() == [False, True, False] and (a != 2).tolist() == [True, False, True]
    assert (a > 1).tolist() == [False, True, True] and (1 < a).tolist() == [False, True, True]
    assert (a == None) is False  # noqa: E711


def test_inplace_and_out_rules():
    x = ct.ones(3, dtype=ct.int32)
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Int"):
        x.mul_(1.5)
    o = ct.empty(3, dtype=ct.int64)
    with pytest.raises(RuntimeError, match="can't be cast"):
        ct.add(ct.ones(3), 1, out=o)
    o = ct.empty(2)
    with pytest.warns(UserWarning, match="was resized"):
        ct.add(ct.ones(3), 1, out=o)
    assert o.shape == (3,)
    z = ct.arange(5.0)
    with pytest.raises(RuntimeError, match="some elements of the input tensor and the written-to tensor refer to a single memory location"):
        z[1:].add_(z[:-1])
    w = ct.arange(4.0)
    w.add_(w)
    assert w.tolist() == [0.0, 2.0, 4.0, 6.0]
    v = ct.arange(4.0)
    ct.mul(v, v, out=v)
    assert v.tolist() == [0.0, 1.0, 4.0, 9.0]
    t = ct.arange(6.0).view(2, 3).t()
    r = t + 1
    assert r.stride() == torch.arange(6.0).view(2, 3).t().add(1).stride()


def test_clamp_lerp_addc_nan_to_num_isclose():
    x = ct.tensor(XF)
    tx = torch.tensor(XF)
    same(x.clamp(-1, 1), tx.clamp(-1, 1))
    same(x.clamp(min=0.5), tx.clamp(min=0.5))
    same(ct.clip(x, max=0), torch.clip(tx, max=0))
    same(x.clamp(ct.tensor(YF), ct.tensor(YF) + 1), tx.clamp(torch.tensor(YF), torch.tensor(YF) + 1))
    same(ct.tensor([1, 5, 9]).clamp(2, 6), torch.tensor([1, 5, 9]).clamp(2, 6))
    same(ct.tensor([1, 5, 9]).clamp(2.5), torch.tensor([1, 5, 9]).clamp(2.5))
    with pytest.raises(RuntimeError, match="At least one of 'min' or 'max' must not be None"):
        x.clamp()
    same(ct.lerp(x, ct.tensor(YF), 0.3), torch.lerp(tx, torch.tensor(YF), 0.3))
    same(ct.lerp(x, ct.tensor(YF), ct.tensor(POS)), torch.lerp(tx, torch.tensor(YF), torch.tensor(POS)))
    same(ct.addcmul(x, ct.tensor(YF), ct.tensor(POS), value=0.5), torch.addcmul(tx, torch.tensor(YF), torch.tensor(POS), value=0.5))
    same(ct.addcdiv(x, ct.tensor(YF), ct.tensor(POS), value=2), torch.addcdiv(tx, torch.tensor(YF), torch.tensor(POS), value=2))
    n = np.array([np.nan, np.inf, -np.inf, 1.0], dtype=np.float32)
    same(ct.nan_to_num(ct.tensor(n)), torch.nan_to_num(torch.tensor(n)))
    same(ct.nan_to_num(ct.tensor(n), 0.5, 9.0, -9.0), torch.nan_to_num(torch.tensor(n), 0.5, 9.0, -9.0))
    c = np.array([1.0, np.nan, np.inf, 1.0001], dtype=np.float32)
    d = np.array([1.0, np.nan, np.inf, 1.0], dtype=np.float32)
    same(ct.isclose(ct.tensor(c), ct.tensor(d)), torch.isclose(torch.tensor(c), torch.tensor(d)))
    same(ct.isclose(ct.tensor(c), ct.tensor(d), equal_nan=True, rtol=1e-3), torch.isclose(torch.tensor(c), torch.tensor(d), equal_nan=True, rtol=1e-3))
    assert ct.allclose(ct.ones(3), ct.ones(3) + 1e-9) and not ct.allclose(ct.ones(2), ct.zeros(2))
    assert not ct.allclose(ct.tensor(d), ct.tensor(d)) and ct.allclose(ct.tensor(d), ct.tensor(d), equal_nan=True)
    assert ct.equal(ct.ones(2), ct.ones(2)) and not ct.equal(ct.ones(2), ct.ones(3))
    same(ct.logit(ct.tensor(POS / 2)), torch.logit(torch.tensor(POS / 2)))
    same(ct.logit(ct.tensor(POS / 2), 0.2), torch.logit(torch.tensor(POS / 2), 0.2))
    same(ct.round(x * 100, decimals=-1), torch.round(tx * 100, decimals=-1))
    same(ct.round(x, decimals=2), torch.round(tx, decimals=2))
    same(ct.where(x > 0, x, ct.tensor(0.0)), torch.where(tx > 0, tx, torch.tensor(0.0)))
    same(ct.where(x > 0, 1.0, 0.0), torch.where(tx > 0, 1.0, 0.0))


GRAD_CASES = [
    ("clamp", lambda L, a, b: a.clamp(-0.5, 0.5)), ("clamp_t", lambda L, a, b: a.clamp(b, b + 1)),
    ("lerp", lambda L, a, b: L.lerp(a, b, 0.3)), ("lerp_t", lambda L, a, b: L.lerp(a, b, b.sigmoid())),
    ("addcmul", lambda L, a, b: L.addcmul(a, a, b, value=0.7)), ("addcdiv", lambda L, a, b: L.addcdiv(a, a, b.exp(), value=2)),
    ("xlogy", lambda L, a, b: L.xlogy(a, b.exp())), ("nan_to_num", lambda L, a, b: L.nan_to_num(a * b)),
    ("logit", lambda L, a, b: L.logit(a.sigmoid(), 0.3)), ("pow_t", lambda L, a, b: L.pow(a.exp(), b)),
    ("maximum", lambda L, a, b: L.maximum(a, b)), ("atan2", lambda L, a, b: L.atan2(a, b)),
    ("hypot", lambda L, a, b: L.hypot(a, b)), ("remainder", lambda L, a, b: L.remainder(a, b.abs() + 1)),
    ("square", lambda L, a, b: L.square(a)), ("erfinv", lambda L, a, b: L.erfinv(a.tanh() * 0.9)),
    ("where", lambda L, a, b: L.where(a > b, a * 2, b * 3)),
    ("unary_mix", lambda L, a, b: (a.sin() * b.cos() + a.tanh() - b.atan() + a.expm1() * b.sigmoid() + a.exp2())),
    ("unary_mix2", lambda L, a, b: (a.exp().log1p() + b.abs().add(1).log2() + a.abs().add(1).rsqrt() + a.erf() - b.erfc())),
]


@pytest.mark.parametrize("name,f", GRAD_CASES, ids=[c[0] for c in GRAD_CASES])
def test_gradients_vs_torch(name, f):
    grads = []
    for L in (ct, torch):
        a = L.tensor(XF.astype(np.float64), requires_grad=True)
        b = L.tensor(YF.astype(np.float64), requires_grad=True)
        f(L, a, b).sum().backward()
        grads.append([np.asarray(t.grad.tolist()) if t.grad is not None else None for t in (a, b)])
    for g1, g2 in zip(*grads):
        if g2 is None:
            assert g1 is None or not np.any(g1)
        else:
            np.testing.assert_allclose(g1, g2, rtol=1e-7, atol=1e-9)


def test_threads_setting():
    n = ct.get_num_threads()
    ct.set_num_threads(1)
    assert ct.get_num_threads() == 1
    big = ct.ones(1 << 20)
    assert (big + big).sum().item() == 2 * (1 << 20)
    ct.set_num_threads(n)
    assert ct.get_num_threads() == n


def test_pow_scalar_special_exponents_match_torch():
    """x ** 2, 3, -1, -2 (products and reciprocals, as torch's pow_tensor_scalar)
    equal torch's exactly in float32/float64; 0.5/-0.5 go through sqrt"""
    torch = oracle.require_torch()
    rs = np.random.RandomState(0)
    vals = np.concatenate([rs.randn(999) * 10, [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-30, 1e30]])
    for dt in ("float32", "float64"):
        for e in (1, 1.0, 2, 3, -1, -2, 0.5, -0.5):
            mine = (ct.tensor(vals).to(getattr(ct, dt)) ** e).numpy()
            ref = (torch.tensor(vals).to(getattr(torch, dt)) ** e).numpy()
            if e in (0.5, -0.5):   # torch's CPU sqrt is not correctly rounded here
                np.testing.assert_allclose(mine, ref, rtol=3e-7 if dt == "float32" else 1e-15)
            else:
                np.testing.assert_array_equal(mine, ref)


def test_pow_scalar_general_exponents_match_torch():
    """other exponents run on the vector pow (libmvec): within an ulp or two of
    torch's (Sleef), with torch's NaN/inf/zero cases exactly"""
    torch = oracle.require_torch()
    rs = np.random.RandomState(1)
    vals = np.concatenate([rs.rand(999) * 20, -rs.rand(20), [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 1e-30]])
    for dt in ("float32", "float64"):
        for e in (1.5, 0.75, -1.3, 2.5, 0.1, 0.0, 7.0):
            mine = (ct.tensor(vals).to(getattr(ct, dt)) ** e).numpy()
            ref = (torch.tensor(vals).to(getattr(torch, dt)) ** e).numpy()
            assert mine.dtype == ref.dtype
            np.testing.assert_array_equal(np.isnan(mine), np.isnan(ref))
            np.testing.assert_allclose(mine, ref, rtol=3e-7 if dt == "float32" else 1e-15, atol=0)


@pytest.mark.parametrize("dt", ["float32", "float64", "bfloat16"])
def test_pow_number_exponent_gradient_matches_torch(dt):
    """x ** e with e a Python number takes the backward's short path (no
    mask, no conj, x itself for e == 2): torch's gradients, zeros for e == 0,
    and the same dtype; a 0-d tensor exponent still takes the general one"""
    torch = oracle.require_torch()
    vals = np.array([-2.5, -1.0, -0.0, 0.0, 0.3, 1.0, 2.0, 7.5, np.inf, np.nan], dtype=np.float32)
    pos = np.abs(vals)
    for e in (0, 0.0, 1, 2, 2.0, 3, -1, 2.5, 0.5):
        x = pos if e in (2.5, 0.5) else vals
        a = ct.tensor(x).to(getattr(ct, dt)).requires_grad_()
        b = torch.tensor(x).to(getattr(torch, dt)).requires_grad_()
        g = np.linspace(-1, 2, len(x)).astype(np.float32)
        (a ** e).backward(ct.tensor(g).to(a.dtype))
        (b ** e).backward(torch.tensor(g).to(b.dtype))
        assert a.grad.dtype == getattr(ct, dt)
        same(a.grad.float(), b.grad.float(), tol=1e-2 if dt == "bfloat16" else 1e-6)
    a = ct.tensor([0.0, 2.0], requires_grad=True)
    (a ** ct.tensor(0.0)).sum().backward()
    assert a.grad.tolist() == [0.0, 0.0]


@pytest.mark.parametrize("kw", [dict(min=0.2, max=0.8), dict(min=0.2), dict(max=0.8), dict(min=float("nan")),
                                dict(max=float("nan")), dict(min=0.9, max=0.1)])
def test_clamp_contiguous_and_strided_match_torch(kw):
    torch = oracle.require_torch()
    vals = np.array([np.nan, -np.inf, np.inf, 0.1, 0.5, 0.9, -0.0, 0.2, 0.8] * 3, dtype=np.float32)
    for dt in ("float32", "float64", "float16"):
        for step in (1, 2):
            mine = ct.tensor(vals).to(getattr(ct, dt))[::step].clamp(**kw).double().numpy()
            ref = torch.tensor(vals).to(getattr(torch, dt))[::step].clamp(**kw).double().numpy()
            np.testing.assert_array_equal(mine, ref)


def test_half_conversions_bit_exact_with_torch():
    """float <-> float16 (F16C where the CPU has it): round-to-nearest-even,
    subnormals, overflow to inf, signed zeros, as torch's bits"""
    torch = oracle.require_torch()
    rs = np.random.RandomState(3)
    ties = (np.arange(1, 200, dtype=np.float32) * 2 + 1) * np.float32(2 ** -11)   # halfway between halves
    vals = np.concatenate([rs.randn(5000) * 100, rs.randn(500) * 1e-6, ties, [np.inf, -np.inf, 0.0, -0.0, 65504, 65519,
                           65520, 1e5, 6e-8, 5.9e-8, 2.98e-8, 1e-9]]).astype(np.float32)
    mine, ref = ct.tensor(vals).half(), torch.tensor(vals).half()
    np.testing.assert_array_equal(mine.numpy().view(np.uint16), ref.numpy().view(np.uint16))
    np.testing.assert_array_equal(mine.float().numpy(), ref.float().numpy())
    assert np.isnan(ct.tensor([np.nan]).half().float().numpy()).all()


@pytest.mark.parametrize("dt", ["float32", "float64", "float16", "bfloat16", "int64", "int32", "uint8"])
def test_ternary_ops_contiguous_and_strided_bits_like_torch(dt):
    # lerp / addcmul / addcdiv: the contiguous branches (third operand contiguous or one value) and
    # the byte-stride branch give torch's bits; 1000 elements take the vectorized body and a tail
    rs = np.random.RandomState(7)
    a, b, c = ((rs.rand(3, 1000) * 8 - 4) for _ in range(3))
    c = np.where(np.abs(c) < 0.5, 1.5, c)
    if dt.startswith(("int", "uint")):
        a, b, c = (np.abs(v).astype(dt) + 1 for v in (a, b, c))
    else:
        a, b, c = (v.astype("float32") for v in (a, b, c))
    for L in (ct, torch):
        L.A, L.B, L.C = (L.tensor(v).to(getattr(L, dt)) for v in (a, b, c))
    cases = [lambda L: L.addcmul(L.A, L.B, L.C, value=2), lambda L: L.addcmul(L.A, L.B, L.C[:, :1]),
             lambda L: L.addcmul(L.A[:, ::2], L.B[:, 1::2], L.C[:, ::2], value=3),
             lambda L: L.A.t().addcmul(L.B.t(), L.C.t())]
    if not dt.startswith(("int", "uint")):
        cases += [lambda L: L.lerp(L.A, L.B, 0.3), lambda L: L.lerp(L.A, L.B, 0.7),
                  lambda L: L.lerp(L.A, L.B, L.C / 8), lambda L: L.lerp(L.A[:, ::3], L.B[:, ::3], L.C[:, ::3] / 8),
                  lambda L: L.addcdiv(L.A, L.B, L.C, value=0.5), lambda L: L.addcdiv(L.A, L.B[:1], L.C[:, 5:6]),
                  lambda L: L.A.clone().lerp_(L.B, 0.25)]
    for f in cases:
        x, y = f(ct), f(torch)
        assert str(x.dtype) == str(y.dtype) and tuple(x.shape) == tuple(y.shape)
        xv = x.float().numpy() if dt == "bfloat16" else x.numpy()
        yv = y.float().numpy() if dt == "bfloat16" else y.numpy()
        np.testing.assert_array_equal(xv, yv)


@pytest.mark.parametrize("dt", ["float16", "bfloat16"])
def test_lerp_number_weight_half_in_place_like_torch(dt):
    """a Python-number weight stays float for float16/bfloat16 (torch's math type) in place too, and an in-place
    lerp whose broadcast shape is not self's raises torch's error"""
    a, b = (np.random.RandomState(s).randn(3, 40).astype("float32") for s in (0, 1))
    res = []
    for L in (ct, torch):
        x, y = L.tensor(a).to(getattr(L, dt)), L.tensor(b).to(getattr(L, dt))
        x2 = x.clone()
        x2.lerp_(y, 0.3)
        res.append((x2.float().numpy(), L.lerp(x[:, ::3], y[0, ::3], 0.7).float().numpy()))
        with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
            x[0].clone().lerp_(y, 0.3)
    for got, want in zip(*res):
        np.testing.assert_array_equal(got, want)


def test_clamp_min_max_take_tensor_bounds_and_a_0dim_bound_keeps_its_gradient():
    """x.clamp_min(t) / clamp_max(t) broadcast a tensor bound (torch's .Tensor overloads, which
    _foreach_clamp_min's list form uses); a 0-dim tensor bound of clamp/clip/clamp_min reaches the
    Tensor overload as in torch (ClampBackward0, a gradient for the bound), a number the Scalar one"""
    def run(lib):
        x = lib.tensor(XF, requires_grad=True)
        lo = lib.tensor(YF[:1], requires_grad=True)
        b = lib.tensor(0.3, requires_grad=True)
        outs = [x.clamp_min(lo), lib.clamp_max(x, lo), lib.clamp(x, b), x.clip(max=b), lib.clamp_min(x, b),
                lib.clamp_max(x, 0.5)]
        names = [o.grad_fn.name() for o in outs]
        sum(o.sum() * (i + 1) for i, o in enumerate(outs)).backward()
        y = lib.tensor(XF)
        y.clamp_max_(lib.tensor(YF))
        z = lib.clamp_min(lib.arange(4), lib.tensor(1.5))
        o = lib.empty(3, 4)
        lib.clamp_min(lib.tensor(XF), lib.tensor(YF), out=o)
        return outs, names, (x.grad, lo.grad, b.grad), y, z, o
    ours, theirs = run(ct), run(torch)
    assert ours[1] == theirs[1]
    for a, b in zip(ours[0] + list(ours[2]) + list(ours[3:]), theirs[0] + list(theirs[2]) + list(theirs[3:])):
        same(a.detach(), b.detach())
