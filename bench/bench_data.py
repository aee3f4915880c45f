"""DataLoader benchmark: MNIST (the shared test set) with a CPU-heavy transform,
batches/s with 0, 1, 2 workers, cthtorch beside torch.utils.data; and a 64 MB
batch from a worker to the main process through shared memory vs pickled bytes.

    python bench/bench_data.py [--batches N]
"""
import argparse
import multiprocessing
import os
import pickle
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import cthtorch  # noqa: E402
from cthtorch.utils.data import DataLoader  # noqa: E402
from cthtorch.vision import datasets, transforms as T  # noqa: E402

MNIST = "/work/shared/data/mnist"


def heavy():
    """A transform with real per-sample work: upscale, rotate, crop, normalize."""
    return T.Compose([T.Resize(160), T.RandomRotation(15), T.RandomCrop(144, padding=4), T.ToTensor(),
                      T.Normalize((0.1307,), (0.3081,))])


def loader_rate(lib, dl_cls, ds, workers, batches, bs):
    dl = dl_cls(ds, batch_size=bs, shuffle=True, num_workers=workers)
    it = iter(dl)
    next(it)                       # worker start-up not counted
    t0 = time.perf_counter()
    for _ in range(batches):
        next(it)
    rate = batches / (time.perf_counter() - t0)
    del it
    return rate


class Big:
    """One 64 MB float32 tensor per item."""

    def __init__(self, lib, n=4):
        self.lib, self.n = lib, n

    def __getitem__(self, i):
        return self.lib.full((16 * 1024 * 1024,), float(i))

    def __len__(self):
        return self.n


def _send_pickled(q, n):
    for i in range(n):
        a = np.full((16 * 1024 * 1024,), float(i), dtype=np.float32)
        q.put(pickle.dumps(a, protocol=5))


def pickled_rate(n):
    ctx = multiprocessing.get_context("fork")
    q = ctx.Queue()
    p = ctx.Process(target=_send_pickled, args=(q, n))
    t0 = time.perf_counter()
    p.start()
    for _ in range(n):
        cthtorch.from_numpy(pickle.loads(q.get()))
    dt = time.perf_counter() - t0
    p.join()
    return n * 64 / dt


def shm_rate(lib, dl_cls, n):
    dl = dl_cls(Big(lib, n), batch_size=None, num_workers=1)
    t0 = time.perf_counter()
    for x in dl:
        assert x.numel() == 16 * 1024 * 1024
    return n * 64 / (time.perf_counter() - t0)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batches", type=int, default=20)
    ap.add_argument("--batch-size", type=int, default=64)
    args = ap.parse_args()
    try:
        import torch
        import torch.utils.data as TD
    except ImportError:
        torch = None
    if not os.path.isdir(MNIST):
        sys.exit("MNIST not found at %s" % MNIST)
    print("MNIST test set, Resize(160)+RandomRotation+RandomCrop(144)+ToTensor+Normalize, batch %d, %d batches"
          % (args.batch_size, args.batches))
    for workers in (0, 1, 2):
        ds = datasets.MNIST(MNIST, train=False, transform=heavy())
        line = "  workers=%d  cthtorch %7.1f batches/s" % (
            workers, loader_rate(cthtorch, DataLoader, ds, workers, args.batches, args.batch_size))
        if torch is not None:
            line += "   torch.utils.data %7.1f batches/s" % loader_rate(torch, TD.DataLoader, ds_torch(torch), workers,
                                                                         args.batches, args.batch_size)
        print(line, flush=True)
    print("64 MB batch, worker -> main process:")
    print("  cthtorch shared memory  %7.0f MB/s" % shm_rate(cthtorch, DataLoader, 6))
    if torch is not None:
        print("  torch shared memory     %7.0f MB/s" % shm_rate(torch, TD.DataLoader, 6))
    print("  pickled bytes (queue)   %7.0f MB/s" % pickled_rate(6))


def ds_torch(torch):
    """The same dataset and transform, producing torch tensors (cthtorch's PIL transforms feed both)."""
    inner = datasets.MNIST(MNIST, train=False, transform=heavy())

    class Wrap(torch.utils.data.Dataset):
        def __getitem__(self, i):
            x, y = inner[i]
            return torch.from_numpy(x.numpy()), y

        def __len__(self):
            return len(inner)
    return Wrap()


if __name__ == "__main__":
    main()
