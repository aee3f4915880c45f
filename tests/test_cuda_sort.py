"""sort/argsort/msort/topk/kthvalue/median on CUDA (src/THC/THCSort.cu)
against cthtorch's CPU path: values, indices (the GPU sorts stably, so tied
indices agree with the CPU's stable sort), dtypes, any dim, non-contiguous inputs, NaN and -0.0, and
the gradients through scatter_grad. Skipped without a GPU."""
import pytest

import cthtorch as torch
from cuda_check import ALL_DTYPES as ALL, DEV, grad_of, needs_device, same, sample as _x

pytestmark = needs_device




@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("descending", [False, True])
def test_sort_every_dim(dtype, descending):
    x = _x((4, 9, 6), dtype)
    for dim in (0, 1, 2, -1):
        v, i = torch.sort(x.to(DEV), dim=dim, descending=descending, stable=True)
        cv, ci = torch.sort(x, dim=dim, descending=descending, stable=True)
        same(v, cv)
        same(i, ci)
        same(torch.argsort(x.to(DEV), dim=dim, descending=descending), torch.argsort(x, dim=dim, descending=descending))


def test_sort_noncontiguous_and_shapes():
    x = _x((7, 5, 8), torch.float32)
    xt = x.transpose(0, 2)[::2]
    same(torch.sort(x.to(DEV).transpose(0, 2)[::2], 1)[0], torch.sort(xt, 1)[0])
    same(torch.sort(x.to(DEV).transpose(0, 2)[::2], 1)[1], torch.sort(xt, 1)[1])
    for shape in [(), (0,), (3, 0), (1,), (1000,), (3, 2049)]:
        y = _x(shape, torch.float32) if shape != () else torch.tensor(2.5)
        same(torch.sort(y.to(DEV))[0], torch.sort(y)[0])
        # the CPU's default (unstable) sort moves ties past 16 elements, as torch's does
        same(torch.sort(y.to(DEV))[1], torch.sort(y, stable=True)[1])
    same(torch.msort(x.to(DEV)), torch.msort(x))
    same(x.to(DEV).sort(0, True).values, x.sort(0, True).values)


def test_sort_nan_inf_and_signed_zero():
    x = torch.tensor([[float("nan"), 1.0, -0.0, float("inf"), 0.0, -float("inf"), float("nan"), -2.0, 0.0, -0.0]])
    for dt in (torch.float32, torch.float64, torch.float16, torch.bfloat16):
        for desc in (False, True):
            v, i = torch.sort(x.to(dt).to(DEV), descending=desc)
            cv, ci = torch.sort(x.to(dt), descending=desc)
            same(v, cv)
            same(i, ci)
            # the values are the input's own: -0.0 keeps its sign
            assert torch.equal(torch.signbit(v.cpu()), torch.signbit(cv))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.int64, torch.int16, torch.uint8])
def test_topk(dtype):
    x = _x((6, 40), dtype)
    for k, dim, largest in [(5, 1, True), (5, 1, False), (1, 0, True), (6, 0, False), (0, 1, True), (40, -1, True)]:
        v, i = torch.topk(x.to(DEV), k, dim=dim, largest=largest)
        cv, ci = torch.topk(x, k, dim=dim, largest=largest)
        same(v, cv)
        same(i, ci)
    with pytest.raises(RuntimeError, match="selected index k out of range"):
        torch.topk(x.to(DEV), 41)


def _picks_same(got, want, x, dim, keepdim):
    """Order statistics: the values equal the CPU's, and each index points at
    its value in x (which of several equal values is picked is unspecified,
    as in torch)."""
    v, i = got
    same(v, want[0])
    assert i.device.type == DEV and i.dtype == want[1].dtype and tuple(i.shape) == tuple(want[1].shape)
    at = i if keepdim else i.unsqueeze(dim)
    picked = torch.gather(x.to(DEV), dim, at)
    same(picked if keepdim else picked.squeeze(dim), want[0])


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16, torch.int32, torch.int8])
def test_kthvalue_median(dtype):
    x = _x((5, 11, 4), dtype)
    for dim in (0, 1, 2):
        for keepdim in (False, True):
            for k in (1, 3):
                _picks_same(torch.kthvalue(x.to(DEV), k, dim, keepdim), torch.kthvalue(x, k, dim, keepdim), x, dim,
                            keepdim)
            _picks_same(torch.median(x.to(DEV), dim, keepdim), torch.median(x, dim, keepdim), x, dim, keepdim)
    same(torch.median(x.to(DEV)), torch.median(x))
    same(torch.nanmedian(x.to(DEV)), torch.nanmedian(x))


def test_median_with_nan():
    x = torch.tensor([[1.0, float("nan"), 3.0, 2.0, float("nan")], [4.0, 2.0, 9.0, 1.0, 0.5],
                      [float("nan")] * 5])
    for f in (torch.median, torch.nanmedian):
        _picks_same(f(x.to(DEV), 1), f(x, 1), x, 1, False)
        same(f(x.to(DEV)), f(x))
    # median takes a row's first NaN, as the CPU
    assert f is torch.nanmedian and torch.median(x.to(DEV), 1).indices[0].item() == 1
    same(torch.median(torch.empty(0).to(DEV)), torch.median(torch.empty(0)))


def test_gradients_through_sort_topk_kthvalue():
    x = torch.randn(4, 7, dtype=torch.float64)
    for fn in (lambda t: torch.sort(t, 1, descending=True)[0], lambda t: torch.topk(t, 3, 0)[0],
               lambda t: torch.kthvalue(t, 2, 1)[0], lambda t: torch.median(t, 0, keepdim=True)[0],
               lambda t: torch.msort(t), lambda t: t.max(1)[0], lambda t: t.min(0, keepdim=True)[0],
               lambda t: torch.cummax(t, 1)[0]):
        (g,), (cg,) = grad_of(fn, x)
        same(g, cg)


def test_double_backward_through_sort():
    x = torch.randn(3, 5, dtype=torch.float64)
    def second(dev):
        t = x.to(dev).requires_grad_()
        v = torch.sort(t, 1)[0]
        (g,) = torch.autograd.grad((v * v).sum(), t, create_graph=True)
        (g * torch.arange(15., dtype=torch.float64).reshape(3, 5).to(dev)).sum().backward()
        return t.grad
    same(second(DEV), second("cpu"))
