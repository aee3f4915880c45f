"""adaptive_avg_pool3d / adaptive_max_pool3d, max_pool3d / avg_pool3d forward and backward: cthtorch
and torch timed side by side in one process (min of repeats, ms).
Run: PYTHONPATH=. python bench/bench_pool.py [threads]"""
import numpy as np

from bench_scatter import main


def cases(L):
    rs = np.random.RandomState(0)
    x = L.from_numpy(rs.randn(8, 32, 16, 28, 28).astype(np.float32))
    xg = L.from_numpy(rs.randn(4, 16, 16, 28, 28).astype(np.float32)).requires_grad_()
    F = L.nn.functional

    def bwd(f):
        def run():
            f(xg).sum().backward()
        return run
    return {
        "adaptive_avg_pool3d 8x32x16x28x28 -> 4x7x7": lambda: F.adaptive_avg_pool3d(x, (4, 7, 7)),
        "adaptive_max_pool3d 8x32x16x28x28 -> 4x7x7": lambda: F.adaptive_max_pool3d(x, (4, 7, 7)),
        "adaptive_avg_pool3d -> 1 (global)": lambda: F.adaptive_avg_pool3d(x, 1),
        "adaptive_avg_pool3d fwd+bwd 4x16x16x28x28": bwd(lambda v: F.adaptive_avg_pool3d(v, (4, 7, 7))),
        "adaptive_max_pool3d fwd+bwd 4x16x16x28x28": bwd(lambda v: F.adaptive_max_pool3d(v, (4, 7, 7))),
        "max_pool3d k3 s2 p1 8x32x16x28x28": lambda: F.max_pool3d(x, 3, 2, 1),
        "avg_pool3d k2 8x32x16x28x28": lambda: F.avg_pool3d(x, 2),
        "max_pool3d fwd+bwd k2 4x16x16x28x28": bwd(lambda v: F.max_pool3d(v, 2)),
        "avg_pool3d fwd+bwd k3 s2 p1 4x16x16x28x28": bwd(lambda v: F.avg_pool3d(v, 3, 2, 1)),
    }


if __name__ == "__main__":
    main(cases)
