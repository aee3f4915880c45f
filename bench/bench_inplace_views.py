"""Eager small-op overhead with autograd recording, in-place ops on views
included (CopySlices + the view's regenerated grad_fn): cthtorch and torch
timed side by side in one process (min of repeats, us per step).
Run: PYTHONPATH=. python bench/bench_inplace_views.py"""
import time

import torch

import cthtorch


def cases(L):
    x = L.ones(4, requires_grad=True)
    w = L.ones(4)

    def plain():                 # out-of-place ops, an in-place op on a non-view, a view
        y = x * 2.0
        y = y + w
        y.mul_(1.0)
        return y[1:].sum()

    def inplace_on_view():       # the base's history becomes CopySlices
        y = x * 2.0
        y[1:].mul_(1.0)
        return y.sum()

    def setitem():
        y = x * 2.0
        y[1] = 0.0
        return y.sum()

    return {
        "fwd: mul, add, mul_, slice": plain,
        "fwd: slice then mul_": inplace_on_view,
        "fwd: y[1] = 0": setitem,
        "fwd+bwd: slice then mul_": lambda: inplace_on_view().backward(),
    }


def timeit(fn, n=2000, repeats=7):
    best = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        for _ in range(n):
            fn()
        best = min(best, time.perf_counter() - t)
    return best / n * 1e6


def main():
    c, t = cases(cthtorch), cases(torch)
    print("%-28s %12s %12s %7s" % ("case", "cthtorch us", "torch us", "ratio"))
    for k in c:
        a, b = timeit(c[k]), timeit(t[k])
        print("%-28s %12.1f %12.1f %7.2f" % (k, a, b, a / b))


if __name__ == "__main__":
    main()
