"""The autograd engine's ready queue: backward through a long chain and a wide
graph of small ops, cthtorch and torch timed side by side in one process
(min of repeats, ms; only .backward() is timed, the graph is rebuilt each run).
Run: PYTHONPATH=. python bench/bench_engine.py [threads]"""
import sys
import time

import numpy as np
import torch

import cthtorch


def chain(L, n):
    x = L.ones(4, requires_grad=True)

    def build():
        y = x
        for _ in range(n):
            y = y + 1.0
        return y.sum()
    return build


def wide(L, n):
    xs = [L.ones(4, requires_grad=True) for _ in range(n)]

    def build():
        s = xs[0] * 1.0
        for x in xs[1:]:
            s = s + x * 2.0
        return s.sum()
    return build


def cases(L):
    return {
        "chain of 10k adds": chain(L, 10000),
        "wide: 2k leaves, 6k nodes": wide(L, 2000),
    }


def time_backward(build, reps=7):
    ts = []
    for _ in range(reps + 1):
        loss = build()
        t0 = time.perf_counter()
        loss.backward()
        ts.append(time.perf_counter() - t0)
    return 1e3 * float(np.min(ts[1:]))


def main():
    if len(sys.argv) > 1:
        cthtorch.set_num_threads(int(sys.argv[1]))
    torch.set_num_threads(cthtorch.get_num_threads())
    ct, tt = cases(cthtorch), cases(torch)
    print("%-42s %10s %10s %9s" % ("backward (threads=%d)" % torch.get_num_threads(), "cthtorch", "torch", "ct/torch"))
    for name in ct:
        a, b = time_backward(ct[name]), time_backward(tt[name])
        print("%-42s %8.3fms %8.3fms %8.2fx" % (name, a, b, a / b))


if __name__ == "__main__":
    main()
