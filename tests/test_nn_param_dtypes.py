"""Which parameter dtypes the norms, the transposed convolutions and prelu take with which input dtypes: torch's
CPU kernels do not promote, so a float64 input with float32 parameters (or the reverse) is its error, not a
silently promoted result. Every pairing is compared with torch: the result dtype and values, or the error."""
import itertools

import numpy as np
import pytest

import cthtorch as ct
from oracle import require_torch

torch = require_torch()
FLOATS = ["float32", "float64", "float16", "bfloat16"]


def outcome(lib, fn):
    try:
        r = fn(lib)
    except Exception as e:   # noqa: BLE001 - the type and text are what is compared
        return type(e).__name__, str(e)
    return "ok", r


def same(fn, tol=1e-5):
    (c, t) = outcome(ct, fn), outcome(torch, fn)
    assert c[0] == t[0], (c, t)
    if c[0] != "ok":
        assert c[1] == t[1]
        return
    assert str(c[1].dtype).split(".")[-1] == str(t[1].dtype).split(".")[-1]
    np.testing.assert_allclose(c[1].detach().float().numpy(), t[1].detach().float().numpy(), rtol=tol, atol=tol)


def x_of(lib, dt, shape):
    return lib.tensor(np.random.RandomState(0).randn(*shape).astype(np.float32)).to(getattr(lib, dt))


def param(lib, dt, n, seed):
    return None if dt is None else lib.tensor(np.random.RandomState(seed).randn(n).astype(np.float32)).to(getattr(lib, dt))


@pytest.mark.parametrize("xd", FLOATS)
@pytest.mark.parametrize("wd,bd", list(itertools.product([None] + FLOATS, repeat=2)))
def test_norm_parameter_dtypes_as_torch(xd, wd, bd):
    tol = 2e-2 if "16" in xd else 1e-4
    same(lambda L: L.nn.functional.group_norm(x_of(L, xd, (2, 4, 3)), 2, param(L, wd, 4, 1), param(L, bd, 4, 2)),
         tol)
    same(lambda L: L.nn.functional.layer_norm(x_of(L, xd, (2, 3, 4)), (4,), param(L, wd, 4, 1),
                                                    param(L, bd, 4, 2)), tol)
    same(lambda L: L.nn.functional.batch_norm(x_of(L, xd, (2, 4, 3)), L.zeros(4, dtype=getattr(L, xd)),
                                                    L.ones(4, dtype=getattr(L, xd)), param(L, wd, 4, 1),
                                                    param(L, bd, 4, 2)), tol)


@pytest.mark.parametrize("dt", ["int64", "int32", "bool", "uint8", "complex64"])
def test_group_norm_of_a_non_floating_input_is_torchs_error(dt):
    same(lambda L: L.nn.functional.group_norm(L.ones(2, 4, 3, dtype=getattr(L, dt)), 2))


def test_group_norm_module_and_shape_checks():
    same(lambda L: L.nn.GroupNorm(2, 4)(x_of(L, "float64", (2, 4, 3))))
    same(lambda L: L.nn.functional.group_norm(x_of(L, "float64", (2, 4, 3)), 2, L.ones(3, dtype=L.float64)))
    same(lambda L: L.nn.functional.group_norm(x_of(L, "float32", (2, 4, 3)), 2, L.ones(4, 1)))
    same(lambda L: L.nn.functional.group_norm(x_of(L, "int64", (2, 4, 3)), 2, L.ones(4)))


def test_group_norm_of_half_input_with_float_parameters_keeps_gradients():
    def run(L):
        x = x_of(L, "bfloat16", (2, 4, 5)).requires_grad_()
        w = param(L, "float32", 4, 1).requires_grad_()
        y = L.nn.functional.group_norm(x, 2, w, None)
        (y.float() * L.arange(40.).reshape(2, 4, 5)).sum().backward()
        return L.cat([x.grad.float().reshape(-1), w.grad.reshape(-1)])
    same(run, 0.2)


@pytest.mark.parametrize("nd", [1, 2, 3])
@pytest.mark.parametrize("xd,wd,bd", [("float64", "float32", None), ("float32", "float64", None),
                                      ("float64", "float64", "float32"), ("float32", "float32", "float64"),
                                      ("float64", "float64", "complex64"), ("float32", "float32", "float32")])
def test_transposed_convolution_dtypes_as_torch(nd, xd, wd, bd):
    def run(L):
        x = x_of(L, xd, (1, 2) + (4,) * nd)
        w = x_of(L, "float32", (2, 3) + (2,) * nd).to(getattr(L, wd))
        b = None if bd is None else L.ones(3).to(getattr(L, bd))
        return getattr(L.nn.functional, "conv_transpose%dd" % nd)(x, w, b, stride=2)
    same(run)
    m = "ConvTranspose%dd" % nd
    same(lambda L: getattr(L.nn, m)(2, 3, 2)(x_of(L, "float64", (1, 2) + (4,) * nd)))


def test_conv3d_bias_of_another_dtype_is_torchs_error():
    same(lambda L: L.nn.functional.conv3d(x_of(L, "float32", (1, 2, 4, 4, 4)), L.ones(3, 2, 2, 2, 2),
                                                L.ones(3, dtype=L.float64)))
    same(lambda L: L.nn.functional.conv3d(x_of(L, "float32", (1, 2, 4, 4, 4)), L.ones(3, 2, 2, 2, 2) / 7,
                                                L.arange(3.)))


def test_transposed_convolution_bias_gradient_in_its_own_dtype():
    def run(L):
        x = x_of(L, "float32", (1, 2, 4, 4)).requires_grad_()
        b = L.ones(3, dtype=L.float64, requires_grad=True)
        y = L.nn.functional.conv_transpose2d(x, L.ones(2, 3, 2, 2), b)
        assert y.dtype == L.float32
        y.sum().backward()
        assert b.grad.dtype == L.float64
        return L.cat([x.grad.reshape(-1), b.grad.float()])
    same(run)


@pytest.mark.parametrize("xd,wd", [("float64", "float32"), ("float32", "float64"), ("float16", "float32"),
                                   ("float32", "int64"), ("int64", "int64"), ("complex64", "complex64"),
                                   ("float64", "float64"), ("bfloat16", "bfloat16")])
def test_prelu_dtypes_as_torch(xd, wd):
    tol = 1e-2 if "16" in xd else 1e-6
    same(lambda L: L.nn.functional.prelu(x_of(L, "float32", (2, 4, 3)).to(getattr(L, xd)),
                                               L.full((4,), 0.25).to(getattr(L, wd))), tol)
    same(lambda L: L.nn.functional.prelu(x_of(L, "float32", (2, 4, 3)).to(getattr(L, xd)),
                                               L.full((1,), 0.25).to(getattr(L, wd))), tol)
    if xd == "float64":
        same(lambda L: L.nn.PReLU()(x_of(L, xd, (2, 4, 3))))
