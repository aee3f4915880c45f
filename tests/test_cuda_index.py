"""Indexing and embedding on CUDA: values and gradients against cthtorch's CPU
path, out-of-range indices raise as on the CPU, an Embedding -> mean ->
Linear model trains on CUDA as on the CPU."""
import pytest

import cthtorch as torch

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")

DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int64]


def _x(shape, dtype=torch.float32, seed=0):
    torch.manual_seed(seed)
    x = torch.randn(*shape) * 4
    return x.round().to(dtype) if not dtype.is_floating_point else x.to(dtype)


def _same(cuda_result, cpu_result):
    assert cuda_result.is_cuda
    r = cuda_result.cpu()
    assert r.dtype == cpu_result.dtype and tuple(r.shape) == tuple(cpu_result.shape)
    tol = 1e-2 if cpu_result.dtype in (torch.float16, torch.bfloat16) else 1e-6
    if cpu_result.dtype.is_floating_point:
        assert torch.allclose(r.double(), cpu_result.double(), atol=tol, rtol=tol)
    else:
        assert torch.equal(r, cpu_result)


@pytest.mark.parametrize("dtype", DTYPES)
def test_index_select_gather_take(dtype):
    x = _x((5, 6, 7), dtype)
    i = torch.tensor([4, 0, 2, 2])
    for dim in range(3):
        _same(x.cuda().index_select(dim, i.cuda()), x.index_select(dim, i))
    g = torch.randint(0, 6, (5, 3, 7))
    _same(torch.gather(x.cuda(), 1, g.cuda()), torch.gather(x, 1, g))
    t = torch.tensor([[0, 209], [-1, 17]])
    _same(torch.take(x.cuda(), t.cuda()), torch.take(x, t))


@pytest.mark.parametrize("dtype", DTYPES)
def test_scatter_and_index_add(dtype):
    x = _x((4, 5), dtype)
    src = _x((4, 5), dtype, seed=1)
    idx = torch.tensor([[0, 1, 2, 3, 0], [1, 1, 1, 1, 1], [3, 2, 1, 0, 3], [2, 2, 2, 2, 2]])
    _same(x.cuda().scatter_add(0, idx.cuda(), src.cuda()), x.scatter_add(0, idx, src))
    perm = torch.tensor([[3, 1, 0, 2, 4]] * 4)   # no duplicates: a plain scatter is deterministic
    _same(x.cuda().scatter(1, perm.cuda(), src.cuda()), x.scatter(1, perm, src))
    _same(x.cuda().scatter(1, perm.cuda(), 7), x.scatter(1, perm, 7))
    ia = torch.tensor([0, 3, 0, 1])
    _same(x.cuda().index_add(0, ia.cuda(), src.cuda()), x.index_add(0, ia, src))
    if dtype.is_floating_point:
        _same(x.cuda().index_add(0, ia.cuda(), src.cuda(), alpha=2), x.index_add(0, ia, src, alpha=2))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int64])
def test_advanced_indexing_and_masks(dtype):
    x = _x((4, 5, 6), dtype)
    xc = x.cuda()
    i, j = torch.tensor([[0, 3], [2, 2]]), torch.tensor([1, -1])
    for key in [(i,), (slice(None), i), (i, j), (i, slice(None), j), (Ellipsis, j), ([0, 2],)]:
        ck = tuple(k.cuda() if isinstance(k, torch.Tensor) else k for k in key)
        _same(xc[ck], x[key])
    m = x > 0
    _same(xc[m.cuda()], x[m])
    _same(torch.masked_select(xc, m.cuda()), torch.masked_select(x, m))
    _same(torch.nonzero(m.cuda()), torch.nonzero(m))
    _same(xc.masked_fill(m.cuda(), 0), x.masked_fill(m, 0))
    y, yc = x.clone(), xc.clone()
    y[i, j] = 9
    yc[i.cuda(), j.cuda()] = 9
    _same(yc, y)
    y[m] = 0
    yc[m.cuda()] = 0
    _same(yc, y)
    v = _x((2, 2, 6), dtype, seed=2)
    _same(xc.index_put((i.cuda(), j.cuda()), v.cuda(), accumulate=True),
          x.index_put((i, j), v, accumulate=True))


def test_gradients_match_cpu():
    w = _x((10, 4), torch.float64)
    idx = torch.tensor([[1, 0, 9], [1, 1, 5]])
    def grads(dev):
        wd = w.to(dev).requires_grad_()
        i = idx.to(dev)
        out = (torch.nn.functional.embedding(i, wd, padding_idx=1).sum() + wd.index_select(0, i[0]).pow(2).sum()
               + wd[i[1]].mul(3).sum() + torch.gather(wd, 0, i[:, :2].repeat(1, 2)).sum()
               + wd[wd > 0].sum())
        out.backward()
        return wd.grad
    _same(grads("cuda"), grads("cpu"))


@pytest.mark.parametrize("call", [
    lambda x, i: x.index_select(0, i),
    lambda x, i: x[i],
    lambda x, i: torch.nn.functional.embedding(i, x),
])
def test_out_of_range_raises_index_error(call):
    x = torch.randn(3, 4)
    bad = torch.tensor([0, 7])
    with pytest.raises(IndexError) as cpu:
        call(x, bad)
    with pytest.raises(IndexError) as gpu:
        call(x.cuda(), bad.cuda())
    assert str(gpu.value) == str(cpu.value)
    # the device is still usable after the error
    assert call(x.cuda(), torch.tensor([2, 1]).cuda()).cpu().shape == call(x, torch.tensor([2, 1])).shape


def test_gather_scatter_out_of_range_raise_as_on_cpu():
    x = torch.randn(3, 4)
    bad = torch.tensor([[0, 5]])
    for call in (lambda x, i: torch.gather(x, 0, i), lambda x, i: x.scatter_add(0, i, torch.ones_like(x)[:1, :2]),
                 lambda x, i: x.index_add(0, i[0], torch.ones(2, 4, device=x.device))):
        with pytest.raises(RuntimeError) as cpu:
            call(x, bad)
        with pytest.raises(RuntimeError) as gpu:
            call(x.cuda(), bad.cuda())
        assert str(gpu.value) == str(cpu.value)


def test_embedding_mean_linear_trains_like_cpu():
    def train(dev):
        torch.manual_seed(0)
        emb = torch.nn.Embedding(50, 16, padding_idx=0)
        lin = torch.nn.Linear(16, 3)
        emb.to(dev)
        lin.to(dev)
        opt = torch.optim.SGD(list(emb.parameters()) + list(lin.parameters()), lr=0.5)
        tokens = torch.randint(0, 50, (8, 12)).to(dev)
        labels = torch.randint(0, 3, (8,)).to(dev)
        losses = []
        for _ in range(5):
            opt.zero_grad()
            loss = torch.nn.functional.cross_entropy(lin(emb(tokens).mean(1)), labels)
            loss.backward()
            opt.step()
            losses.append(loss.item())
        return losses, emb.weight.detach().cpu()
    (lc, wc), (lg, wg) = train("cpu"), train("cuda")
    assert lg[-1] < lg[0]
    for a, b in zip(lc, lg):
        assert abs(a - b) < 1e-4
    assert torch.allclose(wc, wg, atol=1e-5)
    assert torch.equal(wg[0], wc[0])   # the padding row never moves
