"""index_reduce / select_scatter / slice_scatter / diagonal_scatter / fill_diagonal_ /
tril_indices / lu_unpack: cthtorch and torch timed side by side in one process
(min of repeats, ms).
Run: PYTHONPATH=. python bench/bench_scatter_views.py [threads]"""
import warnings

import numpy as np
import torch

import cthtorch
from bench_scatter import main   # the side-by-side timing loop

warnings.filterwarnings("ignore", "index_reduce")


def cases(L):
    rs = np.random.RandomState(0)
    x = L.from_numpy(rs.rand(10000, 64).astype(np.float32))
    e = L.from_numpy(rs.randint(0, 10000, size=50000))
    src = L.from_numpy(rs.rand(50000, 64).astype(np.float32))
    m = L.from_numpy(rs.rand(1000, 1000).astype(np.float32))
    row = L.from_numpy(rs.rand(1000).astype(np.float32))
    LU, piv = L.linalg.lu_factor(L.from_numpy(rs.rand(64, 32, 32)))
    return {
        "index_reduce amax (50000x64 -> 10000x64)": lambda: x.index_reduce(0, e, src, "amax"),
        "index_reduce mean (50000x64 -> 10000x64)": lambda: x.index_reduce(0, e, src, "mean"),
        "index_reduce prod, no self": lambda: x.index_reduce(0, e, src, "prod", include_self=False),
        "select_scatter 1000x1000 dim 1": lambda: L.select_scatter(m, row, 1, 500),
        "slice_scatter 1000x1000 [::2]": lambda: L.slice_scatter(m, m[::2], 0, 0, None, 2),
        "diagonal_scatter 1000x1000": lambda: L.diagonal_scatter(m, row),
        "fill_diagonal_ 1000x1000": lambda: m.fill_diagonal_(0.5),
        "tril_indices 1000x1000": lambda: L.tril_indices(1000, 1000),
        "lu_unpack 64x32x32": lambda: L.lu_unpack(LU, piv),
    }


if __name__ == "__main__":
    main(cases)
