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


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", WINDOWS)
def test_window_values(name, dtype):
    for n in (0, 1, 2, 3, 8, 33, 1000):
        for periodic in (True, False):
            a = getattr(ct, name)(n, periodic, dtype=getattr(ct, dtype))
            b = getattr(torch, name)(n, periodic, dtype=getattr(torch, dtype))
            if dtype in ("float16", "bfloat16"):
                same(a, b)    # op by op as torch's: exact
            else:   # values in [0, 1]: an ulp or two of cos near 1
                assert str(a.dtype) == str(b.dtype) and tuple(a.shape) == tuple(b.shape)
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
