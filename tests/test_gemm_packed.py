"""The packed-weight float32 GEMM (src/TH/THGemmPacked.c, _C._internal.
_gemm_pack/_gemm_packed) that recurrent layers' per-step products run:
values against numpy and torch on shapes off the 4 x 24 register tile,
transposed/strided operands, with and without the added c, the portable
fallback kernel, and the argument errors."""
import os
import subprocess
import sys

import numpy as np
import pytest

import cthtorch
from cthtorch._C import _internal
from oracle import require_torch

torch = require_torch()

SHAPES = [(1, 1, 1), (3, 5, 7), (4, 24, 24), (5, 17, 25), (32, 256, 1024), (33, 250, 1001),
          (32, 1024, 256), (64, 300, 48), (7, 513, 23), (0, 4, 5), (4, 0, 5)]


def _mat(rs, *shape):
    return rs.randn(*shape).astype(np.float32)


def _check(a, b, c=None):
    """_gemm_packed(a, pack(b), N, c) against numpy (float64 reference) and torch's addmm/mm"""
    K, N = b.shape
    got = _internal._gemm_packed(a, _internal._gemm_pack(b), N, c)
    an, bn = a.numpy().astype(np.float64), b.numpy().astype(np.float64)
    want = an @ bn + (c.numpy() if c is not None else 0)
    assert got.shape == (a.shape[0], N) and got.dtype == cthtorch.float32
    tol = 1e-5 * max(1, K) ** 0.5
    np.testing.assert_allclose(got.numpy(), want, rtol=tol, atol=tol)
    ta, tb = torch.from_numpy(a.numpy().copy()), torch.from_numpy(b.numpy().copy())
    ref = torch.addmm(torch.from_numpy(c.numpy().copy()), ta, tb) if c is not None else ta @ tb
    np.testing.assert_allclose(got.numpy(), ref.numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("M,K,N", SHAPES)
@pytest.mark.parametrize("c", ["none", "row", "full"])
def test_values(M, K, N, c):
    rs = np.random.RandomState(M * 7 + K * 3 + N)
    a, b = cthtorch.from_numpy(_mat(rs, M, K)), cthtorch.from_numpy(_mat(rs, K, N))
    cc = {"none": None, "row": cthtorch.from_numpy(_mat(rs, N)), "full": cthtorch.from_numpy(_mat(rs, M, N))}[c]
    _check(a, b, cc)


@pytest.mark.parametrize("M,K,N", [(5, 17, 25), (32, 256, 1024), (9, 40, 50)])
def test_transposed_and_strided(M, K, N):
    rs = np.random.RandomState(1)
    w = cthtorch.from_numpy(_mat(rs, N, K))
    _check(cthtorch.from_numpy(_mat(rs, M, K)), w.t())                                   # b a transposed weight
    _check(cthtorch.from_numpy(_mat(rs, K, M)).t(), cthtorch.from_numpy(_mat(rs, K, N)))  # a transposed
    big = cthtorch.from_numpy(_mat(rs, 2 * M, 3 * K))
    bigb = cthtorch.from_numpy(_mat(rs, 2 * K, 2 * N))
    c = cthtorch.from_numpy(_mat(rs, M, 2 * N))[:, ::2]
    _check(big[::2, 1::3], bigb[::2, ::2], c)                                             # every operand strided
    row = cthtorch.from_numpy(_mat(rs, 1, K))
    _check(row.expand(M, K), cthtorch.from_numpy(_mat(rs, K, N)))                         # a's rows overlap (stride 0)



@pytest.mark.parametrize("transposed", [False, True])
def test_pack_layout(transposed):
    """the packed form itself, for every width of the last panel (the vector copies take widths that are
    multiples of 4, the rest the scalar loops) and K off the 4 x 4 transposes: panel p, row k holds
    B[k, 24p .. 24p + 23], zero past N"""
    rs = np.random.RandomState(5)
    for N in list(range(1, 50)) + [96, 100]:
        for K in (1, 3, 4, 6, 9):
            bn = _mat(rs, K, N)
            b = cthtorch.from_numpy(np.ascontiguousarray(bn.T)).t() if transposed else cthtorch.from_numpy(bn)
            want = np.zeros(((N + 23) // 24, K, 24), np.float32)
            for q in range(want.shape[0]):
                w = min(24, N - 24 * q)
                want[q, :, :w] = bn[:, 24 * q:24 * q + w]
            np.testing.assert_array_equal(_internal._gemm_pack(b).numpy(), want, err_msg="N=%d K=%d" % (N, K))

def test_threads_agree():
    rs = np.random.RandomState(2)
    a, b = cthtorch.from_numpy(_mat(rs, 48, 512)), cthtorch.from_numpy(_mat(rs, 512, 1000))
    p = _internal._gemm_pack(b)
    n0 = cthtorch.get_num_threads()
    try:
        cthtorch.set_num_threads(1)
        one = _internal._gemm_packed(a, p, 1000)
        cthtorch.set_num_threads(2)
        two = _internal._gemm_packed(a, p, 1000)
    finally:
        cthtorch.set_num_threads(n0)
    assert cthtorch.equal(one, two)   # each panel is computed the same way whichever thread runs it
    _check(a, b)


@pytest.mark.parametrize("N", [256, 250, 245])
def test_narrow_last_panel_bits(N):
    """a last panel of at most 16 columns runs the narrow 4 x 8 / 4 x 16 tiles; they sum each element in the
    4 x 24 tile's order, so its columns are bit-equal to the same columns of a product of full panels"""
    rs = np.random.RandomState(3)
    a, b = cthtorch.from_numpy(_mat(rs, 33, 300)), cthtorch.from_numpy(_mat(rs, 300, 264))
    c = cthtorch.from_numpy(_mat(rs, 33, 264))
    full = _internal._gemm_packed(a, _internal._gemm_pack(b), 264, c)
    part = _internal._gemm_packed(a, _internal._gemm_pack(b[:, :N].contiguous()), N, c[:, :N].contiguous())
    assert cthtorch.equal(part, full[:, :N].contiguous())


def test_nonfinite_c_and_beta_zero():
    """without c, the output's uninitialised memory is never read (beta = 0); c's inf/nan propagate"""
    a, b = cthtorch.ones(5, 3), cthtorch.ones(3, 26)
    assert cthtorch.equal(_internal._gemm_packed(a, _internal._gemm_pack(b), 26), cthtorch.full((5, 26), 3.0))
    c = cthtorch.zeros(26)
    c[0], c[25] = float("inf"), float("nan")
    out = _internal._gemm_packed(a, _internal._gemm_pack(b), 26, c)
    assert out[:, 0].eq(float("inf")).all() and out[:, 25].isnan().all() and out[:, 1:25].eq(3).all()


def test_portable_kernel():
    """CTHTORCH_GEMM_PACKED=portable selects the plain-C tiles (cpus without AVX2/FMA), here and in the
    blocked GEMM of mm (test_sgemm_blocked): same values"""
    code = ("import sys; sys.path.insert(0, 'tests'); import test_gemm_packed as t, test_sgemm_blocked as s\n"
            "for M, K, N in t.SHAPES:\n    t.test_values(M, K, N, 'full')\n"
            "t.test_transposed_and_strided(5, 17, 25)\n"
            "for M, K, N in s.SHAPES:\n    s.test_mm_values(M, K, N, True)\n"
            "s.test_strided_a_and_addmm(129, 257, 131)\nprint('ok')\n")
    env = dict(os.environ, CTHTORCH_GEMM_PACKED="portable")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    r = subprocess.run([sys.executable, "-c", code], cwd=root, env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), r.stderr[-2000:]


def test_errors():
    b = cthtorch.randn(8, 30)
    p = _internal._gemm_pack(b)
    assert p.shape == (2, 8, 24)
    with pytest.raises(RuntimeError, match="float32"):
        _internal._gemm_pack(b.double())
    with pytest.raises(RuntimeError, match="2-D"):
        _internal._gemm_pack(cthtorch.randn(8))
    with pytest.raises(RuntimeError, match="packed form"):
        _internal._gemm_packed(cthtorch.randn(3, 9), p, 30)          # K differs
    with pytest.raises(RuntimeError, match="packed form"):
        _internal._gemm_packed(cthtorch.randn(3, 8), p, 50)          # N needs 3 panels
    with pytest.raises(RuntimeError, match="size"):
        _internal._gemm_packed(cthtorch.randn(3, 8), p, 30, cthtorch.randn(29))
    with pytest.raises(RuntimeError, match="float32"):
        _internal._gemm_packed(cthtorch.randn(3, 8).double(), p, 30)
