"""GEMM (cuBLAS), reductions, softmax/nll and fused optimizer steps on CUDA,
checked against cthtorch's CPU path. Skipped without a GPU."""
import pytest

import cthtorch as torch
import cthtorch.nn as nn
import cthtorch.nn.functional as F

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")

TOL = {torch.float32: 1e-4, torch.float64: 1e-10, torch.float16: 1e-2}


def close(gpu, cpu, tol=1e-4):
    g = gpu.cpu()
    assert g.shape == cpu.shape and g.dtype == cpu.dtype
    assert torch.allclose(g.double(), cpu.double(), rtol=tol, atol=tol, equal_nan=True), (g, cpu)


@pytest.mark.parametrize("dt", [torch.float32, torch.float64, torch.float16])
def test_products(dt):
    torch.manual_seed(0)
    a, b, c = torch.randn(5, 7), torch.randn(7, 3), torch.randn(3)
    A, B = torch.randn(4, 5, 7), torch.randn(4, 7, 3)
    cast = lambda t: t.to(dt)
    tol = TOL[dt] * 10
    for f, xs in [(torch.mm, (a, b)), (torch.matmul, (a, b)), (torch.bmm, (A, B)), (torch.matmul, (A, b)),
                  (lambda x, y, z: torch.addmm(z, x, y, beta=0.5, alpha=2), (a, b, c)),
                  (lambda x, y: x.t().t() @ y.t().contiguous().t(), (a, b)), (torch.mv, (a, torch.randn(7)))]:
        # reference: the CPU product of the same (rounded) operands, in float64
        close(f(*[cast(x).cuda() for x in xs]), f(*[cast(x).double() for x in xs]).to(dt), tol)
    w = torch.randn(3, 7)
    close(F.linear(cast(a).cuda(), cast(w).cuda(), cast(c).cuda()), F.linear(a.double(), w.double(), c.double()).to(dt), tol)


def test_mm_grad():
    a, b = torch.randn(4, 6, requires_grad=True), torch.randn(6, 2, requires_grad=True)
    ag, bg = a.detach().cuda().requires_grad_(), b.detach().cuda().requires_grad_()
    (a @ b).sum().backward()
    (ag @ bg).sum().backward()
    close(ag.grad, a.grad)
    close(bg.grad, b.grad)


@pytest.mark.parametrize("shape,dims", [((6, 5, 4), None), ((6, 5, 4), 0), ((6, 5, 4), 1), ((6, 5, 4), 2),
                                        ((6, 5, 4), (0, 2)), ((3, 300), 1), ((2000, 3), 1)])
@pytest.mark.parametrize("keepdim", [False, True])
def test_reductions(shape, dims, keepdim):
    torch.manual_seed(1)
    x = torch.randn(*shape)
    xg = x.cuda()
    kw = {} if dims is None else {"dim": dims, "keepdim": keepdim}
    for name in ["sum", "mean", "amax", "amin", "var", "std", "logsumexp"]:
        if name == "logsumexp" and dims is None:
            continue
        close(getattr(xg, name)(**kw), getattr(x, name)(**kw), 1e-4)
    close(xg.sum(**kw), x.sum(**kw))
    xi = (x * 10).long()
    close(xi.cuda().sum(**kw), xi.sum(**kw), 0)
    close((x > 0).cuda().any(**kw) if dims is not None else (x > 0).cuda().any(), (x > 0).any(**kw) if dims is not None else (x > 0).any(), 0)
    if isinstance(dims, int) or dims is None:
        d = {} if dims is None else {"dim": dims, "keepdim": keepdim}
        close(xg.argmax(**d), x.argmax(**d), 0)
        close(xg.argmin(**d), x.argmin(**d), 0)
        if dims is not None:
            v, i = xg.max(dims, keepdim)
            v0, i0 = x.max(dims, keepdim)
            close(v, v0, 0)
            close(i, i0, 0)
        else:
            close(xg.max(), x.max(), 0)


def test_reduce_half_and_prod():
    x = torch.rand(8, 33) + 0.5
    close(x.half().cuda().sum(1), x.half().sum(1), 1e-2)
    close(x.cuda().prod(1), x.prod(1), 1e-4)


# Shapes that reach THCReduce's wide paths: one long row split across blocks
# (contiguous, an unaligned view, odd lengths, strided), and columns (sm == 1)
# with k split across blocks or not.
@pytest.mark.parametrize("shape,dims,view", [((3_000_001,), None, None), ((3_000_003,), None, "offset"),
                                             ((2, 1_500_007), 1, None), ((1_000_000, 3), 0, "transposed"),
                                             ((5, 400_000), 1, "strided"), ((200_000, 40), 0, None),
                                             ((50, 1000), 0, None), ((3, 5000, 17), (0, 1), None)])
def test_reductions_wide(shape, dims, view):
    torch.manual_seed(2)
    x = torch.randn(*shape)
    if view == "offset":        # data not 16-byte aligned: the vector loads start after a head
        x = x[1:]
    elif view == "transposed":  # a row of the reduction is a strided column
        x = x.t().contiguous().t()
    elif view == "strided":
        x = x[:, ::2]
    xg = x.cuda()
    kw = {} if dims is None else {"dim": dims}
    close(xg.sum(**kw), x.double().sum(**kw).float(), 1e-3)
    close(xg.mean(**kw), x.double().mean(**kw).float(), 1e-4)
    close(xg.amax(**kw), x.amax(**kw), 0)
    close(xg.amin(**kw), x.amin(**kw), 0)
    close(xg.double().sum(**kw), x.double().sum(**kw), 1e-9)
    close(xg.norm(), x.double().norm().float(), 1e-4)
    xi = (x * 4).long()
    close(xi.cuda().sum(**kw), xi.sum(**kw), 0)
    close((x > 3.5).cuda().any(), (x > 3.5).any(), 0)
    if isinstance(dims, tuple):
        return
    b = x > -3.5
    close(b.cuda().all(**kw) if dims is not None else b.cuda().all(), b.all(**kw) if dims is not None else b.all(), 0)
    close(xg.argmax(**kw), x.argmax(**kw), 0)
    close(xg.argmin(**kw), x.argmin(**kw), 0)
    y = x.abs() * 1e-6 + 1
    close(y.cuda().prod(**kw), y.double().prod(**kw).float(), 1e-3)


def test_reductions_wide_ties_and_nan():
    """argmax/argmin keep the first of equal extremes and NaN wins, across chunk boundaries"""
    n = 4_000_000
    x = torch.zeros(n)
    x[123] = 5.0
    x[n - 7] = 5.0
    x[2_000_000] = -5.0
    x[3_999_000] = -5.0
    xg = x.cuda()
    assert xg.argmax().item() == 123 and xg.argmin().item() == 2_000_000
    assert xg.max().item() == 5.0
    x[3_000_000] = float("nan")
    x[3_500_000] = float("nan")
    xg = x.cuda()
    assert xg.argmax().item() == 3_000_000 and xg.argmin().item() == 3_000_000
    assert xg.amax().isnan().item()
    col = torch.zeros(300_000, 20)
    col[250_000, 3] = float("nan")
    col[10, 4] = 2.0
    col[290_000, 4] = 2.0
    v, i = col.cuda().max(0)
    v0, i0 = col.max(0)
    close(v, v0, 0)
    close(i, i0, 0)
    for dt in [torch.float16, torch.bfloat16, torch.int8, torch.uint8, torch.int16, torch.int32]:
        y = (torch.rand(1_000_003) * 100).to(dt)
        close(y.cuda().amax(), y.amax(), 0)
        close(y.cuda().argmin(), y.argmin(), 0)
        if not dt.is_floating_point:
            close(y.cuda().sum(), y.sum(), 0)


@pytest.mark.parametrize("dt", [torch.float32, torch.float64])
def test_softmax_nll(dt):
    torch.manual_seed(2)
    x = torch.randn(16, 10, dtype=dt, requires_grad=True)
    t = torch.randint(0, 10, (16,))
    t[3] = -100
    w = torch.rand(10, dtype=dt)
    xg = x.detach().cuda().requires_grad_()
    for dim in (1, 0):
        close(F.softmax(xg, dim), F.softmax(x, dim), TOL[dt])
        close(F.log_softmax(xg, dim), F.log_softmax(x, dim), TOL[dt])
    for red in ("mean", "sum", "none"):
        for wt in (None, w):
            loss = F.cross_entropy(x, t, weight=wt, reduction=red)
            lg = F.cross_entropy(xg, t.cuda(), weight=None if wt is None else wt.cuda(), reduction=red)
            close(lg, loss.detach(), TOL[dt])
            g, = torch.autograd.grad(loss.sum(), x)
            gg, = torch.autograd.grad(lg.sum(), xg)
            close(gg, g, TOL[dt])
    with pytest.raises(IndexError, match="out of bounds"):
        F.nll_loss(xg, torch.full((16,), 12).cuda())


@pytest.mark.parametrize("opt", ["sgd", "adam", "adamw"])
def test_optimizer_step(opt):
    torch.manual_seed(3)
    p = torch.randn(50, requires_grad=True)
    pg = p.detach().cuda().requires_grad_()
    mk = {"sgd": lambda ps: torch.optim.SGD(ps, lr=0.1, momentum=0.9, weight_decay=0.01),
          "adam": lambda ps: torch.optim.Adam(ps, lr=0.01, weight_decay=0.01),
          "adamw": lambda ps: torch.optim.AdamW(ps, lr=0.01)}[opt]
    o, og = mk([p]), mk([pg])
    for _ in range(3):
        for q, oo in ((p, o), (pg, og)):
            oo.zero_grad()
            (q * q * q).sum().backward()
            oo.step()
    close(pg.detach(), p.detach(), 1e-5)


def test_mlp_trains_like_cpu():
    def run(device):
        torch.manual_seed(4)
        model = nn.Sequential(nn.Linear(20, 32), nn.ReLU(), nn.Linear(32, 5)).to(device)
        opt = torch.optim.Adam(model.parameters(), lr=1e-2)
        g = torch.Generator().manual_seed(5)
        x, y = torch.randn(64, 20, generator=g), torch.randint(0, 5, (64,), generator=g)
        x, y = x.to(device), y.to(device)
        losses = []
        for _ in range(20):
            opt.zero_grad()
            loss = nn.CrossEntropyLoss()(model(x), y)
            loss.backward()
            opt.step()
            losses.append(loss.item())
        return losses
    cpu, gpu = run("cpu"), run("cuda")
    assert gpu[-1] < gpu[0]
    for a, b in zip(cpu, gpu):
        assert abs(a - b) < 1e-3 * max(1.0, abs(a)), (cpu, gpu)
