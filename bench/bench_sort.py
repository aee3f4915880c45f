"""The sort family: cthtorch and torch timed side by side in one process
(min of repeats, ms).
Run: PYTHONPATH=. python bench/bench_sort.py [threads]"""
import numpy as np

from bench_scatter import main


def cases(L):
    rs = np.random.RandomState(0)
    u = L.from_numpy(rs.randint(0, 100000, size=1000000))
    i64 = L.from_numpy(rs.randint(-2 ** 40, 2 ** 40, size=(10000, 64)))
    f32 = L.from_numpy(rs.randn(10000, 64).astype(np.float32))
    few = L.from_numpy(rs.randint(0, 10, size=(10000, 64)))
    return {
        "unique(return_counts) 1M int64": lambda: L.unique(u, return_counts=True),
        "sort (10000, 64) int64 dim 1": lambda: L.sort(i64, 1),
        "sort (10000, 64) float32 dim 1": lambda: L.sort(f32, 1),
        "topk(5) (10000, 64) int64": lambda: L.topk(i64, 5, 1),
        "topk(5) (10000, 64) float32": lambda: L.topk(f32, 5, 1),
        "median(dim=1) (10000, 64) float32": lambda: L.median(f32, 1),
        "kthvalue(10, 1) (10000, 64) float32": lambda: L.kthvalue(f32, 10, 1),
        "mode(1) (10000, 64) int64 in [0, 10)": lambda: L.mode(few, 1),
        "isin 1M int64 in 1000": lambda: L.isin(u, u[:1000]),
    }


if __name__ == "__main__":
    main(cases)
