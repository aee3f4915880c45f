"""Batch/layer/group norm, average and adaptive average pooling, cat/stack on
CUDA, and a ResNet-18 forward+backward, checked against cthtorch's CPU path.
Skipped without a GPU."""
import pytest

import cthtorch as torch
import cthtorch.nn as nn
import cthtorch.nn.functional as F

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")

TOL = {torch.float32: 1e-4, torch.float64: 1e-10}


def close(gpu, cpu, tol=1e-4):
    g = gpu.detach().cpu()
    cpu = cpu.detach()
    assert g.shape == cpu.shape and g.dtype == cpu.dtype, (g.shape, cpu.shape, g.dtype, cpu.dtype)
    assert torch.allclose(g.double(), cpu.double(), rtol=tol, atol=tol, equal_nan=True), (g, cpu)


def both(fn, inputs, tol, grad_out=None):
    """fn on CPU leaves and on their CUDA copies: outputs and the gradients of
    every input that requires grad match"""
    cpu = [x.detach().requires_grad_(x.requires_grad) for x in inputs]
    gpu = [x.detach().cuda().requires_grad_(x.requires_grad) for x in inputs]
    yc, yg = fn(*cpu), fn(*gpu)
    close(yg, yc, tol)
    go = torch.randn(yc.shape, dtype=yc.dtype, generator=torch.Generator().manual_seed(9)) if grad_out is None else grad_out
    yc.backward(go)
    yg.backward(go.cuda())
    for c, g in zip(cpu, gpu):
        if c.requires_grad:
            assert g.grad is not None and g.grad.is_cuda
            close(g.grad, c.grad, tol)
    return yc, yg


@pytest.mark.parametrize("dt", [torch.float32, torch.float64])
@pytest.mark.parametrize("shape", [(4, 3, 5, 6), (8, 5), (3, 4, 7), (2, 3, 1, 1)])
@pytest.mark.parametrize("affine", [True, False])
def test_batch_norm_train(dt, shape, affine):
    torch.manual_seed(0)
    C = shape[1]
    x = (torch.randn(*shape, dtype=dt) * 2 + 0.5).requires_grad_()
    w = (torch.rand(C, dtype=dt) + 0.5).requires_grad_() if affine else None
    b = torch.randn(C, dtype=dt).requires_grad_() if affine else None
    rm, rv = torch.randn(C, dtype=dt), torch.rand(C, dtype=dt) + 0.5
    rmg, rvg = rm.cuda(), rv.cuda()
    ins = [x] + ([w, b] if affine else [])

    def fn(x, *wb):
        gpu = x.is_cuda
        return F.batch_norm(x, rmg if gpu else rm, rvg if gpu else rv, *(wb or (None, None)), training=True,
                            momentum=0.3, eps=1e-5)
    both(fn, ins, TOL[dt] * 10)
    # running stats moved by momentum, the variance unbiased (as torch)
    close(rmg, rm, TOL[dt])
    close(rvg, rv, TOL[dt])


@pytest.mark.parametrize("dt", [torch.float32, torch.float64])
def test_batch_norm_eval_and_module(dt):
    torch.manual_seed(1)
    x = torch.randn(4, 6, 3, 3, dtype=dt, requires_grad=True)
    rm, rv = torch.randn(6, dtype=dt), torch.rand(6, dtype=dt) + 0.5
    w, b = torch.rand(6, dtype=dt, requires_grad=True), torch.randn(6, dtype=dt, requires_grad=True)
    both(lambda x, w, b: F.batch_norm(x, rm.to(x.device), rv.to(x.device), w, b, training=False, eps=1e-3),
         [x, w, b], TOL[dt] * 10)
    m = nn.BatchNorm2d(6).to(dt)
    mg = nn.BatchNorm2d(6).to(dt).cuda()
    for _ in range(3):
        xx = torch.randn(4, 6, 3, 3, dtype=dt)
        close(mg(xx.cuda()), m(xx), TOL[dt] * 10)
    close(mg.running_mean, m.running_mean, TOL[dt])
    close(mg.running_var, m.running_var, TOL[dt])
    assert int(mg.num_batches_tracked) == 3
    m.eval(), mg.eval()
    xx = torch.randn(2, 6, 3, 3, dtype=dt)
    close(mg(xx.cuda()), m(xx), TOL[dt] * 10)


def test_batch_norm_half_and_device_mix():
    x = torch.randn(4, 3, 2, 2)
    y = F.batch_norm(x.half().cuda(), None, None, training=True)
    assert y.dtype == torch.float16 and y.is_cuda
    close(y.float(), F.batch_norm(x.half().float(), None, None, training=True), 1e-2)
    with pytest.raises(RuntimeError, match="same device"):
        F.batch_norm(x.cuda(), torch.zeros(3), torch.ones(3), training=True)


@pytest.mark.parametrize("dt", [torch.float32, torch.float64])
@pytest.mark.parametrize("shape,norm", [((4, 10), (10,)), ((2, 3, 300), (300,)), ((2, 3, 4, 5), (4, 5)),
                                        ((5, 1), (1,))])
@pytest.mark.parametrize("affine", [True, False])
def test_layer_norm(dt, shape, norm, affine):
    torch.manual_seed(2)
    x = (torch.randn(*shape, dtype=dt) * 3 + 1).requires_grad_()
    w = (torch.rand(*norm, dtype=dt) + 0.5).requires_grad_() if affine else None
    b = torch.randn(*norm, dtype=dt).requires_grad_() if affine else None
    ins = [x] + ([w, b] if affine else [])
    both(lambda x, *wb: F.layer_norm(x, norm, *(wb or (None, None)), eps=1e-5), ins, TOL[dt] * 10)


@pytest.mark.parametrize("dt", [torch.float32, torch.float64])
def test_group_norm_and_modules(dt):
    torch.manual_seed(3)
    x = torch.randn(3, 6, 4, 5, dtype=dt, requires_grad=True)
    w, b = torch.rand(6, dtype=dt, requires_grad=True), torch.randn(6, dtype=dt, requires_grad=True)
    both(lambda x, w, b: F.group_norm(x, 3, w, b), [x, w, b], TOL[dt] * 10)
    ln = nn.LayerNorm(5).to(dt)
    lng = nn.LayerNorm(5).to(dt).cuda()
    close(lng(x.detach().cuda()), ln(x.detach()), TOL[dt] * 10)


@pytest.mark.parametrize("dt", [torch.float32, torch.float64])
@pytest.mark.parametrize("kw", [dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1),
                                dict(kernel_size=3, stride=2, padding=1, count_include_pad=False),
                                dict(kernel_size=(3, 2), stride=(2, 1), padding=(1, 0), ceil_mode=True),
                                dict(kernel_size=3, stride=1, padding=1, divisor_override=5)])
def test_avg_pool2d(dt, kw):
    torch.manual_seed(4)
    for shape in [(2, 3, 7, 8), (3, 5, 6)]:
        x = torch.randn(*shape, dtype=dt, requires_grad=True)
        both(lambda x: F.avg_pool2d(x, **kw), [x], TOL[dt])


@pytest.mark.parametrize("dt", [torch.float32, torch.float64])
@pytest.mark.parametrize("size", [1, (1, 1), 3, (2, 5), (7, 7), (4, None)])
def test_adaptive_avg_pool2d(dt, size):
    torch.manual_seed(5)
    for shape in [(2, 3, 7, 9), (4, 8, 8)]:
        x = torch.randn(*shape, dtype=dt, requires_grad=True)
        both(lambda x: F.adaptive_avg_pool2d(x, size), [x], TOL[dt])


def test_adaptive_avg_pool3d_and_module():
    torch.manual_seed(6)
    x = torch.randn(2, 3, 5, 6, 7, requires_grad=True)
    both(lambda x: F.adaptive_avg_pool3d(x, (2, 3, 4)), [x], 1e-4)
    x = torch.randn(2, 512, 2, 2)
    close(nn.AdaptiveAvgPool2d((1, 1))(x.cuda()), nn.AdaptiveAvgPool2d((1, 1))(x))


@pytest.mark.parametrize("dim", [0, 1, 2, -1])
def test_cat_stack(dim):
    torch.manual_seed(7)
    a, b = torch.randn(3, 4, 5, requires_grad=True), torch.randn(3, 4, 5, requires_grad=True)
    c = torch.randn(3, 4, 5).transpose(0, 1).contiguous().transpose(0, 1).requires_grad_()   # strided
    both(lambda a, b, c: torch.cat([a, b, c], dim), [a, b, c], 0)
    both(lambda a, b, c: torch.stack([a, b, c], dim), [a, b, c], 0)
    # sizes differing along dim, mixed dtypes, the legacy empty (0,) input, out=
    p, q = torch.randn(2, 3), torch.randn(2, 5, dtype=torch.float64)
    close(torch.cat([p.cuda(), q.cuda(), torch.empty(0).cuda()], 1), torch.cat([p, q, torch.empty(0)], 1), 0)
    out = torch.empty(1).cuda()
    r = torch.cat([p.cuda(), p.cuda()], 0, out=out)
    assert r.data_ptr() == out.data_ptr() and r.is_cuda
    close(out, torch.cat([p, p], 0), 0)
    ints = [torch.arange(6).reshape(2, 3), torch.arange(3).reshape(1, 3)]
    close(torch.cat([t.cuda() for t in ints]), torch.cat(ints), 0)
    with pytest.raises(RuntimeError, match="same device"):
        torch.cat([p.cuda(), p])


def test_resnet18_forward_backward_matches_cpu():
    from cthtorch.vision.models import resnet18
    torch.manual_seed(8)
    model = resnet18(num_classes=10).double()
    gpu = resnet18(num_classes=10).double()
    gpu.load_state_dict(model.state_dict())
    gpu = gpu.cuda()
    g = torch.Generator().manual_seed(10)
    x, y = torch.randn(2, 3, 64, 64, generator=g, dtype=torch.float64), torch.randint(0, 10, (2,), generator=g)
    loss = F.cross_entropy(model(x), y)
    lg = F.cross_entropy(gpu(x.cuda()), y.cuda())
    assert abs(loss.item() - lg.item()) < 1e-8, (loss.item(), lg.item())
    loss.backward()
    lg.backward()
    pc, pg = dict(model.named_parameters()), dict(gpu.named_parameters())
    for name in ("conv1.weight", "bn1.weight", "bn1.bias", "layer1.0.conv1.weight", "layer2.0.downsample.1.weight",
                 "layer4.1.bn2.bias", "fc.weight", "fc.bias"):
        assert pg[name].grad.is_cuda
        close(pg[name].grad, pc[name].grad, 1e-7)
    bc, bg = dict(model.named_buffers()), dict(gpu.named_buffers())
    close(bg["layer3.1.bn1.running_var"], bc["layer3.1.bn1.running_var"], 1e-8)


def test_resnet18_trains_on_cuda():
    from cthtorch.vision.models import resnet18
    torch.manual_seed(11)
    model = resnet18(num_classes=4).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    g = torch.Generator().manual_seed(12)
    x, y = torch.randn(8, 3, 32, 32, generator=g).cuda(), torch.randint(0, 4, (8,), generator=g).cuda()
    losses = []
    for _ in range(8):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < losses[0], losses
