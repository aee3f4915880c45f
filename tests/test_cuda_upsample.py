"""Upsampling on CUDA (src/THC/THCUpsample.cu): every F.interpolate mode,
forward and backward, float32/float64 and the 16-bit types, checked against
cthtorch's CPU path (which tests/test_upsample.py checks against torch).
Skipped without a GPU."""
import pytest

import cthtorch as torch
import cthtorch.nn.functional as F

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")

MODES = [("nearest", 1), ("nearest", 2), ("nearest", 3), ("nearest-exact", 1), ("nearest-exact", 2),
         ("nearest-exact", 3), ("linear", 1), ("bilinear", 2), ("trilinear", 3), ("bicubic", 2)]
INTERP = {"linear", "bilinear", "trilinear", "bicubic"}
SPATIAL = {1: (13,), 2: (9, 7), 3: (5, 6, 4)}
TOL = {torch.float32: 1e-5, torch.float64: 1e-12, torch.float16: 2e-3, torch.bfloat16: 2e-2}


def close(gpu, cpu, tol):
    g = gpu.detach().cpu()
    assert g.shape == cpu.shape and g.dtype == cpu.dtype, (g.shape, cpu.shape, g.dtype, cpu.dtype)
    assert torch.allclose(g.double(), cpu.detach().double(), rtol=tol, atol=tol, equal_nan=True)


@pytest.mark.parametrize("dt", [torch.float32, torch.float64])
@pytest.mark.parametrize("mode,nd", MODES)
def test_upsample_forward_backward_match_cpu(mode, nd, dt):
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(2, 3, *SPATIAL[nd], dtype=dt, generator=gen)
    for kw in (dict(scale_factor=2), dict(scale_factor=1.7), dict(size=tuple([4, 11, 3][:nd])),
               dict(scale_factor=0.6, recompute_scale_factor=True)):
        for ac in ([None] if mode not in INTERP else [False, True]):
            kw2 = dict(kw, mode=mode, **({} if ac is None else {"align_corners": ac}))
            xc = x.clone().requires_grad_()
            xg = x.cuda().requires_grad_()
            yc, yg = F.interpolate(xc, **kw2), F.interpolate(xg, **kw2)
            assert yg.is_cuda
            close(yg, yc, TOL[dt])
            go = torch.randn(yc.shape, dtype=dt, generator=gen)
            yc.backward(go)
            yg.backward(go.cuda())
            assert xg.grad.is_cuda
            close(xg.grad, xc.grad, TOL[dt] * 10)


@pytest.mark.parametrize("dt", [torch.float16, torch.bfloat16])
def test_upsample_16bit(dt):
    x = torch.randn(1, 2, 6, 5, generator=torch.Generator().manual_seed(1)).to(dt)
    for mode in ("nearest", "bilinear", "bicubic"):
        close(F.interpolate(x.cuda(), scale_factor=1.5, mode=mode), F.interpolate(x, scale_factor=1.5, mode=mode), TOL[dt])


def test_upsample_module_and_double_backward():
    m = torch.nn.Upsample(scale_factor=2, mode="bilinear", align_corners=False)
    x = torch.randn(1, 2, 3, 4, dtype=torch.float64, generator=torch.Generator().manual_seed(2))
    xc, xg = x.clone().requires_grad_(), x.cuda().requires_grad_()
    gc, = torch.autograd.grad(m(xc).pow(2).sum(), xc, create_graph=True)
    gg, = torch.autograd.grad(m(xg).pow(2).sum(), xg, create_graph=True)
    close(gg, gc, 1e-12)
    ggc, = torch.autograd.grad(gc.sum(), xc)
    ggg, = torch.autograd.grad(gg.sum(), xg)
    close(ggg, ggc, 1e-12)


def test_upsample_cuda_errors_as_cpu():
    with pytest.raises(RuntimeError, match="Input and output sizes should be greater than 0"):
        F.interpolate(torch.zeros(1, 1, 4, device="cuda"), scale_factor=0.1)
    with pytest.raises(NotImplementedError):
        F.interpolate(torch.zeros(1, 1, 4, 4, device="cuda", dtype=torch.int32), scale_factor=2)
