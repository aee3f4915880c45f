"""Scans and counting: cumsum / cummax / logcumsumexp, searchsorted, bincount,
histc: cthtorch and torch timed side by side in one process (min of repeats, ms).
Run: PYTHONPATH=. python bench/bench_scan.py [threads]"""
import sys
import time

import numpy as np
import torch

import cthtorch


def cases(L):
    rs = np.random.RandomState(0)
    x = L.from_numpy(rs.randn(1000, 1000).astype(np.float32))
    bd = L.from_numpy(np.sort(rs.randn(10000)).astype(np.float32))
    vals = L.from_numpy(rs.randn(1000000).astype(np.float32))
    ints = L.from_numpy(rs.randint(0, 1000, size=1000000))
    out = {
        "cumsum (1000,1000) dim 0": lambda: L.cumsum(x, 0),
        "cumsum (1000,1000) dim 1": lambda: L.cumsum(x, 1),
        "cummax (1000,1000) dim 0": lambda: L.cummax(x, 0),
        "cummax (1000,1000) dim 1": lambda: L.cummax(x, 1),
        "logcumsumexp (1000,1000) dim 0": lambda: L.logcumsumexp(x, 0),
        "logcumsumexp (1000,1000) dim 1": lambda: L.logcumsumexp(x, 1),
    }
    out.update({
        "searchsorted 1M into 10k": lambda: L.searchsorted(bd, vals),
        "bincount 1M (1000 bins)": lambda: L.bincount(ints),
        "histc 1M (100 bins)": lambda: L.histc(vals, 100, -3, 3),
    })
    return out


def timeit(f, reps=10):
    f()
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t0)
    return 1e3 * float(np.min(ts))


def main():
    if len(sys.argv) > 1:
        cthtorch.set_num_threads(int(sys.argv[1]))
    torch.set_num_threads(cthtorch.get_num_threads())
    ct, tt = cases(cthtorch), cases(torch)
    print("%-42s %10s %10s %9s" % ("case (threads=%d)" % torch.get_num_threads(), "cthtorch", "torch", "ct/torch"))
    for name in ct:
        a, b = timeit(ct[name]), timeit(tt[name])
        print("%-42s %8.3fms %8.3fms %8.2fx" % (name, a, b, a / b))


if __name__ == "__main__":
    main()
