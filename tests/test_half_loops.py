"""float16 elementwise loops and sums vs torch: the contiguous branches convert blocks of
TH_CHUNK (256) elements to float with F16C, compute, and convert back (src/TH/THLoops.h), and
float16/bfloat16 row sums go through float32's blocked sum. Sizes straddle the 8-wide vector
and the 256-element chunk; operands are contiguous, 0-d/broadcast, in place and mixed with
non-finite values."""
import numpy as np
import pytest

import cthtorch as ct
import oracle

torch = oracle.require_torch()

SIZES = [1, 7, 8, 9, 255, 256, 257, 1000]


def pair(n, seed, dtype="float16", scale=3.0):
    x = np.random.RandomState(seed).randn(n).astype(np.float32) * scale
    if n > 5:
        x[[1, 3, 5]] = [np.inf, -np.inf, np.nan]
    return ct.tensor(x).to(getattr(ct, dtype)), torch.tensor(x).to(getattr(torch, dtype))


def same_bits(a, b):
    assert str(a.dtype) == str(b.dtype) and tuple(a.shape) == tuple(b.shape)
    if a.dtype == ct.bool:
        assert a.tolist() == b.tolist()
        return
    av, bv = a.float().numpy(), b.float().numpy()
    np.testing.assert_array_equal(av, bv)


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("op", ["neg", "abs", "relu", "floor", "sqrt", "reciprocal"])
def test_unary_exact(n, op):
    # one float op then one rounding to half: bit-equal to torch
    a, b = pair(n, 0)
    same_bits(getattr(a, op)(), getattr(b, op)())


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("op", ["exp", "sigmoid", "tanh"])
def test_unary_transcendental(n, op):
    a, b = pair(n, 1, scale=1.0)
    np.testing.assert_allclose(getattr(a, op)().float().numpy(), getattr(b, op)().float().numpy(),
                               rtol=1e-3, atol=1e-4)


@pytest.mark.parametrize("n", SIZES)
def test_binary_operand_layouts(n):
    a, ta = pair(n, 2)
    b, tb = pair(n, 3)
    same_bits(a + b, ta + tb)                       # both contiguous
    same_bits(a * 1.5, ta * 1.5)                    # a Python number (0-d, broadcast)
    same_bits(2.0 - a, 2.0 - ta)                    # the number first
    s, ts = ct.tensor(0.75, dtype=ct.float16), torch.tensor(0.75, dtype=torch.float16)
    same_bits(s * b, ts * tb)                       # a 0-d tensor first
    same_bits(a / b, ta / tb)
    same_bits(a < b, ta < tb)                       # bool output
    same_bits(a >= 0.5, ta >= 0.5)


@pytest.mark.parametrize("n", SIZES)
def test_in_place_and_overflow(n):
    a, ta = pair(n, 4)
    b, tb = pair(n, 5)
    a.mul_(b); ta.mul_(tb)
    same_bits(a, ta)
    big, tbig = pair(n, 6, scale=40000.0)           # products past float16's 65504 become inf
    same_bits(big * 3.0, tbig * 3.0)


@pytest.mark.parametrize("n", SIZES)
def test_clamp(n):
    a, ta = pair(n, 7)
    same_bits(a.clamp(-1, 2), ta.clamp(-1, 2))
    same_bits(a.clamp(min=0.5), ta.clamp(min=0.5))
    same_bits(a.clamp(max=float("nan")), ta.clamp(max=float("nan")))


def test_subnormals_round_trip():
    # every float16 bit pattern through an op that keeps it (x * 1): F16C and torch agree
    bits = np.arange(65536, dtype=np.uint16)
    vals = bits.view(np.float16).astype(np.float32)
    a, ta = ct.tensor(vals).half(), torch.tensor(vals).half()
    same_bits(a * 1.0, ta * 1.0)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("shape, dim", [((5000,), None), ((3, 4097), 1), ((7, 300), 1), ((300, 7), 0)])
def test_sum(dtype, shape, dim):
    x = np.random.RandomState(8).rand(*shape).astype(np.float32)
    a, ta = ct.tensor(x).to(getattr(ct, dtype)), torch.tensor(x).to(getattr(torch, dtype))
    ra, rb = (a.sum(), ta.sum()) if dim is None else (a.sum(dim), ta.sum(dim))
    assert str(ra.dtype) == str(rb.dtype)
    np.testing.assert_allclose(ra.float().numpy(), rb.float().numpy(), rtol=8e-3)
    # within one unit in the last place of the exact sum of the rounded inputs
    exact = a.double().sum() if dim is None else a.double().sum(dim)
    ulp = 2.0 ** -10 if dtype == "float16" else 2.0 ** -7
    np.testing.assert_allclose(ra.double().numpy(), exact.numpy(), rtol=ulp)
