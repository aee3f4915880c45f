"""x[idx], x[idx] = v, index_select, nonzero, masked_select: cthtorch and
torch timed side by side in one process (min of repeats, ms).
Run: PYTHONPATH=. python bench/bench_indexing.py [threads]"""
import sys

import numpy as np
import torch

import cthtorch

from bench_scatter import main   # the side-by-side timing loop (bench/ is on sys.path when run as a script)


def cases(L):
    rs = np.random.RandomState(0)
    v1 = L.from_numpy(rs.rand(1000000).astype(np.float32))
    v2 = L.from_numpy(rs.rand(100000, 64).astype(np.float32))
    i1 = L.from_numpy(rs.randint(0, 1000000, size=100000))
    i2 = L.from_numpy(rs.randint(0, 100000, size=100000))
    big = L.from_numpy(rs.rand(4000000).astype(np.float32))
    mask = big > 0.5
    vals1 = L.from_numpy(rs.rand(100000).astype(np.float32))
    vals2 = L.from_numpy(rs.rand(100000, 64).astype(np.float32))

    def put1():
        v1[i1] = vals1

    def put2():
        v2[i2] = vals2
    return {
        "x[idx] (1M,) 100k idx": lambda: v1[i1],
        "x[idx] (100k,64) 100k idx": lambda: v2[i2],
        "x[idx] = v (1M,)": put1,
        "x[idx] = v (100k,64)": put2,
        "index_select (100k,64) dim 0": lambda: v2.index_select(0, i2),
        "nonzero 4M": lambda: mask.nonzero(),
        "masked_select 4M": lambda: big.masked_select(mask),
    }


if __name__ == "__main__":
    main(cases)
