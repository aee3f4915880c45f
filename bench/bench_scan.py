"""Scans and counting: cumsum / cummax / logcumsumexp, searchsorted, bincount,
histc: cthtorch and torch timed side by side in one process (min of repeats, ms).
Run: PYTHONPATH=. python bench/bench_scan.py [threads]"""
import sys

import numpy as np
import torch

import cthtorch

from bench_scatter import main   # the side-by-side timing loop (bench/ is on sys.path when run as a script)


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


if __name__ == "__main__":
    main(cases)
