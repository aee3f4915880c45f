"""Argument-parsing overhead of small ops (every call pays it): x + y,
x.view(...), torch.empty(3, 4), x.sum(dim=...), a Scalar argument,
cthtorch and torch side by side in one process (min of repeats, ms per 1000 calls).
Run: PYTHONPATH=. python bench/bench_parse.py"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_scatter import main  # noqa: E402


def thousand(f):
    def run():
        for _ in range(1000):
            f()
    return run


def cases(L):
    x, y = L.ones(3, 4), L.ones(3, 4)
    return {
        "x + y (3x4)": thousand(lambda: x + y),
        "x.view(4, 3)": thousand(lambda: x.view(4, 3)),
        "x.view((2, -1))": thousand(lambda: x.view((2, -1))),
        "torch.empty(3, 4)": thousand(lambda: L.empty(3, 4)),
        "x.sum(dim=(0,), keepdim=True)": thousand(lambda: x.sum(dim=(0,), keepdim=True)),
        "x.add(y, alpha=2)": thousand(lambda: x.add(y, alpha=2)),
        "x.clamp(0.0, 1.0)": thousand(lambda: x.clamp(0.0, 1.0)),
        "x.transpose(0, 1)": thousand(lambda: x.transpose(0, 1)),
    }


if __name__ == "__main__":
    main(cases)
