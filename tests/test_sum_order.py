"""float32/float64 sum and mean add in torch's CPU order (its cascade sum), so
results equal torch's bit for bit: whole tensors, inner dims, outer dims, with
1 and 2 threads (torch's two-pass split of a long full sum)."""
import numpy as np
import pytest

import cthtorch as ct
import oracle

torch = oracle.require_torch()

SIZES = list(range(1, 101)) + [127, 128, 129, 1000, 4097, 65537, 1000000]


def mixed(rs, shape, dtype):
    # mixed magnitudes so that any change of order changes the rounding
    x = rs.randn(*shape) * np.exp(rs.uniform(-8, 8, size=shape))
    return x.astype(dtype)


@pytest.fixture(params=[1, 2], ids=["1thread", "2threads"])
def threads(request):
    old_c, old_t = ct.get_num_threads(), torch.get_num_threads()
    ct.set_num_threads(request.param)
    torch.set_num_threads(request.param)
    yield request.param
    ct.set_num_threads(old_c)
    torch.set_num_threads(old_t)


def bits_equal(a, b):
    a = a.numpy() if hasattr(a, "numpy") else np.asarray(a)
    b = b.numpy()
    assert a.dtype == b.dtype and a.shape == b.shape
    ia, ib = a.reshape(-1).view(np.uint8), b.reshape(-1).view(np.uint8)
    bad = np.flatnonzero((ia.reshape(a.size, -1) != ib.reshape(b.size, -1)).any(1)) if a.size else []
    assert len(bad) == 0, f"{len(bad)} of {a.size} differ, first at {bad[0]}: {a.flat[bad[0]]!r} vs {b.flat[bad[0]]!r}"


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_full_sum_bits(dtype, threads):
    rs = np.random.RandomState(1)
    for n in SIZES:
        for _ in range(3 if n < 10000 else 1):
            x = mixed(rs, (n,), dtype)
            a, b = ct.from_numpy(x), torch.from_numpy(x)
            bits_equal(a.sum(), b.sum())
            bits_equal(a.mean(), b.mean())
            assert a.sum().item() == b.sum().item()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(64, 2000), (3, 7), (1000, 9), (5, 65537), (2, 3, 40), (300, 300)])
def test_dim_sums_bits(dtype, shape, threads):
    rs = np.random.RandomState(2)
    x = mixed(rs, shape, dtype)
    a, b = ct.from_numpy(x), torch.from_numpy(x)
    bits_equal(a.sum(), b.sum())
    bits_equal(a.sum(-1), b.sum(-1))
    bits_equal(a.mean(-1, keepdim=True), b.mean(-1, keepdim=True))
    if len(shape) == 2:   # outer reductions: columns of a contiguous matrix, rows of its transpose
        bits_equal(a.sum(0), b.sum(0))
        bits_equal(a.mean(0), b.mean(0))
        bits_equal(a.t().sum(1), b.t().sum(1))
        bits_equal(a[:, ::2].sum(1), b[:, ::2].sum(1))
        bits_equal(a[::2].sum(), b[::2].sum())


def test_mean_dtype_arg_and_empty():
    rs = np.random.RandomState(3)
    x = mixed(rs, (37, 11), np.float32)
    a, b = ct.from_numpy(x), torch.from_numpy(x)
    bits_equal(a.mean(1, dtype=ct.float64), b.mean(1, dtype=torch.float64))
    bits_equal(a.sum(0, dtype=ct.float64), b.sum(0, dtype=torch.float64))
    e = np.zeros((0, 3), np.float32)
    bits_equal(ct.from_numpy(e).mean(0), torch.from_numpy(e).mean(0))
    bits_equal(ct.from_numpy(e).sum(0), torch.from_numpy(e).sum(0))
    # all -0.0: torch's sum starts from +0
    z = -np.zeros(9, np.float32)
    bits_equal(ct.from_numpy(z).sum(), torch.from_numpy(z).sum())


@pytest.mark.parametrize("reduction", ["mean", "sum"])
def test_loss_reductions_bits(reduction):
    rs = np.random.RandomState(4)
    x, y = mixed(rs, (128, 10), np.float32), mixed(rs, (128, 10), np.float32)
    for name in ["mse_loss", "l1_loss"]:
        fc, ft = getattr(ct.nn.functional, name), getattr(torch.nn.functional, name)
        bits_equal(fc(ct.from_numpy(x), ct.from_numpy(y), reduction=reduction),
                   ft(torch.from_numpy(x), torch.from_numpy(y), reduction=reduction))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(1, 5), (3, 10), (64, 10), (37, 1000), (1000, 3), (5000, 7), (4, 5, 6, 7), (2, 3, 33)])
def test_nll_loss_bits(dtype, shape, threads):
    # torch adds -w*x and w in the dtype in an 8-level cascade over the targets
    rs = np.random.RandomState(5)
    x = mixed(rs, shape, dtype)
    t = rs.randint(0, shape[1], size=(shape[0],) + shape[2:])
    w = rs.rand(shape[1]).astype(dtype)
    t[::7] = 2 if shape[1] > 2 else 0   # some ignored targets
    for kw in [{}, {"ignore_index": 2}]:
        for weight in [None, w]:
            for reduction in ["mean", "sum", "none"]:
                a = ct.nn.functional.nll_loss(ct.from_numpy(x), ct.from_numpy(t), reduction=reduction, **kw,
                                              weight=None if weight is None else ct.from_numpy(weight))
                b = torch.nn.functional.nll_loss(torch.from_numpy(x), torch.from_numpy(t), reduction=reduction, **kw,
                                                 weight=None if weight is None else torch.from_numpy(weight))
                bits_equal(a, b)


def test_cross_entropy_reduces_as_nll_loss():
    # cross_entropy is log_softmax then nll_loss: given torch's log-probabilities the loss is torch's
    rs = np.random.RandomState(6)
    x = rs.randn(300, 10).astype(np.float32) * 3
    t = rs.randint(0, 10, 300)
    logp = torch.log_softmax(torch.from_numpy(x), 1)
    bits_equal(ct.nn.functional.nll_loss(ct.from_numpy(logp.numpy()), ct.from_numpy(t)),
               torch.nn.functional.cross_entropy(torch.from_numpy(x), torch.from_numpy(t)))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape,dims", [
    ((3, 50, 7), 1), ((4, 33, 40), 1), ((64, 100, 3), 1), ((5, 17, 9), (0, 2)), ((8, 16, 5, 5), (0, 2, 3)),
    ((2, 3, 40, 6), (1, 2)), ((3, 1, 9, 11), (0, 2)), ((40, 300, 9), 1), ((7, 70, 130), 1), ((130, 70, 7), (0, 2)),
    ((64, 32, 14, 14), (0, 2, 3)), ((9, 5000, 3), 1), ((2, 3, 4, 5, 6), (1, 3)), ((5, 4, 3, 2, 99), (0, 2, 4))])
def test_middle_dim_sums_bits(dtype, shape, dims, threads):
    # torch reorders the dims (reduced innermost), merges what it can and sums 2-d slices
    rs = np.random.RandomState(7)
    x = mixed(rs, shape, dtype)
    a, b = ct.from_numpy(x), torch.from_numpy(x)
    bits_equal(a.sum(dims), b.sum(dims))
    bits_equal(a.mean(dims, keepdim=True), b.mean(dims, keepdim=True))
    # non-contiguous inputs: a permutation and a strided slice
    p = tuple(reversed(range(len(shape))))
    bits_equal(a.permute(p).sum(dims), b.permute(p).sum(dims))
    bits_equal(a[..., ::2].sum(dims), b[..., ::2].sum(dims))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_strided_sums_bits(dtype, threads):
    # full sums of views whose dims do not merge run torch's rows (its first dim after ordering by
    # stride); column sums of strided outputs split over threads in equal chunks, as torch's
    rs = np.random.RandomState(8)
    x = mixed(rs, (64, 33, 40), dtype)
    a, b = ct.from_numpy(x), torch.from_numpy(x)
    for f in [lambda t: t.permute(2, 0, 1)[..., ::2], lambda t: t.t() if t.dim() == 2 else t.permute(1, 2, 0),
              lambda t: t[::3, :, 1::2].transpose(0, 1), lambda t: t[:, ::2]]:
        bits_equal(f(a).sum(), f(b).sum())
        bits_equal(f(a).sum(0), f(b).sum(0))
    y = mixed(rs, (300, 400), dtype)
    bits_equal(ct.from_numpy(y)[:, ::2].sum(0), torch.from_numpy(y)[:, ::2].sum(0))
    bits_equal(ct.from_numpy(y)[::2, ::3].sum(0), torch.from_numpy(y)[::2, ::3].sum(0))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_row_sums_of_every_width_bits(dtype):
    """rows of 1..130 and around 64 vectors (the short-row kernel's bound, 511/512 floats), of
    mixed magnitudes and of signed zeros only (-0 + 0 is +0 where torch adds its zero upper
    cascade level): each row's sum and mean bit-equal to torch's, contiguous and as a view
    whose rows are apart (x[:, :K] of a wider array)"""
    rs = np.random.RandomState(5)
    for K in list(range(1, 131)) + [255, 256, 257, 511, 512, 513]:
        x = mixed(rs, (6, K + 3), dtype)
        x[1] = -0.0
        x[2, ::2] = 0.0
        x[2, 1::2] = -0.0
        for arr in (np.ascontiguousarray(x[:, :K]), x[:, :K]):
            a, b = ct.from_numpy(arr), torch.from_numpy(arr)
            bits_equal(a.sum(1), b.sum(1))
            bits_equal(a.mean(1), b.mean(1))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_narrow_column_sums_bits(dtype, threads):
    # under a vector of adjacent columns, dim 0 sums in one pass over the rows (whole groups of 4
    # columns one cascade each, the rest four interleaved cascades): torch's bits for every width,
    # row counts through each cascade level's flush and the tail rows, contiguous or not
    rs = np.random.RandomState(7)
    for M in range(1, 9):
        for K in [1, 3, 4, 5, 17, 64, 65, 256, 257, 1029, 4100, 16387, 70001]:
            x = mixed(rs, (K, M + 2), dtype)
            a, b = ct.from_numpy(x), torch.from_numpy(x)
            bits_equal(a[:, :M].contiguous().sum(0), b[:, :M].contiguous().sum(0))
            bits_equal(a[:, 1:M + 1].sum(0), b[:, 1:M + 1].sum(0))
            bits_equal(a[:, :M].contiguous().mean(0), b[:, :M].contiguous().mean(0))
