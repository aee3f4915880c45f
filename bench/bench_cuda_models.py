"""Training steps of whole models on the GPU, cthtorch beside torch in one
process on the same card: the MNIST CNN (examples/mnist.py's Net, batch 64,
Adadelta) and ResNet-18 (batch 64 at 224x224, SGD with momentum), the latter
also under torch.autocast('cuda'). Before timing, the MNIST CNN's losses over
15 SGD steps on the GPU are checked against cthtorch's CPU path.

Usage: python3 bench/bench_cuda_models.py   (tools/gpu_check.sh runs it)
       python3 bench/bench_cuda_models.py --device cpu --small   (a dry run of the script's logic)"""
import argparse
import os
import sys
import time
import traceback

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import cthtorch as ct  # noqa: E402

try:
    import torch
except ImportError:
    torch = None
try:
    import torchvision
except ImportError:
    torchvision = None


def mnist_net(lib, dropout):
    nn, F = lib.nn, lib.nn.functional

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1, self.conv2 = nn.Conv2d(1, 32, 3, 1), nn.Conv2d(32, 64, 3, 1)
            self.fc1, self.fc2 = nn.Linear(9216, 128), nn.Linear(128, 10)

        def forward(self, x):
            x = F.max_pool2d(F.relu(self.conv2(F.relu(self.conv1(x)))), 2)
            x = lib.flatten(F.dropout(x, 0.25, dropout), 1)
            x = F.dropout(F.relu(self.fc1(x)), 0.5, dropout)
            return F.log_softmax(self.fc2(x), dim=1)
    return Net()


def losses_on(device, x, y, steps=15):
    ct.manual_seed(0)
    m = mnist_net(ct, False).to(device)
    opt = ct.optim.SGD(m.parameters(), lr=0.05, momentum=0.9)
    xd, yd = ct.tensor(x).to(device), ct.tensor(y).to(device)
    out = []
    for _ in range(steps):
        opt.zero_grad()
        loss = ct.nn.functional.nll_loss(m(xd), yd)
        loss.backward()
        opt.step()
        out.append(loss.item())
    return np.array(out)


def step_time(lib, model, x, y, opt, amp, device, iters):
    def step():
        opt.zero_grad()
        with lib.autocast(device, enabled=amp):
            loss = lib.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
    sync = lib.cuda.synchronize if device == "cuda" else (lambda: None)
    for _ in range(2):
        step()
    sync()
    t = time.perf_counter()
    for _ in range(iters):
        step()
    sync()
    return (time.perf_counter() - t) / iters


def mnist_case(lib, device, small):
    lib.manual_seed(0)
    m = mnist_net(lib, True).to(device)
    x = lib.randn(8 if small else 64, 1, 28, 28, device=device)
    y = lib.randint(0, 10, (x.shape[0],), device=device)
    return step_time(lib, m, x, y, lib.optim.Adadelta(m.parameters(), lr=1.0), False, device, 2 if small else 20)


def resnet_case(amp):
    def run(lib, device, small):
        lib.manual_seed(0)
        m = (ct.vision.models.resnet18() if lib is ct else torchvision.models.resnet18()).to(device)
        n, hw = (2, 64) if small else (64, 224)
        x = lib.randn(n, 3, hw, hw, device=device)
        y = lib.randint(0, 1000, (n,), device=device)
        return step_time(lib, m, x, y, lib.optim.SGD(m.parameters(), lr=0.01, momentum=0.9), amp, device,
                         1 if small else 10)
    return run


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--device", default="cuda")
    p.add_argument("--small", action="store_true", help="tiny sizes and iteration counts (a dry run)")
    a = p.parse_args()
    rng = np.random.default_rng(0)
    x = rng.standard_normal((16 if a.small else 64, 1, 28, 28)).astype(np.float32)
    y = rng.integers(0, 10, x.shape[0])
    ok = True
    if a.device != "cpu":
        ref, got = losses_on("cpu", x, y), losses_on(a.device, x, y)
        rel = float(np.max(np.abs(ref - got) / np.abs(ref)))
        ok = bool(np.allclose(ref, got, rtol=2e-3))
        print("MNIST CNN, 15 SGD steps: %s losses vs the CPU's, max relative difference %.1e -> %s"
              % (a.device, rel, "OK" if ok else "MISMATCH"))
    have_torch = torch is not None and (a.device == "cpu" or torch.cuda.is_available())
    print("%-40s %12s %12s %8s" % ("training step", "cthtorch", "torch", "ratio"))
    for name, case in (("MNIST CNN, batch 64, Adadelta", mnist_case),
                       ("ResNet-18, batch 64, 224x224, SGD", resnet_case(False)),
                       ("ResNet-18, same, autocast float16", resnet_case(True))):
        if "autocast" in name and a.device == "cpu":
            continue
        torch_ok = have_torch and (torchvision is not None or "ResNet" not in name)
        try:
            mine = case(ct, a.device, a.small)
            theirs = case(torch, a.device, a.small) if torch_ok else None
            print("%-40s %9.2f ms %9s ms %8s" % (name, mine * 1e3, "%.2f" % (theirs * 1e3) if theirs else "-",
                                                  "%.2fx" % (mine / theirs) if theirs else "-"))
        except Exception:
            ok = False
            print("%-40s ERROR" % name)
            traceback.print_exc()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
