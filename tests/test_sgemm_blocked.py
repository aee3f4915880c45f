"""The blocked float32 GEMM (THGemm_sgemm in src/TH/THGemmPacked.c) that float32 mm/addmm/linear run
when A is not transposed, K <= 384 and the product has at least 2^22 multiply-adds (2^21 with threads;
src/ATen/ATBlas.c): values against numpy (float64) and torch on shapes off its 4 x 24 / 8 / 16 tiles,
K in two chunks, more columns than one packed block holds, columns or rows split across threads,
transposed and strided operands, alpha/beta, bitwise agreement across thread counts (the portable
kernels: test_gemm_packed.test_portable_kernel). Every shape here is past both thresholds, so the
blocked GEMM runs whatever the thread count."""
import numpy as np
import pytest

import cthtorch
from oracle import require_torch

torch = require_torch()

# (M, K, N): N % 24 = 21, 11 (the 16-column tile), 17, 8 (the last 32 columns as two 16-column panels);
# K in two chunks (257, 300, 384); N past one block of 128 panels (3100 > 3072); few columns, which the
# threads split by rows, down to 6 (the 8-column tile)
SHAPES = [(100, 130, 333), (129, 257, 131), (256, 256, 256), (37, 300, 1001), (5, 300, 3100), (400, 200, 56),
          (97, 384, 120), (2000, 64, 40), (130, 64, 200), (11000, 64, 6)]


@pytest.fixture(autouse=True, params=[1, 2])
def threads(request):
    n0 = cthtorch.get_num_threads()
    cthtorch.set_num_threads(request.param)
    yield request.param
    cthtorch.set_num_threads(n0)


def _mat(rs, *shape):
    return rs.randn(*shape).astype(np.float32)


def _check(got, want64, K):
    tol = 2e-6 * max(1, K) ** 0.5 * 4
    np.testing.assert_allclose(got, want64, rtol=tol, atol=tol)


@pytest.mark.parametrize("M,K,N", SHAPES)
@pytest.mark.parametrize("tb", [False, True])
def test_mm_values(M, K, N, tb):
    rs = np.random.RandomState(M + 3 * K + 7 * N)
    a, b = _mat(rs, M, K), _mat(rs, N, K).T.copy() if tb else _mat(rs, K, N)
    ca = cthtorch.from_numpy(a)
    cb = cthtorch.from_numpy(b.T.copy()).t() if tb else cthtorch.from_numpy(b)   # tb: a weight's transpose view
    got = (ca @ cb).numpy()
    _check(got, a.astype(np.float64) @ b.astype(np.float64), K)
    ref = (torch.from_numpy(a) @ torch.from_numpy(b)).numpy()
    _check(got, ref.astype(np.float64), K)


@pytest.mark.parametrize("M,K,N", [(129, 257, 131), (160, 300, 100)])
def test_strided_a_and_addmm(M, K, N):
    rs = np.random.RandomState(5)
    wide = _mat(rs, M, K + 13)
    a = cthtorch.from_numpy(wide)[:, 5:5 + K]            # rows longer than K: lda > K
    b, c = _mat(rs, K, N), _mat(rs, M, N)
    an = wide[:, 5:5 + K].astype(np.float64)
    got = cthtorch.addmm(cthtorch.from_numpy(c), a, cthtorch.from_numpy(b), beta=0.5, alpha=-2.0).numpy()
    _check(got, 0.5 * c + -2.0 * (an @ b), K)
    bias = _mat(rs, N)
    got = cthtorch.nn.functional.linear(a, cthtorch.from_numpy(b.T.copy()), cthtorch.from_numpy(bias)).numpy()
    _check(got, an @ b + bias, K)


def test_beta_zero_ignores_c():
    """addmm with beta = 0 never reads self: its nan/inf do not reach the result (as torch)"""
    a, b = cthtorch.ones(200, 100), cthtorch.ones(100, 250)
    c = cthtorch.full((200, 250), float("nan"))
    out = cthtorch.addmm(c, a, b, beta=0)
    assert cthtorch.equal(out, cthtorch.full((200, 250), 100.0))
    assert torch.addmm(torch.full((200, 250), float("nan")), torch.ones(200, 100), torch.ones(100, 250), beta=0).eq(100).all()


@pytest.mark.parametrize("M,K,N", [(256, 256, 256), (2000, 64, 40), (37, 300, 1001), (512, 300, 520)])
def test_threads_agree_bitwise(M, K, N):
    """each element is summed in the same order whichever thread, and however many, computes it"""
    rs = np.random.RandomState(2)
    a, b = cthtorch.from_numpy(_mat(rs, M, K)), cthtorch.from_numpy(_mat(rs, K, N))
    cthtorch.set_num_threads(1)
    one = a @ b
    cthtorch.set_num_threads(2)
    two = a @ b
    cthtorch.set_num_threads(3)
    three = a @ b
    assert cthtorch.equal(one, two) and cthtorch.equal(one, three)


# N = 200 and 128 leave 8 columns after the full panels (cut into two panels of 16 and 16, not 24 + 8);
# 256 at 2 threads gives each thread 128 columns (the same cut), 520 at 3 threads shares that are no
# multiple of 16 (the split rounds to whole 64-byte lines of C); M = 130 ends on a 2-row tile
@pytest.mark.parametrize("M,K,N", [(256, 256, 256), (130, 64, 200), (1024, 64, 128), (96, 300, 520)])
def test_addmm_threads_agree_bitwise(M, K, N):
    """with beta != 0 too every element is rounded the same whichever tile (24, 16 or 8 columns wide, whole or
    at an edge) and thread computes it, and no element is left out or added twice"""
    rs = np.random.RandomState(3)
    a, b, c = _mat(rs, M, K), _mat(rs, K, N), _mat(rs, M, N)
    outs = []
    for nt in (1, 2, 3, 4):
        cthtorch.set_num_threads(nt)
        outs.append(cthtorch.addmm(cthtorch.from_numpy(c), cthtorch.from_numpy(a), cthtorch.from_numpy(b),
                                   beta=0.75, alpha=1.5))
    _check(outs[0].numpy(), 0.75 * c.astype(np.float64) + 1.5 * (a.astype(np.float64) @ b.astype(np.float64)), K)
    assert all(cthtorch.equal(outs[0], o) for o in outs[1:])


def test_nonfinite_operands_propagate():
    a, b = np.ones((150, 190), np.float32), np.ones((190, 150), np.float32)
    a[3, 5] = np.inf
    b[7, 60] = np.nan
    got = (cthtorch.from_numpy(a) @ cthtorch.from_numpy(b)).numpy()
    want = (torch.from_numpy(a) @ torch.from_numpy(b)).numpy()
    np.testing.assert_array_equal(got, want)   # nan where a nan or inf * 0 met, inf in row 3, 70 elsewhere
    assert np.isnan(got[:, 60]).all() and np.isinf(got[3, :60]).all() and (got[:3, :60] == 190).all()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_bmm_empty_batch(dtype):
    """a batch of no matrices (each non-empty) is an empty result, as torch's"""
    for lib in (cthtorch, torch):
        dt = getattr(lib, dtype)
        a, b, c = lib.ones(0, 3, 4, dtype=dt), lib.ones(0, 4, 5, dtype=dt), lib.ones(0, 3, 5, dtype=dt)
        assert tuple(lib.bmm(a, b).shape) == (0, 3, 5)
        assert tuple(lib.baddbmm(c, a, b, beta=2, alpha=3).shape) == (0, 3, 5)
        assert tuple(lib.matmul(lib.ones(0, 2, 3, 4, dtype=dt), lib.ones(4, 5, dtype=dt)).shape) == (0, 2, 3, 5)
