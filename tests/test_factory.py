"""Window functions (src/ATen/declarations/factory.yaml, C kernels) vs torch:
values per dtype (half/bfloat16 rounded op by op as torch's), periodic,
parameters, requires_grad and errors."""
import numpy as np
import pytest

import cthtorch as ct
import oracle
from test_binary import FLOATS, TOL, same

torch = oracle.require_torch()

WINDOWS = ["hann_window", "hamming_window", "blackman_window", "bartlett_window", "kaiser_window"]


# mantissa bits and the spacing of the smallest subnormal, per dtype
_ULP = {"float16": (10, 2.0**-24), "bfloat16": (7, 2.0**-133), "float32": (23, 2.0**-149), "float64": (52, 2.0**-1074)}


def ulps_apart(a, b, dtype):
    """How many ulps (of dtype, at b's magnitude) each a[i] is from b[i]."""
    bits, tiny = _ULP[dtype]
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    mag = np.abs(b)
    ulp = np.maximum(np.exp2(np.floor(np.log2(np.where(mag > 0, mag, 1.0))) - bits), tiny)
    return np.abs(a - b) / np.where(mag > 0, ulp, tiny)


# kaiser = i0(beta * sqrt(1 - r**2)) / i0(beta) is ill-conditioned in its argument:
# x * i1(x) / i0(x) approaches x, so with beta = 12 an ulp of rounding in the argument
# becomes up to ~12 ulps of the window. The roundings differ between builds (libmvec's
# vector exp and FMA contraction at -O3 -march=native; glibc's scalar exp, no FMA in the
# -O1 ASan build; Sleef in torch): measured 13 ulps (float32) and 40 (float64) between
# our ASan build and torch, whose own float32 window is 28 ulps off the exact one. The
# bound is 4 * beta ulps; half types round a float32 result, one ulp of theirs.
KAISER_ULPS = {"float32": 48, "float64": 48, "float16": 1, "bfloat16": 1}


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", WINDOWS)
def test_window_values(name, dtype):
    for n in (0, 1, 2, 3, 8, 33, 1000):
        for periodic in (True, False):
            a = getattr(ct, name)(n, periodic, dtype=getattr(ct, dtype))
            b = getattr(torch, name)(n, periodic, dtype=getattr(torch, dtype))
            assert str(a.dtype) == str(b.dtype) and tuple(a.shape) == tuple(b.shape)
            if name == "kaiser_window":
                assert ulps_apart(a.tolist(), b.tolist(), dtype).max(initial=0) <= KAISER_ULPS[dtype], (n, periodic)
            elif dtype in ("float16", "bfloat16"):
                same(a, b)    # op by op as torch's: exact
            else:   # values in [0, 1]: an ulp or two of cos near 1
                np.testing.assert_allclose(a.tolist(), b.tolist(), rtol=0, atol=3e-7 if dtype == "float32" else 3e-16)


def test_window_defaults_params_and_grad():
    same(ct.hann_window(10), torch.hann_window(10), 4e-7)
    same(ct.hamming_window(12, False, 0.6, 0.3), torch.hamming_window(12, False, 0.6, 0.3), 4e-7)
    same(ct.hamming_window(12, True, 0.5, 0.5, dtype=ct.float64),
         torch.hamming_window(12, True, 0.5, 0.5, dtype=torch.float64), 1e-14)
    same(ct.kaiser_window(9, False, 3.0), torch.kaiser_window(9, False, 3.0), 1e-6)
    same(ct.kaiser_window(20, True, 30.0, dtype=ct.float64), torch.kaiser_window(20, True, 30.0, dtype=torch.float64), 1e-13)
    ct.set_default_dtype(ct.float64)
    try:
        assert ct.blackman_window(5).dtype == ct.float64
    finally:
        ct.set_default_dtype(ct.float32)
    w = ct.bartlett_window(7, requires_grad=True)
    assert w.requires_grad and w.is_leaf and w.grad_fn is None
    (w * 2).sum().backward()
    assert w.grad.tolist() == [2.0] * 7
    assert not ct.hann_window(4, device="cpu", layout=ct.strided).requires_grad


@pytest.mark.parametrize("name", WINDOWS)
def test_window_errors(name):
    oracle.raises_like(lambda: getattr(ct, name)(-1), lambda: getattr(torch, name)(-1))
    for dt in ("int64", "int32", "bool"):
        oracle.raises_like(lambda: getattr(ct, name)(4, dtype=getattr(ct, dt)),
                           lambda: getattr(torch, name)(4, dtype=getattr(torch, dt)))
