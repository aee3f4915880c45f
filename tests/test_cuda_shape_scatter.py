"""flip/roll and scatter_reduce (prod/amax/amin/mean) on CUDA against
cthtorch's CPU path, with gradients. Skipped without a GPU."""
import pytest

import cthtorch as torch
from cuda_check import ALL_DTYPES as ALL, DEV, grad_of, needs_device, same, sample as _x

pytestmark = needs_device




@pytest.mark.parametrize("dtype", ALL)
def test_flip_roll(dtype):
    x = _x((3, 4, 5), dtype)
    for dims in [(0,), (1,), (2,), (0, 2), (0, 1, 2), (-1,), ()]:
        same(torch.flip(x.to(DEV), dims), torch.flip(x, dims))
    xt = x.transpose(0, 2)[1:]
    same(torch.flip(x.to(DEV).transpose(0, 2)[1:], (0, 1)), torch.flip(xt, (0, 1)))
    same(torch.fliplr(x.to(DEV)), torch.fliplr(x))
    same(torch.flipud(x.to(DEV)), torch.flipud(x))
    same(torch.flip(torch.tensor(3).to(dtype).to(DEV), ()), torch.flip(torch.tensor(3).to(dtype), ()))
    same(torch.roll(x.to(DEV), 2), torch.roll(x, 2))
    same(torch.roll(x.to(DEV), (1, -2), (0, 2)), torch.roll(x, (1, -2), (0, 2)))
    with pytest.raises(RuntimeError, match="appears multiple times"):
        torch.flip(x.to(DEV), (0, 0))


def test_flip_roll_gradients():
    x = torch.randn(3, 4, dtype=torch.float64)
    for fn in (lambda t: torch.flip(t, (0, 1)), lambda t: torch.flip(t, (1,)), lambda t: torch.roll(t, 1, 1)):
        (g,), (cg,) = grad_of(fn, x)
        same(g, cg)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int64,
                                   torch.int32, torch.int16, torch.int8, torch.uint8])
@pytest.mark.parametrize("reduce", ["prod", "amax", "amin", "mean", "sum"])
def test_scatter_reduce(dtype, reduce):
    torch.manual_seed(1)
    self = _x((4, 6), dtype, 2)
    src = _x((4, 6), dtype, 3)
    if reduce == "prod" and dtype.is_floating_point:
        src = src * 0.25   # keep products of up to a column's worth of values small
    index = torch.randint(0, 4, (4, 6))
    for include_self in (True, False):
        for dim in (0, 1):
            got = self.to(DEV).scatter_reduce(dim, index.to(DEV), src.to(DEV), reduce, include_self=include_self)
            want = self.scatter_reduce(dim, index, src, reduce, include_self=include_self)
            same(got, want, tol=5e-2 if dtype in (torch.float16, torch.bfloat16) else None)


def test_scatter_reduce_nan_and_legacy_multiply():
    self = torch.zeros(3)
    src = torch.tensor([1.0, float("nan"), 2.0, -1.0])
    index = torch.tensor([0, 0, 1, 2])
    for reduce in ("amax", "amin"):
        same(self.to(DEV).scatter_reduce(0, index.to(DEV), src.to(DEV), reduce),
             self.scatter_reduce(0, index, src, reduce))
    x = torch.full((2, 3), 2.0)
    i = torch.tensor([[0, 1, 0], [0, 1, 1]])
    s = torch.tensor([[3.0, 4.0, 5.0], [6.0, 7.0, 8.0]])
    same(x.to(DEV).scatter(0, i.to(DEV), s.to(DEV), reduce="multiply"), x.scatter(0, i, s, reduce="multiply"))


@pytest.mark.parametrize("reduce", ["prod", "amax", "amin", "mean"])
def test_scatter_reduce_gradients(reduce):
    torch.manual_seed(0)
    self = torch.randn(3, 4, dtype=torch.float64)
    src = torch.randn(3, 4, dtype=torch.float64)
    index = torch.tensor([[0, 1, 2, 0], [1, 1, 0, 2], [2, 0, 0, 1]])
    for include_self in (True, False):
        fn = lambda a, b: a.scatter_reduce(0, index.to(a.device), b, reduce, include_self=include_self)
        (ga, gb), (ca, cb) = grad_of(fn, self, src)
        same(ga, ca)
        same(gb, cb)
