"""cumsum/cumprod/logcumsumexp/cummax/cummin on CUDA (src/THC/THCScan.cu)
against cthtorch's CPU path: every dtype, every dim (the thread-per-line and
the block-per-row layouts), non-contiguous inputs, and the gradients (cumsum's
reverse scan, cumprod's backward with zeros, and its double backward).
Skipped without a GPU."""
import pytest

import cthtorch as torch
from cuda_check import ALL_DTYPES as ALL, DEV, grad_of, needs_device, same, sample

pytestmark = needs_device




@pytest.mark.parametrize("dtype", ALL)
def test_cumsum_cumprod_every_dim(dtype):
    x = sample((3, 5, 7), dtype, scale=1.0)
    for dim in (0, 1, 2, -1):
        same(torch.cumsum(x.to(DEV), dim), torch.cumsum(x, dim), tol=5e-2 if dtype.itemsize == 2 else None)
        y = x if dtype == torch.bool or not dtype.is_floating_point else x * 0.5 + 1
        same(torch.cumprod(y.to(DEV), dim), torch.cumprod(y, dim), tol=5e-2 if dtype.itemsize == 2 else None)
    same(torch.cumsum(x.to(DEV), 1, dtype=torch.float64), torch.cumsum(x, 1, dtype=torch.float64))


@pytest.mark.parametrize("n", [1, 1023, 1024, 5000, 70001])
def test_long_rows(n):
    # the block-per-row path (rows of >= 1024) and its tile carries
    x = torch.randn(3, n, dtype=torch.float64)
    same(torch.cumsum(x.to(DEV), 1), torch.cumsum(x, 1), tol=1e-8)
    same(torch.logcumsumexp(x.to(DEV), 1), torch.logcumsumexp(x, 1), tol=1e-8)
    p = (x * 1e-3 + 1)
    same(torch.cumprod(p.to(DEV), 1), torch.cumprod(p, 1), tol=1e-8)
    i = (x * 100).round().to(torch.int64)
    same(torch.cumsum(i.to(DEV), 1), torch.cumsum(i, 1))
    f = x.float()
    same(torch.cumsum(f.to(DEV), 1), torch.cumsum(f, 1), tol=1e-3)


def test_noncontiguous_and_empty():
    x = torch.randn(6, 8, 5)
    v = x.transpose(0, 2)[:, ::2]
    for dim in (0, 1, 2):
        same(torch.cumsum(x.to(DEV).transpose(0, 2)[:, ::2], dim), torch.cumsum(v, dim))
    for shape in [(0,), (3, 0), ()]:
        e = torch.randn(shape)
        same(torch.cumsum(e.to(DEV), 0), torch.cumsum(e, 0))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16])
def test_logcumsumexp(dtype):
    x = torch.randn(4, 9).to(dtype)
    x[1, 3] = float("inf")
    x[2, 4] = float("-inf")
    x[3, 5] = float("nan")
    for dim in (0, 1):
        same(torch.logcumsumexp(x.to(DEV), dim), torch.logcumsumexp(x, dim))


@pytest.mark.parametrize("dtype", ALL)
def test_cummax_cummin(dtype):
    x = sample((4, 12), dtype, scale=1.0)
    if dtype.is_floating_point:
        x[1, 4] = float("nan")
    for f in (torch.cummax, torch.cummin):
        for dim in (0, 1):
            v, i = f(x.to(DEV), dim)
            cv, ci = f(x, dim)
            same(v, cv)
            same(i, ci)


def test_gradients():
    x = torch.randn(3, 6, dtype=torch.float64)
    z = x.clone()
    z[0, 2] = 0
    z[1, 1] = z[1, 4] = 0
    for fn, t in [(lambda a: torch.cumsum(a, 1), x), (lambda a: torch.cumsum(a, 0), x),
                  (lambda a: torch.cumprod(a, 1), z), (lambda a: torch.cumprod(a, 0), z),
                  (lambda a: torch.logcumsumexp(a, 1), x), (lambda a: torch.cummin(a, 1)[0], x)]:
        (g,), (cg,) = grad_of(fn, t)
        same(g, cg)


def test_cumprod_double_backward():
    z = torch.randn(2, 5, dtype=torch.float64)
    z[0, 1] = 0
    def second(dev):
        t = z.to(dev).requires_grad_()
        (g,) = torch.autograd.grad(torch.cumprod(t, 1).pow(2).sum(), t, create_graph=True)
        g.pow(2).sum().backward()
        return t.grad
    same(second(DEV), second("cpu"), tol=1e-8)
