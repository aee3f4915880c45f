"""Where a ResNet-18 training step spends its time on the GPU, cthtorch beside
torch in one process on the same card: the whole step split into forward,
backward and optimizer, the host time of a step (how long Python takes to
queue it: when that is near the step's time, the step is host-bound), and the
step's op kinds one at a time at ResNet-18's own shapes (batch 64, 224x224).

Usage: python3 bench/profile_cuda_resnet.py [--batch 64]   (the GPU box; tools/gpu_check.sh)
       python3 bench/profile_cuda_resnet.py --device cpu --batch 2   (a dry run of the script)"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import cthtorch as ct  # noqa: E402

try:
    import torch
    import torchvision
except ImportError:
    torch = torchvision = None


def timed(lib, device, fn, iters):
    sync = lib.cuda.synchronize if device == "cuda" else (lambda: None)
    fn()
    fn()
    sync()
    t = time.perf_counter()
    for _ in range(iters):
        fn()
    host = time.perf_counter() - t
    sync()
    return (time.perf_counter() - t) / iters, host / iters


def step_parts(lib, device, n, hw, iters):
    """(forward, forward+backward, whole step, host time of a whole step), seconds"""
    lib.manual_seed(0)
    m = (ct.vision.models.resnet18() if lib is ct else torchvision.models.resnet18()).to(device)
    x = lib.randn(n, 3, hw, hw, device=device)
    y = lib.randint(0, 1000, (n,), device=device)
    opt = lib.optim.SGD(m.parameters(), lr=0.01, momentum=0.9)
    F = lib.nn.functional

    def fwd():
        with lib.no_grad():
            F.cross_entropy(m(x), y)

    def fwd_bwd():
        opt.zero_grad()
        F.cross_entropy(m(x), y).backward()

    def step():
        fwd_bwd()
        opt.step()
    f, _ = timed(lib, device, fwd, iters)
    fb, _ = timed(lib, device, fwd_bwd, iters)
    s, host = timed(lib, device, step, iters)
    return f, fb, s, host


def op_cases(lib, device, n):
    """(name, fn) at ResNet-18's shapes; fn closes over its own tensors"""
    F = lib.nn.functional
    g = dict(device=device)
    out = []

    def conv(name, cin, cout, k, stride, hw):
        x = lib.randn(n, cin, hw, hw, **g, requires_grad=True)
        w = lib.randn(cout, cin, k, k, **g, requires_grad=True)
        y = F.conv2d(x, w, stride=stride, padding=k // 2)
        gy = lib.randn_like(y)
        out.append((name + " fwd", lambda: F.conv2d(x, w, stride=stride, padding=k // 2)))
        out.append((name + " fwd+bwd", lambda: F.conv2d(x, w, stride=stride, padding=k // 2).backward(gy)))
    conv("conv7x7 3->64 s2 @224", 3, 64, 7, 2, 224)
    conv("conv3x3 64->64 @56", 64, 64, 3, 1, 56)
    conv("conv3x3 128->128 @28", 128, 128, 3, 1, 28)
    conv("conv3x3 512->512 @7", 512, 512, 3, 1, 7)
    conv("conv1x1 64->128 s2 @56", 64, 128, 1, 2, 56)

    def bn(name, c, hw):
        x = lib.randn(n, c, hw, hw, **g, requires_grad=True)
        mod = lib.nn.BatchNorm2d(c).to(device)
        gy = lib.randn_like(x)
        out.append((name + " fwd", lambda: mod(x)))
        out.append((name + " fwd+bwd", lambda: mod(x).backward(gy)))
    bn("batchnorm 64 @112", 64, 112)
    bn("batchnorm 64 @56", 64, 56)
    bn("batchnorm 512 @7", 512, 7)

    a = lib.randn(n, 64, 112, 112, **g)
    b = lib.randn(n, 64, 56, 56, **g)
    out.append(("relu_ 64 @112", lambda: F.relu(a, inplace=True)))
    out.append(("add 64 @56", lambda: b + b))
    xp = lib.randn(n, 64, 112, 112, **g, requires_grad=True)
    out.append(("max_pool 3x3 s2 fwd", lambda: F.max_pool2d(xp, 3, 2, 1)))
    gp = lib.randn(n, 64, 56, 56, **g)
    out.append(("max_pool 3x3 s2 fwd+bwd", lambda: F.max_pool2d(xp, 3, 2, 1).backward(gp)))
    xa = lib.randn(n, 512, 7, 7, **g, requires_grad=True)
    out.append(("adaptive_avg_pool+flatten+linear fwd+bwd",
                lambda: F.linear(lib.flatten(F.adaptive_avg_pool2d(xa, 1), 1),
                                 lib.ones(1000, 512, **g)).sum().backward()))
    lo = lib.randn(n, 1000, **g, requires_grad=True)
    tg = lib.randint(0, 1000, (n,), **g)
    out.append(("cross_entropy fwd+bwd", lambda: F.cross_entropy(lo, tg).backward()))
    lib.manual_seed(0)
    m = (ct.vision.models.resnet18() if lib is ct else torchvision.models.resnet18()).to(device)
    for p in m.parameters():
        p.grad = lib.randn_like(p)
    opt = lib.optim.SGD(m.parameters(), lr=0.01, momentum=0.9)
    out.append(("SGD momentum step, resnet18 params", opt.step))
    out.append(("zero_grad, resnet18 params", lambda: opt.zero_grad(set_to_none=False)))
    return out


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--device", default="cuda")
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--iters", type=int, default=10)
    a = p.parse_args()
    hw = 224 if a.batch >= 8 else 64
    libs = [ct] + ([torch] if torch is not None and (a.device == "cpu" or torch.cuda.is_available()) else [])
    print("ResNet-18 step, batch %d, %dx%d, SGD momentum (ms; host = time to queue a step)" % (a.batch, hw, hw))
    if a.device == "cuda":
        # which convolution / batch norm path ran: cuDNN (both libraries' defaults) or libTHC's own kernels
        for lib in libs:
            cd = lib.backends.cudnn
            print("%s: cudnn %s, enabled=%s benchmark=%s allow_tf32=%s" % (lib.__name__, cd.version(), cd.enabled,
                                                                           cd.benchmark, cd.allow_tf32))
    print("%-10s %10s %10s %10s %10s %10s" % ("lib", "forward", "fwd+bwd", "step", "host", "optim"))
    for lib in libs:
        f, fb, s, host = step_parts(lib, a.device, a.batch, hw, a.iters)
        print("%-10s %10.2f %10.2f %10.2f %10.2f %10.2f" % (lib.__name__, f * 1e3, fb * 1e3, s * 1e3, host * 1e3,
                                                            (s - fb) * 1e3))
    print("\nop kinds at ResNet-18's shapes (ms per call, device time; host ms in brackets)")
    print("%-44s %16s %16s %7s" % ("op", "cthtorch", "torch", "ratio"))
    cases = [dict(op_cases(lib, a.device, a.batch)) for lib in libs]
    for name in cases[0]:
        r = [timed(lib, a.device, c[name], a.iters) for lib, c in zip(libs, cases)]
        cells = ["%8.3f (%5.3f)" % (d * 1e3, h * 1e3) for d, h in r]
        ratio = "%.2fx" % (r[0][0] / r[1][0]) if len(r) > 1 else "-"
        print("%-44s %16s %16s %7s" % (name, cells[0], cells[1] if len(cells) > 1 else "-", ratio), flush=True)
    if a.device == "cuda":
        taken, declined = ct._C._cuda._cudnn_counts()
        print("cthtorch cuDNN calls: %d taken, %d declined (own kernels)" % (taken, declined))


if __name__ == "__main__":
    main()
