"""adaptive_max_pool2d/3d on CUDA (src/THC/THCPool.cu) against cthtorch's
CPU path: values, indices, NaN, gradients. Skipped without a GPU."""
import pytest

import cthtorch as torch
import cthtorch.nn.functional as F
from cuda_check import DEV, grad_of, needs_device, same

pytestmark = needs_device


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("out", [(1, 1), (3, 4), (7, 5), (2, 9)])
def test_adaptive_max_pool2d(dtype, out):
    torch.manual_seed(0)
    x = torch.randn(2, 3, 7, 9).to(dtype)
    x[0, 1, 2, 3] = float("nan")
    v, i = F.adaptive_max_pool2d(x.to(DEV), out, return_indices=True)
    cv, ci = F.adaptive_max_pool2d(x, out, return_indices=True)
    same(v, cv)
    same(i, ci)
    # unbatched and non-contiguous
    xt = x[1].transpose(1, 2)
    same(F.adaptive_max_pool2d(x[1].to(DEV).transpose(1, 2), out), F.adaptive_max_pool2d(xt, out))


def test_adaptive_max_pool3d():
    torch.manual_seed(0)
    x = torch.randn(2, 2, 5, 6, 7)
    v, i = F.adaptive_max_pool3d(x.to(DEV), (2, 3, 4), return_indices=True)
    cv, ci = F.adaptive_max_pool3d(x, (2, 3, 4), return_indices=True)
    same(v, cv)
    same(i, ci)


def test_gradients():
    x = torch.randn(2, 3, 8, 6, dtype=torch.float64)
    for fn in (lambda t: F.adaptive_max_pool2d(t, (3, 2)), lambda t: F.adaptive_max_pool2d(t, 1),
               lambda t: torch.nn.AdaptiveMaxPool2d((5, 4))(t),
               lambda t: F.adaptive_max_pool3d(t.unsqueeze(0), (2, 2, 3))):
        (g,), (cg,) = grad_of(fn, x)
        same(g, cg)


def test_integer_input_raises():
    with pytest.raises((RuntimeError, NotImplementedError)):
        F.adaptive_max_pool2d(torch.ones(1, 4, 4, dtype=torch.int64).to(DEV), 2)
