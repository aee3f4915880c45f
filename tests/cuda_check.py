"""What the CUDA kernel tests share: the device they run on, the skip without
one, and the comparison of a device result with cthtorch's CPU result.

CTHTORCH_CUDA_DRYRUN=1 runs them with "cpu" standing in for "cuda": the CPU
path is compared with itself, which checks the tests' own code on a machine
without a GPU (the kernels are not exercised then)."""
import os

import pytest

import cthtorch as torch

DEV = "cpu" if os.environ.get("CTHTORCH_CUDA_DRYRUN") == "1" else "cuda"
needs_device = pytest.mark.skipif(DEV == "cuda" and not torch.cuda.is_available(), reason="no CUDA device")


ALL_DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int64, torch.int32, torch.int16,
              torch.int8, torch.uint8, torch.bool]


def sample(shape, dtype, seed=0, scale=3.0):
    """randn * scale in dtype; integer dtypes get rounded values (so many
    ties), uint8 their magnitudes, bool the signs."""
    torch.manual_seed(seed)
    x = torch.randn(*shape) * scale
    if dtype == torch.bool:
        return x > 0
    if dtype == torch.uint8:
        x = x.abs()
    return x.to(dtype) if dtype.is_floating_point else x.round().to(dtype)


def tol_of(dtype):
    return 1e-2 if dtype in (torch.float16, torch.bfloat16) else 1e-5 if dtype == torch.float32 else 1e-10


def same(dev_result, cpu_result, tol=None):
    """dev_result (on DEV) equals cpu_result: dtype, shape, values (NaN where NaN)."""
    assert dev_result.device.type == DEV, dev_result.device
    r = dev_result.cpu()
    assert r.dtype == cpu_result.dtype, (r.dtype, cpu_result.dtype)
    assert tuple(r.shape) == tuple(cpu_result.shape), (r.shape, cpu_result.shape)
    if cpu_result.dtype.is_floating_point:
        t = tol_of(cpu_result.dtype) if tol is None else tol
        assert torch.allclose(r.double(), cpu_result.double(), atol=t, rtol=t, equal_nan=True), (r, cpu_result)
    else:
        assert torch.equal(r, cpu_result), (r, cpu_result)


def grad_of(fn, *xs):
    """The gradients of fn(*xs).sum() (weighted so each output element counts
    differently) on DEV and on the CPU, as (dev_grads, cpu_grads)."""
    out = []
    for dev in (DEV, "cpu"):
        leaves = [x.detach().to(dev).requires_grad_() for x in xs]
        y = fn(*leaves)
        w = torch.arange(y.numel(), dtype=y.dtype).reshape(y.shape).to(dev) * 0.01 + 1
        (y * w).sum().backward()
        out.append([x.grad for x in leaves])
    return out
