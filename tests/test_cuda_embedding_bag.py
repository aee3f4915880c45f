"""embedding_bag (sum/mean/max, offsets, include_last_offset, padding_idx,
per_sample_weights) on CUDA (src/THC/THCEmbedding.cu) against cthtorch's CPU
path: all four outputs, the weight's and the per-sample weights' gradients,
and the errors. Skipped without a GPU."""
import pytest

import cthtorch as torch
import cthtorch.nn.functional as F
from cuda_check import DEV, needs_device, same

pytestmark = needs_device


def _case(dtype=torch.float32, seed=0):
    torch.manual_seed(seed)
    w = torch.randn(10, 6).to(dtype)
    idx = torch.tensor([1, 2, 4, 5, 4, 3, 2, 9, 0, 0, 7])
    off = torch.tensor([0, 4, 4, 7])   # bag 1 is empty
    return w, idx, off


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16])
@pytest.mark.parametrize("mode", [0, 1, 2])
@pytest.mark.parametrize("padding_idx", [None, 4])
@pytest.mark.parametrize("include_last_offset", [False, True])
def test_forward_outputs(dtype, mode, padding_idx, include_last_offset):
    w, idx, off = _case(dtype)
    for ixd in (torch.int64, torch.int32):
        got = torch.embedding_bag(w.to(DEV), idx.to(ixd).to(DEV), off.to(ixd).to(DEV), False, mode, False, None,
                                  include_last_offset, padding_idx)
        want = torch.embedding_bag(w, idx.to(ixd), off.to(ixd), False, mode, False, None, include_last_offset,
                                   padding_idx)
        for g, c in zip(got, want):
            same(g, c)


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("padding_idx", [None, 2])
def test_weight_gradient(mode, padding_idx):
    w, idx, off = _case(torch.float64)
    grads = []
    for dev in (DEV, "cpu"):
        wd = w.to(dev).requires_grad_()
        out = F.embedding_bag(idx.to(dev), wd, off.to(dev), mode=mode, padding_idx=padding_idx)
        (out * torch.arange(out.numel(), dtype=out.dtype).reshape(out.shape).to(dev)).sum().backward()
        grads.append(wd.grad)
    same(grads[0], grads[1])


def test_per_sample_weights_gradients():
    w, idx, off = _case(torch.float64)
    psw = torch.rand(idx.numel(), dtype=torch.float64)
    grads = []
    for dev in (DEV, "cpu"):
        wd, pd = w.to(dev).requires_grad_(), psw.to(dev).requires_grad_()
        out = F.embedding_bag(idx.to(dev), wd, off.to(dev), mode="sum", per_sample_weights=pd, padding_idx=0)
        (out * out).sum().backward()
        grads.append((out.detach(), wd.grad, pd.grad))
    for a, b in zip(*grads):
        same(a, b)


def test_module_and_2d_input():
    torch.manual_seed(0)
    bag = torch.nn.EmbeddingBag(20, 5, mode="mean")
    x = torch.randint(0, 20, (4, 3))
    want = bag(x)
    bag.to(DEV)
    same(bag(x.to(DEV)), want.detach())


def test_errors_match_cpu():
    w, idx, off = _case()
    for bad_idx, bad_off in [(torch.tensor([1, 10]), torch.tensor([0])), (idx, torch.tensor([1, 4])),
                             (idx, torch.tensor([0, 5, 3]))]:
        with pytest.raises(RuntimeError) as cpu:
            torch.embedding_bag(w, bad_idx, bad_off, False, 0, False, None, False, None)
        with pytest.raises(RuntimeError) as gpu:
            torch.embedding_bag(w.to(DEV), bad_idx.to(DEV), bad_off.to(DEV), False, 0, False, None, False, None)
        assert str(gpu.value) == str(cpu.value)
