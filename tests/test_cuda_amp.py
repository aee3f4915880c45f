"""torch.autocast('cuda') and GradScaler on the GPU: the ops declared `autocast:`
run in float16 (matrix products, convolution) or float32 (softmax, losses,
reductions, exp/log...), gradients reach float32 leaves in float32."""
import pytest

import cthtorch as torch
import cthtorch.nn.functional as F

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")


def test_autocast_dtypes_follow_torchs_lists():
    torch.manual_seed(0)
    a = torch.randn(8, 16, device="cuda", requires_grad=True)
    w = torch.randn(4, 16, device="cuda", requires_grad=True)
    x = torch.randn(2, 3, 8, 8, device="cuda")
    k = torch.randn(5, 3, 3, 3, device="cuda", requires_grad=True)
    with torch.autocast("cuda"):
        y = F.linear(a, w)
        assert y.dtype == torch.float16
        assert (a @ w.t()).dtype == torch.float16
        ls = F.log_softmax(y, dim=1)
        assert ls.dtype == torch.float32
        c = F.conv2d(x, k)
        assert c.dtype == torch.float16
        loss = ls.sum() + c.float().sum()
        assert loss.dtype == torch.float32
        assert (a + 1).dtype == torch.float32          # not listed: runs as given
    loss.backward()
    assert a.grad.dtype == torch.float32 and w.grad.dtype == torch.float32 and k.grad.dtype == torch.float32
    # the float16 product is close to the float32 one
    ref = (a.detach() @ w.detach().t()).cpu()
    assert torch.allclose(y.float().cpu(), ref, rtol=1e-2, atol=1e-2)
    # outside the region: float32 again
    assert (a @ w.t()).dtype == torch.float32


def test_autocast_bfloat16_and_disabled():
    a = torch.randn(4, 4, device="cuda")
    with torch.autocast("cuda", dtype=torch.bfloat16):
        assert (a @ a).dtype == torch.bfloat16
        with torch.autocast("cuda", enabled=False):
            assert (a @ a).dtype == torch.float32
        assert (a @ a).dtype == torch.bfloat16


def test_grad_scaler_trains_a_model_on_the_gpu():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(20, 32), torch.nn.ReLU(), torch.nn.Linear(32, 3)).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cuda")
    x = torch.randn(64, 20, device="cuda")
    y = torch.randint(0, 3, (64,), device="cuda")
    losses = []
    for _ in range(100):
        opt.zero_grad()
        with torch.autocast("cuda"):
            loss = F.cross_entropy(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        losses.append(loss.item())
    assert losses[-1] < losses[0] * 0.9
    assert all(p.dtype == torch.float32 for p in model.parameters())
