"""Complex unary math torch has (sigmoid, tan, the hyperbolic and inverse functions, log2/log10/log1p,
expm1/exp2, rsqrt) with torch's conjugate-Wirtinger gradients, the complex predicates, and the ops torch
refuses on complex (sort/topk/argmax, nansum) in its words. Ops without a complex kernel here raise
NotImplementedError rather than dropping the imaginary part. Compared with torch 2.13."""
import numpy as np
import pytest

import cthtorch as ct
from oracle import require_torch

torch = require_torch()

Z = (np.arange(1, 13).reshape(3, 4) / 7 + 1j * np.arange(12, 0, -1).reshape(3, 4) / 5 - 0.8).astype(np.complex128)
UNARY = ["sigmoid", "tan", "sinh", "cosh", "asin", "acos", "atan", "asinh", "acosh", "atanh", "log10", "log2",
         "log1p", "expm1", "exp2", "rsqrt", "sin", "cos", "tanh"]


def outcome(L, fn):
    try:
        r = fn(L)
    except Exception as e:   # noqa: BLE001 - type and text are compared
        return type(e).__name__, str(e)
    return str(r.dtype).split(".")[-1], np.asarray(r.detach().tolist())


@pytest.mark.parametrize("dtype,tol", [("complex64", 2e-5), ("complex128", 1e-12)])
@pytest.mark.parametrize("name", UNARY)
def test_complex_unary_values_and_gradients(name, dtype, tol):
    def run(L):
        x = L.tensor(Z).to(getattr(L, dtype)).requires_grad_()
        y = getattr(x, name)()
        w = L.tensor(np.cos(np.arange(12)).reshape(3, 4) + 0.5j).to(y.dtype)
        (y * w).real.sum().backward()
        return y, x.grad
    (cy, cg), (ty, tg) = run(ct), run(torch)
    assert str(cy.dtype).split(".")[-1] == str(ty.dtype).split(".")[-1]
    np.testing.assert_allclose(np.asarray(cy.detach().tolist()), np.asarray(ty.detach().tolist()), rtol=tol, atol=tol)
    np.testing.assert_allclose(np.asarray(cg.tolist()), np.asarray(tg.tolist()), rtol=tol * 10, atol=tol * 10)


@pytest.mark.parametrize("name", UNARY[:16])
def test_complex_unary_in_place_and_out(name):
    for L in (ct, torch):
        x = L.tensor(Z)
        a = getattr(x.clone(), name + "_")()
        o = L.empty(3, 4, dtype=L.complex128)
        getattr(L, name)(x, out=o)
        np.testing.assert_allclose(np.asarray(a.tolist()), np.asarray(getattr(x, name)().tolist()))
        np.testing.assert_allclose(np.asarray(o.tolist()), np.asarray(a.tolist()))


@pytest.mark.parametrize("name", ["isnan", "isinf", "isfinite"])
def test_complex_predicates(name):
    v = np.array([1 + 1j, complex(np.nan, 0), complex(0, np.nan), complex(np.inf, 1), complex(1, -np.inf), 0j])
    for dt in ("complex64", "complex128"):
        c, t = (outcome(L, lambda L: getattr(L.tensor(v).to(getattr(L, dt)), name)()) for L in (ct, torch))
        assert c[0] == t[0] == "bool"
        np.testing.assert_array_equal(c[1], t[1])


REFUSED = {
    "sort": lambda L, x: x.sort(), "argsort": lambda L, x: x.argsort(), "msort": lambda L, x: L.msort(x),
    "topk": lambda L, x: x.topk(1), "argmax": lambda L, x: x.argmax(), "argmin": lambda L, x: x.argmin(1),
    "nansum": lambda L, x: x.nansum(), "kthvalue": lambda L, x: x.kthvalue(1), "median": lambda L, x: x.median(),
    "mode": lambda L, x: x.mode(), "unique": lambda L, x: L.unique(x), "relu": lambda L, x: x.relu(),
    "xlogy": lambda L, x: L.xlogy(x, x), "layer_norm": lambda L, x: L.nn.functional.layer_norm(x, (4,)),
    "avg_pool1d": lambda L, x: L.nn.functional.avg_pool1d(x[None], 2),
    "avg_pool2d": lambda L, x: L.nn.functional.avg_pool2d(x[None], 2),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_ops_torch_refuses_on_complex_refuse_in_its_words(name):
    c, t = (outcome(L, lambda L: REFUSED[name](L, L.tensor(Z).to(L.complex64))) for L in (ct, torch))
    assert c == t


@pytest.mark.parametrize("name", ["sinc", "i0"])
def test_ops_without_a_complex_kernel_do_not_drop_the_imaginary_part(name):
    with pytest.raises(NotImplementedError, match="not implemented for 'ComplexDouble'"):
        getattr(ct.tensor(Z), name)()
