"""The main job's epoch on the GPU, cthtorch beside torch in one script on the
same card and data: pytorch/examples' MNIST CNN (dropout, Adadelta lr 1.0,
batch 64, shuffled DataLoader with pinned memory, the loss read every 10
steps as that example logs it), one epoch on the first 8,000 of the 10,000
MNIST test images, tested on the last 2,000. Several seeds, so an accuracy gap
between the libraries can be told from the spread of one library's seeds
(their GPU random streams differ, so single runs differ by chance).

Usage: python3 bench/bench_cuda_mnist.py [--data DIR] [--seeds 1 2 3]   (the GPU box)
       python3 bench/bench_cuda_mnist.py --device cpu --seeds 1 --limit 512   (a dry run)"""
import argparse
import gzip
import os
import statistics
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
import cthtorch as ct  # noqa: E402

try:
    import torch
except ImportError:
    torch = None


def idx(path):
    with (gzip.open if path.endswith(".gz") else open)(path, "rb") as f:
        raw = f.read()
    ndim = raw[3]
    shape = [int.from_bytes(raw[4 + 4 * i:8 + 4 * i], "big") for i in range(ndim)]
    return np.frombuffer(raw, np.uint8, offset=4 + 4 * ndim).reshape(shape)


def load(folder):
    def find(stem):
        for name in (stem, stem + ".gz"):
            if os.path.exists(os.path.join(folder, name)):
                return os.path.join(folder, name)
        raise SystemExit("no %s in %s" % (stem, folder))
    x = (idx(find("t10k-images-idx3-ubyte")).astype(np.float32) / 255.0 - 0.1307) / 0.3081
    return x[:, None], idx(find("t10k-labels-idx1-ubyte")).astype(np.int64)


def run(lib, x, y, seed, device, limit):
    nn, F = lib.nn, lib.nn.functional

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1, self.conv2 = nn.Conv2d(1, 32, 3, 1), nn.Conv2d(32, 64, 3, 1)
            self.dropout1, self.dropout2 = nn.Dropout(0.25), nn.Dropout(0.5)
            self.fc1, self.fc2 = nn.Linear(9216, 128), nn.Linear(128, 10)

        def forward(self, x):
            x = F.max_pool2d(F.relu(self.conv2(F.relu(self.conv1(x)))), 2)
            x = F.relu(self.fc1(lib.flatten(self.dropout1(x), 1)))
            return F.log_softmax(self.fc2(self.dropout2(x)), dim=1)

    lib.manual_seed(seed)
    ntrain = min(limit, 8000)
    data = lib.utils.data
    train = data.TensorDataset(lib.tensor(x[:ntrain]), lib.tensor(y[:ntrain]))
    test = data.TensorDataset(lib.tensor(x[8000:]), lib.tensor(y[8000:]))
    pin = device != "cpu"
    loader = data.DataLoader(train, batch_size=64, shuffle=True, pin_memory=pin)
    test_loader = data.DataLoader(test, batch_size=1000, pin_memory=pin)
    model = Net().to(device)
    opt = lib.optim.Adadelta(model.parameters(), lr=1.0)
    sync = lib.cuda.synchronize if device != "cpu" else (lambda: None)
    model.train()
    sync()
    t = time.perf_counter()
    for i, (xb, yb) in enumerate(loader):
        xb, yb = xb.to(device, non_blocking=True), yb.to(device, non_blocking=True)
        opt.zero_grad()
        loss = F.nll_loss(model(xb), yb)
        loss.backward()
        opt.step()
        if i % 10 == 0:
            loss.item()
    sync()
    epoch = time.perf_counter() - t
    model.eval()
    correct = 0
    with lib.no_grad():
        for xb, yb in test_loader:
            xb, yb = xb.to(device), yb.to(device)
            correct += model(xb).argmax(dim=1).eq(yb).sum().item()
    return epoch, 100.0 * correct / len(test)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--device", default="cuda")
    p.add_argument("--data", default=None)
    p.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3, 4, 5])
    p.add_argument("--limit", type=int, default=8000, help="train on the first N images (a dry run)")
    a = p.parse_args()
    folder = a.data or next((d for d in (os.path.join(ROOT, "..", "shared", "data", "mnist"),
                                         os.path.join(ROOT, "data", "mnist")) if os.path.isdir(d)), None)
    if folder is None:
        raise SystemExit("no MNIST folder: pass --data")
    x, y = load(folder)
    libs = [ct] + ([torch] if torch is not None and (a.device == "cpu" or torch.cuda.is_available()) else [])
    run(libs[0], x, y, 0, a.device, 640)    # warm-up: module load, handles, allocator
    if len(libs) > 1:
        run(libs[1], x, y, 0, a.device, 640)
    res = {lib.__name__: [] for lib in libs}
    print("%-6s %-10s %10s %9s" % ("seed", "lib", "epoch s", "accuracy"))
    for s in a.seeds:
        for lib in libs:   # interleaved, so drift on the card hits both
            e, acc = run(lib, x, y, s, a.device, a.limit)
            res[lib.__name__].append((e, acc))
            print("%-6d %-10s %10.3f %8.2f%%" % (s, lib.__name__, e, acc), flush=True)
    print()
    for name, r in res.items():
        accs = [acc for _, acc in r]
        print("%-10s epoch median %.3f s, accuracy mean %.2f%% (min %.2f, max %.2f)"
              % (name, statistics.median(e for e, _ in r), statistics.mean(accs), min(accs), max(accs)))
    if len(libs) > 1:
        mine, theirs = res["cthtorch"], res["torch"]
        print("epoch time ratio (cthtorch/torch, medians): %.2fx" % (statistics.median(e for e, _ in mine)
                                                                     / statistics.median(e for e, _ in theirs)))
        print("accuracy gap (cthtorch - torch, means): %+.2f points"
              % (statistics.mean(a for _, a in mine) - statistics.mean(a for _, a in theirs)))


if __name__ == "__main__":
    main()
