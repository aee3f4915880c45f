"""Reductions over short rows and tall-thin columns, where per-row setup dominates: sum / mean /
amax over the last dim of 3..64 columns and over dim 0 of tall-thin float32 tensors, cthtorch
and torch timed side by side in one process (min of repeats, ms).
Run: PYTHONPATH=. python bench/bench_reduce.py [threads]"""
import numpy as np

from bench_scatter import main   # the side-by-side timing loop (bench/ is on sys.path when run as a script)


def cases(L):
    rs = np.random.RandomState(0)
    out = {}
    for r, c in [(2048, 33), (2048, 8), (4096, 16), (2048, 64), (65536, 5)]:
        x = L.from_numpy(rs.randn(r, c).astype(np.float32))
        for op in ("sum", "mean", "amax"):
            out["%s (%d,%d) dim 1" % (op, r, c)] = (lambda x, op: lambda: getattr(x, op)(dim=1))(x, op)
    for r, c in [(65536, 3), (8192, 33)]:
        x = L.from_numpy(rs.randn(r, c).astype(np.float32))
        for op in ("sum", "amax"):
            out["%s (%d,%d) dim 0" % (op, r, c)] = (lambda x, op: lambda: getattr(x, op)(dim=0))(x, op)
    return out


if __name__ == "__main__":
    main(cases)
