"""x[idx], x[idx] = v, index_select, nonzero, masked_select: cthtorch and
torch timed side by side in one process (min of repeats, ms).
Run: PYTHONPATH=. python bench/bench_indexing.py [threads]"""
import sys
import time

import numpy as np
import torch

import cthtorch


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
    print("%-34s %10s %10s %9s" % ("case (threads=%d)" % torch.get_num_threads(), "cthtorch", "torch", "ct/torch"))
    for name in ct:
        a, b = timeit(ct[name]), timeit(tt[name])
        print("%-34s %8.3fms %8.3fms %8.2fx" % (name, a, b, a / b))


if __name__ == "__main__":
    main()
